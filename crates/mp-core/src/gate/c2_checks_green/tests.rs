//! Tests for C2.

use super::*;
use crate::gate::testkit::{Pr, at, good_commit, lines, policy};

const GA: Option<&str> = Some("github-actions");
/// When every case is evaluated: 30 minutes after the testkit's head commit date, so a
/// named check without runs is still waiting under the default 60-minute timeout.
const EVALUATED: &str = "2026-03-01T10:30:00Z";

fn named(names: &[&str]) -> GatePolicy {
    let mut policy = policy();
    policy.required_checks = names.iter().map(|n| (*n).to_owned()).collect();
    policy
}

#[track_caller]
fn check(pr: Pr, policy: &GatePolicy, expected: &[&str]) {
    assert_eq!(
        lines(&evaluate(&pr.build(), policy, at(EVALUATED))),
        expected
    );
}

#[test]
fn named_checks_green_from_the_expected_app_pass() {
    check(
        Pr::new()
            .check("build", "success", GA)
            .check("test", "success", GA)
            .check("lint", "failure", GA),
        &named(&["build", "test"]),
        &["pass | C2: required checks green: build, test"],
    );
}

#[test]
fn the_latest_run_of_a_name_decides() {
    // A flaky job that failed and passed on a re-run is green, as GitHub counts it.
    check(
        Pr::new()
            .check("test", "failure", GA)
            .check("test", "success", GA),
        &named(&["test"]),
        &["pass | C2: required checks green: test"],
    );
    // A job that passed and fails on a re-run is red.
    check(
        Pr::new()
            .check("test", "success", GA)
            .check("test", "failure", GA),
        &named(&["test"]),
        &["fail | C2: check 'test' did not succeed (conclusion: failure)"],
    );
    // A re-run still going is what the check waits for.
    check(
        Pr::new()
            .check("test", "success", GA)
            .check("test", "in_progress", GA),
        &named(&["test"]),
        &["fail | C2: check 'test' is not yet completed (status: in_progress)"],
    );
}

#[test]
fn latest_means_started_last_whatever_the_listing_order() {
    let mut pr = Pr::new()
        .check("test", "failure", GA)
        .check("test", "success", GA)
        .build();
    // The listed-later success started first: the failure is the latest run.
    pr.check_runs[0].started_at = Some(at("2026-03-01T10:20:00Z"));
    pr.check_runs[1].started_at = Some(at("2026-03-01T10:10:00Z"));
    assert_eq!(
        lines(&evaluate(&pr, &named(&["test"]), at(EVALUATED))),
        ["fail | C2: check 'test' did not succeed (conclusion: failure)"]
    );
    // A run without a start time counts as the newest (a re-run just queued).
    pr.check_runs[0].started_at = None;
    pr.check_runs[0].status = CheckStatus::Queued;
    pr.check_runs[0].conclusion = None;
    assert_eq!(
        lines(&evaluate(&pr, &named(&["test"]), at(EVALUATED))),
        ["fail | C2: check 'test' is not yet completed (status: queued)"]
    );
}

#[test]
fn neutral_and_skipped_do_not_count_for_named_checks() {
    for conclusion in ["neutral", "skipped"] {
        check(
            Pr::new().check("test", conclusion, GA),
            &named(&["test"]),
            &[&format!(
                "fail | C2: check 'test' did not succeed (conclusion: {conclusion})"
            )],
        );
    }
}

#[test]
fn every_problem_of_every_named_check_is_listed() {
    let mut policy = named(&["build", "test", "e2e"]);
    policy.allow_no_ci = true;
    check(
        Pr::new()
            .check("test", "completed", GA)
            .check("e2e", "success", Some("evil-ci"))
            .check("e2e", "success", None),
        &policy,
        &[
            "fail | C2: required check 'build' is missing",
            "fail | C2: check 'test' did not succeed (conclusion: none)",
            "fail | C2: required check 'e2e' was not published by the expected app 'github-actions' (published by: <missing app>, evil-ci). Treating as not yet green.",
        ],
    );
}

