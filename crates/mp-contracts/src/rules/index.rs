//! The compact index the cross-document rules read: per document only its kind, id,
//! version, the one id it references and the few facts a set rule compares, read once.
//!
//! A set of 100,000 documents is validated without holding the documents: each is checked
//! on its own as it arrives, reduced to an [`Entry`] of a few dozen bytes, and dropped. The
//! rules across documents then run over the entries alone.

use std::hash::BuildHasher;

use hashbrown::{DefaultHashBuilder, HashMap, HashTable};
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
    /// The index's number for `id`, or [`NONE`] when it is not a string (every document
    /// naming the same id shares one copy of its text).
    id: u32,
    /// The number of the id the document references, or [`NONE`]: `intentId` of a
    /// TaskSeed, `taskSeedId` of an Acceptance or Evidence, `entityId` of a PublishGate.
    reference: u32,
    /// `version`, when it is a valid one.
    pub version: Option<Version>,
    pub facts: Facts,
}

/// An [`Entry`] with the texts of its ids, before it joins an [`Index`].
#[derive(Debug, Clone)]
pub(crate) struct Loose {
    pub entry: Entry,
    id: Option<Box<str>>,
    reference: Option<Box<str>>,
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
        /// `endTime`'s instant.
        end: Option<jiff::Timestamp>,
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
    pub fn of(doc: &Doc<'_>) -> Option<Loose> {
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
                    end: doc.get::<DateTime>("/endTime").map(|end| end.instant()),
                },
            ),
        };
        Some(Loose {
            entry: Self {
                index: doc.index,
                kind,
                id: NONE,
                reference: NONE,
                version: doc.version(),
                facts,
            },
            id: owned(doc.id()),
            reference: owned(reference),
        })
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
    pub fn human_decisions_until(
        &self,
        until: jiff::Timestamp,
    ) -> impl Iterator<Item = &Approval<ApprovalRole>> {
        self.approvals()
            .iter()
            .filter(move |a| a.role.human().is_some() && a.decided_at.instant() <= until)
    }
}

/// Every id text of a set, stored once in one buffer and numbered in order of first sight.
#[derive(Default)]
struct Symbols {
    /// The texts, one after another.
    text: String,
    /// Where each text ends in `text` (it starts where the one before ends).
    ends: Vec<u32>,
    /// The numbers, found by the hash of their text.
    table: HashTable<u32>,
    hasher: DefaultHashBuilder,
}

impl std::fmt::Debug for Symbols {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Symbols")
            .field("count", &self.ends.len())
            .finish_non_exhaustive()
    }
}

/// Text number `symbol` of a buffer whose texts end at `ends`.
fn text_in<'t>(buffer: &'t str, ends: &[u32], symbol: u32) -> &'t str {
    let symbol = symbol as usize;
    let start = symbol
        .checked_sub(1)
        .map_or(0, |before| ends[before] as usize);
    &buffer[start..ends[symbol] as usize]
}

impl Symbols {
    fn text(&self, symbol: u32) -> &str {
        text_in(&self.text, &self.ends, symbol)
    }

    fn find(&self, text: &str) -> Option<u32> {
        let hash = self.hasher.hash_one(text);
        self.table
            .find(hash, |&symbol| self.text(symbol) == text)
            .copied()
    }

    /// The number of `text`, given one when it is new; `None` once the buffer or the count
    /// passes `u32::MAX` (a set that size is not validated in memory).
    fn intern(&mut self, text: &str) -> Option<u32> {
        if let Some(symbol) = self.find(text) {
            return Some(symbol);
        }
        let symbol = u32::try_from(self.ends.len()).ok()?;
        let end = u32::try_from(self.text.len() + text.len()).ok()?;
        self.text.push_str(text);
        self.ends.push(end);
        let hash = self.hasher.hash_one(text);
        let Self {
            text: buffer,
            ends,
            table,
            hasher,
        } = self;
        // The table may rehash while the rest of `self` is borrowed: split the borrows.
        table.insert_unique(hash, symbol, |&held| {
            hasher.hash_one(text_in(buffer, ends, held))
        });
        Some(symbol)
    }
}

/// No document of that kind and id, or no id.
const NONE: u32 = u32::MAX;

/// Items per block of [`Blocks`].
const BLOCK: usize = 4096;

/// A list that grows in blocks and never moves what it holds: a `Vec` of 100,000 entries
/// doubling its way up copies them again and again and touches twice the memory it keeps.
#[derive(Debug)]
pub(crate) struct Blocks<T> {
    blocks: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for Blocks<T> {
    fn default() -> Self {
        Self {
            blocks: Vec::new(),
            len: 0,
        }
    }
}

impl<T> Blocks<T> {
    fn push(&mut self, item: T) {
        match self.blocks.last_mut() {
            Some(block) if block.len() < BLOCK => block.push(item),
            _ => {
                let mut block = Vec::with_capacity(BLOCK);
                block.push(item);
                self.blocks.push(block);
            }
        }
        self.len += 1;
    }

    pub fn len(&self) -> usize {
        self.len
    }

