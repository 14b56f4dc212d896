//! `cargo xtask bench serve [--repos N] [--delay-ms D] [--workers W] [--lone L]
//! [--lone-every-ms E] [--pacing on|off]`: how fast `mp serve` turns an owner's label into
//! a merge, and what it costs to sit idle, in-process against the loopback GitHub with `D`
//! ms added to every request (default 50), through the REST client as shipped: paced at
//! GitHub's points budget (`GITHUB_REST_POINTS_PER_MINUTE`) and reading pull requests over
//! GraphQL (`env.yml` `reads`, default `graphql`). `--pacing off` measures the service
//! without the pacer.
//!
//! The world: `N` repositories (default 100), each with one green Quadrant-A pull request
//! that is up to date with its `main` and lacks only the owner's `ready-to-merge` label.
//! Before anything is timed, one tick over the in-memory GitHub proves it: every pull
//! request is blocked by C1 alone, and labelling one merges it (the benchmark fails
//! otherwise).
//!
//! Each mode runs on a fresh loopback server (system clock, webhooks to the service) and a
//! fresh [`Service`] over the REST client (an installation token), its router served on
//! 127.0.0.1 and its start-up resync finished before the first label. A label is the
//! loopback's `POST _loopback/label` as the owner; its latency runs from just before that
//! request to the moment the merge is in the server's world (polled every 1-2 ms).
//!
//! * lone labels: `L` (40) labels one at a time, each `E` ms (4000) after the one before,
//!   so the pacer's bucket has refilled: what a label on an otherwise idle service gets;
//! * burst: open loop, one label every 50 ms, all `N`; the points the bot spent while the
//!   burst drained (first label to last merge) are reported per minute against GitHub's
//!   900 REST / 2,000 GraphQL (a REST `GET` 1 point, other methods 5; a GraphQL query 1).
//!
//! After the burst the service sits idle and resyncs are asked for one after the other (an
//! `installation_repositories` delivery, which queues the same job as the periodic timer);
//! each is counted at the server by route, requests and 304s (which spend no rate limit).
//! The idle hour is six warm resyncs (the default period is 10 minutes) plus six renewals
//! of the tick lease (one `PUT` each; not triggered here, they come every 10 minutes).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::future::IntoFuture as _;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use mp_core::approval::READY_TO_MERGE;
use mp_core::config::{self, Config, ConfigFiles};
use mp_core::gate::ConditionId;
use mp_core::ids::{CommitSha, Login, PrNumber, RepoName, Timestamp};
use mp_core::port::{AuditError, AuditLog, AuditRecord, Clock};
use mp_github::rest::{Credentials, RestConfig, RestGitHub, RevertMode, Secret};
use mp_github_fake::loopback::WebhookTarget;
use mp_github_fake::world::drain::{DRAIN_OWNER, DrainSpec, drain_world};
use mp_github_fake::world::{Repo, World, commit_sha};
use mp_github_fake::{Fault, FaultRule, FaultScript, LoopbackServer, MemoryGitHub, ServerClock};
use mp_serve::{Service, Settings, WebhookSecret};
use mp_tick::{self as tick, PrAction, TickOptions};
use tokio::runtime::Handle;
use tokio::sync::watch;

const SECRET: &str = "bench-serve-webhook-secret";
const TOKEN: &str = "ghs_bench_serve";
const GOVERNANCE: &str = "bench/governance";
/// The time between two labels of the burst.
const BURST_EVERY: Duration = Duration::from_millis(50);
/// How long one merge may take before the benchmark gives up on it (a paced burst drains
/// at the points budget: minutes for a hundred merges).
const MERGE_TIMEOUT: Duration = Duration::from_secs(600);
/// How long a resync may take.
const RESYNC_TIMEOUT: Duration = Duration::from_secs(600);
/// GitHub's GraphQL points a minute (secondary limit).
const GRAPHQL_POINTS_PER_MINUTE: u32 = 2_000;
/// Resyncs after the events: the first sees what the events changed, the last is warm.
const IDLE_RESYNCS: usize = 3;
/// Warm resyncs in an idle hour at the default period of 10 minutes.
const RESYNCS_PER_HOUR: u64 = 6;

/// The benchmark's options.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Options {
    repos: usize,
    delay_ms: u64,
    workers: usize,
    /// Lone labels measured.
    lone: usize,
    /// Time from one lone label to the next.
    lone_every_ms: u64,
    /// The REST client's pacing, as shipped.
    pacing: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            repos: 100,
            delay_ms: 50,
            workers: 4,
            lone: 40,
            lone_every_ms: 4000,
            pacing: true,
        }
    }
}

