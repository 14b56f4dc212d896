//! `mp tick`: one tick against GitHub (`--config DIR`) or over a world file (`--world FILE`,
//! answered by the in-memory adapter or by the REST client over a loopback server).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use anyhow::{Context, bail};
use mp_core::approval::ReceiptKey;
use mp_core::gate::ConditionResult;
use mp_core::port::{DryRun, GitHubHistory, PlannedWrite, Recording};
use mp_core::tick::{self, FullTickReport, PrOutcome, TickError, TickOptions};
use mp_github::rest::{Credentials, EtagCache, RestConfig, RestGitHub, RevertMode, Secret};
use mp_github_fake::{Action, LoopbackServer, MemoryGitHub};
use serde_json::{Value, json};

use crate::Exit;
use crate::audit::CliAuditLog;
use crate::cli::{Adapter, Format, ReportKind, TickArgs};
use crate::commands::config_validate::read_config_dir;
use crate::skills_load;
use crate::skills_load::SkillCalls;
use crate::world;

/// The environment variable holding the approval-receipt key in live ticks.
pub const RECEIPT_KEY_VAR: &str = "MP_RECEIPT_KEY";

/// One JSON object per gate result: the condition, its code, its outcome and its line.
pub fn result_json(result: &ConditionResult) -> Value {
    json!({
        "condition": result.id.code(),
        "code": result.code(),
        "severity": result.severity.as_str(),
        "outcome": format!("{:?}", result.outcome).to_lowercase(),
        "line": result.to_string(),
    })
}

fn outcome_json(outcome: &PrOutcome) -> Value {
    let blocking: Vec<String> = outcome
        .gate
        .iter()
        .flat_map(|gate| gate.blocking().map(ToString::to_string))
        .collect();
    let warnings: Vec<String> = outcome
        .gate
        .iter()
        .flat_map(|gate| gate.warnings().map(ToString::to_string))
        .collect();
    json!({
        "pr": outcome.pr,
        "action": outcome.action.as_str(),
        "detail": outcome.detail,
        "quadrant": outcome.quadrant.map(|q| q.as_str()),
        "blocking": blocking,
        "warnings": warnings,
    })
}

/// Everything one world tick produced, ready to print or snapshot.
pub struct TickRun {
    /// The tick's own report.
    pub report: FullTickReport,
    /// The ordered writes: performed (in-memory) or planned (dry run), one line each.
    pub writes: Vec<String>,
    /// The same writes as JSON objects.
    pub writes_json: Vec<Value>,
    /// The audit records as JSON lines.
    pub audit: Vec<String>,
    /// Calls per endpoint.
    pub calls: std::collections::BTreeMap<String, u64>,
    /// HTTP totals when the REST client ran the tick.
    pub http: Option<Value>,
    /// Configuration warnings.
    pub config_warnings: Vec<String>,
    /// Whether the tick merged for real (`merge_enabled`).
    pub merge_mode: &'static str,
    /// The instant the tick ran at.
    pub now: String,
}

/// The writes of a tick: lines for people and JSON objects for machines.
type Writes = (Vec<String>, Vec<Value>);

fn planned_writes(planned: &[PlannedWrite]) -> Writes {
    let lines = planned.iter().map(ToString::to_string).collect();
    let json = planned
        .iter()
        .map(|w| json!({"action": w.code(), "planned": true, "line": w.to_string()}))
        .collect();
    (lines, json)
}

fn done_writes(done: &[PlannedWrite]) -> Writes {
    let lines = done.iter().map(PlannedWrite::done_line).collect();
    let json = done
        .iter()
        .map(|w| json!({"action": w.code(), "line": w.done_line()}))
        .collect();
    (lines, json)
}

fn performed_writes(actions: &[Action]) -> Writes {
    let lines = actions.iter().map(ToString::to_string).collect();
    let json = actions
        .iter()
        .map(|a| serde_json::to_value(a).unwrap_or(Value::Null))
        .collect();
    (lines, json)
}

/// What a tick needs besides the GitHub adapter.
struct TickInputs<'a> {
    audit: &'a CliAuditLog,
    config: &'a mp_core::config::Config,
    options: &'a TickOptions,
    now: mp_core::Timestamp,
    dry_run: bool,
    /// The adapter serves a copy of a world file that nothing keeps: a dry run may write
    /// to it, so that what it plans is exactly what the tick would do.
    throwaway: bool,
}

