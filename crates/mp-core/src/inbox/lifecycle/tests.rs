//! Tests for the inbox lifecycle: one open issue, its comments and the availability file
//! at a fixed `now`, compared by the actions due (`code #issue` and, for digests, the
//! windows they record).

use super::*;
use crate::config::PROJECTS_FILE;
use crate::inbox::testkit::{BOT, OWNER, at, config_with, login, repo};

const NOW: &str = "2026-03-20T12:00:00Z";
const PREFIX: &str = "[OWNER_AVAILABILITY]";

fn settings(enabled: bool) -> InboxLifecycle {
    let projects = format!(
        "governance_repo: acme/governance\nsupervised_repos: [acme/app]\ndecision_inbox:\n  lifecycle:\n    enabled: {enabled}\n    availability:\n      path: AVAILABILITY.md\n"
    );
    config_with(&[(PROJECTS_FILE, &projects)])
        .projects()
        .lifecycle()
        .clone()
}

fn issue(opened: &str) -> Issue {
    Issue {
        repo: repo("acme/governance"),
        number: PrNumber::new(100),
        title: "Decision pending — PR acme/app#1".to_owned(),
        body: String::new(),
        state: IssueState::Open,
        labels: vec!["decision:pending-owner".to_owned()],
        author: Some(login(BOT)),
        created_at: Some(at(opened)),
        is_pull_request: false,
    }
}

fn comment(author: &str, body: &str) -> Comment {
    Comment {
        id: CommentId::new(7),
        author: Some(login(author)),
        body: body.to_owned(),
        created_at: Some(at(NOW)),
        updated_at: Some(at(NOW)),
    }
}

/// The comments a bot would have after writing `actions`.
fn written(actions: &[LifecycleAction]) -> Vec<Comment> {
    actions.iter().map(|a| comment(BOT, a.body())).collect()
}

/// Runs the lifecycle at [`NOW`] on one issue opened at `opened` and compares the
/// actions with `expected`; returns them.
#[track_caller]
fn check(
    settings: &InboxLifecycle,
    opened: &str,
    comments: &[Comment],
    availability: Option<&str>,
    expected: &[&str],
) -> Vec<LifecycleAction> {
    let issues = [issue(opened)];
    let comments_by_issue = BTreeMap::from([(PrNumber::new(100), comments.to_vec())]);
    let actions = inbox_lifecycle(
        &issues,
        &comments_by_issue,
        availability,
        settings,
        &login(BOT),
        at(NOW),
    );
    let lines: Vec<String> = actions
        .iter()
        .map(|action| {
            let windows: Vec<String> = action
                .body()
                .lines()
                .filter_map(|l| l.strip_prefix(OUTING_MARKER)?.strip_suffix(MARKER_END))
                .map(|w| w.trim().replace(' ', ".."))
                .collect();
            let mut line = format!("{} #{}", action.code(), action.issue());
            if !windows.is_empty() {
                line.push_str(&format!(" [{}]", windows.join(", ")));
            }
            line
        })
        .collect();
    assert_eq!(lines, expected);
    actions
}

#[test]
fn a_disabled_lifecycle_does_nothing_however_old_the_issue() {
    check(&settings(false), "2026-01-01T00:00:00Z", &[], None, &[]);
}

#[test]
fn the_reminder_is_due_at_reminder_hours_inclusive() {
    let on = settings(true);
    let actions = check(&on, "2026-03-17T12:00:00Z", &[], None, &["remind #100"]);
    assert!(
        actions[0].body().starts_with("[REMINDER_72H] "),
        "{}",
        actions[0].body()
    );
    check(&on, "2026-03-17T12:00:01Z", &[], None, &[]);
}

#[test]
fn reminder_and_escalation_are_each_written_once_ever() {
    let on = settings(true);
    let opened = "2026-03-13T12:00:00Z";
    let actions = check(&on, opened, &[], None, &["remind #100", "escalate #100"]);
    assert!(actions[1].body().starts_with("[ESCALATION_168H] "));
    check(
        &on,
        opened,
        &written(&actions[..1]),
        None,
        &["escalate #100"],
    );
    check(&on, opened, &written(&actions), None, &[]);
}

#[test]
fn markers_in_comments_of_other_logins_are_ignored() {
    let on = settings(true);
    let opened = "2026-03-17T12:00:00Z";
    let forged = comment(
        OWNER,
        "[REMINDER_72H] done\n<!-- decision-inbox-lifecycle: reminder -->",
    );
    check(&on, opened, &[forged], None, &["remind #100"]);
}

#[test]
fn an_active_outing_or_a_quiet_owner_silences_the_lifecycle() {
    let on = settings(true);
    let opened = "2026-03-01T12:00:00Z";
    let outing = format!("{PREFIX} 2026-03-19T00:00:00Z - 2026-03-21T00:00:00Z outing\n");
    check(&on, opened, &[], Some(&outing), &[]);
    check(&on, opened, &[], Some(&format!("{PREFIX} quiet\n")), &[]);
    check(
        &on,
        opened,
        &[],
        Some(&format!("{PREFIX} quiet\n{PREFIX} available\n")),
        &["remind #100", "escalate #100"],
    );
}

