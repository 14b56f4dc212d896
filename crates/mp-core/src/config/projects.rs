//! `projects.yml`: which repositories the bot supervises and how, plus inbox and break-glass settings.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_saphyr::{Location, Spanned};

use super::env::Env;
use super::problem::{codes, shown};
use super::validate::{self, Sink, first_at, item};
use super::yaml::{self, SpannedMap};
use crate::ids::RepoName;

/// The gated branch of a repository whose default branch is not known: no
/// `repo_overrides.<repo>.default_branch`, and GitHub did not name one.
pub const MAIN_BRANCH: &str = "main";

/// The default of `decision_inbox.lifecycle.reminder_hours`.
pub const DEFAULT_REMINDER_HOURS: u32 = 72;
/// The default of `decision_inbox.lifecycle.escalate_hours`.
pub const DEFAULT_ESCALATE_HOURS: u32 = 168;
/// The default of `break_glass.adr_deadline_hours`.
pub const DEFAULT_ADR_DEADLINE_HOURS: u32 = 24;
/// The default of `decision_inbox.lifecycle.availability.ref`.
pub const DEFAULT_AVAILABILITY_REF: &str = "main";
/// The default of `decision_inbox.lifecycle.availability.line_prefix`.
pub const DEFAULT_AVAILABILITY_LINE_PREFIX: &str = "[OWNER_AVAILABILITY]";

/// The repositories the bot supervises.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(title = "projects.yml"))]
pub(crate) struct ProjectsFile {
    /// The governance repository (`owner/name`): doctrine, incidents, decision inbox and the
    /// `bot-state` branch that holds the bot's watermarks.
    #[cfg_attr(feature = "schema", schemars(with = "String", regex(pattern = super::validate::REPO_PATTERN)))]
    governance_repo: Spanned<String>,
    /// Repositories whose pull requests and `main` history the bot supervises. May include
    /// the governance repository.
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(
            with = "Vec<String>",
            inner(regex(pattern = super::validate::REPO_PATTERN)),
            extend("uniqueItems" = true)
        )
    )]
    supervised_repos: Vec<Spanned<String>>,
    /// The repository holding the bot itself; its pull requests are always Quadrant D.
    /// Defaults to `governance_repo`.
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<String>", regex(pattern = super::validate::REPO_PATTERN))
    )]
    bot_repo: Option<Spanned<String>>,
    /// Where Quadrant D decisions are asked.
    #[serde(default)]
    decision_inbox: Option<DecisionInboxSection>,
    /// Break-glass audit settings.
    #[serde(default)]
    break_glass: Option<BreakGlassSection>,
    /// Supervised repositories that are scanned after the fact (post-merge re-validation,
    /// break-glass audit, direct pushes) but whose pull requests are never gated or merged.
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(
            with = "Vec<String>",
            inner(regex(pattern = super::validate::REPO_PATTERN)),
            extend("uniqueItems" = true)
        )
    )]
    audit_only_repos: Vec<Spanned<String>>,
    /// Per-repository settings, keyed by `owner/name`.
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "BTreeMap<String, RepoOverrideSection>")
    )]
    repo_overrides: SpannedMap<RepoOverrideSection>,
}

/// Where Quadrant D pull requests are put to the owner.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct DecisionInboxSection {
    /// Repository for inbox issues. Defaults to `governance_repo`.
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<String>", regex(pattern = super::validate::REPO_PATTERN))
    )]
    repository: Option<Spanned<String>>,
    /// Legacy; accepted and ignored. It cannot turn the lifecycle on.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "Option<ThresholdsSection>"))]
    thresholds: Option<Spanned<ThresholdsSection>>,
    /// Optional reminders and escalation for open inbox issues (notify only; never approves).
    #[serde(default)]
    lifecycle: Option<LifecycleSection>,
}

/// Legacy inbox thresholds; accepted and ignored.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[allow(dead_code, reason = "legacy keys are accepted and never read")]
struct ThresholdsSection {
    /// Ignored.
    #[serde(default)]
    nudge_days: Option<u32>,
    /// Ignored.
    #[serde(default)]
    abandon_days: Option<u32>,
    /// Ignored.
    #[serde(default)]
    auto_close_days: Option<u32>,
}

