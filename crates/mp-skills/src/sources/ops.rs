//! The operations of `mp sources`, for the CLI and for embedders: open a config directory's
//! sources (trust list, pin lock, local lock), fetch and pin, lock, report drift and status,
//! and find the fetched skills a tick loads.
//!
//! Every operation starts from the trust list: nothing else ever makes a source fetchable.

use std::collections::BTreeMap;
use std::io;
use std::path::PathBuf;

use super::digest::tree_digest;
use super::drift::{
    DriftFinding, DriftInput, FindingSeverity, SnapshotFacts, drift, local_lock_missing,
    snapshot_missing,
};
use super::fetch::{Download, FetchOptions, RemoteFacts, fetch, remote_facts};
use super::format::{Descriptor, FileProblem};
use super::layout::SourcesLayout;
use super::lock::{LocalEntry, LocalLock, PinLock, PinOutcome};
use super::model::{Method, Refusal, SourceId};
use super::select::{
    SelectedSkill, SkillCollision, check_collisions, scan_pointers, select, unfulfilled_pointers,
};
use super::trust::{PinState, TrustResolution, pin_disagreement, plan_fetch, resolve_trusted};

#[cfg(test)]
mod tests;

/// The sources of one config directory, as read from disk.
#[derive(Debug, Clone)]
pub struct Sources {
    /// Where everything lives.
    pub layout: SourcesLayout,
    /// The trusted sources and the refused trust-list entries.
    pub resolution: TrustResolution,
    /// The committed pin lock (empty when absent).
    pub pin_lock: PinLock,
    /// The local lock; `None` when absent.
    pub local_lock: Option<LocalLock>,
    /// Why the local lock could not be read, when it could not (it then counts as absent).
    pub local_lock_problems: Vec<FileProblem>,
}

/// Reads the trust list, the organization's curated list when needed, and both locks.
///
/// # Errors
/// The trust list or the pin lock is unreadable or broken as a whole: nothing may be
/// fetched until it is fixed.
pub fn open(layout: SourcesLayout) -> Result<Sources, Vec<FileProblem>> {
    let resolution = resolve_trusted(&layout)?;
    let pin_lock = PinLock::load(&layout.pin_lock)?;
    let (local_lock, local_lock_problems) = match LocalLock::load(&layout.local_lock) {
        Ok(lock) => (lock, Vec::new()),
        Err(problems) => (None, problems),
    };
    Ok(Sources {
        layout,
        resolution,
        pin_lock,
        local_lock,
        local_lock_problems,
    })
}

/// One source fetched, verified and recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchedSource {
    /// The source.
    pub id: SourceId,
    /// The commit checked out (git) or the archive's SHA-512.
    pub resolved: String,
    /// The snapshot's tree digest.
    pub tree_digest: String,
    /// A `git-branch` source: work in progress, nothing anchors it.
    pub unanchored: bool,
    /// The pin was written by this fetch (first pin).
    pub first_pin: bool,
    /// The skills the source provides, as selected from the new snapshot.
    pub skills: Vec<String>,
    /// What the selection warns about (a family that selects nothing, a pointer-only
    /// directory).
    pub warnings: Vec<DriftFinding>,
}

/// What `fetch_sources` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FetchReport {
    /// Sources fetched and recorded.
    pub fetched: Vec<FetchedSource>,
    /// Sources refused (before, during or after the fetch), each with its rule and fix.
    pub refused: Vec<Refusal>,
}

/// The refusal for an id that is not on the trust list.
fn not_trusted(id: &SourceId) -> Refusal {
    Refusal {
        source: id.to_string(),
        code: "source_not_trusted",
        reason: "the source is not on the trust list; a registry row, an org-curated entry, a lock entry or a pointer never authorises a fetch".to_owned(),
        fix: "add it to the `## Trusted sources` list of skill-sources.md if you vouch for it".to_owned(),
    }
}

