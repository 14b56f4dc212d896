//! Tests for the diagnostic comment and its dedupe.

use super::*;
use crate::gate::testkit::{BOT, Pr, comment, login, sha};
use crate::gate::{BaseEvidence, ConditionId, Evidence, PrRef, ReadyToMergeEvidence};
use crate::gate::{RegistryEvidence, TrailersEvidence};
use crate::severity::Severity;

fn report(results: Vec<ConditionResult>) -> GateReport {
    let mut report = GateReport::new(PrRef::of(&Pr::new().build()));
    report.extend(results);
    report
}

fn stale(severity: Severity) -> ConditionResult {
    ConditionResult::fail(
        ConditionId::C4,
        severity,
        BaseEvidence::BaseStale {
            base: sha("abc1234"),
            main: sha("def5678"),
        },
    )
}

fn registry(severity: Severity) -> ConditionResult {
    ConditionResult::fail(
        ConditionId::AgentRegistry,
        severity,
        RegistryEvidence::RegistryMismatch {
            sha: sha("1"),
            tool: "cursor".to_owned(),
            model: Some("gpt-5".to_owned()),
        },
    )
}

#[track_caller]
fn check(results: Vec<ConditionResult>, expected: Option<&str>) {
    assert_eq!(render_diagnostic(&report(results)).as_deref(), expected);
}

#[test]
fn nothing_blocking_means_no_diagnostic() {
    check(
        vec![
            ConditionResult::pass(
                ConditionId::C5,
                Severity::P0,
                TrailersEvidence::TrailersWellFormed {
                    commits: 1,
                    mp_updates: 0,
                },
            ),
            registry(Severity::P2),
        ],
        None,
    );
}

#[test]
fn blocking_lines_then_warnings_then_the_closing_line() {
    check(
        vec![
            ConditionResult::fail(
                ConditionId::C1,
                Severity::P0,
                ReadyToMergeEvidence::LabelMissing {
                    label: "ready-to-merge".to_owned(),
                    pr: crate::ids::PrNumber::new(7),
                },
            ),
            stale(Severity::P0),
            registry(Severity::P2),
        ],
        Some(
            "Merge Gate L1 — merge blocked:\n\
             - C1: label 'ready-to-merge' not set on PR #7\n\
             - C4: PR base abc1234 is stale (main HEAD is def5678). Rebase the PR.\n\
             \n\
             Warnings (non-blocking):\n\
             - L4: commit 1000000 declares Agent-Tool 'cursor' / Agent-Model 'gpt-5', not present in the agent registry\n\
             \n\
             Fix the blocking items above; the bot re-evaluates this pull request on its next tick.\n",
        ),
    );
}

#[test]
fn p1_blocks_and_p3_is_recorded_but_not_shown() {
    check(
        vec![stale(Severity::P1), registry(Severity::P3)],
        Some(
            "Merge Gate L1 — merge blocked:\n\
             - C4: PR base abc1234 is stale (main HEAD is def5678). Rebase the PR.\n\
             \n\
             Fix the blocking items above; the bot re-evaluates this pull request on its next tick.\n",
        ),
    );
}

#[test]
fn user_messages_stay_on_one_line() {
    check(
        vec![ConditionResult::fail(
            ConditionId::User("no_todo".to_owned()),
            Severity::P1,
            Evidence::UserValidator {
                message: "found TODO\nin src/lib.rs".to_owned(),
            },
        )],
        Some(
            "Merge Gate L1 — merge blocked:\n\
             - no_todo: found TODO in src/lib.rs\n\
             \n\
             Fix the blocking items above; the bot re-evaluates this pull request on its next tick.\n",
        ),
    );
}

#[test]
fn huge_reports_are_capped_with_a_count() {
    let body = render_diagnostic(&report(vec![stale(Severity::P0); 2000])).expect("blocked");
    assert!(body.len() <= MAX_BODY_BYTES, "{} bytes", body.len());
    let shown = body.lines().filter(|l| l.starts_with("- C4:")).count();
    assert!(body.contains(&format!(
        "- … and {} more blocking items (see the audit log)\n",
        2000 - shown
    )));
    assert!(body.ends_with(&format!("{CLOSING_LINE}\n")));
}

#[test]
fn all_pass_text_names_the_quadrant() {
    assert_eq!(
        render_all_pass(Quadrant::B),
        "Merge Gate L1 — all conditions satisfied (Quadrant: B)."
    );
}

mod dedupe {
    use super::*;

    #[track_caller]
    fn check(previous: Option<&str>, new: &str, post: bool) {
        assert_eq!(should_post(previous, new), post);
    }

    #[test]
    fn first_diagnostic_is_posted() {
        check(None, "Merge Gate L1 — merge blocked:\n- x\n", true);
    }

    #[test]
    fn identical_text_is_not_reposted_despite_line_endings() {
        check(
            Some("Merge Gate L1 — merge blocked:\r\n- x\r\n"),
            "Merge Gate L1 — merge blocked:\n- x\n",
            false,
        );
    }

    #[test]
    fn changed_text_is_posted() {
        check(
            Some("Merge Gate L1 — merge blocked:\n- x\n"),
            "Merge Gate L1 — merge blocked:\n- y\n",
            true,
        );
    }

    #[test]
    fn only_the_bots_own_gate_comments_are_compared() {
        let comments = [
            comment(
                1,
                BOT,
                "Merge Gate L1 — merge blocked:\n- old",
                "2026-03-01T08:00:00Z",
            ),
            comment(
                2,
                BOT,
                "Merge Gate: recorded `ready-to-merge` ...",
                "2026-03-01T09:00:00Z",
            ),
            comment(
                3,
                "mallory",
                "Merge Gate L1 — all conditions satisfied",
                "2026-03-01T10:00:00Z",
            ),
        ];
        let latest = latest_diagnostic(&comments, &login(BOT)).map(|c| c.id.get());
        assert_eq!(latest, Some(1));
        assert_eq!(latest_diagnostic(&comments[1..], &login(BOT)), None);
    }
}