/// Reminder and escalation comments on open inbox issues.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct LifecycleSection {
    /// Turns the lifecycle on. Off by default: no calls, no comments.
    #[serde(default)]
    enabled: bool,
    /// Hours an issue stays open (outings excluded) before one reminder comment.
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<u32>", range(min = 1), extend("default" = 72))
    )]
    reminder_hours: Option<Spanned<u32>>,
    /// Hours an issue stays open (outings excluded) before one escalation comment; must be
    /// greater than `reminder_hours`.
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<u32>", range(min = 1), extend("default" = 168))
    )]
    escalate_hours: Option<Spanned<u32>>,
    /// A file where the owner records outings and quiet periods that pause the clock.
    #[serde(default)]
    availability: Option<AvailabilitySection>,
}

/// The owner's availability file: outings and quiet periods pause the lifecycle clock.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct AvailabilitySection {
    /// Repository holding the file. Defaults to `governance_repo`.
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<String>", regex(pattern = super::validate::REPO_PATTERN))
    )]
    repository: Option<Spanned<String>>,
    /// Path of the file inside the repository.
    #[cfg_attr(feature = "schema", schemars(with = "String", length(min = 1)))]
    path: Spanned<String>,
    /// Branch or tag to read. Defaults to `main`.
    #[serde(default, rename = "ref")]
    #[cfg_attr(
        feature = "schema",
        schemars(
            with = "Option<String>",
            length(min = 1, max = 255),
            extend("default" = "main")
        )
    )]
    git_ref: Option<Spanned<String>>,
    /// Only lines starting with this prefix are read. Defaults to `[OWNER_AVAILABILITY]`.
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(
            with = "Option<String>",
            length(min = 1, max = 100),
            extend("default" = "[OWNER_AVAILABILITY]")
        )
    )]
    line_prefix: Option<Spanned<String>>,
}

/// Break-glass audit settings.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct BreakGlassSection {
    /// Hours after a break-glass commit within which an ADR under `docs/decisions/` must
    /// reference it.
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<u32>", range(min = 1), extend("default" = 24))
    )]
    adr_deadline_hours: Option<Spanned<u32>>,
}

/// A per-repository override; only these keys exist.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct RepoOverrideSection {
    /// Check-run names required in this repository, replacing `env.yml` `required_checks`.
    /// An explicit empty list means "no named checks" even when a global list exists.
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(
            with = "Option<Vec<String>>",
            inner(length(min = 1, max = 255)),
            extend("uniqueItems" = true)
        )
    )]
    required_checks: Option<Vec<Spanned<String>>>,
    /// The GitHub App that must publish this repository's checks.
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<String>", length(min = 1, max = 100))
    )]
    expected_check_publisher: Option<Spanned<String>>,
    /// Required check name → the workflow file whose jobs alone may publish it in this
    /// repository, replacing `env.yml` `required_check_workflows` (decisions/0047). An
    /// explicit empty map binds no check even when a global map exists.
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<BTreeMap<String, String>>")
    )]
    required_check_workflows: Option<SpannedMap<Spanned<String>>>,
    /// The branch mp gates, merges into and supervises in this repository (for the
    /// governance repository: where the doctrine is read and `bot-state` starts from).
    /// Default: the repository's default branch as GitHub reports it (one call per tick).
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<String>", length(min = 1, max = 255))
    )]
    default_branch: Option<Spanned<String>>,
    /// How pull requests land in this repository: one at a time after updating each to the
    /// default branch (`direct`, the default), in batches tested together on a staging
    /// branch (`queue`, decisions/0056), or through GitHub's own merge queue
    /// (`github-queue`, decisions/0074).
    #[serde(default)]
    merge: Option<MergeSection>,
}

