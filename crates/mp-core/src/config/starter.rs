//! A starter configuration: `owner.yml`, `projects.yml` and `env.yml` rendered from the few
//! values every deployment must choose, with the comments of the solo-developer example.
//!
//! The values are checked against GitHub's own naming rules, which are stricter than the
//! loader's patterns (those also accept names GitHub no longer creates), and refused when
//! they are placeholders copied from documentation (`your-github-login`). Every problem of
//! every value is reported, not only the first. The rendered texts load without error
//! through [`super::load`] (the tests hold it), and merging starts off: `merge_enabled:
//! false` is observe mode. Rendering is pure; writing the files is the caller's business.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::LazyLock;

use regex::Regex;

use super::{ENV_FILE, OWNER_FILE, PROJECTS_FILE};
use crate::ids::{GHOST_LOGIN, RepoName};

/// The files a starter configuration consists of, in the order they are rendered.
pub const STARTER_FILES: [&str; 3] = [OWNER_FILE, PROJECTS_FILE, ENV_FILE];

/// The longest check name `env.yml` accepts.
const CHECK_NAME_MAX: usize = 255;

static APP_SLUG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(super::validate::APP_SLUG_PATTERN).expect("constant pattern compiles")
});

/// Words that documentation uses in place of a real value. A value (or one half of
/// `owner/name`) equal to one of them, or starting with `your-` / `your_`, is refused.
const PLACEHOLDERS: &[&str] = &[
    "app-slug",
    "change-me",
    "changeme",
    "check",
    "check-name",
    "example",
    "github-login",
    "github-user",
    "github-username",
    "login",
    "name",
    "org",
    "organization",
    "owner",
    "placeholder",
    "repo",
    "repository",
    "slug",
    "tbd",
    "todo",
    "user",
    "username",
    "xxx",
    "your",
];

/// Which value of a starter configuration a problem is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum StarterField {
    /// The owner's login (`owner.yml` `github_login`).
    Owner,
    /// The governance repository (`projects.yml` `governance_repo`).
    Governance,
    /// A supervised repository (`projects.yml` `supervised_repos`).
    Repo,
    /// The GitHub App's slug (`env.yml` `bot_app_slug`).
    AppSlug,
    /// A required check (`env.yml` `required_checks`).
    RequiredCheck,
}

impl StarterField {
    /// A stable name: `owner`, `governance`, `repo`, `app_slug`, `required_check`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Owner => "owner",
            Self::Governance => "governance",
            Self::Repo => "repo",
            Self::AppSlug => "app_slug",
            Self::RequiredCheck => "required_check",
        }
    }

    /// What the value is, in words (`GitHub login`, `repository`, ...).
    fn what(self) -> &'static str {
        match self {
            Self::Owner => "GitHub login",
            Self::Governance | Self::Repo => "repository",
            Self::AppSlug => "GitHub App slug",
            Self::RequiredCheck => "check name",
        }
    }
}

/// A value refused for a starter configuration, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct StarterValueError {
    field: StarterField,
    value: String,
    reason: String,
}

impl StarterValueError {
    fn new(field: StarterField, value: &str, reason: impl Into<String>) -> Self {
        // Keep messages bounded even for hostile input.
        let value: String = value.chars().take(120).collect();
        Self {
            field,
            value,
            reason: reason.into(),
        }
    }

    /// `value` of `field` was given twice (repository names compared case-insensitively).
    pub fn listed_twice(field: StarterField, value: &str) -> Self {
        let reason = match field {
            StarterField::Governance | StarterField::Repo => {
                "listed twice (repository names are case-insensitive)"
            }
            _ => "listed twice",
        };
        Self::new(field, value, reason)
    }

    /// The value the problem is about.
    pub fn field(&self) -> StarterField {
        self.field
    }

    /// The refused text (at most 120 characters of it).
    pub fn value(&self) -> &str {
        &self.value
    }

    /// Why it was refused.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for StarterValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.value.is_empty() {
            write!(f, "{}", self.reason)
        } else {
            write!(
                f,
                "invalid {} `{}`: {}",
                self.field.what(),
                self.value,
                self.reason
            )
        }
    }
}

/// Whether `text` is a placeholder word (compared case-insensitively).
fn is_placeholder(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.starts_with("your-") || lower.starts_with("your_") || PLACEHOLDERS.contains(&&*lower)
}

fn placeholder(field: StarterField, text: &str) -> StarterValueError {
    StarterValueError::new(
        field,
        text,
        "this is a placeholder from an example; give the real value",
    )
}

/// GitHub's rule for user and organisation names: 1-39 letters, digits and single
/// hyphens, not starting or ending with a hyphen.
fn login_shape(text: &str) -> Result<(), &'static str> {
    let ok = !text.is_empty()
        && text.len() <= 39
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        && !text.starts_with('-')
        && !text.ends_with('-')
        && !text.contains("--");
    if ok {
        Ok(())
    } else {
        Err(
            "expected 1-39 letters, digits and single hyphens, not starting or ending with a hyphen",
        )
    }
}

