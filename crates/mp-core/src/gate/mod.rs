//! The L1 pre-merge gate: C1-C5, the classifier-publisher gate and the L4 registry check,
//! evaluated together into one [`GateReport`] that lists every failure.
//!
//! [`evaluate_gate`] always runs every built-in condition; none can be disabled and none
//! stops the others. Each condition lives in its own module and returns one
//! [`ConditionResult`] per problem found (or one passing result). A result carries a
//! stable code, typed [`Evidence`] and a one-line `Display` shared by the PR diagnostic
//! comment, the audit log and the CLI.

pub mod burn_in;
pub mod c1_ready_to_merge;
pub mod c2_checks_green;
pub mod c3_owner_approval;
pub mod c4_base_is_main;
pub mod c5_trailers;
pub mod classifier_publisher;
pub mod diagnostic;
pub mod l4_registry;

#[cfg(test)]
pub(crate) mod testkit;

use std::collections::BTreeMap;
use std::fmt;

use crate::approval::{
    HeadAtLabel, NoHeadEvidence, Receipts, SettleWindow, TrustRoots, Undeterminable,
    UnverifiedLabel, VerifiedBy,
};
use crate::config::SkillsPolicy;
use crate::context::{CheckConclusion, CheckStatus, PrContext};
use crate::ids::{CommitSha, Login, PrNumber, RepoName, Timestamp};
use crate::quadrant::Quadrant;
use crate::registry::AgentRegistry;
use crate::severity::Severity;
use crate::skill::builtin::{BuiltIn, EnabledBuiltIns};
use crate::trailers::TrailerProblem;

/// The publisher assumed when none is configured: GitHub Actions' app slug.
pub const DEFAULT_PUBLISHER: &str = "github-actions";
/// The check-run name of the published classifier verdict.
pub const CLASSIFIER_JUDGMENT: &str = "classifier-judgment";
/// Severity of the built-in blocking conditions (C1-C5 and the publisher gate).
pub const CORE_SEVERITY: Severity = Severity::P0;
/// Default severity of the L4 registry check: advisory until promoted.
pub const DEFAULT_REGISTRY_SEVERITY: Severity = Severity::P2;
/// Default minutes after the head commit after which a named required check with no run at
/// all is reported as never reported rather than missing.
pub const DEFAULT_CHECK_REPORT_TIMEOUT_MINUTES: u32 = 60;

/// Everything the gate needs besides the pull request itself, resolved for one repository.
///
/// Build it from [`GatePolicy::default`] and set the fields that differ.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct GatePolicy {
    /// The owner's allowlisted actors: the only humans who may apply `ready-to-merge` (C1)
    /// or approve (C3). Empty means nobody is allowlisted, so C1 cannot pass.
    pub allowlist: Vec<Login>,
    /// The bot user (`<app-slug>[bot]`). Only its comments count as receipts, and labels it
    /// applied count as trusted for C3. `None`: no receipt counts.
    pub bot: Option<Login>,
    /// Named required checks for this repository (per-repository override, else global).
    /// Empty selects the unnamed rules of C2.
    pub required_checks: Vec<String>,
    /// The app slug whose check runs count for C2 (default `github-actions`).
    pub expected_publisher: String,
    /// Required check name → the workflow file whose jobs alone may publish it
    /// (`required_check_workflows`, decisions/0047). Empty: any run of the expected
    /// publisher counts.
    pub required_check_workflows: BTreeMap<String, String>,
    /// With no named required checks, whether zero check runs pass C2.
    pub allow_no_ci: bool,
    /// The only app slug allowed to publish `classifier-judgment` check runs
    /// (default `github-actions`).
    pub classifier_publisher_slug: String,
    /// The agent registry for the L4 check; `None` makes L4 a no-op pass.
    pub registry: Option<AgentRegistry>,
    /// Severity of L4 failures: P2 (advisory) by default, P0 once promoted by the burn-in
    /// clock or an override (see [`burn_in`]).
    pub registry_severity: Severity,
    /// Minutes after the head commit's committer date after which a named required check
    /// with no run at all is reported as `check_never_reported` instead of `check_missing`
    /// (default 60).
    pub check_report_timeout_minutes: u32,
    /// How long a head must have been the tip before an allowlisted human's label binds it
    /// (`env.yml` `label_settle_seconds`, default 120; decisions/0042).
    pub label_settle: SettleWindow,
}

