//! Checks shared by the configuration files: patterns, lengths, uniqueness, and the problem sink.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;
use serde_saphyr::{Location, Spanned};

use super::problem::{ConfigProblem, codes, shown};
use super::yaml::position;
use crate::ids::{Login, RepoName};

/// A GitHub login (users and organisations), without a `[bot]` suffix.
pub(crate) const LOGIN_PATTERN: &str = "^[A-Za-z0-9][A-Za-z0-9-]{0,38}$";
/// A repository `owner/name`.
pub(crate) const REPO_PATTERN: &str = "^[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}$";
/// A repository name without its owner.
pub(crate) const REPO_BASENAME_PATTERN: &str = "^[A-Za-z0-9._-]{1,100}$";
/// A GitHub App slug.
pub(crate) const APP_SLUG_PATTERN: &str = "^[a-z0-9][a-z0-9-]{0,98}[a-z0-9]$";
/// An `Agent-Tool` value in the agent registry.
pub(crate) const TOOL_PATTERN: &str = "^[a-z][a-z0-9-]{0,49}$";
/// A skill name in `skills.yml`.
pub(crate) const SKILL_NAME_PATTERN: &str = "^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$";

fn compiled(pattern: &'static str) -> Regex {
    Regex::new(pattern).expect("constant pattern compiles")
}

static LOGIN: LazyLock<Regex> = LazyLock::new(|| compiled(LOGIN_PATTERN));
static REPO: LazyLock<Regex> = LazyLock::new(|| compiled(REPO_PATTERN));
static REPO_BASENAME: LazyLock<Regex> = LazyLock::new(|| compiled(REPO_BASENAME_PATTERN));
static APP_SLUG: LazyLock<Regex> = LazyLock::new(|| compiled(APP_SLUG_PATTERN));
static TOOL: LazyLock<Regex> = LazyLock::new(|| compiled(TOOL_PATTERN));
static SKILL_NAME: LazyLock<Regex> = LazyLock::new(|| compiled(SKILL_NAME_PATTERN));

/// Collects the problems of one file.
pub(crate) struct Sink<'a> {
    file: &'a str,
    problems: &'a mut Vec<ConfigProblem>,
}

impl<'a> Sink<'a> {
    pub(crate) fn new(file: &'a str, problems: &'a mut Vec<ConfigProblem>) -> Self {
        Self { file, problems }
    }

    /// The file these problems belong to.
    pub(crate) fn file(&self) -> &str {
        self.file
    }

    /// Records an error at `at`.
    pub(crate) fn error(
        &mut self,
        code: &'static str,
        field: &str,
        at: &Location,
        message: impl Into<String>,
    ) {
        let (line, column) = position(at);
        let problem = ConfigProblem::error(self.file, code, message)
            .at(line, column)
            .field(field);
        self.problems.push(problem);
    }

    /// Records a warning at `at`.
    pub(crate) fn warning(
        &mut self,
        code: &'static str,
        field: &str,
        at: &Location,
        message: impl Into<String>,
    ) {
        let (line, column) = position(at);
        let problem = ConfigProblem::warning(self.file, code, message)
            .at(line, column)
            .field(field);
        self.problems.push(problem);
    }

    /// The collected problems, for parsing into this file.
    pub(crate) fn problems(&mut self) -> &mut Vec<ConfigProblem> {
        self.problems
    }
}

/// `name[index]`.
pub(crate) fn item(name: &str, index: usize) -> String {
    format!("{name}[{index}]")
}

/// A login matching [`LOGIN_PATTERN`].
pub(crate) fn login(sink: &mut Sink<'_>, field: &str, value: &Spanned<String>) -> Option<Login> {
    let parsed = LOGIN
        .is_match(&value.value)
        .then(|| Login::parse(&value.value).ok())
        .flatten();
    if parsed.is_none() {
        sink.error(
            codes::INVALID_VALUE,
            field,
            &value.referenced,
            format!(
                "invalid GitHub login `{}`: expected letters, digits and `-`, starting with a letter or digit, at most 39 characters",
                shown(&value.value)
            ),
        );
    }
    if parsed.as_ref().is_some_and(Login::is_ghost) {
        sink.error(
            codes::INVALID_VALUE,
            field,
            &value.referenced,
            "`ghost` is GitHub's placeholder for deleted accounts and can never be trusted",
        );
        return None;
    }
    parsed
}

/// A repository `owner/name` matching [`REPO_PATTERN`].
pub(crate) fn repo(sink: &mut Sink<'_>, field: &str, value: &Spanned<String>) -> Option<RepoName> {
    let parsed = REPO
        .is_match(&value.value)
        .then(|| RepoName::parse(&value.value).ok())
        .flatten();
    if parsed.is_none() {
        sink.error(
            codes::INVALID_VALUE,
            field,
            &value.referenced,
            format!(
                "invalid repository `{}`: expected owner/name",
                shown(&value.value)
            ),
        );
    }
    parsed
}

/// A list of repositories, each valid and listed once.
pub(crate) fn repos(sink: &mut Sink<'_>, field: &str, values: &[Spanned<String>]) -> Vec<RepoName> {
    let mut out = Vec::new();
    let mut seen: BTreeMap<RepoName, u64> = BTreeMap::new();
    for (index, value) in values.iter().enumerate() {
        let item_field = item(field, index);
        let Some(parsed) = repo(sink, &item_field, value) else {
            continue;
        };
        if let Some(first) = seen.get(&parsed) {
            sink.error(
                codes::INVALID_VALUE,
                &item_field,
                &value.referenced,
                format!("repository `{parsed}` is listed twice{}", first_at(*first)),
            );
            continue;
        }
        seen.insert(parsed.clone(), value.referenced.line());
        out.push(parsed);
    }
    out
}

