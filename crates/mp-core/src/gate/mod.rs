//! The L1 pre-merge gate: C1-C5, the classifier-publisher gate and the L4 registry check,
//! evaluated together into one [`GateReport`] that lists every failure.
//!
//! [`evaluate_gate`] always runs every built-in condition; none can be disabled and none
//! stops the others. Each condition lives in its own module and returns one
//! [`ConditionResult`] per problem found (or one passing result). A result carries a
//! stable code, typed [`Evidence`] and a one-line `Display` shared by the PR diagnostic
//! comment, the audit log and the CLI. Each condition's module owns its evidence type
//! (e.g. [`BaseEvidence`] in [`c4_base_is_main`]) with its codes and its texts;
//! [`Evidence`] only wraps them and delegates.

pub mod burn_in;
pub mod c1_ready_to_merge;
pub mod c2_checks_green;
pub mod c3_owner_approval;
pub mod c4_base_is_main;
pub mod c5_trailers;
pub mod classifier_publisher;
pub mod diagnostic;
pub mod l4_registry;

pub use c1_ready_to_merge::ReadyToMergeEvidence;
pub use c2_checks_green::ChecksEvidence;
pub use c3_owner_approval::ApprovalEvidence;
pub use c4_base_is_main::BaseEvidence;
pub use c5_trailers::TrailersEvidence;
pub use classifier_publisher::PublisherEvidence;
pub use l4_registry::RegistryEvidence;

#[cfg(test)]
pub(crate) mod testkit;

use std::collections::BTreeMap;
use std::fmt;

use crate::approval::{Receipts, SettleWindow, TrustRoots};
use crate::context::PrContext;
use crate::ids::{CommitSha, Login, PrNumber, RepoName, Timestamp};
use crate::quadrant::Quadrant;
use crate::registry::AgentRegistry;
use crate::severity::Severity;
use crate::skill::builtin::{BuiltIn, EnabledBuiltIns};

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
    /// How the repository lands its pull requests (`repo_overrides.<repo>.merge.mode`): in
    /// `queue` (decisions/0056) and `github-queue` (decisions/0074) C4 does not require the
    /// base to be the gated branch's head, since the queue tests the pull request on it.
    pub merge_mode: crate::config::RepoMergeMode,
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
            merge_mode: crate::config::RepoMergeMode::Direct,
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
pub(crate) struct List<'a, T>(&'a [T]);

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

pub(crate) fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}

/// Shown for a check run published without an app.
pub const MISSING_APP: &str = "<missing app>";

/// Shown for a GitHub Actions check run that is no job of any workflow run on the head:
/// one created through the Checks API (decisions/0047).
pub const NO_WORKFLOW_JOB: &str = "<no workflow job>";

/// What a result rests on: the values that made a condition pass or fail. Each built-in
/// condition's evidence, its code and its text live in the condition's module; this
/// wrapper only delegates to them.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Evidence {
    /// C1 ([`c1_ready_to_merge`]).
    C1(ReadyToMergeEvidence),
    /// C2 ([`c2_checks_green`]).
    C2(ChecksEvidence),
    /// C3 ([`c3_owner_approval`]).
    C3(ApprovalEvidence),
    /// C4 ([`c4_base_is_main`]).
    C4(BaseEvidence),
    /// C5 ([`c5_trailers`]).
    C5(TrailersEvidence),
    /// The classifier-publisher gate ([`classifier_publisher`]).
    ClassifierPublisher(PublisherEvidence),
    /// L4 ([`l4_registry`]).
    AgentRegistry(RegistryEvidence),
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
            Self::C1(evidence) => evidence.code(),
            Self::C2(evidence) => evidence.code(),
            Self::C3(evidence) => evidence.code(),
            Self::C4(evidence) => evidence.code(),
            Self::C5(evidence) => evidence.code(),
            Self::ClassifierPublisher(evidence) => evidence.code(),
            Self::AgentRegistry(evidence) => evidence.code(),
            Self::UserValidator { .. } => "user_validator",
        }
    }
}

impl fmt::Display for Evidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::C1(evidence) => evidence.fmt(f),
            Self::C2(evidence) => evidence.fmt(f),
            Self::C3(evidence) => evidence.fmt(f),
            Self::C4(evidence) => evidence.fmt(f),
            Self::C5(evidence) => evidence.fmt(f),
            Self::ClassifierPublisher(evidence) => evidence.fmt(f),
            Self::AgentRegistry(evidence) => evidence.fmt(f),
            Self::UserValidator { message } => f.write_str(message),
        }
    }
}

macro_rules! evidence_from {
    ($($variant:ident($evidence:ty)),* $(,)?) => {$(
        impl From<$evidence> for Evidence {
            fn from(evidence: $evidence) -> Self {
                Self::$variant(evidence)
            }
        }
    )*};
}

evidence_from!(
    C1(ReadyToMergeEvidence),
    C2(ChecksEvidence),
    C3(ApprovalEvidence),
    C4(BaseEvidence),
    C5(TrailersEvidence),
    ClassifierPublisher(PublisherEvidence),
    AgentRegistry(RegistryEvidence),
);

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
            && matches!(&self.evidence, Evidence::C2(evidence) if evidence.is_pending())
    }

    /// A passing result.
    pub fn pass(id: ConditionId, severity: Severity, evidence: impl Into<Evidence>) -> Self {
        Self {
            id,
            severity,
            outcome: Outcome::Pass,
            evidence: evidence.into(),
        }
    }

    /// A failing result: [`Outcome::Fail`] when `severity` blocks, else [`Outcome::Advisory`].
    pub fn fail(id: ConditionId, severity: Severity, evidence: impl Into<Evidence>) -> Self {
        let outcome = if severity.blocks() {
            Outcome::Fail
        } else {
            Outcome::Advisory
        };
        Self {
            id,
            severity,
            outcome,
            evidence: evidence.into(),
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

    /// The blocking results, one line each, joined with `"; "` (empty when it passed).
    pub fn blocking_summary(&self) -> String {
        self.blocking()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ")
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
            let is_stale = r.id == ConditionId::C4
                && matches!(&r.evidence, Evidence::C4(evidence) if evidence.is_stale());
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
/// `built_ins` (the set `skills.yml` leaves on, [`SkillsPolicy::built_ins`](crate::config::SkillsPolicy::built_ins)): one that
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
            c4_base_is_main::evaluate(pr, main_head, policy.merge_mode)
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

#[cfg(test)]
mod tests;
