//! Who wrote the `bot-state` branch, from GitHub's activity log of that branch: the state
//! counts only when mp's identity wrote it, or an allowlisted person restoring it.
//!
//! Anyone with push access to the governance repository can push to `bot-state` unless a
//! ruleset stops them. A watermark moved past an agent's commits, an entry removed or
//! nulled, a pending break-glass record deleted, or the whole branch deleted (which would
//! look like a first run) would each hide commits from the supervisor for good. The file
//! cannot tell who wrote it; GitHub's activity log of the branch can.
//!
//! The log is read newest first, back to the tip the previous tick checked (kept in the
//! state, [`super::watermarks::CHECKED_THROUGH_KEY`]). Every update after it must be mp's.
//! An update by an allowlisted person is the owner restoring the state by hand: it is
//! accepted, and nothing older is looked at. Any other writer, or an update GitHub names
//! no actor for, means the state was steered: the tick fails closed and says who.

use std::fmt;

use crate::context::{RefUpdate, RefUpdateKind};
use crate::ids::{CommitSha, Login, Timestamp};

/// What the activity log says of the state's writers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateWriters {
    /// Only mp wrote the branch since the last check (or an allowlisted person restored
    /// it, and only mp wrote after that).
    Trusted {
        /// The newest tip of the branch the log shows (`None`: an empty log).
        newest: Option<CommitSha>,
        /// How many updates were checked.
        checked: usize,
        /// The allowlisted person's update that was accepted as a restore, if one was met.
        restored_by: Option<RefUpdate>,
    },
    /// Someone else wrote the branch (or deleted it).
    Steered(Steered),
}

/// An update of `bot-state` by someone other than mp or an allowlisted person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Steered {
    /// The update.
    pub update: RefUpdate,
}

impl Steered {
    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        if self.update.kind == RefUpdateKind::BranchDeletion {
            "state_branch_deleted_by_other"
        } else {
            "state_written_by_other"
        }
    }

    /// The dedupe key of its incident: the tip the update left, or the tip it deleted.
    pub fn key_sha(&self) -> Option<&CommitSha> {
        self.update.after.as_ref().or(self.update.before.as_ref())
    }
}

impl fmt::Display for Steered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let update = &self.update;
        let who = update
            .actor
            .as_ref()
            .map_or("someone GitHub names no actor for", Login::as_str);
        let at = update.at.map(|at| format!(" at {at}")).unwrap_or_default();
        match (&update.kind, &update.after, &update.before) {
            (RefUpdateKind::BranchDeletion, _, Some(before)) => write!(
                f,
                "{who} deleted the bot-state branch{at} (it was at {}), GitHub's activity log",
                before.short()
            ),
            (kind, Some(after), _) => write!(
                f,
                "{who} wrote the bot-state branch{at} ({} to {}), GitHub's activity log",
                kind.as_github().replace('_', " "),
                after.short()
            ),
            (kind, None, _) => write!(
                f,
                "{who} changed the bot-state branch{at} ({}), GitHub's activity log",
                kind.as_github().replace('_', " ")
            ),
        }
    }
}

/// Checks the writers of `bot-state` from its activity log (newest first), back to
/// `checked_through` (exclusive; the whole log when `None` or not in it).
pub fn check_state_writers(
    log_newest_first: &[RefUpdate],
    checked_through: Option<&CommitSha>,
    bot: &Login,
    allowlist: &[Login],
) -> StateWriters {
    let newest = log_newest_first.first().and_then(|u| u.after.clone());
    let mut checked = 0;
    for update in log_newest_first {
        if checked_through.is_some() && update.after.as_ref() == checked_through {
            break;
        }
        checked += 1;
        match &update.actor {
            Some(actor) if actor == bot => {}
            Some(actor) if allowlist.contains(actor) => {
                return StateWriters::Trusted {
                    newest,
                    checked,
                    restored_by: Some(update.clone()),
                };
            }
            _ => {
                return StateWriters::Steered(Steered {
                    update: update.clone(),
                });
            }
        }
    }
    StateWriters::Trusted {
        newest,
        checked,
        restored_by: None,
    }
}

/// What a restore by an allowlisted person looks like in the tick's events.
pub fn restored_text(update: &RefUpdate) -> String {
    let who = update.actor.as_ref().map_or("unknown", Login::as_str);
    let at: Option<Timestamp> = update.at;
    format!(
        "bot-state was last restored by allowlisted {who}{}; the state they left is trusted",
        at.map(|at| format!(" at {at}")).unwrap_or_default()
    )
}

#[cfg(test)]
mod tests;
