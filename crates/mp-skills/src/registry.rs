//! The skill registry: every built-in skill under its name, plus the user skills loaded
//! from `config/skills/{validators,classifier,branch_hooks}/`, with `skills.yml` applied.
//!
//! Built-ins come from the core catalog ([`mp_core::skill::builtin`]) that the tick runs
//! them through; they are listed here so `mp skills status` and the policy can name them. A user
//! skill is a `.wasm` or `.wat` module with a contract document `<name>.md` beside it; one
//! that fails to load (bad module, refused import, contract gap, name clash) becomes a
//! `skill_load_failed` warning and the others still load.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mp_core::config::SkillsPolicy;
use mp_core::severity::Severity;
use mp_core::skill::{BranchHook, ClassifierRule, SkillKind, Validator};

use crate::contract::{Contract, ContractSchemas};
use crate::sandbox::{Limits, SkillModule, WasmBranchHook, WasmClassifierRule, WasmValidator};
use crate::sources::skill_md::parse_skill_md;

#[cfg(test)]
mod tests;

/// The built-in catalog lives in `mp-core` ([`mp_core::skill::builtin`]), where the gate,
/// the classifier and the branch supervisor run their built-ins through it; the registry
/// lists the same table. (The enum of built-ins is [`mp_core::skill::BuiltIn`]; its catalog
/// entry is re-exported under its own name, [`BuiltInSkill`].)
pub use mp_core::skill::builtin::{BUILT_IN_SKILLS as BUILT_INS, BuiltInSkill};

