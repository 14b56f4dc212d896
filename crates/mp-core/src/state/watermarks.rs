//! The branch supervisor's watermarks file, `bot-state/branch_supervisor_watermarks.json`.
//!
//! A JSON object with sorted keys:
//!
//! ```text
//! {
//!   "_bot_state_checked_through": "<newest bot-state tip whose writers were checked>",
//!   "_break_glass_pending": {"<owner>/<repo>:<sha>": "<pushed at>"},
//!   "_l2_unsettled": {"<owner>/<repo>:<sha>": "<first seen>"},
//!   "<owner>/<repo>": "<last sha scanned by L5 and the branch hooks>",
//!   "<owner>/<repo>:l2": "<last sha settled by L2>"
//! }
//! ```
//!
//! A watermark that is missing, `null`, empty or not a string means "never scanned": the
//! supervisor bootstraps it at the current `main` head and scans nothing older. Anything
//! else that does not fit (not JSON, not an object, a watermark that is not a commit SHA,
//! a malformed reserved map) is corruption, and the tick fails closed on it. Keys this
//! version does not know are kept verbatim, so an older bot never erases a newer one's
//! state. The text is rewritten deterministically: sorted keys, two-space indent, one
//! trailing newline, and reserved maps only when they hold something.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Map, Value};

use crate::ids::{CommitSha, RepoName, Timestamp};

/// The reserved key of the commits L2 has seen unsettled, with their first-seen times.
pub const UNSETTLED_KEY: &str = "_l2_unsettled";

/// The reserved key of the newest `bot-state` tip whose writers a tick checked against
/// GitHub's activity log: the next tick checks only the updates after it.
pub const CHECKED_THROUGH_KEY: &str = "_bot_state_checked_through";

/// The reserved key of the break-glass commits whose ADR deadline has not passed yet,
/// with the time GitHub's activity log gives each push; they are audited again on every
/// tick until settled.
pub const BREAK_GLASS_PENDING_KEY: &str = "_break_glass_pending";

const L2_SUFFIX: &str = ":l2";

/// Which scan a watermark belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Layer {
    /// The L5 scan and the branch hooks (break-glass audit, unauthorized push,
    /// hallucination guard): key `<owner>/<repo>`.
    L5,
    /// L2 post-merge re-validation: key `<owner>/<repo>:l2`.
    L2,
}

impl Layer {
    /// Both layers, in scan order.
    pub const ALL: [Layer; 2] = [Layer::L5, Layer::L2];

    /// `l5` or `l2`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::L5 => "l5",
            Self::L2 => "l2",
        }
    }

    /// The state-file key of this layer's watermark for `repo`.
    pub fn key(self, repo: &RepoName) -> String {
        match self {
            Self::L5 => repo.as_str().to_owned(),
            Self::L2 => format!("{repo}{L2_SUFFIX}"),
        }
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why the watermarks file cannot be trusted. The tick fails closed on any of these.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CorruptStateError {
    /// The text is not JSON.
    #[error("not JSON: {message}")]
    NotJson {
        /// The parser's message.
        message: String,
    },
    /// The top level is not an object.
    #[error("expected a JSON object at the top level, found {found}")]
    NotAnObject {
        /// The JSON type found instead.
        found: &'static str,
    },
    /// A watermark is a string but not a commit SHA.
    #[error("watermark {key:?} is not a commit SHA: {value:?}")]
    BadWatermark {
        /// The key.
        key: String,
        /// The value found.
        value: String,
    },
    /// Two keys name the same watermark once repository names are lower-cased.
    #[error("watermark {key:?} appears twice")]
    DuplicateKey {
        /// The second key.
        key: String,
    },
    /// A reserved map (`_l2_unsettled`, `_break_glass_pending`) is malformed.
    #[error("{key:?}: {reason}")]
    BadEntry {
        /// The reserved key, or `<reserved key>.<entry key>`.
        key: String,
        /// What is wrong.
        reason: String,
    },
}

impl CorruptStateError {
    /// Stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::NotJson { .. } => "state_not_json",
            Self::NotAnObject { .. } => "state_not_an_object",
            Self::BadWatermark { .. } => "state_bad_watermark",
            Self::DuplicateKey { .. } => "state_duplicate_key",
            Self::BadEntry { .. } => "state_bad_entry",
        }
    }
}

/// Commits keyed by repository and SHA, with a time (first seen).
type CommitTimes = BTreeMap<(RepoName, CommitSha), Timestamp>;

