//! C2: the required checks are green, and green from the expected publisher.
//!
//! With named required checks, only runs published by the expected app count, and of those
//! the latest run of each name decides, as GitHub's own required-checks rule does: a job
//! that failed and passed on a re-run is green, a job that passed and fails on a re-run is
//! red (decisions/0027). The latest run is the one started last; a run without a start
//! time counts as the newest, and equal times go to the run listed later (adapters list
//! runs in creation order). Each name needs a run from the expected app, and its latest
//! completed with `success` (`neutral` and `skipped` do not count). Runs of the name from
//! other apps are ignored — any App an
//! agent installs can publish a run of any name, so they can neither open nor block the
//! gate — and reported as a non-blocking warning; with none from the expected app the
//! check fails as published by the wrong app. Runs of other names are ignored. Without named checks, every run must be completed with
//! `success` or `neutral` and a `success` run must come from the expected app; zero runs
//! pass only with `allow_no_ci`.
//!
//! A named check bound to a workflow file (`required_check_workflows`, decisions/0047)
//! counts, of the expected app's runs, only those GitHub records as published by a job of a
//! run of that file on the pull request's head: the run's id is the check run of such a
//! job. Without one the check fails as not from that workflow; the others (a run created
//! through the Checks API by any workflow an agent pushes, a job of another workflow file)
//! are ignored and reported as a non-blocking warning, as runs from other apps are.
//!
//! A named check with no run at all is `check_missing` while the head commit is younger
//! than `policy.check_report_timeout_minutes` (or its date is unknown), and
//! `check_never_reported` once it is older: a check that never comes is named as such
//! instead of leaving the pull request waiting silently.

use std::collections::BTreeSet;
use std::fmt;

use super::{
    CORE_SEVERITY, ConditionId, ConditionResult, GatePolicy, List, MISSING_APP, NO_WORKFLOW_JOB,
};
use crate::context::{
    CheckConclusion, CheckRun, CheckStatus, PrContext, published_by_workflow, run_source,
};
use crate::ids::CommitSha;
use crate::ids::Timestamp;
use crate::severity::Severity;

fn fail(evidence: ChecksEvidence) -> ConditionResult {
    ConditionResult::fail(ConditionId::C2, CORE_SEVERITY, evidence)
}

fn pass(evidence: ChecksEvidence) -> ConditionResult {
    ConditionResult::pass(ConditionId::C2, CORE_SEVERITY, evidence)
}

/// Sorted distinct publisher slugs of `runs`, with [`MISSING_APP`] for runs without one.
fn publishers<'a>(runs: impl IntoIterator<Item = &'a CheckRun>) -> Vec<String> {
    runs.into_iter()
        .map(|run| run.app_slug.as_deref().unwrap_or(MISSING_APP).to_owned())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// Failures for unfinished runs and bad conclusions among `runs` of one name: one per
/// name for unfinished runs, one per distinct bad conclusion.
fn run_failures(
    name: &str,
    runs: &[&CheckRun],
    is_good: impl Fn(&CheckConclusion) -> bool,
) -> Vec<ConditionResult> {
    let mut failures = Vec::new();
    if let Some(run) = runs.iter().find(|r| r.status != CheckStatus::Completed) {
        failures.push(fail(ChecksEvidence::CheckNotCompleted {
            name: name.to_owned(),
            status: run.status,
        }));
    }
    let mut seen: Vec<Option<&CheckConclusion>> = Vec::new();
    for run in runs.iter().filter(|r| r.status == CheckStatus::Completed) {
        let conclusion = run.conclusion.as_ref();
        if conclusion.is_some_and(&is_good) || seen.contains(&conclusion) {
            continue;
        }
        seen.push(conclusion);
        failures.push(fail(ChecksEvidence::CheckFailed {
            name: name.to_owned(),
            conclusion: conclusion.cloned(),
        }));
    }
    failures
}

/// Whether GitHub records `run` as published by a job of a run of the workflow file
/// `workflow` on the pull request's head: its id is the check run of such a job.
fn from_workflow(pr: &PrContext, run: &CheckRun, workflow: &str) -> bool {
    published_by_workflow(&pr.workflow_jobs, run, workflow, &pr.repo, &pr.head_sha)
}

/// Sorted distinct sources of `runs`: the workflow file of the job that published each
/// (with ` on <sha>` when that job's run is on another commit), [`NO_WORKFLOW_JOB`] for a
/// run no workflow job published.
fn workflows(pr: &PrContext, runs: &[&CheckRun]) -> Vec<String> {
    runs.iter()
        .map(|run| {
            run_source(&pr.workflow_jobs, run, &pr.head_sha)
                .unwrap_or_else(|| NO_WORKFLOW_JOB.to_owned())
        })
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// The latest of same-named runs of one App (none when `runs` is empty): started last, a
/// run without a start time counting as the newest, ties to the run listed later.
fn latest_run<'a>(runs: &[&'a CheckRun]) -> Vec<&'a CheckRun> {
    runs.iter()
        .enumerate()
        .max_by_key(|(position, run)| (run.started_at.is_none(), run.started_at, *position))
        .map(|(_, run)| vec![*run])
        .unwrap_or_default()
}

