//! The owner's revocation of an inbox approval, and why it is final for its head.
//!
//! An approval from the inbox is the label `decision:approved-A` (or `-B`) the bot puts on
//! the pull request, with its receipt bound to the head the question named. The owner
//! revokes it by removing that label. Nothing else records the revocation, so a question
//! reopened afterwards (anyone with write access can reopen an issue) would otherwise
//! find the owner's old `/approve A` and apply it again.
//!
//! The rule: once an allowlisted actor removed an approval label whose latest receipt
//! before the removal is bound to head H, no owner signal made at or before that removal
//! counts for a question about H; only a signal made after it does. A removal whose time
//! GitHub does not give voids every earlier signal, and so does one for which no receipt of
//! the bot names a head (fail closed: it may have been this head's).

use std::fmt;

use crate::approval::receipt::{HEAD_MARKER, LABEL_MARKER, marker_value};
use crate::approval::{APPROVED_A, APPROVED_B};
use crate::context::{Comment, LabelAction, LabelEvent};
use crate::ids::{CommitSha, Login, Timestamp};

/// The latest owner revocation of an approval of one head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revocation {
    /// The allowlisted actor who removed the approval label.
    pub actor: Login,
    /// The approval label removed.
    pub label: String,
    /// When, as GitHub recorded it (`None`: unknown, so every signal is older).
    pub at: Option<Timestamp>,
}

impl Revocation {
    /// Whether a signal made at `signal` is older than the revocation (and so void).
    pub fn voids(&self, signal: Option<Timestamp>) -> bool {
        match (self.at, signal) {
            (Some(revoked), Some(signal)) => signal <= revoked,
            _ => true,
        }
    }
}

impl fmt::Display for Revocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} removed '{}'", self.actor, self.label)?;
        match self.at {
            Some(at) => write!(f, " at {at}"),
            None => f.write_str(" at an unknown time"),
        }
    }
}

/// The latest revocation by an allowlisted actor of an approval of `head` on a pull
/// request, from its timeline `events` and its `comments` (the bot's receipts say which
/// head each approval was bound to).
pub fn latest_revocation(
    events: &[LabelEvent],
    comments: &[Comment],
    head: &CommitSha,
    allowlist: &[Login],
    bot: &Login,
) -> Option<Revocation> {
    events
        .iter()
        .filter(|e| e.action == LabelAction::Unlabeled)
        .filter(|e| e.label == APPROVED_A || e.label == APPROVED_B)
        .filter_map(|e| {
            let actor = e.actor.as_ref().filter(|a| allowlist.contains(a))?;
            let revoked = revoked_head(comments, &e.label, e.at, bot);
            revoked
                .is_none_or(|revoked| revoked == head.as_str())
                .then(|| Revocation {
                    actor: actor.clone(),
                    label: e.label.clone(),
                    at: e.at,
                })
        })
        // An unknown time sorts last: it voids everything.
        .max_by_key(|r| (r.at.is_none(), r.at))
}

/// The head named by the bot's latest receipt for `label` written at or before `at`
/// (any time when `at` is unknown), if any.
fn revoked_head<'a>(
    comments: &'a [Comment],
    label: &str,
    at: Option<Timestamp>,
    bot: &Login,
) -> Option<&'a str> {
    comments
        .iter()
        .rev()
        .filter(|c| c.author.as_ref() == Some(bot))
        .filter(|c| match (at, c.created_at) {
            (Some(at), Some(written)) => written <= at,
            (None, _) => true,
            (Some(_), None) => false,
        })
        .filter(|c| marker_value(&c.body, LABEL_MARKER) == Some(label))
        .find_map(|c| marker_value(&c.body, HEAD_MARKER))
}

#[cfg(test)]
mod tests;
