//! Tests for `Recording` over the in-memory GitHub: accepted writes are kept in order,
//! refused ones are not, and reads pass through untouched.

use super::Recording;
use crate::testkit::{block_on, repo, sha};
use mp_core::ids::{CommitSha, PrNumber};
use mp_core::port::{GitHub, GitHubError, MergeMethod, MergeRequest};
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
