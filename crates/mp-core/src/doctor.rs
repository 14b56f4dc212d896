//! `mp doctor`'s decisions: which check passes, fails or warns, over facts an adapter read
//! from GitHub (the App, its installations, branches, labels, check runs, workflows).
//!
//! Every function here is pure: the adapter reads, this module judges, and each [`Check`]
//! carries what was found (`detail`) and, for a failure or a warning, what to do (`fix`).
//! The checks come in a fixed order: configuration, placeholders, credentials, access to
//! each repository, default branches, the `bot-state` branch, labels, required checks,
//! where the required checks may come from, the receipt key, the workflow's `concurrency:` guard
//! and where it reads the App's key from.

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};

use crate::branch::incident::IncidentLabel;
use crate::config::{Config, RepoMergeMode};
use crate::github_queue::protected_by_merge_queue;
use crate::ids::RepoName;
use crate::labels::{
    APPROVED_A, APPROVED_B, APPROVED_C, AUTO_APPROVED_CRITICAL_REVERSIBLE,
    AUTO_APPROVED_IRREVERSIBLE_NON_CRITICAL, AUTO_REVERT, DEFERRED, INBOX_ERROR, INTEGRITY_FAILED,
    PENDING_OWNER, READY_TO_MERGE, STALE_APPROVAL,
};
use crate::state::BOT_STATE_BRANCH;

/// The outcome of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Passed.
    Ok,
    /// Failed: the deployment will not work as configured.
    Fail,
    /// A warning: it works, but something looks off.
    Warn,
}

impl Status {
    /// `ok`, `fail` or `warn`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Fail => "fail",
            Self::Warn => "warn",
        }
    }

    /// `✓`, `✗` or `!`.
    pub fn mark(self) -> &'static str {
        match self {
            Self::Ok => "✓",
            Self::Fail => "✗",
            Self::Warn => "!",
        }
    }
}

/// One line of the doctor's report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// A stable name, e.g. `config`, `installation:acme/webapp`.
    pub name: String,
    /// Passed, failed or warned.
    pub status: Status,
    /// What was found.
    pub detail: String,
    /// What to do, for a failure or a warning.
    pub fix: Option<String>,
}

impl Check {
    fn ok(name: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            status: Status::Ok,
            detail: detail.into(),
            fix: None,
        }
    }

    fn fail(name: impl Into<String>, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            status: Status::Fail,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }

    fn warn(name: impl Into<String>, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            status: Status::Warn,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }
}

/// Whether every check passed (warnings allowed).
pub fn all_ok(checks: &[Check]) -> bool {
    checks.iter().all(|c| c.status != Status::Fail)
}

// ---- labels ------------------------------------------------------------------------------

/// A label mp reads or writes, with the colour and description `--create-labels` gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LabelSpec {
    /// The label's name.
    pub name: &'static str,
    /// Its colour, six hex digits without `#`.
    pub color: &'static str,
    /// Its description (at most 100 characters, as GitHub requires).
    pub description: &'static str,
}

const fn label(name: &'static str, color: &'static str, description: &'static str) -> LabelSpec {
    LabelSpec {
        name,
        color,
        description,
    }
}

/// The labels of pull requests, in every supervised repository: the owner's approval and
/// the inbox's decisions applied to the pull request.
pub const PULL_REQUEST_LABELS: &[LabelSpec] = &[
    label(
        READY_TO_MERGE,
        "0e8a16",
        "mp: the owner approves merging this pull request",
    ),
    label(
        APPROVED_A,
        "0e8a16",
        "mp: the owner approved it as quadrant A",
    ),
    label(
        APPROVED_B,
        "0e8a16",
        "mp: the owner approved it as quadrant B",
    ),
    label(
        APPROVED_C,
        "fbca04",
        "mp: the owner approved it as quadrant C",
    ),
    label(
        AUTO_REVERT,
        "fbca04",
        "mp: an automatic revert (classified C)",
    ),
    label(DEFERRED, "c5def5", "mp: the owner deferred the decision"),
];

/// The labels of the decision inbox's issues, in the inbox repository.
pub const INBOX_LABELS: &[LabelSpec] = &[
    label(
        PENDING_OWNER,
        "d93f0b",
        "mp: a decision waiting for the owner",
    ),
    label(
        AUTO_APPROVED_CRITICAL_REVERSIBLE,
        "c5def5",
        "mp: merged without the owner (critical, reversible)",
    ),
    label(
        AUTO_APPROVED_IRREVERSIBLE_NON_CRITICAL,
        "c5def5",
        "mp: merged without the owner (irreversible, not critical)",
    ),
    label(
        STALE_APPROVAL,
        "fbca04",
        "mp: the approval no longer matches the head",
    ),
    label(DEFERRED, "c5def5", "mp: the owner deferred the decision"),
    label(
        INTEGRITY_FAILED,
        "b60205",
        "mp: the inbox issue was tampered with",
    ),
    label(
        INBOX_ERROR,
        "b60205",
        "mp: the inbox could not apply the decision",
    ),
];

/// The labels of incident issues, in the governance repository.
pub fn incident_labels() -> Vec<LabelSpec> {
    IncidentLabel::ALL
        .iter()
        .map(|kind| {
            label(
                kind.as_str(),
                "b60205",
                "mp: an incident found on the default branch",
            )
        })
        .collect()
}

/// The labels `repo` must have under `config`: pull-request labels where mp gates pull
/// requests, inbox labels in the inbox repository, incident labels in the governance
/// repository; each name once.
pub fn labels_for(config: &Config, repo: &RepoName) -> Vec<LabelSpec> {
    let projects = config.projects();
    let mut wanted: Vec<LabelSpec> = Vec::new();
    let mut add = |specs: &[LabelSpec]| {
        for spec in specs {
            if !wanted.iter().any(|w| w.name == spec.name) {
                wanted.push(*spec);
            }
        }
    };
    if projects.is_supervised(repo) {
        add(PULL_REQUEST_LABELS);
    }
    if projects.inbox_repository() == repo {
        add(INBOX_LABELS);
    }
    if projects.governance_repo() == repo {
        add(&incident_labels());
    }
    wanted
}

/// Every repository doctor looks at, each once: the governance repository, the supervised
/// repositories, the inbox repository.
pub fn repositories(config: &Config) -> Vec<RepoName> {
    let projects = config.projects();
    let mut repos = vec![projects.governance_repo().clone()];
    for repo in projects
        .supervised_repos()
        .iter()
        .chain([projects.inbox_repository()])
    {
        if !repos.contains(repo) {
            repos.push(repo.clone());
        }
    }
    repos
}