fn parse(args: &[&str]) -> anyhow::Result<Options> {
    let mut options = Options::default();
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let Some(value) = rest.next() else {
            bail!("{flag} needs a value");
        };
        if *flag == "--pacing" {
            options.pacing = match *value {
                "on" => true,
                "off" => false,
                other => bail!("--pacing is on or off, got {other:?}"),
            };
            continue;
        }
        let number: u64 = value
            .parse()
            .with_context(|| format!("{flag} expects a whole number, got {value:?}"))?;
        match *flag {
            "--repos" => options.repos = usize::try_from(number)?,
            "--delay-ms" => options.delay_ms = number,
            "--workers" => options.workers = usize::try_from(number)?,
            "--lone" => options.lone = usize::try_from(number)?,
            "--lone-every-ms" => options.lone_every_ms = number,
            other => bail!(
                "unknown option {other:?}; expected --repos, --delay-ms, --workers, --lone, --lone-every-ms or --pacing"
            ),
        }
    }
    if options.repos == 0 || options.workers == 0 || options.lone == 0 {
        bail!("--repos, --workers and --lone must be at least 1");
    }
    options.lone = options.lone.min(options.repos);
    if options.repos > 1000 {
        bail!("--repos is at most 1000 (the names are bench/r000 .. bench/r999)");
    }
    Ok(options)
}

struct NoAudit;

#[async_trait::async_trait]
impl AuditLog for NoAudit {
    async fn append(&self, _record: &AuditRecord) -> Result<(), AuditError> {
        Ok(())
    }
}

/// The system clock in whole seconds, as `mp serve` reads it.
struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        system_now()
    }
}

fn system_now() -> Timestamp {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(0));
    Timestamp::from_unix_seconds(seconds)
        .unwrap_or_else(|_| unreachable!("the system clock is within Timestamp's range"))
}

fn repo_name(text: &str) -> anyhow::Result<RepoName> {
    RepoName::parse(text).with_context(|| format!("{text:?} is not a repository name"))
}

/// The name of bench repository `index`.
fn bench_repo(index: usize) -> String {
    format!("bench/r{index:03}")
}

/// `template` under `name`, every commit SHA derived anew from the new name (as two
/// repositories do not share commits), its pull requests' labels and label events removed.
fn renamed(template: &Repo, name: RepoName) -> Repo {
    let shas: BTreeMap<CommitSha, CommitSha> = template
        .commits
        .iter()
        .map(|c| (c.sha.clone(), commit_sha(&name, &c.id)))
        .collect();
    let sha = |old: &CommitSha| shas.get(old).cloned().unwrap_or_else(|| old.clone());
    let mut repo = template.clone();
    repo.name = name;
    for commit in &mut repo.commits {
        commit.sha = sha(&commit.sha);
        commit.parents = commit.parents.iter().map(sha).collect();
    }
    for head in repo.branches.values_mut() {
        *head = sha(head);
    }
    for pull in &mut repo.pulls {
        pull.head_sha = sha(&pull.head_sha);
        pull.base_sha = sha(&pull.base_sha);
        pull.commits = pull.commits.iter().map(sha).collect();
        for push in &mut pull.pushes {
            push.before = push.before.as_ref().map(sha);
            push.after = push.after.as_ref().map(sha);
        }
        pull.labels.clear();
        pull.events.clear();
    }
    repo
}

/// The benchmark's world: `repos` copies of the drain world's repository with one agent's
/// one pull request, which adds a documentation file (Quadrant A), unlabelled; the drain
/// world's governance repository as `bench/governance`; all of them supervised, merging on.
fn bench_world(repos: usize) -> anyhow::Result<World> {
    let mut world = drain_world(&DrainSpec {
        agents: 1,
        per_agent: 1,
        ..DrainSpec::default()
    });
    let [template, governance] = <[Repo; 2]>::try_from(std::mem::take(&mut world.repos))
        .map_err(|repos| anyhow::anyhow!("the drain world has {} repositories", repos.len()))?;
    let mut template = template;
    for pull in &mut template.pulls {
        for file in &mut pull.files {
            file.change.path = "docs/notes/change-1.md".to_owned();
            file.content = Some("A note.\n".to_owned());
        }
    }
    for index in 0..repos {
        world
            .repos
            .push(renamed(&template, repo_name(&bench_repo(index))?));
    }
    world
        .repos
        .push(renamed(&governance, repo_name(GOVERNANCE)?));
    let names: Vec<String> = (0..repos).map(bench_repo).collect();
    world.config.insert(
        "projects.yml".to_owned(),
        format!(
            "governance_repo: {GOVERNANCE}\nsupervised_repos: [{}]\n",
            names.join(", ")
        ),
    );
    // The served world runs on the system clock; so does the check of it.
    world.now = system_now();
    Ok(world)
}

fn load_config(world: &World) -> anyhow::Result<Config> {
    let files: ConfigFiles = world
        .config
        .iter()
        .map(|(n, t)| (n.clone(), t.clone()))
        .collect();
    config::load(&files)
        .config
        .context("the benchmark world's configuration is invalid")
}

