//! L2 post-merge re-validation: the check-run verdict of one merged commit, the 24-hour
//! stall rule, parent-aware recovery instructions and auto-revert eligibility.
//!
//! Two paths, chosen by whether the repository has named required checks:
//!
//! * **Named** (the effective required list is not empty): each named check must have a
//!   completed run. A name with no run at all is a real failure, even when the repository
//!   allows commits without CI. A name whose runs have not completed, or that only
//!   concluded `skipped` (a required check that never ran is not a success), `cancelled`,
//!   or with zero duration, is unsettled (infra). `success` and `neutral` pass; any other
//!   conclusion is a real failure. A name that is otherwise green but has no passing run
//!   from the expected publisher is a real failure. Checks not on the list are ignored.
//!   A name bound to a workflow file (`required_check_workflows`, decisions/0047) counts
//!   only the runs that GitHub records as jobs of a run of that file on the merged commit;
//!   its other runs (created through the Checks API, or by a job of another workflow file)
//!   are ignored, green or red, so an agent can neither hide a missing run nor fake a
//!   failure. A bound name with runs but none from its workflow is a real failure, waited
//!   for like a missing one while the commit is young.
//! * **Unnamed**: every run counts. No runs at all passes only when CI is optional, else it
//!   is unsettled. A run not completed, `cancelled` or of zero duration is unsettled;
//!   `success`, `neutral` and `skipped` pass; anything else is a real failure. There is no
//!   publisher rule on this path.
//!
//! Zero duration means `started_at == completed_at` with both set; it is only looked at
//! for runs that did not pass. Any real failure makes the commit a real failure; else any
//! unsettled check makes it infra; else it passed.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::branch::incident::IncidentLabel;
use crate::context::{
    CheckConclusion, CheckRun, CheckStatus, WorkflowJob, published_by_workflow, run_source,
};
use crate::ids::{CommitSha, RepoName, Timestamp};

/// Whether a repository without any check run on a merged commit counts as passed
/// (`allow_no_ci`). Only the unnamed path reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoCiPolicy {
    /// No check runs at all is a pass (`allow_no_ci: true`).
    Allow,
    /// No check runs at all leaves the commit unsettled (`allow_no_ci: false`).
    Deny,
}

impl NoCiPolicy {
    /// Reads the `allow_no_ci` configuration flag.
    pub fn from_allow_no_ci(allow_no_ci: bool) -> Self {
        if allow_no_ci { Self::Allow } else { Self::Deny }
    }
}

/// Whether an [`L2Finding`] means the code is bad or the evidence is not in yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FindingClass {
    /// Infrastructure or not finished: retry on a later tick.
    Infra,
    /// A real failure of the merged code.
    Real,
}

/// Why one check did not pass on the merged commit.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum L2Finding {
    /// A named required check has no run at all on the merged commit (real).
    Missing {
        /// The required check name.
        name: String,
    },
    /// A check has runs, none of which has completed yet (infra).
    NotCompleted {
        /// The check name.
        name: String,
        /// The status of the first such run.
        status: CheckStatus,
    },
    /// A named required check concluded `skipped`: it never ran (infra).
    SkippedRequired {
        /// The required check name.
        name: String,
    },
    /// A run concluded `cancelled` (infra).
    Cancelled {
        /// The check name.
        name: String,
    },
    /// A run that did not pass started and completed at the same instant: the runner
    /// never executed it (infra).
    ZeroDuration {
        /// The check name.
        name: String,
        /// The run's conclusion, if any.
        conclusion: Option<CheckConclusion>,
        /// The shared start and completion time.
        at: Timestamp,
    },
    /// A run completed with a failing conclusion (real).
    Failed {
        /// The check name.
        name: String,
        /// The conclusion (`None` when GitHub gave none).
        conclusion: Option<CheckConclusion>,
    },
    /// A named required check is green only through runs of other publishers (real).
    UntrustedPublisher {
        /// The required check name.
        name: String,
        /// The App slug that must have published a passing run.
        expected: String,
        /// The App slugs of the passing runs that were seen (`None` for no slug).
        seen: Vec<Option<String>>,
    },
    /// A named required check bound to a workflow file has runs on the merged commit, but
    /// none that a job of a run of that file on the commit published (real, waited for
    /// while the commit is young, like [`L2Finding::Missing`]).
    NotFromWorkflow {
        /// The required check name.
        name: String,
        /// The workflow file the check is bound to.
        workflow: String,
        /// Where the runs of that name came from: workflow files (with ` on <sha>` for a
        /// run on another commit), or [`NOT_FROM_A_WORKFLOW_JOB`].
        seen: Vec<String>,
    },
    /// The commit has no check runs at all and CI is required (infra, unnamed path).
    NoRuns,
}