impl Default for GatePolicy {
    fn default() -> Self {
        Self {
            allowlist: Vec::new(),
            bot: None,
            required_checks: Vec::new(),
            expected_publisher: DEFAULT_PUBLISHER.to_owned(),
            required_check_workflows: BTreeMap::new(),
            allow_no_ci: false,
            classifier_publisher_slug: DEFAULT_PUBLISHER.to_owned(),
            registry: None,
            registry_severity: DEFAULT_REGISTRY_SEVERITY,
            check_report_timeout_minutes: DEFAULT_CHECK_REPORT_TIMEOUT_MINUTES,
            label_settle: SettleWindow::DEFAULT,
        }
    }
}

impl GatePolicy {
    /// The allowlist and the bot user as label-applier trust roots.
    pub fn trust_roots(&self) -> TrustRoots<'_> {
        TrustRoots::new(&self.allowlist, self.bot.as_ref()).with_settle_window(self.label_settle)
    }
}

/// Which gate condition a result belongs to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ConditionId {
    /// C1: `ready-to-merge` present, receipt-bound to the head, applied by an allowlisted actor.
    C1,
    /// C2: required checks green from the expected publisher.
    C2,
    /// C3: owner approval, or a quadrant that needs none.
    C3,
    /// C4: the PR base is the current `main` head.
    C4,
    /// C5: every commit carries well-formed identity trailers.
    C5,
    /// Every `classifier-judgment` check run comes from the canonical publisher.
    ClassifierPublisher,
    /// L4: declared agent tools and models are in the agent registry.
    AgentRegistry,
    /// A user validator, by name.
    User(String),
}

impl ConditionId {
    /// Stable machine-readable code.
    pub fn code(&self) -> &str {
        match self {
            Self::C1 => "c1_ready_to_merge",
            Self::C2 => "c2_checks_green",
            Self::C3 => "c3_owner_approval",
            Self::C4 => "c4_base_is_main",
            Self::C5 => "c5_trailers",
            Self::ClassifierPublisher => "classifier_publisher",
            Self::AgentRegistry => "l4_agent_registry",
            Self::User(name) => name,
        }
    }

    /// The built-in validator this condition is; `None` for a user validator.
    pub fn built_in(&self) -> Option<BuiltIn> {
        Some(match self {
            Self::C1 => BuiltIn::ReadyToMerge,
            Self::C2 => BuiltIn::CiGreen,
            Self::C3 => BuiltIn::OwnerApproval,
            Self::C4 => BuiltIn::BaseUpToDate,
            Self::C5 => BuiltIn::Trailers,
            Self::ClassifierPublisher => BuiltIn::ClassifierPublisher,
            Self::AgentRegistry => BuiltIn::AgentRegistry,
            Self::User(_) => return None,
        })
    }

    /// The validator name used in `skills.yml` (`disabled`, `severity_overrides`).
    pub fn validator_name(&self) -> &str {
        match self.built_in() {
            Some(built_in) => built_in.name(),
            None => self.code(),
        }
    }

    /// Whether the condition is a built-in that can be neither disabled nor made
    /// non-blocking (C1-C5 and the publisher gate).
    pub fn is_required(&self) -> bool {
        self.built_in().is_some_and(BuiltIn::is_core_l1_validator)
    }
}

impl fmt::Display for ConditionId {
    /// The prefix of result lines: `C1` .. `C5`, `Publisher`, `L4`, or the user validator name.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::C1 => "C1",
            Self::C2 => "C2",
            Self::C3 => "C3",
            Self::C4 => "C4",
            Self::C5 => "C5",
            Self::ClassifierPublisher => "Publisher",
            Self::AgentRegistry => "L4",
            Self::User(name) => name,
        })
    }
}

