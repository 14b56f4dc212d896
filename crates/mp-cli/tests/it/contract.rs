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
