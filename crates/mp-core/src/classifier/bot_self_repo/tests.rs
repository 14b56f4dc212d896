//! Tests for the bot-self-repo rule.

use super::*;
use crate::classifier::test_support::{modified, pr, repo};

#[track_caller]
fn check(pr_repo: &str, bot_repo: &str, expected: &str) {
    let mut pr = pr(vec![modified("README.md")]);
    pr.repo = repo(pr_repo);
    let finding = evaluate(&pr, &repo(bot_repo));
    assert_eq!(finding.vote().to_string(), expected, "{finding:?}");
}

#[test]
fn the_bots_own_repository_is_d() {
    check(
        "acme/governance",
        "acme/governance",
        "classifier_bot_self_repo voted D: acme/governance is the bot's own repository: changes to the bot itself go to the owner",
    );
}

#[test]
fn names_compare_case_insensitively() {
    check(
        "Acme/Governance",
        "acme/governance",
        "classifier_bot_self_repo voted D: acme/governance is the bot's own repository: changes to the bot itself go to the owner",
    );
}

#[test]
fn another_repository_is_a() {
    check(
        "acme/app",
        "acme/governance",
        "classifier_bot_self_repo voted A: acme/app is not the bot's repository acme/governance",
    );
}

#[test]
fn same_name_under_another_owner_is_a() {
    check(
        "fork/governance",
        "acme/governance",
        "classifier_bot_self_repo voted A: fork/governance is not the bot's repository acme/governance",
    );
}
