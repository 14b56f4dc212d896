//! Tests for `Recording` over the in-memory GitHub: accepted writes are kept in order,
//! refused ones are not, and reads pass through untouched.

use super::Recording;
use crate::testkit::{block_on, repo, sha};
use mp_core::ids::{CommitSha, PrNumber};
use mp_core::port::{GitHub, GitHubError, MergeMethod, MergeRequest, Write};
use mp_github_fake::{Endpoint, Failure, MemoryGitHub};

/// `acme/app` with two open pull requests, `#1` (head `a1…`) and `#2` (head `a2…`).
fn world() -> MemoryGitHub {
    let (a1, a2) = (sha("a1"), sha("a2"));
    let text = format!(
        "now: 2026-03-01T12:00:00Z
bot: mp-gate
repos:
  - name: acme/app
    commits:
      - {{id: m1, message: base}}
      - {{id: {a1}, message: \"docs: change 1\", parents: [m1]}}
      - {{id: {a2}, message: \"docs: change 2\", parents: [m1]}}
    branches: {{main: m1, change-1: {a1}, change-2: {a2}}}
    pulls:
      - {{number: 1, title: \"docs: change 1\", author: agent-bob, head: change-1}}
      - {{number: 2, title: \"docs: change 2\", author: agent-bob, head: change-2}}
"
    );
    let world = mp_github_fake::parse_world("recording.yaml", &text, None)
        .unwrap_or_else(|err| panic!("the test world parses: {err}"));
    MemoryGitHub::new(world)
}

#[track_caller]
fn check(github: &MemoryGitHub, expected: &[&str]) {
    let recording = Recording::new(github);
    let app = repo("acme/app");
    block_on(async {
        let pulls = recording
            .open_pulls(&app)
            .await
            .expect("a read passes through");
        assert_eq!(pulls.len(), 2, "the reads are the wrapped port's");
        for n in [1, 2] {
            let number = PrNumber::new(n);
            let _ = recording
                .create_comment(&app, number, "hello\nsecond line")
                .await;
            let request = MergeRequest {
                head_sha: sha(&format!("a{n}")),
                method: MergeMethod::Squash,
                commit_message: None,
            };
            let _ = recording.merge_pull(&app, number, &request).await;
        }
    });
    let lines: Vec<String> = recording.writes().iter().map(|w| w.done_line()).collect();
    assert_eq!(lines, expected);
}

#[test]
fn accepted_writes_are_recorded_in_order() {
    check(
        &world(),
        &[
            "commented on acme/app#1: hello",
            "merged acme/app#1 pinned to head a100000 (squash)",
            "commented on acme/app#2: hello",
            "merged acme/app#2 pinned to head a200000 (squash)",
        ],
    );
}

#[test]
fn refused_writes_are_not_recorded() {
    let github = world();
    github.fail(
        Failure::on(
            Endpoint::CreateComment,
            GitHubError::Unavailable {
                route: "POST /repos/{o}/{r}/issues/{n}/comments".to_owned(),
                message: "HTTP 502".to_owned(),
            },
        )
        .with_value("1"),
    );
    github.fail(
        Failure::on(
            Endpoint::MergePull,
            GitHubError::HeadMoved {
                pr: "acme/app#2".to_owned(),
                expected: CommitSha::parse(&"a2".repeat(20)).expect("a SHA"),
            },
        )
        .with_value("2"),
    );
    check(
        &github,
        &[
            "merged acme/app#1 pinned to head a100000 (squash)",
            "commented on acme/app#2: hello",
        ],
    );
}

/// The queue's Git writes over the in-memory GitHub: a merge into a staging branch, a
/// second merge of the same head (nothing to merge), a fast-forward, a refused rewrite
/// and a forced one.
#[test]
fn queue_git_writes_are_recorded_when_they_change_something() {
    use mp_core::port::GitHubHistory;

    let (b0, a1, c1) = (sha("b0"), sha("a1"), sha("c1"));
    let text = format!(
        "now: 2026-03-01T12:00:00Z
bot: mp-gate
repos:
  - name: acme/app
    commits:
      - {{id: {b0}, message: init, author: alice}}
      - {{id: {a1}, message: \"feat: a\", parents: [{b0}], author: agent-1}}
      - {{id: {c1}, message: \"feat: c\", parents: [{b0}], author: agent-3}}
    branches: {{main: {b0}, agent/a: {a1}, agent/c: {c1}}}
"
    );
    let world = mp_github_fake::parse_world("queue.yaml", &text, None)
        .unwrap_or_else(|err| panic!("the test world parses: {err}"));
    let fake = MemoryGitHub::new(world);
    let recording = Recording::new(&fake);
    let app = repo("acme/app");
    let answers = block_on(async {
        let stage = "mp-queue/main";
        let created = recording.create_branch(&app, stage, &sha("b0")).await;
        let merge = recording
            .merge_into_branch(&app, stage, &sha("a1"), "Merge #1")
            .await;
        let again = recording
            .merge_into_branch(&app, stage, &sha("a1"), "Merge #1")
            .await;
        let merge_sha = merge.clone().ok().flatten().expect("a merge commit");
        let parents = recording.commit(&app, &merge_sha).await.map(|c| c.parents);
        let forward = recording
            .update_branch_ref(&app, "main", &merge_sha, false)
            .await;
        let rewrite = recording
            .update_branch_ref(&app, "main", &sha("c1"), false)
            .await;
        let forced = recording
            .update_branch_ref(&app, "main", &sha("c1"), true)
            .await;
        let main = recording.branch_commits(&app, "main", 10).await;
        (
            merge_sha,
            created.is_ok(),
            again,
            parents,
            forward.is_ok(),
            rewrite.map_err(|e| e.to_string()),
            forced.is_ok(),
            main.map(|commits| commits.len()),
        )
    });
    let (merge_sha, created, again, parents, forward, rewrite, forced, main) = answers;
    assert!(
        created && forward && forced,
        "{answers:?}",
        answers = (created, forward, forced)
    );
    assert_eq!(again, Ok(None), "the head is in the branch already");
    assert_eq!(parents, Ok(vec![sha("b0"), sha("a1")]));
    assert_eq!(
        rewrite,
        Err("acme/app refs/heads/main: Update is not a fast forward".to_owned())
    );
    assert_eq!(main, Ok(2), "c1 and its parent b0");
    // The merge into a branch with the head already in it (204) changed nothing and the
    // refused rewrite failed: neither is a write done.
    let lines: Vec<String> = recording.writes().iter().map(|w| w.done_line()).collect();
    assert_eq!(lines.len(), 4, "{lines:?}");
    assert_eq!(
        lines[0],
        "created branch mp-queue/main in acme/app at b000000"
    );
    assert_eq!(
        lines[1],
        "merged a100000 into mp-queue/main in acme/app: Merge #1"
    );
    assert_eq!(
        lines[2],
        format!("moved main in acme/app to {}", merge_sha.short())
    );
    assert_eq!(lines[3], "moved main in acme/app to c100000 (forced)");
    let log: Vec<String> = fake.actions().iter().map(Write::log_line).collect();
    assert_eq!(log.len(), 4, "{log:?}");
    assert!(
        log.iter()
            .any(|l| l.contains("a100000") && l.contains("mp-queue/main")),
        "{log:?}"
    );
}