// ---- 1. configuration and placeholders ---------------------------------------------------

/// The configuration loaded, or the problems that stopped it.
/// `config_dir` is the directory as the user gave it (shell-quoted when it needs to be),
/// so the command in the fix runs as printed.
pub fn config_check(errors: &[String], warnings: usize, config_dir: &str) -> Check {
    if errors.is_empty() {
        let detail = match warnings {
            0 => "the configuration loads".to_owned(),
            n => format!(
                "the configuration loads ({n} warnings: mp config validate --config {config_dir} lists them)"
            ),
        };
        return Check::ok("config", detail);
    }
    Check::fail(
        "config",
        format!("the configuration does not load:\n{}", errors.join("\n")),
        format!(
            "fix each problem listed (mp config validate --config {config_dir} shows them with their line)"
        ),
    )
}

/// Logins, App slugs and accounts the example configurations use: a deployment that still
/// names one was copied and not edited.
pub const PLACEHOLDER_LOGINS: &[&str] = &[
    "jane-doe",
    "jane-merge-gate",
    "acme",
    "acme-lead",
    "acme-oncall",
    "priya-dev",
    "acme-merge-gate",
    "your-org",
];

/// Whether `value` (a login, slug or account) is an example's placeholder: one of
/// [`PLACEHOLDER_LOGINS`] or any `your-…` name, compared without case.
pub fn is_placeholder(value: &str) -> bool {
    let value = value.to_ascii_lowercase();
    value.starts_with("your-") || PLACEHOLDER_LOGINS.contains(&value.as_str())
}

/// The configuration's values that are still an example's placeholders.
pub fn placeholder_check(config: &Config) -> Check {
    let mut found: Vec<String> = Vec::new();
    let mut note = |file: &str, field: &str, value: &str, account: &str| {
        if is_placeholder(account) {
            found.push(format!("{file} {field}: {value}"));
        }
    };
    let owner = config.owner();
    note(
        "owner.yml",
        "github_login",
        owner.login().as_str(),
        owner.login().as_str(),
    );
    for login in owner.allowlist() {
        note(
            "owner.yml",
            "allowlisted_actors",
            login.as_str(),
            login.as_str(),
        );
    }
    let projects = config.projects();
    let repo = |repo: &RepoName| (repo.to_string(), repo.owner().to_owned());
    let (text, account) = repo(projects.governance_repo());
    note("projects.yml", "governance_repo", &text, &account);
    for supervised in projects.supervised_repos() {
        let (text, account) = repo(supervised);
        note("projects.yml", "supervised_repos", &text, &account);
    }
    // These default to the governance repository: named once unless set apart.
    if projects.bot_repo() != projects.governance_repo() {
        let (text, account) = repo(projects.bot_repo());
        note("projects.yml", "bot_repo", &text, &account);
    }
    if projects.inbox_repository() != projects.governance_repo() {
        let (text, account) = repo(projects.inbox_repository());
        note("projects.yml", "decision_inbox.repository", &text, &account);
    }
    let slug = config.env().bot_app_slug();
    note("env.yml", "bot_app_slug", slug, slug);
    found.dedup();
    if found.is_empty() {
        return Check::ok("placeholders", "no value left from the examples");
    }
    Check::fail(
        "placeholders",
        format!("values copied from the examples: {}", found.join("; ")),
        "replace them with your own logins, repositories and App slug",
    )
}

// ---- 2. credentials ----------------------------------------------------------------------

/// What the credentials turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credentials {
    /// A token; `Ok` with the login it acts as.
    Token(Result<String, String>),
    /// A GitHub App; `Ok` with its slug from `GET /app`.
    App(Result<String, String>),
}

/// The credentials work, and for an App, `GET /app`'s slug is env.yml's `bot_app_slug`.
pub fn credentials_check(config: &Config, credentials: &Credentials) -> Check {
    let configured = config.env().bot_app_slug();
    match credentials {
        Credentials::Token(Ok(login)) => Check::ok(
            "credentials",
            format!("a token (MP_GITHUB_TOKEN) acting as {login}"),
        ),
        Credentials::Token(Err(why)) => Check::fail(
            "credentials",
            format!("the token (MP_GITHUB_TOKEN) does not work: {why}"),
            "set MP_GITHUB_TOKEN to a valid token, or use a GitHub App (docs/deploy.md)",
        ),
        Credentials::App(Ok(slug)) if slug.eq_ignore_ascii_case(configured) => {
            Check::ok("credentials", format!("the GitHub App {slug} (MP_APP_ID)"))
        }
        Credentials::App(Ok(slug)) => Check::fail(
            "credentials",
            format!("MP_APP_ID is the App {slug}, but env.yml bot_app_slug is {configured}"),
            format!("set bot_app_slug: {slug} in env.yml, or MP_APP_ID to the id of {configured}"),
        ),
        Credentials::App(Err(why)) => Check::fail(
            "credentials",
            format!("GET /app with the App's JWT failed: {why}"),
            "check MP_APP_ID and MP_APP_PRIVATE_KEY (the App's id and a current private key)",
        ),
    }
}

// ---- 3. access ---------------------------------------------------------------------------

/// The installation permissions mp needs (name as GitHub spells it, level, name as the
/// App settings page shows it).
pub const NEEDED_PERMISSIONS: &[(&str, &str, &str)] = &[
    ("contents", "write", "Contents"),
    ("pull_requests", "write", "Pull requests"),
    ("issues", "write", "Issues"),
    ("checks", "read", "Checks"),
    ("metadata", "read", "Metadata"),
];

/// How mp can reach one repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    /// The App's installation covering it (`GET /repos/{o}/{r}/installation`), with its
    /// permissions (`contents` → `write`, ...).
    Installation(BTreeMap<String, String>),
    /// The App is not installed on it (404).
    NotInstalled,
    /// A token can read it (`GET /repos/{o}/{r}` answered).
    Readable,
    /// It could not be read.
    Failed(String),
}

impl Access {
    /// Whether mp can read the repository, so the later checks can look at it.
    pub fn reachable(&self) -> bool {
        matches!(self, Self::Installation(_) | Self::Readable)
    }
}

fn level_rank(level: &str) -> u8 {
    match level {
        "admin" => 3,
        "write" => 2,
        "read" => 1,
        _ => 0,
    }
}

