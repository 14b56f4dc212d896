//! Tests for the pull-request path: each case runs real ticks against the in-memory GitHub
//! (`mp_github_fake::MemoryGitHub`) and compares the ordered writes (its action log, the
//! audit records in between) and the outcomes.

use std::sync::atomic::Ordering;

use super::inbox::{INBOX_HEAD_MARKER, NONCE_MARKER, SIGNATURE_MARKER, inbox_nonce, referenced_pr};
use super::testkit::{BOT, OWNER, TRAILERS, block_on, config, config_with, login, now, repo, sha};
use super::*;
use crate::dry_run::{DryRun, PlannedWrite};
use mp_core::approval::READY_TO_MERGE;
use mp_core::approval::receipt::{MAC_MARKER, marker_value, verify_mac_hex};
use mp_core::context::{CheckRun, FileStatus, LabelAction, LabelEvent};
use mp_core::ids::PrNumber;
use mp_core::port::Write;
use mp_github_fake::world::commit_sha;
use mp_github_fake::{Call, Endpoint, Failure};

mod github_queue;
mod held;
mod world;

use world::{Setup, Tick, clean, world_of};

const RECEIPT_1: &str = "comment acme/app#1 (id 1): Merge Gate: recorded `ready-to-merge` for head `a100000`; this receipt holds for that head only.";
const AUDIT_1_A: &str = "audit acme/app#1 @ a100000: A (6 votes)";
const AUDIT_1_D: &str = "audit acme/app#1 @ a100000: D (6 votes)";

/// The squash commit GitHub makes for pull request `n` of `acme/app`.
fn squash(n: u64) -> CommitSha {
    commit_sha(&repo("acme/app"), &format!("squash merge of #{n}"))
}

/// The merge of `acme/app#n` as [`line`] shows it.
fn merge_line(n: u64) -> String {
    format!(
        "merge acme/app#{n}: head a{n}00000 -> base {} (Squash, 5 identity lines)",
        squash(n).short()
    )
}

/// The outcome of merging `acme/app#n` as Quadrant `quadrant`.
fn merged_outcome(n: u64, quadrant: &str) -> String {
    format!(
        "=> acme/app#{n} merged: merged as Quadrant {quadrant}: squash commit {} pinned to head a{n}00000",
        squash(n).short()
    )
}

/// Runs one tick and compares the writes logged since the last tick, then the outcomes
/// (`=> ...`), with `expected`. The same tick over a copy of the world with one read at a
/// time must write and decide exactly the same (decisions/0034).
#[track_caller]
fn check<S: AsRef<str>>(tick: &Tick, options: &TickOptions, expected: &[S]) -> TickReport {
    let serial = tick.copy();
    let report = tick.run(&config(), options).expect("the tick runs");
    let mut lines = tick.take_log();
    lines.extend(report.outcomes.iter().map(|o| format!("=> {o}")));
    let expected: Vec<&str> = expected.iter().map(AsRef::as_ref).collect();
    assert_eq!(lines, expected);
    let one_at_a_time = options
        .clone()
        .with_read_concurrency(ReadConcurrency::SERIAL);
    let serial_report = serial
        .run(&config(), &one_at_a_time)
        .expect("the serial tick runs");
    let mut serial_lines = serial.take_log();
    serial_lines.extend(serial_report.outcomes.iter().map(|o| format!("=> {o}")));
    assert_eq!(
        serial_lines, lines,
        "one read at a time writes or decides otherwise"
    );
    report
}

fn merging() -> TickOptions {
    TickOptions::from_config(&config())
}

fn observing() -> TickOptions {
    merging().with_merge_mode(MergeMode::Observe)
}

fn unavailable(route: &str) -> GitHubError {
    GitHubError::Unavailable {
        route: route.to_owned(),
        message: "connection reset".to_owned(),
    }
}

/// A failure on `endpoint` of `acme/app` pull request (or issue) `number`.
fn failing(endpoint: Endpoint, number: u64, error: GitHubError) -> Failure {
    Failure::on(endpoint, error)
        .in_repo(&repo("acme/app"))
        .with_value(number.to_string())
}

#[test]
fn merge_mode_comes_from_the_configuration() {
    assert_eq!(merging().merge_mode, MergeMode::Merge);
    assert_eq!(TickOptions::default().merge_mode, MergeMode::Observe);
}

#[test]
fn a_clean_quadrant_a_pull_request_merges_with_its_receipt_written_the_same_tick() {
    let tick = Tick::new(vec![clean(1)]);
    check(
        &tick,
        &merging(),
        &[
            AUDIT_1_A,
            RECEIPT_1,
            &merge_line(1),
            &merged_outcome(1, "A"),
        ],
    );
    let message = tick
        .github()
        .actions()
        .iter()
        .find_map(|action| match action {
            Write::MergePull { request, .. } => Some(request.commit_message.clone()),
            _ => None,
        });
    assert_eq!(message, Some(Some(TRAILERS.to_owned())));
}

#[test]
fn observe_mode_stops_at_would_have_merged_and_keeps_its_receipt() {
    let tick = Tick::new(vec![clean(1)]);
    let observe = "=> acme/app#1 observe: observe-only: would have merged as Quadrant A (set merge_enabled: true in env.yml to enable merging)";
    check(&tick, &observing(), &[AUDIT_1_A, RECEIPT_1, observe]);
    check(&tick, &observing(), &[AUDIT_1_A, observe]);
}

