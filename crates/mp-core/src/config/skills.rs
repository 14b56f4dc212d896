//! `skills.yml`: which user skills run, which skills are switched off, and severity overrides.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use serde_saphyr::Spanned;

use super::problem::{codes, shown};
use super::validate::{self, Sink, first_at, item};
use super::yaml::{self, SpannedMap};
use crate::severity::Severity;
use crate::skill::builtin::{BUILT_IN_SKILLS, BuiltIn, EnabledBuiltIns, Requirement};

/// Skills that always run: naming one in `disabled` is refused with
/// `cannot_disable_required_validator`. Derived from [`BuiltIn`].
pub const REQUIRED_SKILLS: [&str; 9] = BuiltIn::names_with(Requirement::Required);

/// The core L1 validators (C1-C5 and the classifier publisher gate): a severity override
/// may not make them non-blocking (P2/P3); such an override is ignored with the warning
/// `severity_not_lowered`. Derived from [`BuiltIn`].
pub const CORE_L1_VALIDATORS: [&str; 6] = BuiltIn::core_l1_validator_names();

/// Built-in skills that `disabled` may switch off. Derived from [`BuiltIn`].
pub const DISABLEABLE_BUILTINS: [&str; 7] = BuiltIn::names_with(Requirement::Disableable);

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
        schemars(with = "Vec<DisableableName>", extend("uniqueItems" = true))
    )]
    disabled: Vec<Spanned<String>>,
    /// Skill name → severity (`P0` and `P1` block, `P2` warns, `P3` is recorded only).
    /// A core L1 validator cannot be made non-blocking.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "BTreeMap<String, SeverityName>"))]
    severity_overrides: SpannedMap<Spanned<String>>,
    /// Per-call caps of user skills run in the sandbox.
    #[serde(default)]
    limits: Option<LimitsFile>,
}

/// A skill name `disabled` may hold: any but the required skills, which the loader
/// refuses (`cannot_disable_required_validator`).
#[cfg(feature = "schema")]
#[derive(schemars::JsonSchema)]
#[schemars(extend("not" = {"enum": REQUIRED_SKILLS}))]
#[allow(dead_code)]
struct DisableableName(#[schemars(regex(pattern = super::validate::SKILL_NAME_PATTERN))] String);

/// The `limits` block of `skills.yml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct LimitsFile {
    /// Time budget of one user-skill call in milliseconds (1-60000, default 1000). A call
    /// that runs out is stopped, counts as a pass with no contribution and is reported as
    /// `skill_timeout`.
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<u32>", range(min = 1, max = 60000), extend("default" = 1000))
    )]
    call_budget_ms: Option<Spanned<u32>>,
    /// Linear-memory cap of one call in MiB (1-1024, default 16).
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<u32>", range(min = 1, max = 1024), extend("default" = 16))
    )]
    memory_mib: Option<Spanned<u32>>,
    /// Largest verdict one call may return, in KiB (1-4096, default 64).
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<u32>", range(min = 1, max = 4096), extend("default" = 64))
    )]
    output_kib: Option<Spanned<u32>>,
}

/// Default time budget of one user-skill call, in milliseconds.
pub const DEFAULT_CALL_BUDGET_MS: u32 = 1000;
/// Default linear-memory cap of one user-skill call, in MiB.
pub const DEFAULT_MEMORY_MIB: u32 = 16;
/// Default largest verdict of one user-skill call, in KiB.
pub const DEFAULT_OUTPUT_KIB: u32 = 64;

/// The per-call caps of user skills (`skills.yml` `limits`), defaults applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkillLimits {
    /// Time budget of one call in milliseconds.
    pub call_budget_ms: u32,
    /// Linear-memory cap of one call in MiB.
    pub memory_mib: u32,
    /// Largest verdict of one call in KiB.
    pub output_kib: u32,
}

impl Default for SkillLimits {
    fn default() -> Self {
        Self {
            call_budget_ms: DEFAULT_CALL_BUDGET_MS,
            memory_mib: DEFAULT_MEMORY_MIB,
            output_kib: DEFAULT_OUTPUT_KIB,
        }
    }
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
    built_ins: EnabledBuiltIns,
    severity_overrides: BTreeMap<String, Severity>,
    limits: SkillLimits,
}

impl SkillsPolicy {
    /// The per-call caps of user skills (`limits`), defaults applied.
    pub fn limits(&self) -> SkillLimits {
        self.limits
    }

    /// This policy with `name` switched off too (for embedders and tests). A required skill
    /// is left on, as the loader does (where naming one is the error
    /// `cannot_disable_required_validator`).
    pub fn with_disabled(mut self, name: &str) -> Self {
        let built_in = BuiltIn::from_name(name);
        if built_in.is_none_or(|b| !b.required()) {
            self.disabled.insert(name.to_owned());
        }
        if let Some(built_in) = built_in {
            self.built_ins = self.built_ins.without(built_in);
        }
        self
    }

    /// The built-ins that run under this policy: every required one, and each other one
    /// `disabled` does not name. Computed once, when the policy is made.
    pub fn built_ins(&self) -> EnabledBuiltIns {
        self.built_ins
    }

