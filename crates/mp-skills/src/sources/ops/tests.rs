//! Tests of the sources operations end to end: a real git repository with a tag as the
//! upstream, a real config directory, fetch, pin, load into the registry, drift.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use mp_core::config::SkillsPolicy;
use mp_core::skill::Validator;

use super::*;
use crate::registry::Registry;
use crate::sandbox::Limits;
use crate::sources::fetch::Curl;
use crate::sources::fetch::testkit::{commit, file_url, git, repo};
use crate::test_support::{commit as pr_commit, pr};

const MODULE: &str =
    include_str!("../../../../../examples/skills/no_todos_in_prod/no_todos_in_prod.wat");
const CONTRACT: &str =
    include_str!("../../../../../examples/skills/no_todos_in_prod/no_todos_in_prod.md");
const NOW: &str = "2026-11-30T04:00:00Z";

/// The upstream: a family of two skills (`acme-audit-todos`, a validator, and
/// `acme-audit-docs`), a non-member `acme-auditor`, and a trust list of its own that must
/// never be read; tagged `v1`.
fn upstream() -> (tempfile::TempDir, String) {
    let skill_md = format!("---\nname: acme-audit-todos\nkind: validators\n---\n{CONTRACT}");
    let docs_md = format!("---\nname: acme-audit-docs\nkind: validators\n---\n{CONTRACT}");
    let (dir, head) = repo(&[
        ("skills/acme-audit-todos/SKILL.md", skill_md.as_str()),
        ("skills/acme-audit-todos/acme-audit-todos.wat", MODULE),
        ("skills/acme-audit-docs/SKILL.md", docs_md.as_str()),
        ("skills/acme-audit-docs/acme-audit-docs.wat", MODULE),
        ("skills/acme-auditor/SKILL.md", skill_md.as_str()),
        (
            "skill-sources.md",
            "## Trusted sources\n\n```yaml\n- id: evil\n```\n",
        ),
    ]);
    git(dir.path(), &["tag", "v1"]);
    (dir, head)
}

/// A config directory trusting `upstream` at `v1` pinned to `commit`, plus a registry row
/// for a source that is not trusted.
fn config(upstream: &Path, commit: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("config dir");
    let trust = format!(
        "# Trust\n\n## Trusted sources\n\n```yaml\n- id: acme-audit\n  organization: acme\n  name: Acme audit skills\n  method: git-tag\n  url: {}\n  ref: v1\n  commit: {commit}\n  provides:\n    - family: acme-audit-*\n```\n",
        file_url(upstream)
    );
    fs::write(dir.path().join("skill-sources.md"), trust).expect("trust list");
    fs::write(
        dir.path().join("skill-sources-registry.md"),
        "# Registry\n\n## Community / external sources\n\n| Source id | Owning org | Maintainer | Repository | Notes |\n|---|---|---|---|---|\n| other-skills | acme | someone | https://example.com/other.git | never trusted |\n",
    )
    .expect("registry");
    dir
}

fn opened(dir: &Path) -> Sources {
    open(SourcesLayout::new(dir)).expect("sources open")
}

fn id(text: &str) -> SourceId {
    SourceId::parse(text).expect("kebab-case")
}