#[test]
fn a_blocked_pull_request_gets_one_diagnostic_updated_only_when_the_failures_change() {
    let tick = Tick::new(vec![clean(1).not_ready()]);
    let c1 = "C1: label 'ready-to-merge' not set on PR #1";
    check(
        &tick,
        &merging(),
        &[
            AUDIT_1_A,
            "comment acme/app#1 (id 1): Merge Gate L1 — merge blocked:",
            &format!("=> acme/app#1 blocked: {c1}"),
        ],
    );
    check(
        &tick,
        &merging(),
        &[AUDIT_1_A, &format!("=> acme/app#1 blocked: {c1}")],
    );
    // CI runs `test` again on the same head, and it fails: the latest run counts.
    let failed = CheckRun {
        id: None,
        name: "test".to_owned(),
        status: mp_core::context::CheckStatus::Completed,
        conclusion: Some(mp_core::context::CheckConclusion::Failure),
        started_at: None,
        completed_at: None,
        app_slug: Some("github-actions".to_owned()),
        output_summary: None,
    };
    tick.github()
        .add_check_run(&repo("acme/app"), &sha("a1"), failed)
        .expect("the head is in the world");
    check(
        &tick,
        &merging(),
        &[
            AUDIT_1_A,
            "update comment 1 on acme/app#1: Merge Gate L1 — merge blocked:",
            &format!(
                "=> acme/app#1 blocked: {c1}; C2: check 'test' did not succeed (conclusion: failure)"
            ),
        ],
    );
    let bodies = tick.pull("acme/app", 1).comments;
    assert_eq!(bodies.len(), 1, "one diagnostic comment, updated in place");
    assert!(
        bodies[0]
            .body
            .contains("- C2: check 'test' did not succeed")
    );
}

#[test]
fn a_quadrant_d_pull_request_awaiting_only_the_owner_opens_one_inbox_issue() {
    let tick = Tick::new(vec![
        clean(1).file("config/policy.yml", FileStatus::Modified),
    ]);
    check(
        &tick,
        &merging(),
        &[
            AUDIT_1_D,
            RECEIPT_1,
            "issue acme/governance#100 [decision:pending-owner]: Decision pending — PR acme/app#1",
            "=> acme/app#1 inbox: Quadrant D awaits the owner: opened decision inbox issue acme/governance#100",
        ],
    );
    check(
        &tick,
        &merging(),
        &[
            AUDIT_1_D,
            "=> acme/app#1 inbox: Quadrant D awaits the owner: decision inbox issue acme/governance#100 is already pending",
        ],
    );
}

#[test]
fn a_quadrant_d_pull_request_failing_more_than_c3_is_blocked_not_sent_to_the_inbox() {
    let tick = Tick::new(vec![
        clean(1)
            .not_ready()
            .file("config/policy.yml", FileStatus::Modified),
    ]);
    check(
        &tick,
        &merging(),
        &[
            AUDIT_1_D,
            "comment acme/app#1 (id 1): Merge Gate L1 — merge blocked:",
            "=> acme/app#1 blocked: C1: label 'ready-to-merge' not set on PR #1; C3: owner approval missing (quadrant=D)",
        ],
    );
}

#[test]
fn an_owner_approval_applied_by_hand_is_receipted_and_honoured_the_same_tick() {
    let tick = Tick::new(vec![
        clean(1)
            .approved_a()
            .file("config/policy.yml", FileStatus::Modified),
    ]);
    check(
        &tick,
        &merging(),
        &[
            AUDIT_1_D,
            "comment acme/app#1 (id 1): Merge Gate: recorded `decision:approved-A` for head `a100000`; this receipt holds for that head only.",
            "comment acme/app#1 (id 2): Merge Gate: recorded `ready-to-merge` for head `a100000`; this receipt holds for that head only.",
            &merge_line(1),
            &merged_outcome(1, "D"),
        ],
    );
}

#[test]
fn the_race_guard_updates_the_branch_instead_of_merging_when_main_moved() {
    let tick = Tick::new(vec![clean(1)]);
    // Someone pushes `e…` on `main` once the tick has read it at `f…`.
    tick.push_on_main_once_read(sha("e"));
    let update = commit_sha(&repo("acme/app"), "update branch of #1");
    check(
        &tick,
        &merging(),
        &[
            AUDIT_1_A,
            RECEIPT_1,
            &format!(
                "update branch acme/app#1: head {} on base e000000",
                update.short()
            ),
            "=> acme/app#1 race-rebased: main moved to e000000 after the gate checked base f000000: branch update requested; no merge this tick",
        ],
    );
}

#[test]
fn unreadable_comments_skip_the_pull_request_before_any_write() {
    let tick = Tick::new(vec![clean(1), clean(2)]);
    tick.fail(failing(
        Endpoint::ListComments,
        1,
        unavailable("GET /issues/1/comments"),
    ));
    check(
        &tick,
        &merging(),
        &[
            "audit acme/app#2 @ a200000: A (6 votes)",
            "comment acme/app#2 (id 1): Merge Gate: recorded `ready-to-merge` for head `a200000`; this receipt holds for that head only.",
            &merge_line(2),
            "=> acme/app#1 skipped: approval receipts unavailable: GET /issues/1/comments: connection reset",
            &merged_outcome(2, "A"),
        ],
    );
}

