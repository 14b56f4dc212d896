//! How the client waits: its back-off before a retry, a `Retry-After` or rate-limit wait,
//! and the pacing under GitHub's points per minute all go through a [`Sleeper`], which
//! also tells the pacer the time. [`SystemSleeper`] waits on tokio's timer; a
//! [`SteppedSleeper`] never waits: each wait moves its own time forward and is recorded,
//! so a test of the waits takes no wall-clock time and can assert each one.

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
