//! The adopter's trust list: optional frontmatter naming its organization, and under
//! `## Trusted sources` entries that are either complete descriptors or references to the
//! organization's curated list.

use std::path::Path;

use serde::Deserialize;
use serde_saphyr::Spanned;

use super::descriptor::{
    Descriptor, ReferenceEntry, RejectedEntry, check_segment, read_draft, reference_entry,
    split_duplicates, validate,
};
use super::diagnostics::{FileProblem, codes};
use super::markdown::{frontmatter, join_lines, section_items, split_lines};
use super::yaml::parse_yaml;
use crate::sources::model::SourceId;

/// One trust-list entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustEntry {
    /// `id` + `ref` + anchor, looked up in the adopter's org-curated list.
    Reference(ReferenceEntry),
    /// A complete descriptor, used as it stands.
    Full(Descriptor),
}

impl TrustEntry {
    /// The entry's source id.
    pub fn id(&self) -> &SourceId {
        match self {
            Self::Reference(entry) => &entry.id,
            Self::Full(descriptor) => &descriptor.id,
        }
    }
}

/// The adopter's trust list, parsed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TrustList {
    /// The adopter's organization (frontmatter `organization:`), which reference-form
    /// entries are looked up in.
    pub organization: Option<String>,
    /// The well-formed entries, in file order.
    pub entries: Vec<TrustEntry>,
    /// The refused entries.
    pub rejected: Vec<RejectedEntry>,
}

/// The section of the trust list that holds entries.
pub const TRUSTED_SECTION: &str = "Trusted sources";

/// Parses the adopter's trust list. `Err` means the file as a whole cannot be trusted
/// (bad frontmatter, no `## Trusted sources` section, an unclosed fence, a fence that is
/// not a list); a bad entry is only rejected.
pub fn parse_trust_list(file: &Path, text: &str) -> Result<TrustList, Vec<FileProblem>> {
    let lines = split_lines(text);
    let (organization, body_start) = trust_frontmatter(file, &lines)?;
    let items = section_items(file, &lines, body_start, TRUSTED_SECTION)?;
    let mut list = TrustList {
        organization,
        ..TrustList::default()
    };
    let mut parsed = Vec::new();
    for item in items {
        let id_hint = item.id_hint.clone();
        let outcome = read_draft(file, &item).and_then(|draft| {
            if draft.is_reference() {
                reference_entry(draft).map(TrustEntry::Reference)
            } else {
                validate(&draft).map(TrustEntry::Full)
            }
        });
        parsed.push((item.line, id_hint, outcome));
    }
    let (entries, rejected) = split_duplicates(file, parsed, |entry| entry.id().as_str());
    list.entries = entries;
    list.rejected = rejected;
    Ok(list)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTrustFront {
    organization: Option<Spanned<String>>,
}

/// The trust list's frontmatter: only `organization:`.
fn trust_frontmatter(
    file: &Path,
    lines: &[&str],
) -> Result<(Option<String>, usize), Vec<FileProblem>> {
    let Some((content, body_start)) = frontmatter(file, lines)? else {
        return Ok((None, 0));
    };
    let first = content.first().map_or(2, |(n, _)| *n);
    let text = join_lines(&content);
    let front: RawTrustFront = parse_yaml::<Option<RawTrustFront>>(file, first, &text, None)?
        .unwrap_or(RawTrustFront { organization: None });
    let organization = match front.organization {
        Some(org) => {
            let line = first + org.referenced.line().saturating_sub(1);
            if let Err(message) = check_segment(&org.value) {
                return Err(vec![
                    FileProblem::new(
                        file,
                        Some(line),
                        codes::ORGANIZATION_INVALID,
                        format!("organization `{}` {message}", org.value),
                    )
                    .with_field("organization"),
                ]);
            }
            Some(org.value)
        }
        None => None,
    };
    Ok((organization, body_start))
}
