//! Git trailers and the identity-trailer contract (C5).
//!
//! Parsing follows git's trailer rules: the trailers are the last paragraph of the message,
//! never the subject paragraph, and every line of that paragraph must be `Key: value` (a
//! line starting with whitespace continues the previous value). If any line of the last
//! paragraph is not a trailer, the message has no trailers at all, so an `Agent-Tool:` line
//! in the middle of prose never counts.
//!
//! Before looking for that paragraph, the message is read the way git reads it for
//! trailers ([`message_text`]): everything from git's scissors line on is dropped, comment
//! lines (starting with `#`) are dropped, and trailing blank lines are ignored. C5, the
//! squash identity block and `mp commit-msg check` all go through [`Trailers::parse`], so
//! they never disagree about one message.

use std::fmt;
use std::sync::LazyLock;

use regex::Regex;

/// The five identity trailers every agent commit must carry, in canonical order.
pub const IDENTITY_KEYS: [TrailerKey; 5] = [
    TrailerKey::AgentTool,
    TrailerKey::AgentModel,
    TrailerKey::AgentSession,
    TrailerKey::AgentMachine,
    TrailerKey::TaskRef,
];

/// One of the identity trailer keys (matched case-sensitively, as git writes them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TrailerKey {
    /// `Agent-Tool`: the agent program, e.g. `claude-code`.
    AgentTool,
    /// `Agent-Model`: the model, or `n/a` for manual work.
    AgentModel,
    /// `Agent-Session`: `s_` followed by 4-16 lowercase characters.
    AgentSession,
    /// `Agent-Machine`: free-form machine name.
    AgentMachine,
    /// `Task-Ref`: the issue, PR or topic the commit serves.
    TaskRef,
}

impl TrailerKey {
    /// The key as written in a commit message.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AgentTool => "Agent-Tool",
            Self::AgentModel => "Agent-Model",
            Self::AgentSession => "Agent-Session",
            Self::AgentMachine => "Agent-Machine",
            Self::TaskRef => "Task-Ref",
        }
    }
}

impl fmt::Display for TrailerKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The trailers of one commit message, in message order (repeated keys are all kept).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trailers {
    entries: Vec<(String, String)>,
}

fn split_trailer_line(line: &str) -> Option<(&str, &str)> {
    let (key, value) = line.split_once(':')?;
    let key = key.trim_end();
    let mut chars = key.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    if !first_ok || !chars.all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return None;
    }
    Some((key, value.trim()))
}

/// git's scissors line, after the comment character and a space: `git commit --verbose`
/// and `--cleanup=scissors` drop it and everything below it.
pub const SCISSORS: &str = "------------------------ >8 ------------------------";

/// The lines of `message` git reads trailers from: CRLF read as LF, nothing from the
/// scissors line (`# ------------------------ >8 ------------------------`) on, no comment
/// lines (starting with `#`), no trailing blank or whitespace-only lines.
pub fn message_text(message: &str) -> String {
    let normalised = message.replace("\r\n", "\n");
    let mut kept: Vec<&str> = Vec::new();
    for line in normalised.split('\n') {
        if let Some(comment) = line.strip_prefix('#') {
            if comment.strip_prefix(' ').map(str::trim_end) == Some(SCISSORS) {
                break;
            }
            continue;
        }
        kept.push(line);
    }
    while kept.last().is_some_and(|line| line.trim().is_empty()) {
        kept.pop();
    }
    kept.join("\n")
}

impl Trailers {
    /// Parses the trailers of a commit message as git does ([`message_text`] first). Never
    /// fails: a message without a valid trailer paragraph simply has no trailers.
    pub fn parse(message: &str) -> Self {
        let text = message_text(message);
        let lines: Vec<&str> = text.split('\n').collect();
        // The last paragraph: walk up from the end to the first blank line.
        let mut start = lines.len();
        while start > 0 && !lines[start - 1].trim().is_empty() {
            start -= 1;
        }
        // No blank line above it means the paragraph is the subject paragraph: no trailers.
        if start == 0 {
            return Self::default();
        }
        let mut entries: Vec<(String, String)> = Vec::new();
        for line in &lines[start..] {
            if line.starts_with([' ', '\t']) {
                match entries.last_mut() {
                    Some((_, value)) => {
                        value.push(' ');
                        value.push_str(line.trim());
                        continue;
                    }
                    None => return Self::default(),
                }
            }
            match split_trailer_line(line) {
                Some((key, value)) => entries.push((key.to_owned(), value.to_owned())),
                None => return Self::default(),
            }
        }
        Self { entries }
    }

