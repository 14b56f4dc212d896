//! `mp contract check-update`: two versions of a file, and the `--git-ref` form over a real
//! git repository made in a temporary directory.

use std::path::{Path, PathBuf};
use std::process::Command;

use predicates::prelude::*;
use serde_json::{Value, json};

use crate::{mp, workspace_root};

fn chain_file(name: &str) -> PathBuf {
    workspace_root()
        .join("fixtures/contracts/valid-chain")
        .join(name)
}

const INTENT: &str = "1-intent-IC-101.json";
const TASK_SEED: &str = "2-taskseed-TS-101.json";
const ACCEPTANCE: &str = "3-acceptance-AC-101.json";
const GATE: &str = "4-publishgate-PG-101.json";
const EVIDENCE: &str = "5-evidence-EV-101.json";

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("readable")).expect("json")
}

fn write(path: &Path, doc: &Value) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(path, serde_json::to_string_pretty(doc).expect("json")).expect("write");
}

/// The fixture `name` with `changes` applied (top-level keys).
fn changed(name: &str, changes: &[(&str, Value)]) -> Value {
    let mut doc = read(&chain_file(name));
    for (key, value) in changes {
        doc[*key] = value.clone();
    }
    doc
}

/// Runs `mp contract check-update ARGS --format json` in `dir`; exit code and output.
fn check_json(dir: &Path, args: &[&str]) -> (Option<i32>, Value) {
    let output = mp()
        .current_dir(dir)
        .args(["contract", "check-update", "--format", "json"])
        .args(args)
        .output()
        .expect("run mp");
    let value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("json output: {output:?}"));
    (output.status.code(), value)
}

/// `document pointer code` of each refusal (document by file name).
fn refusals(report: &Value) -> Vec<String> {
    report["refusals"]
        .as_array()
        .expect("refusals")
        .iter()
        .map(|r| {
            let document = r["document"].as_str().expect("document");
            let name = document.rsplit('/').next().unwrap_or(document);
            format!(
                "{name} {} {}",
                r["pointer"].as_str().expect("pointer"),
                r["code"].as_str().expect("code")
            )
        })
        .collect()
}

#[test]
fn publishing_an_acceptance_with_its_approved_gate_is_allowed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let after = dir.path().join("after.json");
    write(
        &after,
        &changed(
            ACCEPTANCE,
            &[("state", json!("Published")), ("version", json!(2))],
        ),
    );
    mp().args(["contract", "check-update"])
        .arg(chain_file(ACCEPTANCE))
        .arg(&after)
        .args([INTENT, TASK_SEED, GATE].map(chain_file))
        .assert()
        .success()
        .stdout("update: allowed\n");
}

#[test]
fn publishing_without_a_gate_is_refused_with_file_pointer_code_and_message() {
    let dir = tempfile::tempdir().expect("tempdir");
    let after = dir.path().join("after.json");
    write(
        &after,
        &changed(
            ACCEPTANCE,
            &[("state", json!("Published")), ("version", json!(2))],
        ),
    );
    let before = chain_file(ACCEPTANCE);
    let (code, report) = check_json(dir.path(), &[before.to_str().expect("utf-8"), "after.json"]);
    assert_eq!(code, Some(1), "{report}");
    assert_eq!(report["allowed"], json!(false));
    assert_eq!(
        report["refusals"],
        json!([{
            "document": "after.json",
            "pointer": "/state",
            "code": "gate-not-approved",
            "message": "Acceptance AC-101 cannot be Published: no PublishGate of it among the context documents",
        }])
    );
    assert_eq!(
        report["changes"],
        json!([{"path": "after.json", "change": "modified", "id": "AC-101", "allowed": false}])
    );
    mp().current_dir(dir.path())
        .args(["contract", "check-update"])
        .arg(&before)
        .arg("after.json")
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "after.json /state: gate-not-approved: Acceptance AC-101 cannot be Published",
        ))
        .stdout(predicate::str::ends_with("update: refused (1 refusals)\n"));
}

