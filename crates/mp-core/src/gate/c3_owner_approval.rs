//! C3: owner approval — the quadrant needs none (A, B, C), or a verified
//! `decision:approved-A` / `decision:approved-B` label exists.
//!
//! `decision:approved-C` is not an approval and never opens C3.

use std::fmt;

use super::{CORE_SEVERITY, ConditionId, ConditionResult, GatePolicy, List};
use crate::approval::{
    APPROVED_A, APPROVED_B, LabelVerification, Receipts, Unverified, UnverifiedLabel, VerifiedBy,
    verify_label,
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
        return vec![result(ApprovalEvidence::QuadrantAutoApproved { quadrant })];
    }
    let mut unverified = Vec::new();
    for label in [APPROVED_A, APPROVED_B] {
        match verify_label(pr, label, receipts, policy.trust_roots()) {
            LabelVerification::Verified(verified) => {
                return vec![result(ApprovalEvidence::OwnerApproved {
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
        ApprovalEvidence::OwnerApprovalMissing {
            quadrant,
            unverified,
        },
    )]
}

/// What C3 rests on: the quadrant, and the approval labels with their verification.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ApprovalEvidence {
    /// C3 holds: the quadrant needs no owner approval.
    QuadrantAutoApproved {
        /// The classifier quadrant (A, B or C).
        quadrant: Quadrant,
    },
    /// C3 holds: a verified owner approval label.
    OwnerApproved {
        /// The approval label.
        label: String,
        /// Why it is honoured.
        verified: VerifiedBy,
    },
    /// C3 fails: the quadrant is D (or unknown) and no approval label is verified.
    OwnerApprovalMissing {
        /// The classifier quadrant, if known.
        quadrant: Option<Quadrant>,
        /// Approval labels present on the PR that are not honoured, with the reason.
        unverified: Vec<UnverifiedLabel>,
    },
}

impl ApprovalEvidence {
    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::QuadrantAutoApproved { .. } => "quadrant_auto_approved",
            Self::OwnerApproved { .. } => "owner_approved",
            Self::OwnerApprovalMissing { .. } => "owner_approval_missing",
        }
    }
}

impl fmt::Display for ApprovalEvidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::QuadrantAutoApproved { quadrant } => {
                write!(f, "quadrant {quadrant} needs no owner approval")
            }
            Self::OwnerApproved { label, verified } => {
                write!(f, "owner approval '{label}' ({verified})")
            }
            Self::OwnerApprovalMissing {
                quadrant,
                unverified,
            } => {
                let quadrant = quadrant.map_or("unknown", Quadrant::as_str);
                write!(f, "owner approval missing (quadrant={quadrant})")?;
                if !unverified.is_empty() {
                    write!(f, "; not honoured: {}", List(unverified))?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests;
