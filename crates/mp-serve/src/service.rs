//! The service: one GitHub adapter (its token and ETag cache live as long as the process),
//! the queue, the workers, the tick lease and the periodic resync.
//!
//! Every decision goes through the mp-core use-cases the cron tick runs: a lane is
//! [`run_pr_path`] over the pull requests it names (and, when the gated branch moved, the
//! ready ones: those with an approval label, whose race guard the move concerns), plus
//! [`run_branch_supervisor`] when the gated branch moved; a resync is [`run_tick`].
//!
//! The service holds the tick lease while it runs (renewed every third of its duration,
//! [`LeaseTerms`], given back on shutdown), so a cron tick kept as a backstop, or a
//! standby replica, stops at the lease while the service is alive and takes over within
//! one lease duration of its death. A restart of the same identity takes the lease of its
//! dead predecessor back at once (docs/decisions/0065). Without the lease, or when it was
//! not renewed within the renew deadline, the service acts on nothing (and `/readyz`
//! says so) until it takes the lease again.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use mp_core::branch::IncidentAuthority;
use mp_core::config::Config;
use mp_core::ids::{Login, RepoName};
use mp_core::port::{AuditLog, Clock, GitHubHistory};
use mp_tick::lease::{Lease, LeaseError, LeaseTerms};
use mp_tick::state_store::{StateGuard, StateStore};
use mp_tick::supervisor::{SupervisorRun, run_branch_supervisor};
use mp_tick::{
    DefaultBranches, PullSelection, TickOptions, resolve_default_branches, run_pr_path, run_tick,
};
use tokio::sync::{Notify, watch};
use tokio::time::Instant;

use crate::metrics::Metrics;
use crate::queue::{Job, Lane, Queue, SeenDeliveries};
use crate::signature::WebhookSecret;

/// How many delivery ids and body hashes the service remembers to answer redeliveries
/// (two entries a delivery: about the last 10,000 deliveries).
const SEEN_DELIVERIES: usize = 20_000;

/// The service's settings.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The loaded configuration.
    pub config: Config,
    /// The options every job starts from: merge mode, receipt key, user skills, shard,
    /// lease holder (the gated branches are resolved by the service).
    pub options: TickOptions,
    /// The webhook secret.
    pub secret: WebhookSecret,
    /// The period of the full resync (`mp tick`'s work).
    pub resync_every: Duration,
    /// The largest webhook body accepted, in bytes.
    pub max_body_bytes: usize,
    /// How many repositories are worked on at once.
    pub workers: usize,
}

impl Settings {
    /// Settings with the defaults: a resync every 10 minutes, bodies up to 5 MiB, four
    /// workers.
    pub fn new(config: Config, options: TickOptions, secret: WebhookSecret) -> Self {
        Self {
            config,
            options,
            secret,
            resync_every: Duration::from_secs(600),
            max_body_bytes: 5 * 1024 * 1024,
            workers: 4,
        }
    }
}

/// Totals of the adapter's HTTP traffic, for `/metrics` (optional).
pub trait ApiCounters: Send + Sync {
    /// Requests sent, and requests answered 304 Not Modified.
    fn totals(&self) -> (u64, u64);
}

/// Why the service cannot start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// The bot user cannot be learned (no token): nothing can be decided safely.
    #[error("{0}")]
    Tick(#[from] mp_tick::TickError),
}

/// What `/readyz` reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Readiness {
    /// The configuration loaded without errors.
    pub config: bool,
    /// GitHub answered who the bot is (a token was obtained).
    pub token: bool,
    /// The watermarks on the `bot-state` branch loaded.
    pub state: bool,
    /// The service holds the tick lease.
    pub lease: bool,
}

impl Readiness {
    /// Whether the service is ready to act.
    pub fn ready(&self) -> bool {
        self.config && self.token && self.state && self.lease
    }
}

/// The lease and when it was last written.
#[derive(Debug, Default)]
struct LeaseKeeper {
    lease: Option<Lease>,
    written: Option<Instant>,
}

