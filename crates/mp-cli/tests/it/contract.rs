//! `mp contract validate` and `mp contract transition`.

use std::path::PathBuf;

use predicates::prelude::*;

use crate::{mp, workspace_root};

fn fixture(path: &str) -> PathBuf {
    workspace_root().join("fixtures/contracts").join(path)
}

fn valid_chain() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixture("valid-chain"))
        .expect("fixture dir")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    files
}

fn json_output(args: &[&str], files: &[PathBuf], code: i32) -> serde_json::Value {
    let output = mp().args(args).args(files).output().expect("run mp");
    assert_eq!(output.status.code(), Some(code), "{output:?}");
    serde_json::from_slice(&output.stdout).expect("json output")
}

#[test]
fn the_valid_chain_is_valid_as_a_set() {
    mp().args(["contract", "validate", "--set"])
        .args(valid_chain())
        .assert()
        .success()
        .stdout(predicate::str::contains("5 documents: valid (0 errors)"));
}

#[test]
fn a_gate_alone_is_valid_but_dangling_in_a_set() {
    let gate = fixture("valid-chain/4-publishgate-PG-101.json");
    mp().args(["contract", "validate"])
        .arg(&gate)
        .assert()
        .success();
    let errors = json_output(
        &["contract", "validate", "--set", "--format", "json"],
        &[gate],
        1,
    );
    assert_eq!(
        errors[0]["code"].as_str(),
        Some("dangling-reference"),
        "{errors}"
    );
}

#[test]
fn invalid_documents_list_document_pointer_code_and_message() {
    let files = [
        fixture("invalid/taskseed-bad-id.json"),
        fixture("invalid/evidence-start-after-end.json"),
    ];
    let errors = json_output(&["contract", "validate", "--format", "json"], &files, 1);
    let summary: Vec<(String, String, String)> = errors
        .as_array()
        .expect("an array")
        .iter()
        .map(|e| {
            let field = |k: &str| {
                let text = e[k].as_str().expect("a string");
                if k == "document" {
                    text.rsplit('/').next().unwrap_or(text).to_owned()
                } else {
                    text.to_owned()
                }
            };
            (field("document"), field("pointer"), field("code"))
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (
                "taskseed-bad-id.json".into(),
                "/id".into(),
                "pattern".into()
            ),
            (
                "evidence-start-after-end.json".into(),
                "/startTime".into(),
                "start-after-end".into()
            ),
        ]
    );
    assert!(
        errors[1]["message"]
            .as_str()
            .is_some_and(|m| m.contains("2026-05-11T09:00:00Z"))
    );
}

#[test]
fn a_high_gate_without_deadline_is_reported_in_text() {
    mp().args(["contract", "validate"])
        .arg(fixture("invalid/publishgate-high-without-deadline.json"))
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "/approvalDeadline: deadline-required",
        ))
        .stdout(predicate::str::contains("1 documents: invalid (1 errors)"));
}

#[test]
fn a_too_permissive_policy_is_reported() {
    mp().args(["contract", "validate"])
        .arg(fixture("invalid/taskseed-policy-too-permissive.json"))
        .assert()
        .code(1)
        .stdout(predicate::str::contains("generation-policy-too-permissive"));
}

#[test]
fn an_unreadable_file_exits_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{\"id\": ").expect("write");
    mp().args(["contract", "validate"])
        .arg(&broken)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("broken.json is not JSON"));
    mp().args(["contract", "validate"])
        .arg(dir.path().join("missing.json"))
        .assert()
        .code(2);
}

/// The valid chain's documents, one compact JSON text each, in file order.
fn chain_lines() -> Vec<String> {
    valid_chain()
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path).expect("fixture");
            let value: serde_json::Value = serde_json::from_str(&text).expect("json");
            value.to_string()
        })
        .collect()
}

#[test]
fn the_json_lines_fixture_is_the_valid_chain() {
    let text = std::fs::read_to_string(fixture("valid-chain.jsonl")).expect("fixture");
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l)
                .expect("json")
                .to_string()
        })
        .collect();
    assert_eq!(lines, chain_lines());
}

#[test]
fn a_directory_is_read_recursively_in_path_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("contracts");
    let lines = chain_lines();
    // The chain spread over nested directories; the PublishGate's Acceptance is missing.
    for (i, line) in lines.iter().enumerate().filter(|(i, _)| *i != 2) {
        let sub = root.join(format!("{}/{}", i % 2, i));
        std::fs::create_dir_all(&sub).expect("mkdir");
        std::fs::write(sub.join("doc.json"), line).expect("write");
    }
    // Not contracts: a hidden directory and a file of another extension.
    std::fs::create_dir_all(root.join(".git")).expect("mkdir");
    std::fs::write(root.join(".git/config.json"), "not json").expect("write");
    std::fs::write(root.join("README.md"), "# contracts").expect("write");

    let errors = json_output(
        &["contract", "validate", "--set", "--format", "json"],
        std::slice::from_ref(&root),
        1,
    );
    let found: Vec<(String, String)> = errors
        .as_array()
        .expect("an array")
        .iter()
        .map(|e| {
            let document = e["document"].as_str().expect("document");
            let relative = document
                .strip_prefix(&format!("{}/", root.display()))
                .unwrap_or(document);
            (
                relative.to_owned(),
                e["code"].as_str().expect("code").to_owned(),
            )
        })
        .collect();
    assert_eq!(
        found,
        vec![("1/3/doc.json".to_owned(), "dangling-reference".to_owned())],
        "{errors}"
    );
    mp().args(["contract", "validate"])
        .arg(&root)
        .assert()
        .success()
        .stdout("4 documents: valid (0 errors)\n");
}

