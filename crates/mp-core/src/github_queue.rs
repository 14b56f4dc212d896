//! GitHub's own merge queue (`merge.mode: github-queue`, decisions/0074): whether a branch's
//! rules put it behind one, and what becomes of a pull request that passed the gate there.
//!
//! GitHub lists the rules of the active rulesets that apply to a branch
//! (`GET /repos/{owner}/{repo}/rules/branches/{branch}`); a rule of type `merge_queue`
//! means "merges must be performed via a merge queue", and the merge API then refuses a
//! direct merge. `mp doctor` and the tick ask [`protected_by_merge_queue`], the one
//! predicate, of the rule types they read.

#[cfg(test)]
mod tests;

use std::fmt;

use crate::ids::{CommitSha, Login};

/// The rule type of GitHub's rulesets that puts a branch behind a merge queue.
pub const MERGE_QUEUE_RULE: &str = "merge_queue";

/// Whether `rules`, the rule types GitHub lists for a branch, include a merge queue.
pub fn protected_by_merge_queue(rules: &[String]) -> bool {
    rules.iter().any(|rule| rule == MERGE_QUEUE_RULE)
}

/// What the tick does, in `github-queue` mode, with a pull request whose gate passed:
/// enqueue it, pinned to the approved head, or nothing when no queue protects the branch.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GitHubQueueStep {
    /// The branch has a merge queue: mp enqueues this head, bound to the approval.
    WouldEnqueue {
        /// The gated branch.
        branch: String,
        /// The head the gate passed on (`expectedHeadOid` once mp enqueues).
        head: CommitSha,
    },
    /// No merge queue protects the branch: mp neither merges (the mode says GitHub's
    /// queue lands this repository) nor enqueues.
    NoQueue {
        /// The gated branch.
        branch: String,
    },
}

impl GitHubQueueStep {
    /// The step for a pull request at `head` whose gate passed, given the rule types GitHub
    /// lists for the gated `branch`.
    pub fn decide(rules: &[String], branch: &str, head: &CommitSha) -> Self {
        if protected_by_merge_queue(rules) {
            Self::WouldEnqueue {
                branch: branch.to_owned(),
                head: head.clone(),
            }
        } else {
            Self::NoQueue {
                branch: branch.to_owned(),
            }
        }
    }

    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::WouldEnqueue { .. } => "github_queue_would_enqueue",
            Self::NoQueue { .. } => "github_queue_missing",
        }
    }
}

impl fmt::Display for GitHubQueueStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::WouldEnqueue { branch, head } => write!(
                f,
                "would enqueue head {} in GitHub's merge queue of {branch}",
                head.short()
            ),
            Self::NoQueue { branch } => write!(
                f,
                "merge.mode is github-queue but no merge queue protects {branch}: mp neither merges nor enqueues; add a ruleset with the merge_queue rule, or change merge.mode"
            ),
        }
    }
}

/// What became of a pull request in GitHub's merge queue this tick (decisions/0078): each
/// with a stable code and one line.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GitHubQueueOutcome {
    /// Enqueued, pinned to the head the owner's approval is bound to.
    Enqueued {
        /// The gated branch.
        branch: String,
        /// The approved head (`expectedHeadOid`).
        head: CommitSha,
        /// Its position, as GitHub answered (0: not known, a dry run).
        position: u32,
    },
    /// Already in the queue at the approved head: left alone.
    AlreadyQueued {
        /// The gated branch.
        branch: String,
        /// The approved head, which the entry carries.
        head: CommitSha,
        /// Its position.
        position: u32,
    },
    /// GitHub refused the enqueue because the head is no longer the approved one; nothing
    /// was enqueued.
    HeadMoved {
        /// The approved head mp pinned the enqueue to.
        head: CommitSha,
    },
    /// GitHub's queue refused the enqueue for another reason, in its words.
    Refused {
        /// GitHub's words.
        message: String,
    },
    /// Removed from the queue: a condition of the gate stopped holding, or the entry's
    /// head is not the one the owner approved.
    Dequeued {
        /// The head the entry carried.
        entry_head: CommitSha,
        /// Who enqueued it, as GitHub says (`None`: GitHub did not say).
        enqueuer: Option<Login>,
        /// Why, one line (the gate's blocking reasons, or the head mismatch).
        why: String,
    },
    /// Not enqueued again: GitHub's queue (or another App) removed the pull request at this
    /// very head, and it stays out until its head changes or someone enqueues it
    /// (decisions/0085).
    HeldAfterRemoval {
        /// The head it was removed at, which is still its head.
        head: CommitSha,
        /// Who removed it, when GitHub says.
        actor: Option<Login>,
        /// Why, in GitHub's words, when it says.
        reason: Option<String>,
    },
    /// mp published its check ([`GATE_CHECK`]) on the head of the merge group GitHub's
    /// queue made for this pull request (decisions/0084).
    GroupChecked {
        /// The group's branch (`gh-readonly-queue/<base>/pr-<N>-<sha>`).
        group: String,
        /// The group's head, which the check reports on.
        head: CommitSha,
        /// Whether the check passed.
        passes: bool,
        /// The check's title (which pull requests the gate refuses, or that it passes all).
        title: String,
    },
}