#[test]
fn a_quadrant_b_merge_opens_the_audit_issue() {
    let tick = Tick::new(vec![clean(1).file("src/lib.rs", FileStatus::Modified)]);
    check(
        &tick,
        &merging(),
        &[
            "audit acme/app#1 @ a100000: B (6 votes)",
            RECEIPT_1,
            &merge_line(1),
            "issue acme/governance#100 [decision:auto-approved-critical-reversible]: Auto-approved (B) — acme/app#1",
            &merged_outcome(1, "B"),
        ],
    );
}

#[test]
fn a_quadrant_c_merge_opens_the_audit_issue_but_observe_mode_does_not() {
    let tick = Tick::new(vec![clean(1).file("docs/old.md", FileStatus::Removed)]);
    check(
        &tick,
        &observing(),
        &[
            "audit acme/app#1 @ a100000: C (6 votes)",
            RECEIPT_1,
            "=> acme/app#1 observe: observe-only: would have merged as Quadrant C (set merge_enabled: true in env.yml to enable merging)",
        ],
    );
    check(
        &tick,
        &merging(),
        &[
            "audit acme/app#1 @ a100000: C (6 votes)",
            &merge_line(1),
            "issue acme/governance#100 [decision:auto-approved-irreversible-non-critical]: Auto-approved (C) — acme/app#1",
            &merged_outcome(1, "C"),
        ],
    );
}

#[test]
fn a_required_check_without_runs_is_missing_before_the_report_timeout() {
    let tick = Tick::new(vec![
        clean(1)
            .check("test", "none")
            .committed("2026-03-01T11:30:00Z"),
    ]);
    check(
        &tick,
        &merging(),
        &[
            AUDIT_1_A,
            RECEIPT_1,
            "=> acme/app#1 waiting: waiting for required checks on head a100000: C2: required check 'test' is missing",
        ],
    );
}

#[test]
fn a_required_check_without_runs_is_named_never_reported_after_the_timeout() {
    let tick = Tick::new(vec![clean(1).check("test", "none")]);
    let report = check(
        &tick,
        &merging(),
        &[
            AUDIT_1_A,
            RECEIPT_1,
            "comment acme/app#1 (id 2): Merge Gate L1 — merge blocked:",
            "=> acme/app#1 blocked: C2: required check 'test' has not reported 120 min after the head commit a100000 (timeout 60 min); it may never run: check the workflow triggers and the check name",
        ],
    );
    let codes: Vec<&str> = report.outcomes[0]
        .gate
        .as_ref()
        .map(|g| g.blocking().map(|r| r.code()).collect())
        .unwrap_or_default();
    assert_eq!(codes, ["check_never_reported"]);
}

#[test]
fn every_classified_pull_request_gets_exactly_one_audit_record() {
    let tick = Tick::new(vec![
        clean(1),
        clean(2).not_ready(),
        clean(3).file("config/x.yml", FileStatus::Modified),
    ]);
    let report = check(
        &tick,
        &observing(),
        &[
            AUDIT_1_A,
            RECEIPT_1,
            "audit acme/app#2 @ a200000: A (6 votes)",
            "comment acme/app#2 (id 2): Merge Gate L1 — merge blocked:",
            "audit acme/app#3 @ a300000: D (6 votes)",
            "comment acme/app#3 (id 3): Merge Gate: recorded `ready-to-merge` for head `a300000`; this receipt holds for that head only.",
            "issue acme/governance#100 [decision:pending-owner]: Decision pending — PR acme/app#3",
            "=> acme/app#1 observe: observe-only: would have merged as Quadrant A (set merge_enabled: true in env.yml to enable merging)",
            "=> acme/app#2 blocked: C1: label 'ready-to-merge' not set on PR #2",
            "=> acme/app#3 inbox: Quadrant D awaits the owner: opened decision inbox issue acme/governance#100",
        ],
    );
    // Every REST call of the tick spent one call of the budget: 28 of them.
    assert_eq!(
        report.metrics.to_json(),
        serde_json::json!({
            "merged": 0, "observe": 1, "inbox": 1, "blocked": 1, "race-rebased": 0,
            "skipped": 0, "ignored": 0, "waiting": 0, "classified": 3, "receipts_written": 2, "comments_posted": 1,
            "inbox_opened": 1, "audit_issues_opened": 0, "rate_limited": false,
            "rate_limit_remaining": 4293, "graphql_remaining": null,
            "skills_loaded": 0, "skill_load_failed": 0, "skill_failures": 0,
        })
    );
}

#[test]
fn an_audit_log_that_refuses_the_record_skips_the_pull_request_without_writes() {
    let tick = Tick::new(vec![clean(1)]);
    tick.setup(|s| s.audit_error = Some("disk full".to_owned()));
    check(
        &tick,
        &merging(),
        &["=> acme/app#1 skipped: classification not acted on: audit log append failed: disk full"],
    );
}

