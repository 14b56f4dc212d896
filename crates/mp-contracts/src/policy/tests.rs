//! Tests for the policy tables.

use super::*;
use Capability::*;

#[track_caller]
fn check(
    capabilities: &[Capability],
    auto_activate: bool,
    roles: &[ApproverRole],
    floor: RiskLevel,
) {
    let derived = derive_generation_policy(capabilities);
    assert_eq!(
        (
            derived.auto_activate,
            derived
                .required_activation_approvals
                .into_iter()
                .collect::<Vec<_>>(),
            risk_floor(capabilities)
        ),
        (auto_activate, roles.to_vec(), floor)
    );
}

use ApproverRole::{ProjectLead, ReleaseManager, SecurityReviewer};

#[test]
fn read_only_activates_by_itself() {
    check(&[ReadRepo], true, &[], RiskLevel::Low);
}

#[test]
fn read_and_write_activates_by_itself() {
    check(&[WriteRepo, ReadRepo], true, &[], RiskLevel::Medium);
}

#[test]
fn dependencies_or_network_need_lead_and_security() {
    check(
        &[ReadRepo, InstallDeps],
        false,
        &[ProjectLead, SecurityReviewer],
        RiskLevel::High,
    );
    check(
        &[ReadRepo, NetworkAccess],
        false,
        &[ProjectLead, SecurityReviewer],
        RiskLevel::High,
    );
}

#[test]
fn secrets_need_lead_and_security() {
    check(
        &[ReadRepo, ReadSecrets],
        false,
        &[ProjectLead, SecurityReviewer],
        RiskLevel::High,
    );
}

#[test]
fn publishing_needs_lead_and_release_manager() {
    check(
        &[ReadRepo, PublishRelease],
        false,
        &[ProjectLead, ReleaseManager],
        RiskLevel::High,
    );
}

#[test]
fn rows_are_unioned() {
    check(
        &[ReadRepo, InstallDeps, PublishRelease],
        false,
        &[ProjectLead, SecurityReviewer, ReleaseManager],
        RiskLevel::High,
    );
}

#[test]
fn write_without_read_needs_the_project_lead() {
    check(&[WriteRepo], false, &[ProjectLead], RiskLevel::Medium);
}

#[test]
fn the_approval_matrix() {
    assert_eq!(
        [
            RiskLevel::Low,
            RiskLevel::Medium,
            RiskLevel::High,
            RiskLevel::Critical
        ]
        .map(|r| approval_matrix(r).len()),
        [0, 0, 2, 3]
    );
    assert_eq!(
        approval_matrix(RiskLevel::Critical),
        [ProjectLead, SecurityReviewer, ReleaseManager]
    );
}
