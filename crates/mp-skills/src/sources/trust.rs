//! Which sources the adopter trusts: the trust list resolved against the adopter's
//! org-curated list, and the fetch plan that checks it against the committed pin lock.
//!
//! Architecture invariant: only a trust-list entry becomes a pin. The registry, an
//! org-curated entry that is not on the trust list, a lock entry, a pointer and anything
//! inside a snapshot never do; [`resolve_trusted`] reads exactly two files (the trust list
//! and, for reference-form entries, the adopter's org-curated list) and nothing else.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::format::{
    Descriptor, DescriptorFile, FileProblem, TrustEntry, TrustList, parse_curated, parse_trust_list,
};
use super::layout::SourcesLayout;
use super::lock::PinLock;
use super::model::{Pin, Refusal, SourceId};

/// The stable codes of trust refusals.
pub mod codes {
    /// A reference-form entry whose id the adopter's organization does not curate (or no
    /// organization is declared, or its curated list is absent).
    pub const NOT_CURATED: &str = "source_not_curated";
    /// The adopter's org-curated list (or its entry for this id) is itself invalid.
    pub const CURATED_UNUSABLE: &str = "source_curated_unusable";
    /// The trust list's method, url, ref or anchor differs from the committed pin.
    pub const PIN_DISAGREES: &str = "source_pin_disagrees";
    /// A sources file exists but cannot be read.
    pub const FILE_UNREADABLE: &str = "source_file_unreadable";
}

/// How a trusted source was written on the trust list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryForm {
    /// `id` + `ref` + anchor, merged with the descriptor in `curated_file`.
    Reference {
        /// The org-curated list the rest of the descriptor came from.
        curated_file: PathBuf,
    },
    /// A complete descriptor.
    Full,
}

/// A source the adopter vouches for, fully resolved and validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustedSource {
    /// The effective descriptor (for the reference form: the merged one).
    pub descriptor: Descriptor,
    /// How the entry was written.
    pub form: EntryForm,
}

/// The outcome of reading the trust list: the trusted sources and the refused entries.
/// A refused entry is never fetched; the others are unaffected by it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TrustResolution {
    /// The adopter's organization, when declared.
    pub organization: Option<String>,
    /// Trusted sources in trust-list order.
    pub trusted: Vec<TrustedSource>,
    /// Entries refused before any fetch.
    pub refused: Vec<Refusal>,
}

impl TrustResolution {
    /// The pins the trust list asks for, in trust-list order.
    pub fn pins(&self) -> Vec<Pin> {
        self.trusted.iter().map(|t| t.descriptor.pin()).collect()
    }

    /// The trusted source with `id`.
    pub fn get(&self, id: &SourceId) -> Option<&TrustedSource> {
        self.trusted.iter().find(|t| &t.descriptor.id == id)
    }

    /// The trusted descriptors.
    pub fn descriptors(&self) -> Vec<&Descriptor> {
        self.trusted.iter().map(|t| &t.descriptor).collect()
    }
}

/// The adopter's org-curated list as far as it could be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Curated {
    /// The trust list declares no `organization:`.
    NoOrganization,
    /// The organization's file does not exist.
    Missing(PathBuf),
    /// The file exists but cannot be used as a whole.
    Unusable(PathBuf, Vec<FileProblem>),
    /// The parsed file.
    Loaded(PathBuf, DescriptorFile),
}

/// Reads `DIR/skill-sources.md` and, when a reference-form entry needs it, the adopter's
/// `DIR/organizations/<org>/skill-sources.md`, and resolves them. A missing trust list
/// means nothing is trusted.
///
/// # Errors
/// The trust list cannot be read, or is broken as a whole (see
/// [`parse_trust_list`]); then nothing may be fetched.
pub fn resolve_trusted(layout: &SourcesLayout) -> Result<TrustResolution, Vec<FileProblem>> {
    let Some(text) = read_optional(&layout.trust_list)? else {
        return Ok(TrustResolution::default());
    };
    let list = parse_trust_list(&layout.trust_list, &text)?;
    let needs_curated = list
        .entries
        .iter()
        .any(|e| matches!(e, TrustEntry::Reference(_)));
    let curated = match &list.organization {
        _ if !needs_curated => Curated::NoOrganization,
        None => Curated::NoOrganization,
        Some(org) => {
            let file = layout.org_curated(org);
            match read_optional(&file) {
                Err(problems) => Curated::Unusable(file, problems),
                Ok(None) => Curated::Missing(file),
                Ok(Some(text)) => match parse_curated(&file, org, &text) {
                    Ok(parsed) => Curated::Loaded(file, parsed),
                    Err(problems) => Curated::Unusable(file, problems),
                },
            }
        }
    };
    Ok(resolve(&list, &curated))
}

/// The text of `path`, `None` when it does not exist.
pub(crate) fn read_optional(path: &Path) -> Result<Option<String>, Vec<FileProblem>> {
    match fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(vec![FileProblem::unreadable(path, &err)]),
    }
}