/// How [`L2Finding::NotFromWorkflow`] names a run no workflow job published (one created
/// through the Checks API).
pub const NOT_FROM_A_WORKFLOW_JOB: &str = "<no workflow job>";

impl L2Finding {
    /// Stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Missing { .. } => "check_missing",
            Self::NotCompleted { .. } => "check_not_completed",
            Self::SkippedRequired { .. } => "check_skipped_required",
            Self::Cancelled { .. } => "check_cancelled",
            Self::ZeroDuration { .. } => "check_zero_duration",
            Self::Failed { .. } => "check_failed",
            Self::UntrustedPublisher { .. } => "check_untrusted_publisher",
            Self::NotFromWorkflow { .. } => "check_wrong_workflow",
            Self::NoRuns => "no_check_runs",
        }
    }

    /// Whether this finding is a real failure or an unsettled (infra) one.
    pub fn class(&self) -> FindingClass {
        match self {
            Self::Missing { .. }
            | Self::Failed { .. }
            | Self::UntrustedPublisher { .. }
            | Self::NotFromWorkflow { .. } => FindingClass::Real,
            Self::NotCompleted { .. }
            | Self::SkippedRequired { .. }
            | Self::Cancelled { .. }
            | Self::ZeroDuration { .. }
            | Self::NoRuns => FindingClass::Infra,
        }
    }

    /// Whether the finding is a required run that has not come yet (none at all, or none
    /// from the bound workflow): a commit younger than the report timeout waits for it.
    pub fn is_not_yet_reported(&self) -> bool {
        matches!(self, Self::Missing { .. } | Self::NotFromWorkflow { .. })
    }

    /// The check this finding is about (`None` for [`L2Finding::NoRuns`]).
    pub fn check_name(&self) -> Option<&str> {
        match self {
            Self::Missing { name }
            | Self::NotCompleted { name, .. }
            | Self::SkippedRequired { name }
            | Self::Cancelled { name }
            | Self::ZeroDuration { name, .. }
            | Self::Failed { name, .. }
            | Self::UntrustedPublisher { name, .. }
            | Self::NotFromWorkflow { name, .. } => Some(name),
            Self::NoRuns => None,
        }
    }
}

fn conclusion_text(conclusion: Option<&CheckConclusion>) -> &str {
    conclusion.map_or("none", CheckConclusion::as_str)
}

impl fmt::Display for L2Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Missing { name } => {
                write!(f, "required check '{name}' has no run on the merged commit")
            }
            Self::NotCompleted { name, status } => {
                write!(
                    f,
                    "check '{name}' has not completed (status {})",
                    status.as_str()
                )
            }
            Self::SkippedRequired { name } => {
                write!(f, "required check '{name}' was skipped and never ran")
            }
            Self::Cancelled { name } => write!(f, "check '{name}' was cancelled"),
            Self::ZeroDuration {
                name,
                conclusion,
                at,
            } => write!(
                f,
                "check '{name}' concluded {} with zero duration at {at}",
                conclusion_text(conclusion.as_ref())
            ),
            Self::Failed { name, conclusion } => write!(
                f,
                "check '{name}' failed with conclusion {}",
                conclusion_text(conclusion.as_ref())
            ),
            Self::UntrustedPublisher {
                name,
                expected,
                seen,
            } => {
                let seen: Vec<&str> = seen
                    .iter()
                    .map(|s| s.as_deref().unwrap_or("none"))
                    .collect();
                write!(
                    f,
                    "required check '{name}' has no passing run from '{expected}' (passing runs from: {})",
                    seen.join(", ")
                )
            }
            Self::NotFromWorkflow {
                name,
                workflow,
                seen,
            } => write!(
                f,
                "required check '{name}' did not come from the workflow '{workflow}' on the merged commit (came from: {})",
                seen.join(", ")
            ),
            Self::NoRuns => f.write_str("no check runs on the merged commit and CI is required"),
        }
    }
}

