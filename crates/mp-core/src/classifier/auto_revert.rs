//! The auto-revert rule (`classifier_auto_revert`): a verified `decision:auto-revert` label
//! makes the pull request C (an irreversible but non-critical recovery step).
//!
//! The label alone proves nothing: the caller establishes it with the label provenance
//! checks (trusted applier, and either a receipt for the current head or GitHub's record
//! of the head branch showing the label was applied to the current head) and hands the
//! outcome in as an
//! [`AutoRevertLabel`]. Because the verdict is a maximum, this vote never lowers a D.

use std::fmt;

use super::{RuleId, Vote};
use crate::approval::HeadAtLabel;
use crate::ids::{CommitSha, Login};
use crate::quadrant::Quadrant;

/// The label this rule reads.
pub const AUTO_REVERT_LABEL: &str = crate::labels::AUTO_REVERT;

/// How a present `decision:auto-revert` label was shown to be honoured.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AutoRevertProof {
    /// A bot receipt binds the label to the current head.
    Receipt {
        /// The head the receipt names (the current head).
        head: CommitSha,
    },
    /// GitHub's record of the head branch shows the label was applied to the current head.
    HeadAtLabel(HeadAtLabel),
}

impl fmt::Display for AutoRevertProof {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Receipt { head } => write!(f, "receipt for head {}", head.short()),
            Self::HeadAtLabel(proof) => proof.fmt(f),
        }
    }
}

/// The status of the `decision:auto-revert` label on a pull request, computed by the caller
/// from the label provenance checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AutoRevertLabel {
    /// The label is not on the pull request (A).
    Absent,
    /// The label is present but could not be verified (A).
    Unverified {
        /// Why, e.g. `applied by mallory, who is not allowlisted`.
        reason: String,
    },
    /// The label is present and verified (C).
    Verified {
        /// The trusted actor who established the label.
        applier: Login,
        /// How it was verified.
        proof: AutoRevertProof,
    },
}

impl AutoRevertLabel {
    /// Stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Absent => "auto_revert_absent",
            Self::Unverified { .. } => "auto_revert_unverified",
            Self::Verified { .. } => "auto_revert_verified",
        }
    }

    /// The quadrant this status votes for: C when verified, else A.
    pub fn quadrant(&self) -> Quadrant {
        match self {
            Self::Verified { .. } => Quadrant::C,
            Self::Absent | Self::Unverified { .. } => Quadrant::A,
        }
    }

    /// The `classifier_auto_revert` vote.
    pub fn vote(&self) -> Vote {
        Vote::new(RuleId::AutoRevert, self.quadrant(), self.to_string())
    }
}

impl fmt::Display for AutoRevertLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Absent => write!(f, "no {AUTO_REVERT_LABEL} label"),
            Self::Unverified { reason } => {
                write!(
                    f,
                    "{AUTO_REVERT_LABEL} is present but not verified: {reason}"
                )
            }
            Self::Verified { applier, proof } => write!(
                f,
                "{AUTO_REVERT_LABEL} verified (applied by {applier}, {proof}): a recovery revert"
            ),
        }
    }
}

#[cfg(test)]
mod tests;
