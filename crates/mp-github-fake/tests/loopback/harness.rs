//! Shared helpers: load a scenario, run one tick on the in-memory adapter or through the
//! REST client against a loopback server, and read the results back.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use mp_core::config::{self, Config, ConfigFiles};
use mp_core::ids::{CommitSha, RepoName, Timestamp};
use mp_core::port::Write;
use mp_core::port::{AuditError, AuditLog, AuditRecord, GitHubHistory};
use mp_core::state::{BOT_STATE_BRANCH, Layer, WATERMARKS_PATH, Watermarks};
use mp_github::rest::{
    Credentials, ReadPath, RestConfig, RestGitHub, RetryPolicy, RevertMode, Secret, VirtualClock,
};
use mp_github_fake::{FaultScript, LoopbackServer, MemoryGitHub, World};
use mp_tick::{self as tick, FullTickReport, TickOptions};

/// The token the loopback client sends; tests check it never leaks.
pub const TOKEN: &str = "ghs_LOOPBACKSENTINEL0123456789";

/// The client timeout of a tick under a `delay` fault, which sleeps longer than this.
pub const CLIENT_TIMEOUT: Duration = Duration::from_millis(250);

/// The client timeout of every other tick: long enough that a busy machine never times a
/// request out, so only the faults a test injects happen.
pub const PATIENT_TIMEOUT: Duration = Duration::from_secs(30);

/// Every scenario world, sorted by name, except those with a fault script (a `faults`
/// file): the CLI's scenario test runs those through this server already, and the
/// in-memory adapter has no faults to compare with.
pub fn scenario_worlds() -> Vec<(String, PathBuf)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/scenarios");
    let mut found: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path().join("world.yaml"))
        .filter(|p| p.is_file())
        .filter(|p| !p.with_file_name("faults").is_file())
        .map(|p| {
            let name = p
                .parent()
                .and_then(Path::file_name)
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            (name, p)
        })
        .collect();
    found.sort();
    assert!(found.len() >= 30, "only {} scenarios found", found.len());
    found
}

/// A world with its configuration and tick options.
pub struct Scenario {
    /// The world as loaded.
    pub world: World,
    /// The validated configuration.
    pub config: Config,
    /// Options from the configuration and the world's receipt key.
    pub options: TickOptions,
    /// The instants of its ticks: the world's `now`, then more when the scenario
    /// directory holds a file `ticks` reading `<N> every <D>` (`D` in `s`, `m` or `h`).
    pub instants: Vec<Timestamp>,
}

/// The tick instants of the scenario at `path` (see [`Scenario::instants`]).
fn instants(world: &World, path: &Path) -> Vec<Timestamp> {
    let Some(text) = path
        .parent()
        .and_then(|dir| std::fs::read_to_string(dir.join("ticks")).ok())
    else {
        return vec![world.now];
    };
    let words: Vec<&str> = text.split_whitespace().collect();
    let [count, "every", every] = words.as_slice() else {
        panic!("{}: a ticks file reads `<N> every <D>`", path.display());
    };
    let count: i64 = count.parse().expect("a whole number of ticks");
    let (number, unit) = every.split_at(every.len() - 1);
    let scale = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        other => panic!("{}: unknown unit {other:?}", path.display()),
    };
    let step = number.parse::<i64>().expect("a whole number") * scale;
    (0..count)
        .map(|i| world.now.plus_seconds(i * step))
        .collect()
}

impl Scenario {
    /// Loads one scenario world.
    pub fn load(name: &str, path: &Path) -> Self {
        let world = mp_github_fake::load_world(path).unwrap_or_else(|e| panic!("{name}: {e}"));
        let files: ConfigFiles = world
            .config
            .iter()
            .map(|(n, t)| (n.clone(), t.clone()))
            .collect();
        let config = config::load(&files)
            .config
            .unwrap_or_else(|| panic!("{name}: the configuration is invalid"));
        let mut options = TickOptions::from_config(&config);
        if let Some(key) = world.receipt_key.clone() {
            options = options.with_receipt_key(key);
        }
        if let Some(previous) = world.previous_receipt_key.clone() {
            options = options.with_previous_receipt_key(previous);
        }
        Self {
            instants: instants(&world, path),
            world,
            config,
            options,
        }
    }
}

/// An audit log kept in memory.
#[derive(Debug, Default)]
pub struct MemoryAudit(Mutex<Vec<AuditRecord>>);

impl MemoryAudit {
    /// The records as JSON lines.
    pub fn lines(&self) -> Vec<String> {
        self.0
            .lock()
            .map(|r| r.iter().map(AuditRecord::to_json_line).collect())
            .unwrap_or_default()
    }
}

#[async_trait::async_trait]
impl AuditLog for MemoryAudit {
    async fn append(&self, record: &AuditRecord) -> Result<(), AuditError> {
        self.0
            .lock()
            .map_err(|_| AuditError("poisoned".to_owned()))?
            .push(record.clone());
        Ok(())
    }
}

