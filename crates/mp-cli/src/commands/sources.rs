//! `mp sources list | fetch | verify | lock | drift | status | lint`: trusted external skill
//! sources from the command line (docs/sources.md). The work is done by
//! `mp_skills::sources::ops`; this module reads the arguments and prints.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand};
use mp_skills::sources::drift::{DriftFinding, FindingSeverity};
use mp_skills::sources::fetch::{Curl, FetchOptions};
use mp_skills::sources::format::{FileProblem, parse_registry};
use mp_skills::sources::layout::SourcesLayout;
use mp_skills::sources::lint::{self as sources_lint, LintFinding};
use mp_skills::sources::model::{Refusal, SourceId};
use mp_skills::sources::ops::{self, Sources};
use serde_json::{Value, json};

use crate::Exit;
use crate::cli::Format;

/// `mp sources ...`
#[derive(Debug, Subcommand)]
pub enum SourcesCommand {
    /// List the trusted sources (from the trust list) and the sources the registry or
    /// the organization's list only mentions (never fetched). Exit 0; 1 when a trust-list
    /// entry is refused; 2 when the trust list is unreadable.
    List(CommonArgs),
    /// Fetch trusted sources (all, or the IDs given) into `<DIR>/.mp-sources/<id>/`,
    /// verify each against its pin (a git tag must resolve to the pinned commit, an
    /// archive must match its sha512), write the first pin of a new source to
    /// `<DIR>/sources.lock`, and record the fetch in the local lock. A source that fails a
    /// check is refused alone and its previous snapshot stays. Exit 0; 1 when any source
    /// was refused; 2 when the trust list or a lock is unreadable.
    Fetch(FetchArgs),
    /// Check every pinned source against upstream and its snapshot: the tag still names
    /// the pinned commit, the archive still has the pinned digest, the snapshot is what
    /// was fetched. Exit 0 when everything holds, 1 naming each failure.
    Verify(CommonArgs),
    /// Write the committed pin lock from the trust list: pin sources that have no pin;
    /// `--bump ID` replaces a pin that differs (a deliberate change, visible in review).
    /// Exit 0; 1 when a pin disagrees without --bump; 2 when a file is unreadable.
    Lock(LockArgs),
    /// Report every disagreement between trust list, pin lock, local lock, snapshots and
    /// upstream (moved tag, advanced branch, changed archive, edited snapshot, pin bumped
    /// without a fetch, ...), pointers no trusted source fulfils, every pointer problem
    /// and an unreadable local lock. Exit 0 when there is none, 1 when there is any.
    Drift(DriftArgs),
    /// Show each trusted source: pinned, fetched, snapshot present, skills provided, and
    /// what deserves a look (missing snapshot or local lock, a family that selects
    /// nothing, a bad pointer, an unreadable local lock). Exit 0; 2 when the trust list is
    /// unreadable.
    Status(CommonArgs),
    /// Check every sources file on its own: the registry, every organization's curated
    /// list, the trust list, the pointers `skills/*/source.md`, both locks, and what each
    /// trusted source's snapshot holds. Every problem is listed with its file, line and
    /// code. Exit 0 when clean or warnings only; 1 when any error; 2 when a file cannot
    /// be read.
    Lint(CommonArgs),
}

