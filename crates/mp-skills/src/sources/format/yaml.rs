//! The strict YAML reader of the sources formats: text that starts on a known line of a
//! file, read with the strict options, each library error turned into one [`FileProblem`]
//! with its markdown line, field and code; and a whole file that is a YAML block list (a
//! lock file) read item by item.

use std::path::Path;

use mp_core::config::yaml::strict_options;
use serde::de::DeserializeOwned;
use serde_saphyr::Error as YamlError;

use super::diagnostics::{FileProblem, codes};
use super::markdown::{split_items, split_lines};

/// Parses YAML text whose first line is line `first` of `file`.
pub(crate) fn parse_yaml<T: DeserializeOwned>(
    file: &Path,
    first: u64,
    text: &str,
    source: Option<&str>,
) -> Result<T, Vec<FileProblem>> {
    serde_saphyr::from_str_with_options::<T>(text, strict_options())
        .map_err(|err| vec![yaml_problem(file, first, text, source, &err)])
}

fn innermost(err: &YamlError) -> &YamlError {
    match err {
        YamlError::WithSnippet { error, .. } | YamlError::AliasError { error, .. } => {
            innermost(error)
        }
        other => other,
    }
}

/// The key written on line `line` (1-based) of `text`, if any.
fn key_on_line(text: &str, line: u64) -> String {
    let index = usize::try_from(line.saturating_sub(1)).unwrap_or(usize::MAX);
    let Some(content) = text.lines().nth(index) else {
        return String::new();
    };
    let rest = content.trim_start().trim_start_matches("- ").trim_start();
    match rest.split_once(':') {
        Some((key, _)) if !key.is_empty() && !key.contains(' ') => key.to_owned(),
        _ => String::new(),
    }
}

fn yaml_problem(
    file: &Path,
    first: u64,
    text: &str,
    source: Option<&str>,
    err: &YamlError,
) -> FileProblem {
    let err = innermost(err);
    let local = match err {
        // The library points past the mapping; the entry's own line is clearer.
        YamlError::SerdeMissingField { .. } => 1,
        _ => err.location().map_or(1, |loc| loc.line().max(1)),
    };
    let line = first + local - 1;
    let key = key_on_line(text, local);
    let (code, message, field) = match err {
        YamlError::DuplicateMappingKey { key, .. } => {
            let key = key.clone().unwrap_or_default();
            (codes::DUPLICATE_KEY, format!("duplicate key `{key}`"), key)
        }
        YamlError::SerdeUnknownField {
            field, expected, ..
        } => (
            codes::UNKNOWN_FIELD,
            format!(
                "unknown field `{field}`, expected one of {}",
                expected
                    .iter()
                    .map(|e| format!("`{e}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            field.clone(),
        ),
        YamlError::SerdeMissingField { field, .. } => (
            codes::MISSING_FIELD,
            format!("missing required field `{field}`"),
            (*field).to_owned(),
        ),
        YamlError::InvalidBooleanStrict { .. } => (
            codes::WRONG_TYPE,
            "expected `true` or `false`".to_owned(),
            key,
        ),
        YamlError::QuotingRequired { value, .. } => (
            codes::WRONG_TYPE,
            format!("the value `{value}` must be quoted to be read as text"),
            key,
        ),
        YamlError::NullIntoString { .. } => (
            codes::WRONG_TYPE,
            "expected text, found an empty value".to_owned(),
            key,
        ),
        YamlError::InvalidScalar { .. }
        | YamlError::Unexpected { .. }
        | YamlError::SerdeInvalidType { .. }
        | YamlError::SerdeInvalidValue { .. }
        | YamlError::SerdeInvalidLength { .. }
        | YamlError::SerdeUnknownVariant { .. } => (codes::WRONG_TYPE, message_of(err), key),
        YamlError::MergeKeyNotAllowed { .. }
        | YamlError::MergeValueNotMapOrSeqOfMaps { .. }
        | YamlError::UnsupportedTag { .. }
        | YamlError::MultipleDocuments { .. }
        | YamlError::Budget { .. } => (codes::UNSUPPORTED_YAML, message_of(err), key),
        other => (codes::YAML_SYNTAX, message_of(other), key),
    };
    FileProblem::new(file, Some(line), code, message)
        .with_source(source)
        .with_field(&field)
}

/// The library's message without its trailing position.
fn message_of(err: &YamlError) -> String {
    let text = err.to_string();
    match text.rfind(" at line ") {
        Some(index) => text[..index].to_owned(),
        None => text,
    }
}

/// Parses a whole file that is a YAML block list (a lock file) item by item, so every
/// problem names its own item's lines: each `(line of the item, value)`.
pub(crate) fn list_items<T: DeserializeOwned>(
    file: &Path,
    text: &str,
) -> Result<Vec<(u64, T)>, Vec<FileProblem>> {
    let lines: Vec<(u64, &str)> = split_lines(text)
        .into_iter()
        .enumerate()
        .map(|(index, line)| (index as u64 + 1, line))
        .collect();
    let mut values = Vec::new();
    let mut problems = Vec::new();
    for item in split_items(file, &lines)? {
        match parse_yaml::<Vec<T>>(file, item.line, &item.text, item.id_hint.as_deref()) {
            Ok(mut parsed) => values.extend(parsed.pop().map(|value| (item.line, value))),
            Err(mut found) => problems.append(&mut found),
        }
    }
    if problems.is_empty() {
        Ok(values)
    } else {
        Err(problems)
    }
}