/// The L2 verdict for one merged commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum L2Verdict {
    /// Every relevant check passed: the commit is settled.
    Passed,
    /// Nothing failed for real, but some checks are unsettled: retry on a later tick.
    Infra {
        /// Why each unsettled check is unsettled.
        reasons: Vec<L2Finding>,
    },
    /// At least one check failed for real: open a `decision:post-merge-revalidation` incident.
    Real {
        /// The real failures (unsettled findings of other checks are left out).
        failures: Vec<L2Finding>,
    },
}

impl L2Verdict {
    /// Stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Passed => "l2_passed",
            Self::Infra { .. } => "l2_unsettled",
            Self::Real { .. } => "l2_real_failure",
        }
    }

    /// Whether the commit is settled, so the L2 watermark may move past it.
    pub fn is_settled(&self) -> bool {
        !matches!(self, Self::Infra { .. })
    }

    /// The findings behind the verdict (empty when it passed).
    pub fn findings(&self) -> &[L2Finding] {
        match self {
            Self::Passed => &[],
            Self::Infra { reasons } => reasons,
            Self::Real { failures } => failures,
        }
    }

    /// The incident this verdict raises, if any.
    pub fn incident(&self) -> Option<IncidentLabel> {
        matches!(self, Self::Real { .. }).then_some(IncidentLabel::PostMergeRevalidation)
    }

    /// The names of the checks that failed for real, de-duplicated, in order.
    pub fn failing_checks(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        if let Self::Real { failures } = self {
            for name in failures.iter().filter_map(L2Finding::check_name) {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        names
    }
}

fn join_findings(f: &mut fmt::Formatter<'_>, findings: &[L2Finding]) -> fmt::Result {
    for (i, finding) in findings.iter().enumerate() {
        if i > 0 {
            f.write_str("; ")?;
        }
        write!(f, "{finding}")?;
    }
    Ok(())
}

impl fmt::Display for L2Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Passed => f.write_str("post-merge re-validation passed"),
            Self::Infra { reasons } => {
                f.write_str("post-merge re-validation unsettled: ")?;
                join_findings(f, reasons)
            }
            Self::Real { failures } => {
                f.write_str("post-merge re-validation failed: ")?;
                join_findings(f, failures)
            }
        }
    }
}

/// Re-validates the check runs of one merged commit (see the module docs for the rules).
///
/// `required` is the effective list of required check names (empty selects the unnamed
/// path; duplicates are ignored). `expected_publisher` is the App slug that must publish
/// a passing run of each named check; `None` or an empty slug disables that rule.
pub fn revalidate(
    runs: &[CheckRun],
    required: &[String],
    expected_publisher: Option<&str>,
    no_ci: NoCiPolicy,
) -> L2Verdict {
    revalidate_bound(runs, required, expected_publisher, no_ci, None)
}

/// Which workflow file each bound required check must come from on the merged commit,
/// and GitHub's record of the workflow jobs on it (decisions/0047).
#[derive(Debug, Clone, Copy)]
pub struct WorkflowBinding<'a> {
    /// Required check name → workflow file (`required_check_workflows`).
    pub workflows: &'a BTreeMap<String, String>,
    /// The jobs of the workflow runs on the merged commit.
    pub jobs: &'a [WorkflowJob],
    /// The repository of the commit.
    pub repo: &'a RepoName,
    /// The merged commit.
    pub sha: &'a CommitSha,
}

