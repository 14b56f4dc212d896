//! Progress of a tick, as it happens: which phase it is in and which repository it just
//! finished. The tick reports to a [`TickProgress`] given in the options (nothing by
//! default); an adapter turns the events into a progress bar or log lines. Reporting is
//! fire-and-forget: it never changes what the tick decides.

use std::fmt;
use std::sync::Arc;

use mp_core::ids::RepoName;

/// A phase of the tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TickPhase {
    /// Polling the decision inbox.
    Inbox,
    /// The pull-request path over the gated repositories.
    PullRequests,
    /// The branch supervisor over the supervised repositories.
    Supervisor,
    /// The drift check of the governance repository.
    Drift,
}

impl TickPhase {
    /// `inbox`, `pull_requests`, `supervisor` or `drift`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Inbox => "inbox",
            Self::PullRequests => "pull_requests",
            Self::Supervisor => "supervisor",
            Self::Drift => "drift",
        }
    }
}

impl fmt::Display for TickPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a tick reports while it runs.
pub trait TickProgress: Send + Sync {
    /// A phase starts; `repositories` is how many repositories it will go through (0 for
    /// the inbox and drift phases).
    fn phase(&self, phase: TickPhase, repositories: usize);
    /// A repository is done within `phase`.
    fn repository_done(&self, phase: TickPhase, repo: &RepoName);
}

/// The progress sink of a tick: an optional [`TickProgress`], shared. Two sinks compare
/// equal whatever they hold: progress never changes a tick's decisions.
#[derive(Clone, Default)]
pub struct ProgressSink(Option<Arc<dyn TickProgress>>);

impl ProgressSink {
    /// A sink reporting to `progress`.
    pub fn new(progress: Arc<dyn TickProgress>) -> Self {
        Self(Some(progress))
    }

    pub(crate) fn phase(&self, phase: TickPhase, repositories: usize) {
        if let Some(progress) = &self.0 {
            progress.phase(phase, repositories);
        }
    }

    pub(crate) fn repository_done(&self, phase: TickPhase, repo: &RepoName) {
        if let Some(progress) = &self.0 {
            progress.repository_done(phase, repo);
        }
    }
}

impl fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "ProgressSink(attached)"
        } else {
            "ProgressSink(none)"
        })
    }
}

impl PartialEq for ProgressSink {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for ProgressSink {}

#[cfg(test)]
mod tests;
