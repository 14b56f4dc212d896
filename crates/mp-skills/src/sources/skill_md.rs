//! The frontmatter of a fetched skill's `SKILL.md`, read as strictly as every other mp
//! file: duplicate keys, unknown keys, `yes`/`no` booleans, tags and merge keys are errors
//! (the strict options of `docs/decisions/0001-yaml-parser.md`), and the skill's `name`
//! follows the Agent Skills rules and equals its directory's name. Parsing is pure: the
//! caller hands in the text.

use std::collections::BTreeMap;
use std::path::Path;

use mp_core::skill::SkillKind;
use serde::Deserialize;
use serde_saphyr::Spanned;

use super::format::{FileProblem, frontmatter, join_lines, parse_yaml, split_lines};
use super::model::check_skill_name;

/// The stable codes of `SKILL.md` frontmatter problems (YAML problems keep the codes of
/// [`super::format::codes`], e.g. `source_duplicate_key`).
pub mod codes {
    /// No frontmatter, or frontmatter that is never closed.
    pub const FRONTMATTER_INVALID: &str = "source_skill_frontmatter_invalid";
    /// A `name` that breaks the Agent Skills rules.
    pub const NAME_INVALID: &str = "source_skill_name_invalid";
    /// A `name` that differs from the skill's directory name.
    pub const NAME_MISMATCH: &str = "source_skill_name_mismatch";
    /// A `kind` other than `validators`, `classifier` or `branch_hooks`.
    pub const KIND_INVALID: &str = "source_skill_kind_invalid";
    /// A `description` that is empty or longer than 1,024 characters, or a `compatibility`
    /// that is empty or longer than 500 (the Agent Skills limits).
    pub const TEXT_LENGTH: &str = "source_skill_text_length";
}

/// Agent Skills' limits, in characters: `description` 1–1024, `compatibility` 1–500.
const TEXT_LIMITS: [(&str, usize); 2] = [("description", 1024), ("compatibility", 500)];

/// What a fetched skill's frontmatter declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillFrontmatter {
    /// The skill's name (equal to its directory's).
    pub name: String,
    /// Which hook it implements.
    pub kind: SkillKind,
    /// Its description, when given.
    pub description: Option<String>,
    /// Its license, when given.
    pub license: Option<String>,
    /// Its environment requirements, when given.
    pub compatibility: Option<String>,
    /// Client-specific properties.
    pub metadata: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFront {
    name: Spanned<String>,
    kind: Spanned<String>,
    description: Option<Spanned<String>>,
    license: Option<String>,
    compatibility: Option<Spanned<String>>,
    metadata: Option<BTreeMap<String, String>>,
    #[serde(rename = "allowed-tools")]
    allowed_tools: Option<serde_json::Value>,
}

/// Parses the frontmatter of `<dir_name>/SKILL.md`: `name` and `kind` are required;
/// `description`, `license`, `compatibility`, `metadata` (text to text) and
/// `allowed-tools` are allowed; nothing else. `description` (1–1024 characters) and
/// `compatibility` (1–500) keep the Agent Skills limits. Every problem names the file and
/// the line.
///
/// # Errors
/// Every problem found: missing or unclosed frontmatter, a YAML problem (duplicate key,
/// unknown key, wrong type), a bad `name` or `kind`.
pub fn parse_skill_md(
    file: &Path,
    dir_name: &str,
    text: &str,
) -> Result<SkillFrontmatter, Vec<FileProblem>> {
    let lines = split_lines(text);
    let content = match frontmatter(file, &lines) {
        Ok(Some((content, _))) => content,
        Ok(None) => {
            return Err(vec![FileProblem::new(
                file,
                Some(1),
                codes::FRONTMATTER_INVALID,
                "SKILL.md must start with `---` frontmatter naming the skill's `name` and `kind`"
                    .to_owned(),
            )]);
        }
        Err(problems) => {
            return Err(problems
                .into_iter()
                .map(|p| FileProblem {
                    code: codes::FRONTMATTER_INVALID,
                    ..p
                })
                .collect());
        }
    };
    let first = content.first().map_or(2, |(n, _)| *n);
    let raw: RawFront = parse_yaml(file, first, &join_lines(&content), None)?;
    let at = |s: &Spanned<String>| first + s.referenced.line().max(1) - 1;
    let mut problems = Vec::new();
    let name = &raw.name.value;
    if let Err(why) = check_skill_name(name) {
        problems.push(
            FileProblem::new(file, Some(at(&raw.name)), codes::NAME_INVALID, why)
                .with_field("name"),
        );
    } else if name != dir_name {
        problems.push(
            FileProblem::new(
                file,
                Some(at(&raw.name)),
                codes::NAME_MISMATCH,
                format!("SKILL.md names the skill `{name}` but its directory is `{dir_name}`"),
            )
            .with_field("name"),
        );
    }
    let kind = SkillKind::ALL
        .into_iter()
        .find(|k| k.folder() == raw.kind.value);
    if kind.is_none() {
        problems.push(
            FileProblem::new(
                file,
                Some(at(&raw.kind)),
                codes::KIND_INVALID,
                format!(
                    "unknown kind `{}`; expected validators, classifier or branch_hooks",
                    raw.kind.value
                ),
            )
            .with_field("kind"),
        );
    }
    for ((field, limit), value) in TEXT_LIMITS
        .into_iter()
        .zip([&raw.description, &raw.compatibility])
    {
        let Some(value) = value else { continue };
        let length = value.value.chars().count();
        let why = if value.value.trim().is_empty() {
            format!("`{field}` is empty")
        } else if length > limit {
            format!("`{field}` has {length} characters; at most {limit} are allowed")
        } else {
            continue;
        };
        problems.push(
            FileProblem::new(file, Some(at(value)), codes::TEXT_LENGTH, why).with_field(field),
        );
    }
    if let Some(tools) = &raw.allowed_tools {
        let listed = match tools {
            serde_json::Value::String(_) => true,
            serde_json::Value::Array(items) => items.iter().all(serde_json::Value::is_string),
            _ => false,
        };
        if !listed {
            problems.push(
                FileProblem::new(
                    file,
                    Some(first),
                    super::format::codes::WRONG_TYPE,
                    "`allowed-tools` is a space-separated text or a list of texts".to_owned(),
                )
                .with_field("allowed-tools"),
            );
        }
    }
    match kind {
        Some(kind) if problems.is_empty() => Ok(SkillFrontmatter {
            name: raw.name.value,
            kind,
            description: raw.description.map(|d| d.value),
            license: raw.license,
            compatibility: raw.compatibility.map(|c| c.value),
            metadata: raw.metadata.unwrap_or_default(),
        }),
        _ => Err(problems),
    }
}

#[cfg(test)]
mod tests;
