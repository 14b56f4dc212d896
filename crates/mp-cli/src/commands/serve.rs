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
use mp_serve::{ApiCounters, Service, Settings, WebhookSecret};
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
    /// Also append the classifier audit records to this JSON Lines file.
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
        let server = tokio::spawn(
            axum::serve(listener, service.router())
                .with_graceful_shutdown(stopped(stop_rx.clone()))
                .into_future(),
        );
        if let Err(error) = service.start().await {
            tracing::error!(%error, "mp serve cannot start");
            writeln!(out, "mp serve failed closed: {error}")?;
            server.abort();
            return Ok(Exit::FailedClosed);
        }
        service.run(stopped(stop_rx)).await;
        match server.await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => tracing::warn!(%error, "the HTTP server stopped with an error"),
            Err(error) => tracing::warn!(%error, "the HTTP server task failed"),
        }
        writeln!(out, "mp serve stopped")?;
        Ok(Exit::Ok)
    })
}