#[test]
fn a_head_that_moves_under_the_merge_skips_and_a_refused_merge_blocks() {
    let tick = Tick::new(vec![clean(1), clean(2)]);
    tick.fail(failing(
        Endpoint::MergePull,
        1,
        GitHubError::HeadMoved {
            pr: "acme/app#1".to_owned(),
            expected: sha("a1"),
        },
    ));
    tick.fail(failing(
        Endpoint::MergePull,
        2,
        GitHubError::NotMergeable {
            pr: "acme/app#2".to_owned(),
            message: "merge conflict".to_owned(),
        },
    ));
    check(
        &tick,
        &merging(),
        &[
            AUDIT_1_A,
            RECEIPT_1,
            "audit acme/app#2 @ a200000: A (6 votes)",
            "comment acme/app#2 (id 2): Merge Gate: recorded `ready-to-merge` for head `a200000`; this receipt holds for that head only.",
            "comment acme/app#2 (id 3): Merge Gate L1 — merge blocked:",
            "=> acme/app#1 skipped: head of acme/app#1 moved: merge precondition a100000000000000000000000000000000000000 no longer holds; re-evaluated on the next tick",
            "=> acme/app#2 blocked: GitHub refused the merge: merge conflict",
        ],
    );
}

#[test]
fn a_merge_whose_answer_is_lost_is_confirmed_from_github_or_skipped() {
    let lost = GitHubError::Unavailable {
        route: "PUT /repos/{o}/{r}/pulls/{n}/merge".to_owned(),
        message: "connection closed before the answer".to_owned(),
    };
    let tick = |failure: Failure| {
        let tick = Tick::new(vec![clean(1)]);
        tick.fail(failure);
        tick.run(&config(), &merging()).expect("the tick runs")
    };
    // Applied, answer lost: GitHub's record says merged, so it counts, with a warning.
    let applied = tick(failing(Endpoint::MergePull, 1, lost.clone()).answer_lost());
    assert_eq!(
        format!("=> {}", applied.outcomes[0]),
        merged_outcome(1, "A")
    );
    assert!(
        applied
            .warnings
            .iter()
            .any(|w| w.starts_with("acme/app#1: the answer to the merge was lost")),
        "{:?}",
        applied.warnings
    );
    // Not applied: skipped, nothing claimed.
    let refused = tick(failing(Endpoint::MergePull, 1, lost));
    assert_eq!(
        refused.outcomes[0].to_string(),
        "acme/app#1 skipped: merge failed: PUT /repos/{o}/{r}/pulls/{n}/merge: connection closed before the answer"
    );
    assert!(
        !refused
            .warnings
            .iter()
            .any(|w| w.contains("merge was lost")),
        "{:?}",
        refused.warnings
    );
}

#[test]
fn the_primary_rate_limit_ends_the_pull_request_path_early() {
    let tick = Tick::new(vec![clean(1), clean(2)]);
    tick.fail(failing(
        Endpoint::ListPullFiles,
        1,
        GitHubError::RateLimited { remaining: 0 },
    ));
    let report = check(
        &tick,
        &merging(),
        &[
            "=> acme/app#1 skipped: cannot read the pull request: rate limit exhausted: 0 calls left",
        ],
    );
    assert!(report.metrics.rate_limited);
    assert_eq!(
        report.warnings.last().map(String::as_str),
        Some(
            "primary rate limit reached at acme/app#1; the rest of the pull requests wait for the next tick"
        )
    );
}

#[test]
fn audit_only_and_filtered_out_repositories_are_not_gated() {
    let tick = Tick::new(vec![clean(1).in_repo("acme/old"), clean(2)]);
    check::<&str>(&tick, &merging().with_repos(vec![repo("acme/other")]), &[]);
    check(
        &tick,
        &observing(),
        &[
            "audit acme/app#2 @ a200000: A (6 votes)",
            "comment acme/app#2 (id 1): Merge Gate: recorded `ready-to-merge` for head `a200000`; this receipt holds for that head only.",
            "=> acme/app#2 observe: observe-only: would have merged as Quadrant A (set merge_enabled: true in env.yml to enable merging)",
        ],
    );
}

#[test]
fn an_unknown_bot_user_fails_the_tick_closed() {
    let tick = Tick::new(vec![clean(1)]);
    tick.fail(Failure::on(
        Endpoint::GetApp,
        GitHubError::Unavailable {
            route: "GET /app".to_owned(),
            message: "bad credentials".to_owned(),
        },
    ));
    let error = tick
        .run(&config(), &merging())
        .expect_err("no bot user, no tick");
    assert_eq!(
        error.to_string(),
        "cannot learn the bot user, failing closed (receipts cannot be recognised): GET /app: bad credentials"
    );
    assert_eq!(tick.take_log(), Vec::<String>::new());
}

#[test]
fn unsigned_receipts_and_a_mismatching_app_slug_are_warned_about() {
    let mut world = world_of(&[]);
    world.bot_slug = "other-app".to_owned();
    let tick = Tick::serving(world, Setup::default());
    let report = check::<&str>(&tick, &merging(), &[]);
    assert_eq!(
        report.warnings,
        [
            mp_core::approval::UNSIGNED_RECEIPTS_WARNING,
            "env.yml bot_app_slug 'mp-gate' does not match the App's bot user 'other-app[bot]'; the bot user is used",
        ]
    );
}