impl WorkflowBinding<'_> {
    /// The runs of `named` that count for the check `name`: all of them when it is not
    /// bound; else those a job of its workflow published on the commit, or the finding
    /// that none did (`None` for the finding when `named` is empty).
    fn filter<'r>(
        &self,
        name: &str,
        named: Vec<&'r CheckRun>,
    ) -> Result<Vec<&'r CheckRun>, Option<L2Finding>> {
        let Some(workflow) = self.workflows.get(name) else {
            return Ok(named);
        };
        let (ours, others): (Vec<&CheckRun>, Vec<&CheckRun>) = named
            .into_iter()
            .partition(|run| published_by_workflow(self.jobs, run, workflow, self.repo, self.sha));
        if !ours.is_empty() {
            return Ok(ours);
        }
        if others.is_empty() {
            return Err(None);
        }
        let seen: BTreeSet<String> = others
            .iter()
            .map(|run| {
                run_source(self.jobs, run, self.sha)
                    .unwrap_or_else(|| NOT_FROM_A_WORKFLOW_JOB.to_owned())
            })
            .collect();
        Err(Some(L2Finding::NotFromWorkflow {
            name: name.to_owned(),
            workflow: workflow.clone(),
            seen: seen.into_iter().collect(),
        }))
    }
}

/// [`revalidate`], with the required checks bound to workflow files counting only the runs
/// their workflow published on the commit (`binding`; `None` binds nothing).
pub fn revalidate_bound(
    runs: &[CheckRun],
    required: &[String],
    expected_publisher: Option<&str>,
    no_ci: NoCiPolicy,
    binding: Option<&WorkflowBinding<'_>>,
) -> L2Verdict {
    let mut findings = Vec::new();
    if required.is_empty() {
        unnamed_path(runs, no_ci, &mut findings);
    } else {
        let publisher = expected_publisher.filter(|slug| !slug.is_empty());
        let mut seen: Vec<&str> = Vec::new();
        for name in required {
            if seen.contains(&name.as_str()) {
                continue;
            }
            seen.push(name);
            named_check(runs, name, publisher, binding, &mut findings);
        }
    }
    verdict_from(findings)
}

fn push_unique(findings: &mut Vec<L2Finding>, finding: L2Finding) {
    if !findings.contains(&finding) {
        findings.push(finding);
    }
}

fn verdict_from(findings: Vec<L2Finding>) -> L2Verdict {
    let (real, infra): (Vec<L2Finding>, Vec<L2Finding>) = findings
        .into_iter()
        .partition(|finding| finding.class() == FindingClass::Real);
    if !real.is_empty() {
        L2Verdict::Real { failures: real }
    } else if !infra.is_empty() {
        L2Verdict::Infra { reasons: infra }
    } else {
        L2Verdict::Passed
    }
}

/// The infra finding for a completed, non-passing run, if it is infra: `cancelled`, or
/// zero duration.
fn infra_failure(run: &CheckRun) -> Option<L2Finding> {
    if run.conclusion == Some(CheckConclusion::Cancelled) {
        return Some(L2Finding::Cancelled {
            name: run.name.clone(),
        });
    }
    match (run.started_at, run.completed_at) {
        (Some(started), Some(completed)) if started == completed => Some(L2Finding::ZeroDuration {
            name: run.name.clone(),
            conclusion: run.conclusion.clone(),
            at: started,
        }),
        _ => None,
    }
}

fn failed(run: &CheckRun) -> L2Finding {
    L2Finding::Failed {
        name: run.name.clone(),
        conclusion: run.conclusion.clone(),
    }
}

fn not_completed(name: &str, runs: &[&CheckRun]) -> Option<L2Finding> {
    runs.iter()
        .find(|run| run.status != CheckStatus::Completed)
        .map(|run| L2Finding::NotCompleted {
            name: name.to_owned(),
            status: run.status,
        })
}

