//! The clock port of the orchestrator, and a manual clock for tests and simulations.

use std::cell::Cell;

use jiff::{SignedDuration, Timestamp};

/// Where the orchestrator reads the current time. Production code injects a system clock;
/// tests use [`ManualClock`] and never sleep.
pub trait Clock {
    /// The current instant.
    fn now(&self) -> Timestamp;
}

/// A clock that moves only when told to.
#[derive(Debug, Clone)]
pub struct ManualClock {
    now: Cell<Timestamp>,
}

impl ManualClock {
    /// A clock stopped at `start`.
    pub fn new(start: Timestamp) -> Self {
        Self {
            now: Cell::new(start),
        }
    }

    /// Moves the clock forward (or back, for a negative duration), saturating at the
    /// representable range.
    pub fn advance(&self, by: SignedDuration) {
        let next = self.now.get().checked_add(by).unwrap_or(self.now.get());
        self.now.set(next);
    }

    /// Sets the clock.
    pub fn set(&self, to: Timestamp) {
        self.now.set(to);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        self.now.get()
    }
}

impl<C: Clock + ?Sized> Clock for &C {
    fn now(&self) -> Timestamp {
        (**self).now()
    }
}
