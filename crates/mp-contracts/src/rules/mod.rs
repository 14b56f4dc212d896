//! The semantic rules: what the schemas cannot say. One module per rule code.
//!
//! Document rules look at one document; set rules look across the documents validated
//! together (references, capability chains, approvals snapshots), through the compact
//! [`Index`] of the set rather than the documents themselves. Every rule reads only
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
pub(crate) mod index;
pub(crate) mod published_gate_not_final;
pub(crate) mod required_approval_missing;
pub(crate) mod risk_below_capability_floor;
pub(crate) mod start_after_end;

use serde::Deserialize;
use serde_json::Value;

use crate::error::ContractError;
use crate::kinds::{Kind, Version};
pub(crate) use index::{Entry, Index, Loose};

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

/// A rule over one document.
pub(crate) type DocumentRule = fn(&Doc<'_>, &mut Vec<ContractError>);
/// A rule across the documents of a set.
pub(crate) type SetRule = fn(&Index, &mut Vec<ContractError>);

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