impl GitHubQueueOutcome {
    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Enqueued { .. } => "github_queue_enqueued",
            Self::AlreadyQueued { .. } => "github_queue_queued",
            Self::HeadMoved { .. } => "github_queue_head_moved",
            Self::Refused { .. } => "github_queue_refused",
            Self::Dequeued { .. } => "github_queue_dequeued",
            Self::HeldAfterRemoval { .. } => "github_queue_held",
            Self::GroupChecked { passes: true, .. } => "github_queue_group_passed",
            Self::GroupChecked { passes: false, .. } => "github_queue_group_failed",
        }
    }
}

impl fmt::Display for GitHubQueueOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Enqueued {
                branch,
                head,
                position,
            } => {
                write!(
                    f,
                    "enqueued head {} in GitHub's merge queue of {branch}",
                    head.short()
                )?;
                if *position > 0 {
                    write!(f, " at position {position}")?;
                }
                Ok(())
            }
            Self::AlreadyQueued {
                branch,
                head,
                position,
            } => write!(
                f,
                "in GitHub's merge queue of {branch} at position {position} with the approved head {}; left alone",
                head.short()
            ),
            Self::HeadMoved { head } => write!(
                f,
                "GitHub's merge queue refused head {}: the pull request's head moved; nothing enqueued",
                head.short()
            ),
            Self::Refused { message } => {
                write!(
                    f,
                    "GitHub's merge queue refused the pull request: {message}"
                )
            }
            Self::Dequeued {
                entry_head,
                enqueuer,
                why,
            } => {
                write!(
                    f,
                    "dequeued from GitHub's merge queue (entry at head {}",
                    entry_head.short()
                )?;
                if let Some(enqueuer) = enqueuer {
                    write!(f, ", enqueued by {enqueuer}")?;
                }
                write!(f, "): {why}")
            }
            Self::HeldAfterRemoval {
                head,
                actor,
                reason,
            } => {
                write!(
                    f,
                    "not enqueued again: GitHub's merge queue removed head {}",
                    head.short()
                )?;
                if let Some(actor) = actor {
                    write!(f, " (by {actor})")?;
                }
                if let Some(reason) = reason {
                    write!(f, ": {reason}")?;
                }
                write!(
                    f,
                    "; it waits for a new head, or for someone to enqueue it again"
                )
            }
            Self::GroupChecked {
                group,
                head,
                passes,
                title,
            } => write!(
                f,
                "check '{GATE_CHECK}' {} on merge group {group} (head {}): {title}",
                if *passes { "passed" } else { "failed" },
                head.short()
            ),
        }
    }
}

/// Whether a pull request whose last removal from GitHub's merge queue was at `head`, by
/// `actor`, stays out of the queue rather than being enqueued again at the same head
/// (decisions/0085): a removal by GitHub's queue itself (no actor, or an App's bot that is
/// not mp's) holds; mp's own dequeue and a person's do not (mp dequeues for reasons the
/// gate re-checks; a person's dequeue is no verdict on the head).
pub fn held_after_removal(
    removed_head: Option<&CommitSha>,
    actor: Option<&Login>,
    head: &CommitSha,
    bot: &Login,
) -> bool {
    if removed_head != Some(head) {
        return false;
    }
    match actor {
        None => true,
        Some(actor) => actor != bot && actor.as_str().ends_with("[bot]"),
    }
}

