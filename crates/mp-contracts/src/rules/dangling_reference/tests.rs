//! Tests for dangling-reference.

use serde_json::{Value, json};

use crate::testkit::*;
use crate::validate_set;

#[track_caller]
fn check(docs: Vec<Value>, expected: &[&str]) {
    assert_eq!(lines(&validate_set(&docs)), expected);
}

#[test]
fn a_closed_set_passes() {
    check(chain(), &[]);
    check(vec![intent()], &[]);
}

#[test]
fn every_kind_of_reference_is_checked() {
    check(
        vec![
            task_seed(),
            acceptance(),
            gate(),
            with(evidence(), "/taskSeedId", json!("TS-999")),
        ],
        &[
            "document 0 /intentId: dangling-reference: no IntentContract IC-101 in the set",
            "document 3 /taskSeedId: dangling-reference: no TaskSeed TS-999 in the set",
        ],
    );
    check(
        vec![gate()],
        &["document 0 /entityId: dangling-reference: no Acceptance AC-101 in the set"],
    );
    check(
        vec![acceptance()],
        &["document 0 /taskSeedId: dangling-reference: no TaskSeed TS-101 in the set"],
    );
}

#[test]
fn a_malformed_reference_is_only_a_pattern_error() {
    check(
        vec![with(acceptance(), "/taskSeedId", json!("IC-101"))],
        &["document 0 /taskSeedId: pattern: `IC-101` does not match ^TS-[0-9]{3,}$"],
    );
}
