//! Tests for the inbox poll: a tick of the pull-request path opens the question for the
//! Quadrant-D pull request `acme/app#1` as `acme/governance#100`, the owner answers, and
//! each case compares the poll's ordered writes and outcomes (then, where it matters, the
//! next run of the pull-request path).

use super::testworld::World;
use super::*;
use crate::run_pr_path;
use crate::testkit::{
    BOT, FakePr, OWNER, at, block_on, clean, config, config_with, login, now, repo, sha,
};
use mp_core::approval::{APPROVED_A, ReceiptKey};
use mp_core::config::{Config, PROJECTS_FILE};
use mp_core::context::{FileStatus, LabelRecord};
use mp_core::ids::PrNumber;

const ASKED: &str =
    "issue acme/governance#100 [decision:pending-owner]: Decision pending — PR acme/app#1";
const AUDIT_1_D: &str = "audit acme/app#1 @ a100000: D (6 votes)";
const MERGED_1: &str = "merge acme/app#1 @ a100000 (squash, 5 identity lines)";
const ISSUE: &str = "acme/governance#100 (acme/app#1)";
const LATER: &str = "2026-03-01T12:10:00Z";
/// Write lines are cut to this many characters.
const CUT: usize = 100;

/// How to poll: the configuration, the options, the availability text and the time.
struct Poll {
    config: Config,
    options: TickOptions,
    availability: Option<String>,
    now: Timestamp,
}

impl Poll {
    fn new() -> Self {
        Self::with_config(config())
    }

    fn with_config(config: Config) -> Self {
        Self {
            options: TickOptions::from_config(&config),
            config,
            availability: None,
            now: now(),
        }
    }

    fn keyed() -> Self {
        let mut poll = Self::new();
        let key = ReceiptKey::new(b"inbox-key".to_vec()).expect("non-empty key");
        poll.options = poll.options.with_receipt_key(key);
        poll
    }

    /// The lifecycle on, reading an availability file.
    fn with_lifecycle() -> Self {
        Self::with_config(config_with(&[(
            PROJECTS_FILE,
            "governance_repo: acme/governance\nsupervised_repos: [acme/app, acme/old]\naudit_only_repos: [acme/old]\ndecision_inbox:\n  lifecycle:\n    enabled: true\n    availability:\n      path: AVAILABILITY.md\n",
        )]))
    }

    fn at(mut self, when: &str) -> Self {
        self.now = at(when);
        self
    }
}

fn inbox() -> RepoName {
    repo("acme/governance")
}

fn app() -> RepoName {
    repo("acme/app")
}

/// A world where a tick of the pull-request path (with `poll`'s configuration and
/// options) has asked about the Quadrant-D pull request `acme/app#1`.
fn asked(poll: &Poll, pr: FakePr) -> World {
    let world = World::new(vec![pr]);
    let log = tick(&world, poll);
    assert!(log.iter().any(|l| l == ASKED), "{log:?}");
    world.take_calls();
    world
}

fn quadrant_d() -> FakePr {
    clean(1).file("config/policy.yml", FileStatus::Modified)
}

/// Runs the pull-request path; returns its writes and outcomes.
fn tick(world: &World, poll: &Poll) -> Vec<String> {
    let report = block_on(run_pr_path(
        world,
        &world.fake,
        &poll.config,
        &poll.options,
        now(),
    ))
    .expect("the tick runs");
    let mut lines = world.fake.take_log();
    lines.extend(report.outcomes.iter().map(|o| format!("=> {o}")));
    lines
}

/// Polls the inbox and compares the writes (cut to [`CUT`] characters) and then the
/// outcomes (`=> ...`) with `expected`.
#[track_caller]
fn check(world: &World, poll: &Poll, expected: &[&str]) -> InboxReport {
    let report = block_on(poll_inbox(
        world,
        &poll.config,
        &poll.options,
        &login(BOT),
        poll.availability.as_deref(),
        poll.now,
    ));
    let mut lines: Vec<String> = world
        .fake
        .take_log()
        .into_iter()
        .map(|line| line.chars().take(CUT).collect())
        .collect();
    lines.extend(report.outcomes.iter().map(|o| format!("=> {o}")));
    assert_eq!(lines, expected);
    report
}

