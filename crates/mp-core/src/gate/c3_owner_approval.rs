//! C3: owner approval — the quadrant needs none (A, B, C), or a verified
//! `decision:approved-A` / `decision:approved-B` label exists.
//!
//! `decision:approved-C` is not an approval and never opens C3.

use super::{CORE_SEVERITY, ConditionId, ConditionResult, Evidence, GatePolicy};
use crate::approval::{
    APPROVED_A, APPROVED_B, LabelVerification, Receipts, Unverified, UnverifiedLabel, verify_label,
};
use crate::context::PrContext;
use crate::quadrant::Quadrant;

/// Evaluates C3 for the classifier's `quadrant` (`None`: unknown, which needs approval).
///
/// Approval labels are verified with [`verify_label`]: a trusted applier (allowlisted or
/// the bot), a bot receipt naming the current head, and for a label a human applied,
/// GitHub's record of the head branch proving it was applied to the current head. The failure lists every approval
/// label that is present but not honoured, with the reason.
pub fn evaluate(
    pr: &PrContext,
    receipts: &Receipts,
    quadrant: Option<Quadrant>,
    policy: &GatePolicy,
) -> Vec<ConditionResult> {
    let result = |evidence| ConditionResult::pass(ConditionId::C3, CORE_SEVERITY, evidence);
    if let Some(quadrant) = quadrant.filter(|q| q.auto_approved()) {
        return vec![result(Evidence::QuadrantAutoApproved { quadrant })];
    }
    let mut unverified = Vec::new();
    for label in [APPROVED_A, APPROVED_B] {
        match verify_label(pr, label, receipts, policy.trust_roots()) {
            LabelVerification::Verified(verified) => {
                return vec![result(Evidence::OwnerApproved {
                    label: label.to_owned(),
                    verified,
                })];
            }
            LabelVerification::Unverified(Unverified::Absent) => {}
            LabelVerification::Unverified(reason) => unverified.push(UnverifiedLabel {
                label: label.to_owned(),
                reason,
            }),
        }
    }
    vec![ConditionResult::fail(
        ConditionId::C3,
        CORE_SEVERITY,
        Evidence::OwnerApprovalMissing {
            quadrant,
            unverified,
        },
    )]
}

#[cfg(test)]
mod tests;