#[test]
fn signed_receipts_and_inbox_bodies_verify_on_the_next_tick() {
    let key = ReceiptKey::new(b"test-key".to_vec()).expect("non-empty key");
    let options = merging().with_receipt_key(key.clone());
    let tick = Tick::new(vec![
        clean(1).file("config/policy.yml", FileStatus::Modified),
    ]);
    check(
        &tick,
        &options,
        &[
            AUDIT_1_D,
            RECEIPT_1,
            "issue acme/governance#100 [decision:pending-owner]: Decision pending — PR acme/app#1",
            "comment acme/governance#100 (id 2): Merge Gate: this question is signed for `acme/governance#100`: pull request `acme/app#1` at head `a100000`.",
            "=> acme/app#1 inbox: Quadrant D awaits the owner: opened decision inbox issue acme/governance#100",
        ],
    );
    // The signed receipt is read back: nothing is re-written.
    check(
        &tick,
        &options,
        &[
            AUDIT_1_D,
            "=> acme/app#1 inbox: Quadrant D awaits the owner: decision inbox issue acme/governance#100 is already pending",
        ],
    );
    let issue = tick.github().read(|world| {
        world
            .repo(&repo("acme/governance"))
            .and_then(|r| r.issue(PrNumber::new(100)))
            .cloned()
            .expect("the inbox issue")
    });
    let body = issue.body.clone();
    let head = sha("a1");
    let nonce = inbox_nonce("acme/app#1", &head, now());
    assert_eq!(nonce.len(), 32);
    assert_eq!(marker_value(&body, NONCE_MARKER), Some(nonce.as_str()));
    assert_eq!(marker_value(&body, INBOX_HEAD_MARKER), Some(head.as_str()));
    assert_eq!(
        marker_value(&body, MAC_MARKER),
        None,
        "the body itself is not signed"
    );
    let signature = issue
        .comments
        .first()
        .map(|c| c.body.clone())
        .expect("the question is signed in a comment");
    let mac = marker_value(&signature, SIGNATURE_MARKER).expect("a signature marker");
    assert!(verify_mac_hex(
        &key,
        &[
            "decision-inbox-question",
            "acme/governance",
            "100",
            "acme/app",
            "1",
            head.as_str(),
            &nonce
        ],
        mac
    ));
    assert_eq!(
        referenced_pr(&body),
        Some((repo("acme/app"), PrNumber::new(1)))
    );
    assert!(body.contains("- Reasoning: config/policy.yml"), "{body}");
}

#[test]
fn a_dry_run_plans_the_writes_and_performs_none() {
    let tick = Tick::new(vec![clean(1), clean(2).not_ready()]);
    let dry = DryRun::new(&tick.port);
    let report =
        block_on(run_pr_path(&dry, &tick, &config(), &merging(), now())).expect("the tick runs");
    assert_eq!(
        tick.take_log(),
        [AUDIT_1_A, "audit acme/app#2 @ a200000: A (6 votes)"],
        "only the audit log is written"
    );
    let planned: Vec<String> = dry
        .planned_writes()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        planned,
        [
            "would comment on acme/app#1: Merge Gate: recorded `ready-to-merge` for head `a100000`; this receipt holds for that head only.",
            "would merge acme/app#1 pinned to head a100000 (squash)",
            "would comment on acme/app#2: Merge Gate L1 — merge blocked:",
        ]
    );
    assert!(matches!(
        dry.planned_writes()[1],
        PlannedWrite::MergePull { .. }
    ));
    assert_eq!(
        report.outcomes[0].action,
        PrAction::Merged { sha: sha("a1") }
    );
    assert!(!tick.pull("acme/app", 1).merged, "nothing was merged");
}

#[test]
fn reads_after_a_dry_run_s_planned_writes_see_them() {
    let tick = Tick::new(vec![clean(1), clean(2).not_ready()]);
    let dry = DryRun::new(&tick.port).at(now());
    block_on(run_pr_path(&dry, &tick, &config(), &merging(), now())).expect("the tick runs");
    let app = repo("acme/app");
    // The planned merge closed #1 and moved main to the head it was pinned to.
    let pull = block_on(dry.pull(&app, PrNumber::new(1))).expect("a pull request");
    assert!(pull.merged && pull.merge_commit == Some(sha("a1")));
    let open = block_on(dry.open_pulls(&app)).expect("the open pull requests");
    assert_eq!(open.iter().map(|p| p.number.get()).collect::<Vec<_>>(), [2]);
    assert_eq!(
        block_on(dry.branch_head(&app, "main")).expect("main"),
        sha("a1")
    );
    // The planned receipt reads back, dated now and by nobody GitHub knows of yet.
    let comments = block_on(dry.comments(&app, PrNumber::new(1))).expect("comments");
    let receipt = comments.last().expect("the planned receipt");
    assert!(
        receipt.body.starts_with("Merge Gate: recorded"),
        "{receipt:?}"
    );
    assert_eq!(receipt.created_at, Some(now()));
    // A planned label is on the pull request and in its events; GitHub saw none of it.
    block_on(dry.add_labels(&app, PrNumber::new(2), &["decision:approved-A".to_owned()]))
        .expect("planned");
    let two = block_on(dry.pull(&app, PrNumber::new(2))).expect("a pull request");
    assert!(two.labels.contains(&"decision:approved-A".to_owned()));
    let events = block_on(dry.label_events(&app, PrNumber::new(2))).expect("events");
    assert_eq!(events.last().map(|e| e.at), Some(Some(now())));
    assert!(!tick.pull("acme/app", 1).merged, "nothing was merged");
    assert!(
        !tick
            .pull("acme/app", 2)
            .labels
            .iter()
            .any(|l| l.starts_with("decision:")),
        "nothing was labelled"
    );
    assert_eq!(tick.github().actions(), Vec::new(), "GitHub saw no write");
}

