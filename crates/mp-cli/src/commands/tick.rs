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
use mp_github::{Action, FaultScript, LoopbackServer, MemoryGitHub};
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

fn planned_writes(dry: DryRun<'_>) -> Writes {
    let planned = dry.into_planned_writes();
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
}

/// Runs the tick over `github`, through a dry run when asked. The planned writes of a dry
/// run are returned; performed writes are the adapter's business.
async fn tick_over(
    github: &dyn GitHubHistory,
    inputs: &TickInputs<'_>,
) -> (Result<FullTickReport, TickError>, Option<Writes>) {
    if inputs.dry_run {
        let dry = DryRun::with_history(github);
        let result = tick::run_tick(
            &dry,
            inputs.audit,
            inputs.config,
            inputs.options,
            inputs.now,
        )
        .await;
        (result, Some(planned_writes(dry)))
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

fn run_tick(args: &TickArgs) -> anyhow::Result<Result<TickRun, TickError>> {
    match (&args.world, &args.config) {
        (Some(world), _) => world_tick(args, world),
        (None, Some(dir)) => live_tick(args, dir),
        (None, None) => bail!("give --world FILE or --config DIR"),
    }
}

/// A tick over a world file, on the in-memory adapter or through HTTP.
fn world_tick(args: &TickArgs, path: &Path) -> anyhow::Result<Result<TickRun, TickError>> {
    let (loaded, now) = world::load(path, args.now.as_deref())?;
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
    let audit = CliAuditLog::new(args.audit_log.clone());
    let inputs = TickInputs {
        audit: &audit,
        config: &loaded.config,
        options: &options,
        now,
        dry_run: args.dry_run,
    };
    let (result, writes, calls, http) = match args.adapter {
        Adapter::Memory => {
            let github = MemoryGitHub::new(loaded.world);
            let runtime = tokio::runtime::Builder::new_current_thread().build()?;
            let (result, planned) = runtime.block_on(tick_over(&github, &inputs));
            let writes = planned.unwrap_or_else(|| performed_writes(&github.actions()));
            (result, writes, github.calls(), None)
        }
        Adapter::Rest => {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()?;
            runtime.block_on(async {
                let server = LoopbackServer::start(loaded.world, FaultScript::default())
                    .await
                    .context("starting the loopback server")?;
                let mut config = RestConfig::new(
                    server.base_url(),
                    Credentials::Token(Secret::new("loopback-token")),
                );
                config.revert = RevertMode::LoopbackExtension;
                let client = rest_client(config, args.http_cache.as_deref())?;
                let (result, planned) = tick_over(&client, &inputs).await;
                let writes =
                    planned.unwrap_or_else(|| performed_writes(&server.memory().actions()));
                save_cache(&client, args.http_cache.as_deref())?;
                let calls = rest_calls(&client);
                let http = Some(http_json(&client));
                server.shutdown().await;
                anyhow::Ok((result, writes, calls, http))
            })?
        }
    };
    audit.append_lines(skill_calls.take().iter().map(|call| call.to_json_line(now)))?;
    Ok(result.map(|report| TickRun {
        report,
        writes: writes.0,
        writes_json: writes.1,
        audit: audit.records().iter().map(|r| r.to_json_line()).collect(),
        calls,
        http,
        config_warnings: loaded.warnings,
        merge_mode: merge_mode_name(&options),
        now: now.to_string(),
    }))
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

/// The REST client's totals: requests, 304 answers, retries, failures, and the rate limit
/// left as GitHub last reported it.
fn http_json(client: &RestGitHub) -> Value {
    let stats = client.stats();
    json!({
        "requests": stats.total_requests(),
        "not_modified": stats.total_not_modified(),
        "rate_limited_requests": stats.rate_limited_requests(),
        "retries": stats.total_retries(),
        "failures": stats.total_failures(),
        "rate_limit_remaining": mp_core::port::GitHub::rate_limit_remaining(client),
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

/// A tick against GitHub: configuration from a directory, credentials from the
/// environment, the clock from the system.
fn live_tick(args: &TickArgs, dir: &Path) -> anyhow::Result<Result<TickRun, TickError>> {
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
    let credentials = Credentials::from_env(|name| std::env::var(name).ok())?.ok_or_else(|| {
        anyhow::anyhow!(
            "no GitHub credentials: set MP_GITHUB_TOKEN, or MP_APP_ID with MP_APP_PRIVATE_KEY \
             or MP_APP_PRIVATE_KEY_PATH (see docs/deploy.md)"
        )
    })?;
    let mut options = TickOptions::from_config(&config);
    if let Some(shard) = args.shard {
        options = options.with_shard(shard);
    }
    if let Ok(text) = std::env::var(RECEIPT_KEY_VAR)
        && let Some(key) = ReceiptKey::new(text.into_bytes())
    {
        options = options.with_receipt_key(key);
    }
    let skill_calls = SkillCalls::default();
    options = options.with_skills(skills_load::from_dir(
        &config,
        &dir.join("skills"),
        &skill_calls,
    )?);
    options = with_progress(options);
    let now = mp_core::Timestamp::from_unix_seconds(jiff::Timestamp::now().as_second())
        .context("reading the system clock")?;
    let audit = CliAuditLog::new(args.audit_log.clone());
    let inputs = TickInputs {
        audit: &audit,
        config: &config,
        options: &options,
        now,
        dry_run: args.dry_run,
    };
    let client = rest_client(
        RestConfig::new(args.api_url.clone(), credentials),
        args.http_cache.as_deref(),
    )?;
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

/// The run as one JSON document (also what the golden scenarios snapshot).
pub fn run_json(run: &TickRun) -> Value {
    let audit: Vec<Value> = run
        .audit
        .iter()
        .map(|line| serde_json::from_str(line).unwrap_or(Value::Null))
        .collect();
    let mut warnings = run.config_warnings.clone();
    warnings.extend(run.report.warnings.iter().cloned());
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
            "http: {} requests, {} answered 304 (free), {} retries, rate limit left {}",
            http["requests"], http["not_modified"], http["retries"], http["rate_limit_remaining"]
        )?;
    }
    let mut warnings = run.config_warnings.clone();
    warnings.extend(run.report.warnings.iter().cloned());
    if !warnings.is_empty() {
        writeln!(out)?;
        writeln!(out, "warnings:")?;
        for warning in warnings {
            writeln!(out, "  {warning}")?;
        }
    }
    Ok(())
}

pub fn run(args: &TickArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let run = match run_tick(args)? {
        Ok(run) => run,
        Err(error) => {
            tracing::error!(error = %error, "tick failed closed");
            #[allow(clippy::print_stderr)]
            {
                eprintln!("mp: tick failed closed: {error}");
            }
            return Ok(Exit::FailedClosed);
        }
    };
    let doc = run_json(&run);
    log_tick(&doc);
    if let Some(path) = &args.audit_log {
        crate::audit_tick::append(path, &run.report, &doc, args.dry_run)?;
    }
    if let Some(path) = &args.report_file {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        file.write_all(crate::report_md::render(&doc).as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    match (args.report, args.format) {
        (Some(ReportKind::Md), _) => out.write_all(crate::report_md::render(&doc).as_bytes())?,
        (None, Format::Text) => print_text(&run, out)?,
        (None, Format::Json) => crate::output::json(out, &doc)?,
    }
    if args.annotations {
        out.write_all(crate::report_md::annotations(&doc).as_bytes())?;
    }
    Ok(Exit::Ok)
}
