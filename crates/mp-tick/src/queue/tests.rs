//! The queue's driver over the in-memory GitHub, tick after tick on a simulated clock: a
//! small drain of several agents' pull requests, one of which fails only once merged.

use mp_core::config::{self, ConfigFiles};
use mp_core::context::{PrState, RefUpdateKind};
use mp_core::ids::{Login, RepoName};
use mp_core::port::{AuditError, AuditLog, AuditRecord, Write};
use mp_github_fake::MemoryGitHub;
use mp_github_fake::world::drain::{DRAIN_REPO, DrainSpec, drain_world, untested_moves};
use mp_github_fake::world::{Commit, commit_sha};

use crate::testkit::block_on;
use crate::{TickOptions, run_tick};

struct NoAudit;

#[async_trait::async_trait]
impl AuditLog for NoAudit {
    async fn append(&self, _record: &AuditRecord) -> Result<(), AuditError> {
        Ok(())
    }
}

/// 3 agents × 2 pull requests in queue mode, CI 10 minutes, a tick every 5: agent 2's
/// second (#4) passed on its own head but fails once merged. The five others land, only
/// ever by fast-forwarding `main` to a staging commit whose `test` had passed; #4 leaves
/// the queue with one comment naming the failing check; each queued pull request's outcome
/// counts the queue as it stands; no branch is updated, and the bisection costs a bounded
/// number of CI runs.
#[test]
fn a_small_drain_lands_the_good_ones_on_tested_commits_and_names_the_failing_one() {
    let spec = DrainSpec {
        agents: 3,
        per_agent: 2,
        failing: vec![3],
        failing_passes_alone: true,
        queue: true,
        ..DrainSpec::default()
    };
    let world = drain_world(&spec);
    let files: ConfigFiles = world
        .config
        .iter()
        .map(|(n, t)| (n.clone(), t.clone()))
        .collect();
    let config = config::load(&files)
        .config
        .expect("the drain world's configuration loads");
    let options = TickOptions::from_config(&config);
    let start = world.now;
    let github = MemoryGitHub::new(world);
    for index in 0..24 {
        let now = start.plus_seconds(index * 5 * 60);
        github.set_now(now);
        let report =
            block_on(run_tick(&github, &NoAudit, &config, &options, now)).expect("the tick runs");
        assert!(
            report.operator_errors.is_empty(),
            "{:?}",
            report.operator_errors
        );
        // Every queued outcome counts the queue as it stands after the tick: the open
        // pull requests, less the one that left it.
        let (open, left) = github.read(|w| {
            let pulls = &w.repos[0].pulls;
            let open = pulls.iter().filter(|p| p.state == PrState::Open).count();
            let left = pulls
                .iter()
                .filter(|p| {
                    p.comments
                        .iter()
                        .any(|c| c.body.contains("left the merge queue"))
                })
                .count();
            (open, left)
        });
        for outcome in &report.outcomes {
            if let Some((_, rest)) = outcome.detail.split_once("queued at position ") {
                let total = rest
                    .split_once(" of ")
                    .and_then(|(_, t)| t.split(' ').next())
                    .and_then(|t| t.parse::<usize>().ok());
                assert_eq!(total, Some(open - left), "tick {index}: {outcome}");
            }
        }
    }
    let world = github.world();
    let repo = &world.repos[0];
    let merged: Vec<u64> = repo
        .pulls
        .iter()
        .filter(|p| p.merged)
        .map(|p| p.number.get())
        .collect();
    assert_eq!(merged, [1, 2, 3, 5, 6]);

    let failing = repo
        .pulls
        .iter()
        .find(|p| p.number.get() == 4)
        .expect("#4 exists");
    assert_eq!(failing.state, PrState::Open);
    let ejections: Vec<&str> = failing
        .comments
        .iter()
        .map(|c| c.body.as_str())
        .filter(|b| b.contains("left the merge queue"))
        .collect();
    assert_eq!(ejections.len(), 1, "{ejections:?}");
    assert!(
        ejections[0].contains("- check 'test' failed with conclusion failure"),
        "{}",
        ejections[0]
    );

    // Every move of main is to a staging commit mp pushed, green before the move.
    let name = RepoName::parse(DRAIN_REPO).expect("a valid name");
    let proof = untested_moves(&world, &name, "main", start);
    assert!(proof.untested.is_empty(), "{:?}", proof.untested);
    assert!(proof.moves >= 2, "{proof:?}");
    let main = repo.branch_head("main").expect("main exists");
    for number in &merged {
        let pull = repo
            .pulls
            .iter()
            .find(|p| p.number.get() == *number)
            .expect("merged pull exists");
        assert!(
            world.repos[0].reachable_from(main).contains(&pull.head_sha),
            "#{number}"
        );
    }
    assert!(
        !world.repos[0]
            .reachable_from(main)
            .contains(&failing.head_sha)
    );

    // No branch of an agent is ever updated; the bisection stays bounded: one run per
    // head, plus at most one build per pull request.
    let actions = github.actions();
    assert!(
        !actions
            .iter()
            .any(|a| matches!(a, Write::UpdateBranch { .. })),
        "{actions:?}"
    );
    let builds = world.ci_runs() - 6;
    assert!((2..=6).contains(&builds), "{builds} staging builds");
}