/// Evaluates C2 at `now` against `policy.required_checks`, `policy.expected_publisher`,
/// `policy.allow_no_ci` and `policy.check_report_timeout_minutes`, reporting every problem
/// of every check.
pub fn evaluate(pr: &PrContext, policy: &GatePolicy, now: Timestamp) -> Vec<ConditionResult> {
    if policy.required_checks.is_empty() {
        evaluate_unnamed(&pr.check_runs, policy)
    } else {
        evaluate_named(pr, policy, now)
    }
}

/// The failure for a named check without any run: never reported once the head commit is
/// at least the report timeout old, else (or with no usable head date) missing.
fn no_run(pr: &PrContext, name: &str, policy: &GatePolicy, now: Timestamp) -> ConditionResult {
    let committed_at = pr.head_commit().and_then(|c| c.committed_at);
    let timeout_minutes = policy.check_report_timeout_minutes;
    if let Some(committed_at) = committed_at {
        let minutes = now.seconds_since(committed_at) / 60;
        if minutes >= i64::from(timeout_minutes) {
            return fail(ChecksEvidence::CheckNeverReported {
                name: name.to_owned(),
                head: pr.head_sha.clone(),
                minutes,
                timeout_minutes,
            });
        }
    }
    fail(ChecksEvidence::CheckMissing {
        name: name.to_owned(),
    })
}

fn evaluate_named(pr: &PrContext, policy: &GatePolicy, now: Timestamp) -> Vec<ConditionResult> {
    let runs = &pr.check_runs;
    let expected = policy.expected_publisher.as_str();
    let mut failures = Vec::new();
    let mut warnings = Vec::new();
    for name in &policy.required_checks {
        let named: Vec<&CheckRun> = runs.iter().filter(|r| r.name == *name).collect();
        if named.is_empty() {
            failures.push(no_run(pr, name, policy, now));
            continue;
        }
        let (ours, others): (Vec<&CheckRun>, Vec<&CheckRun>) = named
            .iter()
            .partition(|r| r.app_slug.as_deref() == Some(expected));
        if !others.is_empty() && !ours.is_empty() {
            warnings.push(ConditionResult::fail(
                ConditionId::C2,
                Severity::P2,
                ChecksEvidence::CheckOtherPublisher {
                    name: name.clone(),
                    expected: expected.to_owned(),
                    others: publishers(others.iter().copied()),
                },
            ));
        }
        if ours.is_empty() {
            failures.push(fail(ChecksEvidence::CheckWrongPublisher {
                name: name.clone(),
                expected: expected.to_owned(),
                seen: publishers(others.iter().copied()),
            }));
            continue;
        }
        let ours = match policy.required_check_workflows.get(name) {
            None => ours,
            Some(workflow) => {
                let (bound, unbound): (Vec<&CheckRun>, Vec<&CheckRun>) = ours
                    .iter()
                    .partition(|run| from_workflow(pr, run, workflow));
                if bound.is_empty() {
                    failures.push(fail(ChecksEvidence::CheckWrongWorkflow {
                        name: name.clone(),
                        workflow: workflow.clone(),
                        seen: workflows(pr, &unbound),
                    }));
                    continue;
                }
                if !unbound.is_empty() {
                    warnings.push(ConditionResult::fail(
                        ConditionId::C2,
                        Severity::P2,
                        ChecksEvidence::CheckOtherWorkflow {
                            name: name.clone(),
                            workflow: workflow.clone(),
                            others: workflows(pr, &unbound),
                        },
                    ));
                }
                bound
            }
        };
        let latest = latest_run(&ours);
        failures.extend(run_failures(name, &latest, |c| {
            *c == CheckConclusion::Success
        }));
    }
    if failures.is_empty() {
        failures.push(pass(ChecksEvidence::ChecksGreen {
            names: policy.required_checks.clone(),
        }));
    }
    failures.extend(warnings);
    failures
}