#[test]
fn runs_from_other_apps_neither_open_nor_block_the_gate() {
    // A green impostor run next to ours: counted for nothing, reported as a warning.
    check(
        Pr::new()
            .check("test", "success", Some("evil-ci"))
            .check("test", "success", GA),
        &named(&["test"]),
        &[
            "pass | C2: required checks green: test",
            "advisory P2 | C2: required check 'test' also has runs from evil-ci — ignored: only runs from 'github-actions' count",
        ],
    );
    // A failing impostor run does not block a green run of ours.
    check(
        Pr::new()
            .check("test", "failure", Some("evil-ci"))
            .check("test", "success", GA),
        &named(&["test"]),
        &[
            "pass | C2: required checks green: test",
            "advisory P2 | C2: required check 'test' also has runs from evil-ci — ignored: only runs from 'github-actions' count",
        ],
    );
    // A green impostor run never stands in for a failing run of ours.
    check(
        Pr::new()
            .check("test", "success", Some("evil-ci"))
            .check("test", "failure", GA),
        &named(&["test"]),
        &[
            "fail | C2: check 'test' did not succeed (conclusion: failure)",
            "advisory P2 | C2: required check 'test' also has runs from evil-ci — ignored: only runs from 'github-actions' count",
        ],
    );
}

#[test]
fn the_expected_publisher_is_configurable() {
    let mut policy = named(&["test"]);
    policy.expected_publisher = "buildkite".to_owned();
    check(
        Pr::new().check("test", "success", GA),
        &policy,
        &[
            "fail | C2: required check 'test' was not published by the expected app 'buildkite' (published by: github-actions). Treating as not yet green.",
        ],
    );
}

#[test]
fn unnamed_no_runs_pass_only_with_allow_no_ci() {
    check(
        Pr::new(),
        &policy(),
        &[
            "fail | C2: no check runs on the head commit and no named required checks (set allow_no_ci to accept this)",
        ],
    );
    let mut allow = policy();
    allow.allow_no_ci = true;
    check(
        Pr::new(),
        &allow,
        &["pass | C2: no check runs, allowed by allow_no_ci"],
    );
}

#[test]
fn unnamed_success_and_neutral_pass_with_a_success_from_the_app() {
    check(
        Pr::new()
            .check("build", "success", GA)
            .check("docs", "neutral", Some("readthedocs")),
        &policy(),
        &["pass | C2: all 2 check runs green, with a success from 'github-actions'"],
    );
}

#[test]
fn unnamed_bad_runs_and_missing_publisher_are_all_listed() {
    check(
        Pr::new()
            .check("build", "success", Some("evil-ci"))
            .check("lint", "skipped", None)
            .check("lint", "failure", None)
            .check("docs", "queued", GA),
        &policy(),
        &[
            "fail | C2: check 'lint' did not succeed (conclusion: skipped)",
            "fail | C2: check 'lint' did not succeed (conclusion: failure)",
            "fail | C2: check 'docs' is not yet completed (status: queued)",
            "fail | C2: no green check run was published by the expected app 'github-actions' (publishers seen: <missing app>, evil-ci, github-actions)",
        ],
    );
}

#[test]
fn allow_no_ci_does_not_excuse_runs_that_exist() {
    let mut allow = policy();
    allow.allow_no_ci = true;
    check(
        Pr::new().check("build", "success", Some("evil-ci")),
        &allow,
        &[
            "fail | C2: no green check run was published by the expected app 'github-actions' (publishers seen: evil-ci)",
        ],
    );
}

#[test]
fn a_check_without_runs_is_missing_just_before_the_report_timeout() {
    check(
        Pr::new().committed("2026-03-01T09:31:00Z"),
        &named(&["test"]),
        &["fail | C2: required check 'test' is missing"],
    );
}

#[test]
fn a_check_without_runs_is_never_reported_from_the_report_timeout_on() {
    check(
        Pr::new().committed("2026-03-01T09:30:00Z"),
        &named(&["test"]),
        &[
            "fail | C2: required check 'test' has not reported 60 min after the head commit a000000 (timeout 60 min); it may never run: check the workflow triggers and the check name",
        ],
    );
}