pub(crate) struct Inner {
    pub(crate) github: Arc<dyn GitHubHistory>,
    pub(crate) audit: Arc<dyn AuditLog>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) api: Option<Arc<dyn ApiCounters>>,
    /// The settings in force: swapped whole by [`Service::reload`]; a job reads them once,
    /// when it starts, and finishes with them.
    settings: RwLock<Arc<Settings>>,
    pub(crate) queue: Mutex<Queue>,
    pub(crate) seen: Mutex<SeenDeliveries>,
    pub(crate) wake: Notify,
    pub(crate) metrics: Metrics,
    pub(crate) readiness: Mutex<Readiness>,
    pub(crate) branches: RwLock<DefaultBranches>,
    pub(crate) stopping: AtomicBool,
    /// How many jobs have finished (panicked ones included).
    finished: watch::Sender<u64>,
    bot: Mutex<Option<Login>>,
    lease: tokio::sync::Mutex<LeaseKeeper>,
}

/// The webhook service. Cheap to clone (shared).
#[derive(Clone)]
pub struct Service {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service")
            .field("readiness", &self.readiness())
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Service {
    /// A service over `github`, appending to `audit` and reading the time from `clock`.
    pub fn new(
        github: Arc<dyn GitHubHistory>,
        audit: Arc<dyn AuditLog>,
        clock: Arc<dyn Clock>,
        settings: Settings,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                github,
                audit,
                clock,
                api: None,
                settings: RwLock::new(Arc::new(settings)),
                queue: Mutex::new(Queue::default()),
                seen: Mutex::new(SeenDeliveries::new(SEEN_DELIVERIES)),
                wake: Notify::new(),
                metrics: Metrics::new(),
                readiness: Mutex::new(Readiness {
                    config: true,
                    ..Readiness::default()
                }),
                branches: RwLock::new(DefaultBranches::default()),
                stopping: AtomicBool::new(false),
                finished: watch::Sender::new(0),
                bot: Mutex::new(None),
                lease: tokio::sync::Mutex::new(LeaseKeeper::default()),
            }),
        }
    }

    /// This service reporting the adapter's HTTP totals in `/metrics`.
    ///
    /// # Panics
    /// Never in practice: call it right after [`Service::new`], before cloning.
    #[must_use]
    pub fn with_api_counters(mut self, api: Arc<dyn ApiCounters>) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.api = Some(api);
        }
        self
    }

    /// What `/readyz` reports now.
    pub fn readiness(&self) -> Readiness {
        *lock(&self.inner.readiness)
    }

    /// The number of jobs finished so far (a panicked one included), as a receiver that
    /// sees each new count: what an embedder or a test waits on to know that the work it
    /// queued is done, instead of polling.
    pub fn finished_jobs(&self) -> watch::Receiver<u64> {
        self.inner.finished.subscribe()
    }

    /// The metrics exposition text (`/metrics`).
    pub fn metrics_text(&self) -> String {
        self.inner.metrics.render()
    }

    /// Swaps in a new configuration (already validated by the caller) and the options made
    /// from it, for the jobs that start afterwards; the jobs in hand finish with the old
    /// ones. What belongs to the process, not to the configuration, is kept: the shard, the
    /// lease holder and terms, the webhook secret, the resync period, the body limit and the
    /// workers. The gated branches are resolved again; repositories the new configuration
    /// adds are taken up by their webhooks from now on, and whole at the next resync.
    pub async fn reload(&self, config: Config, options: TickOptions) {
        let inner = &self.inner;
        {
            let mut slot = inner
                .settings
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let old = &slot.options;
            let mut options = options;
            options.shard = old.shard;
            options.lease_holder = old.lease_holder.clone();
            options.lease_terms = old.lease_terms;
            options.lease_clock = old.lease_clock.clone();
            options.progress = old.progress.clone();
            let mut settings = Settings::clone(slot.as_ref());
            settings.config = config;
            settings.options = options;
            *slot = Arc::new(settings);
        }
        inner.refresh_branches().await;
    }

    /// Learns the bot user, the gated branches and loads the watermarks, then tries to take
    /// the lease (held by a cron tick: not an error; the resyncs keep trying).
    ///
    /// # Errors
    /// [`StartError::Tick`] when the bot user cannot be learned or the state is corrupt or
    /// unreadable: the service must not act.
    pub async fn start(&self) -> Result<(), StartError> {
        let inner = &self.inner;
        let github = inner.github.as_ref();
        let bot = github
            .bot_login()
            .await
            .map_err(mp_tick::TickError::BotLogin)?;
        *lock(&inner.bot) = Some(bot.clone());
        lock(&inner.readiness).token = true;
        inner.refresh_branches().await;
        let settings = inner.settings();
        let governance = settings.config.projects().governance_repo();
        let branch = inner.branch_of(governance);
        let guard = inner.state_guard(&settings, &bot);
        StateStore::load(github, governance, &branch, &guard).await?;
        lock(&inner.readiness).state = true;
        if let Err(why) = inner.hold_lease().await {
            tracing::warn!(reason = %why, "mp serve acts on nothing until it holds the tick lease");
        }
        Ok(())
    }

    /// Runs the workers until `shutdown` resolves: a resync at once and every
    /// `resync_every`, and every job the webhooks queue. On shutdown it starts nothing new,
    /// lets the jobs in hand finish (each saves its state), and gives the lease back.
    pub async fn run(&self, shutdown: impl Future<Output = ()>) {
        let inner = &self.inner;
        inner.stopping.store(false, Ordering::SeqCst);
        let mut resync = tokio::time::interval(inner.settings().resync_every);
        resync.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // The lease is kept (renewed, or taken when free) every retry period, busy or idle.
        let mut keep = tokio::time::interval(inner.terms().renew_every());
        keep.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        keep.tick().await;
        tokio::pin!(shutdown);
        loop {
            self.dispatch();
            tokio::select! {
                () = &mut shutdown => break,
                _ = resync.tick() => {
                    lock(&inner.queue).push(crate::route::Work::Resync, Instant::now());
                }
                _ = keep.tick() => {
                    if let Err(why) = inner.hold_lease().await {
                        tracing::warn!(reason = %why, "mp serve acts on nothing until it holds the tick lease");
                    }
                }
                () = inner.wake.notified() => {}
            }
        }
        inner.stopping.store(true, Ordering::SeqCst);
        tracing::info!("mp serve stopping: finishing the jobs in hand");
        while lock(&inner.queue).busy() {
            inner.wake.notified().await;
        }
        let keeper = std::mem::take(&mut *inner.lease.lock().await);
        if let Some(lease) = keeper.lease
            && let Err(warning) = lease
                .release(inner.github.as_ref(), inner.clock.now())
                .await
        {
            tracing::warn!(%warning, "lease");
        }
        lock(&inner.readiness).lease = false;
        tracing::info!("mp serve stopped");
    }

    /// Starts jobs while workers are free.
    fn dispatch(&self) {
        let inner = &self.inner;
        if inner.stopping.load(Ordering::SeqCst) {
            return;
        }
        let mut queue = lock(&inner.queue);
        while queue.running_jobs() < inner.settings().workers.max(1) {
            let Some(job) = queue.take_next() else { break };
            let inner = Arc::clone(&self.inner);
            tokio::spawn(async move {
                let work = tokio::spawn(Arc::clone(&inner).run_job(job.clone()));
                if let Err(error) = work.await
                    && error.is_panic()
                {
                    inner.metrics.panicked();
                    tracing::error!(job = ?job_name(&job), "a job panicked; the service goes on");
                }
                let mut queue = lock(&inner.queue);
                queue.done(&job);
                inner.metrics.set_queue_depth(queue.depth());
                drop(queue);
                inner.finished.send_modify(|count| *count += 1);
                inner.wake.notify_one();
            });
        }
        inner.metrics.set_queue_depth(queue.depth());
    }
}

