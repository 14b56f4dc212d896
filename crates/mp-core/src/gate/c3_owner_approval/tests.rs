//! Tests for C3.

use super::*;
use crate::approval::Receipt;
use crate::gate::testkit::{BOT, OWNER, Pr, lines, policy, receipt};

const A: &str = "decision:approved-A";
const B: &str = "decision:approved-B";
const C: &str = "decision:approved-C";

#[track_caller]
fn check(pr: Pr, receipts: &[Receipt], quadrant: Option<Quadrant>, expected: &[&str]) {
    let mut all = Receipts::new();
    for r in receipts {
        all.insert(r.clone());
    }
    let results = evaluate(&pr.build(), &all, quadrant, &policy());
    assert_eq!(lines(&results), expected);
}

#[test]
fn quadrants_a_b_and_c_need_no_approval() {
    for (q, line) in [
        (Quadrant::A, "pass | C3: quadrant A needs no owner approval"),
        (Quadrant::B, "pass | C3: quadrant B needs no owner approval"),
        (Quadrant::C, "pass | C3: quadrant C needs no owner approval"),
    ] {
        check(Pr::new(), &[], Some(q), &[line]);
    }
}

#[test]
fn quadrant_d_without_approval_fails() {
    check(
        Pr::new(),
        &[],
        Some(Quadrant::D),
        &["fail | C3: owner approval missing (quadrant=D)"],
    );
}

#[test]
fn unknown_quadrant_needs_approval() {
    check(
        Pr::new(),
        &[],
        None,
        &["fail | C3: owner approval missing (quadrant=unknown)"],
    );
}

#[test]
fn inbox_approval_by_the_bot_with_receipt_passes() {
    check(
        Pr::new().applied(A, BOT, "2026-03-01T11:00:00Z"),
        &[receipt(A, "a", "2026-03-01T11:00:00Z")],
        Some(Quadrant::D),
        &[
            "pass | C3: owner approval 'decision:approved-A' (applied by mp-gate[bot], receipt for head a000000)",
        ],
    );
}

#[test]
fn owner_hand_applied_b_with_receipt_passes() {
    check(
        Pr::new().applied(B, OWNER, "2026-03-01T11:00:00Z"),
        &[receipt(B, "a", "2026-03-01T11:00:00Z")],
        Some(Quadrant::D),
        &[
            "pass | C3: owner approval 'decision:approved-B' (applied by alice; branch creation of a000000 at 2026-03-01T10:00:00Z is the last head update before the label at 2026-03-01T11:00:00Z (GitHub activity log))",
        ],
    );
}

#[test]
fn approved_c_never_opens_c3() {
    check(
        Pr::new().applied(C, OWNER, "2026-03-01T11:00:00Z"),
        &[receipt(C, "a", "2026-03-01T11:00:00Z")],
        Some(Quadrant::D),
        &["fail | C3: owner approval missing (quadrant=D)"],
    );
}

#[test]
fn every_unhonoured_approval_is_named() {
    check(
        Pr::new().applied(A, OWNER, "2026-03-01T11:00:00Z").applied(
            B,
            "mallory",
            "2026-03-01T11:00:00Z",
        ),
        &[
            receipt(A, "1", "2026-03-01T10:00:00Z"),
            receipt(B, "a", "2026-03-01T11:00:00Z"),
        ],
        Some(Quadrant::D),
        &[
            "fail | C3: owner approval missing (quadrant=D); not honoured: 'decision:approved-A' receipt names head 1000000 but the PR head is now a000000, 'decision:approved-B' applied by mallory, who is neither allowlisted nor the bot",
        ],
    );
}

#[test]
fn an_unverified_a_does_not_hide_a_verified_b() {
    check(
        Pr::new().applied(A, OWNER, "2026-03-01T11:00:00Z").applied(
            B,
            OWNER,
            "2026-03-01T11:00:00Z",
        ),
        &[receipt(B, "a", "2026-03-01T11:00:00Z")],
        Some(Quadrant::D),
        &[
            "pass | C3: owner approval 'decision:approved-B' (applied by alice; branch creation of a000000 at 2026-03-01T10:00:00Z is the last head update before the label at 2026-03-01T11:00:00Z (GitHub activity log))",
        ],
    );
}