/// Why a queued pull request must leave GitHub's merge queue, or `None` when it may stay.
/// `current_head` is the head the gate judged; `blocking` says why the gate refuses it
/// (`None`: it passes, or waits only for checks on a head the owner approved). An entry at
/// any other head leaves whatever the gate says: the queue would land a head the owner did
/// not approve.
pub fn dequeue_reason(
    entry_head: &CommitSha,
    current_head: &CommitSha,
    blocking: Option<&str>,
) -> Option<String> {
    if entry_head != current_head {
        return Some(format!(
            "the entry's head is not the pull request's head {} that the gate judged",
            current_head.short()
        ));
    }
    blocking.map(str::to_owned)
}

/// The name of the check run mp publishes on a merge group's head: its gate's verdict on
/// every pull request the group holds (decisions/0084). A ruleset that requires it must
/// pin it to mp's App, or any App could report it.
pub const GATE_CHECK: &str = "mp-gate";

/// The prefix of the branches GitHub's merge queue makes for its merge groups of `base`
/// (`gh-readonly-queue/<base>/`).
pub fn merge_group_prefix(base: &str) -> String {
    format!("gh-readonly-queue/{base}/")
}

/// The pull request a merge group's branch was made for, from its name
/// (`gh-readonly-queue/<base>/pr-<N>-<sha>`, with or without `refs/heads/`): GitHub's
/// naming, not evidence, only where to look. `None` for a branch of another base or
/// another shape.
pub fn merge_group_pull(branch: &str, base: &str) -> Option<crate::ids::PrNumber> {
    let branch = branch.strip_prefix("refs/heads/").unwrap_or(branch);
    let name = branch.strip_prefix(&merge_group_prefix(base))?;
    let digits = name.strip_prefix("pr-")?.split('-').next()?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().map(crate::ids::PrNumber::new)
}

/// mp's verdict, this pass, on one pull request a merge group holds (decisions/0084).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupMember {
    /// Its gate passed (C4 aside) and its entry is at the head the gate judged, which the
    /// owner's approval binds.
    Passes {
        /// The pull request.
        number: crate::ids::PrNumber,
        /// The head the group brings.
        head: CommitSha,
    },
    /// The gate refuses it, or its entry is at another head.
    Refused {
        /// The pull request.
        number: crate::ids::PrNumber,
        /// Why, in the gate's words.
        why: String,
    },
    /// Not judged in this pass (not evaluated, or not in the queue any more): the group
    /// waits for a pass that judges it.
    Unjudged {
        /// The pull request.
        number: crate::ids::PrNumber,
    },
}

/// The check run mp publishes on a merge group's head: passes only when the gate passes
/// every pull request the group holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupVerdict {
    /// Whether the group may land.
    pub passes: bool,
    /// The check's title: one line.
    pub title: String,
    /// The check's summary: one line per pull request, with its reason.
    pub summary: String,
}

/// mp's verdict on a merge group from its members' verdicts, front first; `None` while any
/// is unjudged (mp publishes nothing, and the queue waits for the check), or for a group
/// with no members.
pub fn judge_group(members: &[GroupMember]) -> Option<GroupVerdict> {
    if members.is_empty()
        || members
            .iter()
            .any(|m| matches!(m, GroupMember::Unjudged { .. }))
    {
        return None;
    }
    let refused: Vec<&GroupMember> = members
        .iter()
        .filter(|m| matches!(m, GroupMember::Refused { .. }))
        .collect();
    let lines: Vec<String> = members
        .iter()
        .map(|member| match member {
            GroupMember::Passes { number, head } => {
                format!(
                    "- #{number}: the gate passes on {}, the head the owner approved",
                    head.short()
                )
            }
            GroupMember::Refused { number, why } => format!("- #{number}: refused: {why}"),
            GroupMember::Unjudged { number } => format!("- #{number}: not judged"),
        })
        .collect();
    let title = if refused.is_empty() {
        format!(
            "the gate passes all {} pull request(s) of the group",
            members.len()
        )
    } else {
        let numbers: Vec<String> = refused
            .iter()
            .filter_map(|m| match m {
                GroupMember::Refused { number, .. } => Some(format!("#{number}")),
                _ => None,
            })
            .collect();
        format!("the gate refuses {}", numbers.join(", "))
    };
    Some(GroupVerdict {
        passes: refused.is_empty(),
        title,
        summary: lines.join("\n"),
    })
}
