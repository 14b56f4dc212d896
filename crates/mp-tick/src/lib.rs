//! The tick's drivers: the use-cases that drive mp-core's ports. [`run_tick`] is one whole
//! tick (lease, inbox, pull requests, branch supervisor, drift check, watermarks);
//! [`run_pr_path`], [`supervisor::run_branch_supervisor`], [`poll_inbox`] and
//! [`drift_check`] are its parts, which `mp serve` also runs one at a time; [`DryRun`] and
//! [`Recording`] wrap a port to plan or record the writes.
//!
//! It sits between mp-core and the adapters: every verdict it acts on comes from a pure
//! function of mp-core, and every read and write goes through mp-core's ports. It opens no
//! socket and reads no file, environment or clock of its own (the time is always an
//! argument), so its tests drive it over in-memory ports. It never depends on the `mp`
//! binary or the service (`cargo xtask tidy`).
//!
//! # The pull-request path
//!
//! The pull-request path of one tick (bot.md §6.5), driven over the ports.
//!
//! For every gated repository (supervised, not audit-only), every open pull request, oldest
//! first, goes through the same steps:
//!
//! 1. build the context (pull, commits, files, head check runs, label timeline);
//! 2. read the comments and the bot's receipts — unreadable comments skip the pull request
//!    before anything is written;
//! 3. classify and append exactly one audit record;
//! 4. write the receipts the writer binds (they count the same tick);
//! 5. and 6. evaluate the gate; a blocking failure updates (never duplicates) the one
//!    diagnostic comment;
//! 7. a Quadrant-D pull request that lacks only the owner's approval gets one decision
//!    inbox issue;
//! 8. the L3 race guard re-reads `main`: moved means update the branch, no merge;
//! 9. observe mode (the default) stops at "would have merged";
//! 10. merge, pinned to the evaluated head, keeping the identity trailers;
//! 11. after a Quadrant B or C merge, open the passive audit issue.
//!
//! [`evaluate_pr`] is steps 1-6 without writes, for `mp explain`. Nothing here performs I/O
//! of its own either: every read and write goes through the [`GitHub`] and [`AuditLog`] ports,
//! and the time is the `now` argument.
#![warn(missing_docs)]

pub mod audit_records;
pub mod drift_check;
mod dry_run;
mod evaluate;
pub mod inbox_poll;
mod keeper;
pub mod lease;
mod pass;
mod prefetch;
mod process;
pub mod progress;
mod queue;
mod recording;
mod report;
mod run;
mod skills;
pub mod state_store;
pub mod supervisor;

#[cfg(test)]
pub(crate) mod testkit;
#[cfg(test)]
mod tests;

pub use evaluate::{PrEvaluation, Route, assess_pr, evaluate_pr, fetch_context};
pub use inbox_poll::{InboxReport, poll_inbox};
pub use pass::run_repository_pass;
pub use process::{RECEIPTS_UNAVAILABLE, with_priority_record};
pub use progress::{ProgressSink, TickPhase, TickProgress};
pub use queue::{QueueReport, QueueStanding, queue_standing};
pub use report::{MAX_DETAIL_CHARS, PrAction, PrOutcome, TickMetrics, TickReport};
pub use run::{FullTickReport, GovernanceReport, RATE_LIMIT_RESERVE, run_tick};
pub use skills::USER_VALIDATOR_PASSED;
pub use supervisor::{IncidentNote, RevertNote};

pub use dry_run::DryRun;
pub use mp_core::config::{MAIN_BRANCH, ReadConcurrency};
pub use mp_core::shard::{ParseShardError, Shard};
pub use recording::Recording;

use std::collections::BTreeMap;

use futures_util::StreamExt as _;

use mp_core::approval::{
    PreviousReceiptKey, ReceiptKey, RotationError, UNSIGNED_RECEIPTS_WARNING, rotation_ring,
};
use mp_core::classifier::{CompilePathRulesError, PathRules};
use mp_core::config::Config;
use mp_core::gate::GatePolicy;
use mp_core::ids::{CommitSha, Login, PrNumber, RepoName, Timestamp};
use mp_core::inbox;
use mp_core::port::{AuditLog, GitHub, GitHubError, ListedPull, PullRequest};
use mp_core::severity::Severity;
use mp_core::skill::SkillSet;

use keeper::Keeper;
use process::{Flow, Runner};

/// The branch mp gates, merges into and supervises, per repository: `projects.yml`
/// `repo_overrides.<repo>.default_branch`, else the repository's default branch on GitHub,
/// resolved once at the start of a tick ([`resolve_default_branches`]); [`MAIN_BRANCH`]
/// for a repository not resolved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DefaultBranches(BTreeMap<RepoName, String>);

impl DefaultBranches {
    /// The branch of `repo`.
    pub fn of(&self, repo: &RepoName) -> &str {
        self.0.get(repo).map_or(MAIN_BRANCH, String::as_str)
    }

