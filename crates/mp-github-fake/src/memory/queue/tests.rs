//! GitHub's merge queue in the fakes (decisions/0083): merge groups made on each other,
//! build concurrency, landing exactly the groups' commits once their required checks
//! pass, a failing or silent group taking its entry out and the groups behind it made
//! again, dequeues and pushes destroying groups, and the world file carrying all of it.

use mp_core::context::{CheckConclusion, CheckRun, CheckStatus, RefUpdateKind};
use mp_core::ids::{CommitSha, Login, PrNumber, RepoName, Timestamp};
use mp_core::port::{GitHub, QueueEntryState};

use crate::MemoryGitHub;
use crate::world::{
    GroupEnd, MergeGroup, Repo, World, commit_sha, merge_group_branch, parse_world, world_to_yaml,
};

/// Four pull requests on `main`; `#2` changes a file the simulated CI fails. `{queue}` is
/// the queue's settings, `{ci}` the world's `ci:` line.
const WORLD: &str = r##"
now: 2026-03-01T12:00:00Z
bot: mp-gate
{ci}
repos:
  - name: acme/app
    commits:
      - {id: b0, message: init, author: alice, committer: alice, date: 2026-02-01T00:00:00Z}
      - {id: a1, message: "feat: a", parents: [b0], author: agent-1, committer: agent-1, date: 2026-02-02T00:00:00Z}
      - {id: a2, message: "feat: b", parents: [b0], author: agent-2, committer: agent-2, date: 2026-02-02T00:00:00Z}
      - {id: a3, message: "feat: c", parents: [b0], author: agent-3, committer: agent-3, date: 2026-02-02T00:00:00Z}
    branches: {main: b0, agent/a: a1, agent/b: a2, agent/c: a3}
    files: {README.md: "hello\n"}
    merge_queues:
      main: {queue}
    pulls:
      - number: 1
        title: A
        author: agent-1
        head: agent/a
        files:
          - {path: src/a.rs, status: added, additions: 1, content: "a\n"}
      - number: 2
        title: B
        author: agent-2
        head: agent/b
        files:
          - {path: src/flaky/b.rs, status: added, additions: 1, content: "b\n"}
      - number: 3
        title: C
        author: agent-3
        head: agent/c
        files:
          - {path: src/c.rs, status: added, additions: 1, content: "c\n"}
"##;

const CI: &str =
    "ci: {checks: [test], app: github-actions, minutes: 10, fails: [\"src/flaky/**\"]}";

fn world(queue: &str, ci: &str) -> World {
    let text = WORLD.replace("{queue}", queue).replace("{ci}", ci);
    parse_world("queue.yaml", &text, None).expect("the test world is valid")
}

fn app() -> RepoName {
    RepoName::parse("acme/app").expect("a repository name")
}

fn sha(id: &str) -> CommitSha {
    commit_sha(&app(), id)
}

fn at(minutes: i64) -> Timestamp {
    Timestamp::parse("2026-03-01T12:00:00Z")
        .expect("a time")
        .plus_seconds(minutes * 60)
}

fn agent(n: u64) -> Login {
    Login::parse(&format!("agent-{n}")).expect("a login")
}

/// A memory GitHub over `world` with `numbers` enqueued (in order, each by its author)
/// at the world's clock.
fn queued(world: World, numbers: &[u64]) -> MemoryGitHub {
    let gh = MemoryGitHub::new(world);
    for n in numbers {
        gh.enqueue_as(&agent(*n), &app(), PrNumber::new(*n))
            .expect("enqueued");
    }
    gh
}

fn repo_of(gh: &MemoryGitHub) -> Repo {
    gh.read(|w| w.repo(&app()).expect("acme/app").clone())
}

fn groups(gh: &MemoryGitHub) -> Vec<MergeGroup> {
    repo_of(gh).merge_groups_of("main").to_vec()
}

/// The queue's entries as numbers, front first.
fn entries(gh: &MemoryGitHub) -> Vec<u64> {
    repo_of(gh)
        .queue_entries
        .get("main")
        .into_iter()
        .flatten()
        .map(|e| e.number.get())
        .collect()
}

/// The merge-group log as `#N made` / `#N merged` ... lines.
fn log(gh: &MemoryGitHub) -> Vec<String> {
    repo_of(gh)
        .merge_group_log
        .iter()
        .map(|event| {
            let what = event.destroyed.map_or("made", GroupEnd::as_str);
            format!("#{} {what}", event.group.number)
        })
        .collect()
}