fn owner() -> anyhow::Result<Login> {
    Login::parse(DRAIN_OWNER).context("the drain owner is a login")
}

/// One tick over the in-memory GitHub: every pull request blocked by C1 alone; then the
/// owner labels the first one and the next tick merges it.
fn check_world(world: &World, repos: usize) -> anyhow::Result<()> {
    let config = load_config(world)?;
    let options = TickOptions::from_config(&config);
    let github = MemoryGitHub::new(world.clone());
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    let now = world.now;
    let report = runtime
        .block_on(tick::run_tick(&github, &NoAudit, &config, &options, now))
        .map_err(|e| anyhow::anyhow!("the check tick failed closed: {e}"))?;
    for index in 0..repos {
        let pr = format!("{}#1", bench_repo(index));
        let outcome = report
            .outcomes
            .iter()
            .find(|o| o.pr == pr)
            .with_context(|| format!("the check tick did not evaluate {pr}"))?;
        let blocking: Vec<&ConditionId> = outcome
            .gate
            .iter()
            .flat_map(|g| g.blocking())
            .map(|r| &r.id)
            .collect();
        if outcome.action != PrAction::Blocked
            || blocking.is_empty()
            || blocking.iter().any(|id| **id != ConditionId::C1)
        {
            bail!(
                "{pr} must be blocked by the missing label (C1) alone, but the tick says {}: {} (blocking: {blocking:?})",
                outcome.action,
                outcome.detail
            );
        }
    }
    let first = repo_name(&bench_repo(0))?;
    github
        .apply_label_as(&first, PrNumber::new(1), READY_TO_MERGE, &owner()?)
        .map_err(|e| anyhow::anyhow!("labelling {first}#1: {e}"))?;
    let later = now.plus_seconds(60);
    github.set_now(later);
    let report = runtime
        .block_on(tick::run_tick(&github, &NoAudit, &config, &options, later))
        .map_err(|e| anyhow::anyhow!("the second check tick failed closed: {e}"))?;
    let pr = format!("{first}#1");
    match report.outcomes.iter().find(|o| o.pr == pr) {
        Some(outcome) if matches!(outcome.action, PrAction::Merged { .. }) => Ok(()),
        Some(outcome) => bail!(
            "{pr} must merge once labelled, but the tick says {}: {}",
            outcome.action,
            outcome.detail
        ),
        None => bail!("the second check tick did not evaluate {pr}"),
    }
}

/// Requests and 304 answers per route.
type Counts = BTreeMap<String, (u64, u64)>;

/// The bot's requests so far by route: the owner's labels (`_loopback/label`) are not the
/// bot's, and spend nothing.
fn counts(server: &LoopbackServer) -> Counts {
    server
        .requests()
        .into_iter()
        .filter(|(route, _)| !route.ends_with("/_loopback/label"))
        .map(|(route, count)| (route, (count.requests, count.not_modified)))
        .collect()
}

fn difference(before: &Counts, after: &Counts) -> Counts {
    after
        .iter()
        .map(|(route, (requests, not_modified))| {
            let (r0, n0) = before.get(route).copied().unwrap_or((0, 0));
            (route.clone(), (requests - r0, not_modified - n0))
        })
        .filter(|(_, (requests, _))| *requests > 0)
        .collect()
}

/// Requests and 304s of `counts`, over every route.
fn totals(counts: &Counts) -> (u64, u64) {
    counts
        .values()
        .fold((0, 0), |(r, n), (requests, nm)| (r + requests, n + nm))
}

/// The value of the metric line that starts with `name ` (e.g. `mp_serve_ticks_total`).
fn metric(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|value| value.trim().parse().ok())
}

/// The loopback server and the service over it, each on its own runtime.
struct Rig {
    server: LoopbackServer,
    service: Service,
    http: reqwest::Client,
    stop: watch::Sender<bool>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    /// Where the service listens.
    service_addr: SocketAddr,
    /// Deliveries the benchmark sent itself, to number them.
    sent_deliveries: std::sync::atomic::AtomicU64,
    repos: usize,
    delay_ms: u64,
    /// The start-up: `start()` and the first resync.
    startup: Resync,
}

/// What one resync cost.
#[derive(Debug, Clone)]
struct Resync {
    wall: Duration,
    counts: Counts,
}

