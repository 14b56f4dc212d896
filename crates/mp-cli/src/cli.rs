//! Command-line definitions (clap). Each subcommand maps to one function in `commands`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use mp_tick::Shard;

/// mp keeps AI coding agents honest on shared GitHub repositories.
///
/// It merges a pull request only when the owner applied `ready-to-merge`, the required
/// checks are green, the base is `main` and every commit carries identity trailers; it
/// sends irreversible-and-critical changes to the owner through a decision inbox, and
/// re-checks what lands on `main`.
#[derive(Debug, Parser)]
#[command(name = "mp", version = crate::version::LONG, propagate_version = true)]
#[command(after_help = "\
Start here:
  mp tick --world fixtures/worlds/demo.yaml     one tick over the bundled demo world
  mp init --out DIR                             write a starter configuration (asks what it needs)
  mp config validate --config DIR               check a configuration directory
  mp doctor --config DIR                        check a deployment against GitHub
  mp tick --config DIR --dry-run                plan a tick on GitHub, write nothing
  mp explain --world FILE OWNER/REPO#N          why a pull request is (not) merged

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
    /// (e.g. `info`, `warn`); by default text logs are off and json logs are at `info`.
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
    Tick(TickArgs),
    /// Explain one pull request: every gate condition with its evidence and every
    /// classifier vote ("why is this not merged?"). Writes nothing.
    Explain(ExplainArgs),
    /// Run mp as a service: GitHub webhooks in, decisions within seconds, and the whole
    /// tick every --resync-every as a backstop (docs/serve.md).
    ///
    /// Serves POST /webhook (signed with the secret in MP_WEBHOOK_SECRET), GET /healthz,
    /// GET /readyz and GET /metrics on --listen. Holds the tick lease while it runs, so a
    /// cron `mp tick` kept as a backstop does nothing until the service stops. Stops on
    /// SIGTERM or Ctrl-C: finishes the repositories in hand, gives the lease back, exits 0.
    /// Exit 2 when the configuration, credentials, secret or address are unusable; 3 when
    /// it fails closed at start (bot user unknown, state corrupt).
    Serve(ServeArgs),
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
    Config(ConfigCommand),
    /// Render the static HTML report of an audit log: quadrant mix per tick, merges and
    /// blocks per repository, decision-inbox age and API calls per tick (docs/report.md).
    ///
    /// Writes DIR/index.html (self-contained, no network). Malformed lines are skipped and
    /// counted. Exit 0 when the page was written, 2 when the log cannot be read or the
    /// page cannot be written.
    Report(ReportArgs),
    /// Check commit messages against the identity-trailer contract.
    #[command(name = "commit-msg", subcommand)]
    CommitMsg(CommitMsgCommand),
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
    /// Developer tools: serve a world over HTTP.
    #[command(subcommand)]
    Dev(DevCommand),
    /// Print a shell completion script.
    Completions(CompletionsArgs),
}

/// Arguments of `mp serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The configuration directory (see docs/deploy.md). Credentials come from the
    /// environment as for `mp tick --config`; the webhook secret from MP_WEBHOOK_SECRET.
    #[arg(long, value_name = "DIR")]
    pub config: PathBuf,
    /// The address to listen on, e.g. `0.0.0.0:8080` in a container.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    pub listen: std::net::SocketAddr,
    /// The GitHub REST API root (GitHub Enterprise Server: https://HOST/api/v3).
    #[arg(
        long,
        value_name = "URL",
        env = "MP_API_URL",
        default_value = "https://api.github.com"
    )]
    pub api_url: String,
    /// The period of the full resync (the work of one `mp tick`), e.g. `10m`: a missed
    /// webhook costs at most this long.
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_every)]
    pub resync_every: Every,
    /// Serve only shard I of N (as `mp tick --shard`): the webhooks of other shards'
    /// repositories are answered 202 and ignored.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    pub shard: Option<Shard>,
    /// How many repositories are worked on at once (one worker per repository at most).
    #[arg(long, value_name = "N", default_value_t = 4,
          value_parser = clap::value_parser!(u16).range(1..=64))]
    pub workers: u16,
    /// The largest webhook body accepted, in bytes; larger ones are answered 413 (the
    /// next resync covers what they said).
    #[arg(long, value_name = "BYTES", default_value_t = 5 * 1024 * 1024)]
    pub max_body_bytes: usize,
    /// Also append the classifier audit records to this JSON Lines file.
    #[arg(long, value_name = "FILE")]
    pub audit_log: Option<PathBuf>,
}

