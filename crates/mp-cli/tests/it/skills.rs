//! `mp skills status`, `mp skills lint` and `mp skills contract`.

use predicates::prelude::*;

use crate::{mp, workspace_root};

/// A copy of the solo-developer configuration with the example skill installed as a
/// user validator, plus `extra` files under `skills/`.
fn config_with_skills(extra: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let source = workspace_root().join("examples/solo-developer");
    for entry in std::fs::read_dir(&source).expect("example dir") {
        let path = entry.expect("entry").path();
        if path.is_file() {
            std::fs::copy(&path, dir.path().join(path.file_name().expect("name"))).expect("copy");
        }
    }
    let validators = dir.path().join("skills/validators");
    std::fs::create_dir_all(&validators).expect("mkdir");
    let example = workspace_root().join("examples/skills/no_todos_in_prod");
    for file in ["no_todos_in_prod.wat", "no_todos_in_prod.md"] {
        std::fs::copy(example.join(file), validators.join(file)).expect("copy");
    }
    for (path, text) in extra {
        std::fs::write(dir.path().join("skills").join(path), text).expect("write");
    }
    dir
}

#[test]
fn status_lists_built_ins_and_user_skills() {
    let dir = config_with_skills(&[]);
    mp().args(["skills", "status", "--config"])
        .arg(dir.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("hook_unauthorized_push"))
        .stdout(predicate::str::contains(
            "no_todos_in_prod                 validator       P0 active",
        ));
}

#[test]
fn status_json_reports_a_load_failure_and_exits_1() {
    let dir = config_with_skills(&[("validators/half.wat", "(module")]);
    let output = mp()
        .args(["skills", "status", "--format", "json", "--config"])
        .arg(dir.path())
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let doc: serde_json::Value = serde_json::from_slice(&output).expect("json");
    assert_eq!(doc["warnings"][0]["code"], "skill_load_failed");
    assert_eq!(doc["warnings"][0]["skill"], "half");
    assert_eq!(doc["skills"].as_array().map(Vec::len), Some(17));
}

#[test]
fn lint_passes_the_example_and_names_each_gap() {
    mp().args(["skills", "lint"])
        .arg(workspace_root().join("examples/skills"))
        .assert()
        .success()
        .stdout("1 skill(s) checked, 0 gap(s)\n");
    let dir = config_with_skills(&[("validators/bare.wat", "(module)")]);
    mp().args(["skills", "lint"])
        .arg(dir.path().join("skills"))
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "bare.wat: contract_missing: no contract document bare.md beside the module",
        ))
        .stdout(predicate::str::contains(
            "bare.wat: skill_load_failed: could not be loaded: missing export memory, alloc, call",
        ))
        .stdout(predicate::str::contains("2 skill(s) checked, 2 gap(s)"));
}

#[test]
fn lint_with_config_reads_the_skills_folder_of_that_directory() {
    let dir = config_with_skills(&[("validators/bare.wat", "(module)")]);
    mp().args(["skills", "lint", "--config"])
        .arg(dir.path())
        .assert()
        .code(1)
        .stdout(predicate::str::contains("bare.wat: contract_missing"));
}

#[test]
fn lint_reads_the_content_of_failure_classes_execution_and_permissions() {
    let example = workspace_root().join("examples/skills/no_todos_in_prod");
    let contract =
        std::fs::read_to_string(example.join("no_todos_in_prod.md")).expect("example contract");
    let module =
        std::fs::read_to_string(example.join("no_todos_in_prod.wat")).expect("example module");
    let vague = contract
        .replace("- Fatal:", "- Broken:")
        .replace("- Needs user report:", "- Otherwise:")
        .replace(
            "A WebAssembly module (`no_todos_in_prod.wat`) run in the mp sandbox",
            "The module `no_todos_in_prod.wat`, run by mp",
        )
        .replace(
            " No approval is needed to call it:",
            " It needs nothing more:",
        );
    let dir = tempfile::tempdir().expect("tempdir");
    let validators = dir.path().join("validators");
    std::fs::create_dir_all(&validators).expect("mkdir");
    std::fs::write(validators.join("vague.wat"), module).expect("write module");
    std::fs::write(validators.join("vague.md"), vague).expect("write contract");
    let expected = [
        "contract_unstated_approval",
        "contract_unstated_execution_method",
        "contract_missing_fatal_class",
        "contract_missing_user_report_class",
    ];
    let text = mp()
        .args(["skills", "lint"])
        .arg(dir.path())
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "vague.md: contract_missing_user_report_class: section `## Failure classes` does not describe the failures that need a user report",
        ))
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(text).expect("utf-8");
    let codes: Vec<&str> = text
        .lines()
        .filter_map(|line| line.split(": ").nth(1))
        .collect();
    assert_eq!(codes, expected, "{text}");
    assert!(text.ends_with("1 skill(s) checked, 4 gap(s)\n"), "{text}");
    let json = mp()
        .args(["skills", "lint", "--format", "json"])
        .arg(dir.path())
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let doc: serde_json::Value = serde_json::from_slice(&json).expect("json");
    let codes: Vec<&str> = doc["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["code"].as_str())
        .collect();
    assert_eq!(codes, expected);
}

