//! Who established a label: the effective applier after removals, from timeline events.
//!
//! The label list says only that a label is present. Its provenance comes from the
//! `labeled` / `unlabeled` timeline events: when the label was never removed, the latest
//! `labeled` event established it; when it was removed, only an add at or after the latest
//! removal can have established it. Anything that cannot be ordered fails closed.
//!
//! A timeline event names a label by name, and a label can be renamed: GitHub's GraphQL
//! `LabeledEvent` points at the label object itself (its current name), and what REST's
//! timeline shows after a rename is not documented. [`label_applier`] therefore also
//! requires GitHub's record of the label to show it unchanged since the event: an event
//! before the label's creation or before its last edit proves nothing (decisions/0048).

use std::fmt;

use crate::context::{LabelAction, LabelEvent, LabelRecords, PrContext};
use crate::ids::{Login, Timestamp};

/// The `labeled` event that established a label's current presence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EffectiveApplier {
    /// Who applied the label, when GitHub names an actor.
    pub actor: Option<Login>,
    /// When, when GitHub's event time was present and parseable.
    pub at: Option<Timestamp>,
    /// Position of the event in the timeline slice it was read from.
    pub event_index: usize,
}

/// Why the establishing event of a label cannot be determined. The caller fails closed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Undeterminable {
    /// The timeline has no `labeled` event for the label.
    NeverLabeled,
    /// The label was removed at least once, but a removal has no usable time, so adds
    /// cannot be ordered against it.
    RemovalTimeUnknown,
    /// The label was removed and no add with a usable time is at or after the latest
    /// removal.
    NoAddAfterRemoval {
        /// Time of the latest `unlabeled` event.
        removed_at: Timestamp,
    },
    /// GitHub's record of the label (when it was created and last edited) is not known,
    /// or the establishing event has no time to compare it with: a rename after the event
    /// cannot be ruled out.
    LabelRecordUnknown {
        /// What is missing, e.g. `was not read`.
        reason: String,
    },
    /// The label was created after the establishing event: the event was made on another
    /// label that now shows this name.
    LabelCreatedAfterApplied {
        /// GitHub's creation time of the label.
        created_at: Timestamp,
        /// The establishing event's time.
        applied_at: Timestamp,
    },
    /// The label was edited (renamed, recoloured or re-described) at or after the
    /// establishing event: a rename may have given the label the owner applied this name.
    LabelEditedAfterApplied {
        /// GitHub's time of the label's last edit.
        edited_at: Timestamp,
        /// The establishing event's time.
        applied_at: Timestamp,
    },
}

impl Undeterminable {
    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::NeverLabeled => "never_labeled",
            Self::RemovalTimeUnknown => "removal_time_unknown",
            Self::NoAddAfterRemoval { .. } => "no_add_after_removal",
            Self::LabelRecordUnknown { .. } => "label_record_unknown",
            Self::LabelCreatedAfterApplied { .. } => "label_created_after_applied",
            Self::LabelEditedAfterApplied { .. } => "label_edited_after_applied",
        }
    }
}

impl fmt::Display for Undeterminable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NeverLabeled => f.write_str("the timeline has no labeled event for it"),
            Self::RemovalTimeUnknown => f.write_str("a removal of it has no event time"),
            Self::NoAddAfterRemoval { removed_at } => write!(
                f,
                "no add with a known time follows its latest removal at {removed_at}"
            ),
            Self::LabelRecordUnknown { reason } => write!(
                f,
                "GitHub's record of when the label was created and last edited {reason}, so a rename after it was applied cannot be ruled out"
            ),
            Self::LabelCreatedAfterApplied {
                created_at,
                applied_at,
            } => write!(
                f,
                "the label was created at {created_at}, after the labeled event at {applied_at}: that event applied another label, renamed or deleted since"
            ),
            Self::LabelEditedAfterApplied {
                edited_at,
                applied_at,
            } => write!(
                f,
                "the label was edited (renamed, recoloured or re-described) at {edited_at}, not before it was applied at {applied_at}: a rename may have given another label this name; re-apply it"
            ),
        }
    }
}

/// Who established a label, or why that cannot be told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Provenance {
    /// The establishing `labeled` event.
    Established(EffectiveApplier),
    /// No establishing event can be named; callers fail closed.
    Undeterminable(Undeterminable),
}

impl Provenance {
    /// The establishing event, if one was found.
    pub fn applier(&self) -> Option<&EffectiveApplier> {
        match self {
            Self::Established(applier) => Some(applier),
            Self::Undeterminable(_) => None,
        }
    }
}