/// `repo_overrides.<repo>.merge`: how pull requests land.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct MergeSection {
    /// `direct` (each pull request merged on its own once its base is the default branch's
    /// head), `queue` (approved pull requests are built together on `mp-queue/<branch>`
    /// and the default branch is fast-forwarded to the tested commit) or `github-queue`
    /// (the default branch is protected by GitHub's merge queue: mp never merges directly;
    /// it enqueues the approved head and dequeues what its gate refuses).
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<RepoMergeMode>", extend("default" = "direct"))
    )]
    mode: Option<Spanned<String>>,
    /// Queue mode: the most pull requests one staging build tests.
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<u32>", range(min = 1, max = 100), extend("default" = 16))
    )]
    batch_max: Option<Spanned<u32>>,
    /// Queue mode: how many times a build whose checks failed only like infrastructure
    /// (cancelled, zero duration) is rebuilt before it counts as red.
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<u32>", range(max = 10), extend("default" = 1))
    )]
    infra_retries: Option<Spanned<u32>>,
    /// Queue mode: how many pull requests of one agent (author and `Agent-Session`) may
    /// be queued at once; the rest wait outside the queue. Default: no cap.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "Option<u32>", range(min = 1)))]
    max_queued_per_agent: Option<Spanned<u32>>,
    /// Queue mode: the label that moves a pull request to the front of the queue, when
    /// the owner or an allowlisted person applied it.
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(
            with = "Option<String>",
            length(min = 1, max = 50),
            extend("default" = "mp:priority")
        )
    )]
    priority_label: Option<Spanned<String>>,
}

/// How pull requests land in a repository (`repo_overrides.<repo>.merge.mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename_all = "kebab-case"))]
#[non_exhaustive]
pub enum RepoMergeMode {
    /// Each pull request is merged on its own, its base first brought up to the default
    /// branch's head (C4, L3).
    #[default]
    Direct,
    /// Approved pull requests are built together on the staging branch; the default branch
    /// is fast-forwarded to the commit whose checks passed (decisions/0056).
    Queue,
    /// The default branch is protected by GitHub's own merge queue (a ruleset's
    /// `merge_queue` rule): GitHub tests and lands what is enqueued, so mp never merges
    /// directly or updates a branch; C4 is not required (decisions/0074).
    #[cfg_attr(feature = "schema", schemars(rename = "github-queue"))]
    GitHubQueue,
}

impl RepoMergeMode {
    const ALL: [Self; 3] = [Self::Direct, Self::Queue, Self::GitHubQueue];

    /// `direct`, `queue` or `github-queue`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Direct => "direct",
            Self::Queue => "queue",
            Self::GitHubQueue => "github-queue",
        }
    }

    /// Whether the gated branch's head need not be the pull request's base (C4): a queue,
    /// mp's or GitHub's, tests the pull request merged onto the head before it lands.
    pub fn tests_on_head(self) -> bool {
        matches!(self, Self::Queue | Self::GitHubQueue)
    }
}

/// The default of `repo_overrides.<repo>.merge.batch_max` (decisions/0059).
pub const DEFAULT_BATCH_MAX: u32 = 16;
/// The largest `batch_max`.
pub const MAX_BATCH_MAX: u32 = 100;
/// The default of `repo_overrides.<repo>.merge.infra_retries`.
pub const DEFAULT_INFRA_RETRIES: u32 = 1;
/// The largest `infra_retries`.
pub const MAX_INFRA_RETRIES: u32 = 10;
/// The default of `repo_overrides.<repo>.merge.priority_label`.
pub const DEFAULT_PRIORITY_LABEL: &str = "mp:priority";

/// `repo_overrides.<repo>.merge`, defaults applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeSettings {
    mode: RepoMergeMode,
    batch_max: u32,
    infra_retries: u32,
    max_queued_per_agent: Option<u32>,
    priority_label: String,
}

impl Default for MergeSettings {
    fn default() -> Self {
        Self {
            mode: RepoMergeMode::Direct,
            batch_max: DEFAULT_BATCH_MAX,
            infra_retries: DEFAULT_INFRA_RETRIES,
            max_queued_per_agent: None,
            priority_label: DEFAULT_PRIORITY_LABEL.to_owned(),
        }
    }
}

impl MergeSettings {
    /// `mode`, default [`RepoMergeMode::Direct`].
    pub fn mode(&self) -> RepoMergeMode {
        self.mode
    }

    /// Whether the repository lands through mp's own queue (`queue`, not `github-queue`).
    pub fn is_queue(&self) -> bool {
        self.mode == RepoMergeMode::Queue
    }

    /// Whether the repository lands through GitHub's merge queue (`github-queue`).
    pub fn is_github_queue(&self) -> bool {
        self.mode == RepoMergeMode::GitHubQueue
    }

    /// `batch_max`, default [`DEFAULT_BATCH_MAX`].
    pub fn batch_max(&self) -> u32 {
        self.batch_max
    }

