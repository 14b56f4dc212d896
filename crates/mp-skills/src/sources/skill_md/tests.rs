//! Tests for the strict reading of a fetched skill's `SKILL.md` frontmatter: every problem
//! with its code and line, and the Agent Skills name rules.

use std::path::Path;

use mp_core::skill::SkillKind;

use super::parse_skill_md;

/// Parses `text` as `<dir>/SKILL.md` and renders `ok <kind>` or one `code@line field`
/// per problem.
#[track_caller]
fn check(dir: &str, text: &str, expected: &[&str]) {
    let shown: Vec<String> = match parse_skill_md(Path::new("SKILL.md"), dir, text) {
        Ok(front) => vec![format!("ok {}", front.kind.folder())],
        Err(problems) => problems
            .iter()
            .map(|p| {
                format!(
                    "{}@{} {}",
                    p.code,
                    p.line.unwrap_or(0),
                    p.field.as_deref().unwrap_or("-")
                )
            })
            .collect(),
    };
    assert_eq!(shown, expected);
}

#[test]
fn a_valid_frontmatter_names_the_kind() {
    let text = "---\nname: acme-scan\nkind: validators\ndescription: Scans.\nlicense: MIT\nmetadata:\n  team: sec\nallowed-tools: Read Grep\n---\n# acme-scan\n";
    let front = parse_skill_md(Path::new("SKILL.md"), "acme-scan", text).expect("valid");
    assert_eq!(front.kind, SkillKind::Validator);
    assert_eq!(front.description.as_deref(), Some("Scans."));
    assert_eq!(front.metadata.get("team").map(String::as_str), Some("sec"));
    check(
        "acme-scan",
        "---\nname: acme-scan\nkind: classifier\nallowed-tools:\n  - Read\n---\n",
        &["ok classifier"],
    );
}

#[test]
fn duplicate_keys_are_errors_not_last_wins() {
    check(
        "acme-scan",
        "---\nname: acme-scan\nkind: validators\nkind: classifier\n---\n",
        &["source_duplicate_key@4 kind"],
    );
    check(
        "acme-scan",
        "---\nname: other\nname: acme-scan\nkind: validators\n---\n",
        &["source_duplicate_key@3 name"],
    );
}

#[test]
fn the_frontmatter_is_strict() {
    check(
        "acme-scan",
        "# no frontmatter\n",
        &["source_skill_frontmatter_invalid@1 -"],
    );
    check(
        "acme-scan",
        "---\nname: acme-scan\nkind: validators\n",
        &["source_skill_frontmatter_invalid@1 -"],
    );
    check(
        "acme-scan",
        "---\nname: acme-scan\n---\n",
        &["source_missing_field@2 kind"],
    );
    check(
        "acme-scan",
        "---\nname: acme-scan\nkind: validators\nmode: Triage\n---\n",
        &["source_unknown_field@4 mode"],
    );
    check(
        "acme-scan",
        "---\nname: acme-scan\nkind: tools\n---\n",
        &["source_skill_kind_invalid@3 kind"],
    );
    check(
        "acme-scan",
        "---\nname: acme-scan\nkind: validators\nallowed-tools: {a: b}\n---\n",
        &["source_wrong_type@2 allowed-tools"],
    );
}

#[test]
fn names_follow_the_agent_skills_rules_and_match_the_directory() {
    let front = |name: &str| format!("---\nname: {name}\nkind: validators\n---\n");
    for bad in ["Acme", "-acme", "acme-", "ac--me", "ac_me", "\"\""] {
        check(bad, &front(bad), &["source_skill_name_invalid@2 name"]);
    }
    let long = "a".repeat(65);
    check(&long, &front(&long), &["source_skill_name_invalid@2 name"]);
    let longest = "a".repeat(64);
    check(&longest, &front(&longest), &["ok validators"]);
    check(
        "acme-scan",
        &front("acme-scanner"),
        &["source_skill_name_mismatch@2 name"],
    );
}

#[test]
fn description_and_compatibility_keep_the_agent_skills_limits() {
    let front = |description: &str, compatibility: &str| {
        format!(
            "---\nname: acme-scan\nkind: validators\ndescription: \"{description}\"\ncompatibility: \"{compatibility}\"\n---\n"
        )
    };
    // At the limits (counted in characters, not bytes), both are accepted.
    check(
        "acme-scan",
        &front(&"é".repeat(1024), &"x".repeat(500)),
        &["ok validators"],
    );
    check(
        "acme-scan",
        &front(&"d".repeat(1025), &"x".repeat(501)),
        &[
            "source_skill_text_length@4 description",
            "source_skill_text_length@5 compatibility",
        ],
    );
    check(
        "acme-scan",
        &front("  ", "ok"),
        &["source_skill_text_length@4 description"],
    );
}
