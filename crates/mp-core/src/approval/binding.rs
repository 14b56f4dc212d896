//! Which head a label was applied to, proven from GitHub's server-side record of the head
//! branch's updates (the repository activity log), never from commit dates.
//!
//! A label event carries GitHub's time; each update of the head branch carries GitHub's
//! time and the tip it left. The head a pull request had when the label was applied is the
//! tip left by the last update strictly before the label event, and it binds only if it had
//! been the tip for the settle window ([`SettleWindow`]) before the label: a push moments
//! before the label is one the owner's page may not have shown (decisions/0042). Anything
//! that cannot be ordered (an update in the same second as the label, an update without a
//! time, no update before the label) proves nothing and fails closed.
//!
//! One kind of later update carries a label over to a new head: mp's own request to bring
//! the branch up to date with `main` (the race guard). It is recognised from the log alone:
//! a fast-forward push by mp's identity whose new tip is a merge commit with exactly two
//! parents, the first being the previous tip ([`is_mp_update`]). Later updates are ordered
//! by their before/after links from the labelled tip, never by their seconds, so mp's
//! updates that land in one second still carry. Any other update after the label — by an
//! agent, a force push, a commit of another shape, a fork in the chain — ends the binding,
//! and the owner re-applies the label (decisions/0026, decisions/0042).
//!
//! A label binds the base too: a change of the pull request's base branch at or after the
//! label (GitHub's `base_ref_changed` timeline event) ends the binding (decisions/0042).

use std::fmt;

use super::TrustRoots;
use crate::context::{
    CommitContext, HeadHistory, LabelAction, PrContext, RefUpdate, RefUpdateKind,
};
use crate::ids::{CommitSha, Login, Timestamp};

/// How long a head must have been the branch tip before a label binds it: the owner labels
/// the page they looked at, and a push that lands moments before the click (or while a
/// refresh is on its way) is one they may never have seen. `env.yml`
/// `label_settle_seconds`; default [`SettleWindow::DEFAULT`] (decisions/0042).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SettleWindow {
    seconds: u32,
}

impl SettleWindow {
    /// The default window: two minutes.
    pub const DEFAULT: Self = Self { seconds: 120 };

    /// A window of `seconds`. Zero leaves only the same-second rule.
    pub const fn from_seconds(seconds: u32) -> Self {
        Self { seconds }
    }

    /// The window in seconds.
    pub const fn seconds(self) -> u32 {
        self.seconds
    }
}

impl Default for SettleWindow {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl fmt::Display for SettleWindow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} s", self.seconds)
    }
}

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