fn run(name: &str, app: &str, conclusion: CheckConclusion, when: Timestamp) -> CheckRun {
    CheckRun {
        id: None,
        name: name.to_owned(),
        status: CheckStatus::Completed,
        conclusion: Some(conclusion),
        started_at: Some(when),
        completed_at: Some(when),
        app_slug: Some(app.to_owned()),
        output_summary: None,
    }
}

#[test]
fn each_entry_gets_a_merge_group_made_on_the_one_ahead() {
    let gh = queued(world("{}", CI), &[1, 2, 3]);
    assert!(groups(&gh).is_empty(), "no group before the clock moves");
    gh.set_now(at(1));
    let repo = repo_of(&gh);
    let made = groups(&gh);
    assert_eq!(made.len(), 3);
    let app_bot = Login::for_app("github-merge-queue").expect("a login");
    let mut base = sha("b0");
    for (index, group) in made.iter().enumerate() {
        let number = PrNumber::new(index as u64 + 1);
        assert_eq!(group.number, number);
        assert_eq!(group.base, base, "group {index} is made on the one ahead");
        assert_eq!(
            group.entries,
            (1..=index as u64 + 1)
                .map(PrNumber::new)
                .collect::<Vec<_>>()
        );
        assert_eq!(group.head_ref, merge_group_branch("main", number, &base));
        assert_eq!(
            group.head_ref,
            format!("gh-readonly-queue/main/pr-{number}-{base}")
        );
        assert_eq!(repo.branch_head(&group.head_ref), Some(&group.head));
        let commit = repo.commit(&group.head).expect("the group's commit");
        let pull = repo.pull(number).expect("the pull");
        assert_eq!(commit.parents, [base.clone(), pull.head_sha.clone()]);
        assert_eq!(
            commit.message,
            format!(
                "Merge pull request #{number} from {}\n\n{}",
                pull.head_ref, pull.title
            )
        );
        assert_eq!(commit.committer.as_ref(), Some(&app_bot));
        let created = repo.activity.get(&group.head_ref).expect("its activity");
        assert_eq!(created.len(), 1);
        assert_eq!(created[0].kind, RefUpdateKind::BranchCreation);
        assert_eq!(created[0].actor.as_ref(), Some(&app_bot));
        // The simulated CI runs on the group's head from its creation.
        assert!(
            commit
                .checks
                .iter()
                .any(|r| r.name == "test" && r.started_at == Some(at(1))),
            "{:?}",
            commit.checks
        );
        base = group.head.clone();
    }
    assert_eq!(log(&gh), ["#1 made", "#2 made", "#3 made"]);
    assert_eq!(
        repo.branch_head("main"),
        Some(&sha("b0")),
        "nothing landed yet"
    );
    // GitHub shows an entry whose group awaits its checks as `AWAITING_CHECKS`.
    let states: Vec<QueueEntryState> = repo
        .merge_queue_view("main")
        .unwrap_or_default()
        .iter()
        .map(|e| e.state)
        .collect();
    assert_eq!(states, [QueueEntryState::AwaitingChecks; 3]);
}

#[test]
fn build_concurrency_limits_the_groups_tested_at_once() {
    let gh = queued(world("{max_entries_to_build: 2}", CI), &[1, 3]);
    gh.enqueue_as(&agent(2), &app(), PrNumber::new(2))
        .expect("enqueued");
    gh.set_now(at(1));
    assert_eq!(groups(&gh).len(), 2, "two built, the third waits");
    let states: Vec<QueueEntryState> = repo_of(&gh)
        .merge_queue_view("main")
        .unwrap_or_default()
        .iter()
        .map(|e| e.state)
        .collect();
    assert_eq!(
        states,
        [
            QueueEntryState::AwaitingChecks,
            QueueEntryState::AwaitingChecks,
            QueueEntryState::Queued
        ]
    );
    // #1 and #3 pass and land; #2 gets its group on the new head.
    gh.set_now(at(11));
    assert_eq!(entries(&gh), [2]);
    let made = groups(&gh);
    assert_eq!(made.len(), 1);
    assert_eq!(made[0].number, PrNumber::new(2));
    assert_eq!(made[0].created_at, at(11));
    assert_eq!(
        Some(&made[0].base),
        repo_of(&gh).branch_head("main"),
        "made on the landed head"
    );
}

