//! `mp completions SHELL`: a shell completion script.

use std::io::Write;

use clap::{Args, CommandFactory};

use crate::Exit;
use crate::cli::Cli;

/// Arguments of `mp completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to generate for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Writes the completion script for the shell.
pub fn run(args: &CompletionsArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    clap_complete::generate(args.shell, &mut Cli::command(), "mp", out);
    Ok(Exit::Ok)
}
