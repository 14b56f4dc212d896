//! Tests for trust resolution: only trust-list entries become pins, reference-form entries
//! merge with the adopter's org-curated list, and the fetch plan refuses a disagreeing pin.

use std::fs;
use std::path::Path;

use super::{EntryForm, PinState, plan_fetch, resolve_trusted};
use crate::sources::layout::SourcesLayout;
use crate::sources::lock::PinLock;
use crate::sources::model::{Anchor, Method, Pin, SourceId};

const C1: &str = "a111111111111111111111111111111111111111";
const C2: &str = "b222222222222222222222222222222222222222";

fn full(id: &str, org: &str, commit: &str) -> String {
    format!(
        "- id: {id}
  organization: {org}
  name: {id}
  method: git-tag
  url: https://example.com/{id}.git
  ref: v1
  commit: {commit}
  provides:
    - skill: {id}
"
    )
}

fn trust(front: &str, body: &str) -> String {
    format!("{front}# Trust\n\n## Trusted sources\n\n```yaml\n{body}```\n")
}

fn curated(body: &str) -> String {
    format!("# Acme\n\n## Curated sources\n\n```yaml\n{body}```\n")
}

const ACME: &str = "---\norganization: acme\n---\n";
const ORG_FILE: &str = "organizations/acme/skill-sources.md";

/// Writes `files` under a fresh config dir and renders the resolution: one line per
/// trusted source (`pin <id> <form> <method> <url> <ref> <anchor>`), then per refusal
/// (`refused <id> <code>`), or `error <code>` lines when the trust list is unusable.
fn resolved(files: &[(&str, &str)]) -> String {
    let dir = tempfile::tempdir().expect("temporary folder");
    for (path, text) in files {
        let path = dir.path().join(path);
        fs::create_dir_all(path.parent().expect("has a parent")).expect("create dirs");
        fs::write(path, text).expect("write file");
    }
    match resolve_trusted(&SourcesLayout::new(dir.path())) {
        Err(problems) => problems
            .iter()
            .map(|p| format!("error {}", p.code))
            .collect::<Vec<_>>()
            .join("\n"),
        Ok(resolution) => {
            let pins = resolution.pins();
            resolution
                .trusted
                .iter()
                .zip(pins)
                .map(|(t, pin)| {
                    let form = match t.form {
                        EntryForm::Full => "full",
                        EntryForm::Reference { .. } => "ref",
                    };
                    let anchor = pin
                        .anchor
                        .map_or_else(|| "none".to_owned(), |a| a.value()[..4].to_owned());
                    format!(
                        "pin {} {form} {} {} {} {anchor}",
                        pin.id, pin.method, pin.url, pin.reference
                    )
                })
                .chain(
                    resolution
                        .refused
                        .iter()
                        .map(|r| format!("refused {} {}", r.source, r.code)),
                )
                .collect::<Vec<_>>()
                .join("\n")
        }
    }
}

#[track_caller]
fn check(files: &[(&str, &str)], expected: &str) {
    assert_eq!(resolved(files), expected.trim());
}

#[test]
fn no_trust_list_trusts_nothing() {
    check(&[(ORG_FILE, &curated(&full("acme-a", "acme", C1)))], "");
}

#[test]
fn registry_and_curated_only_sources_never_become_pins() {
    let registry = "## Community / external sources\n\n| Source id | Owning org | Maintainer | Repository | Notes |\n|---|---|---|---|---|\n| listed-only | x | y | https://example.com/l | n |\n";
    check(
        &[
            ("skill-sources-registry.md", registry),
            (
                ORG_FILE,
                &curated(&format!(
                    "{}{}",
                    full("acme-a", "acme", C1),
                    full("acme-b", "acme", C1)
                )),
            ),
            (
                "skill-sources.md",
                &trust(ACME, &format!("- id: acme-a\n  ref: v2\n  commit: {C2}\n")),
            ),
        ],
        "pin acme-a ref git-tag https://example.com/acme-a.git v2 b222",
    );
}

#[test]
fn reference_form_merges_curated_fields_with_the_adopters_pin() {
    let curated_entry = full("acme-a", "acme", C1).replace(
        "  provides:\n    - skill: acme-a\n",
        "  layout:\n    skills_root: src/skills\n  provides:\n    - family: acme-a-*\n",
    );
    let dir = tempfile::tempdir().expect("temporary folder");
    fs::create_dir_all(dir.path().join("organizations/acme")).expect("dirs");
    fs::write(dir.path().join(ORG_FILE), curated(&curated_entry)).expect("write");
    fs::write(
        dir.path().join("skill-sources.md"),
        trust(ACME, &format!("- id: acme-a\n  ref: v2\n  commit: {C2}\n")),
    )
    .expect("write");
    let resolution = resolve_trusted(&SourcesLayout::new(dir.path())).expect("resolves");
    let source = &resolution.trusted[0];
    assert_eq!(
        source.form,
        EntryForm::Reference {
            curated_file: dir.path().join(ORG_FILE)
        }
    );
    let d = &source.descriptor;
    assert_eq!(d.url, "https://example.com/acme-a.git");
    assert_eq!(d.reference, "v2");
    assert_eq!(d.anchor, Some(Anchor::Commit(C2.to_owned())));
    assert_eq!(d.layout.skills_root, Path::new("src/skills"));
    assert!(d.provides_skill("acme-a-one"));
    assert!(!d.provides_skill("acme-a"));
    assert_eq!(d.file, dir.path().join("skill-sources.md"));
}

