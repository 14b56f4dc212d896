//! The skill registry: every built-in skill under its name, plus the user skills loaded
//! from `config/skills/{validators,classifier,branch_hooks}/`, with `skills.yml` applied.
//!
//! Built-ins are listed here so `mp skills status` and the policy can name them; the tick
//! still calls the core functions (gate, classifier, branch supervisor) directly. A user
//! skill is a `.wasm` or `.wat` module with a contract document `<name>.md` beside it; one
//! that fails to load (bad module, refused import, contract gap, name clash) becomes a
//! `skill_load_failed` warning and the others still load.

use std::fmt;
use std::path::{Path, PathBuf};

use mp_core::config::SkillsPolicy;
use mp_core::config::skills::{DISABLEABLE_BUILTINS, REQUIRED_SKILLS};
use mp_core::severity::Severity;
use mp_core::skill::{BranchHook, ClassifierRule, SkillKind, Validator};

use crate::contract::Contract;
use crate::sandbox::{Limits, SkillModule, WasmBranchHook, WasmClassifierRule, WasmValidator};

#[cfg(test)]
mod tests;

/// A built-in skill: its name, kind, default severity (validators) and the core function
/// that implements it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuiltIn {
    /// The skill name, e.g. `validator_ready_to_merge`.
    pub name: &'static str,
    /// The interface it implements.
    pub kind: SkillKind,
    /// The default severity of a validator; `None` for rules and hooks.
    pub severity: Option<Severity>,
    /// The mp-core item that implements it.
    pub implemented_by: &'static str,
}

const fn validator(name: &'static str, severity: Severity, by: &'static str) -> BuiltIn {
    BuiltIn {
        name,
        kind: SkillKind::Validator,
        severity: Some(severity),
        implemented_by: by,
    }
}

const fn other(name: &'static str, kind: SkillKind, by: &'static str) -> BuiltIn {
    BuiltIn {
        name,
        kind,
        severity: None,
        implemented_by: by,
    }
}

/// Every built-in skill, validators in L1 runtime order, then classifier rules in vote
/// order, then branch hooks.
pub const BUILT_INS: [BuiltIn; 16] = [
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

/// Where a skill comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Shipped with mp; implemented in mp-core.
    BuiltIn {
        /// The mp-core item that implements it.
        implemented_by: &'static str,
    },
    /// A user module from `config/skills/`.
    User {
        /// The `.wasm` / `.wat` file.
        module: PathBuf,
    },
}

/// Whether a listed skill's results count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkillState {
    /// Runs and counts.
    Active,
    /// Named in `disabled`: loaded, results ignored.
    Disabled,
    /// A user skill left out by a non-empty `enabled` allowlist: not loaded.
    NotEnabled,
}

impl SkillState {
    /// `active`, `disabled` or `not_enabled`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Disabled => "disabled",
            Self::NotEnabled => "not_enabled",
        }
    }
}

/// One row of the registry listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillEntry {
    /// The skill name.
    pub name: String,
    /// The interface it implements.
    pub kind: SkillKind,
    /// Built-in or user.
    pub origin: Origin,
    /// The effective severity of a validator (overrides applied); `None` otherwise.
    pub severity: Option<Severity>,
    /// Whether `skills.yml` may disable it.
    pub required: bool,
    /// Whether its results count.
    pub state: SkillState,
}

/// A problem found while loading user skills. Never fatal: the other skills still load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadWarning {
    /// `skill_load_failed`, or `skill_not_found` for an `enabled` name with no module.
    pub code: &'static str,
    /// The skill name.
    pub skill: String,
    /// The file concerned, when there is one.
    pub path: Option<PathBuf>,
    /// Why, naming the offending value.
    pub reason: String,
}

impl fmt::Display for LoadWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: skill {}", self.code, self.skill)?;
        if let Some(path) = &self.path {
            write!(f, " ({})", path.display())?;
        }
        write!(f, ": {}", self.reason)
    }
}