/// The outcome of one result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The condition holds.
    Pass,
    /// The condition fails at a blocking severity (P0/P1): no merge.
    Fail,
    /// The condition fails at a non-blocking severity: a warning (P2) or a record (P3).
    Advisory,
}

/// Formats `name, name` lists, with `none` for an empty list.
struct List<'a, T>(&'a [T]);

impl<T: fmt::Display> fmt::Display for List<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("none");
        }
        for (i, item) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{item}")?;
        }
        Ok(())
    }
}

fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}

/// Shown for a check run published without an app.
pub const MISSING_APP: &str = "<missing app>";

/// Shown for a GitHub Actions check run that is no job of any workflow run on the head:
/// one created through the Checks API (decisions/0047).
pub const NO_WORKFLOW_JOB: &str = "<no workflow job>";

/// What a result rests on: the values that made a condition pass or fail.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Evidence {
    // --- C1 ---
    /// C1 holds: an allowlisted actor applied the label to the current head (GitHub's
    /// record of the head branch proves it) and the bot's receipt records it.
    ReadyToMerge {
        /// Who established the label.
        applier: Login,
        /// The current head, named by the receipt.
        head: CommitSha,
        /// The server-side evidence binding the label to the head.
        proof: HeadAtLabel,
    },
    /// Nothing proves the label was applied to the current head.
    HeadNotProven {
        /// The label.
        label: String,
        /// The current head.
        head: CommitSha,
        /// Why.
        reason: NoHeadEvidence,
    },
    /// The label is not on the pull request.
    LabelMissing {
        /// The label.
        label: String,
        /// The pull request.
        pr: PrNumber,
    },
    /// No bot receipt binds the label to the current head.
    ReceiptMissing {
        /// The label.
        label: String,
        /// The current head.
        head: CommitSha,
    },
    /// The label's receipt names an older head.
    ReceiptStale {
        /// The label.
        label: String,
        /// The head the receipt names.
        receipt_head: CommitSha,
        /// The current head.
        head: CommitSha,
    },
    /// The label was established by someone not on the allowlist.
    ApplierNotAllowlisted {
        /// The label.
        label: String,
        /// Who established it.
        actor: Login,
        /// The allowlist it was checked against.
        allowlist: Vec<Login>,
    },
    /// The label's establishing event names no actor.
    ApplierUnknown {
        /// The label.
        label: String,
    },
    /// The label's establishing event cannot be determined.
    ApplierUndeterminable {
        /// The label.
        label: String,
        /// Why.
        reason: Undeterminable,
    },

    // --- C2 ---
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
        /// [`Evidence::CheckWrongWorkflow`].
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

    // --- C3 ---
    /// C3 holds: the quadrant needs no owner approval.
    QuadrantAutoApproved {
        /// The classifier quadrant (A, B or C).
        quadrant: Quadrant,
    },
    /// C3 holds: a verified owner approval label.
    OwnerApproved {
        /// The approval label.
        label: String,
        /// Why it is honoured.
        verified: VerifiedBy,
    },
    /// C3 fails: the quadrant is D (or unknown) and no approval label is verified.
    OwnerApprovalMissing {
        /// The classifier quadrant, if known.
        quadrant: Option<Quadrant>,
        /// Approval labels present on the PR that are not honoured, with the reason.
        unverified: Vec<UnverifiedLabel>,
    },

    // --- C4 ---
    /// C4 holds: the PR base is the current `main` head.
    BaseCurrent {
        /// The PR base (= `main` head).
        base: CommitSha,
    },
    /// C4 fails: the PR base is not the current `main` head.
    BaseStale {
        /// The PR base.
        base: CommitSha,
        /// The current `main` head.
        main: CommitSha,
    },

    // --- C5 ---
    /// C5 holds for every commit.
    TrailersWellFormed {
        /// How many commits were checked.
        commits: usize,
        /// How many of the pull request's commits are mp's own merges of `main` into the
        /// branch (not asked for trailers, not counted in `commits`).
        mp_updates: usize,
    },
    /// One commit breaks the identity-trailer contract in one way.
    TrailerProblem {
        /// The commit.
        sha: CommitSha,
        /// The problem.
        problem: TrailerProblem,
    },
    /// The PR has no commits, so no identity can be checked (fails closed).
    NoCommits,

    // --- classifier publisher ---
    /// The publisher gate holds: there is no `classifier-judgment` run.
    NoJudgment,
    /// The publisher gate holds: every `classifier-judgment` run comes from the canonical app.
    JudgmentsCanonical {
        /// How many runs were inspected.
        runs: usize,
    },
    /// A `classifier-judgment` run was published by another app (or none).
    PublisherMismatch {
        /// The check-run name.
        check: String,
        /// The canonical publisher slug.
        expected: String,
        /// The slug that published it, if any.
        seen: Option<String>,
    },

    // --- L4 ---
    /// L4 holds trivially: no agent registry is configured.
    NoRegistry,
    /// L4 holds: every declared tool/model pair is registered.
    RegistryConforms {
        /// How many commits were checked.
        commits: usize,
    },
    /// A commit declares a tool/model pair the registry does not allow.
    RegistryMismatch {
        /// The commit.
        sha: CommitSha,
        /// The declared `Agent-Tool`.
        tool: String,
        /// The declared `Agent-Model`, if any.
        model: Option<String>,
    },

    // --- user validators ---
    /// A user validator's own message.
    UserValidator {
        /// The message, one line.
        message: String,
    },
}