    /// Sets the branch of `repo`.
    pub fn set(&mut self, repo: RepoName, branch: String) {
        self.0.insert(repo, branch);
    }
}

/// Resolves the gated branch of the governance repository and of every supervised
/// repository `options` covers: the configured override, else what the adapter reads of
/// them together ([`GitHub::default_branches`]), else one `GET /repos/{o}/{r}` each. A repository GitHub does not answer for keeps `main`, with a warning; one GitHub
/// does not know (404) keeps it silently, since listing its pull requests reports it as an
/// operator error, and no override would help.
pub async fn resolve_default_branches(
    github: &dyn GitHub,
    config: &Config,
    options: &TickOptions,
) -> (DefaultBranches, Vec<String>) {
    let projects = config.projects();
    let mut repos = vec![projects.governance_repo().clone()];
    repos.extend(
        projects
            .supervised_repos()
            .iter()
            .filter(|repo| options.covers(repo) && *repo != projects.governance_repo())
            .cloned(),
    );
    // Those without an override together where the adapter can (one GraphQL query), any
    // left over on their own with `read_concurrency` in flight, answered in the order of
    // the repositories (decisions/0075).
    let configured = |repo: &RepoName| {
        projects
            .repo_override(repo)
            .and_then(|o| o.default_branch())
            .map(str::to_owned)
    };
    let unset: Vec<RepoName> = repos
        .iter()
        .filter(|repo| configured(repo).is_none())
        .cloned()
        .collect();
    let together = github.default_branches(&unset).await.unwrap_or_default();
    let together = &together;
    let answers: Vec<(RepoName, Result<String, GitHubError>)> = futures_util::stream::iter(repos)
        .map(|repo| async move {
            let branch = match configured(&repo).or_else(|| together.get(&repo).cloned()) {
                Some(branch) => Ok(branch),
                None => github.default_branch(&repo).await,
            };
            (repo, branch)
        })
        .buffered(options.read_concurrency.get())
        .collect()
        .await;
    let mut branches = DefaultBranches::default();
    let mut warnings = Vec::new();
    for (repo, branch) in answers {
        let branch = match branch {
            Ok(branch) if !branch.trim().is_empty() => branch,
            Ok(_) => MAIN_BRANCH.to_owned(),
            // A repository GitHub does not know is not a branch question: the listing of
            // its pull requests says so as an operator error (no override would help).
            Err(GitHubError::NotFound { .. }) => MAIN_BRANCH.to_owned(),
            Err(error) => {
                warnings.push(format!(
                    "{repo}: cannot read the default branch ({error}); `{MAIN_BRANCH}` is assumed (set repo_overrides.{repo}.default_branch to skip the call)"
                ));
                MAIN_BRANCH.to_owned()
            }
        };
        branches.set(repo, branch);
    }
    (branches, warnings)
}

/// Whether the tick really merges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MergeMode {
    /// Report "would have merged" and change nothing on `main` (the default).
    #[default]
    Observe,
    /// Merge pull requests that pass the gate.
    Merge,
}

impl MergeMode {
    /// [`MergeMode::Merge`] when `env.yml` sets `merge_enabled: true`, else observe.
    pub fn from_config(config: &Config) -> Self {
        if config.merge_enabled() {
            Self::Merge
        } else {
            Self::Observe
        }
    }
}