#[test]
fn every_user_skill_call_is_recorded_in_the_audit_log() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("audit.jsonl");
    mp().args(["tick", "--world"])
        .arg(workspace_root().join("fixtures/scenarios/skill-user-validator-blocks/world.yaml"))
        .arg("--audit-log")
        .arg(&log)
        .assert()
        .success();
    let text = std::fs::read_to_string(&log).expect("the audit log was written");
    let calls: Vec<serde_json::Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON object per line"))
        .filter(|record: &serde_json::Value| record["record"] == "skill_call")
        .collect();
    let subjects: Vec<&str> = calls.iter().filter_map(|c| c["subject"].as_str()).collect();
    assert_eq!(subjects, ["acme/app#1", "acme/app#2"], "{text}");
    for call in &calls {
        assert_eq!(call["skill"], "no_todos_in_prod");
        assert_eq!(call["kind"], "validator");
        let digest = call["input_sha256"].as_str().expect("a digest");
        assert!(
            digest.len() == 64 && digest.chars().all(|c| c.is_ascii_hexdigit()),
            "{digest}"
        );
        assert!(call["duration_us"].is_u64(), "{call}");
    }
    assert_ne!(calls[0]["input_sha256"], calls[1]["input_sha256"]);
    let verdicts: Vec<&str> = calls.iter().filter_map(|c| c["verdict"].as_str()).collect();
    assert!(verdicts[0].contains("TODO"), "{verdicts:?}");
    assert!(!verdicts[1].contains("TODO"), "{verdicts:?}");
}

/// Runs `mp skills contract` with `args` and parses its one JSON line.
fn contract_json(args: &[&str], config: &std::path::Path) -> serde_json::Value {
    let output = mp()
        .args(["skills", "contract"])
        .args(args)
        .arg("--config")
        .arg(config)
        .output()
        .expect("runs");
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).expect("utf-8");
    assert_eq!(text.lines().count(), 1, "one compact line: {text}");
    serde_json::from_str(&text).expect("JSON")
}

#[test]
fn contract_prints_only_the_requested_sections() {
    let dir = config_with_skills(&[]);
    let doc = contract_json(&["validator_ci_green", "--section", "purpose"], dir.path());
    assert_eq!(doc["origin"], "built-in");
    let sections = doc["sections"].as_object().expect("object");
    assert_eq!(sections.keys().collect::<Vec<_>>(), ["purpose"]);
    assert!(
        sections["purpose"]
            .as_str()
            .is_some_and(|p| p.starts_with("C2: every required check"))
    );

    let doc = contract_json(
        &[
            "no_todos_in_prod",
            "--section",
            "input_contract",
            "--section",
            "permissions",
        ],
        dir.path(),
    );
    assert!(
        doc["origin"]
            .as_str()
            .is_some_and(|o| o.starts_with("user ("))
    );
    let sections = doc["sections"].as_object().expect("object");
    assert_eq!(
        sections.keys().collect::<Vec<_>>(),
        ["input_contract", "permissions"]
    );
    assert_eq!(
        sections["input_contract"]["schema"]["required"],
        serde_json::json!(["pr"])
    );
    assert!(
        !sections["input_contract"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("```")),
        "the schema travels apart from the prose"
    );

    let doc = contract_json(&["hook_unauthorized_push"], dir.path());
    assert_eq!(doc["sections"].as_object().map(|s| s.len()), Some(10));
}

#[test]
fn contract_of_an_unknown_skill_or_section_fails_with_its_code() {
    let dir = config_with_skills(&[]);
    mp().args(["skills", "contract", "no_such_skill", "--config"])
        .arg(dir.path())
        .assert()
        .code(1)
        .stdout(predicate::str::contains("no skill `no_such_skill`"));
    mp().args([
        "skills",
        "contract",
        "validator_ci_green",
        "--section",
        "bogus",
    ])
    .assert()
    .code(2)
    .stderr(predicate::str::contains("unknown section `bogus`"));
}