    /// `infra_retries`, default [`DEFAULT_INFRA_RETRIES`].
    pub fn infra_retries(&self) -> u32 {
        self.infra_retries
    }

    /// `max_queued_per_agent`, default none.
    pub fn max_queued_per_agent(&self) -> Option<u32> {
        self.max_queued_per_agent
    }

    /// `priority_label`, default [`DEFAULT_PRIORITY_LABEL`].
    pub fn priority_label(&self) -> &str {
        &self.priority_label
    }

    /// The build settings of the queue's model.
    pub fn queue_settings(&self) -> crate::queue::QueueSettings {
        crate::queue::QueueSettings {
            batch_max: self.batch_max,
            infra_retries: self.infra_retries,
        }
    }

    /// These settings in `mode` (for tests and generated worlds).
    #[must_use]
    pub fn with_mode(mut self, mode: RepoMergeMode) -> Self {
        self.mode = mode;
        self
    }
}

/// The resolved `projects.yml`, defaults applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Projects {
    governance_repo: RepoName,
    supervised_repos: Vec<RepoName>,
    bot_repo: RepoName,
    inbox_repository: RepoName,
    lifecycle: InboxLifecycle,
    adr_deadline_hours: u32,
    audit_only_repos: Vec<RepoName>,
    repo_overrides: BTreeMap<RepoName, RepoOverride>,
}

impl Projects {
    /// The governance repository: doctrine, incidents, inbox default, `bot-state` branch.
    pub fn governance_repo(&self) -> &RepoName {
        &self.governance_repo
    }

    /// The supervised repositories, in file order (audit-only ones included).
    pub fn supervised_repos(&self) -> &[RepoName] {
        &self.supervised_repos
    }

    /// Whether `repo` is supervised.
    pub fn is_supervised(&self, repo: &RepoName) -> bool {
        self.supervised_repos.contains(repo)
    }

    /// The bot's own repository (`bot_repo`, default `governance_repo`); its pull requests
    /// are always Quadrant D.
    pub fn bot_repo(&self) -> &RepoName {
        &self.bot_repo
    }

    /// Where inbox issues are opened (`decision_inbox.repository`, default `governance_repo`).
    pub fn inbox_repository(&self) -> &RepoName {
        &self.inbox_repository
    }

    /// The optional inbox lifecycle (`decision_inbox.lifecycle`), off by default.
    pub fn lifecycle(&self) -> &InboxLifecycle {
        &self.lifecycle
    }

    /// `break_glass.adr_deadline_hours`, default 24.
    pub fn adr_deadline_hours(&self) -> u32 {
        self.adr_deadline_hours
    }

    /// The audit-only repositories, in file order.
    pub fn audit_only_repos(&self) -> &[RepoName] {
        &self.audit_only_repos
    }

    /// Whether `repo` is audit-only: scanned, never gated.
    pub fn is_audit_only(&self, repo: &RepoName) -> bool {
        self.audit_only_repos.contains(repo)
    }

    /// Whether the pull requests of `repo` go through the gate: supervised and not audit-only.
    pub fn is_gated(&self, repo: &RepoName) -> bool {
        self.is_supervised(repo) && !self.is_audit_only(repo)
    }

    /// The override for `repo`, if `repo_overrides` has one.
    pub fn repo_override(&self, repo: &RepoName) -> Option<&RepoOverride> {
        self.repo_overrides.get(repo)
    }

    /// Every repository override, by repository.
    pub fn repo_overrides(&self) -> &BTreeMap<RepoName, RepoOverride> {
        &self.repo_overrides
    }

    /// How pull requests land in `repo`: its `repo_overrides.<repo>.merge`, else the
    /// defaults (`direct`).
    pub fn merge_settings(&self, repo: &RepoName) -> MergeSettings {
        self.repo_override(repo)
            .map(|o| o.merge.clone())
            .unwrap_or_default()
    }

    /// Whether `repo` lands its pull requests through the merge queue.
    pub fn is_queue_mode(&self, repo: &RepoName) -> bool {
        self.repo_override(repo).is_some_and(|o| o.merge.is_queue())
    }
}

/// One entry of `repo_overrides`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RepoOverride {
    required_checks: Option<Vec<String>>,
    expected_check_publisher: Option<String>,
    required_check_workflows: Option<BTreeMap<String, String>>,
    default_branch: Option<String>,
    merge: MergeSettings,
}