    /// This policy with other per-call caps (for embedders and tests).
    pub fn with_limits(mut self, limits: SkillLimits) -> Self {
        self.limits = limits;
        self
    }

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
        BuiltIn::from_name(name).is_none_or(|b| !b.required()) && self.disabled.contains(name)
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

/// Reads and checks `skills.yml`. `None` when the file cannot be read. With `user_skills`
/// known, every named skill must be a built-in or one of them (`unknown_skill`).
pub(crate) fn load(
    sink: &mut Sink<'_>,
    text: &str,
    user_skills: Option<&BTreeSet<String>>,
) -> Option<SkillsPolicy> {
    let file = sink.file().to_owned();
    let raw: SkillsFile = yaml::parse(&file, text, sink.problems())?;
    if let Some(user_skills) = user_skills {
        let named =
            raw.enabled
                .iter()
                .enumerate()
                .map(|(index, name)| (item("enabled", index), name))
                .chain(
                    raw.disabled
                        .iter()
                        .enumerate()
                        .map(|(index, name)| (item("disabled", index), name)),
                )
                .chain(
                    raw.severity_overrides.0.iter().map(|(name, _)| {
                        (format!("severity_overrides.{}", shown(&name.value)), name)
                    }),
                );
        for (field, name) in named {
            unknown_skill(
                sink,
                &field,
                name,
                user_skills,
                field.starts_with("enabled"),
            );
        }
    }
    let enabled = names(sink, "enabled", &raw.enabled);

    let mut disabled = BTreeSet::new();
    for (index, name) in names_with_index(sink, "disabled", &raw.disabled) {
        if BuiltIn::from_name(&name.value).is_some_and(BuiltIn::required) {
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
        if BuiltIn::from_name(&name.value).is_some_and(BuiltIn::is_core_l1_validator)
            && !parsed.blocks()
        {
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

    let limits = raw
        .limits
        .as_ref()
        .map(|raw| SkillLimits {
            call_budget_ms: bounded(
                sink,
                "limits.call_budget_ms",
                raw.call_budget_ms.as_ref(),
                (1, 60_000),
                DEFAULT_CALL_BUDGET_MS,
            ),
            memory_mib: bounded(
                sink,
                "limits.memory_mib",
                raw.memory_mib.as_ref(),
                (1, 1024),
                DEFAULT_MEMORY_MIB,
            ),
            output_kib: bounded(
                sink,
                "limits.output_kib",
                raw.output_kib.as_ref(),
                (1, 4096),
                DEFAULT_OUTPUT_KIB,
            ),
        })
        .unwrap_or_default();

    let built_ins = disabled
        .iter()
        .filter_map(|name| BuiltIn::from_name(name))
        .fold(EnabledBuiltIns::ALL, EnabledBuiltIns::without);
    Some(SkillsPolicy {
        enabled,
        disabled,
        built_ins,
        severity_overrides,
        limits,
    })
}

/// Reports `name` when it is neither a built-in skill nor one of `user_skills`, with the
/// closest known name. In `enabled` (`user_only`), only user skills count: built-ins
/// always run and are not named there.
fn unknown_skill(
    sink: &mut Sink<'_>,
    field: &str,
    name: &Spanned<String>,
    user_skills: &BTreeSet<String>,
    user_only: bool,
) {
    let built_ins = BUILT_IN_SKILLS.iter().map(|skill| skill.name);
    let is_built_in = BuiltIn::from_name(&name.value).is_some();
    if !validate::is_skill_name(&name.value)
        || user_skills.contains(&name.value)
        || (is_built_in && !user_only)
    {
        return;
    }
    if is_built_in {
        sink.warning(
            codes::NO_EFFECT,
            field,
            &name.referenced,
            format!(
                "`{}` is a built-in skill, which runs whatever `enabled` says (it lists user skills only); remove it from the list",
                name.value
            ),
        );
        return;
    }
    let known: Vec<&str> = user_skills
        .iter()
        .map(String::as_str)
        .chain(built_ins.filter(|_| !user_only))
        .collect();
    let hint = match yaml::nearest_name(&name.value, known.iter().copied()) {
        Some(near) => format!("did you mean `{near}`?"),
        None if user_skills.is_empty() => {
            "the configuration directory has no user skills (skills/<kind>/<name>.wasm)".to_owned()
        }
        None => format!(
            "the user skills are {}",
            user_skills
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    sink.error(
        codes::UNKNOWN_SKILL,
        field,
        &name.referenced,
        format!("no skill is named `{}`: {hint}", shown(&name.value)),
    );
}

/// A number within `min..=max`, or `default` (absent, or out of range: reported).
fn bounded(
    sink: &mut Sink<'_>,
    field: &str,
    value: Option<&Spanned<u32>>,
    (min, max): (u32, u32),
    default: u32,
) -> u32 {
    match value {
        None => default,
        Some(v) if (min..=max).contains(&v.value) => v.value,
        Some(v) => {
            sink.error(
                codes::INVALID_VALUE,
                field,
                &v.referenced,
                format!("{field} is {}, expected {min} to {max}", v.value),
            );
            default
        }
    }
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
