//! The semantic rules: what the schemas cannot say. One module per rule code.
//!
//! Document rules look at one document; set rules look across the documents validated
//! together (references, capability chains, approvals snapshots). Every rule reads only
//! the fields it needs and stays silent when one of them is missing or malformed: the
//! schema layer already reports that, so a broken document still gets every other finding.

pub(crate) mod approval_matrix_mismatch;
pub(crate) mod approvals_snapshot_mismatch;
pub(crate) mod approvals_snapshot_required;
pub(crate) mod auto_activate_requires_approvals;
pub(crate) mod capabilities_snapshot_mismatch;
pub(crate) mod dangling_reference;
pub(crate) mod deadline_required;
pub(crate) mod duplicate_contract;
pub(crate) mod evidence_not_published;
pub(crate) mod final_decision_required;
pub(crate) mod gate_for_unpassed_acceptance;
pub(crate) mod generation_policy_too_permissive;
pub(crate) mod published_gate_not_final;
pub(crate) mod required_approval_missing;
pub(crate) mod risk_below_capability_floor;
pub(crate) mod start_after_end;

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;

use crate::error::ContractError;
use crate::kinds::{Capability, Kind, Version};

/// One document under validation, read leniently.
pub(crate) struct Doc<'a> {
    /// Its index in the validated slice.
    pub index: usize,
    /// The document.
    pub json: &'a Value,
    /// Its `kind`, when that names one of the five kinds.
    pub kind: Option<Kind>,
    id: Option<&'a str>,
    version: Option<Version>,
}

/// The value at an RFC 6901 `pointer`, without allocating for tokens that need no
/// unescaping (`serde_json::Value::pointer` allocates for every token).
pub(crate) fn lookup<'a>(json: &'a Value, pointer: &str) -> Option<&'a Value> {
    if pointer.is_empty() {
        return Some(json);
    }
    let mut current = json;
    for token in pointer.strip_prefix('/')?.split('/') {
        current = match current {
            Value::Object(map) if token.contains('~') => {
                map.get(&token.replace("~1", "/").replace("~0", "~"))?
            }
            Value::Object(map) => map.get(token)?,
            Value::Array(items) => items.get(token.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(current)
}

impl<'a> Doc<'a> {
    pub fn new(index: usize, json: &'a Value) -> Self {
        let kind = json
            .get("kind")
            .and_then(Value::as_str)
            .and_then(Kind::from_name);
        let id = json.get("id").and_then(Value::as_str);
        let version = json
            .get("version")
            .and_then(|v| Version::deserialize(v).ok());
        Self {
            index,
            json,
            kind,
            id,
            version,
        }
    }

    /// The value at `pointer` as `T`, or `None` when it is absent or does not fit.
    pub fn get<T: Deserialize<'a>>(&self, pointer: &str) -> Option<T> {
        T::deserialize(lookup(self.json, pointer)?).ok()
    }

    /// The string at `pointer`.
    pub fn str(&self, pointer: &str) -> Option<&'a str> {
        lookup(self.json, pointer).and_then(Value::as_str)
    }

    /// The array at `pointer`.
    pub fn array(&self, pointer: &str) -> Option<&'a Vec<Value>> {
        lookup(self.json, pointer).and_then(Value::as_array)
    }

    /// True for a document of `kind`.
    pub fn is(&self, kind: Kind) -> bool {
        self.kind == Some(kind)
    }

    /// The `id`, when it is a string.
    pub fn id(&self) -> Option<&'a str> {
        self.id
    }

    /// `version`, when it is a valid one.
    pub fn version(&self) -> Option<Version> {
        self.version
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
}

/// The documents validated together, with their ids resolved.
pub(crate) struct Set<'a> {
    pub docs: Vec<Doc<'a>>,
    /// (kind, id) -> index of the document with the highest version carrying it.
    current: HashMap<(Kind, &'a str), usize>,
    /// TaskSeed id -> current PublishGates whose Acceptance belongs to it.
    gates_by_task_seed: HashMap<&'a str, Vec<usize>>,
}