/// The inbox closes a rejected pull request before the pull-request path lists the open
/// ones; in a dry run the planned close must hide it the same way, or the dry run evaluates
/// (and may plan to merge) a pull request the tick would have closed.
#[test]
fn a_pull_request_a_dry_run_plans_to_close_is_closed_for_later_reads() {
    let tick = Tick::new(vec![clean(1), clean(2)]);
    let dry = DryRun::new(&tick.port).at(now());
    let app = repo("acme/app");
    block_on(dry.close_issue(&app, PrNumber::new(1))).expect("planned");
    let pull = block_on(dry.pull(&app, PrNumber::new(1))).expect("a pull request");
    assert_eq!(pull.state, mp_core::context::PrState::Closed);
    assert!(!pull.merged, "closed, not merged");
    let open = block_on(dry.open_pulls(&app)).expect("the open pull requests");
    assert_eq!(open.iter().map(|p| p.number.get()).collect::<Vec<_>>(), [2]);
    let listed = block_on(dry.open_pulls_with_reads(&app)).expect("the open pull requests");
    assert_eq!(
        listed
            .iter()
            .map(|l| l.pull.number.get())
            .collect::<Vec<_>>(),
        [2]
    );
    // The pull-request path then evaluates #2 only.
    let report =
        block_on(run_pr_path(&dry, &tick, &config(), &merging(), now())).expect("the tick runs");
    let evaluated: Vec<&str> = report.outcomes.iter().map(|o| o.pr.as_str()).collect();
    assert_eq!(evaluated, ["acme/app#2"]);
    assert_eq!(tick.github().actions(), Vec::new(), "GitHub saw no write");
    assert_eq!(
        tick.pull("acme/app", 1).state,
        mp_core::context::PrState::Open
    );
}

#[test]
fn explain_shows_the_same_tick_outcome_without_writing() {
    let tick = Tick::new(vec![clean(1)]);
    let config = config();
    let options = merging();
    let setup = TickSetup::new(&config, &options, login(BOT)).expect("setup");
    let pull = block_on(tick.port.pull(&repo("acme/app"), PrNumber::new(1))).expect("a pull");
    let evaluation =
        block_on(evaluate_pr(&tick.port, &setup, &pull, now())).expect("the reads succeed");
    assert_eq!(tick.take_log(), Vec::<String>::new());
    let plans: Vec<&str> = evaluation.receipt_plans.iter().map(|p| p.code()).collect();
    assert_eq!(plans, ["first_bind"]);
    assert_eq!(evaluation.route(), Route::Mergeable);
    assert_eq!(
        evaluation.gate.results[0].to_string(),
        "C1: label 'ready-to-merge' applied by alice and recorded for head a100000; bound by: branch creation of a100000 at 2026-03-01T10:00:00Z is the last head update before the label at 2026-03-01T11:00:00Z (GitHub activity log)"
    );
}

#[test]
fn long_details_are_cut_to_one_line_of_200_characters() {
    let outcome = PrOutcome::new(
        "acme/app#1",
        PrAction::Blocked,
        format!("x\n{}", "y".repeat(300)),
    );
    assert_eq!(outcome.detail.chars().count(), MAX_DETAIL_CHARS);
    assert!(outcome.detail.starts_with("x y"));
    assert!(outcome.detail.ends_with("y…"));
}

#[test]
fn skills_overrides_and_repository_settings_shape_the_evaluation() {
    let config = config_with(&[
        (
            mp_core::config::SKILLS_FILE,
            "disabled: [classifier_path_default, validator_agent_registry]\n",
        ),
        (
            mp_core::config::PROJECTS_FILE,
            "governance_repo: acme/governance\nsupervised_repos: [acme/app]\nrepo_overrides:\n  acme/app:\n    required_checks: [build]\n",
        ),
        (
            mp_core::config::ENV_FILE,
            "bot_app_slug: mp-gate\nrequired_checks: [test]\ncheck_report_timeout_minutes: 30\n",
        ),
        (
            mp_core::config::AGENT_REGISTRY_FILE,
            "tools: [codex]\nmodels:\n  codex: [gpt-5]\n",
        ),
    ]);
    let options = TickOptions::from_config(&config);
    let setup = TickSetup::new(&config, &options, login(BOT)).expect("setup");
    let tick = Tick::new(vec![
        clean(1).file("config/policy.yml", FileStatus::Modified),
    ]);
    let pull = block_on(tick.port.pull(&repo("acme/app"), PrNumber::new(1))).expect("a pull");
    let evaluation =
        block_on(evaluate_pr(&tick.port, &setup, &pull, now())).expect("the reads succeed");
    let rules: Vec<&str> = evaluation
        .verdict
        .votes
        .iter()
        .map(|v| v.rule.code())
        .collect();
    assert_eq!(
        (evaluation.verdict.quadrant, rules.len()),
        (mp_core::quadrant::Quadrant::A, 5),
        "the disabled path rule does not vote: {rules:?}"
    );
    let codes: Vec<&str> = evaluation.gate.results.iter().map(|r| r.code()).collect();
    assert_eq!(
        codes,
        [
            "ready_to_merge",
            "check_never_reported",
            "quadrant_auto_approved",
            "base_current",
            "trailers_well_formed",
            "no_judgment",
        ],
        "the repository's own required check, no L4 result"
    );
    assert_eq!(evaluation.route(), Route::Blocked);
}

