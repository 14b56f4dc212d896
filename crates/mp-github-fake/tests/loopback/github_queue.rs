//! GitHub's merge queue through the REST client's GraphQL documents against the loopback
//! server, and the same calls on the in-memory adapter (decisions/0078): the queue of a
//! branch, a stale `expectedHeadOid` refused with nothing enqueued, an entry pinned to the
//! head, a refusal where no queue protects the branch, dequeue, a push that drops a queued
//! pull request, and the queue landing the front entry once its checks are green.

use mp_core::ids::{CommitSha, Login, PrNumber, RepoName, Timestamp};
use mp_core::port::{GitHub, GitHubError};
use mp_github_fake::world::commit_sha;
use mp_github_fake::{FaultScript, LoopbackServer, MemoryGitHub, World, parse_world};

use crate::harness::{client_for, runtime};

const WORLD: &str = r##"
now: 2026-03-01T12:00:00Z
bot: mp-gate
repos:
  - name: acme/app
    commits:
      - {id: b0, message: init, author: alice, committer: alice, date: 2026-02-01T00:00:00Z}
      - {id: a1, message: "feat: a", parents: [b0], author: agent-1, committer: agent-1, date: 2026-02-02T00:00:00Z}
      - {id: c1, message: "feat: c", parents: [b0], author: agent-3, committer: agent-3, date: 2026-02-02T00:00:00Z}
      - {id: d1, message: "feat: d", parents: [b0], author: agent-4, committer: agent-4, date: 2026-02-02T00:00:00Z}
    branches: {main: b0, release: b0, agent/a: a1, agent/c: c1, agent/d: d1}
    files: {README.md: "hello\n"}
    merge_queues:
      main: {}
    pulls:
      - number: 1
        title: A
        author: agent-1
        head: agent/a
        files:
          - {path: src/a.rs, status: added, additions: 1, content: "a\n"}
      - number: 3
        title: C
        author: agent-3
        head: agent/c
        mergeable: false
      - number: 4
        title: D
        author: agent-4
        head: agent/d
        base: release
"##;

fn world() -> World {
    parse_world("github-queue.yaml", WORLD, None).expect("the test world is valid")
}

fn app() -> RepoName {
    RepoName::parse("acme/app").expect("a repository name")
}

fn sha(id: &str) -> CommitSha {
    commit_sha(&app(), id)
}

/// An answer as one line, errors by kind.
fn line<T: std::fmt::Debug>(answer: Result<T, GitHubError>) -> String {
    match answer {
        Ok(value) => format!("{value:?}"),
        Err(GitHubError::HeadMoved { .. }) => "head moved".to_owned(),
        Err(GitHubError::NotMergeable { message, .. }) => format!("refused: {message}"),
        Err(other) => format!("error: {other}"),
    }
}

/// The queue of main as `#number@position by login` items.
async fn queue(gh: &dyn GitHub, branch: &str) -> String {
    line(gh.merge_queue(&app(), branch).await.map(|queue| {
        queue.map(|entries| {
            entries
                .iter()
                .map(|e| {
                    let login = e
                        .enqueuer
                        .as_ref()
                        .map(Login::to_string)
                        .unwrap_or_default();
                    format!(
                        "#{}@{} {} {}",
                        e.number,
                        e.position,
                        e.state.as_graphql(),
                        login
                    )
                })
                .collect::<Vec<_>>()
        })
    }))
}

