//! Command-line definitions (clap). Each subcommand maps to one function in `commands`.

use clap::{Parser, Subcommand, ValueEnum};
use mp_tick::Shard;

/// mp keeps AI coding agents honest on shared GitHub repositories.
///
/// It merges a pull request only when the owner applied `ready-to-merge`, the required
/// checks are green, the base is the default branch's head and every commit carries
/// identity trailers; it sends irreversible-and-critical changes to the owner through a
/// decision inbox, and re-checks what lands on the default branch.
#[derive(Debug, Parser)]
#[command(name = "mp", version = crate::version::LONG, propagate_version = true)]
#[command(after_help = "\
Start here:
  mp tick --world fixtures/worlds/demo.yaml     one tick over the bundled demo world
  mp init --out DIR                             write a starter configuration (asks what it needs)
  mp config validate --config DIR               check a configuration directory
  mp doctor --config DIR                        check a deployment against GitHub
  mp tick --config DIR --dry-run                plan a tick on GitHub, write nothing
  mp explain --config DIR OWNER/REPO#N          why a pull request is (not) merged, live
  mp explain --world FILE OWNER/REPO#N          the same over a world file
  mp dev capture --config DIR --out FILE        record your repositories, replay them offline

On GitHub, credentials come from MP_GITHUB_TOKEN, or MP_APP_ID with MP_APP_PRIVATE_KEY
(docs/deploy.md); receipts are signed with MP_RECEIPT_KEY.

Exit codes: 0 ok, 1 findings (invalid input found), 2 could not run, 3 tick failed closed,
4 another tick holds the lease, 5 not configured (no configuration files). Every command: mp <command> --help; all of it: docs/cli.md.")]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
    /// How logs are written to stderr: `text` for people, `json` (one object per line:
    /// timestamp, level, fields, target) for machines. The level comes from `MP_LOG`
    /// (e.g. `info`, `warn`); by default text logs are off and json logs are at `info`
    /// (`mp serve` logs at `info` in both).
    /// A tick on a terminal also draws a progress bar on stderr (text logs only).
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