impl Rig {
    /// Serves `world` with the delay, starts the service on `service_rt` and waits for its
    /// start-up resync.
    async fn start(world: World, options: &Options, service_rt: &Handle) -> anyhow::Result<Self> {
        let repos = options.repos;
        let config = load_config(&world)?;
        let listener = service_rt
            .spawn(tokio::net::TcpListener::bind(SocketAddr::from((
                [127, 0, 0, 1],
                0,
            ))))
            .await??;
        let service_addr = listener.local_addr()?;
        let faults = if options.delay_ms == 0 {
            FaultScript::default()
        } else {
            FaultScript {
                rules: vec![FaultRule {
                    route: "*".to_owned(),
                    call: 0,
                    fault: Fault::Delay {
                        millis: options.delay_ms,
                    },
                }],
            }
        };
        let target = WebhookTarget {
            url: format!("http://{service_addr}/webhook"),
            secret: SECRET.to_owned(),
        };
        let server = LoopbackServer::bind_with_webhooks(
            world,
            faults,
            SocketAddr::from(([127, 0, 0, 1], 0)),
            ServerClock::Real,
            target,
        )
        .await?;
        let mut rest = RestConfig::new(server.base_url(), Credentials::Token(Secret::new(TOKEN)));
        rest.revert = RevertMode::LoopbackExtension;
        rest.token_app_slug = Some(config.env().bot_app_slug().to_owned());
        // As shipped: paced at GitHub's points budget (the default) unless asked not to,
        // and reading pull requests the way `env.yml` `reads` says (GraphQL by default).
        if !options.pacing {
            rest.points_per_minute = None;
        }
        rest.reads = match config.env().reads() {
            config::ReadSource::Rest => mp_github::rest::ReadPath::Rest,
            _ => mp_github::rest::ReadPath::Graphql,
        };
        let client = Arc::new(RestGitHub::new(rest)?);
        let tick_options = TickOptions::from_config(&config);
        let secret = WebhookSecret::new(SECRET).context("an empty webhook secret")?;
        let mut settings = Settings::new(config, tick_options, secret);
        settings.workers = options.workers;
        // Only the start-up resync runs on its own; the idle ones are asked for.
        settings.resync_every = Duration::from_secs(24 * 3600);
        let service = Service::new(client, Arc::new(NoAudit), Arc::new(SystemClock), settings);
        let (stop, stopped) = watch::channel(false);
        let until_stopped = |mut rx: watch::Receiver<bool>| async move {
            let _ = rx.wait_for(|stop| *stop).await;
        };
        let mut tasks = Vec::new();
        let serving = axum::serve(listener, service.router())
            .with_graceful_shutdown(until_stopped(stopped.clone()))
            .into_future();
        tasks.push(service_rt.spawn(async move {
            let _ = serving.await;
        }));
        let started = Instant::now();
        let starting = service.clone();
        service_rt
            .spawn(async move { starting.start().await })
            .await?
            .context("the service did not start")?;
        let running = service.clone();
        tasks.push(service_rt.spawn(async move {
            running.run(until_stopped(stopped)).await;
        }));
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()?;
        let mut rig = Self {
            server,
            service,
            http,
            stop,
            tasks,
            service_addr,
            sent_deliveries: std::sync::atomic::AtomicU64::new(0),
            repos,
            delay_ms: options.delay_ms,
            startup: Resync {
                wall: Duration::ZERO,
                counts: Counts::new(),
            },
        };
        rig.wait_for_ticks(1).await?;
        let wall = started.elapsed();
        rig.settle().await;
        rig.startup = Resync {
            wall,
            counts: counts(&rig.server),
        };
        let merged = rig.merged().iter().filter(|m| **m).count();
        if merged > 0 {
            bail!("{merged} pull requests merged before any label");
        }
        Ok(rig)
    }

    /// Resyncs finished so far.
    fn ticks(&self) -> u32 {
        metric(&self.service.metrics_text(), "mp_serve_ticks_total").map_or(0, |n| n as u32)
    }

    /// Lanes (webhook jobs) finished so far.
    fn lanes(&self) -> u32 {
        metric(
            &self.service.metrics_text(),
            "mp_serve_jobs_total{job=\"lane\"}",
        )
        .map_or(0, |n| n as u32)
    }

