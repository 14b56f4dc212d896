//! Tests of `mp sources lint` on real config directories: every file checked on its own,
//! every problem reported with its severity, file, line and code.

use std::fs;
use std::path::Path;

use super::{LintReport, lint};
use crate::sources::layout::SourcesLayout;

const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

/// Writes `files` (path relative to the config dir, text) into a fresh config dir.
fn config(files: &[(&str, String)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("config dir");
    for (path, text) in files {
        let path = dir.path().join(path);
        fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
        fs::write(path, text).expect("write");
    }
    dir
}

/// One line per finding: `severity code file:line`, paths relative to the config dir.
fn shown(dir: &Path, report: &LintReport) -> Vec<String> {
    let root = format!("{}/", dir.display());
    report
        .findings
        .iter()
        .map(|f| {
            format!(
                "{} {} {}",
                f.severity.as_str(),
                f.problem.code,
                f.problem.position().replace(&root, "")
            )
        })
        .collect()
}

fn descriptor(id: &str, url: &str, provides: &str) -> String {
    format!(
        "- id: {id}\n  organization: acme\n  name: Acme\n  method: git-tag\n  url: {url}\n  ref: v1\n  commit: {COMMIT}\n  provides:\n    - {provides}\n"
    )
}

fn pointer(source: &str, org: &str, skill_path: &str) -> String {
    format!(
        "---\nsource: {source}\norganization: {org}\nskill_path: {skill_path}\n---\n\n# redirect\n"
    )
}

#[test]
fn every_file_is_checked_and_every_problem_reported() {
    let curated = format!(
        "# Acme\n\n## Curated sources\n\n```yaml\n{}{}{}{}```\n",
        descriptor(
            "acme-skills",
            "https://example.com/acme.git",
            "skill: acme-scan"
        ),
        descriptor("acme-dup", "https://example.com/a.git", "skill: a"),
        descriptor("acme-dup", "https://example.com/b.git", "skill: b"),
        descriptor("Bad_Id", "https://example.com/c.git", "skill: c"),
    );
    let trust = format!(
        "---\norganization: acme\n---\n# Trust\n\n## Trusted sources\n\n```yaml\n{}- id: acme-missing\n  ref: v1\n  commit: {COMMIT}\n```\n",
        descriptor(
            "acme-skills",
            "https://example.com/fork.git",
            "skill: acme-scan"
        ),
    );
    let dir = config(&[
        (
            "skill-sources-registry.md",
            "# Registry\n\n## Community / external sources\n\n| Source id | Owning org | Maintainer | Repository | Notes |\n|---|---|---|---|---|\n| one | acme | me | r | n |\n| one | acme | me | r | n |\n".to_owned(),
        ),
        ("organizations/acme/skill-sources.md", curated),
        (
            "organizations/_template/skill-sources.md",
            "not read".to_owned(),
        ),
        ("skill-sources.md", trust),
        (
            "sources.lock",
            "- id: acme-skills\n  method: nope\n".to_owned(),
        ),
        ("skills/nofront/source.md", "# just text\n".to_owned()),
        (
            "skills/missing/source.md",
            "---\nsource: acme-skills\norganization: acme\n---\n".to_owned(),
        ),
        (
            "skills/dotdot/source.md",
            pointer("acme-skills", "acme", "../x"),
        ),
        (
            "skills/absolute/source.md",
            pointer("acme-skills", "acme", "/abs/absolute"),
        ),
        (
            "skills/empty/source.md",
            "---\nsource:\norganization: acme\nskill_path: skills/empty\n---\n".to_owned(),
        ),
        (
            "skills/stranger/source.md",
            pointer("acme-skills", "nobody", "skills/stranger"),
        ),
        (
            "skills/acme-scan/source.md",
            pointer("acme-skills", "acme", "skills/other"),
        ),
        (
            "skills/ok/source.md",
            pointer("acme-skills", "acme", "skills/ok"),
        ),
    ]);
    let report = lint(&SourcesLayout::new(dir.path()));
    assert_eq!(
        shown(dir.path(), &report),
        [
            "error source_duplicate_id skill-sources-registry.md:8",
            "error source_duplicate_id organizations/acme/skill-sources.md:15",
            "error source_duplicate_id organizations/acme/skill-sources.md:24",
            "error source_id_invalid organizations/acme/skill-sources.md:33",
            "warning source_curated_id_reused skill-sources.md:9",
            "error source_not_curated skill-sources.md:18",
            "error source_missing_field sources.lock:1",
            "error source_pointer_path_invalid skills/absolute/source.md:4",
            "error source_pointer_path_invalid skills/dotdot/source.md:4",
            "error source_wrong_type skills/empty/source.md:2",
            "error source_missing_field skills/missing/source.md:2",
            "error source_frontmatter_invalid skills/nofront/source.md:1",
            "error source_pointer_path_mismatch skills/acme-scan/source.md:4",
            "error source_pointer_organization_unknown skills/stranger/source.md:3",
            "error source_pointer_organization_mismatch skills/stranger/source.md:3",
            "warning source_unfulfilled_pointer skills/ok/source.md:2",
            "warning source_unfulfilled_pointer skills/stranger/source.md:2",
            "warning source_snapshot_missing .mp-sources/acme-skills",
            "warning source_local_lock_missing .mp-sources/local.lock",
        ]
    );
    assert!(!report.unreadable());
    assert_eq!(report.checked.len(), 4);
}

#[test]
fn a_clean_directory_has_no_findings() {
    let dir = config(&[]);
    let report = lint(&SourcesLayout::new(dir.path()));
    assert_eq!(report, LintReport::default());
}

#[test]
fn what_a_snapshot_holds_is_checked() {
    let trust = format!(
        "# Trust\n\n## Trusted sources\n\n```yaml\n- id: acme-skills\n  organization: acme\n  name: Acme\n  method: git-tag\n  url: https://example.com/acme.git\n  ref: v1\n  commit: {COMMIT}\n  provides:\n    - family: acme-audit-*\n    - family: acme-none-*\n```\n"
    );
    let local = format!(
        "- id:          acme-skills\n  method:      git-tag\n  url:         https://example.com/acme.git\n  ref:         v1\n  fetched:     {COMMIT}\n  tree_digest: h1:x\n  fetched_at:  \"2026-11-30T04:00:00Z\"\n"
    );
    let dir = config(&[
        ("skill-sources.md", trust),
        (".mp-sources/local.lock", local),
        (
            ".mp-sources/acme-skills/skills/acme-audit-good/SKILL.md",
            "---\nname: acme-audit-good\nkind: validators\n---\n".to_owned(),
        ),
        (
            ".mp-sources/acme-skills/skills/acme-audit-twice/SKILL.md",
            "---\nname: acme-audit-twice\nkind: validators\nkind: classifier\n---\n".to_owned(),
        ),
        (
            ".mp-sources/acme-skills/skills/acme-audit-redirect/source.md",
            pointer("elsewhere", "acme", "skills/acme-audit-redirect"),
        ),
    ]);
    let report = lint(&SourcesLayout::new(dir.path()));
    assert_eq!(
        shown(dir.path(), &report),
        [
            "warning source_pointer_only_skill .mp-sources/acme-skills",
            "warning source_family_empty .mp-sources/acme-skills",
            "error source_duplicate_key .mp-sources/acme-skills/skills/acme-audit-twice/SKILL.md:4",
        ]
    );
}

/// A source the project's organization curates, listed again in full (same id, same url)
/// instead of by reference, is a duplicate the lint names; the same copy of another
/// organization's source is how that source must be listed, and is not.
#[test]
fn a_full_form_copy_of_a_curated_source_is_a_duplicate() {
    let curated = |id: &str| {
        format!(
            "# Curated\n\n## Curated sources\n\n```yaml\n{}```\n",
            descriptor(id, "https://example.com/same.git", "skill: s")
        )
    };
    let trust = format!(
        "---\norganization: acme\n---\n# Trust\n\n## Trusted sources\n\n```yaml\n{}{}```\n",
        descriptor("acme-skills", "https://example.com/same.git", "skill: s"),
        descriptor("beta-skills", "https://example.com/same.git", "skill: t"),
    );
    let dir = config(&[
        (
            "organizations/acme/skill-sources.md",
            curated("acme-skills"),
        ),
        (
            "organizations/beta/skill-sources.md",
            curated("beta-skills").replace("organization: acme", "organization: beta"),
        ),
        ("skill-sources.md", trust),
    ]);
    let report = lint(&SourcesLayout::new(dir.path()));
    let shown = shown(dir.path(), &report);
    assert_eq!(
        shown
            .iter()
            .filter(|line| !line.contains("snapshot") && !line.contains("local_lock"))
            .collect::<Vec<_>>(),
        ["warning source_curated_id_duplicated skill-sources.md:9"],
        "{shown:#?}"
    );
    let finding = &report.findings[0];
    assert_eq!(finding.problem.source.as_deref(), Some("acme-skills"));
    assert!(
        finding.problem.message.contains("reference form"),
        "{}",
        finding.problem.message
    );
}

/// An id written with a space is reported as written, in the curated file and in the trust
/// list that names it, never under a normalised spelling.
#[test]
fn an_id_with_a_space_is_reported_as_written() {
    let curated = format!(
        "# Curated\n\n## Curated sources\n\n```yaml\n{}```\n",
        descriptor("acme skills", "https://example.com/a.git", "skill: s")
    );
    let trust = format!(
        "---\norganization: acme\n---\n# Trust\n\n## Trusted sources\n\n```yaml\n- id: acme skills\n  ref: v1\n  commit: {COMMIT}\n```\n"
    );
    let dir = config(&[
        ("organizations/acme/skill-sources.md", curated),
        ("skill-sources.md", trust),
    ]);
    let report = lint(&SourcesLayout::new(dir.path()));
    let named: Vec<(String, Option<String>)> = report
        .findings
        .iter()
        .map(|f| (f.problem.code.to_string(), f.problem.source.clone()))
        .collect();
    assert_eq!(
        named,
        [
            (
                "source_id_invalid".to_owned(),
                Some("acme skills".to_owned())
            ),
            (
                "source_id_invalid".to_owned(),
                Some("acme skills".to_owned())
            ),
        ]
    );
    assert!(
        report
            .findings
            .iter()
            .all(|f| f.problem.message.contains("`acme skills`")),
        "{:#?}",
        report.findings
    );
}
