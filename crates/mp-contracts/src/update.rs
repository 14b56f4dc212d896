//! Changes to a contract document, checked as transitions: two versions of one document
//! (or a new one, or a deleted one) against the validator, the state machine and the rules
//! on identity, versions, terminal states, publishing and Evidence (decisions/0037).
//!
//! Errors name the document by index: [`BEFORE`] (the earlier version), [`AFTER`] (the
//! later one) and, from [`FIRST_CONTEXT`] on, the context documents in order.
//!
//! | code | rule |
//! |---|---|
//! | schema and rule codes | both versions are valid; the later one within the context set |
//! | `id-changed`, `kind-changed` | a document keeps its `id` and `kind` |
//! | `evidence-changed` | an Evidence never changes, in any field |
//! | `archived-changed` | an Archived contract never changes |
//! | `terminal-state-left` | Superseded and Revoked only move on to Archived |
//! | `illegal-transition` | the state change is a row of the state machine |
//! | `version-lowered`, `version-not-raised` | a changed document raises its version |
//! | `version-not-greater` | superseding raises the version |
//! | `gate-not-approved` | an IC/TS/AC moves to Published only with an approved gate in the context |
//! | `initial-state-invalid` | a new document starts in a state its kind may start in |
//! | `contract-deleted` | a contract is archived, never deleted |

use std::collections::BTreeSet;

use serde_json::Value;

use crate::error::{ContractError, codes, push_token};
use crate::kinds::{FinalDecision, Kind, State};
use crate::lifecycle::{self, Guard, TransitionContext};
use crate::rules::{Doc, Entry, Index};
use crate::{validate_document, validate_set};

/// The document index of the earlier version.
pub const BEFORE: usize = 0;
/// The document index of the later version (or of the new document).
pub const AFTER: usize = 1;
/// The document index of the first context document; the others follow in order.
pub const FIRST_CONTEXT: usize = 2;

/// One change to a contract document.
#[derive(Debug, Clone, Copy)]
pub enum Change<'a> {
    /// A document that did not exist before.
    Added {
        /// The new document.
        after: &'a Value,
    },
    /// A document that exists in both versions (possibly unchanged).
    Modified {
        /// The earlier version.
        before: &'a Value,
        /// The later version.
        after: &'a Value,
    },
    /// A document that no longer exists.
    Deleted {
        /// The last version.
        before: &'a Value,
    },
}

/// The states a contract never leaves except to be archived.
const TERMINAL: [State; 2] = [State::Superseded, State::Revoked];

/// Every reason to refuse `change`, ordered by document then pointer; empty when allowed.
///
/// `context` holds the other contract documents the change may rely on (the PublishGate
/// that lets an Acceptance be Published, the source of a new TaskSeed). When it is not
/// empty, the later version is validated together with it as a closed set
/// ([`validate_set`]) and only the later version's errors are kept; otherwise it is
/// validated alone. Activation approvals and reasons live outside the documents
/// (decisions/0016), so the guards that need them are not checked here.
pub fn check_change(change: Change<'_>, context: &[Value]) -> Vec<ContractError> {
    let mut errors = Vec::new();
    match change {
        Change::Added { after } => {
            errors.extend(validate_after(after, context));
            initial_state(&Doc::new(AFTER, after), context, &mut errors);
        }
        Change::Modified { before, after } => {
            errors.extend(validate_document(before).into_iter().map(|mut e| {
                e.document = BEFORE;
                e
            }));
            errors.extend(validate_after(after, context));
            if before != after {
                modified(
                    &Doc::new(BEFORE, before),
                    &Doc::new(AFTER, after),
                    context,
                    &mut errors,
                );
            }
        }
        Change::Deleted { before } => {
            let doc = Doc::new(BEFORE, before);
            errors.push(doc.error(
                "",
                codes::CONTRACT_DELETED,
                format!(
                    "{} {} is deleted: a contract is archived, never deleted",
                    doc.kind.map_or("contract", Kind::as_str),
                    doc.id().unwrap_or("without an id")
                ),
            ));
        }
    }
    errors.sort_by(|a, b| {
        a.document
            .cmp(&b.document)
            .then_with(|| a.pointer.cmp(&b.pointer))
    });
    errors
}

/// The later version's own problems, alone or within the context set.
fn validate_after(after: &Value, context: &[Value]) -> Vec<ContractError> {
    let errors = if context.is_empty() {
        validate_document(after)
    } else {
        let mut set = Vec::with_capacity(context.len() + 1);
        set.push(after.clone());
        set.extend(context.iter().cloned());
        validate_set(&set)
            .into_iter()
            .filter(|e| e.document == 0)
            .collect()
    };
    errors
        .into_iter()
        .map(|mut e| {
            e.document = AFTER;
            e
        })
        .collect()
}

fn state(doc: &Doc<'_>) -> Option<State> {
    doc.get("/state")
}

