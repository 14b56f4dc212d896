//! Tests for selection on real directories: `skill:` and `family:` expansion, what is
//! excluded, refusals, collisions, and pointer reconciliation.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use super::{
    Claimant, SelectedSkill, check_collisions, scan_pointers, select_skills, unfulfilled_pointers,
};
use crate::sources::format::{Descriptor, Provide, TreeLayout};
use crate::sources::model::{Method, SourceId};

fn id(text: &str) -> SourceId {
    SourceId::parse(text).expect("kebab id")
}

fn descriptor(source: &str, provides: Vec<Provide>) -> Descriptor {
    Descriptor {
        id: id(source),
        organization: "acme".to_owned(),
        name: source.to_owned(),
        maintainer: None,
        method: Method::GitBranch,
        url: "file:///x".to_owned(),
        reference: "main".to_owned(),
        anchor: None,
        wip: true,
        layout: TreeLayout::default(),
        provides,
        file: PathBuf::from("skill-sources.md"),
        line: 1,
    }
}

/// Creates `entries` under `root`: `a/b/` is a directory, `a -> b` a symlink to `b`,
/// anything else a file.
fn build(root: &Path, entries: &[&str]) {
    for entry in entries {
        if let Some((link, target)) = entry.split_once(" -> ") {
            let link = root.join(link);
            fs::create_dir_all(link.parent().expect("parent")).expect("dirs");
            std::os::unix::fs::symlink(target, link).expect("symlink");
        } else if let Some(dir) = entry.strip_suffix('/') {
            fs::create_dir_all(root.join(dir)).expect("dirs");
        } else {
            let file = root.join(entry);
            fs::create_dir_all(file.parent().expect("parent")).expect("dirs");
            fs::write(file, "text").expect("write");
        }
    }
}

/// Selects `provides` from a snapshot holding `entries` and renders each skill as
/// `name` (plus `+evals`), or each refusal's code.
#[track_caller]
fn check(entries: &[&str], provides: Vec<Provide>, expected: &[&str]) {
    let dir = tempfile::tempdir().expect("temporary folder");
    build(dir.path(), entries);
    let shown: Vec<String> = match select_skills(dir.path(), &descriptor("src", provides)) {
        Ok(skills) => skills
            .iter()
            .map(|s| {
                assert_eq!(s.dir, dir.path().join("skills").join(&s.name));
                match &s.evals {
                    Some(evals) => {
                        assert_eq!(evals, &dir.path().join("evals").join(&s.name));
                        format!("{}+evals", s.name)
                    }
                    None => s.name.clone(),
                }
            })
            .collect(),
        Err(refusals) => refusals
            .iter()
            .map(|r| format!("refused {}", r.code))
            .collect(),
    };
    assert_eq!(shown, expected);
}

fn skill(name: &str) -> Provide {
    Provide::Skill(name.to_owned())
}

fn family(prefix: &str) -> Provide {
    Provide::Family(prefix.to_owned())
}

#[test]
fn skill_selects_its_directory_and_evals() {
    check(
        &[
            "skills/acme-scan/SKILL.md",
            "evals/acme-scan/case.json",
            "skills/other/SKILL.md",
        ],
        vec![skill("acme-scan")],
        &["acme-scan+evals"],
    );
    check(
        &["skills/acme-scan/SKILL.md", "evals/"],
        vec![skill("acme-scan")],
        &["acme-scan"],
    );
}

#[test]
fn family_selects_only_real_skill_directories_with_the_prefix() {
    check(
        &[
            "skills/acme-audit-b/SKILL.md",
            "skills/acme-audit-a/SKILL.md",
            "evals/acme-audit-b/",
            "skills/acme-auditor/SKILL.md",
            "skills/.acme-audit-hidden/SKILL.md",
            "skills/acme-audit-file",
            "skills/acme-audit-pointer/source.md",
            "skills/acme-audit-link -> acme-audit-a",
            "skills/acme-audit-empty/",
        ],
        vec![family("acme-audit-")],
        &["acme-audit-a", "acme-audit-b+evals"],
    );
}

#[test]
fn overlapping_items_select_each_skill_once() {
    check(
        &["skills/acme-audit-a/SKILL.md"],
        vec![skill("acme-audit-a"), family("acme-audit-")],
        &["acme-audit-a"],
    );
}

#[test]
fn a_family_matching_nothing_selects_nothing() {
    check(&["skills/other/SKILL.md"], vec![family("acme-")], &[]);
}

#[test]
fn provided_skill_refusals() {
    check(
        &["skills/x/README.md"],
        vec![skill("x")],
        &["refused source_skill_without_contract"],
    );
    check(
        &["skills/"],
        vec![skill("x")],
        &["refused source_skill_missing"],
    );
    check(
        &["skills/y/SKILL.md", "skills/x -> y"],
        vec![skill("x")],
        &["refused source_skill_not_directory"],
    );
    check(
        &["skills/x"],
        vec![skill("x")],
        &["refused source_skill_not_directory"],
    );
    check(
        &["skills/x/SKILL.md/"],
        vec![skill("x")],
        &["refused source_skill_without_contract"],
    );
    let long = format!("skills/acme-{}/SKILL.md", "x".repeat(60));
    check(
        &[long.as_str()],
        vec![family("acme-")],
        &["refused source_skill_name_invalid"],
    );
    check(
        &["skills/acme-Bad/SKILL.md"],
        vec![family("acme-")],
        &["refused source_skill_name_invalid"],
    );
}

