//! `mp agents`: per agent, what the audit log says of its pull requests — opened, merged,
//! closed, merge rate, time from approval to merge, blocks by condition, CI runs per
//! merged pull request, post-merge incidents and reverts (docs/agents.md, decisions/0076,
//! 0080). Read-only: it reads the log and prints.

use std::io::{BufRead as _, Write};
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, ValueEnum};
use mp_core::agent::AgentKey;

use crate::Exit;
use crate::agents::{AgentsView, view};
use crate::cli::Format;

/// What agents are grouped by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum By {
    /// The declared `Agent-Tool` trailer.
    Tool,
    /// The declared `Agent-Model` trailer.
    Model,
    /// The declared `Agent-Session` trailer.
    Session,
    /// The declared `Agent-Machine` trailer.
    Machine,
    /// The pull request's author, as GitHub records it.
    Author,
}

impl From<By> for AgentKey {
    fn from(by: By) -> Self {
        match by {
            By::Tool => Self::Tool,
            By::Model => Self::Model,
            By::Session => Self::Session,
            By::Machine => Self::Machine,
            By::Author => Self::Author,
        }
    }
}

/// Arguments of `mp agents`.
#[derive(Debug, Args)]
pub struct AgentsArgs {
    /// The audit log written by `mp tick --audit-log FILE` (JSON Lines).
    #[arg(long, value_name = "FILE")]
    pub audit_log: PathBuf,
    /// Only records at or after this instant (RFC 3339, e.g. 2026-12-01T00:00:00Z).
    #[arg(long, value_name = "INSTANT")]
    pub since: Option<String>,
    /// What an agent is: a declared trailer (tool, model, session, machine) or the pull
    /// request's author on GitHub. Trailers are what commits claim, the author is GitHub's
    /// record.
    #[arg(long, value_enum, default_value_t = By::Tool)]
    pub by: By,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

pub fn run(args: &AgentsArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let since = match &args.since {
        None => None,
        Some(text) => match text.parse::<jiff::Timestamp>() {
            Ok(at) => Some(at.as_second()),
            Err(e) => {
                #[allow(clippy::print_stderr)]
                {
                    eprintln!("mp: --since {text:?} is not an RFC 3339 instant: {e}");
                }
                return Ok(Exit::Usage);
            }
        },
    };
    let file = std::fs::File::open(&args.audit_log)
        .with_context(|| format!("reading the audit log {}", args.audit_log.display()))?;
    // Read line by line, never whole: a log of a million records stays out of memory.
    let mut unreadable = None;
    let lines = std::io::BufReader::new(file)
        .lines()
        .map_while(|line| line.map_err(|e| unreadable = Some(e)).ok());
    let view = view(lines, args.by.into(), since);
    if let Some(error) = unreadable {
        return Err(error)
            .with_context(|| format!("reading the audit log {}", args.audit_log.display()));
    }
    if view.malformed_count > 0 {
        let (line, problem) = view.malformed.first().cloned().unwrap_or_default();
        #[allow(clippy::print_stderr)]
        {
            eprintln!(
                "mp: warning: {} malformed record(s) skipped in {} (first: line {line}: {problem})",
                view.malformed_count,
                args.audit_log.display()
            );
        }
    }
    match args.format {
        Format::Json => crate::output::json(out, &view.to_json())?,
        Format::Text => write_text(&view, out)?,
    }
    Ok(Exit::Ok)
}

/// One line per agent, then its blocks by condition.
fn write_text(view: &AgentsView, out: &mut dyn Write) -> std::io::Result<()> {
    if view.agents.is_empty() {
        writeln!(
            out,
            "no pull-request records in the log (they are written by `mp tick --audit-log FILE`)"
        )?;
        return Ok(());
    }
    writeln!(
        out,
        "{} pull-request record(s), by {}:",
        view.records,
        view.by.as_str()
    )?;
    writeln!(
        out,
        "{:<24} {:>5} {:>6} {:>6} {:>5} {:>6} {:>12} {:>12} {:>9} {:>9} {:>7}",
        "agent",
        "prs",
        "merged",
        "closed",
        "open",
        "rate",
        "median wait",
        "p90 wait",
        "ci/merge",
        "incidents",
        "reverts"
    )?;
    for agent in &view.agents {
        let rate = agent
            .merge_rate
            .map_or_else(|| "-".to_owned(), |r| format!("{:.0}%", r * 100.0));
        let wait = |s: Option<i64>| s.map_or_else(|| "-".to_owned(), human);
        let ci = agent
            .ci_runs_per_merged
            .map_or_else(|| "-".to_owned(), |c| format!("{c:.1}"));
        writeln!(
            out,
            "{:<24} {:>5} {:>6} {:>6} {:>5} {:>6} {:>12} {:>12} {:>9} {:>9} {:>7}",
            agent.agent,
            agent.prs,
            agent.merged,
            agent.closed,
            agent.open,
            rate,
            wait(agent.approval_to_merge.median_s),
            wait(agent.approval_to_merge.p90_s),
            ci,
            agent.incidents,
            agent.reverts
        )?;
        if agent.queue_wait.count > 0 {
            writeln!(
                out,
                "  queue: {} merged out of the merge queue, median wait {}, p90 {}",
                agent.queue_wait.count,
                wait(agent.queue_wait.median_s),
                wait(agent.queue_wait.p90_s)
            )?;
        }
        if !agent.blocks.is_empty() {
            let blocks: Vec<String> = agent
                .blocks
                .iter()
                .map(|(code, ticks)| format!("{code} {ticks} (on {} pr)", agent.blocked_prs[code]))
                .collect();
            writeln!(out, "  blocked: {}", blocks.join(", "))?;
        }
    }
    if view.incidents_unattributed > 0 || view.reverts_unattributed > 0 {
        writeln!(
            out,
            "not attributed (no merge of the log names their commits): {} incident(s), {} revert(s)",
            view.incidents_unattributed, view.reverts_unattributed
        )?;
    }
    Ok(())
}

/// A duration for people: `45s`, `12m`, `3h05m`, `2d04h`.
pub(crate) fn human(seconds: i64) -> String {
    match seconds {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86_400 => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
        s => format!("{}d{:02}h", s / 86_400, s % 86_400 / 3600),
    }
}