fn modified(before: &Doc<'_>, after: &Doc<'_>, context: &[Value], errors: &mut Vec<ContractError>) {
    if let (Some(old), Some(new)) = (before.id(), after.id())
        && old != new
    {
        errors.push(after.error(
            "/id",
            codes::ID_CHANGED,
            format!("id changed from {old} to {new}: a change keeps the id"),
        ));
    }
    let (Some(kind), Some(new_kind)) = (before.kind, after.kind) else {
        return;
    };
    if kind != new_kind {
        errors.push(after.error(
            "/kind",
            codes::KIND_CHANGED,
            format!("kind changed from {kind} to {new_kind}: a change keeps the kind"),
        ));
        return;
    }
    if kind == Kind::Evidence {
        for pointer in differences(before.json, after.json) {
            errors.push(after.error(
                pointer.clone(),
                codes::EVIDENCE_CHANGED,
                format!("Evidence is immutable, but {} changed", shown(&pointer)),
            ));
        }
        return;
    }
    let (Some(old_state), Some(new_state)) = (state(before), state(after)) else {
        return;
    };
    if old_state == State::Archived {
        for pointer in differences(before.json, after.json) {
            errors.push(after.error(
                pointer.clone(),
                codes::ARCHIVED_CHANGED,
                format!(
                    "{kind} is Archived and never changes, but {} changed",
                    shown(&pointer)
                ),
            ));
        }
        return;
    }
    let superseding = old_state == State::Published && new_state == State::Superseded;
    if !superseding {
        version_raised(before, after, errors);
    }
    if old_state == new_state {
        return;
    }
    if TERMINAL.contains(&old_state) && new_state != State::Archived {
        errors.push(after.error(
            "/state",
            codes::TERMINAL_STATE_LEFT,
            format!("{kind} cannot leave {old_state} for {new_state}: only Archived may follow"),
        ));
        return;
    }
    match lifecycle::guard(kind, old_state, new_state) {
        Err(e) => errors.push(after.error("/state", e.code, e.message)),
        Ok(Guard::GateApproved) => {
            if let Some(e) = publish_gate(kind, after, context) {
                errors.push(e);
            }
        }
        Ok(Guard::HigherVersion) => {
            let guard_context = TransitionContext {
                current_version: before.version(),
                successor_version: after.version(),
                ..TransitionContext::default()
            };
            if let Err(e) = lifecycle::transition(kind, old_state, new_state, &guard_context) {
                errors.push(after.error("/version", e.code, e.message));
            }
        }
        // A gate's own Active -> Published is implied by its validity
        // (`published-gate-not-final`, `required-approval-missing`); activation approvals
        // and reasons are recorded outside the documents.
        Ok(_) => {}
    }
}

/// A changed document raises its version; it never lowers it.
fn version_raised(before: &Doc<'_>, after: &Doc<'_>, errors: &mut Vec<ContractError>) {
    let (Some(old), Some(new)) = (before.version(), after.version()) else {
        return;
    };
    if new < old {
        errors.push(after.error(
            "/version",
            codes::VERSION_LOWERED,
            format!("version went down from {old} to {new}"),
        ));
    } else if new == old {
        errors.push(after.error(
            "/version",
            codes::VERSION_NOT_RAISED,
            format!("the document changed but its version stayed {old}"),
        ));
    }
}

/// `None` when an IC/TS/AC may be Published: a current PublishGate of it in the context is
/// valid, Active or Published, and decided `approved`.
fn publish_gate(kind: Kind, after: &Doc<'_>, context: &[Value]) -> Option<ContractError> {
    let id = after.id()?;
    let set = context_set(context);
    let entries: Vec<&Entry> = match kind {
        Kind::Acceptance => set
            .current_of(Kind::PublishGate)
            .filter(|gate| set.reference(gate) == Some(id))
            .collect(),
        Kind::TaskSeed => set.gates_of_task_seed(id).collect(),
        Kind::IntentContract => set
            .current_of(Kind::TaskSeed)
            .filter(|seed| set.reference(seed) == Some(id))
            .filter_map(|seed| set.id(seed))
            .flat_map(|seed| set.gates_of_task_seed(seed))
            .collect(),
        Kind::PublishGate | Kind::Evidence => return None,
    };
    let gates: Vec<Doc<'_>> = entries
        .iter()
        .map(|entry| Doc::new(entry.index, &context[entry.index]))
        .collect();
    let decision = |gate: &Doc<'_>| gate.get::<FinalDecision>("/finalDecision");
    let approved = |gate: &Doc<'_>| {
        decision(gate) == Some(FinalDecision::Approved)
            && matches!(state(gate), Some(State::Active | State::Published))
            && validate_document(gate.json).is_empty()
    };
    if gates.iter().any(approved) {
        return None;
    }
    let Some(gate) = gates.first() else {
        return Some(after.error(
            "/state",
            codes::GATE_NOT_APPROVED,
            format!(
                "{kind} {id} cannot be Published: no PublishGate of it among the context documents"
            ),
        ));
    };
    let gate_id = gate.id().unwrap_or("without an id");
    let state_name = state(gate).map_or("unknown", State::as_str);
    let message = match decision(gate) {
        Some(FinalDecision::Approved) if validate_document(gate.json).is_empty() => format!(
            "{kind} {id} cannot be Published: its gate {gate_id} is approved but {state_name}"
        ),
        Some(FinalDecision::Approved) => {
            format!("{kind} {id} cannot be Published: its gate {gate_id} is approved but not valid")
        }
        other => {
            let guard_context = TransitionContext {
                gate_decision: other,
                ..TransitionContext::default()
            };
            match lifecycle::transition(kind, State::Active, State::Published, &guard_context) {
                Err(e) => format!("{} ({gate_id})", e.message),
                Ok(()) => format!("{kind} {id} cannot be Published by {gate_id}"),
            }
        }
    };
    Some(after.error("/state", codes::GATE_NOT_APPROVED, message))
}