#[test]
fn json_lines_name_each_document_by_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("set.jsonl");
    let mut lines = chain_lines();
    // A blank line still counts; the TaskSeed (line 3) gets a malformed id.
    lines.insert(1, String::new());
    lines[2] = lines[2].replace("\"TS-101\"", "\"TS-x\"");
    std::fs::write(&file, lines.join("\n") + "\n").expect("write");
    mp().args(["contract", "validate", "--set"])
        .arg(&file)
        .assert()
        .code(1)
        .stdout(predicate::str::contains(format!(
            "{}:3 /id: pattern",
            file.display()
        )))
        .stdout(predicate::str::contains(format!(
            "{}:4 /taskSeedId: dangling-reference",
            file.display()
        )))
        .stdout(predicate::str::contains("5 documents: invalid"));
}

#[test]
fn a_large_json_lines_input_keeps_its_line_numbers_across_batches() {
    // About 1.4 MB: many batches and more than one read of the file.
    let intent = chain_lines()[0].clone();
    let mut lines = vec![intent.clone(); 3000];
    lines[999] = String::new();
    lines[2776] = intent.replace("\"IC-101\"", "\"IC-x\"");
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("many.jsonl");
    std::fs::write(&file, lines.join("\n")).expect("write");
    let output = mp()
        .args(["contract", "validate", "--format", "json"])
        .arg(&file)
        .output()
        .expect("run mp");
    let errors: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    let found: Vec<(&str, &str)> = errors
        .as_array()
        .expect("an array")
        .iter()
        .map(|e| {
            (
                e["document"].as_str().unwrap_or_default(),
                e["pointer"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        (output.status.code(), found),
        (
            Some(1),
            vec![(format!("{}:2777", file.display()).as_str(), "/id")]
        ),
    );
    mp().args(["contract", "validate"])
        .arg(&file)
        .assert()
        .stdout(predicate::str::ends_with(
            "2999 documents: invalid (1 errors)\n",
        ));
}

#[test]
fn standard_input_and_files_form_one_set() {
    let lines = chain_lines();
    // The intent arrives on standard input, the rest as files: one closed set.
    let output = mp()
        .args(["contract", "validate", "--set", "-"])
        .args(&valid_chain()[1..])
        .write_stdin(format!("{}\n", lines[0]))
        .output()
        .expect("run mp");
    assert_eq!(
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout)
        ),
        (Some(0), "5 documents: valid (0 errors)\n".into()),
        "{output:?}"
    );
    // Without the intent, the TaskSeed's reference dangles.
    mp().args(["contract", "validate", "--set", "-"])
        .args(&valid_chain()[1..])
        .write_stdin("")
        .assert()
        .code(1)
        .stdout(predicate::str::contains("/intentId: dangling-reference"));
}

#[test]
fn a_line_that_is_not_json_or_an_empty_directory_exits_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("set.jsonl");
    let mut lines = chain_lines();
    lines[3] = "{\"kind\": ".into();
    std::fs::write(&file, lines.join("\n")).expect("write");
    mp().args(["contract", "validate"])
        .arg(&file)
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains(format!(
            "{}:4 is not JSON",
            file.display()
        )));
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).expect("mkdir");
    mp().args(["contract", "validate"])
        .arg(&empty)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("holds no *.json file"));
}

#[test]
fn an_allowed_transition_names_its_guard() {
    mp().args(["contract", "transition", "TaskSeed", "Draft", "Active"])
        .assert()
        .success()
        .stdout("TaskSeed Draft -> Active: allowed; needs activation approvals covering every required role\n");
}

#[test]
fn a_refused_transition_exits_1() {
    mp().args(["contract", "transition", "TaskSeed", "Archived", "Active"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("refused; illegal-transition"));
}

#[test]
fn transition_json_is_machine_readable() {
    let output = mp()
        .args([
            "contract",
            "transition",
            "Evidence",
            "Published",
            "Revoked",
            "--format",
            "json",
        ])
        .output()
        .expect("run mp");
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    assert_eq!(
        (
            output.status.code(),
            value["allowed"].as_bool(),
            value["code"].as_str()
        ),
        (Some(1), Some(false), Some("evidence-immutable"))
    );
}

#[test]
fn transition_json_for_an_allowed_row_gives_the_unmet_code() {
    let output = mp()
        .args([
            "contract",
            "transition",
            "PublishGate",
            "Active",
            "Published",
            "--format",
            "json",
        ])
        .output()
        .expect("run mp");
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    assert_eq!(
        (value["guard"].as_str(), value["codeWhenUnmet"].as_str()),
        (Some("gate_complete"), Some("gate-not-approved"))
    );
}

#[test]
fn an_unknown_state_exits_2() {
    mp().args(["contract", "transition", "TaskSeed", "draft", "Active"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown state `draft`"));
}
