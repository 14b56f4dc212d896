//! Tests for the unauthorized-push check and its suppression.

use super::*;

const SHA: &str = "abcdef0123456789abcdef0123456789abcdef01";

fn login(text: &str) -> Login {
    Login::parse(text).expect("valid login")
}

fn commit(subject: &str, committer: Option<&str>) -> CommitContext {
    let mut commit =
        CommitContext::from_message(CommitSha::parse(SHA).expect("valid sha"), subject);
    commit.committer_login = committer.map(login);
    commit
}

/// Checks the push verdict's code and display for the bot `mp-gate[bot]` and allowlist `owner`.
#[track_caller]
fn check(commit: &CommitContext, expected: &str) {
    let verdict = check_push(commit, &login("mp-gate[bot]"), &[login("owner")]);
    assert_eq!(format!("{}: {verdict}", verdict.code()), expected);
}

#[test]
fn bot_commit_is_sanctioned() {
    check(
        &commit("feat: x (#12)", Some("mp-gate[bot]")),
        "push_by_bot: committed by the bot",
    );
}

#[test]
fn break_glass_is_left_to_the_audit() {
    check(
        &commit("[break-glass-outage] hotfix", Some("mallory")),
        "push_break_glass: break-glass commit, audited separately",
    );
}

#[test]
fn allowlisted_committer_is_sanctioned() {
    check(
        &commit("fix: typo", Some("Owner")),
        "push_by_allowlisted: committed by allowlisted actor 'owner'",
    );
}

#[test]
fn other_committer_is_unauthorized() {
    let c = commit("fix: sneaky", Some("web-flow"));
    check(
        &c,
        "unauthorized_push: commit abcdef0 by committer 'web-flow' reached main outside the gate",
    );
    let verdict = check_push(&c, &login("mp-gate[bot]"), &[login("owner")]);
    assert_eq!(verdict.incident(), Some(IncidentLabel::UnauthorizedPush));
    let body = verdict
        .incident_body(&login("mp-gate[bot]"), &[login("owner")])
        .expect("unauthorized push has a body");
    assert!(body.contains("- committer: `web-flow`"));
    assert!(body.contains("(owner)"));
}

#[test]
fn unknown_committer_is_unauthorized() {
    check(
        &commit("fix: who", None),
        "unauthorized_push: commit abcdef0 by committer 'unknown' reached main outside the gate",
    );
}

#[test]
fn suppression_needs_an_allowlisted_merge_actor() {
    let allow = [login("owner")];
    let cases = [
        (
            MergeActorLookup::Found(login("owner")),
            &allow[..],
            "suppress_allowlisted_merger: dropped: merged by allowlisted actor 'owner'",
        ),
        (
            MergeActorLookup::Found(login("bob")),
            &allow[..],
            "keep_merger_not_allowlisted: kept: merge actor 'bob' is not allowlisted",
        ),
        (
            MergeActorLookup::NotFound,
            &allow[..],
            "keep_no_merge_actor: kept: no merge actor found",
        ),
        (
            MergeActorLookup::Failed("HTTP 502".to_owned()),
            &allow[..],
            "keep_lookup_failed: kept: merge actor lookup failed: HTTP 502",
        ),
        (
            MergeActorLookup::Found(login("owner")),
            &[][..],
            "keep_empty_allowlist: kept: the allowlist is empty",
        ),
    ];
    for (lookup, allowlist, expected) in cases {
        let decision = suppression(&lookup, allowlist);
        assert_eq!(format!("{}: {decision}", decision.code()), expected);
        assert_eq!(decision.keeps(), expected.starts_with("keep"));
    }
}
