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

/// The queue's Git writes on the test fake: a merge into a staging branch, a second merge
/// of the same head (nothing to merge), a fast-forward, a refused rewrite and a forced one.
#[test]
fn queue_git_writes_are_recorded_when_they_change_something() {
    use crate::testkit_history::commit_by;
    use mp_core::port::GitHubHistory;

    let fake = Fake::new(Vec::new());
    fake.set_main("acme/app", vec![commit_by("b0", "init", Some("alice"))]);
    let mut head = commit_by("a1", "feat: a", Some("agent-1"));
    head.parents = vec![sha("b0")];
    fake.set_branch("acme/app", "agent/a", vec![head]);
    let mut other = commit_by("c1", "feat: c", Some("agent-3"));
    other.parents = vec![sha("b0")];
    fake.set_branch("acme/app", "agent/c", vec![other]);
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
    let log = fake.take_log();
    assert!(
        log.iter()
            .any(|l| l.starts_with("merge acme/app a100000 into mp-queue/main as ")),
        "{log:?}"
    );
    assert!(
        log.iter().any(|l| l.ends_with("-> c100000 (forced)")),
        "{log:?}"
    );
}
