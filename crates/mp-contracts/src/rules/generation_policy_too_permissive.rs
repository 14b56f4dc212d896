//! `generation-policy-too-permissive`: a generation policy is at least as strict as the one
//! derived from the capabilities (see `crate::policy`). A TaskSeed is checked against its
//! own snapshot; an Acceptance, across a set, against its TaskSeed's snapshot. Stricter
//! policies (more roles, no auto-activation) are fine.

use std::collections::BTreeSet;

use serde_json::Value;

use super::{Doc, Set, bracket};
use crate::error::{ContractError, codes};
use crate::kinds::{Capability, Kind};
use crate::policy::{derive_generation_policy, roles_for};

const AUTO: &str = "/generationPolicy/auto_activate";
const ROLES: &str = "/generationPolicy/requiredActivationApprovals";

/// Checks `doc`'s policy against `capabilities`; `source` names where they come from.
fn check_policy(
    doc: &Doc<'_>,
    capabilities: &[Capability],
    source: &str,
    out: &mut Vec<ContractError>,
) {
    let derived = derive_generation_policy(capabilities);
    if !derived.auto_activate && doc.get::<bool>(AUTO) == Some(true) {
        out.push(doc.error(
            AUTO,
            codes::GENERATION_POLICY_TOO_PERMISSIVE,
            format!(
                "auto_activate is true but {source} {} needs approval to activate",
                bracket(capabilities)
            ),
        ));
    }
    let Some(listed) = doc.array(ROLES) else {
        return;
    };
    let listed: BTreeSet<&str> = listed.iter().filter_map(Value::as_str).collect();
    for role in &derived.required_activation_approvals {
        if listed.contains(role.as_str()) {
            continue;
        }
        let causes: Vec<Capability> = capabilities
            .iter()
            .copied()
            .filter(|c| roles_for(*c).contains(role))
            .collect();
        let because = if causes.is_empty() {
            format!(
                "{source} {} are outside the policy table",
                bracket(capabilities)
            )
        } else {
            format!("{source} has {}", bracket(&causes))
        };
        out.push(doc.error(
            ROLES,
            codes::GENERATION_POLICY_TOO_PERMISSIVE,
            format!("requiredActivationApprovals lacks {role}: {because}"),
        ));
    }
}

pub(crate) fn check(doc: &Doc<'_>, out: &mut Vec<ContractError>) {
    if !doc.is(Kind::TaskSeed) {
        return;
    }
    if let Some(capabilities) = doc.get::<Vec<Capability>>("/requestedCapabilitiesSnapshot") {
        check_policy(doc, &capabilities, "requestedCapabilitiesSnapshot", out);
    }
}

pub(crate) fn check_set(set: &Set<'_>, out: &mut Vec<ContractError>) {
    for acceptance in set.all_of(Kind::Acceptance) {
        let Some(seed) = set.referenced(acceptance, "/taskSeedId", Kind::TaskSeed) else {
            continue;
        };
        if let Some(capabilities) = seed.get::<Vec<Capability>>("/requestedCapabilitiesSnapshot") {
            let source = format!("{}'s capability snapshot", seed.id().unwrap_or("?"));
            check_policy(acceptance, &capabilities, &source, out);
        }
    }
}

#[cfg(test)]
mod tests;