impl<'a> Set<'a> {
    /// Indexes documents read with [`Doc::new`], in slice order.
    pub fn new(docs: Vec<Doc<'a>>) -> Self {
        let mut current: HashMap<(Kind, &'a str), usize> = HashMap::new();
        for doc in &docs {
            let (Some(id), Some(kind)) = (doc.id(), doc.kind) else {
                continue;
            };
            let newer = match current.get(&(kind, id)) {
                Some(&held) => doc.version() > docs[held].version(),
                None => true,
            };
            if newer {
                current.insert((kind, id), doc.index);
            }
        }
        let mut set = Self {
            docs,
            current,
            gates_by_task_seed: HashMap::new(),
        };
        let mut gates: HashMap<&'a str, Vec<usize>> = HashMap::new();
        for gate in set.current_of(Kind::PublishGate) {
            if let Some(seed) = set
                .referenced(gate, "/entityId", Kind::Acceptance)
                .and_then(|acceptance| acceptance.str("/taskSeedId"))
            {
                gates.entry(seed).or_default().push(gate.index);
            }
        }
        set.gates_by_task_seed = gates;
        set
    }

    /// The current (highest-version) document of `kind` with this id.
    pub fn resolve(&self, id: &str, kind: Kind) -> Option<&Doc<'a>> {
        self.current.get(&(kind, id)).map(|&i| &self.docs[i])
    }

    /// The current document of `kind` that `doc` references at `pointer`.
    pub fn referenced(&self, doc: &Doc<'a>, pointer: &str, kind: Kind) -> Option<&Doc<'a>> {
        self.resolve(doc.str(pointer)?, kind)
    }

    /// The documents of `kind` that are the current version of their id.
    pub fn current_of(&self, kind: Kind) -> impl Iterator<Item = &Doc<'a>> {
        self.docs.iter().filter(move |doc| {
            doc.is(kind)
                && doc.id().and_then(|id| self.current.get(&(kind, id))) == Some(&doc.index)
        })
    }

    /// Every document of `kind`.
    pub fn all_of(&self, kind: Kind) -> impl Iterator<Item = &Doc<'a>> {
        self.docs.iter().filter(move |doc| doc.is(kind))
    }

    /// The current PublishGates of a TaskSeed (through their Acceptance).
    pub fn gates_of_task_seed(&self, task_seed: &str) -> impl Iterator<Item = &Doc<'a>> {
        self.gates_by_task_seed
            .get(task_seed)
            .into_iter()
            .flatten()
            .map(|&i| &self.docs[i])
    }

    /// The capability snapshot of the TaskSeed behind a gate (gate -> Acceptance -> TaskSeed).
    pub fn gate_capabilities(&self, gate: &Doc<'a>) -> Option<(&Doc<'a>, Vec<Capability>)> {
        let acceptance = self.referenced(gate, "/entityId", Kind::Acceptance)?;
        let seed = self.referenced(acceptance, "/taskSeedId", Kind::TaskSeed)?;
        let capabilities = seed.get("/requestedCapabilitiesSnapshot")?;
        Some((seed, capabilities))
    }
}

/// A rule over one document.
pub(crate) type DocumentRule = fn(&Doc<'_>, &mut Vec<ContractError>);
/// A rule across the documents of a set.
pub(crate) type SetRule = fn(&Set<'_>, &mut Vec<ContractError>);

/// Every document rule, in report order.
pub(crate) const DOCUMENT_RULES: &[DocumentRule] = &[
    auto_activate_requires_approvals::check,
    generation_policy_too_permissive::check,
    deadline_required::check,
    final_decision_required::check,
    required_approval_missing::check,
    approval_matrix_mismatch::check,
    published_gate_not_final::check,
    start_after_end::check,
    evidence_not_published::check,
    approvals_snapshot_required::check,
];

/// Every set rule, in report order.
pub(crate) const SET_RULES: &[SetRule] = &[
    duplicate_contract::check_set,
    dangling_reference::check_set,
    capabilities_snapshot_mismatch::check_set,
    generation_policy_too_permissive::check_set,
    gate_for_unpassed_acceptance::check_set,
    risk_below_capability_floor::check_set,
    approvals_snapshot_required::check_set,
    approvals_snapshot_mismatch::check_set,
];

/// `[a, b]` for messages.
pub(crate) fn bracket<T: std::fmt::Display>(items: impl IntoIterator<Item = T>) -> String {
    let inner: Vec<String> = items.into_iter().map(|i| i.to_string()).collect();
    format!("[{}]", inner.join(", "))
}
