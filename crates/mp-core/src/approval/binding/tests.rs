//! Tests of the head-at-label proof: each case is one history, one label time, one head.

use super::*;
use crate::context::{HeadHistory, RefUpdate, RefUpdateKind};
use crate::ids::{CommitSha, Timestamp};

fn sha(c: char) -> CommitSha {
    CommitSha::parse(&c.to_string().repeat(40)).expect("valid sha")
}

fn at(text: &str) -> Timestamp {
    Timestamp::parse(&format!("2026-03-10T{text}Z")).expect("valid time")
}

/// `kind before after time`, e.g. `push a b 10:00:00`; `-` is the all-zero sha.
fn history(lines: &[&str]) -> HeadHistory {
    HeadHistory::Read(
        lines
            .iter()
            .map(|line| {
                let parts: Vec<&str> = line.split_whitespace().collect();
                let tip = |p: &str| (p != "-").then(|| sha(p.chars().next().expect("char")));
                RefUpdate {
                    kind: RefUpdateKind::from_github(parts[0]),
                    before: tip(parts[1]),
                    after: tip(parts[2]),
                    at: (parts[3] != "?").then(|| at(parts[3])),
                    actor: None,
                }
            })
            .collect(),
    )
}

#[track_caller]
fn check(lines: &[&str], labeled: &str, head: char, expect: Result<&str, &str>) {
    let got = head_at_label(&history(lines), Some(at(labeled)), &sha(head));
    match (got, expect) {
        (Ok(proof), Ok(updated)) => {
            assert_eq!(proof.head, sha(head));
            assert_eq!(proof.updated_at, at(updated));
        }
        (Err(why), Err(code)) => assert_eq!(why.code(), code, "{why}"),
        (got, expect) => panic!("got {got:?}, expected {expect:?}"),
    }
}

#[test]
fn the_head_left_by_the_last_update_before_the_label_is_bound() {
    check(
        &["branch_creation - a 09:00:00", "push a b 09:30:00"],
        "10:00:00",
        'b',
        Ok("09:30:00"),
    );
}

#[test]
fn a_push_after_the_label_is_not_covered_by_it() {
    // The owner labelled b; the agent pushed c afterwards.
    check(
        &[
            "branch_creation - a 09:00:00",
            "push a b 09:30:00",
            "push b c 10:01:00",
        ],
        "10:00:00",
        'c',
        Err("labeled_other_head"),
    );
}

#[test]
fn a_force_push_back_to_the_labelled_head_keeps_the_binding() {
    check(
        &[
            "branch_creation - a 09:00:00",
            "push a b 10:01:00",
            "force_push b a 10:02:00",
        ],
        "10:00:00",
        'a',
        Ok("09:00:00"),
    );
}

#[test]
fn an_update_in_the_label_second_cannot_be_ordered() {
    check(
        &["branch_creation - a 09:00:00", "push a b 10:00:00"],
        "10:00:00",
        'b',
        Err("head_updated_at_label_time"),
    );
}

#[test]
fn updates_of_one_second_to_different_tips_are_unordered() {
    check(
        &[
            "branch_creation - a 09:00:00",
            "push a b 09:30:00",
            "force_push b c 09:30:00",
            "force_push c b 09:40:00",
        ],
        "10:00:00",
        'b',
        Ok("09:40:00"),
    );
    check(
        &["push a b 09:30:00", "force_push b c 09:30:00"],
        "10:00:00",
        'c',
        Err("head_updates_unordered"),
    );
}

#[test]
fn no_update_before_the_label_proves_nothing() {
    check(
        &["push a b 10:30:00"],
        "10:00:00",
        'b',
        Err("no_head_update_before_label"),
    );
    check(&[], "10:00:00", 'b', Err("no_head_update_before_label"));
}

#[test]
fn a_history_that_does_not_end_at_the_head_proves_nothing() {
    check(
        &["branch_creation - a 09:00:00"],
        "10:00:00",
        'b',
        Err("head_history_behind"),
    );
}

#[test]
fn an_untimed_update_proves_nothing() {
    check(
        &["branch_creation - a ?", "push a b 09:30:00"],
        "10:00:00",
        'b',
        Err("head_update_time_unknown"),
    );
}

#[test]
fn a_label_while_the_branch_was_deleted_proves_nothing() {
    check(
        &[
            "branch_creation - a 09:00:00",
            "branch_deletion a - 09:30:00",
            "branch_creation - a 10:30:00",
        ],
        "10:00:00",
        'a',
        Err("labeled_other_head"),
    );
}

#[test]
fn an_unread_or_unavailable_history_or_untimed_label_proves_nothing() {
    let head = sha('a');
    let not_read = head_at_label(&HeadHistory::NotRead, Some(at("10:00:00")), &head);
    assert_eq!(not_read.map_err(|e| e.code()), Err("head_history_not_read"));
    let fork = HeadHistory::Unavailable {
        reason: "the head branch is in a fork".to_owned(),
    };
    let unavailable = head_at_label(&fork, Some(at("10:00:00")), &head);
    assert_eq!(
        unavailable.map_err(|e| e.code()),
        Err("head_history_unavailable")
    );
    let untimed = head_at_label(&history(&["push - a 09:00:00"]), None, &head);
    assert_eq!(untimed.map_err(|e| e.code()), Err("label_time_unknown"));
}
