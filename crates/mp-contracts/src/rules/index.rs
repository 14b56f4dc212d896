//! The compact index the cross-document rules read: per document only its kind, id,
//! version, the one id it references and the few facts a set rule compares, read once.
//!
//! A set of 100,000 documents is validated without holding the documents: each is checked
//! on its own as it arrives, reduced to an [`Entry`] of a few dozen bytes, and dropped. The
//! rules across documents then run over the entries alone.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;

use super::Doc;
use crate::error::ContractError;
use crate::kinds::{
    AcceptanceStatus, Approval, ApprovalRole, ApproverRole, Capability, DateTime, Kind,
    PolicyVerdict, RiskLevel, Version,
};

/// One document of a set, reduced to what the set rules read. Documents whose `kind` is
/// unusable have no entry: no set rule looks at them.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// Its position in the set.
    pub index: usize,
    pub kind: Kind,
    /// `id`, when it is a string.
    pub id: Option<Box<str>>,
    /// `version`, when it is a valid one.
    pub version: Option<Version>,
    /// The id the document references, when it is a string: `intentId` of a TaskSeed,
    /// `taskSeedId` of an Acceptance or Evidence, `entityId` of a PublishGate.
    pub reference: Option<Box<str>>,
    pub facts: Facts,
}

/// The fields of each kind that a set rule compares with another document.
#[derive(Debug, Clone)]
pub(crate) enum Facts {
    IntentContract {
        /// `requestedCapabilities`, when every entry is a known capability.
        requested: Option<Vec<Capability>>,
    },
    TaskSeed {
        /// `requestedCapabilitiesSnapshot`, when every entry is a known capability.
        snapshot: Option<Vec<Capability>>,
    },
    Acceptance {
        status: Option<AcceptanceStatus>,
        /// `generationPolicy.auto_activate`, when a boolean.
        auto_activate: Option<bool>,
        /// The strings of `generationPolicy.requiredActivationApprovals`, when an array.
        activation_roles: Option<Vec<Box<str>>>,
    },
    PublishGate {
        risk: Option<RiskLevel>,
        /// Every entry of `approvals` that reads as an approval, in order.
        approvals: Vec<Approval<ApprovalRole>>,
    },
    Evidence {
        manual_review: bool,
        snapshot: SnapshotField,
        end: Option<DateTime>,
    },
}

/// `approvalsSnapshot` of an Evidence.
#[derive(Debug, Clone)]
pub(crate) enum SnapshotField {
    Absent,
    /// Present but not an array (the schema layer reports it).
    NotArray,
    /// Each entry, or `None` where it does not read as an approval.
    Entries(Vec<Option<Approval<ApproverRole>>>),
}

impl SnapshotField {
    /// No snapshot at all: absent, or an empty array.
    pub fn missing(&self) -> bool {
        match self {
            Self::Absent => true,
            Self::NotArray => false,
            Self::Entries(entries) => entries.is_empty(),
        }
    }
}

fn owned(text: Option<&str>) -> Option<Box<str>> {
    text.map(Box::from)
}

impl Entry {
    /// The entry of a document, or `None` when its `kind` is unusable.
    pub fn of(doc: &Doc<'_>) -> Option<Self> {
        let kind = doc.kind?;
        let (reference, facts) = match kind {
            Kind::IntentContract => (
                None,
                Facts::IntentContract {
                    requested: doc.get("/requestedCapabilities"),
                },
            ),
            Kind::TaskSeed => (
                doc.str("/intentId"),
                Facts::TaskSeed {
                    snapshot: doc.get("/requestedCapabilitiesSnapshot"),
                },
            ),
            Kind::Acceptance => (
                doc.str("/taskSeedId"),
                Facts::Acceptance {
                    status: doc.get("/status"),
                    auto_activate: doc.get("/generationPolicy/auto_activate"),
                    activation_roles: doc
                        .array("/generationPolicy/requiredActivationApprovals")
                        .map(|roles| {
                            roles
                                .iter()
                                .filter_map(Value::as_str)
                                .map(Box::from)
                                .collect()
                        }),
                },
            ),
            Kind::PublishGate => (
                doc.str("/entityId"),
                Facts::PublishGate {
                    risk: doc.get("/riskLevel"),
                    approvals: doc
                        .array("/approvals")
                        .into_iter()
                        .flatten()
                        .filter_map(|entry| Approval::deserialize(entry).ok())
                        .collect(),
                },
            ),
            Kind::Evidence => (
                doc.str("/taskSeedId"),
                Facts::Evidence {
                    manual_review: doc.get::<PolicyVerdict>("/policyVerdict")
                        == Some(PolicyVerdict::ManualReviewRequired),
                    snapshot: match doc.json.get("approvalsSnapshot") {
                        None => SnapshotField::Absent,
                        Some(Value::Array(entries)) => SnapshotField::Entries(
                            entries
                                .iter()
                                .map(|e| Approval::deserialize(e).ok())
                                .collect(),
                        ),
                        Some(_) => SnapshotField::NotArray,
                    },
                    end: doc.get("/endTime"),
                },
            ),
        };
        Some(Self {
            index: doc.index,
            kind,
            id: owned(doc.id()),
            version: doc.version(),
            reference: owned(reference),
            facts,
        })
    }

    /// `id`, or `?` in messages.
    pub fn name(&self) -> &str {
        self.id.as_deref().unwrap_or("?")
    }