#[test]
fn evidence_and_versions_and_terminal_states_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cases = [
        (
            EVIDENCE,
            vec![("actor", json!("someone-else"))],
            "after.json /actor evidence-changed",
        ),
        (
            INTENT,
            vec![("state", json!("Frozen"))],
            "after.json /version version-not-raised",
        ),
        (
            INTENT,
            vec![("state", json!("Frozen")), ("version", json!(0))],
            "after.json /version minimum",
        ),
        (
            TASK_SEED,
            vec![("state", json!("Draft")), ("version", json!(2))],
            "after.json /state illegal-transition",
        ),
    ];
    for (name, edits, expected) in cases {
        let after = dir.path().join("after.json");
        write(&after, &changed(name, &edits));
        let before = chain_file(name);
        let (code, report) =
            check_json(dir.path(), &[before.to_str().expect("utf-8"), "after.json"]);
        assert_eq!(
            (code, refusals(&report)),
            (Some(1), vec![expected.to_owned()])
        );
    }
    // Revoked never comes back (BEFORE is itself a changed copy).
    let revoked = dir.path().join("revoked.json");
    write(
        &revoked,
        &changed(TASK_SEED, &[("state", json!("Revoked"))]),
    );
    write(
        &dir.path().join("after.json"),
        &changed(
            TASK_SEED,
            &[("state", json!("Active")), ("version", json!(2))],
        ),
    );
    let (code, report) = check_json(dir.path(), &["revoked.json", "after.json"]);
    assert_eq!(
        (code, refusals(&report)),
        (
            Some(1),
            vec!["after.json /state terminal-state-left".to_owned()]
        )
    );
}

#[test]
fn unreadable_input_and_missing_arguments_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("broken.json"), "{\"id\": ").expect("write");
    let before = chain_file(INTENT);
    mp().current_dir(dir.path())
        .args(["contract", "check-update"])
        .arg(&before)
        .arg("broken.json")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("broken.json is not JSON"));
    mp().args(["contract", "check-update"])
        .arg(&before)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("needs BEFORE and AFTER"));
    mp().current_dir(dir.path())
        .args(["contract", "check-update"])
        .arg(&before)
        .arg("missing.json")
        .assert()
        .code(2);
}

// ---------------------------------------------------------------------------------------
// --git-ref

/// Runs `git ARGS` in `dir` without the user's or the system's configuration.
fn git(dir: &Path, args: &[&str]) {
    let output = Command::new("git")
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .args(["-c", "user.name=Test", "-c", "user.email=test@example.org"])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        output.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A repository whose `main` holds the valid chain under `contracts/` (the intent as a
/// Draft on its way to Active) and a README outside it.
fn repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    git(root, &["init", "-q"]);
    for name in [INTENT, TASK_SEED, ACCEPTANCE, GATE, EVIDENCE] {
        write(&root.join("contracts").join(name), &read(&chain_file(name)));
    }
    std::fs::write(root.join("README.md"), "contracts\n").expect("write");
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "the chain"]);
    dir
}

#[test]
fn git_ref_with_nothing_changed_is_allowed() {
    let repo = repository();
    std::fs::write(repo.path().join("README.md"), "changed\n").expect("write");
    mp().current_dir(repo.path())
        .args(["contract", "check-update", "--git-ref", "main", "contracts"])
        .assert()
        .success()
        .stdout("0 contract files changed since main: allowed\n");
}

#[test]
fn git_ref_allows_a_publication_backed_by_the_gate_and_a_new_draft() {
    let repo = repository();
    let root = repo.path();
    write(
        &root.join("contracts").join(ACCEPTANCE),
        &changed(
            ACCEPTANCE,
            &[("state", json!("Published")), ("version", json!(2))],
        ),
    );
    // Committed on a branch, and one more file left untracked in the working tree.
    git(root, &["checkout", "-q", "-b", "change"]);
    git(root, &["commit", "-q", "-am", "publish AC-101"]);
    write(
        &root.join("contracts/6-taskseed-TS-102.json"),
        &changed(
            TASK_SEED,
            &[("id", json!("TS-102")), ("state", json!("Draft"))],
        ),
    );
    let (code, report) = check_json(root, &["--git-ref", "main", "./contracts"]);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(
        report["changes"],
        json!([
            {"path": "contracts/3-acceptance-AC-101.json", "change": "modified", "id": "AC-101", "allowed": true},
            {"path": "contracts/6-taskseed-TS-102.json", "change": "added", "id": "TS-102", "allowed": true},
        ])
    );
}

