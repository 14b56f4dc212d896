//! The built-in skills: one [`BuiltIn`] variant per built-in of the seed, with its name,
//! kind, default severity, whether `skills.yml` may switch it off, the core item that
//! implements it and, for gate conditions and classifier rules, the runtime id it runs as.
//!
//! This enum is the one place a built-in's name is spelled. The lists other code reads are
//! derived from it: [`BUILT_IN_SKILLS`] (the catalog `mp skills status` lists), the config's
//! `REQUIRED_SKILLS`, `DISABLEABLE_BUILTINS` and `CORE_L1_VALIDATORS`,
//! `ConditionId::validator_name` and `RuleId::code`. The gate and the classifier run their
//! built-ins under an [`EnabledBuiltIns`] set computed once from `skills.yml`, never by
//! looking a name up. A test checks that every runtime component (gate condition,
//! classifier rule, hook) has exactly one variant.

use std::fmt;

use crate::classifier::RuleId;
use crate::gate::ConditionId;
use crate::severity::Severity;

use super::SkillKind;

/// A built-in skill.
///
/// Declared in the order the gate evaluates its conditions (C1, C2, C3, C4, C5, the
/// publisher gate, L4), then the classifier rules in vote order, then the branch hooks;
/// [`BuiltIn::ALL`] keeps that order, [`BUILT_IN_SKILLS`] lists the seed's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BuiltIn {
    /// `validator_ready_to_merge` (C1).
    ReadyToMerge,
    /// `validator_ci_green` (C2).
    CiGreen,
    /// `validator_owner_approval` (C3).
    OwnerApproval,
    /// `validator_base_up_to_date` (C4).
    BaseUpToDate,
    /// `validator_trailers` (C5).
    Trailers,
    /// `validator_classifier_publisher` (the publisher gate).
    ClassifierPublisher,
    /// `validator_agent_registry` (L4).
    AgentRegistry,
    /// `classifier_path_default`.
    PathDefault,
    /// `classifier_bot_self_repo`.
    BotSelfRepo,
    /// `classifier_empty_pr`.
    EmptyPr,
    /// `classifier_auto_revert`.
    AutoRevert,
    /// `classifier_published_verdict`.
    PublishedVerdict,
    /// `classifier_malformed_session`.
    MalformedSession,
    /// `hook_break_glass_audit` (L5).
    BreakGlassAudit,
    /// `hook_hallucination_guard` (L5).
    HallucinationGuard,
    /// `hook_unauthorized_push` (L5).
    UnauthorizedPush,
}

/// Whether `skills.yml` may switch a built-in off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Requirement {
    /// Always runs: naming it in `disabled` is refused with
    /// `cannot_disable_required_validator`.
    Required,
    /// `disabled` may switch it off.
    Disableable,
}

impl BuiltIn {
    /// Every built-in, in declaration order (gate conditions in evaluation order, then
    /// classifier rules in vote order, then branch hooks).
    pub const ALL: [BuiltIn; 16] = [
        Self::ReadyToMerge,
        Self::CiGreen,
        Self::OwnerApproval,
        Self::BaseUpToDate,
        Self::Trailers,
        Self::ClassifierPublisher,
        Self::AgentRegistry,
        Self::PathDefault,
        Self::BotSelfRepo,
        Self::EmptyPr,
        Self::AutoRevert,
        Self::PublishedVerdict,
        Self::MalformedSession,
        Self::BreakGlassAudit,
        Self::HallucinationGuard,
        Self::UnauthorizedPush,
    ];

