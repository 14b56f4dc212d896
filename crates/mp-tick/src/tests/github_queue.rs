//! `merge.mode: github-queue` (decisions/0074, 0078): mp enqueues the approved head in
//! GitHub's merge queue, pinned with `expectedHeadOid`, never merges, and dequeues what its
//! gate refuses, whoever enqueued it. Each case ticks over the in-memory GitHub, whose
//! queue lands its front entry when the clock moves.

use super::world::{Pr, Setup, Tick, clean, world_of};
use super::{AUDIT_1_A, RECEIPT_1};
use crate::testkit::{at, config_with, login, repo};
use crate::{MergeMode, PrAction, TickOptions};
use mp_core::ids::PrNumber;
use mp_github_fake::Endpoint;

/// `acme/app` in `github-queue` mode.
fn github_queue_config() -> mp_core::config::Config {
    config_with(&[(
        mp_core::config::PROJECTS_FILE,
        "governance_repo: acme/governance\nsupervised_repos: [acme/app, acme/old]\naudit_only_repos: [acme/old]\nrepo_overrides:\n  acme/app:\n    merge:\n      mode: github-queue\n",
    )])
}

/// A tick over `pulls` whose `main` has the rule types `rules`.
fn github_queue_world(pulls: &[Pr], rules: &[&str]) -> Tick {
    let mut world = world_of(pulls);
    if let Some(app) = world.repos.iter_mut().find(|r| r.name == repo("acme/app")) {
        app.branch_rules.insert(
            "main".to_owned(),
            rules.iter().map(|r| (*r).to_owned()).collect(),
        );
    }
    Tick::serving(world, Setup::default())
}

const QUEUED: &[&str] = &["deletion", "merge_queue", "pull_request"];

/// One tick with `options`: the writes and audit records, then the outcomes.
fn tick_lines(tick: &Tick, options: &TickOptions) -> Vec<String> {
    let report = tick
        .run(&github_queue_config(), options)
        .expect("the tick runs");
    let mut lines = tick.take_log();
    lines.extend(report.outcomes.iter().map(|o| format!("=> {o}")));
    lines
}

fn options() -> TickOptions {
    TickOptions::from_config(&github_queue_config())
}

/// The entries of `acme/app`'s queue of `main` as `#n@head by login`.
fn queue_of(tick: &Tick) -> Vec<String> {
    tick.github().read(|world| {
        let app = world.repo(&repo("acme/app")).expect("acme/app");
        app.merge_queue_view("main")
            .unwrap_or_default()
            .iter()
            .map(|e| {
                let by = e
                    .enqueuer
                    .as_ref()
                    .map_or("?".to_owned(), ToString::to_string);
                format!("#{}@{} by {by}", e.number, e.head.short())
            })
            .collect()
    })
}

/// The clock moves on: GitHub's queue lands what is due.
fn later(tick: &Tick) {
    tick.github().set_now(at("2026-03-01T12:05:00Z"));
}

#[test]
fn github_queue_mode_enqueues_the_approved_head_pinned_and_never_merges() {
    let tick = github_queue_world(&[clean(1), clean(2)], QUEUED);
    let lines = tick_lines(&tick, &options());
    // The receipts of the approvals are the gate's, in every mode; then each approved head
    // is enqueued, pinned to it: no merge, no branch update, no comment.
    assert_eq!(
        lines,
        [
            AUDIT_1_A.to_owned(),
            RECEIPT_1.to_owned(),
            "enqueue acme/app#1: head a100000 at position 1".to_owned(),
            "audit acme/app#2 @ a200000: A (6 votes)".to_owned(),
            "comment acme/app#2 (id 2): Merge Gate: recorded `ready-to-merge` for head `a200000`; this receipt holds for that head only.".to_owned(),
            "enqueue acme/app#2: head a200000 at position 2".to_owned(),
            "=> acme/app#1 enqueued: Quadrant A: enqueued head a100000 in GitHub's merge queue of main at position 1 (github_queue_enqueued)".to_owned(),
            "=> acme/app#2 enqueued: Quadrant A: enqueued head a200000 in GitHub's merge queue of main at position 2 (github_queue_enqueued)".to_owned(),
        ]
    );
    assert_eq!(
        queue_of(&tick),
        ["#1@a100000 by mp-gate[bot]", "#2@a200000 by mp-gate[bot]"]
    );
    let reads = |endpoint: Endpoint| {
        tick.github()
            .calls()
            .get(endpoint.route())
            .copied()
            .unwrap_or(0)
    };
    assert_eq!(
        reads(Endpoint::ListBranchRules),
        1,
        "the rules are read once per repository and tick"
    );
    // The next tick leaves the entries alone: nothing is written.
    let lines = tick_lines(&tick, &options());
    assert_eq!(
        lines,
        [
            "audit acme/app#1 @ a100000: A (6 votes)",
            "audit acme/app#2 @ a200000: A (6 votes)",
            "=> acme/app#1 queued: Quadrant A: in GitHub's merge queue of main at position 1 with the approved head a100000; left alone (github_queue_queued)",
            "=> acme/app#2 queued: Quadrant A: in GitHub's merge queue of main at position 2 with the approved head a200000; left alone (github_queue_queued)",
        ]
    );
    // GitHub's queue lands them; mp merged nothing itself.
    later(&tick);
    assert!(tick.pull("acme/app", 1).merged && tick.pull("acme/app", 2).merged);
    assert!(
        tick.github()
            .actions()
            .iter()
            .all(|w| w.code() != "merge_pull" && w.code() != "update_branch")
    );
}