#[test]
fn git_ref_refuses_deletions_bad_initial_states_and_unbacked_publications() {
    let repo = repository();
    let root = repo.path();
    let contracts = root.join("contracts");
    std::fs::remove_file(contracts.join(EVIDENCE)).expect("remove");
    std::fs::remove_file(contracts.join(GATE)).expect("remove");
    write(
        &contracts.join(ACCEPTANCE),
        &changed(
            ACCEPTANCE,
            &[("state", json!("Published")), ("version", json!(2))],
        ),
    );
    write(
        &contracts.join("new/IC-102.json"),
        &changed(INTENT, &[("id", json!("IC-102"))]),
    );
    let (code, report) = check_json(root, &["--git-ref", "HEAD", "contracts"]);
    assert_eq!(code, Some(1), "{report}");
    assert_eq!(
        refusals(&report),
        [
            "3-acceptance-AC-101.json /state gate-not-approved",
            "4-publishgate-PG-101.json  contract-deleted",
            "5-evidence-EV-101.json  contract-deleted",
            "IC-102.json /state initial-state-invalid",
        ]
    );
    let documents: Vec<&str> = report["refusals"]
        .as_array()
        .expect("refusals")
        .iter()
        .map(|r| r["document"].as_str().expect("document"))
        .collect();
    assert_eq!(
        documents,
        [
            "contracts/3-acceptance-AC-101.json",
            "HEAD:contracts/4-publishgate-PG-101.json",
            "HEAD:contracts/5-evidence-EV-101.json",
            "contracts/new/IC-102.json",
        ]
    );
    mp().current_dir(root)
        .args(["contract", "check-update", "--git-ref", "HEAD", "contracts"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "deleted contracts/5-evidence-EV-101.json: refused",
        ))
        .stdout(predicate::str::ends_with(
            "4 contract files changed since HEAD: refused (4 refusals)\n",
        ));
}

#[test]
fn git_ref_compares_a_stores_next_version_file_with_the_previous_version() {
    let repo = repository();
    let root = repo.path();
    // A store keeps one file per version: `IC-101/2.json` changes `IC-101` as stored at REF.
    let next = changed(INTENT, &[("state", json!("Draft")), ("version", json!(2))]);
    write(&root.join("contracts/IC-101/2.json"), &next);
    let (code, report) = check_json(root, &["--git-ref", "HEAD", "contracts"]);
    assert_eq!(
        (code, refusals(&report)),
        (Some(1), vec!["2.json /state illegal-transition".to_owned()]),
        "{report}"
    );
    assert_eq!(report["changes"][0]["change"], json!("modified"));
    let frozen = changed(INTENT, &[("state", json!("Frozen")), ("version", json!(2))]);
    write(&root.join("contracts/IC-101/2.json"), &frozen);
    let (code, report) = check_json(root, &["--git-ref", "HEAD", "contracts"]);
    assert_eq!(code, Some(0), "{report}");
}

#[test]
fn git_ref_outside_a_repository_or_at_an_unknown_ref_exits_2() {
    let repo = repository();
    mp().current_dir(repo.path())
        .args([
            "contract",
            "check-update",
            "--git-ref",
            "no-such-ref",
            "contracts",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no-such-ref is not a commit"));
    mp().current_dir(repo.path())
        .args(["contract", "check-update", "--git-ref", "HEAD"])
        .arg(repo.path().join("contracts"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "relative to the current directory",
        ));
    let plain = tempfile::tempdir().expect("tempdir");
    mp().current_dir(plain.path())
        .env(
            "GIT_CEILING_DIRECTORIES",
            plain.path().parent().expect("a parent"),
        )
        .args(["contract", "check-update", "--git-ref", "HEAD", "."])
        .assert()
        .code(2);
}
