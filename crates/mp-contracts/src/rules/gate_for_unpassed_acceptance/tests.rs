//! Tests for gate-for-unpassed-acceptance.

use serde_json::{Value, json};

use crate::testkit::*;
use crate::validate_set;

#[track_caller]
fn check(docs: Vec<Value>, expected: &[&str]) {
    assert_eq!(lines(&validate_set(&docs)), expected);
}

#[test]
fn a_gate_for_a_passed_acceptance_passes() {
    check(chain(), &[]);
}

#[test]
fn a_gate_for_a_failed_acceptance_fails() {
    let mut docs = chain();
    set(&mut docs[2], "/status", json!("failed"));
    check(
        docs,
        &[
            "document 3 /entityId: gate-for-unpassed-acceptance: AC-101 has status failed; only a passed Acceptance gets a PublishGate",
        ],
    );
}

#[test]
fn a_failed_acceptance_without_a_gate_passes() {
    let mut docs = chain();
    set(&mut docs[2], "/status", json!("failed"));
    docs.remove(3);
    check(docs, &[]);
}
