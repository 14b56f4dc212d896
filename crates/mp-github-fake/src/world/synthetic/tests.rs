//! Tests of the synthetic world: it is deterministic, covers the mix, reads back from its
//! file form, and every pull request takes its kind's route in a real tick.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use mp_core::config::{self, ConfigFiles};
use mp_core::gate::ConditionId;
use mp_core::port::{AuditError, AuditLog, AuditRecord};
use mp_tick::{self as tick, MergeMode, Route, TickOptions};

use super::super::{World, parse_world, world_to_yaml};
use super::{SYNTHETIC_RECEIPT_KEY, SyntheticKind, synthetic_world};
use crate::MemoryGitHub;

/// Counts the records it is given.
#[derive(Default)]
struct CountingAudit(Mutex<usize>);

#[async_trait::async_trait]
impl AuditLog for CountingAudit {
    async fn append(&self, _record: &AuditRecord) -> Result<(), AuditError> {
        let mut count = self.0.lock().map_err(|_| AuditError("poisoned".into()))?;
        *count += 1;
        Ok(())
    }
}

/// The blocking condition a blocked kind is made to fail.
fn blocking_condition(kind: SyntheticKind) -> Option<ConditionId> {
    match kind {
        SyntheticKind::ChecksFailing | SyntheticKind::ChecksPending => Some(ConditionId::C2),
        SyntheticKind::TrailersMissing => Some(ConditionId::C5),
        SyntheticKind::Unlabelled | SyntheticKind::LabelledByAgent => Some(ConditionId::C1),
        SyntheticKind::StaleBase => Some(ConditionId::C4),
        SyntheticKind::Irreversible | SyntheticKind::IrreversiblePending => Some(ConditionId::C3),
        _ => None,
    }
}

/// Writes the synthetic world, reads it back (it must be the same world), runs one tick in
/// `mode` and checks every pull request against its kind: the action its route implies
/// (in merge mode, the first mergeable pull request of a repository merges and moves
/// `main`, so the later ones are race-rebased) and the one condition that blocks it.
/// Returns how many pull requests of each kind there were.
#[track_caller]
fn check(repos: usize, prs: usize, seed: u64, mode: MergeMode) -> BTreeMap<SyntheticKind, usize> {
    let world = synthetic_world(repos, prs, seed);
    let text = world_to_yaml(&world, Some(SYNTHETIC_RECEIPT_KEY));
    let back = parse_world("synthetic.yaml", &text, None).expect("the written world loads");
    assert_eq!(back, world, "the synthetic world changed on the way back");

    let files: ConfigFiles = world.config.clone().into_iter().collect();
    let report = config::load(&files);
    let problems: Vec<String> = report.problems.iter().map(ToString::to_string).collect();
    assert!(problems.is_empty(), "{problems:#?}");
    let config = report.config.expect("the synthetic configuration is valid");
    let options = TickOptions::from_config(&config)
        .with_merge_mode(mode)
        .with_receipt_key(world.receipt_key.clone().expect("the world has a key"));
    let kinds: BTreeMap<String, SyntheticKind> = world
        .repos
        .iter()
        .flat_map(|repo| {
            repo.pulls.iter().map(|pull| {
                let kind = SyntheticKind::of_branch(&pull.head_ref).expect("a synthetic branch");
                (format!("{}#{}", repo.name, pull.number), kind)
            })
        })
        .collect();

    let github = MemoryGitHub::new(world.clone());
    let audit = CountingAudit::default();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let report = runtime
        .block_on(tick::run_pr_path(
            &github, &audit, &config, &options, world.now,
        ))
        .expect("the tick runs");

    assert_eq!(report.outcomes.len(), repos * prs);
    assert_eq!(*audit.0.lock().expect("not poisoned"), repos * prs);
    let mut merged_in: BTreeSet<String> = BTreeSet::new();
    let mut counts = BTreeMap::new();
    for outcome in &report.outcomes {
        let kind = kinds[&outcome.pr];
        *counts.entry(kind).or_insert(0) += 1;
        let repo = outcome.pr.split('#').next().unwrap_or_default().to_owned();
        // After the tick's merge in a repository, `main` has moved: every later pull
        // request of it is behind (C4), and one that needs nothing else is updated.
        let behind = merged_in.contains(&repo);
        let expected = match (kind.route(), mode) {
            (Route::Blocked | Route::Inbox, _) if behind => "blocked",
            (Route::Mergeable | Route::Waiting | Route::Update, _) if behind => "race-rebased",
            (Route::Blocked, _) => "blocked",
            (Route::Inbox, _) => "inbox",
            (Route::Mergeable, MergeMode::Observe) => "observe",
            (Route::Mergeable, MergeMode::Merge) => {
                merged_in.insert(repo);
                "merged"
            }
            (Route::Ignored, _) => "ignored",
            (Route::Waiting, _) => "waiting",
            (Route::Update, _) => "race-rebased",
        };
        assert_eq!(outcome.action.as_str(), expected, "{outcome} ({kind:?})");
        let blocking: Vec<ConditionId> = outcome
            .gate
            .iter()
            .flat_map(|gate| gate.blocking().map(|result| result.id.clone()))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let mut expected: BTreeSet<ConditionId> = blocking_condition(kind).into_iter().collect();
        if behind {
            expected.insert(ConditionId::C4);
        }
        let expected: Vec<ConditionId> = expected.into_iter().collect();
        assert_eq!(blocking, expected, "{outcome} ({kind:?})");
    }
    counts
}

