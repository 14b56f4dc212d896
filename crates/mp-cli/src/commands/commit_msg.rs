//! `mp commit-msg check`: the C5 identity-trailer contract (and L4 registry, advisory) on one
//! commit message, for use as a git `commit-msg` hook.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand};
use mp_core::trailers::{self, IDENTITY_KEYS, TrailerProblem, Trailers};
use serde_json::json;

use crate::Exit;
use crate::cli::Format;
use crate::commands::read_input;

/// `mp commit-msg ...`
#[derive(Debug, Subcommand)]
pub enum CommitMsgCommand {
    /// Check one commit message's identity trailers (C5) and, with --registry, the
    /// agent registry (L4, advisory).
    ///
    /// Use it as a git commit-msg hook:
    ///   printf '#!/bin/sh\nexec mp commit-msg check "$1"\n' > .git/hooks/commit-msg
    /// Comment lines (starting with '#') and everything below a scissors line are
    /// ignored, as git does. Exit 0 when the contract holds, 1 when it does not.
    Check(CommitMsgCheckArgs),
}

/// Arguments of `mp commit-msg check`.
#[derive(Debug, Args)]
pub struct CommitMsgCheckArgs {
    /// The message file, or `-` for standard input.
    #[arg(default_value = "-")]
    pub file: PathBuf,
    /// An agent_registry.yml to check Agent-Tool / Agent-Model against (advisory).
    #[arg(long, value_name = "FILE", conflicts_with = "config")]
    pub registry: Option<PathBuf>,
    /// A configuration directory: check against its agent_registry.yml, when it has one.
    #[arg(long, value_name = "DIR")]
    pub config: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

struct RegistryNote {
    tool: String,
    model: String,
    allowed: bool,
}

pub fn run(args: &CommitMsgCheckArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let raw = read_input(&args.file)?;
    // The same reading as C5 on GitHub: comments, the scissors line and trailing blank
    // lines are handled by the one parser in mp-core.
    let parsed = Trailers::parse(&raw);
    let problems = trailers::check_contract(&parsed);

    // `--config DIR` names the registry of a configuration directory; a directory
    // without one has nothing to check against, as on GitHub.
    let registry = match (&args.registry, &args.config) {
        (Some(path), _) => Some(path.clone()),
        (None, Some(dir)) => Some(dir.join("agent_registry.yml")).filter(|p| p.is_file()),
        (None, None) => None,
    };
    let registry_note = match &registry {
        None => None,
        Some(path) => {
            let text = read_input(path)?;
            let name = path.display().to_string();
            let registry =
                mp_core::config::parse_agent_registry(&name, &text).map_err(|problems| {
                    let lines: Vec<String> = problems.iter().map(ToString::to_string).collect();
                    anyhow::anyhow!("invalid agent registry:\n  {}", lines.join("\n  "))
                })?;
            let tool = parsed
                .identity(trailers::TrailerKey::AgentTool)
                .unwrap_or_default();
            let model = parsed
                .identity(trailers::TrailerKey::AgentModel)
                .unwrap_or_default();
            (!tool.is_empty()).then(|| RegistryNote {
                tool: tool.to_owned(),
                model: model.to_owned(),
                allowed: registry.model_allowed(tool, model),
            })
        }
    };

    let problem_for = |key| {
        problems.iter().find(|p| match p {
            TrailerProblem::Missing { key: k } | TrailerProblem::Empty { key: k } => *k == key,
            TrailerProblem::MalformedSession { .. } => key == trailers::TrailerKey::AgentSession,
            TrailerProblem::MalformedTaskRef { .. } => key == trailers::TrailerKey::TaskRef,
            _ => false,
        })
    };

    match args.format {
        Format::Text => {
            for key in IDENTITY_KEYS {
                let value = parsed.identity(key).unwrap_or_default();
                match problem_for(key) {
                    None => writeln!(out, "ok    {key}: {value}")?,
                    Some(problem) => writeln!(out, "FAIL  C5: {problem}")?,
                }
            }
            if let Some(note) = &registry_note {
                if note.allowed {
                    writeln!(
                        out,
                        "ok    L4: Agent-Tool '{}' / Agent-Model '{}' are in the agent registry",
                        note.tool, note.model
                    )?;
                } else {
                    writeln!(
                        out,
                        "warn  L4: Agent-Tool '{}' / Agent-Model '{}' not present in the agent registry (advisory)",
                        note.tool, note.model
                    )?;
                }
            }
            if problems.is_empty() {
                writeln!(
                    out,
                    "commit message satisfies the identity-trailer contract"
                )?;
            } else {
                writeln!(
                    out,
                    "commit message breaks the identity-trailer contract ({} problem{})",
                    problems.len(),
                    if problems.len() == 1 { "" } else { "s" }
                )?;
            }
        }
        Format::Json => {
            let trailers: Vec<_> = IDENTITY_KEYS
                .iter()
                .map(|key| {
                    let problem = problem_for(*key);
                    json!({
                        "key": key.as_str(),
                        "value": parsed.identity(*key),
                        "ok": problem.is_none(),
                        "code": problem.map(TrailerProblem::code),
                        "message": problem.map(ToString::to_string),
                    })
                })
                .collect();
            let registry = registry_note.as_ref().map(|n| {
                json!({"tool": n.tool, "model": n.model, "allowed": n.allowed, "advisory": true})
            });
            crate::output::json(
                out,
                &json!({"ok": problems.is_empty(), "trailers": trailers, "registry": registry}),
            )
            .context("writing output")?;
        }
    }
    Ok(if problems.is_empty() {
        Exit::Ok
    } else {
        Exit::Findings
    })
}
