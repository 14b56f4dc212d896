//! The service: one GitHub adapter (its token and ETag cache live as long as the process),
//! the queue, the workers, the tick lease and the periodic resync.
//!
//! Every decision goes through the mp-core use-cases the cron tick runs: a lane is
//! [`run_pr_path`] over the pull requests it names (and, when the gated branch moved, the
//! ready ones: those with an approval label, whose race guard the move concerns), plus
//! [`run_branch_supervisor`] when the gated branch moved. A resync is [`run_tick`] for the
//! work of no repository ([`TickOptions::global_work_only`]: the watermarks, the inbox, the
//! burn-in clock, the drift check), then one job per repository, [`run_repository_pass`]
//! and its branch supervision, which go through the queue between the webhooks' lanes
//! (docs/decisions/0066).
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
use mp_core::gate::burn_in::BurnInStatus;
use mp_core::ids::{Login, RepoName};
use mp_core::port::{AuditLog, Clock, GitHubHistory};
use mp_core::severity::Severity;
use mp_tick::lease::{Lease, LeaseError, LeaseTerms};
use mp_tick::state_store::{StateGuard, StateStore};
use mp_tick::supervisor::{SupervisorRun, run_branch_supervisor};
use mp_tick::{
    DefaultBranches, PullSelection, TickOptions, resolve_default_branches, run_pr_path,
    run_repository_pass, run_tick,
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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Readiness {
    /// The configuration loaded without errors.
    pub config: bool,
    /// GitHub answered who the bot is (a token was obtained).
    pub token: bool,
    /// The watermarks on the `bot-state` branch loaded.
    pub state: bool,
    /// The service holds the tick lease.
    pub lease: bool,
    /// The first resync read every repository.
    pub resync: bool,
    /// Repositories the resync in progress (or the last one) has read.
    pub resync_read: usize,
    /// Repositories a resync reads (0 until the first one planned its work).
    pub resync_of: usize,
}

impl Readiness {
    /// Whether the service is ready to act.
    pub fn ready(&self) -> bool {
        self.config && self.token && self.state && self.lease && self.resync
    }

    /// One line per check that fails, saying why (`resync: 37/120 repositories`).
    pub fn why(&self) -> Vec<String> {
        let mut why = Vec::new();
        for (ok, line) in [
            (self.config, "config: the configuration did not load"),
            (self.token, "token: GitHub has not told who the bot is"),
            (
                self.state,
                "state: the bot-state watermarks have not loaded",
            ),
            (self.lease, "lease: the tick lease is not held"),
        ] {
            if !ok {
                why.push(line.to_owned());
            }
        }
        if !self.resync {
            why.push(if self.resync_of == 0 {
                "resync: the first resync has not planned its repositories yet".to_owned()
            } else {
                format!(
                    "resync: {}/{} repositories",
                    self.resync_read, self.resync_of
                )
            });
        }
        why
    }
}

impl serde::Serialize for Readiness {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let mut map = serializer.serialize_map(Some(7))?;
        map.serialize_entry("config", &self.config)?;
        map.serialize_entry("token", &self.token)?;
        map.serialize_entry("state", &self.state)?;
        map.serialize_entry("lease", &self.lease)?;
        map.serialize_entry("resync", &self.resync)?;
        map.serialize_entry(
            "resync_progress",
            &format!("{}/{} repositories", self.resync_read, self.resync_of),
        )?;
        map.serialize_entry("why", &self.why())?;
        map.end()
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
    pub(crate) queue: Arc<Mutex<Queue>>,
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
    /// The L4 registry severity the last resync's burn-in clock decided, for the
    /// repository jobs and lanes after it.
    registry_severity: Mutex<Option<Severity>>,
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
        // The resync's repository jobs leave one worker to the webhooks' lanes.
        let queue = Arc::new(Mutex::new(Queue::with_background_limit(
            settings.workers.max(2) - 1,
        )));
        let metrics = Metrics::new();
        metrics.read_queue_from(Arc::clone(&queue), watched(&settings));
        let reading = Arc::clone(&github);
        metrics.read_api_from(move || {
            (
                0,
                0,
                reading.rate_limit_remaining(),
                reading.graphql_remaining(),
            )
        });
        Self {
            inner: Arc::new(Inner {
                github,
                audit,
                clock,
                api: None,
                settings: RwLock::new(Arc::new(settings)),
                queue,
                seen: Mutex::new(SeenDeliveries::new(SEEN_DELIVERIES)),
                wake: Notify::new(),
                metrics,
                readiness: Mutex::new(Readiness {
                    config: true,
                    ..Readiness::default()
                }),
                branches: RwLock::new(DefaultBranches::default()),
                stopping: AtomicBool::new(false),
                finished: watch::Sender::new(0),
                bot: Mutex::new(None),
                lease: tokio::sync::Mutex::new(LeaseKeeper::default()),
                registry_severity: Mutex::new(None),
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
            let github = Arc::clone(&inner.github);
            let counters = Arc::clone(&api);
            inner.metrics.read_api_from(move || {
                let (requests, not_modified) = counters.totals();
                (
                    requests,
                    not_modified,
                    github.rate_limit_remaining(),
                    github.graphql_remaining(),
                )
            });
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
        // The resync at start (it folds into the one a lease taken at start asked for).
        resync.tick().await;
        lock(&inner.queue).push(crate::route::Work::Resync, Instant::now());
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
                let completed = queue.resync_progress().completed;
                queue.done(&job);
                let progress = queue.resync_progress();
                inner.metrics.set_queue_depth(queue.depth());
                drop(queue);
                inner.note_resync(progress);
                if progress.completed > completed {
                    inner
                        .metrics
                        .resync_completed(inner.clock.now().unix_seconds());
                    tracing::info!(repositories = progress.of, "resync finished");
                }
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
        Job::ResyncRepo(repo) => format!("resync {repo}"),
    }
}

/// The repositories this service watches: the supervised ones of its shard (the lag
/// gauge's label values).
fn watched(settings: &Settings) -> Vec<RepoName> {
    settings
        .config
        .projects()
        .supervised_repos()
        .iter()
        .filter(|repo| settings.options.covers(repo))
        .cloned()
        .collect()
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
                        // A new holder resyncs at once: the events it did not act on
                        // while another held the lease are read there.
                        lock(&self.queue).push(crate::route::Work::Resync, Instant::now());
                        self.wake.notify_one();
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
            if matches!(job, Job::ResyncRepo(_)) {
                lock(&self.queue).abandon_resync();
            }
            return;
        }
        let (kind, since) = match &job {
            Job::Lane(repo, lane) => {
                self.lane(repo, lane).await;
                ("lane", Some(lane.since))
            }
            Job::Supervise(repos, since) => {
                self.supervise(repos).await;
                ("supervise", Some(*since))
            }
            Job::Resync { since } => {
                let planned = self.resync().await;
                let mut queue = lock(&self.queue);
                if let Some(repos) = planned {
                    queue.plan_resync(repos);
                }
                self.note_resync(queue.resync_progress());
                ("resync", Some(*since))
            }
            Job::ResyncRepo(repo) => {
                if self.resync_repo(repo).await {
                    lock(&self.queue).supervise_later(repo.clone(), Instant::now());
                }
                ("resync_repo", None)
            }
        };
        self.metrics
            .job_done(kind, since.map(|since| since.elapsed().as_secs_f64()));
        self.api_totals();
    }

    /// The agents' part of a job's decisions: the same `pr`, `incident` and `revert`
    /// records `mp tick --audit-log` appends (built by [`mp_tick::audit_records`]), and
    /// the per-agent counters of `/metrics` from the same outcomes (decisions/0081). A
    /// record that cannot be appended is a warning: the decisions are already taken.
    async fn record_agents(
        &self,
        outcomes: &[mp_tick::PrOutcome],
        supervisors: &[mp_tick::supervisor::SupervisorReport],
        now: mp_core::ids::Timestamp,
    ) {
        self.metrics.agents(outcomes, supervisors);
        let lines = mp_tick::audit_records::lines(outcomes, supervisors, &now.to_string(), false);
        if lines.is_empty() {
            return;
        }
        if let Err(error) = self.audit.append_agent_records(&lines).await {
            tracing::warn!(%error, "the agents' records were not appended to the audit log");
        }
    }

    /// Readiness and progress after the queue's resync moved.
    fn note_resync(&self, progress: crate::queue::ResyncProgress) {
        let mut readiness = lock(&self.readiness);
        readiness.resync |= progress.completed > 0;
        readiness.resync_read = progress.read;
        readiness.resync_of = progress.of;
    }

    /// The options of a job that evaluates pull requests: with the registry severity the
    /// last resync's burn-in clock decided, unless the settings chose one.
    fn evaluation_options(&self, settings: &Settings) -> TickOptions {
        let mut options = self.options(settings);
        if options.registry_severity.is_none() {
            options.registry_severity = *lock(&self.registry_severity);
        }
        options
    }

    async fn lane(&self, repo: &RepoName, lane: &Lane) {
        let now = self.clock.now();
        let settings = self.settings();
        let options = self.evaluation_options(&settings);
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
                    self.record_agents(&report.outcomes, &[], now).await;
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
            self.record_agents(&[], std::slice::from_ref(&scan), now)
                .await;
        }
        let saved = match options.shard {
            Some(shard) => store.save_shard(github, &state, shard).await,
            None => store.save(github, &state).await,
        };
        if let Err(error) = saved {
            tracing::error!(%error, "branch supervisor: the state was not saved");
        }
    }

    /// The global part of a resync: [`run_tick`] without the repositories' work. Returns
    /// the repositories to resync one by one, or `None` when it failed (the state could not
    /// be trusted, the lease was lost): then no repository is visited, as a tick that fails
    /// there visits none.
    async fn resync(&self) -> Option<Vec<RepoName>> {
        let settings = self.settings();
        let governance = settings.config.projects().governance_repo().clone();
        self.refresh_branch(&governance).await;
        let now = self.clock.now();
        let options = self
            .options(&settings)
            .with_lease_held()
            .with_global_work_only();
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
                self.record_agents(&report.outcomes, &report.supervisor, now)
                    .await;
                for outcome in &report.outcomes {
                    self.metrics.evaluation(outcome.action.as_str());
                }
                for warning in &report.warnings {
                    tracing::warn!(%warning, "resync");
                }
                for error in &report.operator_errors {
                    tracing::error!(%error, "needs the operator");
                }
                *lock(&self.registry_severity) =
                    report.burn_in.as_ref().map(|status| match status {
                        BurnInStatus::Promoted { .. } => Severity::P0,
                        BurnInStatus::Overridden { severity } => *severity,
                        _ => mp_core::gate::DEFAULT_REGISTRY_SEVERITY,
                    });
                let repos = watched(&settings);
                tracing::info!(repositories = repos.len(), "resync: the global part done");
                Some(repos)
            }
            Err(error) => {
                tracing::error!(%error, "resync");
                None
            }
        }
    }

    /// One repository's part of a resync: its gated branch, then every open pull request
    /// and its merge queue ([`run_repository_pass`]). Returns whether its branch
    /// supervision should follow (not after a rate limit, as the tick's supervisor waits
    /// for the next tick then).
    async fn resync_repo(&self, repo: &RepoName) -> bool {
        self.refresh_branch(repo).await;
        let settings = self.settings();
        let projects = settings.config.projects();
        if !projects.is_gated(repo) {
            return true;
        }
        let now = self.clock.now();
        let options = self
            .evaluation_options(&settings)
            .with_repos(vec![repo.clone()]);
        match run_repository_pass(
            self.github.as_ref(),
            self.audit.as_ref(),
            &settings.config,
            &options,
            now,
        )
        .await
        {
            Ok(report) => {
                self.record_agents(&report.outcomes, &report.supervisor, now)
                    .await;
                for outcome in &report.outcomes {
                    self.metrics.evaluation(outcome.action.as_str());
                    tracing::info!(pr = %outcome.pr, action = outcome.action.as_str(), detail = %outcome.detail, "decision");
                }
                for warning in &report.warnings {
                    tracing::warn!(%warning, repo = %repo, "resync");
                }
                for error in &report.operator_errors {
                    tracing::error!(%error, repo = %repo, "needs the operator");
                }
                !report.metrics.rate_limited
            }
            Err(error) => {
                tracing::error!(%error, repo = %repo, "resync");
                false
            }
        }
    }

    /// Resolves the gated branch of `repo` again, as the tick does at its start: the
    /// configured override, else GitHub's default branch (`main` when GitHub does not say).
    async fn refresh_branch(&self, repo: &RepoName) {
        let configured = self
            .settings()
            .config
            .projects()
            .repo_override(repo)
            .and_then(|o| o.default_branch())
            .map(str::to_owned);
        let branch = match configured {
            Some(branch) => branch,
            None => match self.github.default_branch(repo).await {
                Ok(branch) if !branch.trim().is_empty() => branch,
                Ok(_) | Err(mp_core::port::GitHubError::NotFound { .. }) => {
                    mp_tick::MAIN_BRANCH.to_owned()
                }
                Err(error) => {
                    tracing::warn!(%error, repo = %repo, "cannot read the default branch; `main` is assumed");
                    mp_tick::MAIN_BRANCH.to_owned()
                }
            },
        };
        match self.branches.write() {
            Ok(mut slot) => slot.set(repo.clone(), branch),
            Err(poisoned) => poisoned.into_inner().set(repo.clone(), branch),
        }
    }
}
