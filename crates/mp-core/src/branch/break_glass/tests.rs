//! Tests for the L5 break-glass audit.

use super::*;

const NOW: &str = "2026-05-26T12:00:00Z";
const SHA: &str = "1234567890abcdef1234567890abcdef12345678";

fn login(text: &str) -> Login {
    Login::parse(text).expect("valid login")
}

fn policy() -> BreakGlassPolicy {
    BreakGlassPolicy::new(login("mp-gate[bot]"), vec![login("owner")])
}

/// A commit with `subject` that claims the owner as author and committer and a date long
/// ago, landed on the branch by `pusher` at `pushed_at` (GitHub's activity log): only the
/// landing counts.
fn commit(
    subject: &str,
    pusher: Option<&str>,
    pushed_at: Option<&str>,
) -> (CommitContext, RefUpdate) {
    let sha = CommitSha::parse(SHA).expect("valid sha");
    let mut commit = CommitContext::from_message(sha.clone(), subject);
    commit.author_login = Some(login("owner"));
    commit.committer_login = Some(login("owner"));
    commit.committed_at = Timestamp::parse("2030-01-01T00:00:00Z").ok();
    let landing = RefUpdate {
        kind: crate::context::RefUpdateKind::Push,
        before: None,
        after: Some(sha),
        at: pushed_at.map(|t| Timestamp::parse(t).expect("valid timestamp")),
        actor: pusher.map(login),
    };
    (commit, landing)
}

fn adr(text: &str) -> Vec<(String, String)> {
    vec![
        ("docs/decisions/README.txt".to_owned(), SHA.to_owned()),
        (
            "docs/decisions/0001-other.md".to_owned(),
            "unrelated".to_owned(),
        ),
        ("docs/decisions/0007-outage.md".to_owned(), text.to_owned()),
    ]
}

/// Audits `commit` at [`NOW`] and checks the code and the one-line display.
#[track_caller]
fn check(
    (commit, landing): &(CommitContext, RefUpdate),
    policy: &BreakGlassPolicy,
    adrs: &[(String, String)],
    expected: &str,
) {
    let now = Timestamp::parse(NOW).expect("valid timestamp");
    let verdict = audit_break_glass(commit, landing, policy, adrs, now);
    assert_eq!(format!("{}: {verdict}", verdict.code()), expected);
}

#[test]
fn ordinary_commit_is_not_audited() {
    check(
        &commit("feat: [break-glass-x] in the middle", Some("mallory"), None),
        &policy(),
        &[],
        "not_break_glass: not a break-glass commit",
    );
    assert!(!is_break_glass("[break-glass-X] upper case tag"));
    assert!(!is_break_glass("[break-glass-x]no space"));
    assert_eq!(
        break_glass_tag("[break-glass-a-1]\thotfix"),
        Some("break-glass-a-1")
    );
}

#[test]
fn an_adr_naming_only_a_prefix_does_not_count() {
    check(
        &commit(
            "[break-glass-outage] hotfix",
            Some("owner"),
            Some("2026-05-26T11:30:00Z"),
        ),
        &policy(),
        &adr("Break glass on commit 1234567890abcdef1234567890abcdef1234567 (one short)."),
        "break_glass_adr_pending: [break-glass-outage] commit 1234567 has no ADR yet; deadline 2026-05-27T11:30:00Z",
    );
    check(
        &commit(
            "[break-glass-outage] hotfix",
            Some("owner"),
            Some("2026-05-26T11:30:00Z"),
        ),
        &policy(),
        &adr(&format!(
            "Break glass on commit {} during the outage.",
            SHA.to_ascii_uppercase()
        )),
        "break_glass_audited: [break-glass-outage] commit 1234567 is recorded in docs/decisions/0007-outage.md",
    );
}

#[test]
fn adr_naming_full_sha_counts_even_past_deadline() {
    check(
        &commit(
            "[break-glass-outage] hotfix",
            Some("owner"),
            Some("2026-05-20T00:00:00Z"),
        ),
        &policy(),
        &adr(&format!("commit_sha: \"{SHA}\"")),
        "break_glass_audited: [break-glass-outage] commit 1234567 is recorded in docs/decisions/0007-outage.md",
    );
}