/// A skill fetched from a trusted source: the source id, the skill's name and its
/// directory in the snapshot (as `mp_skills::sources::select` found it).
#[derive(Debug, Clone, Copy)]
pub struct SourcedSkill<'a> {
    /// The source id.
    pub source: &'a str,
    /// The skill's name (its directory name).
    pub name: &'a str,
    /// The skill's directory inside the snapshot.
    pub dir: &'a Path,
}

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
    /// A user module fetched from a trusted external source (`mp sources`).
    Source {
        /// The source id.
        source: String,
        /// The `.wasm` / `.wat` file inside the source's snapshot.
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
        Self::load_with_sources(skills_dir, &[], policy, limits)
    }

    /// Like [`Registry::load`], plus the skills fetched from trusted sources (after the
    /// in-tree ones).
    pub fn load_with_sources(
        skills_dir: Option<&Path>,
        sourced: &[SourcedSkill<'_>],
        policy: &SkillsPolicy,
        limits: Limits,
    ) -> Self {
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
                required: built_in.required(),
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
        registry.load_sourced(sourced, policy, limits);
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
            let origin = Origin::User {
                module: module_path.clone(),
            };
            let contract_path = module_path.with_extension("md");
            self.load_one(
                &name,
                kind,
                (&module_path, &contract_path),
                origin,
                policy,
                limits,
            );
        }
    }

    /// Loads skills fetched from trusted sources, each from its directory in the source's
    /// snapshot: the contract `SKILL.md` (whose frontmatter names the `kind`:
    /// `validators`, `classifier` or `branch_hooks`, the in-tree folder names) and the
    /// module `<name>.wasm` or
    /// `<name>.wat`. They then behave exactly like in-tree user skills (same policy, same
    /// sandbox, same contract checks); a problem is a `skill_load_failed` warning.
    fn load_sourced(&mut self, skills: &[SourcedSkill<'_>], policy: &SkillsPolicy, limits: Limits) {
        for skill in skills {
            let contract_path = skill.dir.join("SKILL.md");
            let fail = |reason: String| LoadWarning {
                code: "skill_load_failed",
                skill: skill.name.to_owned(),
                path: Some(contract_path.clone()),
                reason,
            };
            let text = match std::fs::read_to_string(&contract_path) {
                Ok(text) => text,
                Err(e) => {
                    self.warnings
                        .push(fail(format!("no readable SKILL.md ({e})")));
                    continue;
                }
            };
            let kind = match parse_skill_md(&contract_path, skill.name, &text) {
                Ok(front) => front.kind,
                Err(problems) => {
                    let reason = problems
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("; ");
                    self.warnings.push(fail(reason));
                    continue;
                }
            };
            let Some(module_path) = ["wasm", "wat"]
                .iter()
                .map(|ext| skill.dir.join(format!("{}.{ext}", skill.name)))
                .find(|p| p.is_file())
            else {
                self.warnings.push(fail(format!(
                    "no module {name}.wasm or {name}.wat beside SKILL.md",
                    name = skill.name
                )));
                continue;
            };
            let origin = Origin::Source {
                source: skill.source.to_owned(),
                module: module_path.clone(),
            };
            self.load_one(
                skill.name,
                kind,
                (&module_path, &contract_path),
                origin,
                policy,
                limits,
            );
        }
    }

    /// Loads one user skill (in-tree or fetched) under the policy.
    fn load_one(
        &mut self,
        name: &str,
        kind: SkillKind,
        (module_path, contract_path): (&Path, &Path),
        origin: Origin,
        policy: &SkillsPolicy,
        limits: Limits,
    ) {
        let fail = |reason: String| LoadWarning {
            code: "skill_load_failed",
            skill: name.to_owned(),
            path: Some(module_path.to_owned()),
            reason,
        };
        if let Some(problem) = name_problem(name, &self.entries) {
            self.warnings.push(fail(problem));
            return;
        }
        if !policy.user_skill_enabled(name) {
            self.entries.push(user_entry(
                name,
                kind,
                origin,
                policy,
                SkillState::NotEnabled,
            ));
            return;
        }
        let (module, schemas) = match load_skill_files(name, module_path, contract_path) {
            Ok(loaded) => loaded,
            Err(reason) => {
                self.warnings.push(fail(reason));
                return;
            }
        };
        let state = if policy.is_disabled(name) {
            SkillState::Disabled
        } else {
            SkillState::Active
        };
        let entry = user_entry(name, kind, origin, policy, state);
        let schemas = Arc::new(schemas);
        match kind {
            SkillKind::Validator => self.validators.push(
                WasmValidator::new(module, entry.severity.unwrap_or(Severity::P0), limits)
                    .with_contract(schemas),
            ),
            SkillKind::ClassifierRule => self
                .rules
                .push(WasmClassifierRule::new(module, limits).with_contract(schemas)),
            SkillKind::BranchHook => self
                .hooks
                .push(WasmBranchHook::new(module, limits).with_contract(schemas)),
        }
        self.entries.push(entry);
    }

    /// Every skill that exists: built-ins first, then user skills by kind and name.
    pub fn entries(&self) -> &[SkillEntry] {
        &self.entries
    }

    /// The `skill_load_failed` / `skill_not_found` warnings.
    pub fn warnings(&self) -> &[LoadWarning] {
        &self.warnings
    }

    /// The names of the built-in skills the registry lists.
    pub fn built_in_names(&self) -> Vec<&str> {
        self.entries
            .iter()
            .filter(|e| matches!(e.origin, Origin::BuiltIn { .. }))
            .map(|e| e.name.as_str())
            .collect()
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
    if mp_core::skill::BuiltIn::from_name(name).is_some() {
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
    origin: Origin,
    policy: &SkillsPolicy,
    state: SkillState,
) -> SkillEntry {
    SkillEntry {
        name: name.to_owned(),
        kind,
        origin,
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
    load_user_skill(name, module_path).map(|(module, _)| module)
}

/// Reads and checks one user skill like [`load_user_module`], and compiles its contract's
/// schemas, which every call is then checked against.
///
/// # Errors
/// The reason, naming the offending file or value.
pub fn load_user_skill(
    name: &str,
    module_path: &Path,
) -> Result<(SkillModule, ContractSchemas), String> {
    load_skill_files(name, module_path, &module_path.with_extension("md"))
}

/// Reads and checks a skill's contract document at `contract_path`, then its module.
fn load_skill_files(
    name: &str,
    module_path: &Path,
    contract_path: &Path,
) -> Result<(SkillModule, ContractSchemas), String> {
    let contract = std::fs::read_to_string(contract_path).map_err(|e| {
        format!(
            "no readable contract document {} ({e})",
            contract_path.display()
        )
    })?;
    let contract = Contract::parse(&contract).map_err(|gaps| {
        let gaps: Vec<String> = gaps.iter().map(ToString::to_string).collect();
        format!(
            "contract {} is incomplete: {}",
            contract_path.display(),
            gaps.join("; ")
        )
    })?;
    let schemas = ContractSchemas::compile(&contract)
        .map_err(|e| format!("contract {}: {e}", contract_path.display()))?;
    let bytes = std::fs::read(module_path)
        .map_err(|e| format!("cannot read {}: {e}", module_path.display()))?;
    let module = if module_path.extension().is_some_and(|e| e == "wat") {
        let text = String::from_utf8(bytes)
            .map_err(|_| format!("{} is not UTF-8 text", module_path.display()))?;
        SkillModule::from_wat(name, &text)
    } else {
        SkillModule::from_wasm(name, &bytes)
    };
    module
        .map(|module| (module, schemas))
        .map_err(|failure| format!("{}: {}", failure.code(), failure.cause))
}
