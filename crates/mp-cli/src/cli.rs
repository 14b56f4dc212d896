//! Command-line definitions (clap). Each subcommand maps to one function in `commands`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// mp keeps AI coding agents honest on shared GitHub repositories: a merge gate, a
/// four-quadrant change classifier, a post-merge supervisor and a decision inbox.
#[derive(Debug, Parser)]
#[command(name = "mp", version, about, long_about = None, propagate_version = true)]
#[command(
    after_help = "Exit codes: 0 ok, 1 findings (invalid input found), 2 could not run, 3 tick failed closed. See docs/cli.md."
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Output format for machine or human readers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Format {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON document on stdout.
    Json,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check configuration files.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Check commit messages against the identity-trailer contract.
    #[command(name = "commit-msg", subcommand)]
    CommitMsg(CommitMsgCommand),
    /// Validate agent-protocols contracts and query their state machine.
    #[command(subcommand)]
    Contract(crate::commands::contract::ContractCommand),
    /// List the skills and their state, or lint user skill contracts.
    #[command(subcommand)]
    Skills(crate::commands::skills::SkillsCommand),
    /// Run one tick over a world file on the in-memory GitHub and print what the bot did.
    ///
    /// Prints every pull request's outcome, then the ordered writes (comments, labels,
    /// issues, merges), the tick metrics and the API calls per endpoint. Exit 0 when the
    /// tick ran (whatever it decided), 2 when the world or its configuration is invalid,
    /// 3 when the tick failed closed.
    Tick(TickArgs),
    /// Explain one pull request: every gate condition with its evidence and every
    /// classifier vote ("why is this not merged?"). Writes nothing.
    Explain(ExplainArgs),
    /// Print a shell completion script.
    Completions(CompletionsArgs),
}

/// Arguments of `mp tick`.
#[derive(Debug, Args)]
pub struct TickArgs {
    /// The world file (see docs/fixtures.md).
    #[arg(long, value_name = "FILE")]
    pub world: PathBuf,
    /// Run at this instant (RFC 3339) instead of the world's `now`.
    #[arg(long, value_name = "TIME")]
    pub now: Option<String>,
    /// Plan the writes without performing them.
    #[arg(long)]
    pub dry_run: bool,
    /// Also append the classifier audit records to this JSON Lines file.
    #[arg(long, value_name = "FILE")]
    pub audit_log: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Arguments of `mp explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The world file (see docs/fixtures.md).
    #[arg(long, value_name = "FILE")]
    pub world: PathBuf,
    /// The pull request, as OWNER/REPO#N.
    #[arg(value_name = "OWNER/REPO#N")]
    pub pr: String,
    /// Evaluate at this instant (RFC 3339) instead of the world's `now`.
    #[arg(long, value_name = "TIME")]
    pub now: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

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

/// Arguments of `mp config validate`.
#[derive(Debug, Args)]
pub struct ConfigValidateArgs {
    /// The configuration directory.
    #[arg(default_value = "config")]
    pub dir: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

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
    #[arg(long, value_name = "FILE")]
    pub registry: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Arguments of `mp completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to generate for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}
