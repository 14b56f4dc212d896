//! Tests for approvals-snapshot-required.

use serde_json::{Value, json};

use crate::testkit::*;
use crate::validate_set;

#[track_caller]
fn check(docs: Vec<Value>, expected: &[&str]) {
    assert_eq!(lines(&validate_set(&docs)), expected);
}

#[test]
fn a_manual_review_with_a_snapshot_passes() {
    check(high_chain(), &[]);
}

#[test]
fn a_manual_review_without_a_snapshot_fails() {
    let mut docs = high_chain();
    remove(&mut docs[4], "/approvalsSnapshot");
    check(
        docs,
        &[
            "document 4 /approvalsSnapshot: approvals-snapshot-required: policyVerdict manual_review_required needs an approvalsSnapshot",
        ],
    );
}

#[test]
fn a_human_decision_before_the_end_calls_for_a_snapshot() {
    let mut docs = high_chain();
    remove(&mut docs[4], "/approvalsSnapshot");
    set(&mut docs[4], "/policyVerdict", json!("approved"));
    check(
        docs,
        &[
            "document 4 /approvalsSnapshot: approvals-snapshot-required: PG-201 records a human decision (project_lead approved by lead-1 at 2026-05-12T09:00:00Z) before this execution ended; approvalsSnapshot is required",
        ],
    );
}

#[test]
fn an_execution_that_ended_before_any_human_decision_needs_none() {
    let mut docs = high_chain();
    remove(&mut docs[4], "/approvalsSnapshot");
    set(&mut docs[4], "/policyVerdict", json!("approved"));
    set(&mut docs[4], "/startTime", json!("2026-05-12T07:00:00Z"));
    set(&mut docs[4], "/endTime", json!("2026-05-12T08:59:59Z"));
    check(docs, &[]);
}

#[test]
fn policy_engine_approvals_are_not_human() {
    check(chain(), &[]);
}