impl RepoOverride {
    /// The repository's own required checks when the key is present; `Some(&[])` means
    /// "no named checks" and wins over the global list.
    pub fn required_checks(&self) -> Option<&[String]> {
        self.required_checks.as_deref()
    }

    /// The repository's own expected check publisher, when set.
    pub fn expected_check_publisher(&self) -> Option<&str> {
        self.expected_check_publisher.as_deref()
    }

    /// The repository's own binding of required checks to workflow files when the key is
    /// present; `Some` of an empty map binds nothing and wins over the global map.
    pub fn required_check_workflows(&self) -> Option<&BTreeMap<String, String>> {
        self.required_check_workflows.as_ref()
    }

    /// The branch mp gates and supervises, when set (otherwise GitHub's default branch).
    pub fn default_branch(&self) -> Option<&str> {
        self.default_branch.as_deref()
    }

    /// How pull requests land (`merge`; the defaults when absent).
    pub fn merge(&self) -> &MergeSettings {
        &self.merge
    }
}

/// The optional inbox lifecycle: reminder and escalation comments, paused by outings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboxLifecycle {
    enabled: bool,
    reminder_hours: u32,
    escalate_hours: u32,
    availability: Option<Availability>,
}

impl Default for InboxLifecycle {
    fn default() -> Self {
        Self {
            enabled: false,
            reminder_hours: DEFAULT_REMINDER_HOURS,
            escalate_hours: DEFAULT_ESCALATE_HOURS,
            availability: None,
        }
    }
}

impl InboxLifecycle {
    /// `enabled`, default false: no lifecycle calls or comments at all.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// `reminder_hours`, default 72.
    pub fn reminder_hours(&self) -> u32 {
        self.reminder_hours
    }

    /// `escalate_hours`, default 168.
    pub fn escalate_hours(&self) -> u32 {
        self.escalate_hours
    }

    /// The owner's availability file, when configured.
    pub fn availability(&self) -> Option<&Availability> {
        self.availability.as_ref()
    }
}

/// Where the owner's availability file lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Availability {
    repository: RepoName,
    path: String,
    git_ref: String,
    line_prefix: String,
}

impl Availability {
    /// Repository holding the file (default `governance_repo`).
    pub fn repository(&self) -> &RepoName {
        &self.repository
    }

    /// Path of the file inside the repository.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Branch or tag read (`ref`, default `main`).
    pub fn git_ref(&self) -> &str {
        &self.git_ref
    }

    /// Prefix of the lines that are read (default `[OWNER_AVAILABILITY]`).
    pub fn line_prefix(&self) -> &str {
        &self.line_prefix
    }
}

/// Reads and checks `projects.yml`; with `env`, also warns about a weak C2 posture.
/// `None` when the file cannot be read or `governance_repo` is invalid.
pub(crate) fn load(sink: &mut Sink<'_>, text: &str, env: Option<&Env>) -> Option<Projects> {
    let file = sink.file().to_owned();
    let raw: ProjectsFile = yaml::parse(&file, text, sink.problems())?;
    let governance_repo = validate::repo(sink, "governance_repo", &raw.governance_repo);
    let supervised_repos = validate::repos(sink, "supervised_repos", &raw.supervised_repos);
    let bot_repo = raw
        .bot_repo
        .as_ref()
        .and_then(|repo| validate::repo(sink, "bot_repo", repo));
    let audit_only_repos = validate::repos(sink, "audit_only_repos", &raw.audit_only_repos);
    for (index, (repo, raw_repo)) in audit_only_repos
        .iter()
        .zip(&raw.audit_only_repos)
        .enumerate()
    {
        if !supervised_repos.contains(repo) {
            sink.warning(
                codes::UNSUPERVISED_REPO,
                &item("audit_only_repos", index),
                &raw_repo.referenced,
                format!("audit-only repository `{repo}` is not in supervised_repos, so it is never scanned"),
            );
        }
    }

    let (inbox_repository, lifecycle) = match &raw.decision_inbox {
        None => (None, Some(InboxLifecycle::default())),
        Some(inbox) => decision_inbox(sink, inbox, governance_repo.as_ref()),
    };
    let adr_deadline_hours = break_glass(sink, raw.break_glass.as_ref());
    let repo_overrides = repo_overrides(
        sink,
        &raw.repo_overrides,
        &supervised_repos,
        governance_repo.as_ref(),
    );

    let governance_repo = governance_repo?;
    let projects = Projects {
        bot_repo: bot_repo.unwrap_or_else(|| governance_repo.clone()),
        inbox_repository: inbox_repository.unwrap_or_else(|| governance_repo.clone()),
        governance_repo,
        supervised_repos,
        lifecycle: lifecycle.unwrap_or_default(),
        adr_deadline_hours,
        audit_only_repos,
        repo_overrides,
    };
    if let Some(env) = env {
        c2_posture(sink, &projects, &raw, env);
    }
    Some(projects)
}

