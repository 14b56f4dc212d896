//! C1: `ready-to-merge` is present, was established by an allowlisted actor, GitHub's
//! record of the head branch proves it was applied to the current head, and the bot's
//! receipt records that binding.

use super::{CORE_SEVERITY, ConditionId, ConditionResult, Evidence, GatePolicy};
use crate::approval::{Provenance, READY_TO_MERGE, Receipts, head_at_label, label_applier};
use crate::context::PrContext;

fn fail(evidence: Evidence) -> ConditionResult {
    ConditionResult::fail(ConditionId::C1, CORE_SEVERITY, evidence)
}

/// Evaluates C1. A missing label is one failure; otherwise the applier and the receipt are
/// checked independently and each problem is its own failure. With an allowlisted
/// applier, the head the label was applied to is proven from the head branch's history
/// ([`head_at_label`]); without that proof the receipt is not consulted, since a receipt
/// records a binding and never replaces its evidence.
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
    let applier = match label_applier(pr, READY_TO_MERGE) {
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
            Some(actor) => Some((actor, applier.at)),
        },
    };
    let proof = match &applier {
        Some((_, labeled_at)) => match head_at_label(pr, *labeled_at, policy.trust_roots()) {
            Ok(proof) => Some(proof),
            Err(reason) => {
                failures.push(fail(Evidence::HeadNotProven {
                    label: label.clone(),
                    head: pr.head_sha.clone(),
                    reason,
                }));
                return failures;
            }
        },
        None => None,
    };
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
    match (applier, proof) {
        (Some((applier, _)), Some(proof)) if failures.is_empty() => vec![ConditionResult::pass(
            ConditionId::C1,
            CORE_SEVERITY,
            Evidence::ReadyToMerge {
                applier,
                head: pr.head_sha.clone(),
                proof,
            },
        )],
        _ => failures,
    }
}

#[cfg(test)]
mod tests;
