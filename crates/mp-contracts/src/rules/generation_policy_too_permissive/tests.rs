//! Tests for generation-policy-too-permissive.

use serde_json::{Value, json};

use crate::testkit::*;
use crate::validate_set;

#[track_caller]
fn check(docs: Vec<Value>, expected: &[&str]) {
    assert_eq!(lines(&validate_set(&docs)), expected);
}

const POLICY: &str = "/generationPolicy";

#[test]
fn derived_policies_pass() {
    check(chain(), &[]);
    check(high_chain(), &[]);
}

#[test]
fn a_stricter_policy_passes() {
    let mut docs = chain();
    set(
        &mut docs[1],
        POLICY,
        json!({"auto_activate": false, "requiredActivationApprovals": ["project_lead"]}),
    );
    check(docs, &[]);
}

#[test]
fn a_task_seed_that_skips_approvals_fails() {
    let mut docs = high_chain();
    set(
        &mut docs[1],
        POLICY,
        json!({"auto_activate": true, "requiredActivationApprovals": []}),
    );
    check(
        docs,
        &[
            "document 1 /generationPolicy/auto_activate: generation-policy-too-permissive: auto_activate is true but requestedCapabilitiesSnapshot [read_repo, install_deps] needs approval to activate",
            "document 1 /generationPolicy/requiredActivationApprovals: generation-policy-too-permissive: requiredActivationApprovals lacks project_lead: requestedCapabilitiesSnapshot has [install_deps]",
            "document 1 /generationPolicy/requiredActivationApprovals: generation-policy-too-permissive: requiredActivationApprovals lacks security_reviewer: requestedCapabilitiesSnapshot has [install_deps]",
        ],
    );
}

#[test]
fn a_task_seed_missing_one_derived_role_fails() {
    let mut docs = high_chain();
    set(
        &mut docs[1],
        "/generationPolicy/requiredActivationApprovals",
        json!(["project_lead", "admin"]),
    );
    check(
        docs,
        &[
            "document 1 /generationPolicy/requiredActivationApprovals: generation-policy-too-permissive: requiredActivationApprovals lacks security_reviewer: requestedCapabilitiesSnapshot has [install_deps]",
        ],
    );
}

#[test]
fn an_acceptance_is_held_to_its_task_seeds_snapshot() {
    let mut docs = high_chain();
    set(
        &mut docs[2],
        POLICY,
        json!({"auto_activate": true, "requiredActivationApprovals": ["release_manager"]}),
    );
    check(
        docs,
        &[
            "document 2 /generationPolicy/auto_activate: generation-policy-too-permissive: auto_activate is true but TS-201's capability snapshot [read_repo, install_deps] needs approval to activate",
            "document 2 /generationPolicy/requiredActivationApprovals: generation-policy-too-permissive: requiredActivationApprovals lacks project_lead: TS-201's capability snapshot has [install_deps]",
            "document 2 /generationPolicy/requiredActivationApprovals: generation-policy-too-permissive: requiredActivationApprovals lacks security_reviewer: TS-201's capability snapshot has [install_deps]",
        ],
    );
}

#[test]
fn write_without_read_is_not_safe() {
    let mut docs = chain();
    set(
        &mut docs[0],
        "/requestedCapabilities",
        json!(["write_repo"]),
    );
    set(
        &mut docs[1],
        "/requestedCapabilitiesSnapshot",
        json!(["write_repo"]),
    );
    set(
        &mut docs[2],
        POLICY,
        json!({"auto_activate": false, "requiredActivationApprovals": ["project_lead"]}),
    );
    check(
        docs,
        &[
            "document 1 /generationPolicy/auto_activate: generation-policy-too-permissive: auto_activate is true but requestedCapabilitiesSnapshot [write_repo] needs approval to activate",
            "document 1 /generationPolicy/requiredActivationApprovals: generation-policy-too-permissive: requiredActivationApprovals lacks project_lead: requestedCapabilitiesSnapshot [write_repo] are outside the policy table",
        ],
    );
}