/// What a repository in `merge.mode: github-queue` needs besides [`NEEDED_PERMISSIONS`]:
/// enqueueing and dequeueing, and publishing mp's check on the queue's merge groups
/// (decisions/0078, 0084).
pub const GITHUB_QUEUE_PERMISSIONS: &[(&str, &str, &str)] = &[
    ("checks", "write", "Checks"),
    ("merge_queues", "write", "Merge queues"),
];

/// The needed permissions `granted` lacks, e.g. `Contents: write (has read)`.
pub fn missing_permissions(granted: &BTreeMap<String, String>) -> Vec<String> {
    missing_from(NEEDED_PERMISSIONS.iter(), granted)
}

/// [`missing_permissions`] of a repository in `merge.mode: github-queue`, which also needs
/// [`GITHUB_QUEUE_PERMISSIONS`] (a higher level of the same permission replaces the lower).
pub fn missing_permissions_github_queue(granted: &BTreeMap<String, String>) -> Vec<String> {
    let needed = NEEDED_PERMISSIONS
        .iter()
        .filter(|(key, _, _)| !GITHUB_QUEUE_PERMISSIONS.iter().any(|(k, _, _)| k == key))
        .chain(GITHUB_QUEUE_PERMISSIONS.iter());
    missing_from(needed, granted)
}

fn missing_from<'a>(
    needed: impl Iterator<Item = &'a (&'a str, &'a str, &'a str)>,
    granted: &BTreeMap<String, String>,
) -> Vec<String> {
    needed
        .filter_map(|(key, level, shown)| {
            let has = granted.get(*key).map(String::as_str);
            (level_rank(has.unwrap_or("")) < level_rank(level)).then(|| match has {
                Some(has) => format!("{shown}: {level} (has {has})"),
                None => format!("{shown}: {level} (not granted)"),
            })
        })
        .collect()
}

/// mp can reach `repo`, and an App holds the permissions mp needs there.
pub fn access_check(config: &Config, repo: &RepoName, access: &Access) -> Check {
    let name = format!("installation:{repo}");
    let slug = config.env().bot_app_slug();
    match access {
        Access::Installation(granted) => {
            let missing =
                if config.projects().merge_settings(repo).mode() == RepoMergeMode::GitHubQueue {
                    missing_permissions_github_queue(granted)
                } else {
                    missing_permissions(granted)
                };
            if missing.is_empty() {
                Check::ok(
                    name,
                    format!("the App is installed on {repo} with the permissions mp needs"),
                )
            } else {
                Check::fail(
                    name,
                    format!(
                        "the App's installation on {repo} lacks {}",
                        missing.join(", ")
                    ),
                    format!(
                        "grant them in the App's settings (Permissions & events), then accept the new permissions on the installation (https://github.com/apps/{slug}/installations/new)"
                    ),
                )
            }
        }
        Access::NotInstalled => Check::fail(
            name,
            format!("the App is not installed on {repo}"),
            format!("install the App on {repo} (https://github.com/apps/{slug}/installations/new)"),
        ),
        Access::Readable => Check::ok(
            name,
            format!("{repo} is readable with the token (a token's permissions cannot be listed)"),
        ),
        Access::Failed(why) => Check::fail(
            name,
            format!("{repo} cannot be read: {why}"),
            format!("check that {repo} exists and the credentials may read it"),
        ),
    }
}

// ---- 4. default branches -----------------------------------------------------------------

/// The branch `mp tick` gates in `repo`: the override, else what GitHub answered.
pub fn default_branch_check(
    config: &Config,
    repo: &RepoName,
    from_github: Option<&Result<String, String>>,
) -> Check {
    let name = format!("default_branch:{repo}");
    let configured = config
        .projects()
        .repo_override(repo)
        .and_then(|o| o.default_branch());
    match (configured, from_github) {
        (Some(branch), _) => Check::ok(
            name,
            format!("{repo}: {branch} (repo_overrides.{repo}.default_branch)"),
        ),
        (None, Some(Ok(branch))) if !branch.trim().is_empty() => {
            Check::ok(name, format!("{repo}: {branch} (GitHub's default branch)"))
        }
        (None, Some(Ok(_))) => Check::warn(
            name,
            format!("{repo}: GitHub names no default branch; mp assumes main"),
            format!("set repo_overrides.{repo}.default_branch in projects.yml"),
        ),
        (None, Some(Err(why))) => Check::fail(
            name,
            format!("{repo}: the default branch cannot be read ({why}); a tick would assume main"),
            format!("let the credentials read {repo}, or set repo_overrides.{repo}.default_branch"),
        ),
        (None, None) => Check::fail(
            name,
            format!("{repo}: the default branch was not read"),
            format!("set repo_overrides.{repo}.default_branch in projects.yml"),
        ),
    }
}

/// The branch of `repo` as `mp tick` resolves it (`main` when unknown).
pub fn gated_branch(
    config: &Config,
    repo: &RepoName,
    from_github: Option<&Result<String, String>>,
) -> String {
    let configured = config
        .projects()
        .repo_override(repo)
        .and_then(|o| o.default_branch());
    match (configured, from_github) {
        (Some(branch), _) => branch.to_owned(),
        (None, Some(Ok(branch))) if !branch.trim().is_empty() => branch.clone(),
        _ => crate::config::MAIN_BRANCH.to_owned(),
    }
}

// ---- 5. bot-state ------------------------------------------------------------------------

/// Whether mp may write contents in the governance repository, as far as known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentsWrite {
    /// The App's installation grants Contents write.
    Granted,
    /// The App's installation does not.
    Missing,
    /// A token: its permissions are unknown.
    Unknown,
}

/// The `bot-state` branch exists on the governance repository (`Ok(true)`), or the first
/// tick can create it.
pub fn bot_state_check(
    config: &Config,
    exists: &Result<bool, String>,
    write: ContentsWrite,
) -> Check {
    let governance = config.projects().governance_repo();
    let name = "bot_state";
    match (exists, write) {
        (Ok(true), _) => Check::ok(
            name,
            format!("{governance} has the {BOT_STATE_BRANCH} branch"),
        ),
        (Ok(false), ContentsWrite::Granted) => Check::ok(
            name,
            format!("{governance} has no {BOT_STATE_BRANCH} branch yet: the first tick creates it"),
        ),
        (Ok(false), ContentsWrite::Unknown) => Check::warn(
            name,
            format!(
                "{governance} has no {BOT_STATE_BRANCH} branch yet: the first tick creates it if the token may write contents"
            ),
            format!("give the token Contents write on {governance}"),
        ),
        (Ok(false), ContentsWrite::Missing) => Check::fail(
            name,
            format!(
                "{governance} has no {BOT_STATE_BRANCH} branch and the App may not create it (Contents write)"
            ),
            format!(
                "grant Contents write to the App on {governance}; the first tick then creates {BOT_STATE_BRANCH}"
            ),
        ),
        (Err(why), _) => Check::fail(
            name,
            format!("the {BOT_STATE_BRANCH} branch of {governance} cannot be read: {why}"),
            format!("let the credentials read {governance}"),
        ),
    }
}

