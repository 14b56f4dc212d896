//! Tests for final-decision-required.

use serde_json::{Value, json};

use crate::testkit::*;
use crate::validate_document;

#[track_caller]
fn check(doc: Value, expected: &[&str]) {
    assert_eq!(lines(&validate_document(&doc)), expected);
}

#[test]
fn a_gate_without_required_approvals_is_decided() {
    check(gate(), &[]);
    check(
        with(
            with(gate(), "/finalDecision", json!("rejected")),
            "/state",
            json!("Active"),
        ),
        &[],
    );
}

#[test]
fn pending_is_only_for_gates_that_wait() {
    check(
        with(
            with(high_chain().remove(3), "/finalDecision", json!("pending")),
            "/state",
            json!("Active"),
        ),
        &[],
    );
}

#[test]
fn a_gate_without_required_approvals_cannot_be_pending() {
    check(
        with(
            with(gate(), "/finalDecision", json!("pending")),
            "/state",
            json!("Active"),
        ),
        &[
            "document 0 /finalDecision: final-decision-required: finalDecision `pending` needs required approvals; with none it must be approved or rejected",
        ],
    );
}

#[test]
fn a_gate_without_required_approvals_cannot_expire() {
    check(
        with(
            with(gate(), "/finalDecision", json!("expired")),
            "/state",
            json!("Active"),
        ),
        &[
            "document 0 /finalDecision: final-decision-required: finalDecision `expired` needs required approvals; with none it must be approved or rejected",
        ],
    );
}
