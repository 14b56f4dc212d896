//! What one poll of the decision inbox did: one outcome per inbox issue, the rejections
//! (for the L4 burn-in reset), the lifecycle comments written, the counters and warnings.

use std::fmt;

use crate::approval::{ReceiptLabel, Undeterminable};
use crate::ids::{CommitSha, Login, PrNumber, RepoName, Timestamp};

use super::lifecycle::LifecycleAction;
use super::question::{IntegrityFailure, UnreadableQuestion};
use super::revocation::Revocation;

/// What the poller did with one inbox issue.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum InboxResolution {
    /// Option A or B approved: the approval label and a receipt bound to the recorded
    /// head are on the pull request, and the issue is closed.
    Approved {
        /// `decision:approved-A` or `decision:approved-B`.
        label: ReceiptLabel,
        /// Who approved.
        actor: Login,
        /// The head the approval is bound to.
        head: CommitSha,
    },
    /// Rejected: the pull request and the issue are closed.
    Rejected {
        /// Who rejected.
        actor: Login,
    },
    /// `/approve C`: `decision:deferred` written on the pull request and/or the
    /// acknowledgement posted this tick; the issue stays open.
    Deferred {
        /// Who deferred.
        actor: Login,
    },
    /// `/approve C` again, with the label and the acknowledgement already in place.
    AlreadyDeferred,
    /// The head moved: the issue got the one stale comment and `decision:stale-approval`.
    StaleHead {
        /// The head the question records.
        recorded: CommitSha,
        /// The pull request's head now.
        current: CommitSha,
    },
    /// The head moved and the issue was already marked stale: nothing written.
    StillStale {
        /// The head the question records.
        recorded: CommitSha,
        /// The pull request's head now.
        current: CommitSha,
    },
    /// The pull request merged or closed: the issue was closed with a comment.
    PrClosed {
        /// Whether it merged.
        merged: bool,
    },
    /// No allowlisted owner signal yet.
    NoVerdict,
    /// The latest owner signal was made before the owner revoked an approval of this
    /// head: it does not count again, nothing is applied.
    RevokedBefore {
        /// The revocation.
        revocation: Revocation,
        /// The head whose approval was revoked.
        head: CommitSha,
    },
    /// The body failed its integrity check: one comment and
    /// `decision:inbox-integrity-failed` written this tick.
    IntegrityFailed {
        /// Why.
        failure: IntegrityFailure,
    },
    /// The body failed its integrity check and the issue was already marked.
    StillIntegrityFailed {
        /// Why.
        failure: IntegrityFailure,
    },
    /// The body does not say which pull request and head it is about.
    Unreadable {
        /// What is missing.
        problem: UnreadableQuestion,
    },
    /// The issue was not opened by the bot user.
    NotOpenedByBot {
        /// Its author, when known.
        author: Option<Login>,
    },
    /// The bot opened the issue but did not apply `decision:pending-owner` to it (last):
    /// not a question.
    NotLabelledByBot {
        /// Who applied the label last, when GitHub names one.
        labeller: Option<Login>,
    },
    /// The bot's `decision:pending-owner` event cannot be shown to be about that label:
    /// GitHub's record shows the label renamed (or otherwise edited, or created) since,
    /// or cannot be read. Another label renamed `decision:pending-owner` (decisions/0048)
    /// makes no question.
    PendingLabelChanged {
        /// Why.
        why: Undeterminable,
    },
    /// The pull request is not in a gated repository (or outside the tick's repository
    /// filter).
    NotGated {
        /// The pull request's repository.
        repo: RepoName,
    },
    /// Processing failed this tick.
    Failed {
        /// The error.
        error: String,
        /// Consecutive failed ticks so far, for errors the poison guard counts (`None`
        /// for transient errors and when the issue's comments could not be read).
        consecutive: Option<u32>,
    },
}