#[test]
fn a_trusted_tag_is_fetched_pinned_and_its_family_loads_into_the_registry() {
    let (upstream, head) = upstream();
    let dir = config(upstream.path(), &head);
    let mut sources = opened(dir.path());
    let report = fetch_sources(&mut sources, &[], &FetchOptions::default(), NOW).expect("fetch");
    assert_eq!(report.refused, Vec::new());
    assert_eq!(report.fetched.len(), 1);
    let fetched = &report.fetched[0];
    assert_eq!(fetched.resolved, head);
    assert!(fetched.first_pin);
    assert_eq!(fetched.skills, ["acme-audit-docs", "acme-audit-todos"]);

    let pin_lock = fs::read_to_string(dir.path().join("sources.lock")).expect("pin lock");
    assert!(pin_lock.contains(&head), "{pin_lock}");
    let ignore = fs::read_to_string(dir.path().join(".mp-sources/.gitignore")).expect("ignored");
    assert!(ignore.lines().any(|l| l == "*"));
    assert!(
        !dir.path().join(".mp-sources/acme-audit/.git").exists(),
        "the snapshot is plain files"
    );

    // Reopened from disk, as a tick would.
    let sources = opened(dir.path());
    let loadable = loadable_skills(&sources, &BTreeMap::new()).expect("no collision");
    assert_eq!(loadable.skipped, Vec::<String>::new());
    let sourced = loadable.sourced();
    let registry =
        Registry::load_with_sources(None, &sourced, &SkillsPolicy::default(), Limits::default());
    assert_eq!(registry.warnings(), &[]);
    let validators: Vec<&dyn Validator> = registry.user_validators().collect();
    assert_eq!(validators.len(), 2);
    let verdict = validators[1]
        .check(&pr(vec![pr_commit(0x21, "TODO: later")]))
        .map(|v| v.to_string());
    assert_eq!(
        verdict,
        Ok("fail: a commit subject contains TODO".to_owned())
    );
}

#[test]
fn a_moved_tag_fails_verification_is_reported_as_drift_and_keeps_the_old_snapshot() {
    let (upstream, head) = upstream();
    let dir = config(upstream.path(), &head);
    let mut sources = opened(dir.path());
    fetch_sources(&mut sources, &[], &FetchOptions::default(), NOW).expect("fetch");
    let before = tree_digest(&dir.path().join(".mp-sources/acme-audit")).expect("digest");
    assert_eq!(drift_report(&sources, Some(&Curl)), Vec::new());

    let moved = commit(
        upstream.path(),
        &[("skills/acme-audit-todos/extra.txt", "x")],
    );
    git(upstream.path(), &["tag", "-f", "v1"]);
    let findings: Vec<&str> = drift_report(&sources, Some(&Curl))
        .iter()
        .map(|f| f.code)
        .collect();
    assert_eq!(findings, ["source_tag_moved"]);

    let report = fetch_sources(&mut sources, &[], &FetchOptions::default(), NOW).expect("fetch");
    let codes: Vec<&str> = report.refused.iter().map(|r| r.code).collect();
    assert_eq!(codes, ["source_tag_moved"], "{:?}", report.refused);
    assert!(
        report.refused[0].reason.contains(&moved[..7]) || report.refused[0].reason.contains(&moved)
    );
    let after = tree_digest(&dir.path().join(".mp-sources/acme-audit")).expect("digest");
    assert_eq!(before, after, "the previous snapshot survives");
}

#[test]
fn an_edited_snapshot_is_not_loaded_and_is_drift() {
    let (upstream, head) = upstream();
    let dir = config(upstream.path(), &head);
    let mut sources = opened(dir.path());
    fetch_sources(&mut sources, &[], &FetchOptions::default(), NOW).expect("fetch");
    fs::write(
        dir.path()
            .join(".mp-sources/acme-audit/skills/acme-audit-todos/acme-audit-todos.wat"),
        "(module)",
    )
    .expect("tamper");
    let sources = opened(dir.path());
    let loadable = loadable_skills(&sources, &BTreeMap::new()).expect("no collision");
    assert!(loadable.skills.is_empty());
    assert_eq!(loadable.skipped.len(), 1);
    assert!(loadable.skipped[0].contains("source_snapshot_edited"));
    let codes: Vec<&str> = drift_report(&sources, None)
        .iter()
        .map(|f| f.code)
        .collect();
    assert_eq!(codes, ["source_snapshot_edited"]);
}

#[test]
fn a_source_only_in_the_registry_is_never_fetched() {
    let (upstream, head) = upstream();
    let dir = config(upstream.path(), &head);
    let mut sources = opened(dir.path());
    let report = fetch_sources(
        &mut sources,
        &[id("other-skills")],
        &FetchOptions::default(),
        NOW,
    )
    .expect("fetch");
    assert!(report.fetched.is_empty());
    let codes: Vec<&str> = report.refused.iter().map(|r| r.code).collect();
    assert_eq!(codes, ["source_not_trusted"]);
    assert!(!dir.path().join(".mp-sources/other-skills").exists());
    assert!(
        !dir.path().join(".mp-sources/acme-audit").exists(),
        "only the named id"
    );
}