    /// True for a document of `kind`.
    pub fn is(&self, kind: Kind) -> bool {
        self.kind == kind
    }

    /// An error of this document.
    pub fn error(
        &self,
        pointer: impl Into<String>,
        code: &'static str,
        message: impl Into<String>,
    ) -> ContractError {
        ContractError::new(self.index, pointer, code, message)
    }

    /// The capability snapshot of a TaskSeed.
    pub fn capability_snapshot(&self) -> Option<&[Capability]> {
        match &self.facts {
            Facts::TaskSeed { snapshot } => snapshot.as_deref(),
            _ => None,
        }
    }

    /// The recorded approvals of a PublishGate.
    pub fn approvals(&self) -> &[Approval<ApprovalRole>] {
        match &self.facts {
            Facts::PublishGate { approvals, .. } => approvals,
            _ => &[],
        }
    }

    /// The human decisions of a PublishGate made at or before `until`, in order.
    pub fn human_decisions_until<'s>(
        &'s self,
        until: &'s DateTime,
    ) -> impl Iterator<Item = &'s Approval<ApprovalRole>> + 's {
        self.approvals()
            .iter()
            .filter(move |a| a.role.human().is_some() && a.decided_at <= *until)
    }
}

/// The entries of a set, with ids resolved. Where an id appears with several versions of
/// one kind, the current document is the one with the highest version (the first of equal
/// ones).
#[derive(Debug, Default)]
pub(crate) struct Index {
    pub entries: Vec<Entry>,
    /// id -> per kind, the position in `entries` of the current document (`u32`: a set
    /// of more than four billion documents is not validated in memory anyway).
    current: HashMap<Box<str>, [Option<u32>; 5]>,
    /// TaskSeed id -> positions in `entries` of its current PublishGates (through their
    /// Acceptance); built by [`Index::seal`].
    gates_by_task_seed: HashMap<Box<str>, Vec<usize>>,
}

fn slot(kind: Kind) -> usize {
    match kind {
        Kind::IntentContract => 0,
        Kind::TaskSeed => 1,
        Kind::Acceptance => 2,
        Kind::PublishGate => 3,
        Kind::Evidence => 4,
    }
}

impl Index {
    /// Adds the next document's entry (entries arrive in set order).
    pub fn push(&mut self, entry: Entry) {
        let position = self.entries.len();
        if let Some(id) = &entry.id {
            let slots = match self.current.get_mut(&**id) {
                Some(slots) => slots,
                None => self.current.entry(id.clone()).or_default(),
            };
            let held = &mut slots[slot(entry.kind)];
            let newer = held.is_none_or(|held| entry.version > self.entries[held as usize].version);
            if newer {
                *held = u32::try_from(position).ok();
            }
        }
        self.entries.push(entry);
    }

    /// Builds the lookups that need every document; call once, after the last push.
    pub fn seal(&mut self) {
        let mut gates: HashMap<Box<str>, Vec<usize>> = HashMap::new();
        for (position, gate) in self.entries.iter().enumerate() {
            if !self.is_current(position) || !gate.is(Kind::PublishGate) {
                continue;
            }
            if let Some(seed) = self
                .referenced(gate, Kind::Acceptance)
                .and_then(|acceptance| acceptance.reference.as_deref())
            {
                gates.entry(Box::from(seed)).or_default().push(position);
            }
        }
        self.gates_by_task_seed = gates;
    }

    fn is_current(&self, position: usize) -> bool {
        let entry = &self.entries[position];
        entry
            .id
            .as_deref()
            .and_then(|id| self.current.get(id))
            .is_some_and(|slots| slots[slot(entry.kind)].map(|p| p as usize) == Some(position))
    }

    /// The current document of `kind` with this id.
    pub fn resolve(&self, id: &str, kind: Kind) -> Option<&Entry> {
        let position = self.current.get(id)?[slot(kind)]?;
        Some(&self.entries[position as usize])
    }

    /// The current document of `kind` that `entry` references.
    pub fn referenced(&self, entry: &Entry, kind: Kind) -> Option<&Entry> {
        self.resolve(entry.reference.as_deref()?, kind)
    }

    /// The documents of `kind` that are the current version of their id.
    pub fn current_of(&self, kind: Kind) -> impl Iterator<Item = &Entry> {
        self.entries
            .iter()
            .enumerate()
            .filter(move |(position, entry)| entry.is(kind) && self.is_current(*position))
            .map(|(_, entry)| entry)
    }

    /// Every document of `kind`.
    pub fn all_of(&self, kind: Kind) -> impl Iterator<Item = &Entry> {
        self.entries.iter().filter(move |entry| entry.is(kind))
    }

    /// The current PublishGates of a TaskSeed (through their Acceptance).
    pub fn gates_of_task_seed(&self, task_seed: &str) -> impl Iterator<Item = &Entry> {
        self.gates_by_task_seed
            .get(task_seed)
            .into_iter()
            .flatten()
            .map(|&position| &self.entries[position])
    }

    /// The TaskSeed behind a gate (gate -> Acceptance -> TaskSeed) and its capability
    /// snapshot.
    pub fn gate_capabilities(&self, gate: &Entry) -> Option<(&Entry, &[Capability])> {
        let acceptance = self.referenced(gate, Kind::Acceptance)?;
        let seed = self.referenced(acceptance, Kind::TaskSeed)?;
        Some((seed, seed.capability_snapshot()?))
    }
}
