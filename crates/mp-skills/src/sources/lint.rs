//! `mp sources lint`: every sources file of a config directory checked on its own (the
//! discovery registry, every organization's curated list, the trust list, the pointers,
//! both locks) and what the fetched snapshots hold, with every problem reported at once,
//! each an error or a warning with its file, line and stable code. Also the problems
//! `mp sources status` and `mp sources drift` print beside their own output.
//!
//! Linting never fetches and never writes; it reads the same files the other operations
//! read, plus every `organizations/<org>/skill-sources.md`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use super::drift::{DriftFinding, FindingSeverity, local_lock_missing, snapshot_missing};
use super::format::{
    Descriptor, DescriptorFile, FileProblem, TrustEntry, codes as format_codes, parse_curated,
    parse_registry, parse_trust_list,
};
use super::layout::SourcesLayout;
use super::lock::{LocalLock, PinLock};
use super::model::Refusal;
use super::ops::Sources;
use super::select::{CONTRACT_FILE, check_pointers, scan_pointers, select, unfulfilled_problems};
use super::skill_md::parse_skill_md;
use super::trust::{Curated, TrustResolution, codes as trust_codes, read_optional, resolve};

/// The stable lint codes (the other codes come from the parsers, selection and drift).
pub mod codes {
    /// A full-form trust-list entry reuses an id an organization curates, with another url
    /// (warning): the two are easily mistaken for one another.
    pub const CURATED_ID_REUSED: &str = "source_curated_id_reused";
    /// A full-form trust-list entry repeats, with the same url, a source the project's own
    /// organization curates (warning): the reference form would use the curated descriptor,
    /// while the copy silently stops following it.
    pub const CURATED_ID_DUPLICATED: &str = "source_curated_id_duplicated";
}

/// One lint finding: a problem and how much it matters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LintFinding {
    /// Error (exit 1) or warning.
    pub severity: FindingSeverity,
    /// Where, which rule, what.
    pub problem: FileProblem,
}

impl LintFinding {
    fn error(problem: FileProblem) -> Self {
        Self {
            severity: FindingSeverity::Error,
            problem,
        }
    }

    fn warning(problem: FileProblem) -> Self {
        Self {
            severity: FindingSeverity::Warning,
            problem,
        }
    }

    /// A drift finding or a selection warning about `file`, keeping its severity.
    fn from_drift(file: &Path, finding: &DriftFinding) -> Self {
        Self {
            severity: finding.severity,
            problem: FileProblem::new(
                file,
                None,
                finding.code,
                format!("{}; fix: {}", finding.reason, finding.fix),
            )
            .with_source(Some(finding.source.as_str())),
        }
    }

    /// A refusal about `file` (at `line`), as an error.
    fn from_refusal(file: &Path, line: Option<u64>, refusal: &Refusal) -> Self {
        Self::error(
            FileProblem::new(
                file,
                line,
                refusal.code,
                format!("{}; fix: {}", refusal.reason, refusal.fix),
            )
            .with_source(Some(&refusal.source)),
        )
    }
}

impl fmt::Display for LintFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.severity.as_str(), self.problem)
    }
}

/// Everything `lint` found, and the files it read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LintReport {
    /// The findings, file by file in the order they were checked.
    pub findings: Vec<LintFinding>,
    /// The sources files that exist and were read.
    pub checked: Vec<PathBuf>,
}

impl LintReport {
    /// How many findings are errors.
    pub fn errors(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == FindingSeverity::Error)
            .count()
    }

    /// How many findings are warnings.
    pub fn warnings(&self) -> usize {
        self.findings.len() - self.errors()
    }

    /// Whether some file exists but could not be read (`source_file_unreadable`).
    pub fn unreadable(&self) -> bool {
        self.findings
            .iter()
            .any(|f| f.problem.code == trust_codes::FILE_UNREADABLE)
    }
}

/// The organizations a pointer may name: every directory `DIR/organizations/<org>/`
/// (except those starting with `.` or `_`, such as `_template`), the trust list's
/// `organization:`, and the organization of every trusted source.
pub fn known_organizations(
    layout: &SourcesLayout,
    resolution: &TrustResolution,
) -> BTreeSet<String> {
    let mut known: BTreeSet<String> = organization_dirs(layout).into_iter().collect();
    known.extend(resolution.organization.clone());
    known.extend(
        resolution
            .trusted
            .iter()
            .map(|t| t.descriptor.organization.clone()),
    );
    known
}

/// The organization directories under `DIR/organizations/`, sorted.
fn organization_dirs(layout: &SourcesLayout) -> Vec<String> {
    let Ok(entries) = fs::read_dir(layout.config_dir.join("organizations")) else {
        return Vec::new();
    };
    let mut orgs: Vec<String> = entries
        .flatten()
        .filter(|e| fs::symlink_metadata(e.path()).is_ok_and(|m| m.is_dir()))
        .filter_map(|e| e.file_name().to_str().map(str::to_owned))
        .filter(|name| !name.starts_with('.') && !name.starts_with('_'))
        .collect();
    orgs.sort();
    orgs
}