impl Evidence {
    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::ReadyToMerge { .. } => "ready_to_merge",
            Self::HeadNotProven { .. } => "head_not_proven",
            Self::LabelMissing { .. } => "label_missing",
            Self::ReceiptMissing { .. } => "receipt_missing",
            Self::ReceiptStale { .. } => "receipt_stale",
            Self::ApplierNotAllowlisted { .. } => "applier_not_allowlisted",
            Self::ApplierUnknown { .. } => "applier_unknown",
            Self::ApplierUndeterminable { .. } => "applier_undeterminable",
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
            Self::QuadrantAutoApproved { .. } => "quadrant_auto_approved",
            Self::OwnerApproved { .. } => "owner_approved",
            Self::OwnerApprovalMissing { .. } => "owner_approval_missing",
            Self::BaseCurrent { .. } => "base_current",
            Self::BaseStale { .. } => "base_stale",
            Self::TrailersWellFormed { .. } => "trailers_well_formed",
            Self::TrailerProblem { problem, .. } => problem.code(),
            Self::NoCommits => "no_commits",
            Self::NoJudgment => "no_judgment",
            Self::JudgmentsCanonical { .. } => "judgments_canonical",
            Self::PublisherMismatch { .. } => "publisher_mismatch",
            Self::NoRegistry => "no_registry",
            Self::RegistryConforms { .. } => "registry_conforms",
            Self::RegistryMismatch { .. } => "registry_mismatch",
            Self::UserValidator { .. } => "user_validator",
        }
    }
}

