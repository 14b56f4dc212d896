//! Drift of trusted skill sources: a pure comparison of the trust list's pins, the
//! committed pin lock, the local lock, what is on disk and (optionally) what the remote
//! says now. Everything matching yields no finding.
//!
//! The caller gathers the facts (snapshot existence, the current tree digest from
//! `digest::tree_digest`, remote lookups); this module reads nothing.

use std::collections::BTreeMap;
use std::fmt;

use super::fetch::RemoteFacts;
use super::lock::{LocalLock, PinLock};
use super::model::{Anchor, Method, Pin, SourceId};
use super::trust::pin_disagreement;

/// The stable drift codes.
pub mod codes {
    /// A trusted source has no block in the pin lock.
    pub const UNPINNED: &str = "source_unpinned";
    /// The trust list and the pin lock disagree.
    pub const PIN_DISAGREES: &str = "source_pin_disagrees";
    /// The local lock's method or url differs from the pin.
    pub const REINSTALL_NEEDED: &str = "source_reinstall_needed";
    /// The pin's ref was bumped but the snapshot was not re-fetched.
    pub const SYNC_NEEDED: &str = "source_sync_needed";
    /// The remote tag now resolves to another commit than the pin.
    pub const TAG_MOVED: &str = "source_tag_moved";
    /// The remote branch tip moved past the fetched commit.
    pub const BRANCH_ADVANCED: &str = "source_branch_advanced";
    /// The archive at the pinned url/version has another SHA-512 than the pin.
    pub const ARCHIVE_CHANGED: &str = "source_archive_changed";
    /// The snapshot directory is missing.
    pub const SNAPSHOT_MISSING: &str = "source_snapshot_missing";
    /// The local lock (or its entry for the source) is missing or unparseable.
    pub const LOCAL_LOCK_MISSING: &str = "source_local_lock_missing";
    /// The snapshot's tree digest differs from the one recorded after the fetch.
    pub const SNAPSHOT_EDITED: &str = "source_snapshot_edited";
    /// The fetched commit or archive differs from the pinned anchor.
    pub const SNAPSHOT_NOT_AT_PIN: &str = "source_snapshot_not_at_pin";
    /// The pin lock pins a source the trust list no longer lists.
    pub const PINNED_NOT_TRUSTED: &str = "source_pinned_not_trusted";
}

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FindingSeverity {
    /// Must be resolved before the source is used.
    Error,
    /// Should be looked at.
    Warning,
}

impl FindingSeverity {
    /// `"error"` or `"warning"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Warning => "warning",
        }
    }
}

/// One drift (or pointer) finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriftFinding {
    /// The source concerned.
    pub source: SourceId,
    /// Stable snake_case code (see [`codes`]).
    pub code: &'static str,
    /// Error or warning.
    pub severity: FindingSeverity,
    /// What differs, naming both values.
    pub reason: String,
    /// What to run or change.
    pub fix: String,
}

impl fmt::Display for DriftFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}[{}]: source {}: {}; fix: {}",
            self.severity.as_str(),
            self.code,
            self.source,
            self.reason,
            self.fix
        )
    }
}

/// What is on disk for one source.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SnapshotFacts {
    /// Whether `DIR/.mp-sources/<id>/` exists.
    pub exists: bool,
    /// Its tree digest now, when computed.
    pub tree_digest: Option<String>,
}

/// Everything drift compares.
#[derive(Debug, Clone, Copy)]
pub struct DriftInput<'a> {
    /// The trust list's pins (from `TrustResolution::pins`).
    pub trusted: &'a [Pin],
    /// The committed pin lock.
    pub pin_lock: &'a PinLock,
    /// The local lock; `None` when missing or unparseable.
    pub local_lock: Option<&'a LocalLock>,
    /// What is on disk, by source; a source absent here counts as no snapshot.
    pub snapshots: &'a BTreeMap<SourceId, SnapshotFacts>,
    /// What the remote says, by source; absent means not checked.
    pub remote: &'a BTreeMap<SourceId, RemoteFacts>,
}

const FETCH: &str = "run `mp sources fetch`";
const UPGRADE: &str = "run `mp sources fetch` to re-fetch and re-verify against the pin";

/// Compares everything and returns the findings, in trust-list order, then the pins no
/// longer trusted.
pub fn drift(input: &DriftInput<'_>) -> Vec<DriftFinding> {
    let mut findings = Vec::new();
    for trusted in input.trusted {
        source_drift(input, trusted, &mut findings);
    }
    for pinned in input.pin_lock.entries() {
        if !input.trusted.iter().any(|t| t.id == pinned.id) {
            findings.push(finding(
                &pinned.id,
                codes::PINNED_NOT_TRUSTED,
                FindingSeverity::Warning,
                format!("sources.lock pins `{}` but the trust list no longer lists it; it is not fetched", pinned.id),
                "remove its block from sources.lock, or list it on the trust list again".to_owned(),
            ));
        }
    }
    findings
}

fn finding(
    source: &SourceId,
    code: &'static str,
    severity: FindingSeverity,
    reason: String,
    fix: String,
) -> DriftFinding {
    DriftFinding {
        source: source.clone(),
        code,
        severity,
        reason,
        fix,
    }
}

/// `source_snapshot_missing` for `id`.
pub fn snapshot_missing(id: &SourceId, severity: FindingSeverity) -> DriftFinding {
    finding(
        id,
        codes::SNAPSHOT_MISSING,
        severity,
        format!("the snapshot .mp-sources/{id}/ is missing (expected on a fresh clone)"),
        FETCH.to_owned(),
    )
}