/// The pointers' problems: a pointer that cannot be read or parsed, and one whose
/// organization is unknown or differs from its source's, or whose paths do not name its
/// directory (errors); a pointer no trusted source fulfils (warning).
pub fn pointer_findings(layout: &SourcesLayout, resolution: &TrustResolution) -> Vec<LintFinding> {
    let (pointers, problems) = scan_pointers(&layout.skills_dir());
    let trusted = resolution.descriptors();
    let known = known_organizations(layout, resolution);
    let mut findings: Vec<LintFinding> = problems.into_iter().map(LintFinding::error).collect();
    findings.extend(
        check_pointers(&pointers, &trusted, &known)
            .into_iter()
            .map(LintFinding::error),
    );
    findings.extend(
        unfulfilled_problems(&pointers, &trusted)
            .into_iter()
            .map(LintFinding::warning),
    );
    findings
}

/// The problems `mp sources status` and `mp sources drift` print beside their own output:
/// an unreadable local lock and every pointer problem.
pub fn problems(sources: &Sources) -> Vec<LintFinding> {
    let mut findings: Vec<LintFinding> = sources
        .local_lock_problems
        .iter()
        .cloned()
        .map(LintFinding::error)
        .collect();
    findings.extend(
        pointer_findings(&sources.layout, &sources.resolution)
            .into_iter()
            .filter(|f| f.problem.code != super::select::codes::UNFULFILLED_POINTER),
    );
    findings
}

/// What a trusted source's snapshot holds: a missing snapshot and a missing local-lock
/// entry (warnings: a fresh clone has neither), the selection's refusals (errors) and
/// warnings, and every selected skill's `SKILL.md` frontmatter (errors).
pub fn snapshot_findings(
    layout: &SourcesLayout,
    descriptor: &Descriptor,
    local_lock: Option<&LocalLock>,
) -> Vec<LintFinding> {
    let id = &descriptor.id;
    let dir = layout.snapshot(id);
    let mut findings = Vec::new();
    let exists = fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir());
    if !exists {
        findings.push(LintFinding::from_drift(
            &dir,
            &snapshot_missing(id, FindingSeverity::Warning),
        ));
    }
    if local_lock.and_then(|l| l.get(id)).is_none() {
        findings.push(LintFinding::from_drift(
            &layout.local_lock,
            &local_lock_missing(id, local_lock.is_some(), FindingSeverity::Warning),
        ));
    }
    if !exists {
        return findings;
    }
    match select(&dir, descriptor) {
        Err(refusals) => findings.extend(
            refusals
                .iter()
                .map(|r| LintFinding::from_refusal(&dir, None, r)),
        ),
        Ok(selection) => {
            findings.extend(
                selection
                    .warnings
                    .iter()
                    .map(|w| LintFinding::from_drift(&dir, w)),
            );
            for skill in &selection.skills {
                let file = skill.dir.join(CONTRACT_FILE);
                let outcome = fs::read_to_string(&file)
                    .map_err(|e| {
                        vec![FileProblem::new(
                            &file,
                            None,
                            trust_codes::FILE_UNREADABLE,
                            format!("cannot read the file: {e}"),
                        )]
                    })
                    .and_then(|text| parse_skill_md(&file, &skill.name, &text));
                if let Err(problems) = outcome {
                    findings.extend(
                        problems
                            .into_iter()
                            .map(|p| LintFinding::error(p.with_source(Some(id.as_str())))),
                    );
                }
            }
        }
    }
    findings
}

