//! Owner signals on a decision inbox issue: 👍/👎 reactions and `/approve A|B|C`,
//! `/reject` comments of allowlisted actors, reduced to the one verdict that counts
//! (bot.md §10.2 step 2).
//!
//! A 👍 reaction approves option A and a 👎 rejects; other emoji are ignored. A comment
//! counts when one of its plain-text lines is `/reject` (which wins inside that comment)
//! or `/approve A`, `/approve B` or `/approve C`, in any letter case and with surrounding
//! blanks; a line inside code, a block quote or an HTML comment is not plain text
//! ([`plain_lines`]). The latest signal by creation time wins; at the same time a comment
//! beats a reaction. Actors outside the allowlist are ignored, and so are the ballot's
//! checkboxes.
//!
//! A comment that was edited after it was written (GitHub's `updated_at` later than its
//! `created_at`) never counts: anyone with write access can edit anyone's comment, so an
//! edited command may not be the owner's words. The owner posts a new comment instead.

use std::fmt;
use std::sync::LazyLock;

use regex::Regex;

use crate::context::{Comment, CommentId, Reaction, ReactionKind};
use crate::ids::{Login, Timestamp};

use super::commands::plain_lines;

/// A `/reject` line.
static REJECT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^\s*/reject\s*$").expect("the /reject pattern is a valid regex")
});

/// An `/approve A|B|C` line; the option letter is captured.
static APPROVE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^\s*/approve\s+([ABC])\s*$").expect("the /approve pattern is a valid regex")
});

/// What the owner chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OwnerChoice {
    /// 👍 or `/approve A`: approve option A.
    ApproveA,
    /// `/approve B`: approve the alternate option B.
    ApproveB,
    /// `/approve C`: defer, more information needed; never merges.
    Defer,
    /// 👎 or `/reject`: close the pull request.
    Reject,
}

impl OwnerChoice {
    /// Stable machine-readable code.
    pub fn code(self) -> &'static str {
        match self {
            Self::ApproveA => "approve_a",
            Self::ApproveB => "approve_b",
            Self::Defer => "defer",
            Self::Reject => "reject",
        }
    }
}

impl fmt::Display for OwnerChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::ApproveA => "approve option A",
            Self::ApproveB => "approve option B",
            Self::Defer => "defer (option C)",
            Self::Reject => "reject",
        })
    }
}

/// Where a signal came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignalSource {
    /// A reaction on the issue.
    Reaction,
    /// A comment on the issue.
    Comment {
        /// The comment.
        id: CommentId,
    },
}

impl fmt::Display for SignalSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Reaction => f.write_str("reaction"),
            Self::Comment { id } => write!(f, "comment {}", id.get()),
        }
    }
}

/// The owner's verdict on an inbox issue: the latest allowlisted signal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnerVerdict {
    /// What was chosen.
    pub choice: OwnerChoice,
    /// The allowlisted actor who chose it.
    pub actor: Login,
    /// When, as GitHub recorded it (`None` when missing or unparseable).
    pub at: Option<Timestamp>,
    /// The reaction or comment carrying it.
    pub source: SignalSource,
}

impl fmt::Display for OwnerVerdict {
    /// `approve option A by alice (comment 1002 at 2026-03-01T12:00:00Z)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} by {} ({}", self.choice, self.actor, self.source)?;
        match self.at {
            Some(at) => write!(f, " at {at})"),
            None => f.write_str(", time unknown)"),
        }
    }
}

/// The choice a comment body expresses, if any: among its plain-text lines
/// ([`plain_lines`]), a `/reject` line wins over any `/approve` line; otherwise the first
/// `/approve A|B|C` line counts.
pub fn comment_choice(body: &str) -> Option<OwnerChoice> {
    let lines = plain_lines(body);
    if lines.iter().any(|line| REJECT.is_match(line)) {
        return Some(OwnerChoice::Reject);
    }
    let letter = lines
        .iter()
        .find_map(|line| APPROVE.captures(line))?
        .get(1)?
        .as_str();
    match letter.to_ascii_uppercase().as_str() {
        "A" => Some(OwnerChoice::ApproveA),
        "B" => Some(OwnerChoice::ApproveB),
        "C" => Some(OwnerChoice::Defer),
        _ => None,
    }
}

/// The choice a reaction expresses: 👍 approves option A, 👎 rejects, others say nothing.
pub fn reaction_choice(kind: &ReactionKind) -> Option<OwnerChoice> {
    match kind {
        ReactionKind::ThumbsUp => Some(OwnerChoice::ApproveA),
        ReactionKind::ThumbsDown => Some(OwnerChoice::Reject),
        ReactionKind::Other(_) => None,
    }
}

/// The comments written by an allowlisted actor that carry a command but were edited after
/// they were written: [`parse_signals`] ignores them, and the tick says so.
pub fn edited_commands<'a>(comments: &'a [Comment], allowlist: &[Login]) -> Vec<&'a Comment> {
    comments
        .iter()
        .filter(|c| c.is_edited())
        .filter(|c| c.author.as_ref().is_some_and(|a| allowlist.contains(a)))
        .filter(|c| comment_choice(&c.body).is_some())
        .collect()
}

/// The owner's verdict from an inbox issue's comments and reactions, or `None` when no
/// allowlisted actor expressed one. Edited comments are left out.
///
/// The signal with the latest creation time wins (a missing time is older than any
/// time); at equal times a comment beats a reaction, and a later item of the same kind
/// beats an earlier one.
pub fn parse_signals(
    comments: &[Comment],
    reactions: &[Reaction],
    allowlist: &[Login],
) -> Option<OwnerVerdict> {
    let from_reactions = reactions.iter().filter_map(|reaction| {
        let choice = reaction_choice(&reaction.kind)?;
        allowlist.contains(&reaction.user).then(|| OwnerVerdict {
            choice,
            actor: reaction.user.clone(),
            at: reaction.created_at,
            source: SignalSource::Reaction,
        })
    });
    let from_comments = comments
        .iter()
        .filter(|c| !c.is_edited())
        .filter_map(|comment| {
            let actor = comment.author.as_ref().filter(|a| allowlist.contains(a))?;
            let choice = comment_choice(&comment.body)?;
            Some(OwnerVerdict {
                choice,
                actor: actor.clone(),
                at: comment.created_at,
                source: SignalSource::Comment { id: comment.id },
            })
        });
    // Reactions come first, so at equal keys the later position (a comment) wins.
    from_reactions
        .chain(from_comments)
        .enumerate()
        .max_by_key(|(position, verdict)| {
            let is_comment = matches!(verdict.source, SignalSource::Comment { .. });
            (verdict.at, is_comment, *position)
        })
        .map(|(_, verdict)| verdict)
}

#[cfg(test)]
mod tests;
