//! The merge queue's Git data writes through the REST client against the loopback server:
//! a merge into a staging branch (201), nothing to merge (204), a conflict (409), unknown
//! branches and commits (404 and 422), a fast-forward, a refused rewrite and a forced one;
//! each with the answer the in-memory adapter gives for the same call, and the pull
//! request a fast-forward makes reachable shown merged.

use mp_core::ids::{CommitSha, PrNumber, RepoName};
use mp_core::port::{GitHubError, GitHubHistory};
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
    branches: {main: b0, agent/a: a1, agent/c: c1}
    files: {README.md: "hello\n"}
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
"##;

pub(crate) fn world() -> World {
    parse_world("queue.yaml", WORLD, None).expect("the test world is valid")
}

fn app() -> RepoName {
    RepoName::parse("acme/app").expect("a repository name")
}

pub(crate) fn sha(id: &str) -> CommitSha {
    commit_sha(&app(), id)
}

/// An answer as one line, errors by kind and message, commit SHAs by their world ids.
fn line<T: std::fmt::Debug>(answer: Result<T, GitHubError>) -> String {
    match answer {
        Ok(value) => format!("{value:?}"),
        Err(GitHubError::NotFound { .. }) => "not found".to_owned(),
        Err(GitHubError::Conflict { message, .. }) => format!("conflict: {message}"),
        Err(other) => format!("error: {other}"),
    }
}

/// The same calls on any port, one line each.
async fn walk(gh: &dyn GitHubHistory) -> Vec<String> {
    let stage = "mp-queue/main";
    let mut lines = Vec::new();
    lines.push(line(gh.create_branch(&app(), stage, &sha("b0")).await));
    let merged = gh
        .merge_into_branch(&app(), stage, &sha("a1"), "Merge #1")
        .await;
    let merge = merged.clone().ok().flatten();
    lines.push(line(merged.map(|m| m.is_some())));
    if let Some(merge) = &merge {
        let commit = gh.commit(&app(), merge).await;
        lines.push(line(commit.map(|c| {
            let parents: Vec<bool> = c
                .parents
                .iter()
                .map(|p| *p == sha("b0") || *p == sha("a1"))
                .collect();
            (c.subject, c.committer_login.map(|l| l.to_string()), parents)
        })));
    }
    lines.push(line(
        gh.merge_into_branch(&app(), stage, &sha("a1"), "again")
            .await,
    ));
    lines.push(line(
        gh.merge_into_branch(&app(), stage, &sha("c1"), "Merge #3")
            .await,
    ));
    lines.push(line(
        gh.merge_into_branch(&app(), "nope", &sha("a1"), "x").await,
    ));
    lines.push(line(
        gh.merge_into_branch(&app(), stage, &sha("unknown"), "x")
            .await,
    ));
    let tip = merge.unwrap_or_else(|| sha("b0"));
    lines.push(line(
        gh.update_branch_ref(&app(), "main", &tip, false).await,
    ));
    lines.push(line(gh.branch_head(&app(), "main").await.map(|h| h == tip)));
    lines.push(line(gh.pull(&app(), PrNumber::new(1)).await.map(|p| {
        (p.state, p.merged, p.merge_commit.as_ref() == Some(&tip))
    })));
    lines.push(line(
        gh.file(&app(), "src/a.rs", "main")
            .await
            .map(|f| f.map(|f| f.text)),
    ));
    lines.push(line(
        gh.update_branch_ref(&app(), "main", &sha("c1"), false)
            .await,
    ));
    lines.push(line(
        gh.update_branch_ref(&app(), "nope", &sha("c1"), false)
            .await,
    ));
    lines.push(line(
        gh.update_branch_ref(&app(), "main", &sha("unknown"), true)
            .await,
    ));
    lines.push(line(
        gh.update_branch_ref(&app(), "main", &sha("c1"), true).await,
    ));
    lines.push(line(
        gh.branch_head(&app(), "main").await.map(|h| h == sha("c1")),
    ));
    lines
}

const EXPECTED: &[&str] = &[
    "()",
    "true",
    r#"("Merge #1", Some("mp-gate[bot]"), [true, true])"#,
    "None",
    "conflict: Merge conflict",
    "not found",
    "not found",
    "()",
    "true",
    "(Closed, true, true)",
    r#"Some("a\n")"#,
    "conflict: Update is not a fast forward",
    "not found",
    "not found",
    "()",
    "true",
];

#[test]
fn the_queue_git_writes_answer_alike_over_rest_and_in_memory() {
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
    assert_eq!(over_rest, EXPECTED, "over REST");
    assert_eq!(actions, direct_actions, "the same writes were made");
}