fn evaluate_unnamed(runs: &[CheckRun], policy: &GatePolicy) -> Vec<ConditionResult> {
    if runs.is_empty() {
        return vec![if policy.allow_no_ci {
            pass(ChecksEvidence::NoChecksAllowed)
        } else {
            fail(ChecksEvidence::NoChecks)
        }];
    }
    let expected = policy.expected_publisher.as_str();
    let mut names: Vec<&str> = Vec::new();
    for run in runs {
        if !names.contains(&run.name.as_str()) {
            names.push(&run.name);
        }
    }
    let mut failures = Vec::new();
    for name in names {
        let named: Vec<&CheckRun> = runs.iter().filter(|r| r.name == name).collect();
        failures.extend(run_failures(name, &named, |c| {
            matches!(c, CheckConclusion::Success | CheckConclusion::Neutral)
        }));
    }
    let green_from_expected = runs
        .iter()
        .any(|r| r.concluded(&CheckConclusion::Success) && r.app_slug.as_deref() == Some(expected));
    if !green_from_expected {
        failures.push(fail(ChecksEvidence::NoGreenFromPublisher {
            expected: expected.to_owned(),
            seen: publishers(runs),
        }));
    }
    if failures.is_empty() {
        return vec![pass(ChecksEvidence::GreenFromPublisher {
            publisher: expected.to_owned(),
            runs: runs.len(),
        })];
    }
    failures
}

/// What C2 rests on: the required checks and the runs published for them.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChecksEvidence {
    /// C2 holds with named required checks: each has runs, all completed with `success`,
    /// and one from the expected publisher.
    ChecksGreen {
        /// The required check names.
        names: Vec<String>,
    },
    /// C2 holds without named checks: every run is completed `success`/`neutral`, and a
    /// `success` run comes from the expected publisher.
    GreenFromPublisher {
        /// The expected publisher.
        publisher: String,
        /// How many runs were inspected.
        runs: usize,
    },
    /// C2 holds without named checks because there are no runs and `allow_no_ci` is set.
    NoChecksAllowed,
    /// A named required check has no run at all (yet: the head commit is younger than the
    /// report timeout, or its date is unknown).
    CheckMissing {
        /// The check name.
        name: String,
    },
    /// A named required check has no run at all although the head commit is older than the
    /// report timeout: the check will most likely never come (wrong name, workflow not
    /// triggered).
    CheckNeverReported {
        /// The check name.
        name: String,
        /// The head commit.
        head: CommitSha,
        /// Whole minutes since the head commit's committer date.
        minutes: i64,
        /// The configured report timeout, in minutes.
        timeout_minutes: u32,
    },
    /// A run of the check has not completed.
    CheckNotCompleted {
        /// The check name.
        name: String,
        /// The status of the first unfinished run.
        status: CheckStatus,
    },
    /// A completed run of the check did not end well (named checks: anything but
    /// `success`; unnamed: anything but `success`/`neutral`).
    CheckFailed {
        /// The check name.
        name: String,
        /// The run's conclusion (`None`: completed without one).
        conclusion: Option<CheckConclusion>,
    },
    /// No run of a named required check comes from the expected publisher.
    CheckWrongPublisher {
        /// The check name.
        name: String,
        /// The expected app slug.
        expected: String,
        /// The app slugs seen on runs of that name, sorted ([`MISSING_APP`] for none).
        seen: Vec<String>,
    },
    /// A named required check also has runs from apps other than the expected one. They
    /// are ignored (a warning, never blocking and never counted as green): any App an
    /// agent installs can publish a run of any name.
    CheckOtherPublisher {
        /// The check name.
        name: String,
        /// The expected app slug.
        expected: String,
        /// The other app slugs, sorted ([`MISSING_APP`] for none).
        others: Vec<String>,
    },
    /// No run of a named required check from the expected publisher is a job of a run of
    /// the workflow file the check is bound to (`required_check_workflows`) on the head
    /// (decisions/0047).
    CheckWrongWorkflow {
        /// The check name.
        name: String,
        /// The workflow file the check must come from.
        workflow: String,
        /// Where the runs of that name came from, sorted: workflow files, or
        /// [`NO_WORKFLOW_JOB`] for runs no workflow job published.
        seen: Vec<String>,
    },
    /// A named required check bound to a workflow file also has runs from the expected
    /// publisher that no job of that workflow's runs on the head published. They are
    /// ignored (a warning, never blocking and never counted as green): any workflow an
    /// agent pushes can publish a run of any name with the repository's token.
    CheckOtherWorkflow {
        /// The check name.
        name: String,
        /// The workflow file the check must come from.
        workflow: String,
        /// Where the ignored runs came from, sorted, as in
        /// [`ChecksEvidence::CheckWrongWorkflow`].
        others: Vec<String>,
    },
    /// No named checks are required, there are no runs, and `allow_no_ci` is off.
    NoChecks,
    /// No named checks are required and no `success` run comes from the expected publisher.
    NoGreenFromPublisher {
        /// The expected app slug.
        expected: String,
        /// The app slugs seen on all runs, sorted ([`MISSING_APP`] for none).
        seen: Vec<String>,
    },
}

