//! The path rule (`classifier_path_default`): its pattern lists (`classifier_rules.yml`),
//! their shipped default, compilation to globs, and the evaluation of a pull request's files.

use std::fmt;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use super::{RuleId, Vote, is_are, write_list};
use crate::context::{FileChange, FileStatus};
use crate::quadrant::Quadrant;

/// The three glob lists of the path rule, as written in `classifier_rules.yml`.
///
/// Patterns are path globs where `*` never crosses `/` and `**` spans directories.
/// Every list is matched against a file's path and, for renames, its previous path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathRulesSpec {
    /// A change to any matching path makes the pull request Quadrant D.
    pub always_d: Vec<String>,
    /// Matching paths are append-only: adding is fine, any other change is Quadrant D.
    pub append_only: Vec<String>,
    /// A change to any matching path makes the pull request critical (B, or D if it also
    /// removes a file).
    pub critical: Vec<String>,
}

impl Default for PathRulesSpec {
    /// The shipped default, equivalent to the reference bot's hard-coded prefixes.
    fn default() -> Self {
        let list = |items: &[&str]| items.iter().map(|s| (*s).to_owned()).collect();
        Self {
            always_d: list(&[
                "docs/concepts/**",
                "config/**",
                "governance/**",
                ".github/workflows/**",
                ".github/scripts/**",
                ".github/actions/**",
                "schemas/**",
                "bot-state/**",
            ]),
            append_only: list(&["docs/decisions/**", "docs/meetings/**"]),
            critical: list(&[
                "src/**",
                "schemas/**",
                "docs/concepts/**",
                ".github/workflows/**",
                "config/**",
                "governance/**",
            ]),
        }
    }
}

/// One of the three pattern lists of [`PathRulesSpec`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PathList {
    /// `always_d`.
    AlwaysD,
    /// `append_only`.
    AppendOnly,
    /// `critical`.
    Critical,
}

impl PathList {
    /// The list's key in `classifier_rules.yml`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AlwaysD => "always_d",
            Self::AppendOnly => "append_only",
            Self::Critical => "critical",
        }
    }
}

impl fmt::Display for PathList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A pattern of [`PathRulesSpec`] could not be compiled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("classifier path rules: {list}[{index}] {pattern:?} is not a valid glob: {reason}")]
pub struct CompilePathRulesError {
    list: PathList,
    index: usize,
    pattern: String,
    reason: String,
}

impl CompilePathRulesError {
    /// The list holding the bad pattern.
    pub fn list(&self) -> PathList {
        self.list
    }

    /// The pattern's position in its list, from 0.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The bad pattern.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Why it was refused.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

/// One compiled list: the glob set and the patterns it came from.
#[derive(Debug, Clone)]
struct CompiledList {
    set: GlobSet,
    patterns: Vec<String>,
}

impl CompiledList {
    fn compile(list: PathList, patterns: &[String]) -> Result<Self, CompilePathRulesError> {
        let error = |index: usize, pattern: &str, reason: String| CompilePathRulesError {
            list,
            index,
            pattern: pattern.to_owned(),
            reason,
        };
        let mut builder = GlobSetBuilder::new();
        for (index, pattern) in patterns.iter().enumerate() {
            // GitHub reports paths relative to the repository root, so an absolute pattern
            // would silently never match: refuse it rather than let a rule go dead.
            if pattern.starts_with('/') {
                let reason = "patterns are relative to the repository root; drop the leading /";
                return Err(error(index, pattern, reason.to_owned()));
            }
            let glob = GlobBuilder::new(pattern)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .map_err(|e| error(index, pattern, e.kind().to_string()))?;
            builder.add(glob);
        }
        let set = builder.build().map_err(|e| {
            let pattern = e.glob().unwrap_or_default();
            let index = patterns.iter().position(|p| p == pattern).unwrap_or(0);
            error(index, pattern, e.kind().to_string())
        })?;
        Ok(Self {
            set,
            patterns: patterns.to_vec(),
        })
    }

