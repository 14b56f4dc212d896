//! How many GitHub reads the pull-request path keeps in flight (`env.yml`
//! `read_concurrency`): a setting of the configuration that the tick obeys
//! (decisions/0034).

use std::num::NonZeroUsize;

/// How many GitHub reads the pull-request path keeps in flight at once (`env.yml`
/// `read_concurrency`, default 8); 1 is the serial tick. Writes are always one at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadConcurrency(NonZeroUsize);

impl ReadConcurrency {
    /// One read at a time.
    pub const SERIAL: Self = Self(NonZeroUsize::MIN);
    /// The default: eight reads in flight, far under GitHub's documented limit of 100
    /// concurrent requests per installation.
    pub const DEFAULT: Self = Self(NonZeroUsize::new(8).expect("8 is not zero"));
    /// The most a configuration may ask for.
    pub const MAX: usize = 64;

    /// `n` reads in flight; `None` for 0 or more than [`ReadConcurrency::MAX`].
    pub fn new(n: usize) -> Option<Self> {
        NonZeroUsize::new(n)
            .filter(|n| n.get() <= Self::MAX)
            .map(Self)
    }

    /// The number of reads in flight.
    pub fn get(self) -> usize {
        self.0.get()
    }
}

impl Default for ReadConcurrency {
    fn default() -> Self {
        Self::DEFAULT
    }
}
