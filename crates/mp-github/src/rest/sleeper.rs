//! How the client waits: its back-off before a retry, a `Retry-After` or rate-limit wait,
//! and the pacing under GitHub's points per minute all go through a [`Sleeper`], which
//! also tells the pacer the time. [`SystemSleeper`] waits on tokio's timer; a
//! [`SteppedSleeper`] never waits: each wait moves its own time forward and is recorded,
//! so a test of the waits takes no wall-clock time and can assert each one. A
//! [`VirtualClock`] is shared by a test's client and the loopback server: the server's
//! `delay` fault is time on it, and the client's request timeout runs out on it, so a
//! delayed answer times the request out without any wall-clock wait.

#[cfg(test)]
mod tests;

use std::fmt;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The client's monotonic time and its waits.
#[async_trait::async_trait]
pub trait Sleeper: fmt::Debug + Send + Sync {
    /// The present on a monotonic clock (the pacer measures its refill on it).
    fn now(&self) -> Instant;

    /// Returns once `wait` has passed on this clock.
    async fn sleep(&self, wait: Duration);

    /// Whether a request started at `started` has used up `timeout` on this clock by now:
    /// an answer that arrives after that is lost, as if [`Sleeper::request_deadline`] had
    /// returned first. On the system's clock (the default) never: the HTTP client's own
    /// timeout cuts such answers.
    fn deadline_passed(&self, started: Instant, timeout: Duration) -> bool {
        let _ = (started, timeout);
        false
    }

    /// Returns once a request started now has used up `timeout` on this clock. The client
    /// races every request against it, besides the HTTP client's own timeout on the
    /// system clock; so on the system's clock (the default) it never returns.
    async fn request_deadline(&self, timeout: Duration) {
        let _ = timeout;
        std::future::pending::<()>().await;
    }
}

/// The system's monotonic clock and tokio's timer: what a real tick uses.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemSleeper;

#[async_trait::async_trait]
impl Sleeper for SystemSleeper {
    fn now(&self) -> Instant {
        Instant::now()
    }

    async fn sleep(&self, wait: Duration) {
        tokio::time::sleep(wait).await;
    }
}

/// A clock that only moves when the client waits: [`Sleeper::sleep`] returns at once,
/// having moved the time forward by the wait and recorded it.
#[derive(Debug)]
pub struct SteppedSleeper {
    start: Instant,
    waits: Mutex<Vec<Duration>>,
}

impl SteppedSleeper {
    /// A clock standing at the moment it is made, with no wait recorded.
    pub fn new() -> Self {
        Self {
            start: Instant::now(),
            waits: Mutex::new(Vec::new()),
        }
    }

    /// Every wait so far, in order (zero waits included).
    pub fn waits(&self) -> Vec<Duration> {
        self.waits
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The time waited so far.
    pub fn waited(&self) -> Duration {
        self.waits().iter().sum()
    }
}

impl Default for SteppedSleeper {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait::async_trait]
impl Sleeper for SteppedSleeper {
    fn now(&self) -> Instant {
        self.start + self.waited()
    }

    async fn sleep(&self, wait: Duration) {
        self.waits
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(wait);
    }
}

/// A clock that only moves when someone waits on it, shared by a test's REST client and
/// the loopback server: [`Sleeper::sleep`] moves it forward at once (as a
/// [`SteppedSleeper`] does), and [`Sleeper::request_deadline`] returns once it has moved
/// by the timeout. So the server's `delay` fault, waited out on this clock, times out the
/// client's request at once when it is longer than the client's timeout; every request
/// then in flight sees the same time pass, as if the machine had stalled.
#[derive(Debug)]
pub struct VirtualClock {
    start: Instant,
    elapsed: tokio::sync::watch::Sender<Duration>,
}

impl VirtualClock {
    /// A clock standing at the moment it is made.
    pub fn new() -> Self {
        Self {
            start: Instant::now(),
            elapsed: tokio::sync::watch::Sender::new(Duration::ZERO),
        }
    }

    /// The time waited on this clock so far.
    pub fn elapsed(&self) -> Duration {
        *self.elapsed.borrow()
    }
}

impl Default for VirtualClock {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait::async_trait]
impl Sleeper for VirtualClock {
    fn now(&self) -> Instant {
        self.start + self.elapsed()
    }

    async fn sleep(&self, wait: Duration) {
        self.elapsed.send_modify(|elapsed| *elapsed += wait);
    }

    fn deadline_passed(&self, started: Instant, timeout: Duration) -> bool {
        self.now() >= started + timeout
    }

    async fn request_deadline(&self, timeout: Duration) {
        let mut elapsed = self.elapsed.subscribe();
        let deadline = *elapsed.borrow_and_update() + timeout;
        // The sender lives in `self`, which outlives this wait: it ends only at the deadline.
        let _ = elapsed.wait_for(|now| *now >= deadline).await;
    }
}
