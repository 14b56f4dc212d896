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

/// `actor@time`, or `undeterminable: <code>`, through [`label_applier`].
#[track_caller]
fn check_record(pr: Pr, expected: &str) {
    let pr = pr.build();
    let got = match label_applier(&pr, L) {
        Provenance::Established(a) => format!(
            "{}@{}",
            a.actor.as_ref().map_or("?", Login::as_str),
            a.at.map_or("?".to_owned(), |t| t.to_string()),
        ),
        Provenance::Undeterminable(why) => format!("undeterminable: {}", why.code()),
    };
    assert_eq!(got, expected);
}

#[test]
fn a_label_unchanged_since_it_was_applied_keeps_its_applier() {
    check_record(
        Pr::new()
            .applied(L, "alice", "2026-03-10T10:00:00Z")
            .label_record(L, "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z"),
        "alice@2026-03-10T10:00:00Z",
    );
}

#[test]
fn a_label_renamed_after_it_was_applied_has_no_applier() {
    // alice applied `reviewing` at 10:00; the agent renamed it `ready-to-merge` at 10:30,
    // and the timeline's event now shows the new name.
    check_record(
        Pr::new()
            .applied(L, "alice", "2026-03-10T10:00:00Z")
            .label_record(L, "2026-01-01T00:00:00Z", "2026-03-10T10:30:00Z"),
        "undeterminable: label_edited_after_applied",
    );
}

#[test]
fn an_edit_in_the_second_of_the_label_event_is_not_ordered_before_it() {
    check_record(
        Pr::new()
            .applied(L, "alice", "2026-03-10T10:00:00Z")
            .label_record(L, "2026-01-01T00:00:00Z", "2026-03-10T10:00:00Z"),
        "undeterminable: label_edited_after_applied",
    );
}

#[test]
fn a_label_created_in_the_second_it_was_first_applied_keeps_its_applier() {
    // GitHub creates a label the first time it is applied: created and never edited.
    check_record(
        Pr::new()
            .applied(L, "alice", "2026-03-10T10:00:00Z")
            .label_record(L, "2026-03-10T10:00:00Z", "2026-03-10T10:00:00Z"),
        "alice@2026-03-10T10:00:00Z",
    );
}

#[test]
fn a_label_created_after_the_event_has_no_applier() {
    check_record(
        Pr::new()
            .applied(L, "alice", "2026-03-10T10:00:00Z")
            .label_record(L, "2026-03-10T10:30:00Z", "2026-03-10T10:30:00Z"),
        "undeterminable: label_created_after_applied",
    );
}

#[test]
fn an_edit_before_the_label_event_is_what_the_owner_applied() {
    check_record(
        Pr::new()
            .applied(L, "alice", "2026-03-10T10:00:00Z")
            .label_record(L, "2026-01-01T00:00:00Z", "2026-03-10T09:59:59Z"),
        "alice@2026-03-10T10:00:00Z",
    );
}

#[test]
fn an_unknown_record_fails_closed() {
    for records in [
        crate::context::LabelRecords::NotRead,
        crate::context::LabelRecords::Unavailable {
            reason: "no GraphQL".to_owned(),
        },
    ] {
        check_record(
            Pr::new()
                .applied(L, "alice", "2026-03-10T10:00:00Z")
                .label_records(records),
            "undeterminable: label_record_unknown",
        );
    }
}

#[test]
fn a_record_without_times_or_for_another_label_fails_closed() {
    check_record(
        Pr::new()
            .applied(L, "alice", "2026-03-10T10:00:00Z")
            .label_record(L, "garbage", "garbage"),
        "undeterminable: label_record_unknown",
    );
    let mut pr = Pr::new()
        .applied(L, "alice", "2026-03-10T10:00:00Z")
        .label_record("reviewing", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z")
        .build();
    if let crate::context::LabelRecords::Read(records) = &mut pr.label_records {
        records.retain(|r| r.name != L);
    }
    assert!(matches!(
        label_applier(&pr, L),
        Provenance::Undeterminable(Undeterminable::LabelRecordUnknown { .. })
    ));
}

#[test]
fn an_event_without_time_cannot_be_ordered_against_the_record() {
    check_record(
        Pr::new().applied(L, "alice", "garbage"),
        "undeterminable: label_record_unknown",
    );
}

#[test]
fn the_refusal_names_the_rename_and_both_times() {
    let why = Undeterminable::LabelEditedAfterApplied {
        edited_at: Timestamp::parse("2026-03-10T10:30:00Z").expect("a time"),
        applied_at: Timestamp::parse("2026-03-10T10:00:00Z").expect("a time"),
    };
    let text = why.to_string();
    assert!(text.contains("renamed"), "{text}");
    assert!(text.contains("2026-03-10T10:30:00Z"), "{text}");
    assert!(text.contains("2026-03-10T10:00:00Z"), "{text}");
}
