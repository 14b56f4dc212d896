//! `skills.yml`: which user skills run, which skills are switched off, and severity overrides.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use serde_saphyr::Spanned;

use super::problem::{codes, shown};
use super::validate::{self, Sink, first_at, item};
use super::yaml::{self, SpannedMap};
use crate::severity::Severity;

/// Skills that always run: naming one in `disabled` is refused with
/// `cannot_disable_required_validator`.
pub const REQUIRED_SKILLS: [&str; 9] = [
    "validator_ready_to_merge",
    "validator_ci_green",
    "validator_owner_approval",
    "validator_base_up_to_date",
    "validator_trailers",
    "validator_classifier_publisher",
    "classifier_bot_self_repo",
    "hook_break_glass_audit",
    "hook_unauthorized_push",
];

/// The core L1 validators (C1-C5 and the classifier publisher gate): a severity override
/// may not make them non-blocking (P2/P3); such an override is ignored with the warning
/// `severity_not_lowered`.
pub const CORE_L1_VALIDATORS: [&str; 6] = [
    "validator_ready_to_merge",
    "validator_ci_green",
    "validator_owner_approval",
    "validator_base_up_to_date",
    "validator_trailers",
    "validator_classifier_publisher",
];

/// Built-in skills that `disabled` may switch off.
pub const DISABLEABLE_BUILTINS: [&str; 6] = [
    "classifier_empty_pr",
    "classifier_path_default",
    "classifier_auto_revert",
    "classifier_published_verdict",
    "validator_agent_registry",
    "hook_hallucination_guard",
];

/// Which skills run and how much their failures matter.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(title = "skills.yml"))]
pub(crate) struct SkillsFile {
    /// Allowlist for user skills only: when non-empty, only the listed user skills run.
    /// Built-in skills always run.
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(
            with = "Vec<String>",
            inner(regex(pattern = super::validate::SKILL_NAME_PATTERN)),
            extend("uniqueItems" = true)
        )
    )]
    enabled: Vec<Spanned<String>>,
    /// Skills that are loaded but whose results are ignored. The required skills (C1-C5, the
    /// publisher gate, the bot-repo classifier rule, break-glass audit, unauthorized push)
    /// cannot be disabled.
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(
            with = "Vec<String>",
            inner(regex(pattern = super::validate::SKILL_NAME_PATTERN)),
            extend("uniqueItems" = true)
        )
    )]
    disabled: Vec<Spanned<String>>,
    /// Skill name → severity (`P0` and `P1` block, `P2` warns, `P3` is recorded only).
    /// A core L1 validator cannot be made non-blocking.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "BTreeMap<String, SeverityName>"))]
    severity_overrides: SpannedMap<Spanned<String>>,
}

/// A severity name.
#[cfg(feature = "schema")]
#[derive(schemars::JsonSchema)]
#[allow(dead_code, reason = "schema-only type")]
enum SeverityName {
    P0,
    P1,
    P2,
    P3,
}

/// The resolved `skills.yml`: refused and ignored entries are already left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillsPolicy {
    enabled: Vec<String>,
    disabled: BTreeSet<String>,
    severity_overrides: BTreeMap<String, Severity>,
}

impl SkillsPolicy {
    /// The user-skill allowlist (`enabled`); empty means every user skill runs.
    pub fn enabled(&self) -> &[String] {
        &self.enabled
    }

    /// Whether the user skill `name` runs under the allowlist (built-ins are not subject to it).
    pub fn user_skill_enabled(&self, name: &str) -> bool {
        self.enabled.is_empty() || self.enabled.iter().any(|e| e == name)
    }

    /// The disabled skills (never a required one).
    pub fn disabled(&self) -> &BTreeSet<String> {
        &self.disabled
    }

    /// Whether the results of `name` are ignored. Always false for a required skill.
    pub fn is_disabled(&self, name: &str) -> bool {
        !REQUIRED_SKILLS.contains(&name) && self.disabled.contains(name)
    }