/// The tick that recovers and resolves the question in one go (the owner approved while it
/// was failing) resets the count too: reopened later, the question does not start one
/// failure short of `decision:inbox-error`.
#[test]
fn a_recovering_tick_that_closes_the_question_resets_the_count() {
    let poll = Poll::new();
    let world = asked(&poll, quadrant_d());
    let missing = GitHubError::NotFound {
        what: "acme/app#1".to_owned(),
    };
    world.fake.fail("pull", 1, missing);
    check(
        &world,
        &poll,
        &[
            "comment acme/governance#100: The bot failed to process this inbox question on 1 consecutive tick(s);",
            &format!("=> {ISSUE} failed: failed (1 consecutive): acme/app#1 not found"),
        ],
    );
    check(
        &world,
        &poll,
        &[
            "update-comment 1002: The bot failed to process this inbox question on 2 consecutive tick(s); last er",
            &format!("=> {ISSUE} failed: failed (2 consecutive): acme/app#1 not found"),
        ],
    );
    world.fake.heal();
    world.react(&inbox(), 100, "+1", OWNER, LATER);
    let [label, receipt, close, outcome] = approved_a_lines();
    check(
        &world,
        &poll,
        &[
            label,
            receipt,
            close,
            "update-comment 1002: The bot processed this inbox question again after 2 failed tick(s).",
            outcome,
        ],
    );
}

fn approved_a_lines() -> [&'static str; 4] {
    [
        "label acme/app#1: decision:approved-A",
        "comment acme/app#1: Merge Gate: recorded `decision:approved-A` for head `a100000`; this receipt hold",
        "close acme/governance#100",
        "=> acme/governance#100 (acme/app#1) approved: approved by alice: 'decision:approved-A' and its receipt bound to head a100000",
    ]
}

#[test]
fn a_thumbs_up_approves_option_a_and_the_pull_request_merges_the_same_tick() {
    let poll = Poll::new();
    let world = asked(&poll, quadrant_d());
    world.react(&inbox(), 100, "+1", OWNER, LATER);
    let report = check(&world, &poll, &approved_a_lines());
    assert_eq!(report.metrics.inbox_resolved, 1);
    assert_eq!(
        tick(&world, &poll),
        [
            AUDIT_1_D,
            MERGED_1,
            "=> acme/app#1 merged: merged as Quadrant D: squash commit c100000 pinned to head a100000",
        ]
    );
    check(&world, &poll, &[]);
}

#[test]
fn approve_b_with_a_key_writes_a_signed_receipt_the_gate_honours() {
    let poll = Poll::keyed();
    let world = asked(&poll, quadrant_d());
    world.comment(&inbox(), 100, OWNER, "Looks right.\n/approve b\n", LATER);
    check(
        &world,
        &poll,
        &[
            "label acme/app#1: decision:approved-B",
            "comment acme/app#1: Merge Gate: recorded `decision:approved-B` for head `a100000`; this receipt hold",
            "close acme/governance#100",
            "=> acme/governance#100 (acme/app#1) approved: approved by alice: 'decision:approved-B' and its receipt bound to head a100000",
        ],
    );
    let receipt = world.fake.with(|s| {
        s.comments[&(app(), 1)]
            .last()
            .map(|c| c.body.clone())
            .unwrap_or_default()
    });
    assert!(receipt.contains("<!-- merge-gate-mac: "), "{receipt}");
    assert_eq!(tick(&world, &poll)[1], MERGED_1);
}

#[test]
fn an_approval_label_put_there_by_someone_else_is_reestablished_by_the_bot() {
    let poll = Poll::new();
    let pr = quadrant_d().applied(APPROVED_A, "agent-bob", "2026-03-01T11:30:00Z");
    let world = asked(&poll, pr);
    world.comment(&inbox(), 100, OWNER, "/approve A", LATER);
    let [label, receipt, close, outcome] = approved_a_lines();
    check(
        &world,
        &poll,
        &[
            "unlabel acme/app#1: decision:approved-A",
            label,
            receipt,
            close,
            outcome,
        ],
    );
    assert_eq!(tick(&world, &poll)[1], MERGED_1);
}

