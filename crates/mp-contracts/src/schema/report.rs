//! Turns the validator's errors into `ContractError`s with our codes and messages.
//!
//! A 2020-12 validator reports some failures more than once: a failing `allOf` branch also
//! makes every property it declared "unevaluated", and a value can fail both the common and
//! the kind-specific constraint. So unevaluated properties are reported only when no schema
//! of the kind declares them, and only the most telling error per pointer is kept.

use std::collections::BTreeSet;

use jsonschema::ValidationError;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::Value;

use crate::error::{ContractError, codes, push_token};
use crate::kinds::DateTime;

/// One mapped error and how strongly it is preferred at its pointer (lower wins).
struct Candidate {
    error: ContractError,
    rank: u8,
}

pub(super) fn collect<'a>(
    document: usize,
    json: &Value,
    errors: impl Iterator<Item = ValidationError<'a>>,
    known: Option<&BTreeSet<String>>,
) -> Vec<ContractError> {
    let mut candidates = Vec::new();
    for error in errors {
        map(document, json, &error, known, &mut candidates);
    }
    // Stable: equal ranks keep the validator's order.
    candidates.sort_by(|a, b| {
        a.error
            .pointer
            .cmp(&b.error.pointer)
            .then(a.rank.cmp(&b.rank))
    });
    let mut out: Vec<ContractError> = Vec::with_capacity(candidates.len());
    for candidate in candidates {
        if out
            .last()
            .is_some_and(|e| e.pointer == candidate.error.pointer)
        {
            continue;
        }
        out.push(candidate.error);
    }
    out
}

/// A value as a message quotes it: strings in backticks, long values shortened.
pub(crate) fn quote(value: &Value) -> String {
    const LIMIT: usize = 60;
    let text = match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let text = text.replace('\n', "\\n");
    if text.chars().count() > LIMIT {
        let cut: String = text.chars().take(LIMIT).collect();
        format!("`{cut}…`")
    } else {
        format!("`{text}`")
    }
}

