//! The service's listener: accepts TCP connections and serves [`Service::router`] on them
//! over HTTP/1.1, with the limits an endpoint open to the internet needs (docs/serve.md,
//! "Connections"; docs/decisions/0068):
//!
//! * a connection delivers a complete request header within the header timeout of being
//!   opened, or of the first byte of its next request;
//! * a request's body arrives within the body timeout (else 408), and a body declared longer
//!   than the body limit is refused at once (413), unread;
//! * a kept-alive connection that sends nothing for the idle timeout is closed;
//! * at most `max_connections` are open: a new one closes the connection that has waited
//!   longest for a request, or is refused when every open connection is in a request;
//! * every refused, timed-out, evicted or failed connection is one log line; an accept error
//!   is logged and never spins: out of file descriptors (EMFILE), a sixteenth of the open
//!   connections, the longest waiting, are closed to free some; when nothing can be freed
//!   the accept loop pauses (50 ms, doubling to 1 s while the errors last).
//!
//! The timers run on tokio's clock, so a test on a paused runtime moves them.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderValue, Request, Response, StatusCode, header};
use hyper::body::Incoming;
use hyper::service::Service as _;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, watch};
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::service::Service;

/// The connection limits of [`Service::serve`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// From a connection's opening, or the first byte of its next request, to the end of
    /// the request's header.
    pub header_timeout: Duration,
    /// From the end of a request's header to the end of its body (and the answer, which
    /// never waits for the work).
    pub body_timeout: Duration,
    /// How long a kept-alive connection may wait for its next request.
    pub idle_timeout: Duration,
    /// How many connections may be open at once.
    pub max_connections: usize,
}

impl Default for Limits {
    /// A 10-second header timeout, a 10-second body timeout (GitHub gives up on a delivery
    /// after 10 seconds), a 75-second idle timeout (longer than the 60 seconds a fronting
    /// proxy or load balancer usually keeps an idle upstream connection, so the service
    /// never closes one under a request the proxy is sending), and 512 connections.
    fn default() -> Self {
        Self {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(75),
            max_connections: 512,
        }
    }
}

/// The first pause of the accept loop after an accept error that freed nothing, and the
/// longest.
const ACCEPT_PAUSE: Duration = Duration::from_millis(50);
const ACCEPT_PAUSE_MAX: Duration = Duration::from_secs(1);
/// The pause after closing connections for descriptors: their tasks close them meanwhile.
const EVICTED_PAUSE: Duration = Duration::from_millis(1);

/// Where a connection is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Reading a request's header since `since`: the header timeout runs.
    Header { since: Instant },
    /// Kept alive, waiting for a next request since `since`: the idle timeout runs.
    Idle { since: Instant },
    /// This many requests in the handler: each request's own body timeout runs.
    Busy(usize),
}

/// One open connection, as the accept loop and its own task see it.
#[derive(Debug)]
struct Conn {
    peer: SocketAddr,
    phase: Mutex<Phase>,
    /// Rung on every change of phase (the watchdog recomputes its deadline).
    changed: Notify,
    /// Rung to close the connection (to make room for a new one).
    evict: Notify,
}

impl Conn {
    fn new(peer: SocketAddr) -> Self {
        Self {
            peer,
            phase: Mutex::new(Phase::Header {
                since: Instant::now(),
            }),
            changed: Notify::new(),
            evict: Notify::new(),
        }
    }