#[test]
fn a_completed_outing_pauses_the_clock_and_gets_one_return_digest() {
    let on = settings(true);
    // Open 100 h, 48 h of which away: 52 h of waiting, under the 72 h reminder.
    let opened = "2026-03-16T08:00:00Z";
    let file = format!("notes\n{PREFIX} 2026-03-17T00:00:00Z – 2026-03-19T00:00:00Z outing\n");
    let digest = check(
        &on,
        opened,
        &[],
        Some(&file),
        &["post_digest #100 [2026-03-17T00:00:00Z..2026-03-19T00:00:00Z]"],
    );
    assert!(digest[0].body().starts_with("[RETURN_DIGEST] "));
    assert!(
        digest[0]
            .body()
            .contains("- 2026-03-17T00:00:00Z → 2026-03-19T00:00:00Z (48 h)")
    );
    let after = written(&digest);
    check(&on, opened, &after, Some(&file), &[]);
    // The recorded window keeps pausing the clock when the file no longer lists it.
    check(&on, opened, &after, None, &[]);
    check(
        &on,
        opened,
        &after,
        Some(&format!("{PREFIX} available\n")),
        &[],
    );
}

#[test]
fn a_later_outing_updates_the_digest_in_place() {
    let on = settings(true);
    let opened = "2026-03-10T12:00:00Z";
    let first = format!("{PREFIX} 2026-03-11T00:00:00Z - 2026-03-15T00:00:00Z outing\n");
    // 240 h open, 96 h away: 144 h of waiting. Only the digest is kept as written.
    let first_actions = check(
        &on,
        opened,
        &[],
        Some(&first),
        &[
            "post_digest #100 [2026-03-11T00:00:00Z..2026-03-15T00:00:00Z]",
            "remind #100",
        ],
    );
    let digest = written(&first_actions[..1]);
    // 96 + 72 h away: 72 h of waiting, still exactly the reminder.
    let both = format!("{first}{PREFIX} 2026-03-16T00:00:00Z — 2026-03-19T00:00:00Z outing\n");
    let actions = check(
        &on,
        opened,
        &digest,
        Some(&both),
        &[
            "update_digest #100 [2026-03-11T00:00:00Z..2026-03-15T00:00:00Z, 2026-03-16T00:00:00Z..2026-03-19T00:00:00Z]",
            "remind #100",
        ],
    );
    assert!(matches!(
        actions[0],
        LifecycleAction::UpdateDigest { comment, .. } if comment == CommentId::new(7)
    ));
}

#[test]
fn overlapping_outings_pause_the_clock_once() {
    let on = settings(true);
    // Open 100 h; together the two windows cover 10:00 on the 17th to 00:00 on the 19th
    // (38 h), leaving 62 h: no reminder yet.
    let file = format!(
        "{PREFIX} 2026-03-17T10:00:00Z - 2026-03-18T10:00:00Z outing\n{PREFIX} 2026-03-18T00:00:00Z - 2026-03-19T00:00:00Z outing\n"
    );
    check(
        &on,
        "2026-03-16T08:00:00Z",
        &[],
        Some(&file),
        &[
            "post_digest #100 [2026-03-17T10:00:00Z..2026-03-18T10:00:00Z, 2026-03-18T00:00:00Z..2026-03-19T00:00:00Z]",
        ],
    );
    // Open 110 h: 110 − 38 = 72 h, exactly the reminder (double counting gives 62 h).
    check(
        &on,
        "2026-03-15T22:00:00Z",
        &[],
        Some(&file),
        &[
            "post_digest #100 [2026-03-17T10:00:00Z..2026-03-18T10:00:00Z, 2026-03-18T00:00:00Z..2026-03-19T00:00:00Z]",
            "remind #100",
        ],
    );
}

#[test]
fn an_outing_before_the_issue_opened_neither_pauses_nor_digests() {
    let file = format!("{PREFIX} 2026-03-01T00:00:00Z - 2026-03-05T00:00:00Z outing\n");
    check(
        &settings(true),
        "2026-03-17T12:00:00Z",
        &[],
        Some(&file),
        &["remind #100"],
    );
}

#[test]
fn issues_without_comments_read_or_not_open_are_left_alone() {
    let on = settings(true);
    let mut closed = issue("2026-03-01T00:00:00Z");
    closed.state = IssueState::Closed;
    let unread = Issue {
        number: PrNumber::new(101),
        ..issue("2026-03-01T00:00:00Z")
    };
    let comments_by_issue = BTreeMap::from([(PrNumber::new(100), Vec::new())]);
    let actions = inbox_lifecycle(
        &[closed, unread],
        &comments_by_issue,
        None,
        &on,
        &login(BOT),
        at(NOW),
    );
    assert_eq!(actions, []);
}

#[test]
fn unreadable_availability_lines_are_reported_and_skipped() {
    let file = parse_availability(
        &format!(
            "{PREFIX} soon\n{PREFIX} 2026-03-02T00:00:00Z - 2026-03-01T00:00:00Z outing\n{PREFIX} tomorrow - later outing\n  {PREFIX} QUIET\nother line\n"
        ),
        PREFIX,
    );
    assert_eq!(file.outings, []);
    assert_eq!(file.state, Some(OwnerState::Quiet));
    assert_eq!(
        file.problems,
        [
            "line 1: expected '<start> - <end> outing', 'available' or 'quiet' after '[OWNER_AVAILABILITY]'",
            "line 2: outing ends at or before its start",
            "line 3: outing bounds are not ISO-8601 instants",
        ]
    );
}
