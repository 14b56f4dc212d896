//! Tests for the auto-revert rule.

use super::*;
use crate::classifier::test_support::{login, sha};

#[track_caller]
fn check(label: AutoRevertLabel, expected_code: &str, expected: &str) {
    assert_eq!(label.code(), expected_code);
    assert_eq!(label.vote().to_string(), expected);
}

fn at(text: &str) -> crate::ids::Timestamp {
    crate::ids::Timestamp::parse(text).expect("valid timestamp")
}

#[test]
fn absent_label_is_a() {
    check(
        AutoRevertLabel::Absent,
        "auto_revert_absent",
        "classifier_auto_revert voted A: no decision:auto-revert label",
    );
}

#[test]
fn unverified_label_is_a_with_the_reason() {
    check(
        AutoRevertLabel::Unverified {
            reason: "applied by mallory, who is not allowlisted".to_owned(),
        },
        "auto_revert_unverified",
        "classifier_auto_revert voted A: decision:auto-revert is present but not verified: applied by mallory, who is not allowlisted",
    );
}

#[test]
fn label_verified_by_receipt_is_c() {
    check(
        AutoRevertLabel::Verified {
            applier: login("owner"),
            proof: AutoRevertProof::Receipt { head: sha(0xab) },
        },
        "auto_revert_verified",
        "classifier_auto_revert voted C: decision:auto-revert verified (applied by owner, receipt for head abababa): a recovery revert",
    );
}

#[test]
fn label_verified_by_the_head_history_is_c() {
    check(
        AutoRevertLabel::Verified {
            applier: login("mp-gate[bot]"),
            proof: AutoRevertProof::HeadAtLabel(crate::approval::HeadAtLabel {
                head: sha(0xab),
                labeled_head: sha(0xab),
                carried: Vec::new(),
                labeled_at: at("2026-03-01T10:05:00Z"),
                updated_at: at("2026-03-01T10:00:00Z"),
                kind: crate::context::RefUpdateKind::BranchCreation,
            }),
        },
        "auto_revert_verified",
        "classifier_auto_revert voted C: decision:auto-revert verified (applied by mp-gate[bot], branch creation of abababa at 2026-03-01T10:00:00Z is the last head update before the label at 2026-03-01T10:05:00Z (GitHub activity log)): a recovery revert",
    );
}
