//! Strict configuration loading: file texts in, a resolved [`Config`] and every problem out.
//!
//! The loader is pure: the caller reads the configuration directory and hands over the
//! texts as [`ConfigFiles`]; [`load`] parses every file with the strict YAML reader
//! (duplicate keys, unknown keys, `yes`/`no` booleans, merge keys and tags are refused),
//! applies every default and resolution rule, and reports every problem of every file as a
//! [`ConfigProblem`] that names the file, line, column and key. A [`Config`] is returned
//! only when there is no error; warnings never block.
//!
//! | file | required | resolved as |
//! |---|---|---|
//! | `owner.yml` | yes | [`Owner`] |
//! | `projects.yml` | yes | [`Projects`] |
//! | `env.yml` | yes | [`Env`] |
//! | `agent_registry.yml` | no (absent: no registry, the L4 check is a no-op) | [`AgentRegistry`] |
//! | `skills.yml` | no (absent: defaults) | [`SkillsPolicy`] |
//! | `classifier_rules.yml` | no (absent: the shipped default) | [`PathRulesSpec`] |
//! | `mirror_paths.json` | no (absent: no drift check) | [`MirrorPaths`] |
//!
//! [`starter`] goes the other way: it renders the three required files from a few checked
//! values (`mp init`).

pub mod agent_registry;
pub mod classifier_rules;
pub mod env;
pub mod mirror_paths;
pub mod owner;
pub mod problem;
pub mod projects;
mod read_concurrency;
pub mod skills;
pub mod starter;
mod validate;
pub mod yaml;

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};

pub use env::{Env, ReadSource, RunnerTier};
pub use mirror_paths::MirrorPaths;
pub use owner::Owner;
pub use problem::{ConfigProblem, ProblemSeverity, codes};
pub use projects::{
    Availability, InboxLifecycle, MAIN_BRANCH, MergeSettings, Projects, RepoMergeMode, RepoOverride,
};
pub use read_concurrency::ReadConcurrency;
pub use skills::SkillsPolicy;

use crate::classifier::path_rules::PathRulesSpec;
use crate::ids::{Login, RepoName};
use crate::registry::AgentRegistry;
use validate::Sink;

/// `owner.yml` (required).
pub const OWNER_FILE: &str = "owner.yml";
/// `projects.yml` (required).
pub const PROJECTS_FILE: &str = "projects.yml";
/// `env.yml` (required).
pub const ENV_FILE: &str = "env.yml";
/// `agent_registry.yml` (optional).
pub const AGENT_REGISTRY_FILE: &str = "agent_registry.yml";
/// `skills.yml` (optional).
pub const SKILLS_FILE: &str = "skills.yml";
/// `classifier_rules.yml` (optional).
pub const CLASSIFIER_RULES_FILE: &str = "classifier_rules.yml";
/// `mirror_paths.json` (optional).
pub const MIRROR_PATHS_FILE: &str = "mirror_paths.json";

/// The files the loader reads, required ones first.
pub const CONFIG_FILE_NAMES: [&str; 7] = [
    OWNER_FILE,
    PROJECTS_FILE,
    ENV_FILE,
    AGENT_REGISTRY_FILE,
    SKILLS_FILE,
    CLASSIFIER_RULES_FILE,
    MIRROR_PATHS_FILE,
];

/// The texts of a configuration directory, by file name (e.g. `owner.yml`). A file that
/// does not exist is simply not inserted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfigFiles {
    texts: BTreeMap<String, String>,
    /// The names of the user skills beside the files (`skills/<kind>/<name>.wasm`, fetched
    /// ones); `None` when the caller cannot tell, and names in `skills.yml` are then not
    /// checked against them.
    user_skills: Option<BTreeSet<String>>,
}

impl ConfigFiles {
    /// No files.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the text of `name`.
    pub fn insert(&mut self, name: impl Into<String>, text: impl Into<String>) -> &mut Self {
        self.texts.insert(name.into(), text.into());
        self
    }

    /// These files plus `name`.
    #[must_use]
    pub fn with(mut self, name: impl Into<String>, text: impl Into<String>) -> Self {
        self.insert(name, text);
        self
    }