#[test]
fn a_pusher_not_allowlisted_is_flagged_even_when_the_commit_claims_the_owner() {
    let verdict_commit = commit("[break-glass-outage] hotfix", Some("mallory"), Some(NOW));
    check(
        &verdict_commit,
        &policy(),
        &adr(SHA),
        "break_glass_unauthorized: [break-glass-outage] commit 1234567 pushed by 'mallory' who is not allowlisted (allowlist: owner)",
    );
    let now = Timestamp::parse(NOW).expect("valid timestamp");
    let verdict = audit_break_glass(&verdict_commit.0, &verdict_commit.1, &policy(), &[], now);
    assert_eq!(
        verdict.incident(),
        Some(IncidentLabel::BreakGlassUnauthorized)
    );
    assert!(
        verdict
            .incident_body()
            .is_some_and(|b| b.contains("`mallory`"))
    );
}

#[test]
fn an_update_without_an_actor_is_unauthorized() {
    check(
        &commit("[break-glass-outage] hotfix", None, Some(NOW)),
        &policy(),
        &[],
        "break_glass_unauthorized: [break-glass-outage] commit 1234567 pushed by 'unknown' who is not allowlisted (allowlist: owner)",
    );
}

#[test]
fn empty_allowlist_skips_the_actor_check() {
    check(
        &commit(
            "[break-glass-outage] hotfix",
            Some("anyone"),
            Some("2026-05-26T11:00:00Z"),
        ),
        &BreakGlassPolicy::new(login("mp-gate[bot]"), Vec::new()),
        &adr(SHA),
        "break_glass_audited: [break-glass-outage] commit 1234567 is recorded in docs/decisions/0007-outage.md",
    );
}

#[test]
fn mp_s_own_update_is_no_incident() {
    check(
        &commit(
            "[break-glass-outage] from a PR title",
            Some("mp-gate[bot]"),
            None,
        ),
        &policy(),
        &[],
        "break_glass_bot_commit: break-glass subject on 1234567 landed by mp itself: not a break-glass push",
    );
}

#[test]
fn no_adr_before_deadline_is_pending() {
    check(
        &commit(
            "[break-glass-outage] hotfix",
            Some("owner"),
            Some("2026-05-25T12:00:01Z"),
        ),
        &policy(),
        &adr("nothing here"),
        "break_glass_adr_pending: [break-glass-outage] commit 1234567 has no ADR yet; deadline 2026-05-26T12:00:01Z",
    );
}

#[test]
fn no_adr_at_deadline_is_unaudited() {
    check(
        &commit(
            "[break-glass-outage] hotfix",
            Some("owner"),
            Some("2026-05-25T12:00:00Z"),
        ),
        &policy(),
        &adr("nothing here"),
        "break_glass_unaudited: [break-glass-outage] commit 1234567 has no ADR within 24 h of its push at 2026-05-25T12:00:00Z",
    );
}

#[test]
fn custom_deadline_applies() {
    let tight = policy().with_adr_deadline_hours(2);
    check(
        &commit(
            "[break-glass-sec] revoke",
            Some("owner"),
            Some("2026-05-26T10:30:00Z"),
        ),
        &tight,
        &[],
        "break_glass_adr_pending: [break-glass-sec] commit 1234567 has no ADR yet; deadline 2026-05-26T12:30:00Z",
    );
    check(
        &commit(
            "[break-glass-sec] revoke",
            Some("owner"),
            Some("2026-05-26T09:00:00Z"),
        ),
        &tight,
        &[],
        "break_glass_unaudited: [break-glass-sec] commit 1234567 has no ADR within 2 h of its push at 2026-05-26T09:00:00Z",
    );
}

#[test]
fn an_update_without_a_time_is_unaudited() {
    let c = commit("[break-glass-outage] hotfix", Some("owner"), None);
    check(
        &c,
        &policy(),
        &[],
        "break_glass_unaudited: [break-glass-outage] commit 1234567 has no ADR and no push time to time the 24 h deadline",
    );
    let now = Timestamp::parse(NOW).expect("valid timestamp");
    let verdict = audit_break_glass(&c.0, &c.1, &policy(), &[], now);
    assert_eq!(verdict.incident(), Some(IncidentLabel::BreakGlassUnaudited));
    assert!(
        verdict
            .incident_body()
            .is_some_and(|b| b.contains("24-hour deadline"))
    );
}

#[test]
fn adr_lookup_reads_only_markdown() {
    let sha = CommitSha::parse(SHA).expect("valid sha");
    let files = adr("no mention");
    assert_eq!(find_adr(&sha, &files), None);
}
