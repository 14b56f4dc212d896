//! L4: declared agent tools and models are present in the agent registry.
//!
//! Advisory (P2) by default, so a failure is a warning; blocking once promoted by the
//! burn-in clock or a severity override. Machines are never checked.

use std::fmt;

use super::{ConditionId, ConditionResult, GatePolicy, plural};
use crate::context::PrContext;
use crate::ids::CommitSha;
use crate::trailers::TrailerKey;

/// Evaluates L4 at `policy.registry_severity`: for each commit declaring a non-empty
/// `Agent-Tool`, the (tool, model) pair must be allowed by `policy.registry`. No registry
/// passes. One failure per offending commit.
pub fn evaluate(pr: &PrContext, policy: &GatePolicy) -> Vec<ConditionResult> {
    let id = ConditionId::AgentRegistry;
    let severity = policy.registry_severity;
    let Some(registry) = &policy.registry else {
        return vec![ConditionResult::pass(
            id,
            severity,
            RegistryEvidence::NoRegistry,
        )];
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
                RegistryEvidence::RegistryMismatch {
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
            RegistryEvidence::RegistryConforms {
                commits: pr.commits.len(),
            },
        )];
    }
    failures
}

/// What L4 rests on: the declared agent tools and models against the registry.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegistryEvidence {
    /// L4 holds trivially: no agent registry is configured.
    NoRegistry,
    /// L4 holds: every declared tool/model pair is registered.
    RegistryConforms {
        /// How many commits were checked.
        commits: usize,
    },
    /// A commit declares a tool/model pair the registry does not allow.
    RegistryMismatch {
        /// The commit.
        sha: CommitSha,
        /// The declared `Agent-Tool`.
        tool: String,
        /// The declared `Agent-Model`, if any.
        model: Option<String>,
    },
}

impl RegistryEvidence {
    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::NoRegistry => "no_registry",
            Self::RegistryConforms { .. } => "registry_conforms",
            Self::RegistryMismatch { .. } => "registry_mismatch",
        }
    }
}

impl fmt::Display for RegistryEvidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoRegistry => f.write_str("no agent registry configured"),
            Self::RegistryConforms { commits } => write!(
                f,
                "declared agent tools and models are registered on {commits} commit{}",
                plural(*commits)
            ),
            Self::RegistryMismatch { sha, tool, model } => write!(
                f,
                "commit {} declares Agent-Tool '{tool}' / Agent-Model '{}', not present in the agent registry",
                sha.short(),
                model.as_deref().unwrap_or("")
            ),
        }
    }
}

#[cfg(test)]
mod tests;