/// Fetches the trusted sources (all, or those in `only`), verifies each against its pin,
/// writes the first pin of a new source to the committed lock and records every fetch in
/// the local lock. A source that fails any check is refused alone and its previous
/// snapshot is left as it was. `fetched_at` is the RFC 3339 time to record.
///
/// # Errors
/// A lock file cannot be written.
pub fn fetch_sources(
    sources: &mut Sources,
    only: &[SourceId],
    opts: &FetchOptions<'_>,
    fetched_at: &str,
) -> io::Result<FetchReport> {
    let wanted = |id: &SourceId| only.is_empty() || only.contains(id);
    let mut report = FetchReport::default();
    for id in only {
        if sources.resolution.get(id).is_none()
            && !sources
                .resolution
                .refused
                .iter()
                .any(|r| r.source == id.as_str())
        {
            report.refused.push(not_trusted(id));
        }
    }
    let plan = plan_fetch(&sources.resolution, &sources.pin_lock);
    report.refused.extend(
        plan.refused
            .into_iter()
            .filter(|r| only.is_empty() || only.iter().any(|id| id.as_str() == r.source)),
    );
    let mut local = sources.local_lock.clone().unwrap_or_default();
    let mut pins_changed = false;
    let mut local_changed = false;
    for item in plan.fetch.into_iter().filter(|f| wanted(&f.pin.id)) {
        let fetched = match fetch(&item.pin, &sources.layout.snapshots, opts) {
            Ok(fetched) => fetched,
            Err(refusal) => {
                report.refused.push(refusal);
                continue;
            }
        };
        local.record(LocalEntry::from_fetch(&item.pin, &fetched, fetched_at));
        local_changed = true;
        let first_pin = item.state == PinState::FirstPin;
        if first_pin {
            match sources.pin_lock.pin_first(item.pin.clone()) {
                Ok(PinOutcome::Added) => pins_changed = true,
                Ok(_) => {}
                Err(refusal) => {
                    report.refused.push(refusal);
                    continue;
                }
            }
        }
        match select(&fetched.snapshot, &item.source.descriptor) {
            Ok(selected) => report.fetched.push(FetchedSource {
                id: fetched.id.clone(),
                resolved: fetched.resolved.clone(),
                tree_digest: fetched.tree_digest.clone(),
                unanchored: fetched.unanchored,
                first_pin,
                skills: selected.skills.into_iter().map(|s| s.name).collect(),
                warnings: selected.warnings,
            }),
            Err(refusals) => report.refused.extend(refusals),
        }
    }
    if pins_changed {
        sources.pin_lock.save(&sources.layout.pin_lock)?;
    }
    if local_changed {
        ignore_snapshots(&sources.layout)?;
        local.save(&sources.layout.local_lock)?;
        sources.local_lock = Some(local);
    }
    Ok(report)
}

/// Keeps the snapshots directory out of git whatever the repository's `.gitignore` says:
/// a `.gitignore` inside it that ignores everything, itself included.
fn ignore_snapshots(layout: &SourcesLayout) -> io::Result<()> {
    std::fs::create_dir_all(&layout.snapshots)?;
    let path = layout.snapshots.join(".gitignore");
    if !path.exists() {
        std::fs::write(
            path,
            "# Snapshots of trusted skill sources and the local fetch lock: never committed.\n*\n",
        )?;
    }
    Ok(())
}

/// What `lock_sources` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LockReport {
    /// Sources pinned for the first time.
    pub pinned: Vec<SourceId>,
    /// Sources whose pin was replaced on request (`--bump`).
    pub bumped: Vec<SourceId>,
    /// Sources whose committed pin already matches the trust list.
    pub unchanged: Vec<SourceId>,
    /// Refused: trust-list refusals and pins that disagree without `--bump`.
    pub refused: Vec<Refusal>,
}

/// Writes the committed pin lock from the trust list: a trusted source without a pin gets
/// one; a pin that differs from the trust list is replaced only when its id is in `bump`
/// (a pin bump is deliberate and shows in the pull request's diff), else refused.
///
/// # Errors
/// The pin lock cannot be written.
pub fn lock_sources(sources: &mut Sources, bump: &[SourceId]) -> io::Result<LockReport> {
    let mut report = LockReport {
        refused: sources.resolution.refused.clone(),
        ..LockReport::default()
    };
    for id in bump {
        if sources.resolution.get(id).is_none() {
            report.refused.push(not_trusted(id));
        }
    }
    for pin in sources.resolution.pins() {
        match sources.pin_lock.get(&pin.id).cloned() {
            None => {
                report.pinned.push(pin.id.clone());
                sources.pin_lock.bump(pin);
            }
            Some(locked) => match pin_disagreement(&pin, &locked) {
                None => report.unchanged.push(pin.id.clone()),
                Some(_) if bump.contains(&pin.id) => {
                    report.bumped.push(pin.id.clone());
                    sources.pin_lock.bump(pin);
                }
                Some(refusal) => report.refused.push(refusal),
            },
        }
    }
    if !report.pinned.is_empty() || !report.bumped.is_empty() {
        sources.pin_lock.save(&sources.layout.pin_lock)?;
    }
    Ok(report)
}