/// Which branch a ruleset must protect, and from what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protected {
    /// The gated (default) branch of a supervised repository: no deletion, no force push,
    /// changes only through pull requests.
    GatedBranch,
    /// `bot-state` of the governance repository: no deletion, no force push, and updates
    /// restricted (mp's App is the one allowed to bypass).
    BotState,
}

impl Protected {
    /// The rule types a ruleset must apply, each with what it prevents.
    pub fn required_rules(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Self::GatedBranch => &[
                ("deletion", "deleting the branch"),
                (
                    "non_fast_forward",
                    "force pushes that rewrite what mp audited",
                ),
                (
                    "pull_request",
                    "direct pushes (mp reports them after the fact, L5)",
                ),
            ],
            Self::BotState => &[
                ("deletion", "deleting mp's state"),
                ("non_fast_forward", "force pushes to mp's state"),
                (
                    "update",
                    "writes by anyone but mp's App (mp fails closed on them, decisions/0045)",
                ),
            ],
        }
    }
}

/// A branch ruleset protects `branch` of `repo` as `protected` asks: every rule of
/// [`Protected::required_rules`] is among `rules` (the rule types GitHub lists for the
/// branch). A missing rule is a warning: mp detects what it would have prevented, but an
/// agent with write access can still do it. Who may bypass the rules is not visible here;
/// the fix says who must.
pub fn branch_rules_check(
    repo: &RepoName,
    branch: &str,
    protected: Protected,
    rules: &Result<Vec<String>, String>,
) -> Check {
    let name = match protected {
        Protected::GatedBranch => format!("branch_rules:{repo}"),
        Protected::BotState => "bot_state_rules".to_owned(),
    };
    let bypass = match protected {
        Protected::GatedBranch => "with the owner as the only bypass actor",
        Protected::BotState => "with mp's App as the only bypass actor",
    };
    let rules = match rules {
        Ok(rules) => rules,
        Err(why) => {
            return Check::warn(
                name,
                format!("the rules that protect {repo}@{branch} cannot be read: {why}"),
                format!(
                    "let the credentials read {repo} (Metadata read), then run mp doctor again"
                ),
            );
        }
    };
    let missing: Vec<String> = protected
        .required_rules()
        .iter()
        .filter(|(rule, _)| !rules.iter().any(|r| r == rule))
        .map(|(rule, prevents)| format!("{rule} ({prevents})"))
        .collect();
    if missing.is_empty() {
        return Check::ok(
            name,
            format!("a ruleset protects {repo}@{branch} ({})", rules.join(", ")),
        );
    }
    let wanted: Vec<&str> = protected
        .required_rules()
        .iter()
        .map(|(rule, _)| *rule)
        .collect();
    Check::warn(
        name,
        format!(
            "no active ruleset applies to {repo}@{branch}: {}; an agent with write access can still do what they prevent",
            missing.join(", ")
        ),
        format!(
            "add a branch ruleset on {repo} targeting {branch} with the rules {} {bypass} (docs/deploy.md, \"Rulesets\")",
            wanted.join(", ")
        ),
    )
}

/// GitHub's merge queue against `merge.mode` for a supervised repository, over the rule
/// types GitHub lists for its gated branch (the tick's predicate,
/// [`protected_by_merge_queue`]; decisions/0074). A queue without `github-queue` mode is a
/// warning whose fix is the `repo_overrides` entry (a direct merge or mp's own queue's
/// fast-forward is refused on a queue-protected branch); `github-queue` mode without a
/// queue is a warning too (the tick neither merges nor enqueues there). `None` when neither
/// the branch has a queue nor the mode asks for one, or when the rules could not be read
/// (the branch-rules check says so).
pub fn merge_queue_check(
    config: &Config,
    repo: &RepoName,
    branch: &str,
    rules: &Result<Vec<String>, String>,
) -> Option<Check> {
    let Ok(rules) = rules else {
        return None;
    };
    let name = format!("merge_queue:{repo}");
    let mode = config.projects().merge_settings(repo).mode();
    let queued = protected_by_merge_queue(rules);
    match (queued, mode) {
        (true, RepoMergeMode::GitHubQueue) => Some(Check::ok(
            name,
            format!(
                "GitHub's merge queue protects {repo}@{branch}, and merge.mode is github-queue"
            ),
        )),
        (true, mode) => Some(Check::warn(
            name,
            format!(
                "GitHub's merge queue protects {repo}@{branch} (a merge_queue rule), but merge.mode is {}: GitHub refuses mp's {} there",
                mode.as_str(),
                if mode == RepoMergeMode::Queue {
                    "fast-forward of the default branch"
                } else {
                    "direct merges"
                }
            ),
            format!(
                "set the mode in projects.yml: repo_overrides: {{{repo}: {{merge: {{mode: github-queue}}}}}} (docs/queue.md, \"GitHub's merge queue\")"
            ),
        )),
        (false, RepoMergeMode::GitHubQueue) => Some(Check::warn(
            name,
            format!(
                "merge.mode is github-queue but no merge queue protects {repo}@{branch}: the tick neither merges nor enqueues there"
            ),
            format!(
                "add a branch ruleset on {repo} targeting {branch} with the merge_queue rule, or set repo_overrides.{repo}.merge.mode to direct or queue"
            ),
        )),
        (false, _) => None,
    }
}

// ---- 6. labels ---------------------------------------------------------------------------

/// The labels of [`labels_for`] missing from `existing`: not there in any case (GitHub
/// keeps one label per name without case, so these can be created).
pub fn missing_labels(config: &Config, repo: &RepoName, existing: &[String]) -> Vec<LabelSpec> {
    let have: BTreeSet<String> = existing.iter().map(|l| l.to_lowercase()).collect();
    labels_for(config, repo)
        .into_iter()
        .filter(|spec| !have.contains(&spec.name.to_lowercase()))
        .collect()
}