/// `source_local_lock_missing` for `id`: the local lock is missing or unparseable, or
/// (`lock_exists`) it has no entry for `id`.
pub fn local_lock_missing(
    id: &SourceId,
    lock_exists: bool,
    severity: FindingSeverity,
) -> DriftFinding {
    let reason = if lock_exists {
        format!("the local lock has no entry for `{id}`")
    } else {
        "the local lock is missing or unparseable".to_owned()
    };
    finding(
        id,
        codes::LOCAL_LOCK_MISSING,
        severity,
        reason,
        format!("{FETCH} to record what is on disk"),
    )
}

fn source_drift(input: &DriftInput<'_>, trusted: &Pin, findings: &mut Vec<DriftFinding>) {
    let id = &trusted.id;
    let Some(pin) = input.pin_lock.get(id) else {
        findings.push(finding(
            id,
            codes::UNPINNED,
            FindingSeverity::Error,
            format!("the trust list vouches for `{id}` but sources.lock has never pinned it"),
            FETCH.to_owned(),
        ));
        return;
    };
    if let Some(refusal) = pin_disagreement(trusted, pin) {
        findings.push(finding(
            id,
            codes::PIN_DISAGREES,
            FindingSeverity::Error,
            refusal.reason,
            refusal.fix,
        ));
    }
    let remote = input.remote.get(id);
    remote_drift(
        id,
        pin,
        remote,
        input
            .local_lock
            .and_then(|l| l.get(id))
            .map(|l| l.fetched.as_str()),
        findings,
    );

    let snapshot = input.snapshots.get(id).filter(|s| s.exists);
    if snapshot.is_none() {
        findings.push(snapshot_missing(id, FindingSeverity::Error));
    }
    let local = input.local_lock.and_then(|l| l.get(id));
    if local.is_none() {
        findings.push(local_lock_missing(
            id,
            input.local_lock.is_some(),
            FindingSeverity::Warning,
        ));
    }
    let (Some(snapshot), Some(local)) = (snapshot, local) else {
        return;
    };
    if local.method != pin.method || local.url != pin.url {
        findings.push(finding(
            id,
            codes::REINSTALL_NEEDED,
            FindingSeverity::Error,
            format!(
                "the snapshot was fetched with {} {} but the pin is {} {}",
                local.method, local.url, pin.method, pin.url
            ),
            format!("{UPGRADE} (a full re-fetch)"),
        ));
        return;
    }
    if local.reference != pin.reference {
        findings.push(finding(
            id,
            codes::SYNC_NEEDED,
            FindingSeverity::Warning,
            format!(
                "the pin is at ref {} but the snapshot was fetched at {}",
                pin.reference, local.reference
            ),
            UPGRADE.to_owned(),
        ));
        return;
    }
    if let Some(anchor) = &pin.anchor
        && anchor.value() != local.fetched
    {
        let what = match anchor {
            Anchor::Commit(_) => "commit",
            Anchor::Sha512(_) => "archive sha512",
        };
        findings.push(finding(
            id,
            codes::SNAPSHOT_NOT_AT_PIN,
            FindingSeverity::Error,
            format!(
                "the snapshot's {what} is {} but the pin is {}",
                local.fetched,
                anchor.value()
            ),
            UPGRADE.to_owned(),
        ));
    }
    if let Some(digest) = &snapshot.tree_digest
        && digest != &local.tree_digest
    {
        findings.push(finding(
            id,
            codes::SNAPSHOT_EDITED,
            FindingSeverity::Error,
            format!(
                "the snapshot was edited on disk: its tree digest is {digest} but {} was recorded after the fetch",
                local.tree_digest
            ),
            format!("snapshots are read-only; delete .mp-sources/{id}/ and {FETCH}"),
        ));
    }
}

fn remote_drift(
    id: &SourceId,
    pin: &Pin,
    remote: Option<&RemoteFacts>,
    fetched: Option<&str>,
    findings: &mut Vec<DriftFinding>,
) {
    let Some(remote) = remote else {
        return;
    };
    match (pin.method, &pin.anchor) {
        (Method::GitTag, Some(anchor)) => {
            if let Some(commit) = &remote.commit
                && commit != anchor.value()
            {
                findings.push(finding(
                    id,
                    codes::TAG_MOVED,
                    FindingSeverity::Error,
                    format!(
                        "tag {} now resolves to {commit}, not the pinned {} (a supply-chain signal)",
                        pin.reference,
                        anchor.value()
                    ),
                    "do not fetch; ask the source's maintainers why the tag moved before changing the pin".to_owned(),
                ));
            }
        }
        (Method::GitBranch, _) => {
            if let (Some(commit), Some(fetched)) = (&remote.commit, fetched)
                && commit != fetched
            {
                findings.push(finding(
                    id,
                    codes::BRANCH_ADVANCED,
                    FindingSeverity::Warning,
                    format!(
                        "branch {} advanced to {commit}; the snapshot is at {fetched}",
                        pin.reference
                    ),
                    UPGRADE.to_owned(),
                ));
            }
        }
        (Method::Archive, Some(anchor)) => {
            if let Some(sha512) = &remote.archive_sha512
                && sha512 != anchor.value()
            {
                findings.push(finding(
                    id,
                    codes::ARCHIVE_CHANGED,
                    FindingSeverity::Error,
                    format!(
                        "the archive for version {} changed: its sha512 is {sha512}, the pin is {} (security)",
                        pin.reference,
                        anchor.value()
                    ),
                    "investigate before upgrading; do not re-pin until the cause is understood".to_owned(),
                ));
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests;
