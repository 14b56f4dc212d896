//! Validation entry points: one document, a set of documents, and typed parsing.

use serde::Deserialize;
use serde_json::Value;

use crate::error::{ContractError, codes};
use crate::kinds::Contract;
use crate::rules::{DOCUMENT_RULES, Doc, SET_RULES, Set};
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
pub fn validate_set(docs: &[Value]) -> Vec<ContractError> {
    let docs: Vec<Doc<'_>> = docs
        .iter()
        .enumerate()
        .map(|(index, json)| Doc::new(index, json))
        .collect();
    let mut errors = Vec::new();
    for doc in &docs {
        errors.extend(document_errors(doc));
    }
    let set = Set::new(docs);
    for rule in SET_RULES {
        rule(&set, &mut errors);
    }
    errors.sort_by(|a, b| {
        a.document
            .cmp(&b.document)
            .then_with(|| a.pointer.cmp(&b.pointer))
    });
    errors
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