    /// The skill name, e.g. `validator_ready_to_merge`: the name `skills.yml`, the audit
    /// log and `mp skills status` use.
    pub const fn name(self) -> &'static str {
        match self {
            Self::ReadyToMerge => "validator_ready_to_merge",
            Self::CiGreen => "validator_ci_green",
            Self::OwnerApproval => "validator_owner_approval",
            Self::BaseUpToDate => "validator_base_up_to_date",
            Self::Trailers => "validator_trailers",
            Self::ClassifierPublisher => "validator_classifier_publisher",
            Self::AgentRegistry => "validator_agent_registry",
            Self::PathDefault => "classifier_path_default",
            Self::BotSelfRepo => "classifier_bot_self_repo",
            Self::EmptyPr => "classifier_empty_pr",
            Self::AutoRevert => "classifier_auto_revert",
            Self::PublishedVerdict => "classifier_published_verdict",
            Self::MalformedSession => "classifier_malformed_session",
            Self::BreakGlassAudit => "hook_break_glass_audit",
            Self::HallucinationGuard => "hook_hallucination_guard",
            Self::UnauthorizedPush => "hook_unauthorized_push",
        }
    }

    /// The interface it implements.
    pub const fn kind(self) -> SkillKind {
        match self {
            Self::ReadyToMerge
            | Self::CiGreen
            | Self::OwnerApproval
            | Self::BaseUpToDate
            | Self::Trailers
            | Self::ClassifierPublisher
            | Self::AgentRegistry => SkillKind::Validator,
            Self::PathDefault
            | Self::BotSelfRepo
            | Self::EmptyPr
            | Self::AutoRevert
            | Self::PublishedVerdict
            | Self::MalformedSession => SkillKind::ClassifierRule,
            Self::BreakGlassAudit | Self::HallucinationGuard | Self::UnauthorizedPush => {
                SkillKind::BranchHook
            }
        }
    }

    /// Whether `skills.yml` may switch it off.
    pub const fn requirement(self) -> Requirement {
        match self {
            Self::ReadyToMerge
            | Self::CiGreen
            | Self::OwnerApproval
            | Self::BaseUpToDate
            | Self::Trailers
            | Self::ClassifierPublisher
            | Self::BotSelfRepo
            | Self::BreakGlassAudit
            | Self::UnauthorizedPush => Requirement::Required,
            Self::AgentRegistry
            | Self::PathDefault
            | Self::EmptyPr
            | Self::AutoRevert
            | Self::PublishedVerdict
            | Self::MalformedSession
            | Self::HallucinationGuard => Requirement::Disableable,
        }
    }

    /// Whether it always runs (`skills.yml` cannot disable it).
    pub const fn required(self) -> bool {
        matches!(self.requirement(), Requirement::Required)
    }

    /// Whether it is a core L1 validator (C1-C5 and the publisher gate): required, and a
    /// severity override may not make it non-blocking (`severity_not_lowered`).
    pub const fn is_core_l1_validator(self) -> bool {
        self.required() && matches!(self.kind(), SkillKind::Validator)
    }

    /// The default severity of a validator; `None` for rules and hooks.
    pub const fn severity(self) -> Option<Severity> {
        match self {
            Self::AgentRegistry => Some(Severity::P2),
            _ if matches!(self.kind(), SkillKind::Validator) => Some(Severity::P0),
            _ => None,
        }
    }

    /// The mp-core item that implements it, e.g. `gate::c1_ready_to_merge`.
    pub const fn implemented_by(self) -> &'static str {
        match self {
            Self::ReadyToMerge => "gate::c1_ready_to_merge",
            Self::CiGreen => "gate::c2_checks_green",
            Self::OwnerApproval => "gate::c3_owner_approval",
            Self::BaseUpToDate => "gate::c4_base_is_main",
            Self::Trailers => "gate::c5_trailers",
            Self::ClassifierPublisher => "gate::classifier_publisher",
            Self::AgentRegistry => "gate::l4_registry",
            Self::PathDefault => "classifier::path_rules",
            Self::BotSelfRepo => "classifier::bot_self_repo",
            Self::EmptyPr => "classifier::empty_pr",
            Self::AutoRevert => "classifier::auto_revert",
            Self::PublishedVerdict => "classifier::published_verdict",
            Self::MalformedSession => "classifier::malformed_session",
            Self::BreakGlassAudit => "branch::break_glass",
            Self::HallucinationGuard => "branch::hallucination",
            Self::UnauthorizedPush => "branch::unauthorized_push",
        }
    }

    /// The gate condition it runs as; `None` for rules and hooks.
    pub fn condition(self) -> Option<ConditionId> {
        Some(match self {
            Self::ReadyToMerge => ConditionId::C1,
            Self::CiGreen => ConditionId::C2,
            Self::OwnerApproval => ConditionId::C3,
            Self::BaseUpToDate => ConditionId::C4,
            Self::Trailers => ConditionId::C5,
            Self::ClassifierPublisher => ConditionId::ClassifierPublisher,
            Self::AgentRegistry => ConditionId::AgentRegistry,
            _ => return None,
        })
    }

    /// The classifier rule it votes as; `None` for validators and hooks.
    pub fn rule(self) -> Option<RuleId> {
        Some(match self {
            Self::PathDefault => RuleId::PathDefault,
            Self::BotSelfRepo => RuleId::BotSelfRepo,
            Self::EmptyPr => RuleId::EmptyPr,
            Self::AutoRevert => RuleId::AutoRevert,
            Self::PublishedVerdict => RuleId::PublishedVerdict,
            Self::MalformedSession => RuleId::MalformedSession,
            _ => return None,
        })
    }

    /// The built-in called `name`, if there is one.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|b| b.name() == name)
    }

    /// Its catalog entry.
    pub const fn skill(self) -> BuiltInSkill {
        BuiltInSkill {
            id: self,
            name: self.name(),
            kind: self.kind(),
            severity: self.severity(),
            implemented_by: self.implemented_by(),
        }
    }

    /// The names of the built-ins with `requirement`, in declaration order; `N` must be
    /// their count (checked when the constant is built).
    pub(crate) const fn names_with<const N: usize>(requirement: Requirement) -> [&'static str; N] {
        let mut names = [""; N];
        let mut filled = 0;
        let mut i = 0;
        while i < Self::ALL.len() {
            let b = Self::ALL[i];
            if b.requirement() as u8 == requirement as u8 {
                names[filled] = b.name();
                filled += 1;
            }
            i += 1;
        }
        assert!(filled == N, "wrong count of built-ins");
        names
    }

    /// The names of the core L1 validators, in declaration order; `N` must be their count.
    pub(crate) const fn core_l1_validator_names<const N: usize>() -> [&'static str; N] {
        let mut names = [""; N];
        let mut filled = 0;
        let mut i = 0;
        while i < Self::ALL.len() {
            let b = Self::ALL[i];
            if b.is_core_l1_validator() {
                names[filled] = b.name();
                filled += 1;
            }
            i += 1;
        }
        assert!(filled == N, "wrong count of core L1 validators");
        names
    }

    const fn bit(self) -> u32 {
        1 << self as u32
    }
}