/// The branch supervisor's durable state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Watermarks {
    marks: BTreeMap<(RepoName, Layer), CommitSha>,
    unsettled: CommitTimes,
    pending_break_glass: CommitTimes,
    checked_through: Option<CommitSha>,
    unknown: BTreeMap<String, Value>,
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Reads a reserved `{"<owner>/<repo>:<sha>": "<time>"}` map; `null` is empty.
fn parse_commit_times(key: &str, value: Value) -> Result<CommitTimes, CorruptStateError> {
    let bad = |entry: &str, reason: String| CorruptStateError::BadEntry {
        key: if entry.is_empty() {
            key.to_owned()
        } else {
            format!("{key}.{entry}")
        },
        reason,
    };
    let map = match value {
        Value::Null => return Ok(CommitTimes::new()),
        Value::Object(map) => map,
        other => {
            return Err(bad(
                "",
                format!("expected an object, found {}", json_kind(&other)),
            ));
        }
    };
    let mut times = CommitTimes::new();
    for (entry, value) in map {
        let (repo, sha) = entry
            .rsplit_once(':')
            .ok_or_else(|| bad(&entry, "expected `<owner>/<repo>:<sha>`".to_owned()))?;
        let repo = RepoName::parse(repo).map_err(|e| bad(&entry, e.to_string()))?;
        let sha = CommitSha::parse(sha).map_err(|e| bad(&entry, e.to_string()))?;
        let Value::String(text) = &value else {
            return Err(bad(
                &entry,
                format!("expected a time string, found {}", json_kind(&value)),
            ));
        };
        let at = Timestamp::parse(text).map_err(|e| bad(&entry, e.to_string()))?;
        if times.insert((repo, sha), at).is_some() {
            return Err(bad(&entry, "appears twice".to_owned()));
        }
    }
    Ok(times)
}

fn commit_times_json(times: &CommitTimes) -> Value {
    let sorted: BTreeMap<String, String> = times
        .iter()
        .map(|((repo, sha), at)| (format!("{repo}:{sha}"), at.to_string()))
        .collect();
    let mut map = Map::new();
    for (key, at) in sorted {
        map.insert(key, Value::String(at));
    }
    Value::Object(map)
}

impl Watermarks {
    /// No watermarks: every repository bootstraps.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads the state file's text (see the module docs for what counts as corrupt).
    ///
    /// # Errors
    /// [`CorruptStateError`] when the text cannot be trusted.
    pub fn parse(text: &str) -> Result<Self, CorruptStateError> {
        let value: Value = serde_json::from_str(text).map_err(|e| CorruptStateError::NotJson {
            message: e.to_string(),
        })?;
        let Value::Object(map) = value else {
            return Err(CorruptStateError::NotAnObject {
                found: json_kind(&value),
            });
        };
        let mut state = Self::default();
        for (key, value) in map {
            if key == UNSETTLED_KEY {
                state.unsettled = parse_commit_times(&key, value)?;
                continue;
            }
            if key == BREAK_GLASS_PENDING_KEY {
                state.pending_break_glass = parse_commit_times(&key, value)?;
                continue;
            }
            if key == CHECKED_THROUGH_KEY {
                let sha = value
                    .as_str()
                    .and_then(|text| CommitSha::parse(text).ok())
                    .ok_or_else(|| CorruptStateError::BadEntry {
                        key: key.clone(),
                        reason: "expected a commit SHA".to_owned(),
                    })?;
                state.checked_through = Some(sha);
                continue;
            }
            let (repo, layer) = match key.strip_suffix(L2_SUFFIX) {
                Some(repo) => (repo, Layer::L2),
                None => (key.as_str(), Layer::L5),
            };
            let Ok(repo) = RepoName::parse(repo) else {
                state.unknown.insert(key, value);
                continue;
            };
            // Missing, null, empty or non-string: never scanned, so bootstrap.
            let Value::String(text) = value else {
                continue;
            };
            if text.is_empty() {
                continue;
            }
            let sha = CommitSha::parse(&text).map_err(|_| CorruptStateError::BadWatermark {
                key: key.clone(),
                value: text.chars().take(80).collect(),
            })?;
            if state.marks.insert((repo, layer), sha).is_some() {
                return Err(CorruptStateError::DuplicateKey { key });
            }
        }
        Ok(state)
    }

    /// The state file's text: sorted keys, two-space indent, trailing newline.
    pub fn to_json(&self) -> String {
        let mut out: BTreeMap<String, Value> = self.unknown.clone();
        for ((repo, layer), sha) in &self.marks {
            out.insert(layer.key(repo), Value::String(sha.to_string()));
        }
        if !self.unsettled.is_empty() {
            out.insert(UNSETTLED_KEY.to_owned(), commit_times_json(&self.unsettled));
        }
        if let Some(sha) = &self.checked_through {
            out.insert(
                CHECKED_THROUGH_KEY.to_owned(),
                Value::String(sha.to_string()),
            );
        }
        if !self.pending_break_glass.is_empty() {
            out.insert(
                BREAK_GLASS_PENDING_KEY.to_owned(),
                commit_times_json(&self.pending_break_glass),
            );
        }
        let mut text =
            serde_json::to_string_pretty(&out).expect("a map of JSON values always serialises");
        text.push('\n');
        text
    }

    /// The watermark of `layer` for `repo`; `None` means bootstrap.
    pub fn get(&self, repo: &RepoName, layer: Layer) -> Option<&CommitSha> {
        self.marks.get(&(repo.clone(), layer))
    }

