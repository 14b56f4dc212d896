//! User skills inside the tick: classifier votes added to the built-in ones, validator
//! results appended to the gate report, and branch-hook incidents for the L5 pass.
//!
//! Every call is guarded the same way: a [`SkillFailure`] (time budget, trap, malformed
//! verdict, ...) never blocks and never passes silently. The call counts as "pass, no
//! contribution" and the failure is handed back so the tick reports it as a warning naming
//! the skill, its code and the cause.

use mp_core::branch::{CommitIncident, IncidentLabel};
use mp_core::classifier::{RuleId, Vote};
use mp_core::config::SkillsPolicy;
use mp_core::context::{CommitContext, PrContext};
use mp_core::gate::{ConditionId, ConditionResult, Evidence};
use mp_core::skill::{SkillFailure, SkillSet, ValidationResult};

#[cfg(test)]
mod tests;

/// The evidence line of a user validator that passed.
pub const USER_VALIDATOR_PASSED: &str = "holds";

/// Whether `skills.yml` lets the user skill `name` run: on the `enabled` allowlist (when
/// there is one) and not `disabled`.
fn active(policy: &SkillsPolicy, name: &str) -> bool {
    policy.user_skill_enabled(name) && !policy.is_disabled(name)
}

/// The votes of the active user classifier rules, in order. A rule that fails casts no vote
/// and its failure is pushed onto `failures`.
pub(crate) fn user_votes(
    skills: &SkillSet,
    policy: &SkillsPolicy,
    pr: &PrContext,
    failures: &mut Vec<SkillFailure>,
) -> Vec<Vote> {
    let mut votes = Vec::new();
    for rule in skills
        .classifier_rules
        .iter()
        .filter(|r| active(policy, r.name()))
    {
        match rule.evaluate(pr) {
            Ok(vote) => votes.push(vote.into_vote(RuleId::User(rule.name().to_owned()))),
            Err(failure) => failures.push(failure),
        }
    }
    votes
}

/// The gate results of the active user validators, in order: a pass, or a failure at the
/// validator's severity (a `skills.yml` override wins). A validator that fails to answer
/// contributes no result and its failure is pushed onto `failures`.
pub(crate) fn user_results(
    skills: &SkillSet,
    policy: &SkillsPolicy,
    pr: &PrContext,
    failures: &mut Vec<SkillFailure>,
) -> Vec<ConditionResult> {
    let mut results = Vec::new();
    for validator in skills
        .validators
        .iter()
        .filter(|v| active(policy, v.name()))
    {
        let name = validator.name();
        let severity = policy
            .severity_override(name)
            .unwrap_or_else(|| validator.severity());
        let id = ConditionId::User(name.to_owned());
        match validator.check(pr) {
            Ok(ValidationResult::Pass) => results.push(ConditionResult::pass(
                id,
                severity,
                Evidence::UserValidator {
                    message: USER_VALIDATOR_PASSED.to_owned(),
                },
            )),
            Ok(ValidationResult::Fail { reason }) => results.push(ConditionResult::fail(
                id,
                severity,
                Evidence::UserValidator {
                    message: one_line(&reason),
                },
            )),
            Err(failure) => failures.push(failure),
        }
    }
    results
}

/// The incidents the active user branch hooks raise on `commit`, in hook order. Each
/// becomes a [`IncidentLabel::SkillHook`] incident whose body names the hook and the label
/// it asked for; a hook that fails raises nothing and its failure is pushed onto `failures`.
pub(crate) fn hook_incidents(
    skills: &SkillSet,
    policy: &SkillsPolicy,
    commit: &CommitContext,
    failures: &mut Vec<SkillFailure>,
) -> Vec<CommitIncident> {
    let mut incidents = Vec::new();
    for hook in skills
        .branch_hooks
        .iter()
        .filter(|h| active(policy, h.name()))
    {
        match hook.on_commit(commit) {
            Ok(result) => {
                let Some(label) = result.incident_label else {
                    continue;
                };
                let detail = result.incident_body.unwrap_or_default();
                incidents.push(CommitIncident {
                    label: IncidentLabel::SkillHook,
                    sha: commit.sha.clone(),
                    body: format!(
                        "Branch hook `{}` raised `{}` on commit `{}`.\n\n{}",
                        hook.name(),
                        one_line(&label),
                        commit.sha,
                        detail.trim()
                    ),
                });
            }
            Err(failure) => failures.push(failure),
        }
    }
    incidents
}

/// The tick warning for a skill call that failed: the failure line (skill, stage, code,
/// class, cause) and what the tick made of it.
pub(crate) fn failure_warning(context: &str, failure: &SkillFailure) -> String {
    format!("{context}: {failure}; counted as pass, no contribution")
}

/// `text` on one line.
fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}
