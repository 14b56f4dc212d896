//! `mp report`: renders the static HTML report of an audit log into `DIR/index.html`
//! (docs/report.md). The page is written to a temporary file in `DIR` and renamed over
//! `index.html`, so a reader never sees half a page.

use std::io::{BufRead as _, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;
use serde_json::json;

use crate::Exit;
use crate::cli::Format;
use crate::commands::agents::By;
use crate::report_html;

/// Arguments of `mp report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The audit log written by `mp tick --audit-log FILE` (JSON Lines).
    #[arg(long, value_name = "FILE")]
    pub audit_log: PathBuf,
    /// The directory to write index.html into (created when missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The page title.
    #[arg(long, value_name = "T", default_value = "mp report")]
    pub title: String,
    /// What an agent is on the Agents page, as `mp agents --by`: a declared trailer (tool,
    /// model, session, machine) or the pull request's author on GitHub.
    #[arg(long, value_enum, default_value_t = By::Tool)]
    pub by: By,
    /// Output format of the summary printed on stdout.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

pub fn run(args: &ReportArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let file = std::fs::File::open(&args.audit_log)
        .with_context(|| format!("reading the audit log {}", args.audit_log.display()))?;
    // One pass over the file, a line at a time: the overview's parser and the Agents page's
    // fold (the code of `mp agents`) read each line as it comes.
    let mut reader = std::io::BufReader::new(file);
    let mut parser = report_html::Parser::default();
    let mut unreadable = None;
    let mut buffer = Vec::new();
    let lines = std::iter::from_fn(|| {
        buffer.clear();
        match reader.read_until(b'\n', &mut buffer) {
            Ok(0) => None,
            Ok(_) => {
                let line = String::from_utf8_lossy(&buffer);
                let line = line.strip_suffix('\n').unwrap_or(&line);
                Some(line.strip_suffix('\r').unwrap_or(line).to_owned())
            }
            Err(error) => {
                unreadable = Some(error);
                None
            }
        }
    })
    .inspect(|line| parser.feed(line));
    let agents = crate::agents::view(lines, args.by.into(), None);
    if let Some(error) = unreadable {
        return Err(error)
            .with_context(|| format!("reading the audit log {}", args.audit_log.display()));
    }
    let log = parser.finish();
    if let Some((line, problem)) = log.malformed.first() {
        #[allow(clippy::print_stderr)]
        {
            eprintln!(
                "mp: warning: {} malformed line(s) skipped in {} (first: line {line}: {problem})",
                log.malformed.len(),
                args.audit_log.display()
            );
        }
    }
    let page = report_html::render(&log, &agents, &args.title);
    let path = write_atomically(&args.out, "index.html", page.as_bytes())?;
    match args.format {
        Format::Text => writeln!(
            out,
            "wrote {}: {} tick(s), {} classification record(s), {} agent(s) by {}, {} malformed line(s) skipped",
            path.display(),
            log.ticks.len(),
            log.classifications,
            agents.agents.len(),
            agents.by.as_str(),
            log.malformed.len()
        )?,
        Format::Json => {
            let mut doc = report_html::data_json(&log, &args.title);
            doc["page"] = json!(path.display().to_string());
            doc["agents"] = agents.to_json();
            doc["malformed"] = log
                .malformed
                .iter()
                .map(|(line, problem)| json!({"line": line, "problem": problem}))
                .collect();
            crate::output::json(out, &doc)?;
        }
    }
    Ok(Exit::Ok)
}

/// Writes `bytes` to `dir/name` through a temporary file in `dir` and a rename.
fn write_atomically(dir: &Path, name: &str, bytes: &[u8]) -> anyhow::Result<std::path::PathBuf> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("creating the output directory {}", dir.display()))?;
    let target = dir.join(name);
    let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = std::fs::File::create(&temp)
        .and_then(|mut file| {
            file.write_all(bytes)?;
            file.sync_all()
        })
        .and_then(|()| std::fs::rename(&temp, &target));
    if let Err(error) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(error).with_context(|| format!("writing {}", target.display()));
    }
    Ok(target)
}
