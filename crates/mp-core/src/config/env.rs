//! `env.yml`: the bot's deployment settings (app slug, CI expectations, opt-in features).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_saphyr::Spanned;

use super::ReadConcurrency;
use super::problem::{codes, shown};
use super::validate::{self, Sink};
use super::yaml::{self, SpannedMap};
use crate::approval::SettleWindow;

/// The check publisher assumed when neither a repository override nor `env.yml` names one.
pub const DEFAULT_CHECK_PUBLISHER: &str = "github-actions";
/// The default canonical publisher of the `classifier-judgment` check run.
pub const DEFAULT_CLASSIFIER_PUBLISHER: &str = "github-actions";
/// The default of `check_report_timeout_minutes`.
pub const DEFAULT_CHECK_REPORT_TIMEOUT_MINUTES: u32 = 60;

/// The largest `label_settle_seconds`: an hour. A longer window would make every quick
/// review re-labelled, with nothing more proven.
pub const MAX_LABEL_SETTLE_SECONDS: u32 = 3600;

/// Deployment settings of the bot.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(title = "env.yml"))]
pub(crate) struct EnvFile {
    /// The GitHub App slug of the bot. A hint only: the bot learns its real identity from
    /// the GitHub API at start and warns when the two differ.
    #[cfg_attr(feature = "schema", schemars(with = "String", regex(pattern = super::validate::APP_SLUG_PATTERN)))]
    bot_app_slug: Spanned<String>,
    /// Where the bot runs; informational.
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<RunnerTier>", extend("default" = "actions-free"))
    )]
    runner_tier: Option<Spanned<String>>,
    /// The only GitHub App whose `classifier-judgment` check run is trusted.
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(
            with = "Option<String>",
            length(min = 1, max = 100),
            extend("default" = "github-actions")
        )
    )]
    classifier_publisher_slug: Option<Spanned<String>>,
    /// When no named checks are required, let a pull request with zero check runs pass C2.
    #[serde(default)]
    allow_no_ci: bool,
    /// Check-run names that must all succeed (C2) unless a repository override says otherwise.
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(
            with = "Vec<String>",
            inner(length(min = 1, max = 255)),
            extend("uniqueItems" = true)
        )
    )]
    required_checks: Vec<Spanned<String>>,
    /// The GitHub App that must publish the required checks; unset means `github-actions`.
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<String>", length(min = 1, max = 100))
    )]
    expected_check_publisher: Option<Spanned<String>>,
    /// Required check name → the GitHub Actions workflow file (e.g.
    /// `.github/workflows/ci.yml`) whose jobs alone may publish it: a run of the name counts
    /// only when it is a job of a run of that file on the pull request's head.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "BTreeMap<String, String>"))]
    required_check_workflows: SpannedMap<Spanned<String>>,
    /// Open a revert pull request when a merged commit fails post-merge re-validation.
    #[serde(default)]
    auto_revert_pr: bool,
    /// Days the agent-registry validator stays advisory before it blocks; 0 turns the clock off.
    #[serde(default)]
    l4_burn_in_days: u32,
    /// Really merge pull requests. False (the default) is observe-only: the bot reports
    /// "would have merged" and changes nothing on `main`.
    #[serde(default)]
    merge_enabled: bool,
    /// Minutes after the head commit after which a required check with no report at all
    /// counts as `check_never_reported`.
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<u32>", range(min = 1), extend("default" = 60))
    )]
    check_report_timeout_minutes: Option<Spanned<u32>>,
    /// How many GitHub reads a tick keeps in flight at once (1 reads one at a time).
    /// Writes always go one at a time, in order.
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<u32>", range(min = 1, max = 64), extend("default" = 8))
    )]
    read_concurrency: Option<Spanned<u32>>,
    /// Where a tick reads pull requests from: one GraphQL query per page of pull requests
    /// (`graphql`), or one REST call per part of each (`rest`).
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<ReadSource>", extend("default" = "graphql"))
    )]
    reads: Option<Spanned<String>>,
    /// Seconds a head must have been the branch tip before an owner's label binds it (a
    /// push in that window before the label is one the owner may not have seen); `0`
    /// leaves only the same-second rule.
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Option<u32>", range(max = 3600), extend("default" = 120))
    )]
    label_settle_seconds: Option<Spanned<u32>>,
}

/// Where a tick reads pull requests from (`reads`); an adapter setting, the decisions do
/// not depend on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename_all = "kebab-case"))]
#[non_exhaustive]
pub enum ReadSource {
    /// One GraphQL query per page of pull requests, REST for what does not fit.
    #[default]
    Graphql,
    /// One REST call per part of each pull request.
    Rest,
}

impl ReadSource {
    const ALL: [Self; 2] = [Self::Graphql, Self::Rest];

    /// `graphql` or `rest`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Graphql => "graphql",
            Self::Rest => "rest",
        }
    }
}

