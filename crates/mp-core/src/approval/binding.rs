//! Which head a label was applied to, proven from GitHub's server-side record of the head
//! branch's updates (the repository activity log), never from commit dates.
//!
//! A label event carries GitHub's time; each update of the head branch carries GitHub's
//! time and the tip it left. The head a pull request had when the label was applied is the
//! tip left by the last update strictly before the label event. Anything that cannot be
//! ordered (an update in the same second as the label, an update without a time, no update
//! before the label) proves nothing and fails closed.
//!
//! One kind of later update carries a label over to a new head: mp's own request to bring
//! the branch up to date with `main` (the race guard). It is recognised from the log alone:
//! a fast-forward push by mp's identity whose new tip is a merge commit with exactly two
//! parents, the first being the previous tip ([`is_mp_update`]). Any other update after the
//! label — by an agent, a force push, a commit of another shape — ends the binding, and
//! the owner re-applies the label (decisions/0026).

use std::fmt;

use crate::context::{CommitContext, HeadHistory, PrContext, RefUpdate, RefUpdateKind};
use crate::ids::{CommitSha, Login, Timestamp};

/// Proof that the label was applied to `labeled_head`, and that the current `head` is that
/// commit or mp's own branch updates of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeadAtLabel {
    /// The current head.
    pub head: CommitSha,
    /// The head when the label was applied.
    pub labeled_head: CommitSha,
    /// GitHub's time of the label event.
    pub labeled_at: Timestamp,
    /// GitHub's time of the update that left `labeled_head` as the branch tip.
    pub updated_at: Timestamp,
    /// What that update was.
    pub kind: RefUpdateKind,
    /// mp's own branch updates since the label, oldest first (the last is `head`); empty
    /// when the head has not moved.
    pub carried: Vec<CommitSha>,
}

impl fmt::Display for HeadAtLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} of {} at {} is the last head update before the label at {}",
            self.kind.as_github().replace('_', " "),
            self.labeled_head.short(),
            self.updated_at,
            self.labeled_at
        )?;
        if !self.carried.is_empty() {
            let shorts: Vec<&str> = self.carried.iter().map(CommitSha::short).collect();
            write!(
                f,
                ", carried over mp's own update{} with main ({})",
                if shorts.len() == 1 { "" } else { "s" },
                shorts.join(", ")
            )?;
        }
        f.write_str(" (GitHub activity log)")
    }
}

/// Whether `update` is mp's own bringing of the branch up to date from `tip`: a push (not
/// a force push) by `bot` from `tip` to a commit of `commits` with exactly two parents,
/// the first being `tip`. Returns the new tip.
pub fn is_mp_update(
    update: &RefUpdate,
    tip: &CommitSha,
    commits: &[CommitContext],
    bot: Option<&Login>,
) -> Option<CommitSha> {
    let bot = bot?;
    if update.kind != RefUpdateKind::Push
        || update.actor.as_ref() != Some(bot)
        || update.before.as_ref() != Some(tip)
    {
        return None;
    }
    let after = update.after.as_ref()?;
    let commit = commits.iter().find(|c| c.sha == *after)?;
    (commit.parents.len() == 2 && commit.parents[0] == *tip).then(|| after.clone())
}

/// The commits of the pull request that are mp's own branch updates ([`is_mp_update`]):
/// GitHub's merge of `main` into the branch, which carries no identity trailers. C5 does
/// not ask trailers of them, and of nothing else.
pub fn mp_update_commits(pr: &PrContext, bot: Option<&Login>) -> Vec<CommitSha> {
    let HeadHistory::Read(updates) = &pr.head_history else {
        return Vec::new();
    };
    updates
        .iter()
        .filter_map(|update| {
            let before = update.before.as_ref()?;
            is_mp_update(update, before, &pr.commits, bot)
        })
        .collect()
}

