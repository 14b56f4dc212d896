//! An org-curated list (`organizations/<org>/skill-sources.md`): complete descriptors
//! under `## Curated sources`, each naming the curating organization.

use std::path::Path;

use super::descriptor::{Descriptor, RejectedEntry, read_draft, split_duplicates, validate};
use super::diagnostics::{FileProblem, codes};
use super::markdown::{section_items, skip_frontmatter, split_lines};
use crate::sources::model::SourceId;

/// The descriptors of one org-curated file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DescriptorFile {
    /// The valid descriptors, in file order.
    pub descriptors: Vec<Descriptor>,
    /// The refused entries.
    pub rejected: Vec<RejectedEntry>,
}

impl DescriptorFile {
    /// The valid descriptor with `id`.
    pub fn get(&self, id: &SourceId) -> Option<&Descriptor> {
        self.descriptors.iter().find(|d| &d.id == id)
    }

    /// Whether some entry (valid or refused) carries `id`.
    pub fn mentions(&self, id: &SourceId) -> bool {
        self.get(id).is_some()
            || self
                .rejected
                .iter()
                .any(|r| r.source.as_deref() == Some(id.as_str()))
    }
}

/// The section of an org-curated list that holds descriptors.
pub const CURATED_SECTION: &str = "Curated sources";

/// Parses `organizations/<org>/skill-sources.md`: full descriptors under
/// `## Curated sources`, each naming `org` as its organization.
pub fn parse_curated(
    file: &Path,
    org: &str,
    text: &str,
) -> Result<DescriptorFile, Vec<FileProblem>> {
    let lines = split_lines(text);
    let body_start = skip_frontmatter(file, &lines)?;
    let items = section_items(file, &lines, body_start, CURATED_SECTION)?;
    let mut parsed = Vec::new();
    for item in items {
        let id_hint = item.id_hint.clone();
        let outcome = read_draft(file, &item).and_then(|draft| {
            let descriptor = validate(&draft)?;
            if descriptor.organization == org {
                Ok(descriptor)
            } else {
                let line = draft.organization_line();
                Err(vec![
                    FileProblem::new(
                        file,
                        Some(line),
                        codes::ORGANIZATION_MISMATCH,
                        format!(
                            "organization `{}` differs from the curating organization `{org}`",
                            descriptor.organization
                        ),
                    )
                    .with_source(Some(descriptor.id.as_str()))
                    .with_field("organization"),
                ])
            }
        });
        parsed.push((item.line, id_hint, outcome));
    }
    let (descriptors, rejected) = split_duplicates(file, parsed, |d| d.id.as_str());
    Ok(DescriptorFile {
        descriptors,
        rejected,
    })
}