fn job_name(job: &Job) -> String {
    match job {
        Job::Lane(repo, _) => repo.to_string(),
        Job::Supervise(repos, _) => format!(
            "supervise {}",
            repos
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Job::Resync { .. } => "resync".to_owned(),
    }
}

impl Inner {
    pub(crate) fn branch_of(&self, repo: &RepoName) -> String {
        self.branches
            .read()
            .map(|b| b.of(repo).to_owned())
            .unwrap_or_else(|e| e.into_inner().of(repo).to_owned())
    }

    async fn refresh_branches(&self) {
        let settings = self.settings();
        let (branches, warnings) =
            resolve_default_branches(self.github.as_ref(), &settings.config, &settings.options)
                .await;
        for warning in warnings {
            tracing::warn!(%warning, "default branch");
        }
        match self.branches.write() {
            Ok(mut slot) => *slot = branches,
            Err(poisoned) => *poisoned.into_inner() = branches,
        }
    }

    /// The settings in force now.
    pub(crate) fn settings(&self) -> Arc<Settings> {
        Arc::clone(
            &self
                .settings
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// The options of one job: its settings' options with the gated branches.
    fn options(&self, settings: &Settings) -> TickOptions {
        let branches = self
            .branches
            .read()
            .map(|b| b.clone())
            .unwrap_or_else(|e| e.into_inner().clone());
        settings.options.clone().with_default_branches(branches)
    }

    /// The lease's terms.
    fn terms(&self) -> LeaseTerms {
        self.settings().options.lease_terms
    }

    /// Takes the lease, or renews it when a third of its duration has passed since it was
    /// last written (by the monotonic clock, which runs on while the process is frozen).
    ///
    /// # Errors
    /// Why the service does not hold the lease now: another holder has it, it was lost
    /// (expired before it was renewed, or taken over), or it could not be renewed within
    /// the renew deadline.
    pub(crate) async fn hold_lease(&self) -> Result<(), String> {
        let mut keeper = self.lease.lock().await;
        let now = self.clock.now();
        let github = self.github.as_ref();
        let settings = self.settings();
        let governance = settings.config.projects().governance_repo();
        let terms = self.terms();
        let written = keeper.written;
        let result = match (&mut keeper.lease, written) {
            (Some(_), Some(at)) if at.elapsed() < terms.renew_every() => Ok(()),
            (Some(lease), written) => {
                let age = written.map_or(Duration::MAX, |at| at.elapsed());
                // Past the renew deadline the lease is not ours to act on, whatever the
                // renewal answers (a frozen process wakes here).
                let late = age >= terms.renew_deadline();
                match lease.renew(github, now).await {
                    Ok(()) if !late => {
                        keeper.written = Some(Instant::now());
                        Ok(())
                    }
                    Ok(()) => {
                        keeper.written = Some(Instant::now());
                        tracing::warn!(
                            seconds = age.as_secs(),
                            "the lease was renewed past its renew deadline; jobs started after this renewal act"
                        );
                        Ok(())
                    }
                    Err(error @ LeaseError::Lost { .. }) => {
                        keeper.lease = None;
                        tracing::warn!(%error, "mp serve lost the tick lease; acting on nothing");
                        Err(error.to_string())
                    }
                    // Not renewed, not lost: it holds until the renew deadline.
                    Err(error) if !late => {
                        tracing::warn!(%error, "the lease was not renewed; trying again at the next retry");
                        Ok(())
                    }
                    Err(error) => {
                        keeper.lease = None;
                        Err(format!(
                            "the tick lease was not renewed within its renew deadline ({} s): {error}",
                            terms.renew_deadline().as_secs()
                        ))
                    }
                }
            }
            (None, _) => {
                let holder = &settings.options.lease_holder;
                match Lease::take_for(
                    github,
                    governance,
                    settings.options.shard,
                    holder,
                    terms,
                    now,
                )
                .await
                {
                    Ok(lease) => {
                        keeper.lease = Some(lease);
                        keeper.written = Some(Instant::now());
                        tracing::info!(
                            holder = %holder.identity,
                            incarnation = %holder.incarnation,
                            lease_seconds = terms.seconds(),
                            "mp serve holds the tick lease"
                        );
                        Ok(())
                    }
                    Err(error) => Err(error.to_string()),
                }
            }
        };
        lock(&self.readiness).lease = result.is_ok();
        result
    }

    fn bot(&self) -> Option<Login> {
        lock(&self.bot).clone()
    }

    /// Who may write the state: `bot` and the allowlisted people.
    fn state_guard(&self, settings: &Settings, bot: &Login) -> StateGuard {
        let config = &settings.config;
        StateGuard::new(
            IncidentAuthority::new(bot.clone(), config.projects().governance_repo().clone())
                .with_key(settings.options.receipt_key.clone()),
            config.allowlist().to_vec(),
        )
    }

    fn api_totals(&self) {
        let (requests, not_modified) = self.api.as_ref().map_or((0, 0), |api| api.totals());
        self.metrics.api_totals(
            requests,
            not_modified,
            self.github.rate_limit_remaining(),
            self.github.graphql_remaining(),
        );
    }

    async fn run_job(self: Arc<Self>, job: Job) {
        if let Err(why) = self.hold_lease().await {
            tracing::warn!(job = %job_name(&job), reason = %why, "not acting: the tick lease is not ours");
            return;
        }
        let (kind, since) = match &job {
            Job::Lane(repo, lane) => {
                self.lane(repo, lane).await;
                ("lane", lane.since)
            }
            Job::Supervise(repos, since) => {
                self.supervise(repos).await;
                ("supervise", *since)
            }
            Job::Resync { since } => {
                self.resync().await;
                ("resync", *since)
            }
        };
        self.metrics.job_done(kind, since.elapsed().as_secs_f64());
        self.api_totals();
    }

    async fn lane(&self, repo: &RepoName, lane: &Lane) {
        let now = self.clock.now();
        let settings = self.settings();
        let options = self.options(&settings);
        let config = &settings.config;
        let github = self.github.as_ref();
        let mut selection = PullSelection::default();
        for number in &lane.numbers {
            selection.add_number(repo.clone(), *number);
        }
        for head in &lane.heads {
            selection.add_head(repo.clone(), head.clone());
        }
        if lane.ready_pulls {
            selection.add_ready(repo.clone());
        }
        let pulls = (!selection.is_empty()).then(|| options.clone().with_pulls(selection));
        if let Some(pulls) = pulls {
            match run_pr_path(github, self.audit.as_ref(), config, &pulls, now).await {
                Ok(report) => {
                    for outcome in &report.outcomes {
                        self.metrics.evaluation(outcome.action.as_str());
                        tracing::info!(pr = %outcome.pr, action = outcome.action.as_str(), detail = %outcome.detail, "decision");
                    }
                    for warning in &report.warnings {
                        tracing::warn!(%warning, repo = %repo, "pull-request path");
                    }
                    for error in &report.operator_errors {
                        tracing::error!(%error, repo = %repo, "needs the operator");
                    }
                }
                Err(error) => tracing::error!(%error, repo = %repo, "pull-request path"),
            }
        }
    }

    /// The branch supervisor of `repos`, with the watermarks loaded once before and saved
    /// once after.
    async fn supervise(&self, repos: &std::collections::BTreeSet<RepoName>) {
        let Some(bot) = self.bot() else { return };
        let now = self.clock.now();
        let settings = self.settings();
        let options = self.options(&settings);
        let config = &settings.config;
        let github = self.github.as_ref();
        let governance = config.projects().governance_repo();
        let guard = self.state_guard(&settings, &bot);
        let (mut store, mut state) = match StateStore::load(
            github,
            governance,
            options.gated_branch(governance),
            &guard,
        )
        .await
        {
            Ok(loaded) => loaded,
            Err(error) => {
                tracing::error!(%error, "branch supervisor: the state did not load; nothing done");
                return;
            }
        };
        let mut run = SupervisorRun::new(bot)
            .with_skills(options.skills.clone())
            .with_default_branches(options.default_branches.clone())
            .with_receipt_key(options.receipt_key.clone());
        for repo in repos {
            let scan = run_branch_supervisor(github, config, &mut state, repo, &mut run, now).await;
            for warning in &scan.warnings {
                tracing::warn!(%warning, repo = %repo, "branch supervisor");
            }
        }
        let saved = match options.shard {
            Some(shard) => store.save_shard(github, &state, shard).await,
            None => store.save(github, &state).await,
        };
        if let Err(error) = saved {
            tracing::error!(%error, "branch supervisor: the state was not saved");
        }
    }

    async fn resync(&self) {
        self.refresh_branches().await;
        let now = self.clock.now();
        let settings = self.settings();
        let options = self.options(&settings).with_lease_held();
        match run_tick(
            self.github.as_ref(),
            self.audit.as_ref(),
            &settings.config,
            &options,
            now,
        )
        .await
        {
            Ok(report) => {
                for outcome in &report.outcomes {
                    self.metrics.evaluation(outcome.action.as_str());
                }
                for warning in &report.warnings {
                    tracing::warn!(%warning, "resync");
                }
                for error in &report.operator_errors {
                    tracing::error!(%error, "needs the operator");
                }
                tracing::info!(pull_requests = report.outcomes.len(), "resync finished");
            }
            Err(error) => tracing::error!(%error, "resync"),
        }
    }
}
