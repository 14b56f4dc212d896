//! `approvals-snapshot-required`: an Evidence carries an `approvalsSnapshot` when a human
//! decided. In one document that is visible only as `policyVerdict:
//! manual_review_required`; across a set, also when a current PublishGate of the same
//! TaskSeed holds a human decision made no later than the Evidence's `endTime`
//! (decisions/0011).

use serde::Deserialize;
use serde_json::Value;

use super::{Doc, Set};
use crate::error::{ContractError, codes};
use crate::kinds::{Approval, ApprovalRole, DateTime, Kind, PolicyVerdict};

fn snapshot_missing(doc: &Doc<'_>) -> bool {
    match doc.json.get("approvalsSnapshot") {
        None => true,
        Some(Value::Array(items)) => items.is_empty(),
        Some(_) => false,
    }
}

fn manual_review(doc: &Doc<'_>) -> bool {
    doc.get::<PolicyVerdict>("/policyVerdict") == Some(PolicyVerdict::ManualReviewRequired)
}

pub(crate) fn check(doc: &Doc<'_>, out: &mut Vec<ContractError>) {
    if doc.is(Kind::Evidence) && manual_review(doc) && snapshot_missing(doc) {
        out.push(doc.error(
            "/approvalsSnapshot",
            codes::APPROVALS_SNAPSHOT_REQUIRED,
            "policyVerdict manual_review_required needs an approvalsSnapshot",
        ));
    }
}

/// The human decisions of a gate made no later than `until`, leniently read.
pub(crate) fn human_decisions_until(
    gate: &Doc<'_>,
    until: &DateTime,
) -> Vec<Approval<ApprovalRole>> {
    gate.json
        .get("approvals")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|entry| Approval::<ApprovalRole>::deserialize(entry).ok())
        .filter(|a| a.role.human().is_some() && a.decided_at <= *until)
        .collect()
}

pub(crate) fn check_set(set: &Set<'_>, out: &mut Vec<ContractError>) {
    for evidence in set.all_of(Kind::Evidence) {
        if manual_review(evidence) || !snapshot_missing(evidence) {
            continue;
        }
        let (Some(seed), Some(end)) = (
            evidence.str("/taskSeedId"),
            evidence.get::<DateTime>("/endTime"),
        ) else {
            continue;
        };
        for gate in set.gates_of_task_seed(seed) {
            if let Some(first) = human_decisions_until(gate, &end).first() {
                out.push(evidence.error(
                    "/approvalsSnapshot",
                    codes::APPROVALS_SNAPSHOT_REQUIRED,
                    format!(
                        "{} records a human decision ({} {} by {} at {}) before this execution ended; approvalsSnapshot is required",
                        gate.id().unwrap_or("?"),
                        first.role,
                        first.decision,
                        first.actor_id,
                        first.decided_at
                    ),
                ));
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests;
