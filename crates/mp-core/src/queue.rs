//! The merge queue's pure model (decisions/0056): which approved pull requests go next,
//! and what to do with the build CI is testing.
//!
//! In queue mode mp does not merge a pull request into the default branch on its own. It
//! builds a *staging* commit: the default branch's head with the next entries merged onto
//! it, one merge commit per pull request, each of the approved head. CI runs on that
//! commit; when its required checks are green, the default branch is fast-forwarded to
//! exactly that commit. What lands is what CI tested, and one CI round can land many pull
//! requests.
//!
//! * [`order`] puts the entries in order: the owner's priority label first, then one entry
//!   per agent in turn (so no agent's burst starves the others), then age; an optional cap
//!   holds an agent's entries beyond it.
//! * [`QueueState::step`] decides, from what GitHub shows of the current build, the next
//!   step: start a build, wait, land it, retry an infrastructure failure, split a red build
//!   to find the culprit (bisection), eject the culprit with the checks that failed, or
//!   discard a build that no longer stands for what it claims (an entry left, the default
//!   branch moved under it, someone other than mp pushed the staging branch).
//!
//! Nothing here reads GitHub: the driver observes, calls [`QueueState::step`], performs
//! the steps and stores the state.

mod candidate;
mod order;
mod step;

pub use candidate::candidate;
pub use order::{AgentKey, Candidate, Held, HeldReason, Ordered, Priority, order};
pub use step::{
    Build, BuildObservation, BuildVerdict, Discard, Entry, Observation, QueueSettings, QueueState,
    Step, build_verdict,
};

/// The branch CI tests a build on, for the gated branch `branch`: `mp-queue/<branch>`.
/// Workflows run on pushes to it (`on: push: branches: ['mp-queue/**']`).
pub fn staging_branch(branch: &str) -> String {
    format!("mp-queue/{branch}")
}

/// The branch a build is assembled on, one merge at a time, before the staging branch is
/// pointed at its last commit: `mp-queue-build/<branch>`. No workflow should run on it,
/// so that a build of eight pull requests costs one CI run, not eight.
pub fn assembly_branch(branch: &str) -> String {
    format!("mp-queue-build/{branch}")
}

#[cfg(test)]
mod tests;
