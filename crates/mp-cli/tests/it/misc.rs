//! `--version`, `--help`, completions and argument errors.

use predicates::prelude::*;

use crate::mp;

#[test]
fn version_names_the_binary() {
    mp().arg("--version")
        .assert()
        .success()
        .stdout(predicate::str::starts_with("mp "));
}

#[test]
fn help_lists_the_commands_and_exit_codes() {
    mp().arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("commit-msg").and(predicate::str::contains("Exit codes")));
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
