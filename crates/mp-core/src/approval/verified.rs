//! The verified-label predicate: whether a present label is honoured, and why (or why not).
//!
//! A label is honoured when it is present and its establishing applier is trusted
//! (allowlisted or the bot). A label the bot applied (an inbox approval) is then honoured
//! through the bot's receipt naming the current head. A label a human applied is honoured
//! only when GitHub's record of the head branch proves the current head was the head when
//! the label was applied; receipt-bound labels also need the bot's receipt for it. Commit
//! dates, which the committer chooses, are never consulted.

use std::fmt;

use super::binding::{HeadAtLabel, NoHeadEvidence, head_at_label};
use super::provenance::{Provenance, Undeterminable, label_applier};
use super::receipt::Receipts;
use super::{TrustRoots, requires_receipt};
use crate::context::PrContext;
use crate::ids::{CommitSha, Login};

/// Why a label is honoured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VerifiedBy {
    /// A bot receipt binds the label to the current head.
    Receipt {
        /// Who established the label.
        applier: Login,
        /// The current head, named by the receipt.
        head: CommitSha,
    },
    /// GitHub's record of the head branch proves the label was applied to the current
    /// head (and, for a receipt-bound label, the bot's receipt names it).
    HeadAtLabel {
        /// Who established the label.
        applier: Login,
        /// The proof.
        proof: HeadAtLabel,
    },
}

impl fmt::Display for VerifiedBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Receipt { applier, head } => {
                write!(f, "applied by {applier}, receipt for head {}", head.short())
            }
            Self::HeadAtLabel { applier, proof } => {
                write!(f, "applied by {applier}; {proof}")
            }
        }
    }
}

/// Why a label is not honoured. Every case fails closed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unverified {
    /// The label is not on the pull request.
    Absent,
    /// The establishing event cannot be determined.
    ApplierUndeterminable(Undeterminable),
    /// The establishing event names no actor.
    ApplierUnknown,
    /// The establishing actor is neither allowlisted nor the bot.
    ApplierNotTrusted {
        /// Who applied the label.
        actor: Login,
    },
    /// The label needs a receipt and there is none.
    ReceiptMissing {
        /// The current head.
        head: CommitSha,
    },
    /// The receipt names another head.
    ReceiptStale {
        /// The head the receipt names.
        receipt_head: CommitSha,
        /// The current head.
        head: CommitSha,
    },
    /// A human applied the label and nothing proves it was applied to the current head.
    HeadNotProven(NoHeadEvidence),
}

impl Unverified {
    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Absent => "label_absent",
            Self::ApplierUndeterminable(_) => "applier_undeterminable",
            Self::ApplierUnknown => "applier_unknown",
            Self::ApplierNotTrusted { .. } => "applier_not_trusted",
            Self::ReceiptMissing { .. } => "receipt_missing",
            Self::ReceiptStale { .. } => "receipt_stale",
            Self::HeadNotProven(why) => why.code(),
        }
    }
}

impl fmt::Display for Unverified {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Absent => f.write_str("not set"),
            Self::ApplierUndeterminable(why) => write!(f, "applier cannot be determined: {why}"),
            Self::ApplierUnknown => f.write_str("applied by an unknown actor"),
            Self::ApplierNotTrusted { actor } => {
                write!(
                    f,
                    "applied by {actor}, who is neither allowlisted nor the bot"
                )
            }
            Self::ReceiptMissing { head } => {
                write!(f, "no receipt for the current head {}", head.short())
            }
            Self::ReceiptStale { receipt_head, head } => write!(
                f,
                "receipt names head {} but the PR head is now {}",
                receipt_head.short(),
                head.short()
            ),
            Self::HeadNotProven(why) => write!(f, "not bound to the current head: {why}"),
        }
    }
}

/// Whether a label is honoured, with the reason either way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabelVerification {
    /// Honoured.
    Verified(VerifiedBy),
    /// Not honoured.
    Unverified(Unverified),
}

impl LabelVerification {
    /// Whether the label is honoured.
    pub fn is_verified(&self) -> bool {
        matches!(self, Self::Verified(_))
    }

    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Verified(VerifiedBy::Receipt { .. }) => "verified_by_receipt",
            Self::Verified(VerifiedBy::HeadAtLabel { .. }) => "verified_by_head_history",
            Self::Unverified(why) => why.code(),
        }
    }
}

impl fmt::Display for LabelVerification {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Verified(how) => write!(f, "verified: {how}"),
            Self::Unverified(why) => write!(f, "not verified: {why}"),
        }
    }
}

/// A present label that is not honoured, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnverifiedLabel {
    /// The label name.
    pub label: String,
    /// Why it is not honoured.
    pub reason: Unverified,
}

impl fmt::Display for UnverifiedLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "'{}' {}", self.label, self.reason)
    }
}

/// Decides whether `label` on the pull request is honoured.
///
/// In order: the label must be present; its establishing applier (see
/// [`label_applier`]: the label unchanged since it was applied) must be trusted by `roots`. A label the bot applied needs the
/// bot's receipt naming the current head (only receipt-bound labels; the bot applies no
/// other). A label a human applied needs [`head_at_label`] to prove the current head was
/// the head at the label event, and a receipt-bound one also a receipt naming the current
/// head.
pub fn verify_label(
    pr: &PrContext,
    label: &str,
    receipts: &Receipts,
    roots: TrustRoots<'_>,
) -> LabelVerification {
    match check(pr, label, receipts, roots) {
        Ok(how) => LabelVerification::Verified(how),
        Err(why) => LabelVerification::Unverified(why),
    }
}

fn check(
    pr: &PrContext,
    label: &str,
    receipts: &Receipts,
    roots: TrustRoots<'_>,
) -> Result<VerifiedBy, Unverified> {
    if !pr.has_label(label) {
        return Err(Unverified::Absent);
    }
    let applier = match label_applier(pr, label) {
        Provenance::Undeterminable(why) => return Err(Unverified::ApplierUndeterminable(why)),
        Provenance::Established(applier) => applier,
    };
    let actor = applier.actor.clone().ok_or(Unverified::ApplierUnknown)?;
    if !roots.is_trusted(&actor) {
        return Err(Unverified::ApplierNotTrusted { actor });
    }
    let head = pr.head_sha.clone();
    let proof = if roots.is_bot(&actor) && requires_receipt(label) {
        None
    } else {
        Some(head_at_label(pr, applier.at, roots).map_err(Unverified::HeadNotProven)?)
    };
    if requires_receipt(label) {
        match receipts.get(label) {
            None => return Err(Unverified::ReceiptMissing { head }),
            Some(receipt) if *receipt.head() != head => {
                return Err(Unverified::ReceiptStale {
                    receipt_head: receipt.head().clone(),
                    head,
                });
            }
            Some(_) => {}
        }
    }
    Ok(match proof {
        None => VerifiedBy::Receipt {
            applier: actor,
            head,
        },
        Some(proof) => VerifiedBy::HeadAtLabel {
            applier: actor,
            proof,
        },
    })
}

#[cfg(test)]
mod tests;