/// Runs the tick over `github`, through a dry run when asked. The planned writes of a dry
/// run are returned; performed writes are the adapter's business.
///
/// Over a throwaway world the dry run is the real tick, its writes listed as planned: a
/// merge moves `main`, a label counts, a receipt is read back, exactly as on GitHub. Over
/// GitHub itself, [`DryRun`] answers writes without making them.
async fn tick_over(
    github: &dyn GitHubHistory,
    inputs: &TickInputs<'_>,
) -> (Result<FullTickReport, TickError>, Option<Writes>) {
    if inputs.dry_run && inputs.throwaway {
        let recording = Recording::new(github);
        let result = tick::run_tick(
            &recording,
            inputs.audit,
            inputs.config,
            inputs.options,
            inputs.now,
        )
        .await;
        (result, Some(planned_writes(&recording.into_writes())))
    } else if inputs.dry_run {
        let dry = DryRun::with_history(github).at(inputs.now);
        let result = tick::run_tick(
            &dry,
            inputs.audit,
            inputs.config,
            inputs.options,
            inputs.now,
        )
        .await;
        (result, Some(planned_writes(&dry.into_planned_writes())))
    } else {
        let result = tick::run_tick(
            github,
            inputs.audit,
            inputs.config,
            inputs.options,
            inputs.now,
        )
        .await;
        (result, None)
    }
}

fn merge_mode_name(options: &TickOptions) -> &'static str {
    match options.merge_mode {
        tick::MergeMode::Merge => "merge",
        tick::MergeMode::Observe => "observe",
    }
}

/// The options with the CLI's progress attached: log events, and a bar on a terminal.
fn with_progress(options: TickOptions) -> TickOptions {
    let progress = crate::logging::CliProgress::new(crate::logging::CliProgress::wanted());
    options.with_progress(mp_core::tick::ProgressSink::new(std::sync::Arc::new(
        progress,
    )))
}

/// Logs the tick's outcome: one `tick finished` event with the counts, one `warn` event
/// per warning of the report.
fn log_tick(doc: &Value) {
    let count = |action: &str| {
        doc["outcomes"]
            .as_array()
            .map_or(0, |o| o.iter().filter(|o| o["action"] == action).count())
    };
    let warnings = doc["warnings"].as_array().cloned().unwrap_or_default();
    for warning in &warnings {
        tracing::warn!(
            warning = warning.as_str().unwrap_or_default(),
            "tick warning"
        );
    }
    tracing::info!(
        now = doc["now"].as_str().unwrap_or_default(),
        merge_mode = doc["merge_mode"].as_str().unwrap_or_default(),
        shard = doc["shard"].as_str(),
        merged = count("merged"),
        observe = count("observe"),
        blocked = count("blocked"),
        inbox = count("inbox"),
        skipped = count("skipped"),
        warnings = warnings.len(),
        "tick finished"
    );
}

fn run_tick(args: &TickArgs) -> anyhow::Result<WorldRuns> {
    match (&args.world, &args.config) {
        (Some(world), _) => world_ticks(args, world),
        (None, Some(dir)) => Ok(match live_tick(args, dir)? {
            Ok(run) => WorldRuns {
                runs: vec![run],
                failed: None,
            },
            Err(error) => WorldRuns {
                runs: Vec::new(),
                failed: Some(error),
            },
        }),
        (None, None) => bail!("give --world FILE or --config DIR"),
    }
}

/// The ticks over a world file that ran, and the failure that stopped the sequence early.
struct WorldRuns {
    runs: Vec<TickRun>,
    failed: Option<Failure>,
}

/// A tick that failed closed, with the writes GitHub accepted before it stopped (none in a
/// dry run), so the message never claims "nothing was written" when something was.
struct Failure {
    error: TickError,
    writes: Vec<String>,
}

impl Failure {
    fn new(error: TickError, writes: &Writes, dry_run: bool) -> Self {
        Self {
            error,
            writes: if dry_run {
                Vec::new()
            } else {
                writes.0.clone()
            },
        }
    }

