//! Tests for evidence-not-published.

use serde_json::{Value, json};

use crate::testkit::*;
use crate::validate_document;

#[track_caller]
fn check(doc: Value, expected: &[&str]) {
    assert_eq!(lines(&validate_document(&doc)), expected);
}

#[test]
fn published_evidence_passes() {
    check(evidence(), &[]);
}

#[test]
fn draft_evidence_fails() {
    check(
        with(evidence(), "/state", json!("Draft")),
        &[
            "document 0 /state: evidence-not-published: an Evidence is Published from birth, found Draft",
        ],
    );
}

#[test]
fn other_kinds_may_be_active() {
    check(with(acceptance(), "/state", json!("Active")), &[]);
}