/// Every kind of the mix, with its share rounded down.
fn full_mix(total: usize) -> BTreeMap<SyntheticKind, usize> {
    SyntheticKind::MIX
        .iter()
        .map(|(kind, share)| (*kind, total * *share as usize / 1000))
        .collect()
}

#[test]
fn observe_mode_sends_every_kind_its_way() {
    let counts = check(3, 40, 1, MergeMode::Observe);
    let floor = full_mix(120);
    for (kind, count) in &counts {
        assert!(*count + 2 >= floor[kind], "{kind:?}: {count} of 120");
    }
    assert_eq!(counts.len(), SyntheticKind::MIX.len(), "{counts:?}");
}

#[test]
fn merge_mode_merges_once_per_repository_and_rebases_the_rest() {
    check(2, 30, 2, MergeMode::Merge);
}

#[test]
fn the_same_arguments_give_the_same_world() {
    let worlds: Vec<World> = [5, 5, 6]
        .into_iter()
        .map(|seed| synthetic_world(2, 20, seed))
        .collect();
    assert_eq!(worlds[0], worlds[1]);
    assert_ne!(worlds[0], worlds[2]);
}

#[test]
fn the_mix_holds_in_a_large_world() {
    let world = synthetic_world(4, 500, 9);
    let mut counts: BTreeMap<SyntheticKind, usize> = BTreeMap::new();
    for pull in world.repos.iter().flat_map(|repo| &repo.pulls) {
        let kind = SyntheticKind::of_branch(&pull.head_ref).expect("a synthetic branch");
        *counts.entry(kind).or_default() += 1;
    }
    let expected = full_mix(2000);
    for (kind, count) in counts {
        let want = expected[&kind];
        assert!(
            count.abs_diff(want) <= 3,
            "{kind:?}: {count}, expected about {want}"
        );
    }
}

#[test]
fn a_world_larger_than_the_parsers_default_budget_loads() {
    // The parser's default budget stops at 250,000 nodes, about 2,500 pull requests.
    let world = synthetic_world(6, 500, 4);
    let text = world_to_yaml(&world, Some(SYNTHETIC_RECEIPT_KEY));
    let back = parse_world("large.yaml", &text, None).expect("a large world loads");
    assert_eq!(back.repos.len(), 7);
    assert_eq!(back, world);
}