/// Finds the event that established `label` on the pull request ([`effective_applier`])
/// and checks that GitHub's record of the label shows it unchanged since: the label was
/// created at or before the event, and not edited (its `updated_at` later than its
/// `created_at`) at or after it. Otherwise, or when the record or the event's time is not
/// known, the applier is [`Provenance::Undeterminable`]: a label renamed after the owner
/// applied it (`reviewing` renamed `ready-to-merge`) approves nothing.
pub fn label_applier(pr: &PrContext, label: &str) -> Provenance {
    let provenance = effective_applier(&pr.label_events, label);
    let Provenance::Established(applier) = &provenance else {
        return provenance;
    };
    match unchanged_since(&pr.label_records, label, applier.at) {
        Ok(()) => provenance,
        Err(why) => Provenance::Undeterminable(why),
    }
}

/// Whether GitHub's record shows `label` created at or before `applied_at` and not edited
/// (its `updated_at` later than its `created_at`) at or after it. A record not read or
/// without times, no record of that name, or no `applied_at` is
/// [`Undeterminable::LabelRecordUnknown`]. The decision inbox checks the bot's
/// `decision:pending-owner` with it too.
///
/// # Errors
/// Why the label cannot be shown unchanged since `applied_at`.
pub fn unchanged_since(
    records: &LabelRecords,
    label: &str,
    applied_at: Option<Timestamp>,
) -> Result<(), Undeterminable> {
    let unknown = |reason: &str| Undeterminable::LabelRecordUnknown {
        reason: reason.to_owned(),
    };
    let record = match records {
        LabelRecords::NotRead => return Err(unknown("was not read")),
        LabelRecords::Unavailable { reason } => {
            return Err(unknown(&format!("is unavailable ({reason})")));
        }
        LabelRecords::Read(_) => records
            .get(label)
            .ok_or_else(|| unknown("names no label of that name"))?,
    };
    let (Some(created_at), Some(updated_at)) = (record.created_at, record.updated_at) else {
        return Err(unknown("gives no time"));
    };
    let Some(applied_at) = applied_at else {
        return Err(unknown(
            "cannot be compared with the labeled event, which has no time",
        ));
    };
    if created_at > applied_at {
        return Err(Undeterminable::LabelCreatedAfterApplied {
            created_at,
            applied_at,
        });
    }
    if updated_at > created_at && updated_at >= applied_at {
        return Err(Undeterminable::LabelEditedAfterApplied {
            edited_at: updated_at,
            applied_at,
        });
    }
    Ok(())
}

/// Finds the event that established `label`, from `labeled`/`unlabeled` events in
/// timeline order.
///
/// * Never removed: the latest `labeled` event in timeline order (its time may be unknown).
/// * Removed at least once: among `labeled` events whose time is at or after the latest
///   `unlabeled` time, the one with the latest time; equal times go to the later event.
///   Adds without a time, and adds before the removal, are ignored.
/// * A removal without a time, or no qualifying add: [`Provenance::Undeterminable`].
///
/// Label names are compared exactly.
pub fn effective_applier(events: &[LabelEvent], label: &str) -> Provenance {
    let relevant = || {
        events
            .iter()
            .enumerate()
            .filter(move |(_, event)| event.label == label)
    };
    let mut latest_removal: Option<Timestamp> = None;
    for (_, event) in relevant().filter(|(_, e)| e.action == LabelAction::Unlabeled) {
        match event.at {
            None => return Provenance::Undeterminable(Undeterminable::RemovalTimeUnknown),
            Some(at) => latest_removal = latest_removal.max(Some(at)),
        }
    }
    let mut adds = relevant().filter(|(_, e)| e.action == LabelAction::Labeled);
    let chosen = match latest_removal {
        None => adds.next_back(),
        Some(removed_at) => {
            let best = adds
                .filter_map(|(index, e)| {
                    e.at.filter(|at| *at >= removed_at).map(|at| (at, index, e))
                })
                .max_by_key(|(at, index, _)| (*at, *index));
            match best {
                Some((_, index, event)) => Some((index, event)),
                None => {
                    return Provenance::Undeterminable(Undeterminable::NoAddAfterRemoval {
                        removed_at,
                    });
                }
            }
        }
    };
    match chosen {
        Some((event_index, event)) => Provenance::Established(EffectiveApplier {
            actor: event.actor.clone(),
            at: event.at,
            event_index,
        }),
        None => Provenance::Undeterminable(Undeterminable::NeverLabeled),
    }
}

#[cfg(test)]
mod tests;
