//! Tests for deadline-required.

use serde_json::{Value, json};

use crate::testkit::*;
use crate::validate_document;

#[track_caller]
fn check(doc: Value, expected: &[&str]) {
    assert_eq!(lines(&validate_document(&doc)), expected);
}

#[test]
fn a_waiting_gate_with_a_deadline_passes() {
    check(high_chain().remove(3), &[]);
}

#[test]
fn a_deadline_without_required_approvals_is_allowed() {
    check(
        with(gate(), "/approvalDeadline", json!("2026-05-12T00:00:00Z")),
        &[],
    );
}

#[test]
fn a_waiting_gate_without_a_deadline_fails() {
    check(
        without(high_chain().remove(3), "/approvalDeadline"),
        &[
            "document 0 /approvalDeadline: deadline-required: approvalDeadline is required because requiredApprovals names [project_lead, security_reviewer]",
        ],
    );
}