/// The loaded skills and the listing of every skill that exists.
#[derive(Debug, Default)]
pub struct Registry {
    entries: Vec<SkillEntry>,
    warnings: Vec<LoadWarning>,
    validators: Vec<WasmValidator>,
    rules: Vec<WasmClassifierRule>,
    hooks: Vec<WasmBranchHook>,
}

impl Registry {
    /// Lists the built-ins and loads the user skills under `skills_dir` (when given and
    /// present), applying `policy`.
    pub fn load(skills_dir: Option<&Path>, policy: &SkillsPolicy, limits: Limits) -> Self {
        let mut registry = Self::default();
        for built_in in BUILT_INS {
            let state = if policy.is_disabled(built_in.name) {
                SkillState::Disabled
            } else {
                SkillState::Active
            };
            registry.entries.push(SkillEntry {
                name: built_in.name.to_owned(),
                kind: built_in.kind,
                origin: Origin::BuiltIn {
                    implemented_by: built_in.implemented_by,
                },
                severity: built_in
                    .severity
                    .map(|s| policy.severity_override(built_in.name).unwrap_or(s)),
                required: REQUIRED_SKILLS.contains(&built_in.name),
                state,
            });
        }
        if let Some(dir) = skills_dir {
            for kind in SkillKind::ALL {
                let folder = dir.join(kind.folder());
                if folder.is_dir() {
                    registry.load_folder(&folder, kind, policy, limits);
                }
            }
        }
        for name in policy.enabled() {
            if !registry.entries.iter().any(|e| &e.name == name) {
                registry.warnings.push(LoadWarning {
                    code: "skill_not_found",
                    skill: name.clone(),
                    path: None,
                    reason: "listed in skills.yml `enabled` but no such user skill exists"
                        .to_owned(),
                });
            }
        }
        registry
    }

    fn load_folder(
        &mut self,
        folder: &Path,
        kind: SkillKind,
        policy: &SkillsPolicy,
        limits: Limits,
    ) {
        for module_path in module_files(folder, &mut self.warnings) {
            let name = module_path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default()
                .to_owned();
            let fail = |reason: String| LoadWarning {
                code: "skill_load_failed",
                skill: name.clone(),
                path: Some(module_path.clone()),
                reason,
            };
            if let Some(problem) = name_problem(&name, &self.entries) {
                self.warnings.push(fail(problem));
                continue;
            }
            if !policy.user_skill_enabled(&name) {
                self.entries.push(user_entry(
                    &name,
                    kind,
                    &module_path,
                    policy,
                    SkillState::NotEnabled,
                ));
                continue;
            }
            let module = match load_user_module(&name, &module_path) {
                Ok(module) => module,
                Err(reason) => {
                    self.warnings.push(fail(reason));
                    continue;
                }
            };
            let state = if policy.is_disabled(&name) {
                SkillState::Disabled
            } else {
                SkillState::Active
            };
            let entry = user_entry(&name, kind, &module_path, policy, state);
            match kind {
                SkillKind::Validator => self.validators.push(WasmValidator::new(
                    module,
                    entry.severity.unwrap_or(Severity::P0),
                    limits,
                )),
                SkillKind::ClassifierRule => {
                    self.rules.push(WasmClassifierRule::new(module, limits));
                }
                SkillKind::BranchHook => self.hooks.push(WasmBranchHook::new(module, limits)),
            }
            self.entries.push(entry);
        }
    }

    /// Every skill that exists: built-ins first, then user skills by kind and name.
    pub fn entries(&self) -> &[SkillEntry] {
        &self.entries
    }

    /// The `skill_load_failed` / `skill_not_found` warnings.
    pub fn warnings(&self) -> &[LoadWarning] {
        &self.warnings
    }

    /// The entry named `name`.
    pub fn entry(&self, name: &str) -> Option<&SkillEntry> {
        self.entries.iter().find(|e| e.name == name)
    }

    fn active(&self, name: &str) -> bool {
        self.entry(name)
            .is_some_and(|e| e.state == SkillState::Active)
    }

    /// The active user validators, in name order (they run after the built-ins).
    pub fn user_validators(&self) -> impl Iterator<Item = &dyn Validator> {
        self.validators
            .iter()
            .filter(|v| self.active(v.name()))
            .map(|v| v as &dyn Validator)
    }