fn named_check(
    runs: &[CheckRun],
    name: &str,
    publisher: Option<&str>,
    binding: Option<&WorkflowBinding<'_>>,
    findings: &mut Vec<L2Finding>,
) {
    let named: Vec<&CheckRun> = runs.iter().filter(|run| run.name == name).collect();
    let named = match binding.map(|binding| binding.filter(name, named.clone())) {
        None => named,
        Some(Ok(ours)) => ours,
        Some(Err(Some(finding))) => {
            findings.push(finding);
            return;
        }
        Some(Err(None)) => Vec::new(),
    };
    if named.is_empty() {
        findings.push(L2Finding::Missing {
            name: name.to_owned(),
        });
        return;
    }
    let completed: Vec<&CheckRun> = named
        .iter()
        .copied()
        .filter(|run| run.status == CheckStatus::Completed)
        .collect();
    if completed.is_empty() {
        findings.extend(not_completed(name, &named));
        return;
    }
    let mut own: Vec<L2Finding> = Vec::new();
    let mut passing_slugs: Vec<Option<String>> = Vec::new();
    for run in completed {
        match &run.conclusion {
            Some(CheckConclusion::Success | CheckConclusion::Neutral) => {
                passing_slugs.push(run.app_slug.clone());
            }
            Some(CheckConclusion::Skipped) => push_unique(
                &mut own,
                L2Finding::SkippedRequired {
                    name: name.to_owned(),
                },
            ),
            _ => push_unique(&mut own, infra_failure(run).unwrap_or_else(|| failed(run))),
        }
    }
    if own.is_empty()
        && let Some(expected) = publisher
        && !passing_slugs
            .iter()
            .any(|slug| slug.as_deref() == Some(expected))
    {
        own.push(L2Finding::UntrustedPublisher {
            name: name.to_owned(),
            expected: expected.to_owned(),
            seen: passing_slugs,
        });
    }
    // A name with a real failure reports only its real failures.
    if own.iter().any(|f| f.class() == FindingClass::Real) {
        own.retain(|f| f.class() == FindingClass::Real);
    }
    findings.extend(own);
}

fn unnamed_path(runs: &[CheckRun], no_ci: NoCiPolicy, findings: &mut Vec<L2Finding>) {
    if runs.is_empty() {
        if no_ci == NoCiPolicy::Deny {
            findings.push(L2Finding::NoRuns);
        }
        return;
    }
    for run in runs {
        if run.status != CheckStatus::Completed {
            push_unique(
                findings,
                L2Finding::NotCompleted {
                    name: run.name.clone(),
                    status: run.status,
                },
            );
            continue;
        }
        match &run.conclusion {
            Some(
                CheckConclusion::Success | CheckConclusion::Neutral | CheckConclusion::Skipped,
            ) => {}
            _ => push_unique(findings, infra_failure(run).unwrap_or_else(|| failed(run))),
        }
    }
}

/// How long a merged commit may stay unsettled before L2 escalates it.
pub const L2_STALL_DEADLINE_HOURS: i64 = 24;

/// Whether an unsettled commit has waited too long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StallStatus {
    /// Still within the grace period: stop this repository's L2 scan and retry next tick.
    Waiting {
        /// When the commit was first seen unsettled.
        first_seen: Timestamp,
        /// When it will count as stalled.
        deadline: Timestamp,
    },
    /// Unsettled for 24 hours or more: open one `decision:l2-stalled` incident and
    /// force-settle the commit.
    Stalled {
        /// When the commit was first seen unsettled.
        first_seen: Timestamp,
        /// Whole hours unsettled so far.
        hours: i64,
    },
}

impl StallStatus {
    /// Stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Waiting { .. } => "l2_unsettled_waiting",
            Self::Stalled { .. } => "l2_stalled",
        }
    }

    /// The incident this status raises, if any.
    pub fn incident(&self) -> Option<IncidentLabel> {
        matches!(self, Self::Stalled { .. }).then_some(IncidentLabel::L2Stalled)
    }
}

impl fmt::Display for StallStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Waiting {
                first_seen,
                deadline,
            } => write!(
                f,
                "unsettled since {first_seen}; escalates at {deadline} ({L2_STALL_DEADLINE_HOURS} h)"
            ),
            Self::Stalled { first_seen, hours } => write!(
                f,
                "unsettled since {first_seen} ({hours} h, deadline {L2_STALL_DEADLINE_HOURS} h): stalled"
            ),
        }
    }
}