#[test]
fn a_reject_closes_the_pull_request_and_the_issue_and_is_reported_for_the_burn_in_reset() {
    let poll = Poll::new();
    let world = asked(&poll, quadrant_d());
    world.comment(&inbox(), 100, OWNER, "/reject", LATER);
    let report = check(
        &world,
        &poll,
        &[
            "comment acme/app#1: Closed per Decision Inbox `/reject`: alice turned this pull request down in acme",
            "close acme/app#1",
            "close acme/governance#100",
            "=> acme/governance#100 (acme/app#1) rejected: rejected by alice: pull request and issue closed",
        ],
    );
    assert_eq!(
        report.rejections,
        [Rejection {
            repo: app(),
            number: PrNumber::new(1),
            issue: PrNumber::new(100),
            actor: login(OWNER),
            at: Some(at(LATER)),
        }]
    );
    assert!(report.resets_burn_in());
    assert_eq!(
        tick(&world, &poll),
        Vec::<String>::new(),
        "no open pull request left"
    );
}

#[test]
fn a_reject_retried_after_the_close_failed_comments_once() {
    let poll = Poll::new();
    let world = asked(&poll, quadrant_d());
    world.comment(&inbox(), 100, OWNER, "/reject", LATER);
    world.fake.fail(
        "close_issue",
        1,
        GitHubError::Unavailable {
            route: "PATCH /repos/{o}/{r}/issues/{n}".to_owned(),
            message: "HTTP 502".to_owned(),
        },
    );
    let first = block_on(poll_inbox(
        &world,
        &poll.config,
        &poll.options,
        &login(BOT),
        None,
        poll.now,
    ));
    let written = world.fake.take_log();
    assert_eq!(
        written.len(),
        1,
        "only the comment went through: {written:?}"
    );
    assert!(written[0].starts_with("comment acme/app#1: Closed per Decision Inbox"));
    assert_eq!(first.metrics.inbox_rejected, 0, "{:?}", first.outcomes);
    world.fake.heal();
    check(
        &world,
        &poll,
        &[
            "close acme/app#1",
            "close acme/governance#100",
            "=> acme/governance#100 (acme/app#1) rejected: rejected by alice: pull request and issue closed",
        ],
    );
}

#[test]
fn the_latest_signal_wins_and_a_later_thumbs_down_rejects() {
    let poll = Poll::new();
    let world = asked(&poll, quadrant_d());
    world.react(&inbox(), 100, "+1", OWNER, "2026-03-01T12:05:00Z");
    world.comment(&inbox(), 100, OWNER, "/approve C", "2026-03-01T12:06:00Z");
    world.react(&inbox(), 100, "-1", OWNER, "2026-03-01T12:07:00Z");
    let report = check(
        &world,
        &poll,
        &[
            "comment acme/app#1: Closed per Decision Inbox `/reject`: alice turned this pull request down in acme",
            "close acme/app#1",
            "close acme/governance#100",
            "=> acme/governance#100 (acme/app#1) rejected: rejected by alice: pull request and issue closed",
        ],
    );
    assert_eq!(report.metrics.inbox_rejected, 1);
}

#[test]
fn at_the_same_time_a_comment_beats_a_reaction() {
    let poll = Poll::new();
    let world = asked(&poll, quadrant_d());
    world.react(&inbox(), 100, "-1", OWNER, LATER);
    world.comment(&inbox(), 100, OWNER, "/approve A", LATER);
    check(&world, &poll, &approved_a_lines());
}

