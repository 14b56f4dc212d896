//! Tests for `Recording`: accepted writes are kept in order, refused ones are not, and
//! reads pass through untouched.

use super::Recording;
use crate::testkit::{Fake, block_on, clean, repo, sha};
use mp_core::ids::{CommitSha, PrNumber};
use mp_core::port::{GitHub, GitHubError, MergeMethod, MergeRequest};

#[track_caller]
fn check(fake: &Fake, expected: &[&str]) {
    let recording = Recording::new(fake);
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
        &Fake::new(vec![clean(1), clean(2)]),
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
    let fake = Fake::new(vec![clean(1), clean(2)]);
    fake.fail(
        "create_comment",
        1,
        GitHubError::Unavailable {
            route: "POST /repos/{o}/{r}/issues/{n}/comments".to_owned(),
            message: "HTTP 502".to_owned(),
        },
    );
    fake.fail(
        "merge_pull",
        2,
        GitHubError::HeadMoved {
            pr: "acme/app#2".to_owned(),
            expected: CommitSha::parse(&"a2".repeat(20)).expect("a SHA"),
        },
    );
    check(
        &fake,
        &[
            "merged acme/app#1 pinned to head a100000 (squash)",
            "commented on acme/app#2: hello",
        ],
    );
}
