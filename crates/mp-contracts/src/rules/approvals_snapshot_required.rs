//! `approvals-snapshot-required`: an Evidence carries an `approvalsSnapshot` when a human
//! decided. In one document that is visible only as `policyVerdict:
//! manual_review_required`; across a set, also when a current PublishGate of the same
//! TaskSeed holds a human decision made no later than the Evidence's `endTime`
//! (decisions/0011).

use super::index::Facts;
use super::{Doc, Index};
use crate::error::{ContractError, codes};
use crate::kinds::{Kind, PolicyVerdict};

fn snapshot_missing(doc: &Doc<'_>) -> bool {
    match doc.json.get("approvalsSnapshot") {
        None => true,
        Some(serde_json::Value::Array(items)) => items.is_empty(),
        Some(_) => false,
    }
}

pub(crate) fn check(doc: &Doc<'_>, out: &mut Vec<ContractError>) {
    if doc.is(Kind::Evidence)
        && doc.get::<PolicyVerdict>("/policyVerdict") == Some(PolicyVerdict::ManualReviewRequired)
        && snapshot_missing(doc)
    {
        out.push(doc.error(
            "/approvalsSnapshot",
            codes::APPROVALS_SNAPSHOT_REQUIRED,
            "policyVerdict manual_review_required needs an approvalsSnapshot",
        ));
    }
}

pub(crate) fn check_set(set: &Index, out: &mut Vec<ContractError>) {
    for evidence in set.all_of(Kind::Evidence) {
        let Facts::Evidence {
            manual_review: false,
            snapshot,
            end: Some(end),
        } = &evidence.facts
        else {
            continue;
        };
        if !snapshot.missing() {
            continue;
        }
        for gate in set.gates_of_referenced_seed(evidence) {
            if let Some(first) = gate.human_decisions_until(*end).next() {
                out.push(evidence.error(
                    "/approvalsSnapshot",
                    codes::APPROVALS_SNAPSHOT_REQUIRED,
                    format!(
                        "{} records a human decision ({} {} by {} at {}) before this execution ended; approvalsSnapshot is required",
                        set.name(gate),
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
