//! The role vocabularies. Each field allows a different set, so there are three enums.
//!
//! | field | enum |
//! |---|---|
//! | `TaskSeed.ownerRole` | [`OwnerRole`] |
//! | `TaskSeed.generationPolicy.requiredActivationApprovals` | [`ApprovalRole`] |
//! | `Acceptance.generationPolicy.requiredActivationApprovals` | [`ApproverRole`] |
//! | `PublishGate.requiredApprovals` | [`ApproverRole`] |
//! | `PublishGate.approvals[].role` | [`ApprovalRole`] |
//! | `Evidence.approvalsSnapshot[].role` | [`ApproverRole`] |

use std::fmt;

use serde::{Deserialize, Serialize};

/// A human role that can be required to approve (`project_lead`, `security_reviewer`,
/// `release_manager`, `admin`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApproverRole {
    /// `project_lead`.
    ProjectLead,
    /// `security_reviewer`.
    SecurityReviewer,
    /// `release_manager`.
    ReleaseManager,
    /// `admin`. Never stands in for another required role.
    Admin,
}

impl ApproverRole {
    /// The name as JSON writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            ApproverRole::ProjectLead => "project_lead",
            ApproverRole::SecurityReviewer => "security_reviewer",
            ApproverRole::ReleaseManager => "release_manager",
            ApproverRole::Admin => "admin",
        }
    }
}

impl fmt::Display for ApproverRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A role that can record a decision: a human [`ApproverRole`] or the `policy_engine`
/// (automatic approval of low and medium risk).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalRole {
    /// `policy_engine`: the system role that auto-approves low and medium risk.
    PolicyEngine,
    /// `project_lead`.
    ProjectLead,
    /// `security_reviewer`.
    SecurityReviewer,
    /// `release_manager`.
    ReleaseManager,
    /// `admin`.
    Admin,
}

impl ApprovalRole {
    /// The name as JSON writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalRole::PolicyEngine => "policy_engine",
            ApprovalRole::ProjectLead => "project_lead",
            ApprovalRole::SecurityReviewer => "security_reviewer",
            ApprovalRole::ReleaseManager => "release_manager",
            ApprovalRole::Admin => "admin",
        }
    }

    /// The human role, or `None` for `policy_engine`.
    pub fn human(self) -> Option<ApproverRole> {
        match self {
            ApprovalRole::PolicyEngine => None,
            ApprovalRole::ProjectLead => Some(ApproverRole::ProjectLead),
            ApprovalRole::SecurityReviewer => Some(ApproverRole::SecurityReviewer),
            ApprovalRole::ReleaseManager => Some(ApproverRole::ReleaseManager),
            ApprovalRole::Admin => Some(ApproverRole::Admin),
        }
    }
}

impl From<ApproverRole> for ApprovalRole {
    fn from(role: ApproverRole) -> Self {
        match role {
            ApproverRole::ProjectLead => ApprovalRole::ProjectLead,
            ApproverRole::SecurityReviewer => ApprovalRole::SecurityReviewer,
            ApproverRole::ReleaseManager => ApprovalRole::ReleaseManager,
            ApproverRole::Admin => ApprovalRole::Admin,
        }
    }
}

impl fmt::Display for ApprovalRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The role that owns a TaskSeed's execution (`TaskSeed.ownerRole`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OwnerRole {
    /// `developer`.
    Developer,
    /// `ci_agent`.
    CiAgent,
    /// `qa`.
    Qa,
    /// `project_lead`.
    ProjectLead,
    /// `release_manager`.
    ReleaseManager,
    /// `admin`.
    Admin,
}

impl OwnerRole {
    /// The name as JSON writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            OwnerRole::Developer => "developer",
            OwnerRole::CiAgent => "ci_agent",
            OwnerRole::Qa => "qa",
            OwnerRole::ProjectLead => "project_lead",
            OwnerRole::ReleaseManager => "release_manager",
            OwnerRole::Admin => "admin",
        }
    }
}

impl fmt::Display for OwnerRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
