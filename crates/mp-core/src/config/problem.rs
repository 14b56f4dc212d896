//! One problem found in a configuration file: where it is, a stable code, and a one-line message.

use std::fmt;

/// The stable problem codes. Tools may match on these; they never change meaning.
pub mod codes {
    /// The text is not well-formed YAML (or JSON for `mirror_paths.json`).
    pub const YAML_SYNTAX: &str = "yaml_syntax";
    /// The YAML uses a feature the strict reader refuses: merge keys (`<<`), tags (`!x`),
    /// several documents, or a document over the parser's size and alias budgets.
    pub const UNSUPPORTED_YAML: &str = "unsupported_yaml";
    /// A mapping repeats a key.
    pub const DUPLICATE_KEY: &str = "duplicate_key";
    /// A key that the file format does not define.
    pub const UNKNOWN_FIELD: &str = "unknown_field";
    /// A value of the wrong kind (a list where text is expected, `yes` for a boolean, ...).
    pub const WRONG_TYPE: &str = "wrong_type";
    /// A required key is absent.
    pub const MISSING_FIELD: &str = "missing_field";
    /// A value of the right kind that breaks a rule (pattern, range, uniqueness, enum).
    pub const INVALID_VALUE: &str = "invalid_value";
    /// A path glob that does not compile or can never match.
    pub const BAD_PATTERN: &str = "bad_pattern";
    /// A required configuration file is absent.
    pub const MISSING_FILE: &str = "missing_file";
    /// A file name that the configuration loader does not read.
    pub const UNKNOWN_FILE: &str = "unknown_file";
    /// `skills.yml` tries to disable a skill that always runs.
    pub const CANNOT_DISABLE_REQUIRED_VALIDATOR: &str = "cannot_disable_required_validator";
    /// `skills.yml` tries to make a core L1 validator non-blocking; the override is ignored.
    pub const SEVERITY_NOT_LOWERED: &str = "severity_not_lowered";
    /// A gated repository has no named required checks and `allow_no_ci` is false.
    pub const C2_POSTURE: &str = "c2_posture";
    /// A legacy key that is accepted but has no effect.
    pub const IGNORED_FIELD: &str = "ignored_field";
    /// A setting names a repository that is not in `supervised_repos`, so it has no effect.
    pub const UNSUPERVISED_REPO: &str = "unsupervised_repo";
    /// A setting that is valid but has no effect as written.
    pub const NO_EFFECT: &str = "no_effect";
    /// `allowlisted_actors` leaves out `github_login`: the owner's own labels and votes
    /// would not count.
    pub const OWNER_NOT_ALLOWLISTED: &str = "owner_not_allowlisted";
    /// A list item whose plain text runs on over more-indented lines that start with `- `:
    /// YAML reads them as one item (`test - lint`), almost surely not what was meant.
    pub const FOLDED_LIST_ITEM: &str = "folded_list_item";
    /// `skills.yml` names a skill that is neither built in nor a user skill of the
    /// configuration directory.
    pub const UNKNOWN_SKILL: &str = "unknown_skill";
}

/// Whether a problem stops the configuration from loading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProblemSeverity {
    /// The configuration is refused.
    Error,
    /// The configuration loads; the owner should still look at it.
    Warning,
}

impl ProblemSeverity {
    /// `"error"` or `"warning"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Warning => "warning",
        }
    }
}

impl fmt::Display for ProblemSeverity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One problem in one configuration file.
///
/// `Display` renders one line, e.g.
/// ``projects.yml:7:5: error[invalid_value]: invalid repository name `acme` (field `supervised_repos[1]`)``.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConfigProblem {
    /// The file name as handed to the loader, e.g. `owner.yml`.
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<u64>,
    /// 1-based column (in characters), when known.
    pub column: Option<u64>,
    /// Dotted path of the offending key, e.g. `repo_overrides.acme/app.required_checks`;
    /// list items carry their index, e.g. `supervised_repos[2]`.
    pub field: Option<String>,
    /// Stable snake_case code, one of [`codes`].
    pub code: &'static str,
    /// Whether the problem refuses the configuration.
    pub severity: ProblemSeverity,
    /// One line, lowercase start, naming the offending value.
    pub message: String,
}

impl ConfigProblem {
    /// An error in `file` without a position yet.
    pub(crate) fn error(file: &str, code: &'static str, message: impl Into<String>) -> Self {
        Self::new(file, code, ProblemSeverity::Error, message.into())
    }

    /// A warning in `file` without a position yet.
    pub(crate) fn warning(file: &str, code: &'static str, message: impl Into<String>) -> Self {
        Self::new(file, code, ProblemSeverity::Warning, message.into())
    }

    fn new(file: &str, code: &'static str, severity: ProblemSeverity, message: String) -> Self {
        Self {
            file: one_line(file, 200),
            line: None,
            column: None,
            field: None,
            code,
            severity,
            message: one_line(&message, 400),
        }
    }

    /// Sets the position; a zero line means "unknown" and leaves both unset.
    pub(crate) fn at(mut self, line: u64, column: u64) -> Self {
        if line > 0 {
            self.line = Some(line);
            self.column = (column > 0).then_some(column);
        }
        self
    }

    /// Sets the dotted field path; an empty path leaves it unset.
    pub(crate) fn field(mut self, field: impl Into<String>) -> Self {
        let field = field.into();
        if !field.is_empty() {
            self.field = Some(one_line(&field, 200));
        }
        self
    }

    /// Whether this problem refuses the configuration.
    pub fn is_error(&self) -> bool {
        self.severity == ProblemSeverity::Error
    }
}

impl fmt::Display for ConfigProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        write!(f, ": {}[{}]: {}", self.severity, self.code, self.message)?;
        if let Some(field) = &self.field {
            write!(f, " (field `{field}`)")?;
        }
        Ok(())
    }
}

/// `text` as one bounded line: control characters escaped, at most `max` characters.
pub(crate) fn one_line(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (count, c) in text.chars().enumerate() {
        if count == max {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// A user value quoted for a message: bounded, one line.
pub(crate) fn shown(value: &str) -> String {
    one_line(value, 80)
}