/// The labels of [`labels_for`] that exist in `existing` only in another case (e.g.
/// `Ready-To-Merge`), each with the name as it exists. mp reads label names exactly, as C1
/// reads `ready-to-merge`: such a label would never open the gate. They cannot be created
/// (GitHub has the name already); renaming them fixes it.
pub fn miscased_labels(
    config: &Config,
    repo: &RepoName,
    existing: &[String],
) -> Vec<(LabelSpec, String)> {
    labels_for(config, repo)
        .into_iter()
        .filter(|spec| !existing.iter().any(|l| l == spec.name))
        .filter_map(|spec| {
            existing
                .iter()
                .find(|l| l.to_lowercase() == spec.name.to_lowercase())
                .map(|found| (spec, found.clone()))
        })
        .collect()
}

/// Every label mp uses in `repo` exists there, spelled exactly as mp reads it.
/// `doctor_command` is `mp doctor` as it was run: the fix reruns it with `--create-labels`.
pub fn labels_check(
    config: &Config,
    repo: &RepoName,
    existing: &Result<Vec<String>, String>,
    doctor_command: &str,
) -> Check {
    let name = format!("labels:{repo}");
    let existing = match existing {
        Ok(existing) => existing,
        Err(why) => {
            return Check::fail(
                name,
                format!("the labels of {repo} cannot be read: {why}"),
                format!("let the credentials read {repo} (Issues or Pull requests read)"),
            );
        }
    };
    let missing = missing_labels(config, repo, existing);
    let miscased = miscased_labels(config, repo, existing);
    let wanted = labels_for(config, repo).len();
    if missing.is_empty() && miscased.is_empty() {
        return Check::ok(name, format!("{repo} has the {wanted} labels mp uses"));
    }
    let mut found = Vec::new();
    if !missing.is_empty() {
        let names: Vec<&str> = missing.iter().map(|s| s.name).collect();
        found.push(format!(
            "{repo} lacks {} of the {wanted} labels mp uses: {}",
            missing.len(),
            names.join(", ")
        ));
    }
    if !miscased.is_empty() {
        let names: Vec<String> = miscased
            .iter()
            .map(|(spec, as_is)| format!("`{as_is}` (mp reads `{}`)", spec.name))
            .collect();
        found.push(format!(
            "{repo} spells {} label(s) in another case, which mp does not read: {}",
            miscased.len(),
            names.join(", ")
        ));
    }
    let fix = match (missing.is_empty(), miscased.is_empty()) {
        (false, true) => format!("{doctor_command} --create-labels (creates them)"),
        (true, false) => format!(
            "{doctor_command} --create-labels (renames them; a pull request labelled under the old spelling must be labelled again)"
        ),
        _ => format!(
            "{doctor_command} --create-labels (creates the missing and renames the others; a pull request labelled under an old spelling must be labelled again)"
        ),
    };
    Check::fail(name, found.join("; "), fix)
}

// ---- 7. required checks ------------------------------------------------------------------

/// The check runs seen on the latest commits of a repository's gated branch.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SeenChecks {
    /// How many commits were looked at.
    pub commits: usize,
    /// Check name → the slugs of the Apps that published it (`app.slug`; `?` when none).
    pub apps: BTreeMap<String, BTreeSet<String>>,
}

/// Each required check of `repo` was seen on recent commits; a check never seen, or seen
/// only from another App than the expected publisher, is a warning.
pub fn required_checks_check(
    config: &Config,
    repo: &RepoName,
    seen: &Result<SeenChecks, String>,
) -> Check {
    let name = format!("required_checks:{repo}");
    let required = config.effective_required_checks(repo);
    let seen = match seen {
        Ok(seen) => seen,
        Err(why) => {
            return Check::warn(
                name,
                format!("the check runs of {repo} cannot be read: {why}"),
                format!("let the credentials read {repo} (Checks read)"),
            );
        }
    };
    if required.is_empty() {
        let fix = if config.env().allow_no_ci() {
            None
        } else {
            Some("list the checks your CI reports under required_checks in env.yml".to_owned())
        };
        return Check {
            name,
            status: if fix.is_some() {
                Status::Warn
            } else {
                Status::Ok
            },
            detail: format!("{repo} requires no named check"),
            fix,
        };
    }
    let publisher = config.effective_expected_check_publisher(repo);
    let mut found = Vec::new();
    let mut never = Vec::new();
    let mut foreign = Vec::new();
    for check in required {
        match seen.apps.get(check) {
            Some(apps) => {
                let list: Vec<&str> = apps.iter().map(String::as_str).collect();
                found.push(format!("{check} by {}", list.join(", ")));
                if !apps.contains(publisher) {
                    foreign.push(check.as_str());
                }
            }
            None => never.push(check.as_str()),
        }
    }
    let commits = seen.commits;
    if never.is_empty() && foreign.is_empty() {
        return Check::ok(
            name,
            format!(
                "{repo}: {} (on the last {commits} commits)",
                found.join("; ")
            ),
        );
    }
    let mut detail = Vec::new();
    if !never.is_empty() {
        detail.push(format!(
            "{} never seen on the last {commits} commits",
            never.join(", ")
        ));
    }
    if !foreign.is_empty() {
        detail.push(format!(
            "{} not published by {publisher}",
            foreign.join(", ")
        ));
    }
    if !found.is_empty() {
        detail.push(format!("seen: {}", found.join("; ")));
    }
    Check::warn(
        name,
        format!("{repo}: {}", detail.join("; ")),
        format!(
            "name the checks exactly as CI reports them (required_checks) and the App that publishes them (expected_check_publisher, now {publisher})"
        ),
    )
}

