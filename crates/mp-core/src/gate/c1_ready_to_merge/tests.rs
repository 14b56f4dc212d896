//! Tests for C1.

use super::*;
use crate::approval::Receipt;
use crate::context::{HeadHistory, RefUpdate, RefUpdateKind};
use crate::gate::testkit::{
    BOT, OWNER, Pr, at, commit, good_commit, lines, login, policy, receipt, sha,
};

const L: &str = "ready-to-merge";

#[track_caller]
fn check(pr: Pr, receipts: &[Receipt], policy: &GatePolicy, expected: &[&str]) {
    let mut all = Receipts::new();
    for r in receipts {
        all.insert(r.clone());
    }
    assert_eq!(lines(&evaluate(&pr.build(), &all, policy)), expected);
}

#[test]
fn label_with_current_receipt_by_the_owner_passes() {
    check(
        Pr::new().applied(L, OWNER, "2026-03-01T11:00:00Z"),
        &[receipt(L, "a", "2026-03-01T11:00:00Z")],
        &policy(),
        &[
            "pass | C1: label 'ready-to-merge' applied by alice and recorded for head a000000; bound by: branch creation of a000000 at 2026-03-01T10:00:00Z is the last head update before the label at 2026-03-01T11:00:00Z (GitHub activity log)",
        ],
    );
}

#[test]
fn missing_label_is_one_failure() {
    check(
        Pr::new().labeled(L, OWNER, "2026-03-01T11:00:00Z"),
        &[receipt(L, "a", "2026-03-01T11:00:00Z")],
        &policy(),
        &["fail | C1: label 'ready-to-merge' not set on PR #7"],
    );
}

#[test]
fn a_label_without_receipt_fails() {
    check(
        Pr::new().applied(L, OWNER, "2026-03-01T11:00:00Z"),
        &[],
        &policy(),
        &[
            "fail | C1: label 'ready-to-merge' has no current-head receipt (head a000000); the bot records one once an allowlisted actor applies it",
        ],
    );
}

#[test]
fn stale_receipt_and_foreign_applier_are_both_listed() {
    check(
        Pr::new().applied(L, "mallory", "2026-03-01T11:00:00Z"),
        &[receipt(L, "1", "2026-03-01T10:00:00Z")],
        &policy(),
        &[
            "fail | C1: label 'ready-to-merge' was applied by mallory, not an allowlisted actor (allowlist: alice)",
            "fail | C1: label 'ready-to-merge' was recorded for head 1000000 but the PR head is now a000000 — stale; re-apply the label",
        ],
    );
}

#[test]
fn the_bot_is_not_an_allowlisted_applier() {
    check(
        Pr::new().applied(L, BOT, "2026-03-01T11:00:00Z"),
        &[receipt(L, "a", "2026-03-01T11:00:00Z")],
        &policy(),
        &[
            "fail | C1: label 'ready-to-merge' was applied by mp-gate[bot], not an allowlisted actor (allowlist: alice)",
        ],
    );
}

#[test]
fn an_empty_allowlist_admits_nobody() {
    let mut open = policy();
    open.allowlist.clear();
    check(
        Pr::new().applied(L, OWNER, "2026-03-01T11:00:00Z"),
        &[receipt(L, "a", "2026-03-01T11:00:00Z")],
        &open,
        &[
            "fail | C1: label 'ready-to-merge' was applied by alice, not an allowlisted actor (allowlist: none)",
        ],
    );
}

#[test]
fn an_undeterminable_or_anonymous_applier_fails_closed() {
    check(
        Pr::new()
            .applied(L, OWNER, "2026-03-01T09:00:00Z")
            .unlabeled(L, OWNER, "2026-03-01T10:00:00Z"),
        &[receipt(L, "a", "2026-03-01T11:00:00Z")],
        &policy(),
        &[
            "fail | C1: label 'ready-to-merge' has no determinable applier: no add with a known time follows its latest removal at 2026-03-01T10:00:00Z",
        ],
    );
    check(
        Pr::new()
            .label(L)
            .labeled_by_nobody(L, "2026-03-01T09:00:00Z"),
        &[receipt(L, "a", "2026-03-01T11:00:00Z")],
        &policy(),
        &["fail | C1: label 'ready-to-merge' was applied by an unknown actor"],
    );
}

#[test]
fn a_current_receipt_does_not_bind_a_head_pushed_after_the_label() {
    // An unsigned receipt edited, or written by an older version, names the new head.
    check(
        Pr::new()
            .applied(L, OWNER, "2026-03-01T11:00:00Z")
            .pushed("c", "2026-03-01T11:30:00Z"),
        &[receipt(L, "c", "2026-03-01T11:31:00Z")],
        &policy(),
        &[
            "fail | C1: label 'ready-to-merge' is not bound to head c000000: it was applied at 2026-03-01T11:00:00Z to head a000000; the head is now c000000; re-apply the label",
        ],
    );
}

