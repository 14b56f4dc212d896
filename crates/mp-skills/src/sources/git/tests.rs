//! `git` CLI tests against real repositories over `file://`.

use super::{RefKind, redact, remote_ref, shallow_clone};
use crate::sources::fetch::testkit::{commit, file_url, git, repo};

/// A repository with a lightweight tag `v1` and an annotated tag `v2` on the first commit,
/// then a second commit on `main`. Returns it, the first and the second commit.
fn upstream() -> (tempfile::TempDir, String, String) {
    let (dir, first) = repo(&[("skills/a/SKILL.md", "one")]);
    git(dir.path(), &["tag", "v1"]);
    git(dir.path(), &["tag", "-a", "v2", "-m", "release v2"]);
    let second = commit(dir.path(), &[("skills/a/SKILL.md", "two")]);
    (dir, first, second)
}

/// `remote_ref` of `reference` as `kind` on the upstream: `expect` is an index into
/// [first, second] or `None`.
#[track_caller]
fn check(reference: &str, kind: RefKind, expect: Option<usize>) {
    let (dir, first, second) = upstream();
    let got = remote_ref(&file_url(dir.path()), reference, kind).expect("ls-remote");
    assert_eq!(got, expect.map(|i| [&first, &second][i].clone()));
}

#[test]
fn lightweight_tag_resolves() {
    check("v1", RefKind::Tag, Some(0));
}

#[test]
fn annotated_tag_is_peeled_to_its_commit() {
    check("v2", RefKind::Tag, Some(0));
}

#[test]
fn branch_resolves_to_its_tip() {
    check("main", RefKind::Branch, Some(1));
}

#[test]
fn missing_or_wrong_kind_is_none() {
    check("v9", RefKind::Tag, None);
    check("main", RefKind::Tag, None);
    check("v1", RefKind::Branch, None);
}

#[test]
fn clone_checks_out_the_tag_commit() {
    let (dir, first, _) = upstream();
    let into = tempfile::tempdir().expect("temp dir");
    let target = into.path().join("clone");
    let head = shallow_clone(&file_url(dir.path()), "v2", &target).expect("clone");
    assert_eq!(head, first);
    let content = std::fs::read_to_string(target.join("skills/a/SKILL.md")).expect("read");
    assert_eq!(content, "one");
}

#[test]
fn clone_of_a_missing_ref_carries_gits_message() {
    let (dir, _, _) = upstream();
    let into = tempfile::tempdir().expect("temp dir");
    let error = shallow_clone(&file_url(dir.path()), "v9", &into.path().join("c"))
        .expect_err("no such ref");
    assert_eq!(error.action, "clone");
    assert!(error.detail.contains("v9"), "{error}");
}

#[test]
fn credentials_never_reach_a_message() {
    assert_eq!(
        redact("fatal: https://bob:s3cret@example.org/x.git and git://h/y and https://tok@h/z"),
        "fatal: https://***@example.org/x.git and git://h/y and https://***@h/z"
    );
    let error = remote_ref("https://bob:s3cret@127.0.0.1:9/x.git", "v1", RefKind::Tag)
        .expect_err("nothing listens on port 9");
    assert!(!error.to_string().contains("s3cret"), "{error}");
}

#[test]
fn plain_text_transports_are_not_allowed() {
    let error = remote_ref("git://127.0.0.1:9/x.git", "v1", RefKind::Tag).expect_err("refused");
    assert!(error.detail.contains("not allowed"), "{error}");
}
