//! `mp tick`: one tick against GitHub (`--config DIR`) or over a world file (`--world FILE`,
//! answered by the in-memory adapter or by the REST client over a loopback server).
//!
//! This module holds the command, its arguments and the tick against GitHub;
//! `simulation` the ticks over a world file, `json` and `text` the two renderings of a run.
//! The live wiring it shares with `mp serve` and `mp doctor` is `crate::live`.

mod json;
mod simulation;
mod text;

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use mp_core::port::GitHubHistory;
use mp_tick::{self as tick, FullTickReport, Shard, TickError, TickOptions};
use mp_tick::{DryRun, Recording};
use serde_json::{Value, json};

use crate::Exit;
use crate::audit::CliAuditLog;
use crate::cli::{Every, Format, parse_every, parse_shard};
use crate::live::{
    lease_holder, lease_terms, live_credentials, live_options, live_rest_config, load_live_config,
    rest_calls, rest_client, save_cache,
};
use crate::skills_load::SkillCalls;
pub use json::result_json;
use json::{Told, Writes, http_json, render_writes, run_json, summary_json};
use simulation::world_ticks;
use text::{print_summary, print_text};

/// Arguments of `mp tick`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["world", "config"])))]
pub struct TickArgs {
    /// Tick over a world file (see docs/fixtures.md) instead of GitHub.
    #[arg(long, value_name = "FILE")]
    pub world: Option<PathBuf>,
    /// Tick against GitHub with the configuration in this directory (see docs/deploy.md).
    /// Credentials come from MP_GITHUB_TOKEN, or MP_APP_ID with MP_APP_PRIVATE_KEY or
    /// MP_APP_PRIVATE_KEY_PATH (and optionally MP_INSTALLATION_ID); MP_GITHUB_TOKEN_FILE,
    /// MP_RECEIPT_KEY_FILE and MP_RECEIPT_KEY_PREVIOUS_FILE name files holding those secrets.
    #[arg(long, value_name = "DIR")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub api: crate::cli::ApiUrl,
    /// Keep the HTTP ETag cache in this file between ticks (conditional requests answered
    /// 304 do not spend the rate limit). A missing or unreadable file starts an empty cache.
    #[arg(long, value_name = "PATH")]
    pub http_cache: Option<PathBuf>,
    /// With --world: which GitHub adapter answers. `rest` serves the world on a loopback
    /// HTTP server and runs the tick through the REST client, as production does.
    #[arg(long, value_enum, default_value_t = Adapter::Memory, requires = "world")]
    pub adapter: Adapter,
    /// With `--adapter rest`: inject faults into the loopback server by script, one rule
    /// per line (docs/deploy.md), e.g. `PUT /repos/{o}/{r}/contents/{path} #2 status 422`.
    #[arg(long, value_name = "FILE", requires = "world")]
    pub faults: Option<PathBuf>,
    /// Run at this instant (RFC 3339) instead of the world's `now` (world ticks only).
    #[arg(long, value_name = "TIME", requires = "world")]
    pub now: Option<String>,
    /// With --world: run this many ticks over the same world, the i-th at `now + i ×
    /// --every`, the world carrying over (with its simulated CI, docs/fixtures.md). The
    /// output is every tick's report and a summary (JSON: `{ticks, summary, failed}`); a
    /// tick that fails closed ends the run with exit 3.
    #[arg(long, value_name = "N", default_value_t = 1, requires = "world",
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub ticks: u32,
    /// With --ticks: the time between ticks, e.g. `30s`, `5m`, `1h`.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_every)]
    pub every: Every,
    /// Plan the writes without performing them.
    #[arg(long)]
    pub dry_run: bool,
    /// Also append the classifier audit records to this JSON Lines file.
    #[arg(long, value_name = "FILE")]
    pub audit_log: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Print a report instead of the usual output: `md` is a markdown summary (per
    /// repository: merged, blocked with reasons, routed to the inbox, incidents; the
    /// budget) for a CI job summary.
    #[arg(long, value_enum, value_name = "KIND")]
    pub report: Option<ReportKind>,
    /// Append the markdown summary to this file (e.g. "$GITHUB_STEP_SUMMARY") and print
    /// the usual output.
    #[arg(long, value_name = "FILE")]
    pub report_file: Option<PathBuf>,
    /// After the report, print GitHub Actions workflow commands: a warning annotation per
    /// blocked pull request (with its blocking reasons), a notice per pull request waiting
    /// in the decision inbox and per supervisor finding, a warning per tick warning.
    #[arg(long)]
    pub annotations: bool,
    /// Run only shard I of N, numbered from 0: the supervised repositories whose name
    /// hashes to I (mod N), with their decision-inbox issues; shard 0 also runs the drift
    /// check. N ticks, one per shard, do the work of one, e.g. `mp tick --config config
    /// --shard 0/3`, then `--shard 1/3` and `--shard 2/3` (see docs/deploy.md, Scale-out).
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    pub shard: Option<Shard>,
}

/// A report of `mp tick`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportKind {
    /// A markdown summary.
    Md,
}

