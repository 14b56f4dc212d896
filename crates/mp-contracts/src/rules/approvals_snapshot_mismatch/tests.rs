//! Tests for approvals-snapshot-mismatch.

use serde_json::{Value, json};

use crate::testkit::*;
use crate::validate_set;

#[track_caller]
fn check(docs: Vec<Value>, expected: &[&str]) {
    assert_eq!(lines(&validate_set(&docs)), expected);
}

const SNAPSHOT: &str = "/approvalsSnapshot";

#[test]
fn a_copy_of_the_human_approvals_passes() {
    check(high_chain(), &[]);
}

#[test]
fn times_compare_as_instants() {
    let mut docs = high_chain();
    // The gate wrote 10:00:00+01:00; the snapshot writes the same instant in UTC.
    set(
        &mut docs[4],
        "/approvalsSnapshot/1/decidedAt",
        json!("2026-05-12T09:00:00Z"),
    );
    check(docs, &[]);
}

#[test]
fn a_decision_after_the_end_need_not_be_copied() {
    let mut docs = high_chain();
    let gate_approvals = docs[3]["approvals"].as_array().cloned().unwrap_or_default();
    let mut more = gate_approvals;
    more.push(approval("admin", "root", "2026-05-12T11:00:00Z"));
    set(&mut docs[3], "/approvals", Value::Array(more));
    check(docs, &[]);
}

#[test]
fn an_altered_entry_fails_and_the_original_is_missing() {
    let mut docs = high_chain();
    set(&mut docs[4], "/approvalsSnapshot/1/actorId", json!("sec-2"));
    check(
        docs,
        &[
            "document 4 /approvalsSnapshot: approvals-snapshot-mismatch: PG-201 recorded security_reviewer approved by sec-1 at 2026-05-12T10:00:00+01:00 before this execution ended; the snapshot lacks it",
            "document 4 /approvalsSnapshot/1: approvals-snapshot-mismatch: security_reviewer approved by sec-2 at 2026-05-12T10:00:00+01:00 is not in the approvals of PG-201",
        ],
    );
}

#[test]
fn a_different_reason_is_a_different_entry() {
    let mut docs = high_chain();
    set(
        &mut docs[4],
        "/approvalsSnapshot/0/reason",
        json!("looks fine"),
    );
    check(
        docs,
        &[
            "document 4 /approvalsSnapshot: approvals-snapshot-mismatch: PG-201 recorded project_lead approved by lead-1 at 2026-05-12T09:00:00Z before this execution ended; the snapshot lacks it",
            "document 4 /approvalsSnapshot/0: approvals-snapshot-mismatch: project_lead approved by lead-1 at 2026-05-12T09:00:00Z is not in the approvals of PG-201",
        ],
    );
}

#[test]
fn a_partial_snapshot_fails() {
    let mut docs = high_chain();
    set(
        &mut docs[4],
        SNAPSHOT,
        json!([approval("project_lead", "lead-1", "2026-05-12T09:00:00Z")]),
    );
    check(
        docs,
        &[
            "document 4 /approvalsSnapshot: approvals-snapshot-mismatch: PG-201 recorded security_reviewer approved by sec-1 at 2026-05-12T10:00:00+01:00 before this execution ended; the snapshot lacks it",
        ],
    );
}

#[test]
fn a_snapshot_without_a_gate_fails() {
    let mut docs = high_chain();
    docs.remove(3);
    check(
        docs,
        &[
            "document 3 /approvalsSnapshot: approvals-snapshot-mismatch: no PublishGate of TS-201 in the set records these approvals",
        ],
    );
}