#[test]
fn the_report_timeout_comes_from_the_policy_and_only_concerns_checks_without_runs() {
    let mut policy = named(&["build", "test"]);
    policy.check_report_timeout_minutes = 15;
    check(
        Pr::new().check("test", "queued", GA),
        &policy,
        &[
            "fail | C2: required check 'build' has not reported 30 min after the head commit a000000 (timeout 15 min); it may never run: check the workflow triggers and the check name",
            "fail | C2: check 'test' is not yet completed (status: queued)",
        ],
    );
}

#[test]
fn without_a_head_commit_date_a_check_without_runs_stays_missing() {
    check(
        Pr::new().committed("not a date"),
        &named(&["test"]),
        &["fail | C2: required check 'test' is missing"],
    );
}

#[test]
fn a_date_from_another_commit_than_the_head_is_not_used() {
    let mut old = good_commit("c");
    old.committed_at = Some(at("2026-02-01T00:00:00Z"));
    check(
        Pr::new().commits(vec![old]),
        &named(&["test"]),
        &["fail | C2: required check 'test' is missing"],
    );
}

const CI: &str = ".github/workflows/ci.yml";

fn bound(names: &[&str]) -> GatePolicy {
    let mut policy = named(names);
    for name in names {
        policy
            .required_check_workflows
            .insert((*name).to_owned(), CI.to_owned());
    }
    policy
}

#[test]
fn a_bound_check_counts_only_jobs_of_its_workflow_on_the_head() {
    // The expected workflow's job is green: the check passes.
    check(
        Pr::new().job(1, "test", "success", Some(CI)),
        &bound(&["test"]),
        &["pass | C2: required checks green: test"],
    );
    // A green run created through the Checks API by a workflow an agent pushed on another
    // branch (no job published it) does not count; the expected job failed.
    check(
        Pr::new()
            .job(1, "test", "failure", Some(CI))
            .job(2, "test", "success", None),
        &bound(&["test"]),
        &[
            "fail | C2: check 'test' did not succeed (conclusion: failure)",
            "advisory P2 | C2: required check 'test' also has runs from <no workflow job> — ignored: only runs from the workflow '.github/workflows/ci.yml' on the head count",
        ],
    );
    // Only impostors: the check fails, naming where they came from.
    check(
        Pr::new()
            .job(2, "test", "success", None)
            .job(3, "test", "success", Some(".github/workflows/evil.yml"))
            .job(4, "test", "success", Some(".github/workflows/ci.yml on b")),
        &bound(&["test"]),
        &[
            "fail | C2: required check 'test' did not come from the workflow '.github/workflows/ci.yml' on the head (came from: .github/workflows/ci.yml on b000000, .github/workflows/evil.yml, <no workflow job>). Treating as not yet green.",
        ],
    );
}

#[test]
fn a_run_without_an_id_never_counts_for_a_bound_check() {
    check(
        Pr::new().check("test", "success", GA),
        &bound(&["test"]),
        &[
            "fail | C2: required check 'test' did not come from the workflow '.github/workflows/ci.yml' on the head (came from: <no workflow job>). Treating as not yet green.",
        ],
    );
}

#[test]
fn an_unbound_check_keeps_counting_every_run_of_the_expected_app() {
    let mut policy = bound(&["test"]);
    policy.required_checks.push("lint".to_owned());
    check(
        Pr::new()
            .job(1, "test", "success", Some(CI))
            .job(2, "lint", "success", None),
        &policy,
        &["pass | C2: required checks green: test, lint"],
    );
}

#[test]
fn a_workflow_path_may_be_spelled_with_its_repository_and_ref() {
    check(
        Pr::new().job(
            1,
            "test",
            "success",
            Some("Acme/Widget/.github/workflows/ci.yml@refs/heads/feature"),
        ),
        &bound(&["test"]),
        &["pass | C2: required checks green: test"],
    );
    // The same file of another repository (a workflow required by an organisation ruleset,
    // say) is not this repository's workflow.
    check(
        Pr::new().job(
            1,
            "test",
            "success",
            Some("acme/widget-ci/.github/workflows/ci.yml@main"),
        ),
        &bound(&["test"]),
        &[
            "fail | C2: required check 'test' did not come from the workflow '.github/workflows/ci.yml' on the head (came from: acme/widget-ci/.github/workflows/ci.yml@main). Treating as not yet green.",
        ],
    );
}
