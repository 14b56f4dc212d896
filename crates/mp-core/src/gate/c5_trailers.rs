//! C5: every commit of the pull request carries the five identity trailers, well formed —
//! except the merges of `main` that mp's own branch updates made (GitHub writes them, with
//! no trailers), proven from GitHub's activity log ([`mp_update_commits`]).

use super::{CORE_SEVERITY, ConditionId, ConditionResult, Evidence};
use crate::approval::mp_update_commits;
use crate::context::PrContext;
use crate::ids::Login;
use crate::trailers::check_contract;

/// Evaluates C5: one failure per commit per problem, in commit order then trailer order.
/// A pull request without commits fails closed. Commits that are mp's own branch updates
/// by `bot` are not asked for trailers, and only those.
pub fn evaluate(pr: &PrContext, bot: Option<&Login>) -> Vec<ConditionResult> {
    let fail = |evidence| ConditionResult::fail(ConditionId::C5, CORE_SEVERITY, evidence);
    if pr.commits.is_empty() {
        return vec![fail(Evidence::NoCommits)];
    }
    let updates = mp_update_commits(pr, bot);
    let checked = || pr.commits.iter().filter(|c| !updates.contains(&c.sha));
    let failures: Vec<ConditionResult> = checked()
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
                commits: checked().count(),
                mp_updates: pr.commits.len() - checked().count(),
            },
        )];
    }
    failures
}

#[cfg(test)]
mod tests;
