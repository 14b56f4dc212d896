//! Tests for the empty-PR rule.

use super::*;
use crate::classifier::test_support::{modified, pr, removed};
use crate::context::FileChange;

#[track_caller]
fn check(files: Vec<FileChange>, expected: &str) {
    let finding = evaluate(&pr(files));
    assert_eq!(finding.vote().to_string(), expected, "{finding:?}");
}

#[test]
fn no_files_is_d() {
    check(
        Vec::new(),
        "classifier_empty_pr voted D: the pull request changes no file",
    );
}

#[test]
fn one_file_is_a() {
    check(
        vec![modified("README.md")],
        "classifier_empty_pr voted A: the pull request changes 1 file",
    );
}

#[test]
fn removals_count_as_changes() {
    check(
        vec![removed("a"), removed("b")],
        "classifier_empty_pr voted A: the pull request changes 2 files",
    );
}

#[test]
fn codes_are_stable() {
    assert_eq!(
        [
            evaluate(&pr(Vec::new())).code(),
            evaluate(&pr(vec![modified("a")])).code()
        ],
        ["pr_empty", "pr_has_files"]
    );
}