/// Checks the owner's login: GitHub's rules for a user name, not `ghost`, not a placeholder.
///
/// # Errors
/// Returns [`StarterValueError`] with the reason when the login is refused.
pub fn check_owner(text: &str) -> Result<(), StarterValueError> {
    let field = StarterField::Owner;
    login_shape(text).map_err(|reason| StarterValueError::new(field, text, reason))?;
    if text.eq_ignore_ascii_case(GHOST_LOGIN) {
        return Err(StarterValueError::new(
            field,
            text,
            "`ghost` is GitHub's placeholder for deleted accounts and can never be trusted",
        ));
    }
    if is_placeholder(text) {
        return Err(placeholder(field, text));
    }
    Ok(())
}

/// Checks a repository `owner/name` (for `field`, [`StarterField::Governance`] or
/// [`StarterField::Repo`]): the owner by GitHub's rules for a user or organisation name,
/// the name 1-100 letters, digits, `.`, `_` and `-` (not `.` or `..`), neither a placeholder.
///
/// # Errors
/// Returns [`StarterValueError`] with the reason when the repository is refused.
pub fn check_repo(field: StarterField, text: &str) -> Result<RepoName, StarterValueError> {
    let refuse = |reason: &str| StarterValueError::new(field, text, reason);
    let Some((owner, name)) = text.split_once('/') else {
        return Err(refuse("expected OWNER/REPO, e.g. jane-doe/webapp"));
    };
    login_shape(owner).map_err(|reason| refuse(&format!("the owner part {reason}")))?;
    let name_ok = !name.is_empty()
        && name.len() <= 100
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        && name != "."
        && name != "..";
    if !name_ok {
        return Err(refuse(
            "expected OWNER/REPO with a name of 1-100 letters, digits, `.`, `_` and `-`",
        ));
    }
    if is_placeholder(owner) || is_placeholder(name) {
        return Err(placeholder(field, text));
    }
    RepoName::parse(text).map_err(|error| refuse(&error.to_string()))
}

/// Checks a GitHub App slug: 2-100 lowercase letters, digits and `-`, not starting or
/// ending with `-`, not a placeholder.
///
/// # Errors
/// Returns [`StarterValueError`] with the reason when the slug is refused.
pub fn check_app_slug(text: &str) -> Result<(), StarterValueError> {
    let field = StarterField::AppSlug;
    if !APP_SLUG.is_match(text) {
        let hint = if APP_SLUG.is_match(&text.to_ascii_lowercase()) {
            " (a slug is lowercase, as in the App's URL github.com/apps/SLUG)"
        } else {
            ""
        };
        return Err(StarterValueError::new(
            field,
            text,
            format!(
                "expected 2-100 lowercase letters, digits and `-`, not starting or ending with `-`{hint}"
            ),
        ));
    }
    if is_placeholder(text) {
        return Err(placeholder(field, text));
    }
    Ok(())
}

/// Checks a required check's name: 1-255 characters, no control characters, no leading or
/// trailing spaces (a check run's name never has them, so the check could never pass),
/// not a placeholder.
///
/// # Errors
/// Returns [`StarterValueError`] with the reason when the name is refused.
pub fn check_check_name(text: &str) -> Result<(), StarterValueError> {
    let field = StarterField::RequiredCheck;
    let refuse = |reason: &str| StarterValueError::new(field, text, reason);
    let length = text.chars().count();
    if length == 0 || length > CHECK_NAME_MAX {
        return Err(refuse("expected 1-255 characters"));
    }
    if text.chars().any(char::is_control) {
        return Err(refuse(
            "a check name has no control characters or line breaks",
        ));
    }
    if text.trim() != text {
        return Err(refuse(
            "a check name neither starts nor ends with a space (it would never match a check run)",
        ));
    }
    if is_placeholder(text) {
        return Err(placeholder(field, text));
    }
    Ok(())
}

/// The raw values of a starter configuration, as typed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StarterValues {
    /// The owner's GitHub login.
    pub owner: String,
    /// The governance repository, `owner/name`.
    pub governance: String,
    /// The supervised repositories, `owner/name` each; at least one.
    pub repos: Vec<String>,
    /// The GitHub App's slug.
    pub app_slug: String,
    /// The check runs every pull request needs green; may be empty.
    pub required_checks: Vec<String>,
}

/// A checked starter configuration, ready to render.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StarterConfig {
    owner: String,
    governance: String,
    repos: Vec<String>,
    app_slug: String,
    required_checks: Vec<String>,
}

