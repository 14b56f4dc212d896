//! Retry bookkeeping for automatic generation: one attempt, then at most three retries
//! after 30, 60 and 120 seconds; the fourth failure exhausts it (decisions/0016).

use jiff::{SignedDuration, Timestamp};

/// The delays before each retry.
pub const BACKOFF: [SignedDuration; 3] = [
    SignedDuration::from_secs(30),
    SignedDuration::from_secs(60),
    SignedDuration::from_secs(120),
];

/// The failures recorded for one idempotency key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Attempts {
    /// Failed attempts so far.
    pub failures: u32,
    /// When the next attempt may run (`None`: now).
    pub next_at: Option<Timestamp>,
}

/// What follows a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterFailure {
    /// Retry no earlier than this instant.
    RetryAt(Timestamp),
    /// Every retry is used up: freeze.
    Exhausted,
}

impl Attempts {
    /// Whether an attempt may run at `now`.
    pub fn due(&self, now: Timestamp) -> bool {
        self.next_at.is_none_or(|at| now >= at)
    }

    /// Records a failure at `now` and says what follows.
    pub fn fail(&mut self, now: Timestamp) -> AfterFailure {
        let index = usize::try_from(self.failures).unwrap_or(usize::MAX);
        self.failures = self.failures.saturating_add(1);
        match BACKOFF.get(index) {
            Some(delay) => {
                let at = now.checked_add(*delay).unwrap_or(now);
                self.next_at = Some(at);
                AfterFailure::RetryAt(at)
            }
            None => {
                self.next_at = None;
                AfterFailure::Exhausted
            }
        }
    }
}
