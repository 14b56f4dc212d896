//! The three skill interfaces (validator, classifier rule, branch hook) and the value a
//! failing skill returns instead of a verdict.
//!
//! A skill sees read-only context values and returns a verdict value; it never holds a
//! GitHub client. Every skill call returns `Result<verdict, SkillFailure>`: a skill that
//! traps, runs out of its budget or answers nonsense is reported as a [`SkillFailure`]
//! with its cause, the stage it stopped at and whether a retry may help. The caller decides
//! what a failure contributes (a timed-out skill counts as "pass, no contribution"), but the
//! failure itself is never turned into a success silently.
//!
//! This module performs no I/O; the WebAssembly runtime that runs user skills lives in the
//! `mp-skills` adapter crate.

use std::fmt;

use crate::classifier::{RuleId, Vote};
use crate::context::{CommitContext, PrContext};
use crate::quadrant::Quadrant;
use crate::severity::Severity;

pub mod builtin;
mod set;

pub use builtin::{BUILT_IN_SKILLS, BuiltIn, BuiltInSkill, EnabledBuiltIns, Requirement};
pub use set::{SharedBranchHook, SharedClassifierRule, SharedValidator, SkillSet};

#[cfg(test)]
mod tests;

/// The three kinds of skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SkillKind {
    /// A check that contributes to the L1 / L2 verdicts ([`Validator`]).
    Validator,
    /// A rule that casts one classifier vote ([`ClassifierRule`]).
    ClassifierRule,
    /// A hook that runs once per commit on `main` ([`BranchHook`]).
    BranchHook,
}

impl SkillKind {
    /// Every kind, in the order skills of each kind are listed.
    pub const ALL: [SkillKind; 3] = [
        SkillKind::Validator,
        SkillKind::ClassifierRule,
        SkillKind::BranchHook,
    ];

    /// `validator`, `classifier_rule` or `branch_hook`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Validator => "validator",
            Self::ClassifierRule => "classifier_rule",
            Self::BranchHook => "branch_hook",
        }
    }

    /// The folder under `config/skills/` holding user skills of this kind:
    /// `validators`, `classifier` or `branch_hooks`.
    pub fn folder(self) -> &'static str {
        match self {
            Self::Validator => "validators",
            Self::ClassifierRule => "classifier",
            Self::BranchHook => "branch_hooks",
        }
    }
}

impl fmt::Display for SkillKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a validator found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValidationResult {
    /// The check holds.
    Pass,
    /// The check does not hold.
    Fail {
        /// One line naming the offending value, e.g. `commit 1a2b3c4 subject contains TODO`.
        reason: String,
    },
}

impl ValidationResult {
    /// A failure with its reason.
    pub fn fail(reason: impl Into<String>) -> Self {
        Self::Fail {
            reason: reason.into(),
        }
    }

    /// Whether the check holds.
    pub fn passed(&self) -> bool {
        matches!(self, Self::Pass)
    }

    /// The failure reason, `None` on a pass.
    pub fn failure_reason(&self) -> Option<&str> {
        match self {
            Self::Pass => None,
            Self::Fail { reason } => Some(reason),
        }
    }

    /// `pass` or `fail`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::Fail { .. } => "fail",
        }
    }
}

impl fmt::Display for ValidationResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Pass => f.write_str("pass"),
            Self::Fail { reason } => write!(f, "fail: {reason}"),
        }
    }
}

/// A classifier rule's vote before the host attaches the rule's identity: the host, not
/// the skill, decides which [`RuleId`] the vote is recorded under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassifierVote {
    /// The quadrant asked for (`A` when the rule has nothing to say).
    pub quadrant: Quadrant,
    /// Short human-readable reasoning, appended to the audit log.
    pub reasoning: String,
}

impl ClassifierVote {
    /// A vote.
    pub fn new(quadrant: Quadrant, reasoning: impl Into<String>) -> Self {
        Self {
            quadrant,
            reasoning: reasoning.into(),
        }
    }

    /// The classifier [`Vote`] recorded for `rule`.
    pub fn into_vote(self, rule: RuleId) -> Vote {
        Vote::new(rule, self.quadrant, self.reasoning)
    }
}

impl fmt::Display for ClassifierVote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "voted {}: {}", self.quadrant, self.reasoning)
    }
}

/// What a branch hook found on one commit: an incident to surface, or nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookResult {
    /// The incident label to open, e.g. `decision:break-glass-unaudited`; `None` when the
    /// commit is fine.
    pub incident_label: Option<String>,
    /// The incident body; `None` when there is no incident.
    pub incident_body: Option<String>,
}