/// Why no head can be bound to a label. Every case fails closed; the owner re-applies the
/// label once the head is the one they mean.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NoHeadEvidence {
    /// The head branch's history was not read.
    HistoryNotRead,
    /// The head branch's history cannot be had.
    HistoryUnavailable {
        /// Why.
        reason: String,
    },
    /// The label event has no GitHub time.
    LabelTimeUnknown,
    /// An update of the head branch has no GitHub time, so updates cannot be ordered.
    UpdateTimeUnknown,
    /// The history holds no update of the head branch before the label event.
    NoUpdateBeforeLabel {
        /// The label event's time.
        labeled_at: Timestamp,
    },
    /// The head branch was updated in the same second as the label event.
    UpdateAtLabelTime {
        /// The shared time.
        at: Timestamp,
    },
    /// Updates in one second leave different tips, so their order is unknown.
    UpdatesUnordered {
        /// The second.
        at: Timestamp,
    },
    /// The history's latest update does not leave the current head: GitHub's record is
    /// behind the pull request, or incomplete.
    HistoryBehindHead {
        /// The tip the latest recorded update left, if any.
        latest: Option<CommitSha>,
        /// The current head.
        head: CommitSha,
    },
    /// When the label was applied the head was another commit (or the branch was gone).
    OtherHeadAtLabel {
        /// The tip at the label event, `None` when the branch had been deleted.
        then: Option<CommitSha>,
        /// The current head.
        head: CommitSha,
        /// The label event's time.
        labeled_at: Timestamp,
    },
}

impl NoHeadEvidence {
    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::HistoryNotRead => "head_history_not_read",
            Self::HistoryUnavailable { .. } => "head_history_unavailable",
            Self::LabelTimeUnknown => "label_time_unknown",
            Self::UpdateTimeUnknown => "head_update_time_unknown",
            Self::NoUpdateBeforeLabel { .. } => "no_head_update_before_label",
            Self::UpdateAtLabelTime { .. } => "head_updated_at_label_time",
            Self::UpdatesUnordered { .. } => "head_updates_unordered",
            Self::HistoryBehindHead { .. } => "head_history_behind",
            Self::OtherHeadAtLabel { .. } => "labeled_other_head",
        }
    }
}

impl fmt::Display for NoHeadEvidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::HistoryNotRead => f.write_str("the head branch's update history was not read"),
            Self::HistoryUnavailable { reason } => {
                write!(
                    f,
                    "the head branch's update history is unavailable ({reason})"
                )
            }
            Self::LabelTimeUnknown => f.write_str("the label event has no time"),
            Self::UpdateTimeUnknown => f.write_str("an update of the head branch has no time"),
            Self::NoUpdateBeforeLabel { labeled_at } => write!(
                f,
                "GitHub's activity log shows no update of the head branch before the label at {labeled_at}"
            ),
            Self::UpdateAtLabelTime { at } => write!(
                f,
                "the head branch was updated in the same second as the label ({at})"
            ),
            Self::UpdatesUnordered { at } => write!(
                f,
                "the head branch was updated to different commits in the same second ({at})"
            ),
            Self::HistoryBehindHead {
                latest: Some(latest),
                head,
            } => write!(
                f,
                "GitHub's activity log ends at {} but the head is {}",
                latest.short(),
                head.short()
            ),
            Self::HistoryBehindHead { latest: None, head } => write!(
                f,
                "GitHub's activity log ends with the branch deleted but the head is {}",
                head.short()
            ),
            Self::OtherHeadAtLabel {
                then: Some(then),
                head,
                labeled_at,
            } => write!(
                f,
                "it was applied at {labeled_at} to head {}; the head is now {}",
                then.short(),
                head.short()
            ),
            Self::OtherHeadAtLabel {
                then: None,
                head,
                labeled_at,
            } => write!(
                f,
                "it was applied at {labeled_at} while the head branch did not exist; the head is now {}",
                head.short()
            ),
        }
    }
}

/// Proves from the pull request's head history that a label applied at `labeled_at` binds
/// its current head: the label was applied to it, or to a commit that only mp's own
/// branch updates (by `bot`) moved on to it. See [`prove_head_at_label`].
///
/// # Errors
/// As [`prove_head_at_label`].
pub fn head_at_label(
    pr: &PrContext,
    labeled_at: Option<Timestamp>,
    bot: Option<&Login>,
) -> Result<HeadAtLabel, NoHeadEvidence> {
    prove_head_at_label(&pr.head_history, labeled_at, &pr.head_sha, &pr.commits, bot)
}