/// The commits of the pull request that are mp's own branch updates ([`is_mp_update`])
/// merging a commit the base branch pointed to ([`merged_from_base`]): GitHub's merge of
/// `main` into the branch, which carries no identity trailers. C5 does not ask trailers of
/// them, and of nothing else.
pub fn mp_update_commits(pr: &PrContext, bot: Option<&Login>) -> Vec<CommitSha> {
    let HeadHistory::Read(updates) = &pr.head_history else {
        return Vec::new();
    };
    updates
        .iter()
        .filter_map(|update| {
            let before = update.before.as_ref()?;
            is_mp_update(update, before, &pr.commits, bot)
                .filter(|merge| merged_from_base(pr, merge).is_ok())
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
    /// Updates in one second leave different tips and their before/after links do not
    /// order them into one chain, so their order is unknown.
    UpdatesUnordered {
        /// The second.
        at: Timestamp,
    },
    /// The tip at the label had been the tip for less than the settle window.
    UpdatedInSettleWindow {
        /// GitHub's time of the update that left the tip.
        updated_at: Timestamp,
        /// The label event's time.
        labeled_at: Timestamp,
        /// The window.
        window: SettleWindow,
    },
    /// After the label, more than one update of the head branch starts from the same tip:
    /// the chain of updates forks and cannot be followed.
    UpdateChainForked {
        /// The tip the updates start from.
        from: CommitSha,
    },
    /// The pull request's base branch was changed at or after the label (or at an unknown
    /// time): the owner labelled a change into another branch.
    BaseChangedAfterLabel {
        /// GitHub's time of the base change, if known.
        at: Option<Timestamp>,
        /// The label event's time.
        labeled_at: Timestamp,
    },
    /// The history's latest update does not leave the current head: GitHub's record is
    /// behind the pull request, or incomplete.
    HistoryBehindHead {
        /// The tip the latest recorded update left, if any.
        latest: Option<CommitSha>,
        /// The current head.
        head: CommitSha,
    },
    /// One of mp's updates after the label merged a commit the base branch never pointed
    /// to (as its activity log shows): the update brought in code that is not the base's.
    UpdateNotFromBase {
        /// The update's merge commit.
        update: CommitSha,
        /// Its second parent.
        parent: CommitSha,
        /// The base branch.
        base_ref: String,
    },
    /// An update after the label is a merge, and the base branch's activity log, which
    /// shows what the merge brought in, was not read or cannot be had.
    BaseHistoryMissing {
        /// Why.
        reason: String,
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
            Self::UpdatedInSettleWindow { .. } => "head_updated_in_settle_window",
            Self::UpdateChainForked { .. } => "head_update_chain_forked",
            Self::BaseChangedAfterLabel { .. } => "base_changed_after_label",
            Self::HistoryBehindHead { .. } => "head_history_behind",
            Self::UpdateNotFromBase { .. } => "update_second_parent_not_on_base",
            Self::BaseHistoryMissing { .. } => "base_history_missing",
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
            Self::UpdatedInSettleWindow {
                updated_at,
                labeled_at,
                window,
            } => write!(
                f,
                "the head branch was updated at {updated_at}, {} s before the label at {labeled_at}: within the {window} settle window, the owner may not have seen that head",
                labeled_at.seconds_since(*updated_at)
            ),
            Self::UpdateChainForked { from } => write!(
                f,
                "after the label, GitHub's activity log shows more than one update of the head branch from {}",
                from.short()
            ),
            Self::BaseChangedAfterLabel {
                at: Some(at),
                labeled_at,
            } => write!(
                f,
                "the base branch was changed at {at}, after the label at {labeled_at}; the label does not bind the new base"
            ),
            Self::BaseChangedAfterLabel { at: None, .. } => f.write_str(
                "the base branch was changed at an unknown time; the label does not bind the new base",
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
            Self::UpdateNotFromBase {
                update,
                parent,
                base_ref,
            } => write!(
                f,
                "mp's update {} after the label merged {}, its second parent, which {base_ref} never pointed to (GitHub's activity log of {base_ref}): the label does not carry over code that is not {base_ref}'s",
                update.short(),
                parent.short()
            ),
            Self::BaseHistoryMissing { reason } => write!(
                f,
                "the base branch's update history, which shows what mp's update after the label merged, is unavailable ({reason})"
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

/// Proves from the pull request's head history and timeline that a label applied at
/// `labeled_at` binds its current head and base: the base was not changed since the label,
/// and the label was applied to the head, or to a commit that only mp's own branch updates
/// (by the bot of `roots`) moved on to it, each merging a commit the base branch pointed to
/// ([`merged_from_base`]). See [`prove_head_at_label`]; the settle window is that of
/// `roots`.
///
/// # Errors
/// [`NoHeadEvidence::BaseChangedAfterLabel`] when a base change (`base_ref_changed`) is at
/// or after the label or has no time; as [`merged_from_base`] for a carried update;
/// otherwise as [`prove_head_at_label`].
pub fn head_at_label(
    pr: &PrContext,
    labeled_at: Option<Timestamp>,
    roots: TrustRoots<'_>,
) -> Result<HeadAtLabel, NoHeadEvidence> {
    let proof = prove_head_at_label(
        &pr.head_history,
        labeled_at,
        &pr.head_sha,
        &pr.commits,
        roots.bot(),
        roots.settle_window(),
    )?;
    let base_change = pr
        .label_events
        .iter()
        .filter(|event| event.action == LabelAction::BaseChanged)
        .find(|event| event.at.is_none_or(|at| at >= proof.labeled_at));
    if let Some(change) = base_change {
        return Err(NoHeadEvidence::BaseChangedAfterLabel {
            at: change.at,
            labeled_at: proof.labeled_at,
        });
    }
    for update in &proof.carried {
        merged_from_base(pr, update)?;
    }
    Ok(proof)
}

/// Checks that the merge commit `update` of the pull request brought in a commit its base
/// branch pointed to: its second parent is a tip GitHub's activity log of the base branch
/// shows ([`PrContext::base_history`]). GitHub's update of a branch merges the base's head
/// of that moment, which the log records; a merge of anything else (a commit of another
/// branch, reached by retargeting the base while mp updated) brings in code the base never
/// had (decisions/0026).
///
/// # Errors
/// [`NoHeadEvidence::BaseHistoryMissing`] when the base's history was not read or cannot
/// be had, or `update` is not a two-parent commit of the pull request;
/// [`NoHeadEvidence::UpdateNotFromBase`] when its second parent is no tip of the log.
pub fn merged_from_base(pr: &PrContext, update: &CommitSha) -> Result<(), NoHeadEvidence> {
    let Some(parent) = pr
        .commits
        .iter()
        .find(|commit| commit.sha == *update)
        .and_then(|commit| commit.parents.get(1))
    else {
        return Err(NoHeadEvidence::BaseHistoryMissing {
            reason: format!(
                "{} is not a merge among the pull request's commits",
                update.short()
            ),
        });
    };
    let updates = match &pr.base_history {
        HeadHistory::Read(updates) => updates,
        HeadHistory::NotRead => {
            return Err(NoHeadEvidence::BaseHistoryMissing {
                reason: "not read".to_owned(),
            });
        }
        HeadHistory::Unavailable { reason } => {
            return Err(NoHeadEvidence::BaseHistoryMissing {
                reason: reason.clone(),
            });
        }
    };
    if updates.iter().any(|u| u.after.as_ref() == Some(parent)) {
        Ok(())
    } else {
        Err(NoHeadEvidence::UpdateNotFromBase {
            update: update.clone(),
            parent: parent.clone(),
            base_ref: pr.base_ref.clone(),
        })
    }
}

/// The tip the updates of one second leave: the tip they all leave, or the end of the one
/// chain their before/after links form (each update starting from the tip the previous one
/// left). `None` inside means the branch was deleted. `Err` when they leave different tips
/// and do not form exactly one chain.
fn tip_of_second(updates: &[&RefUpdate]) -> Result<Option<CommitSha>, ()> {
    let first = updates.first().ok_or(())?;
    if updates.iter().all(|u| u.after == first.after) {
        return Ok(first.after.clone());
    }
    // The chain starts with the only update whose `before` no other update leaves.
    let mut starts = updates.iter().enumerate().filter(|(i, u)| {
        !updates
            .iter()
            .enumerate()
            .any(|(j, other)| j != *i && other.after == u.before)
    });
    let (start, _) = starts.next().ok_or(())?;
    if starts.next().is_some() {
        return Err(());
    }
    let mut used = vec![false; updates.len()];
    used[start] = true;
    let mut tip = updates[start].after.clone();
    for _ in 1..updates.len() {
        let mut next = (0..updates.len()).filter(|&j| !used[j] && updates[j].before == tip);
        let j = next.next().ok_or(())?;
        if next.next().is_some() {
            return Err(());
        }
        used[j] = true;
        tip = updates[j].after.clone();
    }
    Ok(tip)
}

/// Proves that `head` is bound by a label applied at `labeled_at`, from the head branch's
/// update history: the tip left by the last update strictly before the label is `head` and
/// had been the tip for at least `window` before the label, or it is such a tip and every
/// update after the label is one of mp's own branch updates ([`is_mp_update`]) leading from
/// it to `head` by the log's before/after links (whatever their seconds).
///
/// # Errors
/// [`NoHeadEvidence`] whenever the history does not prove it: not read or unavailable, an
/// unknown time, no update before the label, an update in the label's second, updates of
/// one second that leave different tips and form no single chain, a tip younger than the
/// window at the label, a history whose latest update does not leave `head`, updates after
/// the label that fork, or another tip at the label event that mp's own updates do not
/// lead from.
pub fn prove_head_at_label(
    history: &HeadHistory,
    labeled_at: Option<Timestamp>,
    head: &CommitSha,
    commits: &[CommitContext],
    bot: Option<&Login>,
    window: SettleWindow,
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
    // GitHub's times have whole seconds, and every rule below is about those seconds: a
    // fraction (which GitHub never hands out) must not order two events of one second.
    let labeled_at = labeled_at
        .ok_or(NoHeadEvidence::LabelTimeUnknown)?
        .whole_second();
    let mut timed: Vec<(Timestamp, &RefUpdate)> = Vec::with_capacity(updates.len());
    for update in updates {
        let at = update.at.ok_or(NoHeadEvidence::UpdateTimeUnknown)?;
        timed.push((at.whole_second(), update));
    }
    let tip_in = |second: Timestamp| -> Result<Option<CommitSha>, ()> {
        let of_second: Vec<&RefUpdate> = timed
            .iter()
            .filter(|(at, _)| *at == second)
            .map(|(_, u)| *u)
            .collect();
        tip_of_second(&of_second)
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
    if labeled_at.seconds_since(*updated_at) < i64::from(window.seconds()) {
        return Err(NoHeadEvidence::UpdatedInSettleWindow {
            updated_at: *updated_at,
            labeled_at,
            window,
        });
    }
    let other_head = || NoHeadEvidence::OtherHeadAtLabel {
        then: then.clone(),
        head: head.clone(),
        labeled_at,
    };
    let labeled_head = then.clone().ok_or_else(other_head)?;
    let mut carried = Vec::new();
    if labeled_head != *head {
        // Follow the updates after the label by their before/after links from the
        // labelled tip; their seconds only have to agree with that order.
        let mut later: Vec<(Timestamp, &RefUpdate)> = timed
            .iter()
            .filter(|(at, _)| *at > labeled_at)
            .copied()
            .collect();
        let mut tip = labeled_head.clone();
        let mut last_at = labeled_at;
        while !later.is_empty() {
            let mut next = later
                .iter()
                .enumerate()
                .filter(|(_, (_, u))| u.before.as_ref() == Some(&tip))
                .map(|(index, _)| index);
            let Some(index) = next.next() else {
                // An update that does not continue the chain.
                return Err(other_head());
            };
            if next.next().is_some() {
                return Err(NoHeadEvidence::UpdateChainForked { from: tip });
            }
            let (at, update) = later.remove(index);
            if at < last_at {
                return Err(NoHeadEvidence::UpdatesUnordered { at });
            }
            last_at = at;
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
