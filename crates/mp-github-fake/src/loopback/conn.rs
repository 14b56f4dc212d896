//! Connections of the loopback server that a handler can cut: each accepted socket carries a
//! switch, handed to requests as connection info, so a `drop` fault closes the socket
//! before any byte of the answer is written and a `truncate` fault closes it halfway
//! through the answer's body.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

/// A TCP listener whose connections can be cut.
pub(super) struct CuttableListener {
    inner: TcpListener,
}

impl CuttableListener {
    pub(super) fn new(inner: TcpListener) -> Self {
        Self { inner }
    }
}

impl Listener for CuttableListener {
    type Io = CuttableStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match self.inner.accept().await {
                Ok((stream, addr)) => {
                    // Small answers go out at once; a failure here only costs latency.
                    let _ = stream.set_nodelay(true);
                    return (
                        CuttableStream {
                            inner: stream,
                            mode: SharedMode::default(),
                        },
                        addr,
                    );
                }
                // Accept errors (e.g. too many open files) pass; wait a moment and retry.
                Err(_) => tokio::time::sleep(Duration::from_millis(5)).await,
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

/// What a connection still lets through.
#[derive(Debug, Default)]
enum Mode {
    /// Everything.
    #[default]
    Open,
    /// Nothing: every read and write fails.
    Cut,
    /// The head of the next answer and `body_budget` bytes of its body, then nothing.
    Truncate {
        body_budget: usize,
        /// Bytes written since truncation was asked for.
        written: usize,
        /// The head written so far, until its end is found.
        head: Vec<u8>,
        /// Where the body starts, counted like `written`, once known.
        body_start: Option<usize>,
    },
}

impl Mode {
    /// How many bytes of `buf` may still be written; 0 means the connection is done.
    fn allowed(&self, buf: &[u8]) -> usize {
        match self {
            Self::Open => buf.len(),
            Self::Cut => 0,
            Self::Truncate {
                body_budget,
                written,
                head,
                body_start,
            } => {
                // Until the head's end is found, `head` holds every byte written.
                let body_start = body_start.or_else(|| {
                    let mut joined = head.clone();
                    joined.extend_from_slice(buf);
                    head_end(&joined)
                });
                match body_start {
                    None => buf.len(),
                    Some(start) => (start + body_budget)
                        .saturating_sub(*written)
                        .min(buf.len()),
                }
            }
        }
    }

    /// Records that `sent` was written.
    fn advance(&mut self, sent: &[u8]) {
        if let Self::Truncate {
            written,
            head,
            body_start,
            ..
        } = self
        {
            if body_start.is_none() {
                head.extend_from_slice(sent);
                *body_start = head_end(head);
            }
            *written += sent.len();
        }
    }
}

/// The offset just past the `\r\n\r\n` that ends an HTTP head, if `bytes` holds it.
fn head_end(bytes: &[u8]) -> Option<usize> {
    bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|at| at + 4)
}

type SharedMode = Arc<Mutex<Mode>>;

fn lock(mode: &SharedMode) -> MutexGuard<'_, Mode> {
    mode.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A TCP stream whose reads and writes its [`ConnectionSwitch`] can stop.
pub(super) struct CuttableStream {
    inner: TcpStream,
    mode: SharedMode,
}

impl CuttableStream {
    fn is_cut(&self) -> bool {
        matches!(*lock(&self.mode), Mode::Cut)
    }
}

fn cut_error() -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionAborted,
        "connection cut by a fault",
    )
}

impl AsyncRead for CuttableStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.is_cut() {
            return Poll::Ready(Err(cut_error()));
        }
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for CuttableStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let allowed = lock(&this.mode).allowed(buf);
        if allowed == 0 && !buf.is_empty() {
            *lock(&this.mode) = Mode::Cut;
            return Poll::Ready(Err(cut_error()));
        }
        let sent = Pin::new(&mut this.inner).poll_write(cx, &buf[..allowed]);
        if let Poll::Ready(Ok(n)) = &sent {
            lock(&this.mode).advance(&buf[..*n]);
        }
        sent
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.is_cut() {
            return Poll::Ready(Err(cut_error()));
        }
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

/// The switch of the connection a request arrived on.
#[derive(Debug, Clone)]
pub(super) struct ConnectionSwitch {
    mode: SharedMode,
}

impl ConnectionSwitch {
    /// Makes every further read and write on the connection fail, so it closes without
    /// another byte.
    pub(super) fn cut(&self) {
        *lock(&self.mode) = Mode::Cut;
    }

    /// Lets the head of the next answer and `body_budget` bytes of its body through, then
    /// closes the connection: the client reads a `Content-Length` larger than the body.
    pub(super) fn truncate(&self, body_budget: usize) {
        *lock(&self.mode) = Mode::Truncate {
            body_budget,
            written: 0,
            head: Vec::new(),
            body_start: None,
        };
    }
}

impl Connected<IncomingStream<'_, CuttableListener>> for ConnectionSwitch {
    fn connect_info(stream: IncomingStream<'_, CuttableListener>) -> Self {
        Self {
            mode: Arc::clone(&stream.io().mode),
        }
    }
}
