//! The empty-PR rule (`classifier_empty_pr`): a pull request that changes no file is D.

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
            Self::HasFiles { .. } => "pr_has_files",
        }
    }

    /// The quadrant this finding votes for.
    pub fn quadrant(self) -> Quadrant {
        match self {
            Self::Empty => Quadrant::D,
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
            Self::HasFiles { count: 1 } => f.write_str("the pull request changes 1 file"),
            Self::HasFiles { count } => write!(f, "the pull request changes {count} files"),
        }
    }
}

/// Evaluates the empty-PR rule.
pub fn evaluate(pr: &PrContext) -> EmptyPrFinding {
    match pr.files.len() {
        0 => EmptyPrFinding::Empty,
        count => EmptyPrFinding::HasFiles { count },
    }
}

#[cfg(test)]
mod tests;