impl fmt::Display for Evidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ReadyToMerge {
                applier,
                head,
                proof,
            } => write!(
                f,
                "label 'ready-to-merge' applied by {applier} and recorded for head {}; bound by: {proof}",
                head.short()
            ),
            Self::HeadNotProven {
                label,
                head,
                reason,
            } => write!(
                f,
                "label '{label}' is not bound to head {}: {reason}; re-apply the label",
                head.short()
            ),
            Self::LabelMissing { label, pr } => write!(f, "label '{label}' not set on PR #{pr}"),
            Self::ReceiptMissing { label, head } => write!(
                f,
                "label '{label}' has no current-head receipt (head {}); the bot records one once an allowlisted actor applies it",
                head.short()
            ),
            Self::ReceiptStale {
                label,
                receipt_head,
                head,
            } => write!(
                f,
                "label '{label}' was recorded for head {} but the PR head is now {} — stale; re-apply the label",
                receipt_head.short(),
                head.short()
            ),
            Self::ApplierNotAllowlisted {
                label,
                actor,
                allowlist,
            } => write!(
                f,
                "label '{label}' was applied by {actor}, not an allowlisted actor (allowlist: {})",
                List(allowlist)
            ),
            Self::ApplierUnknown { label } => {
                write!(f, "label '{label}' was applied by an unknown actor")
            }
            Self::ApplierUndeterminable { label, reason } => write!(
                f,
                "label '{label}' has no determinable applier: {reason}"
            ),
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
            Self::QuadrantAutoApproved { quadrant } => {
                write!(f, "quadrant {quadrant} needs no owner approval")
            }
            Self::OwnerApproved { label, verified } => {
                write!(f, "owner approval '{label}' ({verified})")
            }
            Self::OwnerApprovalMissing {
                quadrant,
                unverified,
            } => {
                let quadrant = quadrant.map_or("unknown", Quadrant::as_str);
                write!(f, "owner approval missing (quadrant={quadrant})")?;
                if !unverified.is_empty() {
                    write!(f, "; not honoured: {}", List(unverified))?;
                }
                Ok(())
            }
            Self::BaseCurrent { base } => {
                write!(f, "PR base {} is the main HEAD", base.short())
            }
            Self::BaseStale { base, main } => write!(
                f,
                "PR base {} is stale (main HEAD is {}). Rebase the PR.",
                base.short(),
                main.short()
            ),
            Self::TrailersWellFormed {
                commits,
                mp_updates,
            } => {
                write!(
                    f,
                    "identity trailers well formed on {commits} commit{}",
                    plural(*commits)
                )?;
                if *mp_updates > 0 {
                    write!(
                        f,
                        " ({mp_updates} merge{} of main by mp's branch update not asked for trailers)",
                        plural(*mp_updates)
                    )?;
                }
                Ok(())
            }
            Self::TrailerProblem { sha, problem } => match problem {
                TrailerProblem::Missing { .. } => write!(f, "commit {} {problem}", sha.short()),
                _ => write!(f, "commit {} has {problem}", sha.short()),
            },
            Self::NoCommits => f.write_str("PR has no commits to check"),
            Self::NoJudgment => write!(f, "no '{CLASSIFIER_JUDGMENT}' check run"),
            Self::JudgmentsCanonical { runs } => write!(
                f,
                "all {runs} '{CLASSIFIER_JUDGMENT}' check runs come from the canonical publisher"
            ),
            Self::PublisherMismatch {
                check,
                expected,
                seen,
            } => write!(
                f,
                "check run '{check}' was published by '{}', not the canonical publisher '{expected}'",
                seen.as_deref().unwrap_or(MISSING_APP)
            ),
            Self::NoRegistry => f.write_str("no agent registry configured"),
            Self::RegistryConforms { commits } => write!(
                f,
                "declared agent tools and models are registered on {commits} commit{}",
                plural(*commits)
            ),
            Self::RegistryMismatch { sha, tool, model } => write!(
                f,
                "commit {} declares Agent-Tool '{tool}' / Agent-Model '{}', not present in the agent registry",
                sha.short(),
                model.as_deref().unwrap_or("")
            ),
            Self::UserValidator { message } => f.write_str(message),
        }
    }
}

/// One result of one condition.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConditionResult {
    /// The condition.
    pub id: ConditionId,
    /// The condition's severity (decides whether a failure blocks).
    pub severity: Severity,
    /// Pass, blocking failure, or non-blocking failure.
    pub outcome: Outcome,
    /// What the outcome rests on.
    pub evidence: Evidence,
}

impl ConditionResult {
    /// Whether this is C2 waiting for a required check that has not reported yet (while
    /// the head is younger than the report timeout) or has not completed.
    pub fn is_pending_check(&self) -> bool {
        self.id == ConditionId::C2
            && matches!(
                self.evidence,
                Evidence::CheckMissing { .. } | Evidence::CheckNotCompleted { .. }
            )
    }

    /// A passing result.
    pub fn pass(id: ConditionId, severity: Severity, evidence: Evidence) -> Self {
        Self {
            id,
            severity,
            outcome: Outcome::Pass,
            evidence,
        }
    }

