//! Tests for auto-activate-requires-approvals.

use serde_json::{Value, json};

use crate::testkit::*;
use crate::validate_document;

#[track_caller]
fn check(doc: Value, expected: &[&str]) {
    assert_eq!(lines(&validate_document(&doc)), expected);
}

#[test]
fn a_policy_that_names_approvers_passes() {
    check(high_chain().remove(1), &[]);
    check(high_chain().remove(2), &[]);
}

#[test]
fn a_task_seed_that_waits_for_nobody_fails() {
    check(
        with(task_seed(), "/generationPolicy/auto_activate", json!(false)),
        &[
            "document 0 /generationPolicy/requiredActivationApprovals: auto-activate-requires-approvals: requiredActivationApprovals is empty while auto_activate is false; name at least one role",
        ],
    );
}

#[test]
fn an_acceptance_that_waits_for_nobody_fails() {
    check(
        with(
            acceptance(),
            "/generationPolicy/auto_activate",
            json!(false),
        ),
        &[
            "document 0 /generationPolicy/requiredActivationApprovals: auto-activate-requires-approvals: requiredActivationApprovals is empty while auto_activate is false; name at least one role",
        ],
    );
}