#[test]
fn passing_groups_land_exactly_their_commits_at_once() {
    let gh = queued(world("{}", CI), &[1, 3]);
    gh.set_now(at(1));
    let made = groups(&gh);
    gh.set_now(at(10));
    assert_eq!(entries(&gh), [1, 3], "the checks run for 10 minutes");
    gh.set_now(at(11));
    let repo = repo_of(&gh);
    assert_eq!(repo.branch_head("main"), Some(&made[1].head));
    let moves = repo.activity.get("main").expect("main's log");
    let last = moves.last().expect("a move");
    assert_eq!(
        last.kind,
        RefUpdateKind::Other("merge_queue_merge".to_owned())
    );
    assert_eq!(last.before, Some(sha("b0")), "one move for both");
    for (group, n) in made.iter().zip([1, 3]) {
        let pull = repo.pull(PrNumber::new(n)).expect("the pull");
        assert!(pull.merged);
        assert_eq!(pull.merge_commit.as_ref(), Some(&group.head));
        assert_eq!(pull.merged_by.as_ref(), Some(&agent(n)));
        assert_eq!(pull.merged_at, Some(at(11)));
        assert_eq!(
            repo.branch_head(&group.head_ref),
            None,
            "its branch is gone"
        );
    }
    assert!(repo.files.contains_key("src/a.rs") && repo.files.contains_key("src/c.rs"));
    assert_eq!(log(&gh), ["#1 made", "#3 made", "#1 merged", "#3 merged"]);
    assert!(entries(&gh).is_empty() && groups(&gh).is_empty());
}

#[test]
fn a_merge_limit_of_one_lands_each_group_by_its_own_move() {
    let gh = queued(world("{max_entries_to_merge: 1}", CI), &[1, 3]);
    gh.set_now(at(1));
    let made = groups(&gh);
    gh.set_now(at(11));
    let repo = repo_of(&gh);
    let landings: Vec<_> = repo
        .activity
        .get("main")
        .expect("main's log")
        .iter()
        .filter(|u| u.kind == RefUpdateKind::Other("merge_queue_merge".to_owned()))
        .map(|u| u.after.clone())
        .collect();
    assert_eq!(
        landings,
        [Some(made[0].head.clone()), Some(made[1].head.clone())]
    );
}

#[test]
fn a_failing_group_takes_its_entry_out_and_the_groups_behind_are_made_again() {
    let gh = queued(world("{}", CI), &[1, 2, 3]);
    gh.set_now(at(1));
    let first = groups(&gh);
    gh.set_now(at(11));
    let repo = repo_of(&gh);
    // #1's group passed and landed; #2's failed (it brings src/flaky), so #2 left the
    // queue, and #3's group, which held #2, was destroyed and made again without it.
    assert!(repo.pull(PrNumber::new(1)).expect("#1").merged);
    let two = repo.pull(PrNumber::new(2)).expect("#2");
    assert!(!two.merged);
    assert_eq!(entries(&gh), [3]);
    assert_eq!(
        log(&gh),
        [
            "#1 made",
            "#2 made",
            "#3 made",
            "#1 merged",
            "#2 dequeued",
            "#3 invalidated",
            "#3 made"
        ]
    );
    let again = groups(&gh);
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].base, first[0].head, "on the landed head");
    assert_eq!(again[0].entries, [PrNumber::new(3)]);
    assert_ne!(again[0].head, first[2].head);
    assert_eq!(repo.branch_head(&first[2].head_ref), None);
    // The new group passes ten minutes later and lands.
    gh.set_now(at(21));
    let repo = repo_of(&gh);
    assert_eq!(repo.branch_head("main"), Some(&again[0].head));
    assert!(repo.pull(PrNumber::new(3)).expect("#3").merged);
    assert!(!repo.files.contains_key("src/flaky/b.rs"));
}

