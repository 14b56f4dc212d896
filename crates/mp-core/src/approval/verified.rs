//! The verified-label predicate: whether a present label is honoured, and why (or why not).
//!
//! A label is honoured when it is present, its establishing applier is trusted (allowlisted
//! or the bot), and then either a receipt names the current head (receipts decide alone,
//! dates are irrelevant) or — only for labels that need no receipt, such as
//! `decision:auto-revert` — the establishing event is no older than the head commit's
//! committer date, which must itself be plausible.

use std::fmt;

use super::provenance::{Provenance, Undeterminable, effective_applier};
use super::receipt::Receipts;
use super::{TrustRoots, requires_receipt};
use crate::context::PrContext;
use crate::ids::{CommitSha, Login, Timestamp};

/// How far a head committer date may lie in the future (10 minutes of clock skew).
pub const HEAD_DATE_MAX_FUTURE_SECONDS: i64 = 10 * 60;
/// How far a head committer date may lie in the past (3650 days).
pub const HEAD_DATE_MAX_AGE_DAYS: i64 = 3650;

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
    /// No receipt exists and the label needs none; it was applied at or after the head
    /// commit's committer date.
    LabeledAfterHead {
        /// Who established the label.
        applier: Login,
        /// When the label was applied.
        labeled_at: Timestamp,
        /// The head commit's committer date.
        committed_at: Timestamp,
    },
}

impl fmt::Display for VerifiedBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Receipt { applier, head } => {
                write!(f, "applied by {applier}, receipt for head {}", head.short())
            }
            Self::LabeledAfterHead {
                applier,
                labeled_at,
                committed_at,
            } => write!(
                f,
                "applied by {applier} at {labeled_at}, after the head commit date {committed_at}"
            ),
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
    /// The establishing event has no usable time.
    LabelTimeUnknown,
    /// The head commit is not among the pull request's commits.
    HeadCommitMissing {
        /// The current head.
        head: CommitSha,
    },
    /// The head commit has no usable committer date.
    HeadDateMissing {
        /// The current head.
        head: CommitSha,
    },
    /// The head committer date is more than 10 minutes in the future.
    HeadDateInFuture {
        /// The head commit's committer date.
        committed_at: Timestamp,
        /// The evaluation time.
        now: Timestamp,
    },
    /// The head committer date is more than 3650 days in the past.
    HeadDateTooOld {
        /// The head commit's committer date.
        committed_at: Timestamp,
        /// The evaluation time.
        now: Timestamp,
    },
    /// The label was applied before the head commit's committer date.
    LabeledBeforeHead {
        /// When the label was applied.
        labeled_at: Timestamp,
        /// The head commit's committer date.
        committed_at: Timestamp,
    },
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
            Self::LabelTimeUnknown => "label_time_unknown",
            Self::HeadCommitMissing { .. } => "head_commit_missing",
            Self::HeadDateMissing { .. } => "head_date_missing",
            Self::HeadDateInFuture { .. } => "head_date_in_future",
            Self::HeadDateTooOld { .. } => "head_date_too_old",
            Self::LabeledBeforeHead { .. } => "labeled_before_head",
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
            Self::LabelTimeUnknown => f.write_str("the label event has no time"),
            Self::HeadCommitMissing { head } => {
                write!(
                    f,
                    "head commit {} is not among the PR commits",
                    head.short()
                )
            }
            Self::HeadDateMissing { head } => {
                write!(f, "head commit {} has no committer date", head.short())
            }
            Self::HeadDateInFuture { committed_at, now } => write!(
                f,
                "head committer date {committed_at} is more than 10 minutes after now ({now})"
            ),
            Self::HeadDateTooOld { committed_at, now } => write!(
                f,
                "head committer date {committed_at} is more than {HEAD_DATE_MAX_AGE_DAYS} days before now ({now})"
            ),
            Self::LabeledBeforeHead {
                labeled_at,
                committed_at,
            } => write!(
                f,
                "applied at {labeled_at}, before the head commit date {committed_at}"
            ),
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
            Self::Verified(VerifiedBy::LabeledAfterHead { .. }) => "verified_by_time",
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

/// Decides whether `label` on the pull request is honoured at `now`.
///
/// In order: the label must be present; its establishing applier (see
/// [`effective_applier`]) must be trusted by `roots`; a receipt, if any, decides alone
/// (honoured iff it names the current head); a receipt-bound label without a receipt is
/// not honoured; otherwise the establishing event must be at or after the head commit's
/// committer date, which must be on the head commit itself and lie within
/// `[now − 3650 days, now + 10 minutes]`.
pub fn verify_label(
    pr: &PrContext,
    label: &str,
    receipts: &Receipts,
    roots: TrustRoots<'_>,
    now: Timestamp,
) -> LabelVerification {
    match check(pr, label, receipts, roots, now) {
        Ok(how) => LabelVerification::Verified(how),
        Err(why) => LabelVerification::Unverified(why),
    }
}

fn check(
    pr: &PrContext,
    label: &str,
    receipts: &Receipts,
    roots: TrustRoots<'_>,
    now: Timestamp,
) -> Result<VerifiedBy, Unverified> {
    if !pr.has_label(label) {
        return Err(Unverified::Absent);
    }
    let applier = match effective_applier(&pr.label_events, label) {
        Provenance::Undeterminable(why) => return Err(Unverified::ApplierUndeterminable(why)),
        Provenance::Established(applier) => applier,
    };
    let actor = applier.actor.clone().ok_or(Unverified::ApplierUnknown)?;
    if !roots.is_trusted(&actor) {
        return Err(Unverified::ApplierNotTrusted { actor });
    }
    let head = pr.head_sha.clone();
    if let Some(receipt) = receipts.get(label) {
        if *receipt.head() == head {
            return Ok(VerifiedBy::Receipt {
                applier: actor,
                head,
            });
        }
        return Err(Unverified::ReceiptStale {
            receipt_head: receipt.head().clone(),
            head,
        });
    }
    if requires_receipt(label) {
        return Err(Unverified::ReceiptMissing { head });
    }
    let labeled_at = applier.at.ok_or(Unverified::LabelTimeUnknown)?;
    let committed_at = plausible_head_date(pr, now)?;
    if labeled_at >= committed_at {
        Ok(VerifiedBy::LabeledAfterHead {
            applier: actor,
            labeled_at,
            committed_at,
        })
    } else {
        Err(Unverified::LabeledBeforeHead {
            labeled_at,
            committed_at,
        })
    }
}

/// The head commit's committer date, if it is on the head commit and plausible at `now`.
fn plausible_head_date(pr: &PrContext, now: Timestamp) -> Result<Timestamp, Unverified> {
    let head = &pr.head_sha;
    let commit = pr
        .head_commit()
        .ok_or_else(|| Unverified::HeadCommitMissing { head: head.clone() })?;
    let committed_at = commit
        .committed_at
        .ok_or_else(|| Unverified::HeadDateMissing { head: head.clone() })?;
    if committed_at > now.plus_seconds(HEAD_DATE_MAX_FUTURE_SECONDS) {
        return Err(Unverified::HeadDateInFuture { committed_at, now });
    }
    if committed_at < now.plus_hours(-24 * HEAD_DATE_MAX_AGE_DAYS) {
        return Err(Unverified::HeadDateTooOld { committed_at, now });
    }
    Ok(committed_at)
}

#[cfg(test)]
mod tests;
