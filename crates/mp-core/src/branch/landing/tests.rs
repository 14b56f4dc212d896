//! Tests for reading a branch's updates since a tip from its activity log.

use super::*;
use crate::context::RefUpdateKind;
use crate::ids::{Login, Timestamp};

fn sha(c: char) -> CommitSha {
    CommitSha::parse(&c.to_string().repeat(40)).expect("valid sha")
}

/// An update from `before` to `after` (`-` for none), all in the same second: the order
/// must come from the tips, not the time.
fn update(before: char, after: char) -> RefUpdate {
    let tip = |c: char| (c != '-').then(|| sha(c));
    RefUpdate {
        kind: RefUpdateKind::Push,
        before: tip(before),
        after: tip(after),
        at: Timestamp::parse("2026-03-10T10:00:00Z").ok(),
        actor: Login::parse("someone").ok(),
    }
}

/// `log` oldest first as `"ab bc"` (one update from a to b, then b to c); the answer as
/// the chain `"bc cd"`, `not-in-log` or `behind <reached> <unchained>`.
#[track_caller]
fn check(log: &str, from: char, head: char, expected: &str) {
    let mut updates: Vec<RefUpdate> = log
        .split_whitespace()
        .map(|pair| {
            let mut chars = pair.chars();
            update(chars.next().unwrap_or('-'), chars.next().unwrap_or('-'))
        })
        .collect();
    updates.reverse(); // GitHub lists the newest first.
    let got = match updates_since(&updates, &sha(from), &sha(head)) {
        Since::Updates(chain) => chain
            .iter()
            .map(|u| {
                let tip = |t: &Option<CommitSha>| {
                    t.as_ref()
                        .map_or('-', |s| s.as_str().chars().next().unwrap_or('?'))
                };
                format!("{}{}", tip(&u.before), tip(&u.after))
            })
            .collect::<Vec<_>>()
            .join(" "),
        Since::NotInLog => "not-in-log".to_owned(),
        Since::Behind(behind) => format!(
            "behind {} {}",
            behind
                .reached
                .map_or('-', |s| s.as_str().chars().next().unwrap_or('?')),
            behind.unchained
        ),
    };
    assert_eq!(got, expected);
}

#[test]
fn the_updates_after_the_tip_in_chain_order() {
    check("-a ab bc cd", 'b', 'd', "bc cd");
    check("-a ab bc cd", 'd', 'd', "");
    check("-a ab", 'a', 'b', "ab");
}

#[test]
fn same_second_updates_listed_out_of_order_are_chained_by_their_tips() {
    check("-a ab cd bc", 'a', 'd', "ab bc cd");
}

#[test]
fn the_last_time_the_branch_was_at_the_tip_counts() {
    // a -> b, forced back to a, then a -> c: from a, only the update to c is new.
    check("-a ab ba ac", 'a', 'c', "ac");
}

#[test]
fn a_deletion_and_recreation_is_part_of_the_chain() {
    check("-a ab b- -c", 'b', 'c', "b- -c");
}

#[test]
fn a_tip_the_log_never_shows_is_not_in_the_log() {
    check("-a ab bc", 'e', 'c', "not-in-log");
    check("", 'e', 'c', "not-in-log");
    // An empty log and a branch that has not moved: nothing new.
    check("", 'c', 'c', "");
}

#[test]
fn a_log_that_does_not_reach_the_head_is_behind() {
    check("-a ab", 'a', 'c', "behind b 0");
    check("-a ab cd", 'a', 'd', "behind b 1");
}
