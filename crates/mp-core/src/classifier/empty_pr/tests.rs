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
fn a_list_at_github_s_cap_is_d() {
    let files: Vec<FileChange> = (0..FILE_LISTING_CAP)
        .map(|i| modified(&format!("docs/page-{i}.md")))
        .collect();
    check(
        files.clone(),
        "classifier_empty_pr voted D: GitHub lists 3000 changed files, its cap: the files past it cannot be read or classified",
    );
    check(
        files[1..].to_vec(),
        "classifier_empty_pr voted A: the pull request changes 2999 files",
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