/// Checks every sources file of `layout` and every trusted source's snapshot.
pub fn lint(layout: &SourcesLayout) -> LintReport {
    let mut report = LintReport::default();
    let read = |path: &Path, report: &mut LintReport| match read_optional(path) {
        Ok(Some(text)) => {
            report.checked.push(path.to_path_buf());
            Some(text)
        }
        Ok(None) => None,
        Err(problems) => {
            report
                .findings
                .extend(problems.into_iter().map(LintFinding::error));
            None
        }
    };

    let registry = layout.registry();
    if let Some(text) = read(&registry, &mut report) {
        let (rows, problems) = parse_registry(&registry, &text);
        report
            .findings
            .extend(problems.into_iter().map(LintFinding::error));
        let mut seen: BTreeMap<String, u64> = BTreeMap::new();
        for row in &rows.community {
            if let Some(first) = seen.insert(row.id.to_string(), row.line) {
                report.findings.push(LintFinding::error(
                    FileProblem::new(
                        &registry,
                        Some(row.line),
                        format_codes::DUPLICATE_ID,
                        format!("id `{}` is also listed at line {first}", row.id),
                    )
                    .with_source(Some(row.id.as_str())),
                ));
            }
        }
    }

    let mut curated: BTreeMap<String, (PathBuf, Result<DescriptorFile, Vec<FileProblem>>)> =
        BTreeMap::new();
    for org in organization_dirs(layout) {
        let file = layout.org_curated(&org);
        if let Some(text) = read(&file, &mut report) {
            let parsed = parse_curated(&file, &org, &text);
            match &parsed {
                Err(problems) => report
                    .findings
                    .extend(problems.iter().cloned().map(LintFinding::error)),
                Ok(list) => report.findings.extend(
                    list.rejected
                        .iter()
                        .flat_map(|r| r.problems.iter().cloned())
                        .map(LintFinding::error),
                ),
            }
            curated.insert(org, (file, parsed));
        }
    }

    let mut resolution = TrustResolution::default();
    if let Some(text) = read(&layout.trust_list, &mut report) {
        match parse_trust_list(&layout.trust_list, &text) {
            Err(problems) => report
                .findings
                .extend(problems.into_iter().map(LintFinding::error)),
            Ok(list) => {
                report.findings.extend(
                    list.rejected
                        .iter()
                        .flat_map(|r| r.problems.iter().cloned())
                        .map(LintFinding::error),
                );
                let own = match &list.organization {
                    None => Curated::NoOrganization,
                    Some(org) => match curated.get(org) {
                        None => Curated::Missing(layout.org_curated(org)),
                        Some((file, Err(problems))) => {
                            Curated::Unusable(file.clone(), problems.clone())
                        }
                        Some((file, Ok(parsed))) => Curated::Loaded(file.clone(), parsed.clone()),
                    },
                };
                resolution = resolve(&list, &own);
                for entry in &list.entries {
                    match entry {
                        TrustEntry::Reference(reference) => {
                            if resolution.get(&reference.id).is_some() {
                                continue;
                            }
                            if let Some(refusal) = resolution
                                .refused
                                .iter()
                                .find(|r| r.source == reference.id.as_str())
                            {
                                report.findings.push(LintFinding::from_refusal(
                                    &layout.trust_list,
                                    Some(reference.line),
                                    refusal,
                                ));
                            }
                        }
                        TrustEntry::Full(descriptor) => {
                            for (org, (file, parsed)) in &curated {
                                let Ok(parsed) = parsed else { continue };
                                let Some(other) = parsed.get(&descriptor.id) else {
                                    continue;
                                };
                                if other.url == descriptor.url {
                                    if list.organization.as_deref() == Some(org.as_str()) {
                                        report.findings.push(LintFinding::warning(
                                            FileProblem::new(
                                                &layout.trust_list,
                                                Some(descriptor.line),
                                                codes::CURATED_ID_DUPLICATED,
                                                format!(
                                                    "full-form entry `{}` duplicates the source {org} curates in {} (same id and url); use the reference form (`id`, `ref` and the anchor) so the curated descriptor is used",
                                                    descriptor.id,
                                                    file.display(),
                                                ),
                                            )
                                            .with_source(Some(descriptor.id.as_str()))
                                            .with_field("id"),
                                        ));
                                    }
                                } else {
                                    report.findings.push(LintFinding::warning(
                                        FileProblem::new(
                                            &layout.trust_list,
                                            Some(descriptor.line),
                                            codes::CURATED_ID_REUSED,
                                            format!(
                                                "full-form entry `{}` reuses the id {org} curates in {} for {}, with another url {}; use the reference form, or give this source its own id",
                                                descriptor.id,
                                                file.display(),
                                                other.url,
                                                descriptor.url
                                            ),
                                        )
                                        .with_source(Some(descriptor.id.as_str()))
                                        .with_field("url"),
                                    ));
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    if let Some(text) = read(&layout.pin_lock, &mut report)
        && let Err(problems) = PinLock::parse(&layout.pin_lock, &text)
    {
        report
            .findings
            .extend(problems.into_iter().map(LintFinding::error));
    }
    let local_lock = match read(&layout.local_lock, &mut report) {
        None => None,
        Some(text) => match LocalLock::parse(&layout.local_lock, &text) {
            Ok(lock) => Some(lock),
            Err(problems) => {
                report
                    .findings
                    .extend(problems.into_iter().map(LintFinding::error));
                None
            }
        },
    };

    report
        .findings
        .extend(pointer_findings(layout, &resolution));
    for trusted in &resolution.trusted {
        report.findings.extend(snapshot_findings(
            layout,
            &trusted.descriptor,
            local_lock.as_ref(),
        ));
    }
    report
}

#[cfg(test)]
mod tests;
