//! Unauthorized push: a commit on `main` that did not come through a sanctioned path.
//!
//! A commit is sanctioned when the bot committed it (its own squash merge), when its
//! subject is a break-glass subject (the break-glass audit owns those), or when its
//! committer is on the owner allowlist. Anything else, an unknown committer included, is an
//! unauthorized push. Because a merge made in the web interface lands with a platform
//! committer, the tick then looks up who really merged the commit and drops the incident
//! when that person is allowlisted; a failed lookup keeps it.

use std::fmt;

use crate::branch::break_glass::is_break_glass;
use crate::branch::incident::IncidentLabel;
use crate::context::CommitContext;
use crate::ids::{CommitSha, Login};

/// Whether one commit on `main` was a sanctioned write.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PushVerdict {
    /// The bot committed it.
    BotCommit,
    /// A break-glass commit, left to the break-glass audit.
    BreakGlass,
    /// The committer is allowlisted.
    AllowlistedCommitter {
        /// The committer.
        committer: Login,
    },
    /// None of the above: an unauthorized push.
    Unauthorized {
        /// The commit.
        sha: CommitSha,
        /// The committer (`None` when GitHub links no account).
        committer: Option<Login>,
        /// The commit subject.
        subject: String,
    },
}

impl PushVerdict {
    /// Stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::BotCommit => "push_by_bot",
            Self::BreakGlass => "push_break_glass",
            Self::AllowlistedCommitter { .. } => "push_by_allowlisted",
            Self::Unauthorized { .. } => "unauthorized_push",
        }
    }

    /// The incident this verdict raises, if any.
    pub fn incident(&self) -> Option<IncidentLabel> {
        matches!(self, Self::Unauthorized { .. }).then_some(IncidentLabel::UnauthorizedPush)
    }

    /// The Markdown body of the incident, when the verdict raises one.
    pub fn incident_body(&self, bot: &Login, allowlist: &[Login]) -> Option<String> {
        let Self::Unauthorized {
            sha,
            committer,
            subject,
        } = self
        else {
            return None;
        };
        let list = if allowlist.is_empty() {
            "(none)".to_owned()
        } else {
            allowlist
                .iter()
                .map(Login::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        };
        Some(format!(
            "Commit `{short}` reached `main` outside the merge gate.\n\n\
             - committer: `{committer}`\n\
             - subject: {subject:?}\n\n\
             The bot (`{bot}`) did not commit it, its subject is not a `[break-glass-*]` \
             subject, and the committer is not an allowlisted actor ({list}).\n\n\
             Check that this write was intended. A real emergency should use the \
             break-glass flow: a `[break-glass-*]` subject and an ADR within the deadline.",
            short = sha.short(),
            committer = committer_text(committer.as_ref()),
            subject = truncate(subject, 80),
        ))
    }
}

fn truncate(text: &str, max: usize) -> &str {
    text.char_indices()
        .nth(max)
        .map_or(text, |(at, _)| &text[..at])
}

fn committer_text(committer: Option<&Login>) -> &str {
    committer.map_or("unknown", Login::as_str)
}

impl fmt::Display for PushVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BotCommit => f.write_str("committed by the bot"),
            Self::BreakGlass => f.write_str("break-glass commit, audited separately"),
            Self::AllowlistedCommitter { committer } => {
                write!(f, "committed by allowlisted actor '{committer}'")
            }
            Self::Unauthorized { sha, committer, .. } => write!(
                f,
                "commit {} by committer '{}' reached main outside the gate",
                sha.short(),
                committer_text(committer.as_ref())
            ),
        }
    }
}

/// Classifies one commit on `main` as a sanctioned or an unauthorized write.
pub fn check_push(commit: &CommitContext, bot: &Login, allowlist: &[Login]) -> PushVerdict {
    let committer = commit.committer_login.as_ref();
    if committer == Some(bot) {
        return PushVerdict::BotCommit;
    }
    if is_break_glass(&commit.subject) {
        return PushVerdict::BreakGlass;
    }
    match committer {
        Some(login) if allowlist.contains(login) => PushVerdict::AllowlistedCommitter {
            committer: login.clone(),
        },
        _ => PushVerdict::Unauthorized {
            sha: commit.sha.clone(),
            committer: committer.cloned(),
            subject: commit.subject.clone(),
        },
    }
}

/// What the lookup of the pull request that merged a commit found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeActorLookup {
    /// The merging pull request names this actor (`merged_by`).
    Found(Login),
    /// No merging pull request or no `merged_by`.
    NotFound,
    /// The lookup failed; the text says why.
    Failed(String),
}

/// Whether an unauthorized-push incident is dropped after looking up the true merge actor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Suppression {
    /// Drop the incident: an allowlisted person merged the commit.
    Suppress {
        /// The allowlisted merge actor.
        merged_by: Login,
    },
    /// Keep the incident.
    Keep(KeepReason),
}

/// Why an unauthorized-push incident is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeepReason {
    /// The allowlist is empty, so no merge actor can vouch for the commit.
    EmptyAllowlist,
    /// No merge actor was found for the commit.
    NoMergeActor,
    /// The merge actor is not allowlisted.
    NotAllowlisted {
        /// The merge actor.
        merged_by: Login,
    },
    /// The lookup failed: fail closed.
    LookupFailed {
        /// Why it failed.
        error: String,
    },
}

impl Suppression {
    /// Stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Suppress { .. } => "suppress_allowlisted_merger",
            Self::Keep(KeepReason::EmptyAllowlist) => "keep_empty_allowlist",
            Self::Keep(KeepReason::NoMergeActor) => "keep_no_merge_actor",
            Self::Keep(KeepReason::NotAllowlisted { .. }) => "keep_merger_not_allowlisted",
            Self::Keep(KeepReason::LookupFailed { .. }) => "keep_lookup_failed",
        }
    }

    /// Whether the incident stays.
    pub fn keeps(&self) -> bool {
        matches!(self, Self::Keep(_))
    }
}

impl fmt::Display for Suppression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Suppress { merged_by } => {
                write!(f, "dropped: merged by allowlisted actor '{merged_by}'")
            }
            Self::Keep(KeepReason::EmptyAllowlist) => f.write_str("kept: the allowlist is empty"),
            Self::Keep(KeepReason::NoMergeActor) => f.write_str("kept: no merge actor found"),
            Self::Keep(KeepReason::NotAllowlisted { merged_by }) => {
                write!(f, "kept: merge actor '{merged_by}' is not allowlisted")
            }
            Self::Keep(KeepReason::LookupFailed { error }) => {
                write!(f, "kept: merge actor lookup failed: {error}")
            }
        }
    }
}

/// Decides whether an unauthorized-push incident is dropped, given the merge actor found
/// for the commit. Only an allowlisted merge actor drops it.
pub fn suppression(lookup: &MergeActorLookup, allowlist: &[Login]) -> Suppression {
    if allowlist.is_empty() {
        return Suppression::Keep(KeepReason::EmptyAllowlist);
    }
    match lookup {
        MergeActorLookup::Found(actor) if allowlist.contains(actor) => Suppression::Suppress {
            merged_by: actor.clone(),
        },
        MergeActorLookup::Found(actor) => Suppression::Keep(KeepReason::NotAllowlisted {
            merged_by: actor.clone(),
        }),
        MergeActorLookup::NotFound => Suppression::Keep(KeepReason::NoMergeActor),
        MergeActorLookup::Failed(error) => Suppression::Keep(KeepReason::LookupFailed {
            error: error.clone(),
        }),
    }
}

#[cfg(test)]
mod tests;