impl StarterConfig {
    /// Checks every value and keeps them as typed (GitHub names are case-insensitive; the
    /// loader compares them so).
    ///
    /// # Errors
    /// Returns every refused value: each invalid or placeholder value, no supervised
    /// repository, a repository or a check listed twice.
    pub fn parse(values: &StarterValues) -> Result<Self, Vec<StarterValueError>> {
        let mut problems = Vec::new();
        if let Err(problem) = check_owner(&values.owner) {
            problems.push(problem);
        }
        if let Err(problem) = check_repo(StarterField::Governance, &values.governance) {
            problems.push(problem);
        }
        if values.repos.is_empty() {
            problems.push(StarterValueError::new(
                StarterField::Repo,
                "",
                "at least one supervised repository is needed",
            ));
        }
        let mut seen = BTreeSet::new();
        for repo in &values.repos {
            match check_repo(StarterField::Repo, repo) {
                Ok(name) if !seen.insert(name.clone()) => {
                    problems.push(StarterValueError::listed_twice(StarterField::Repo, repo));
                }
                Ok(_) => {}
                Err(problem) => problems.push(problem),
            }
        }
        if let Err(problem) = check_app_slug(&values.app_slug) {
            problems.push(problem);
        }
        let mut checks = BTreeSet::new();
        for check in &values.required_checks {
            match check_check_name(check) {
                Ok(()) if !checks.insert(check.as_str()) => {
                    problems.push(StarterValueError::listed_twice(
                        StarterField::RequiredCheck,
                        check,
                    ));
                }
                Ok(()) => {}
                Err(problem) => problems.push(problem),
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(Self {
            owner: values.owner.clone(),
            governance: values.governance.clone(),
            repos: values.repos.clone(),
            app_slug: values.app_slug.clone(),
            required_checks: values.required_checks.clone(),
        })
    }

    /// The rendered files, named as in [`STARTER_FILES`] and in that order.
    pub fn render(&self) -> Vec<(&'static str, String)> {
        vec![
            (OWNER_FILE, self.owner_yml()),
            (PROJECTS_FILE, self.projects_yml()),
            (ENV_FILE, self.env_yml()),
        ]
    }

    fn owner_yml(&self) -> String {
        let owner = scalar(&self.owner);
        format!(
            "\
# The human owner. With no allowlisted_actors, the owner is the only trusted actor:
# the only one whose ready-to-merge label, inbox vote or break-glass commit counts.
# To trust more people, list them all, the owner included (docs/configuration.md):
#   allowlisted_actors:
#     - {owner}
#     - a-teammate
github_login: {owner}
"
        )
    }

    fn projects_yml(&self) -> String {
        let governance = scalar(&self.governance);
        let repos: String = self
            .repos
            .iter()
            .map(|repo| format!("  - {}\n", scalar(repo)))
            .collect();
        format!(
            "\
# The governance repository holds the doctrine, incident issues, the decision inbox and
# the bot-state branch with the bot's watermarks.
governance_repo: {governance}

# The repositories mp looks after: their pull requests go through the gate, and what
# lands on their default branch is re-checked. List the governance repository here too
# if its own pull requests should be gated.
supervised_repos:
{repos}
# bot_repo defaults to governance_repo; decision_inbox.repository too.
decision_inbox:
  lifecycle:
    enabled: false # notify-only reminders; turn on once the inbox is in daily use

break_glass:
  adr_deadline_hours: 24

# Per-repository settings (required_checks, expected_check_publisher, default_branch),
# for example a repository gated on a check of its own:
# repo_overrides:
#   {governance}:
#     required_checks:
#       - validate-config
"
        )
    }

    fn env_yml(&self) -> String {
        let slug = scalar(&self.app_slug);
        let checks = if self.required_checks.is_empty() {
            "\
# No named checks yet: C2 then accepts any set of green check runs that includes one
# from GitHub Actions (`mp config validate` warns c2_posture). Name the checks your CI
# reports, e.g. `required_checks: [test, lint]`.
required_checks: []
"
            .to_owned()
        } else {
            let list: String = self
                .required_checks
                .iter()
                .map(|check| format!("  - {}\n", scalar(check)))
                .collect();
            format!(
                "\
# Every pull request must have these checks green, published by GitHub Actions
# (set expected_check_publisher when another App publishes them).
required_checks:
{list}"
            )
        };
        format!(
            "\
# The GitHub App the bot runs as, and what CI must report before a merge.
bot_app_slug: {slug}
runner_tier: actions-free

{checks}allow_no_ci: false

# Observe mode: every tick reports \"would have merged\" and merges nothing. When those
# lines match what you would have merged, set merge_enabled: true and push; from the
# next tick mp merges the pull requests that pass every gate.
merge_enabled: false
check_report_timeout_minutes: 60

# Opt-in features.
auto_revert_pr: false
"
        )
    }
}

/// Words a YAML reader could take for something other than text.
const YAML_WORDS: &[&str] = &[
    "y", "yes", "n", "no", "on", "off", "true", "false", "null", "nan", "inf",
];

/// `text` as a YAML scalar that always reads back as the same text: plain when it is a
/// simple word, double-quoted otherwise (a login like `1234` would read as a number).
fn scalar(text: &str) -> String {
    let plain = text.starts_with(|c: char| c.is_ascii_alphabetic())
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
        && !YAML_WORDS.contains(&&*text.to_ascii_lowercase());
    if plain {
        return text.to_owned();
    }
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('"');
    for c in text.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            c if c.is_control() => quoted.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

#[cfg(test)]
mod tests;
