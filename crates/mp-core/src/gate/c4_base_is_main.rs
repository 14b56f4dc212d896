//! C4: the pull request's base SHA is the current `main` HEAD.

use super::{CORE_SEVERITY, ConditionId, ConditionResult, Evidence};
use crate::context::PrContext;
use crate::ids::CommitSha;

/// Evaluates C4 against the `main` HEAD read this tick.
pub fn evaluate(pr: &PrContext, main_head: &CommitSha) -> Vec<ConditionResult> {
    let result = if pr.base_sha == *main_head {
        ConditionResult::pass(
            ConditionId::C4,
            CORE_SEVERITY,
            Evidence::BaseCurrent {
                base: pr.base_sha.clone(),
            },
        )
    } else {
        ConditionResult::fail(
            ConditionId::C4,
            CORE_SEVERITY,
            Evidence::BaseStale {
                base: pr.base_sha.clone(),
                main: main_head.clone(),
            },
        )
    };
    vec![result]
}

#[cfg(test)]
mod tests;
