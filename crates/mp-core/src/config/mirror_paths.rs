//! `mirror_paths.json`: canonical files mirrored from the governance repository (drift check).

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use serde_saphyr::Spanned;

use super::problem::{codes, shown};
use super::validate::{self, Sink, first_at, item};
use super::yaml::{self, SpannedMap};

/// Files every adopter repository mirrors from the governance repository.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(title = "mirror_paths.json"))]
pub(crate) struct MirrorPathsFile {
    /// The format version; must be 1.
    #[cfg_attr(feature = "schema", schemars(with = "u32", range(min = 1, max = 1)))]
    schema_version: Spanned<u32>,
    /// Paths compared between the governance repository and each adopter.
    #[cfg_attr(
        feature = "schema",
        schemars(
            with = "Vec<String>",
            inner(length(min = 1)),
            extend("uniqueItems" = true)
        )
    )]
    canonical_paths: Vec<Spanned<String>>,
    /// Repository name (without owner) → canonical paths that repository does not mirror.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "BTreeMap<String, Vec<String>>"))]
    exceptions: SpannedMap<Vec<Spanned<String>>>,
}

/// The resolved drift-check configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MirrorPaths {
    canonical_paths: Vec<String>,
    exceptions: BTreeMap<String, BTreeSet<String>>,
}

impl MirrorPaths {
    /// The canonical paths, in file order.
    pub fn canonical_paths(&self) -> &[String] {
        &self.canonical_paths
    }

    /// The paths an adopter repository (by name without owner, case-insensitive) skips.
    pub fn exceptions_for(&self, repo_name: &str) -> Option<&BTreeSet<String>> {
        self.exceptions.get(&repo_name.to_ascii_lowercase())
    }

    /// The canonical paths that `repo_name` (without owner) must mirror, in file order.
    pub fn paths_for(&self, repo_name: &str) -> Vec<&str> {
        let skipped = self.exceptions_for(repo_name);
        self.canonical_paths
            .iter()
            .filter(|path| skipped.is_none_or(|skip| !skip.contains(*path)))
            .map(String::as_str)
            .collect()
    }
}

/// Reads and checks `mirror_paths.json`. `None` when the file cannot be read.
pub(crate) fn load(sink: &mut Sink<'_>, text: &str) -> Option<MirrorPaths> {
    let file = sink.file().to_owned();
    let raw: MirrorPathsFile = yaml::parse(&file, text, sink.problems())?;
    if raw.schema_version.value != 1 {
        sink.error(
            codes::INVALID_VALUE,
            "schema_version",
            &raw.schema_version.referenced,
            format!(
                "unsupported schema_version {}, expected 1",
                raw.schema_version.value
            ),
        );
    }

    let mut canonical_paths = Vec::new();
    let mut seen: BTreeMap<&str, u64> = BTreeMap::new();
    for (index, path) in raw.canonical_paths.iter().enumerate() {
        let field = item("canonical_paths", index);
        if !validate::repo_path(sink, &field, path) {
            continue;
        }
        if let Some(first) = seen.get(path.value.as_str()) {
            sink.error(
                codes::INVALID_VALUE,
                &field,
                &path.referenced,
                format!(
                    "path `{}` is listed twice{}",
                    shown(&path.value),
                    first_at(*first)
                ),
            );
            continue;
        }
        seen.insert(&path.value, path.referenced.line());
        canonical_paths.push(path.value.clone());
    }

    let mut exceptions: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (repo, paths) in &raw.exceptions.0 {
        let field = format!("exceptions.{}", shown(&repo.value));
        if !validate::repo_basename(&repo.value) {
            let hint = if repo.value.contains('/') {
                "; use the repository name without its owner"
            } else {
                ""
            };
            sink.error(
                codes::INVALID_VALUE,
                &field,
                &repo.referenced,
                format!("invalid repository name `{}`{hint}", shown(&repo.value)),
            );
            continue;
        }
        let key = repo.value.to_ascii_lowercase();
        if exceptions.contains_key(&key) {
            sink.error(
                codes::INVALID_VALUE,
                &field,
                &repo.referenced,
                format!(
                    "repository `{}` has two exception lists",
                    shown(&repo.value)
                ),
            );
            continue;
        }
        let mut skipped = BTreeSet::new();
        for (index, path) in paths.iter().enumerate() {
            let path_field = item(&field, index);
            if !validate::repo_path(sink, &path_field, path) {
                continue;
            }
            if !seen.contains_key(path.value.as_str()) {
                sink.warning(
                    codes::NO_EFFECT,
                    &path_field,
                    &path.referenced,
                    format!(
                        "exception `{}` is not a canonical path, so it has no effect",
                        shown(&path.value)
                    ),
                );
            }
            if !skipped.insert(path.value.clone()) {
                sink.error(
                    codes::INVALID_VALUE,
                    &path_field,
                    &path.referenced,
                    format!("path `{}` is listed twice", shown(&path.value)),
                );
            }
        }
        exceptions.insert(key, skipped);
    }

    Some(MirrorPaths {
        canonical_paths,
        exceptions,
    })
}
