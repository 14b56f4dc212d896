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
            "contract_missing_retryable_class: section `## Failure classes` does not describe the retryable failures",
        ],
    );
}

/// The example with its `## Failure classes` body replaced by `body`.
fn with_failure_classes(body: &str) -> String {
    let start = EXAMPLE.find("## Failure classes").expect("section");
    let end = EXAMPLE.find("## Completion criteria").expect("section");
    format!(
        "{}## Failure classes\n\n{body}\n\n{}",
        &EXAMPLE[..start],
        &EXAMPLE[end..]
    )
}

#[test]
fn failure_classes_are_read_in_every_spelling() {
    for body in [
        "- fatal: a refused import\n- retryable: a timeout\n- needs-user-report: a trap",
        "- Fatal: a refused import\n- Retryable: a timeout\n- needs_user_report: a trap",
        "- FATAL: a refused import\n- RETRYABLE: a timeout\n- Needs user report: a trap",
        "- 치명 실패: 모듈이 로드되지 않음\n- 재시도 가능 실패: 시간 초과\n- 사용자 보고 필요 실패: 트랩",
    ] {
        check(&with_failure_classes(body), &[]);
    }
}

#[test]
fn each_missing_failure_class_has_its_own_code() {
    check(
        &with_failure_classes("Failures are logged."),
        &[
            "contract_missing_fatal_class: section `## Failure classes` does not describe the fatal failures",
            "contract_missing_retryable_class: section `## Failure classes` does not describe the retryable failures",
            "contract_missing_user_report_class: section `## Failure classes` does not describe the failures that need a user report",
        ],
    );
    // A class named only inside another word does not count.
    check(
        &with_failure_classes("- nonfatal: x\n- retryable: y\n- needs user report: z"),
        &[
            "contract_missing_fatal_class: section `## Failure classes` does not describe the fatal failures",
        ],
    );
}

/// The example with its `## Execution method` body replaced by `body`.
fn with_execution_method(body: &str) -> String {
    let start = EXAMPLE.find("## Execution method").expect("section");
    let end = EXAMPLE.find("## Failure classes").expect("section");
    format!(
        "{}## Execution method\n\n{body}\n\n{}",
        &EXAMPLE[..start],
        &EXAMPLE[end..]
    )
}

#[test]
fn execution_method_must_say_how_the_skill_runs() {
    check(
        &with_execution_method("Quickly, once per pull request."),
        &[
            "contract_unstated_execution_method: section `## Execution method` does not say how the skill runs (HTTP API, CLI, in a container, in the WebAssembly sandbox or in process)",
        ],
    );
    for body in [
        "An HTTP API call to the skill service (`POST /v1/check`).",
        "A CLI run: `skill-check --pr 7`.",
        "In-container: the skill's image runs once per call.",
        "컨테이너 내부 실행.",
        "A `.wasm` module in mp's sandbox.",
        "In process: native Rust inside the tick.",
    ] {
        check(&with_execution_method(body), &[]);
    }
}

