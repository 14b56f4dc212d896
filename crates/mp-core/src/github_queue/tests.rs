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
        "would enqueue head ab12cd3 in GitHub's merge queue of main"
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

fn other() -> CommitSha {
    CommitSha::parse(&"9f8e7d6".repeat(6)[..40]).expect("a sha")
}

#[test]
fn a_queued_entry_leaves_when_its_head_is_not_the_judged_one_or_the_gate_fails() {
    // The agent pushed and enqueued its new head: whatever the gate says, it leaves.
    let moved = dequeue_reason(&other(), &head(), None);
    assert_eq!(
        moved.as_deref(),
        Some("the entry's head is not the pull request's head ab12cd3 that the gate judged")
    );
    // The gate stopped passing (label removed, inbox reject, owner review): it leaves.
    assert_eq!(
        dequeue_reason(&head(), &head(), Some("C1: no ready-to-merge label")).as_deref(),
        Some("C1: no ready-to-merge label")
    );
    // Approved head, passing gate: it stays.
    assert_eq!(dequeue_reason(&head(), &head(), None), None);
}

#[test]
fn every_queue_outcome_has_its_code_and_line() {
    let dequeued = GitHubQueueOutcome::Dequeued {
        entry_head: other(),
        enqueuer: Login::parse("agent-a").ok(),
        why: "C1: no ready-to-merge label".to_owned(),
    };
    assert_eq!(dequeued.code(), "github_queue_dequeued");
    assert_eq!(
        dequeued.to_string(),
        "dequeued from GitHub's merge queue (entry at head 9f8e7d6, enqueued by agent-a): C1: no ready-to-merge label"
    );
    let enqueued = GitHubQueueOutcome::Enqueued {
        branch: "main".to_owned(),
        head: head(),
        position: 2,
    };
    assert_eq!(enqueued.code(), "github_queue_enqueued");
    assert_eq!(
        enqueued.to_string(),
        "enqueued head ab12cd3 in GitHub's merge queue of main at position 2"
    );
    assert_eq!(
        GitHubQueueOutcome::HeadMoved { head: head() }.code(),
        "github_queue_head_moved"
    );
}

#[test]
fn a_merge_group_names_its_pull_request_only_under_its_base() {
    use crate::ids::PrNumber;
    let sha = "929f8209a8f2c0a2de6a0f0b3f3c7b7d5f0d1e2f";
    assert_eq!(
        merge_group_pull(&format!("gh-readonly-queue/main/pr-104-{sha}"), "main"),
        Some(PrNumber::new(104))
    );
    assert_eq!(
        merge_group_pull(
            &format!("refs/heads/gh-readonly-queue/release/1.x/pr-7-{sha}"),
            "release/1.x"
        ),
        Some(PrNumber::new(7))
    );
    // Another base's group, an agent's look-alike branch, a name without a number.
    assert_eq!(
        merge_group_pull(&format!("gh-readonly-queue/dev/pr-104-{sha}"), "main"),
        None
    );
    assert_eq!(
        merge_group_pull("agent/gh-readonly-queue/main/pr-1-x", "main"),
        None
    );
    assert_eq!(
        merge_group_pull("gh-readonly-queue/main/pr--x", "main"),
        None
    );
    assert_eq!(
        merge_group_pull("gh-readonly-queue/main/pr-+1-x", "main"),
        None
    );
}

#[test]
fn a_group_passes_only_when_every_member_passes() {
    use crate::ids::PrNumber;
    let pass = |n| GroupMember::Passes {
        number: PrNumber::new(n),
        head: head(),
    };
    let all = judge_group(&[pass(1), pass(2)]).expect("judged");
    assert!(all.passes, "{all:?}");
    assert!(all.summary.contains("#1") && all.summary.contains("#2"));

    let refused = judge_group(&[
        pass(1),
        GroupMember::Refused {
            number: PrNumber::new(2),
            why: "Quadrant D waits for the owner's decision".to_owned(),
        },
    ])
    .expect("judged");
    assert!(!refused.passes);
    assert_eq!(refused.title, "the gate refuses #2");
    assert!(
        refused.summary.contains("Quadrant D waits"),
        "{}",
        refused.summary
    );

    // One member not judged: nothing is published.
    assert_eq!(
        judge_group(&[
            pass(1),
            GroupMember::Unjudged {
                number: PrNumber::new(2)
            }
        ]),
        None
    );
    assert_eq!(judge_group(&[]), None);
}

#[test]
fn only_a_removal_by_the_queue_itself_at_the_same_head_holds() {
    let bot = Login::parse("mp-gate[bot]").expect("a login");
    let queue = Login::parse("github-merge-queue[bot]").expect("a login");
    let person = Login::parse("alice").expect("a login");
    let other = CommitSha::parse(&"ef".repeat(20)).expect("a sha");
    assert!(held_after_removal(
        Some(&head()),
        Some(&queue),
        &head(),
        &bot
    ));
    assert!(held_after_removal(Some(&head()), None, &head(), &bot));
    // mp's own dequeue, a person's, another head, no head said: enqueued again.
    assert!(!held_after_removal(
        Some(&head()),
        Some(&bot),
        &head(),
        &bot
    ));
    assert!(!held_after_removal(
        Some(&head()),
        Some(&person),
        &head(),
        &bot
    ));
    assert!(!held_after_removal(
        Some(&other),
        Some(&queue),
        &head(),
        &bot
    ));
    assert!(!held_after_removal(None, Some(&queue), &head(), &bot));
}