#[test]
fn an_agent_s_own_enqueue_of_an_unapproved_pull_request_is_dequeued_and_never_lands() {
    // The owner never labelled #1; its author enqueued it.
    let tick = github_queue_world(&[clean(1).not_ready()], QUEUED);
    tick.github()
        .enqueue_as(&login("agent-1"), &repo("acme/app"), PrNumber::new(1))
        .expect("an agent with write access can enqueue");
    let lines = tick_lines(&tick, &options());
    assert_eq!(
        lines,
        [
            AUDIT_1_A,
            "comment acme/app#1 (id 1): Merge Gate L1 — merge blocked:",
            "dequeue acme/app#1",
            "=> acme/app#1 blocked: dequeued from GitHub's merge queue (entry at head a100000, enqueued by agent-1): C1: label 'ready-to-merge' not set on PR #1 (github_queue_dequeued)",
        ]
    );
    assert_eq!(queue_of(&tick), Vec::<String>::new());
    later(&tick);
    assert!(!tick.pull("acme/app", 1).merged, "the queue landed it");
}

#[test]
fn a_push_after_the_approval_leaves_the_queue_and_the_new_head_is_never_enqueued() {
    let tick = github_queue_world(&[clean(1)], QUEUED);
    tick_lines(&tick, &options());
    assert_eq!(queue_of(&tick), ["#1@a100000 by mp-gate[bot]"]);
    // The author pushes: GitHub drops the entry. It enqueues its new head itself.
    let agent = login("agent-1");
    let new_head = tick
        .github()
        .push_to_head(&agent, &repo("acme/app"), PrNumber::new(1), "pushed")
        .expect("the author pushes");
    assert_eq!(queue_of(&tick), Vec::<String>::new());
    tick.github()
        .enqueue_as(&agent, &repo("acme/app"), PrNumber::new(1))
        .expect("an agent with write access can enqueue");
    let report = tick
        .run(&github_queue_config(), &options())
        .expect("the tick runs");
    let outcome = &report.outcomes[0];
    assert_eq!(outcome.action, PrAction::Blocked);
    assert!(
        outcome.detail.starts_with(&format!(
            "dequeued from GitHub's merge queue (entry at head {}, enqueued by agent-1): C1:",
            new_head.short()
        )),
        "{outcome}"
    );
    assert_eq!(
        outcome
            .github_queue
            .iter()
            .map(|s| s.code())
            .collect::<Vec<_>>(),
        ["github_queue_dequeued"]
    );
    assert!(
        !tick
            .github()
            .actions()
            .iter()
            .skip(3)
            .any(|w| w.code() == "enqueue_pull"),
        "the new head was enqueued"
    );
    later(&tick);
    assert!(!tick.pull("acme/app", 1).merged, "the queue landed it");
}

