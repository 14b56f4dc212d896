//! Unauthorized push: a commit on the default branch that did not come through a
//! sanctioned path.
//!
//! Who put a commit there is read from GitHub's activity log of the branch: the update
//! that landed it (a push, a force push, a pull request's merge) names its actor and
//! GitHub's time. The commit's own author, committer and dates are written by whoever
//! made the commit and prove nothing: an agent can commit as the owner, or as mp's App.
//!
//! A commit is sanctioned when mp's identity landed it (its own squash merge), when its
//! subject is a break-glass subject (the break-glass audit owns those), or when an
//! allowlisted person landed it (a push, or a merge in the web interface). Anything else,
//! an update GitHub names no actor for included, is an unauthorized push.

use std::fmt;

use crate::branch::break_glass::is_break_glass;
use crate::branch::incident::IncidentLabel;
use crate::context::{CommitContext, RefUpdate};
use crate::ids::{CommitSha, Login, Timestamp};

/// Whether one commit on the default branch was a sanctioned write.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PushVerdict {
    /// mp's identity landed it.
    BotCommit,
    /// A break-glass commit, left to the break-glass audit.
    BreakGlass,
    /// An allowlisted person landed it.
    AllowlistedPusher {
        /// Who landed it.
        pusher: Login,
    },
    /// None of the above: an unauthorized push.
    Unauthorized {
        /// The commit.
        sha: CommitSha,
        /// Who landed it, as GitHub's activity log names them (`None`: it names no one).
        pusher: Option<Login>,
        /// GitHub's `activity_type` of the update, e.g. `push` or `pr_merge`.
        kind: String,
        /// GitHub's time of the update.
        at: Option<Timestamp>,
        /// The committer the commit claims (not evidence; shown to the reader).
        claimed_committer: Option<Login>,
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
            Self::AllowlistedPusher { .. } => "push_by_allowlisted",
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
            pusher,
            kind,
            at,
            claimed_committer,
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
            "Commit `{short}` reached the default branch outside the merge gate.\n\n\
             - landed by: `{pusher}` ({kind}{at}, GitHub's activity log)\n\
             - committer the commit claims: `{claimed}` (not evidence)\n\
             - subject: {subject:?}\n\n\
             mp (`{bot}`) did not land it, its subject is not a `[break-glass-*]` subject, \
             and who landed it is not an allowlisted actor ({list}).\n\n\
             Check that this write was intended. A real emergency should use the \
             break-glass flow: a `[break-glass-*]` subject and an ADR within the deadline.",
            short = sha.short(),
            pusher = login_text(pusher.as_ref()),
            at = at.map(|at| format!(" at {at}")).unwrap_or_default(),
            claimed = login_text(claimed_committer.as_ref()),
            subject = truncate(subject, 80),
        ))
    }
}

fn truncate(text: &str, max: usize) -> &str {
    text.char_indices()
        .nth(max)
        .map_or(text, |(at, _)| &text[..at])
}

fn login_text(login: Option<&Login>) -> &str {
    login.map_or("unknown", Login::as_str)
}

impl fmt::Display for PushVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BotCommit => f.write_str("landed by mp"),
            Self::BreakGlass => f.write_str("break-glass commit, audited separately"),
            Self::AllowlistedPusher { pusher } => {
                write!(f, "landed by allowlisted actor '{pusher}'")
            }
            Self::Unauthorized {
                sha, pusher, kind, ..
            } => write!(
                f,
                "commit {} landed by '{}' ({kind}) outside the gate",
                sha.short(),
                login_text(pusher.as_ref())
            ),
        }
    }
}

/// Classifies one commit on the default branch from the update that landed it.
pub fn check_push(
    commit: &CommitContext,
    landing: &RefUpdate,
    bot: &Login,
    allowlist: &[Login],
) -> PushVerdict {
    let pusher = landing.actor.as_ref();
    if pusher == Some(bot) {
        return PushVerdict::BotCommit;
    }
    if is_break_glass(&commit.subject) {
        return PushVerdict::BreakGlass;
    }
    match pusher {
        Some(login) if allowlist.contains(login) => PushVerdict::AllowlistedPusher {
            pusher: login.clone(),
        },
        _ => PushVerdict::Unauthorized {
            sha: commit.sha.clone(),
            pusher: pusher.cloned(),
            kind: landing.kind.as_github().to_owned(),
            at: landing.at,
            claimed_committer: commit.committer_login.clone(),
            subject: commit.subject.clone(),
        },
    }
}

#[cfg(test)]
mod tests;