    async fn wait_for_ticks(&self, ticks: u32) -> anyhow::Result<()> {
        let start = Instant::now();
        while self.ticks() < ticks {
            if start.elapsed() > RESYNC_TIMEOUT {
                bail!(
                    "resync {ticks} did not finish within {} s",
                    RESYNC_TIMEOUT.as_secs()
                );
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        Ok(())
    }

    /// Waits until every webhook went out and the server saw no request for a while (a
    /// running job sends one at least every few delays).
    async fn settle(&self) {
        let quiet = Duration::from_millis(250 + 25 * self.delay_ms);
        let mut last = self.server.total_requests();
        let mut quiet_since = Instant::now();
        loop {
            tokio::time::sleep(Duration::from_millis(25)).await;
            let now = self.server.total_requests();
            if now != last || self.server.webhook_deliveries().pending() > 0 {
                last = now;
                quiet_since = Instant::now();
            } else if quiet_since.elapsed() >= quiet {
                return;
            }
        }
    }

    /// Whether each bench repository's pull request is merged (as seen now).
    fn merged(&self) -> Vec<bool> {
        let repos = self.repos;
        self.server.memory().read(|world| {
            world
                .repos
                .iter()
                .take(repos)
                .map(|repo| repo.pulls.first().is_some_and(|p| p.merged))
                .collect()
        })
    }

    /// The owner labels pull request 1 of bench repository `index`.
    fn label(&self, index: usize) -> impl Future<Output = anyhow::Result<()>> + Send + 'static {
        let url = format!(
            "{}/repos/{}/_loopback/label",
            self.server.base_url(),
            bench_repo(index)
        );
        let request = self
            .http
            .post(url)
            .header("authorization", format!("token {TOKEN}"))
            .header("content-type", "application/json")
            .body(
                serde_json::json!({"number": 1, "label": READY_TO_MERGE, "actor": DRAIN_OWNER})
                    .to_string(),
            );
        async move {
            let response = request.send().await?;
            let status = response.status();
            if !status.is_success() {
                bail!(
                    "the label of {} was answered {status}: {}",
                    bench_repo(index),
                    response.text().await.unwrap_or_default()
                );
            }
            Ok(())
        }
    }

    /// Labels `count` pull requests one at a time, each `every` after the one before (and
    /// after the merge of the one before), and waits for each merge. The first waits
    /// `every` too, after the start-up resync.
    async fn lone(
        &self,
        count: usize,
        every: Duration,
    ) -> anyhow::Result<(Vec<Duration>, Duration)> {
        let started = Instant::now();
        let mut latencies = Vec::with_capacity(count);
        let mut next = Instant::now() + every;
        for index in 0..count {
            tokio::time::sleep_until(next.into()).await;
            let sent = Instant::now();
            next = sent + every;
            let label = tokio::spawn(self.label(index));
            loop {
                let merged = self.server.memory().read(|world| {
                    world
                        .repos
                        .get(index)
                        .and_then(|r| r.pulls.first())
                        .is_some_and(|p| p.merged)
                });
                if merged {
                    latencies.push(sent.elapsed());
                    break;
                }
                if sent.elapsed() > MERGE_TIMEOUT {
                    bail!(
                        "{}#1 did not merge within {} s of its label",
                        bench_repo(index),
                        MERGE_TIMEOUT.as_secs()
                    );
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            label.await??;
        }
        Ok((latencies, started.elapsed()))
    }

    /// Labels every pull request, one every [`BURST_EVERY`], and times each merge.
    async fn burst(&self) -> anyhow::Result<(Vec<Duration>, Duration)> {
        let repos = self.repos;
        let sent: Arc<Mutex<Vec<Option<Instant>>>> = Arc::new(Mutex::new(vec![None; repos]));
        let labels: Vec<_> = (0..repos).map(|index| self.label(index)).collect();
        let start = tokio::time::Instant::now();
        let sending = {
            let sent = Arc::clone(&sent);
            tokio::spawn(async move {
                let mut posts = Vec::new();
                for (index, label) in labels.into_iter().enumerate() {
                    let at = start + BURST_EVERY * u32::try_from(index).unwrap_or(u32::MAX);
                    tokio::time::sleep_until(at).await;
                    if let Ok(mut sent) = sent.lock() {
                        sent[index] = Some(Instant::now());
                    }
                    posts.push(tokio::spawn(label));
                }
                for post in posts {
                    post.await??;
                }
                anyhow::Ok(())
            })
        };
        let mut merged_at: Vec<Option<Instant>> = vec![None; repos];
        let deadline = start.into_std() + BURST_EVERY * u32::try_from(repos)? + MERGE_TIMEOUT;
        while merged_at.iter().any(Option::is_none) {
            let now = Instant::now();
            for (slot, merged) in merged_at.iter_mut().zip(self.merged()) {
                if slot.is_none() && merged {
                    *slot = Some(now);
                }
            }
            if now > deadline {
                let waiting = merged_at.iter().filter(|m| m.is_none()).count();
                bail!("{waiting} pull requests of the burst did not merge in time");
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        sending.await??;
        let sent = sent
            .lock()
            .map_err(|_| anyhow::anyhow!("the label task panicked"))?
            .clone();
        let latencies = sent
            .iter()
            .zip(&merged_at)
            .map(|(sent, merged)| match (sent, merged) {
                (Some(sent), Some(merged)) => Ok(merged.saturating_duration_since(*sent)),
                _ => bail!("a pull request merged without its label being sent"),
            })
            .collect::<anyhow::Result<Vec<Duration>>>()?;
        let last = merged_at.iter().flatten().max().copied();
        let wall = last.map_or(Duration::ZERO, |last| {
            last.saturating_duration_since(start.into_std())
        });
        Ok((latencies, wall))
    }

    /// Asks for a resync (as an `installation_repositories` delivery does), waits for it
    /// and for what it set off, and counts its requests.
    async fn resync(&self) -> anyhow::Result<Resync> {
        self.settle().await;
        let before = counts(&self.server);
        let ticks = self.ticks();
        let delivery = self
            .sent_deliveries
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        // Two of GitHub's deliveries of distinct events never carry the same body (the
        // service dedupes by the body's hash, decisions/0068): the sender's id tells these
        // apart, as the real payload's repositories and installation would.
        let body = serde_json::json!({
            "action": "added",
            "repositories_added": [],
            "repositories_removed": [],
            "sender": {"login": "bench-owner", "id": delivery},
        })
        .to_string();
        let signature = WebhookSecret::new(SECRET)
            .context("an empty webhook secret")?
            .sign(body.as_bytes());
        let started = Instant::now();
        let url = format!("http://{}/webhook", self.service_addr);
        let response = self
            .http
            .post(url)
            .header("content-type", "application/json")
            .header("x-github-event", "installation_repositories")
            .header("x-github-delivery", format!("bench-resync-{delivery}"))
            .header("x-hub-signature-256", signature)
            .body(body)
            .send()
            .await?;
        if response.status() != reqwest::StatusCode::ACCEPTED {
            bail!(
                "the resync delivery was answered {}: {}",
                response.status(),
                response.text().await.unwrap_or_default()
            );
        }
        self.wait_for_ticks(ticks + 1).await?;
        let wall = started.elapsed();
        self.settle().await;
        Ok(Resync {
            wall,
            counts: difference(&before, &counts(&self.server)),
        })
    }

    async fn stop(self) {
        let _ = self.stop.send(true);
        for task in self.tasks {
            let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
        }
        self.server.shutdown().await;
    }
}

/// One latency mode's figures.
#[derive(Debug, Clone)]
struct Latency {
    name: &'static str,
    /// Label-to-merge times, in label order.
    latencies: Vec<Duration>,
    /// Labels sent.
    of: usize,
    /// From the first label to the last merge.
    wall: Duration,
    /// Lanes the service ran during the mode.
    lanes: u32,
    /// Requests the server answered during the mode (and until the service went quiet).
    counts: Counts,
}

/// Everything one run measured.
#[derive(Debug, Clone)]
struct Measured {
    modes: Vec<Latency>,
    startup: Resync,
    idle: Vec<Resync>,
    /// What the burst spent while it drained.
    burst_points: Points,
}

async fn measure(world: World, options: &Options, service_rt: &Handle) -> anyhow::Result<Measured> {
    let mut modes = Vec::new();

    let rig = Rig::start(world.clone(), options, service_rt).await?;
    let before = (counts(&rig.server), rig.lanes());
    let (latencies, wall) = rig
        .lone(options.lone, Duration::from_millis(options.lone_every_ms))
        .await?;
    rig.settle().await;
    modes.push(Latency {
        name: "lone labels",
        of: options.lone,
        latencies,
        wall,
        lanes: rig.lanes() - before.1,
        counts: difference(&before.0, &counts(&rig.server)),
    });
    rig.stop().await;

    let rig = Rig::start(world, options, service_rt).await?;
    let startup = rig.startup.clone();
    let before = (counts(&rig.server), rig.lanes());
    let (latencies, wall) = rig.burst().await?;
    let drained = difference(&before.0, &counts(&rig.server));
    rig.settle().await;
    modes.push(Latency {
        name: "burst, one label every 50 ms",
        of: options.repos,
        latencies,
        wall,
        lanes: rig.lanes() - before.1,
        counts: difference(&before.0, &counts(&rig.server)),
    });
    let burst_points = Points::of(&drained, wall);
    let mut idle = Vec::new();
    for _ in 0..IDLE_RESYNCS {
        idle.push(rig.resync().await?);
    }
    rig.stop().await;
    Ok(Measured {
        modes,
        startup,
        idle,
        burst_points,
    })
}

/// The points the bot spent against GitHub's secondary limits over a window.
#[derive(Debug, Clone, Copy, Default)]
struct Points {
    rest: u64,
    graphql: u64,
    minutes: f64,
}

impl Points {
    /// The points of `counts`, spent over `wall`: a REST `GET` or `HEAD` 1, any other REST
    /// method 5, a GraphQL request 1 (mp sends queries only). A 304 spends no primary
    /// rate limit, but GitHub does not say it spends no secondary points, so it counts.
    fn of(counts: &Counts, wall: Duration) -> Self {
        let mut points = Self {
            minutes: wall.as_secs_f64() / 60.0,
            ..Self::default()
        };
        for (route, (requests, _)) in counts {
            if route == "POST /graphql" {
                points.graphql += requests;
            } else if route.starts_with("GET ") || route.starts_with("HEAD ") {
                points.rest += requests;
            } else {
                points.rest += 5 * requests;
            }
        }
        points
    }

    fn per_minute(points: u64, minutes: f64) -> f64 {
        if minutes > 0.0 {
            points as f64 / minutes
        } else {
            0.0
        }
    }
}

/// The nearest-rank percentile `p` (0 < p <= 100) of sorted `values`.
fn percentile(sorted: &[Duration], p: u32) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = (sorted.len() * p as usize).div_ceil(100).max(1);
    sorted[rank.min(sorted.len()) - 1]
}

fn ms(duration: Duration) -> String {
    format!("{} ms", duration.as_millis())
}

fn render(options: &Options, measured: &Measured) -> String {
    let Options {
        repos,
        delay_ms,
        workers,
        lone,
        lone_every_ms,
        pacing,
    } = options;
    let mut out = String::new();
    let pacing = if *pacing {
        format!(
            "paced at {} REST points a minute (90 % budgeted)",
            mp_github::rest::GITHUB_REST_POINTS_PER_MINUTE
        )
    } else {
        "pacing off".to_owned()
    };
    let _ = writeln!(
        out,
        "`mp serve`, owner's label to merge: {repos} repositories x 1 pull request, \
         {delay_ms} ms added to every GitHub request, {workers} workers, {pacing}; \
         {lone} lone labels {lone_every_ms} ms apart\n"
    );
    let _ = writeln!(
        out,
        "| mode | merged | p50 | p90 | p99 | max | first label to last merge | lanes run | requests per merge [spending] |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for mode in &measured.modes {
        let mut sorted = mode.latencies.clone();
        sorted.sort();
        let (requests, not_modified) = totals(&mode.counts);
        let merges = mode.latencies.len().max(1) as f64;
        let _ = writeln!(
            out,
            "| {} | {}/{} | {} | {} | {} | {} | {:.1} s | {} | {:.1} [{:.1}] |",
            mode.name,
            mode.latencies.len(),
            mode.of,
            ms(percentile(&sorted, 50)),
            ms(percentile(&sorted, 90)),
            ms(percentile(&sorted, 99)),
            ms(sorted.last().copied().unwrap_or_default()),
            mode.wall.as_secs_f64(),
            mode.lanes,
            requests as f64 / merges,
            (requests - not_modified) as f64 / merges,
        );
    }

    let points = measured.burst_points;
    let rest = Points::per_minute(points.rest, points.minutes);
    let graphql = Points::per_minute(points.graphql, points.minutes);
    let _ = writeln!(
        out,
        "\nWhile the burst drained ({:.1} min): {} REST points ({rest:.0} a minute, {:.0} % of {}) \
         and {} GraphQL points ({graphql:.0} a minute, {:.0} % of {GRAPHQL_POINTS_PER_MINUTE})",
        points.minutes,
        points.rest,
        100.0 * rest / f64::from(mp_github::rest::GITHUB_REST_POINTS_PER_MINUTE),
        mp_github::rest::GITHUB_REST_POINTS_PER_MINUTE,
        points.graphql,
        100.0 * graphql / f64::from(GRAPHQL_POINTS_PER_MINUTE),
    );
    let _ = writeln!(
        out,
        "\nResyncs (whole ticks), the burst's service: requests, 304s (free) and requests \
         spending the rate limit\n"
    );
    let _ = writeln!(out, "| resync | wall time | requests | 304 | spending |");
    let _ = writeln!(out, "|---|---:|---:|---:|---:|");
    let mut rows: Vec<(String, &Resync)> = vec![(
        "start-up (`start()` + first resync)".to_owned(),
        &measured.startup,
    )];
    for (index, resync) in measured.idle.iter().enumerate() {
        let name = match index {
            0 => "1st after the events".to_owned(),
            i if i + 1 == measured.idle.len() => format!("{} (warm)", ordinal(i + 1)),
            i => ordinal(i + 1),
        };
        rows.push((name, resync));
    }
    for (name, resync) in &rows {
        let (requests, not_modified) = totals(&resync.counts);
        let _ = writeln!(
            out,
            "| {name} | {} | {requests} | {not_modified} | {} |",
            ms(resync.wall),
            requests - not_modified
        );
    }
    if let Some(warm) = measured.idle.last() {
        let (requests, not_modified) = totals(&warm.counts);
        let _ = writeln!(
            out,
            "| **idle hour** ({RESYNCS_PER_HOUR} warm resyncs) | | **{}** | {} | **{}** |",
            requests * RESYNCS_PER_HOUR,
            not_modified * RESYNCS_PER_HOUR,
            (requests - not_modified) * RESYNCS_PER_HOUR
        );
        let _ = writeln!(
            out,
            "\n(plus {RESYNCS_PER_HOUR} renewals of the tick lease an hour, one `PUT` each, \
             not triggered in this run)\n"
        );
        let _ = writeln!(
            out,
            "| endpoint | per merge, lone labels | start-up | 1st after the events | warm |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---:|");
        let first = measured.idle.first().unwrap_or(warm);
        let merges = measured.modes.first();
        let columns = [&measured.startup.counts, &first.counts, &warm.counts];
        let mut routes: Vec<&String> = columns
            .iter()
            .copied()
            .chain(merges.map(|m| &m.counts))
            .flat_map(|c| c.keys())
            .collect();
        routes.sort();
        routes.dedup();
        for route in routes {
            let mut cells: Vec<String> = merges
                .iter()
                .map(|mode| {
                    let (requests, not_modified) =
                        mode.counts.get(route).copied().unwrap_or((0, 0));
                    let n = mode.latencies.len().max(1) as f64;
                    format!(
                        "{:.1} [{:.1}]",
                        requests as f64 / n,
                        (requests - not_modified) as f64 / n
                    )
                })
                .collect();
            cells.extend(columns.iter().map(|counts| {
                let (requests, not_modified) = counts.get(route).copied().unwrap_or((0, 0));
                format!("{requests} [{}]", requests - not_modified)
            }));
            let _ = writeln!(out, "| `{route}` | {} |", cells.join(" | "));
        }
    }
    out
}

fn ordinal(n: usize) -> String {
    match n {
        1 => "1st".to_owned(),
        2 => "2nd".to_owned(),
        3 => "3rd".to_owned(),
        n => format!("{n}th"),
    }
}

/// Runs the benchmark and prints the tables.
pub fn run(args: &[&str]) -> anyhow::Result<()> {
    let options = parse(args)?;
    let world = bench_world(options.repos)?;
    check_world(&world, options.repos)?;
    // GitHub and the service do not share threads: each has the two `mp serve` runs on.
    let github_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("loopback-github")
        .enable_all()
        .build()?;
    let service_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("mp-serve")
        .enable_all()
        .build()?;
    let measured = github_rt.block_on(measure(world, &options, service_rt.handle()))?;
    let table = render(&options, &measured);
    #[allow(clippy::print_stdout)]
    {
        print!("{table}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_default_to_the_issue_and_refuse_nonsense() {
        assert_eq!(parse(&[]).expect("defaults"), Options::default());
        let options = parse(&[
            "--repos",
            "7",
            "--delay-ms",
            "0",
            "--workers",
            "4",
            "--lone",
            "9",
            "--pacing",
            "off",
        ])
        .expect("valid options");
        assert_eq!(
            options,
            Options {
                repos: 7,
                delay_ms: 0,
                workers: 4,
                lone: 7,
                lone_every_ms: 4000,
                pacing: false,
            }
        );
        assert!(parse(&["--pacing", "maybe"]).is_err());
        assert!(parse(&["--repos"]).is_err());
        assert!(parse(&["--workers", "0"]).is_err());
        assert!(parse(&["--prs", "3"]).is_err());
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let values: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(percentile(&values, 50), Duration::from_millis(50));
        assert_eq!(percentile(&values, 99), Duration::from_millis(99));
        assert_eq!(percentile(&values[..10], 99), Duration::from_millis(10));
        assert_eq!(percentile(&values[..1], 50), Duration::from_millis(1));
    }

    /// The world's promise, checked by the benchmark before it times anything: blocked by
    /// the missing label alone, merged once the owner labels.
    #[test]
    fn every_pull_request_waits_for_the_label_alone() {
        let world = bench_world(3).expect("the world builds");
        check_world(&world, 3).expect("blocked by C1 alone, merged once labelled");
        let shas: std::collections::BTreeSet<_> = world
            .repos
            .iter()
            .flat_map(|r| r.pulls.iter().map(|p| p.head_sha.clone()))
            .collect();
        assert_eq!(shas.len(), 3, "each repository has its own commits");
    }

    /// The whole benchmark on a small world without delay: every label merges, and the
    /// warm resync is answered 304 throughout, so it spends no rate limit.
    #[test]
    fn the_bench_runs_end_to_end_on_a_small_world() {
        let options = Options {
            repos: 2,
            delay_ms: 0,
            workers: 2,
            lone: 2,
            lone_every_ms: 0,
            pacing: true,
        };
        let world = bench_world(options.repos).expect("the world builds");
        let github_rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime");
        let service_rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime");
        let measured = github_rt
            .block_on(measure(world, &options, service_rt.handle()))
            .expect("the benchmark runs");
        for mode in &measured.modes {
            assert_eq!(mode.latencies.len(), 2, "{mode:?}");
        }
        // A warm resync's REST requests are all answered 304; GraphQL has no conditional
        // requests, so its queries (one per repository's pull requests) are what it spends.
        let warm = measured.idle.last().expect("idle resyncs");
        let mut rest = warm.counts.clone();
        let graphql = rest.remove("POST /graphql").unwrap_or((0, 0));
        let (requests, not_modified) = totals(&rest);
        assert!(requests > 0, "{warm:?}");
        assert_eq!(requests, not_modified, "{warm:?}");
        assert_eq!(graphql, (2, 0), "one query per repository: {warm:?}");
        let text = render(&options, &measured);
        assert!(text.contains("| lone labels | 2/2 |"), "{text}");
        assert!(text.contains("While the burst drained"), "{text}");
        assert!(text.contains("**idle hour**"), "{text}");
    }
}
