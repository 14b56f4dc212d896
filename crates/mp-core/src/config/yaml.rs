//! The strict YAML reading shared by every mp file format (configuration and world
//! files), and the translation of its errors into configuration problems.
//!
//! Options: only `true`/`false` are booleans, untyped scalars are never coerced into text
//! (`1.10` must be quoted to be a string), merge keys and tags are refused, duplicate keys
//! are refused, and parser budgets stay on. Errors become [`ConfigProblem`]s with a stable
//! code, a line and column, and (best effort) the dotted key path at that line.

use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{DeserializeOwned, Deserializer, MapAccess, Visitor};
use serde_saphyr::{Error, Location, Spanned};

use super::problem::{ConfigProblem, codes, shown};

/// The strict parser options shared by every mp file format (configuration and world
/// files): only `true`/`false` are booleans, untyped scalars are never read as text,
/// merge keys, tags and duplicate keys are refused.
pub fn strict_options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        strict_booleans: true,
        no_schema: true,
        merge_keys: serde_saphyr::MergeKeyPolicy::Error,
        reject_unsupported_tags: true,
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::Error,
        with_snippet: false,
    }
}

/// Parses one file strictly. An empty (or comment-only) document reads as an empty mapping,
/// so a required key is reported as missing rather than the file as unreadable.
///
/// At most one structural problem is reported; `None` means the file could not be read.
pub(crate) fn parse<T: DeserializeOwned>(
    file: &str,
    text: &str,
    problems: &mut Vec<ConfigProblem>,
) -> Option<T> {
    if let Some(problem) = folded_list_item(file, text) {
        problems.push(problem);
        return None;
    }
    match serde_saphyr::from_str_with_options::<Option<T>>(text, strict_options()) {
        Ok(Some(value)) => Some(value),
        Ok(None) => match serde_saphyr::from_str_with_options::<T>("{}", strict_options()) {
            Ok(value) => Some(value),
            Err(err) => {
                let mut problem = problem_from_error(file, "", &err);
                problem.line = None;
                problem.column = None;
                problem.message = format!("{} (the file is empty)", problem.message);
                problems.push(problem);
                None
            }
        },
        Err(err) => {
            problems.push(problem_from_error(file, text, &err));
            None
        }
    }
}

/// The error that carries the real cause, below snippet and alias wrappers.
fn innermost(err: &Error) -> &Error {
    match err {
        Error::WithSnippet { error, .. } | Error::AliasError { error, .. } => innermost(error),
        other => other,
    }
}