#[test]
fn reference_not_curated_is_refused_and_others_continue() {
    check(
        &[
            (ORG_FILE, &curated(&full("acme-a", "acme", C1))),
            (
                "skill-sources.md",
                &trust(
                    ACME,
                    &format!(
                        "- id: acme-missing\n  ref: v1\n  commit: {C1}\n{}",
                        full("own-src", "indie", C1)
                    ),
                ),
            ),
        ],
        "pin own-src full git-tag https://example.com/own-src.git v1 a111\nrefused acme-missing source_not_curated",
    );
}

#[test]
fn reference_without_organization_or_org_file_is_not_curated() {
    let entry = format!("- id: acme-a\n  ref: v1\n  commit: {C1}\n");
    check(
        &[("skill-sources.md", &trust("", &entry))],
        "refused acme-a source_not_curated",
    );
    check(
        &[("skill-sources.md", &trust(ACME, &entry))],
        "refused acme-a source_not_curated",
    );
}

#[test]
fn merged_entry_is_validated_against_the_curated_method() {
    check(
        &[
            (ORG_FILE, &curated(&full("acme-a", "acme", C1))),
            (
                "skill-sources.md",
                &trust(
                    ACME,
                    &format!("- id: acme-a\n  ref: v1\n  sha512: {}\n", "a".repeat(128)),
                ),
            ),
        ],
        "refused acme-a source_anchor_wrong_kind",
    );
}

#[test]
fn invalid_curated_entry_is_unusable() {
    check(
        &[
            (ORG_FILE, &curated(&full("acme-a", "other", C1))),
            (
                "skill-sources.md",
                &trust(ACME, &format!("- id: acme-a\n  ref: v1\n  commit: {C1}\n")),
            ),
        ],
        "refused acme-a source_curated_unusable",
    );
}

#[test]
fn a_bad_full_entry_is_refused_alone() {
    check(
        &[(
            "skill-sources.md",
            &trust(
                "",
                &format!(
                    "{}{}",
                    full("bad-src", "indie", "XYZ"),
                    full("good-src", "indie", C1)
                ),
            ),
        )],
        "pin good-src full git-tag https://example.com/good-src.git v1 a111\nrefused bad-src source_anchor_malformed",
    );
}

#[test]
fn a_snapshots_own_trust_list_and_org_files_are_never_read() {
    check(
        &[
            (
                "skill-sources.md",
                &trust("", &full("good-src", "indie", C1)),
            ),
            (
                ".mp-sources/good-src/skill-sources.md",
                &trust("", &full("evil-src", "indie", C2)),
            ),
            (
                ".mp-sources/good-src/organizations/indie/skill-sources.md",
                &curated(&full("evil-org", "indie", C2)),
            ),
            (
                ".mp-sources/good-src/skills/x/source.md",
                "---\nsource: evil-src\norganization: indie\nskill_path: x\n---\n",
            ),
        ],
        "pin good-src full git-tag https://example.com/good-src.git v1 a111",
    );
}

#[test]
fn a_broken_trust_list_stops_everything() {
    check(
        &[("skill-sources.md", "# Trust\n\nno section\n")],
        "error source_section_missing",
    );
}

fn pin(id: &str, commit: &str) -> Pin {
    Pin {
        id: SourceId::parse(id).expect("kebab"),
        method: Method::GitTag,
        url: format!("https://example.com/{id}.git"),
        reference: "v1".to_owned(),
        anchor: Some(Anchor::Commit(commit.to_owned())),
    }
}

#[test]
fn fetch_plan_against_the_pin_lock() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let body = format!(
        "{}{}{}",
        full("new-src", "x", C1),
        full("same-src", "x", C1),
        full("moved-src", "x", C2)
    );
    fs::write(dir.path().join("skill-sources.md"), trust("", &body)).expect("write");
    let resolution = resolve_trusted(&SourcesLayout::new(dir.path())).expect("resolves");
    let lock = PinLock::new(vec![pin("same-src", C1), pin("moved-src", C1)]);
    let plan = plan_fetch(&resolution, &lock);
    let fetch: Vec<(String, PinState)> = plan
        .fetch
        .iter()
        .map(|f| (f.pin.id.to_string(), f.state))
        .collect();
    assert_eq!(
        fetch,
        [
            ("new-src".to_owned(), PinState::FirstPin),
            ("same-src".to_owned(), PinState::Pinned)
        ]
    );
    assert_eq!(plan.refused.len(), 1);
    let refusal = &plan.refused[0];
    assert_eq!(
        (refusal.source.as_str(), refusal.code),
        ("moved-src", "source_pin_disagrees")
    );
    assert_eq!(
        refusal.reason,
        format!("the trust list and sources.lock disagree: commit {C2} vs commit {C1}")
    );
    assert!(
        refusal.fix.contains("mp sources lock --bump moved-src"),
        "{}",
        refusal.fix
    );
}

#[test]
fn a_curated_branch_needs_the_adopters_own_wip_mark() {
    let branch = full("acme-wip", "acme", C1)
        .replace("method: git-tag", "method: git-branch")
        .replace(&format!("  commit: {C1}\n"), "  wip: true\n");
    let files = |entry: &str| {
        resolved(&[
            (ORG_FILE, &curated(&branch)),
            ("skill-sources.md", &trust(ACME, entry)),
        ])
    };
    assert_eq!(
        files("- id: acme-wip\n  ref: dev\n"),
        "refused acme-wip source_branch_not_wip"
    );
    assert_eq!(
        files("- id: acme-wip\n  ref: dev\n  wip: true\n"),
        "pin acme-wip ref git-branch https://example.com/acme-wip.git dev none"
    );
}
