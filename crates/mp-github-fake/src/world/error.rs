//! `LoadWorldError`: a bad world file, named by file, line and column.

use serde_saphyr::{Error, Spanned};

/// Why a world file could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LoadWorldError {
    /// The world file itself could not be read.
    #[error("{file}: cannot read the world file: {message}")]
    Read {
        /// The world file.
        file: String,
        /// What went wrong.
        message: String,
    },
    /// The content is wrong: YAML syntax, an unknown key, a bad value, a dangling reference,
    /// or an unreadable configuration directory (reported at its `dir` key).
    #[error("{file}:{line}:{column}: {message}")]
    Invalid {
        /// The world file.
        file: String,
        /// 1-based line.
        line: u64,
        /// 1-based column.
        column: u64,
        /// What is wrong, naming the offending value.
        message: String,
    },
}

impl LoadWorldError {
    /// The 1-based line of the problem, when it has one.
    pub fn line(&self) -> Option<u64> {
        match self {
            Self::Invalid { line, .. } => Some(*line),
            Self::Read { .. } => None,
        }
    }

    /// An [`LoadWorldError::Invalid`] at a spanned node.
    pub(crate) fn at<T>(file: &str, node: &Spanned<T>, message: impl Into<String>) -> Self {
        Self::Invalid {
            file: file.to_owned(),
            line: node.referenced.line().max(1),
            column: node.referenced.column().max(1),
            message: message.into(),
        }
    }

    /// Translates a parser error.
    pub(crate) fn from_yaml(file: &str, err: &Error) -> Self {
        let err = innermost(err);
        let (line, column) = err
            .location()
            .map_or((1, 1), |l| (l.line().max(1), l.column().max(1)));
        let message = match err {
            Error::SerdeUnknownField {
                field, expected, ..
            } => unknown_field(field, expected),
            Error::SerdeUnknownVariant {
                variant, expected, ..
            } => format!(
                "unknown value `{variant}`, expected one of {}",
                backticked(expected)
            ),
            Error::DuplicateMappingKey { key, .. } => {
                format!("duplicate key `{}`", key.as_deref().unwrap_or("?"))
            }
            Error::InvalidBooleanStrict { .. } => {
                "expected `true` or `false` (yes/no/on/off are not booleans here)".to_owned()
            }
            Error::MergeKeyNotAllowed { .. } => {
                "YAML merge keys (`<<`) are not allowed; write the keys out".to_owned()
            }
            other => without_location(&other.to_string()),
        };
        Self::Invalid {
            file: file.to_owned(),
            line,
            column,
            message,
        }
    }
}

/// The error that carries the cause, below snippet and alias wrappers.
fn innermost(err: &Error) -> &Error {
    match err {
        Error::WithSnippet { error, .. } | Error::AliasError { error, .. } => innermost(error),
        other => other,
    }
}

/// The parser's message without its trailing ` at line N, column M`.
fn without_location(text: &str) -> String {
    if let Some(index) = text.rfind(" at line ") {
        let tail = &text[index + " at line ".len()..];
        if let Some((line, column)) = tail.split_once(", column ")
            && !line.is_empty()
            && !column.is_empty()
            && line
                .chars()
                .chain(column.chars())
                .all(|c| c.is_ascii_digit())
        {
            return text[..index].to_owned();
        }
    }
    text.to_owned()
}

fn unknown_field(field: &str, expected: &[&str]) -> String {
    let mut message = format!("unknown key `{field}`");
    let nearest = expected
        .iter()
        .filter(|_| field.chars().count() <= 64)
        .map(|candidate| (edit_distance(field, candidate), *candidate))
        .filter(|(distance, _)| *distance <= 2)
        .min_by_key(|(distance, _)| *distance);
    if let Some((_, near)) = nearest {
        message.push_str(&format!(", did you mean `{near}`?"));
    } else if expected.is_empty() {
        message.push_str(", this mapping takes no keys");
    } else {
        message.push_str(&format!(", expected one of {}", backticked(expected)));
    }
    message
}

fn backticked(items: &[&str]) -> String {
    let items: Vec<String> = items.iter().map(|item| format!("`{item}`")).collect();
    items.join(", ")
}

/// Levenshtein distance, for typo hints (inputs are short keys).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = Vec::with_capacity(b.len() + 1);
        current.push(i + 1);
        for (j, cb) in b.iter().enumerate() {
            let substitute = previous[j] + usize::from(ca != *cb);
            current.push(substitute.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}