/// Checks `decision_inbox`: its repository and its lifecycle.
fn decision_inbox(
    sink: &mut Sink<'_>,
    inbox: &DecisionInboxSection,
    governance_repo: Option<&RepoName>,
) -> (Option<RepoName>, Option<InboxLifecycle>) {
    let repository = inbox
        .repository
        .as_ref()
        .and_then(|repo| validate::repo(sink, "decision_inbox.repository", repo));
    if let Some(thresholds) = &inbox.thresholds {
        sink.warning(
            codes::IGNORED_FIELD,
            "decision_inbox.thresholds",
            &thresholds.referenced,
            "decision_inbox.thresholds is a legacy setting and is ignored; use decision_inbox.lifecycle",
        );
    }
    let Some(raw) = &inbox.lifecycle else {
        return (repository, Some(InboxLifecycle::default()));
    };
    let hours =
        |sink: &mut Sink<'_>, name: &str, value: &Option<Spanned<u32>>, default: u32| match value {
            None => default,
            Some(value) if value.value == 0 => {
                sink.error(
                    codes::INVALID_VALUE,
                    &format!("decision_inbox.lifecycle.{name}"),
                    &value.referenced,
                    format!("{name} must be at least 1"),
                );
                default
            }
            Some(value) => value.value,
        };
    let reminder_hours = hours(
        sink,
        "reminder_hours",
        &raw.reminder_hours,
        DEFAULT_REMINDER_HOURS,
    );
    let escalate_hours = hours(
        sink,
        "escalate_hours",
        &raw.escalate_hours,
        DEFAULT_ESCALATE_HOURS,
    );
    if escalate_hours <= reminder_hours {
        let at = raw
            .escalate_hours
            .as_ref()
            .or(raw.reminder_hours.as_ref())
            .map_or(Location::UNKNOWN, |value| value.referenced);
        sink.error(
            codes::INVALID_VALUE,
            "decision_inbox.lifecycle.escalate_hours",
            &at,
            format!(
                "escalate_hours ({escalate_hours}) must be greater than reminder_hours ({reminder_hours})"
            ),
        );
    }
    let availability = match &raw.availability {
        None => None,
        Some(section) => availability(sink, section, governance_repo),
    };
    let lifecycle = InboxLifecycle {
        enabled: raw.enabled,
        reminder_hours,
        escalate_hours,
        availability,
    };
    (repository, Some(lifecycle))
}

/// Checks `decision_inbox.lifecycle.availability`.
fn availability(
    sink: &mut Sink<'_>,
    raw: &AvailabilitySection,
    governance_repo: Option<&RepoName>,
) -> Option<Availability> {
    const PREFIX: &str = "decision_inbox.lifecycle.availability";
    let repository = match &raw.repository {
        Some(repo) => validate::repo(sink, &format!("{PREFIX}.repository"), repo),
        None => governance_repo.cloned(),
    };
    let path_ok = validate::repo_path(sink, &format!("{PREFIX}.path"), &raw.path);
    let mut optional =
        |name: &str, value: &Option<Spanned<String>>, max: usize, default: &str| match value {
            None => Some(default.to_owned()),
            Some(value) => validate::text(sink, &format!("{PREFIX}.{name}"), value, 1, max)
                .then(|| value.value.clone()),
        };
    let git_ref = optional("ref", &raw.git_ref, 255, DEFAULT_AVAILABILITY_REF);
    let line_prefix = optional(
        "line_prefix",
        &raw.line_prefix,
        100,
        DEFAULT_AVAILABILITY_LINE_PREFIX,
    );
    Some(Availability {
        repository: repository?,
        path: path_ok.then(|| raw.path.value.clone())?,
        git_ref: git_ref?,
        line_prefix: line_prefix?,
    })
}

