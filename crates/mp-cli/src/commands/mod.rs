//! One module per subcommand; `run` dispatches.

use std::io::Write;

use crate::Exit;
use crate::cli::{Cli, Command};
use commit_msg::CommitMsgCommand;
use config_validate::ConfigCommand;
use dev::DevCommand;

pub mod agents;
pub mod commit_msg;
pub mod completions;
pub mod config_validate;
pub mod contract;
pub mod dev;
pub mod doctor;
pub mod evidence;
pub mod explain;
pub mod init;
pub mod report;
pub mod serve;
pub mod skills;
pub mod sources;
pub mod tick;

/// Runs the parsed command, writing its report to `out`.
pub fn run(cli: Cli, out: &mut dyn Write) -> anyhow::Result<Exit> {
    match cli.command {
        Command::Init(args) => init::run(&args, out),
        Command::Config(ConfigCommand::Validate(args)) => config_validate::run(&args, out),
        Command::CommitMsg(CommitMsgCommand::Check(args)) => commit_msg::run(&args, out),
        Command::Contract(command) => contract::run(&command, out),
        Command::Evidence(command) => evidence::run(&command, out),
        Command::Skills(command) => skills::run(&command, out),
        Command::Sources(command) => sources::run(&command, out),
        Command::Tick(args) => tick::run(&args, out),
        Command::Explain(args) => explain::run(&args, out),
        Command::Report(args) => report::run(&args, out),
        Command::Agents(args) => agents::run(&args, out),
        Command::Serve(args) => serve::run(&args, out),
        Command::Doctor(args) => doctor::run(&args, out),
        Command::Dev(DevCommand::ServeWorld(args)) => dev::serve_world(&args, out),
        Command::Dev(DevCommand::Capture(args)) => dev::capture::run(&args, out),
        Command::Completions(args) => completions::run(&args, out),
    }
}

/// Reads a file, or standard input for `-`.
pub fn read_input(path: &std::path::Path) -> anyhow::Result<String> {
    use anyhow::Context;
    if path.as_os_str() == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
            .context("reading standard input")?;
        Ok(text)
    } else {
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
    }
}
