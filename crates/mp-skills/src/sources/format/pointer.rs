//! Pointer files (`skills/<name>/source.md`): frontmatter naming the source that provides
//! a skill, and where the skill sits inside it.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_saphyr::Spanned;

use super::descriptor::{check_relative, check_segment};
use super::diagnostics::{FileProblem, codes};
use super::markdown::{frontmatter, join_lines, split_lines};
use super::yaml::parse_yaml;
use crate::sources::model::SourceId;

/// A pointer file `skills/<name>/source.md` in the adopter's tree: a redirect naming the
/// source that provides the skill. It never authorises a fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pointer {
    /// The skill directory's name.
    pub skill: String,
    /// The pointer file.
    pub file: PathBuf,
    /// `source:` the source id.
    pub source: SourceId,
    /// `organization:` the owning organization.
    pub organization: String,
    /// `skill_path:` the skill's path inside the source.
    pub skill_path: PathBuf,
    /// `evals_path:` the evals' path inside the source, if any.
    pub evals_path: Option<PathBuf>,
    /// The line each value was written on.
    pub lines: PointerLines,
}

/// The lines of a pointer's values, so later checks can name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PointerLines {
    /// `source:`.
    pub source: u64,
    /// `organization:`.
    pub organization: u64,
    /// `skill_path:`.
    pub skill_path: u64,
    /// `evals_path:`, when given.
    pub evals_path: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPointer {
    source: Spanned<String>,
    organization: Spanned<String>,
    skill_path: Spanned<String>,
    evals_path: Option<Spanned<String>>,
}

/// Parses a pointer's frontmatter (`source`, `organization`, `skill_path`, optional
/// `evals_path`; nothing else).
///
/// # Errors
/// Missing or unclosed frontmatter, a YAML problem (a missing, unknown or duplicate key,
/// an empty value), or every bad value: a `source` that is not a source id, an
/// `organization` that is not one path segment, a path that is empty, absolute or holds
/// `..`.
pub fn parse_pointer(file: &Path, skill: &str, text: &str) -> Result<Pointer, Vec<FileProblem>> {
    let lines = split_lines(text);
    let Some((content, _)) = frontmatter(file, &lines)? else {
        return Err(vec![FileProblem::new(
            file,
            Some(1),
            codes::FRONTMATTER_INVALID,
            "a pointer starts with `---` frontmatter naming `source`, `organization` and `skill_path`".to_owned(),
        )]);
    };
    let first = content.first().map_or(2, |(n, _)| *n);
    let raw: RawPointer = parse_yaml(file, first, &join_lines(&content), None)?;
    let at = |s: &Spanned<String>| first + s.referenced.line().max(1) - 1;
    let source_text = raw.source.value.clone();
    let mut problems = Vec::new();
    let source = SourceId::parse(&raw.source.value)
        .map_err(|message| {
            problems.push(
                FileProblem::new(file, Some(at(&raw.source)), codes::ID_INVALID, message)
                    .with_source(Some(&source_text))
                    .with_field("source"),
            );
        })
        .ok();
    if let Err(why) = check_segment(&raw.organization.value) {
        problems.push(
            FileProblem::new(
                file,
                Some(at(&raw.organization)),
                codes::ORGANIZATION_INVALID,
                format!("organization `{}` {why}", raw.organization.value),
            )
            .with_source(Some(&source_text))
            .with_field("organization"),
        );
    }
    let mut path = |value: &Spanned<String>, field: &str| {
        check_relative(&value.value)
            .map_err(|why| {
                problems.push(
                    FileProblem::new(
                        file,
                        Some(at(value)),
                        codes::POINTER_PATH_INVALID,
                        format!("{field} `{}` {why}", value.value),
                    )
                    .with_source(Some(&source_text))
                    .with_field(field),
                );
            })
            .ok()
    };
    let skill_path = path(&raw.skill_path, "skill_path");
    let evals_path = raw
        .evals_path
        .as_ref()
        .map(|value| path(value, "evals_path"));
    match (source, skill_path, evals_path) {
        (Some(source), Some(skill_path), evals_path @ (None | Some(Some(_))))
            if problems.is_empty() =>
        {
            Ok(Pointer {
                skill: skill.to_owned(),
                file: file.to_path_buf(),
                source,
                lines: PointerLines {
                    source: at(&raw.source),
                    organization: at(&raw.organization),
                    skill_path: at(&raw.skill_path),
                    evals_path: raw.evals_path.as_ref().map(at),
                },
                organization: raw.organization.value,
                skill_path,
                evals_path: evals_path.flatten(),
            })
        }
        _ => Err(problems),
    }
}