#[test]
fn signals_of_actors_outside_the_allowlist_are_ignored() {
    let poll = Poll::new();
    let world = asked(&poll, quadrant_d());
    world.react(&inbox(), 100, "+1", "mallory", LATER);
    world.comment(&inbox(), 100, "mallory", "/reject", LATER);
    world.comment(&inbox(), 100, "agent-bob", "/approve A", LATER);
    let report = check(
        &world,
        &poll,
        &[&format!("=> {ISSUE} no_verdict: no owner decision yet")],
    );
    assert!(report.rejections.is_empty());
}

#[test]
fn approve_c_defers_once_and_never_merges() {
    let poll = Poll::new();
    let world = asked(&poll, quadrant_d());
    world.comment(&inbox(), 100, OWNER, "/approve C", LATER);
    let report = check(
        &world,
        &poll,
        &[
            "label acme/app#1: decision:deferred",
            "comment acme/governance#100: Deferred per `/approve C` from alice: `acme/app#1` now carries `decisio",
            &format!(
                "=> {ISSUE} deferred: deferred by alice: 'decision:deferred' on the pull request, issue left open"
            ),
        ],
    );
    assert_eq!(report.metrics.inbox_deferred, 1);
    check(
        &world,
        &poll,
        &[&format!(
            "=> {ISSUE} already_deferred: deferred earlier: nothing new to write"
        )],
    );
    assert_eq!(
        tick(&world, &poll),
        [
            AUDIT_1_D,
            "=> acme/app#1 inbox: Quadrant D awaits the owner: decision inbox issue acme/governance#100 is already pending",
        ]
    );
}

#[test]
fn a_moved_head_is_flagged_once_and_the_verdict_applies_when_the_head_returns() {
    let poll = Poll::new();
    let world = asked(&poll, quadrant_d());
    world.react(&inbox(), 100, "+1", OWNER, LATER);
    world.fake.with(|s| s.pulls[0].pull.head_sha = sha("b1"));
    let report = check(
        &world,
        &poll,
        &[
            "comment acme/governance#100: ⚠️ The head of `acme/app#1` changed since this question was opened (`a1",
            "label acme/governance#100: decision:stale-approval",
            &format!(
                "=> {ISSUE} stale_head: head moved a100000 -> b100000: no decision applied, issue marked 'decision:stale-approval'"
            ),
        ],
    );
    assert_eq!(report.metrics.inbox_stale, 1);
    check(
        &world,
        &poll,
        &[&format!(
            "=> {ISSUE} still_stale: head moved a100000 -> b100000: no decision applied (marked stale earlier)"
        )],
    );
    world.fake.with(|s| s.pulls[0].pull.head_sha = sha("a1"));
    check(&world, &poll, &approved_a_lines());
}

#[test]
fn with_a_key_a_body_that_does_not_verify_is_flagged_once_and_never_honoured() {
    let poll = Poll::keyed();
    let world = asked(&poll, quadrant_d());
    world.react(&inbox(), 100, "+1", OWNER, LATER);
    // Point the question at another head: the MAC no longer matches.
    world.fake.with(|s| {
        let body = s.issues[0]
            .body
            .replace(sha("a1").as_str(), sha("b1").as_str());
        s.issues[0].body = body;
        s.pulls[0].pull.head_sha = sha("b1");
    });
    let report = check(
        &world,
        &poll,
        &[
            "comment acme/governance#100: ⚠️ This inbox question failed its integrity check: the bot's signature ",
            "label acme/governance#100: decision:inbox-integrity-failed",
            &format!(
                "=> {ISSUE} integrity_failed: integrity check failed (the bot's signature does not match this issue and the pull request, head and nonce the body records): issue marked 'decision:inbox-integrity-failed'"
            ),
        ],
    );
    assert_eq!(report.metrics.inbox_integrity_failed, 1);
    check(
        &world,
        &poll,
        &[&format!(
            "=> {ISSUE} still_integrity_failed: integrity check failed (the bot's signature does not match this issue and the pull request, head and nonce the body records): no decision applied (marked earlier)"
        )],
    );
}