/// Proves that `head` is bound by a label applied at `labeled_at`, from the head branch's
/// update history: the tip left by the last update strictly before the label is `head`,
/// or every update after the label is one of mp's own branch updates ([`is_mp_update`])
/// and they lead from that tip to `head`.
///
/// # Errors
/// [`NoHeadEvidence`] whenever the history does not prove it: not read or unavailable, an
/// unknown time, no update before the label, an update in the label's second, updates of
/// one second that leave different tips, a history whose latest update does not leave
/// `head`, or another tip at the label event that mp's own updates do not lead from.
pub fn prove_head_at_label(
    history: &HeadHistory,
    labeled_at: Option<Timestamp>,
    head: &CommitSha,
    commits: &[CommitContext],
    bot: Option<&Login>,
) -> Result<HeadAtLabel, NoHeadEvidence> {
    let updates = match history {
        HeadHistory::NotRead => return Err(NoHeadEvidence::HistoryNotRead),
        HeadHistory::Unavailable { reason } => {
            return Err(NoHeadEvidence::HistoryUnavailable {
                reason: reason.clone(),
            });
        }
        HeadHistory::Read(updates) => updates,
    };
    let labeled_at = labeled_at.ok_or(NoHeadEvidence::LabelTimeUnknown)?;
    let mut timed: Vec<(Timestamp, &RefUpdate)> = Vec::with_capacity(updates.len());
    for update in updates {
        let at = update.at.ok_or(NoHeadEvidence::UpdateTimeUnknown)?;
        timed.push((at, update));
    }
    // Updates in one second cannot be ordered among themselves: only a second whose
    // updates all leave the same tip counts as a tip.
    let tip_in = |second: Timestamp| -> Result<Option<CommitSha>, ()> {
        let mut tips = timed
            .iter()
            .filter(|(at, _)| *at == second)
            .map(|(_, u)| u.after.clone());
        let first = tips.next().ok_or(())?;
        if tips.all(|tip| tip == first) {
            Ok(first)
        } else {
            Err(())
        }
    };
    let latest_at = timed.iter().map(|(at, _)| *at).max();
    if let Some(latest_at) = latest_at {
        match tip_in(latest_at) {
            Ok(Some(tip)) if tip == *head => {}
            Ok(latest) => {
                return Err(NoHeadEvidence::HistoryBehindHead {
                    latest,
                    head: head.clone(),
                });
            }
            Err(()) => return Err(NoHeadEvidence::UpdatesUnordered { at: latest_at }),
        }
    }
    if timed.iter().any(|(at, _)| *at == labeled_at) {
        return Err(NoHeadEvidence::UpdateAtLabelTime { at: labeled_at });
    }
    let Some((updated_at, update)) = timed
        .iter()
        .filter(|(at, _)| *at < labeled_at)
        .max_by_key(|(at, _)| *at)
    else {
        return Err(NoHeadEvidence::NoUpdateBeforeLabel { labeled_at });
    };
    let then = match tip_in(*updated_at) {
        Ok(tip) => tip,
        Err(()) => return Err(NoHeadEvidence::UpdatesUnordered { at: *updated_at }),
    };
    let other_head = || NoHeadEvidence::OtherHeadAtLabel {
        then: then.clone(),
        head: head.clone(),
        labeled_at,
    };
    let labeled_head = then.clone().ok_or_else(other_head)?;
    let mut carried = Vec::new();
    if labeled_head != *head {
        let mut later: Vec<(Timestamp, &RefUpdate)> = timed
            .iter()
            .filter(|(at, _)| *at > labeled_at)
            .copied()
            .collect();
        later.sort_by_key(|(at, _)| *at);
        let mut tip = labeled_head.clone();
        for (index, (at, update)) in later.iter().enumerate() {
            if index > 0 && later[index - 1].0 == *at {
                return Err(NoHeadEvidence::UpdatesUnordered { at: *at });
            }
            tip = is_mp_update(update, &tip, commits, bot).ok_or_else(other_head)?;
            carried.push(tip.clone());
        }
        if tip != *head {
            return Err(other_head());
        }
    }
    Ok(HeadAtLabel {
        head: head.clone(),
        labeled_head,
        labeled_at,
        updated_at: *updated_at,
        kind: update.kind.clone(),
        carried,
    })
}

#[cfg(test)]
mod tests;
