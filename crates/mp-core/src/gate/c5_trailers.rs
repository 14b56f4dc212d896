//! C5: every commit of the pull request carries the five identity trailers, well formed.

use super::{CORE_SEVERITY, ConditionId, ConditionResult, Evidence};
use crate::context::PrContext;
use crate::trailers::check_contract;

/// Evaluates C5: one failure per commit per problem, in commit order then trailer order.
/// A pull request without commits fails closed.
pub fn evaluate(pr: &PrContext) -> Vec<ConditionResult> {
    let fail = |evidence| ConditionResult::fail(ConditionId::C5, CORE_SEVERITY, evidence);
    if pr.commits.is_empty() {
        return vec![fail(Evidence::NoCommits)];
    }
    let failures: Vec<ConditionResult> = pr
        .commits
        .iter()
        .flat_map(|commit| {
            check_contract(&commit.trailers).into_iter().map(|problem| {
                fail(Evidence::TrailerProblem {
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
            Evidence::TrailersWellFormed {
                commits: pr.commits.len(),
            },
        )];
    }
    failures
}

#[cfg(test)]
mod tests;
