//! `mp skills status`, `mp skills lint` and `mp skills contract`: the skill registry, the
//! contract linter and contract extraction from the command line (the definitions of the subcommands live here too).

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand};
use mp_core::config;
use mp_core::skill::SkillKind;
use mp_skills::contract::{Contract, Section, builtin_contract};
use mp_skills::lint::lint_dir;
use mp_skills::registry::{Origin, SkillEntry};
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
    /// Print parts of a skill's contract document as compact JSON: only the sections asked
    /// for (`--section purpose --section input_contract`), so a caller injects exactly what a
    /// request needs. The input and output contracts come with the JSON Schemas every call
    /// is checked against. Built-in skills have their contracts built in; a user skill's is
    /// read from `<DIR>/skills/<kind>/<NAME>.md`. Exit 0, 1 when the skill has no contract
    /// or it is incomplete, 2 for an unknown section.
    Contract(ContractArgs),
}

/// Arguments of `mp skills contract`.
#[derive(Debug, Args)]
pub struct ContractArgs {
    /// The skill's name, e.g. `validator_ci_green` or `no_todos_in_prod`.
    pub name: String,
    /// A section to print (repeatable): purpose, when_to_call, when_not_to_call,
    /// input_contract, output_contract, permissions, execution_method, failure_classes,
    /// completion_criteria, verification_method. Default: every section.
    #[arg(long = "section", value_name = "S")]
    pub sections: Vec<String>,
    /// The configuration directory (for user skills).
    #[arg(long, value_name = "DIR", default_value = "config")]
    pub config: PathBuf,
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
    /// The folder holding user skills (default: config/skills).
    #[arg(value_name = "SKILLS_DIR", conflicts_with = "config")]
    pub dir: Option<PathBuf>,
    /// The configuration directory: lint the user skills in DIR/skills.
    #[arg(long, value_name = "DIR")]
    pub config: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Runs a `mp skills` subcommand.
pub fn run(command: &SkillsCommand, out: &mut dyn Write) -> anyhow::Result<Exit> {
    match command {
        SkillsCommand::Status(args) => status(args, out),
        SkillsCommand::Lint(args) => lint(args, out),
        SkillsCommand::Contract(args) => contract(args, out),
    }
}

fn contract(args: &ContractArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let mut sections = Vec::new();
    for key in &args.sections {
        let Some(section) = Section::from_key(key) else {
            let known: Vec<&str> = Section::ALL.iter().map(|s| s.key()).collect();
            anyhow::bail!(
                "unknown section `{key}`; expected one of {}",
                known.join(", ")
            );
        };
        if !sections.contains(&section) {
            sections.push(section);
        }
    }
    if sections.is_empty() {
        sections = Section::ALL.to_vec();
    }
    let (origin, text) = match builtin_contract(&args.name) {
        Some(text) => ("built-in".to_owned(), text),
        None => {
            let found = SkillKind::ALL.into_iter().find_map(|kind| {
                let path = args
                    .config
                    .join("skills")
                    .join(kind.folder())
                    .join(format!("{}.md", args.name));
                std::fs::read_to_string(&path).ok().map(|t| (path, t))
            });
            let Some((path, text)) = found else {
                writeln!(
                    out,
                    "no skill `{}`: not a built-in, and no {}/skills/<kind>/{}.md",
                    args.name,
                    args.config.display(),
                    args.name
                )?;
                return Ok(Exit::Findings);
            };
            (format!("user ({})", path.display()), text)
        }
    };
    let parsed = match Contract::parse(&text) {
        Ok(parsed) => parsed,
        Err(gaps) => {
            for gap in gaps {
                writeln!(out, "{}: {}: {gap}", args.name, gap.code())?;
            }
            return Ok(Exit::Findings);
        }
    };
    let doc = json!({
        "skill": args.name,
        "origin": origin,
        "sections": parsed.extract(&sections),
    });
    writeln!(out, "{}", serde_json::to_string(&doc)?)?;
    Ok(Exit::Ok)
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
    let (registry, skipped) = crate::skills_load::load_dir(&config, &skills_dir)?;
    if let Some(missing) = crate::skills_load::missing_built_in(&registry.built_in_names()) {
        return Err(missing.into());
    }
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
                "sources_skipped": skipped,
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
            for line in &skipped {
                writeln!(out, "warning: {line}")?;
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
        Origin::Source { source, module } => {
            format!("source {source} ({})", module.display())
        }
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
    let dir = match (&args.dir, &args.config) {
        (Some(dir), _) => dir.clone(),
        (None, Some(config)) => config.join("skills"),
        (None, None) => PathBuf::from("config/skills"),
    };
    let report = lint_dir(&dir).with_context(|| format!("reading {}", dir.display()))?;
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
