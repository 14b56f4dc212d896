//! Acceptance: the verification result of a TaskSeed's execution.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{ApproverRole, GenerationPolicy, TaskSeedId};

/// The fields of an Acceptance beyond the common ones.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Acceptance {
    /// `taskSeedId`: the TaskSeed whose execution was verified.
    pub task_seed_id: TaskSeedId,
    /// `status`: only a `passed` Acceptance may get a PublishGate.
    pub status: AcceptanceStatus,
    /// `details`.
    pub details: String,
    /// `criteria`: at least one.
    pub criteria: Vec<String>,
    /// `generationPolicy` (no `policy_engine` in its roles).
    pub generation_policy: GenerationPolicy<ApproverRole>,
}

/// `Acceptance.status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AcceptanceStatus {
    /// `pending`.
    Pending,
    /// `passed`.
    Passed,
    /// `failed`.
    Failed,
    /// `blocked`.
    Blocked,
}

impl AcceptanceStatus {
    /// The name as JSON writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            AcceptanceStatus::Pending => "pending",
            AcceptanceStatus::Passed => "passed",
            AcceptanceStatus::Failed => "failed",
            AcceptanceStatus::Blocked => "blocked",
        }
    }
}

impl fmt::Display for AcceptanceStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