/// Whether `value` matches `pattern`; if not, an `invalid_value` problem at its line
/// saying ``invalid <what> `<value>`: expected <expected>``.
fn matches(
    sink: &mut Sink<'_>,
    field: &str,
    value: &Spanned<String>,
    pattern: &Regex,
    what: &str,
    expected: &str,
) -> bool {
    let ok = pattern.is_match(&value.value);
    if !ok {
        sink.error(
            codes::INVALID_VALUE,
            field,
            &value.referenced,
            format!(
                "invalid {what} `{}`: expected {expected}",
                shown(&value.value)
            ),
        );
    }
    ok
}

/// An app slug matching [`APP_SLUG_PATTERN`].
pub(crate) fn app_slug(sink: &mut Sink<'_>, field: &str, value: &Spanned<String>) -> bool {
    matches(
        sink,
        field,
        value,
        &APP_SLUG,
        "GitHub App slug",
        "2-100 lowercase letters, digits and `-`, not starting or ending with `-`",
    )
}

/// An agent tool name matching [`TOOL_PATTERN`].
pub(crate) fn tool(sink: &mut Sink<'_>, field: &str, value: &Spanned<String>) -> bool {
    matches(
        sink,
        field,
        value,
        &TOOL,
        "tool name",
        "a lowercase letter then up to 49 lowercase letters, digits or `-`",
    )
}

/// A skill name matching [`SKILL_NAME_PATTERN`].
pub(crate) fn skill_name(sink: &mut Sink<'_>, field: &str, value: &Spanned<String>) -> bool {
    matches(
        sink,
        field,
        value,
        &SKILL_NAME,
        "skill name",
        "letters, digits, `_`, `.` or `-`, at most 100 characters",
    )
}

/// Whether `text` has the shape of a skill name ([`SKILL_NAME_PATTERN`]); reports nothing.
pub(crate) fn is_skill_name(text: &str) -> bool {
    SKILL_NAME.is_match(text)
}

/// A repository name without owner matching [`REPO_BASENAME_PATTERN`].
pub(crate) fn repo_basename(text: &str) -> bool {
    REPO_BASENAME.is_match(text)
}

/// Text of `min..=max` characters with no surrounding whitespace.
pub(crate) fn text(
    sink: &mut Sink<'_>,
    field: &str,
    value: &Spanned<String>,
    min: usize,
    max: usize,
) -> bool {
    let length = value.value.chars().count();
    let message = if length == 0 && min > 0 {
        Some(format!(
            "the value is empty, expected {min} to {max} characters"
        ))
    } else if length < min || length > max {
        Some(format!(
            "`{}` has {length} characters, expected {min} to {max}",
            shown(&value.value)
        ))
    } else if value.value.trim() != value.value {
        Some(format!(
            "`{}` starts or ends with whitespace",
            shown(&value.value)
        ))
    } else if value.value.chars().any(char::is_control) {
        Some(format!(
            "`{}` contains a control character",
            shown(&value.value)
        ))
    } else {
        None
    };
    match message {
        Some(message) => {
            sink.error(codes::INVALID_VALUE, field, &value.referenced, message);
            false
        }
        None => true,
    }
}

/// A list of `1..=max`-character texts, each listed once.
pub(crate) fn texts(
    sink: &mut Sink<'_>,
    field: &str,
    values: &[Spanned<String>],
    max: usize,
    what: &str,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen: BTreeMap<&str, u64> = BTreeMap::new();
    for (index, value) in values.iter().enumerate() {
        let item_field = item(field, index);
        if !text(sink, &item_field, value, 1, max) {
            continue;
        }
        if let Some(first) = seen.get(value.value.as_str()) {
            sink.error(
                codes::INVALID_VALUE,
                &item_field,
                &value.referenced,
                format!(
                    "{what} `{}` is listed twice{}",
                    shown(&value.value),
                    first_at(*first)
                ),
            );
            continue;
        }
        seen.insert(&value.value, value.referenced.line());
        out.push(value.value.clone());
    }
    out
}

/// A file path inside a repository: relative, `/`-separated, no empty, `.` or `..` segment.
pub(crate) fn repo_path(sink: &mut Sink<'_>, field: &str, value: &Spanned<String>) -> bool {
    let path = value.value.as_str();
    let problem = if path.is_empty() {
        Some("the path is empty")
    } else if path.chars().count() > 4096 {
        Some("the path is longer than 4096 characters")
    } else if path.chars().any(char::is_control) {
        Some("the path contains a control character")
    } else if path.starts_with('/') {
        Some("the path starts with `/`; paths are relative to the repository root")
    } else if path.contains('\\') {
        Some("the path contains `\\`; use `/` between directories")
    } else if path
        .split('/')
        .any(|segment| segment.is_empty() || segment == "." || segment == "..")
    {
        Some("the path has an empty, `.` or `..` segment")
    } else {
        None
    };
    match problem {
        Some(problem) => {
            sink.error(
                codes::INVALID_VALUE,
                field,
                &value.referenced,
                format!("invalid path `{}`: {problem}", shown(path)),
            );
            false
        }
        None => true,
    }
}

/// ` (first at line N)` when the line is known.
pub(crate) fn first_at(line: u64) -> String {
    if line == 0 {
        String::new()
    } else {
        format!(" (first at line {line})")
    }
}