impl InboxResolution {
    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Approved { .. } => "approved",
            Self::Rejected { .. } => "rejected",
            Self::Deferred { .. } => "deferred",
            Self::AlreadyDeferred => "already_deferred",
            Self::StaleHead { .. } => "stale_head",
            Self::StillStale { .. } => "still_stale",
            Self::PrClosed { .. } => "pr_closed",
            Self::NoVerdict => "no_verdict",
            Self::RevokedBefore { .. } => "revoked_before",
            Self::IntegrityFailed { .. } => "integrity_failed",
            Self::StillIntegrityFailed { .. } => "still_integrity_failed",
            Self::Unreadable { .. } => "unreadable_question",
            Self::NotOpenedByBot { .. } => "not_opened_by_bot",
            Self::NotLabelledByBot { .. } => "not_labelled_by_bot",
            Self::PendingLabelChanged { .. } => "pending_label_changed",
            Self::NotGated { .. } => "not_gated",
            Self::Failed { .. } => "failed",
        }
    }

    /// Whether the issue is still open after this resolution.
    pub fn leaves_open(&self) -> bool {
        !matches!(
            self,
            Self::Approved { .. } | Self::Rejected { .. } | Self::PrClosed { .. }
        )
    }
}

impl fmt::Display for InboxResolution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Approved { label, actor, head } => write!(
                f,
                "approved by {actor}: '{label}' and its receipt bound to head {}",
                head.short()
            ),
            Self::Rejected { actor } => {
                write!(f, "rejected by {actor}: pull request and issue closed")
            }
            Self::Deferred { actor } => write!(
                f,
                "deferred by {actor}: 'decision:deferred' on the pull request, issue left open"
            ),
            Self::AlreadyDeferred => f.write_str("deferred earlier: nothing new to write"),
            Self::StaleHead { recorded, current } => write!(
                f,
                "head moved {} -> {}: no decision applied, issue marked 'decision:stale-approval'",
                recorded.short(),
                current.short()
            ),
            Self::StillStale { recorded, current } => write!(
                f,
                "head moved {} -> {}: no decision applied (marked stale earlier)",
                recorded.short(),
                current.short()
            ),
            Self::PrClosed { merged: true } => {
                f.write_str("pull request merged: inbox issue closed")
            }
            Self::PrClosed { merged: false } => {
                f.write_str("pull request closed without merging: inbox issue closed")
            }
            Self::NoVerdict => f.write_str("no owner decision yet"),
            Self::RevokedBefore { revocation, head } => write!(
                f,
                "approval of head {} revoked ({revocation}): no signal made before it counts, nothing applied",
                head.short()
            ),
            Self::IntegrityFailed { failure } => write!(
                f,
                "integrity check failed ({failure}): issue marked 'decision:inbox-integrity-failed'"
            ),
            Self::StillIntegrityFailed { failure } => write!(
                f,
                "integrity check failed ({failure}): no decision applied (marked earlier)"
            ),
            Self::Unreadable { problem } => write!(f, "unreadable question: {problem}"),
            Self::NotOpenedByBot {
                author: Some(author),
            } => write!(f, "opened by {author}, not the bot: ignored"),
            Self::NotOpenedByBot { author: None } => {
                f.write_str("opened by an unknown author, not the bot: ignored")
            }
            Self::NotLabelledByBot { labeller: Some(by) } => write!(
                f,
                "labelled decision:pending-owner by {by}, not the bot: not a question, ignored"
            ),
            Self::NotLabelledByBot { labeller: None } => f.write_str(
                "decision:pending-owner not applied by the bot: not a question, ignored",
            ),
            Self::PendingLabelChanged { why } => write!(
                f,
                "the bot's decision:pending-owner event is not shown to be about that label ({why}): not a question, ignored"
            ),
            Self::NotGated { repo } => {
                write!(f, "{repo} is not gated this tick: ignored")
            }
            Self::Failed {
                error,
                consecutive: Some(count),
            } => write!(f, "failed ({count} consecutive): {error}"),
            Self::Failed {
                error,
                consecutive: None,
            } => write!(f, "failed (not counted): {error}"),
        }
    }
}

/// The outcome of one inbox issue in one poll.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct InboxOutcome {
    /// `owner/repo#N` of the inbox issue.
    pub issue: String,
    /// `owner/repo#N` of the pull request, when the body names one.
    pub pr: Option<String>,
    /// What happened.
    pub resolution: InboxResolution,
}

