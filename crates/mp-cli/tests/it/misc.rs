//! `--version`, `--help`, completions and argument errors.

use predicates::prelude::*;

use crate::mp;

#[test]
fn version_names_the_release_and_the_commit_it_was_built_from() {
    let head = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(crate::workspace_root())
        .output()
        .expect("git runs");
    let head = String::from_utf8_lossy(&head.stdout).trim().to_owned();
    let expected = format!("mp {} (commit {head})\n", env!("CARGO_PKG_VERSION"));
    mp().arg("--version")
        .assert()
        .success()
        .stdout(predicate::eq(expected));
}

#[test]
fn help_speaks_to_the_person_running_it() {
    let assert = mp().arg("--help").assert().success();
    let help = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert!(
        help.starts_with("mp keeps AI coding agents honest"),
        "{help}"
    );
    for wanted in ["Start here:", "MP_GITHUB_TOKEN", "Exit codes", "commit-msg"] {
        assert!(help.contains(wanted), "no {wanted:?} in\n{help}");
    }
    assert!(!help.contains("wiring"), "{help}");
    // The commands a newcomer runs first come first.
    let tick = help.find("\n  tick ").expect("tick is listed");
    let contract = help.find("\n  contract ").expect("contract is listed");
    assert!(tick < contract, "{help}");
}

#[test]
fn completions_are_generated() {
    mp().args(["completions", "bash"])
        .assert()
        .success()
        .stdout(predicate::str::contains("commit-msg"));
}

#[test]
fn unknown_subcommand_is_a_usage_error() {
    mp().arg("frobnicate").assert().code(2);
}
