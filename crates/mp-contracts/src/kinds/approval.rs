//! Approval records and generation policies, shared by several kinds.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::DateTime;

/// A recorded decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// `approved`.
    Approved,
    /// `rejected`.
    Rejected,
}

impl Decision {
    /// The name as JSON writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Approved => "approved",
            Decision::Rejected => "rejected",
        }
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One decision by one actor: an entry of `PublishGate.approvals` (`R` =
/// [`crate::ApprovalRole`]) or of `Evidence.approvalsSnapshot` (`R` = [`crate::ApproverRole`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Approval<R> {
    /// `role`.
    pub role: R,
    /// `actorId`: who decided.
    pub actor_id: String,
    /// `decision`.
    pub decision: Decision,
    /// `decidedAt`.
    pub decided_at: DateTime,
    /// `reason` (optional; may be empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// How a generated TaskSeed or Acceptance is activated (`generationPolicy`). `R` is
/// [`crate::ApprovalRole`] for a TaskSeed and [`crate::ApproverRole`] for an Acceptance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GenerationPolicy<R> {
    /// `auto_activate`: the contract may start `Active` without approvals.
    pub auto_activate: bool,
    /// `requiredActivationApprovals`: the roles that must approve a `Draft` before it
    /// becomes `Active`; at least one when `auto_activate` is false.
    #[serde(rename = "requiredActivationApprovals")]
    pub required_activation_approvals: Vec<R>,
}