    /// Exit 4 when another tick holds the lease, 3 for every other failure.
    fn exit(&self) -> Exit {
        match &self.error {
            TickError::Lease(mp_core::tick::lease::LeaseError::Held { .. }) => Exit::Busy,
            _ => Exit::FailedClosed,
        }
    }

    /// The error, then what was written before it.
    fn message(&self) -> String {
        if self.writes.is_empty() {
            return format!("{}; nothing was written", self.error);
        }
        let mut text = format!(
            "{}; {} write(s) were made before it failed:",
            self.error,
            self.writes.len()
        );
        for line in &self.writes {
            text.push_str("\n  ");
            text.push_str(line);
        }
        text
    }
}

/// Calls per route made since `before`.
fn calls_since(
    now: BTreeMap<String, u64>,
    before: &BTreeMap<String, u64>,
) -> BTreeMap<String, u64> {
    now.into_iter()
        .filter_map(|(route, count)| {
            let made = count - before.get(&route).copied().unwrap_or(0);
            (made > 0).then_some((route, made))
        })
        .collect()
}

/// `--ticks N` ticks over a world file, the i-th at `now + i × --every`, on the in-memory
/// adapter or through HTTP. The world carries over from tick to tick (with its simulated
/// CI); a tick that fails closed ends the sequence.
fn world_ticks(args: &TickArgs, path: &Path) -> anyhow::Result<WorldRuns> {
    let (mut loaded, now) = world::load(path, args.now.as_deref())?;
    if args.faults.is_some() && args.adapter != Adapter::Rest {
        bail!("--faults needs --adapter rest: faults are injected into the loopback server");
    }
    let faults = super::dev::read_faults(args.faults.as_deref())?;
    loaded.world.now = now;
    let every = args.every.seconds();
    let mut options = TickOptions::from_config(&loaded.config);
    if let Some(shard) = args.shard {
        options = options.with_shard(shard);
    }
    if let Some(key) = loaded.world.receipt_key.clone() {
        options = options.with_receipt_key(key);
    }
    let skill_calls = SkillCalls::default();
    options = options.with_skills(skills_load::from_world(
        &loaded.config,
        &loaded.world.config,
        &skill_calls,
    )?);
    options = with_progress(options);
    let merge_mode = merge_mode_name(&options);
    let config_warnings = loaded.warnings.clone();
    let config = loaded.config.clone();
    let dry_run = args.dry_run;
    let mut out = WorldRuns {
        runs: Vec::new(),
        failed: None,
    };
    // One tick's result with its writes, calls and HTTP totals, made a run.
    let mut finish = |at: mp_core::Timestamp,
                      audit: &CliAuditLog,
                      result: Result<FullTickReport, TickError>,
                      writes: Writes,
                      calls: BTreeMap<String, u64>,
                      http: Option<Value>|
     -> anyhow::Result<bool> {
        audit.append_lines(skill_calls.take().iter().map(|call| call.to_json_line(at)))?;
        match result {
            Ok(report) => {
                out.runs.push(TickRun {
                    report,
                    writes: writes.0,
                    writes_json: writes.1,
                    audit: audit.records().iter().map(|r| r.to_json_line()).collect(),
                    calls,
                    http,
                    config_warnings: config_warnings.clone(),
                    merge_mode,
                    now: at.to_string(),
                });
                Ok(true)
            }
            Err(error) => {
                out.failed = Some(Failure::new(error, &writes, dry_run));
                Ok(false)
            }
        }
    };
    let instants: Vec<mp_core::Timestamp> = (0..i64::from(args.ticks))
        .map(|i| now.plus_seconds(i * every))
        .collect();
    match args.adapter {
        Adapter::Memory => {
            let github = MemoryGitHub::new(loaded.world);
            let runtime = tokio::runtime::Builder::new_current_thread().build()?;
            for &at in &instants {
                github.set_now(at);
                let (actions_before, calls_before) = (github.actions().len(), github.calls());
                let audit = CliAuditLog::new(args.audit_log.clone());
                let inputs = TickInputs {
                    audit: &audit,
                    config: &config,
                    options: &options,
                    now: at,
                    dry_run: args.dry_run,
                    throwaway: true,
                };
                let (result, planned) = runtime.block_on(tick_over(&github, &inputs));
                let writes = planned.unwrap_or_else(|| {
                    performed_writes(github.actions().get(actions_before..).unwrap_or_default())
                });
                let calls = calls_since(github.calls(), &calls_before);
                if !finish(at, &audit, result, writes, calls, None)? {
                    break;
                }
            }
        }
        Adapter::Rest => {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()?;
            runtime.block_on(async {
                let server = LoopbackServer::start(loaded.world, faults)
                    .await
                    .context("starting the loopback server")?;
                let mut config_rest = RestConfig::new(
                    server.base_url(),
                    Credentials::Token(Secret::new("loopback-token")),
                );
                config_rest.revert = RevertMode::LoopbackExtension;
                // A simulated tick does not sleep: waits are milliseconds, and a wait the
                // server asks for (Retry-After, a secondary limit's minute) gives up at
                // once, as a wait past the live budget does.
                config_rest.retry = mp_github::rest::RetryPolicy::fast();
                // Nor does it pace: the loopback server has no points-per-minute limit.
                config_rest.points_per_minute = None;
                config_rest.reads = read_path(&config);
                let client = rest_client(config_rest, args.http_cache.as_deref())?;
                for &at in &instants {
                    server.memory().set_now(at);
                    let actions_before = server.memory().actions().len();
                    let calls_before = rest_calls(&client);
                    let audit = CliAuditLog::new(args.audit_log.clone());
                    let inputs = TickInputs {
                        audit: &audit,
                        config: &config,
                        options: &options,
                        now: at,
                        dry_run: args.dry_run,
                        throwaway: true,
                    };
                    let (result, planned) = tick_over(&client, &inputs).await;
                    let writes = planned.unwrap_or_else(|| {
                        performed_writes(
                            server
                                .memory()
                                .actions()
                                .get(actions_before..)
                                .unwrap_or_default(),
                        )
                    });
                    let calls = calls_since(rest_calls(&client), &calls_before);
                    let http = Some(http_json(&client));
                    if !finish(at, &audit, result, writes, calls, http)? {
                        break;
                    }
                }
                save_cache(&client, args.http_cache.as_deref())?;
                server.shutdown().await;
                anyhow::Ok(())
            })?;
        }
    }
    Ok(out)
}

