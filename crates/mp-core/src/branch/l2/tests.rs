//! Tests for the L2 verdict, the stall rule, recovery instructions and revert eligibility.

use super::*;
use crate::context::WorkflowJob;

fn ts(text: &str) -> Timestamp {
    Timestamp::parse(text).expect("valid timestamp")
}

fn sha(c: char) -> CommitSha {
    CommitSha::parse(&c.to_string().repeat(40)).expect("valid sha")
}

/// A completed run from `github-actions` that took one minute.
fn run(name: &str, conclusion: &str) -> CheckRun {
    CheckRun {
        id: None,
        name: name.to_owned(),
        status: CheckStatus::Completed,
        conclusion: Some(CheckConclusion::from_github(conclusion)),
        started_at: Some(ts("2026-05-26T10:00:00Z")),
        completed_at: Some(ts("2026-05-26T10:01:00Z")),
        app_slug: Some("github-actions".to_owned()),
        output_summary: None,
    }
}

fn running(name: &str) -> CheckRun {
    CheckRun {
        status: CheckStatus::InProgress,
        conclusion: None,
        completed_at: None,
        ..run(name, "success")
    }
}

fn zero_duration(name: &str, conclusion: &str) -> CheckRun {
    CheckRun {
        completed_at: Some(ts("2026-05-26T10:00:00Z")),
        ..run(name, conclusion)
    }
}

fn from_app(slug: Option<&str>, run: CheckRun) -> CheckRun {
    CheckRun {
        app_slug: slug.map(str::to_owned),
        ..run
    }
}

const ACTIONS: Option<&str> = Some("github-actions");

/// Checks the verdict's code and its one-line display.
#[track_caller]
fn check(
    runs: &[CheckRun],
    required: &[&str],
    publisher: Option<&str>,
    no_ci: NoCiPolicy,
    expected: &str,
) {
    let required: Vec<String> = required.iter().map(|s| (*s).to_owned()).collect();
    let verdict = revalidate(runs, &required, publisher, no_ci);
    assert_eq!(format!("{}: {verdict}", verdict.code()), expected);
}

#[test]
fn named_checks_all_green_pass() {
    check(
        &[
            run("build", "success"),
            run("test", "neutral"),
            run("lint", "failure"),
        ],
        &["build", "test"],
        ACTIONS,
        NoCiPolicy::Deny,
        "l2_passed: post-merge re-validation passed",
    );
}

#[test]
fn named_check_skipped_is_infra() {
    check(
        &[run("build", "success"), run("test", "skipped")],
        &["build", "test"],
        ACTIONS,
        NoCiPolicy::Deny,
        "l2_unsettled: post-merge re-validation unsettled: required check 'test' was skipped and never ran",
    );
}

#[test]
fn unnamed_skipped_passes() {
    check(
        &[run("build", "success"), run("optional", "skipped")],
        &[],
        ACTIONS,
        NoCiPolicy::Deny,
        "l2_passed: post-merge re-validation passed",
    );
}

#[test]
fn cancelled_is_infra_on_both_paths() {
    let expected = "l2_unsettled: post-merge re-validation unsettled: check 'test' was cancelled";
    check(
        &[run("test", "cancelled")],
        &["test"],
        ACTIONS,
        NoCiPolicy::Deny,
        expected,
    );
    check(
        &[run("test", "cancelled")],
        &[],
        ACTIONS,
        NoCiPolicy::Deny,
        expected,
    );
}

#[test]
fn zero_duration_failure_is_infra() {
    check(
        &[zero_duration("test", "failure")],
        &["test"],
        ACTIONS,
        NoCiPolicy::Deny,
        "l2_unsettled: post-merge re-validation unsettled: check 'test' concluded failure with zero duration at 2026-05-26T10:00:00Z",
    );
}

#[test]
fn zero_duration_success_still_passes() {
    check(
        &[zero_duration("test", "success")],
        &[],
        ACTIONS,
        NoCiPolicy::Deny,
        "l2_passed: post-merge re-validation passed",
    );
}

