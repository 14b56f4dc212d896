//! Tests for C1.

use super::*;
use crate::approval::Receipt;
use crate::gate::testkit::{BOT, OWNER, Pr, lines, policy, receipt};

const L: &str = "ready-to-merge";

#[track_caller]
fn check(pr: Pr, receipts: &[Receipt], policy: &GatePolicy, expected: &[&str]) {
    let mut all = Receipts::new();
    for r in receipts {
        all.insert(r.clone());
    }
    assert_eq!(lines(&evaluate(&pr.build(), &all, policy)), expected);
}

#[test]
fn label_with_current_receipt_by_the_owner_passes() {
    check(
        Pr::new().applied(L, OWNER, "2026-03-01T11:00:00Z"),
        &[receipt(L, "a", "2026-03-01T11:00:00Z")],
        &policy(),
        &[
            "pass | C1: label 'ready-to-merge' applied by alice and recorded for head a000000; bound by: branch creation of a000000 at 2026-03-01T10:00:00Z is the last head update before the label at 2026-03-01T11:00:00Z (GitHub activity log)",
        ],
    );
}

#[test]
fn missing_label_is_one_failure() {
    check(
        Pr::new().labeled(L, OWNER, "2026-03-01T11:00:00Z"),
        &[receipt(L, "a", "2026-03-01T11:00:00Z")],
        &policy(),
        &["fail | C1: label 'ready-to-merge' not set on PR #7"],
    );
}

#[test]
fn a_label_without_receipt_fails() {
    check(
        Pr::new().applied(L, OWNER, "2026-03-01T11:00:00Z"),
        &[],
        &policy(),
        &[
            "fail | C1: label 'ready-to-merge' has no current-head receipt (head a000000); the bot records one once an allowlisted actor applies it",
        ],
    );
}

#[test]
fn stale_receipt_and_foreign_applier_are_both_listed() {
    check(
        Pr::new().applied(L, "mallory", "2026-03-01T11:00:00Z"),
        &[receipt(L, "1", "2026-03-01T10:00:00Z")],
        &policy(),
        &[
            "fail | C1: label 'ready-to-merge' was applied by mallory, not an allowlisted actor (allowlist: alice)",
            "fail | C1: label 'ready-to-merge' was recorded for head 1000000 but the PR head is now a000000 — stale; re-apply the label",
        ],
    );
}

#[test]
fn the_bot_is_not_an_allowlisted_applier() {
    check(
        Pr::new().applied(L, BOT, "2026-03-01T11:00:00Z"),
        &[receipt(L, "a", "2026-03-01T11:00:00Z")],
        &policy(),
        &[
            "fail | C1: label 'ready-to-merge' was applied by mp-gate[bot], not an allowlisted actor (allowlist: alice)",
        ],
    );
}

#[test]
fn an_empty_allowlist_admits_nobody() {
    let mut open = policy();
    open.allowlist.clear();
    check(
        Pr::new().applied(L, OWNER, "2026-03-01T11:00:00Z"),
        &[receipt(L, "a", "2026-03-01T11:00:00Z")],
        &open,
        &[
            "fail | C1: label 'ready-to-merge' was applied by alice, not an allowlisted actor (allowlist: none)",
        ],
    );
}

#[test]
fn an_undeterminable_or_anonymous_applier_fails_closed() {
    check(
        Pr::new()
            .applied(L, OWNER, "2026-03-01T09:00:00Z")
            .unlabeled(L, OWNER, "2026-03-01T10:00:00Z"),
        &[receipt(L, "a", "2026-03-01T11:00:00Z")],
        &policy(),
        &[
            "fail | C1: label 'ready-to-merge' has no determinable applier: no add with a known time follows its latest removal at 2026-03-01T10:00:00Z",
        ],
    );
    check(
        Pr::new()
            .label(L)
            .labeled_by_nobody(L, "2026-03-01T09:00:00Z"),
        &[receipt(L, "a", "2026-03-01T11:00:00Z")],
        &policy(),
        &["fail | C1: label 'ready-to-merge' was applied by an unknown actor"],
    );
}

#[test]
fn a_current_receipt_does_not_bind_a_head_pushed_after_the_label() {
    // An unsigned receipt edited, or written by an older version, names the new head.
    check(
        Pr::new()
            .applied(L, OWNER, "2026-03-01T11:00:00Z")
            .pushed("c", "2026-03-01T11:30:00Z"),
        &[receipt(L, "c", "2026-03-01T11:31:00Z")],
        &policy(),
        &[
            "fail | C1: label 'ready-to-merge' is not bound to head c000000: it was applied at 2026-03-01T11:00:00Z to head a000000; the head is now c000000; re-apply the label",
        ],
    );
}

#[test]
fn a_relabel_after_the_push_binds_the_new_head() {
    check(
        Pr::new()
            .applied(L, OWNER, "2026-03-01T11:00:00Z")
            .pushed("c", "2026-03-01T11:30:00Z")
            .unlabeled(L, OWNER, "2026-03-01T11:40:00Z")
            .labeled(L, OWNER, "2026-03-01T11:41:00Z"),
        &[receipt(L, "c", "2026-03-01T11:45:00Z")],
        &policy(),
        &[
            "pass | C1: label 'ready-to-merge' applied by alice and recorded for head c000000; bound by: push of c000000 at 2026-03-01T11:30:00Z is the last head update before the label at 2026-03-01T11:41:00Z (GitHub activity log)",
        ],
    );
}
