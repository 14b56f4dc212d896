//! Tests for drift: a world where everything matches, then one change per row of the
//! drift table.

use std::collections::BTreeMap;

use super::{DriftInput, FindingSeverity, RemoteFacts, SnapshotFacts, drift};
use crate::sources::lock::{LocalEntry, LocalLock, PinLock};
use crate::sources::model::{Anchor, Method, Pin, SourceId};

const COMMIT: &str = "c0ffee0000000000000000000000000000000001";
const OTHER: &str = "beef000000000000000000000000000000000002";
const DIGEST: &str = "h1:AAAA";

fn id(text: &str) -> SourceId {
    SourceId::parse(text).expect("kebab id")
}

fn pin(name: &str, method: Method) -> Pin {
    let anchor = match method {
        Method::GitTag => Some(Anchor::Commit(COMMIT.to_owned())),
        Method::Archive => Some(Anchor::Sha512("a".repeat(128))),
        Method::GitBranch => None,
    };
    Pin {
        id: id(name),
        method,
        url: format!("https://example.com/{name}"),
        reference: "v1".to_owned(),
        anchor,
    }
}

fn local_for(pin: &Pin, fetched: &str) -> LocalEntry {
    LocalEntry {
        id: pin.id.clone(),
        method: pin.method,
        url: pin.url.clone(),
        reference: pin.reference.clone(),
        fetched: fetched.to_owned(),
        tree_digest: DIGEST.to_owned(),
        fetched_at: "2026-11-30T04:00:00Z".to_owned(),
    }
}

/// A consistent world: one trusted source of `method`, pinned, fetched, untouched.
struct World {
    trusted: Vec<Pin>,
    lock: PinLock,
    local: Option<Vec<LocalEntry>>,
    snapshots: BTreeMap<SourceId, SnapshotFacts>,
    remote: BTreeMap<SourceId, RemoteFacts>,
}

fn world(method: Method) -> World {
    let pin = pin("src", method);
    let fetched = match &pin.anchor {
        Some(anchor) => anchor.value().to_owned(),
        None => COMMIT.to_owned(),
    };
    World {
        trusted: vec![pin.clone()],
        lock: PinLock::new(vec![pin.clone()]),
        local: Some(vec![local_for(&pin, &fetched)]),
        snapshots: BTreeMap::from([(
            id("src"),
            SnapshotFacts {
                exists: true,
                tree_digest: Some(DIGEST.to_owned()),
            },
        )]),
        remote: BTreeMap::new(),
    }
}

impl World {
    /// The single local-lock entry, for editing.
    fn local_entry(&mut self) -> &mut LocalEntry {
        self.local
            .as_mut()
            .and_then(|entries| entries.first_mut())
            .expect("one local entry")
    }

    fn local_lock(&self) -> Option<LocalLock> {
        self.local.clone().map(LocalLock::new)
    }
}

/// Runs drift and renders `severity code source` per finding.
#[track_caller]
fn check(world: &World, expected: &[&str]) {
    let local = world.local_lock();
    let input = DriftInput {
        trusted: &world.trusted,
        pin_lock: &world.lock,
        local_lock: local.as_ref(),
        snapshots: &world.snapshots,
        remote: &world.remote,
    };
    let shown: Vec<String> = drift(&input)
        .iter()
        .map(|f| {
            let severity = match f.severity {
                FindingSeverity::Error => "error",
                FindingSeverity::Warning => "warning",
            };
            format!("{severity} {} {}", f.code, f.source)
        })
        .collect();
    assert_eq!(shown, expected);
}

#[test]
fn everything_matching_has_no_findings() {
    for method in [Method::GitTag, Method::GitBranch, Method::Archive] {
        let mut w = world(method);
        w.remote.insert(
            id("src"),
            RemoteFacts {
                commit: (method != Method::Archive).then(|| COMMIT.to_owned()),
                archive_sha512: (method == Method::Archive).then(|| "a".repeat(128)),
            },
        );
        check(&w, &[]);
    }
}

#[test]
fn trusted_but_never_pinned() {
    let mut w = world(Method::GitTag);
    w.lock = PinLock::default();
    check(&w, &["error source_unpinned src"]);
}

#[test]
fn trust_list_disagrees_with_the_pin() {
    let mut w = world(Method::GitTag);
    w.trusted[0].reference = "v2".to_owned();
    check(&w, &["error source_pin_disagrees src"]);
}