    /// A failing result: [`Outcome::Fail`] when `severity` blocks, else [`Outcome::Advisory`].
    pub fn fail(id: ConditionId, severity: Severity, evidence: Evidence) -> Self {
        let outcome = if severity.blocks() {
            Outcome::Fail
        } else {
            Outcome::Advisory
        };
        Self {
            id,
            severity,
            outcome,
            evidence,
        }
    }

    /// The evidence's stable code.
    pub fn code(&self) -> &'static str {
        self.evidence.code()
    }

    /// Whether this result blocks the merge.
    pub fn is_blocking(&self) -> bool {
        self.outcome == Outcome::Fail
    }

    /// Whether this result is a warning shown in the diagnostic (a P2 failure).
    pub fn is_warning(&self) -> bool {
        self.outcome == Outcome::Advisory && self.severity == Severity::P2
    }
}

impl fmt::Display for ConditionResult {
    /// One line, e.g. `C4: PR base abc1234 is stale (main HEAD is def5678). Rebase the PR.`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.id, self.evidence)
    }
}

/// The pull request a report is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PrRef {
    /// The repository.
    pub repo: RepoName,
    /// The pull request number.
    pub number: PrNumber,
    /// The head evaluated.
    pub head: CommitSha,
}

impl PrRef {
    /// The reference of a pull request context.
    pub fn of(pr: &PrContext) -> Self {
        Self {
            repo: pr.repo.clone(),
            number: pr.number,
            head: pr.head_sha.clone(),
        }
    }
}

impl fmt::Display for PrRef {
    /// `owner/repo#N`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#{}", self.repo, self.number)
    }
}

/// Every result of one gate evaluation, in condition order (C1, C2, C3, C4, C5,
/// publisher gate, L4, then user validators appended by the caller).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct GateReport {
    /// The pull request and head evaluated.
    pub pr: PrRef,
    /// Every result; each condition has at least one.
    pub results: Vec<ConditionResult>,
}

impl GateReport {
    /// An empty report for `pr`.
    pub fn new(pr: PrRef) -> Self {
        Self {
            pr,
            results: Vec::new(),
        }
    }

    /// Appends results, e.g. those of user validators.
    pub fn extend(&mut self, results: impl IntoIterator<Item = ConditionResult>) {
        self.results.extend(results);
    }

    /// The results that block the merge, in order.
    pub fn blocking(&self) -> impl Iterator<Item = &ConditionResult> {
        self.results.iter().filter(|r| r.is_blocking())
    }

    /// The non-blocking P2 failures shown as warnings, in order.
    pub fn warnings(&self) -> impl Iterator<Item = &ConditionResult> {
        self.results.iter().filter(|r| r.is_warning())
    }

    /// Whether nothing blocks the merge.
    pub fn passed(&self) -> bool {
        self.blocking().next().is_none()
    }

    /// The results of one condition.
    pub fn results_for<'a>(
        &'a self,
        id: &'a ConditionId,
    ) -> impl Iterator<Item = &'a ConditionResult> + 'a {
        self.results.iter().filter(move |r| r.id == *id)
    }

    /// Whether the owner's approval (C3) is the only thing that blocks: the case routed to
    /// the decision inbox rather than answered with a diagnostic.
    pub fn awaits_owner_only(&self) -> bool {
        let mut blocking = self.blocking().peekable();
        blocking.peek().is_some() && blocking.all(|r| r.id == ConditionId::C3)
    }

    /// Whether something fails and every failure is a required check that has not
    /// reported or not completed yet: the pull request waits for CI, nothing is wrong.
    pub fn awaits_checks_only(&self) -> bool {
        let mut blocking = self.blocking().peekable();
        blocking.peek().is_some() && blocking.all(ConditionResult::is_pending_check)
    }

    /// Whether the base is behind `main` and nothing else fails but checks still to come:
    /// bringing the branch up to date is all the pull request needs from mp.
    pub fn awaits_update_only(&self) -> bool {
        let mut stale = false;
        let rest_pending = self.blocking().all(|r| {
            let is_stale =
                r.id == ConditionId::C4 && matches!(r.evidence, Evidence::BaseStale { .. });
            stale |= is_stale;
            is_stale || r.is_pending_check()
        });
        stale && rest_pending
    }
}

