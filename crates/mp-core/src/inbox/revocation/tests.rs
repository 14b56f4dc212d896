//! Tests of the revocation rule: who, which head, and when.

use super::*;
use crate::context::CommentId;
use crate::inbox::testkit::{at, login};

const BOT: &str = "mp-gate[bot]";
const H1: &str = "a100000000000000000000000000000000000000";
const H2: &str = "b200000000000000000000000000000000000000";

fn head(sha: &str) -> CommitSha {
    CommitSha::parse(sha).expect("a full sha")
}

fn unlabeled(who: &str, when: Option<&str>) -> LabelEvent {
    LabelEvent {
        action: LabelAction::Unlabeled,
        label: APPROVED_A.to_owned(),
        actor: Some(login(who)),
        at: when.map(at),
    }
}

fn receipt(who: &str, sha: &str, when: &str) -> Comment {
    Comment {
        id: CommentId::new(1),
        author: Some(login(who)),
        body: format!("{LABEL_MARKER} {APPROVED_A} -->\n{HEAD_MARKER} {sha} -->\n"),
        created_at: Some(at(when)),
        updated_at: Some(at(when)),
    }
}

fn allowlist() -> Vec<Login> {
    vec![login("alice")]
}

#[test]
fn the_owner_removing_the_approval_of_this_head_voids_every_earlier_signal() {
    let events = [unlabeled("alice", Some("2026-03-10T11:30:00Z"))];
    let comments = [receipt(BOT, H1, "2026-03-10T11:05:00Z")];
    let found = latest_revocation(&events, &comments, &head(H1), &allowlist(), &login(BOT))
        .expect("a revocation");
    assert!(found.voids(Some(at("2026-03-10T11:00:00Z"))));
    assert!(found.voids(Some(at("2026-03-10T11:30:00Z"))));
    assert!(found.voids(None));
    assert!(!found.voids(Some(at("2026-03-10T11:31:00Z"))));
}

#[test]
fn a_revocation_of_another_heads_approval_does_not_count_for_this_one() {
    let events = [unlabeled("alice", Some("2026-03-10T11:30:00Z"))];
    let comments = [
        receipt(BOT, H2, "2026-03-10T11:05:00Z"),
        // Written after the removal: it does not say which head was revoked.
        receipt(BOT, H1, "2026-03-10T11:40:00Z"),
    ];
    assert_eq!(
        latest_revocation(&events, &comments, &head(H1), &allowlist(), &login(BOT)),
        None
    );
}

#[test]
fn only_the_bots_receipts_say_which_head_was_revoked() {
    let events = [unlabeled("alice", Some("2026-03-10T11:30:00Z"))];
    // An agent's look-alike receipt naming another head changes nothing: no receipt of
    // the bot names a head, so the revocation counts for every head.
    let comments = [receipt("codex-agent", H2, "2026-03-10T11:10:00Z")];
    assert!(latest_revocation(&events, &comments, &head(H1), &allowlist(), &login(BOT)).is_some());
}

#[test]
fn removals_by_others_are_not_revocations_and_unknown_times_void_everything() {
    let comments = [receipt(BOT, H1, "2026-03-10T11:05:00Z")];
    let by_agent = [unlabeled("codex-agent", Some("2026-03-10T11:30:00Z"))];
    assert_eq!(
        latest_revocation(&by_agent, &comments, &head(H1), &allowlist(), &login(BOT)),
        None
    );
    let events = [
        unlabeled("alice", Some("2026-03-10T11:30:00Z")),
        unlabeled("alice", None),
    ];
    let found = latest_revocation(&events, &comments, &head(H1), &allowlist(), &login(BOT))
        .expect("a revocation");
    assert_eq!(found.at, None);
    assert!(found.voids(Some(at("2026-03-11T00:00:00Z"))));
}
