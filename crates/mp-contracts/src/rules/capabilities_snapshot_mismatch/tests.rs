//! Tests for capabilities-snapshot-mismatch.

use serde_json::{Value, json};

use crate::testkit::*;
use crate::validate_set;

#[track_caller]
fn check(docs: Vec<Value>, expected: &[&str]) {
    assert_eq!(lines(&validate_set(&docs)), expected);
}

const SNAPSHOT: &str = "/requestedCapabilitiesSnapshot";

#[test]
fn the_same_set_in_another_order_passes() {
    let mut docs = chain();
    set(&mut docs[1], SNAPSHOT, json!(["write_repo", "read_repo"]));
    check(docs, &[]);
}

#[test]
fn a_missing_capability_fails() {
    let mut docs = chain();
    set(&mut docs[1], SNAPSHOT, json!(["read_repo"]));
    check(
        docs,
        &[
            "document 1 /requestedCapabilitiesSnapshot: capabilities-snapshot-mismatch: write_repo, requested by IC-101, is missing from the snapshot",
        ],
    );
}

#[test]
fn an_extra_capability_fails() {
    let mut docs = chain();
    set(&mut docs[0], "/requestedCapabilities", json!(["read_repo"]));
    check(
        docs,
        &[
            "document 1 /requestedCapabilitiesSnapshot/1: capabilities-snapshot-mismatch: write_repo is not requested by IC-101",
        ],
    );
}
