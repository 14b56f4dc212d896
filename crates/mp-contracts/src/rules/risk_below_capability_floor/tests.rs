//! Tests for risk-below-capability-floor.

use serde_json::{Value, json};

use crate::testkit::*;
use crate::validate_set;

#[track_caller]
fn check(docs: Vec<Value>, expected: &[&str]) {
    assert_eq!(lines(&validate_set(&docs)), expected);
}

#[test]
fn risk_at_or_above_the_floor_passes() {
    check(chain(), &[]);
    check(high_chain(), &[]);
    let mut docs = high_chain();
    set(&mut docs[3], "/riskLevel", json!("critical"));
    set(
        &mut docs[3],
        "/requiredApprovals",
        json!(["project_lead", "security_reviewer", "release_manager"]),
    );
    set(&mut docs[3], "/finalDecision", json!("pending"));
    set(&mut docs[3], "/state", json!("Active"));
    check(docs, &[]);
}

#[test]
fn writing_is_at_least_medium() {
    let mut docs = chain();
    set(&mut docs[3], "/riskLevel", json!("low"));
    check(
        docs,
        &[
            "document 3 /riskLevel: risk-below-capability-floor: riskLevel low is below medium, the floor for [write_repo] of TS-101",
        ],
    );
}

#[test]
fn installing_dependencies_is_at_least_high() {
    let mut docs = high_chain();
    set(&mut docs[3], "/riskLevel", json!("medium"));
    set(&mut docs[3], "/requiredApprovals", json!([]));
    check(
        docs,
        &[
            "document 3 /riskLevel: risk-below-capability-floor: riskLevel medium is below high, the floor for [install_deps] of TS-201",
        ],
    );
}
