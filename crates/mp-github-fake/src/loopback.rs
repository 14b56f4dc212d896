//! The loopback GitHub server: an in-memory world served over GitHub's REST paths, for
//! tests and demos.
//!
//! [`LoopbackServer`] binds a local port and answers GitHub's REST routes from a
//! [`MemoryGitHub`]: every mutation goes through the port's methods, so the action log is
//! the one a direct in-memory run writes. Around each handler it does what GitHub does
//! around its API: it requires an `Authorization` header, counts the primary rate limit
//! (the world's `rate_limit_remaining`, else 5000; the `MemoryGitHub` itself then counts no
//! limit), pages listings with `Link` headers, tags reads with ETags and answers matching
//! conditional requests with 304. A [`FaultScript`] injects failures into chosen requests.
//! Besides GitHub's routes it serves `POST /repos/{o}/{r}/_loopback/revert`
//! (`{sha, branch, message}`), the world's stand-in for pushing a revert with git, and
//! `POST /repos/{o}/{r}/_loopback/label` (`{number, label, actor}`), a person applying a
//! label: the label is applied as `actor` at the world's clock and recorded as a world
//! file records a human's label (the `labeled` timeline event by `actor`, which the gate
//! binds to the head through the head branch's activity log); it answers the thread's
//! labels (200), 422 for a missing field or an invalid login, 404 for an unknown number,
//! and spends no rate limit. A label already present changes nothing.
//!
//! Started with a [`WebhookTarget`] ([`LoopbackServer::bind_with_webhooks`]), the server
//! also delivers GitHub-shaped, signed webhooks for each change a route makes (the
//! `webhook` module lists which event for which change), in the background;
//! [`LoopbackServer::webhook_deliveries`] counts them.

mod boilerplate;
mod conn;
mod fault;
mod graphql;
mod middleware;
mod page;
mod render;
mod routes;
mod state;
mod webhook;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use mp_github::rest::Sleeper;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::memory::MemoryGitHub;
use crate::world::World;

pub use fault::{Fault, FaultRule, FaultScript, ParseFaultError};
pub use webhook::{DELIVERY_TIMEOUT, WebhookDeliveries, WebhookTarget, signature_256};

use conn::{ConnectionSwitch, CuttableListener};
use state::{DEFAULT_LIMIT, Shared};
use webhook::Webhooks;

/// Requests of one route template: all of them, and those answered 304 Not Modified.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RouteCount {
    /// Every request, whatever its answer.
    pub requests: u64,
    /// Conditional requests answered 304 (they spend no rate limit).
    pub not_modified: u64,
}

/// The clock of a served world.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ServerClock {
    /// The world's `now`, fixed (moved only by [`MemoryGitHub::set_now`]): reproducible
    /// answers, as tests want.
    #[default]
    World,
    /// The system clock: each request moves the world to the present, so commits and
    /// comments the server writes, token expiries and the rate-limit reset are real times,
    /// as a live `mp tick` (which reads the system clock) expects.
    Real,
}

/// A running loopback server.
#[derive(Debug)]
pub struct LoopbackServer {
    shared: Arc<Shared>,
    addr: SocketAddr,
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

impl LoopbackServer {
    /// Serves `world` on `127.0.0.1` at a free port.
    ///
    /// # Errors
    /// When the port cannot be bound.
    pub async fn start(world: World, faults: FaultScript) -> std::io::Result<Self> {
        Self::bind(world, faults, SocketAddr::from(([127, 0, 0, 1], 0))).await
    }

    /// Serves `world` at `addr`.
    ///
    /// # Errors
    /// When `addr` cannot be bound.
    pub async fn bind(
        world: World,
        faults: FaultScript,
        addr: SocketAddr,
    ) -> std::io::Result<Self> {
        Self::bind_with_clock(world, faults, addr, ServerClock::World).await
    }

    /// Serves `world` at `addr` on `clock`.
    ///
    /// # Errors
    /// When `addr` cannot be bound.
    pub async fn bind_with_clock(
        world: World,
        faults: FaultScript,
        addr: SocketAddr,
        clock: ServerClock,
    ) -> std::io::Result<Self> {
        Self::bind_inner(world, faults, addr, clock, None, None).await
    }

    /// Serves `world` on `127.0.0.1` at a free port, waiting out each `delay` fault on
    /// `sleeper` instead of the system clock: a test shares a
    /// [`mp_github::rest::VirtualClock`] with its client, whose request timeout then runs
    /// out on the same clock, and no wall-clock time passes.
    ///
    /// # Errors
    /// When the port cannot be bound.
    pub async fn start_on(
        world: World,
        faults: FaultScript,
        sleeper: Arc<dyn Sleeper>,
    ) -> std::io::Result<Self> {
        let addr = SocketAddr::from(([127, 0, 0, 1], 0));
        Self::bind_inner(world, faults, addr, ServerClock::World, None, Some(sleeper)).await
    }

    /// The clock `delay` faults are waited out on.
    pub fn sleeper(&self) -> Arc<dyn Sleeper> {
        Arc::clone(&self.shared.sleeper)
    }