    /// The text of `name`, if present.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.texts.get(name).map(String::as_str)
    }

    /// The names of the present files, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.texts.keys().map(String::as_str)
    }

    /// Declares the user skills that exist beside these files: every skill name in
    /// `skills.yml` must then be a built-in or one of them (`unknown_skill`).
    pub fn set_user_skills<S: Into<String>>(&mut self, names: impl IntoIterator<Item = S>) {
        self.user_skills = Some(names.into_iter().map(Into::into).collect());
    }

    /// These files with the user skills `names` declared (see [`ConfigFiles::set_user_skills`]).
    #[must_use]
    pub fn with_user_skills<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.set_user_skills(names);
        self
    }

    /// The declared user skills; `None` when they were not declared.
    pub fn user_skills(&self) -> Option<&BTreeSet<String>> {
        self.user_skills.as_ref()
    }
}

impl<N: Into<String>, T: Into<String>> FromIterator<(N, T)> for ConfigFiles {
    fn from_iter<I: IntoIterator<Item = (N, T)>>(iter: I) -> Self {
        let mut files = Self::new();
        for (name, text) in iter {
            files.insert(name, text);
        }
        files
    }
}

/// The outcome of [`load`]: the configuration when there is no error, and every problem.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ConfigReport {
    /// The resolved configuration; `None` when any problem is an error.
    pub config: Option<Config>,
    /// Every problem, grouped by file (in [`CONFIG_FILE_NAMES`] order) and sorted by line.
    pub problems: Vec<ConfigProblem>,
}

impl ConfigReport {
    /// Whether any problem is an error.
    pub fn has_errors(&self) -> bool {
        self.problems.iter().any(ConfigProblem::is_error)
    }

    /// The errors.
    pub fn errors(&self) -> impl Iterator<Item = &ConfigProblem> {
        self.problems.iter().filter(|p| p.is_error())
    }

    /// The warnings.
    pub fn warnings(&self) -> impl Iterator<Item = &ConfigProblem> {
        self.problems.iter().filter(|p| !p.is_error())
    }
}

/// The resolved configuration: every default applied, every cross-file rule resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    owner: Owner,
    projects: Projects,
    env: Env,
    registry: Option<AgentRegistry>,
    skills: SkillsPolicy,
    path_rules: PathRulesSpec,
    mirror_paths: Option<MirrorPaths>,
}

impl Config {
    /// The gate policy of `repo` for the bot user `bot`: allowlist, the repository's
    /// required checks and check publisher, `allow_no_ci`, the classifier publisher, the
    /// agent registry at `registry_severity` (as the burn-in clock decided it; `None` takes
    /// the `skills.yml` override of `validator_agent_registry`, else P2), and the check
    /// report timeout.
    pub fn gate_policy(
        &self,
        repo: &RepoName,
        bot: Login,
        registry_severity: Option<crate::severity::Severity>,
    ) -> crate::gate::GatePolicy {
        use crate::gate::{ConditionId, DEFAULT_REGISTRY_SEVERITY, GatePolicy};
        let env = self.env();
        let registry_severity = registry_severity
            .or_else(|| {
                self.skills()
                    .severity_override(ConditionId::AgentRegistry.validator_name())
            })
            .unwrap_or(DEFAULT_REGISTRY_SEVERITY);
        GatePolicy {
            allowlist: self.allowlist().to_vec(),
            bot: Some(bot),
            required_checks: self.effective_required_checks(repo).to_vec(),
            expected_publisher: self.effective_expected_check_publisher(repo).to_owned(),
            required_check_workflows: self.effective_required_check_workflows(repo).clone(),
            allow_no_ci: env.allow_no_ci(),
            classifier_publisher_slug: env.classifier_publisher_slug().to_owned(),
            registry: self.registry().cloned(),
            registry_severity,
            check_report_timeout_minutes: env.check_report_timeout_minutes(),
            label_settle: env.label_settle(),
            merge_mode: self.projects().merge_settings(repo).mode(),
        }
    }

    /// The owner and the allowlist (`owner.yml`).
    pub fn owner(&self) -> &Owner {
        &self.owner
    }

    /// The trusted human actors: `allowlisted_actors`, or `[github_login]` when absent.
    pub fn allowlist(&self) -> &[Login] {
        self.owner.allowlist()
    }

    /// Whether `login` is a trusted human actor.
    pub fn is_allowlisted(&self, login: &Login) -> bool {
        self.owner.is_allowlisted(login)
    }

    /// The supervised repositories and their settings (`projects.yml`).
    pub fn projects(&self) -> &Projects {
        &self.projects
    }

    /// The deployment settings (`env.yml`).
    pub fn env(&self) -> &Env {
        &self.env
    }