#[test]
fn with_a_key_an_unsigned_body_is_not_honoured() {
    let world = asked(&Poll::new(), quadrant_d());
    world.react(&inbox(), 100, "+1", OWNER, LATER);
    check(
        &world,
        &Poll::keyed(),
        &[
            "comment acme/governance#100: ⚠️ This inbox question failed its integrity check: the issue has no sig",
            "label acme/governance#100: decision:inbox-integrity-failed",
            &format!(
                "=> {ISSUE} integrity_failed: integrity check failed (the issue has no signature comment of the bot): issue marked 'decision:inbox-integrity-failed'"
            ),
        ],
    );
}

#[test]
fn the_issue_is_closed_when_its_pull_request_merged_or_closed() {
    let poll = Poll::new();
    let world = asked(&poll, quadrant_d());
    world.fake.with(|s| {
        s.pulls[0].pull.state = PrState::Closed;
        s.pulls[0].pull.merged = true;
    });
    let report = check(
        &world,
        &poll,
        &[
            "comment acme/governance#100: `acme/app#1` was merged, so there is nothing left to decide here; closi",
            "close acme/governance#100",
            &format!("=> {ISSUE} pr_closed: pull request merged: inbox issue closed"),
        ],
    );
    assert_eq!(report.metrics.inbox_resolved, 1);

    let world = asked(&poll, quadrant_d());
    world.fake.with(|s| s.pulls[0].pull.state = PrState::Closed);
    check(
        &world,
        &poll,
        &[
            "comment acme/governance#100: `acme/app#1` was closed without merging, so there is nothing left to de",
            "close acme/governance#100",
            &format!(
                "=> {ISSUE} pr_closed: pull request closed without merging: inbox issue closed"
            ),
        ],
    );
}

#[test]
fn the_poison_guard_counts_failed_ticks_on_the_issue_and_labels_the_third() {
    let poll = Poll::new();
    let world = asked(&poll, quadrant_d());
    let missing = GitHubError::NotFound {
        what: "acme/app#1".to_owned(),
    };
    world.fake.fail("pull", 1, missing);
    check(
        &world,
        &poll,
        &[
            "comment acme/governance#100: The bot failed to process this inbox question on 1 consecutive tick(s);",
            &format!("=> {ISSUE} failed: failed (1 consecutive): acme/app#1 not found"),
        ],
    );
    check(
        &world,
        &poll,
        &[
            "update-comment 1002: The bot failed to process this inbox question on 2 consecutive tick(s); last er",
            &format!("=> {ISSUE} failed: failed (2 consecutive): acme/app#1 not found"),
        ],
    );
    let report = check(
        &world,
        &poll,
        &[
            "update-comment 1002: The bot failed to process this inbox question on 3 consecutive tick(s); last er",
            "label acme/governance#100: decision:inbox-error",
            &format!("=> {ISSUE} failed: failed (3 consecutive): acme/app#1 not found"),
        ],
    );
    assert_eq!(report.metrics.inbox_errors, 1);
    let body = world
        .fake
        .with(|s| s.comments[&(inbox(), 100)][0].body.clone());
    assert!(body.contains("failed to process") && body.contains("`decision:inbox-error`"));
    // Fixed: the counter is reset and the label taken off.
    world.fake.with(|s| s.failures.clear());
    check(
        &world,
        &poll,
        &[
            "update-comment 1002: The bot processed this inbox question again after 3 failed tick(s).",
            "unlabel acme/governance#100: decision:inbox-error",
            &format!("=> {ISSUE} no_verdict: no owner decision yet"),
        ],
    );
    check(
        &world,
        &poll,
        &[&format!("=> {ISSUE} no_verdict: no owner decision yet")],
    );
}

