//! C4: the pull request's base SHA is the current `main` HEAD. In a repository in queue
//! mode the base need not be current: the staging build tests the pull request merged onto
//! the head, and only that tested commit lands (decisions/0056); the same holds for GitHub's
//! merge queue, whose merge group is the head with the pull request merged (decisions/0074).

use std::fmt;

use super::{CORE_SEVERITY, ConditionId, ConditionResult};
use crate::config::RepoMergeMode;
use crate::context::PrContext;
use crate::ids::CommitSha;

/// Evaluates C4 against the `main` HEAD read this tick; in `queue` mode a stale base passes
/// as [`BaseEvidence::QueueTestsOnHead`], in `github-queue` mode as
/// [`BaseEvidence::GitHubQueueTestsOnHead`].
pub fn evaluate(
    pr: &PrContext,
    main_head: &CommitSha,
    mode: RepoMergeMode,
) -> Vec<ConditionResult> {
    let result = if pr.base_sha == *main_head {
        ConditionResult::pass(
            ConditionId::C4,
            CORE_SEVERITY,
            BaseEvidence::BaseCurrent {
                base: pr.base_sha.clone(),
            },
        )
    } else if mode == RepoMergeMode::Queue {
        ConditionResult::pass(
            ConditionId::C4,
            CORE_SEVERITY,
            BaseEvidence::QueueTestsOnHead {
                base: pr.base_sha.clone(),
                main: main_head.clone(),
            },
        )
    } else if mode == RepoMergeMode::GitHubQueue {
        ConditionResult::pass(
            ConditionId::C4,
            CORE_SEVERITY,
            BaseEvidence::GitHubQueueTestsOnHead {
                base: pr.base_sha.clone(),
                main: main_head.clone(),
            },
        )
    } else {
        ConditionResult::fail(
            ConditionId::C4,
            CORE_SEVERITY,
            BaseEvidence::BaseStale {
                base: pr.base_sha.clone(),
                main: main_head.clone(),
            },
        )
    };
    vec![result]
}

/// What C4 rests on: the pull request's base and the head of `main`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BaseEvidence {
    /// C4 holds: the PR base is the current `main` head.
    BaseCurrent {
        /// The PR base (= `main` head).
        base: CommitSha,
    },
    /// C4 fails: the PR base is not the current `main` head.
    BaseStale {
        /// The PR base.
        base: CommitSha,
        /// The current `main` head.
        main: CommitSha,
    },
    /// C4 holds in queue mode: the base is not the `main` head, but the staging build
    /// merges the pull request onto the head and CI tests that commit before it lands.
    QueueTestsOnHead {
        /// The PR base.
        base: CommitSha,
        /// The current `main` head.
        main: CommitSha,
    },
    /// C4 holds in `github-queue` mode: the base is not the `main` head, but GitHub's merge
    /// queue tests the pull request in a merge group built on the head before it lands.
    GitHubQueueTestsOnHead {
        /// The PR base.
        base: CommitSha,
        /// The current `main` head.
        main: CommitSha,
    },
}

impl BaseEvidence {
    /// Whether the base is behind the head of `main`.
    pub fn is_stale(&self) -> bool {
        matches!(self, Self::BaseStale { .. })
    }

    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::BaseCurrent { .. } => "base_current",
            Self::BaseStale { .. } => "base_stale",
            Self::QueueTestsOnHead { .. } => "base_tested_in_queue",
            Self::GitHubQueueTestsOnHead { .. } => "base_tested_in_github_queue",
        }
    }
}

impl fmt::Display for BaseEvidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BaseCurrent { base } => {
                write!(f, "PR base {} is the main HEAD", base.short())
            }
            Self::BaseStale { base, main } => write!(
                f,
                "PR base {} is stale (main HEAD is {}). Rebase the PR.",
                base.short(),
                main.short()
            ),
            Self::QueueTestsOnHead { base, main } => write!(
                f,
                "PR base {} is not the main HEAD {}; queue mode: the staging build tests it merged onto the HEAD",
                base.short(),
                main.short()
            ),
            Self::GitHubQueueTestsOnHead { base, main } => write!(
                f,
                "PR base {} is not the main HEAD {}; github-queue mode: GitHub's merge queue tests it merged onto the HEAD",
                base.short(),
                main.short()
            ),
        }
    }
}

#[cfg(test)]
mod tests;
