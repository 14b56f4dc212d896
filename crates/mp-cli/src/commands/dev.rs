//! `mp dev serve-world FILE`: a world served over GitHub's REST paths on 127.0.0.1;
//! `mp dev capture`: a repository recorded into a world file (`capture`).

pub mod capture;

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand, ValueEnum};
use mp_github_fake::loopback::WebhookTarget;
use mp_github_fake::{FaultScript, LoopbackServer};

use crate::Exit;

/// `mp dev ...`
#[derive(Debug, Subcommand)]
pub enum DevCommand {
    /// Serve a world file over GitHub's REST paths on 127.0.0.1, for demos and for trying
    /// `mp tick --config DIR --api-url http://127.0.0.1:PORT` without touching GitHub.
    ///
    /// Mutations change the served world; the server runs until interrupted.
    ServeWorld(ServeWorldArgs),
    /// Record repositories on GitHub into a world file, read-only, to replay offline what
    /// mp would do: `mp tick --world FILE --dry-run`, `mp explain --world FILE OWNER/REPO#N`.
    ///
    /// Captured, per repository: the default branch, its head and its newest 20 commits
    /// with their check runs and activity log; the newest --prs open pull requests with
    /// their commits (messages and trailers), changed files (names and counts, not
    /// contents), check runs on the head, labels and label timeline, comments, reactions
    /// and head-branch activity; GitHub's record of those labels; the drift check's
    /// canonical files. In the governance and inbox repositories also the open issues
    /// (with timeline, comments and reactions), the decision records and the bot-state
    /// files. The configuration files of DIR are embedded; the time of the capture is the
    /// world's `now`.
    ///
    /// Not captured: secrets (no receipt key: the replay reads receipts and inbox questions
    /// unsigned, so a forged signature is not caught offline; add `receipt_key` to a
    /// private copy to check them), user skills under DIR/skills, closed pull requests
    /// and issues, older history, other branches, workflow runs, mergeability (every pull
    /// request reads as mergeable). Makes no write of any kind. Exit 0 when written; 2 when
    /// it cannot run (no credentials, an unknown or unsupervised repository, --out exists
    /// without --force), and then nothing was written; 5 when DIR holds no configuration.
    Capture(capture::CaptureArgs),
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

/// The fault script in `path`, or none.
///
/// # Errors
/// The file cannot be read or is not a fault script (exit 2).
pub fn read_faults(path: Option<&std::path::Path>) -> anyhow::Result<FaultScript> {
    match path {
        Some(path) => {
            let text = super::read_input(path)?;
            text.parse::<FaultScript>()
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
        }
        None => Ok(FaultScript::default()),
    }
}

/// The environment variable that may hold `--webhook-secret`.
const WEBHOOK_SECRET_ENV: &str = "MP_WEBHOOK_SECRET";

/// The webhook target of `--webhook-url` and `--webhook-secret`: both or neither. A
/// secret from the environment without a URL is left unused (the variable may be set for
/// another command); one given on the command line is an error.
///
/// # Errors
/// `--webhook-secret` on the command line without `--webhook-url` (exit 2).
fn webhook_target(args: &ServeWorldArgs) -> anyhow::Result<Option<WebhookTarget>> {
    match (&args.webhook_url, &args.webhook_secret) {
        (Some(url), Some(secret)) => Ok(Some(WebhookTarget {
            url: url.clone(),
            secret: secret.clone(),
        })),
        (Some(_), None) => anyhow::bail!("--webhook-url needs --webhook-secret"),
        (None, Some(secret)) => {
            let from_env = std::env::var(WEBHOOK_SECRET_ENV).is_ok_and(|env| env == *secret);
            if from_env {
                Ok(None)
            } else {
                anyhow::bail!("--webhook-secret needs --webhook-url")
            }
        }
        (None, None) => Ok(None),
    }
}

/// Starts the loopback server and serves until interrupted (Ctrl-C).
pub fn serve_world(args: &ServeWorldArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let world = mp_github_fake::load_world(&args.world)?;
    let faults = read_faults(args.faults.as_deref())?;
    let webhooks = webhook_target(args)?;
    if let Some(dir) = &args.config_out {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        for (name, text) in &world.config {
            if name.contains(['/', '\\']) || name.starts_with('.') {
                anyhow::bail!(
                    "the world names a configuration file {name:?}, not a plain file name"
                );
            }
            let path = dir.join(name);
            std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        }
    }
    let config_dir = args
        .config_out
        .as_ref()
        .map_or_else(|| "DIR".to_owned(), |d| d.display().to_string());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, args.port));
        let clock = match args.clock {
            ClockKind::World => mp_github_fake::ServerClock::World,
            ClockKind::Real => mp_github_fake::ServerClock::Real,
        };
        let webhook_url = webhooks.as_ref().map(|target| target.url.clone());
        let server = match webhooks {
            Some(target) => LoopbackServer::bind_with_webhooks(world, faults, addr, clock, target)
                .await
                .with_context(|| format!("serving at {addr} with webhooks"))?,
            None => LoopbackServer::bind_with_clock(world, faults, addr, clock)
                .await
                .with_context(|| format!("binding {addr}"))?,
        };
        writeln!(
            out,
            "serving {} at {}",
            args.world.display(),
            server.base_url()
        )?;
        writeln!(
            out,
            "clock: {}",
            match clock {
                mp_github_fake::ServerClock::Real =>
                    "the system clock (--clock world keeps the world's now)",
                _ => "the world's now, fixed (--clock real follows the system clock)",
            }
        )?;
        if let Some(url) = &webhook_url {
            writeln!(out, "webhooks: each change is delivered to {url}, signed")?;
        }
        writeln!(
            out,
            "try: MP_GITHUB_TOKEN=any mp tick --config {config_dir} --api-url {}",
            server.base_url()
        )?;
        writeln!(out, "stop with Ctrl-C")?;
        out.flush()?;
        let server = std::sync::Arc::new(server);
        let watcher = webhook_url
            .is_some()
            .then(|| tokio::spawn(log_failed_deliveries(std::sync::Arc::clone(&server))));
        tokio::signal::ctrl_c()
            .await
            .context("waiting for Ctrl-C")?;
        if let Some(watcher) = watcher {
            watcher.abort();
            // An aborted watcher has nothing to report.
            let _ = watcher.await;
        }
        writeln!(
            out,
            "served {} requests; {} writes applied",
            server.total_requests(),
            server.memory().actions().len()
        )?;
        if webhook_url.is_some() {
            let deliveries = server.webhook_deliveries();
            writeln!(
                out,
                "webhooks: {} delivered, {} failed, {} still queued",
                deliveries.sent,
                deliveries.failed,
                deliveries.pending()
            )?;
        }
        let server = std::sync::Arc::into_inner(server)
            .context("the server is still shared after its watcher stopped")?;
        // Shutting down sends what is still queued.
        server.shutdown().await;
        anyhow::Ok(())
    })?;
    Ok(Exit::Ok)
}

/// Reports each failed webhook delivery on stderr as it happens (the server counts and
/// drops them, as GitHub does), checking once a second.
async fn log_failed_deliveries(server: std::sync::Arc<LoopbackServer>) {
    let mut reported = 0;
    let mut ticks = tokio::time::interval(std::time::Duration::from_secs(1));
    loop {
        ticks.tick().await;
        let deliveries = server.webhook_deliveries();
        if deliveries.failed > reported {
            reported = deliveries.failed;
            let last = deliveries.last_failure.unwrap_or_default();
            // Nothing to do when stderr is gone.
            let _ = writeln!(
                std::io::stderr().lock(),
                "webhook delivery failed ({reported} so far): {last}"
            );
        }
    }
}