#[test]
fn github_queue_mode_without_a_queue_on_the_branch_neither_merges_nor_enqueues() {
    let tick = github_queue_world(&[clean(1)], &["deletion", "pull_request"]);
    assert_eq!(
        tick_lines(&tick, &options()),
        [
            AUDIT_1_A,
            RECEIPT_1,
            "=> acme/app#1 blocked: Quadrant A: merge.mode is github-queue but no merge queue protects main: mp neither merges nor enqueues; add a ruleset with the merge_queue rule, or change merge.mode (github_queue_missing)",
        ]
    );
}

#[test]
fn observe_only_reads_no_queue_and_writes_nothing_to_it() {
    let observe = options().with_merge_mode(MergeMode::Observe);
    let tick = github_queue_world(&[clean(1)], QUEUED);
    let lines = tick_lines(&tick, &observe);
    assert_eq!(
        lines.last().map(String::as_str),
        Some(
            "=> acme/app#1 observe: observe-only: would have enqueued in GitHub's merge queue as Quadrant A (set merge_enabled: true in env.yml to enable merging)"
        )
    );
    // An agent's entry stays too: observe-only writes nothing.
    let tick = github_queue_world(&[clean(2).not_ready()], QUEUED);
    tick.github()
        .enqueue_as(&login("agent-2"), &repo("acme/app"), PrNumber::new(2))
        .expect("an agent with write access can enqueue");
    tick_lines(&tick, &observe);
    assert_eq!(queue_of(&tick), ["#2@a200000 by agent-2"]);
    let calls = tick.github().calls();
    assert_eq!(calls.get(Endpoint::ListBranchRules.route()), None);
}

#[test]
fn a_head_that_moves_between_the_read_and_the_enqueue_is_not_enqueued() {
    // GitHub refuses the pinned enqueue: the head is no longer the one the gate passed.
    let tick = github_queue_world(&[clean(1)], QUEUED);
    tick.fail(mp_github_fake::Failure::on(
        Endpoint::GraphqlEnqueue,
        mp_core::port::GitHubError::HeadMoved {
            pr: "acme/app#1".to_owned(),
            expected: crate::testkit::sha("a1"),
        },
    ));
    let lines = tick_lines(&tick, &options());
    assert_eq!(
        lines.last().map(String::as_str),
        Some(
            "=> acme/app#1 blocked: Quadrant A: GitHub's merge queue refused head a100000: the pull request's head moved; nothing enqueued (github_queue_head_moved)"
        )
    );
    assert_eq!(queue_of(&tick), Vec::<String>::new());
}

/// GitHub's queue makes the merge group of `#number` on top of `base` (`None`: `main`'s
/// head): a merge commit of `base` and the entry's head on
/// `gh-readonly-queue/main/pr-<number>-<base>`. Its branch and head.
fn make_group(
    tick: &Tick,
    number: u64,
    base: Option<&mp_core::ids::CommitSha>,
) -> (String, mp_core::ids::CommitSha) {
    tick.github().edit_world(|world| {
        let name = repo("acme/app");
        let app = world.repo_mut(&name).expect("acme/app");
        let base = base
            .cloned()
            .unwrap_or_else(|| app.branches["main"].clone());
        let entry = app
            .queue_entries
            .get("main")
            .and_then(|q| q.iter().find(|e| e.number == PrNumber::new(number)))
            .expect("the pull request is queued")
            .head
            .clone();
        let id = format!("group-{number}-{}", base.short());
        let sha = mp_github_fake::world::commit_sha(&name, &id);
        app.commits.push(mp_github_fake::world::Commit {
            id,
            sha: sha.clone(),
            message: format!("Merge pull request #{number} from agent/pr-{number}"),
            parents: vec![base.clone(), entry],
            author: None,
            committer: Some(login("github-merge-queue[bot]")),
            date: None,
            checks: Vec::new(),
            check_workflows: Default::default(),
        });
        let branch = format!("gh-readonly-queue/main/pr-{number}-{base}");
        app.branches.insert(branch.clone(), sha.clone());
        (branch, sha)
    })
}