    /// The agent registry; `None` when `agent_registry.yml` is absent (the L4 registry
    /// check then passes without looking).
    pub fn registry(&self) -> Option<&AgentRegistry> {
        self.registry.as_ref()
    }

    /// The skills policy (`skills.yml`, defaults when absent).
    pub fn skills(&self) -> &SkillsPolicy {
        &self.skills
    }

    /// The path rule's globs (`classifier_rules.yml`, the shipped default when absent).
    pub fn path_rules(&self) -> &PathRulesSpec {
        &self.path_rules
    }

    /// The drift-check paths; `None` when `mirror_paths.json` is absent (no drift check).
    pub fn mirror_paths(&self) -> Option<&MirrorPaths> {
        self.mirror_paths.as_ref()
    }

    /// Whether the bot really merges (`env.yml` `merge_enabled`); false is observe-only.
    pub fn merge_enabled(&self) -> bool {
        self.env.merge_enabled()
    }

    /// The named checks C2 requires in `repo`: the repository's `required_checks` override
    /// when the key is present (an explicit `[]` means none, even with a global list), else
    /// `env.yml` `required_checks`, else none.
    pub fn effective_required_checks(&self, repo: &RepoName) -> &[String] {
        self.projects
            .repo_override(repo)
            .and_then(RepoOverride::required_checks)
            .unwrap_or(self.env.required_checks())
    }

    /// Which workflow file each required check of `repo` must come from: the repository's
    /// override when it has the key, else `env.yml` `required_check_workflows`.
    pub fn effective_required_check_workflows(&self, repo: &RepoName) -> &BTreeMap<String, String> {
        self.projects
            .repo_override(repo)
            .and_then(RepoOverride::required_check_workflows)
            .unwrap_or(self.env.required_check_workflows())
    }

    /// The GitHub App that must publish the checks of `repo`: the repository's override,
    /// else `env.yml` `expected_check_publisher`, else `github-actions`.
    pub fn effective_expected_check_publisher(&self, repo: &RepoName) -> &str {
        self.projects
            .repo_override(repo)
            .and_then(RepoOverride::expected_check_publisher)
            .or(self.env.expected_check_publisher())
            .unwrap_or(env::DEFAULT_CHECK_PUBLISHER)
    }
}

/// Loads a configuration from its file texts.
///
/// Every present file is parsed and checked, even when another one fails, and every
/// problem is reported. Never panics, whatever the texts.
pub fn load(files: &ConfigFiles) -> ConfigReport {
    let mut by_file: BTreeMap<&'static str, Vec<ConfigProblem>> = BTreeMap::new();

    let owner = required(
        files,
        OWNER_FILE,
        by_file.entry(OWNER_FILE).or_default(),
        owner::load,
    );
    let env = required(
        files,
        ENV_FILE,
        by_file.entry(ENV_FILE).or_default(),
        env::load,
    );
    // The C2 posture check reads env.yml's required checks; skip it while they are wrong.
    let env_ok = !by_file
        .get(ENV_FILE)
        .is_some_and(|list| list.iter().any(ConfigProblem::is_error));
    let posture_env = env.as_ref().filter(|_| env_ok);
    let projects = required(
        files,
        PROJECTS_FILE,
        by_file.entry(PROJECTS_FILE).or_default(),
        |s, text| projects::load(s, text, posture_env),
    );
    let registry = optional(
        files,
        AGENT_REGISTRY_FILE,
        by_file.entry(AGENT_REGISTRY_FILE).or_default(),
        agent_registry::load,
    );
    let skills = optional(
        files,
        SKILLS_FILE,
        by_file.entry(SKILLS_FILE).or_default(),
        |s, text| skills::load(s, text, files.user_skills()),
    )
    .map(Option::unwrap_or_default);
    let path_rules = optional(
        files,
        CLASSIFIER_RULES_FILE,
        by_file.entry(CLASSIFIER_RULES_FILE).or_default(),
        classifier_rules::load,
    )
    .map(Option::unwrap_or_default);
    let mirror_paths = optional(
        files,
        MIRROR_PATHS_FILE,
        by_file.entry(MIRROR_PATHS_FILE).or_default(),
        mirror_paths::load,
    );

    let mut problems = Vec::new();
    for name in CONFIG_FILE_NAMES {
        let mut list = by_file.remove(name).unwrap_or_default();
        list.sort_by_key(|p| (p.line.unwrap_or(0), p.column.unwrap_or(0)));
        problems.extend(list);
    }
    problems.extend(unknown_files(files));

    let has_errors = problems.iter().any(ConfigProblem::is_error);
    let config = match (
        owner,
        projects,
        env,
        registry,
        skills,
        path_rules,
        mirror_paths,
    ) {
        (
            Some(owner),
            Some(projects),
            Some(env),
            Some(registry),
            Some(skills),
            Some(path_rules),
            Some(mirror_paths),
        ) if !has_errors => Some(Config {
            owner,
            projects,
            env,
            registry,
            skills,
            path_rules,
            mirror_paths,
        }),
        _ => None,
    };
    ConfigReport { config, problems }
}