/// The REST client with the ETag cache loaded from `cache`, when given.
fn rest_client(config: RestConfig, cache: Option<&Path>) -> anyhow::Result<RestGitHub> {
    let client = RestGitHub::new(config).context("building the REST client")?;
    let Some(path) = cache else {
        return Ok(client);
    };
    let (cache, warning) = EtagCache::load(path);
    if let Some(warning) = warning {
        #[allow(clippy::print_stderr)]
        {
            eprintln!("mp: warning: {warning}");
        }
    }
    Ok(client.with_cache(cache))
}

fn save_cache(client: &RestGitHub, path: Option<&Path>) -> anyhow::Result<()> {
    if let Some(path) = path {
        client
            .cache_snapshot()
            .save(path)
            .with_context(|| format!("writing the HTTP cache {}", path.display()))?;
    }
    Ok(())
}

/// The REST client's totals: requests, 304 answers, retries, failures, the rate limit and
/// the GraphQL points left as GitHub last reported them (`null` when not reported), and why
/// a GraphQL read fell back to REST, one line each.
fn http_json(client: &RestGitHub) -> Value {
    use mp_core::port::GitHub as _;
    let stats = client.stats();
    json!({
        "requests": stats.total_requests(),
        "not_modified": stats.total_not_modified(),
        "rate_limited_requests": stats.rate_limited_requests(),
        "retries": stats.total_retries(),
        "failures": stats.total_failures(),
        "rate_limit_remaining": client.rate_limit_remaining(),
        "graphql_remaining": client.graphql_remaining(),
        "graphql_fallbacks": client.graphql_fallbacks(),
    })
}

/// Requests per route as the REST client sent them (304 answers included).
fn rest_calls(client: &RestGitHub) -> BTreeMap<String, u64> {
    client
        .stats()
        .routes
        .iter()
        .map(|(route, stats)| (route.clone(), stats.requests))
        .collect()
}