/// The stall rule: a commit first seen unsettled at `first_seen` is stalled once `now` is
/// at least 24 hours later.
pub fn l2_stall(first_seen: Timestamp, now: Timestamp) -> StallStatus {
    let deadline = first_seen.plus_hours(L2_STALL_DEADLINE_HOURS);
    if now >= deadline {
        StallStatus::Stalled {
            first_seen,
            hours: now.seconds_since(first_seen) / 3600,
        }
    } else {
        StallStatus::Waiting {
            first_seen,
            deadline,
        }
    }
}

/// How to undo a bad merged commit by hand, depending on what is known of its parents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecoveryInstructions {
    /// The commit has at most one parent: a plain `git revert <sha>` undoes it.
    Revert {
        /// The commit to revert.
        sha: CommitSha,
    },
    /// A merge commit: the mainline parent must be chosen by a person.
    MultiParent {
        /// The commit to revert.
        sha: CommitSha,
        /// Its parents, in order.
        parents: Vec<CommitSha>,
    },
    /// The parents are not known: inspect before reverting.
    UnknownParents {
        /// The commit to revert.
        sha: CommitSha,
    },
}

impl RecoveryInstructions {
    /// Picks the instructions for `sha` given its parents (`None` when they could not be read).
    pub fn for_commit(sha: &CommitSha, parents: Option<&[CommitSha]>) -> Self {
        let sha = sha.clone();
        match parents {
            None => Self::UnknownParents { sha },
            Some(parents) if parents.len() <= 1 => Self::Revert { sha },
            Some(parents) => Self::MultiParent {
                sha,
                parents: parents.to_vec(),
            },
        }
    }

    /// Stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Revert { .. } => "recovery_revert",
            Self::MultiParent { .. } => "recovery_multi_parent",
            Self::UnknownParents { .. } => "recovery_inspect_parents",
        }
    }

    /// The Markdown block for the incident body.
    pub fn markdown(&self) -> String {
        match self {
            Self::Revert { sha } => format!(
                "The commit has a single parent. To restore a known-good `main`, revert it:\n\n\
                 ```\ngit revert {sha}\n```\n\n\
                 then open a pull request with the revert; the `decision:auto-revert` label lets the \
                 classifier treat it as Quadrant C."
            ),
            Self::MultiParent { sha, parents } => {
                let list: Vec<String> = parents
                    .iter()
                    .enumerate()
                    .map(|(i, p)| format!("{}. `{p}`", i + 1))
                    .collect();
                format!(
                    "The commit has {n} parents, so a plain `git revert` would fail and the bot will \
                     not guess which side is the mainline. Recover by hand:\n\n\
                     1. List the parents and check which one is the previous `main`:\n\n\
                     ```\ngit show --format=%P --no-patch {sha}\n```\n\n\
                     Parents as read:\n{list}\n\n\
                     2. Revert against that mainline parent (N is its 1-based position above):\n\n\
                     ```\ngit revert -m N {sha}\n```",
                    n = parents.len(),
                    list = list.join("\n"),
                )
            }
            Self::UnknownParents { sha } => format!(
                "The commit's parents could not be read. Inspect them before reverting:\n\n\
                 ```\ngit show --format=%P --no-patch {sha}\n```\n\n\
                 With one parent, run `git revert {sha}`. With several, verify the mainline \
                 parent and run `git revert -m N {sha}` by hand, N being that parent's 1-based position."
            ),
        }
    }
}

impl fmt::Display for RecoveryInstructions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Revert { sha } => write!(f, "revert with `git revert {sha}`"),
            Self::MultiParent { sha, parents } => write!(
                f,
                "merge commit with {} parents: inspect with `git show --format=%P {sha}`, verify the mainline parent, then run `git revert -m N {sha}` by hand",
                parents.len()
            ),
            Self::UnknownParents { sha } => write!(
                f,
                "parents unknown: inspect with `git show --format=%P {sha}` before reverting"
            ),
        }
    }
}

