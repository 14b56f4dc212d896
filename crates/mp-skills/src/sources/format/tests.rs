//! Tests for the source formats: every problem code, its line in the markdown file, the
//! trust-list forms, the registry and pointers.

use std::path::{Path, PathBuf};

use super::{
    Descriptor, FileProblem, Provide, TreeLayout, TrustEntry, parse_curated, parse_pointer,
    parse_registry, parse_trust_list,
};
use crate::sources::model::{Anchor, Method, SourceId};

const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

/// A curated file whose fence body starts on line 6.
fn curated_doc(body: &str) -> String {
    format!("# Acme: curated skill sources\n\n## Curated sources\n\n```yaml\n{body}```\n")
}

/// A valid git-tag entry (10 lines, fence lines 6..=15).
fn entry() -> String {
    format!(
        "- id: acme-skills
  organization: acme
  name: Acme skills
  method: git-tag
  url: https://example.com/acme/skills.git
  ref: v1.0.0
  commit: {COMMIT}
  provides:
    - skill: acme-scan
    - family: acme-audit-*
"
    )
}

fn show(problem: &FileProblem) -> String {
    let mut text = format!("{}@{}", problem.code, problem.line.unwrap_or(0));
    if let Some(source) = &problem.source {
        text.push_str(&format!(" source={source}"));
    }
    if let Some(field) = &problem.field {
        text.push_str(&format!(" field={field}"));
    }
    text
}