    /// Moves the watermark of `layer` for `repo` to `sha`.
    pub fn set(&mut self, repo: &RepoName, layer: Layer, sha: CommitSha) {
        self.marks.insert((repo.clone(), layer), sha);
    }

    /// When L2 first saw `sha` of `repo` unsettled, if it is still tracked.
    pub fn unsettled_since(&self, repo: &RepoName, sha: &CommitSha) -> Option<Timestamp> {
        self.unsettled.get(&(repo.clone(), sha.clone())).copied()
    }

    /// Records that L2 sees `sha` of `repo` unsettled at `now` and returns its first-seen
    /// time (an earlier record is kept).
    pub fn track_unsettled(
        &mut self,
        repo: &RepoName,
        sha: &CommitSha,
        now: Timestamp,
    ) -> Timestamp {
        *self
            .unsettled
            .entry((repo.clone(), sha.clone()))
            .or_insert(now)
    }

    /// Forgets the unsettled record of `sha` of `repo` (it settled or was force-settled).
    pub fn settle(&mut self, repo: &RepoName, sha: &CommitSha) {
        self.unsettled.remove(&(repo.clone(), sha.clone()));
    }

    /// Forgets every unsettled record of `repo` (its L2 watermark was reset).
    pub fn forget_unsettled(&mut self, repo: &RepoName) {
        self.unsettled.retain(|(r, _), _| r != repo);
    }

    /// How many commits are tracked as unsettled, across repositories (`l2_unsettled`).
    pub fn unsettled_count(&self) -> usize {
        self.unsettled.len()
    }

    /// How many commits of the repositories `owns` accepts are tracked as unsettled (a
    /// sharded tick's `l2_unsettled`).
    pub fn unsettled_count_of(&self, owns: impl Fn(&RepoName) -> bool) -> usize {
        self.unsettled.keys().filter(|(repo, _)| owns(repo)).count()
    }

    /// The newest `bot-state` tip whose writers were checked (see [`CHECKED_THROUGH_KEY`]).
    pub fn checked_through(&self) -> Option<&CommitSha> {
        self.checked_through.as_ref()
    }

    /// Records the newest `bot-state` tip whose writers were checked.
    pub fn set_checked_through(&mut self, tip: CommitSha) {
        self.checked_through = Some(tip);
    }

    /// The break-glass commits of `repo` waiting for their ADR, with the time GitHub's
    /// activity log gives their push (the deadline counts from it).
    pub fn pending_break_glass(&self, repo: &RepoName) -> Vec<(CommitSha, Timestamp)> {
        self.pending_break_glass
            .iter()
            .filter(|((r, _), _)| r == repo)
            .map(|((_, sha), at)| (sha.clone(), *at))
            .collect()
    }

    /// Records a break-glass commit waiting for its ADR, pushed at `pushed_at` (an
    /// earlier record is kept).
    pub fn track_break_glass(&mut self, repo: &RepoName, sha: &CommitSha, pushed_at: Timestamp) {
        self.pending_break_glass
            .entry((repo.clone(), sha.clone()))
            .or_insert(pushed_at);
    }

    /// Forgets a waiting break-glass commit (audited, or its incident is filed).
    pub fn clear_break_glass(&mut self, repo: &RepoName, sha: &CommitSha) {
        self.pending_break_glass
            .remove(&(repo.clone(), sha.clone()));
    }

    /// `base` with the entries of the repositories `owns` accepts replaced by this
    /// state's: watermarks, unsettled commits and pending break-glass commits. Everything
    /// else (other repositories, keys this version does not know) comes from `base`. A
    /// sharded tick saves this way over the file as it reads it now, so shards that save
    /// one after the other never erase each other's entries.
    #[must_use]
    pub fn merged_into(&self, base: &Watermarks, owns: impl Fn(&RepoName) -> bool) -> Watermarks {
        let mut merged = base.clone();
        merged.marks.retain(|(repo, _), _| !owns(repo));
        merged.unsettled.retain(|(repo, _), _| !owns(repo));
        merged
            .pending_break_glass
            .retain(|(repo, _), _| !owns(repo));
        let mine = |times: &CommitTimes| -> CommitTimes {
            times
                .iter()
                .filter(|((repo, _), _)| owns(repo))
                .map(|(key, at)| (key.clone(), *at))
                .collect()
        };
        merged.marks.extend(
            self.marks
                .iter()
                .filter(|((repo, _), _)| owns(repo))
                .map(|(key, sha)| (key.clone(), sha.clone())),
        );
        merged.unsettled.extend(mine(&self.unsettled));
        merged
            .pending_break_glass
            .extend(mine(&self.pending_break_glass));
        merged
    }

    /// Whether nothing is recorded at all (a first run).
    pub fn is_empty(&self) -> bool {
        self.marks.is_empty()
            && self.unsettled.is_empty()
            && self.pending_break_glass.is_empty()
            && self.unknown.is_empty()
    }
}
