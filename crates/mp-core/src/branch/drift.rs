//! Mirror drift: canonical files of the governance repo compared with each adopter repo by
//! git blob SHA.
//!
//! For every canonical path not excepted for the adopter, the blob SHA in the governance
//! tree is compared with the adopter's: different is `differs`, absent in the adopter is
//! `missing`, absent in the governance repo itself is `canonical_missing` (a configuration
//! bug, attributed to the governance repo). All findings of one tick become one
//! `decision:mirror-drift-incident` issue whose key is derived from the findings, so the
//! same unresolved drift finds its issue again while any change opens a new one. Drift is
//! only detected, never fixed.

use std::collections::BTreeMap;
use std::fmt;

use sha1::{Digest, Sha1};

use crate::branch::incident::{IncidentKey, sha256_hex12};
use crate::ids::RepoName;

/// The git blob id of `bytes`: hex SHA-1 of `"blob <len>\0"` followed by the bytes (what
/// `git hash-object` prints).
pub fn blob_sha(bytes: &[u8]) -> String {
    let mut hasher = Sha1::new();
    hasher.update(format!("blob {}\0", bytes.len()).as_bytes());
    hasher.update(bytes);
    hex::encode(hasher.finalize())
}

/// One repository's files as path → git blob SHA (e.g. from a recursive tree listing).
#[derive(Debug, Clone, Copy)]
pub struct RepoTree<'a> {
    /// The repository.
    pub repo: &'a RepoName,
    /// Path → blob SHA.
    pub blobs: &'a BTreeMap<String, String>,
}

/// How a canonical path drifted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DriftKind {
    /// Present in both repositories with different content.
    Differs,
    /// Absent in the adopter.
    Missing,
    /// Absent in the governance repo: the canonical path list names a file that is not there.
    CanonicalMissing,
}

impl DriftKind {
    /// `differs`, `missing` or `canonical_missing`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Differs => "differs",
            Self::Missing => "missing",
            Self::CanonicalMissing => "canonical_missing",
        }
    }
}

impl fmt::Display for DriftKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One drifted canonical path in one repository.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DriftFinding {
    /// The adopter, or the governance repo for [`DriftKind::CanonicalMissing`].
    pub repo: RepoName,
    /// The canonical path.
    pub path: String,
    /// How it drifted.
    pub kind: DriftKind,
    /// The governance blob SHA, when present.
    pub canonical_sha: Option<String>,
    /// The adopter blob SHA, when present.
    pub adopter_sha: Option<String>,
}

impl DriftFinding {
    /// Stable snake_case code (the kind).
    pub fn code(&self) -> &'static str {
        match self.kind {
            DriftKind::Differs => "drift_differs",
            DriftKind::Missing => "drift_missing",
            DriftKind::CanonicalMissing => "drift_canonical_missing",
        }
    }

    /// The line this finding contributes to the dedupe key:
    /// `adopter|path|kind|canonical|adopter_sha`, an absent SHA written `None`.
    pub fn key_line(&self) -> String {
        format!(
            "{}|{}|{}|{}|{}",
            self.repo,
            self.path,
            self.kind,
            self.canonical_sha.as_deref().unwrap_or("None"),
            self.adopter_sha.as_deref().unwrap_or("None"),
        )
    }
}

fn sha12(sha: Option<&String>) -> &str {
    sha.map_or("?", |s| s.get(..12).unwrap_or(s))
}

impl fmt::Display for DriftFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            DriftKind::Differs => write!(
                f,
                "{}: {} differs from canonical (canonical {}, adopter {})",
                self.repo,
                self.path,
                sha12(self.canonical_sha.as_ref()),
                sha12(self.adopter_sha.as_ref())
            ),
            DriftKind::Missing => write!(
                f,
                "{}: {} is missing (canonical {})",
                self.repo,
                self.path,
                sha12(self.canonical_sha.as_ref())
            ),
            DriftKind::CanonicalMissing => write!(
                f,
                "{}: canonical path {} does not exist in the governance repo",
                self.repo, self.path
            ),
        }
    }
}

/// Compares one adopter with the governance repo over `canonical_paths`, skipping the
/// adopter's `exceptions` and repeated paths. Findings follow the order of the paths.
pub fn compare_trees(
    canonical: RepoTree<'_>,
    adopter: RepoTree<'_>,
    canonical_paths: &[String],
    exceptions: &[String],
) -> Vec<DriftFinding> {
    let mut findings = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for path in canonical_paths {
        if exceptions.contains(path) || seen.contains(&path.as_str()) {
            continue;
        }
        seen.push(path);
        let Some(canonical_sha) = canonical.blobs.get(path) else {
            findings.push(DriftFinding {
                repo: canonical.repo.clone(),
                path: path.clone(),
                kind: DriftKind::CanonicalMissing,
                canonical_sha: None,
                adopter_sha: None,
            });
            continue;
        };
        let kind = match adopter.blobs.get(path) {
            None => DriftKind::Missing,
            Some(sha) if sha != canonical_sha => DriftKind::Differs,
            Some(_) => continue,
        };
        findings.push(DriftFinding {
            repo: adopter.repo.clone(),
            path: path.clone(),
            kind,
            canonical_sha: Some(canonical_sha.clone()),
            adopter_sha: adopter.blobs.get(path).cloned(),
        });
    }
    findings
}

/// The dedupe key of one tick's drift findings: `mirror-drift-` and the first 12 hex of
/// the SHA-256 of the sorted [`DriftFinding::key_line`]s joined by `"\n"`.
pub fn drift_dedupe_key(findings: &[DriftFinding]) -> IncidentKey {
    let mut lines: Vec<String> = findings.iter().map(DriftFinding::key_line).collect();
    lines.sort_unstable();
    IncidentKey::from_trusted(format!("mirror-drift-{}", sha256_hex12(&lines.join("\n"))))
}

/// The Markdown body of the drift incident: findings grouped by repository (sorted), each
/// group split into differing, missing and canonical-configuration problems.
pub fn drift_incident_body(findings: &[DriftFinding]) -> String {
    let mut by_repo: BTreeMap<&RepoName, Vec<&DriftFinding>> = BTreeMap::new();
    for finding in findings {
        let group = by_repo.entry(&finding.repo).or_default();
        if !group.contains(&finding) {
            group.push(finding);
        }
    }
    let mut out = vec!["**Canonical files drifted.**".to_owned(), String::new()];
    for (repo, items) in by_repo {
        out.push(format!("### {repo}"));
        let sections = [
            (DriftKind::Differs, "Differs:"),
            (DriftKind::Missing, "Missing:"),
            (
                DriftKind::CanonicalMissing,
                "Canonical config bug (listed as canonical but absent in the governance repo):",
            ),
        ];
        for (kind, heading) in sections {
            let of_kind: Vec<&&DriftFinding> = items.iter().filter(|i| i.kind == kind).collect();
            if of_kind.is_empty() {
                continue;
            }
            out.push(heading.to_owned());
            for item in of_kind {
                out.push(match kind {
                    DriftKind::Differs => format!(
                        "- `{}` (canonical {}, adopter {})",
                        item.path,
                        sha12(item.canonical_sha.as_ref()),
                        sha12(item.adopter_sha.as_ref())
                    ),
                    _ => format!("- `{}`", item.path),
                });
            }
        }
        out.push(String::new());
    }
    out.push(
        "Copy the canonical files to the adopters (or list deliberate differences as \
         exceptions in `mirror_paths.json`). The bot only reports drift; it never fixes it."
            .to_owned(),
    );
    out.join("\n")
}

#[cfg(test)]
mod tests;