#[test]
fn permissions_must_state_the_approval_conditions() {
    let without = EXAMPLE.replace(
        " No approval is needed to call it: it writes nothing, and its verdict only adds a\nfinding to the gate.",
        "",
    );
    assert_ne!(without, EXAMPLE);
    check(
        &without,
        &[
            "contract_unstated_approval: section `## Permissions` does not state when approval is needed (or that none is)",
        ],
    );
    for approval in [
        " Approved by the repository owner before its first run.",
        " Needs the owner's approval when it writes.",
        " 승인 불필요.",
    ] {
        let text = without.replace("holds no\ntoken.", &format!("holds no\ntoken.{approval}"));
        check(&text, &[]);
    }
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
fn user_id_accepts_any_version_of_the_rfc_4122_variant() {
    for uuid in [
        "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
        "017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
        "550e8400-e29b-41d4-b716-446655440000",
    ] {
        check_user_id(Some(uuid), uuid);
    }
}

#[test]
fn user_id_refuses_the_nil_uuid_and_other_variants() {
    check_user_id(
        Some("00000000-0000-0000-0000-000000000000"),
        "user_id_nil: user_id `00000000-0000-0000-0000-000000000000` is the nil UUID; pass null when there is no user",
    );
    check_user_id(
        Some("ffffffff-ffff-ffff-ffff-ffffffffffff"),
        "user_id_not_uuid: user_id `ffffffff-ffff-ffff-ffff-ffffffffffff` is not an RFC 4122 UUID (e.g. 550e8400-e29b-41d4-a716-446655440000) or null",
    );
    check_user_id(
        Some("550e8400-e29b-41d4-c716-446655440000"),
        "user_id_not_uuid: user_id `550e8400-e29b-41d4-c716-446655440000` is not an RFC 4122 UUID (e.g. 550e8400-e29b-41d4-a716-446655440000) or null",
    );
}

#[test]
fn user_id_refuses_every_reserved_spelling() {
    for word in [
        "External-Service",
        " SYSTEM ",
        "unknown",
        "none",
        "null",
        "guest",
    ] {
        check_user_id(
            Some(word),
            &format!(
                "user_id_reserved: user_id `{word}` is a reserved word; pass null when there is no user"
            ),
        );
    }
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

#[test]
fn identifier_rules_follow_the_parameter_name() {
    let line = |name: &str, value: serde_json::Value| match check_identifier(name, &value) {
        Ok(()) => "ok".to_owned(),
        Err(e) => format!("{}: {e}", e.code()),
    };
    assert_eq!(
        [
            line("user_id", serde_json::json!(null)),
            line("user_id", serde_json::json!("Anonymous")),
            line("id", serde_json::json!("N/A")),
            line("session_id", serde_json::json!("undefined")),
            line("check_id", serde_json::json!("12345")),
            line("name", serde_json::json!("system")),
            line("user_id", serde_json::json!(7)),
        ],
        [
            "ok",
            "user_id_reserved: user_id `Anonymous` is a reserved word; pass null when there is no user",
            "identifier_reserved: identifier `id` carries the reserved word `N/A`; an identifier names one thing, never a state (pass null for none)",
            "identifier_reserved: identifier `session_id` carries the reserved word `undefined`; an identifier names one thing, never a state (pass null for none)",
            "ok",
            "ok",
            "ok",
        ]
    );
}

#[test]
fn schemas_are_read_from_the_input_and_output_sections() {
    let contract = Contract::parse(EXAMPLE).expect("complete");
    assert_eq!(
        contract.input_schema()["required"],
        serde_json::json!(["pr"])
    );
    assert_eq!(
        contract.output_schema()["required"],
        serde_json::json!(["passed", "failure_reason"])
    );
    let schemas = ContractSchemas::compile(&contract).expect("compiles");
    let good = serde_json::json!({"passed": true, "failure_reason": null});
    assert_eq!(schemas.check_output(&good), Ok(()));
    let bad = serde_json::json!({"passed": "yes", "failure_reason": null});
    let error = schemas
        .check_output(&bad)
        .expect_err("a string is not a boolean");
    assert!(error.starts_with("at /passed: "), "{error}");
    let input = serde_json::json!({"pr": {"commits": [{"subject": 7}]}});
    let error = schemas
        .check_input(&input)
        .expect_err("subject must be a string");
    assert!(error.starts_with("at /pr/commits/0/subject: "), "{error}");
}

#[test]
fn a_missing_or_broken_schema_is_a_gap() {
    let without_output_schema = {
        let at = EXAMPLE.find("## Output contract").expect("section");
        let (head, tail) = EXAMPLE.split_at(at);
        let start = tail.find("```json").expect("fence");
        let end = tail[start + 3..].find("```").expect("close") + start + 6;
        format!("{head}{}{}", &tail[..start], &tail[end..])
    };
    check(
        &without_output_schema,
        &["contract_missing_schema: section `## Output contract` has no ```json schema block"],
    );
    let broken = EXAMPLE.replacen(
        "\"type\": \"object\",\n  \"required\": [\"pr\"]",
        "\"type\": \"thing\",\n  \"required\": [\"pr\"]",
        1,
    );
    let gaps = lint(&broken);
    assert_eq!(gaps.len(), 1, "{gaps:?}");
    assert_eq!(gaps[0].code(), "contract_invalid_schema");
}

#[test]
fn every_parameter_states_its_format_with_a_valid_example() {
    let no_description = EXAMPLE.replacen(
        "\"description\": \"The pull request",
        "\"title\": \"The pull request",
        1,
    );
    check(
        &no_description,
        &[
            "contract_parameter_undocumented: input parameter `pr` has no description stating its format",
        ],
    );
    let no_example = EXAMPLE.replacen(
        "\"examples\": [{ \"commits\": [{ \"subject\": \"feat: add x\" }] }]",
        "\"default\": null",
        1,
    );
    check(
        &no_example,
        &["contract_parameter_without_example: input parameter `pr` has no example (`examples`)"],
    );
    let wrong_example = EXAMPLE.replacen(
        "[{ \"subject\": \"feat: add x\" }]",
        "[{ \"subject\": 3 }]",
        1,
    );
    check(
        &wrong_example,
        &[
            "contract_parameter_example_invalid: input parameter `pr`: example {\"commits\":[{\"subject\":3}]} does not match the parameter's schema",
        ],
    );
}

#[test]
fn identifier_parameters_must_be_a_uuid_or_null() {
    let with_user_id = |schema: &str| {
        EXAMPLE.replacen(
            "  \"properties\": {\n    \"pr\": {",
            &format!("  \"properties\": {{\n    \"user_id\": {schema},\n    \"pr\": {{"),
            1,
        )
    };
    let loose = with_user_id(
        r#"{ "type": "string", "description": "who asks, e.g. 4f1c2b9e-8d3a-4c6f-9b2e-1a7d5e3c0f42", "examples": ["system"] }"#,
    );
    check(
        &loose,
        &[
            "contract_identifier_example_refused: input parameter `user_id`: example \"system\" is refused: user_id `system` is a reserved word; pass null when there is no user",
            "contract_identifier_not_uuid: identifier parameter `user_id` must accept an RFC 4122 UUID or null only (`\"type\": [\"string\", \"null\"], \"format\": \"uuid\"`)",
        ],
    );
    let strict = with_user_id(
        r#"{ "type": ["string", "null"], "format": "uuid", "description": "who asks: an RFC 4122 UUID or null, e.g. 4f1c2b9e-8d3a-4c6f-9b2e-1a7d5e3c0f42", "examples": ["4f1c2b9e-8d3a-4c6f-9b2e-1a7d5e3c0f42", null] }"#,
    );
    check(&strict, &[]);
    let schemas =
        ContractSchemas::compile(&Contract::parse(&strict).expect("complete")).expect("compiles");
    let pr = serde_json::json!({"commits": []});
    for reserved in ["system", "external_service", "anonymous", "42"] {
        let input = serde_json::json!({"user_id": reserved, "pr": pr});
        assert!(
            schemas.check_input(&input).is_err(),
            "{reserved} must be refused"
        );
    }
    let input = serde_json::json!({"user_id": null, "pr": pr});
    assert_eq!(schemas.check_input(&input), Ok(()));
    let input = serde_json::json!({"user_id": "4f1c2b9e-8d3a-4c6f-9b2e-1a7d5e3c0f42", "pr": pr});
    assert_eq!(schemas.check_input(&input), Ok(()));
}

/// The example with one more input parameter `name` whose schema is `schema`.
fn with_parameter(name: &str, schema: &str) -> String {
    EXAMPLE.replacen(
        "  \"properties\": {\n    \"pr\": {",
        &format!("  \"properties\": {{\n    \"{name}\": {schema},\n    \"pr\": {{"),
        1,
    )
}

#[test]
fn other_identifiers_need_not_be_uuids_but_refuse_reserved_words() {
    let repo_id = with_parameter(
        "repo_id",
        r#"{ "type": "string", "description": "the repository as owner/name, e.g. acme/app", "examples": ["acme/app"] }"#,
    );
    check(&repo_id, &[]);
    let reserved = with_parameter(
        "repo_id",
        r#"{ "type": "string", "description": "the repository as owner/name, e.g. acme/app", "examples": ["acme/app", "External_Service"] }"#,
    );
    check(
        &reserved,
        &[
            "contract_identifier_example_refused: input parameter `repo_id`: example \"External_Service\" is refused: identifier `repo_id` carries the reserved word `External_Service`; an identifier names one thing, never a state (pass null for none)",
        ],
    );
    let offered = with_parameter(
        "actor_id",
        r#"{ "enum": ["bot-7", "system", "Unknown"], "default": "none", "description": "who acts, one of the listed ids, e.g. bot-7", "examples": ["bot-7"] }"#,
    );
    check(
        &offered,
        &[
            "contract_identifier_value_refused: input parameter `actor_id`: its `default` names \"none\", which is refused: identifier `actor_id` carries the reserved word `none`; an identifier names one thing, never a state (pass null for none)",
            "contract_identifier_value_refused: input parameter `actor_id`: its `enum` names \"system\", which is refused: identifier `actor_id` carries the reserved word `system`; an identifier names one thing, never a state (pass null for none)",
            "contract_identifier_value_refused: input parameter `actor_id`: its `enum` names \"Unknown\", which is refused: identifier `actor_id` carries the reserved word `Unknown`; an identifier names one thing, never a state (pass null for none)",
        ],
    );
    let schemas =
        ContractSchemas::compile(&Contract::parse(&repo_id).expect("complete")).expect("compiles");
    let pr = serde_json::json!({"commits": []});
    assert_eq!(
        schemas.check_input(&serde_json::json!({"repo_id": "acme/app", "pr": pr})),
        Ok(())
    );
    assert_eq!(
        schemas.check_input(&serde_json::json!({"repo_id": "anonymous", "pr": pr})),
        Err("at /repo_id: identifier `repo_id` carries the reserved word `anonymous`; an identifier names one thing, never a state (pass null for none)".to_owned())
    );
}

#[test]
fn the_nil_uuid_is_refused_as_user_id_in_examples_and_calls() {
    const NIL: &str = "00000000-0000-0000-0000-000000000000";
    let nil_example = with_parameter(
        "user_id",
        &format!(
            r#"{{ "type": ["string", "null"], "format": "uuid", "description": "who asks: an RFC 4122 UUID or null, e.g. 4f1c2b9e-8d3a-4c6f-9b2e-1a7d5e3c0f42", "examples": ["{NIL}"] }}"#
        ),
    );
    check(
        &nil_example,
        &[&format!(
            "contract_identifier_example_refused: input parameter `user_id`: example \"{NIL}\" is refused: user_id `{NIL}` is the nil UUID; pass null when there is no user"
        )],
    );
    let strict = nil_example.replace(&format!("[\"{NIL}\"]"), "[null]");
    check(&strict, &[]);
    let schemas =
        ContractSchemas::compile(&Contract::parse(&strict).expect("complete")).expect("compiles");
    let pr = serde_json::json!({"commits": []});
    assert_eq!(
        schemas.check_input(&serde_json::json!({"user_id": NIL, "pr": pr})),
        Err(format!(
            "at /user_id: user_id `{NIL}` is the nil UUID; pass null when there is no user"
        ))
    );
    let other_variant = "4f1c2b9e-8d3a-4c6f-cb2e-1a7d5e3c0f42";
    assert!(
        schemas
            .check_input(&serde_json::json!({"user_id": other_variant, "pr": pr}))
            .is_err()
    );
}

#[test]
fn every_built_in_has_a_complete_contract() {
    for skill in mp_core::skill::BUILT_IN_SKILLS {
        let text = builtin_contract(skill.name)
            .unwrap_or_else(|| panic!("{} has no contract", skill.name));
        let gaps: Vec<String> = lint(&text).iter().map(ToString::to_string).collect();
        assert_eq!(gaps, Vec::<String>::new(), "{}", skill.name);
        let contract = Contract::parse(&text).expect("complete");
        assert!(
            contract.section(Section::Purpose).len() > 20,
            "{}",
            skill.name
        );
        assert!(text.starts_with(&format!("# {}\n", skill.name)));
    }
    assert_eq!(builtin_contract("no_such_skill"), None);
}

#[test]
fn built_in_contract_schemas_accept_what_the_host_passes() {
    let text = builtin_contract("validator_ci_green").expect("built-in");
    let schemas =
        ContractSchemas::compile(&Contract::parse(&text).expect("complete")).expect("compiles");
    let pr = crate::test_support::pr(vec![crate::test_support::commit(0x21, "feat: x")]);
    assert_eq!(schemas.check_input(&crate::sandbox::pr_json(&pr)), Ok(()));
    let text = builtin_contract("hook_unauthorized_push").expect("built-in");
    let schemas =
        ContractSchemas::compile(&Contract::parse(&text).expect("complete")).expect("compiles");
    let commit = crate::test_support::commit(0x22, "fix: y");
    assert_eq!(
        schemas.check_input(&crate::sandbox::commit_json(&commit)),
        Ok(())
    );
    assert!(schemas.check_input(&serde_json::json!({"pr": {}})).is_err());
}