impl ChecksEvidence {
    /// Whether a required check has not reported yet (while the head is younger than the
    /// report timeout) or has not completed: the pull request waits, nothing is wrong.
    pub fn is_pending(&self) -> bool {
        matches!(
            self,
            Self::CheckMissing { .. } | Self::CheckNotCompleted { .. }
        )
    }

    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::ChecksGreen { .. } => "checks_green",
            Self::GreenFromPublisher { .. } => "green_from_publisher",
            Self::NoChecksAllowed => "no_checks_allowed",
            Self::CheckMissing { .. } => "check_missing",
            Self::CheckNeverReported { .. } => "check_never_reported",
            Self::CheckNotCompleted { .. } => "check_not_completed",
            Self::CheckFailed { .. } => "check_failed",
            Self::CheckWrongPublisher { .. } => "check_wrong_publisher",
            Self::CheckOtherPublisher { .. } => "check_other_publisher",
            Self::CheckWrongWorkflow { .. } => "check_wrong_workflow",
            Self::CheckOtherWorkflow { .. } => "check_other_workflow",
            Self::NoChecks => "no_checks",
            Self::NoGreenFromPublisher { .. } => "no_green_from_publisher",
        }
    }
}

impl fmt::Display for ChecksEvidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ChecksGreen { names } => {
                write!(f, "required checks green: {}", List(names))
            }
            Self::GreenFromPublisher { publisher, runs } => write!(
                f,
                "all {runs} check runs green, with a success from '{publisher}'"
            ),
            Self::NoChecksAllowed => f.write_str("no check runs, allowed by allow_no_ci"),
            Self::CheckMissing { name } => write!(f, "required check '{name}' is missing"),
            Self::CheckNeverReported {
                name,
                head,
                minutes,
                timeout_minutes,
            } => write!(
                f,
                "required check '{name}' has not reported {minutes} min after the head commit {} (timeout {timeout_minutes} min); it may never run: check the workflow triggers and the check name",
                head.short()
            ),
            Self::CheckNotCompleted { name, status } => write!(
                f,
                "check '{name}' is not yet completed (status: {})",
                status.as_str()
            ),
            Self::CheckFailed { name, conclusion } => write!(
                f,
                "check '{name}' did not succeed (conclusion: {})",
                conclusion.as_ref().map_or("none", CheckConclusion::as_str)
            ),
            Self::CheckWrongPublisher {
                name,
                expected,
                seen,
            } => write!(
                f,
                "required check '{name}' was not published by the expected app '{expected}' (published by: {}). Treating as not yet green.",
                List(seen)
            ),
            Self::CheckOtherPublisher {
                name,
                expected,
                others,
            } => write!(
                f,
                "required check '{name}' also has runs from {} — ignored: only runs from '{expected}' count",
                List(others)
            ),
            Self::CheckWrongWorkflow {
                name,
                workflow,
                seen,
            } => write!(
                f,
                "required check '{name}' did not come from the workflow '{workflow}' on the head (came from: {}). Treating as not yet green.",
                List(seen)
            ),
            Self::CheckOtherWorkflow {
                name,
                workflow,
                others,
            } => write!(
                f,
                "required check '{name}' also has runs from {} — ignored: only runs from the workflow '{workflow}' on the head count",
                List(others)
            ),
            Self::NoChecks => f.write_str(
                "no check runs on the head commit and no named required checks (set allow_no_ci to accept this)",
            ),
            Self::NoGreenFromPublisher { expected, seen } => write!(
                f,
                "no green check run was published by the expected app '{expected}' (publishers seen: {})",
                List(seen)
            ),
        }
    }
}

#[cfg(test)]
mod tests;
