//! The text of `mp tick`: a run for people, and the summary of a sequence of ticks.

use std::io::Write;

use serde_json::Value;

use super::{TickRun, all_warnings};

/// The pull requests the decision inbox closed on the owner's `/reject` before the
/// pull-request path ran (a dry run: would close), which the tick therefore did not
/// evaluate.
fn closed_by_inbox(run: &TickRun) -> Vec<String> {
    let Some(inbox) = &run.report.governance.inbox else {
        return Vec::new();
    };
    let verb = if run.dry_run { "would close" } else { "closed" };
    inbox
        .rejections
        .iter()
        .map(|rejection| {
            let pr = format!("{}#{}", rejection.repo, rejection.number);
            let issue = inbox
                .outcomes
                .iter()
                .find(|o| o.pr.as_deref() == Some(pr.as_str()) && o.resolution.code() == "rejected")
                .map_or_else(|| format!("#{}", rejection.issue), |o| o.issue.clone());
            format!(
                "{pr} {verb} (rejected by the owner {} in {issue}); not evaluated for merging",
                rejection.actor
            )
        })
        .collect()
}

pub(super) fn print_text(run: &TickRun, out: &mut dyn Write) -> anyhow::Result<()> {
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
    let closed = closed_by_inbox(run);
    if run.report.outcomes.is_empty() && closed.is_empty() {
        writeln!(out, "  (none open)")?;
    }
    for line in &closed {
        writeln!(out, "  {line}")?;
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

pub(super) fn print_summary(summary: &Value, out: &mut dyn Write) -> anyhow::Result<()> {
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
