//! The `mp` command: parses arguments, calls one library operation, prints the outcome and
//! maps it to a documented exit code (docs/cli.md). No domain logic lives here.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod agents;
mod audit;
mod audit_tick;
mod cli;
mod commands;
mod live;
mod logging;
mod output;
mod report_html;
mod report_md;
mod skills_load;
mod version;
mod world;

/// Exit codes, documented in docs/cli.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The command ran and found nothing wrong.
    Ok = 0,
    /// The command ran and found a problem (invalid config, a failing commit message).
    Findings = 1,
    /// The command could not run: bad arguments, unreadable or invalid input.
    Usage = 2,
    /// The tick failed closed (e.g. the bot user could not be learned).
    FailedClosed = 3,
    /// Another tick holds the lease: this one did nothing.
    Busy = 4,
    /// The configuration directory is missing or holds no configuration file: the
    /// deployment is not set up yet.
    NotConfigured = 5,
}

/// The exit code of a command that ended in an error: 1 when a built-in skill failed to
/// load (the installation is broken), 5 when there is no configuration at all, 2 for
/// everything else (bad arguments or input).
fn exit_for_error(err: &anyhow::Error) -> Exit {
    if err
        .downcast_ref::<skills_load::BuiltInLoadFailed>()
        .is_some()
    {
        Exit::Findings
    } else if err
        .downcast_ref::<commands::config_validate::NotConfigured>()
        .is_some()
    {
        Exit::NotConfigured
    } else {
        Exit::Usage
    }
}

/// Whether the command line asks for JSON (`--format json` or `--format=json`): an error
/// is then also one JSON object on stdout, so a machine reading stdout learns why.
fn wants_json(argv: &[String]) -> bool {
    argv.iter().any(|a| a == "--format=json")
        || argv
            .windows(2)
            .any(|w| w[0] == "--format" && w[1] == "json")
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().collect();
    let args = cli::Cli::parse();
    logging::init(
        args.log_format,
        matches!(args.command, cli::Command::Serve(_)),
    );
    let mut stdout = std::io::stdout().lock();
    let result = commands::run(args, &mut stdout);
    let _ = stdout.flush();
    match result {
        Ok(exit) => ExitCode::from(exit as u8),
        // The reader of stdout went away (`mp tick | head`): nothing to report, and the
        // command's own work (writes, state) is already done.
        Err(err)
            if err
                .downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::SUCCESS
        }
        Err(err) => {
            #[allow(clippy::print_stderr)]
            {
                eprintln!("mp: error: {err:#}");
            }
            let exit = exit_for_error(&err);
            if wants_json(&argv) {
                let doc = serde_json::json!({
                    "error": format!("{err:#}"),
                    "exit_code": exit as u8,
                });
                let _ = output::json(&mut stdout, &doc);
                let _ = stdout.flush();
            }
            ExitCode::from(exit as u8)
        }
    }
}