/// How to run the pull-request path. Start from [`TickOptions::from_config`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TickOptions {
    /// Observe or merge.
    pub merge_mode: MergeMode,
    /// The key that signs receipts and inbox bodies; `None` leaves them unsigned (and the
    /// report warns).
    pub receipt_key: Option<ReceiptKey>,
    /// The key `receipt_key` replaced and the end of its window: while the window is open
    /// its signatures still count and what it signed is signed again (decisions/0062).
    pub previous_receipt_key: Option<PreviousReceiptKey>,
    /// Only these repositories (still only gated ones); `None` means every gated repository.
    pub repos: Option<Vec<RepoName>>,
    /// The L4 registry check's severity as the burn-in clock decided it; `None` takes the
    /// `skills.yml` override of `validator_agent_registry`, else P2.
    pub registry_severity: Option<Severity>,
    /// The user skills the adapter loaded (empty by default): validators, classifier rules
    /// and branch hooks, with the load counters for the tick metrics.
    pub skills: SkillSet,
    /// Only the repositories of this shard (`mp tick --shard I/N`); `None` is the whole
    /// tick. See [`shard`](mp_core::shard) and docs/decisions/0021.
    pub shard: Option<Shard>,
    /// Where the tick reports its progress (nowhere by default).
    pub progress: ProgressSink,
    /// Who this tick is in the lease file: a stable identity (e.g. `tick@host`) and this
    /// process's incarnation; `mp tick` by default.
    pub lease_holder: lease::LeaseHolder,
    /// How long the lease lasts and how often it is renewed.
    pub lease_terms: lease::LeaseTerms,
    /// The clock a long tick renews its lease by, between repositories; `None` (replays,
    /// tests at one instant) never renews.
    pub lease_clock: Option<LeaseClock>,
    /// The gated branch per repository; [`run_tick`] resolves it at its start
    /// ([`resolve_default_branches`]) unless it is already set.
    pub default_branches: DefaultBranches,
    /// Only these pull requests (by number or head commit); `None` is every open pull
    /// request. `mp serve` evaluates just the pull requests a webhook named.
    pub pulls: Option<PullSelection>,
    /// The caller already holds the tick lease (`mp serve` holds it while it runs):
    /// [`run_tick`] neither takes nor gives it back.
    pub lease_held: bool,
    /// How many reads the pull-request path keeps in flight (`env.yml`
    /// `read_concurrency`); writes are always one at a time, in the serial tick's order.
    pub read_concurrency: ReadConcurrency,
    /// [`run_tick`] does only the work that belongs to no repository: the watermarks'
    /// load and save, the decision inbox, the burn-in clock and the drift check; no
    /// pull-request path, merge queue or branch supervisor. `mp serve` runs those per
    /// repository ([`run_repository_pass`], docs/decisions/0066).
    pub global_work_only: bool,
    /// How long the pull-request path may run, by the [lease clock](Self::lease_clock),
    /// before it starts no further repository (decisions/0071): the repositories left wait
    /// for the next tick, which finds the work done so far done (merges, receipts, branch
    /// updates) and goes on past it. `None` (and no clock): no budget.
    pub pr_path_budget: Option<std::time::Duration>,
}

/// Which open pull requests of a repository the pull-request path visits when
/// [`TickOptions::pulls`] is set: those whose number or head commit is listed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PullSelection {
    numbers: std::collections::BTreeSet<(RepoName, PrNumber)>,
    heads: std::collections::BTreeSet<(RepoName, CommitSha)>,
    ready: std::collections::BTreeSet<RepoName>,
}

impl PullSelection {
    /// Adds pull request `number` of `repo`.
    pub fn add_number(&mut self, repo: RepoName, number: PrNumber) {
        self.numbers.insert((repo, number));
    }

    /// Adds the open pull requests of `repo` whose head is `head`.
    pub fn add_head(&mut self, repo: RepoName, head: CommitSha) {
        self.heads.insert((repo, head));
    }

    /// Adds the open pull requests of `repo` that carry an approval label
    /// ([`ReceiptLabel`](mp_core::approval::receipt::ReceiptLabel)): the ones that may merge,
    /// so the ones whose race guard a move of the gated branch concerns. The label only
    /// chooses what to look at; the gate still proves who applied it, to which head.
    pub fn add_ready(&mut self, repo: RepoName) {
        self.ready.insert(repo);
    }

    /// Whether nothing is selected.
    pub fn is_empty(&self) -> bool {
        self.numbers.is_empty() && self.heads.is_empty() && self.ready.is_empty()
    }

    /// The repositories with something selected.
    pub fn repos(&self) -> std::collections::BTreeSet<&RepoName> {
        self.numbers
            .iter()
            .map(|(repo, _)| repo)
            .chain(self.heads.iter().map(|(repo, _)| repo))
            .chain(self.ready.iter())
            .collect()
    }

    /// Whether `pull` is selected.
    pub fn selects(&self, pull: &PullRequest) -> bool {
        self.numbers.contains(&(pull.repo.clone(), pull.number))
            || self
                .heads
                .contains(&(pull.repo.clone(), pull.head_sha.clone()))
            || (self.ready.contains(&pull.repo)
                && pull.labels.iter().any(|label| {
                    mp_core::approval::receipt::ReceiptLabel::ALL
                        .iter()
                        .any(|ready| ready.as_str() == label)
                }))
    }
}

impl TickOptions {
    /// The options a configuration implies: the merge mode from `merge_enabled`, no key, all
    /// gated repositories, the registry severity from `skills.yml`.
    pub fn from_config(config: &Config) -> Self {
        Self {
            merge_mode: MergeMode::from_config(config),
            read_concurrency: config.env().read_concurrency(),
            ..Self::default()
        }
    }

    /// These options with `limit` reads in flight.
    #[must_use]
    pub fn with_read_concurrency(mut self, limit: ReadConcurrency) -> Self {
        self.read_concurrency = limit;
        self
    }

    /// These options reporting progress to `progress`.
    #[must_use]
    pub fn with_progress(mut self, progress: ProgressSink) -> Self {
        self.progress = progress;
        self
    }

    /// These options with another merge mode.
    #[must_use]
    pub fn with_merge_mode(mut self, mode: MergeMode) -> Self {
        self.merge_mode = mode;
        self
    }

