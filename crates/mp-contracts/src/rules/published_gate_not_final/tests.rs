//! Tests for published-gate-not-final.

use serde_json::{Value, json};

use crate::testkit::*;
use crate::validate_document;

#[track_caller]
fn check(doc: Value, expected: &[&str]) {
    assert_eq!(lines(&validate_document(&doc)), expected);
}

fn pending_high_gate() -> Value {
    with(
        with(high_chain().remove(3), "/finalDecision", json!("pending")),
        "/approvals",
        json!([]),
    )
}

#[test]
fn an_approved_gate_may_be_published() {
    check(gate(), &[]);
    check(high_chain().remove(3), &[]);
}

#[test]
fn a_pending_gate_may_be_active() {
    check(with(pending_high_gate(), "/state", json!("Active")), &[]);
}

#[test]
fn a_pending_gate_cannot_be_published() {
    check(
        pending_high_gate(),
        &[
            "document 0 /state: published-gate-not-final: a Published gate needs finalDecision approved, found pending",
        ],
    );
}

#[test]
fn a_rejected_gate_cannot_be_published() {
    check(
        with(gate(), "/finalDecision", json!("rejected")),
        &[
            "document 0 /state: published-gate-not-final: a Published gate needs finalDecision approved, found rejected",
        ],
    );
}