/// Parses `markdown` as acme's curated file and renders the outcome: `ok <id>` per
/// descriptor, one line per problem, `file:` before file-level problems.
fn outcome(markdown: &str) -> String {
    match parse_curated(Path::new("org.md"), "acme", markdown) {
        Err(problems) => problems
            .iter()
            .map(|p| format!("file: {}", show(p)))
            .collect::<Vec<_>>()
            .join("\n"),
        Ok(file) => file
            .descriptors
            .iter()
            .map(|d| format!("ok {}", d.id))
            .chain(
                file.rejected
                    .iter()
                    .flat_map(|r| r.problems.iter().map(show)),
            )
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

#[track_caller]
fn check(markdown: &str, expected: &str) {
    assert_eq!(outcome(markdown), expected.trim());
}

/// The valid entry with `from` replaced by `to`, in a curated document.
fn edited(from: &str, to: &str) -> String {
    let text = entry();
    assert!(text.contains(from), "template lacks {from:?}");
    curated_doc(&text.replacen(from, to, 1))
}

#[test]
fn valid_entry_parses_to_the_full_descriptor() {
    let file =
        parse_curated(Path::new("org.md"), "acme", &curated_doc(&entry())).expect("valid file");
    assert!(file.rejected.is_empty());
    let expected = Descriptor {
        id: SourceId::parse("acme-skills").expect("kebab"),
        organization: "acme".to_owned(),
        name: "Acme skills".to_owned(),
        maintainer: None,
        method: Method::GitTag,
        url: "https://example.com/acme/skills.git".to_owned(),
        reference: "v1.0.0".to_owned(),
        anchor: Some(Anchor::Commit(COMMIT.to_owned())),
        wip: false,
        layout: TreeLayout {
            skills_root: PathBuf::from("skills"),
            evals_root: PathBuf::from("evals"),
        },
        provides: vec![
            Provide::Skill("acme-scan".to_owned()),
            Provide::Family("acme-audit-".to_owned()),
        ],
        file: PathBuf::from("org.md"),
        line: 6,
    };
    assert_eq!(file.descriptors, vec![expected]);
}

#[test]
fn layout_archive_and_maintainer() {
    let sha = "ab".repeat(64);
    let text = format!(
        "- id: acme-zip
  organization: acme
  name: Acme zip
  maintainer: Acme team
  method: archive
  url: https://example.com/skills-1.4.0.tar.gz
  ref: \"1.4\"
  sha512: {sha}
  layout:
    skills_root: src/skills
    evals_root: tools/evals
  provides:
    - skill: acme-zip
"
    );
    let file = parse_curated(Path::new("org.md"), "acme", &curated_doc(&text)).expect("valid");
    let d = &file.descriptors[0];
    assert_eq!(d.anchor, Some(Anchor::Sha512(sha)));
    assert_eq!(d.reference, "1.4");
    assert_eq!(d.maintainer.as_deref(), Some("Acme team"));
    assert_eq!(d.layout.skills_root, PathBuf::from("src/skills"));
    assert_eq!(d.layout.evals_root, PathBuf::from("tools/evals"));
}

#[test]
fn several_items_and_fences_with_yml_and_examples_outside_the_section() {
    let second = entry().replace("acme-skills", "acme-more");
    let markdown = format!(
        "# Acme\n\n```yaml\n{}```\n\n## Curated sources\n\n```yml\n{}{}```\n\n~~~yaml\n{}~~~\n\n```yaml\n# comment only\n```\n\n## Other\n\n```yaml\n{}```\n",
        entry().replace("acme-skills", "acme-example"),
        entry(),
        second,
        entry().replace("acme-skills", "acme-tilde"),
        entry().replace("acme-skills", "acme-later"),
    );
    check(&markdown, "ok acme-skills\nok acme-more");
}

#[test]
fn crlf_line_endings_are_read() {
    check(
        &curated_doc(&entry()).replace('\n', "\r\n"),
        "ok acme-skills",
    );
}

#[test]
fn yaml_problems_name_the_markdown_line() {
    check(
        &edited(
            "  name: Acme skills\n",
            "  name: Acme skills\n  name: Again\n",
        ),
        "source_duplicate_key@9 source=acme-skills field=name",
    );
    check(
        &edited(
            "  name: Acme skills\n",
            "  name: Acme skills\n  homepage: x\n",
        ),
        "source_unknown_field@9 source=acme-skills field=homepage",
    );
    check(
        &edited("  ref: v1.0.0\n", "  ref: 1.5\n"),
        "source_wrong_type@11 source=acme-skills field=ref",
    );
    check(
        &edited("  name: Acme skills\n", "  name: Acme skills\n  wip: yes\n"),
        "source_wrong_type@9 source=acme-skills field=wip",
    );
    check(
        &edited("  name: Acme skills\n", "  name: [unclosed\n"),
        "source_wrong_type@8 source=acme-skills field=name",
    );
    check(
        &edited("  name: Acme skills\n", "  name: x\n   - y: [\n"),
        "source_yaml_syntax@9 source=acme-skills field=y",
    );
    check(
        &edited("  name: Acme skills\n", "  name: !custom x\n"),
        "source_unsupported_yaml@8 source=acme-skills field=name",
    );
    check(
        &edited("- id: acme-skills\n  organization", "- organization"),
        "source_missing_field@6 field=id",
    );
}

#[test]
fn required_fields() {
    check(
        &edited("  organization: acme\n", ""),
        "source_missing_field@6 source=acme-skills field=organization",
    );
    check(
        &edited(
            "  method: git-tag\n  url: https://example.com/acme/skills.git\n",
            "",
        ),
        "source_missing_field@6 source=acme-skills field=method\nsource_missing_field@6 source=acme-skills field=url",
    );
    check(
        &edited(
            "  provides:\n    - skill: acme-scan\n    - family: acme-audit-*\n",
            "",
        ),
        "source_missing_field@6 source=acme-skills field=provides",
    );
}

#[test]
fn id_organization_name_method_url_ref() {
    check(
        &edited("- id: acme-skills", "- id: Acme_Skills"),
        "source_id_invalid@6 source=Acme_Skills field=id",
    );
    check(
        &edited("organization: acme", "organization: a/b"),
        "source_organization_invalid@7 source=acme-skills field=organization",
    );
    check(
        &edited("organization: acme", "organization: other"),
        "source_organization_mismatch@7 source=acme-skills field=organization",
    );
    check(
        &edited("name: Acme skills", "name: \" \""),
        "source_text_empty@8 source=acme-skills field=name",
    );
    check(
        &edited("method: git-tag", "method: svn-zip"),
        "source_method_invalid@9 source=acme-skills field=method",
    );
    check(
        &edited(
            "url: https://example.com/acme/skills.git",
            "url: \"--upload-pack=evil\"",
        ),
        "source_url_invalid@10 source=acme-skills field=url",
    );
    check(
        &edited("ref: v1.0.0", "ref: \"v1 beta\""),
        "source_ref_invalid@11 source=acme-skills field=ref",
    );
}

#[test]
fn anchors() {
    check(
        &edited(&format!("  commit: {COMMIT}\n"), ""),
        "source_anchor_missing@6 source=acme-skills field=commit",
    );
    check(
        &edited(
            &format!("commit: {COMMIT}"),
            &format!("commit: {}", COMMIT.to_uppercase()),
        ),
        "source_anchor_malformed@12 source=acme-skills field=commit",
    );
    check(
        &edited(
            &format!("commit: {COMMIT}"),
            &format!("commit: {}", &COMMIT[..39]),
        ),
        "source_anchor_malformed@12 source=acme-skills field=commit",
    );
    check(
        &edited(
            &format!("commit: {COMMIT}"),
            &format!("commit: {COMMIT}\n  sha512: {}", "a".repeat(128)),
        ),
        "source_anchor_wrong_kind@13 source=acme-skills field=sha512",
    );
    check(
        &edited("method: git-tag", "method: archive"),
        "source_anchor_wrong_kind@12 source=acme-skills field=commit\nsource_anchor_missing@6 source=acme-skills field=sha512",
    );
    let sha256 = "f".repeat(64);
    check(
        &edited(&format!("commit: {COMMIT}"), &format!("commit: {sha256}")),
        "ok acme-skills",
    );
}

#[test]
fn git_branch_is_unanchored_and_wip() {
    let branch = |extra: &str| {
        edited(
            &format!("  ref: v1.0.0\n  commit: {COMMIT}\n"),
            &format!("  ref: main\n{extra}"),
        )
        .replace("method: git-tag", "method: git-branch")
    };
    check(&branch("  wip: true\n"), "ok acme-skills");
    check(
        &branch(""),
        "source_branch_not_wip@6 source=acme-skills field=wip",
    );
    check(
        &branch("  wip: false\n"),
        "source_branch_not_wip@12 source=acme-skills field=wip",
    );
    check(
        &branch(&format!("  wip: true\n  commit: {COMMIT}\n")),
        "source_branch_anchored@13 source=acme-skills field=commit",
    );
}

#[test]
fn layout_roots_stay_inside() {
    let with_root = |root: &str| {
        edited(
            "  provides:\n",
            &format!("  layout:\n    skills_root: {root}\n  provides:\n"),
        )
    };
    check(
        &with_root("../up"),
        "source_layout_invalid@14 source=acme-skills field=layout.skills_root",
    );
    check(
        &with_root("/abs"),
        "source_layout_invalid@14 source=acme-skills field=layout.skills_root",
    );
    check(
        &with_root("a/./b"),
        "source_layout_invalid@14 source=acme-skills field=layout.skills_root",
    );
    check(&with_root("deep/skills"), "ok acme-skills");
    check(
        &edited("  provides:\n", "  layout:\n    root: x\n  provides:\n"),
        "source_unknown_field@14 source=acme-skills field=root",
    );
}

#[test]
fn provides_rules() {
    let provides = |items: &str| {
        edited(
            "  provides:\n    - skill: acme-scan\n    - family: acme-audit-*\n",
            &format!("  provides:{items}"),
        )
    };
    check(
        &provides(" []\n"),
        "source_provides_empty@13 source=acme-skills field=provides",
    );
    check(
        &provides("\n    - skill: a/b\n"),
        "source_provides_invalid@14 source=acme-skills field=provides",
    );
    check(
        &provides("\n    - skill: Scan\n"),
        "source_provides_invalid@14 source=acme-skills field=provides",
    );
    check(
        &provides("\n    - {}\n"),
        "source_provides_invalid@14 source=acme-skills field=provides",
    );
    check(
        &provides("\n    - skill: a\n      family: b-*\n"),
        "source_provides_invalid@14 source=acme-skills field=provides",
    );
    check(
        &provides("\n    - family: acme-audit\n"),
        "source_family_invalid@14 source=acme-skills field=provides",
    );
    check(
        &provides("\n    - family: acme*\n"),
        "source_family_invalid@14 source=acme-skills field=provides",
    );
    check(
        &provides("\n    - family: a/b-*\n"),
        "source_family_invalid@14 source=acme-skills field=provides",
    );
    let long = format!("\n    - skill: {}\n", "a".repeat(65));
    check(
        &provides(&long),
        "source_provides_invalid@14 source=acme-skills field=provides",
    );
    check(
        &provides(&format!("\n    - skill: {}\n", "a".repeat(64))),
        "ok acme-skills",
    );
    check(
        &provides("\n    - skill: x\n    - skill: x\n"),
        "source_provides_duplicate@15 source=acme-skills field=provides",
    );
    check(
        &provides("\n    - tool: x\n"),
        "source_unknown_field@14 source=acme-skills field=tool",
    );
}

#[test]
fn duplicate_ids_reject_both_entries_and_others_continue() {
    let other = entry().replace("acme-skills", "acme-other");
    check(
        &curated_doc(&format!("{}{}{}", entry(), other, entry())),
        "ok acme-other\nsource_duplicate_id@6 source=acme-skills field=id\nsource_duplicate_id@26 source=acme-skills field=id",
    );
}

#[test]
fn a_bad_entry_does_not_hide_its_neighbours() {
    let broken = entry()
        .replace("acme-skills", "acme-broken")
        .replace("  name: Acme skills\n", "  name: Acme\n  bogus: 1\n");
    check(
        &curated_doc(&format!("{}{}", broken, entry())),
        "ok acme-skills\nsource_unknown_field@9 source=acme-broken field=bogus",
    );
}

#[test]
fn file_level_problems() {
    check(
        "# Acme\n\n```yaml\n- id: x\n```\n",
        "file: source_section_missing@0",
    );
    check(
        "# Acme\n\n## Curated sources\n\n```yaml\n- id: x\n",
        "file: source_fence_unclosed@5",
    );
    check(
        "## Curated sources\n\n```yaml\nid: acme\n```\n",
        "file: source_fence_not_list@4",
    );
    check(
        "## Curated sources\n\n```yaml\n- id: acme\nname: x\n```\n",
        "file: source_fence_not_list@5",
    );
    check(
        "---\norganization: acme\n\n## Curated sources\n",
        "file: source_frontmatter_invalid@1",
    );
}

fn trust_doc(front: &str, body: &str) -> String {
    format!("{front}# Trusted skill sources\n\n## Trusted sources\n\n```yaml\n{body}```\n")
}

#[test]
fn trust_list_forms() {
    let body = format!(
        "- id: acme-skills\n  ref: v2.0.0\n  commit: {COMMIT}\n{}",
        entry()
            .replace("acme-skills", "acme-own")
            .replace("organization: acme", "organization: other")
    );
    let list = parse_trust_list(
        Path::new("t.md"),
        &trust_doc("---\norganization: acme\n---\n", &body),
    )
    .expect("valid trust list");
    assert_eq!(list.organization.as_deref(), Some("acme"));
    assert!(list.rejected.is_empty());
    let kinds: Vec<String> = list
        .entries
        .iter()
        .map(|e| match e {
            TrustEntry::Reference(r) => format!("ref {} line {}", r.id, r.line),
            TrustEntry::Full(d) => format!("full {} org {}", d.id, d.organization),
        })
        .collect();
    assert_eq!(kinds, ["ref acme-skills line 9", "full acme-own org other"]);
}

#[test]
fn trust_list_problems() {
    let parse = |front: &str, body: &str| {
        parse_trust_list(Path::new("t.md"), &trust_doc(front, body))
            .map(|list| {
                list.rejected
                    .iter()
                    .flat_map(|r| r.problems.iter().map(show))
                    .collect::<Vec<_>>()
            })
            .map_err(|problems| problems.iter().map(show).collect::<Vec<_>>())
    };
    assert_eq!(
        parse("", "- id: acme-skills\n"),
        Ok(vec![
            "source_missing_field@6 source=acme-skills field=ref".to_owned()
        ])
    );
    assert_eq!(
        parse("", "- id: acme-skills\n  ref: \"-x\"\n"),
        Ok(vec![
            "source_ref_invalid@7 source=acme-skills field=ref".to_owned()
        ])
    );
    assert_eq!(
        parse("---\norg: acme\n---\n", "- id: acme-skills\n  ref: v1\n"),
        Err(vec!["source_unknown_field@2 field=org".to_owned()])
    );
    assert_eq!(
        parse("---\norganization: ../x\n---\n", ""),
        Err(vec![
            "source_organization_invalid@2 field=organization".to_owned()
        ])
    );
    assert_eq!(parse("", ""), Ok(Vec::new()));
}

#[test]
fn registry_tables() {
    let text = "# Registry

## Org-curated sources

| Organization | Curated sources | File |
|---|---|---|
| acme | acme-skills | organizations/acme/skill-sources.md |
| broken | only-two |

## Community / external sources

| Source id | Owning org | Maintainer | Repository | Notes |
|---|---|---|---|---|
| community-skills | indie | Jo | https://example.com/c | handy |
| Bad_Id | indie | Jo | https://example.com/c | bad |
";
    let (registry, problems) = parse_registry(Path::new("reg.md"), text);
    assert_eq!(registry.curated.len(), 1);
    assert_eq!(registry.curated[0].organization, "acme");
    assert_eq!(registry.community.len(), 1);
    assert_eq!(registry.community[0].id.as_str(), "community-skills");
    assert_eq!(registry.community[0].line, 14);
    let shown: Vec<String> = problems.iter().map(show).collect();
    assert_eq!(
        shown,
        [
            "source_registry_row_invalid@8",
            "source_registry_row_invalid@15 source=Bad_Id"
        ]
    );
    let (_, problems) = parse_registry(
        Path::new("reg.md"),
        "## Org-curated sources\n\n| Org | File |\n|---|---|\n",
    );
    assert_eq!(
        problems.iter().map(show).collect::<Vec<_>>(),
        ["source_registry_table_invalid@3"]
    );
}

#[test]
fn pointers() {
    let text = "---\nsource: acme-skills\norganization: acme\nskill_path: skills/acme-scan\nevals_path: evals/acme-scan\n---\n\n# acme-scan: redirect\n";
    let pointer = parse_pointer(Path::new("p.md"), "acme-scan", text).expect("valid pointer");
    assert_eq!(pointer.source.as_str(), "acme-skills");
    assert_eq!(pointer.skill_path, PathBuf::from("skills/acme-scan"));
    assert_eq!(pointer.evals_path, Some(PathBuf::from("evals/acme-scan")));

    let problem = |text: &str| {
        show(&parse_pointer(Path::new("p.md"), "x", text).expect_err("invalid pointer")[0])
    };
    assert_eq!(
        problem("# no frontmatter\n"),
        "source_frontmatter_invalid@1"
    );
    assert_eq!(
        problem("---\nsource: acme\norganization: acme\nskill_path: ../x\n---\n"),
        "source_pointer_path_invalid@4 source=acme field=skill_path"
    );
    assert_eq!(
        problem("---\nsource: acme\norganization: acme\nskill_path: x\nextra: 1\n---\n"),
        "source_unknown_field@5 field=extra"
    );
    assert_eq!(
        problem("---\nsource: acme\norganization: acme\n---\n"),
        "source_missing_field@2 field=skill_path"
    );
    assert_eq!(
        problem("---\nsource: Acme\norganization: acme\nskill_path: x\n---\n"),
        "source_id_invalid@2 source=Acme field=source"
    );
    assert_eq!(
        problem("---\nsource:\norganization: acme\nskill_path: x\n---\n"),
        "source_wrong_type@2 field=source"
    );
    let all = parse_pointer(
        Path::new("p.md"),
        "x",
        "---\nsource: Acme\norganization: a/b\nskill_path: /x\nevals_path: e/../x\n---\n",
    )
    .expect_err("invalid pointer");
    assert_eq!(
        all.iter().map(show).collect::<Vec<_>>(),
        [
            "source_id_invalid@2 source=Acme field=source",
            "source_organization_invalid@3 source=Acme field=organization",
            "source_pointer_path_invalid@4 source=Acme field=skill_path",
            "source_pointer_path_invalid@5 source=Acme field=evals_path",
        ],
        "every problem of a pointer is reported, not only the first"
    );
    assert_eq!(pointer.lines.skill_path, 4);
}

#[test]
fn display_names_position_code_source_and_field() {
    let problems = match parse_curated(
        Path::new("org.md"),
        "acme",
        &edited("ref: v1.0.0", "ref: \"v1 x\""),
    ) {
        Ok(file) => file.rejected[0].problems.clone(),
        Err(problems) => problems,
    };
    assert_eq!(
        problems[0].to_string(),
        "org.md:11: source_ref_invalid: source acme-skills: ref `v1 x` holds whitespace or control characters (field `ref`)"
    );
}
