//! GitHub's own merge queue (`merge.mode: github-queue`, decisions/0074): whether a branch's
//! rules put it behind one, and what becomes of a pull request that passed the gate there.
//!
//! GitHub lists the rules of the active rulesets that apply to a branch
//! (`GET /repos/{owner}/{repo}/rules/branches/{branch}`); a rule of type `merge_queue`
//! means "merges must be performed via a merge queue", and the merge API then refuses a
//! direct merge. `mp doctor` and the tick ask [`protected_by_merge_queue`], the one
//! predicate, of the rule types they read.

#[cfg(test)]
mod tests;

use std::fmt;

use crate::ids::CommitSha;

/// The rule type of GitHub's rulesets that puts a branch behind a merge queue.
pub const MERGE_QUEUE_RULE: &str = "merge_queue";

/// Whether `rules`, the rule types GitHub lists for a branch, include a merge queue.
pub fn protected_by_merge_queue(rules: &[String]) -> bool {
    rules.iter().any(|rule| rule == MERGE_QUEUE_RULE)
}

/// What the tick does, in `github-queue` mode, with a pull request whose gate passed.
/// Enqueueing is not built yet: both outcomes write nothing, and neither merges.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GitHubQueueStep {
    /// The branch has a merge queue: mp would enqueue this head, bound to the approval.
    WouldEnqueue {
        /// The gated branch.
        branch: String,
        /// The head the gate passed on (`expectedHeadOid` once mp enqueues).
        head: CommitSha,
    },
    /// No merge queue protects the branch: mp neither merges (the mode says GitHub's
    /// queue lands this repository) nor enqueues.
    NoQueue {
        /// The gated branch.
        branch: String,
    },
}

impl GitHubQueueStep {
    /// The step for a pull request at `head` whose gate passed, given the rule types GitHub
    /// lists for the gated `branch`.
    pub fn decide(rules: &[String], branch: &str, head: &CommitSha) -> Self {
        if protected_by_merge_queue(rules) {
            Self::WouldEnqueue {
                branch: branch.to_owned(),
                head: head.clone(),
            }
        } else {
            Self::NoQueue {
                branch: branch.to_owned(),
            }
        }
    }

    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::WouldEnqueue { .. } => "github_queue_would_enqueue",
            Self::NoQueue { .. } => "github_queue_missing",
        }
    }
}

impl fmt::Display for GitHubQueueStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::WouldEnqueue { branch, head } => write!(
                f,
                "would enqueue head {} in GitHub's merge queue of {branch}; enqueueing is not built yet, so mp writes nothing",
                head.short()
            ),
            Self::NoQueue { branch } => write!(
                f,
                "merge.mode is github-queue but no merge queue protects {branch}: mp neither merges nor enqueues; add a ruleset with the merge_queue rule, or change merge.mode"
            ),
        }
    }
}
