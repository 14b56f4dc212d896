//! L4: declared agent tools and models are present in the agent registry.
//!
//! Advisory (P2) by default, so a failure is a warning; blocking once promoted by the
//! burn-in clock or a severity override. Machines are never checked.

use super::{ConditionId, ConditionResult, Evidence, GatePolicy};
use crate::context::PrContext;
use crate::trailers::TrailerKey;

/// Evaluates L4 at `policy.registry_severity`: for each commit declaring a non-empty
/// `Agent-Tool`, the (tool, model) pair must be allowed by `policy.registry`. No registry
/// passes. One failure per offending commit.
pub fn evaluate(pr: &PrContext, policy: &GatePolicy) -> Vec<ConditionResult> {
    let id = ConditionId::AgentRegistry;
    let severity = policy.registry_severity;
    let Some(registry) = &policy.registry else {
        return vec![ConditionResult::pass(id, severity, Evidence::NoRegistry)];
    };
    let failures: Vec<ConditionResult> = pr
        .commits
        .iter()
        .filter_map(|commit| {
            let tool = commit.trailers.identity(TrailerKey::AgentTool)?;
            let model = commit.trailers.identity(TrailerKey::AgentModel);
            if tool.is_empty() || registry.model_allowed(tool, model.unwrap_or("")) {
                return None;
            }
            Some(ConditionResult::fail(
                id.clone(),
                severity,
                Evidence::RegistryMismatch {
                    sha: commit.sha.clone(),
                    tool: tool.to_owned(),
                    model: model.map(str::to_owned),
                },
            ))
        })
        .collect();
    if failures.is_empty() {
        return vec![ConditionResult::pass(
            id,
            severity,
            Evidence::RegistryConforms {
                commits: pr.commits.len(),
            },
        )];
    }
    failures
}

#[cfg(test)]
mod tests;