/// Who holds the lease in the lease file: `what` on this host with the process id, e.g.
/// `mp tick on <host> pid <pid>` (the host from `HOSTNAME`, else `/etc/hostname`).
pub(crate) fn lease_holder(what: &str) -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "an unnamed host".to_owned());
    format!("{what} on {host} pid {}", std::process::id())
}

/// A live configuration: the loaded files and their warnings.
pub(crate) fn load_live_config(
    dir: &Path,
) -> anyhow::Result<(mp_core::config::Config, Vec<String>)> {
    let files = read_config_dir(dir)?;
    let report = mp_core::config::load(&files);
    let warnings: Vec<String> = report.warnings().map(ToString::to_string).collect();
    let Some(config) = report.config else {
        let lines: Vec<String> = report.errors().map(ToString::to_string).collect();
        bail!(
            "the configuration in {} is invalid:\n  {}",
            dir.display(),
            lines.join("\n  ")
        );
    };
    Ok((config, warnings))
}

/// The GitHub credentials of a live run, from the environment.
pub(crate) fn live_credentials() -> anyhow::Result<Credentials> {
    Credentials::from_env(|name| std::env::var(name).ok())?.ok_or_else(|| {
        anyhow::anyhow!(
            "no GitHub credentials: set MP_GITHUB_TOKEN, or MP_APP_ID with MP_APP_PRIVATE_KEY \
             or MP_APP_PRIVATE_KEY_PATH (see docs/deploy.md)"
        )
    })
}

/// The options of a live run: the configuration's, the shard, the receipt key from
/// [`RECEIPT_KEY_VAR`] and the user skills of `DIR/skills`.
pub(crate) fn live_options(
    config: &mp_core::config::Config,
    dir: &Path,
    shard: Option<mp_core::tick::Shard>,
    skill_calls: &SkillCalls,
) -> anyhow::Result<TickOptions> {
    let mut options = TickOptions::from_config(config);
    if let Some(shard) = shard {
        options = options.with_shard(shard);
    }
    if let Ok(text) = std::env::var(RECEIPT_KEY_VAR)
        && let Some(key) = ReceiptKey::new(text.into_bytes())
    {
        options = options.with_receipt_key(key);
    }
    Ok(options.with_skills(skills_load::from_dir(
        config,
        &dir.join("skills"),
        skill_calls,
    )?))
}

/// The REST client of a live run against `api_url`.
pub(crate) fn live_rest_config(
    api_url: &str,
    config: &mp_core::config::Config,
    credentials: Credentials,
) -> RestConfig {
    let mut rest = RestConfig::new(api_url.to_owned(), credentials);
    // An installation token (Actions' GITHUB_TOKEN) cannot ask GitHub who it is.
    rest.token_app_slug = Some(config.env().bot_app_slug().to_owned());
    rest.reads = read_path(config);
    rest
}

/// The REST client's read path from `env.yml` `reads`.
pub(crate) fn read_path(config: &mp_core::config::Config) -> mp_github::rest::ReadPath {
    match config.env().reads() {
        mp_core::config::ReadSource::Rest => mp_github::rest::ReadPath::Rest,
        _ => mp_github::rest::ReadPath::Graphql,
    }
}

/// A tick against GitHub: configuration from a directory, credentials from the
/// environment, the clock from the system.
fn live_tick(args: &TickArgs, dir: &Path) -> anyhow::Result<Result<TickRun, Failure>> {
    let (config, warnings) = load_live_config(dir)?;
    let credentials = live_credentials()?;
    let skill_calls = SkillCalls::default();
    let options = live_options(&config, dir, args.shard, &skill_calls)?;
    let options = with_progress(options).with_lease_holder(lease_holder("mp tick"));
    let now = mp_core::Timestamp::from_unix_seconds(jiff::Timestamp::now().as_second())
        .context("reading the system clock")?;
    let audit = CliAuditLog::new(args.audit_log.clone());
    let inputs = TickInputs {
        audit: &audit,
        config: &config,
        options: &options,
        now,
        dry_run: args.dry_run,
        throwaway: false,
    };
    let rest = live_rest_config(&args.api_url, &config, credentials);
    let client = rest_client(rest, args.http_cache.as_deref())?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    // The writes GitHub accepted, for the report (a dry run lists the planned ones).
    let recording = Recording::new(&client);
    let (result, planned) = runtime.block_on(tick_over(&recording, &inputs));
    save_cache(&client, args.http_cache.as_deref())?;
    let writes = planned.unwrap_or_else(|| done_writes(&recording.into_writes()));
    audit.append_lines(skill_calls.take().iter().map(|call| call.to_json_line(now)))?;
    let result = result.map_err(|error| Failure::new(error, &writes, args.dry_run));
    Ok(result.map(|report| TickRun {
        report,
        writes: writes.0,
        writes_json: writes.1,
        audit: audit.records().iter().map(|r| r.to_json_line()).collect(),
        calls: rest_calls(&client),
        http: Some(http_json(&client)),
        config_warnings: warnings,
        merge_mode: merge_mode_name(&options),
        now: now.to_string(),
    }))
}

