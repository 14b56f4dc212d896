//! Who established a label: the effective applier after removals, from timeline events.
//!
//! The label list says only that a label is present. Its provenance comes from the
//! `labeled` / `unlabeled` timeline events: when the label was never removed, the latest
//! `labeled` event established it; when it was removed, only an add at or after the latest
//! removal can have established it. Anything that cannot be ordered fails closed.

use std::fmt;

use crate::context::{LabelAction, LabelEvent};
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
}

impl Undeterminable {
    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::NeverLabeled => "never_labeled",
            Self::RemovalTimeUnknown => "removal_time_unknown",
            Self::NoAddAfterRemoval { .. } => "no_add_after_removal",
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