/// A JSON array as a message lists it: `[a, b]` (strings unquoted).
pub(crate) fn quote_list(value: &Value) -> String {
    format!("[{}]", list(value))
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn list(options: &Value) -> String {
    options
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

fn first_repeated(value: &Value) -> Option<&Value> {
    let items = value.as_array()?;
    items
        .iter()
        .enumerate()
        .find(|(i, item)| items[..*i].contains(item))
        .map(|(_, item)| item)
}

/// The conditional (if/then) code of an error raised inside a `then` branch.
fn conditional_code(pointer: &str) -> Option<&'static str> {
    if pointer.ends_with("/requiredActivationApprovals") {
        Some(codes::AUTO_ACTIVATE_REQUIRES_APPROVALS)
    } else if pointer == "/approvalDeadline" {
        Some(codes::DEADLINE_REQUIRED)
    } else if pointer == "/finalDecision" {
        Some(codes::FINAL_DECISION_REQUIRED)
    } else {
        None
    }
}

fn map(
    document: usize,
    json: &Value,
    error: &ValidationError<'_>,
    known: Option<&BTreeSet<String>>,
    out: &mut Vec<Candidate>,
) {
    let at = error.instance_path().as_str();
    let value = error.instance();
    let in_then = error.evaluation_path().as_str().contains("/then/");
    let mut push = |pointer: String, code: &'static str, message: String, rank: u8| {
        out.push(Candidate {
            error: ContractError::new(document, pointer, code, message),
            rank,
        });
    };
    match error.kind() {
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().unwrap_or_default();
            let pointer = push_token(at, name);
            match conditional_code(&pointer).filter(|_| in_then) {
                Some(code) => push(pointer, code, conditional_message(code, json), 3),
                None => push(pointer, codes::REQUIRED, format!("`{name}` is required"), 1),
            }
        }
        ValidationErrorKind::UnevaluatedProperties { unexpected } => {
            for name in unexpected {
                if known.is_some_and(|k| k.contains(name)) {
                    // Declared by a branch that failed for another reason: noise.
                    continue;
                }
                push(
                    push_token(at, name),
                    codes::UNEVALUATED_PROPERTY,
                    format!("`{name}` is not a property of this contract kind"),
                    2,
                );
            }
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            for name in unexpected {
                push(
                    push_token(at, name),
                    codes::ADDITIONAL_PROPERTY,
                    format!("`{name}` is not a property of this object"),
                    2,
                );
            }
        }
        ValidationErrorKind::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(t) => t.to_string(),
                TypeKind::Multiple(_) => "another type".to_owned(),
            };
            let message = format!(
                "expected {expected}, found {} {}",
                type_name(value),
                quote(value)
            );
            push(at.to_owned(), codes::TYPE, message, 0);
        }
        ValidationErrorKind::Pattern { pattern } => {
            let message = format!("{} does not match {pattern}", quote(value));
            // The kind-specific pattern names the prefix; prefer it over the common one.
            let rank = if pattern.starts_with("^[A-Z]") { 2 } else { 1 };
            push(at.to_owned(), codes::PATTERN, message, rank);
        }
        ValidationErrorKind::Enum { options } => {
            if in_then && let Some(code) = conditional_code(at) {
                push(at.to_owned(), code, conditional_message(code, json), 3);
            } else {
                let message = format!("{} is not one of {}", quote(value), list(options));
                push(at.to_owned(), codes::ENUM, message, 1);
            }
        }
        ValidationErrorKind::Constant { expected_value } => {
            let message = format!("expected {}, found {}", quote(expected_value), quote(value));
            push(at.to_owned(), codes::CONST, message, 2);
        }
        ValidationErrorKind::Minimum { limit } => {
            let message = format!("{} is below the minimum {limit}", quote(value));
            push(at.to_owned(), codes::MINIMUM, message, 1);
        }
        ValidationErrorKind::MinItems { limit } => {
            if in_then && let Some(code) = conditional_code(at) {
                push(at.to_owned(), code, conditional_message(code, json), 3);
            } else {
                let count = value.as_array().map_or(0, Vec::len);
                let message = format!("needs at least {limit} item(s), found {count}");
                push(at.to_owned(), codes::MIN_ITEMS, message, 1);
            }
        }
        ValidationErrorKind::UniqueItems => {
            let message = match first_repeated(value) {
                Some(item) => format!("{} appears more than once", quote(item)),
                None => "items must be unique".to_owned(),
            };
            push(at.to_owned(), codes::UNIQUE_ITEMS, message, 1);
        }
        ValidationErrorKind::MinLength { limit } => {
            let message = if *limit == 1 {
                "must not be empty".to_owned()
            } else {
                format!("{} is shorter than {limit} characters", quote(value))
            };
            push(at.to_owned(), codes::MIN_LENGTH, message, 1);
        }
        ValidationErrorKind::Format { format } => {
            let message = match (format.as_str(), value.as_str()) {
                ("date-time", Some(text)) => match DateTime::parse(text) {
                    Err(e) => e.to_string(),
                    Ok(_) => format!("{} is not a valid date-time", quote(value)),
                },
                _ => format!("{} is not a valid {format}", quote(value)),
            };
            push(at.to_owned(), codes::FORMAT, message, 1);
        }
        _ => push(at.to_owned(), codes::SCHEMA, error.to_string(), 4),
    }
}

/// The message of a conditional failure, shared with the semantic rule of the same code.
fn conditional_message(code: &'static str, json: &Value) -> String {
    use crate::rules;
    match code {
        codes::AUTO_ACTIVATE_REQUIRES_APPROVALS => {
            rules::auto_activate_requires_approvals::message()
        }
        codes::DEADLINE_REQUIRED => rules::deadline_required::message(json),
        _ => rules::final_decision_required::message(json),
    }
}