/// The queue's own required checks: `mp-gate` by mp's App, posted on the group's head. A
/// failure behind a front group still waiting is not judged until the front passes.
#[test]
fn required_checks_by_their_app_decide_and_a_failure_behind_a_waiting_front_waits() {
    let queue = "{required_checks: [{name: mp-gate, app: mp-gate}]}";
    let gh = queued(world(queue, ""), &[1, 2]);
    gh.set_now(at(1));
    let made = groups(&gh);
    assert_eq!(made.len(), 2);
    // A success by another App does not count.
    gh.add_check_run(
        &app(),
        &made[0].head,
        run("mp-gate", "impostor", CheckConclusion::Success, at(2)),
    )
    .expect("posted");
    gh.add_check_run(
        &app(),
        &made[1].head,
        run("mp-gate", "mp-gate", CheckConclusion::Failure, at(2)),
    )
    .expect("posted");
    gh.set_now(at(3));
    assert_eq!(entries(&gh), [1, 2], "#2's failure waits for #1's group");
    assert_eq!(repo_of(&gh).branch_head("main"), Some(&sha("b0")));
    gh.add_check_run(
        &app(),
        &made[0].head,
        run("mp-gate", "mp-gate", CheckConclusion::Success, at(4)),
    )
    .expect("posted");
    gh.set_now(at(5));
    let repo = repo_of(&gh);
    assert_eq!(repo.branch_head("main"), Some(&made[0].head));
    assert!(entries(&gh).is_empty(), "#2 left the queue");
    assert!(!repo.pull(PrNumber::new(2)).expect("#2").merged);
    assert_eq!(log(&gh), ["#1 made", "#2 made", "#1 merged", "#2 dequeued"]);
}

#[test]
fn a_required_check_that_never_reports_times_out() {
    let queue =
        "{check_response_timeout_minutes: 5, required_checks: [{name: mp-gate, app: mp-gate}]}";
    let gh = queued(world(queue, ""), &[1, 3]);
    gh.set_now(at(1));
    gh.set_now(at(5));
    assert_eq!(entries(&gh), [1, 3], "within the timeout");
    gh.set_now(at(6));
    assert_eq!(entries(&gh), [3], "#1's group timed out");
    assert_eq!(
        log(&gh),
        [
            "#1 made",
            "#3 made",
            "#1 dequeued",
            "#3 invalidated",
            "#3 made"
        ]
    );
    assert_eq!(groups(&gh)[0].base, sha("b0"));
    assert!(!repo_of(&gh).pull(PrNumber::new(1)).expect("#1").merged);
}

#[test]
fn a_dequeue_destroys_its_group_and_those_behind() {
    let gh = queued(world("{}", CI), &[1, 2, 3]);
    gh.set_now(at(1));
    let first = groups(&gh);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    runtime
        .block_on(gh.dequeue_pull(&app(), PrNumber::new(2)))
        .expect("dequeued");
    assert_eq!(groups(&gh), first[..1]);
    assert_eq!(
        log(&gh),
        [
            "#1 made",
            "#2 made",
            "#3 made",
            "#2 dequeued",
            "#3 invalidated"
        ]
    );
    let repo = repo_of(&gh);
    assert_eq!(repo.branch_head(&first[1].head_ref), None);
    assert_eq!(repo.branch_head(&first[2].head_ref), None);
    gh.set_now(at(2));
    let again = groups(&gh);
    assert_eq!(again.len(), 2);
    assert_eq!(again[1].base, first[0].head);
    assert_eq!(again[1].entries, [PrNumber::new(1), PrNumber::new(3)]);
}

#[test]
fn a_push_to_a_queued_head_destroys_every_group_from_its_own() {
    let gh = queued(world("{}", CI), &[1, 3]);
    gh.set_now(at(1));
    gh.push_to_head(&agent(1), &app(), PrNumber::new(1), "a1b")
        .expect("pushed");
    assert!(groups(&gh).is_empty());
    assert_eq!(
        log(&gh),
        ["#1 made", "#3 made", "#1 dequeued", "#3 invalidated"]
    );
}

#[test]
fn a_squash_queue_makes_one_parent_groups() {
    let gh = queued(world("{merge_method: SQUASH}", CI), &[1, 3]);
    gh.set_now(at(1));
    let made = groups(&gh);
    let repo = repo_of(&gh);
    let commit = repo.commit(&made[1].head).expect("the group's commit");
    assert_eq!(commit.parents, [made[0].head.clone()]);
    assert!(commit.message.starts_with("C (#3)"), "{}", commit.message);
    // Its CI fails on what the group brings, though no pull request's head is reachable.
    let gh = queued(world("{merge_method: SQUASH}", CI), &[2, 3]);
    gh.set_now(at(1));
    gh.set_now(at(11));
    assert_eq!(entries(&gh), [3]);
}

