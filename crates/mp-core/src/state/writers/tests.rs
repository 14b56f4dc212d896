//! Tests for the check of who wrote `bot-state`.

use super::*;

fn sha(c: char) -> CommitSha {
    CommitSha::parse(&c.to_string().repeat(40)).expect("valid sha")
}

fn login(name: &str) -> Login {
    Login::parse(name).expect("valid login")
}

/// An update to `after` by `actor` (`-` for none).
fn by(actor: &str, after: char) -> RefUpdate {
    RefUpdate {
        kind: RefUpdateKind::Push,
        before: None,
        after: Some(sha(after)),
        at: Timestamp::parse("2026-03-10T10:00:00Z").ok(),
        actor: (actor != "-").then(|| login(actor)),
    }
}

/// The verdict over `log` (oldest first) from `checked`, as a short line.
#[track_caller]
fn check(log: &[RefUpdate], checked: Option<char>, expected: &str) {
    let newest_first: Vec<RefUpdate> = log.iter().rev().cloned().collect();
    let marker = checked.map(sha);
    let got = match check_state_writers(
        &newest_first,
        marker.as_ref(),
        &login("mp-gate[bot]"),
        &[login("alice")],
    ) {
        StateWriters::Trusted {
            checked,
            restored_by,
            ..
        } => format!(
            "trusted {checked}{}",
            restored_by
                .map(|u| format!(
                    " restored by {}",
                    u.actor.map(|a| a.to_string()).unwrap_or_default()
                ))
                .unwrap_or_default()
        ),
        StateWriters::Steered(steered) => format!("{}: {steered}", steered.code()),
    };
    assert_eq!(got, expected);
}

#[test]
fn only_mp_since_the_last_check_is_trusted() {
    let log = [
        by("mp-gate[bot]", 'a'),
        by("mp-gate[bot]", 'b'),
        by("mp-gate[bot]", 'c'),
    ];
    check(&log, None, "trusted 3");
    check(&log, Some('a'), "trusted 2");
    check(&log, Some('c'), "trusted 0");
}

#[test]
fn an_agent_write_anywhere_after_the_check_is_steering() {
    let log = [
        by("mp-gate[bot]", 'a'),
        by("codex-agent", 'b'),
        by("mp-gate[bot]", 'c'),
    ];
    check(
        &log,
        Some('a'),
        "state_written_by_other: codex-agent wrote the bot-state branch at 2026-03-10T10:00:00Z (push to bbbbbbb), GitHub's activity log",
    );
    // Before the checked tip: already judged by an earlier tick.
    check(&log, Some('b'), "trusted 1");
}

#[test]
fn an_update_without_an_actor_is_steering() {
    check(
        &[by("mp-gate[bot]", 'a'), by("-", 'b')],
        None,
        "state_written_by_other: someone GitHub names no actor for wrote the bot-state branch at 2026-03-10T10:00:00Z (push to bbbbbbb), GitHub's activity log",
    );
}

#[test]
fn the_owner_restoring_the_state_ends_the_walk() {
    let log = [
        by("codex-agent", 'a'),
        by("alice", 'b'),
        by("mp-gate[bot]", 'c'),
    ];
    check(&log, None, "trusted 2 restored by alice");
}

#[test]
fn a_deletion_by_an_agent_is_steering() {
    let deletion = RefUpdate {
        kind: RefUpdateKind::BranchDeletion,
        before: Some(sha('c')),
        after: None,
        at: Timestamp::parse("2026-03-10T10:00:00Z").ok(),
        actor: Some(login("codex-agent")),
    };
    check(
        &[by("mp-gate[bot]", 'c'), deletion],
        None,
        "state_branch_deleted_by_other: codex-agent deleted the bot-state branch at 2026-03-10T10:00:00Z (it was at ccccccc), GitHub's activity log",
    );
}