    /// The first pattern (in list order) matching the path.
    fn first_match(&self, path: &str) -> Option<&str> {
        let index = self.set.matches(path).into_iter().min()?;
        self.patterns.get(index).map(String::as_str)
    }
}

/// The compiled path rules: three glob lists where `*` never crosses `/`.
#[derive(Debug, Clone)]
pub struct PathRules {
    spec: PathRulesSpec,
    always_d: CompiledList,
    append_only: CompiledList,
    critical: CompiledList,
}

impl PathRules {
    /// Compiles the three lists.
    ///
    /// # Errors
    /// Returns [`CompilePathRulesError`] naming the list, index and pattern of the first
    /// pattern that is not a valid glob or starts with `/`.
    pub fn compile(spec: &PathRulesSpec) -> Result<Self, CompilePathRulesError> {
        Ok(Self {
            spec: spec.clone(),
            always_d: CompiledList::compile(PathList::AlwaysD, &spec.always_d)?,
            append_only: CompiledList::compile(PathList::AppendOnly, &spec.append_only)?,
            critical: CompiledList::compile(PathList::Critical, &spec.critical)?,
        })
    }

    /// The lists these rules were compiled from.
    pub fn spec(&self) -> &PathRulesSpec {
        &self.spec
    }

    /// The first pattern of `list` (in list order) that matches `path`.
    pub fn first_match(&self, list: PathList, path: &str) -> Option<&str> {
        let compiled = match list {
            PathList::AlwaysD => &self.always_d,
            PathList::AppendOnly => &self.append_only,
            PathList::Critical => &self.critical,
        };
        compiled.first_match(path)
    }

    /// The first hit of `list` on a file, trying its path then its previous path.
    fn hit(&self, list: PathList, file: &FileChange) -> Option<PathHit> {
        file.paths().find_map(|path| {
            self.first_match(list, path).map(|pattern| PathHit {
                path: file.path.clone(),
                previous_filename: file.previous_filename.clone(),
                status: file.status,
                matched: path.to_owned(),
                pattern: pattern.to_owned(),
            })
        })
    }

    /// Evaluates a pull request's files (reference §8.2):
    ///
    /// 1. no files → A (emptiness is `classifier_empty_pr`'s business);
    /// 2. any file (path or previous path) under `always_d`, or any non-added file under
    ///    `append_only` → D;
    /// 3. otherwise critical = any file under `critical`, irreversible = any file removed:
    ///    both → D, critical → B, irreversible → C, neither → A.
    pub fn evaluate(&self, files: &[FileChange]) -> PathFinding {
        if files.is_empty() {
            return PathFinding::NoFiles;
        }
        let always_d: Vec<PathHit> = files
            .iter()
            .filter_map(|f| self.hit(PathList::AlwaysD, f))
            .collect();
        let append_only: Vec<PathHit> = files
            .iter()
            .filter(|f| f.status != FileStatus::Added)
            .filter_map(|f| self.hit(PathList::AppendOnly, f))
            .collect();
        if !always_d.is_empty() || !append_only.is_empty() {
            return PathFinding::Protected {
                always_d,
                append_only,
            };
        }
        let critical: Vec<PathHit> = files
            .iter()
            .filter_map(|f| self.hit(PathList::Critical, f))
            .collect();
        let removed: Vec<String> = files
            .iter()
            .filter(|f| f.status == FileStatus::Removed)
            .map(|f| f.path.clone())
            .collect();
        match (critical.is_empty(), removed.is_empty()) {
            (false, false) => PathFinding::CriticalIrreversible { critical, removed },
            (false, true) => PathFinding::Critical { critical },
            (true, false) => PathFinding::Irreversible { removed },
            (true, true) => PathFinding::Ordinary { files: files.len() },
        }
    }
}

impl Default for PathRules {
    /// The shipped default rules ([`PathRulesSpec::default`]).
    fn default() -> Self {
        Self::compile(&PathRulesSpec::default()).expect("the shipped path globs are valid")
    }
}

/// A changed file that matched a pattern list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathHit {
    /// The file's path after the change.
    pub path: String,
    /// For renames, the path before the change.
    pub previous_filename: Option<String>,
    /// How the file changed.
    pub status: FileStatus,
    /// The path that matched: [`PathHit::path`] or [`PathHit::previous_filename`].
    pub matched: String,
    /// The first pattern of the list that matched.
    pub pattern: String,
}

impl fmt::Display for PathHit {
    /// The path, plus `(renamed from <old>)` for renames.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.path)?;
        match &self.previous_filename {
            Some(previous) if previous != &self.path => write!(f, " (renamed from {previous})"),
            _ => Ok(()),
        }
    }
}