/// Whether C2's required checks of `repo` can be forged by agents (decisions/0047): with
/// GitHub Actions as the expected publisher, a required check not bound to a workflow file
/// (`required_check_workflows`) counts a green run that any workflow an agent pushes can
/// create with the repository's `GITHUB_TOKEN`, so it warns. With every check bound, the
/// installation must be able to read workflow runs (Actions: read), or every bound check
/// fails closed. `None` when `repo` names no required check or another publisher is
/// expected.
pub fn check_provenance_check(config: &Config, repo: &RepoName, access: &Access) -> Option<Check> {
    let name = format!("check_provenance:{repo}");
    let required = config.effective_required_checks(repo);
    if required.is_empty()
        || config.effective_expected_check_publisher(repo)
            != crate::config::env::DEFAULT_CHECK_PUBLISHER
    {
        return None;
    }
    let bound = config.effective_required_check_workflows(repo);
    let unbound: Vec<&str> = required
        .iter()
        .filter(|check| !bound.contains_key(*check))
        .map(String::as_str)
        .collect();
    if !unbound.is_empty() {
        return Some(Check::warn(
            name,
            format!(
                "C2 is forgeable by agents in {repo}: {} not bound to a workflow file, so a green run any workflow an agent pushes creates with the repository's GITHUB_TOKEN counts",
                unbound.join(", ")
            ),
            "bind each required check to the workflow file that runs it under required_check_workflows in env.yml, or in the repository's repo_overrides entry (decisions/0047)",
        ));
    }
    if let Access::Installation(granted) = access
        && level_rank(granted.get("actions").map_or("", String::as_str)) < 1
    {
        return Some(Check::fail(
            name,
            format!(
                "the App cannot read the workflow runs of {repo} (Actions: none), so every check bound to a workflow fails closed"
            ),
            "grant the App the Actions: read repository permission and accept it on the installation",
        ));
    }
    let pairs: Vec<String> = required
        .iter()
        .map(|check| format!("{check} from {}", bound[check]))
        .collect();
    Some(Check::ok(name, format!("{repo}: {}", pairs.join("; "))))
}
// ---- 8. receipt key ----------------------------------------------------------------------

/// `MP_RECEIPT_KEY` is set from day one: a failure when mp merges, a warning before,
/// because what mp writes without a key (inbox questions) is asked again once it arrives.
pub fn receipt_key_check(config: &Config, key_set: bool) -> Check {
    let name = "receipt_key";
    match (config.merge_enabled(), key_set) {
        (_, true) => Check::ok(name, "MP_RECEIPT_KEY is set: receipts are signed"),
        (false, false) => Check::warn(
            name,
            "MP_RECEIPT_KEY is not set: receipts and inbox questions written now are unsigned, and every open question is asked again once a key arrives",
            "set the secret MP_RECEIPT_KEY (or MP_RECEIPT_KEY_FILE, a file holding it) to a long random string now (openssl rand -hex 32); docs/deploy.md, \"Rotating the receipt key\", covers changing it later",
        ),
        (true, false) => Check::fail(
            name,
            "merge_enabled is true but MP_RECEIPT_KEY is not set: receipts are unsigned",
            "set the secret MP_RECEIPT_KEY (or MP_RECEIPT_KEY_FILE, a file holding it) to a long random string (openssl rand -hex 32)",
        ),
    }
}

// ---- 9. workflow ---------------------------------------------------------------------------

/// Whether a workflow's text runs mp: `mp tick`, `mp serve`, or a step that `uses:` a
/// repository named `mp`.
pub fn runs_mp(text: &str) -> bool {
    text.lines().any(|line| {
        let line = line.trim();
        if line.starts_with('#') {
            return false;
        }
        if line.contains("mp tick") || line.contains("mp serve") {
            return true;
        }
        let Some(used) = line.trim_start_matches("- ").strip_prefix("uses:") else {
            return false;
        };
        let used = used
            .split('#')
            .next()
            .unwrap_or("")
            .trim()
            .trim_matches(['"', '\'']);
        let repo = used.split('@').next().unwrap_or("");
        repo.rsplit('/').next() == Some("mp")
    })
}

/// Whether a workflow's text has a `concurrency:` key (workflow or job level).
pub fn has_concurrency(text: &str) -> bool {
    text.lines()
        .any(|line| line.trim_start().starts_with("concurrency:"))
}

/// Whether a workflow's text reads the App's private key from a secret
/// (`secrets.MP_APP_PRIVATE_KEY`, outside comments).
pub fn reads_app_key(text: &str) -> bool {
    text.lines().any(|line| {
        let code = line.split('#').next().unwrap_or("");
        code.contains("secrets.MP_APP_PRIVATE_KEY")
    })
}

/// Whether a workflow's text names an `environment:` (job level).
pub fn has_environment(text: &str) -> bool {
    text.lines()
        .any(|line| line.trim_start().starts_with("environment:"))
}

/// The governance repository's workflows that read the App's key take it from an
/// environment, not a repository secret (decisions/0047): a repository secret reaches any
/// workflow an agent pushes on any branch, which could then act as mp. `None` when no
/// workflow reads the key (mp runs elsewhere, or the workflows cannot be read: the
/// concurrency check says so). [`environment_checks`] checks the environments themselves.
pub fn app_key_check(workflows: &Result<Vec<(String, String)>, String>) -> Option<Check> {
    let name = "app_key_environment";
    let reading: Vec<&(String, String)> = workflows
        .as_ref()
        .ok()?
        .iter()
        .filter(|(_, text)| reads_app_key(text))
        .collect();
    if reading.is_empty() {
        return None;
    }
    let bare: Vec<&str> = reading
        .iter()
        .filter(|(_, text)| !has_environment(text))
        .map(|(path, _)| path.as_str())
        .collect();
    if bare.is_empty() {
        let paths: Vec<&str> = reading.iter().map(|(path, _)| path.as_str()).collect();
        return Some(Check::ok(
            name,
            format!(
                "{} read the App's key through an environment (restrict its deployment branches to the default branch)",
                paths.join(", ")
            ),
        ));
    }
    Some(Check::warn(
        name,
        format!(
            "{} read MP_APP_PRIVATE_KEY without an environment: as a repository secret it reaches any workflow an agent pushes on any branch, which can then act as mp",
            bare.join(", ")
        ),
        "move the key into an environment whose deployment branches are the default branch only, delete the repository secret, and give the job `environment:` (docs/deploy.md)",
    ))
}