/// Checks `break_glass`; returns the ADR deadline in hours.
fn break_glass(sink: &mut Sink<'_>, raw: Option<&BreakGlassSection>) -> u32 {
    match raw.and_then(|section| section.adr_deadline_hours.as_ref()) {
        None => DEFAULT_ADR_DEADLINE_HOURS,
        Some(value) if value.value == 0 => {
            sink.error(
                codes::INVALID_VALUE,
                "break_glass.adr_deadline_hours",
                &value.referenced,
                "adr_deadline_hours must be at least 1",
            );
            DEFAULT_ADR_DEADLINE_HOURS
        }
        Some(value) => value.value,
    }
}

/// Whether `branch` can name a git branch (no spaces, no `..`, no leading `-` or `/`, not
/// `bot-state`, which holds mp's own state); reports the problem when not.
fn branch_name(sink: &mut Sink<'_>, field: &str, branch: &Spanned<String>) -> bool {
    let name = branch.value.as_str();
    let bad = name.contains(|c: char| c.is_whitespace() || "~^:?*[\\".contains(c))
        || name.contains("..")
        || name.starts_with(['-', '/'])
        || name.ends_with(['/', '.'])
        || name.ends_with(".lock");
    if bad {
        sink.error(
            codes::INVALID_VALUE,
            field,
            &branch.referenced,
            format!("`{name}` is not a branch name"),
        );
        return false;
    }
    if name == crate::state::BOT_STATE_BRANCH {
        sink.error(
            codes::INVALID_VALUE,
            field,
            &branch.referenced,
            "`bot-state` holds mp's own state and cannot be the gated branch".to_owned(),
        );
        return false;
    }
    true
}

/// Checks `repo_overrides`: valid keys, each repository once, valid values.
fn repo_overrides(
    sink: &mut Sink<'_>,
    raw: &SpannedMap<RepoOverrideSection>,
    supervised: &[RepoName],
    governance: Option<&RepoName>,
) -> BTreeMap<RepoName, RepoOverride> {
    let mut out = BTreeMap::new();
    let mut seen: BTreeMap<RepoName, u64> = BTreeMap::new();
    for (key, section) in &raw.0 {
        let field = format!("repo_overrides.{}", shown(&key.value));
        let Some(repo) = validate::repo(sink, &field, key) else {
            continue;
        };
        if let Some(first) = seen.get(&repo) {
            sink.error(
                codes::INVALID_VALUE,
                &field,
                &key.referenced,
                format!("repository `{repo}` has two overrides{}", first_at(*first)),
            );
            continue;
        }
        seen.insert(repo.clone(), key.referenced.line());
        if !supervised.contains(&repo) && governance != Some(&repo) {
            sink.warning(
                codes::UNSUPERVISED_REPO,
                &field,
                &key.referenced,
                format!("repo_overrides names `{repo}`, which is not in supervised_repos, so the override has no effect"),
            );
        }
        let required_checks = section.required_checks.as_ref().map(|checks| {
            validate::texts(
                sink,
                &format!("{field}.required_checks"),
                checks,
                255,
                "required check",
            )
        });
        let expected_check_publisher = section
            .expected_check_publisher
            .as_ref()
            .filter(|publisher| {
                validate::text(
                    sink,
                    &format!("{field}.expected_check_publisher"),
                    publisher,
                    1,
                    100,
                )
            })
            .map(|publisher| publisher.value.clone());
        let required_check_workflows = section.required_check_workflows.as_ref().map(|raw| {
            super::env::check_workflows(sink, &format!("{field}.required_check_workflows"), raw)
        });
        let default_branch = section
            .default_branch
            .as_ref()
            .filter(|branch| {
                let field = format!("{field}.default_branch");
                validate::text(sink, &field, branch, 1, 255) && branch_name(sink, &field, branch)
            })
            .map(|branch| branch.value.clone());
        let merge = section
            .merge
            .as_ref()
            .map(|raw| merge_settings(sink, &format!("{field}.merge"), raw))
            .unwrap_or_default();
        out.insert(
            repo,
            RepoOverride {
                required_checks,
                expected_check_publisher,
                required_check_workflows,
                default_branch,
                merge,
            },
        );
    }
    out
}