/// An agent with write access pushes its own commit onto the assembly branch
/// `mp-queue-build/main` right after mp's first merge of a two-entry build, so that mp's
/// second merge would sit on the agent's commit. mp reads back every merge commit's parents:
/// the build is not staged that tick, the agent's commit never reaches the staging branch
/// or `main`, and a later tick assembles the build again from `main` and lands both pull
/// requests without it.
#[test]
fn a_commit_pushed_to_the_assembly_branch_between_two_merges_never_lands() {
    let spec = DrainSpec {
        agents: 2,
        per_agent: 1,
        queue: true,
        ..DrainSpec::default()
    };
    let world = drain_world(&spec);
    let files: ConfigFiles = world
        .config
        .iter()
        .map(|(n, t)| (n.clone(), t.clone()))
        .collect();
    let config = config::load(&files)
        .config
        .expect("the drain world's configuration loads");
    let options = TickOptions::from_config(&config);
    let start = world.now;
    let name = RepoName::parse(DRAIN_REPO).expect("a valid name");
    let github = MemoryGitHub::new(world);
    let smuggled = commit_sha(&name, "smuggled");
    let (repo, sha) = (name.clone(), smuggled.clone());
    github.after_write(
        |write| matches!(write, Write::MergeIntoBranch { base, .. } if base == "mp-queue-build/main"),
        move |world| {
            let found = world.repo_mut(&repo).expect("the drain repository");
            let tip = found
                .branch_head("mp-queue-build/main")
                .cloned()
                .expect("mp made the assembly branch");
            let agent = Login::parse("agent-1").expect("a valid login");
            found.commits.push(Commit {
                id: "smuggled".to_owned(),
                sha: sha.clone(),
                message: "add a backdoor".to_owned(),
                parents: vec![tip],
                author: Some(agent.clone()),
                committer: Some(agent.clone()),
                date: Some(start),
                checks: Vec::new(),
                check_workflows: Default::default(),
            });
            found.move_branch(
                "mp-queue-build/main",
                Some(sha),
                RefUpdateKind::Push,
                agent,
                start,
            );
        },
    );

    let mut refused = Vec::new();
    for index in 0..12 {
        let now = start.plus_seconds(index * 5 * 60);
        github.set_now(now);
        let report =
            block_on(run_tick(&github, &NoAudit, &config, &options, now)).expect("the tick runs");
        assert!(
            report.operator_errors.is_empty(),
            "{:?}",
            report.operator_errors
        );
        refused.extend(report.warnings);
    }
    // The tick that raced said why it staged nothing.
    assert!(
        refused
            .iter()
            .any(|e| e.contains("someone moved mp-queue-build/main")),
        "{refused:?}"
    );
    let world = github.world();
    let found = &world.repos[0];
    let merged: Vec<u64> = found
        .pulls
        .iter()
        .filter(|p| p.merged)
        .map(|p| p.number.get())
        .collect();
    assert_eq!(merged, [1, 2]);
    let main = found.branch_head("main").expect("main exists");
    assert!(!found.reachable_from(main).contains(&smuggled));
    let staging = found
        .branch_head("mp-queue/main")
        .expect("mp staged a build");
    assert!(!found.reachable_from(staging).contains(&smuggled));
    let proof = untested_moves(&world, &name, "main", start);
    assert!(proof.untested.is_empty(), "{:?}", proof.untested);
}