/// Translates a parser error into a problem with a stable code.
fn problem_from_error(file: &str, text: &str, err: &Error) -> ConfigProblem {
    let err = innermost(err);
    let (line, column) = err
        .location()
        .map_or((0, 0), |loc| (loc.line(), loc.column()));
    let path = key_path_at(text, line);
    let (code, message, field) = match err {
        Error::DuplicateMappingKey { key, .. } => {
            let key = key.as_deref().unwrap_or("?");
            let message = format!("duplicate key `{}`", shown(key));
            (codes::DUPLICATE_KEY, message, path_ending_in(&path, key))
        }
        Error::SerdeUnknownField {
            field, expected, ..
        } => {
            let mut message = format!("unknown field `{}`", shown(field));
            if let Some(near) = nearest(field, expected) {
                message.push_str(&format!(", did you mean `{near}`?"));
            } else if expected.is_empty() {
                message.push_str(", this mapping takes no keys");
            } else {
                message.push_str(&format!(", expected one of {}", backticked(expected)));
            }
            (codes::UNKNOWN_FIELD, message, path_ending_in(&path, field))
        }
        Error::SerdeMissingField { field, .. } => {
            let mut parent = path;
            if !is_value_position(text, line, column) {
                // The location is the first key of the mapping that lacks the field.
                parent.pop();
            }
            parent.push((*field).to_owned());
            let message = format!("missing required field `{field}`");
            (codes::MISSING_FIELD, message, parent.join("."))
        }
        Error::SerdeUnknownVariant {
            variant, expected, ..
        } => {
            let message = format!(
                "unknown value `{}`, expected one of {}",
                shown(variant),
                backticked(expected)
            );
            (codes::INVALID_VALUE, message, path.join("."))
        }
        Error::InvalidBooleanStrict { .. } => (
            codes::WRONG_TYPE,
            "expected `true` or `false` (yes/no/on/off are not booleans here)".to_owned(),
            path.join("."),
        ),
        Error::QuotingRequired { value, .. } => (
            codes::WRONG_TYPE,
            format!(
                "the value `{}` must be quoted to be read as text",
                shown(value)
            ),
            path.join("."),
        ),
        Error::NullIntoString { .. } => (
            codes::WRONG_TYPE,
            "expected text, found an empty value".to_owned(),
            path.join("."),
        ),
        Error::InvalidScalar { ty, .. } => (
            codes::WRONG_TYPE,
            format!("expected {}", describe_scalar(ty)),
            path.join("."),
        ),
        Error::Unexpected { expected, .. } => (
            codes::WRONG_TYPE,
            format!("expected {}", describe_expected(expected)),
            path.join("."),
        ),
        Error::SerdeInvalidType {
            unexpected,
            expected,
            ..
        } => (
            codes::WRONG_TYPE,
            format!("expected {}, found {}", shown(expected), shown(unexpected)),
            path.join("."),
        ),
        Error::SerdeInvalidValue {
            unexpected,
            expected,
            ..
        } => (
            codes::WRONG_TYPE,
            format!("expected {}, found {}", shown(expected), shown(unexpected)),
            path.join("."),
        ),
        Error::SerdeInvalidLength { expected, .. } => (
            codes::WRONG_TYPE,
            format!("expected {}", shown(expected)),
            path.join("."),
        ),
        Error::MergeKeyNotAllowed { .. } | Error::MergeValueNotMapOrSeqOfMaps { .. } => (
            codes::UNSUPPORTED_YAML,
            "YAML merge keys (`<<`) are not allowed; write the keys out".to_owned(),
            path.join("."),
        ),
        Error::UnsupportedTag { tag, .. } => (
            codes::UNSUPPORTED_YAML,
            format!("YAML tag `{}` is not allowed", shown(tag)),
            path.join("."),
        ),
        Error::MultipleDocuments { .. } => (
            codes::UNSUPPORTED_YAML,
            "the file holds more than one YAML document".to_owned(),
            String::new(),
        ),
        Error::Budget { .. }
        | Error::AliasReplayLimitExceeded { .. }
        | Error::AliasExpansionLimitExceeded { .. }
        | Error::AliasReplayStackDepthExceeded { .. }
        | Error::AliasReplayCounterOverflow { .. } => (
            codes::UNSUPPORTED_YAML,
            format!(
                "the document exceeds the parser's limits: {}",
                message_of(err)
            ),
            String::new(),
        ),
        other => (codes::YAML_SYNTAX, message_of(other), path.join(".")),
    };
    ConfigProblem::error(file, code, message)
        .at(line, column)
        .field(field)
}

/// The library's message without its trailing ` at line N, column M`.
fn message_of(err: &Error) -> String {
    let text = err.to_string();
    if let Some(index) = text.rfind(" at line ") {
        let tail = &text[index + " at line ".len()..];
        if let Some((l, c)) = tail.split_once(", column ")
            && !l.is_empty()
            && !c.is_empty()
            && l.chars().chain(c.chars()).all(|ch| ch.is_ascii_digit())
        {
            return shown(&text[..index]);
        }
    }
    shown(&text)
}

/// `path` if it already ends in `key`, else `path` plus `key`.
fn path_ending_in(path: &[String], key: &str) -> String {
    let mut path = path.to_vec();
    if path.last().map(String::as_str) != Some(key) {
        path.push(key.to_owned());
    }
    path.join(".")
}