#[test]
fn failure_is_real() {
    check(
        &[run("build", "success"), run("test", "failure")],
        &["build", "test"],
        ACTIONS,
        NoCiPolicy::Deny,
        "l2_real_failure: post-merge re-validation failed: check 'test' failed with conclusion failure",
    );
}

#[test]
fn unnamed_timed_out_is_real() {
    check(
        &[run("build", "timed_out")],
        &[],
        None,
        NoCiPolicy::Deny,
        "l2_real_failure: post-merge re-validation failed: check 'build' failed with conclusion timed_out",
    );
}

#[test]
fn real_failure_outranks_infra_elsewhere() {
    check(
        &[run("build", "cancelled"), run("test", "action_required")],
        &["build", "test"],
        ACTIONS,
        NoCiPolicy::Deny,
        "l2_real_failure: post-merge re-validation failed: check 'test' failed with conclusion action_required",
    );
}

#[test]
fn same_named_failure_is_not_masked_by_a_success() {
    check(
        &[run("test", "success"), run("test", "failure")],
        &["test"],
        ACTIONS,
        NoCiPolicy::Deny,
        "l2_real_failure: post-merge re-validation failed: check 'test' failed with conclusion failure",
    );
}

#[test]
fn missing_named_check_is_real_even_with_allow_no_ci() {
    check(
        &[],
        &["test"],
        ACTIONS,
        NoCiPolicy::Allow,
        "l2_real_failure: post-merge re-validation failed: required check 'test' has no run on the merged commit",
    );
}

#[test]
fn no_runs_with_allow_no_ci_passes_on_unnamed_path() {
    check(
        &[],
        &[],
        ACTIONS,
        NoCiPolicy::Allow,
        "l2_passed: post-merge re-validation passed",
    );
}

#[test]
fn no_runs_without_allow_no_ci_is_infra() {
    check(
        &[],
        &[],
        ACTIONS,
        NoCiPolicy::from_allow_no_ci(false),
        "l2_unsettled: post-merge re-validation unsettled: no check runs on the merged commit and CI is required",
    );
}

#[test]
fn unfinished_runs_are_infra() {
    let expected = "l2_unsettled: post-merge re-validation unsettled: check 'test' has not completed (status in_progress)";
    check(
        &[running("test")],
        &["test"],
        ACTIONS,
        NoCiPolicy::Deny,
        expected,
    );
    check(
        &[running("test"), run("b", "success")],
        &[],
        ACTIONS,
        NoCiPolicy::Deny,
        expected,
    );
}

#[test]
fn publisher_rule_rejects_foreign_green() {
    check(
        &[from_app(Some("evil-app"), run("test", "success"))],
        &["test"],
        ACTIONS,
        NoCiPolicy::Deny,
        "l2_real_failure: post-merge re-validation failed: required check 'test' has no passing run from 'github-actions' (passing runs from: evil-app)",
    );
}

#[test]
fn publisher_rule_rejects_run_without_slug() {
    check(
        &[from_app(None, run("test", "success"))],
        &["test"],
        ACTIONS,
        NoCiPolicy::Deny,
        "l2_real_failure: post-merge re-validation failed: required check 'test' has no passing run from 'github-actions' (passing runs from: none)",
    );
}

#[test]
fn publisher_rule_accepts_one_trusted_run_among_foreign() {
    check(
        &[
            from_app(Some("evil-app"), run("test", "success")),
            run("test", "success"),
        ],
        &["test"],
        ACTIONS,
        NoCiPolicy::Deny,
        "l2_passed: post-merge re-validation passed",
    );
}

#[test]
fn publisher_rule_disabled_by_none_or_empty() {
    let runs = [from_app(Some("evil-app"), run("test", "success"))];
    let passed = "l2_passed: post-merge re-validation passed";
    check(&runs, &["test"], None, NoCiPolicy::Deny, passed);
    check(&runs, &["test"], Some(""), NoCiPolicy::Deny, passed);
}

#[test]
fn publisher_rule_does_not_apply_to_unnamed_path() {
    check(
        &[from_app(Some("evil-app"), run("test", "success"))],
        &[],
        ACTIONS,
        NoCiPolicy::Deny,
        "l2_passed: post-merge re-validation passed",
    );
}