/// Resolves a parsed trust list against the adopter's curated list (pure).
pub fn resolve(list: &TrustList, curated: &Curated) -> TrustResolution {
    let mut resolution = TrustResolution {
        organization: list.organization.clone(),
        trusted: Vec::new(),
        refused: list.rejected.iter().map(|r| r.refusal()).collect(),
    };
    for entry in &list.entries {
        match entry {
            TrustEntry::Full(descriptor) => resolution.trusted.push(TrustedSource {
                descriptor: descriptor.clone(),
                form: EntryForm::Full,
            }),
            TrustEntry::Reference(reference) => {
                let id = reference.id.as_str();
                let refuse = |code: &'static str, reason: String, fix: String| Refusal {
                    source: id.to_owned(),
                    code,
                    reason,
                    fix,
                };
                let write_full = "or write the full descriptor on the trust list";
                let outcome = match curated {
                    Curated::NoOrganization => Err(refuse(
                        codes::NOT_CURATED,
                        format!(
                            "reference-form entry `{id}` cannot be looked up: the trust list declares no `organization:`"
                        ),
                        format!("add `organization: <org>` frontmatter to the trust list, {write_full}"),
                    )),
                    Curated::Missing(file) => Err(refuse(
                        codes::NOT_CURATED,
                        format!("`{id}` is not curated: {} does not exist", file.display()),
                        format!("add the descriptor to {}, {write_full}", file.display()),
                    )),
                    Curated::Unusable(file, problems) => Err(refuse(
                        codes::CURATED_UNUSABLE,
                        format!(
                            "the curated list {} is invalid: {}",
                            file.display(),
                            join(problems)
                        ),
                        format!("correct {}, {write_full}", file.display()),
                    )),
                    Curated::Loaded(file, parsed) => match parsed.get(&reference.id) {
                        Some(found) => reference
                            .merge(found)
                            .map(|descriptor| TrustedSource {
                                descriptor,
                                form: EntryForm::Reference {
                                    curated_file: file.clone(),
                                },
                            })
                            .map_err(|problems| Refusal {
                                source: id.to_owned(),
                                code: problems.first().map_or(codes::NOT_CURATED, |p| p.code),
                                reason: join(&problems),
                                fix: format!(
                                    "correct the trust-list entry at line {} so it fits the curated {} source",
                                    reference.line, found.method
                                ),
                            }),
                        None if parsed.mentions(&reference.id) => Err(refuse(
                            codes::CURATED_UNUSABLE,
                            format!(
                                "the curated entry for `{id}` in {} is invalid: {}",
                                file.display(),
                                parsed
                                    .rejected
                                    .iter()
                                    .filter(|r| r.source.as_deref() == Some(id))
                                    .flat_map(|r| r.problems.iter())
                                    .map(ToString::to_string)
                                    .collect::<Vec<_>>()
                                    .join("; ")
                            ),
                            format!("correct the entry in {}, {write_full}", file.display()),
                        )),
                        None => Err(refuse(
                            codes::NOT_CURATED,
                            format!("`{id}` is not curated in {}", file.display()),
                            format!("ask the organization to curate it, {write_full}"),
                        )),
                    },
                };
                match outcome {
                    Ok(trusted) => resolution.trusted.push(trusted),
                    Err(refusal) => resolution.refused.push(refusal),
                }
            }
        }
    }
    resolution
}

fn join(problems: &[FileProblem]) -> String {
    problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Whether a trusted source already has a committed pin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PinState {
    /// No pin yet: the fetch writes the first one.
    FirstPin,
    /// The committed pin equals the trust list's.
    Pinned,
}

/// A source that may be fetched, with the pin it is verified against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetchable {
    /// The trusted source.
    pub source: TrustedSource,
    /// The pin to verify against (trust list and lock agree, or there is no lock entry).
    pub pin: Pin,
    /// Whether the pin is new.
    pub state: PinState,
}

/// What may be fetched now and what is refused.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FetchPlan {
    /// The sources to fetch, in trust-list order.
    pub fetch: Vec<Fetchable>,
    /// The refused entries: the resolution's, then pin disagreements.
    pub refused: Vec<Refusal>,
}

/// The refusal when the trust list and the committed pin disagree on a source, naming
/// every field that differs.
pub fn pin_disagreement(trusted: &Pin, locked: &Pin) -> Option<Refusal> {
    let mut differences = Vec::new();
    if trusted.method != locked.method {
        differences.push(format!(
            "method {} (trust list) vs {} (lock)",
            trusted.method, locked.method
        ));
    }
    if trusted.url != locked.url {
        differences.push(format!("url {} vs {}", trusted.url, locked.url));
    }
    if trusted.reference != locked.reference {
        differences.push(format!("ref {} vs {}", trusted.reference, locked.reference));
    }
    if trusted.anchor != locked.anchor {
        let show = |anchor: &Option<super::model::Anchor>| {
            anchor
                .as_ref()
                .map_or_else(|| "no anchor".to_owned(), ToString::to_string)
        };
        differences.push(format!(
            "{} vs {}",
            show(&trusted.anchor),
            show(&locked.anchor)
        ));
    }
    (!differences.is_empty()).then(|| Refusal {
        source: trusted.id.to_string(),
        code: codes::PIN_DISAGREES,
        reason: format!(
            "the trust list and sources.lock disagree: {}",
            differences.join(", ")
        ),
        fix: format!(
            "either update the trust list to the committed pin, or run `mp sources lock --bump {}` to pin the trust list's value",
            trusted.id
        ),
    })
}

/// Checks every trusted source against the committed pin lock: a source whose pin
/// disagrees is refused until the adopter reconciles them; the others may be fetched.
pub fn plan_fetch(resolution: &TrustResolution, lock: &PinLock) -> FetchPlan {
    let mut plan = FetchPlan {
        fetch: Vec::new(),
        refused: resolution.refused.clone(),
    };
    for source in &resolution.trusted {
        let pin = source.descriptor.pin();
        match lock.get(&pin.id) {
            None => plan.fetch.push(Fetchable {
                source: source.clone(),
                pin,
                state: PinState::FirstPin,
            }),
            Some(locked) => match pin_disagreement(&pin, locked) {
                Some(refusal) => plan.refused.push(refusal),
                None => plan.fetch.push(Fetchable {
                    source: source.clone(),
                    pin,
                    state: PinState::Pinned,
                }),
            },
        }
    }
    plan
}

#[cfg(test)]
mod tests;
