//! Tests for the sources layout: every path hangs off the config directory.

use std::path::{Path, PathBuf};

use super::SourcesLayout;
use crate::sources::model::SourceId;

#[track_caller]
fn check(actual: PathBuf, expected: &str) {
    assert_eq!(actual, Path::new(expected));
}

#[test]
fn default_paths() {
    let layout = SourcesLayout::new(Path::new("/cfg"));
    check(layout.trust_list.clone(), "/cfg/skill-sources.md");
    check(layout.pin_lock.clone(), "/cfg/sources.lock");
    check(layout.snapshots.clone(), "/cfg/.mp-sources");
    check(layout.local_lock.clone(), "/cfg/.mp-sources/local.lock");
    check(layout.registry(), "/cfg/skill-sources-registry.md");
    check(
        layout.org_curated("acme"),
        "/cfg/organizations/acme/skill-sources.md",
    );
    let id = SourceId::parse("acme-skills").expect("kebab id");
    check(layout.snapshot(&id), "/cfg/.mp-sources/acme-skills");
    check(layout.skills_dir(), "/cfg/skills");
}

#[test]
fn trust_list_override() {
    let layout =
        SourcesLayout::new(Path::new("/cfg")).with_trust_list(PathBuf::from("/elsewhere/t.md"));
    check(layout.trust_list, "/elsewhere/t.md");
}