async fn walk(gh: &dyn GitHub) -> Vec<String> {
    let one = PrNumber::new(1);
    let mut lines = vec![queue(gh, "main").await, queue(gh, "release").await];
    lines.push(line(
        gh.enqueue_pull(&app(), one, &sha("b0")).await.map(|_| ()),
    ));
    lines.push(queue(gh, "main").await);
    lines.push(line(
        gh.enqueue_pull(&app(), one, &sha("a1"))
            .await
            .map(|e| (e.position, e.head == sha("a1"))),
    ));
    lines.push(line(
        gh.enqueue_pull(&app(), one, &sha("a1")).await.map(|_| ()),
    ));
    lines.push(line(
        gh.enqueue_pull(&app(), PrNumber::new(3), &sha("c1"))
            .await
            .map(|_| ()),
    ));
    lines.push(line(
        gh.enqueue_pull(&app(), PrNumber::new(4), &sha("d1"))
            .await
            .map(|_| ()),
    ));
    lines.push(line(
        gh.queue_entry(&app(), one)
            .await
            .map(|e| e.map(|e| e.position)),
    ));
    lines.push(queue(gh, "main").await);
    lines.push(line(gh.dequeue_pull(&app(), one).await));
    lines.push(line(gh.dequeue_pull(&app(), one).await));
    lines.push(line(gh.queue_entry(&app(), one).await.map(|e| e.is_some())));
    lines
}

const EXPECTED: &[&str] = &[
    "Some([])",
    "None",
    "head moved",
    "Some([])",
    "(1, true)",
    "refused: Pull request is already in the merge queue",
    "refused: Pull request is not mergeable",
    "refused: Merge queue is not enabled for the base branch of this pull request",
    "Some(1)",
    "Some([\"#1@1 QUEUED mp-gate[bot]\"])",
    "()",
    "refused: Pull request is not in a merge queue",
    "false",
];

#[test]
fn the_merge_queue_answers_alike_over_graphql_and_in_memory() {
    let direct = runtime().block_on(async { walk(&MemoryGitHub::new(world())).await });
    assert_eq!(direct, EXPECTED, "in memory");
    let (over_rest, actions, direct_actions) = runtime().block_on(async {
        let server = LoopbackServer::start(world(), FaultScript::default())
            .await
            .expect("the loopback server starts");
        let lines = walk(&client_for(&server)).await;
        let actions = server.memory().actions();
        server.shutdown().await;
        let memory = MemoryGitHub::new(world());
        walk(&memory).await;
        (lines, actions, memory.actions())
    });
    assert_eq!(over_rest, EXPECTED, "over GraphQL");
    assert_eq!(actions, direct_actions, "the same writes were made");
    let codes: Vec<&str> = actions.iter().map(mp_core::port::Write::code).collect();
    assert_eq!(codes, ["enqueue_pull", "dequeue_pull"]);
}

#[test]
fn a_push_drops_a_queued_pull_request_and_the_queue_lands_a_green_entry() {
    runtime().block_on(async {
        let memory = MemoryGitHub::new(world());
        let one = PrNumber::new(1);
        let agent = Login::parse("agent-1").expect("a login");
        memory.enqueue_as(&agent, &app(), one).expect("enqueued");
        memory
            .push_to_head(&agent, &app(), one, "a2")
            .expect("pushed");
        assert_eq!(memory.queue_entry(&app(), one).await.expect("read"), None);

        // Enqueued again at the new head, it lands at the next clock move (no `ci:`: no
        // required check), merged by its enqueuer, the branch moved by the queue.
        let head = memory.pull(&app(), one).await.expect("the pull").head_sha;
        memory
            .enqueue_pull(&app(), one, &head)
            .await
            .expect("enqueued");
        let later = Timestamp::parse("2026-03-01T12:05:00Z").expect("a time");
        memory.set_now(later);
        let world = memory.world();
        let repo = world.repo(&app()).expect("the repository");
        let pull = repo.pull(one).expect("the pull");
        assert!(pull.merged, "the queue landed it");
        assert_eq!(
            pull.merged_by.as_ref().map(Login::as_str),
            Some("mp-gate[bot]")
        );
        let main = repo
            .activity
            .get("main")
            .and_then(|log| log.last())
            .expect("main moved");
        assert_eq!(
            main.kind,
            mp_core::context::RefUpdateKind::Other("merge_queue_merge".to_owned())
        );
        assert!(repo.queue_entries.is_empty());
    });
}

