//! C1: `ready-to-merge` is present, was established by an allowlisted actor, GitHub's
//! record of the head branch proves it was applied to the current head, and the bot's
//! receipt records that binding.

use std::fmt;

use super::{CORE_SEVERITY, ConditionId, ConditionResult, GatePolicy, List};
use crate::approval::{
    HeadAtLabel, NoHeadEvidence, Provenance, READY_TO_MERGE, Receipts, Undeterminable,
    head_at_label, label_applier,
};
use crate::context::PrContext;
use crate::ids::{CommitSha, Login, PrNumber};

fn fail(evidence: ReadyToMergeEvidence) -> ConditionResult {
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
        return vec![fail(ReadyToMergeEvidence::LabelMissing {
            label,
            pr: pr.number,
        })];
    }
    let mut failures = Vec::new();
    let applier = match label_applier(pr, READY_TO_MERGE) {
        Provenance::Undeterminable(reason) => {
            failures.push(fail(ReadyToMergeEvidence::ApplierUndeterminable {
                label: label.clone(),
                reason,
            }));
            None
        }
        Provenance::Established(applier) => match applier.actor {
            None => {
                failures.push(fail(ReadyToMergeEvidence::ApplierUnknown {
                    label: label.clone(),
                }));
                None
            }
            Some(actor) if !policy.trust_roots().is_allowlisted(&actor) => {
                failures.push(fail(ReadyToMergeEvidence::ApplierNotAllowlisted {
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
                failures.push(fail(ReadyToMergeEvidence::HeadNotProven {
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
        None => failures.push(fail(ReadyToMergeEvidence::ReceiptMissing {
            label: label.clone(),
            head: pr.head_sha.clone(),
        })),
        Some(receipt) if *receipt.head() != pr.head_sha => {
            failures.push(fail(ReadyToMergeEvidence::ReceiptStale {
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
            ReadyToMergeEvidence::ReadyToMerge {
                applier,
                head: pr.head_sha.clone(),
                proof,
            },
        )],
        _ => failures,
    }
}

/// What C1 rests on: who applied `ready-to-merge`, to which head, and the receipt that records it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadyToMergeEvidence {
    /// C1 holds: an allowlisted actor applied the label to the current head (GitHub's
    /// record of the head branch proves it) and the bot's receipt records it.
    ReadyToMerge {
        /// Who established the label.
        applier: Login,
        /// The current head, named by the receipt.
        head: CommitSha,
        /// The server-side evidence binding the label to the head.
        proof: HeadAtLabel,
    },
    /// Nothing proves the label was applied to the current head.
    HeadNotProven {
        /// The label.
        label: String,
        /// The current head.
        head: CommitSha,
        /// Why.
        reason: NoHeadEvidence,
    },
    /// The label is not on the pull request.
    LabelMissing {
        /// The label.
        label: String,
        /// The pull request.
        pr: PrNumber,
    },
    /// No bot receipt binds the label to the current head.
    ReceiptMissing {
        /// The label.
        label: String,
        /// The current head.
        head: CommitSha,
    },
    /// The label's receipt names an older head.
    ReceiptStale {
        /// The label.
        label: String,
        /// The head the receipt names.
        receipt_head: CommitSha,
        /// The current head.
        head: CommitSha,
    },
    /// The label was established by someone not on the allowlist.
    ApplierNotAllowlisted {
        /// The label.
        label: String,
        /// Who established it.
        actor: Login,
        /// The allowlist it was checked against.
        allowlist: Vec<Login>,
    },
    /// The label's establishing event names no actor.
    ApplierUnknown {
        /// The label.
        label: String,
    },
    /// The label's establishing event cannot be determined.
    ApplierUndeterminable {
        /// The label.
        label: String,
        /// Why.
        reason: Undeterminable,
    },
}

impl ReadyToMergeEvidence {
    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::ReadyToMerge { .. } => "ready_to_merge",
            Self::HeadNotProven { .. } => "head_not_proven",
            Self::LabelMissing { .. } => "label_missing",
            Self::ReceiptMissing { .. } => "receipt_missing",
            Self::ReceiptStale { .. } => "receipt_stale",
            Self::ApplierNotAllowlisted { .. } => "applier_not_allowlisted",
            Self::ApplierUnknown { .. } => "applier_unknown",
            Self::ApplierUndeterminable { .. } => "applier_undeterminable",
        }
    }
}

impl fmt::Display for ReadyToMergeEvidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ReadyToMerge {
                applier,
                head,
                proof,
            } => write!(
                f,
                "label 'ready-to-merge' applied by {applier} and recorded for head {}; bound by: {proof}",
                head.short()
            ),
            Self::HeadNotProven {
                label,
                head,
                reason,
            } => write!(
                f,
                "label '{label}' is not bound to head {}: {reason}; re-apply the label",
                head.short()
            ),
            Self::LabelMissing { label, pr } => write!(f, "label '{label}' not set on PR #{pr}"),
            Self::ReceiptMissing { label, head } => write!(
                f,
                "label '{label}' has no current-head receipt (head {}); the bot records one once an allowlisted actor applies it",
                head.short()
            ),
            Self::ReceiptStale {
                label,
                receipt_head,
                head,
            } => write!(
                f,
                "label '{label}' was recorded for head {} but the PR head is now {} — stale; re-apply the label",
                receipt_head.short(),
                head.short()
            ),
            Self::ApplierNotAllowlisted {
                label,
                actor,
                allowlist,
            } => write!(
                f,
                "label '{label}' was applied by {actor}, not an allowlisted actor (allowlist: {})",
                List(allowlist)
            ),
            Self::ApplierUnknown { label } => {
                write!(f, "label '{label}' was applied by an unknown actor")
            }
            Self::ApplierUndeterminable { label, reason } => {
                write!(f, "label '{label}' has no determinable applier: {reason}")
            }
        }
    }
}

#[cfg(test)]
mod tests;