#[test]
fn the_world_file_carries_groups_their_log_and_required_checks() {
    let queue = "{required_checks: [{name: mp-gate, app: mp-gate}]}";
    let gh = queued(world(queue, CI), &[1, 2, 3]);
    gh.set_now(at(1));
    gh.push_to_head(&agent(3), &app(), PrNumber::new(3), "a3b")
        .expect("pushed");
    let world = gh.world();
    let text = world_to_yaml(&world, None);
    let again = parse_world("again.yaml", &text, None).expect("the written world reads back");
    let (before, after) = (&world.repos[0], &again.repos[0]);
    assert_eq!(after.merge_groups, before.merge_groups);
    assert_eq!(after.merge_group_log, before.merge_group_log);
    assert_eq!(after.merge_queues, before.merge_queues);
    assert_eq!(after.queue_entries, before.queue_entries);
    assert_eq!(before.merge_groups_of("main").len(), 2);
}

/// `HEADGREEN`: a passing group vouches for the entries it brings, so #1, whose own group
/// failed, lands with #3's passing group; while #3's group is still running, #1 waits.
/// Under `ALLGREEN` the same checks take #1 out.
#[test]
fn headgreen_lands_a_failed_entry_with_a_passing_group_behind_it() {
    for (strategy, landed) in [("HEADGREEN", true), ("ALLGREEN", false)] {
        let queue = format!(
            "{{grouping_strategy: {strategy}, required_checks: [{{name: mp-gate, app: mp-gate}}]}}"
        );
        let gh = queued(world(&queue, ""), &[1, 3]);
        gh.set_now(at(1));
        let made = groups(&gh);
        gh.add_check_run(
            &app(),
            &made[0].head,
            run("mp-gate", "mp-gate", CheckConclusion::Failure, at(2)),
        )
        .expect("posted");
        gh.set_now(at(3));
        assert_eq!(
            entries(&gh).len(),
            if landed { 2 } else { 1 },
            "{strategy}: #1 waits for #3's group only under HEADGREEN"
        );
        if !landed {
            assert_eq!(
                log(&gh),
                [
                    "#1 made",
                    "#3 made",
                    "#1 dequeued",
                    "#3 invalidated",
                    "#3 made"
                ]
            );
            continue;
        }
        gh.add_check_run(
            &app(),
            &made[1].head,
            run("mp-gate", "mp-gate", CheckConclusion::Success, at(4)),
        )
        .expect("posted");
        gh.set_now(at(5));
        let repo = repo_of(&gh);
        assert_eq!(repo.branch_head("main"), Some(&made[1].head));
        let one = repo.pull(PrNumber::new(1)).expect("#1");
        assert!(one.merged);
        assert_eq!(one.merge_commit.as_ref(), Some(&made[0].head));
        assert_eq!(log(&gh), ["#1 made", "#3 made", "#1 merged", "#3 merged"]);
    }
}

/// `min_entries_to_merge: 2`: one passing group waits for a second, at most
/// `min_entries_to_merge_wait_minutes` (5) from when it passed; two land at once.
#[test]
fn a_minimum_group_size_waits_for_more_at_most_its_wait_time() {
    let queue = "{min_entries_to_merge: 2, min_entries_to_merge_wait_minutes: 5, required_checks: [{name: mp-gate, app: mp-gate}]}";
    let gh = queued(world(queue, ""), &[1]);
    gh.set_now(at(1));
    let made = groups(&gh);
    gh.add_check_run(
        &app(),
        &made[0].head,
        run("mp-gate", "mp-gate", CheckConclusion::Success, at(2)),
    )
    .expect("posted");
    gh.set_now(at(6));
    assert_eq!(entries(&gh), [1], "one of two: it waits");
    gh.set_now(at(7));
    assert!(entries(&gh).is_empty(), "the wait is over: it lands alone");

    let gh = queued(world(queue, ""), &[1, 3]);
    gh.set_now(at(1));
    for group in groups(&gh) {
        gh.add_check_run(
            &app(),
            &group.head,
            run("mp-gate", "mp-gate", CheckConclusion::Success, at(2)),
        )
        .expect("posted");
    }
    gh.set_now(at(3));
    assert!(entries(&gh).is_empty(), "two passed: they land at once");
}