/// The format of the logs on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
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
    /// Run one tick, on GitHub (--config DIR) or over a world file (--world FILE), and
    /// print what the bot did.
    ///
    /// Prints every pull request's outcome, then the ordered writes (comments, labels,
    /// issues, merges), the tick metrics and the API calls per endpoint. Exit 0 when the
    /// tick ran (whatever it decided), 2 when the world, the configuration or the
    /// credentials are missing or invalid, 3 when the tick failed closed.
    Tick(crate::commands::tick::TickArgs),
    /// Explain one pull request: every gate condition with its evidence and every
    /// classifier vote ("why is this not merged?"). Writes nothing.
    Explain(crate::commands::explain::ExplainArgs),
    /// Run mp as a service: GitHub webhooks in, decisions within seconds, and the whole
    /// tick every --resync-every as a backstop (docs/serve.md).
    ///
    /// Serves POST /webhook (signed with the secret in MP_WEBHOOK_SECRET), GET /healthz,
    /// GET /readyz and GET /metrics on --listen. Holds the tick lease while it runs, so a
    /// cron `mp tick` kept as a backstop does nothing until the service stops. Stops on
    /// SIGTERM or Ctrl-C: finishes the repositories in hand, gives the lease back, exits 0.
    /// Exit 2 when the configuration, credentials, secret or address are unusable; 3 when
    /// it fails closed at start (bot user unknown, state corrupt).
    Serve(crate::commands::serve::ServeArgs),
    /// Write a starter configuration directory (owner.yml, projects.yml, env.yml) from
    /// flags, asking on a terminal for what is missing; merging starts off (observe mode).
    ///
    /// The files pass `mp config validate`. Nothing is half-written, and a directory that
    /// already holds files is left alone unless --force is given (which replaces only these
    /// three files). Exit 0 when written; 2 when a value is missing or refused or DIR is
    /// not empty, and then nothing was written.
    Init(crate::commands::init::InitArgs),
    /// Check a deployment against GitHub before its first tick: the configuration, the
    /// credentials, the App's installations and permissions, default branches, the
    /// bot-state branch, labels, required checks, the receipt key and the workflow's
    /// concurrency guard (docs/cli.md).
    ///
    /// Prints one line per check: ✓, ✗ with its fix, or ! for a warning. Writes nothing but
    /// the missing labels with --create-labels. Exit 0 when every check passes (warnings
    /// allowed), 1 when one fails, 2 when it cannot run (no credentials), 5 when the
    /// directory holds no configuration.
    Doctor(crate::commands::doctor::DoctorArgs),
    /// Check configuration files.
    #[command(subcommand)]
    Config(crate::commands::config_validate::ConfigCommand),
    /// Render the static HTML report of an audit log: quadrant mix per tick, merges and
    /// blocks per repository, decision-inbox age and API calls per tick (docs/report.md).
    ///
    /// Writes DIR/index.html (self-contained, no network). Malformed lines are skipped and
    /// counted. Exit 0 when the page was written, 2 when the log cannot be read or the
    /// page cannot be written.
    Report(crate::commands::report::ReportArgs),
    /// Per agent, from an audit log: pull requests opened, merged and closed, the merge
    /// rate, the time from approval to merge (median and p90) and the blocks by condition
    /// (docs/agents.md).
    ///
    /// Agents are grouped by a declared trailer (--by tool, model, session, machine) or by
    /// the pull request's author. Read-only. Exit 0 when the figures were printed (an empty
    /// log prints none), 2 when the log cannot be read or --since is not an instant.
    Agents(crate::commands::agents::AgentsArgs),
    /// Check commit messages against the identity-trailer contract.
    #[command(name = "commit-msg", subcommand)]
    CommitMsg(crate::commands::commit_msg::CommitMsgCommand),
    /// List the skills and their state, or lint user skill contracts.
    #[command(subcommand)]
    Skills(crate::commands::skills::SkillsCommand),
    /// Trusted external skill sources: list, fetch (verified and pinned), verify, lock,
    /// drift, status and lint (docs/sources.md).
    #[command(subcommand)]
    Sources(crate::commands::sources::SourcesCommand),
    /// Validate agent-protocols contracts, query their state machine and drive them
    /// through a contract store.
    #[command(subcommand)]
    Contract(crate::commands::contract::ContractCommand),
    /// Record executions as Evidence and export them (in-toto / SLSA provenance).
    #[command(subcommand)]
    Evidence(crate::commands::evidence::EvidenceCommand),
    /// Developer tools: serve a world over HTTP, record repositories into a world.
    #[command(subcommand)]
    Dev(crate::commands::dev::DevCommand),
    /// Print a shell completion script.
    Completions(crate::commands::completions::CompletionsArgs),
}

/// The time between simulated ticks, in whole seconds (at least one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Every(i64);

impl Every {
    /// The interval in seconds.
    pub fn seconds(self) -> i64 {
        self.0
    }
}

/// `--every`: a whole number followed by `s`, `m` or `h`.
pub(crate) fn parse_every(text: &str) -> Result<Every, String> {
    let text = text.trim();
    // Split before the last character, whatever its width (`5µ` must not panic).
    let split = text.char_indices().last().map_or(0, |(at, _)| at);
    let (number, unit) = text.split_at(split);
    let scale = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        _ => return Err(format!("`{text}` needs a unit: s, m or h (e.g. `5m`)")),
    };
    let count: i64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a whole number of {unit}"))?;
    if count <= 0 || count > 7 * 24 * 3600 / scale {
        return Err(format!("`{text}` must be more than 0 and at most a week"));
    }
    Ok(Every(count * scale))
}

/// `--shard I/N`, with the reason when the value is refused (clap exits 2 with it).
pub(crate) fn parse_shard(text: &str) -> Result<Shard, String> {
    Shard::parse(text).map_err(|error| error.to_string())
}

/// GitHub.com's REST API root, the default of `--api-url`.
pub const DEFAULT_API_URL: &str = "https://api.github.com";

/// `--api-url`, shared by every command that talks to GitHub.
#[derive(Debug, Clone, clap::Args)]
pub struct ApiUrl {
    /// The GitHub REST API root (GitHub Enterprise Server: https://HOST/api/v3).
    #[arg(
        long = "api-url",
        value_name = "URL",
        env = "MP_API_URL",
        default_value = DEFAULT_API_URL
    )]
    pub url: String,
}