/// What is on disk for each trusted source: whether its snapshot exists and its tree
/// digest now.
fn snapshot_facts(sources: &Sources) -> BTreeMap<SourceId, SnapshotFacts> {
    sources
        .resolution
        .trusted
        .iter()
        .map(|t| {
            let dir = sources.layout.snapshot(&t.descriptor.id);
            let exists = dir.is_dir();
            let digest = exists.then(|| tree_digest(&dir).ok()).flatten();
            (
                t.descriptor.id.clone(),
                SnapshotFacts {
                    exists,
                    tree_digest: digest,
                },
            )
        })
        .collect()
}

/// Every drift finding: trust list, pin lock, local lock and snapshots compared, and, with
/// `remote`, what each pinned ref or archive is upstream now; then the adopter's pointers
/// that no trusted source fulfils. A remote that cannot be read is an error finding.
pub fn drift_report(sources: &Sources, remote: Option<&dyn Download>) -> Vec<DriftFinding> {
    let pins = sources.resolution.pins();
    let snapshots = snapshot_facts(sources);
    let mut findings = Vec::new();
    let mut facts: BTreeMap<SourceId, RemoteFacts> = BTreeMap::new();
    if let Some(download) = remote {
        for pin in &pins {
            if sources.pin_lock.get(&pin.id).is_none() {
                continue;
            }
            match remote_facts(pin, download) {
                Ok(remote) => {
                    facts.insert(pin.id.clone(), remote);
                }
                Err(refusal) => findings.push(DriftFinding {
                    source: pin.id.clone(),
                    code: refusal.code,
                    severity: FindingSeverity::Error,
                    reason: refusal.reason,
                    fix: refusal.fix,
                }),
            }
        }
    }
    let mut compared = drift(&DriftInput {
        trusted: &pins,
        pin_lock: &sources.pin_lock,
        local_lock: sources.local_lock.as_ref(),
        snapshots: &snapshots,
        remote: &facts,
    });
    compared.append(&mut findings);
    let (pointers, _problems) = scan_pointers(&sources.layout.skills_dir());
    compared.extend(unfulfilled_pointers(
        &pointers,
        &sources.resolution.descriptors(),
    ));
    compared
}

/// One trusted source's state, for `mp sources status` and `list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceStatus {
    /// The source.
    pub id: SourceId,
    /// Its method.
    pub method: Method,
    /// Its ref.
    pub reference: String,
    /// Marked work in progress (git-branch).
    pub wip: bool,
    /// The committed pin matches the trust list.
    pub pinned: bool,
    /// The local lock records a fetch (what it fetched).
    pub fetched: Option<String>,
    /// The snapshot exists.
    pub snapshot: bool,
    /// The skills selected from the snapshot, or why none can be.
    pub skills: Result<Vec<String>, Vec<Refusal>>,
    /// What deserves a look: a missing snapshot, a missing local-lock entry (both normal
    /// on a fresh clone, so warnings here), a family that selects nothing, a pointer-only
    /// directory.
    pub warnings: Vec<DriftFinding>,
}

/// The state of every trusted source.
pub fn status(sources: &Sources) -> Vec<SourceStatus> {
    sources
        .resolution
        .trusted
        .iter()
        .map(|t| {
            let d: &Descriptor = &t.descriptor;
            let dir = sources.layout.snapshot(&d.id);
            let snapshot = dir.is_dir();
            let mut warnings = Vec::new();
            if !snapshot {
                warnings.push(snapshot_missing(&d.id, FindingSeverity::Warning));
            }
            let local = sources.local_lock.as_ref();
            if local.and_then(|l| l.get(&d.id)).is_none() {
                warnings.push(local_lock_missing(
                    &d.id,
                    local.is_some(),
                    FindingSeverity::Warning,
                ));
            }
            let skills = if snapshot {
                select(&dir, d).map(|s| {
                    warnings.extend(s.warnings);
                    s.skills.into_iter().map(|s| s.name).collect()
                })
            } else {
                Ok(Vec::new())
            };
            SourceStatus {
                id: d.id.clone(),
                method: d.method,
                reference: d.reference.clone(),
                wip: d.wip,
                pinned: sources
                    .pin_lock
                    .get(&d.id)
                    .is_some_and(|locked| pin_disagreement(&d.pin(), locked).is_none()),
                fetched: sources
                    .local_lock
                    .as_ref()
                    .and_then(|l| l.get(&d.id))
                    .map(|e| e.fetched.clone()),
                snapshot,
                skills,
                warnings,
            }
        })
        .collect()
}