#[test]
fn verdict_helpers_report_settlement_and_incident() {
    let required = vec!["test".to_owned(), "test".to_owned(), "build".to_owned()];
    let real = revalidate(
        &[run("test", "failure"), run("test", "stale")],
        &required,
        ACTIONS,
        NoCiPolicy::Deny,
    );
    assert_eq!(real.failing_checks(), ["test", "build"]);
    assert_eq!(real.incident(), Some(IncidentLabel::PostMergeRevalidation));
    assert!(real.is_settled());
    let codes: Vec<&str> = real.findings().iter().map(L2Finding::code).collect();
    assert_eq!(codes, ["check_failed", "check_failed", "check_missing"]);
    let infra = revalidate(&[run("x", "cancelled")], &[], ACTIONS, NoCiPolicy::Deny);
    assert!(!infra.is_settled());
    assert_eq!(infra.incident(), None);
}

#[test]
fn stall_deadline_is_24_hours() {
    let first = ts("2026-05-25T12:00:00Z");
    let waiting = l2_stall(first, ts("2026-05-26T11:59:00Z"));
    assert_eq!(waiting.code(), "l2_unsettled_waiting");
    assert_eq!(waiting.incident(), None);
    assert_eq!(
        waiting.to_string(),
        "unsettled since 2026-05-25T12:00:00Z; escalates at 2026-05-26T12:00:00Z (24 h)"
    );
    let stalled = l2_stall(first, ts("2026-05-26T12:00:00Z"));
    assert_eq!(stalled.code(), "l2_stalled");
    assert_eq!(stalled.incident(), Some(IncidentLabel::L2Stalled));
    assert_eq!(
        stalled.incident().map(IncidentLabel::as_str),
        Some("decision:l2-stalled")
    );
    assert_eq!(
        l2_stall(first, ts("2026-05-26T15:30:00Z")).to_string(),
        "unsettled since 2026-05-25T12:00:00Z (27 h, deadline 24 h): stalled"
    );
}

#[test]
fn recovery_instructions_follow_the_parents() {
    let target = sha('a');
    let single = RecoveryInstructions::for_commit(&target, Some(&[sha('b')]));
    assert_eq!(single.code(), "recovery_revert");
    assert!(
        single
            .markdown()
            .contains(&format!("git revert {target}\n"))
    );
    assert!(!single.markdown().contains("-m N"));

    let merge = RecoveryInstructions::for_commit(&target, Some(&[sha('b'), sha('c')]));
    assert_eq!(merge.code(), "recovery_multi_parent");
    let text = merge.markdown();
    assert!(text.contains(&format!("git show --format=%P --no-patch {target}")));
    assert!(text.contains(&format!("git revert -m N {target}")));
    assert!(text.contains(&format!("2. `{}`", sha('c'))));
    assert!(!text.contains(&format!("git revert {target}")));

    let unknown = RecoveryInstructions::for_commit(&target, None);
    assert_eq!(unknown.code(), "recovery_inspect_parents");
    assert!(
        unknown
            .markdown()
            .starts_with("The commit's parents could not be read")
    );
    assert_eq!(
        unknown.to_string(),
        format!("parents unknown: inspect with `git show --format=%P {target}` before reverting")
    );
}

#[test]
fn revert_needs_proven_single_parent() {
    let root = revert_eligibility(Some(&[]));
    assert_eq!(root, RevertEligibility::Eligible { parents: 0 });
    assert!(revert_eligibility(Some(&[sha('b')])).is_eligible());
    let merge = revert_eligibility(Some(&[sha('b'), sha('c')]));
    assert_eq!(merge.code(), "revert_multi_parent");
    assert_eq!(
        merge.to_string(),
        "automatic revert refused: merge commit with 2 parents (bbbbbbb, ccccccc); inspect with `git show --format=%P <sha>`, verify the mainline parent and run `git revert -m N <sha>` by hand"
    );
    let unknown = revert_eligibility(None);
    assert!(!unknown.is_eligible());
    assert_eq!(unknown.code(), "revert_parents_unprovable");
}