/// Reads one agent registry file on its own (e.g. for a `commit-msg` hook).
///
/// # Errors
/// Returns every problem of the file (warnings included) when any of them is an error.
pub fn parse_agent_registry(
    file_name: &str,
    text: &str,
) -> Result<AgentRegistry, Vec<ConfigProblem>> {
    let mut problems = Vec::new();
    let registry = agent_registry::load(&mut Sink::new(file_name, &mut problems), text);
    match registry {
        Some(registry) if !problems.iter().any(ConfigProblem::is_error) => Ok(registry),
        _ => Err(problems),
    }
}

/// The JSON Schema (draft-07, for editors) of each configuration file, by file stem:
/// `owner`, `projects`, `env`, `agent_registry`, `skills`, `classifier_rules`, `mirror_paths`.
///
/// The schemas describe the shape; rules that span values (uniqueness after lower-casing,
/// cross-file checks, globs that compile) are only checked by [`load`].
#[cfg(feature = "schema")]
pub fn json_schemas() -> Vec<(&'static str, schemars::Schema)> {
    fn schema_of<T: schemars::JsonSchema>() -> schemars::Schema {
        schemars::generate::SchemaSettings::draft07()
            .for_deserialize()
            .into_generator()
            .into_root_schema_for::<T>()
    }
    vec![
        ("owner", schema_of::<owner::OwnerFile>()),
        ("projects", schema_of::<projects::ProjectsFile>()),
        ("env", schema_of::<env::EnvFile>()),
        (
            "agent_registry",
            schema_of::<agent_registry::AgentRegistryFile>(),
        ),
        ("skills", schema_of::<skills::SkillsFile>()),
        (
            "classifier_rules",
            schema_of::<classifier_rules::ClassifierRulesFile>(),
        ),
        ("mirror_paths", schema_of::<mirror_paths::MirrorPathsFile>()),
    ]
}

/// A required file: its value, or a `missing_file` error.
fn required<T>(
    files: &ConfigFiles,
    name: &'static str,
    problems: &mut Vec<ConfigProblem>,
    load: impl FnOnce(&mut Sink<'_>, &str) -> Option<T>,
) -> Option<T> {
    match files.get(name) {
        Some(text) => load(&mut Sink::new(name, problems), text),
        None => {
            problems.push(ConfigProblem::error(
                name,
                codes::MISSING_FILE,
                format!("required file `{name}` is missing"),
            ));
            None
        }
    }
}

/// An optional file: `Some(None)` when absent, `Some(Some(value))` when read, and `None`
/// when present but unreadable.
fn optional<T>(
    files: &ConfigFiles,
    name: &'static str,
    problems: &mut Vec<ConfigProblem>,
    load: impl FnOnce(&mut Sink<'_>, &str) -> Option<T>,
) -> Option<Option<T>> {
    match files.get(name) {
        None => Some(None),
        Some(text) => load(&mut Sink::new(name, problems), text).map(Some),
    }
}

/// A warning for each file name the loader does not read.
fn unknown_files(files: &ConfigFiles) -> Vec<ConfigProblem> {
    files
        .names()
        .filter(|name| !CONFIG_FILE_NAMES.contains(name))
        .map(|name| {
            let stem = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
            let hint = CONFIG_FILE_NAMES
                .iter()
                .find(|known| known.rsplit_once('.').is_some_and(|(s, _)| s == stem))
                .map(|known| format!("; did you mean `{known}`?"))
                .unwrap_or_default();
            ConfigProblem::warning(
                name,
                codes::UNKNOWN_FILE,
                format!(
                    "`{}` is not a configuration file and is not read{hint}",
                    problem::shown(name)
                ),
            )
        })
        .collect()
}
