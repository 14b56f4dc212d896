//! PublishGate: whether an Acceptance may be published, and the approvals that decide it.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{AcceptanceId, Approval, ApprovalRole, ApproverRole, DateTime};

/// The fields of a PublishGate beyond the common ones.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PublishGate {
    /// `entityId`: the Acceptance this gate decides on.
    pub entity_id: AcceptanceId,
    /// `action`. No rule depends on it.
    pub action: GateAction,
    /// `riskLevel`: fixes `requiredApprovals` (see [`crate::policy::approval_matrix`]).
    pub risk_level: RiskLevel,
    /// `requiredApprovals`: the human roles that must approve.
    pub required_approvals: Vec<ApproverRole>,
    /// `approvals`: every decision recorded so far, in order.
    pub approvals: Vec<Approval<ApprovalRole>>,
    /// `finalDecision`.
    pub final_decision: FinalDecision,
    /// `approvalDeadline`: required when `requiredApprovals` is not empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_deadline: Option<DateTime>,
}

/// `PublishGate.action`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GateAction {
    /// `publish`.
    Publish,
    /// `reject`.
    Reject,
    /// `hold`.
    Hold,
}

/// `PublishGate.riskLevel`, ordered from `Low` to `Critical`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RiskLevel {
    /// `low`: read-only; no publishing, network or new dependencies.
    Low,
    /// `medium`: writes to the repository; no network, no production impact.
    Medium,
    /// `high`: any of install_deps, network_access, read_secrets, publish_release.
    High,
    /// `critical`: production data, secrets sent out, legal concern or irreversible publishing.
    Critical,
}

impl RiskLevel {
    /// Every level, from low to critical.
    pub const ALL: [RiskLevel; 4] = [
        RiskLevel::Low,
        RiskLevel::Medium,
        RiskLevel::High,
        RiskLevel::Critical,
    ];

    /// The name as JSON writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            RiskLevel::Low => "low",
            RiskLevel::Medium => "medium",
            RiskLevel::High => "high",
            RiskLevel::Critical => "critical",
        }
    }
}

impl fmt::Display for RiskLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `PublishGate.finalDecision`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinalDecision {
    /// `pending`: waiting for human approvals.
    Pending,
    /// `approved`.
    Approved,
    /// `rejected`.
    Rejected,
    /// `expired`: the deadline passed before the approvals were complete.
    Expired,
}

impl FinalDecision {
    /// The name as JSON writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            FinalDecision::Pending => "pending",
            FinalDecision::Approved => "approved",
            FinalDecision::Rejected => "rejected",
            FinalDecision::Expired => "expired",
        }
    }
}

impl fmt::Display for FinalDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
