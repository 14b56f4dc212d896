//! Tests for C5.

use super::*;
use crate::context::CommitContext;
use crate::gate::testkit::{GOOD_TRAILERS, Pr, commit, good_commit, lines};

#[track_caller]
fn check(commits: Vec<CommitContext>, expected: &[&str]) {
    let pr = Pr::new().commits(commits).build();
    assert_eq!(lines(&evaluate(&pr)), expected);
}

#[test]
fn well_formed_commits_pass() {
    check(
        vec![good_commit("1"), good_commit("2")],
        &["pass | C5: identity trailers well formed on 2 commits"],
    );
}

#[test]
fn every_problem_of_every_commit_is_listed() {
    check(
        vec![
            good_commit("1"),
            commit(
                "2",
                "fix: x\n\nAgent-Tool: codex\nAgent-Session: s_abc-123\nAgent-Machine: ci\nTask-Ref: none",
            ),
            commit(
                "3",
                "fix: y\n\nAgent-Tool: codex\nAgent-Model: gpt-5\nAgent-Session: S_BAD\nAgent-Machine:\nTask-Ref: ISSUE#1",
            ),
            commit("4", "chore: no trailers at all"),
        ],
        &[
            "fail | C5: commit 2000000 missing trailer 'Agent-Model'",
            "fail | C5: commit 3000000 has malformed Agent-Session 'S_BAD' (expected s_ then 4-16 of [a-z0-9-], alphanumeric at both ends)",
            "fail | C5: commit 3000000 has empty trailer 'Agent-Machine'",
            "fail | C5: commit 3000000 has malformed Task-Ref 'ISSUE#1' (expected Issue#N, PR#N, none, round-N/<topic> or bot/<topic>)",
            "fail | C5: commit 4000000 missing trailer 'Agent-Tool'",
            "fail | C5: commit 4000000 missing trailer 'Agent-Model'",
            "fail | C5: commit 4000000 missing trailer 'Agent-Session'",
            "fail | C5: commit 4000000 missing trailer 'Agent-Machine'",
            "fail | C5: commit 4000000 missing trailer 'Task-Ref'",
        ],
    );
}

#[test]
fn trailers_in_mid_prose_do_not_count() {
    check(
        vec![commit(
            "5",
            &format!("fix: z\n\n{GOOD_TRAILERS}\n\nSigned off in prose."),
        )],
        &[
            "fail | C5: commit 5000000 missing trailer 'Agent-Tool'",
            "fail | C5: commit 5000000 missing trailer 'Agent-Model'",
            "fail | C5: commit 5000000 missing trailer 'Agent-Session'",
            "fail | C5: commit 5000000 missing trailer 'Agent-Machine'",
            "fail | C5: commit 5000000 missing trailer 'Task-Ref'",
        ],
    );
}

#[test]
fn a_pr_without_commits_fails_closed() {
    check(vec![], &["fail | C5: PR has no commits to check"]);
}
