//! Tests for the malformed-session rule.

use super::*;
use crate::classifier::test_support::{commit, modified, pr};

const TRAILERS: &str = "Agent-Tool: codex\nAgent-Model: gpt-5\nAgent-Machine: ci\nTask-Ref: none";

fn with_session(byte: u8, session: &str) -> crate::context::CommitContext {
    commit(
        byte,
        &format!("fix: x\n\n{TRAILERS}\nAgent-Session: {session}"),
    )
}

#[track_caller]
fn check(commits: Vec<crate::context::CommitContext>, expected: &str) {
    let mut pr = pr(vec![modified("README.md")]);
    pr.commits = commits;
    let finding = evaluate(&pr);
    assert_eq!(finding.vote().to_string(), expected, "{finding:?}");
}

#[test]
fn well_formed_sessions_are_a() {
    check(
        vec![with_session(1, "s_abc-123"), with_session(2, "s_a1b2")],
        "classifier_malformed_session voted A: no malformed Agent-Session (2 well formed)",
    );
}

#[test]
fn malformed_session_is_d_naming_commit_and_value() {
    check(
        vec![with_session(1, "s_abc-123"), with_session(2, "s_-bad")],
        "classifier_malformed_session voted D: malformed Agent-Session on commit 0202020 ('s_-bad')",
    );
}

#[test]
fn pre_release_session_grammar_is_malformed() {
    // `s_-ab1` passed the pre-1.5 grammar (3-15 chars, may start with `-`).
    check(
        vec![with_session(3, "s_-ab1")],
        "classifier_malformed_session voted D: malformed Agent-Session on commit 0303030 ('s_-ab1')",
    );
}

#[test]
fn missing_session_is_left_to_c5() {
    check(
        vec![
            commit(1, &format!("fix: x\n\n{TRAILERS}")),
            commit(2, "no trailers at all"),
            with_session(3, "s_good1"),
        ],
        "classifier_malformed_session voted A: no malformed Agent-Session (1 well formed, 2 missing and left to C5)",
    );
}

#[test]
fn empty_session_is_present_and_malformed() {
    check(
        vec![commit(1, &format!("fix: x\n\n{TRAILERS}\nAgent-Session:"))],
        "classifier_malformed_session voted D: malformed Agent-Session on commit 0101010 ('')",
    );
}

#[test]
fn a_later_good_line_does_not_hide_a_malformed_one() {
    check(
        vec![commit(
            1,
            &format!("fix: x\n\n{TRAILERS}\nAgent-Session: BAD\nAgent-Session: s_good1"),
        )],
        "classifier_malformed_session voted D: malformed Agent-Session on commit 0101010 ('BAD')",
    );
}

#[test]
fn every_malformed_commit_is_named() {
    check(
        vec![
            with_session(1, "x"),
            with_session(2, "S_UPPER"),
            with_session(3, "s_ok-1"),
            with_session(4, "s_ab"),
            with_session(5, "s_toolongsession-name"),
        ],
        "classifier_malformed_session voted D: malformed Agent-Session on commit 0101010 ('x'), commit 0202020 ('S_UPPER'), commit 0404040 ('s_ab') and 1 more",
    );
}

#[test]
fn no_commits_is_a() {
    check(
        Vec::new(),
        "classifier_malformed_session voted A: no malformed Agent-Session (0 well formed)",
    );
}