/// The check runs named `mp-gate` on `sha`, as `conclusion by app: title-less summary`.
fn gate_checks(tick: &Tick, sha: &mp_core::ids::CommitSha) -> Vec<String> {
    tick.github().read(|world| {
        let app = world.repo(&repo("acme/app")).expect("acme/app");
        app.commit(sha)
            .map(|c| {
                c.checks
                    .iter()
                    .filter(|r| r.name == mp_core::github_queue::GATE_CHECK)
                    .map(|r| {
                        format!(
                            "{} by {}",
                            r.conclusion.as_ref().map_or("none", |c| c.as_str()),
                            r.app_slug.as_deref().unwrap_or("?")
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    })
}

#[test]
fn mp_passes_a_merge_group_whose_every_pull_request_the_gate_passes_once() {
    let tick = github_queue_world(&[clean(1), clean(2)], QUEUED);
    tick_lines(&tick, &options());
    let (first, first_head) = make_group(&tick, 1, None);
    let (_, second_head) = make_group(&tick, 2, Some(&first_head));
    let report = tick
        .run(&github_queue_config(), &options())
        .expect("the tick runs");
    assert_eq!(gate_checks(&tick, &first_head), ["success by mp-gate"]);
    assert_eq!(gate_checks(&tick, &second_head), ["success by mp-gate"]);
    let steps: Vec<String> = report.outcomes[0]
        .github_queue
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        steps[1],
        format!(
            "check 'mp-gate' passed on merge group {first} (head {}): the gate passes all 1 pull request(s) of the group",
            first_head.short()
        )
    );
    assert_eq!(
        (
            report.metrics.group_checks_passed,
            report.metrics.group_checks_failed
        ),
        (2, 0)
    );
    // A group is judged once: the next tick publishes nothing more on it.
    tick.run(&github_queue_config(), &options())
        .expect("the tick runs");
    assert_eq!(gate_checks(&tick, &second_head).len(), 1);
}

/// The attack: an agent enqueues its own pull request, which the owner never approved,
/// behind an approved one; GitHub's queue builds a group holding both. mp cannot take it
/// out of the queue (its dequeue is refused): its check on the group fails, naming the
/// pull request, so the queue cannot land the group; the approved one's own group passes.
#[test]
fn a_merge_group_holding_a_pull_request_the_gate_refuses_fails_mp_s_check() {
    let tick = github_queue_world(&[clean(1), clean(2).not_ready()], QUEUED);
    tick_lines(&tick, &options());
    tick.github()
        .enqueue_as(&login("agent-2"), &repo("acme/app"), PrNumber::new(2))
        .expect("an agent with write access can enqueue");
    let (_, first_head) = make_group(&tick, 1, None);
    let (second, second_head) = make_group(&tick, 2, Some(&first_head));
    tick.github().fail(mp_github_fake::Failure::on(
        Endpoint::GraphqlDequeue,
        mp_core::port::GitHubError::NotMergeable {
            pr: "acme/app#2".to_owned(),
            message: "Resource not accessible by integration".to_owned(),
        },
    ));
    let report = tick
        .run(&github_queue_config(), &options())
        .expect("the tick runs");
    assert_eq!(gate_checks(&tick, &first_head), ["success by mp-gate"]);
    assert_eq!(gate_checks(&tick, &second_head), ["failure by mp-gate"]);
    let failed = report
        .outcomes
        .iter()
        .flat_map(|o| &o.github_queue)
        .find(|s| s.code() == "github_queue_group_failed")
        .expect("the failed check is reported");
    assert_eq!(
        failed.to_string(),
        format!(
            "check 'mp-gate' failed on merge group {second} (head {}): the gate refuses #2",
            second_head.short()
        )
    );
    let summary = tick.github().read(|world| {
        let app = world.repo(&repo("acme/app")).expect("acme/app");
        app.commit(&second_head).expect("the group head").checks[0]
            .output_summary
            .clone()
            .unwrap_or_default()
    });
    assert!(
        summary.contains("#2: refused:") && summary.contains("C1: label 'ready-to-merge' not set"),
        "{summary}"
    );
}

/// The agent's own enqueue, dequeued by mp in the same pass: its group is being destroyed,
/// and the group of an entry behind it still holds its changes. mp publishes nothing on
/// either; GitHub's rebuilt groups are judged by a later pass.
#[test]
fn no_check_on_a_group_that_still_holds_an_entry_mp_dequeued() {
    let tick = github_queue_world(&[clean(1).not_ready(), clean(2)], QUEUED);
    tick.github()
        .enqueue_as(&login("agent-1"), &repo("acme/app"), PrNumber::new(1))
        .expect("an agent with write access can enqueue");
    tick.github()
        .enqueue_as(&login("owner"), &repo("acme/app"), PrNumber::new(2))
        .expect("the owner can enqueue");
    let (_, first_head) = make_group(&tick, 1, None);
    let (_, second_head) = make_group(&tick, 2, Some(&first_head));
    let report = tick
        .run(&github_queue_config(), &options())
        .expect("the tick runs");
    assert_eq!(report.outcomes[0].action, PrAction::Blocked, "{report:?}");
    assert_eq!(queue_of(&tick), ["#2@a200000 by owner"]);
    assert_eq!(gate_checks(&tick, &first_head), Vec::<String>::new());
    assert_eq!(gate_checks(&tick, &second_head), Vec::<String>::new());
    // GitHub rebuilds #2's group on `main`: the next pass passes it.
    let (_, rebuilt) = make_group(&tick, 2, None);
    tick.run(&github_queue_config(), &options())
        .expect("the tick runs");
    assert_eq!(gate_checks(&tick, &rebuilt), ["success by mp-gate"]);
}

/// Observe-only writes nothing: no check on any group.
#[test]
fn observe_only_publishes_no_check_on_merge_groups() {
    let tick = github_queue_world(&[clean(1)], QUEUED);
    tick.github()
        .enqueue_as(&login("owner"), &repo("acme/app"), PrNumber::new(1))
        .expect("the owner can enqueue");
    let (_, head) = make_group(&tick, 1, None);
    tick.run(
        &github_queue_config(),
        &options().with_merge_mode(MergeMode::Observe),
    )
    .expect("the tick runs");
    assert_eq!(gate_checks(&tick, &head), Vec::<String>::new());
}

/// GitHub's queue removes `#number` at its current head, as after a failing group.
fn removed_by_the_queue(tick: &Tick, number: u64, by: &str) {
    tick.github().edit_world(|world| {
        let at = world.now;
        let app = world.repo_mut(&repo("acme/app")).expect("acme/app");
        let head = app
            .pull(PrNumber::new(number))
            .expect("the pull request")
            .head_sha
            .clone();
        app.record_queue_removal(PrNumber::new(number), head, login(by), "failed checks", at);
    });
}

#[test]
fn a_head_github_s_queue_removed_is_not_enqueued_again_until_it_changes() {
    let tick = github_queue_world(&[clean(1), clean(2), clean(3)], QUEUED);
    // #1's group failed; #2 was removed by mp itself; #3 by a person.
    removed_by_the_queue(&tick, 1, "github-merge-queue[bot]");
    removed_by_the_queue(&tick, 2, "mp-gate[bot]");
    removed_by_the_queue(&tick, 3, "alice");
    let report = tick
        .run(&github_queue_config(), &options())
        .expect("the tick runs");
    let first = &report.outcomes[0];
    assert_eq!(first.action, PrAction::Blocked);
    assert_eq!(
        first.detail,
        "Quadrant A: not enqueued again: GitHub's merge queue removed head a100000 (by github-merge-queue[bot]): failed checks; it waits for a new head, or for someone to enqueue it again (github_queue_held)"
    );
    assert_eq!(
        report.outcomes[1..]
            .iter()
            .map(|o| o.action.clone())
            .collect::<Vec<_>>(),
        [PrAction::Enqueued, PrAction::Enqueued]
    );
    assert_eq!(
        queue_of(&tick),
        ["#2@a200000 by mp-gate[bot]", "#3@a300000 by mp-gate[bot]"]
    );
    // Its author is told why, once, on the pull request.
    let said: Vec<String> = tick
        .pull("acme/app", 1)
        .comments
        .iter()
        .map(|c| c.body.clone())
        .filter(|b| b.contains("GitHub's merge queue removed"))
        .collect();
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].contains("removed this pull request at head `a100000` (by github-merge-queue[bot]): failed checks."),
        "{}",
        said[0]
    );
    // The owner enqueues it again: mp leaves the entry alone.
    tick.github()
        .enqueue_as(&login("owner"), &repo("acme/app"), PrNumber::new(1))
        .expect("the owner can enqueue");
    let report = tick
        .run(&github_queue_config(), &options())
        .expect("the tick runs");
    assert_eq!(
        report.outcomes[0].action,
        PrAction::Queued,
        "{}",
        report.outcomes[0]
    );
}
