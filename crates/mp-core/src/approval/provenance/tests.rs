//! Tests for the effective applier of a label after removals.

use super::*;
use crate::gate::testkit::Pr;

const L: &str = "ready-to-merge";

/// `actor@time #index`, or `undeterminable: <code>`.
#[track_caller]
fn check(pr: Pr, expected: &str) {
    let pr = pr.build();
    let got = match effective_applier(&pr.label_events, L) {
        Provenance::Established(a) => format!(
            "{}@{} #{}",
            a.actor.as_ref().map_or("?", Login::as_str),
            a.at.map_or("?".to_owned(), |t| t.to_string()),
            a.event_index
        ),
        Provenance::Undeterminable(why) => format!("undeterminable: {}", why.code()),
    };
    assert_eq!(got, expected);
}

#[test]
fn never_removed_takes_the_latest_add_in_timeline_order() {
    check(
        Pr::new()
            .labeled(L, "alice", "2026-03-01T09:00:00Z")
            .labeled(L, "bob", "2026-03-01T08:00:00Z"),
        "bob@2026-03-01T08:00:00Z #1",
    );
}

#[test]
fn never_removed_keeps_an_add_without_time() {
    check(Pr::new().labeled(L, "bob", "garbage"), "bob@? #0");
}

#[test]
fn never_labeled_is_undeterminable() {
    check(
        Pr::new().labeled("other", "alice", "2026-03-01T09:00:00Z"),
        "undeterminable: never_labeled",
    );
}

#[test]
fn re_add_after_removal_establishes() {
    check(
        Pr::new()
            .labeled(L, "alice", "2026-03-01T08:00:00Z")
            .unlabeled(L, "alice", "2026-03-01T09:00:00Z")
            .labeled(L, "mallory", "2026-03-01T10:00:00Z"),
        "mallory@2026-03-01T10:00:00Z #2",
    );
}

#[test]
fn adds_before_the_latest_removal_do_not_count() {
    check(
        Pr::new()
            .labeled(L, "alice", "2026-03-01T08:00:00Z")
            .unlabeled(L, "bob", "2026-03-01T09:00:00Z"),
        "undeterminable: no_add_after_removal",
    );
}

#[test]
fn the_latest_removal_counts_not_the_last_in_order() {
    check(
        Pr::new()
            .unlabeled(L, "bob", "2026-03-01T11:00:00Z")
            .labeled(L, "alice", "2026-03-01T10:00:00Z")
            .unlabeled(L, "bob", "2026-03-01T09:00:00Z"),
        "undeterminable: no_add_after_removal",
    );
}

#[test]
fn an_add_at_the_removal_second_counts() {
    check(
        Pr::new()
            .unlabeled(L, "bob", "2026-03-01T09:00:00Z")
            .labeled(L, "alice", "2026-03-01T09:00:00Z"),
        "alice@2026-03-01T09:00:00Z #1",
    );
}

#[test]
fn after_removal_the_most_recent_time_wins_over_timeline_order() {
    check(
        Pr::new()
            .unlabeled(L, "bob", "2026-03-01T09:00:00Z")
            .labeled(L, "alice", "2026-03-01T11:00:00Z")
            .labeled(L, "mallory", "2026-03-01T10:00:00Z"),
        "alice@2026-03-01T11:00:00Z #1",
    );
}

#[test]
fn equal_times_go_to_the_later_event() {
    check(
        Pr::new()
            .unlabeled(L, "bob", "2026-03-01T09:00:00Z")
            .labeled(L, "alice", "2026-03-01T10:00:00Z")
            .labeled(L, "mallory", "2026-03-01T10:00:00Z"),
        "mallory@2026-03-01T10:00:00Z #2",
    );
}

#[test]
fn adds_without_time_after_removal_are_ignored() {
    check(
        Pr::new()
            .unlabeled(L, "bob", "2026-03-01T09:00:00Z")
            .labeled(L, "alice", "2026-03-01T10:00:00Z")
            .labeled(L, "mallory", "not a time"),
        "alice@2026-03-01T10:00:00Z #1",
    );
}

#[test]
fn a_removal_without_time_fails_closed() {
    check(
        Pr::new()
            .labeled(L, "alice", "2026-03-01T08:00:00Z")
            .unlabeled(L, "bob", "??")
            .labeled(L, "alice", "2026-03-01T10:00:00Z"),
        "undeterminable: removal_time_unknown",
    );
}

#[test]
fn other_labels_do_not_interfere() {
    check(
        Pr::new()
            .labeled(L, "alice", "2026-03-01T08:00:00Z")
            .unlabeled("decision:approved-A", "bob", "2026-03-01T09:00:00Z"),
        "alice@2026-03-01T08:00:00Z #0",
    );
}