    /// These options signing with `key`.
    #[must_use]
    pub fn with_receipt_key(mut self, key: ReceiptKey) -> Self {
        self.receipt_key = Some(key);
        self
    }

    /// These options also accepting `previous`'s signatures until its window ends.
    #[must_use]
    pub fn with_previous_receipt_key(mut self, previous: PreviousReceiptKey) -> Self {
        self.previous_receipt_key = Some(previous);
        self
    }

    /// These options at `now`: the receipt key becomes the ring that also accepts the
    /// previous key while its window is open. The line says how the rotation stands.
    ///
    /// # Errors
    /// [`TickError::ReceiptKeyRotation`] when the window is longer than mp accepts.
    pub fn at(mut self, now: Timestamp) -> Result<(Self, Option<String>), TickError> {
        let Some(previous) = self.previous_receipt_key.take() else {
            return Ok((self, None));
        };
        let Some(current) = self.receipt_key.take() else {
            // No key signs, so none verifies either: a previous key alone admits nothing.
            return Ok((self, None));
        };
        let (ring, note) = rotation_ring(current, Some(previous), now)?;
        self.receipt_key = Some(ring);
        Ok((self, note))
    }

    /// These options limited to `repos`.
    #[must_use]
    pub fn with_repos(mut self, repos: Vec<RepoName>) -> Self {
        self.repos = Some(repos);
        self
    }

    /// These options running the user skills of `skills`.
    #[must_use]
    pub fn with_skills(mut self, skills: SkillSet) -> Self {
        self.skills = skills;
        self
    }

    /// These options with the gated branch of each repository already known.
    #[must_use]
    pub fn with_default_branches(mut self, branches: DefaultBranches) -> Self {
        self.default_branches = branches;
        self
    }

    /// The branch mp gates and supervises in `repo`.
    pub fn gated_branch(&self, repo: &RepoName) -> &str {
        self.default_branches.of(repo)
    }

    /// These options naming the tick `holder` in the lease file (see [`lease`]).
    #[must_use]
    pub fn with_lease_holder(mut self, holder: impl Into<lease::LeaseHolder>) -> Self {
        self.lease_holder = holder.into();
        self
    }

    /// These options taking the lease for `terms`.
    #[must_use]
    pub fn with_lease_terms(mut self, terms: lease::LeaseTerms) -> Self {
        self.lease_terms = terms;
        self
    }

    /// These options renewing the lease by `clock` between repositories.
    #[must_use]
    pub fn with_lease_clock(mut self, clock: std::sync::Arc<dyn mp_core::port::Clock>) -> Self {
        self.lease_clock = Some(LeaseClock(clock));
        self
    }

    /// These options giving the pull-request path `budget` of time by the lease clock.
    #[must_use]
    pub fn with_pr_path_budget(mut self, budget: std::time::Duration) -> Self {
        self.pr_path_budget = Some(budget);
        self
    }

    /// These options visiting only the pull requests of `pulls`.
    #[must_use]
    pub fn with_pulls(mut self, pulls: PullSelection) -> Self {
        self.pulls = Some(pulls);
        self
    }

    /// These options for a caller that holds the tick lease itself.
    #[must_use]
    pub fn with_lease_held(mut self) -> Self {
        self.lease_held = true;
        self
    }

    /// These options for the tick's global work only ([`TickOptions::global_work_only`]).
    #[must_use]
    pub fn with_global_work_only(mut self) -> Self {
        self.global_work_only = true;
        self
    }

    /// These options running only shard `shard` of the tick.
    #[must_use]
    pub fn with_shard(mut self, shard: Shard) -> Self {
        self.shard = Some(shard);
        self
    }

    /// Whether the repository-level work of `repo` runs under these options: `repo` is in
    /// [`TickOptions::repos`] (when set) and belongs to [`TickOptions::shard`] (when set).
    pub fn covers(&self, repo: &RepoName) -> bool {
        self.repos.as_ref().is_none_or(|only| only.contains(repo))
            && self.shard.is_none_or(|shard| shard.owns(repo))
    }

    /// Whether the work of no repository (the drift check) runs: unsharded, or shard 0.
    pub fn runs_global_work(&self) -> bool {
        self.shard.is_none_or(Shard::is_first)
    }

    /// These options with the registry check at `severity` (e.g. promoted by burn-in).
    #[must_use]
    pub fn with_registry_severity(mut self, severity: Severity) -> Self {
        self.registry_severity = Some(severity);
        self
    }
}

/// The clock a tick renews its lease by (compared as equal: it is not part of what the
/// options say, only of when).
#[derive(Clone)]
pub struct LeaseClock(pub std::sync::Arc<dyn mp_core::port::Clock>);

impl std::fmt::Debug for LeaseClock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LeaseClock")
    }
}