/// The fetched skills a tick may load, and why any source was left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Loadable {
    /// The selected skills of every usable source.
    pub skills: Vec<SelectedSkill>,
    /// One line per source left out (not pinned, not fetched, snapshot edited, ...), and
    /// one per selection warning of a loaded source (a family that selects nothing, a
    /// pointer-only directory).
    pub skipped: Vec<String>,
}

impl Loadable {
    /// The selected skills as the registry loads them.
    pub fn sourced(&self) -> Vec<crate::registry::SourcedSkill<'_>> {
        self.skills
            .iter()
            .map(|s| crate::registry::SourcedSkill {
                source: s.source.as_str(),
                name: &s.name,
                dir: &s.dir,
            })
            .collect()
    }
}

/// The skills of the trusted sources whose snapshot is exactly what was fetched and
/// pinned: the pin lock agrees with the trust list, the local lock records a fetch of that
/// pin (for an anchored source: of the anchor itself), and the snapshot's tree digest is
/// the one recorded. Anything else leaves that source out with a line saying why.
///
/// # Errors
/// Two sources, or a source and a name in `taken` (in-tree skills, built-ins), claim the
/// same skill name: the run stops, mp never shadows a skill.
pub fn loadable_skills(
    sources: &Sources,
    taken: &BTreeMap<String, String>,
) -> Result<Loadable, Vec<SkillCollision>> {
    let mut loadable = Loadable::default();
    for trusted in &sources.resolution.trusted {
        let d = &trusted.descriptor;
        let pin = d.pin();
        let skip = |why: &str| format!("source {}: not loaded: {why}", d.id);
        match sources.pin_lock.get(&d.id) {
            None => {
                loadable
                    .skipped
                    .push(skip("not pinned (run `mp sources fetch`)"));
                continue;
            }
            Some(locked) if pin_disagreement(&pin, locked).is_some() => {
                loadable.skipped.push(skip(
                    "the trust list and sources.lock disagree (run `mp sources drift`)",
                ));
                continue;
            }
            Some(_) => {}
        }
        let Some(entry) = sources.local_lock.as_ref().and_then(|l| l.get(&d.id)) else {
            loadable
                .skipped
                .push(skip("not fetched on this machine (run `mp sources fetch`)"));
            continue;
        };
        let at_pin = entry.method == pin.method
            && entry.url == pin.url
            && entry.reference == pin.reference
            && pin
                .anchor
                .as_ref()
                .is_none_or(|a| a.value() == entry.fetched);
        if !at_pin {
            loadable.skipped.push(skip(
                "the snapshot is not at the pin (run `mp sources fetch`)",
            ));
            continue;
        }
        let dir: PathBuf = sources.layout.snapshot(&d.id);
        match tree_digest(&dir) {
            Ok(digest) if digest == entry.tree_digest => {}
            Ok(_) => {
                loadable.skipped.push(skip(
                    "the snapshot was edited after its fetch (source_snapshot_edited; delete it and run `mp sources fetch`)",
                ));
                continue;
            }
            Err(e) => {
                loadable
                    .skipped
                    .push(skip(&format!("the snapshot cannot be read: {e}")));
                continue;
            }
        }
        match select(&dir, d) {
            Ok(selected) => {
                loadable.skills.extend(selected.skills);
                loadable
                    .skipped
                    .extend(selected.warnings.iter().map(ToString::to_string));
            }
            Err(refusals) => {
                for refusal in refusals {
                    loadable.skipped.push(format!("{refusal}"));
                }
            }
        }
    }
    check_collisions(&loadable.skills, taken)?;
    Ok(loadable)
}
