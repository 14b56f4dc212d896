//! Git trailers and the identity-trailer contract (C5).
//!
//! Parsing follows git's trailer rules for a commit (ADR 0046): the trailers are the last
//! paragraph of the message, never the subject paragraph, and every line of that paragraph
//! must be `Key: value` (a line starting with whitespace continues the previous value). If
//! any line of the last paragraph is not a trailer, the message has no trailers at all, so
//! an `Agent-Tool:` line in the middle of prose never counts. A line is blank only when git
//! says so: it holds nothing but spaces, tabs and carriage returns. A line holding a
//! NO-BREAK SPACE, a form feed or any other Unicode space is text, and does not end a
//! paragraph.
//!
//! Before looking for that paragraph, the message is cut the way git cuts it for trailers
//! ([`message_text`]): everything from git's scissors line on is dropped, and so is the
//! trailing run of comment lines (starting with `#`) and empty lines; comment lines inside
//! the paragraph are passed over. C5, the squash identity block and `mp commit-msg check`
//! all go through [`Trailers::parse`], so they never disagree about one message, and a
//! unit test compares it with `git interpret-trailers --parse` itself.

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

/// git's whitespace, as its own character table defines it: space, tab, line feed and
/// carriage return. Nothing else is whitespace to git — not a form feed, not U+00A0
/// NO-BREAK SPACE, not any other Unicode space — so a line holding one of those is not
/// blank and a value keeps it.
fn is_git_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// A line git takes for blank: nothing but [`is_git_space`] characters.
fn is_blank(line: &str) -> bool {
    line.chars().all(is_git_space)
}

fn starts_with_git_space(line: &str) -> bool {
    line.starts_with(is_git_space)
}

fn trim_git(text: &str) -> &str {
    text.trim_matches(is_git_space)
}

/// Where the key of a trailer line ends, as git finds it: the line starts with ASCII
/// letters, digits and `-`, then maybe spaces or tabs, then `:`. `None` for any other line
/// (a line starting with whitespace, or with `:`, included).
fn separator(line: &str) -> Option<usize> {
    let mut spaced = false;
    for (position, byte) in line.bytes().enumerate() {
        if byte == b':' {
            return (position >= 1).then_some(position);
        }
        if !spaced && (byte.is_ascii_alphanumeric() || byte == b'-') {
            continue;
        }
        if position > 0 && (byte == b' ' || byte == b'\t') {
            spaced = true;
            continue;
        }
        return None;
    }
    None
}

/// The line prefixes git counts as trailers it wrote itself.
const GIT_GENERATED: [&str; 2] = ["Signed-off-by: ", "(cherry picked from commit "];

/// A folded value on one line: each line break and the whitespace after it become one
/// space, and the ends are trimmed.
fn unfold(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\n' {
            while chars.next_if(|&next| is_git_space(next)).is_some() {}
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    trim_git(&out).to_owned()
}

/// Each line of `text` (its line feed kept) with its byte offset.
fn lines_at(text: &str) -> Vec<(usize, &str)> {
    let mut offset = 0;
    text.split_inclusive('\n')
        .map(|line| {
            let at = offset;
            offset += line.len();
            (at, line)
        })
        .collect()
}

/// git's scissors line, after the comment character and a space: `git commit --verbose`
/// and `--cleanup=scissors` drop it and everything below it.
pub const SCISSORS: &str = "------------------------ >8 ------------------------";