#[test]
fn transient_errors_are_not_counted_and_a_rate_limit_ends_the_poll() {
    let poll = Poll::new();
    let world = asked(&poll, quadrant_d());
    world.fake.fail(
        "pull",
        1,
        GitHubError::Unavailable {
            route: "GET /pulls/1".to_owned(),
            message: "connection reset".to_owned(),
        },
    );
    check(
        &world,
        &poll,
        &[&format!(
            "=> {ISSUE} failed: failed (not counted): GET /pulls/1: connection reset"
        )],
    );
    world.fake.with(|s| s.failures.clear());
    world
        .fake
        .fail("pull", 1, GitHubError::RateLimited { remaining: 0 });
    let report = check(
        &world,
        &poll,
        &[&format!(
            "=> {ISSUE} failed: failed (not counted): rate limit exhausted: 0 calls left"
        )],
    );
    assert!(report.metrics.rate_limited);
    assert_eq!(
        report.warnings,
        [
            "decision inbox poll ended early (rate limit exhausted: 0 calls left); 0 issue(s) and the lifecycle wait for the next tick"
        ]
    );
}

#[test]
fn foreign_unreadable_and_ungated_issues_are_ignored() {
    let poll = Poll::new();
    let world = asked(&poll, quadrant_d());
    world.react(&inbox(), 100, "+1", OWNER, LATER);
    world.fake.with(|s| {
        let asked = s.issues[0].clone();
        let mut foreign = asked.clone();
        foreign.number = PrNumber::new(97);
        foreign.author = Some(login(OWNER));
        let mut unreadable = asked.clone();
        unreadable.number = PrNumber::new(98);
        unreadable.body = "PR: `acme/app#1` and nothing else".to_owned();
        let mut ungated = asked.clone();
        ungated.number = PrNumber::new(99);
        ungated.body = asked.body.replace("acme/app#1", "acme/old#1");
        s.issues.extend([foreign, unreadable, ungated]);
    });
    let [label, receipt, close, outcome] = approved_a_lines();
    check(
        &world,
        &poll,
        &[
            label,
            receipt,
            close,
            "=> acme/governance#97 not_opened_by_bot: opened by alice, not the bot: ignored",
            "=> acme/governance#98 unreadable_question: unreadable question: no well-formed head marker in the body",
            "=> acme/governance#99 (acme/old#1) not_gated: acme/old is not gated this tick: ignored",
            outcome,
        ],
    );
}

#[test]
fn a_disabled_lifecycle_makes_no_call_and_an_enabled_one_reminds_and_escalates_once() {
    let ten_days_later = "2026-03-11T12:00:00Z";
    let poll = Poll::new().at(ten_days_later);
    let world = asked(&poll, quadrant_d());
    // The label record: the bot's `decision:pending-owner` is the label it applied.
    let polling = [
        "issues",
        "label_events",
        "label_records",
        "comments",
        "pull",
        "reactions",
    ];
    check(
        &world,
        &poll,
        &[&format!("=> {ISSUE} no_verdict: no owner decision yet")],
    );
    assert_eq!(world.take_calls(), polling);

    let poll = Poll::with_lifecycle().at(ten_days_later);
    let report = check(
        &world,
        &poll,
        &[
            "comment acme/governance#100: [REMINDER_72H] This decision has been waiting for 72 hours, not countin",
            "comment acme/governance#100: [ESCALATION_168H] This decision is still open after 168 hours, not coun",
            &format!("=> {ISSUE} no_verdict: no owner decision yet"),
        ],
    );
    assert_eq!(
        world.take_calls(),
        [&polling[..], &["create_comment"; 2]].concat()
    );
    assert_eq!(report.metrics.inbox_lifecycle_comments, 2);
    assert_eq!(
        report.warnings,
        [
            "availability file acme/governance:AVAILABILITY.md@main was not read; the lifecycle treats the owner as available"
        ]
    );
    check(
        &world,
        &poll,
        &[&format!("=> {ISSUE} no_verdict: no owner decision yet")],
    );
}