#[test]
fn incident_body_names_checks_and_recovery() {
    let repo = RepoName::parse("acme/widget").expect("valid repo");
    let verdict = revalidate(&[run("test", "failure")], &[], None, NoCiPolicy::Deny);
    let recovery = RecoveryInstructions::for_commit(&sha('a'), Some(&[sha('b'), sha('c')]));
    let body = revalidation_incident_body(&repo, &sha('a'), &verdict, &recovery);
    assert!(body.starts_with("**Post-merge re-validation failed** on `acme/widget` at `aaaaaaa`."));
    assert!(body.contains("- check 'test' failed with conclusion failure\n"));
    assert!(body.contains("git revert -m N"));
    let stalled = stalled_incident_body(&repo, &sha('a'), ts("2026-05-25T12:00:00Z"), &recovery);
    assert!(stalled.contains("since `2026-05-25T12:00:00Z`, 24 hours"));
}

/// A run with GitHub's id `id`.
fn with_id(id: u64, run: CheckRun) -> CheckRun {
    CheckRun {
        id: Some(id),
        ..run
    }
}

/// The job of a run of `workflow` on `head` that published the check run `check_run_id`.
fn job(check_run_id: u64, workflow: &str, head: &CommitSha) -> WorkflowJob {
    WorkflowJob {
        check_run_id,
        run_id: 7,
        workflow_path: workflow.to_owned(),
        head_sha: head.clone(),
        event: "push".to_owned(),
    }
}

/// The verdict with `test` bound to `.github/workflows/ci.yml` on the commit `a…a`.
fn bound_verdict(runs: &[CheckRun], jobs: &[WorkflowJob]) -> String {
    let repo = RepoName::parse("acme/widget").expect("valid repo");
    let workflows = BTreeMap::from([("test".to_owned(), ".github/workflows/ci.yml".to_owned())]);
    let binding = WorkflowBinding {
        workflows: &workflows,
        jobs,
        repo: &repo,
        sha: &sha('a'),
    };
    let required = vec!["test".to_owned(), "lint".to_owned()];
    let verdict = revalidate_bound(runs, &required, ACTIONS, NoCiPolicy::Deny, Some(&binding));
    format!("{}: {verdict}", verdict.code())
}

#[test]
fn a_bound_check_counts_only_its_workflow_s_runs_on_the_commit() {
    let ci = ".github/workflows/ci.yml";
    // The bound workflow's job passed; a red run created through the Checks API and one
    // from another workflow file are ignored.
    assert_eq!(
        bound_verdict(
            &[
                with_id(1, run("test", "success")),
                with_id(2, run("test", "failure")),
                with_id(3, run("test", "failure")),
                run("lint", "success"),
            ],
            &[
                job(1, ci, &sha('a')),
                job(3, ".github/workflows/evil.yml", &sha('a')),
            ],
        ),
        "l2_passed: post-merge re-validation passed"
    );
    // The bound workflow's own red run still counts.
    assert_eq!(
        bound_verdict(
            &[
                with_id(1, run("test", "failure")),
                with_id(2, run("test", "success")),
                run("lint", "success"),
            ],
            &[job(1, ci, &sha('a'))],
        ),
        "l2_real_failure: post-merge re-validation failed: check 'test' failed with conclusion failure"
    );
    // Green only through a Checks API run and a job of the workflow on another commit.
    assert_eq!(
        bound_verdict(
            &[
                with_id(2, run("test", "success")),
                with_id(4, run("test", "success")),
                run("lint", "success"),
            ],
            &[job(4, ci, &sha('b'))],
        ),
        format!(
            "l2_real_failure: post-merge re-validation failed: required check 'test' did not come from the workflow '.github/workflows/ci.yml' on the merged commit (came from: .github/workflows/ci.yml on {}, <no workflow job>)",
            sha('b').short()
        )
    );
    // No run at all is missing, as without a binding; the unbound `lint` is unchanged.
    assert_eq!(
        bound_verdict(&[run("lint", "failure")], &[]),
        "l2_real_failure: post-merge re-validation failed: required check 'test' has no run on the merged commit; check 'lint' failed with conclusion failure"
    );
}
