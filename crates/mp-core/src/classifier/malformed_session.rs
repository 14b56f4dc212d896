//! The malformed-session rule (`classifier_malformed_session`): a pull request with a commit
//! whose `Agent-Session` trailer is present but not well formed is D.
//!
//! A missing `Agent-Session` is C5's business (it blocks the gate on its own); this rule
//! then abstains. Every `Agent-Session` line of a commit is checked, not only the last one
//! C5 reads, so a well-formed line cannot hide a malformed one.

use std::fmt;

use super::{RuleId, Vote, write_list};
use crate::context::PrContext;
use crate::ids::CommitSha;
use crate::quadrant::Quadrant;
use crate::trailers::{TrailerKey, is_valid_session};

/// One malformed `Agent-Session` value and the commit carrying it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MalformedSession {
    /// The commit.
    pub sha: CommitSha,
    /// The malformed value (possibly empty).
    pub value: String,
}

impl fmt::Display for MalformedSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "commit {} ('{}')", self.sha.short(), self.value)
    }
}

/// What the malformed-session rule found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionFinding {
    /// Some commit carries a malformed `Agent-Session` (D).
    Malformed {
        /// Every malformed value, in commit order.
        sessions: Vec<MalformedSession>,
    },
    /// No malformed `Agent-Session` (A).
    WellFormed {
        /// Commits carrying a well-formed `Agent-Session`.
        checked: usize,
        /// Commits without one (left to C5).
        missing: usize,
    },
}

impl SessionFinding {
    /// Stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Malformed { .. } => "session_malformed",
            Self::WellFormed { .. } => "session_well_formed",
        }
    }

    /// The quadrant this finding votes for.
    pub fn quadrant(&self) -> Quadrant {
        match self {
            Self::Malformed { .. } => Quadrant::D,
            Self::WellFormed { .. } => Quadrant::A,
        }
    }

    /// The `classifier_malformed_session` vote.
    pub fn vote(&self) -> Vote {
        Vote::new(RuleId::MalformedSession, self.quadrant(), self.to_string())
    }
}

impl fmt::Display for SessionFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Malformed { sessions } => {
                write!(f, "malformed {} on ", TrailerKey::AgentSession)?;
                write_list(f, sessions)
            }
            Self::WellFormed { checked, missing } => {
                write!(
                    f,
                    "no malformed {} ({checked} well formed",
                    TrailerKey::AgentSession
                )?;
                if *missing > 0 {
                    write!(f, ", {missing} missing and left to C5")?;
                }
                f.write_str(")")
            }
        }
    }
}

/// Evaluates the malformed-session rule over the pull request's commits.
pub fn evaluate(pr: &PrContext) -> SessionFinding {
    let key = TrailerKey::AgentSession.as_str();
    let mut sessions = Vec::new();
    let (mut checked, mut missing) = (0, 0);
    for commit in &pr.commits {
        let values: Vec<&str> = commit
            .trailers
            .iter()
            .filter(|(k, _)| *k == key)
            .map(|(_, v)| v)
            .collect();
        if values.is_empty() {
            missing += 1;
            continue;
        }
        let before = sessions.len();
        sessions.extend(
            values
                .into_iter()
                .filter(|v| !is_valid_session(v))
                .map(|v| MalformedSession {
                    sha: commit.sha.clone(),
                    value: v.to_owned(),
                }),
        );
        if sessions.len() == before {
            checked += 1;
        }
    }
    if sessions.is_empty() {
        SessionFinding::WellFormed { checked, missing }
    } else {
        SessionFinding::Malformed { sessions }
    }
}

#[cfg(test)]
mod tests;