#[test]
fn a_completed_outing_pauses_the_clock_and_the_return_digest_is_posted_once() {
    let mut poll = Poll::with_lifecycle().at("2026-03-05T12:00:00Z");
    poll.availability = Some(
        "[OWNER_AVAILABILITY] 2026-03-02T00:00:00Z - 2026-03-04T00:00:00Z outing\nnot a date\n"
            .to_owned(),
    );
    let world = asked(&poll, quadrant_d());
    // Open 96 h, away 48 h: 48 h of waiting, no reminder yet.
    let report = check(
        &world,
        &poll,
        &[
            "comment acme/governance#100: [RETURN_DIGEST] Welcome back. This decision waited for you; the reminde",
            &format!("=> {ISSUE} no_verdict: no owner decision yet"),
        ],
    );
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    check(
        &world,
        &poll,
        &[&format!("=> {ISSUE} no_verdict: no owner decision yet")],
    );
    // During the next outing nothing is written, however long the wait.
    let mut away = poll.at("2026-03-20T12:00:00Z");
    away.availability = Some(
        "[OWNER_AVAILABILITY] 2026-03-19T00:00:00Z - 2026-03-25T00:00:00Z outing\n".to_owned(),
    );
    check(
        &world,
        &away,
        &[&format!("=> {ISSUE} no_verdict: no owner decision yet")],
    );
}

#[test]
fn the_metrics_name_the_inbox_counters() {
    let poll = Poll::new();
    let world = asked(&poll, quadrant_d());
    world.comment(&inbox(), 100, OWNER, "/reject", LATER);
    let report = block_on(poll_inbox(
        &world,
        &poll.config,
        &poll.options,
        &login(BOT),
        None,
        poll.now,
    ));
    assert_eq!(
        report.metrics.to_json(),
        serde_json::json!({
            "inbox_resolved": 0, "inbox_stale": 0, "inbox_deferred": 0, "inbox_rejected": 1,
            "inbox_errors": 0, "inbox_integrity_failed": 0, "inbox_lifecycle_comments": 0,
        })
    );
}

#[test]
fn a_signature_holds_only_for_the_issue_it_was_written_on() {
    let poll = Poll::keyed();
    let world = asked(&poll, quadrant_d());
    let (body, comments) = world.fake.with(|s| {
        (
            s.issues[0].body.clone(),
            s.comments.get(&(inbox(), 100)).cloned().unwrap_or_default(),
        )
    });
    let question = InboxQuestion::read(&body).expect("a readable question");
    let key = poll.options.receipt_key.clone();
    let bot = login(BOT);
    let on = |issue: u64| {
        check_integrity(
            &question,
            &inbox(),
            PrNumber::new(issue),
            &comments,
            &bot,
            key.as_ref(),
        )
    };
    assert_eq!(on(100), Integrity::Verified);
    assert_eq!(
        on(101),
        Integrity::Failed(IntegrityFailure::MacMismatch),
        "the same body and signature, pasted into another issue"
    );
}

/// An agent renamed another label (an audit issue's) `decision:pending-owner` after the
/// bot applied it: the bot's event names the label as it is now, so GitHub's record of the
/// label decides. Edited after the bot's event: not a question, the owner's thumbs-up
/// approves nothing, and nothing is written.
#[test]
fn a_pending_label_edited_after_the_bot_applied_it_makes_no_question() {
    let poll = Poll::new();
    let world = asked(&poll, quadrant_d());
    world.fake.with(|s| {
        s.label_records.push(LabelRecord {
            name: PENDING_OWNER.to_owned(),
            created_at: Some(at("2020-01-01T00:00:00Z")),
            updated_at: Some(at("2030-01-01T00:00:00Z")),
        });
    });
    world.react(&inbox(), 100, "+1", OWNER, LATER);
    let report = block_on(poll_inbox(
        &world,
        &poll.config,
        &poll.options,
        &login(BOT),
        poll.availability.as_deref(),
        poll.now,
    ));
    assert!(world.fake.take_log().is_empty(), "nothing is written");
    let outcomes: Vec<String> = report.outcomes.iter().map(ToString::to_string).collect();
    assert_eq!(outcomes.len(), 1, "{outcomes:?}");
    assert!(
        outcomes[0].starts_with("acme/governance#100 pending_label_changed: "),
        "{outcomes:?}"
    );
    assert!(outcomes[0].contains("renamed"), "{outcomes:?}");
    assert_eq!(report.metrics.inbox_resolved, 0);
}