/// Arguments every `mp sources` command takes.
#[derive(Debug, Args)]
pub struct CommonArgs {
    /// The configuration directory holding skill-sources.md and sources.lock.
    #[arg(long, value_name = "DIR", default_value = "config")]
    pub config: PathBuf,
    /// Read the trust list from FILE instead of `<DIR>/skill-sources.md`.
    #[arg(long, value_name = "FILE")]
    pub trust_list: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Arguments of `mp sources fetch`.
#[derive(Debug, Args)]
pub struct FetchArgs {
    /// Source ids to fetch (default: every trusted source).
    pub ids: Vec<String>,
    /// Also fetch `git-branch` sources (work in progress; nothing anchors them).
    #[arg(long)]
    pub allow_branch: bool,
    #[command(flatten)]
    pub common: CommonArgs,
}

/// Arguments of `mp sources lock`.
#[derive(Debug, Args)]
pub struct LockArgs {
    /// Replace the committed pin of this source with the trust list's (repeatable).
    #[arg(long, value_name = "ID")]
    pub bump: Vec<String>,
    #[command(flatten)]
    pub common: CommonArgs,
}

/// Arguments of `mp sources drift`.
#[derive(Debug, Args)]
pub struct DriftArgs {
    /// Compare only local state (trust list, locks, snapshots); do not ask upstream.
    #[arg(long)]
    pub offline: bool,
    #[command(flatten)]
    pub common: CommonArgs,
}

/// Runs a `mp sources` subcommand.
pub fn run(command: &SourcesCommand, out: &mut dyn Write) -> anyhow::Result<Exit> {
    match command {
        SourcesCommand::List(args) => list(args, out),
        SourcesCommand::Fetch(args) => fetch(args, out),
        SourcesCommand::Verify(args) => drift(args, false, true, out),
        SourcesCommand::Lock(args) => lock(args, out),
        SourcesCommand::Drift(args) => drift(&args.common, args.offline, false, out),
        SourcesCommand::Status(args) => status(args, out),
        SourcesCommand::Lint(args) => lint(args, out),
    }
}

fn layout(args: &CommonArgs) -> SourcesLayout {
    let layout = SourcesLayout::new(&args.config);
    match &args.trust_list {
        Some(path) => layout.with_trust_list(path.clone()),
        None => layout,
    }
}

/// Opens the sources, or prints why not and returns the exit code (2).
fn open(args: &CommonArgs, out: &mut dyn Write) -> anyhow::Result<Result<Sources, Exit>> {
    match ops::open(layout(args)) {
        Ok(sources) => Ok(Ok(sources)),
        Err(problems) => {
            print_problems(args.format, &problems, out)?;
            Ok(Err(Exit::Usage))
        }
    }
}

fn print_problems(
    format: Format,
    problems: &[FileProblem],
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    match format {
        Format::Json => {
            let doc = json!({ "problems": problems.iter().map(problem_json).collect::<Vec<_>>() });
            writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        }
        Format::Text => {
            for problem in problems {
                writeln!(out, "error: {problem}")?;
            }
        }
    }
    Ok(())
}

fn problem_json(p: &FileProblem) -> Value {
    json!({
        "file": p.file.display().to_string(),
        "line": p.line,
        "source": p.source,
        "field": p.field,
        "code": p.code,
        "message": p.message,
    })
}

fn lint_json(f: &LintFinding) -> Value {
    let mut value = problem_json(&f.problem);
    value["severity"] = json!(f.severity.as_str());
    value
}

fn refusal_json(r: &Refusal) -> Value {
    json!({ "source": r.source, "code": r.code, "reason": r.reason, "fix": r.fix })
}

fn finding_json(f: &DriftFinding) -> Value {
    json!({
        "source": f.source.as_str(),
        "code": f.code,
        "severity": f.severity.as_str(),
        "reason": f.reason,
        "fix": f.fix,
    })
}

/// Parses the ids given on the command line.
fn ids(raw: &[String]) -> anyhow::Result<Vec<SourceId>> {
    raw.iter()
        .map(|text| SourceId::parse(text).map_err(anyhow::Error::msg))
        .collect()
}

fn list(args: &CommonArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let sources = match open(args, out)? {
        Ok(sources) => sources,
        Err(exit) => return Ok(exit),
    };
    let registry_path = sources.layout.registry();
    // The registry is editorial: its problems are listed (as by `mp sources lint`) but
    // never change what is trusted or the exit code.
    let (registry, registry_problems) = match std::fs::read_to_string(&registry_path) {
        Ok(text) => parse_registry(&registry_path, &text),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Default::default(),
        Err(err) => (
            Default::default(),
            vec![FileProblem::unreadable(&registry_path, &err)],
        ),
    };
    let trusted: Vec<&str> = sources
        .resolution
        .trusted
        .iter()
        .map(|t| t.descriptor.id.as_str())
        .collect();
    let discoverable: Vec<String> = registry
        .community
        .iter()
        .map(|row| row.id.to_string())
        .filter(|id| !trusted.contains(&id.as_str()))
        .collect();
    match args.format {
        Format::Json => {
            let doc = json!({
                "trusted": sources.resolution.trusted.iter().map(|t| {
                    let d = &t.descriptor;
                    json!({
                        "id": d.id.as_str(),
                        "organization": d.organization,
                        "name": d.name,
                        "maintainer": d.maintainer,
                        "method": d.method.as_str(),
                        "url": d.url,
                        "ref": d.reference,
                        "anchor": d.anchor.as_ref().map(|a| json!({ "kind": a.key(), "value": a.value() })),
                        "wip": d.wip,
                    })
                }).collect::<Vec<_>>(),
                "refused": sources.resolution.refused.iter().map(refusal_json).collect::<Vec<_>>(),
                "discoverable_not_trusted": discoverable,
                "registry_problems": registry_problems.iter().map(problem_json).collect::<Vec<_>>(),
            });
            writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        }
        Format::Text => {
            if sources.resolution.trusted.is_empty() {
                writeln!(
                    out,
                    "no trusted sources ({})",
                    sources.layout.trust_list.display()
                )?;
            }
            for t in &sources.resolution.trusted {
                let d = &t.descriptor;
                let anchor = d
                    .anchor
                    .as_ref()
                    .map_or_else(|| "unanchored (wip)".to_owned(), ToString::to_string);
                writeln!(
                    out,
                    "trusted {}  {} {} @ {}  {anchor}",
                    d.id, d.method, d.url, d.reference
                )?;
            }
            for refusal in &sources.resolution.refused {
                writeln!(out, "refused: {refusal}")?;
            }
            for id in &discoverable {
                writeln!(out, "discoverable, not trusted (never fetched): {id}")?;
            }
            for problem in &registry_problems {
                writeln!(out, "registry: {problem}")?;
            }
        }
    }
    Ok(if sources.resolution.refused.is_empty() {
        Exit::Ok
    } else {
        Exit::Findings
    })
}

fn fetch(args: &FetchArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let only = ids(&args.ids)?;
    let mut sources = match open(&args.common, out)? {
        Ok(sources) => sources,
        Err(exit) => return Ok(exit),
    };
    let options = FetchOptions {
        allow_branch: args.allow_branch,
        download: &Curl,
    };
    let now = jiff::Timestamp::now().to_string();
    let report = ops::fetch_sources(&mut sources, &only, &options, &now)?;
    match args.common.format {
        Format::Json => {
            let doc = json!({
                "fetched": report.fetched.iter().map(|f| json!({
                    "id": f.id.as_str(),
                    "resolved": f.resolved,
                    "tree_digest": f.tree_digest,
                    "unanchored": f.unanchored,
                    "first_pin": f.first_pin,
                    "skills": f.skills,
                    "warnings": f.warnings.iter().map(finding_json).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
                "refused": report.refused.iter().map(refusal_json).collect::<Vec<_>>(),
            });
            writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        }
        Format::Text => {
            for f in &report.fetched {
                let pinned = if f.first_pin { ", pinned" } else { "" };
                let wip = if f.unanchored {
                    " (work in progress: unanchored)"
                } else {
                    ""
                };
                writeln!(
                    out,
                    "fetched {} at {}{pinned}{wip}: {}",
                    f.id,
                    f.resolved,
                    if f.skills.is_empty() {
                        "no skills".to_owned()
                    } else {
                        f.skills.join(", ")
                    }
                )?;
                for warning in &f.warnings {
                    writeln!(out, "{warning}")?;
                }
            }
            for refusal in &report.refused {
                writeln!(out, "refused: {refusal}")?;
            }
            if report.fetched.is_empty() && report.refused.is_empty() {
                writeln!(out, "nothing to do: no trusted sources")?;
            }
        }
    }
    Ok(if report.refused.is_empty() {
        Exit::Ok
    } else {
        Exit::Findings
    })
}

fn lock(args: &LockArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let bump = ids(&args.bump)?;
    let mut sources = match open(&args.common, out)? {
        Ok(sources) => sources,
        Err(exit) => return Ok(exit),
    };
    let report = ops::lock_sources(&mut sources, &bump)?;
    let names = |ids: &[SourceId]| ids.iter().map(SourceId::to_string).collect::<Vec<_>>();
    match args.common.format {
        Format::Json => {
            let doc = json!({
                "pinned": names(&report.pinned),
                "bumped": names(&report.bumped),
                "unchanged": names(&report.unchanged),
                "refused": report.refused.iter().map(refusal_json).collect::<Vec<_>>(),
            });
            writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        }
        Format::Text => {
            for id in &report.pinned {
                writeln!(out, "pinned {id}")?;
            }
            for id in &report.bumped {
                writeln!(out, "bumped {id}")?;
            }
            for id in &report.unchanged {
                writeln!(out, "unchanged {id}")?;
            }
            for refusal in &report.refused {
                writeln!(out, "refused: {refusal}")?;
            }
        }
    }
    Ok(if report.refused.is_empty() {
        Exit::Ok
    } else {
        Exit::Findings
    })
}

/// `drift` (every finding) and `verify` (errors only, always asking upstream).
fn drift(
    args: &CommonArgs,
    offline: bool,
    errors_only: bool,
    out: &mut dyn Write,
) -> anyhow::Result<Exit> {
    let sources = match open(args, out)? {
        Ok(sources) => sources,
        Err(exit) => return Ok(exit),
    };
    let remote: Option<&dyn mp_skills::sources::fetch::Download> =
        (!offline).then_some(&Curl as &dyn mp_skills::sources::fetch::Download);
    let findings: Vec<DriftFinding> = ops::drift_report(&sources, remote)
        .into_iter()
        .filter(|f| !errors_only || f.severity == FindingSeverity::Error)
        .collect();
    // `verify` checks pins and snapshots only; `drift` also lists the file problems.
    let problems = if errors_only {
        Vec::new()
    } else {
        sources_lint::problems(&sources)
    };
    match args.format {
        Format::Json => {
            let mut doc = json!({
                "findings": findings.iter().map(finding_json).collect::<Vec<_>>(),
                "sources": sources.resolution.trusted.len(),
            });
            if !errors_only {
                doc["problems"] = json!(problems.iter().map(lint_json).collect::<Vec<_>>());
            }
            writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        }
        Format::Text => {
            for finding in &findings {
                writeln!(out, "{finding}")?;
            }
            for problem in &problems {
                writeln!(out, "{problem}")?;
            }
            let verb = if errors_only { "verified" } else { "compared" };
            writeln!(
                out,
                "{} trusted source(s) {verb}, {} finding(s)",
                sources.resolution.trusted.len(),
                findings.len() + problems.len()
            )?;
        }
    }
    Ok(if findings.is_empty() && problems.is_empty() {
        Exit::Ok
    } else {
        Exit::Findings
    })
}

fn status(args: &CommonArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let sources = match open(args, out)? {
        Ok(sources) => sources,
        Err(exit) => return Ok(exit),
    };
    let states = ops::status(&sources);
    let problems = sources_lint::problems(&sources);
    match args.format {
        Format::Json => {
            let doc = json!({
                "problems": problems.iter().map(lint_json).collect::<Vec<_>>(),
                "sources": states.iter().map(|s| json!({
                    "id": s.id.as_str(),
                    "method": s.method.as_str(),
                    "ref": s.reference,
                    "wip": s.wip,
                    "pinned": s.pinned,
                    "fetched": s.fetched,
                    "snapshot": s.snapshot,
                    "skills": s.skills.as_ref().ok(),
                    "refused": s.skills.as_ref().err().map(|r| r.iter().map(refusal_json).collect::<Vec<_>>()),
                    "warnings": s.warnings.iter().map(finding_json).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            });
            writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        }
        Format::Text => {
            if states.is_empty() {
                writeln!(out, "no trusted sources")?;
            }
            for s in &states {
                let yes_no = |b: bool| if b { "yes" } else { "no" };
                let skills = match &s.skills {
                    Ok(names) if names.is_empty() => "-".to_owned(),
                    Ok(names) => names.join(", "),
                    Err(refusals) => refusals
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("; "),
                };
                writeln!(
                    out,
                    "{}  {} @ {}{}  pinned: {}  fetched: {}  snapshot: {}  skills: {skills}",
                    s.id,
                    s.method,
                    s.reference,
                    if s.wip { " (wip)" } else { "" },
                    yes_no(s.pinned),
                    s.fetched.as_deref().unwrap_or("no"),
                    yes_no(s.snapshot),
                )?;
                for warning in &s.warnings {
                    writeln!(out, "  {warning}")?;
                }
            }
            for problem in &problems {
                writeln!(out, "{problem}")?;
            }
        }
    }
    Ok(Exit::Ok)
}

/// `mp sources lint`: exit 2 when a file cannot be read, 1 on any error, else 0.
fn lint(args: &CommonArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let report = sources_lint::lint(&layout(args));
    match args.format {
        Format::Json => {
            let doc = json!({
                "directory": args.config.display().to_string(),
                "valid": report.errors() == 0,
                "errors": report.errors(),
                "warnings": report.warnings(),
                "checked": report.checked.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
                "findings": report.findings.iter().map(lint_json).collect::<Vec<_>>(),
            });
            writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        }
        Format::Text => {
            for finding in &report.findings {
                writeln!(out, "{finding}")?;
            }
            writeln!(
                out,
                "{} sources file(s) checked: {} error(s), {} warning(s)",
                report.checked.len(),
                report.errors(),
                report.warnings()
            )?;
        }
    }
    Ok(if report.unreadable() {
        Exit::Usage
    } else if report.errors() > 0 {
        Exit::Findings
    } else {
        Exit::Ok
    })
}
