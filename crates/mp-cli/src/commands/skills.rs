//! `mp skills status` and `mp skills lint`: the skill registry and the contract linter from
//! the command line (the definitions of the subcommands live here too).

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand};
use mp_core::config;
use mp_skills::lint::lint_dir;
use mp_skills::registry::{Origin, Registry, SkillEntry};
use mp_skills::sandbox::Limits;
use serde_json::{Value, json};

use crate::Exit;
use crate::cli::Format;
use crate::commands::config_validate::read_config_dir;

/// `mp skills ...`
#[derive(Debug, Subcommand)]
pub enum SkillsCommand {
    /// List every skill (built-in and user) with its state under skills.yml, and every
    /// user skill that failed to load.
    ///
    /// Reads the configuration directory (as `mp config validate` does) and the user
    /// skills under `<DIR>/skills/{validators,classifier,branch_hooks}/`. Exit 0 when every
    /// user skill loaded, 1 when one failed to load (skill_load_failed), 2 when the
    /// configuration is invalid.
    Status(StatusArgs),
    /// Check every user skill under a folder: a contract document beside each module with
    /// every required section, and a module the sandbox accepts. Exit 0 when clean, 1
    /// naming each gap.
    Lint(LintArgs),
}

/// Arguments of `mp skills status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The configuration directory.
    #[arg(long, value_name = "DIR", default_value = "config")]
    pub config: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Arguments of `mp skills lint`.
#[derive(Debug, Args)]
pub struct LintArgs {
    /// The folder holding user skills.
    #[arg(default_value = "config/skills")]
    pub dir: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Runs a `mp skills` subcommand.
pub fn run(command: &SkillsCommand, out: &mut dyn Write) -> anyhow::Result<Exit> {
    match command {
        SkillsCommand::Status(args) => status(args, out),
        SkillsCommand::Lint(args) => lint(args, out),
    }
}

fn status(args: &StatusArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let files = read_config_dir(&args.config)?;
    let report = config::load(&files);
    let Some(config) = report.config else {
        for problem in report.errors() {
            writeln!(out, "error: {problem}")?;
        }
        writeln!(
            out,
            "{} is not a valid configuration; run `mp config validate` for details",
            args.config.display()
        )?;
        return Ok(Exit::Usage);
    };
    let skills_dir = args.config.join("skills");
    let registry = Registry::load(Some(&skills_dir), config.skills(), Limits::default());
    match args.format {
        Format::Json => {
            let doc = json!({
                "skills": registry.entries().iter().map(entry_json).collect::<Vec<_>>(),
                "warnings": registry.warnings().iter().map(|w| json!({
                    "code": w.code,
                    "skill": w.skill,
                    "path": w.path.as_ref().map(|p| p.display().to_string()),
                    "reason": w.reason,
                })).collect::<Vec<_>>(),
            });
            writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        }
        Format::Text => {
            for entry in registry.entries() {
                writeln!(out, "{}", entry_line(entry))?;
            }
            for warning in registry.warnings() {
                writeln!(out, "warning: {warning}")?;
            }
        }
    }
    let failed = registry
        .warnings()
        .iter()
        .any(|w| w.code == "skill_load_failed");
    Ok(if failed { Exit::Findings } else { Exit::Ok })
}

fn origin(entry: &SkillEntry) -> String {
    match &entry.origin {
        Origin::BuiltIn { implemented_by } => format!("built-in ({implemented_by})"),
        Origin::User { module } => format!("user ({})", module.display()),
    }
}

/// `validator_ci_green  validator  P0  active  required  built-in (gate::c2_checks_green)`.
fn entry_line(entry: &SkillEntry) -> String {
    format!(
        "{:<32} {:<15} {:<2} {:<11} {:<8} {}",
        entry.name,
        entry.kind.as_str(),
        entry.severity.map_or("-", |s| s.as_str()),
        entry.state.as_str(),
        if entry.required { "required" } else { "-" },
        origin(entry)
    )
}

fn entry_json(entry: &SkillEntry) -> Value {
    json!({
        "name": entry.name,
        "kind": entry.kind.as_str(),
        "severity": entry.severity.map(|s| s.as_str()),
        "state": entry.state.as_str(),
        "required": entry.required,
        "origin": origin(entry),
    })
}

fn lint(args: &LintArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let report = lint_dir(&args.dir).with_context(|| format!("reading {}", args.dir.display()))?;
    match args.format {
        Format::Json => {
            let doc = json!({
                "modules": report.modules.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
                "findings": report.findings.iter().map(|f| json!({
                    "path": f.path.display().to_string(),
                    "code": f.code,
                    "message": f.message,
                })).collect::<Vec<_>>(),
            });
            writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        }
        Format::Text => {
            for finding in &report.findings {
                writeln!(out, "{finding}")?;
            }
            writeln!(
                out,
                "{} skill(s) checked, {} gap(s)",
                report.modules.len(),
                report.findings.len()
            )?;
        }
    }
    Ok(if report.findings.is_empty() {
        Exit::Ok
    } else {
        Exit::Findings
    })
}
