//! The catalog of built-in skills: every built-in of the seed under its name, with its
//! kind, default severity and the core item that implements it.
//!
//! This table is the one list of built-ins: the gate runs the validators it names (skipping
//! the ones `skills.yml` disables), the classifier runs its rules the same way, the branch
//! supervisor its hooks, and `mp-skills` lists it in `mp skills status`. A test checks that
//! every runtime component (gate condition, classifier rule, hook) has exactly one entry.

use crate::config::SkillsPolicy;
use crate::config::skills::REQUIRED_SKILLS;
use crate::severity::Severity;

use super::SkillKind;

/// A built-in skill: its name, kind, default severity (validators) and the core item that
/// implements it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuiltInSkill {
    /// The skill name, e.g. `validator_ready_to_merge`.
    pub name: &'static str,
    /// The interface it implements.
    pub kind: SkillKind,
    /// The default severity of a validator; `None` for rules and hooks.
    pub severity: Option<Severity>,
    /// The mp-core item that implements it.
    pub implemented_by: &'static str,
}

impl BuiltInSkill {
    /// Whether the skill always runs (`skills.yml` cannot disable it).
    pub fn required(&self) -> bool {
        REQUIRED_SKILLS.contains(&self.name)
    }

    /// Whether the skill runs under `policy`: required skills always do, others unless
    /// `disabled`.
    pub fn runs_under(&self, policy: &SkillsPolicy) -> bool {
        !policy.is_disabled(self.name)
    }
}

const fn validator(name: &'static str, severity: Severity, by: &'static str) -> BuiltInSkill {
    BuiltInSkill {
        name,
        kind: SkillKind::Validator,
        severity: Some(severity),
        implemented_by: by,
    }
}

const fn other(name: &'static str, kind: SkillKind, by: &'static str) -> BuiltInSkill {
    BuiltInSkill {
        name,
        kind,
        severity: None,
        implemented_by: by,
    }
}

/// Every built-in skill: validators in the seed's L1 order, then classifier rules in vote
/// order, then branch hooks.
pub const BUILT_IN_SKILLS: [BuiltInSkill; 16] = [
    validator(
        "validator_ready_to_merge",
        Severity::P0,
        "gate::c1_ready_to_merge",
    ),
    validator("validator_ci_green", Severity::P0, "gate::c2_checks_green"),
    validator("validator_trailers", Severity::P0, "gate::c5_trailers"),
    validator(
        "validator_classifier_publisher",
        Severity::P0,
        "gate::classifier_publisher",
    ),
    validator(
        "validator_base_up_to_date",
        Severity::P0,
        "gate::c4_base_is_main",
    ),
    validator(
        "validator_agent_registry",
        Severity::P2,
        "gate::l4_registry",
    ),
    validator(
        "validator_owner_approval",
        Severity::P0,
        "gate::c3_owner_approval",
    ),
    other(
        "classifier_path_default",
        SkillKind::ClassifierRule,
        "classifier::path_rules",
    ),
    other(
        "classifier_bot_self_repo",
        SkillKind::ClassifierRule,
        "classifier::bot_self_repo",
    ),
    other(
        "classifier_empty_pr",
        SkillKind::ClassifierRule,
        "classifier::empty_pr",
    ),
    other(
        "classifier_auto_revert",
        SkillKind::ClassifierRule,
        "classifier::auto_revert",
    ),
    other(
        "classifier_published_verdict",
        SkillKind::ClassifierRule,
        "classifier::published_verdict",
    ),
    other(
        "classifier_malformed_session",
        SkillKind::ClassifierRule,
        "classifier::malformed_session",
    ),
    other(
        "hook_break_glass_audit",
        SkillKind::BranchHook,
        "branch::break_glass",
    ),
    other(
        "hook_hallucination_guard",
        SkillKind::BranchHook,
        "branch::hallucination",
    ),
    other(
        "hook_unauthorized_push",
        SkillKind::BranchHook,
        "branch::unauthorized_push",
    ),
];

/// The skill name that switches the hallucination guard off in `skills.yml`.
pub const HALLUCINATION_GUARD: &str = "hook_hallucination_guard";

/// The built-in skill called `name`, if there is one.
pub fn built_in(name: &str) -> Option<&'static BuiltInSkill> {
    BUILT_IN_SKILLS.iter().find(|skill| skill.name == name)
}

/// Whether the built-in `name` runs under `policy`. A name missing from the catalog runs
/// (fail safe: a check is never skipped because of a naming slip; a test keeps the catalog
/// and the runtime components in step).
pub fn runs(name: &str, policy: &SkillsPolicy) -> bool {
    built_in(name).is_none_or(|skill| skill.runs_under(policy))
}
