//! `mp serve`: the webhook service over GitHub's REST API (the service itself is the
//! `mp-serve` crate; this module reads the configuration, builds the client and handles
//! the signals).

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use mp_github::rest::RestGitHub;
use mp_serve::{ApiCounters, Limits, Service, Settings, WebhookSecret};
use mp_tick::Shard;

use crate::Exit;
use crate::audit::CliAuditLog;
use crate::cli::{Every, parse_every, parse_shard};
use crate::live::{
    SystemClock, lease_holder, lease_terms, live_credentials, live_options, live_rest_config,
    load_live_config,
};
use crate::skills_load::SkillCalls;

/// Arguments of `mp serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The configuration directory (see docs/deploy.md). Credentials come from the
    /// environment as for `mp tick --config`; the webhook secret from MP_WEBHOOK_SECRET (or
    /// a file named by MP_WEBHOOK_SECRET_FILE).
    #[arg(long, value_name = "DIR")]
    pub config: PathBuf,
    /// The address to listen on, e.g. `0.0.0.0:8080` in a container.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    pub listen: std::net::SocketAddr,
    #[command(flatten)]
    pub api: crate::cli::ApiUrl,
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
    /// How long a connection may take to send a request's header (from its opening, or
    /// from the first byte of its next request), e.g. `10s`.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_every)]
    pub header_timeout: Every,
    /// How long a request's body may take to arrive (GitHub itself gives up on a delivery
    /// after 10 seconds); a slower one is answered 408 and its connection closed.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_every)]
    pub body_timeout: Every,
    /// How long a kept-alive connection may wait for its next request (keep it longer than
    /// a fronting proxy's idle timeout for its upstream connections).
    #[arg(long, value_name = "DURATION", default_value = "75s", value_parser = parse_every)]
    pub idle_timeout: Every,
    /// How many connections may be open at once; a new one beyond closes the connection
    /// that waited longest for a request (keep it under the file-descriptor limit).
    #[arg(long, value_name = "N", default_value_t = 512,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_connections: u32,
    /// Also append the classifier audit records and the agents' records (`pr`,
    /// `incident`, `revert`; read by `mp agents`) to this JSON Lines file.
    #[arg(long, value_name = "FILE")]
    pub audit_log: Option<PathBuf>,
}

/// The environment variable holding the webhook secret.
pub const WEBHOOK_SECRET_VAR: &str = "MP_WEBHOOK_SECRET";

/// The REST client's totals for `/metrics`.
struct RestCounters(Arc<RestGitHub>);

impl ApiCounters for RestCounters {
    fn totals(&self) -> (u64, u64) {
        let stats = self.0.stats();
        (stats.total_requests(), stats.total_not_modified())
    }
}

/// Resolves when SIGTERM or Ctrl-C arrives.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// The connection limits of the arguments.
fn limits(args: &ServeArgs) -> Limits {
    let seconds = |every: Every| Duration::from_secs(u64::try_from(every.seconds()).unwrap_or(1));
    Limits {
        header_timeout: seconds(args.header_timeout),
        body_timeout: seconds(args.body_timeout),
        idle_timeout: seconds(args.idle_timeout),
        max_connections: usize::try_from(args.max_connections).unwrap_or(usize::MAX),
    }
}

/// Reads and validates the configuration directory again, with the checks of the start
/// (those of `mp config validate`) and the options made from it.
///
/// # Errors
/// Every problem that refuses it, one line each (`file:line:column: error[code]: ...`).
fn read_again(
    dir: &std::path::Path,
    shard: Option<Shard>,
    skill_calls: &SkillCalls,
) -> Result<(mp_core::config::Config, mp_tick::TickOptions), Vec<String>> {
    let files = crate::commands::config_validate::read_config_dir(dir)
        .map_err(|e| vec![format!("{e:#}")])?;
    let report = mp_core::config::load(&files);
    for warning in report.warnings() {
        tracing::warn!(%warning, "configuration");
    }
    let Some(config) = report.config else {
        return Err(report.errors().map(ToString::to_string).collect());
    };
    let options =
        live_options(&config, dir, shard, skill_calls).map_err(|e| vec![format!("{e:#}")])?;
    Ok((config, options))
}