    /// Builds trailers from key/value pairs (for tests and embedders).
    pub fn from_pairs<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        Self {
            entries: pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }

    /// The value of the last trailer with this exact key.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The value of an identity trailer.
    pub fn identity(&self, key: TrailerKey) -> Option<&str> {
        self.get(key.as_str())
    }

    /// All trailers in message order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Whether the message had no trailers.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

static SESSION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^s_[a-z0-9][a-z0-9-]{2,14}[a-z0-9]$").expect("valid regex"));
static TASK_REF: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:[Ii]ssue#\d+|PR#\d+|none|round-\d+/[A-Za-z0-9/_.-]+|bot/[A-Za-z0-9/_.-]+)$")
        .expect("valid regex")
});

/// Whether an `Agent-Session` value is well formed: `s_` then 4-16 of `[a-z0-9-]`,
/// starting and ending with a letter or digit.
pub fn is_valid_session(value: &str) -> bool {
    SESSION.is_match(value)
}

/// Whether a `Task-Ref` value is well formed: `Issue#N` (or historical `issue#N`), `PR#N`,
/// `none`, `round-N/<topic>` or `bot/<topic>`.
pub fn is_valid_task_ref(value: &str) -> bool {
    TASK_REF.is_match(value)
}

/// One way a message breaks the identity-trailer contract.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TrailerProblem {
    /// The trailer is absent.
    Missing {
        /// Which trailer.
        key: TrailerKey,
    },
    /// The trailer is present with an empty value.
    Empty {
        /// Which trailer.
        key: TrailerKey,
    },
    /// `Agent-Session` does not match `s_[a-z0-9][a-z0-9-]{2,14}[a-z0-9]`.
    MalformedSession {
        /// The value found.
        value: String,
    },
    /// `Task-Ref` does not match the allowed forms.
    MalformedTaskRef {
        /// The value found.
        value: String,
    },
}

impl TrailerProblem {
    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Missing { .. } => "trailer_missing",
            Self::Empty { .. } => "trailer_empty",
            Self::MalformedSession { .. } => "session_malformed",
            Self::MalformedTaskRef { .. } => "task_ref_malformed",
        }
    }
}

impl fmt::Display for TrailerProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Missing { key } => write!(f, "missing trailer '{key}'"),
            Self::Empty { key } => write!(f, "empty trailer '{key}'"),
            Self::MalformedSession { value } => write!(
                f,
                "malformed Agent-Session '{value}' (expected s_ then 4-16 of [a-z0-9-], alphanumeric at both ends)"
            ),
            Self::MalformedTaskRef { value } => write!(
                f,
                "malformed Task-Ref '{value}' (expected Issue#N, PR#N, none, round-N/<topic> or bot/<topic>)"
            ),
        }
    }
}

/// Checks the C5 format contract on one message's trailers and returns every problem, in
/// [`IDENTITY_KEYS`] order. An empty list means the contract holds.
pub fn check_contract(trailers: &Trailers) -> Vec<TrailerProblem> {
    let mut problems = Vec::new();
    for key in IDENTITY_KEYS {
        match trailers.identity(key) {
            None => problems.push(TrailerProblem::Missing { key }),
            Some("") => problems.push(TrailerProblem::Empty { key }),
            Some(value) => match key {
                TrailerKey::AgentSession if !is_valid_session(value) => {
                    problems.push(TrailerProblem::MalformedSession {
                        value: value.to_owned(),
                    });
                }
                TrailerKey::TaskRef if !is_valid_task_ref(value) => {
                    problems.push(TrailerProblem::MalformedTaskRef {
                        value: value.to_owned(),
                    });
                }
                _ => {}
            },
        }
    }
    problems
}

/// The identity block kept in a squash-merge message: every distinct `Agent-*` and
/// `Task-Ref` trailer line across the commits, in first-seen order. `None` when there is
/// no such trailer (the merge then keeps GitHub's default message).
pub fn identity_block<'a>(commits: impl IntoIterator<Item = &'a Trailers>) -> Option<String> {
    let mut seen: Vec<String> = Vec::new();
    for trailers in commits {
        for (key, value) in trailers.iter() {
            if key.starts_with("Agent-") || key == "Task-Ref" {
                let line = format!("{key}: {value}");
                if !seen.contains(&line) {
                    seen.push(line);
                }
            }
        }
    }
    (!seen.is_empty()).then(|| seen.join("\n"))
}

#[cfg(test)]
mod tests;