/// An append-only hit displayed with how the file changed.
struct AppendOnlyHit<'a>(&'a PathHit);

impl fmt::Display for AppendOnlyHit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hit = self.0;
        match hit.status {
            FileStatus::Renamed => write!(f, "{hit}"),
            status => write!(f, "{} ({})", hit, status.as_str()),
        }
    }
}

/// What the path rule found, with the files that decided it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PathFinding {
    /// The pull request changes no file (A; `classifier_empty_pr` votes D).
    NoFiles,
    /// Files under `always_d`, or changed (not added) under `append_only` (D).
    Protected {
        /// Files under an `always_d` pattern (either path).
        always_d: Vec<PathHit>,
        /// Files modified, removed or renamed under an `append_only` pattern.
        append_only: Vec<PathHit>,
    },
    /// Critical files changed and some file removed (D).
    CriticalIrreversible {
        /// Files under a `critical` pattern.
        critical: Vec<PathHit>,
        /// Paths of the removed files.
        removed: Vec<String>,
    },
    /// Critical files changed, nothing removed (B).
    Critical {
        /// Files under a `critical` pattern.
        critical: Vec<PathHit>,
    },
    /// Files removed, nothing critical (C).
    Irreversible {
        /// Paths of the removed files.
        removed: Vec<String>,
    },
    /// Nothing critical, protected or removed (A).
    Ordinary {
        /// How many files changed.
        files: usize,
    },
}

impl PathFinding {
    /// Stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::NoFiles => "path_no_files",
            Self::Protected { .. } => "path_protected",
            Self::CriticalIrreversible { .. } => "path_critical_irreversible",
            Self::Critical { .. } => "path_critical",
            Self::Irreversible { .. } => "path_irreversible",
            Self::Ordinary { .. } => "path_ordinary",
        }
    }

    /// The quadrant this finding votes for.
    pub fn quadrant(&self) -> Quadrant {
        match self {
            Self::NoFiles | Self::Ordinary { .. } => Quadrant::A,
            Self::Irreversible { .. } => Quadrant::C,
            Self::Critical { .. } => Quadrant::B,
            Self::Protected { .. } | Self::CriticalIrreversible { .. } => Quadrant::D,
        }
    }

    /// The `classifier_path_default` vote.
    pub fn vote(&self) -> Vote {
        Vote::new(RuleId::PathDefault, self.quadrant(), self.to_string())
    }
}

impl fmt::Display for PathFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoFiles => f.write_str("no file changes"),
            Self::Protected {
                always_d,
                append_only,
            } => {
                if !always_d.is_empty() {
                    write_list(f, always_d)?;
                    write!(f, " {} always D", is_are(always_d.len()))?;
                }
                if !append_only.is_empty() {
                    if !always_d.is_empty() {
                        f.write_str("; ")?;
                    }
                    let hits: Vec<AppendOnlyHit<'_>> =
                        append_only.iter().map(AppendOnlyHit).collect();
                    write_list(f, &hits)?;
                    write!(
                        f,
                        " {} append-only: only adding files is allowed",
                        is_are(append_only.len())
                    )?;
                }
                Ok(())
            }
            Self::CriticalIrreversible { critical, removed } => {
                write_list(f, critical)?;
                write!(f, " {} critical and ", is_are(critical.len()))?;
                write_list(f, removed)?;
                write!(f, " {} removed", is_are(removed.len()))
            }
            Self::Critical { critical } => {
                write_list(f, critical)?;
                write!(
                    f,
                    " {} critical and nothing is removed",
                    is_are(critical.len())
                )
            }
            Self::Irreversible { removed } => {
                write_list(f, removed)?;
                write!(
                    f,
                    " {} removed and nothing critical is changed",
                    is_are(removed.len())
                )
            }
            Self::Ordinary { files: 1 } => {
                f.write_str("1 file changed, none critical, protected or removed")
            }
            Self::Ordinary { files } if *files >= super::empty_pr::FILE_LISTING_CAP => {
                write!(
                    f,
                    "{files} files listed, GitHub's cap, none of them critical, protected or removed; the files past the cap were not read"
                )
            }
            Self::Ordinary { files } => {
                write!(
                    f,
                    "{files} files changed, none critical, protected or removed"
                )
            }
        }
    }
}

#[cfg(test)]
mod tests;
