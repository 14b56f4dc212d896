//! Tests for duplicate-contract.

use serde_json::{Value, json};

use crate::testkit::*;
use crate::validate_set;

#[track_caller]
fn check(docs: Vec<Value>, expected: &[&str]) {
    assert_eq!(lines(&validate_set(&docs)), expected);
}

#[test]
fn two_versions_of_one_contract_pass() {
    let mut docs = chain();
    docs.push(with(
        with(intent(), "/version", json!(2)),
        "/state",
        json!("Published"),
    ));
    check(docs, &[]);
}

#[test]
fn references_resolve_to_the_highest_version() {
    let mut docs = chain();
    // Version 2 of IC-101 asks for less; the TaskSeed's snapshot is now checked against it.
    docs.push(with(
        with(intent(), "/version", json!(2)),
        "/requestedCapabilities",
        json!(["read_repo"]),
    ));
    check(
        docs,
        &[
            "document 1 /requestedCapabilitiesSnapshot/1: capabilities-snapshot-mismatch: write_repo is not requested by IC-101",
        ],
    );
}

#[test]
fn the_same_version_twice_fails() {
    let mut docs = chain();
    docs.push(with(intent(), "/version", json!(1.0)));
    check(
        docs,
        &["document 5 /version: duplicate-contract: IC-101 version 1 also appears as document 0"],
    );
}