/// Where the bot runs (`runner_tier`); informational only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename_all = "kebab-case"))]
#[non_exhaustive]
pub enum RunnerTier {
    /// GitHub-hosted runners within the free minutes.
    #[default]
    ActionsFree,
    /// A self-hosted runner.
    SelfHosted,
    /// A paid cloud runner.
    PaidCloud,
}

impl RunnerTier {
    const ALL: [Self; 3] = [Self::ActionsFree, Self::SelfHosted, Self::PaidCloud];

    /// `actions-free`, `self-hosted` or `paid-cloud`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ActionsFree => "actions-free",
            Self::SelfHosted => "self-hosted",
            Self::PaidCloud => "paid-cloud",
        }
    }
}

/// The resolved `env.yml`, defaults applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Env {
    bot_app_slug: String,
    runner_tier: RunnerTier,
    classifier_publisher_slug: String,
    allow_no_ci: bool,
    required_checks: Vec<String>,
    expected_check_publisher: Option<String>,
    required_check_workflows: BTreeMap<String, String>,
    auto_revert_pr: bool,
    l4_burn_in_days: u32,
    merge_enabled: bool,
    check_report_timeout_minutes: u32,
    read_concurrency: ReadConcurrency,
    reads: ReadSource,
    label_settle: SettleWindow,
}

impl Env {
    /// `label_settle_seconds`, default [`SettleWindow::DEFAULT`] (120 s): how long a head
    /// must have been the tip before an owner's label binds it.
    pub fn label_settle(&self) -> SettleWindow {
        self.label_settle
    }

    /// `reads`, default [`ReadSource::Graphql`].
    pub fn reads(&self) -> ReadSource {
        self.reads
    }

    /// `read_concurrency`, default [`ReadConcurrency::DEFAULT`] (8).
    pub fn read_concurrency(&self) -> ReadConcurrency {
        self.read_concurrency
    }

    /// The configured App slug (`bot_app_slug`); a hint, the API's answer is authoritative.
    pub fn bot_app_slug(&self) -> &str {
        &self.bot_app_slug
    }

    /// `runner_tier`, default [`RunnerTier::ActionsFree`].
    pub fn runner_tier(&self) -> RunnerTier {
        self.runner_tier
    }

    /// The trusted publisher of `classifier-judgment` (`classifier_publisher_slug`,
    /// default `github-actions`).
    pub fn classifier_publisher_slug(&self) -> &str {
        &self.classifier_publisher_slug
    }

    /// `allow_no_ci`, default false: zero check runs pass C2 only when this is true and no
    /// named checks are required.
    pub fn allow_no_ci(&self) -> bool {
        self.allow_no_ci
    }

    /// The global named required checks (`required_checks`, default empty). Per-repository
    /// overrides take precedence; see `Config::effective_required_checks`.
    pub fn required_checks(&self) -> &[String] {
        &self.required_checks
    }

    /// The global expected check publisher, when set. Per-repository overrides take
    /// precedence and `github-actions` is the fallback; see
    /// `Config::effective_expected_check_publisher`.
    pub fn expected_check_publisher(&self) -> Option<&str> {
        self.expected_check_publisher.as_deref()
    }

    /// `required_check_workflows`: required check name → the workflow file whose jobs
    /// alone may publish it (default empty: any run of the expected publisher counts).
    pub fn required_check_workflows(&self) -> &BTreeMap<String, String> {
        &self.required_check_workflows
    }

    /// `auto_revert_pr`, default false.
    pub fn auto_revert_pr(&self) -> bool {
        self.auto_revert_pr
    }

    /// `l4_burn_in_days`, default 0 (no burn-in clock).
    pub fn l4_burn_in_days(&self) -> u32 {
        self.l4_burn_in_days
    }

    /// `merge_enabled`, default false (observe-only: nothing is merged).
    pub fn merge_enabled(&self) -> bool {
        self.merge_enabled
    }

    /// `check_report_timeout_minutes`, default 60: a required check with no report this
    /// long after the head commit is reported as `check_never_reported`.
    pub fn check_report_timeout_minutes(&self) -> u32 {
        self.check_report_timeout_minutes
    }
}

