//! Tests for required-approval-missing.

use serde_json::{Value, json};

use crate::testkit::*;
use crate::validate_document;

#[track_caller]
fn check(doc: Value, expected: &[&str]) {
    assert_eq!(lines(&validate_document(&doc)), expected);
}

fn high_gate() -> Value {
    high_chain().remove(3)
}

#[test]
fn every_required_role_approved_passes() {
    check(high_gate(), &[]);
}

#[test]
fn a_pending_gate_may_lack_approvals() {
    check(
        with(
            with(
                with(high_gate(), "/approvals", json!([])),
                "/finalDecision",
                json!("pending"),
            ),
            "/state",
            json!("Active"),
        ),
        &[],
    );
}

#[test]
fn an_approved_gate_missing_a_role_fails() {
    check(
        with(
            high_gate(),
            "/approvals",
            json!([approval("project_lead", "lead-1", "2026-05-12T09:00:00Z")]),
        ),
        &[
            "document 0 /approvals: required-approval-missing: finalDecision is approved but required role security_reviewer has not approved",
        ],
    );
}

#[test]
fn a_rejection_does_not_count() {
    let mut doc = high_gate();
    set(&mut doc, "/approvals/1/decision", json!("rejected"));
    check(
        doc,
        &[
            "document 0 /approvals: required-approval-missing: finalDecision is approved but required role security_reviewer has not approved",
        ],
    );
}

#[test]
fn admin_does_not_stand_in_for_another_role() {
    let mut doc = high_gate();
    set(&mut doc, "/approvals/1/role", json!("admin"));
    check(
        doc,
        &[
            "document 0 /approvals: required-approval-missing: finalDecision is approved but required role security_reviewer has not approved",
        ],
    );
}

#[test]
fn one_error_per_missing_role() {
    check(
        with(high_gate(), "/approvals", json!([])),
        &[
            "document 0 /approvals: required-approval-missing: finalDecision is approved but required role project_lead has not approved",
            "document 0 /approvals: required-approval-missing: finalDecision is approved but required role security_reviewer has not approved",
        ],
    );
}
