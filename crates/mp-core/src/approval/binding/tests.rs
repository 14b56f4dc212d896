//! Tests of the head-at-label proof: each case is one history, one label time, one head.

use super::*;
use crate::context::{HeadHistory, RefUpdate, RefUpdateKind};
use crate::ids::{CommitSha, Timestamp};

fn sha(c: char) -> CommitSha {
    CommitSha::parse(&c.to_string().repeat(40)).expect("valid sha")
}

fn at(text: &str) -> Timestamp {
    Timestamp::parse(&format!("2026-03-10T{text}Z")).expect("valid time")
}

/// `kind before after time`, e.g. `push a b 10:00:00`; `-` is the all-zero sha.
fn history(lines: &[&str]) -> HeadHistory {
    HeadHistory::Read(
        lines
            .iter()
            .map(|line| {
                let parts: Vec<&str> = line.split_whitespace().collect();
                let tip = |p: &str| (p != "-").then(|| sha(p.chars().next().expect("char")));
                RefUpdate {
                    kind: RefUpdateKind::from_github(parts[0]),
                    before: tip(parts[1]),
                    after: tip(parts[2]),
                    at: (parts[3] != "?").then(|| at(parts[3])),
                    actor: None,
                }
            })
            .collect(),
    )
}

#[track_caller]
fn check(lines: &[&str], labeled: &str, head: char, expect: Result<&str, &str>) {
    let got = prove_head_at_label(
        &history(lines),
        Some(at(labeled)),
        &sha(head),
        &[],
        None,
        SettleWindow::DEFAULT,
    );
    match (got, expect) {
        (Ok(proof), Ok(updated)) => {
            assert_eq!(proof.head, sha(head));
            assert_eq!(proof.updated_at, at(updated));
        }
        (Err(why), Err(code)) => assert_eq!(why.code(), code, "{why}"),
        (got, expect) => panic!("got {got:?}, expected {expect:?}"),
    }
}

#[test]
fn the_head_left_by_the_last_update_before_the_label_is_bound() {
    check(
        &["branch_creation - a 09:00:00", "push a b 09:30:00"],
        "10:00:00",
        'b',
        Ok("09:30:00"),
    );
}

#[test]
fn a_push_after_the_label_is_not_covered_by_it() {
    // The owner labelled b; the agent pushed c afterwards.
    check(
        &[
            "branch_creation - a 09:00:00",
            "push a b 09:30:00",
            "push b c 10:01:00",
        ],
        "10:00:00",
        'c',
        Err("labeled_other_head"),
    );
}

#[test]
fn a_force_push_back_to_the_labelled_head_keeps_the_binding() {
    check(
        &[
            "branch_creation - a 09:00:00",
            "push a b 10:01:00",
            "force_push b a 10:02:00",
        ],
        "10:00:00",
        'a',
        Ok("09:00:00"),
    );
}

#[test]
fn an_update_in_the_label_second_cannot_be_ordered() {
    check(
        &["branch_creation - a 09:00:00", "push a b 10:00:00"],
        "10:00:00",
        'b',
        Err("head_updated_at_label_time"),
    );
}

#[test]
fn updates_of_one_second_are_ordered_by_their_chain_or_not_at_all() {
    check(
        &[
            "branch_creation - a 09:00:00",
            "push a b 09:30:00",
            "force_push b c 09:30:00",
            "force_push c b 09:40:00",
        ],
        "10:00:00",
        'b',
        Ok("09:40:00"),
    );
    // a -> b -> c: the before/after links give the only order, in any listing order.
    check(
        &["force_push b c 09:30:00", "push a b 09:30:00"],
        "10:00:00",
        'c',
        Ok("09:30:00"),
    );
    // Two updates from a: a fork, no order.
    check(
        &["push a b 09:30:00", "force_push a c 09:30:00"],
        "10:00:00",
        'c',
        Err("head_updates_unordered"),
    );
    // a -> b and b -> a: a cycle, either could be last.
    check(
        &["push a b 09:30:00", "force_push b a 09:30:00"],
        "10:00:00",
        'a',
        Err("head_updates_unordered"),
    );
}