/// On every SIGHUP, reads the configuration directory again and swaps it in for the jobs
/// that start afterwards; a configuration that does not validate is logged (one error line
/// per problem, naming its file and line) and the one in force is kept.
#[cfg(unix)]
async fn reload_on_hangup(
    mut hangups: tokio::signal::unix::Signal,
    service: Service,
    dir: PathBuf,
    shard: Option<Shard>,
    skill_calls: SkillCalls,
) {
    while hangups.recv().await.is_some() {
        let directory = dir.display().to_string();
        tracing::info!(directory, "SIGHUP: reading the configuration again");
        match read_again(&dir, shard, &skill_calls) {
            Ok((config, options)) => {
                let repositories = config.projects().supervised_repos().len();
                service.reload(config, options).await;
                tracing::info!(
                    directory,
                    repositories,
                    "configuration reloaded: the jobs that start from now on use it"
                );
            }
            Err(problems) => {
                for problem in &problems {
                    tracing::error!(directory, %problem, "configuration not reloaded");
                }
                tracing::error!(
                    directory,
                    errors = problems.len(),
                    "configuration not reloaded: the configuration in force is kept"
                );
            }
        }
    }
}

/// Runs `mp serve` until a stop signal.
pub fn run(args: &ServeArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let (config, warnings) = load_live_config(&args.config)?;
    for warning in &warnings {
        tracing::warn!(%warning, "configuration");
    }
    let secret = crate::live::secret(WEBHOOK_SECRET_VAR)?
        .and_then(WebhookSecret::new)
        .with_context(|| {
            format!(
                "no webhook secret: set {WEBHOOK_SECRET_VAR} (or {WEBHOOK_SECRET_VAR}_FILE) to the secret of the App's webhook (docs/serve.md)"
            )
        })?;
    let credentials = live_credentials()?;
    let skill_calls = SkillCalls::default();
    let options = live_options(&config, &args.config, args.shard, &skill_calls)?
        .with_lease_holder(lease_holder("serve", args.shard))
        .with_lease_terms(lease_terms(mp_tick::lease::LeaseTerms::default())?);
    let rest = live_rest_config(&args.api.url, &config, credentials);
    let client = Arc::new(RestGitHub::new(rest).context("building the REST client")?);
    let mut settings = Settings::new(config, options, secret);
    settings.resync_every =
        Duration::from_secs(u64::try_from(args.resync_every.seconds()).unwrap_or(600));
    settings.workers = usize::from(args.workers);
    settings.max_body_bytes = args.max_body_bytes;
    let service = Service::new(
        client.clone(),
        Arc::new(CliAuditLog::streaming(args.audit_log.clone())),
        Arc::new(SystemClock),
        settings,
    )
    .with_api_counters(Arc::new(RestCounters(client)));

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        // Installed first: from here on SIGHUP reloads instead of ending the process.
        #[cfg(unix)]
        let hangups = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
            .context("handling SIGHUP")?;
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("cannot listen on {}", args.listen))?;
        let addr = listener.local_addr()?;
        writeln!(out, "mp serve listening on http://{addr}")?;
        out.flush()?;
        tracing::info!(%addr, "mp serve listening");
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            stop_signal().await;
            let _ = stop_tx.send(true);
        });
        let stopped = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
            let _ = rx.wait_for(|stop| *stop).await;
        };
        let server = {
            let service = service.clone();
            let limits = limits(args);
            let stop = stop_rx.clone();
            tokio::spawn(async move { service.serve(listener, limits, stopped(stop)).await })
        };
        #[cfg(unix)]
        let reload = tokio::spawn(reload_on_hangup(
            hangups,
            service.clone(),
            args.config.clone(),
            args.shard,
            skill_calls.clone(),
        ));
        if let Err(error) = service.start().await {
            tracing::error!(%error, "mp serve cannot start");
            writeln!(out, "mp serve failed closed: {error}")?;
            server.abort();
            return Ok(Exit::FailedClosed);
        }
        service.run(stopped(stop_rx)).await;
        #[cfg(unix)]
        reload.abort();
        if let Err(error) = server.await {
            tracing::warn!(%error, "the HTTP server task failed");
        }
        writeln!(out, "mp serve stopped")?;
        Ok(Exit::Ok)
    })
}
