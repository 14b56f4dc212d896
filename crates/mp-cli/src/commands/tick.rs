//! `mp tick --world FILE`: one real tick over a world on the in-memory GitHub.

use std::io::Write;

use mp_core::gate::ConditionResult;
use mp_core::port::{DryRun, GitHubHistory};
use mp_core::tick::{self, FullTickReport, PrOutcome, TickError, TickOptions};
use mp_github::MemoryGitHub;
use serde_json::{Value, json};

use crate::Exit;
use crate::audit::CliAuditLog;
use crate::cli::{Format, TickArgs};
use crate::world;

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
    /// Configuration warnings.
    pub config_warnings: Vec<String>,
    /// Whether the tick merged for real (`merge_enabled`).
    pub merge_mode: &'static str,
    /// The instant the tick ran at.
    pub now: String,
}

fn run_tick(args: &TickArgs) -> anyhow::Result<Result<TickRun, TickError>> {
    let (loaded, now) = world::load(&args.world, args.now.as_deref())?;
    let mut options = TickOptions::from_config(&loaded.config);
    if let Some(key) = loaded.world.receipt_key.clone() {
        options = options.with_receipt_key(key);
    }
    let merge_mode = match options.merge_mode {
        tick::MergeMode::Merge => "merge",
        tick::MergeMode::Observe => "observe",
    };
    let github = MemoryGitHub::new(loaded.world);
    let audit = CliAuditLog::new(args.audit_log.clone());
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    let (result, writes, writes_json) = if args.dry_run {
        let dry = DryRun::with_history(&github);
        let result = runtime.block_on(tick::run_tick(&dry, &audit, &loaded.config, &options, now));
        let planned = dry.into_planned_writes();
        let lines = planned.iter().map(ToString::to_string).collect();
        let json = planned
            .iter()
            .map(|w| json!({"action": w.code(), "planned": true, "line": w.to_string()}))
            .collect();
        (result, lines, json)
    } else {
        let github_ref: &dyn GitHubHistory = &github;
        let result = runtime.block_on(tick::run_tick(
            github_ref,
            &audit,
            &loaded.config,
            &options,
            now,
        ));
        let actions = github.actions();
        let lines = actions.iter().map(ToString::to_string).collect();
        let json = actions
            .iter()
            .map(|a| serde_json::to_value(a).unwrap_or(Value::Null))
            .collect();
        (result, lines, json)
    };
    Ok(result.map(|report| TickRun {
        report,
        writes,
        writes_json,
        audit: audit.records().iter().map(|r| r.to_json_line()).collect(),
        calls: github.calls(),
        config_warnings: loaded.warnings,
        merge_mode,
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
    json!({
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
    })
}

fn print_text(run: &TickRun, out: &mut dyn Write) -> anyhow::Result<()> {
    writeln!(out, "tick at {} ({} mode)", run.now, run.merge_mode)?;
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
            #[allow(clippy::print_stderr)]
            {
                eprintln!("mp: tick failed closed: {error}");
            }
            return Ok(Exit::FailedClosed);
        }
    };
    match args.format {
        Format::Text => print_text(&run, out)?,
        Format::Json => crate::output::json(out, &run_json(&run))?,
    }
    Ok(Exit::Ok)
}