impl InboxOutcome {
    /// The outcome `resolution` of inbox issue `issue` about pull request `pr`.
    pub fn new(issue: String, pr: Option<String>, resolution: InboxResolution) -> Self {
        Self {
            issue,
            pr,
            resolution,
        }
    }
}

impl fmt::Display for InboxOutcome {
    /// `acme/governance#100 (acme/app#1) no_verdict: no owner decision yet`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.issue)?;
        if let Some(pr) = &self.pr {
            write!(f, " ({pr})")?;
        }
        write!(f, " {}: {}", self.resolution.code(), self.resolution)
    }
}

/// A Quadrant-D pull request the owner rejected through the inbox; the caller restarts
/// the L4 burn-in clock's advisory window for each one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// The pull request's repository.
    pub repo: RepoName,
    /// The pull request.
    pub number: PrNumber,
    /// The inbox issue.
    pub issue: PrNumber,
    /// Who rejected.
    pub actor: Login,
    /// When the rejecting signal was made, when known.
    pub at: Option<Timestamp>,
}

/// The inbox counters of one tick.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct InboxMetrics {
    /// Issues closed this tick because an approval (A or B) was applied or their pull
    /// request had merged or closed.
    pub inbox_resolved: u32,
    /// Issues newly marked `decision:stale-approval`.
    pub inbox_stale: u32,
    /// Pull requests newly deferred (`/approve C`).
    pub inbox_deferred: u32,
    /// Pull requests closed on the owner's rejection.
    pub inbox_rejected: u32,
    /// Issues whose processing failed this tick.
    pub inbox_errors: u32,
    /// Issues newly marked `decision:inbox-integrity-failed`.
    pub inbox_integrity_failed: u32,
    /// Lifecycle comments written or updated.
    pub inbox_lifecycle_comments: u32,
    /// Whether a rate limit ended the poll early.
    pub rate_limited: bool,
}

impl InboxMetrics {
    /// Counts one resolution.
    pub fn count(&mut self, resolution: &InboxResolution) {
        let counter = match resolution {
            InboxResolution::Approved { .. } | InboxResolution::PrClosed { .. } => {
                &mut self.inbox_resolved
            }
            InboxResolution::Rejected { .. } => &mut self.inbox_rejected,
            InboxResolution::Deferred { .. } => &mut self.inbox_deferred,
            InboxResolution::StaleHead { .. } => &mut self.inbox_stale,
            InboxResolution::IntegrityFailed { .. } => &mut self.inbox_integrity_failed,
            InboxResolution::Failed { .. } => &mut self.inbox_errors,
            _ => return,
        };
        *counter += 1;
    }

    /// The counters as a JSON object for the `tick complete` line.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "inbox_resolved": self.inbox_resolved,
            "inbox_stale": self.inbox_stale,
            "inbox_deferred": self.inbox_deferred,
            "inbox_rejected": self.inbox_rejected,
            "inbox_errors": self.inbox_errors,
            "inbox_integrity_failed": self.inbox_integrity_failed,
            "inbox_lifecycle_comments": self.inbox_lifecycle_comments,
        })
    }
}

/// Everything one poll of the decision inbox did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct InboxReport {
    /// One outcome per open `decision:pending-owner` issue, by issue number.
    pub outcomes: Vec<InboxOutcome>,
    /// The rejections applied this tick (each restarts the L4 burn-in advisory window).
    pub rejections: Vec<Rejection>,
    /// The lifecycle comments written or updated this tick.
    pub lifecycle: Vec<LifecycleAction>,
    /// The counters.
    pub metrics: InboxMetrics,
    /// Things an operator should know that concern no single issue, one line each.
    pub warnings: Vec<String>,
}

impl InboxReport {
    /// Whether the owner rejected at least one pull request this tick, so the L4 burn-in
    /// clock restarts.
    pub fn resets_burn_in(&self) -> bool {
        !self.rejections.is_empty()
    }
}