#[test]
fn a_relabel_after_the_push_binds_the_new_head() {
    check(
        Pr::new()
            .applied(L, OWNER, "2026-03-01T11:00:00Z")
            .pushed("c", "2026-03-01T11:30:00Z")
            .unlabeled(L, OWNER, "2026-03-01T11:40:00Z")
            .labeled(L, OWNER, "2026-03-01T11:41:00Z"),
        &[receipt(L, "c", "2026-03-01T11:45:00Z")],
        &policy(),
        &[
            "pass | C1: label 'ready-to-merge' applied by alice and recorded for head c000000; bound by: push of c000000 at 2026-03-01T11:30:00Z is the last head update before the label at 2026-03-01T11:41:00Z (GitHub activity log)",
        ],
    );
}

/// `a…` labelled at 11:00, then mp's update pushed at 11:30: `d…`, a merge of `e…` onto
/// `a…`; `main`'s activity log is `base`.
fn carried_through_a_merge_of(base: HeadHistory) -> Pr {
    let mut update = commit("d", "Merge branch 'main' into feature");
    update.parents = vec![sha("a"), sha("e")];
    Pr::new()
        .commits(vec![good_commit("a"), update])
        .applied(L, OWNER, "2026-03-01T11:00:00Z")
        .pushed("d", "2026-03-01T11:30:00Z")
        .history(HeadHistory::Read(vec![
            RefUpdate {
                kind: RefUpdateKind::BranchCreation,
                before: None,
                after: Some(sha("a")),
                at: Some(at("2026-03-01T10:00:00Z")),
                actor: Some(login("bob")),
            },
            RefUpdate {
                kind: RefUpdateKind::Push,
                before: Some(sha("a")),
                after: Some(sha("d")),
                at: Some(at("2026-03-01T11:30:00Z")),
                actor: Some(login(BOT)),
            },
        ]))
        .base_history(base)
}

fn main_at(tip: &str) -> HeadHistory {
    HeadHistory::Read(vec![RefUpdate {
        kind: RefUpdateKind::Push,
        before: Some(sha("b")),
        after: Some(sha(tip)),
        at: Some(at("2026-03-01T11:20:00Z")),
        actor: Some(login(OWNER)),
    }])
}

#[test]
fn mp_s_update_carries_the_label_only_when_it_merged_a_tip_of_main() {
    check(
        carried_through_a_merge_of(main_at("e")),
        &[receipt(L, "d", "2026-03-01T11:31:00Z")],
        &policy(),
        &[
            "pass | C1: label 'ready-to-merge' applied by alice and recorded for head d000000; bound by: branch creation of a000000 at 2026-03-01T10:00:00Z is the last head update before the label at 2026-03-01T11:00:00Z, carried over mp's own update with main (d000000) (GitHub activity log)",
        ],
    );
    // The same merge of a commit main never pointed to: the agent's code on another branch.
    check(
        carried_through_a_merge_of(main_at("f")),
        &[receipt(L, "d", "2026-03-01T11:31:00Z")],
        &policy(),
        &[
            "fail | C1: label 'ready-to-merge' is not bound to head d000000: mp's update d000000 after the label merged e000000, its second parent, which main never pointed to (GitHub's activity log of main): the label does not carry over code that is not main's; re-apply the label",
        ],
    );
    // Without main's log nothing proves what the merge brought in.
    check(
        carried_through_a_merge_of(HeadHistory::NotRead),
        &[receipt(L, "d", "2026-03-01T11:31:00Z")],
        &policy(),
        &[
            "fail | C1: label 'ready-to-merge' is not bound to head d000000: the base branch's update history, which shows what mp's update after the label merged, is unavailable (not read); re-apply the label",
        ],
    );
}

#[test]
fn a_label_renamed_ready_to_merge_after_the_owner_applied_it_fails_naming_the_rename() {
    // alice applied `reviewing` at 11:00; the agent renamed it `ready-to-merge` at 11:30,
    // and the timeline's event now shows the new name. The old receipt changes nothing.
    check(
        Pr::new()
            .applied(L, OWNER, "2026-03-01T11:00:00Z")
            .label_record(L, "2026-01-01T00:00:00Z", "2026-03-01T11:30:00Z"),
        &[receipt(L, "a", "2026-03-01T11:05:00Z")],
        &policy(),
        &[
            "fail | C1: label 'ready-to-merge' has no determinable applier: the label was edited (renamed, recoloured or re-described) at 2026-03-01T11:30:00Z, not before it was applied at 2026-03-01T11:00:00Z: a rename may have given another label this name; re-apply it",
        ],
    );
}