/// The configuration's warnings, the tick's, and each time a GraphQL read fell back to REST.
fn all_warnings(run: &TickRun) -> Vec<String> {
    let mut warnings = run.config_warnings.clone();
    warnings.extend(run.report.warnings.iter().cloned());
    let fallbacks = run
        .http
        .as_ref()
        .and_then(|http| http["graphql_fallbacks"].as_array())
        .into_iter()
        .flatten()
        .filter_map(Value::as_str);
    warnings.extend(fallbacks.map(|why| format!("graphql fallback: {why}")));
    warnings
}

/// The run as one JSON document (also what the golden scenarios snapshot).
pub fn run_json(run: &TickRun) -> Value {
    let audit: Vec<Value> = run
        .audit
        .iter()
        .map(|line| serde_json::from_str(line).unwrap_or(Value::Null))
        .collect();
    let warnings = all_warnings(run);
    let governance = &run.report.governance;
    let inbox: Vec<String> = governance
        .inbox
        .iter()
        .flat_map(|i| i.outcomes.iter().map(ToString::to_string))
        .collect();
    let supervisor: Vec<Value> = run
        .report
        .supervisor
        .iter()
        .map(|s| json!({"repo": s.repo.as_str(), "events": s.events}))
        .collect();
    let mut doc = json!({
        "now": run.now,
        "merge_mode": run.merge_mode,
        "outcomes": run.report.outcomes.iter().map(outcome_json).collect::<Vec<_>>(),
        "inbox": inbox,
        "supervisor": supervisor,
        "drift": governance.drift.as_ref().map(ToString::to_string),
        "writes": run.writes_json,
        "metrics": run.report.metrics_json(),
        "audit": audit,
        "calls": run.calls,
        "warnings": warnings,
    });
    if let Some(http) = &run.http {
        doc["http"] = http.clone();
    }
    if let Some(shard) = run.report.shard {
        doc["shard"] = Value::from(shard.to_string());
    }
    if !run.report.operator_errors.is_empty() {
        doc["operator_errors"] = json!(run.report.operator_errors);
    }
    doc
}