#[test]
fn a_pull_selection_visits_only_the_pull_requests_it_names() {
    let tick = Tick::new(vec![clean(1), clean(2), clean(3)]);
    let mut only = PullSelection::default();
    only.add_number(repo("acme/app"), PrNumber::new(2));
    only.add_head(repo("acme/app"), tick.pull("acme/app", 3).head_sha);
    let report = tick
        .run(&config(), &observing().with_pulls(only))
        .expect("the tick runs");
    let visited: Vec<&str> = report.outcomes.iter().map(|o| o.pr.as_str()).collect();
    assert_eq!(visited, ["acme/app#2", "acme/app#3"]);

    // A selection naming another repository lists no pull requests of this one.
    let mut elsewhere = PullSelection::default();
    elsewhere.add_number(repo("acme/other"), PrNumber::new(1));
    tick.take_log();
    tick.github().log_calls();
    let report = tick
        .run(&config(), &observing().with_pulls(elsewhere))
        .expect("the tick runs");
    assert!(report.outcomes.is_empty());
    assert_eq!(tick.take_log(), Vec::<String>::new());
    let listed: Vec<Call> = tick
        .github()
        .take_call_log()
        .into_iter()
        .filter(|c| c.endpoint == Endpoint::ListPulls)
        .collect();
    assert_eq!(listed, Vec::new(), "no pull request listed");

    // The ready ones: those carrying an approval label. The owner takes #2's off.
    tick.github().edit_world(|world| {
        let app = world.repo_mut(&repo("acme/app")).expect("acme/app");
        let two = app.pull_mut(PrNumber::new(2)).expect("#2");
        two.labels.clear();
        two.events.push(LabelEvent {
            action: LabelAction::Unlabeled,
            label: READY_TO_MERGE.to_owned(),
            actor: Some(login(OWNER)),
            at: Some(now()),
        });
    });
    let mut ready = PullSelection::default();
    ready.add_ready(repo("acme/app"));
    let report = tick
        .run(&config(), &observing().with_pulls(ready))
        .expect("the tick runs");
    let visited: Vec<&str> = report.outcomes.iter().map(|o| o.pr.as_str()).collect();
    assert_eq!(visited, ["acme/app#1", "acme/app#3"]);
}

/// Five pull requests whose reads wait once each, so the reads in flight overlap.
fn overlapping() -> Tick {
    Tick::serving(
        world_of(&(1..=5).map(clean).collect::<Vec<_>>()),
        Setup {
            holding: true,
            ..Setup::default()
        },
    )
}

#[test]
fn reads_overlap_up_to_the_configured_limit_and_never_beyond() {
    let mut reads = Vec::new();
    for limit in [1, 3, 8, 64] {
        let tick = overlapping();
        let options = merging()
            .with_read_concurrency(ReadConcurrency::new(limit).expect("the limit is in range"));
        tick.run(&config(), &options).expect("the tick runs");
        // Five labelled pull requests: commits, files, check runs, labels, the head
        // branch's activity, the label's record and comments each, plus `main`: 36 reads
        // before any write.
        let max = tick.port.max_in_flight.load(Ordering::SeqCst);
        assert_eq!(max, limit.min(36), "{limit} in flight");
        reads.push(tick.port.reads.load(Ordering::SeqCst));
    }
    assert!(
        reads.windows(2).all(|w| w[0] == w[1]),
        "reads per limit: {reads:?}"
    );
}

#[test]
fn the_next_repository_is_read_while_this_one_writes_and_decides_the_same() {
    let both_gated = config_with(&[(
        mp_core::config::PROJECTS_FILE,
        "governance_repo: acme/governance\nsupervised_repos: [acme/app, acme/old]\n",
    )]);
    let run = |limit: ReadConcurrency| {
        let tick = Tick::serving(
            world_of(&[clean(1), clean(2).in_repo("acme/old")]),
            Setup {
                holding: true,
                ..Setup::default()
            },
        );
        tick.github().log_calls();
        let options = TickOptions::from_config(&both_gated)
            .with_merge_mode(MergeMode::Observe)
            .with_read_concurrency(limit);
        let report = tick.run(&both_gated, &options).expect("the tick runs");
        let outcomes: Vec<String> = report.outcomes.iter().map(ToString::to_string).collect();
        (tick.take_log(), tick.github().take_call_log(), outcomes)
    };
    let (serial, serial_calls, serial_outcomes) = run(ReadConcurrency::SERIAL);
    let (parallel, parallel_calls, parallel_outcomes) = run(ReadConcurrency::DEFAULT);
    assert_eq!(parallel_outcomes, serial_outcomes);
    assert_eq!(parallel, serial, "the same writes in order");
    // Where acme/old is listed, against acme/app#1's first write.
    let order = |calls: &[Call]| {
        let listed = calls
            .iter()
            .position(|c| c.request == "GET /repos/acme/old/pulls");
        let written = calls.iter().position(|c| {
            !c.request.starts_with("GET ")
                && c.repo == Some(repo("acme/app"))
                && c.values.first().map(String::as_str) == Some("1")
        });
        listed.zip(written).expect("both happen")
    };
    // One at a time: acme/old is listed after acme/app's writes; with reads in flight,
    // before acme/app's first write.
    let (listed, written) = order(&serial_calls);
    assert!(listed > written, "{serial_calls:?}");
    let (listed, written) = order(&parallel_calls);
    assert!(listed < written, "{parallel_calls:?}");
}

