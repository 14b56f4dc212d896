//! Tests of the contract linter and of `UserId`.

use super::*;

const EXAMPLE: &str =
    include_str!("../../../../examples/skills/no_todos_in_prod/no_todos_in_prod.md");

/// Lints `text` and compares the gap lines (`code: message`).
#[track_caller]
fn check(text: &str, expected: &[&str]) {
    let gaps: Vec<String> = lint(text)
        .iter()
        .map(|g| format!("{}: {g}", g.code()))
        .collect();
    assert_eq!(gaps, expected);
}

#[test]
fn example_contract_is_complete() {
    check(EXAMPLE, &[]);
    let contract = Contract::parse(EXAMPLE).expect("complete");
    assert!(contract.section(Section::Permissions).starts_with("None."));
}

#[test]
fn missing_and_empty_sections_are_named() {
    let text = EXAMPLE
        .replace("## Permissions", "## Rights")
        .replace("The call returned one of the two verdicts above.", "");
    check(
        &text,
        &[
            "contract_missing_section: missing section `## Permissions`",
            "contract_empty_section: section `## Completion criteria` is empty",
        ],
    );
}

#[test]
fn output_and_failure_sections_must_name_their_shapes() {
    let text = EXAMPLE
        .replace(
            "Failure: `{\"passed\": false",
            "Otherwise: `{\"passed\": false",
        )
        .replace("- Retryable:", "- Later:");
    check(
        &text,
        &[
            "contract_missing_topic: section `## Output contract` does not describe `failure`",
            "contract_missing_topic: section `## Failure classes` does not describe `retryable`",
        ],
    );
}

#[test]
fn headings_inside_code_fences_do_not_count() {
    let text = format!(
        "```\n## Purpose\n```\n{}",
        EXAMPLE.replace("## Purpose", "## Aim")
    );
    check(
        &text,
        &["contract_missing_section: missing section `## Purpose`"],
    );
}

#[test]
fn repeated_section_is_a_gap() {
    let text = format!("{EXAMPLE}\n## Purpose\n\nagain\n");
    check(
        &text,
        &["contract_repeated_section: section `## Purpose` appears more than once"],
    );
}

#[test]
fn empty_document_lists_every_section() {
    assert_eq!(lint("").len(), Section::ALL.len());
}

#[track_caller]
fn check_user_id(text: Option<&str>, expected: &str) {
    let line = match UserId::parse(text) {
        Ok(id) => id.to_string(),
        Err(e) => format!("{}: {e}", e.code()),
    };
    assert_eq!(line, expected);
}

#[test]
fn user_id_accepts_uuids_and_null() {
    check_user_id(
        Some("550E8400-e29b-41d4-a716-446655440000"),
        "550e8400-e29b-41d4-a716-446655440000",
    );
    check_user_id(None, "null");
}

#[test]
fn user_id_refuses_reserved_words() {
    check_user_id(
        Some("system"),
        "user_id_reserved: user_id `system` is a reserved word; pass null when there is no user",
    );
    check_user_id(
        Some("External_Service"),
        "user_id_reserved: user_id `External_Service` is a reserved word; pass null when there is no user",
    );
    check_user_id(
        Some("anonymous"),
        "user_id_reserved: user_id `anonymous` is a reserved word; pass null when there is no user",
    );
}

#[test]
fn user_id_refuses_other_text() {
    check_user_id(
        Some("jane-doe"),
        "user_id_not_uuid: user_id `jane-doe` is not an RFC 4122 UUID (e.g. 550e8400-e29b-41d4-a716-446655440000) or null",
    );
    check_user_id(
        Some("550e8400e29b41d4a716446655440000"),
        "user_id_not_uuid: user_id `550e8400e29b41d4a716446655440000` is not an RFC 4122 UUID (e.g. 550e8400-e29b-41d4-a716-446655440000) or null",
    );
    check_user_id(
        Some(""),
        "user_id_not_uuid: user_id `` is not an RFC 4122 UUID (e.g. 550e8400-e29b-41d4-a716-446655440000) or null",
    );
}