fn print_text(run: &TickRun, out: &mut dyn Write) -> anyhow::Result<()> {
    match run.report.shard {
        Some(shard) => writeln!(
            out,
            "tick at {} ({} mode, shard {shard})",
            run.now, run.merge_mode
        )?,
        None => writeln!(out, "tick at {} ({} mode)", run.now, run.merge_mode)?,
    }
    writeln!(out)?;
    writeln!(out, "pull requests:")?;
    if run.report.outcomes.is_empty() {
        writeln!(out, "  (none open)")?;
    }
    for outcome in &run.report.outcomes {
        let quadrant = outcome.quadrant.map_or("-".to_owned(), |q| q.to_string());
        writeln!(
            out,
            "  {:<24} {:<13} {quadrant}  {}",
            outcome.pr,
            outcome.action.as_str(),
            outcome.detail
        )?;
    }
    if let Some(inbox) = &run.report.governance.inbox
        && !inbox.outcomes.is_empty()
    {
        writeln!(out)?;
        writeln!(out, "decision inbox:")?;
        for outcome in &inbox.outcomes {
            writeln!(out, "  {outcome}")?;
        }
    }
    let events: Vec<String> = run
        .report
        .supervisor
        .iter()
        .flat_map(|s| s.events.iter().map(move |e| format!("{}: {e}", s.repo)))
        .collect();
    if !events.is_empty() {
        writeln!(out)?;
        writeln!(out, "branch supervisor:")?;
        for event in events {
            writeln!(out, "  {event}")?;
        }
    }
    if let Some(drift) = &run.report.governance.drift {
        writeln!(out)?;
        writeln!(out, "{drift}")?;
    }
    if !run.report.operator_errors.is_empty() {
        writeln!(out)?;
        writeln!(out, "needs the operator (exit 1):")?;
        for line in &run.report.operator_errors {
            writeln!(out, "  {line}")?;
        }
    }
    writeln!(out)?;
    writeln!(out, "writes, in order:")?;
    if run.writes.is_empty() {
        writeln!(out, "  (none)")?;
    }
    for (i, line) in run.writes.iter().enumerate() {
        writeln!(out, "  {:>2}. {line}", i + 1)?;
    }
    writeln!(out)?;
    writeln!(out, "metrics: {}", run.report.metrics_json())?;
    let total: u64 = run.calls.values().sum();
    writeln!(out, "api calls: {total}")?;
    for (route, count) in &run.calls {
        writeln!(out, "  {count:>4}  {route}")?;
    }
    if let Some(http) = &run.http {
        writeln!(
            out,
            "http: {} requests, {} answered 304 (free), {} retries, rate limit left {}{}",
            http["requests"],
            http["not_modified"],
            http["retries"],
            http["rate_limit_remaining"],
            crate::report_md::graphql_left(http)
        )?;
    }
    let warnings = all_warnings(run);
    if !warnings.is_empty() {
        writeln!(out)?;
        writeln!(out, "warnings:")?;
        for warning in warnings {
            writeln!(out, "  {warning}")?;
        }
    }
    Ok(())
}

/// What a sequence of ticks came to: when each pull request merged, what the others
/// ended as, and the totals of writes and calls.
fn summary_json(docs: &[Value]) -> Value {
    let mut merged = Vec::new();
    let mut last: BTreeMap<String, Value> = BTreeMap::new();
    let (mut writes, mut calls) = (0_usize, 0_u64);
    let mut by_action: BTreeMap<String, u64> = BTreeMap::new();
    for (index, doc) in docs.iter().enumerate() {
        for outcome in doc["outcomes"].as_array().into_iter().flatten() {
            let pr = outcome["pr"].as_str().unwrap_or_default().to_owned();
            if outcome["action"] == "merged" {
                merged.push(json!({"pr": pr, "tick": index + 1, "at": doc["now"]}));
            }
            last.insert(pr, outcome.clone());
        }
        for write in doc["writes"].as_array().into_iter().flatten() {
            writes += 1;
            let action = write["action"].as_str().unwrap_or("other").to_owned();
            *by_action.entry(action).or_default() += 1;
        }
        calls += doc["calls"]
            .as_object()
            .map_or(0, |c| c.values().filter_map(Value::as_u64).sum());
    }
    let merged_prs: Vec<&str> = merged.iter().filter_map(|m| m["pr"].as_str()).collect();
    let open: Vec<Value> = last
        .iter()
        .filter(|(pr, _)| !merged_prs.contains(&pr.as_str()))
        .map(|(pr, o)| json!({"pr": pr, "action": o["action"], "detail": o["detail"]}))
        .collect();
    let first = docs.first().map_or(Value::Null, |d| d["now"].clone());
    let final_at = docs.last().map_or(Value::Null, |d| d["now"].clone());
    json!({
        "ticks": docs.len(),
        "from": first,
        "to": final_at,
        "merged": merged,
        "not_merged": open,
        "writes": writes,
        "writes_by_action": by_action,
        "api_calls": calls,
    })
}

