//! Which updates of a branch happened since the supervisor last looked, from GitHub's
//! activity log of that branch (`GET /activity?ref=`): the server-side record of who moved
//! the branch, when, and from which tip to which.
//!
//! The supervisor's watermark is a tip the branch had. The updates since then are the ones
//! logged after the last time the branch was left at that tip, chained by their tips
//! (each update starts where the previous one left the branch), never ordered by their
//! seconds or by commit dates. Each update is then the evidence for every commit it
//! brought (see [`crate::branch::unauthorized_push`] and [`crate::branch::break_glass`]).

use std::fmt;

use crate::context::RefUpdate;
use crate::ids::CommitSha;

/// The updates of a branch since it was at a known tip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Since {
    /// The updates since the branch was last at the tip, in the order they happened, each
    /// starting at the tip the previous one left; the last leaves the head. Empty when the
    /// branch is still at the tip.
    Updates(Vec<RefUpdate>),
    /// The log never shows the branch at the tip: history was rewritten past it, the log
    /// does not reach back that far, or the tip was never the branch's (a watermark
    /// someone else wrote).
    NotInLog,
    /// The updates after the tip do not lead to the head (GitHub records an update a moment
    /// after it happens, or the log is incomplete): nothing can be concluded yet.
    Behind(Behind),
}

/// Why the log after the tip does not lead to the head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Behind {
    /// The tip the chain of updates reaches (`None`: the branch deleted).
    pub reached: Option<CommitSha>,
    /// The branch's head.
    pub head: CommitSha,
    /// Updates after the tip that do not chain from it.
    pub unchained: usize,
}

impl fmt::Display for Behind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.reached {
            Some(tip) => write!(
                f,
                "GitHub's activity log leads to {} but the branch is at {}",
                tip.short(),
                self.head.short()
            )?,
            None => write!(
                f,
                "GitHub's activity log ends with the branch deleted but it is at {}",
                self.head.short()
            )?,
        }
        if self.unchained > 0 {
            write!(
                f,
                " ({} logged update(s) do not start where the previous one left the branch)",
                self.unchained
            )?;
        }
        Ok(())
    }
}

/// The updates since the branch was at `from`, given its activity log in GitHub's order
/// (newest first) and its current `head`. See [`Since`].
pub fn updates_since(log_newest_first: &[RefUpdate], from: &CommitSha, head: &CommitSha) -> Since {
    let oldest_first: Vec<&RefUpdate> = log_newest_first.iter().rev().collect();
    let start = oldest_first
        .iter()
        .rposition(|update| update.after.as_ref() == Some(from));
    let Some(start) = start else {
        return if from == head {
            // Nothing logged since (or nothing logged at all) and the branch has not moved.
            Since::Updates(Vec::new())
        } else {
            Since::NotInLog
        };
    };
    let mut remaining: Vec<&RefUpdate> = oldest_first[start + 1..].to_vec();
    let mut tip = Some(from.clone());
    let mut chain = Vec::new();
    while let Some(next) = remaining.iter().position(|u| u.before == tip) {
        let update = remaining.remove(next);
        tip.clone_from(&update.after);
        chain.push(update.clone());
    }
    if tip.as_ref() == Some(head) && remaining.is_empty() {
        Since::Updates(chain)
    } else {
        Since::Behind(Behind {
            reached: tip,
            head: head.clone(),
            unchained: remaining.len(),
        })
    }
}

#[cfg(test)]
mod tests;