#[test]
fn a_head_younger_than_the_settle_window_is_not_bound() {
    let lines = ["branch_creation - a 09:00:00", "push a b 09:58:01"];
    check(
        &lines,
        "10:00:00",
        'b',
        Err("head_updated_in_settle_window"),
    );
    // One second before the label.
    check(
        &["branch_creation - a 09:00:00", "push a b 09:59:59"],
        "10:00:00",
        'b',
        Err("head_updated_in_settle_window"),
    );
    // Exactly the window.
    check(
        &["branch_creation - a 09:00:00", "push a b 09:58:00"],
        "10:00:00",
        'b',
        Ok("09:58:00"),
    );
    // A force push back to an old head restarts its clock.
    check(
        &[
            "branch_creation - a 09:00:00",
            "push a b 09:59:00",
            "force_push b a 09:59:30",
        ],
        "10:00:00",
        'a',
        Err("head_updated_in_settle_window"),
    );
    // A configured window.
    let got = prove_head_at_label(
        &history(&lines),
        Some(at("10:00:00")),
        &sha('b'),
        &[],
        None,
        SettleWindow::from_seconds(60),
    );
    assert_eq!(got.map(|p| p.updated_at), Ok(at("09:58:01")));
    let why = prove_head_at_label(
        &history(&lines),
        Some(at("10:00:00")),
        &sha('b'),
        &[],
        None,
        SettleWindow::from_seconds(300),
    )
    .expect_err("within five minutes");
    assert_eq!(
        why.to_string(),
        "the head branch was updated at 2026-03-10T09:58:01Z, 119 s before the label at 2026-03-10T10:00:00Z: within the 300 s settle window, the owner may not have seen that head"
    );
}

#[test]
fn no_update_before_the_label_proves_nothing() {
    check(
        &["push a b 10:30:00"],
        "10:00:00",
        'b',
        Err("no_head_update_before_label"),
    );
    check(&[], "10:00:00", 'b', Err("no_head_update_before_label"));
}

#[test]
fn a_history_that_does_not_end_at_the_head_proves_nothing() {
    check(
        &["branch_creation - a 09:00:00"],
        "10:00:00",
        'b',
        Err("head_history_behind"),
    );
}

#[test]
fn an_untimed_update_proves_nothing() {
    check(
        &["branch_creation - a ?", "push a b 09:30:00"],
        "10:00:00",
        'b',
        Err("head_update_time_unknown"),
    );
}

#[test]
fn a_label_while_the_branch_was_deleted_proves_nothing() {
    check(
        &[
            "branch_creation - a 09:00:00",
            "branch_deletion a - 09:30:00",
            "branch_creation - a 10:30:00",
        ],
        "10:00:00",
        'a',
        Err("labeled_other_head"),
    );
}

#[test]
fn an_unread_or_unavailable_history_or_untimed_label_proves_nothing() {
    let head = sha('a');
    let not_read = prove_head_at_label(
        &HeadHistory::NotRead,
        Some(at("10:00:00")),
        &head,
        &[],
        None,
        SettleWindow::DEFAULT,
    );
    assert_eq!(not_read.map_err(|e| e.code()), Err("head_history_not_read"));
    let fork = HeadHistory::Unavailable {
        reason: "the head branch is in a fork".to_owned(),
    };
    let unavailable = prove_head_at_label(
        &fork,
        Some(at("10:00:00")),
        &head,
        &[],
        None,
        SettleWindow::DEFAULT,
    );
    assert_eq!(
        unavailable.map_err(|e| e.code()),
        Err("head_history_unavailable")
    );
    let untimed = prove_head_at_label(
        &history(&["push - a 09:00:00"]),
        None,
        &head,
        &[],
        None,
        SettleWindow::DEFAULT,
    );
    assert_eq!(untimed.map_err(|e| e.code()), Err("label_time_unknown"));
}

