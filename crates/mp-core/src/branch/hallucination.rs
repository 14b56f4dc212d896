//! Hallucination guard: file paths quoted in a commit body that do not exist at the commit.
//!
//! Candidates are backtick-quoted tokens of the body that look like file paths:
//! `` `([a-zA-Z0-9_./-]{4,200}\.[a-zA-Z]{1,5})` ``. The caller looks each one up at the
//! commit; a path that is missing is listed once in a `decision:hallucination-detected`
//! incident, and a path whose lookup failed is skipped (best effort, never an alarm).

use std::fmt;
use std::sync::LazyLock;

use regex::Regex;

use crate::branch::incident::IncidentLabel;
use crate::ids::CommitSha;

static PATH_TOKEN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"`([a-zA-Z0-9_./-]{4,200}\.[a-zA-Z]{1,5})`").expect("valid regex")
});

/// The candidate paths of a commit body, de-duplicated, in first-seen order.
pub fn candidate_paths(body: &str) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    for caps in PATH_TOKEN.captures_iter(body) {
        if let Some(m) = caps.get(1)
            && !paths.iter().any(|p| p == m.as_str())
        {
            paths.push(m.as_str().to_owned());
        }
    }
    paths
}

/// What looking a path up at the commit found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathLookup {
    /// The path exists at the commit.
    Exists,
    /// The path does not exist at the commit.
    Missing,
    /// The lookup failed (not a plain "not found"); the path is skipped.
    Error(String),
}

/// The hallucination guard's verdict for one commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HallucinationVerdict {
    /// Every path that could be looked up exists (or there were no candidates).
    Clean {
        /// How many paths were found to exist.
        checked: usize,
        /// Paths whose lookup failed and were skipped.
        skipped: Vec<String>,
    },
    /// Some quoted paths do not exist at the commit.
    Detected {
        /// The commit.
        sha: CommitSha,
        /// The missing paths, each once, in first-seen order.
        missing: Vec<String>,
        /// Paths whose lookup failed and were skipped.
        skipped: Vec<String>,
    },
}

impl HallucinationVerdict {
    /// Stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Clean { .. } => "references_exist",
            Self::Detected { .. } => "hallucination_detected",
        }
    }

    /// The incident this verdict raises, if any.
    pub fn incident(&self) -> Option<IncidentLabel> {
        matches!(self, Self::Detected { .. }).then_some(IncidentLabel::HallucinationDetected)
    }

    /// The Markdown body of the incident, when the verdict raises one.
    pub fn incident_body(&self) -> Option<String> {
        let Self::Detected { sha, missing, .. } = self else {
            return None;
        };
        let list: Vec<String> = missing.iter().map(|p| format!("- `{p}`")).collect();
        Some(format!(
            "Commit `{short}` names {n} path(s) in its message body that do not exist at that \
             commit; the references were probably invented.\n\n\
             Missing paths:\n{list}\n\n\
             If a path is meant to arrive in a later commit, close this issue with a comment \
             saying so.",
            short = sha.short(),
            n = missing.len(),
            list = list.join("\n"),
        ))
    }
}

impl fmt::Display for HallucinationVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Clean { checked, skipped } if skipped.is_empty() => {
                write!(f, "all {checked} referenced path(s) exist")
            }
            Self::Clean { checked, skipped } => write!(
                f,
                "all {checked} checked path(s) exist; lookup failed for {}",
                skipped.join(", ")
            ),
            Self::Detected { sha, missing, .. } => write!(
                f,
                "commit {} references missing path(s): {}",
                sha.short(),
                missing.join(", ")
            ),
        }
    }
}

/// The verdict for commit `sha` given the lookup result of each candidate path.
/// Repeated paths count once.
pub fn hallucination_verdict(
    sha: &CommitSha,
    lookups: &[(String, PathLookup)],
) -> HallucinationVerdict {
    let mut seen: Vec<&str> = Vec::new();
    let mut checked = 0;
    let mut missing: Vec<String> = Vec::new();
    let mut skipped: Vec<String> = Vec::new();
    for (path, lookup) in lookups {
        if seen.contains(&path.as_str()) {
            continue;
        }
        seen.push(path);
        match lookup {
            PathLookup::Exists => checked += 1,
            PathLookup::Missing => missing.push(path.clone()),
            PathLookup::Error(_) => skipped.push(path.clone()),
        }
    }
    if missing.is_empty() {
        HallucinationVerdict::Clean { checked, skipped }
    } else {
        HallucinationVerdict::Detected {
            sha: sha.clone(),
            missing,
            skipped,
        }
    }
}

#[cfg(test)]
mod tests;