impl PartialEq for LeaseClock {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

impl Eq for LeaseClock {}

/// Why the pull-request path could not run at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TickError {
    /// The bot user is unknown, so receipts cannot be told from forgeries: fail closed.
    #[error("cannot learn the bot user, failing closed (receipts cannot be recognised): {0}")]
    BotLogin(#[source] GitHubError),
    /// The classifier path rules do not compile.
    #[error(transparent)]
    PathRules(#[from] CompilePathRulesError),
    /// The watermarks file on the `bot-state` branch is corrupt: fail closed, write nothing.
    #[error(
        "bot-state file {path} is corrupt, failing closed (the owner restores it by hand: docs/state.md, \"Recovering the state\"): {reason}"
    )]
    StateCorrupt {
        /// The file.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The durable state cannot be loaded (branch without file, unreadable file, branch
    /// not creatable): fail closed, write nothing.
    #[error("bot-state file {path} cannot be loaded, failing closed: {reason}")]
    StateUnavailable {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// Someone other than mp or an allowlisted person wrote (or deleted) the `bot-state`
    /// branch, by GitHub's activity log: the state cannot be trusted. Fail closed; the
    /// only write is the incident that names the writer.
    #[error(
        "the state on bot-state cannot be trusted, failing closed: {what} ({code}); {incident}; the owner restores it by hand (docs/state.md, \"Recovering the state\")"
    )]
    StateSteered {
        /// Who wrote what, when.
        what: String,
        /// Stable code of the finding.
        code: &'static str,
        /// What became of the incident.
        incident: String,
    },
    /// Another tick holds the lease, or the lease file cannot be used: act on nothing.
    #[error("{0}")]
    Lease(#[from] lease::LeaseError),
    /// The previous receipt key's window is longer than mp accepts.
    #[error(transparent)]
    ReceiptKeyRotation(#[from] RotationError),
    /// Saving the durable state failed for a reason other than a stale blob or a secondary
    /// rate limit.
    #[error("cannot save bot-state file {path}: {error}")]
    StateSave {
        /// The file.
        path: String,
        /// The refusal.
        #[source]
        error: GitHubError,
    },
}

/// What every pull request of one tick is evaluated against: the configuration, the
/// options, the bot user and the compiled path rules.
#[derive(Debug)]
pub struct TickSetup<'a> {
    config: &'a Config,
    options: &'a TickOptions,
    bot: Login,
    path_rules: PathRules,
}

impl<'a> TickSetup<'a> {
    /// Compiles the path rules once for the tick.
    ///
    /// # Errors
    /// [`TickError::PathRules`] when a `classifier_rules.yml` pattern does not compile.
    pub fn new(
        config: &'a Config,
        options: &'a TickOptions,
        bot: Login,
    ) -> Result<Self, TickError> {
        Ok(Self {
            config,
            options,
            bot,
            path_rules: PathRules::compile(config.path_rules())?,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &'a Config {
        self.config
    }

    /// The options.
    pub fn options(&self) -> &'a TickOptions {
        self.options
    }

    /// The bot user.
    pub fn bot(&self) -> &Login {
        &self.bot
    }

    /// The compiled path rules.
    pub fn path_rules(&self) -> &PathRules {
        &self.path_rules
    }

    /// The repositories whose pull requests go through the gate this tick: supervised and
    /// not audit-only, in `projects.yml` order, limited by [`TickOptions::repos`] and
    /// [`TickOptions::shard`].
    pub fn gated_repos(&self) -> Vec<&'a RepoName> {
        let projects = self.config.projects();
        projects
            .supervised_repos()
            .iter()
            .filter(|repo| projects.is_gated(repo))
            .filter(|repo| self.options.covers(repo) && !self.options.global_work_only)
            .filter(|repo| {
                self.options
                    .pulls
                    .as_ref()
                    .is_none_or(|only| only.repos().contains(repo))
            })
            .collect()
    }