impl HookResult {
    /// Nothing to report.
    pub fn none() -> Self {
        Self::default()
    }

    /// An incident with its label and body.
    pub fn incident(label: impl Into<String>, body: impl Into<String>) -> Self {
        Self {
            incident_label: Some(label.into()),
            incident_body: Some(body.into()),
        }
    }

    /// Whether the hook raised an incident.
    pub fn is_incident(&self) -> bool {
        self.incident_label.is_some()
    }
}

impl fmt::Display for HookResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.incident_label {
            None => f.write_str("no incident"),
            Some(label) => write!(f, "incident {label}"),
        }
    }
}

/// A check that contributes to the L1 / L2 verdicts.
pub trait Validator {
    /// The skill identifier (audit log, error messages, `mp skills status`).
    fn name(&self) -> &str;
    /// How much a failure matters (before any `severity_overrides`).
    fn severity(&self) -> Severity;
    /// Checks one pull request.
    ///
    /// # Errors
    /// A [`SkillFailure`] when the skill could not produce a verdict.
    fn check(&self, pr: &PrContext) -> Result<ValidationResult, SkillFailure>;
}

/// A rule that contributes one vote to the four-quadrant classifier. The verdict is the
/// maximum of all votes, so a vote can only raise it.
pub trait ClassifierRule {
    /// The skill identifier.
    fn name(&self) -> &str;
    /// Votes on one pull request.
    ///
    /// # Errors
    /// A [`SkillFailure`] when the skill could not produce a vote.
    fn evaluate(&self, pr: &PrContext) -> Result<ClassifierVote, SkillFailure>;
}

/// A hook that runs once per commit on `main`, after L2 and L5.
pub trait BranchHook {
    /// The skill identifier.
    fn name(&self) -> &str;
    /// Looks at one commit.
    ///
    /// # Errors
    /// A [`SkillFailure`] when the skill could not produce a result.
    fn on_commit(&self, commit: &CommitContext) -> Result<HookResult, SkillFailure>;
}

/// Where a skill stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FailureStage {
    /// Reading, parsing or checking the skill before it ever ran.
    Load,
    /// Preparing a fresh instance (memory, exports).
    Instantiate,
    /// Handing the context to the skill.
    Input,
    /// While the skill ran.
    Run,
    /// Reading back and decoding the skill's answer.
    Output,
}

impl FailureStage {
    /// `load`, `instantiate`, `input`, `run` or `output`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Load => "load",
            Self::Instantiate => "instantiate",
            Self::Input => "input",
            Self::Run => "run",
            Self::Output => "output",
        }
    }
}

impl fmt::Display for FailureStage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a failure should be handled (the three failure classes of a skill contract).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FailureClass {
    /// The skill cannot work as it is; retrying will not help (e.g. a refused import).
    Fatal,
    /// A later call may succeed (e.g. the call ran out of its time budget).
    Retryable,
    /// The skill misbehaved in a way its author must be told about (a trap, a malformed
    /// answer).
    NeedsUserReport,
}

impl FailureClass {
    /// `fatal`, `retryable` or `needs_user_report`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fatal => "fatal",
            Self::Retryable => "retryable",
            Self::NeedsUserReport => "needs_user_report",
        }
    }
}

impl fmt::Display for FailureClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a skill failed, with the offending values.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FailureCause {
    /// The module imports something that looks like network access.
    ImportsNetwork {
        /// The import's module name.
        module: String,
        /// The import's field name.
        field: String,
    },
    /// The module imports something other than the host log function.
    ImportsForbidden {
        /// The import's module name.
        module: String,
        /// The import's field name.
        field: String,
    },
    /// The module could not be loaded (unreadable, not WebAssembly, missing exports, no
    /// valid contract document, ...).
    LoadFailed {
        /// What went wrong.
        detail: String,
    },
    /// The call used up its budget: its fuel, or its time, whichever ran out first (the
    /// message is the same either way, so a verdict never depends on the machine's speed).
    Timeout {
        /// The fuel budget.
        fuel: u64,
        /// The time budget in milliseconds, when the call had one.
        budget_ms: Option<u64>,
    },
    /// The skill asked for more memory than its cap allows.
    MemoryExceeded {
        /// The cap in bytes.
        limit_bytes: u64,
    },
    /// The skill trapped (unreachable, out-of-bounds access, ...).
    Trap {
        /// The runtime's description of the trap.
        message: String,
    },
    /// The answer is larger than the output cap.
    OutputTooLarge {
        /// The answer's length in bytes.
        len: u64,
        /// The cap in bytes.
        max: u64,
    },
    /// The answer is not a valid verdict for this kind of skill.
    MalformedVerdict {
        /// What is wrong with it.
        detail: String,
    },
    /// The input or the answer does not match the schema of the skill's contract document:
    /// the document and the skill disagree, and the document is not trusted over the call.
    ContractViolation {
        /// `input` or `output`.
        side: &'static str,
        /// The first schema error, with its JSON pointer.
        detail: String,
    },
}