/// The index of the context documents; entries keep their position in `context`.
fn context_set(context: &[Value]) -> Index {
    let mut index = Index::default();
    for (i, json) in context.iter().enumerate() {
        if let Some(entry) = Entry::of(&Doc::new(i, json)) {
            index.push(entry);
        }
    }
    index.seal();
    index
}

/// A new document starts where its kind may start: an IntentContract Draft; a TaskSeed or
/// Acceptance Draft, or Active when its policy auto-activates and its source (when in the
/// context) is Active; a PublishGate Active, or Published when decided `approved` without
/// required approvals. Evidence is left to `evidence-not-published`.
fn initial_state(after: &Doc<'_>, context: &[Value], errors: &mut Vec<ContractError>) {
    let (Some(kind), Some(state)) = (after.kind, state(after)) else {
        return;
    };
    let allowed = match kind {
        Kind::IntentContract => state == State::Draft,
        Kind::TaskSeed | Kind::Acceptance => {
            let (source_pointer, source_kind) = if kind == Kind::TaskSeed {
                ("/intentId", Kind::IntentContract)
            } else {
                ("/taskSeedId", Kind::TaskSeed)
            };
            let set = context_set(context);
            let source = after
                .str(source_pointer)
                .and_then(|id| set.resolve(id, source_kind))
                .map_or(Some(State::Active), |entry| {
                    self::state(&Doc::new(entry.index, &context[entry.index]))
                });
            let auto_activate = after
                .get::<bool>("/generationPolicy/auto_activate")
                .unwrap_or(false);
            state == State::Draft
                || source.is_some_and(|source| {
                    state == lifecycle::initial_generated_state(source, auto_activate)
                })
        }
        Kind::PublishGate => {
            state == State::Active
                || (state == State::Published
                    && after.array("/requiredApprovals").is_some_and(Vec::is_empty)
                    && after.get::<FinalDecision>("/finalDecision")
                        == Some(FinalDecision::Approved))
        }
        Kind::Evidence => true,
    };
    if !allowed {
        let expected = match kind {
            Kind::IntentContract => "Draft",
            Kind::TaskSeed | Kind::Acceptance => {
                "Draft, or Active when its policy auto-activates and its source is Active"
            }
            Kind::PublishGate => "Active, or Published when approved without required approvals",
            Kind::Evidence => "Published",
        };
        errors.push(after.error(
            "/state",
            codes::INITIAL_STATE_INVALID,
            format!("a new {kind} cannot start {state}: it starts {expected}"),
        ));
    }
}

/// The RFC 6901 pointers where two documents differ: a key on one side only, an array of
/// another length or a different scalar is one pointer; equal parts give none.
fn differences(before: &Value, after: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk(before, after, "", &mut out);
    out
}

fn walk(before: &Value, after: &Value, pointer: &str, out: &mut Vec<String>) {
    match (before, after) {
        (Value::Object(old), Value::Object(new)) => {
            let keys: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
            for key in keys {
                let at = push_token(pointer, key);
                match (old.get(key.as_str()), new.get(key.as_str())) {
                    (Some(a), Some(b)) => walk(a, b, &at, out),
                    _ => out.push(at),
                }
            }
        }
        (Value::Array(old), Value::Array(new)) if old.len() == new.len() => {
            for (i, (a, b)) in old.iter().zip(new).enumerate() {
                walk(a, b, &push_token(pointer, &i.to_string()), out);
            }
        }
        (a, b) if a == b => {}
        _ => out.push(pointer.to_owned()),
    }
}

fn shown(pointer: &str) -> &str {
    if pointer.is_empty() {
        "the document"
    } else {
        pointer
    }
}

#[cfg(test)]
mod tests;
