//! Tests for reading the owner's verdict: each case lists the signals as
//! `reaction|comment who at text` lines and the verdict expected.

use super::*;
use crate::inbox::testkit::{at, login};

/// Builds the signals from `lines` (`r alice 11:00 +1`, `c alice 11:00 /reject`; `e` is a
/// comment edited a minute after it was written; `\n` in a comment text is a line break;
/// a `-` time means no time) and compares the verdict with `expected` (`None`: no verdict).
#[track_caller]
fn check(lines: &[&str], expected: Option<&str>) {
    let mut comments = Vec::new();
    let mut reactions = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let mut fields = line.splitn(4, ' ');
        let (kind, who, time, text) = (
            fields.next().expect("kind"),
            fields.next().expect("who"),
            fields.next().expect("time"),
            fields.next().unwrap_or_default(),
        );
        let created_at = (time != "-").then(|| at(&format!("2026-03-01T{time}:00Z")));
        match kind {
            "r" => reactions.push(Reaction {
                kind: ReactionKind::from_github(text),
                user: login(who),
                created_at,
            }),
            "c" | "e" => comments.push(Comment {
                id: CommentId::new(index as u64 + 1),
                author: Some(login(who)),
                body: text.replace("\\n", "\n"),
                created_at,
                updated_at: if kind == "e" {
                    created_at.map(|t| t.plus_seconds(60))
                } else {
                    created_at
                },
            }),
            other => panic!("unknown signal kind {other}"),
        }
    }
    let allowlist = [login("alice"), login("bob")];
    let verdict = parse_signals(&comments, &reactions, &allowlist);
    assert_eq!(verdict.map(|v| v.to_string()).as_deref(), expected);
}

#[test]
fn a_thumbs_up_approves_option_a_and_a_thumbs_down_rejects() {
    check(
        &["r alice 11:00 +1"],
        Some("approve option A by alice (reaction at 2026-03-01T11:00:00Z)"),
    );
    check(
        &["r alice 11:00 -1"],
        Some("reject by alice (reaction at 2026-03-01T11:00:00Z)"),
    );
    check(&["r alice 11:00 heart", "r alice 11:05 rocket"], None);
}

#[test]
fn every_command_is_read_in_any_case_with_blanks_around() {
    check(
        &["c alice 11:00 /approve A"],
        Some("approve option A by alice (comment 1 at 2026-03-01T11:00:00Z)"),
    );
    check(
        &["c alice 11:00   /APPROVE   b  "],
        Some("approve option B by alice (comment 1 at 2026-03-01T11:00:00Z)"),
    );
    check(
        &["c alice 11:00 thanks\\n/approve c\\nlater more"],
        Some("defer (option C) by alice (comment 1 at 2026-03-01T11:00:00Z)"),
    );
    check(
        &["c alice 11:00 /Reject"],
        Some("reject by alice (comment 1 at 2026-03-01T11:00:00Z)"),
    );
}

#[test]
fn commands_inside_a_sentence_or_with_other_options_do_not_count() {
    check(
        &[
            "c alice 11:00 I would /approve A later",
            "c alice 11:01 /approve D",
            "c alice 11:02 /approve AB",
            "c alice 11:03 /rejected",
            "c alice 11:04 - [x] A: approve",
        ],
        None,
    );
}

#[test]
fn reject_wins_over_approve_inside_one_comment() {
    check(
        &["c alice 11:00 /approve A\\n/reject"],
        Some("reject by alice (comment 1 at 2026-03-01T11:00:00Z)"),
    );
}

#[test]
fn only_allowlisted_actors_count() {
    check(
        &[
            "r mallory 12:00 -1",
            "c mallory 12:00 /reject",
            "c alice 11:00 /approve B",
        ],
        Some("approve option B by alice (comment 3 at 2026-03-01T11:00:00Z)"),
    );
    check(&["r mallory 12:00 +1", "c mallory 12:00 /approve A"], None);
}

#[test]
fn the_latest_signal_wins_whoever_gave_it() {
    check(
        &[
            "r alice 11:00 +1",
            "c bob 11:30 /reject",
            "c alice 10:00 /approve B",
        ],
        Some("reject by bob (comment 2 at 2026-03-01T11:30:00Z)"),
    );
    check(
        &["c alice 11:00 /reject", "r bob 11:30 +1"],
        Some("approve option A by bob (reaction at 2026-03-01T11:30:00Z)"),
    );
}

#[test]
fn at_the_same_time_a_comment_beats_a_reaction_and_a_later_comment_an_earlier_one() {
    check(
        &["c alice 11:00 /approve B", "r alice 11:00 -1"],
        Some("approve option B by alice (comment 1 at 2026-03-01T11:00:00Z)"),
    );
    check(
        &["c alice 11:00 /approve B", "c alice 11:00 /approve C"],
        Some("defer (option C) by alice (comment 2 at 2026-03-01T11:00:00Z)"),
    );
}

#[test]
fn a_signal_without_a_time_is_older_than_any_timed_one() {
    check(
        &["c alice - /reject", "r alice 09:00 +1"],
        Some("approve option A by alice (reaction at 2026-03-01T09:00:00Z)"),
    );
    check(
        &["c alice - /reject"],
        Some("reject by alice (comment 1, time unknown)"),
    );
}

#[test]
fn choices_have_stable_codes() {
    let codes: Vec<&str> = [
        OwnerChoice::ApproveA,
        OwnerChoice::ApproveB,
        OwnerChoice::Defer,
        OwnerChoice::Reject,
    ]
    .into_iter()
    .map(OwnerChoice::code)
    .collect();
    assert_eq!(codes, ["approve_a", "approve_b", "defer", "reject"]);
}

#[test]
fn an_edited_comment_is_never_a_vote() {
    // The owner's "reviewing" comment, edited by somebody with write access.
    check(&["e alice 11:00 /approve A"], None);
    check(
        &["r alice 10:00 -1", "e alice 11:00 /approve A"],
        Some("reject by alice (reaction at 2026-03-01T10:00:00Z)"),
    );
    let comments = [Comment {
        id: CommentId::new(9),
        author: Some(login("alice")),
        body: "/approve A".to_owned(),
        created_at: Some(at("2026-03-01T11:00:00Z")),
        updated_at: Some(at("2026-03-01T11:20:00Z")),
    }];
    let edited = edited_commands(&comments, &[login("alice")]);
    assert_eq!(edited.len(), 1);
    assert!(edited_commands(&comments, &[login("bob")]).is_empty());
}
