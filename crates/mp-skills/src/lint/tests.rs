//! Tests of the skills folder linter.

use super::*;

const PASS: &str = include_str!("../sandbox/testdata/pass_validator.wat");
const NETWORK: &str = include_str!("../sandbox/testdata/network_import.wat");
const CONTRACT: &str =
    include_str!("../../../../examples/skills/no_todos_in_prod/no_todos_in_prod.md");

/// Writes `files` into a temporary folder, lints it and compares the finding lines
/// (paths relative to the folder).
#[track_caller]
fn check(files: &[(&str, &str)], expected: &[&str]) {
    let dir = tempfile::tempdir().expect("temporary folder");
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().expect("has a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write fixture");
    }
    let report = lint_dir(dir.path()).expect("folder is readable");
    let root = format!("{}/", dir.path().display());
    let lines: Vec<String> = report
        .findings
        .iter()
        .map(|f| f.to_string().replace(&root, ""))
        .collect();
    assert_eq!(lines, expected);
}

#[test]
fn complete_skill_has_no_findings() {
    check(
        &[("validators/ok.wat", PASS), ("validators/ok.md", CONTRACT)],
        &[],
    );
}

#[test]
fn every_gap_is_named() {
    check(
        &[
            ("validators/bare.wat", PASS),
            ("classifier/net.wat", NETWORK),
            (
                "classifier/net.md",
                &CONTRACT.replace("## Permissions", "## Access"),
            ),
            ("README.md", "not a contract"),
        ],
        &[
            "classifier/net.md: contract_missing_section: missing section `## Permissions`",
            "classifier/net.wat: skill_imports_network: imports network access `wasi_snapshot_preview1.sock_send`",
            "validators/bare.wat: contract_missing: no contract document bare.md beside the module",
        ],
    );
}

#[test]
fn shipped_example_is_clean() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/skills");
    let report = lint_dir(&dir).expect("example folder is readable");
    assert_eq!(report.modules.len(), 1);
    assert_eq!(report.findings, Vec::new());
}