    fn get(&self, position: usize) -> &T {
        &self.blocks[position / BLOCK][position % BLOCK]
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.blocks.iter().flatten()
    }
}

/// The entries of a set, with ids resolved. Where an id appears with several versions of
/// one kind, the current document is the one with the highest version (the first of equal
/// ones).
#[derive(Debug, Default)]
pub(crate) struct Index {
    pub entries: Blocks<Entry>,
    symbols: Symbols,
    /// Per id number, per kind: the position in `entries` of the current document, or
    /// [`NONE`].
    current: Blocks<[u32; 5]>,
    /// Per TaskSeed id number, the positions in `entries` of its current PublishGates
    /// (through their Acceptance); built by [`Index::seal`].
    gates_by_task_seed: HashMap<u32, Vec<u32>>,
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

fn number(n: u32) -> Option<u32> {
    (n != NONE).then_some(n)
}

impl Index {
    fn intern(&mut self, text: Option<&str>) -> u32 {
        text.and_then(|t| self.symbols.intern(t)).unwrap_or(NONE)
    }

    /// Adds the next document's entry (entries arrive in set order).
    pub fn push(&mut self, loose: Loose) {
        let Loose {
            mut entry,
            id,
            reference,
        } = loose;
        entry.id = self.intern(id.as_deref());
        entry.reference = self.intern(reference.as_deref());
        let Ok(position) = u32::try_from(self.entries.len()) else {
            return;
        };
        if let Some(id) = number(entry.id) {
            let id = id as usize;
            while self.current.len() <= id {
                self.current.push([NONE; 5]);
            }
            let held = self.current.get(id)[slot(entry.kind)];
            let newer = held == NONE || entry.version > self.entries.get(held as usize).version;
            if newer {
                let block = &mut self.current.blocks[id / BLOCK];
                block[id % BLOCK][slot(entry.kind)] = position;
            }
        }
        self.entries.push(entry);
    }

    /// Builds the lookups that need every document; call once, after the last push.
    pub fn seal(&mut self) {
        let mut gates: HashMap<u32, Vec<u32>> = HashMap::new();
        for (position, gate) in self.entries.iter().enumerate() {
            if !gate.is(Kind::PublishGate) || !self.is_current(position) {
                continue;
            }
            if let Some(seed) = self
                .referenced(gate, Kind::Acceptance)
                .and_then(|acceptance| number(acceptance.reference))
                && let Ok(position) = u32::try_from(position)
            {
                gates.entry(seed).or_default().push(position);
            }
        }
        self.gates_by_task_seed = gates;
    }

    fn is_current(&self, position: usize) -> bool {
        let entry = self.entries.get(position);
        number(entry.id)
            .and_then(|id| self.current_slots(id))
            .is_some_and(|slots| slots[slot(entry.kind)] as usize == position)
    }

    fn current_slots(&self, id: u32) -> Option<&[u32; 5]> {
        let id = id as usize;
        (id < self.current.len()).then(|| self.current.get(id))
    }

    fn current_by_number(&self, id: u32, kind: Kind) -> Option<&Entry> {
        let position = number(self.current_slots(id)?[slot(kind)])?;
        Some(self.entries.get(position as usize))
    }

    /// The number of an entry's `id` in this index, when it is a string: equal ids,
    /// equal numbers.
    pub fn id_number(&self, entry: &Entry) -> Option<u32> {
        number(entry.id)
    }

    /// The `id` of an entry, when it is a string.
    pub fn id(&self, entry: &Entry) -> Option<&str> {
        number(entry.id).map(|n| self.symbols.text(n))
    }

    /// The `id` of an entry, or `?` in messages.
    pub fn name(&self, entry: &Entry) -> &str {
        self.id(entry).unwrap_or("?")
    }

    /// The id an entry references, when it is a string.
    pub fn reference(&self, entry: &Entry) -> Option<&str> {
        number(entry.reference).map(|n| self.symbols.text(n))
    }

    /// The current document of `kind` with this id.
    pub fn resolve(&self, id: &str, kind: Kind) -> Option<&Entry> {
        self.current_by_number(self.symbols.find(id)?, kind)
    }

    /// The current document of `kind` that `entry` references.
    pub fn referenced(&self, entry: &Entry, kind: Kind) -> Option<&Entry> {
        self.current_by_number(number(entry.reference)?, kind)
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

    /// The current PublishGates of the TaskSeed an entry references (through their
    /// Acceptance).
    pub fn gates_of_referenced_seed(&self, entry: &Entry) -> impl Iterator<Item = &Entry> {
        number(entry.reference)
            .and_then(|seed| self.gates_by_task_seed.get(&seed))
            .into_iter()
            .flatten()
            .map(|&position| self.entries.get(position as usize))
    }

    /// The current PublishGates of the TaskSeed with this id (through their Acceptance).
    pub fn gates_of_task_seed(&self, task_seed: &str) -> impl Iterator<Item = &Entry> {
        self.symbols
            .find(task_seed)
            .and_then(|seed| self.gates_by_task_seed.get(&seed))
            .into_iter()
            .flatten()
            .map(|&position| self.entries.get(position as usize))
    }

    /// The TaskSeed behind a gate (gate -> Acceptance -> TaskSeed) and its capability
    /// snapshot.
    pub fn gate_capabilities(&self, gate: &Entry) -> Option<(&Entry, &[Capability])> {
        let acceptance = self.referenced(gate, Kind::Acceptance)?;
        let seed = self.referenced(acceptance, Kind::TaskSeed)?;
        Some((seed, seed.capability_snapshot()?))
    }
}