#[test]
fn a_skill_name_taken_in_tree_stops_the_run() {
    let (upstream, head) = upstream();
    let dir = config(upstream.path(), &head);
    let mut sources = opened(dir.path());
    fetch_sources(&mut sources, &[], &FetchOptions::default(), NOW).expect("fetch");
    let taken = BTreeMap::from([(
        "acme-audit-docs".to_owned(),
        "in-tree skill skills/validators/acme-audit-docs.wat".to_owned(),
    )]);
    let collisions = loadable_skills(&sources, &taken).expect_err("collision");
    assert_eq!(collisions.len(), 1);
    assert_eq!(collisions[0].name, "acme-audit-docs");
}

#[test]
fn lock_pins_first_and_refuses_a_silent_bump() {
    let (upstream, head) = upstream();
    let dir = config(upstream.path(), &head);
    let mut sources = opened(dir.path());
    let report = lock_sources(&mut sources, &[]).expect("lock");
    assert_eq!(report.pinned, [id("acme-audit")]);
    let other = "c".repeat(40);
    let trust = fs::read_to_string(dir.path().join("skill-sources.md")).expect("trust");
    fs::write(
        dir.path().join("skill-sources.md"),
        trust.replace(&head, &other),
    )
    .expect("edit trust list");
    let mut sources = opened(dir.path());
    let report = lock_sources(&mut sources, &[]).expect("lock");
    let codes: Vec<&str> = report.refused.iter().map(|r| r.code).collect();
    assert_eq!(codes, ["source_pin_disagrees"]);
    let report = fetch_sources(&mut sources, &[], &FetchOptions::default(), NOW).expect("fetch");
    let codes: Vec<&str> = report.refused.iter().map(|r| r.code).collect();
    assert_eq!(codes, ["source_pin_disagrees"], "no fetch until reconciled");
    let report = lock_sources(&mut sources, &[id("acme-audit")]).expect("bump");
    assert_eq!(report.bumped, [id("acme-audit")]);
    let pin_lock = fs::read_to_string(dir.path().join("sources.lock")).expect("pin lock");
    assert!(pin_lock.contains(&other));
}

#[test]
fn a_family_that_selects_nothing_is_a_warning_at_fetch_and_at_load() {
    let (upstream, head) = upstream();
    let dir = config(upstream.path(), &head);
    let trust_file = dir.path().join("skill-sources.md");
    let trust = fs::read_to_string(&trust_file).expect("trust list");
    fs::write(
        &trust_file,
        trust.replace(
            "    - family: acme-audit-*\n",
            "    - family: acme-audit-*\n    - family: acme-none-*\n",
        ),
    )
    .expect("trust list");
    let mut sources = opened(dir.path());
    let report = fetch_sources(&mut sources, &[], &FetchOptions::default(), NOW).expect("fetch");
    assert_eq!(report.refused, Vec::new());
    let warnings: Vec<&str> = report.fetched[0].warnings.iter().map(|w| w.code).collect();
    assert_eq!(warnings, ["source_family_empty"]);
    assert_eq!(
        report.fetched[0].skills,
        ["acme-audit-docs", "acme-audit-todos"]
    );

    let sources = opened(dir.path());
    let loadable = loadable_skills(&sources, &BTreeMap::new()).expect("no collision");
    assert_eq!(loadable.skills.len(), 2);
    assert_eq!(loadable.skipped.len(), 1);
    assert!(
        loadable.skipped[0].starts_with("warning[source_family_empty]: source acme-audit: `family: acme-none-*` selects no skill"),
        "{:?}",
        loadable.skipped
    );
    let states = status(&sources);
    let codes: Vec<&str> = states[0].warnings.iter().map(|w| w.code).collect();
    assert_eq!(codes, ["source_family_empty"]);
}
