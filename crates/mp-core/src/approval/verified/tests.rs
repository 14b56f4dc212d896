//! Tests for the verified-label predicate.

use super::*;
use crate::approval::receipt::Receipt;
use crate::gate::testkit::{BOT, NOW, OWNER, Pr, good_commit, login, receipt};

const A: &str = "decision:approved-A";
const REVERT: &str = "decision:auto-revert";

/// `expected` is the verdict's `Display`; `now` is [`NOW`] unless given.
#[track_caller]
fn check_at(pr: Pr, label: &str, receipts: &[Receipt], when: &str, expected: &str) {
    let mut all = Receipts::new();
    for r in receipts {
        all.insert(r.clone());
    }
    let allowlist = [login(OWNER)];
    let bot = login(BOT);
    let roots = TrustRoots::new(&allowlist, Some(&bot));
    let now = Timestamp::parse(when).expect("valid now");
    let verdict = verify_label(&pr.build(), label, &all, roots, now);
    assert_eq!(verdict.to_string(), expected);
    assert_eq!(verdict.is_verified(), expected.starts_with("verified"));
}

#[track_caller]
fn check(pr: Pr, label: &str, receipts: &[Receipt], expected: &str) {
    check_at(pr, label, receipts, NOW, expected);
}

#[test]
fn approval_with_a_current_receipt_is_verified() {
    check(
        Pr::new().applied(A, BOT, "2026-03-01T11:00:00Z"),
        A,
        &[receipt(A, "a", "2026-03-01T11:00:00Z")],
        "verified: applied by mp-gate[bot], receipt for head a000000",
    );
}

#[test]
fn receipts_decide_regardless_of_dates() {
    check(
        Pr::new()
            .applied(A, OWNER, "2020-01-01T00:00:00Z")
            .committed("2030-01-01T00:00:00Z"),
        A,
        &[receipt(A, "a", "2020-01-01T00:00:00Z")],
        "verified: applied by alice, receipt for head a000000",
    );
}

#[test]
fn absent_labels_are_not_verified() {
    check(
        Pr::new().labeled(A, OWNER, "2026-03-01T11:00:00Z"),
        A,
        &[receipt(A, "a", "2026-03-01T11:00:00Z")],
        "not verified: not set",
    );
}

#[test]
fn untrusted_appliers_are_refused_even_with_a_receipt() {
    check(
        Pr::new().applied(A, "mallory", "2026-03-01T11:00:00Z"),
        A,
        &[receipt(A, "a", "2026-03-01T11:00:00Z")],
        "not verified: applied by mallory, who is neither allowlisted nor the bot",
    );
}

#[test]
fn approvals_need_a_receipt_and_have_no_time_fallback() {
    check(
        Pr::new().applied(A, OWNER, "2026-03-01T11:00:00Z"),
        A,
        &[],
        "not verified: no receipt for the current head a000000",
    );
}

#[test]
fn a_receipt_for_another_head_is_stale() {
    check(
        Pr::new().applied(A, OWNER, "2026-03-01T11:00:00Z"),
        A,
        &[receipt(A, "1", "2026-03-01T11:00:00Z")],
        "not verified: receipt names head 1000000 but the PR head is now a000000",
    );
    check(
        Pr::new().applied(REVERT, OWNER, "2026-03-01T11:00:00Z"),
        REVERT,
        &[receipt(REVERT, "1", "2026-03-01T11:00:00Z")],
        "not verified: receipt names head 1000000 but the PR head is now a000000",
    );
}

#[test]
fn auto_revert_applied_after_the_head_date_is_verified() {
    check(
        Pr::new().applied(REVERT, OWNER, "2026-03-01T10:00:00Z"),
        REVERT,
        &[],
        "verified: applied by alice at 2026-03-01T10:00:00Z, after the head commit date 2026-03-01T10:00:00Z",
    );
}

#[test]
fn auto_revert_applied_before_the_head_date_is_not() {
    check(
        Pr::new().applied(REVERT, OWNER, "2026-03-01T09:59:59Z"),
        REVERT,
        &[],
        "not verified: applied at 2026-03-01T09:59:59Z, before the head commit date 2026-03-01T10:00:00Z",
    );
}

#[test]
fn head_date_may_be_at_most_ten_minutes_ahead() {
    let pr = || {
        Pr::new()
            .applied(REVERT, OWNER, "2026-03-01T13:00:00Z")
            .committed("2026-03-01T12:10:00Z")
    };
    check(
        pr(),
        REVERT,
        &[],
        "verified: applied by alice at 2026-03-01T13:00:00Z, after the head commit date 2026-03-01T12:10:00Z",
    );
    check_at(
        pr(),
        REVERT,
        &[],
        "2026-03-01T11:59:59Z",
        "not verified: head committer date 2026-03-01T12:10:00Z is more than 10 minutes after now (2026-03-01T11:59:59Z)",
    );
}

#[test]
fn head_date_may_be_at_most_3650_days_old() {
    let pr = || {
        Pr::new()
            .applied(REVERT, OWNER, "2026-03-01T11:00:00Z")
            .committed("2016-03-03T12:00:00Z")
    };
    check(
        pr(),
        REVERT,
        &[],
        "verified: applied by alice at 2026-03-01T11:00:00Z, after the head commit date 2016-03-03T12:00:00Z",
    );
    check_at(
        pr(),
        REVERT,
        &[],
        "2026-03-01T12:00:01Z",
        "not verified: head committer date 2016-03-03T12:00:00Z is more than 3650 days before now (2026-03-01T12:00:01Z)",
    );
}

#[test]
fn head_date_must_be_on_the_head_commit() {
    check(
        Pr::new()
            .applied(REVERT, OWNER, "2026-03-01T11:00:00Z")
            .commits(vec![good_commit("1")]),
        REVERT,
        &[],
        "not verified: head commit a000000 is not among the PR commits",
    );
    check(
        Pr::new()
            .applied(REVERT, OWNER, "2026-03-01T11:00:00Z")
            .committed("1767323045"),
        REVERT,
        &[],
        "not verified: head commit a000000 has no committer date",
    );
}

#[test]
fn time_path_needs_a_label_time_and_a_determinable_applier() {
    check(
        Pr::new().applied(REVERT, OWNER, "whenever"),
        REVERT,
        &[],
        "not verified: the label event has no time",
    );
    check(
        Pr::new()
            .applied(REVERT, OWNER, "2026-03-01T09:00:00Z")
            .unlabeled(REVERT, "bob", "2026-03-01T11:00:00Z"),
        REVERT,
        &[],
        "not verified: applier cannot be determined: no add with a known time follows its latest removal at 2026-03-01T11:00:00Z",
    );
}
