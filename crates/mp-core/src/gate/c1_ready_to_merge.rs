//! C1: `ready-to-merge` is present, bound by a bot receipt to the current head, and was
//! established by an allowlisted actor.

use super::{CORE_SEVERITY, ConditionId, ConditionResult, Evidence, GatePolicy};
use crate::approval::{Provenance, READY_TO_MERGE, Receipts, effective_applier};
use crate::context::PrContext;

fn fail(evidence: Evidence) -> ConditionResult {
    ConditionResult::fail(ConditionId::C1, CORE_SEVERITY, evidence)
}

/// Evaluates C1. A missing label is one failure; otherwise the receipt and the applier are
/// checked independently and each problem is its own failure.
///
/// The applier must be on `policy.allowlist` (the bot does not count here); an empty
/// allowlist admits nobody.
pub fn evaluate(pr: &PrContext, receipts: &Receipts, policy: &GatePolicy) -> Vec<ConditionResult> {
    let label = READY_TO_MERGE.to_owned();
    if !pr.has_label(READY_TO_MERGE) {
        return vec![fail(Evidence::LabelMissing {
            label,
            pr: pr.number,
        })];
    }
    let mut failures = Vec::new();
    match receipts.get(READY_TO_MERGE) {
        None => failures.push(fail(Evidence::ReceiptMissing {
            label: label.clone(),
            head: pr.head_sha.clone(),
        })),
        Some(receipt) if *receipt.head() != pr.head_sha => {
            failures.push(fail(Evidence::ReceiptStale {
                label: label.clone(),
                receipt_head: receipt.head().clone(),
                head: pr.head_sha.clone(),
            }));
        }
        Some(_) => {}
    }
    let applier = match effective_applier(&pr.label_events, READY_TO_MERGE) {
        Provenance::Undeterminable(reason) => {
            failures.push(fail(Evidence::ApplierUndeterminable {
                label: label.clone(),
                reason,
            }));
            None
        }
        Provenance::Established(applier) => match applier.actor {
            None => {
                failures.push(fail(Evidence::ApplierUnknown {
                    label: label.clone(),
                }));
                None
            }
            Some(actor) if !policy.trust_roots().is_allowlisted(&actor) => {
                failures.push(fail(Evidence::ApplierNotAllowlisted {
                    label: label.clone(),
                    actor,
                    allowlist: policy.allowlist.clone(),
                }));
                None
            }
            Some(actor) => Some(actor),
        },
    };
    match applier {
        Some(applier) if failures.is_empty() => vec![ConditionResult::pass(
            ConditionId::C1,
            CORE_SEVERITY,
            Evidence::ReadyToMerge {
                applier,
                head: pr.head_sha.clone(),
            },
        )],
        _ => failures,
    }
}

#[cfg(test)]
mod tests;
