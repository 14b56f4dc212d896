//! Validation entry points: one document, a set of documents, and typed parsing.

use serde::Deserialize;
use serde_json::Value;

use crate::error::{ContractError, codes};
use crate::kinds::Contract;
use crate::rules::{DOCUMENT_RULES, Doc, Entry, Index, Loose, SET_RULES};
use crate::schema;

/// Every problem of one document: its schema errors (at most one per pointer) and every
/// document rule. Errors carry document index 0 and are ordered by pointer. Cross-document
/// rules (references, capability chains, approvals snapshots) need [`validate_set`].
pub fn validate_document(json: &Value) -> Vec<ContractError> {
    document_errors(&Doc::new(0, json))
}

/// Every problem of every document, plus the rules across them. The set is closed: a
/// reference to a contract that is not in it is `dangling-reference`. Where an id appears
/// with several versions, references resolve to the highest. Errors are ordered by
/// document index, then pointer.
///
/// The same as adding every document to a [`SetValidator`] and finishing it; use that
/// directly to validate a set too large to hold in memory.
pub fn validate_set(docs: &[Value]) -> Vec<ContractError> {
    let mut set = SetValidator::new();
    let mut errors = Vec::new();
    for json in docs {
        errors.extend(set.add(json));
    }
    errors.extend(set.finish());
    sort(&mut errors);
    errors
}

fn sort(errors: &mut [ContractError]) {
    errors.sort_by(|a, b| {
        a.document
            .cmp(&b.document)
            .then_with(|| a.pointer.cmp(&b.pointer))
    });
}

/// One document checked on its own, and reduced to the few facts the rules across
/// documents need: what [`check_document`] returns and [`SetValidator::push`] takes.
///
/// It holds no reference to the document, so documents can be parsed and checked on
/// several threads and dropped at once, then pushed in order.
#[derive(Debug, Clone)]
pub struct CheckedDocument {
    errors: Vec<ContractError>,
    entry: Option<Loose>,
}

impl CheckedDocument {
    /// The document's own problems (schema and document rules), with document index 0.
    pub fn errors(&self) -> &[ContractError] {
        &self.errors
    }
}

/// Checks one document on its own (as [`validate_document`] does) and keeps what the set
/// rules need from it.
pub fn check_document(json: &Value) -> CheckedDocument {
    let doc = Doc::new(0, json);
    CheckedDocument {
        errors: document_errors(&doc),
        entry: Entry::of(&doc),
    }
}

/// A set validated one document at a time: each document is checked as it is added, and
/// the rules across documents run at [`SetValidator::finish`] over a compact index (ids,
/// references, capability and approval snapshots), never over the documents themselves.
/// Memory grows by a few dozen bytes per document rather than by the documents.
///
/// ```
/// use mp_contracts::SetValidator;
///
/// let mut set = SetValidator::new();
/// let seed = serde_json::json!({"kind": "TaskSeed", "id": "TS-1", "intentId": "IC-9"});
/// let own = set.add(&seed);
/// assert!(own.iter().all(|e| e.document == 0));
/// let across = set.finish();
/// assert!(across.iter().any(|e| e.code == "dangling-reference"));
/// ```
#[derive(Debug, Default)]
pub struct SetValidator {
    index: Index,
    count: usize,
}

impl SetValidator {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Checks the next document and adds it to the set; returns its own problems, with
    /// its position in the set as document index.
    pub fn add(&mut self, json: &Value) -> Vec<ContractError> {
        self.push(check_document(json))
    }

    /// Adds the next document, already checked by [`check_document`]; returns its own
    /// problems with its position in the set as document index.
    pub fn push(&mut self, checked: CheckedDocument) -> Vec<ContractError> {
        let index = self.count;
        self.count += 1;
        if let Some(mut loose) = checked.entry {
            loose.entry.index = index;
            self.index.push(loose);
        }
        let mut errors = checked.errors;
        for e in &mut errors {
            e.document = index;
        }
        errors
    }

    /// How many documents were added.
    pub fn len(&self) -> usize {
        self.count
    }

    /// True when no document was added.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Runs the rules across the documents; returns their problems, ordered by document
    /// index, then pointer.
    pub fn finish(mut self) -> Vec<ContractError> {
        self.index.seal();
        let mut errors = Vec::new();
        for rule in SET_RULES {
            rule(&self.index, &mut errors);
        }
        sort(&mut errors);
        errors
    }
}

/// Validates one document and, when it has no problem, reads it as a typed [`Contract`].
///
/// # Errors
/// Returns every problem [`validate_document`] finds.
pub fn parse_document(json: &Value) -> Result<Contract, Vec<ContractError>> {
    let errors = validate_document(json);
    if !errors.is_empty() {
        return Err(errors);
    }
    typed(0, json).map_err(|e| vec![e])
}

/// Validates a set and, when it has no problem, reads every document as a typed
/// [`Contract`], in order.
///
/// # Errors
/// Returns every problem [`validate_set`] finds.
pub fn parse_set(docs: &[Value]) -> Result<Vec<Contract>, Vec<ContractError>> {
    let errors = validate_set(docs);
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut contracts = Vec::with_capacity(docs.len());
    let mut failures = Vec::new();
    for (index, json) in docs.iter().enumerate() {
        match typed(index, json) {
            Ok(contract) => contracts.push(contract),
            Err(e) => failures.push(e),
        }
    }
    if failures.is_empty() {
        Ok(contracts)
    } else {
        Err(failures)
    }
}

/// Reads a valid document; fails only for what the types cannot hold (a version above
/// `u64::MAX`).
fn typed(index: usize, json: &Value) -> Result<Contract, ContractError> {
    Contract::deserialize(json)
        .map_err(|e| ContractError::new(index, "", codes::SCHEMA, format!("cannot read: {e}")))
}

fn document_errors(doc: &Doc<'_>) -> Vec<ContractError> {
    let mut semantic = Vec::new();
    for rule in DOCUMENT_RULES {
        rule(doc, &mut semantic);
    }
    let mut errors = schema::check(doc.index, doc.json, doc.kind);
    // The conditional rules are in both layers; report each finding once.
    errors.retain(|e| {
        !semantic
            .iter()
            .any(|s| s.pointer == e.pointer && s.code == e.code)
    });
    errors.extend(semantic);
    errors.sort_by(|a, b| a.pointer.cmp(&b.pointer));
    errors
}

#[cfg(test)]
mod tests;
