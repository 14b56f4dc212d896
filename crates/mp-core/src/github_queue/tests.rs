//! Tests for GitHub's merge queue predicate and the tick's step in `github-queue` mode.

use super::*;

fn rules(types: &[&str]) -> Vec<String> {
    types.iter().map(|t| (*t).to_owned()).collect()
}

fn head() -> CommitSha {
    CommitSha::parse(&"ab12cd3".repeat(6)[..40]).expect("a sha")
}

#[test]
fn only_the_merge_queue_rule_means_a_queue() {
    assert!(protected_by_merge_queue(&rules(&[
        "deletion",
        "merge_queue",
        "pull_request"
    ])));
    assert!(!protected_by_merge_queue(&rules(&[
        "deletion",
        "non_fast_forward",
        "pull_request",
        "required_status_checks"
    ])));
    assert!(!protected_by_merge_queue(&[]));
    // Rule types are GitHub's exact words.
    assert!(!protected_by_merge_queue(&rules(&[
        "Merge_Queue",
        "merge-queue"
    ])));
}

#[test]
fn a_queued_branch_would_enqueue_the_passed_head() {
    let step = GitHubQueueStep::decide(&rules(&["merge_queue"]), "main", &head());
    assert_eq!(step.code(), "github_queue_would_enqueue");
    assert_eq!(
        step.to_string(),
        "would enqueue head ab12cd3 in GitHub's merge queue of main; enqueueing is not built yet, so mp writes nothing"
    );
}

#[test]
fn a_branch_without_a_queue_is_neither_merged_nor_enqueued() {
    let step = GitHubQueueStep::decide(&rules(&["pull_request"]), "trunk", &head());
    assert_eq!(step.code(), "github_queue_missing");
    assert_eq!(
        step.to_string(),
        "merge.mode is github-queue but no merge queue protects trunk: mp neither merges nor enqueues; add a ruleset with the merge_queue rule, or change merge.mode"
    );
}
