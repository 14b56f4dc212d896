//! Execution phases of a TaskSeed: Plan → Build → Stabilize → Refactor → Publish → Done,
//! with the loops back the protocol allows.

use std::fmt;

/// One execution phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Phase {
    /// Planning; the TaskSeed exists.
    Plan,
    /// Building.
    Build,
    /// Testing and stabilising.
    Stabilize,
    /// Reviewing and refactoring.
    Refactor,
    /// Waiting for the publish decision.
    Publish,
    /// Published.
    Done,
}

impl Phase {
    /// The name.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Plan => "Plan",
            Phase::Build => "Build",
            Phase::Stabilize => "Stabilize",
            Phase::Refactor => "Refactor",
            Phase::Publish => "Publish",
            Phase::Done => "Done",
        }
    }

    /// Whether `self → to` is a row of the phase table: the happy path, Build → Plan (build
    /// failed), Stabilize → Build (tests failed) and Refactor → Build (code changed).
    pub fn may_move_to(self, to: Phase) -> bool {
        use Phase::*;
        matches!(
            (self, to),
            (Plan, Build)
                | (Build, Stabilize)
                | (Build, Plan)
                | (Stabilize, Refactor)
                | (Stabilize, Build)
                | (Refactor, Publish)
                | (Refactor, Build)
                | (Publish, Done)
        )
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
