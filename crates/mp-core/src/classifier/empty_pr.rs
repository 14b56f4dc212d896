//! The empty-PR rule (`classifier_empty_pr`): a pull request that changes no file is D,
//! and so is one whose file list reaches GitHub's listing cap
//! ([`FILE_LISTING_CAP`]): its paths cannot all be read, so they cannot all be classified.
//! The cap half runs even when `skills.yml` disables the rule: it guards the classifier's
//! input, not a policy.

use std::fmt;

use super::{RuleId, Vote};
use crate::context::PrContext;
use crate::quadrant::Quadrant;

/// What the empty-PR rule found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmptyPrFinding {
    /// The pull request changes no file (D): there is nothing to classify, so the owner
    /// decides.
    Empty,
    /// The file list reached GitHub's cap (D): the pull request may change more files
    /// than GitHub lists, so the owner decides on what cannot be read.
    AtListingCap {
        /// How many were listed.
        count: usize,
    },
    /// The pull request changes files (A).
    HasFiles {
        /// How many.
        count: usize,
    },
}

impl EmptyPrFinding {
    /// Stable snake_case code.
    pub fn code(self) -> &'static str {
        match self {
            Self::Empty => "pr_empty",
            Self::AtListingCap { .. } => "pr_files_at_listing_cap",
            Self::HasFiles { .. } => "pr_has_files",
        }
    }

    /// The quadrant this finding votes for.
    pub fn quadrant(self) -> Quadrant {
        match self {
            Self::Empty | Self::AtListingCap { .. } => Quadrant::D,
            Self::HasFiles { .. } => Quadrant::A,
        }
    }

    /// The `classifier_empty_pr` vote.
    pub fn vote(self) -> Vote {
        Vote::new(RuleId::EmptyPr, self.quadrant(), self.to_string())
    }
}

impl fmt::Display for EmptyPrFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("the pull request changes no file"),
            Self::AtListingCap { count } => write!(
                f,
                "GitHub lists {count} changed files, its cap: the files past it cannot be read or classified"
            ),
            Self::HasFiles { count: 1 } => f.write_str("the pull request changes 1 file"),
            Self::HasFiles { count } => write!(f, "the pull request changes {count} files"),
        }
    }
}

/// The most files `GET /repos/{o}/{r}/pulls/{n}/files` lists for one pull request.
pub const FILE_LISTING_CAP: usize = 3000;

/// Evaluates the empty-PR rule.
pub fn evaluate(pr: &PrContext) -> EmptyPrFinding {
    match pr.files.len() {
        0 => EmptyPrFinding::Empty,
        count if count >= FILE_LISTING_CAP => EmptyPrFinding::AtListingCap { count },
        count => EmptyPrFinding::HasFiles { count },
    }
}

/// Whether the file list reached GitHub's cap (the part of the rule that always runs).
pub fn at_listing_cap(pr: &PrContext) -> bool {
    pr.files.len() >= FILE_LISTING_CAP
}

#[cfg(test)]
mod tests;