#[test]
fn skills_root_must_be_a_real_directory() {
    check(
        &["other/"],
        vec![skill("x")],
        &["refused source_skills_root_missing"],
    );
    check(
        &["real/x/SKILL.md", "skills -> real"],
        vec![skill("x")],
        &["refused source_skills_root_missing"],
    );
}

#[test]
fn layout_roots_are_rechecked() {
    let dir = tempfile::tempdir().expect("temporary folder");
    build(dir.path(), &["skills/x/SKILL.md"]);
    let mut d = descriptor("src", vec![skill("x")]);
    d.layout.evals_root = PathBuf::from("../outside");
    let refusals = select_skills(dir.path(), &d).expect_err("escaping root refused");
    assert_eq!(refusals[0].code, "source_path_invalid");
    d.layout.evals_root = PathBuf::from("/abs");
    assert_eq!(
        select_skills(dir.path(), &d).expect_err("absolute").len(),
        1
    );
}

#[test]
fn files_that_would_chain_trust_inside_a_snapshot_are_inert() {
    check(
        &[
            "skill-sources.md",
            "organizations/acme/skill-sources.md",
            "skills/acme-a/SKILL.md",
            "skills/acme-b/source.md",
        ],
        vec![family("acme-")],
        &["acme-a"],
    );
}

fn selected(source: &str, name: &str) -> SelectedSkill {
    SelectedSkill {
        source: id(source),
        name: name.to_owned(),
        dir: PathBuf::from(format!("/snap/{source}/skills/{name}")),
        evals: None,
    }
}

#[test]
fn collisions_name_both_claimants() {
    let taken = BTreeMap::from([(
        "review".to_owned(),
        "in-tree skill skills/review".to_owned(),
    )]);
    let skills = [
        selected("one", "scan"),
        selected("two", "scan"),
        selected("two", "review"),
        selected("one", "solo"),
    ];
    let collisions = check_collisions(&skills, &taken).expect_err("collisions");
    let shown: Vec<String> = collisions.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        [
            "skill `review` is claimed by both in-tree skill skills/review and source two; rename or drop one, mp never shadows a skill",
            "skill `scan` is claimed by both source one and source two; rename or drop one, mp never shadows a skill",
        ]
    );
    assert_eq!(collisions[1].first, Claimant::Source(id("one")));
    assert_eq!(collisions[0].code(), "source_skill_collision");
    assert_eq!(check_collisions(&skills[..1], &BTreeMap::new()), Ok(()));
}

const POINTER: &str =
    "---\nsource: SRC\norganization: acme\nskill_path: skills/NAME\n---\n\n# redirect\n";

#[test]
fn pointers_count_only_without_a_contract_and_are_reconciled() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let pointer = |source: &str, name: &str| POINTER.replace("SRC", source).replace("NAME", name);
    let files = [
        (
            "acme-audit-x/source.md",
            pointer("trusted-src", "acme-audit-x"),
        ),
        (
            "not-provided/source.md",
            pointer("trusted-src", "not-provided"),
        ),
        ("stranger/source.md", pointer("unknown-src", "stranger")),
        ("has-skill/source.md", pointer("unknown-src", "has-skill")),
        ("has-skill/SKILL.md", String::new()),
        ("named/source.md", pointer("unknown-src", "named")),
        ("named/named.md", String::new()),
        ("broken/source.md", "no frontmatter\n".to_owned()),
    ];
    for (path, text) in &files {
        let path = dir.path().join(path);
        fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
        fs::write(path, text).expect("write");
    }
    let (pointers, problems) = scan_pointers(dir.path());
    let names: Vec<&str> = pointers.iter().map(|p| p.skill.as_str()).collect();
    assert_eq!(names, ["acme-audit-x", "not-provided", "stranger"]);
    assert_eq!(
        problems.iter().map(|p| p.code).collect::<Vec<_>>(),
        ["source_frontmatter_invalid"]
    );

    let trusted = descriptor("trusted-src", vec![family("acme-audit-")]);
    let findings = unfulfilled_pointers(&pointers, &[&trusted]);
    let shown: Vec<String> = findings
        .iter()
        .map(|f| format!("{} {}", f.code, f.source))
        .collect();
    assert_eq!(
        shown,
        [
            "source_unfulfilled_pointer trusted-src",
            "source_unfulfilled_pointer unknown-src"
        ]
    );
    assert!(findings[0].reason.ends_with(
        "redirects skill `not-provided` to source `trusted-src`, which does not provide it"
    ));
    assert_eq!(scan_pointers(&dir.path().join("absent")).0, Vec::new());
}