#[test]
fn a_rate_limit_stops_the_reads_not_yet_started() {
    let tick = Tick::new((1..=5).map(clean).collect());
    tick.fail(failing(
        Endpoint::ListPullCommits,
        1,
        GitHubError::Throttled {
            retry_after_secs: 60,
        },
    ));
    let options = merging().with_read_concurrency(ReadConcurrency::SERIAL);
    let report = tick.run(&config(), &options).expect("the tick runs");
    // `main`, then #1's commits: the secondary limit; nothing else reaches GitHub.
    assert_eq!(tick.port.reads.load(Ordering::SeqCst), 2);
    assert!(tick.take_log().is_empty());
    assert_eq!(report.outcomes.len(), 1);
    assert!(report.metrics.rate_limited);
}

#[test]
fn no_read_starts_under_the_pull_request_path_s_reserve() {
    // Every REST call spends one; the label's record is GraphQL's and spends none of it.
    // When the reads of the repository start, nine calls are left above the reserve.
    let tick = Tick::new((1..=5).map(clean).collect());
    tick.github()
        .drop_rate_limit_at(Endpoint::GetBranch, &repo("acme/app"), PR_PATH_RESERVE + 9);
    let options = merging().with_read_concurrency(ReadConcurrency::SERIAL);
    let report = tick.run(&config(), &options).expect("the tick runs");
    // `main` and #1's seven parts (six of them REST), then three of #2's before the
    // reserve (11 reads), and the race guard's re-read of `main` before #1 merges; #2
    // stops the path.
    assert_eq!(tick.port.reads.load(Ordering::SeqCst), 12);
    let outcomes: Vec<String> = report.outcomes.iter().map(ToString::to_string).collect();
    assert_eq!(outcomes.len(), 2, "{outcomes:?}");
    assert!(outcomes[0].starts_with("acme/app#1 merged"), "{outcomes:?}");
    assert_eq!(
        outcomes[1],
        "acme/app#2 skipped: cannot read the pull request: rate limit exhausted: 399 calls left"
    );
    assert!(report.metrics.rate_limited);
}

#[test]
fn a_question_label_counts_only_when_the_bot_applied_it_last() {
    use mp_core::context::{LabelAction, LabelEvent};
    let event = |action, who: Option<&str>| LabelEvent {
        action,
        label: super::inbox::PENDING_OWNER.to_owned(),
        actor: who.map(login),
        at: Some(now()),
    };
    let bot = login(BOT);
    let labelled_by_bot = super::inbox::labelled_by_bot;
    assert!(labelled_by_bot(
        &[event(LabelAction::Labeled, Some(BOT))],
        &bot
    ));
    assert!(!labelled_by_bot(&[], &bot));
    assert!(!labelled_by_bot(
        &[event(LabelAction::Labeled, Some("codex-agent"))],
        &bot
    ));
    assert!(!labelled_by_bot(&[event(LabelAction::Labeled, None)], &bot));
    // Removed and put back by an agent: the last `labeled` decides.
    assert!(!labelled_by_bot(
        &[
            event(LabelAction::Labeled, Some(BOT)),
            event(LabelAction::Unlabeled, Some("codex-agent")),
            event(LabelAction::Labeled, Some("codex-agent")),
        ],
        &bot
    ));
}

#[test]
fn a_403_that_is_not_a_rate_limit_names_the_missing_permission() {
    let refused = |route: &str, message: &str| {
        super::permission_refusal(&GitHubError::Status {
            route: route.to_owned(),
            status: 403,
            message: message.to_owned(),
        })
    };
    assert_eq!(
        refused(
            "POST /repos/{o}/{r}/issues/{n}/comments",
            "Resource not accessible by integration"
        )
        .as_deref(),
        Some(
            "GitHub refused `POST /repos/{o}/{r}/issues/{n}/comments` (HTTP 403: Resource not accessible by integration): mp lacks the permission `issues: write` or `pull_requests: write`; grant it to the App's installation (or the token) and check with `mp doctor`"
        )
    );
    let merge = refused(
        "PUT /repos/{o}/{r}/pulls/{n}/merge",
        "Resource not accessible by integration",
    )
    .expect("a refusal");
    assert!(merge.contains("`contents: write`"), "{merge}");
    // GitHub's own header, when the adapter kept it, wins over the route's guess.
    let header = refused(
        "POST /repos/{o}/{r}/issues/{n}/comments",
        "Resource not accessible by integration (accepted permissions: issues=write; pull_requests=write)",
    )
    .expect("a refusal");
    assert!(
        header.contains("`issues=write; pull_requests=write` (one of these sets)"),
        "{header}"
    );
    // Rate limits and other statuses are not permission refusals.
    for error in [
        GitHubError::RateLimited { remaining: 0 },
        GitHubError::Throttled {
            retry_after_secs: 60,
        },
        GitHubError::Status {
            route: "PUT /repos/{o}/{r}/pulls/{n}/merge".to_owned(),
            status: 422,
            message: "no".to_owned(),
        },
    ] {
        assert_eq!(super::permission_refusal(&error), None, "{error}");
    }
}