    /// Serves `world` at `addr` on `clock`, delivering a webhook to `target` for each
    /// change a request makes (see the `webhook` module for which event for which change).
    ///
    /// # Errors
    /// When `addr` cannot be bound, or the target's URL is not an `http` or `https` URL
    /// ([`std::io::ErrorKind::InvalidInput`]).
    pub async fn bind_with_webhooks(
        world: World,
        faults: FaultScript,
        addr: SocketAddr,
        clock: ServerClock,
        target: WebhookTarget,
    ) -> std::io::Result<Self> {
        Self::bind_inner(world, faults, addr, clock, Some(target), None).await
    }

    async fn bind_inner(
        mut world: World,
        faults: FaultScript,
        addr: SocketAddr,
        clock: ServerClock,
        target: Option<WebhookTarget>,
        sleeper: Option<Arc<dyn Sleeper>>,
    ) -> std::io::Result<Self> {
        let webhooks = target
            .map(|target| Webhooks::start(target, &world.bot_slug))
            .transpose()?;
        if let Some(hooks) = &webhooks {
            hooks.prime(&world);
        }
        if clock == ServerClock::Real
            && let Ok(now) =
                mp_core::ids::Timestamp::from_unix_seconds(jiff::Timestamp::now().as_second())
        {
            world.now = now;
        }
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        // The server counts the limit; the port must not spend it a second time.
        let remaining = world.rate_limit_remaining.take().unwrap_or(DEFAULT_LIMIT);
        let limit = remaining.max(DEFAULT_LIMIT);
        let reset = world.now.plus_hours(1).unix_seconds();
        let memory = Arc::new(MemoryGitHub::new(world));
        let mut shared = Shared::new(
            memory,
            format!("http://{addr}"),
            faults,
            (limit, remaining, reset),
            clock == ServerClock::Real,
            webhooks,
        );
        if let Some(sleeper) = sleeper {
            shared.sleeper = sleeper;
        }
        let shared = Arc::new(shared);
        let app = routes::router(Arc::clone(&shared))
            .into_make_service_with_connect_info::<ConnectionSwitch>();
        let (stop, stopped) = oneshot::channel::<()>();
        let serve =
            axum::serve(CuttableListener::new(listener), app).with_graceful_shutdown(async move {
                // A dropped sender stops the server too.
                let _ = stopped.await;
            });
        let task = tokio::spawn(async move {
            // Serving ends only when stopped; its result carries nothing to report.
            let _ = serve.await;
        });
        Ok(Self {
            shared,
            addr,
            stop,
            task,
        })
    }

    /// `http://127.0.0.1:<port>`, without a trailing slash.
    pub fn base_url(&self) -> String {
        self.shared.base_url.clone()
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The world behind the server, with its action log.
    pub fn memory(&self) -> &MemoryGitHub {
        &self.shared.memory
    }

    /// The world behind the server, shared.
    pub fn memory_arc(&self) -> Arc<MemoryGitHub> {
        Arc::clone(&self.shared.memory)
    }

    /// Requests so far by method and route template, e.g.
    /// `GET /repos/{o}/{r}/pulls/{n}/commits` (the concrete path when no route matched).
    pub fn requests(&self) -> BTreeMap<String, RouteCount> {
        self.shared.requests()
    }

    /// All requests so far.
    pub fn total_requests(&self) -> u64 {
        self.shared.requests().values().map(|c| c.requests).sum()
    }

    /// Calls left in the primary rate-limit window.
    pub fn rate_limit_remaining(&self) -> u32 {
        self.shared.remaining()
    }

    /// GraphQL points left in its window (GitHub's separate GraphQL budget).
    pub fn graphql_remaining(&self) -> u32 {
        self.shared.graphql_budget().0
    }

    /// Replaces the fault rules; the new rules count matching requests from zero.
    pub fn set_faults(&self, faults: FaultScript) {
        self.shared.set_faults(faults);
    }

    /// The rules that fired so far, in order, each as its script line.
    pub fn fired_faults(&self) -> Vec<String> {
        self.shared.fired_faults()
    }

    /// Whether any request came without a usable `Authorization` header (`Bearer <t>` or
    /// `token <t>`); such requests are answered 401.
    pub fn saw_unauthenticated(&self) -> bool {
        self.shared.unauthenticated() > 0
    }

    /// How many requests came without a usable `Authorization` header.
    pub fn unauthenticated_requests(&self) -> u64 {
        self.shared.unauthenticated()
    }

    /// The webhook deliveries so far (all zero without a [`WebhookTarget`]).
    pub fn webhook_deliveries(&self) -> WebhookDeliveries {
        self.shared
            .webhooks
            .as_ref()
            .map(Webhooks::deliveries)
            .unwrap_or_default()
    }

    /// Stops serving: open connections are closed once idle, and after five seconds at
    /// most; then the queued webhook deliveries go out, for five seconds at most.
    pub async fn shutdown(self) {
        let Self {
            shared,
            stop,
            mut task,
            ..
        } = self;
        // The server task may already be gone; then there is nothing to stop.
        let _ = stop.send(());
        if tokio::time::timeout(Duration::from_secs(5), &mut task)
            .await
            .is_err()
        {
            task.abort();
        }
        if let Some(webhooks) = &shared.webhooks {
            webhooks.close().await;
        }
    }
}