/// Whether the bot may open an automatic revert pull request for a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RevertEligibility {
    /// Proven to have at most one parent: a plain `git revert` is well defined.
    Eligible {
        /// The number of parents (0 for a root commit, else 1).
        parents: usize,
    },
    /// Not eligible: fall back to the incident alone, with this reason in it.
    NotEligible(NotEligibleReason),
}

/// Why a commit may not be reverted automatically.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotEligibleReason {
    /// A merge commit: choosing `-m N` is left to a person.
    MultiParent {
        /// The parents, in order.
        parents: Vec<CommitSha>,
    },
    /// The parents could not be read, so "at most one parent" is not proven.
    Unprovable,
}

impl RevertEligibility {
    /// Stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Eligible { .. } => "revert_eligible",
            Self::NotEligible(NotEligibleReason::MultiParent { .. }) => "revert_multi_parent",
            Self::NotEligible(NotEligibleReason::Unprovable) => "revert_parents_unprovable",
        }
    }

    /// Whether an automatic revert may proceed.
    pub fn is_eligible(&self) -> bool {
        matches!(self, Self::Eligible { .. })
    }
}

impl fmt::Display for RevertEligibility {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Eligible { parents } => {
                write!(f, "automatic revert allowed: commit has {parents} parent(s)")
            }
            Self::NotEligible(NotEligibleReason::MultiParent { parents }) => {
                let short: Vec<&str> = parents.iter().map(CommitSha::short).collect();
                write!(
                    f,
                    "automatic revert refused: merge commit with {} parents ({}); inspect with `git show --format=%P <sha>`, verify the mainline parent and run `git revert -m N <sha>` by hand",
                    parents.len(),
                    short.join(", ")
                )
            }
            Self::NotEligible(NotEligibleReason::Unprovable) => f.write_str(
                "automatic revert refused: the commit's parents could not be read, so a single parent is not proven",
            ),
        }
    }
}

/// Auto-revert eligibility: eligible only when `parents` is known and has at most one entry.
pub fn revert_eligibility(parents: Option<&[CommitSha]>) -> RevertEligibility {
    match parents {
        None => RevertEligibility::NotEligible(NotEligibleReason::Unprovable),
        Some(parents) if parents.len() <= 1 => RevertEligibility::Eligible {
            parents: parents.len(),
        },
        Some(parents) => RevertEligibility::NotEligible(NotEligibleReason::MultiParent {
            parents: parents.to_vec(),
        }),
    }
}

/// The Markdown body of a `decision:post-merge-revalidation` incident: the failing checks
/// and the parent-aware recovery instructions.
pub fn revalidation_incident_body(
    repo: &RepoName,
    sha: &CommitSha,
    verdict: &L2Verdict,
    recovery: &RecoveryInstructions,
) -> String {
    let lines: Vec<String> = verdict
        .findings()
        .iter()
        .map(|finding| format!("- {finding}"))
        .collect();
    format!(
        "**Post-merge re-validation failed** on `{repo}` at `{short}`.\n\n\
         Failing checks:\n{lines}\n\n\
         These checks fail on the merged commit itself: a regression on `main`, not an \
         infrastructure problem (cancelled, zero-duration or unfinished checks are retried \
         instead).\n\n\
         {recovery}",
        short = sha.short(),
        lines = lines.join("\n"),
        recovery = recovery.markdown(),
    )
}

/// The Markdown body of a `decision:l2-stalled` incident.
pub fn stalled_incident_body(
    repo: &RepoName,
    sha: &CommitSha,
    first_seen: Timestamp,
    recovery: &RecoveryInstructions,
) -> String {
    format!(
        "**Post-merge re-validation stalled** on `{repo}` at `{short}`.\n\n\
         The commit's checks have been unsettled (unfinished, cancelled, skipped while \
         required, or of zero duration) since `{first_seen}`, {L2_STALL_DEADLINE_HOURS} hours \
         or more. L2 no longer waits for it: the commit is force-settled so newer commits \
         are re-validated, and this issue records why.\n\n\
         Re-run CI on `{short}`. If the code turns out to be bad:\n\n{recovery}",
        short = sha.short(),
        recovery = recovery.markdown(),
    )
}

#[cfg(test)]
mod tests;
