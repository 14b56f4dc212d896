//! C5: every commit of the pull request carries the five identity trailers, well formed —
//! except the merges of `main` that mp's own branch updates made (GitHub writes them, with
//! no trailers), proven from GitHub's activity log ([`mp_update_commits`]).

use std::fmt;

use super::{CORE_SEVERITY, ConditionId, ConditionResult, plural};
use crate::approval::mp_update_commits;
use crate::context::PrContext;
use crate::ids::{CommitSha, Login};
use crate::trailers::{TrailerProblem, check_contract};

/// Evaluates C5: one failure per commit per problem, in commit order then trailer order.
/// A pull request without commits fails closed. Commits that are mp's own branch updates
/// by `bot` are not asked for trailers, and only those.
pub fn evaluate(pr: &PrContext, bot: Option<&Login>) -> Vec<ConditionResult> {
    let fail = |evidence| ConditionResult::fail(ConditionId::C5, CORE_SEVERITY, evidence);
    if pr.commits.is_empty() {
        return vec![fail(TrailersEvidence::NoCommits)];
    }
    let updates = mp_update_commits(pr, bot);
    let checked = || pr.commits.iter().filter(|c| !updates.contains(&c.sha));
    let failures: Vec<ConditionResult> = checked()
        .flat_map(|commit| {
            check_contract(&commit.trailers).into_iter().map(|problem| {
                fail(TrailersEvidence::TrailerProblem {
                    sha: commit.sha.clone(),
                    problem,
                })
            })
        })
        .collect();
    if failures.is_empty() {
        return vec![ConditionResult::pass(
            ConditionId::C5,
            CORE_SEVERITY,
            TrailersEvidence::TrailersWellFormed {
                commits: checked().count(),
                mp_updates: pr.commits.len() - checked().count(),
            },
        )];
    }
    failures
}

/// What C5 rests on: the commits checked and each problem with their identity trailers.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TrailersEvidence {
    /// C5 holds for every commit.
    TrailersWellFormed {
        /// How many commits were checked.
        commits: usize,
        /// How many of the pull request's commits are mp's own merges of `main` into the
        /// branch (not asked for trailers, not counted in `commits`).
        mp_updates: usize,
    },
    /// One commit breaks the identity-trailer contract in one way.
    TrailerProblem {
        /// The commit.
        sha: CommitSha,
        /// The problem.
        problem: TrailerProblem,
    },
    /// The PR has no commits, so no identity can be checked (fails closed).
    NoCommits,
}

impl TrailersEvidence {
    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::TrailersWellFormed { .. } => "trailers_well_formed",
            Self::TrailerProblem { problem, .. } => problem.code(),
            Self::NoCommits => "no_commits",
        }
    }
}

impl fmt::Display for TrailersEvidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TrailersWellFormed {
                commits,
                mp_updates,
            } => {
                write!(
                    f,
                    "identity trailers well formed on {commits} commit{}",
                    plural(*commits)
                )?;
                if *mp_updates > 0 {
                    write!(
                        f,
                        " ({mp_updates} merge{} of main by mp's branch update not asked for trailers)",
                        plural(*mp_updates)
                    )?;
                }
                Ok(())
            }
            Self::TrailerProblem { sha, problem } => match problem {
                TrailerProblem::Missing { .. } => write!(f, "commit {} {problem}", sha.short()),
                _ => write!(f, "commit {} has {problem}", sha.short()),
            },
            Self::NoCommits => f.write_str("PR has no commits to check"),
        }
    }
}

#[cfg(test)]
mod tests;
