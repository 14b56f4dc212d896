//! Tests for the classifier-publisher gate.

use super::*;
use crate::gate::testkit::{Pr, lines, policy};

const J: &str = "classifier-judgment";

#[track_caller]
fn check(pr: Pr, policy: &GatePolicy, expected: &[&str]) {
    assert_eq!(lines(&evaluate(&pr.build(), policy)), expected);
}

#[test]
fn no_judgment_passes() {
    check(
        Pr::new().check("build", "success", Some("evil-ci")),
        &policy(),
        &["pass | Publisher: no 'classifier-judgment' check run"],
    );
}

#[test]
fn canonical_judgments_pass() {
    check(
        Pr::new().check(J, "neutral", Some("github-actions")).check(
            J,
            "success",
            Some("github-actions"),
        ),
        &policy(),
        &[
            "pass | Publisher: all 2 'classifier-judgment' check runs come from the canonical publisher",
        ],
    );
}

#[test]
fn every_forged_publisher_blocks_once() {
    check(
        Pr::new()
            .check(J, "success", Some("github-actions"))
            .check(J, "success", Some("evil-ci"))
            .check(J, "success", None)
            .check(J, "failure", Some("evil-ci")),
        &policy(),
        &[
            "fail | Publisher: check run 'classifier-judgment' was published by 'evil-ci', not the canonical publisher 'github-actions'",
            "fail | Publisher: check run 'classifier-judgment' was published by '<missing app>', not the canonical publisher 'github-actions'",
        ],
    );
}

#[test]
fn the_canonical_slug_comes_from_the_policy() {
    let mut custom = policy();
    custom.classifier_publisher_slug = "mp-classifier".to_owned();
    check(
        Pr::new().check(J, "success", Some("github-actions")),
        &custom,
        &[
            "fail | Publisher: check run 'classifier-judgment' was published by 'github-actions', not the canonical publisher 'mp-classifier'",
        ],
    );
}