    fn phase(&self) -> Phase {
        *self
            .phase
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn update(&self, next: impl FnOnce(Phase) -> Phase) {
        {
            let mut phase = self
                .phase
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            *phase = next(*phase);
        }
        self.changed.notify_one();
    }

    /// Bytes arrived: after a keep-alive pause, a next request's header has begun.
    fn bytes_read(&self) {
        if matches!(self.phase(), Phase::Idle { .. }) {
            self.update(|phase| match phase {
                Phase::Idle { .. } => Phase::Header {
                    since: Instant::now(),
                },
                other => other,
            });
        }
    }

    fn request_started(&self) {
        self.update(|phase| match phase {
            Phase::Busy(n) => Phase::Busy(n + 1),
            _ => Phase::Busy(1),
        });
    }

    fn request_done(&self) {
        self.update(|phase| match phase {
            Phase::Busy(n) if n > 1 => Phase::Busy(n - 1),
            _ => Phase::Idle {
                since: Instant::now(),
            },
        });
    }

    /// Since when it has waited for a request, unless it is in one.
    fn waiting_since(&self) -> Option<Instant> {
        match self.phase() {
            Phase::Header { since } | Phase::Idle { since } => Some(since),
            Phase::Busy(_) => None,
        }
    }

    /// Resolves with the reason when the connection outlives its header or idle timeout.
    async fn expired(&self, limits: Limits) -> String {
        loop {
            let changed = self.changed.notified();
            let (deadline, reason) = match self.phase() {
                Phase::Header { since } => (
                    since + limits.header_timeout,
                    format!(
                        "no complete request header within {} s",
                        limits.header_timeout.as_secs_f64()
                    ),
                ),
                Phase::Idle { since } => (
                    since + limits.idle_timeout,
                    format!(
                        "idle for {} s without a request",
                        limits.idle_timeout.as_secs_f64()
                    ),
                ),
                Phase::Busy(_) => {
                    changed.await;
                    continue;
                }
            };
            if Instant::now() >= deadline {
                return reason;
            }
            tokio::select! {
                () = tokio::time::sleep_until(deadline) => {}
                () = changed => {}
            }
        }
    }
}

/// The open connections by number, oldest first.
#[derive(Debug, Default)]
struct Open(Mutex<BTreeMap<u64, Arc<Conn>>>);

impl Open {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Arc<Conn>>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn len(&self) -> usize {
        self.lock().len()
    }

