//! Tests for C5.

use super::*;
use crate::context::CommitContext;
use crate::context::{HeadHistory, RefUpdate, RefUpdateKind};
use crate::gate::testkit::{BOT, GOOD_TRAILERS, Pr, at, commit, good_commit, lines, login, sha};

#[track_caller]
fn check(commits: Vec<CommitContext>, expected: &[&str]) {
    let pr = Pr::new().commits(commits).build();
    assert_eq!(lines(&evaluate(&pr, Some(&login(BOT)))), expected);
}

/// `a…` with good trailers, then `d…`, a merge of `e…` into it without trailers with
/// `parents`, pushed by `pusher` as `kind`; `main`'s log shows the tip `e…`.
fn updated_pr(pusher: &str, kind: RefUpdateKind, parents: &[&str]) -> Vec<String> {
    updated_pr_on(pusher, kind, parents, "e")
}

/// As [`updated_pr`], with `main`'s log showing the tip `main_tip…` only.
fn updated_pr_on(
    pusher: &str,
    kind: RefUpdateKind,
    parents: &[&str],
    main_tip: &str,
) -> Vec<String> {
    let mut update = commit("d", "Merge branch 'main' into feature");
    update.parents = parents.iter().map(|p| sha(p)).collect();
    let history = HeadHistory::Read(vec![
        RefUpdate {
            kind: RefUpdateKind::BranchCreation,
            before: None,
            after: Some(sha("a")),
            at: Some(at("2026-03-01T10:00:00Z")),
            actor: Some(login("bob")),
        },
        RefUpdate {
            kind,
            before: Some(sha("a")),
            after: Some(sha("d")),
            at: Some(at("2026-03-01T11:30:00Z")),
            actor: Some(login(pusher)),
        },
    ]);
    let pr = Pr::new()
        .commits(vec![good_commit("a"), update])
        .history(history)
        .base_history(HeadHistory::Read(vec![RefUpdate {
            kind: RefUpdateKind::Push,
            before: Some(sha("b")),
            after: Some(sha(main_tip)),
            at: Some(at("2026-03-01T11:00:00Z")),
            actor: Some(login("alice")),
        }]))
        .build();
    lines(&evaluate(&pr, Some(&login(BOT))))
}

#[test]
fn only_mp_s_own_merge_of_main_is_not_asked_for_trailers() {
    assert_eq!(
        updated_pr(BOT, RefUpdateKind::Push, &["a", "e"]),
        [
            "pass | C5: identity trailers well formed on 1 commit (1 merge of main by mp's branch update not asked for trailers)"
        ]
    );
    let missing = "fail | C5: commit d000000 missing trailer 'Agent-Tool'";
    // The same commit pushed by an agent, force-pushed by the bot, with other parents, or
    // merging a commit main never pointed to.
    for lines in [
        updated_pr_on(BOT, RefUpdateKind::Push, &["a", "e"], "f"),
        updated_pr("mallory", RefUpdateKind::Push, &["a", "e"]),
        updated_pr(BOT, RefUpdateKind::ForcePush, &["a", "e"]),
        updated_pr(BOT, RefUpdateKind::Push, &["e", "a"]),
        updated_pr(BOT, RefUpdateKind::Push, &["a"]),
    ] {
        assert_eq!(
            lines.first().map(String::as_str),
            Some(missing),
            "{lines:?}"
        );
    }
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
