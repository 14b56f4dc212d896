//! IntentContract: what was asked for and which capabilities it needs.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::Capability;

/// The fields of an IntentContract beyond the common ones.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IntentContract {
    /// `intent`: the request in words.
    pub intent: String,
    /// `creator`: the actor id of the requester.
    pub creator: String,
    /// `priority`: scheduling priority; unrelated to a gate's risk level.
    pub priority: Priority,
    /// `requestedCapabilities`: at least one, no duplicates.
    pub requested_capabilities: Vec<Capability>,
}

/// `IntentContract.priority`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    /// `low`.
    Low,
    /// `medium`.
    Medium,
    /// `high`.
    High,
    /// `critical`.
    Critical,
}

impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Priority::Low => "low",
            Priority::Medium => "medium",
            Priority::High => "high",
            Priority::Critical => "critical",
        })
    }
}