/// The merge groups of `main` and mp's check on one, through `gh`: the groups listed, a
/// branch of another base and a look-alike left out, the check published, a check on an
/// unknown commit refused.
async fn groups_walk(gh: &dyn GitHub) -> Vec<String> {
    use mp_core::context::CheckConclusion;
    use mp_core::port::NewCheckRun;
    let mut lines = Vec::new();
    let groups = gh.merge_groups(&app(), "main").await;
    lines.push(line(groups.map(|g| {
        g.iter()
            .map(|g| format!("{}@{}", g.branch, g.head.short()))
            .collect::<Vec<_>>()
    })));
    let run = |head: CommitSha| NewCheckRun {
        name: "mp-gate".to_owned(),
        head_sha: head,
        conclusion: CheckConclusion::Failure,
        title: "the gate refuses #1".to_owned(),
        summary: "- #1: refused".to_owned(),
    };
    lines.push(line(gh.create_check_run(&app(), &run(sha("a1"))).await));
    let runs = gh.check_runs(&app(), &sha("a1")).await;
    lines.push(line(runs.map(|runs| {
        runs.iter()
            .map(|r| {
                format!(
                    "{} {} by {}",
                    r.name,
                    r.conclusion.as_ref().map_or("-", |c| c.as_str()),
                    r.app_slug.as_deref().unwrap_or("?")
                )
            })
            .collect::<Vec<_>>()
    })));
    let unknown = CommitSha::parse(&"f".repeat(40)).expect("a sha");
    lines.push(match gh.create_check_run(&app(), &run(unknown)).await {
        Ok(()) => "published on an unknown commit".to_owned(),
        Err(_) => "refused".to_owned(),
    });
    // The last removals: #1's by the queue, #3 never removed.
    for number in [1, 3] {
        let removal = gh.last_queue_removal(&app(), PrNumber::new(number)).await;
        lines.push(line(removal.map(|r| {
            r.map(|r| {
                format!(
                    "{} by {} at {}: {}",
                    r.head.map_or("?".to_owned(), |h| h.short().to_owned()),
                    r.actor.map_or("?".to_owned(), |a| a.to_string()),
                    r.at.map_or("?".to_owned(), |t| t.to_string()),
                    r.reason.unwrap_or_default()
                )
            })
        })));
    }
    lines
}

#[test]
fn merge_groups_and_mp_s_check_answer_alike_over_rest_and_in_memory() {
    let grouped = || {
        let mut world = world();
        let repo = world.repo_mut(&app()).expect("acme/app");
        for branch in [
            "gh-readonly-queue/main/pr-1-0000000000000000000000000000000000000000",
            "gh-readonly-queue/main-next/pr-3-0000000000000000000000000000000000000000",
            "agent/gh-readonly-queue/main/pr-4-x",
            "gh-readonly-queue/release/pr-4-0000000000000000000000000000000000000000",
        ] {
            repo.branches.insert(branch.to_owned(), sha("a1"));
        }
        repo.record_queue_removal(
            PrNumber::new(1),
            sha("a1"),
            Login::parse("github-merge-queue[bot]").expect("a login"),
            "failed checks",
            Timestamp::parse("2026-03-01T11:00:00Z").expect("a time"),
        );
        world
    };
    let memory = MemoryGitHub::new(grouped());
    let direct = runtime().block_on(groups_walk(&memory));
    let (over_rest, actions) = runtime().block_on(async {
        let server = LoopbackServer::start(grouped(), FaultScript::default())
            .await
            .expect("the loopback server starts");
        let lines = groups_walk(&client_for(&server)).await;
        let actions = server.memory().actions();
        server.shutdown().await;
        (lines, actions)
    });
    let a1 = sha("a1");
    assert_eq!(
        direct,
        [
            format!(
                "[\"gh-readonly-queue/main/pr-1-0000000000000000000000000000000000000000@{}\"]",
                a1.short()
            ),
            "()".to_owned(),
            "[\"mp-gate failure by mp-gate\"]".to_owned(),
            "refused".to_owned(),
            format!(
                "Some(\"{} by github-merge-queue[bot] at 2026-03-01T11:00:00Z: failed checks\")",
                a1.short()
            ),
            "None".to_owned(),
        ]
    );
    assert_eq!(over_rest, direct, "over REST");
    assert_eq!(actions, memory.actions(), "the same writes were made");
}
