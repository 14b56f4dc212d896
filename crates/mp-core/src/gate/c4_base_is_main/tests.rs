//! Tests for C4.

use super::*;
use crate::config::RepoMergeMode;
use crate::gate::testkit::{Pr, lines, sha};

#[track_caller]
fn check(base: &str, main: &str, expected: &str) {
    let pr = Pr::new().base(base).build();
    assert_eq!(
        lines(&evaluate(&pr, &sha(main), RepoMergeMode::Direct)),
        [expected]
    );
}

#[test]
fn base_equal_to_main_head_passes() {
    check(
        "def5678",
        "def5678",
        "pass | C4: PR base def5678 is the main HEAD",
    );
}

#[test]
fn stale_base_fails_naming_both_shas() {
    check(
        "abc1234",
        "def5678",
        "fail | C4: PR base abc1234 is stale (main HEAD is def5678). Rebase the PR.",
    );
}

#[test]
fn a_sha_differing_only_past_the_short_form_is_stale() {
    check(
        "abc12340000000000001",
        "abc1234",
        "fail | C4: PR base abc1234 is stale (main HEAD is abc1234). Rebase the PR.",
    );
}

#[test]
fn in_queue_mode_a_stale_base_passes_naming_both_shas() {
    let pr = Pr::new().base("abc1234").build();
    assert_eq!(
        lines(&evaluate(&pr, &sha("def5678"), RepoMergeMode::Queue)),
        [
            "pass | C4: PR base abc1234 is not the main HEAD def5678; queue mode: the staging build tests it merged onto the HEAD"
        ]
    );
    let current = Pr::new().base("def5678").build();
    assert_eq!(
        lines(&evaluate(&current, &sha("def5678"), RepoMergeMode::Queue)),
        ["pass | C4: PR base def5678 is the main HEAD"]
    );
}

#[test]
fn in_github_queue_mode_a_stale_base_passes_as_githubs_queue_tests_it() {
    let pr = Pr::new().base("abc1234").build();
    let results = evaluate(&pr, &sha("def5678"), RepoMergeMode::GitHubQueue);
    assert_eq!(
        lines(&results),
        [
            "pass | C4: PR base abc1234 is not the main HEAD def5678; github-queue mode: GitHub's merge queue tests it merged onto the HEAD"
        ]
    );
    assert_eq!(results[0].evidence.code(), "base_tested_in_github_queue");
}