    /// Closes up to `count` of the connections that have waited longest for a request;
    /// how many it closed (none when every open connection is in a request).
    fn evict_longest_waiting(&self, count: usize, why: &str) -> usize {
        let mut open = self.lock();
        let mut waiting: Vec<(Instant, u64)> = open
            .iter()
            .filter_map(|(id, conn)| conn.waiting_since().map(|since| (since, *id)))
            .collect();
        waiting.sort_unstable();
        let mut closed = 0;
        for (since, id) in waiting.into_iter().take(count) {
            if let Some(conn) = open.remove(&id) {
                tracing::warn!(
                    peer = %conn.peer,
                    waited_seconds = since.elapsed().as_secs_f64(),
                    open = open.len() + 1,
                    why,
                    "closed the connection that waited longest for a request, to make room"
                );
                conn.evict.notify_one();
                closed += 1;
            }
        }
        closed
    }
}

/// Counts the connection's bytes in, to tell a next request from an idle connection.
struct Watched {
    stream: TcpStream,
    conn: Arc<Conn>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.stream).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.conn.bytes_read();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

/// Marks a request done when its answer is made, or when it is dropped unanswered.
struct InRequest(Arc<Conn>);

impl Drop for InRequest {
    fn drop(&mut self) {
        self.0.request_done();
    }
}

/// A refusal that closes the connection.
fn refusal(status: StatusCode, reason: &str) -> Response<Body> {
    let mut response = crate::http::answer(status, "rejected", reason);
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// One request: refused at once when its declared body is over `max_body`, answered 408
/// when its body does not arrive within the body timeout, else the router's answer.
async fn request(
    request: Request<Incoming>,
    conn: Arc<Conn>,
    router: Router,
    limits: Limits,
    max_body: usize,
) -> Result<Response<Body>, Infallible> {
    conn.request_started();
    let _in_request = InRequest(Arc::clone(&conn));
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if let Some(declared) = declared
        && declared > u64::try_from(max_body).unwrap_or(u64::MAX)
    {
        let reason = format!(
            "a body of {declared} bytes declared, over the limit of {max_body} bytes; not read"
        );
        tracing::warn!(peer = %conn.peer, path = %request.uri().path(), status = 413, reason, "request refused");
        return Ok(refusal(StatusCode::PAYLOAD_TOO_LARGE, &reason));
    }
    let path = request.uri().path().to_owned();
    let answer = TowerToHyperService::new(router).call(request);
    match tokio::time::timeout(limits.body_timeout, answer).await {
        Ok(Ok(response)) => Ok(response),
        Ok(Err(never)) => match never {},
        Err(_) => {
            let reason = format!(
                "the request's body did not arrive within {} s",
                limits.body_timeout.as_secs_f64()
            );
            tracing::warn!(peer = %conn.peer, path, status = 408, reason, "request refused");
            Ok(refusal(StatusCode::REQUEST_TIMEOUT, &reason))
        }
    }
}

/// Serves one connection until it closes, fails, times out, is evicted, or (after the stop)
/// finishes its request in hand.
async fn connection(
    stream: TcpStream,
    conn: Arc<Conn>,
    router: Router,
    limits: Limits,
    max_body: usize,
    mut stop: watch::Receiver<bool>,
) {
    let io = TokioIo::new(Watched {
        stream,
        conn: Arc::clone(&conn),
    });
    let handler = {
        let conn = Arc::clone(&conn);
        hyper::service::service_fn(move |req| {
            request(req, Arc::clone(&conn), router.clone(), limits, max_body)
        })
    };
    let http = hyper::server::conn::http1::Builder::new().serve_connection(io, handler);
    tokio::pin!(http);
    let mut stopping = false;
    loop {
        tokio::select! {
            served = http.as_mut() => {
                if let Err(error) = served {
                    tracing::warn!(peer = %conn.peer, %error, "connection failed");
                }
                return;
            }
            reason = conn.expired(limits) => {
                tracing::warn!(peer = %conn.peer, reason, "connection closed");
                return;
            }
            () = conn.evict.notified() => return,
            _ = stop.wait_for(|stop| *stop), if !stopping => {
                stopping = true;
                http.as_mut().graceful_shutdown();
            }
        }
    }
}

/// Whether an accept error means the process (or the system) is out of file descriptors.
fn out_of_descriptors(error: &std::io::Error) -> bool {
    // EMFILE (24) and ENFILE (23) on Linux and the BSDs.
    matches!(error.raw_os_error(), Some(23 | 24))
}

impl Service {
    /// Serves [`Service::router`] on `listener` under `limits` until `shutdown` resolves;
    /// then accepts nothing more, closes the idle connections and waits for the requests
    /// in hand (each bounded by its timeouts).
    pub async fn serve(
        &self,
        listener: TcpListener,
        limits: Limits,
        shutdown: impl Future<Output = ()>,
    ) {
        let router = self.router();
        let max_body = self.inner.settings().max_body_bytes;
        let (stop_tx, stop_rx) = watch::channel(false);
        let open = Arc::new(Open::default());
        let mut tasks = JoinSet::new();
        let mut next = 0_u64;
        let mut pause = ACCEPT_PAUSE;
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                () = &mut shutdown => break,
                Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
                accepted = listener.accept() => match accepted {
                    Ok((stream, peer)) => {
                        pause = ACCEPT_PAUSE;
                        if open.len() >= limits.max_connections.max(1)
                            && open.evict_longest_waiting(1, "the connection limit was reached") == 0
                        {
                            tracing::warn!(
                                %peer,
                                open = open.len(),
                                max_connections = limits.max_connections,
                                "connection refused: every open connection is in a request"
                            );
                            continue;
                        }
                        next += 1;
                        let id = next;
                        let conn = Arc::new(Conn::new(peer));
                        open.lock().insert(id, Arc::clone(&conn));
                        let open = Arc::clone(&open);
                        let router = router.clone();
                        let stop = stop_rx.clone();
                        tasks.spawn(async move {
                            connection(stream, conn, router, limits, max_body, stop).await;
                            open.lock().remove(&id);
                        });
                    }
                    Err(error) => {
                        let descriptors = out_of_descriptors(&error);
                        tracing::error!(
                            %error,
                            open = open.len(),
                            pause_ms = u64::try_from(pause.as_millis()).unwrap_or(u64::MAX),
                            "accepting a connection failed{}",
                            if descriptors { ": out of file descriptors (raise LimitNOFILE or lower --max-connections)" } else { "" }
                        );
                        // Out of descriptors: free a sixteenth of the open connections (the
                        // longest waiting), so the next accepts succeed; then a moment for
                        // their tasks to close them. Nothing freed: back off.
                        let freed = if descriptors {
                            open.evict_longest_waiting((open.len() / 16).max(1), "out of file descriptors")
                        } else {
                            0
                        };
                        if freed > 0 {
                            tokio::time::sleep(EVICTED_PAUSE).await;
                        } else {
                            tokio::time::sleep(pause).await;
                            pause = (pause * 2).min(ACCEPT_PAUSE_MAX);
                        }
                    }
                },
            }
        }
        drop(listener);
        let _ = stop_tx.send(true);
        while tasks.join_next().await.is_some() {}
    }
}
