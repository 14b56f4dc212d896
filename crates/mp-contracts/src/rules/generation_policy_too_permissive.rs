//! `generation-policy-too-permissive`: a generation policy is at least as strict as the one
//! derived from the capabilities (see `crate::policy`). A TaskSeed is checked against its
//! own snapshot; an Acceptance, across a set, against its TaskSeed's snapshot. Stricter
//! policies (more roles, no auto-activation) are fine.

use std::collections::BTreeSet;

use serde_json::Value;

use super::index::Facts;
use super::{Doc, Index, bracket};
use crate::error::{ContractError, codes};
use crate::kinds::{Capability, Kind};
use crate::policy::{derive_generation_policy, roles_for};

const AUTO: &str = "/generationPolicy/auto_activate";
const ROLES: &str = "/generationPolicy/requiredActivationApprovals";

/// A document's generation policy, as read: `auto_activate` when a boolean, the strings of
/// `requiredActivationApprovals` when an array.
struct Policy<'p> {
    auto_activate: Option<bool>,
    listed: Option<BTreeSet<&'p str>>,
}

/// Checks the policy of document `index` against `capabilities`; `source` names where
/// they come from.
fn check_policy(
    index: usize,
    policy: &Policy<'_>,
    capabilities: &[Capability],
    source: &dyn std::fmt::Display,
    out: &mut Vec<ContractError>,
) {
    let derived = derive_generation_policy(capabilities);
    if !derived.auto_activate && policy.auto_activate == Some(true) {
        out.push(ContractError::new(
            index,
            AUTO,
            codes::GENERATION_POLICY_TOO_PERMISSIVE,
            format!(
                "auto_activate is true but {source} {} needs approval to activate",
                bracket(capabilities)
            ),
        ));
    }
    let Some(listed) = &policy.listed else {
        return;
    };
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
        out.push(ContractError::new(
            index,
            ROLES,
            codes::GENERATION_POLICY_TOO_PERMISSIVE,
            format!("requiredActivationApprovals lacks {role}: {because}"),
        ));
    }
}

/// "TS-1's capability snapshot", written only when a message needs it.
struct SnapshotOf<'a>(&'a str);

impl std::fmt::Display for SnapshotOf<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}'s capability snapshot", self.0)
    }
}

/// A TaskSeed against its own snapshot.
pub(crate) fn check(doc: &Doc<'_>, out: &mut Vec<ContractError>) {
    if !doc.is(Kind::TaskSeed) {
        return;
    }
    if let Some(capabilities) = doc.get::<Vec<Capability>>("/requestedCapabilitiesSnapshot") {
        let policy = Policy {
            auto_activate: doc.get(AUTO),
            listed: doc
                .array(ROLES)
                .map(|roles| roles.iter().filter_map(Value::as_str).collect()),
        };
        check_policy(
            doc.index,
            &policy,
            &capabilities,
            &"requestedCapabilitiesSnapshot",
            out,
        );
    }
}

/// An Acceptance against the snapshot of its TaskSeed in the set.
pub(crate) fn check_set(set: &Index, out: &mut Vec<ContractError>) {
    for acceptance in set.all_of(Kind::Acceptance) {
        let Facts::Acceptance {
            auto_activate,
            activation_roles,
            ..
        } = &acceptance.facts
        else {
            continue;
        };
        let Some(seed) = set.referenced(acceptance, Kind::TaskSeed) else {
            continue;
        };
        if let Some(capabilities) = seed.capability_snapshot() {
            let policy = Policy {
                auto_activate: *auto_activate,
                listed: activation_roles
                    .as_ref()
                    .map(|roles| roles.iter().map(|r| &**r).collect()),
            };
            let source = SnapshotOf(set.name(seed));
            check_policy(acceptance.index, &policy, capabilities, &source, out);
        }
    }
}

#[cfg(test)]
mod tests;
