//! Tests for the verified-label predicate.

use super::*;
use crate::approval::receipt::Receipt;
use crate::context::HeadHistory;
use crate::gate::testkit::{BOT, OWNER, Pr, login, receipt};

const A: &str = "decision:approved-A";
const REVERT: &str = "decision:auto-revert";

/// `expected` is the verdict's `Display`.
#[track_caller]
fn check(pr: Pr, label: &str, receipts: &[Receipt], expected: &str) {
    let mut all = Receipts::new();
    for r in receipts {
        all.insert(r.clone());
    }
    let allowlist = [login(OWNER)];
    let bot = login(BOT);
    let roots = TrustRoots::new(&allowlist, Some(&bot));
    let verdict = verify_label(&pr.build(), label, &all, roots);
    assert_eq!(verdict.to_string(), expected);
    assert_eq!(verdict.is_verified(), expected.starts_with("verified"));
}

#[test]
fn an_approval_the_bot_applied_is_verified_by_its_receipt() {
    check(
        Pr::new().applied(A, BOT, "2026-03-01T11:00:00Z"),
        A,
        &[receipt(A, "a", "2026-03-01T11:00:00Z")],
        "verified: applied by mp-gate[bot], receipt for head a000000",
    );
}

#[test]
fn an_approval_the_owner_applied_needs_the_head_history_as_well() {
    check(
        Pr::new().applied(A, OWNER, "2026-03-01T11:00:00Z"),
        A,
        &[receipt(A, "a", "2026-03-01T11:00:00Z")],
        "verified: applied by alice; branch creation of a000000 at 2026-03-01T10:00:00Z is the last head update before the label at 2026-03-01T11:00:00Z (GitHub activity log)",
    );
}

#[test]
fn a_receipt_never_replaces_the_evidence() {
    // The owner labelled a…; c… was pushed later and a receipt naming c… exists (written by
    // an older version, or an unsigned receipt edited back to look untouched).
    check(
        Pr::new()
            .applied(A, OWNER, "2026-03-01T11:00:00Z")
            .pushed("c", "2026-03-01T11:30:00Z"),
        A,
        &[receipt(A, "c", "2026-03-01T11:40:00Z")],
        "not verified: not bound to the current head: it was applied at 2026-03-01T11:00:00Z to head a000000; the head is now c000000",
    );
}

#[test]
fn commit_dates_are_never_evidence() {
    // The commit claims a date after the label; GitHub says the push came later.
    check(
        Pr::new()
            .applied(REVERT, OWNER, "2026-03-01T11:00:00Z")
            .committed("2026-03-01T09:00:00Z")
            .pushed("c", "2026-03-01T11:05:00Z"),
        REVERT,
        &[],
        "not verified: not bound to the current head: it was applied at 2026-03-01T11:00:00Z to head a000000; the head is now c000000",
    );
    // The commit claims a date far in the future; GitHub says it was pushed before the label.
    check(
        Pr::new()
            .applied(REVERT, OWNER, "2026-03-01T11:00:00Z")
            .committed("2030-01-01T00:00:00Z"),
        REVERT,
        &[],
        "verified: applied by alice; branch creation of a000000 at 2026-03-01T10:00:00Z is the last head update before the label at 2026-03-01T11:00:00Z (GitHub activity log)",
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
fn approvals_need_a_receipt() {
    check(
        Pr::new().applied(A, OWNER, "2026-03-01T11:00:00Z"),
        A,
        &[],
        "not verified: no receipt for the current head a000000",
    );
    check(
        Pr::new().applied(A, BOT, "2026-03-01T11:00:00Z"),
        A,
        &[],
        "not verified: no receipt for the current head a000000",
    );
}

#[test]
fn a_receipt_for_another_head_is_stale() {
    check(
        Pr::new().applied(A, BOT, "2026-03-01T11:00:00Z"),
        A,
        &[receipt(A, "1", "2026-03-01T11:00:00Z")],
        "not verified: receipt names head 1000000 but the PR head is now a000000",
    );
}

#[test]
fn auto_revert_applied_after_the_head_was_pushed_is_verified() {
    check(
        Pr::new().applied(REVERT, OWNER, "2026-03-01T10:02:00Z"),
        REVERT,
        &[],
        "verified: applied by alice; branch creation of a000000 at 2026-03-01T10:00:00Z is the last head update before the label at 2026-03-01T10:02:00Z (GitHub activity log)",
    );
    // One second after the push: inside the settle window, the owner may not have seen it.
    check(
        Pr::new().applied(REVERT, OWNER, "2026-03-01T10:00:01Z"),
        REVERT,
        &[],
        "not verified: not bound to the current head: the head branch was updated at 2026-03-01T10:00:00Z, 1 s before the label at 2026-03-01T10:00:01Z: within the 120 s settle window, the owner may not have seen that head",
    );
}

#[test]
fn a_label_in_the_second_of_the_push_is_not_bound() {
    check(
        Pr::new().applied(REVERT, OWNER, "2026-03-01T10:00:00Z"),
        REVERT,
        &[],
        "not verified: not bound to the current head: the head branch was updated in the same second as the label (2026-03-01T10:00:00Z)",
    );
}

#[test]
fn a_fork_proves_nothing() {
    check(
        Pr::new()
            .applied(REVERT, OWNER, "2026-03-01T11:00:00Z")
            .history(HeadHistory::Unavailable {
                reason: "the head branch is in the fork mallory/widget".to_owned(),
            }),
        REVERT,
        &[],
        "not verified: not bound to the current head: the head branch's update history is unavailable (the head branch is in the fork mallory/widget)",
    );
}

#[test]
fn the_label_needs_a_time_and_a_determinable_applier() {
    check(
        Pr::new().applied(REVERT, OWNER, "whenever"),
        REVERT,
        &[],
        "not verified: applier cannot be determined: GitHub's record of when the label was created and last edited cannot be compared with the labeled event, which has no time, so a rename after it was applied cannot be ruled out",
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

/// Every label whose applier matters — the owner's `decision:approved-A/B` and
/// `decision:auto-revert`, and the bot's inbox approval — is refused when the label was
/// renamed into its name after the event: the event applied another label.
#[test]
fn an_approval_label_renamed_after_it_was_applied_is_not_verified() {
    let renamed = "not verified: applier cannot be determined: the label was edited (renamed, recoloured or re-described) at 2026-03-01T11:30:00Z, not before it was applied at 2026-03-01T11:00:00Z: a rename may have given another label this name; re-apply it";
    for (label, applier) in [
        (A, OWNER),
        ("decision:approved-B", OWNER),
        (REVERT, OWNER),
        (A, BOT),
    ] {
        check(
            Pr::new()
                .applied(label, applier, "2026-03-01T11:00:00Z")
                .label_record(label, "2026-01-01T00:00:00Z", "2026-03-01T11:30:00Z"),
            label,
            &[receipt(label, "a", "2026-03-01T11:05:00Z")],
            renamed,
        );
    }
}
