//! The discovery registry: two markdown tables (`## Org-curated sources`,
//! `## Community / external sources`) whose rows are editorial and never fetched.

use std::path::Path;

use super::diagnostics::{FileProblem, codes};
use super::markdown::{heading, split_lines};
use crate::sources::model::SourceId;

/// A row of the registry's `## Org-curated sources` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CuratedRow {
    /// The organization.
    pub organization: String,
    /// Its curated sources, as written.
    pub sources: String,
    /// Its curated file, as written.
    pub file: String,
    /// The row's line.
    pub line: u64,
}

/// A row of the registry's `## Community / external sources` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommunityRow {
    /// The source id.
    pub id: SourceId,
    /// The owning organization.
    pub organization: String,
    /// The maintainer.
    pub maintainer: String,
    /// The repository, as written.
    pub repository: String,
    /// A one-line note.
    pub notes: String,
    /// The row's line.
    pub line: u64,
}

/// The discovery registry. Its rows are editorial: nothing here is ever fetched.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Registry {
    /// `## Org-curated sources` rows.
    pub curated: Vec<CuratedRow>,
    /// `## Community / external sources` rows.
    pub community: Vec<CommunityRow>,
}

const CURATED_HEADER: [&str; 3] = ["Organization", "Curated sources", "File"];
const COMMUNITY_HEADER: [&str; 5] = [
    "Source id",
    "Owning org",
    "Maintainer",
    "Repository",
    "Notes",
];

fn table_cells(line: &str) -> Vec<String> {
    let inner = line.trim();
    let inner = inner.strip_prefix('|').unwrap_or(inner);
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    inner
        .split('|')
        .map(|cell| cell.trim().to_owned())
        .collect()
}

/// The table rows (line, cells) of the first table in `## <section>`, after checking its
/// header; `None` when the section is absent.
fn section_table(
    file: &Path,
    lines: &[&str],
    section: &str,
    header: &[&str],
    problems: &mut Vec<FileProblem>,
) -> Vec<(u64, Vec<String>)> {
    let mut in_section = false;
    let mut table: Vec<(u64, &str)> = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        if let Some((level, title)) = heading(line)
            && level <= 2
        {
            if in_section {
                break;
            }
            in_section = level == 2 && title.eq_ignore_ascii_case(section);
            continue;
        }
        if in_section {
            if line.trim_start().starts_with('|') {
                table.push((index as u64 + 1, line));
            } else if !table.is_empty() {
                break;
            }
        }
    }
    let Some((header_line, header_text)) = table.first() else {
        return Vec::new();
    };
    let found = table_cells(header_text);
    let matches = found.len() == header.len()
        && found
            .iter()
            .zip(header)
            .all(|(a, b)| a.eq_ignore_ascii_case(b));
    if !matches {
        problems.push(FileProblem::new(
            file,
            Some(*header_line),
            codes::REGISTRY_TABLE_INVALID,
            format!(
                "the `{section}` table header must be `| {} |`",
                header.join(" | ")
            ),
        ));
        return Vec::new();
    }
    table
        .iter()
        .skip(2)
        .map(|(line, text)| (*line, table_cells(text)))
        .collect()
}

/// Parses the discovery registry: problems are returned beside the rows that were read.
pub fn parse_registry(file: &Path, text: &str) -> (Registry, Vec<FileProblem>) {
    let lines = split_lines(text);
    let mut problems = Vec::new();
    let mut registry = Registry::default();
    let bad_row = |line: u64, message: String| {
        FileProblem::new(file, Some(line), codes::REGISTRY_ROW_INVALID, message)
    };
    for (line, cells) in section_table(
        file,
        &lines,
        "Org-curated sources",
        &CURATED_HEADER,
        &mut problems,
    ) {
        match <[String; 3]>::try_from(cells) {
            Ok([organization, sources, file]) => registry.curated.push(CuratedRow {
                organization,
                sources,
                file,
                line,
            }),
            Err(cells) => problems.push(bad_row(
                line,
                format!("expected 3 cells, found {}", cells.len()),
            )),
        }
    }
    for (line, cells) in section_table(
        file,
        &lines,
        "Community / external sources",
        &COMMUNITY_HEADER,
        &mut problems,
    ) {
        match <[String; 5]>::try_from(cells) {
            Ok([id, organization, maintainer, repository, notes]) => match SourceId::parse(&id) {
                Ok(id) => registry.community.push(CommunityRow {
                    id,
                    organization,
                    maintainer,
                    repository,
                    notes,
                    line,
                }),
                Err(message) => problems.push(bad_row(line, message).with_source(Some(&id))),
            },
            Err(cells) => problems.push(bad_row(
                line,
                format!("expected 5 cells, found {}", cells.len()),
            )),
        }
    }
    (registry, problems)
}