    /// The gate policy of `repo`: allowlist, bot, the repository's required checks and
    /// check publisher, `allow_no_ci`, the classifier publisher, the agent registry at its
    /// severity, and the check report timeout.
    pub fn gate_policy(&self, repo: &RepoName) -> GatePolicy {
        self.config
            .gate_policy(repo, self.bot.clone(), self.options.registry_severity)
    }
}

/// Runs the pull-request path of one tick at `now`.
///
/// Learns the bot user first (failing closed without it), then processes every open pull
/// request of every gated repository, oldest first. A GitHub error on one pull request
/// makes it `skipped` with the reason and the tick goes on (a missing permission, and a
/// repository GitHub does not know, are also operator errors); a secondary rate limit leaves
/// the rest of that repository for the next tick, and the primary rate limit ends the path
/// early (`metrics.rate_limited`).
///
/// # Errors
/// [`TickError::BotLogin`] when the bot user cannot be learned; [`TickError::PathRules`]
/// when the path rules do not compile.
pub async fn run_pr_path(
    github: &dyn GitHub,
    audit: &dyn AuditLog,
    config: &Config,
    options: &TickOptions,
    now: Timestamp,
) -> Result<TickReport, TickError> {
    let bot = github.bot_login().await.map_err(TickError::BotLogin)?;
    let (mut options, rotation) = options.clone().at(now)?;
    let mut warnings: Vec<String> = rotation.into_iter().collect();
    if options.default_branches == DefaultBranches::default() {
        let (branches, branch_warnings) = resolve_default_branches(github, config, &options).await;
        options = options.with_default_branches(branches);
        warnings.splice(0..0, branch_warnings);
    }
    let mut report = run_pr_path_as(github, audit, config, &options, bot, now, None).await?;
    report.warnings.splice(0..0, warnings);
    Ok(report)
}

/// [`run_pr_path`] for a bot user the caller already learned (the whole tick asks once).
/// With the tick's lease `keeper`, the lease is renewed before each repository and each
/// pull request, and checked before every write ([`keeper::Fenced`]); a lease found lost
/// ends the path after the pull request at hand (the caller reads [`Keeper::lost`]).
pub(crate) async fn run_pr_path_as(
    github: &dyn GitHub,
    audit: &dyn AuditLog,
    config: &Config,
    options: &TickOptions,
    bot: Login,
    now: Timestamp,
    keeper: Option<&Keeper<'_>>,
) -> Result<TickReport, TickError> {
    let setup = TickSetup::new(config, options, bot)?;
    let fenced = keeper.map(|keeper| keeper::Fenced::new(github, keeper));
    let github: &dyn GitHub = match &fenced {
        Some(fenced) => fenced,
        None => github,
    };
    let mut runner = Runner::new(github, audit, &setup, now);
    runner.report.warnings.extend(setup_warnings(&setup));
    runner.report.metrics.skills_loaded = options.skills.loaded;
    runner.report.metrics.skill_load_failed = options.skills.load_failed;

    let gated = setup.gated_repos();
    options.progress.phase(TickPhase::PullRequests, gated.len());
    // With reads in flight, the next repository's reads overlap this one's writes: its
    // pull requests cannot change through them (decisions/0034).
    let look_ahead = options.read_concurrency.get() > 1;
    let mut ahead: Option<RepoRead> = None;
    let budget = options
        .pr_path_budget
        .zip(options.lease_clock.as_ref())
        .map(|(budget, clock)| (budget, clock, clock.0.now()));
    for (done, repo) in gated.iter().enumerate() {
        // A cron tick over a large installation leaves the rest for the next one rather
        // than outlast its period (decisions/0071).
        if let Some((budget, clock, started)) = &budget
            && done > 0
            && let spent = clock.0.now().seconds_since(*started)
            && u64::try_from(spent).unwrap_or(0) >= budget.as_secs()
        {
            runner.report.warnings.push(format!(
                "time budget of the pull-request path reached after {spent} s (budget {} s): repositories left for the next tick: {}",
                budget.as_secs(),
                gated.len() - done
            ));
            break;
        }
        // Leave the branch supervisor, the drift check and the state save their share of
        // the hour: a tick over very many pull requests must not spend it all here.
        if let Some(remaining) = under_reserve(github) {
            runner.report.warnings.push(format!(
                "rate-limit reserve of the pull-request path reached: {remaining} calls left (reserve {PR_PATH_RESERVE}, kept for the branch supervisor and the state); repositories left for the next tick: {}",
                gated.len() - done
            ));
            break;
        }
        if !keep_lease(&mut runner, keeper).await {
            break;
        }
        let read = match ahead.take() {
            Some(read) => read,
            None => read_repo(github, &setup, repo).await,
        };
        let next = gated
            .get(done + 1)
            .filter(|_| look_ahead && under_reserve(github).is_none());
        let read_next = async {
            match next {
                Some(next) => Some(read_repo(github, &setup, next).await),
                None => None,
            }
        };
        // The next repository's reads are polled first: their requests leave before this
        // repository's first write does.
        let (next_read, go_on) =
            futures_util::future::join(read_next, process_repo(&mut runner, repo, read, keeper))
                .await;
        ahead = next_read;
        if !go_on {
            break;
        }
        options
            .progress
            .repository_done(TickPhase::PullRequests, repo);
    }
    runner.report.metrics.rate_limit_remaining = github.rate_limit_remaining();
    runner.report.metrics.graphql_remaining = github.graphql_remaining();
    Ok(runner.report)
}

/// Calls the pull-request path keeps for the rest of the tick: it stops before a repository
/// when fewer are left (the branch supervisor then stops at [`RATE_LIMIT_RESERVE`]).
pub const PR_PATH_RESERVE: u32 = 2 * RATE_LIMIT_RESERVE;

/// The calls left when they are under [`PR_PATH_RESERVE`].
fn under_reserve(github: &dyn GitHub) -> Option<u32> {
    github
        .rate_limit_remaining()
        .filter(|remaining| *remaining < PR_PATH_RESERVE)
}

/// Every read of one repository's pull requests, taken before any of them decides.
struct RepoRead {
    /// The open pull requests the tick selects, with the parts their listing carried.
    listed: Result<Vec<ListedPull>, GitHubError>,
    /// The other reads of those into the gated branch, and the branch's head.
    reads: prefetch::RepoReads,
}

/// Lists `repo`'s open pull requests and takes every read of those into the gated branch,
/// with [`TickOptions::read_concurrency`] in flight (`prefetch`). Reads only: nothing of the
/// tick's report changes.
async fn read_repo(github: &dyn GitHub, setup: &TickSetup<'_>, repo: &RepoName) -> RepoRead {
    let options = setup.options;
    let listed = github.open_pulls_with_reads(repo).await.map(|listed| {
        let selection = options.pulls.as_ref();
        listed
            .into_iter()
            .filter(|listed| selection.is_none_or(|only| only.selects(&listed.pull)))
            .collect::<Vec<_>>()
    });
    let gated = options.gated_branch(repo);
    let into_gated: Vec<&ListedPull> = listed
        .iter()
        .flatten()
        .filter(|listed| listed.pull.base_ref == gated)
        .collect();
    let reads = prefetch::read_repo(
        github,
        repo,
        gated,
        &into_gated,
        options.read_concurrency,
        evaluate::binds_workflows(&setup.gate_policy(repo)),
    )
    .await;
    RepoRead { listed, reads }
}

/// Renews the tick's lease when it is due (see [`Keeper::keep`]); `false` when it is lost
/// and the pull-request path must stop before its next write.
async fn keep_lease(runner: &mut Runner<'_>, keeper: Option<&Keeper<'_>>) -> bool {
    let Some(keeper) = keeper else {
        return true;
    };
    match keeper.keep().await {
        Ok(warning) => {
            runner.report.warnings.extend(warning);
            true
        }
        Err(_) => false,
    }
}

/// One repository's pull requests from their reads; `false` when a rate limit ends the
/// pull-request path, or the tick's lease is lost. Each pull request, oldest first, decides
/// and writes, one at a time, the lease renewed before each when it is due.
async fn process_repo(
    runner: &mut Runner<'_>,
    repo: &RepoName,
    read: RepoRead,
    keeper: Option<&Keeper<'_>>,
) -> bool {
    let RepoRead { listed, mut reads } = read;
    let listed = match listed {
        Ok(listed) => listed,
        Err(GitHubError::NotFound { .. }) => {
            runner.report.operator_error(repository_not_found(repo));
            return true;
        }
        Err(error) => {
            if let Some(refusal) = permission_refusal(&error) {
                runner.report.operator_error(format!("{repo}: {refusal}"));
                return true;
            }
            runner
                .report
                .warnings
                .push(format!("{repo}: cannot list open pull requests: {error}"));
            if matches!(
                error,
                GitHubError::RateLimited { .. } | GitHubError::Throttled { .. }
            ) {
                runner.report.metrics.rate_limited = true;
                return false;
            }
            return true;
        }
    };
    if let Some(main_head) = reads.main_head.take() {
        runner.learn_main_head(repo, main_head);
    }
    for (index, item) in listed.iter().enumerate() {
        let pull = &item.pull;
        let left = listed.len() - index - 1;
        if !keep_lease(runner, keeper).await {
            return false;
        }
        let flow = runner
            .process_pr(pull, reads.pulls.remove(&pull.number))
            .await;
        if keeper.is_some_and(|keeper| keeper.lost().is_some()) {
            return false;
        }
        match flow {
            Flow::Continue => {}
            Flow::Throttled => {
                runner.report.metrics.rate_limited = true;
                runner.report.warnings.push(format!(
                    "GitHub's secondary rate limit at {}#{}: no more calls this tick (GitHub asks for at least a minute's pause); {left} pull request(s) of {repo} and the repositories after it wait for the next tick",
                    pull.repo, pull.number
                ));
                return false;
            }
            Flow::EndTick => {
                runner.report.metrics.rate_limited = true;
                runner.report.warnings.push(format!(
                    "primary rate limit reached at {}#{}; the rest of the pull requests wait for the next tick",
                    pull.repo, pull.number
                ));
                return false;
            }
        }
    }
    runner.order_queue(repo);
    runner.judge_merge_groups(repo).await;
    true
}

/// The operator error of a supervised repository whose pull requests GitHub answers 404
/// for: a typo in `projects.yml`, or an installation that does not cover it.
fn repository_not_found(repo: &RepoName) -> String {
    format!(
        "{repo}: GitHub does not know this repository (404): it does not exist or the App is not installed on it; check its name in projects.yml `supervised_repos` and the App's installation (`mp doctor`)"
    )
}

/// The operator's line for a call GitHub refused for a missing permission: a 403 that is
/// not a rate limit (the adapters report those as [`GitHubError::RateLimited`] and
/// [`GitHubError::Throttled`]). `None` for every other error.
pub fn permission_refusal(error: &GitHubError) -> Option<String> {
    let GitHubError::Status {
        route,
        status: 403,
        message,
    } = error
    else {
        return None;
    };
    let needed = accepted_permissions(message).unwrap_or_else(|| needed_permission(route));
    Some(format!(
        "GitHub refused `{route}` (HTTP 403: {message}): mp lacks the permission {needed}; grant it to the App's installation (or the token) and check with `mp doctor`"
    ))
}

/// The permission sets GitHub accepts for the call, when the adapter kept its
/// `X-Accepted-GitHub-Permissions` header in the message (`accepted permissions: ...`).
fn accepted_permissions(message: &str) -> Option<String> {
    let (_, rest) = message.split_once("accepted permissions: ")?;
    let sets = rest.split(')').next().unwrap_or(rest).trim();
    (!sets.is_empty()).then(|| format!("`{sets}` (one of these sets)"))
}

/// The permission a call on `route` (`METHOD /path`) needs, as GitHub's REST reference
/// names it for fine-grained tokens and Apps.
fn needed_permission(route: &str) -> String {
    let (method, path) = route.split_once(' ').unwrap_or(("", route));
    let level = if method.eq_ignore_ascii_case("GET") {
        "read"
    } else {
        "write"
    };
    let scope = if path.contains("/comments") || path.contains("/labels") {
        return format!("`issues: {level}` or `pull_requests: {level}`");
    } else if path.contains("/merge") || path.contains("/contents") || path.contains("/git/") {
        "contents"
    } else if path.contains("/issues") {
        "issues"
    } else if path.contains("/check-runs") {
        "checks"
    } else if path.contains("/pulls") {
        "pull_requests"
    } else {
        return "that this call needs".to_owned();
    };
    format!("`{scope}: {level}`")
}

/// Warnings about the setup itself: unsigned receipts, and a configured App slug that is
/// not the App the API answers for.
fn setup_warnings(setup: &TickSetup<'_>) -> Vec<String> {
    let mut warnings = setup.options.skills.load_warnings.clone();
    if setup.options.receipt_key.is_none() {
        warnings.push(UNSIGNED_RECEIPTS_WARNING.to_owned());
    }
    let slug = setup.config.env().bot_app_slug();
    if Login::for_app(slug).ok().as_ref() != Some(setup.bot()) {
        warnings.push(format!(
            "env.yml bot_app_slug '{slug}' does not match the App's bot user '{}'; the bot user is used",
            setup.bot()
        ));
    }
    warnings
}

#[cfg(test)]
mod rotation_tests {
    use super::*;