/// Reads and checks `env.yml`. `None` when the file cannot be read; otherwise the settings
/// with invalid entries left out (each one reported).
pub(crate) fn load(sink: &mut Sink<'_>, text: &str) -> Option<Env> {
    let file = sink.file().to_owned();
    let raw: EnvFile = yaml::parse(&file, text, sink.problems())?;
    validate::app_slug(sink, "bot_app_slug", &raw.bot_app_slug);

    let runner_tier = match &raw.runner_tier {
        None => RunnerTier::default(),
        Some(value) => match RunnerTier::ALL
            .into_iter()
            .find(|tier| tier.as_str() == value.value)
        {
            Some(tier) => tier,
            None => {
                sink.error(
                    codes::INVALID_VALUE,
                    "runner_tier",
                    &value.referenced,
                    format!(
                        "unknown runner_tier `{}`, expected `actions-free`, `self-hosted` or `paid-cloud`",
                        shown(&value.value)
                    ),
                );
                RunnerTier::default()
            }
        },
    };

    let optional_text = |sink: &mut Sink<'_>, field: &str, value: &Option<Spanned<String>>| {
        value
            .as_ref()
            .filter(|value| validate::text(sink, field, value, 1, 100))
            .map(|value| value.value.clone())
    };
    let classifier_publisher_slug = optional_text(
        sink,
        "classifier_publisher_slug",
        &raw.classifier_publisher_slug,
    )
    .unwrap_or_else(|| DEFAULT_CLASSIFIER_PUBLISHER.to_owned());
    let expected_check_publisher = optional_text(
        sink,
        "expected_check_publisher",
        &raw.expected_check_publisher,
    );

    let required_checks = validate::texts(
        sink,
        "required_checks",
        &raw.required_checks,
        255,
        "required check",
    );

    let required_check_workflows = check_workflows(
        sink,
        "required_check_workflows",
        &raw.required_check_workflows,
    );

    let check_report_timeout_minutes = match &raw.check_report_timeout_minutes {
        None => DEFAULT_CHECK_REPORT_TIMEOUT_MINUTES,
        Some(value) if value.value == 0 => {
            sink.error(
                codes::INVALID_VALUE,
                "check_report_timeout_minutes",
                &value.referenced,
                "check_report_timeout_minutes must be at least 1",
            );
            DEFAULT_CHECK_REPORT_TIMEOUT_MINUTES
        }
        Some(value) => value.value,
    };

    let label_settle = match &raw.label_settle_seconds {
        None => SettleWindow::DEFAULT,
        Some(value) if value.value > MAX_LABEL_SETTLE_SECONDS => {
            sink.error(
                codes::INVALID_VALUE,
                "label_settle_seconds",
                &value.referenced,
                format!(
                    "label_settle_seconds must be at most {MAX_LABEL_SETTLE_SECONDS}, found {}",
                    value.value
                ),
            );
            SettleWindow::DEFAULT
        }
        Some(value) => SettleWindow::from_seconds(value.value),
    };

    let read_concurrency = match &raw.read_concurrency {
        None => ReadConcurrency::DEFAULT,
        Some(value) => match usize::try_from(value.value)
            .ok()
            .and_then(ReadConcurrency::new)
        {
            Some(limit) => limit,
            None => {
                sink.error(
                    codes::INVALID_VALUE,
                    "read_concurrency",
                    &value.referenced,
                    format!(
                        "read_concurrency must be between 1 and {}, found {}",
                        ReadConcurrency::MAX,
                        value.value
                    ),
                );
                ReadConcurrency::DEFAULT
            }
        },
    };

    let reads = match &raw.reads {
        None => ReadSource::default(),
        Some(value) => match ReadSource::ALL
            .into_iter()
            .find(|source| source.as_str() == value.value)
        {
            Some(source) => source,
            None => {
                sink.error(
                    codes::INVALID_VALUE,
                    "reads",
                    &value.referenced,
                    format!(
                        "unknown reads `{}`, expected `graphql` or `rest`",
                        shown(&value.value)
                    ),
                );
                ReadSource::default()
            }
        },
    };

    Some(Env {
        bot_app_slug: raw.bot_app_slug.value,
        runner_tier,
        classifier_publisher_slug,
        allow_no_ci: raw.allow_no_ci,
        required_checks,
        expected_check_publisher,
        required_check_workflows,
        auto_revert_pr: raw.auto_revert_pr,
        l4_burn_in_days: raw.l4_burn_in_days,
        merge_enabled: raw.merge_enabled,
        check_report_timeout_minutes,
        read_concurrency,
        reads,
        label_settle,
    })
}

/// The directory GitHub Actions reads workflow files from.
pub const WORKFLOWS_DIR: &str = ".github/workflows/";

/// `required_check_workflows`, checked: each name a valid check name, each file a
/// repository path under [`WORKFLOWS_DIR`] ending in `.yml` or `.yaml`.
/// `prefix` is the field that holds the map, for the findings.
pub(super) fn check_workflows(
    sink: &mut Sink<'_>,
    prefix: &str,
    raw: &SpannedMap<Spanned<String>>,
) -> BTreeMap<String, String> {
    let mut workflows = BTreeMap::new();
    for (name, path) in &raw.0 {
        let field = format!("{prefix}.{}", shown(&name.value));
        if !validate::text(sink, &field, name, 1, 255) || !validate::repo_path(sink, &field, path) {
            continue;
        }
        let file = path.value.strip_prefix(WORKFLOWS_DIR).unwrap_or_default();
        if file.is_empty()
            || file.contains('/')
            || !(file.ends_with(".yml") || file.ends_with(".yaml"))
        {
            sink.error(
                codes::INVALID_VALUE,
                &field,
                &path.referenced,
                format!(
                    "`{}` is not a workflow file: expected `{WORKFLOWS_DIR}<name>.yml` or `.yaml`",
                    shown(&path.value)
                ),
            );
            continue;
        }
        workflows.insert(name.value.clone(), path.value.clone());
    }
    workflows
}