mod carried_over {
    use super::*;
    use crate::context::CommitContext;
    use crate::ids::Login;

    fn bot() -> Login {
        Login::parse("mp-gate[bot]").expect("login")
    }

    /// `c` merges main (`e`) into `b`, as GitHub's update-branch does.
    fn merge(sha_char: char, first: char) -> CommitContext {
        let mut commit = CommitContext::from_message(sha(sha_char), "Merge branch 'main' into x");
        commit.parents = vec![sha(first), sha('e')];
        commit
    }

    fn update(kind: &str, before: char, after: char, time: &str, by: &str) -> RefUpdate {
        RefUpdate {
            kind: RefUpdateKind::from_github(kind),
            before: Some(sha(before)),
            after: Some(sha(after)),
            at: Some(at(time)),
            actor: Some(Login::parse(by).expect("login")),
        }
    }

    fn prove(
        updates: Vec<RefUpdate>,
        commits: &[CommitContext],
        head: char,
    ) -> Result<HeadAtLabel, &'static str> {
        let mut all = vec![RefUpdate {
            kind: RefUpdateKind::BranchCreation,
            before: None,
            after: Some(sha('b')),
            at: Some(at("09:00:00")),
            actor: None,
        }];
        all.extend(updates);
        prove_head_at_label(
            &HeadHistory::Read(all),
            Some(at("10:00:00")),
            &sha(head),
            commits,
            Some(&bot()),
            SettleWindow::DEFAULT,
        )
        .map_err(|e| e.code())
    }

    #[test]
    fn mp_s_own_updates_with_main_carry_the_label_over() {
        let commits = [merge('c', 'b'), merge('d', 'c')];
        let proof = prove(
            vec![
                update("push", 'b', 'c', "11:00:00", "mp-gate[bot]"),
                update("push", 'c', 'd', "12:00:00", "mp-gate[bot]"),
            ],
            &commits,
            'd',
        )
        .expect("carried over");
        assert_eq!(proof.labeled_head, sha('b'));
        assert_eq!(proof.carried, vec![sha('c'), sha('d')]);
        assert!(
            proof
                .to_string()
                .contains("carried over mp's own updates with main (ccccccc, ddddddd)")
        );
    }

    #[test]
    fn anything_else_after_the_label_ends_the_binding() {
        let commits = [merge('c', 'b'), merge('d', 'c')];
        // An agent's push after mp's update.
        assert_eq!(
            prove(
                vec![
                    update("push", 'b', 'c', "11:00:00", "mp-gate[bot]"),
                    update("push", 'c', 'd', "11:10:00", "mallory"),
                ],
                &commits,
                'd',
            ),
            Err("labeled_other_head")
        );
        // An agent's look-alike merge of main.
        assert_eq!(
            prove(
                vec![update("push", 'b', 'c', "11:00:00", "mallory")],
                &commits,
                'c'
            ),
            Err("labeled_other_head")
        );
        // The bot's force push, or a bot push whose commit is not a merge onto the tip.
        assert_eq!(
            prove(
                vec![update("force_push", 'b', 'c', "11:00:00", "mp-gate[bot]")],
                &commits,
                'c'
            ),
            Err("labeled_other_head")
        );
        let single = [CommitContext::from_message(sha('c'), "squashed")];
        assert_eq!(
            prove(
                vec![update("push", 'b', 'c', "11:00:00", "mp-gate[bot]")],
                &single,
                'c'
            ),
            Err("labeled_other_head")
        );
        // An agent's push on top of mp's update, in the same second.
        assert_eq!(
            prove(
                vec![
                    update("push", 'b', 'c', "11:00:00", "mp-gate[bot]"),
                    update("push", 'c', 'd', "11:00:00", "mallory"),
                ],
                &commits,
                'd',
            ),
            Err("labeled_other_head")
        );
        // An update off the chain, though mp's chain reaches the head.
        assert_eq!(
            prove(
                vec![
                    update("push", 'b', 'c', "11:00:00", "mp-gate[bot]"),
                    update("force_push", 'f', 'e', "10:30:00", "mallory"),
                ],
                &commits,
                'c',
            ),
            Err("labeled_other_head")
        );
    }

    #[test]
    fn mp_s_updates_in_one_second_carry_by_their_chain() {
        let commits = [merge('c', 'b'), merge('d', 'c')];
        // Listed in either order, in one second: b -> c -> d by the log's links.
        for updates in [
            vec![
                update("push", 'b', 'c', "11:00:00", "mp-gate[bot]"),
                update("push", 'c', 'd', "11:00:00", "mp-gate[bot]"),
            ],
            vec![
                update("push", 'c', 'd', "11:00:00", "mp-gate[bot]"),
                update("push", 'b', 'c', "11:00:00", "mp-gate[bot]"),
            ],
        ] {
            let proof = prove(updates, &commits, 'd').expect("carried over");
            assert_eq!(proof.carried, vec![sha('c'), sha('d')]);
        }
    }

    #[test]
    fn a_fork_or_a_chain_against_the_clock_fails_closed() {
        let commits = [merge('c', 'b'), merge('d', 'b'), merge('f', 'c')];
        // Two of mp's updates from b: which one is the tip cannot be told.
        assert_eq!(
            prove(
                vec![
                    update("push", 'b', 'c', "11:00:00", "mp-gate[bot]"),
                    update("push", 'b', 'd', "11:00:00", "mp-gate[bot]"),
                    update("push", 'd', 'f', "11:00:01", "mp-gate[bot]"),
                ],
                &commits,
                'f',
            ),
            Err("head_update_chain_forked")
        );
        // The chain b -> c -> f whose second link is logged before the first: the log's
        // latest update leaves c, not the head.
        assert_eq!(
            prove(
                vec![
                    update("push", 'b', 'c', "11:00:05", "mp-gate[bot]"),
                    update("push", 'c', 'f', "11:00:01", "mp-gate[bot]"),
                ],
                &commits,
                'f',
            ),
            Err("head_history_behind")
        );
        // The links b -> c -> f -> a go against the clock at their last step.
        let commits = [merge('c', 'b'), merge('f', 'c'), merge('a', 'f')];
        assert_eq!(
            prove(
                vec![
                    update("push", 'b', 'c', "11:00:01", "mp-gate[bot]"),
                    update("push", 'c', 'f', "11:00:05", "mp-gate[bot]"),
                    update("push", 'f', 'a', "11:00:03", "mp-gate[bot]"),
                ],
                &commits,
                'f',
            ),
            Err("head_updates_unordered")
        );
    }
}

/// GitHub's times have whole seconds, and the same-second rule is about GitHub's seconds:
/// a fraction of a second in a time (which GitHub never hands out, but an adapter or a
/// fake could) must not order a push against the label inside one second.
#[test]
fn fractions_of_a_second_never_order_a_push_against_the_label() {
    let same_second = |push: &str, label: &str| {
        prove_head_at_label(
            &history(&["branch_creation - a 09:00:00", &format!("push a b {push}")]),
            Some(at(label)),
            &sha('b'),
            &[],
            None,
            SettleWindow::from_seconds(0),
        )
        .map_err(|why| why.code())
    };
    for (push, label) in [
        ("10:00:00.300", "10:00:00.700"),
        ("10:00:00.700", "10:00:00.300"),
    ] {
        assert_eq!(
            same_second(push, label),
            Err("head_updated_at_label_time"),
            "push at {push}, label at {label}"
        );
    }
}