#[test]
fn method_or_url_changed_needs_a_reinstall() {
    let mut w = world(Method::GitTag);
    w.local_entry().url = "https://old.example.com/src".to_owned();
    check(&w, &["error source_reinstall_needed src"]);
    let mut w = world(Method::GitTag);
    w.local_entry().method = Method::GitBranch;
    check(&w, &["error source_reinstall_needed src"]);
}

#[test]
fn ref_bumped_without_refetch_needs_a_sync() {
    let mut w = world(Method::GitTag);
    w.local_entry().reference = "v0".to_owned();
    check(&w, &["warning source_sync_needed src"]);
}

#[test]
fn tag_moved_upstream() {
    let mut w = world(Method::GitTag);
    w.remote.insert(
        id("src"),
        RemoteFacts {
            commit: Some(OTHER.to_owned()),
            archive_sha512: None,
        },
    );
    check(&w, &["error source_tag_moved src"]);
}

#[test]
fn branch_advanced_upstream() {
    let mut w = world(Method::GitBranch);
    w.remote.insert(
        id("src"),
        RemoteFacts {
            commit: Some(OTHER.to_owned()),
            archive_sha512: None,
        },
    );
    check(&w, &["warning source_branch_advanced src"]);
}

#[test]
fn archive_changed_under_the_same_version() {
    let mut w = world(Method::Archive);
    w.remote.insert(
        id("src"),
        RemoteFacts {
            commit: None,
            archive_sha512: Some("b".repeat(128)),
        },
    );
    check(&w, &["error source_archive_changed src"]);
}

#[test]
fn snapshot_missing() {
    let mut w = world(Method::GitTag);
    w.snapshots.clear();
    check(&w, &["error source_snapshot_missing src"]);
    let mut w = world(Method::GitTag);
    w.snapshots.insert(id("src"), SnapshotFacts::default());
    check(&w, &["error source_snapshot_missing src"]);
}

#[test]
fn a_missing_snapshot_and_a_missing_local_lock_are_both_reported() {
    let mut w = world(Method::GitTag);
    w.snapshots.clear();
    w.local = None;
    check(
        &w,
        &[
            "error source_snapshot_missing src",
            "warning source_local_lock_missing src",
        ],
    );
    let mut w = world(Method::GitTag);
    w.snapshots.clear();
    w.local = Some(Vec::new());
    check(
        &w,
        &[
            "error source_snapshot_missing src",
            "warning source_local_lock_missing src",
        ],
    );
}

#[test]
fn local_lock_missing_or_without_the_entry() {
    let mut w = world(Method::GitTag);
    w.local = None;
    check(&w, &["warning source_local_lock_missing src"]);
    let mut w = world(Method::GitTag);
    w.local = Some(Vec::new());
    check(&w, &["warning source_local_lock_missing src"]);
}

#[test]
fn snapshot_edited_on_disk() {
    let mut w = world(Method::Archive);
    w.snapshots.insert(
        id("src"),
        SnapshotFacts {
            exists: true,
            tree_digest: Some("h1:BBBB".to_owned()),
        },
    );
    check(&w, &["error source_snapshot_edited src"]);
}

#[test]
fn snapshot_not_at_the_pinned_commit() {
    let mut w = world(Method::GitTag);
    w.local_entry().fetched = OTHER.to_owned();
    check(&w, &["error source_snapshot_not_at_pin src"]);
}

#[test]
fn pinned_but_no_longer_trusted() {
    let mut w = world(Method::GitTag);
    w.lock.bump(pin("gone", Method::GitTag));
    check(&w, &["warning source_pinned_not_trusted gone"]);
}

#[test]
fn finding_display_is_one_line() {
    let mut w = world(Method::GitTag);
    w.local_entry().fetched = OTHER.to_owned();
    let local = w.local_lock();
    let input = DriftInput {
        trusted: &w.trusted,
        pin_lock: &w.lock,
        local_lock: local.as_ref(),
        snapshots: &w.snapshots,
        remote: &w.remote,
    };
    assert_eq!(
        drift(&input)[0].to_string(),
        format!(
            "error[source_snapshot_not_at_pin]: source src: the snapshot's commit is {OTHER} but the pin is {COMMIT}; fix: run `mp sources fetch` to re-fetch and re-verify against the pin"
        )
    );
}