/// What one tick did.
#[derive(Debug)]
pub struct TickResult {
    /// The report, or the error's text when the tick failed closed.
    pub report: Result<FullTickReport, String>,
    /// The audit records.
    pub audit: Vec<String>,
}

impl TickResult {
    /// `(pr, action, detail)` of every outcome, or the error.
    pub fn outcomes(&self) -> Result<Vec<(String, String, String)>, String> {
        self.report.as_ref().map_err(Clone::clone).map(|report| {
            report
                .outcomes
                .iter()
                .map(|o| (o.pr.clone(), o.action.as_str().to_owned(), o.detail.clone()))
                .collect()
        })
    }
}

/// One tick over `github`.
pub async fn tick_over(github: &dyn GitHubHistory, scenario: &Scenario) -> TickResult {
    tick_at(github, scenario, scenario.world.now).await
}

/// One tick over `github` at `now` (the caller moves the world's clock).
pub async fn tick_at(
    github: &dyn GitHubHistory,
    scenario: &Scenario,
    now: Timestamp,
) -> TickResult {
    let audit = MemoryAudit::default();
    let report = tick::run_tick(github, &audit, &scenario.config, &scenario.options, now)
        .await
        .map_err(|e| e.to_string());
    TickResult {
        report,
        audit: audit.lines(),
    }
}

/// The REST client for a loopback server, with fast retries and a patient timeout.
pub fn client_for(server: &LoopbackServer) -> RestGitHub {
    client_reading(server, ReadPath::Rest)
}

/// [`client_for`] reading pull requests through `reads`.
pub fn client_reading(server: &LoopbackServer, reads: ReadPath) -> RestGitHub {
    client_timed(server, reads, PATIENT_TIMEOUT)
}

/// [`client_reading`] with the client timeout `timeout`.
pub fn client_timed(server: &LoopbackServer, reads: ReadPath, timeout: Duration) -> RestGitHub {
    let mut config = RestConfig::new(server.base_url(), Credentials::Token(Secret::new(TOKEN)));
    // An installation token: GitHub (and the server) do not say who it is.
    config.token_app_slug = Some(server.memory().read(|w| w.bot_slug.clone()));
    config.revert = RevertMode::LoopbackExtension;
    config.retry = RetryPolicy::fast();
    config.timeout = timeout;
    // The server's clock: its `delay` faults run this client's timeout out.
    config.sleeper = server.sleeper();
    // The loopback server has no points-per-minute limit to keep under.
    config.points_per_minute = None;
    config.reads = reads;
    RestGitHub::new(config).expect("the client builds")
}

/// Starts a loopback server over the scenario's world with `faults`.
/// The server of `scenario` with `faults`, on a [`VirtualClock`] that its clients share
/// ([`client_timed`]): a `delay` fault times a request out without a wall-clock wait.
pub async fn serve(scenario: &Scenario, faults: FaultScript) -> LoopbackServer {
    LoopbackServer::start_on(
        scenario.world.clone(),
        faults,
        std::sync::Arc::new(VirtualClock::new()),
    )
    .await
    .expect("the loopback server starts")
}

/// A multi-threaded runtime for one test.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// The watermarks the governance repository holds in `github`'s world, if readable.
pub async fn watermarks(github: &MemoryGitHub, scenario: &Scenario) -> Option<Watermarks> {
    let governance = scenario.config.projects().governance_repo();
    let file = github
        .file(governance, WATERMARKS_PATH, BOT_STATE_BRANCH)
        .await
        .ok()??;
    Watermarks::parse(&file.text).ok()
}

/// Whether `ancestor` is `sha` or one of its ancestors in `repo` of `world`.
pub fn is_ancestor(world: &World, repo: &RepoName, ancestor: &CommitSha, sha: &CommitSha) -> bool {
    let Some(found) = world.repo(repo) else {
        return false;
    };
    let mut stack = vec![sha.clone()];
    let mut seen = std::collections::BTreeSet::new();
    while let Some(next) = stack.pop() {
        if &next == ancestor {
            return true;
        }
        if !seen.insert(next.clone()) {
            continue;
        }
        if let Some(commit) = found.commit(&next) {
            stack.extend(commit.parents.iter().cloned());
        }
    }
    false
}

/// Every `(repo, layer)` watermark of a state.
pub fn marks(state: &Watermarks, world: &World) -> Vec<(RepoName, Layer, CommitSha)> {
    let mut out = Vec::new();
    for repo in &world.repos {
        for layer in Layer::ALL {
            if let Some(sha) = state.get(&repo.name, layer) {
                out.push((repo.name.clone(), layer, sha.clone()));
            }
        }
    }
    out
}

/// The merges in an action log: `(repo, number, head)`.
pub fn merges(actions: &[Write]) -> Vec<(String, u64, String)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Write::MergePull {
                repo,
                number,
                request,
                ..
            } => Some((repo.to_string(), number.get(), request.head_sha.to_string())),
            _ => None,
        })
        .collect()
}