fn backticked(items: &[&str]) -> String {
    items
        .iter()
        .map(|item| format!("`{item}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn describe_scalar(ty: &str) -> &'static str {
    match ty {
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => "a non-negative whole number",
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "a whole number",
        "f32" | "f64" => "a number",
        "bool" => "`true` or `false`",
        "char" => "a single character",
        _ => "a different kind of value",
    }
}

fn describe_expected(expected: &str) -> &'static str {
    if expected.contains("mapping") {
        "a mapping of `key: value` entries"
    } else if expected.contains("sequence") {
        "a list"
    } else if expected.contains("string") {
        "text"
    } else {
        "a different kind of value"
    }
}

/// The expected name closest to `field`, when it is a plausible typo (edit distance ≤ 2).
fn nearest(field: &str, expected: &[&'static str]) -> Option<&'static str> {
    nearest_name(field, expected.iter().copied())
}

/// The candidate closest to `name`, when it is a plausible typo (edit distance ≤ 2); the
/// first of equally close ones.
pub(crate) fn nearest_name<'c>(
    name: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> Option<&'c str> {
    if name.chars().count() > 64 {
        return None;
    }
    candidates
        .into_iter()
        .map(|candidate| (edit_distance(name, candidate), candidate))
        .filter(|(distance, _)| *distance <= 2)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// A block list item of plain text followed by a more-indented line that starts with
/// `- `: YAML continues the plain text over that line, so `- test` then `    - lint` is
/// the one item `test - lint`. Valid YAML, but never what a list meant; the problem is on
/// the continuation line. Lines inside block scalars (`|`, `>`) are not looked at.
fn folded_list_item(file: &str, text: &str) -> Option<ConfigProblem> {
    let lines: Vec<&str> = text.lines().collect();
    // The indentation of the line that opened the block scalar being skipped.
    let mut block_scalar: Option<usize> = None;
    for (index, line) in lines.iter().enumerate() {
        let Some(shape) = LineShape::of(line) else {
            continue;
        };
        if let Some(opened_at) = block_scalar {
            if shape.start > opened_at {
                continue;
            }
            block_scalar = None;
        }
        let content = &line[shape.key_column..];
        let value = match leading_key(content) {
            Some((_, value)) => value.trim_start(),
            None => content,
        };
        if value.starts_with('|') || value.starts_with('>') {
            block_scalar = Some(shape.start);
            continue;
        }
        if shape.key_column == shape.start || shape.key.is_some() || !is_plain_text(content) {
            continue;
        }
        // The next line that holds something, if it continues this item's text.
        let Some((offset, next)) = lines[index + 1..]
            .iter()
            .enumerate()
            .find(|(_, next)| LineShape::of(next).is_some())
        else {
            continue;
        };
        let next_start = next.len() - next.trim_start_matches(' ').len();
        let next_content = &next[next_start..];
        if next_start > shape.start && (next_content == "-" || next_content.starts_with("- ")) {
            let item_line = index + 1;
            let line_number = (index + 2 + offset) as u64;
            let folded = format!("{} {}", content.trim_end(), next_content.trim_end());
            let message = format!(
                "this line is read as the end of the list item on line {item_line} (`{}`), because it is indented more than that item; write each item on its own line at the same indentation",
                shown(&folded)
            );
            return Some(
                ConfigProblem::error(file, codes::FOLDED_LIST_ITEM, message)
                    .at(line_number, next_start as u64 + 1)
                    .field(key_path_at(text, item_line as u64).join(".")),
            );
        }
    }
    None
}

/// Whether a list item's content is plain text that YAML may continue on the next lines:
/// not quoted, not a collection, alias, anchor, tag or block scalar, with no comment.
fn is_plain_text(content: &str) -> bool {
    let content = content.trim_end();
    !content.is_empty()
        && !content.starts_with([
            '"', '\'', '[', '{', '&', '*', '!', '|', '>', '#', '%', '@', '`', '-',
        ])
        && !content.contains(" #")
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            let deletion = previous[j + 1] + 1;
            let insertion = current[j] + 1;
            current.push(substitution.min(deletion).min(insertion));
        }
        previous = current;
    }
    previous[b.len()]
}

/// Best-effort dotted key path of the block-style YAML node on `line` (1-based): the key on
/// that line, if any, preceded by the keys of the less-indented lines that contain it.
/// Flow collections and block scalars are not understood; the result is then shorter.
pub(crate) fn key_path_at(text: &str, line: u64) -> Vec<String> {
    let Some(index) = usize::try_from(line).ok().and_then(|l| l.checked_sub(1)) else {
        return Vec::new();
    };
    let lines: Vec<&str> = text.lines().collect();
    let Some(current) = lines.get(index) else {
        return Vec::new();
    };
    let mut path = Vec::new();
    let mut limit = match LineShape::of(current) {
        Some(shape) => {
            if let Some(key) = shape.key {
                path.push(key);
            }
            shape.start
        }
        None => return Vec::new(),
    };
    for previous in lines[..index].iter().rev() {
        if limit == 0 {
            break;
        }
        if previous.trim_end() == "---" {
            break;
        }
        let Some(shape) = LineShape::of(previous) else {
            continue;
        };
        match shape.key {
            Some(key) if shape.key_column < limit && shape.opens_block => {
                path.push(key);
                limit = shape.start;
            }
            _ if shape.start < limit => limit = shape.start,
            _ => {}
        }
    }
    path.reverse();
    path
}

/// Whether (`line`, `column`) lies after the colon of the key that starts that line, i.e.
/// inside an inline value such as a flow mapping.
fn is_value_position(text: &str, line: u64, column: u64) -> bool {
    let Some(index) = usize::try_from(line).ok().and_then(|l| l.checked_sub(1)) else {
        return false;
    };
    text.lines()
        .nth(index)
        .and_then(LineShape::of)
        .and_then(|shape| shape.value_column)
        .is_some_and(|value_column| column > value_column as u64)
}

/// The layout of one block-style YAML line.
struct LineShape {
    /// Column (0-based) of the first non-space character, a list dash included.
    start: usize,
    /// Column (0-based) where the key starts, after any list dashes.
    key_column: usize,
    /// The key, when the line starts a `key: value` entry.
    key: Option<String>,
    /// Column (0-based, in characters) just after the key's colon, when there is a key.
    value_column: Option<usize>,
    /// Whether the entry's value continues on the following lines (nothing after the colon
    /// but an anchor, a tag or a comment), so the line can be the parent of later lines.
    opens_block: bool,
}

impl LineShape {
    fn of(line: &str) -> Option<Self> {
        let start = line.len() - line.trim_start_matches(' ').len();
        let mut rest = &line[start..];
        if rest.trim().is_empty() || rest.starts_with('#') {
            return None;
        }
        let mut key_column = start;
        while rest == "-" || rest.starts_with("- ") {
            let after = rest[1..].trim_start_matches(' ');
            key_column += rest.len() - after.len();
            rest = after;
        }
        let (key, value_column, opens_block) = match leading_key(rest) {
            Some((key, value)) => {
                let consumed = &rest[..rest.len() - value.len()];
                let value_column = key_column + consumed.chars().count();
                (Some(key), Some(value_column), opens_block(value))
            }
            None => (None, None, false),
        };
        Some(Self {
            start,
            key_column,
            key,
            value_column,
            opens_block,
        })
    }
}

/// Whether nothing but an anchor, a tag or a comment follows the colon.
fn opens_block(value: &str) -> bool {
    value
        .split_whitespace()
        .take_while(|word| !word.starts_with('#'))
        .all(|word| word.starts_with('&') || word.starts_with('!'))
}

/// The key of a `key: value` (or `key:`) entry at the start of `content`, and the text
/// after its colon.
fn leading_key(content: &str) -> Option<(String, &str)> {
    let first = content.chars().next()?;
    if first == '"' || first == '\'' {
        let inner = &content[1..];
        let close = inner.find(first)?;
        let after = &inner[close + 1..];
        return is_key_end(after).then(|| (inner[..close].to_owned(), &after[1..]));
    }
    if matches!(
        first,
        '#' | '[' | '{' | '&' | '*' | '!' | '|' | '>' | '%' | '@' | '`'
    ) {
        return None;
    }
    let mut search = 0;
    while let Some(found) = content[search..].find(':') {
        let colon = search + found;
        if is_key_end(&content[colon..]) {
            let key = content[..colon].trim_end();
            return (!key.is_empty() && !key.contains(" #"))
                .then(|| (key.to_owned(), &content[colon + 1..]));
        }
        search = colon + 1;
    }
    None
}

/// Whether `rest` (starting at a `:`) ends a key: `:` then end of line or whitespace.
fn is_key_end(rest: &str) -> bool {
    let mut chars = rest.chars();
    chars.next() == Some(':') && chars.next().is_none_or(char::is_whitespace)
}

/// `(line, column)` of a location; `(0, 0)` when unknown.
pub(crate) fn position(location: &Location) -> (u64, u64) {
    (location.line(), location.column())
}

/// A mapping whose keys keep their source location, in file order.
///
/// Duplicate keys are refused by the reader before this type sees them.
#[derive(Debug, Clone)]
pub struct SpannedMap<V>(pub Vec<(Spanned<String>, V)>);

impl<V> Default for SpannedMap<V> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for SpannedMap<V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MapVisitor<V>(PhantomData<V>);

        impl<'de, V: Deserialize<'de>> Visitor<'de> for MapVisitor<V> {
            type Value = SpannedMap<V>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry::<Spanned<String>, V>()? {
                    entries.push(entry);
                }
                Ok(SpannedMap(entries))
            }
        }

        deserializer.deserialize_map(MapVisitor(PhantomData))
    }
}
