//! Tests for the unauthorized-push check: only the update that landed a commit (GitHub's
//! activity log) decides, never what the commit claims.

use super::*;
use crate::context::RefUpdateKind;

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

fn landed_by(pusher: Option<&str>, kind: RefUpdateKind) -> RefUpdate {
    RefUpdate {
        kind,
        before: None,
        after: CommitSha::parse(SHA).ok(),
        at: Timestamp::parse("2026-03-10T10:00:00Z").ok(),
        actor: pusher.map(login),
    }
}

/// Checks the push verdict's code and display for the bot `mp-gate[bot]` and allowlist
/// `owner`, for a commit that claims `committer` and was landed by `pusher`.
#[track_caller]
fn check(subject: &str, committer: Option<&str>, pusher: Option<&str>, expected: &str) {
    let verdict = check_push(
        &commit(subject, committer),
        &landed_by(pusher, RefUpdateKind::Push),
        &login("mp-gate[bot]"),
        &[login("owner")],
    );
    assert_eq!(format!("{}: {verdict}", verdict.code()), expected);
}

#[test]
fn mp_s_own_update_is_sanctioned() {
    check(
        "feat: x (#12)",
        Some("mp-gate[bot]"),
        Some("mp-gate[bot]"),
        "push_by_bot: landed by mp",
    );
}

#[test]
fn break_glass_is_left_to_the_audit() {
    check(
        "[break-glass-outage] hotfix",
        Some("mallory"),
        Some("mallory"),
        "push_break_glass: break-glass commit, audited separately",
    );
}

#[test]
fn an_allowlisted_pusher_is_sanctioned_whoever_committed() {
    check(
        "fix: typo",
        Some("web-flow"),
        Some("Owner"),
        "push_by_allowlisted: landed by allowlisted actor 'owner'",
    );
}

#[test]
fn a_commit_claiming_the_owner_or_mp_pushed_by_an_agent_is_unauthorized() {
    for claimed in ["owner", "mp-gate[bot]"] {
        check(
            "fix: sneaky",
            Some(claimed),
            Some("codex-agent"),
            "unauthorized_push: commit abcdef0 landed by 'codex-agent' (push) outside the gate",
        );
    }
}

#[test]
fn an_update_without_an_actor_is_unauthorized() {
    check(
        "fix: sneaky",
        Some("owner"),
        None,
        "unauthorized_push: commit abcdef0 landed by 'unknown' (push) outside the gate",
    );
}

#[test]
fn a_merge_by_an_agent_in_the_web_interface_is_unauthorized_and_the_body_says_who() {
    let verdict = check_push(
        &commit("feat: thing (#4)", Some("web-flow")),
        &landed_by(
            Some("codex-agent"),
            RefUpdateKind::Other("pr_merge".to_owned()),
        ),
        &login("mp-gate[bot]"),
        &[login("owner")],
    );
    assert_eq!(verdict.incident(), Some(IncidentLabel::UnauthorizedPush));
    let body = verdict
        .incident_body(&login("mp-gate[bot]"), &[login("owner")])
        .expect("unauthorized push has a body");
    assert!(
        body.contains(
            "- landed by: `codex-agent` (pr_merge at 2026-03-10T10:00:00Z, GitHub's activity log)"
        ),
        "{body}"
    );
    assert!(
        body.contains("- committer the commit claims: `web-flow` (not evidence)"),
        "{body}"
    );
    assert!(body.contains("allowlisted actor (owner)"), "{body}");
}

fn queue_landing() -> RefUpdate {
    landed_by(
        Some("github-merge-queue[bot]"),
        RefUpdateKind::Other(MERGE_QUEUE_MERGE.to_owned()),
    )
}

fn check_queue(landing: &RefUpdate, queue: &QueueLanding) -> PushVerdict {
    check_queue_push(
        &commit(
            "Merge pull request #7 from agent/x",
            Some("github-merge-queue[bot]"),
        ),
        landing,
        queue,
        &login("mp-gate[bot]"),
        &[login("owner")],
    )
}

#[test]
fn a_queue_landing_of_approved_heads_is_sanctioned() {
    let head = CommitSha::parse(SHA).expect("valid sha");
    let verdict = check_queue(
        &queue_landing(),
        &Ok(vec![QueueLanded {
            pr: PrNumber::new(7),
            head,
        }]),
    );
    assert_eq!(
        format!("{}: {verdict}", verdict.code()),
        "push_by_github_queue: landed by GitHub's merge queue: #7 at its approved head abcdef0"
    );
    assert_eq!(verdict.incident(), None);
}

#[test]
fn a_queue_landing_the_owner_did_not_approve_is_an_unauthorized_push_that_says_why() {
    let why = "it landed #7 at head abcdef0, which the owner did not approve".to_owned();
    let verdict = check_queue(&queue_landing(), &Err(why));
    assert_eq!(verdict.code(), "unauthorized_push");
    let body = verdict
        .incident_body(&login("mp-gate[bot]"), &[login("owner")])
        .expect("an incident");
    assert!(
        body.contains(
            "- GitHub's merge queue: it landed #7 at head abcdef0, which the owner did not approve\n"
        ),
        "{body}"
    );
    // Only GitHub's own activity type makes a queue's landing: a push is judged as a push,
    // whatever the supervisor read of pull requests.
    let pushed = landed_by(Some("github-merge-queue[bot]"), RefUpdateKind::Push);
    let verdict = check_queue(
        &pushed,
        &Ok(vec![QueueLanded {
            pr: PrNumber::new(7),
            head: CommitSha::parse(SHA).expect("valid sha"),
        }]),
    );
    assert_eq!(verdict.code(), "unauthorized_push");
    // An update that landed nothing the supervisor could name is no sanction either.
    assert_eq!(
        check_queue(&queue_landing(), &Ok(Vec::new())).code(),
        "unauthorized_push"
    );
}