impl FailureCause {
    /// The stable code: `skill_imports_network`, `skill_imports_forbidden`,
    /// `skill_load_failed`, `skill_timeout`, `skill_memory_exceeded`, `skill_trap`,
    /// `skill_output_too_large`, `skill_malformed_verdict` or `skill_contract_violation`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::ImportsNetwork { .. } => "skill_imports_network",
            Self::ImportsForbidden { .. } => "skill_imports_forbidden",
            Self::LoadFailed { .. } => "skill_load_failed",
            Self::Timeout { .. } => "skill_timeout",
            Self::MemoryExceeded { .. } => "skill_memory_exceeded",
            Self::Trap { .. } => "skill_trap",
            Self::OutputTooLarge { .. } => "skill_output_too_large",
            Self::MalformedVerdict { .. } => "skill_malformed_verdict",
            Self::ContractViolation { .. } => "skill_contract_violation",
        }
    }

    /// The failure class this cause belongs to.
    pub fn class(&self) -> FailureClass {
        match self {
            Self::ImportsNetwork { .. }
            | Self::ImportsForbidden { .. }
            | Self::LoadFailed { .. } => FailureClass::Fatal,
            Self::Timeout { .. } => FailureClass::Retryable,
            Self::MemoryExceeded { .. }
            | Self::Trap { .. }
            | Self::OutputTooLarge { .. }
            | Self::MalformedVerdict { .. }
            | Self::ContractViolation { .. } => FailureClass::NeedsUserReport,
        }
    }
}

impl fmt::Display for FailureCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ImportsNetwork { module, field } => {
                write!(f, "imports network access `{module}.{field}`")
            }
            Self::ImportsForbidden { module, field } => {
                write!(f, "imports `{module}.{field}`; only `mp.log` is allowed")
            }
            Self::LoadFailed { detail } => write!(f, "could not be loaded: {detail}"),
            Self::Timeout {
                fuel,
                budget_ms: Some(ms),
            } => write!(f, "ran out of its budget of {ms} ms ({fuel} fuel)"),
            Self::Timeout {
                fuel,
                budget_ms: None,
            } => write!(f, "ran out of its budget of {fuel} fuel"),
            Self::MemoryExceeded { limit_bytes } => {
                write!(f, "exceeded its memory cap of {limit_bytes} bytes")
            }
            Self::Trap { message } => write!(f, "trapped: {message}"),
            Self::OutputTooLarge { len, max } => {
                write!(f, "answered {len} bytes, more than the cap of {max}")
            }
            Self::MalformedVerdict { detail } => {
                write!(f, "answered a malformed verdict: {detail}")
            }
            Self::ContractViolation { side, detail } => {
                write!(f, "{side} does not match its contract schema: {detail}")
            }
        }
    }
}

/// A skill that could not produce a verdict: which skill, where it stopped, why, and
/// whether a retry may help.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillFailure {
    /// The skill's name.
    pub skill: String,
    /// Where it stopped.
    pub stage: FailureStage,
    /// Why.
    pub cause: FailureCause,
}

impl SkillFailure {
    /// A failure of `skill` at `stage`.
    pub fn new(skill: impl Into<String>, stage: FailureStage, cause: FailureCause) -> Self {
        Self {
            skill: skill.into(),
            stage,
            cause,
        }
    }

    /// The cause's stable code (e.g. `skill_timeout`).
    pub fn code(&self) -> &'static str {
        self.cause.code()
    }

    /// The failure class.
    pub fn class(&self) -> FailureClass {
        self.cause.class()
    }

    /// Whether a later call may succeed.
    pub fn retryable(&self) -> bool {
        self.class() == FailureClass::Retryable
    }

    /// Whether the caller counts this call as "pass, no contribution": true only for a
    /// call stopped by its time (fuel) budget, as the reference bot does with its one-second
    /// budget. Every other failure is reported as a failure.
    pub fn counts_as_pass(&self) -> bool {
        matches!(self.cause, FailureCause::Timeout { .. })
    }
}

impl fmt::Display for SkillFailure {
    /// `skill no_todos_in_prod failed at run (skill_timeout, retryable): ran out of ...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "skill {} failed at {} ({}, {}): {}",
            self.skill,
            self.stage,
            self.code(),
            self.class(),
            self.cause
        )
    }
}

impl std::error::Error for SkillFailure {}