/// Arguments of `mp tick`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["world", "config"])))]
pub struct TickArgs {
    /// Tick over a world file (see docs/fixtures.md) instead of GitHub.
    #[arg(long, value_name = "FILE")]
    pub world: Option<PathBuf>,
    /// Tick against GitHub with the configuration in this directory (see docs/deploy.md).
    /// Credentials come from MP_GITHUB_TOKEN, or MP_APP_ID with MP_APP_PRIVATE_KEY or
    /// MP_APP_PRIVATE_KEY_PATH (and optionally MP_INSTALLATION_ID).
    #[arg(long, value_name = "DIR")]
    pub config: Option<PathBuf>,
    /// The GitHub REST API root (GitHub Enterprise Server: https://HOST/api/v3).
    #[arg(
        long,
        value_name = "URL",
        env = "MP_API_URL",
        default_value = "https://api.github.com"
    )]
    pub api_url: String,
    /// Keep the HTTP ETag cache in this file between ticks (conditional requests answered
    /// 304 do not spend the rate limit). A missing or unreadable file starts an empty cache.
    #[arg(long, value_name = "PATH")]
    pub http_cache: Option<PathBuf>,
    /// With --world: which GitHub adapter answers. `rest` serves the world on a loopback
    /// HTTP server and runs the tick through the REST client, as production does.
    #[arg(long, value_enum, default_value_t = Adapter::Memory, requires = "world")]
    pub adapter: Adapter,
    /// With `--adapter rest`: inject faults into the loopback server by script, one rule
    /// per line (docs/deploy.md), e.g. `PUT /repos/{o}/{r}/contents/{path} #2 status 422`.
    #[arg(long, value_name = "FILE", requires = "world")]
    pub faults: Option<PathBuf>,
    /// Run at this instant (RFC 3339) instead of the world's `now` (world ticks only).
    #[arg(long, value_name = "TIME", requires = "world")]
    pub now: Option<String>,
    /// With --world: run this many ticks over the same world, the i-th at `now + i ×
    /// --every`, the world carrying over (with its simulated CI, docs/fixtures.md). The
    /// output is every tick's report and a summary (JSON: `{ticks, summary, failed}`); a
    /// tick that fails closed ends the run with exit 3.
    #[arg(long, value_name = "N", default_value_t = 1, requires = "world",
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub ticks: u32,
    /// With --ticks: the time between ticks, e.g. `30s`, `5m`, `1h`.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_every)]
    pub every: Every,
    /// Plan the writes without performing them.
    #[arg(long)]
    pub dry_run: bool,
    /// Also append the classifier audit records to this JSON Lines file.
    #[arg(long, value_name = "FILE")]
    pub audit_log: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Print a report instead of the usual output: `md` is a markdown summary (per
    /// repository: merged, blocked with reasons, routed to the inbox, incidents; the
    /// budget) for a CI job summary.
    #[arg(long, value_enum, value_name = "KIND")]
    pub report: Option<ReportKind>,
    /// Append the markdown summary to this file (e.g. "$GITHUB_STEP_SUMMARY") and print
    /// the usual output.
    #[arg(long, value_name = "FILE")]
    pub report_file: Option<PathBuf>,
    /// After the report, print GitHub Actions workflow commands: a warning annotation per
    /// blocked pull request (with its blocking reasons), a notice per pull request waiting
    /// in the decision inbox and per supervisor finding, a warning per tick warning.
    #[arg(long)]
    pub annotations: bool,
    /// Run only shard I of N, numbered from 0: the supervised repositories whose name
    /// hashes to I (mod N), with their decision-inbox issues; shard 0 also runs the drift
    /// check. N ticks, one per shard, do the work of one, e.g. `mp tick --config config
    /// --shard 0/3`, then `--shard 1/3` and `--shard 2/3` (see docs/deploy.md, Scale-out).
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    pub shard: Option<Shard>,
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
fn parse_every(text: &str) -> Result<Every, String> {
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
fn parse_shard(text: &str) -> Result<Shard, String> {
    Shard::parse(text).map_err(|error| error.to_string())
}

/// A report of `mp tick`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportKind {
    /// A markdown summary.
    Md,
}

/// The GitHub adapter of a world tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Adapter {
    /// The in-memory world answers the port directly.
    #[default]
    Memory,
    /// The REST client talks HTTP to the world served on 127.0.0.1.
    Rest,
}

/// `mp dev ...`
#[derive(Debug, Subcommand)]
pub enum DevCommand {
    /// Serve a world file over GitHub's REST paths on 127.0.0.1, for demos and for trying
    /// `mp tick --config DIR --api-url http://127.0.0.1:PORT` without touching GitHub.
    ///
    /// Mutations change the served world; the server runs until interrupted.
    ServeWorld(ServeWorldArgs),
}

/// Arguments of `mp dev serve-world`.
#[derive(Debug, Args)]
pub struct ServeWorldArgs {
    /// The world file (see docs/fixtures.md).
    #[arg(value_name = "FILE")]
    pub world: PathBuf,
    /// The port on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Inject faults by script (one rule per line, see docs/deploy.md).
    #[arg(long, value_name = "FILE")]
    pub faults: Option<PathBuf>,
    /// Write the world's configuration files into this directory, for `mp tick --config`.
    #[arg(long, value_name = "DIR")]
    pub config_out: Option<PathBuf>,
    /// The served world's clock. `real` (the default) moves the world to the system time
    /// on every request, as a live `mp tick` expects: what the server writes is dated now
    /// and installation tokens last an hour from now. `world` keeps the world file's `now`
    /// fixed, for reproducible answers.
    #[arg(long, value_enum, default_value_t = ClockKind::Real)]
    pub clock: ClockKind,
    /// Deliver a GitHub-shaped webhook to this URL for each change the server makes
    /// (pull_request, check_run, push, issues, issue_comment), signed with
    /// --webhook-secret in X-Hub-Signature-256, as GitHub delivers an App's webhooks.
    #[arg(long, value_name = "URL", requires = "webhook_secret")]
    pub webhook_url: Option<String>,
    /// The webhook secret that signs each delivery; needs --webhook-url (read from the
    /// environment, it is ignored without one).
    #[arg(
        long,
        value_name = "S",
        env = "MP_WEBHOOK_SECRET",
        hide_env_values = true
    )]
    pub webhook_secret: Option<String>,
}

/// The clock of `mp dev serve-world`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ClockKind {
    /// The world file's `now`, fixed.
    World,
    /// The system clock.
    Real,
}

/// Arguments of `mp report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The audit log written by `mp tick --audit-log FILE` (JSON Lines).
    #[arg(long, value_name = "FILE")]
    pub audit_log: PathBuf,
    /// The directory to write index.html into (created when missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The page title.
    #[arg(long, value_name = "T", default_value = "mp report")]
    pub title: String,
    /// Output format of the summary printed on stdout.
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

/// Arguments of `mp completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to generate for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}