/// The names of the deployment environments a workflow's jobs name (`environment: NAME`,
/// `environment: {name: NAME}`, or `environment:` with `name: NAME` on a deeper line), in
/// order, each once. A name that is an expression (`${{ … }}`) is kept as written.
pub fn environment_names(text: &str) -> Vec<String> {
    fn code(line: &str) -> &str {
        match line.find(" #") {
            Some(at) => &line[..at],
            None if line.trim_start().starts_with('#') => "",
            None => line,
        }
    }
    fn indent(line: &str) -> usize {
        line.len() - line.trim_start().len()
    }
    fn unquote(value: &str) -> String {
        let value = value.trim();
        value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
            .unwrap_or(value)
            .to_owned()
    }
    let lines: Vec<&str> = text.lines().map(code).collect();
    let mut names: Vec<String> = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        let Some(rest) = line.trim_start().strip_prefix("environment:") else {
            continue;
        };
        let rest = rest.trim();
        let name = if let Some(flow) = rest.strip_prefix('{') {
            flow.split([',', '}']).find_map(|pair| {
                let (key, value) = pair.split_once(':')?;
                (key.trim() == "name").then(|| unquote(value))
            })
        } else if rest.is_empty() {
            lines[at + 1..]
                .iter()
                .filter(|next| !next.trim().is_empty())
                .take_while(|next| indent(next) > indent(line))
                .find_map(|next| next.trim_start().strip_prefix("name:").map(unquote))
        } else {
            Some(unquote(rest))
        };
        if let Some(name) = name.filter(|n| !n.is_empty())
            && !names.contains(&name)
        {
            names.push(name);
        }
    }
    names
}

/// A deployment environment of the governance repository as GitHub lists it
/// (`GET /repos/{o}/{r}/environments`), with what `mp doctor` checks of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeployEnvironment {
    /// The environment's name.
    pub name: String,
    /// How many people or teams its `required_reviewers` rule names (0 without the rule).
    pub reviewers: usize,
    /// Which branches may deploy to it.
    pub branches: DeployBranches,
}

/// Which branches (and tags) may run a job that names an environment
/// (`deployment_branch_policy`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeployBranches {
    /// No policy: every branch.
    Any,
    /// `protected_branches`: branches with branch protection rules.
    Protected,
    /// `custom_branch_policies`: the name patterns listed
    /// (`GET …/environments/{name}/deployment-branch-policies`).
    Selected(Vec<DeployPolicy>),
}

/// One custom deployment branch (or tag) policy: a name pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeployPolicy {
    /// The pattern, e.g. `main` or `release/*`.
    pub name: String,
    /// Whether it matches tags rather than branches.
    pub tag: bool,
}

/// For each environment through which a governance workflow reads the App's key: it exists,
/// only the gated `branch` may deploy to it, and (recommended) it has required reviewers
/// (decisions/0047). A workflow an agent pushes on another branch may name the environment
/// too; only the environment's branch policy keeps the key from it. `environments` is
/// `None` when they were not read (no workflow reads the key through one).
pub fn environment_checks(
    workflows: &Result<Vec<(String, String)>, String>,
    environments: Option<&Result<Vec<DeployEnvironment>, String>>,
    branch: &str,
) -> Vec<Check> {
    let Ok(workflows) = workflows else {
        return Vec::new();
    };
    let mut named: Vec<String> = Vec::new();
    for (_, text) in workflows.iter().filter(|(_, text)| reads_app_key(text)) {
        for name in environment_names(text) {
            if !named.contains(&name) {
                named.push(name);
            }
        }
    }
    let Some(environments) = environments else {
        return Vec::new();
    };
    let fix = format!(
        "in the governance repository's Settings → Environments, limit the environment's deployment branches to `{branch}` only (Selected branches, no pattern), and add yourself as a required reviewer if you run mp by hand (docs/deploy.md)"
    );
    let mut out = Vec::new();
    for name in named {
        let check = format!("app_key_environment:{name}");
        if name.contains("${{") {
            out.push(Check::warn(
                check,
                format!("the environment is chosen by an expression ({name}): mp cannot tell which one holds the App's key"),
                "name the environment literally in the job that runs mp",
            ));
            continue;
        }
        let environments = match environments {
            Ok(environments) => environments,
            Err(why) => {
                out.push(Check::warn(
                    check,
                    format!("the environments cannot be read: {why}"),
                    "let the credentials read the governance repository (Actions or Environments: read)",
                ));
                continue;
            }
        };
        let Some(found) = environments
            .iter()
            .find(|e| e.name.eq_ignore_ascii_case(&name))
        else {
            out.push(Check::warn(
                check,
                format!("no environment `{name}` exists: GitHub creates it on the first run with no branch policy, and a repository secret of the key reaches every branch"),
                fix.clone(),
            ));
            continue;
        };
        let open: Option<String> = match &found.branches {
            DeployBranches::Any => Some("any branch may deploy to it".to_owned()),
            DeployBranches::Protected => None,
            DeployBranches::Selected(policies) => {
                let wider: Vec<String> = policies
                    .iter()
                    .filter(|p| p.tag || p.name != branch)
                    .map(|p| {
                        if p.tag {
                            format!("tag `{}`", p.name)
                        } else {
                            format!("`{}`", p.name)
                        }
                    })
                    .collect();
                (!wider.is_empty()).then(|| {
                    format!(
                        "its deployment policies also admit {} besides `{branch}`",
                        wider.join(", ")
                    )
                })
            }
        };
        if let Some(open) = open {
            out.push(Check::warn(
                check,
                format!("environment `{}` holds the App's key, but {open}: a workflow an agent pushes there can name it and act as mp", found.name),
                fix.clone(),
            ));
            continue;
        }
        let branches = match &found.branches {
            DeployBranches::Protected => {
                "protected branches only (keep agents from creating a branch a protection rule covers)".to_owned()
            }
            _ => format!("`{branch}` only"),
        };
        let reviewers = if found.reviewers == 0 {
            "no required reviewers (recommended when mp runs by hand; a scheduled tick would wait for approval)".to_owned()
        } else {
            format!("{} required reviewer(s)", found.reviewers)
        };
        out.push(Check::ok(
            check,
            format!(
                "environment `{}`: deployments from {branches}; {reviewers}",
                found.name
            ),
        ));
    }
    out
}

