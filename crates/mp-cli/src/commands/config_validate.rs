//! `mp config validate`: load a configuration directory and list every problem.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use mp_core::config::{self, ConfigFiles, ConfigProblem};
use serde_json::json;

use crate::Exit;
use crate::cli::Format;

/// `mp config ...`
#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Validate a configuration directory and list every problem.
    ///
    /// Reads owner.yml, projects.yml and env.yml (required) and agent_registry.yml,
    /// skills.yml, classifier_rules.yml and mirror_paths.json (optional). Exit 0 when
    /// valid (warnings allowed), 1 when any error is found.
    Validate(ConfigValidateArgs),
}

impl ConfigValidateArgs {
    /// The directory to validate: `--config DIR`, the positional DIR, or `config`.
    pub fn dir(&self) -> &std::path::Path {
        self.config
            .as_deref()
            .or(self.dir.as_deref())
            .unwrap_or(std::path::Path::new("config"))
    }
}

/// Arguments of `mp config validate`.
#[derive(Debug, Args)]
pub struct ConfigValidateArgs {
    /// The configuration directory, as with --config (default: config).
    #[arg(value_name = "DIR", conflicts_with = "config")]
    pub dir: Option<PathBuf>,
    /// The configuration directory (default: config).
    #[arg(long, value_name = "DIR")]
    pub config: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// A configuration directory that does not exist or holds no configuration file at all:
/// a deployment not set up yet (a template repository's schedule), not a broken one.
/// Exit 5 ([`crate::Exit::NotConfigured`]).
#[derive(Debug)]
pub struct NotConfigured {
    /// The directory named.
    pub dir: std::path::PathBuf,
}

impl std::fmt::Display for NotConfigured {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "not configured: {} holds no configuration files (owner.yml, projects.yml, env.yml); \
             write them with `mp init` or see docs/quick-start.md",
            self.dir.display()
        )
    }
}

impl std::error::Error for NotConfigured {}

/// Reads every configuration-looking file of `dir` (`*.yml`, `*.yaml`, `*.json`), so a
/// misnamed file is reported instead of silently ignored, and declares the user skills of
/// `dir/skills/` so `skills.yml` names are checked against them. A directory that is missing or
/// holds none is [`NotConfigured`].
pub fn read_config_dir(dir: &Path) -> anyhow::Result<ConfigFiles> {
    let not_configured = || NotConfigured {
        dir: dir.to_path_buf(),
    };
    if !dir.exists() {
        return Err(not_configured().into());
    }
    if !dir.is_dir() {
        bail!("{} is not a directory", dir.display());
    }
    let mut files = ConfigFiles::new();
    let entries = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let wanted = [".yml", ".yaml", ".json"]
            .iter()
            .any(|ext| name.ends_with(ext));
        if !wanted || !path.is_file() {
            continue;
        }
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        files.insert(name, text);
    }
    if files.names().next().is_none() {
        return Err(not_configured().into());
    }
    if let Some(names) = crate::skills_load::user_skill_names(dir) {
        files.set_user_skills(names);
    }
    Ok(files)
}

fn problem_json(problem: &ConfigProblem) -> serde_json::Value {
    json!({
        "file": problem.file,
        "line": problem.line,
        "column": problem.column,
        "field": problem.field,
        "code": problem.code,
        "severity": problem.severity.as_str(),
        "message": problem.message,
    })
}

pub fn run(args: &ConfigValidateArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let files = read_config_dir(args.dir())?;
    let report = config::load(&files);
    let errors = report.errors().count();
    let warnings = report.warnings().count();
    match args.format {
        Format::Text => {
            for problem in &report.problems {
                writeln!(out, "{problem}")?;
            }
            let verdict = if errors == 0 { "valid" } else { "invalid" };
            writeln!(
                out,
                "{}: {verdict} ({errors} errors, {warnings} warnings)",
                args.dir().display()
            )?;
        }
        Format::Json => {
            let problems: Vec<_> = report.problems.iter().map(problem_json).collect();
            crate::output::json(
                out,
                &json!({
                    "directory": args.dir().display().to_string(),
                    "valid": errors == 0,
                    "errors": errors,
                    "warnings": warnings,
                    "problems": problems,
                }),
            )?;
        }
    }
    Ok(if errors == 0 {
        Exit::Ok
    } else {
        Exit::Findings
    })
}