    /// The severity override of `name`, if one applies (a lowered core validator never has one).
    pub fn severity_override(&self, name: &str) -> Option<Severity> {
        self.severity_overrides.get(name).copied()
    }

    /// Every severity override that applies, by skill name.
    pub fn severity_overrides(&self) -> &BTreeMap<String, Severity> {
        &self.severity_overrides
    }
}

/// Reads and checks `skills.yml`. `None` when the file cannot be read.
pub(crate) fn load(sink: &mut Sink<'_>, text: &str) -> Option<SkillsPolicy> {
    let file = sink.file().to_owned();
    let raw: SkillsFile = yaml::parse(&file, text, sink.problems())?;
    let enabled = names(sink, "enabled", &raw.enabled);

    let mut disabled = BTreeSet::new();
    for (index, name) in names_with_index(sink, "disabled", &raw.disabled) {
        if REQUIRED_SKILLS.contains(&name.value.as_str()) {
            sink.error(
                codes::CANNOT_DISABLE_REQUIRED_VALIDATOR,
                &item("disabled", index),
                &name.referenced,
                format!(
                    "`{}` always runs and cannot be disabled; to make a user skill advisory, use severity_overrides",
                    name.value
                ),
            );
            continue;
        }
        disabled.insert(name.value.clone());
    }

    let mut severity_overrides = BTreeMap::new();
    for (name, severity) in &raw.severity_overrides.0 {
        let field = format!("severity_overrides.{}", shown(&name.value));
        if !validate::skill_name(sink, &field, name) {
            continue;
        }
        let Ok(parsed) = severity.value.parse::<Severity>() else {
            sink.error(
                codes::INVALID_VALUE,
                &field,
                &severity.referenced,
                format!(
                    "unknown severity `{}` for `{}`, expected P0, P1, P2 or P3",
                    shown(&severity.value),
                    name.value
                ),
            );
            continue;
        };
        if CORE_L1_VALIDATORS.contains(&name.value.as_str()) && !parsed.blocks() {
            sink.warning(
                codes::SEVERITY_NOT_LOWERED,
                &field,
                &severity.referenced,
                format!(
                    "`{}` is a core L1 validator and stays blocking; the override to {parsed} is ignored",
                    name.value
                ),
            );
            continue;
        }
        if disabled.contains(&name.value) {
            sink.warning(
                codes::NO_EFFECT,
                &field,
                &name.referenced,
                format!(
                    "`{}` is disabled, so its severity override has no effect",
                    name.value
                ),
            );
        }
        severity_overrides.insert(name.value.clone(), parsed);
    }

    Some(SkillsPolicy {
        enabled,
        disabled,
        severity_overrides,
    })
}

/// Valid, distinct skill names of a list.
fn names(sink: &mut Sink<'_>, field: &str, values: &[Spanned<String>]) -> Vec<String> {
    names_with_index(sink, field, values)
        .into_iter()
        .map(|(_, name)| name.value.clone())
        .collect()
}

/// Valid, distinct skill names of a list with their index; invalid or repeated ones reported.
fn names_with_index<'v>(
    sink: &mut Sink<'_>,
    field: &str,
    values: &'v [Spanned<String>],
) -> Vec<(usize, &'v Spanned<String>)> {
    let mut out = Vec::new();
    let mut seen: BTreeMap<&str, u64> = BTreeMap::new();
    for (index, value) in values.iter().enumerate() {
        let item_field = item(field, index);
        if !validate::skill_name(sink, &item_field, value) {
            continue;
        }
        if let Some(first) = seen.get(value.value.as_str()) {
            sink.error(
                codes::INVALID_VALUE,
                &item_field,
                &value.referenced,
                format!(
                    "skill `{}` is listed twice{}",
                    value.value,
                    first_at(*first)
                ),
            );
            continue;
        }
        seen.insert(&value.value, value.referenced.line());
        out.push((index, value));
    }
    out
}
