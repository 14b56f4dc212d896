//! The policy tables of the protocol as pure functions: the generation policy derived from
//! capabilities, the risk floor they imply, and the PublishGate approval matrix.
//!
//! | capabilities | auto_activate | required activation approvals |
//! |---|---|---|
//! | only `read_repo`, `write_repo` (at least `read_repo`) | true | none |
//! | any of `install_deps`, `network_access` | false | + project_lead, security_reviewer |
//! | `read_secrets` | false | + project_lead, security_reviewer |
//! | `publish_release` | false | + project_lead, release_manager |
//! | anything else (`write_repo` alone) | false | project_lead (decisions/0012) |
//!
//! | riskLevel | requiredApprovals |
//! |---|---|
//! | low, medium | none |
//! | high | project_lead, security_reviewer |
//! | critical | project_lead, security_reviewer, release_manager |

use std::collections::BTreeSet;

use crate::kinds::{ApproverRole, Capability, RiskLevel};

/// The generation policy the capabilities call for: the loosest policy a TaskSeed or
/// Acceptance may carry. A stricter one (more roles, or `auto_activate: false`) is allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DerivedPolicy {
    /// Whether the contract may start `Active` without approvals.
    pub auto_activate: bool,
    /// The roles that must approve activation (the union over all matching rows).
    pub required_activation_approvals: BTreeSet<ApproverRole>,
}

/// True when the capabilities are `[read_repo]` or `[read_repo, write_repo]` (as a set):
/// the only sets that activate without approvals.
pub fn is_safe(capabilities: &[Capability]) -> bool {
    let set: BTreeSet<Capability> = capabilities.iter().copied().collect();
    set.contains(&Capability::ReadRepo)
        && set
            .iter()
            .all(|c| matches!(c, Capability::ReadRepo | Capability::WriteRepo))
}

/// The activation approvals one capability adds on its own (its row of the table).
pub fn roles_for(capability: Capability) -> &'static [ApproverRole] {
    match capability {
        Capability::InstallDeps | Capability::NetworkAccess | Capability::ReadSecrets => {
            &[ApproverRole::ProjectLead, ApproverRole::SecurityReviewer]
        }
        Capability::PublishRelease => &[ApproverRole::ProjectLead, ApproverRole::ReleaseManager],
        Capability::ReadRepo | Capability::WriteRepo => &[],
    }
}

/// Derives the generation policy from a capability list (order and duplicates ignored).
pub fn derive_generation_policy(capabilities: &[Capability]) -> DerivedPolicy {
    if is_safe(capabilities) {
        return DerivedPolicy {
            auto_activate: true,
            required_activation_approvals: BTreeSet::new(),
        };
    }
    let mut roles: BTreeSet<ApproverRole> = capabilities
        .iter()
        .flat_map(|c| roles_for(*c).iter().copied())
        .collect();
    if roles.is_empty() {
        // A set the table does not cover (e.g. write_repo without read_repo): not safe,
        // so a human must activate it; the project lead owns unusual requests.
        roles.insert(ApproverRole::ProjectLead);
    }
    DerivedPolicy {
        auto_activate: false,
        required_activation_approvals: roles,
    }
}

/// The lowest risk level the capabilities allow: `high` for any of install_deps,
/// network_access, read_secrets or publish_release, `medium` for write_repo, else `low`.
/// (`critical` depends on facts no contract records, such as production data access.)
pub fn risk_floor(capabilities: &[Capability]) -> RiskLevel {
    capabilities
        .iter()
        .map(|c| capability_floor(*c))
        .max()
        .unwrap_or(RiskLevel::Low)
}

/// The risk level one capability implies on its own.
pub fn capability_floor(capability: Capability) -> RiskLevel {
    match capability {
        Capability::ReadRepo => RiskLevel::Low,
        Capability::WriteRepo => RiskLevel::Medium,
        Capability::InstallDeps
        | Capability::NetworkAccess
        | Capability::ReadSecrets
        | Capability::PublishRelease => RiskLevel::High,
    }
}

/// The `requiredApprovals` a PublishGate of this risk level must carry (as a set).
pub fn approval_matrix(risk: RiskLevel) -> &'static [ApproverRole] {
    match risk {
        RiskLevel::Low | RiskLevel::Medium => &[],
        RiskLevel::High => &[ApproverRole::ProjectLead, ApproverRole::SecurityReviewer],
        RiskLevel::Critical => &[
            ApproverRole::ProjectLead,
            ApproverRole::SecurityReviewer,
            ApproverRole::ReleaseManager,
        ],
    }
}

#[cfg(test)]
mod tests;