/// The workflows of the governance repository (path and text) include one that runs mp
/// with a `concurrency:` guard.
pub fn workflow_check(config: &Config, workflows: &Result<Vec<(String, String)>, String>) -> Check {
    let governance = config.projects().governance_repo();
    let name = "workflow_concurrency";
    let fix = "add `concurrency: {group: mp-tick, cancel-in-progress: false}` to the workflow (examples/workflows/mp-tick.yml)";
    let workflows = match workflows {
        Ok(workflows) => workflows,
        Err(why) => {
            return Check::warn(
                name,
                format!("the workflows of {governance} cannot be read: {why}"),
                format!("let the credentials read {governance} (Contents read)"),
            );
        }
    };
    let running: Vec<&(String, String)> =
        workflows.iter().filter(|(_, text)| runs_mp(text)).collect();
    if running.is_empty() {
        return Check::warn(
            name,
            format!("no workflow under .github/workflows of {governance} runs mp"),
            "ignore this if mp runs elsewhere (cron, Kubernetes); otherwise copy examples/workflows/mp-tick.yml",
        );
    }
    let unguarded: Vec<&str> = running
        .iter()
        .filter(|(_, text)| !has_concurrency(text))
        .map(|(path, _)| path.as_str())
        .collect();
    if unguarded.is_empty() {
        let paths: Vec<&str> = running.iter().map(|(path, _)| path.as_str()).collect();
        return Check::ok(
            name,
            format!("{} runs mp with a concurrency guard", paths.join(", ")),
        );
    }
    Check::warn(
        name,
        format!(
            "{} runs mp without a concurrency: guard (two ticks could overlap)",
            unguarded.join(", ")
        ),
        fix,
    )
}

// ---- all of them ---------------------------------------------------------------------------

/// What the adapter read of one repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoFacts {
    /// The repository.
    pub repo: RepoName,
    /// How mp reaches it.
    pub access: Access,
    /// GitHub's default branch, when read (not read when the override names one or the
    /// repository is unreachable).
    pub default_branch: Option<Result<String, String>>,
    /// Its label names, when read.
    pub labels: Option<Result<Vec<String>, String>>,
    /// The check runs of its latest gated-branch commits, when read.
    pub checks: Option<Result<SeenChecks, String>>,
    /// The rule types active rulesets apply to its gated branch, when read (supervised
    /// repositories).
    pub rules: Option<Result<Vec<String>, String>>,
}

/// Everything the adapter read from GitHub and the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    /// The credentials and what they are.
    pub credentials: Credentials,
    /// Each repository of [`repositories`], in that order.
    pub repos: Vec<RepoFacts>,
    /// Whether the governance repository has the `bot-state` branch.
    pub bot_state: Option<Result<bool, String>>,
    /// Whether the state on an existing `bot-state` branch loads as a tick loads it (the
    /// state file read and parsed, every writer of the branch mp or an allowlisted
    /// person): `Err` is why a tick would stop. `None` when not tried.
    pub state_load: Option<Result<(), String>>,
    /// The rule types active rulesets apply to `bot-state`, when read.
    pub bot_state_rules: Option<Result<Vec<String>, String>>,
    /// Whether `MP_RECEIPT_KEY` is set (non-empty).
    pub receipt_key_set: bool,
    /// The governance repository's workflows (path, text), when read.
    pub workflows: Option<Result<Vec<(String, String)>, String>>,
    /// The governance repository's deployment environments, when read (only when a
    /// workflow reads the App's key through one).
    pub environments: Option<Result<Vec<DeployEnvironment>, String>>,
    /// `mp doctor` as it was run (`mp doctor --config DIR`, and `--api-url URL` when not
    /// GitHub.com): the fixes that run doctor again start with it, so they run as printed.
    pub doctor_command: String,
}

/// Every check after the configuration's, in order, over a loaded configuration.
pub fn checks(config: &Config, facts: &Facts) -> Vec<Check> {
    let mut out = vec![
        placeholder_check(config),
        credentials_check(config, &facts.credentials),
    ];
    for repo in &facts.repos {
        out.push(access_check(config, &repo.repo, &repo.access));
    }
    let reachable = || facts.repos.iter().filter(|r| r.access.reachable());
    for repo in reachable() {
        out.push(default_branch_check(
            config,
            &repo.repo,
            repo.default_branch.as_ref(),
        ));
    }
    let governance = config.projects().governance_repo();
    if let Some(bot_state) = &facts.bot_state {
        let write = match facts
            .repos
            .iter()
            .find(|r| &r.repo == governance)
            .map(|r| &r.access)
        {
            Some(Access::Installation(granted)) => {
                if level_rank(granted.get("contents").map_or("", String::as_str)) >= 2 {
                    ContentsWrite::Granted
                } else {
                    ContentsWrite::Missing
                }
            }
            _ => ContentsWrite::Unknown,
        };
        out.push(bot_state_check(config, bot_state, write));
        if let Some(Err(why)) = &facts.state_load {
            out.push(Check::fail(
                "bot_state_load",
                format!("a tick would stop here, exit 3: {why}"),
                "restore the state by hand as docs/state.md, \"Recovering the state\", says (an allowlisted person's push is accepted), or, on a branch mp never wrote, delete it as an allowlisted person so the first tick creates it",
            ));
        } else if let Some(Ok(())) = &facts.state_load {
            out.push(Check::ok(
                "bot_state_load",
                "the state on bot-state loads as a tick loads it",
            ));
        }
    }
    if let Some(rules) = &facts.bot_state_rules {
        out.push(branch_rules_check(
            governance,
            BOT_STATE_BRANCH,
            Protected::BotState,
            rules,
        ));
    }
    for repo in reachable() {
        if let Some(labels) = &repo.labels {
            out.push(labels_check(
                config,
                &repo.repo,
                labels,
                &facts.doctor_command,
            ));
        }
    }
    for repo in reachable() {
        if let Some(seen) = &repo.checks
            && config.projects().is_supervised(&repo.repo)
        {
            out.push(required_checks_check(config, &repo.repo, seen));
        }
    }
    for repo in reachable() {
        if config.projects().is_supervised(&repo.repo)
            && let Some(rules) = &repo.rules
        {
            let branch = gated_branch(config, &repo.repo, repo.default_branch.as_ref());
            out.push(branch_rules_check(
                &repo.repo,
                &branch,
                Protected::GatedBranch,
                rules,
            ));
            out.extend(merge_queue_check(config, &repo.repo, &branch, rules));
        }
    }
    for repo in reachable() {
        if config.projects().is_supervised(&repo.repo)
            && let Some(check) = check_provenance_check(config, &repo.repo, &repo.access)
        {
            out.push(check);
        }
    }
    out.push(receipt_key_check(config, facts.receipt_key_set));
    if let Some(workflows) = &facts.workflows {
        out.push(workflow_check(config, workflows));
        out.extend(app_key_check(workflows));
        let governance = config.projects().governance_repo();
        let read = facts
            .repos
            .iter()
            .find(|r| &r.repo == governance)
            .and_then(|r| r.default_branch.as_ref());
        let branch = gated_branch(config, governance, read);
        out.extend(environment_checks(
            workflows,
            facts.environments.as_ref(),
            &branch,
        ));
    }
    out
}