    fn key(text: &str) -> ReceiptKey {
        ReceiptKey::new(text).expect("a non-empty key")
    }

    fn at(text: &str) -> Timestamp {
        Timestamp::parse(text).expect("a valid time")
    }

    #[test]
    fn options_at_a_time_keep_the_key_and_add_the_previous_one_while_its_window_is_open() {
        let noon = at("2026-03-10T12:00:00Z");
        let plain = TickOptions::default().with_receipt_key(key("new"));
        let (same, note) = plain.clone().at(noon).expect("no rotation");
        assert_eq!(same.receipt_key, Some(key("new")));
        assert_eq!(note, None);

        let previous = |until: &str| PreviousReceiptKey {
            key: key("old"),
            until: at(until),
        };
        let (open, note) = plain
            .clone()
            .with_previous_receipt_key(previous("2026-03-11T00:00:00Z"))
            .at(noon)
            .expect("a short window");
        assert!(
            open.receipt_key
                .as_ref()
                .is_some_and(ReceiptKey::has_previous)
        );
        assert!(open.previous_receipt_key.is_none());
        assert!(note.is_some());
        let (closed, _) = plain
            .clone()
            .with_previous_receipt_key(previous("2026-03-10T11:00:00Z"))
            .at(noon)
            .expect("an ended window");
        assert_eq!(closed.receipt_key, Some(key("new")));
        let too_long = plain
            .with_previous_receipt_key(previous("2026-06-01T00:00:00Z"))
            .at(noon);
        assert!(matches!(too_long, Err(TickError::ReceiptKeyRotation(_))));
        let (keyless, note) = TickOptions::default()
            .with_previous_receipt_key(previous("2026-03-11T00:00:00Z"))
            .at(noon)
            .expect("nothing to verify with");
        assert_eq!(keyless.receipt_key, None);
        assert_eq!(note, None);
    }
}