/// The GitHub adapter of a world tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Adapter {
    /// The in-memory world answers the port directly.
    #[default]
    Memory,
    /// The REST client talks HTTP to the world served on 127.0.0.1.
    Rest,
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
    /// Whether the writes were only planned (`--dry-run`).
    pub dry_run: bool,
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
        (
            result,
            Some(render_writes(&recording.into_writes(), Told::Planned)),
        )
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
        (
            result,
            Some(render_writes(&dry.into_planned_writes(), Told::Planned)),
        )
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
    options.with_progress(mp_tick::ProgressSink::new(std::sync::Arc::new(progress)))
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
    dry_run: bool,
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
            dry_run,
        }
    }

    /// Exit 4 when another tick holds the lease (or took it over mid-run), 2 when GitHub refused the credentials, 3
    /// for every other failure.
    fn exit(&self) -> Exit {
        match &self.error {
            TickError::Lease(
                mp_tick::lease::LeaseError::Held { .. } | mp_tick::lease::LeaseError::Lost { .. },
            ) => Exit::Busy,
            // GitHub refused the credentials themselves ("Bad credentials"): they are
            // invalid, which docs/cli.md gives exit 2, not a failure to close on.
            TickError::BotLogin(mp_core::port::GitHubError::Status { status: 401, .. }) => {
                Exit::Usage
            }
            _ => Exit::FailedClosed,
        }
    }

    /// The error, then what was written before it.
    fn message(&self) -> String {
        if self.dry_run {
            return format!("{}; this dry run wrote nothing", self.error);
        }
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

/// A tick against GitHub: configuration from a directory, credentials from the
/// environment, the clock from the system.
fn live_tick(args: &TickArgs, dir: &Path) -> anyhow::Result<Result<TickRun, Failure>> {
    let (config, warnings) = load_live_config(dir)?;
    let credentials = live_credentials()?;
    let skill_calls = SkillCalls::default();
    let options = live_options(&config, dir, args.shard, &skill_calls)?;
    let options = with_progress(options)
        .with_lease_holder(lease_holder("tick", args.shard))
        .with_lease_terms(lease_terms(mp_tick::lease::LeaseTerms::new(
            crate::live::TICK_LEASE_SECONDS,
        ))?)
        .with_lease_clock(std::sync::Arc::new(crate::live::SystemClock))
        .with_pr_path_budget(crate::live::TICK_PR_PATH_BUDGET);
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
    let rest = live_rest_config(&args.api.url, &config, credentials);
    let client = rest_client(rest, args.http_cache.as_deref())?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    // The writes GitHub accepted, for the report (a dry run lists the planned ones).
    let recording = Recording::new(&client);
    let (result, planned) = runtime.block_on(tick_over(&recording, &inputs));
    save_cache(&client, args.http_cache.as_deref())?;
    let writes = planned.unwrap_or_else(|| render_writes(&recording.into_writes(), Told::Done));
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
        dry_run: args.dry_run,
    }))
}

/// The configuration's warnings, the tick's, each time a GraphQL read fell back to REST, and
/// each wait a rate limit imposed.
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
    let waits = run
        .http
        .as_ref()
        .and_then(|http| http["rate_limit_waits"].as_array())
        .into_iter()
        .flatten()
        .filter_map(Value::as_str);
    warnings.extend(waits.map(str::to_owned));
    warnings
}

/// Reports a tick that failed closed on stderr and in the log, with what it wrote first.
fn report_failure(failure: &Failure) {
    let what = match failure.exit() {
        Exit::Busy => "tick did not run",
        Exit::Usage => {
            "tick could not run: GitHub refused the credentials (check MP_GITHUB_TOKEN or the App's MP_APP_ID and key; mp doctor names what is wrong)"
        }
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
            if args.format == Format::Json && args.report.is_none() {
                // A machine reading stdout learns why too.
                crate::output::json(
                    out,
                    &json!({
                        "failed": failure.error.to_string(),
                        "failed_writes": failure.writes.clone(),
                        "exit_code": failure.exit() as u8,
                    }),
                )?;
            }
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
