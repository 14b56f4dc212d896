//! Tests for approval-matrix-mismatch.

use serde_json::{Value, json};

use crate::testkit::*;
use crate::validate_document;

#[track_caller]
fn check(doc: Value, expected: &[&str]) {
    assert_eq!(lines(&validate_document(&doc)), expected);
}

#[test]
fn matrix_rows_pass_in_any_order() {
    check(gate(), &[]);
    check(with(gate(), "/riskLevel", json!("low")), &[]);
    check(
        with(
            high_chain().remove(3),
            "/requiredApprovals",
            json!(["security_reviewer", "project_lead"]),
        ),
        &[],
    );
}

#[test]
fn a_high_gate_with_too_few_roles_fails() {
    check(
        with(
            high_chain().remove(3),
            "/requiredApprovals",
            json!(["project_lead"]),
        ),
        &[
            "document 0 /requiredApprovals: approval-matrix-mismatch: riskLevel high requires [project_lead, security_reviewer], found [project_lead]",
        ],
    );
}

#[test]
fn a_high_gate_with_no_roles_fails() {
    let doc = with(
        with(gate(), "/riskLevel", json!("high")),
        "/requiredApprovals",
        json!([]),
    );
    check(
        doc,
        &[
            "document 0 /requiredApprovals: approval-matrix-mismatch: riskLevel high requires [project_lead, security_reviewer], found []",
        ],
    );
}

#[test]
fn a_critical_gate_needs_the_release_manager_too() {
    check(
        with(high_chain().remove(3), "/riskLevel", json!("critical")),
        &[
            "document 0 /requiredApprovals: approval-matrix-mismatch: riskLevel critical requires [project_lead, security_reviewer, release_manager], found [project_lead, security_reviewer]",
        ],
    );
}