/// Evaluates the L1 gate on a pull request.
///
/// Always runs, in this order and without short-circuit: C1 (`ready-to-merge` receipt and
/// applier), C2 (checks), C3 (owner approval for `quadrant`; `None` = unknown, which needs
/// an approval), C4 (base is `main_head`), C5 (identity trailers), the classifier-publisher
/// gate, and L4 (registry, at `policy.registry_severity`). Every problem found is its own
/// result, so the report lists every failure at once.
pub fn evaluate_gate(
    pr: &PrContext,
    receipts: &Receipts,
    main_head: &CommitSha,
    quadrant: Option<Quadrant>,
    policy: &GatePolicy,
    now: Timestamp,
) -> GateReport {
    let input = GateInput {
        pr,
        receipts,
        main_head,
        quadrant,
        policy,
        now,
    };
    evaluate_gate_with(&input, EnabledBuiltIns::ALL)
}

/// What the L1 validators read: the pull request and the facts gathered around it.
#[derive(Debug, Clone, Copy)]
pub struct GateInput<'a> {
    /// The pull request.
    pub pr: &'a PrContext,
    /// The bot's receipts on it.
    pub receipts: &'a Receipts,
    /// The head of `main` (C4).
    pub main_head: &'a CommitSha,
    /// The classifier's quadrant (`None` = unknown, which needs an approval).
    pub quadrant: Option<Quadrant>,
    /// The repository's gate policy.
    pub policy: &'a GatePolicy,
    /// The tick's time.
    pub now: Timestamp,
}

/// Evaluates the L1 gate like [`evaluate_gate`], running only the built-in validators in
/// `built_ins` (the set `skills.yml` leaves on, [`SkillsPolicy::built_ins`]): one that
/// `disabled` switches off is not run at all. The required validators (C1-C5, the
/// publisher gate) are in every set, so they always run.
pub fn evaluate_gate_with(input: &GateInput<'_>, built_ins: EnabledBuiltIns) -> GateReport {
    let GateInput {
        pr,
        receipts,
        main_head,
        quadrant,
        policy,
        now,
    } = *input;
    type Step<'s> = (BuiltIn, &'s dyn Fn() -> Vec<ConditionResult>);
    let steps: [Step<'_>; 7] = [
        (BuiltIn::ReadyToMerge, &|| {
            c1_ready_to_merge::evaluate(pr, receipts, policy)
        }),
        (BuiltIn::CiGreen, &|| {
            c2_checks_green::evaluate(pr, policy, now)
        }),
        (BuiltIn::OwnerApproval, &|| {
            c3_owner_approval::evaluate(pr, receipts, quadrant, policy)
        }),
        (BuiltIn::BaseUpToDate, &|| {
            c4_base_is_main::evaluate(pr, main_head)
        }),
        (BuiltIn::Trailers, &|| {
            c5_trailers::evaluate(pr, policy.bot.as_ref())
        }),
        (BuiltIn::ClassifierPublisher, &|| {
            classifier_publisher::evaluate(pr, policy)
        }),
        (BuiltIn::AgentRegistry, &|| {
            l4_registry::evaluate(pr, policy)
        }),
    ];
    let mut report = GateReport::new(PrRef::of(pr));
    for (built_in, run) in steps {
        if built_ins.contains(built_in) {
            report.extend(run());
        }
    }
    report
}

/// [`evaluate_gate_with`] under the set of built-ins `skills` computed when it was read.
///
/// Kept for callers that hold the policy; new code passes [`SkillsPolicy::built_ins`].
pub fn evaluate_gate_under(input: &GateInput<'_>, skills: &SkillsPolicy) -> GateReport {
    evaluate_gate_with(input, skills.built_ins())
}

#[cfg(test)]
mod tests;