fn print_summary(summary: &Value, out: &mut dyn Write) -> anyhow::Result<()> {
    writeln!(
        out,
        "{} ticks from {} to {}",
        summary["ticks"],
        summary["from"].as_str().unwrap_or("-"),
        summary["to"].as_str().unwrap_or("-")
    )?;
    writeln!(out, "merged:")?;
    let merged = summary["merged"].as_array().cloned().unwrap_or_default();
    if merged.is_empty() {
        writeln!(out, "  (none)")?;
    }
    for m in &merged {
        writeln!(
            out,
            "  {:<24} tick {:>3} at {}",
            m["pr"].as_str().unwrap_or_default(),
            m["tick"],
            m["at"].as_str().unwrap_or_default()
        )?;
    }
    let open = summary["not_merged"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if !open.is_empty() {
        writeln!(out, "not merged (as of the last tick):")?;
        for o in &open {
            writeln!(
                out,
                "  {:<24} {:<13} {}",
                o["pr"].as_str().unwrap_or_default(),
                o["action"].as_str().unwrap_or_default(),
                o["detail"].as_str().unwrap_or_default()
            )?;
        }
    }
    writeln!(
        out,
        "writes: {} {}; api calls: {}",
        summary["writes"], summary["writes_by_action"], summary["api_calls"]
    )?;
    Ok(())
}

/// Reports a tick that failed closed on stderr and in the log, with what it wrote first.
fn report_failure(failure: &Failure) {
    let what = match failure.exit() {
        Exit::Busy => "tick did not run",
        _ => "tick failed closed",
    };
    tracing::error!(error = %failure.error, writes = failure.writes.len(), "{what}");
    #[allow(clippy::print_stderr)]
    {
        eprintln!("mp: {what}: {}", failure.message());
    }
}

/// Exit 1 when a tick met something only the operator can fix (a supervised repository
/// GitHub does not know, a missing permission), each said once on stderr; else 0.
fn operator_exit(runs: &[TickRun]) -> Exit {
    let mut said: Vec<&String> = Vec::new();
    for line in runs.iter().flat_map(|run| &run.report.operator_errors) {
        if !said.contains(&line) {
            said.push(line);
        }
    }
    if said.is_empty() {
        return Exit::Ok;
    }
    for line in &said {
        tracing::error!(error = %line, "the tick needs the operator");
        #[allow(clippy::print_stderr)]
        {
            eprintln!("mp: {line}");
        }
    }
    Exit::Findings
}

pub fn run(args: &TickArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let WorldRuns { runs, failed } = run_tick(args)?;
    let docs: Vec<Value> = runs.iter().map(run_json).collect();
    for (run, doc) in runs.iter().zip(&docs) {
        log_tick(doc);
        if let Some(path) = &args.audit_log {
            crate::audit_tick::append(path, &run.report, doc, args.dry_run)?;
        }
        if let Some(path) = &args.report_file {
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .with_context(|| format!("opening {}", path.display()))?;
            file.write_all(crate::report_md::render(doc).as_bytes())
                .with_context(|| format!("writing {}", path.display()))?;
        }
    }
    if args.ticks <= 1 {
        if let Some(failure) = &failed {
            report_failure(failure);
            return Ok(failure.exit());
        }
        let (Some(run), Some(doc)) = (runs.first(), docs.first()) else {
            bail!("the tick produced no report");
        };
        match (args.report, args.format) {
            (Some(ReportKind::Md), _) => out.write_all(crate::report_md::render(doc).as_bytes())?,
            (None, Format::Text) => print_text(run, out)?,
            (None, Format::Json) => crate::output::json(out, doc)?,
        }
        if args.annotations {
            out.write_all(crate::report_md::annotations(doc).as_bytes())?;
        }
        return Ok(operator_exit(&runs));
    }
    let summary = summary_json(&docs);
    match (args.report, args.format) {
        (Some(ReportKind::Md), _) => {
            for doc in &docs {
                out.write_all(crate::report_md::render(doc).as_bytes())?;
            }
        }
        (None, Format::Text) => {
            for run in &runs {
                print_text(run, out)?;
                writeln!(out)?;
            }
            print_summary(&summary, out)?;
        }
        (None, Format::Json) => {
            let doc = json!({
                "ticks": docs,
                "summary": summary,
                "failed": failed.as_ref().map(|f| f.error.to_string()),
                "failed_writes": failed.as_ref().map(|f| f.writes.clone()),
            });
            crate::output::json(out, &doc)?;
        }
    }
    if args.annotations
        && let Some(doc) = docs.last()
    {
        out.write_all(crate::report_md::annotations(doc).as_bytes())?;
    }
    if let Some(failure) = &failed {
        report_failure(failure);
        return Ok(failure.exit());
    }
    Ok(operator_exit(&runs))
}