impl fmt::Display for BuiltIn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A built-in skill's catalog entry: its name, kind, default severity (validators) and the
/// core item that implements it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuiltInSkill {
    /// The built-in.
    pub id: BuiltIn,
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
        self.id.required()
    }
}

/// Every built-in skill as `mp skills status` lists it: validators in the seed's L1 order,
/// then classifier rules in vote order, then branch hooks.
pub const BUILT_IN_SKILLS: [BuiltInSkill; 16] = [
    BuiltIn::ReadyToMerge.skill(),
    BuiltIn::CiGreen.skill(),
    BuiltIn::Trailers.skill(),
    BuiltIn::ClassifierPublisher.skill(),
    BuiltIn::BaseUpToDate.skill(),
    BuiltIn::AgentRegistry.skill(),
    BuiltIn::OwnerApproval.skill(),
    BuiltIn::PathDefault.skill(),
    BuiltIn::BotSelfRepo.skill(),
    BuiltIn::EmptyPr.skill(),
    BuiltIn::AutoRevert.skill(),
    BuiltIn::PublishedVerdict.skill(),
    BuiltIn::MalformedSession.skill(),
    BuiltIn::BreakGlassAudit.skill(),
    BuiltIn::HallucinationGuard.skill(),
    BuiltIn::UnauthorizedPush.skill(),
];

/// The built-in skill called `name`, if there is one.
pub fn built_in(name: &str) -> Option<&'static BuiltInSkill> {
    BUILT_IN_SKILLS.iter().find(|skill| skill.name == name)
}

/// The built-ins that run: every required one, and each other one `skills.yml` does not
/// switch off. Computed once when `skills.yml` is read ([`SkillsPolicy::built_ins`](crate::config::SkillsPolicy::built_ins)); the
/// gate and the classifier take it instead of the policy.
///
/// The default is every built-in.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct EnabledBuiltIns(u32);

impl EnabledBuiltIns {
    /// Every built-in.
    pub const ALL: Self = {
        let mut bits = 0;
        let mut i = 0;
        while i < BuiltIn::ALL.len() {
            bits |= BuiltIn::ALL[i].bit();
            i += 1;
        }
        Self(bits)
    };

    /// Whether `built_in` runs.
    pub const fn contains(self, built_in: BuiltIn) -> bool {
        self.0 & built_in.bit() != 0
    }

    /// This set without `built_in`; a required built-in stays in.
    #[must_use]
    pub const fn without(self, built_in: BuiltIn) -> Self {
        if built_in.required() {
            self
        } else {
            Self(self.0 & !built_in.bit())
        }
    }

    /// The built-ins that run, in declaration order.
    pub fn iter(self) -> impl Iterator<Item = BuiltIn> {
        BuiltIn::ALL.into_iter().filter(move |b| self.contains(*b))
    }
}

impl Default for EnabledBuiltIns {
    fn default() -> Self {
        Self::ALL
    }
}

impl fmt::Debug for EnabledBuiltIns {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}