/// Checks `repo_overrides.<repo>.merge` (`field`); a bad value is reported and its default
/// kept, so the rest of the file is still checked.
fn merge_settings(sink: &mut Sink<'_>, field: &str, raw: &MergeSection) -> MergeSettings {
    let mut out = MergeSettings::default();
    let mut mode_known = true;
    if let Some(mode) = &raw.mode {
        match RepoMergeMode::ALL
            .into_iter()
            .find(|m| m.as_str() == mode.value)
        {
            Some(mode) => out.mode = mode,
            None => {
                mode_known = false;
                sink.error(
                    codes::INVALID_VALUE,
                    &format!("{field}.mode"),
                    &mode.referenced,
                    format!(
                        "unknown merge mode `{}`, expected `direct`, `queue` or `github-queue`",
                        mode.value
                    ),
                );
            }
        }
    }
    if let Some(batch) = &raw.batch_max {
        if (1..=MAX_BATCH_MAX).contains(&batch.value) {
            out.batch_max = batch.value;
        } else {
            sink.error(
                codes::INVALID_VALUE,
                &format!("{field}.batch_max"),
                &batch.referenced,
                format!(
                    "batch_max must be between 1 and {MAX_BATCH_MAX}, found {}",
                    batch.value
                ),
            );
        }
    }
    if let Some(retries) = &raw.infra_retries {
        if retries.value <= MAX_INFRA_RETRIES {
            out.infra_retries = retries.value;
        } else {
            sink.error(
                codes::INVALID_VALUE,
                &format!("{field}.infra_retries"),
                &retries.referenced,
                format!(
                    "infra_retries must be at most {MAX_INFRA_RETRIES}, found {}",
                    retries.value
                ),
            );
        }
    }
    if let Some(cap) = &raw.max_queued_per_agent {
        if cap.value >= 1 {
            out.max_queued_per_agent = Some(cap.value);
        } else {
            sink.error(
                codes::INVALID_VALUE,
                &format!("{field}.max_queued_per_agent"),
                &cap.referenced,
                "max_queued_per_agent must be at least 1 (leave it out for no cap)",
            );
        }
    }
    if let Some(label) = &raw.priority_label
        && validate::text(sink, &format!("{field}.priority_label"), label, 1, 50)
    {
        out.priority_label = label.value.clone();
    }
    // The queue's settings in another mode are a mistake worth a word (a forgotten
    // `mode: queue`, or settings left over from it); an unknown mode is already an error.
    if mode_known && out.mode != RepoMergeMode::Queue {
        let queue_only = [
            ("batch_max", raw.batch_max.as_ref().map(|v| &v.referenced)),
            (
                "infra_retries",
                raw.infra_retries.as_ref().map(|v| &v.referenced),
            ),
            (
                "max_queued_per_agent",
                raw.max_queued_per_agent.as_ref().map(|v| &v.referenced),
            ),
            (
                "priority_label",
                raw.priority_label.as_ref().map(|v| &v.referenced),
            ),
        ];
        for (key, at) in queue_only {
            if let Some(at) = at {
                sink.warning(
                    codes::NO_EFFECT,
                    &format!("{field}.{key}"),
                    at,
                    format!(
                        "`{key}` applies only to merge mode `queue`; it has no effect in `{}`",
                        out.mode.as_str()
                    ),
                );
            }
        }
    }
    out
}

/// Warns for each gated repository that names no required checks while `allow_no_ci` is
/// false: C2 then accepts any set of green runs from the expected publisher.
fn c2_posture(sink: &mut Sink<'_>, projects: &Projects, raw: &ProjectsFile, env: &Env) {
    if env.allow_no_ci() {
        return;
    }
    for (index, raw_repo) in raw.supervised_repos.iter().enumerate() {
        let Ok(repo) = RepoName::parse(&raw_repo.value) else {
            continue;
        };
        if !projects.is_gated(&repo) {
            continue;
        }
        let checks = projects
            .repo_override(&repo)
            .and_then(RepoOverride::required_checks)
            .unwrap_or(env.required_checks());
        if checks.is_empty() {
            sink.warning(
                codes::C2_POSTURE,
                &item("supervised_repos", index),
                &raw_repo.referenced,
                format!("C2 posture: gated repository `{repo}` names no required checks and allow_no_ci is false, so any green check run from the expected publisher passes C2; list the checks in required_checks"),
            );
        }
    }
}