    /// The active user classifier rules, in name order (they vote after the built-ins).
    pub fn user_classifier_rules(&self) -> impl Iterator<Item = &dyn ClassifierRule> {
        self.rules
            .iter()
            .filter(|r| self.active(r.name()))
            .map(|r| r as &dyn ClassifierRule)
    }

    /// The active user branch hooks, in name order.
    pub fn user_branch_hooks(&self) -> impl Iterator<Item = &dyn BranchHook> {
        self.hooks
            .iter()
            .filter(|h| self.active(h.name()))
            .map(|h| h as &dyn BranchHook)
    }
}

/// Whether `name` may be used for a user skill; the reason when not.
fn name_problem(name: &str, taken: &[SkillEntry]) -> Option<String> {
    let valid = !name.is_empty()
        && name.len() <= 100
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if !valid {
        return Some(format!(
            "`{name}` is not a valid skill name (letters, digits, `_`, `.`, `-`)"
        ));
    }
    if BUILT_INS.iter().any(|b| b.name == name)
        || REQUIRED_SKILLS.contains(&name)
        || DISABLEABLE_BUILTINS.contains(&name)
    {
        return Some(format!("`{name}` is the name of a built-in skill"));
    }
    if taken.iter().any(|e| e.name == name) {
        return Some(format!("another user skill is already named `{name}`"));
    }
    None
}

fn user_entry(
    name: &str,
    kind: SkillKind,
    module: &Path,
    policy: &SkillsPolicy,
    state: SkillState,
) -> SkillEntry {
    SkillEntry {
        name: name.to_owned(),
        kind,
        origin: Origin::User {
            module: module.to_owned(),
        },
        // A validator without a severity is P0, as in the reference.
        severity: (kind == SkillKind::Validator)
            .then(|| policy.severity_override(name).unwrap_or(Severity::P0)),
        required: false,
        state,
    }
}

/// The `.wasm` and `.wat` files of a folder, sorted by name.
fn module_files(folder: &Path, warnings: &mut Vec<LoadWarning>) -> Vec<PathBuf> {
    let entries = match std::fs::read_dir(folder) {
        Ok(entries) => entries,
        Err(e) => {
            warnings.push(LoadWarning {
                code: "skill_load_failed",
                skill: folder.display().to_string(),
                path: Some(folder.to_owned()),
                reason: format!("cannot read the folder: {e}"),
            });
            return Vec::new();
        }
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| is_module(p))
        .collect();
    files.sort();
    files
}

/// Whether `path` names a `.wasm` or `.wat` file.
pub fn is_module(path: &Path) -> bool {
    path.is_file() && path.extension().is_some_and(|e| e == "wasm" || e == "wat")
}

/// Reads and checks one user skill: its contract `<name>.md`, then the module.
///
/// # Errors
/// The reason, naming the offending file or value.
pub fn load_user_module(name: &str, module_path: &Path) -> Result<SkillModule, String> {
    let contract_path = module_path.with_extension("md");
    let contract = std::fs::read_to_string(&contract_path).map_err(|e| {
        format!(
            "no readable contract document {} ({e})",
            contract_path.display()
        )
    })?;
    if let Err(gaps) = Contract::parse(&contract) {
        let gaps: Vec<String> = gaps.iter().map(ToString::to_string).collect();
        return Err(format!(
            "contract {} is incomplete: {}",
            contract_path.display(),
            gaps.join("; ")
        ));
    }
    let bytes = std::fs::read(module_path)
        .map_err(|e| format!("cannot read {}: {e}", module_path.display()))?;
    let module = if module_path.extension().is_some_and(|e| e == "wat") {
        let text = String::from_utf8(bytes)
            .map_err(|_| format!("{} is not UTF-8 text", module_path.display()))?;
        SkillModule::from_wat(name, &text)
    } else {
        SkillModule::from_wasm(name, &bytes)
    };
    module.map_err(|failure| format!("{}: {}", failure.code(), failure.cause))
}
