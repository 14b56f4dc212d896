//! The clock port: the only way the tick learns the time.

use crate::ids::Timestamp;

/// Tells the current time. The tick reads it once at its start and passes the value down.
pub trait Clock: Send + Sync {
    /// The current instant.
    fn now(&self) -> Timestamp;
}

/// A clock stopped at one instant: for fixtures, replays and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedClock(pub Timestamp);

impl Clock for FixedClock {
    fn now(&self) -> Timestamp {
        self.0
    }
}