/// The part of `message` git reads trailers from: nothing from git's scissors line on (the
/// exact line `# ------------------------ >8 ------------------------` and its line feed),
/// and not the trailing run of comment lines (starting with `#`), empty lines and an old
/// `Conflicts:` block (that line, then lines starting with a tab). Comment lines above that
/// run stay: the trailer rules skip them.
pub fn message_text(message: &str) -> &str {
    let cut_line = format!("# {SCISSORS}\n");
    let cutoff = lines_at(message)
        .into_iter()
        .find(|(_, line)| *line == cut_line)
        .map_or(message.len(), |(at, _)| at);
    // Where the trailing run starts; 0 stands for "no run", as in git's own bookkeeping
    // (so a run that would start at the first line starts at its next member instead).
    let mut run = 0;
    let mut in_conflicts = false;
    for (at, line) in lines_at(&message[..cutoff]) {
        if line.starts_with('#') || line == "\n" {
            if run == 0 {
                run = at;
            }
        } else if line == "Conflicts:\n" {
            in_conflicts = true;
            if run == 0 {
                run = at;
            }
        } else if in_conflicts && line.starts_with('\t') {
            // A path of the old conflicts block.
        } else if run != 0 {
            run = 0;
            in_conflicts = false;
        }
    }
    &message[..if run == 0 { cutoff } else { run }]
}

/// git's trailer block of `text` (a [`message_text`]): where it starts, and whether every
/// line in it is a trailer, a continuation of one, or a comment. `None` when git finds no
/// block.
///
/// The block is the last paragraph, never the first one (the subject), found from the end:
/// blank lines at the very end are skipped, comment lines are passed over, and the first
/// blank line above some text ends it. git takes it for trailers when all its lines are
/// trailers or continuations, or when one of them is a line git itself writes
/// ([`GIT_GENERATED`]) and at least a quarter of them are trailers.
fn trailer_block(text: &str) -> Option<(usize, bool)> {
    let lines = lines_at(text);
    let end_of_title = lines
        .iter()
        .find(|(_, line)| !line.starts_with('#') && is_blank(line))
        .map_or(text.len(), |(at, _)| *at);
    let (mut trailers, mut others, mut maybe_continued) = (0usize, 0usize, 0usize);
    let (mut only_blank, mut generated) = (true, false);
    for &(at, line) in lines.iter().rev() {
        if at < end_of_title {
            break;
        }
        if line.starts_with('#') {
            others += maybe_continued;
            maybe_continued = 0;
            continue;
        }
        if is_blank(line) {
            if only_blank {
                continue;
            }
            others += maybe_continued;
            let start = at + line.len();
            return if trailers > 0 && others == 0 {
                Some((start, true))
            } else if generated && trailers * 3 >= others {
                Some((start, false))
            } else {
                None
            };
        }
        only_blank = false;
        if GIT_GENERATED.iter().any(|prefix| line.starts_with(prefix)) {
            trailers += 1;
            maybe_continued = 0;
            generated = true;
        } else if separator(line).is_some() {
            trailers += 1;
            maybe_continued = 0;
        } else if starts_with_git_space(line) {
            maybe_continued += 1;
        } else {
            others += 1 + maybe_continued;
            maybe_continued = 0;
        }
    }
    None
}

impl Trailers {
    /// Parses the trailers of a commit message as git reads a commit's trailers (`git log
    /// --format=%(trailers)`, or `git interpret-trailers --parse --no-divider`), from
    /// [`message_text`]. One rule is stricter than git's: when the trailer paragraph holds a
    /// line that is not a trailer (git accepts that next to a `Signed-off-by:` line), the
    /// message has no trailers at all. So mp never reads a trailer git does not read.
    /// Never fails: a message without a valid trailer paragraph simply has no trailers.
    pub fn parse(message: &str) -> Self {
        let text = message_text(message);
        let Some((start, true)) = trailer_block(text) else {
            return Self::default();
        };
        // A line starting with whitespace continues the trailer line just above it.
        let mut items: Vec<String> = Vec::new();
        let mut last_is_trailer = false;
        for line in text[start..].split_inclusive('\n') {
            if last_is_trailer && starts_with_git_space(line) {
                if let Some(last) = items.last_mut() {
                    last.push_str(line);
                }
                continue;
            }
            last_is_trailer = separator(line).is_some();
            items.push(line.to_owned());
        }
        let entries = items
            .iter()
            .filter(|item| !item.starts_with('#'))
            .filter_map(|item| {
                let at = separator(item)?;
                Some((
                    trim_git(&item[..at]).to_owned(),
                    unfold(trim_git(&item[at + 1..])),
                ))
            })
            .collect();
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
