//! Unauthorized push: a commit on the default branch that did not come through a
//! sanctioned path.
//!
//! Who put a commit there is read from GitHub's activity log of the branch: the update
//! that landed it (a push, a force push, a pull request's merge) names its actor and
//! GitHub's time. The commit's own author, committer and dates are written by whoever
//! made the commit and prove nothing: an agent can commit as the owner, or as mp's App.
//!
//! A commit is sanctioned when mp's identity landed it (its own squash merge), when its
//! subject is a break-glass subject (the break-glass audit owns those), when an
//! allowlisted person landed it (a push, or a merge in the web interface), or when
//! GitHub's merge queue landed it (`merge_queue_merge`) as part of pull requests each
//! approved by the owner at the head the queue merged (decisions/0078). Anything else, an
//! update GitHub names no actor for included, is an unauthorized push.

use std::fmt;

use crate::branch::break_glass::is_break_glass;
use crate::branch::incident::IncidentLabel;
use crate::context::{CommitContext, RefUpdate, RefUpdateKind};
use crate::ids::{CommitSha, Login, PrNumber, Timestamp};

/// GitHub's activity type of a branch moved by its merge queue.
pub const MERGE_QUEUE_MERGE: &str = "merge_queue_merge";

/// A pull request that GitHub's merge queue landed, as GitHub's records show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueLanded {
    /// The pull request.
    pub pr: PrNumber,
    /// Its head when it merged: what the queue landed.
    pub head: CommitSha,
}

/// What the supervisor learnt of an update GitHub's merge queue made: the pull requests
/// it landed, each approved by the owner at the head it landed, or why not.
pub type QueueLanding = Result<Vec<QueueLanded>, String>;

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
    /// GitHub's merge queue landed it, with pull requests the owner approved at the heads
    /// it landed (decisions/0078).
    GitHubQueue {
        /// The pull requests the update landed, and their heads.
        landed: Vec<QueueLanded>,
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
        /// Why a merge queue's landing is not sanctioned (`None`: not a queue's landing).
        queue: Option<String>,
    },
}

impl PushVerdict {
    /// Stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::BotCommit => "push_by_bot",
            Self::BreakGlass => "push_break_glass",
            Self::AllowlistedPusher { .. } => "push_by_allowlisted",
            Self::GitHubQueue { .. } => "push_by_github_queue",
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
            queue,
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
        let queue = queue
            .as_ref()
            .map(|why| format!("- GitHub's merge queue: {why}\n"))
            .unwrap_or_default();
        Some(format!(
            "Commit `{short}` reached the default branch outside the merge gate.\n\n\
             - landed by: `{pusher}` ({kind}{at}, GitHub's activity log)\n\
             {queue}\
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
            Self::GitHubQueue { landed } => {
                f.write_str("landed by GitHub's merge queue: ")?;
                let prs: Vec<String> = landed
                    .iter()
                    .map(|l| format!("#{} at its approved head {}", l.pr, l.head.short()))
                    .collect();
                f.write_str(&prs.join(", "))
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
            queue: None,
        },
    }
}

/// Whether `landing` is an update GitHub's merge queue made.
pub fn is_queue_landing(landing: &RefUpdate) -> bool {
    landing.kind == RefUpdateKind::Other(MERGE_QUEUE_MERGE.to_owned())
}

/// [`check_push`] for a commit of an update GitHub's merge queue made, given what its
/// pull requests' records show (`queue`): sanctioned when the queue landed only pull
/// requests the owner approved at the heads it landed; otherwise judged as any update,
/// and an unauthorized push says why the queue's landing is not sanctioned.
pub fn check_queue_push(
    commit: &CommitContext,
    landing: &RefUpdate,
    queue: &QueueLanding,
    bot: &Login,
    allowlist: &[Login],
) -> PushVerdict {
    match queue {
        Ok(landed) if is_queue_landing(landing) && !landed.is_empty() => PushVerdict::GitHubQueue {
            landed: landed.clone(),
        },
        _ => match check_push(commit, landing, bot, allowlist) {
            PushVerdict::Unauthorized {
                sha,
                pusher,
                kind,
                at,
                claimed_committer,
                subject,
                ..
            } => PushVerdict::Unauthorized {
                sha,
                pusher,
                kind,
                at,
                claimed_committer,
                subject,
                queue: queue.as_ref().err().cloned(),
            },
            other => other,
        },
    }
}

#[cfg(test)]
mod tests;
