//! `mp commit-msg check`.

use predicates::prelude::*;

use crate::mp;

const GOOD: &str = "feat: add a widget\n\nBody.\n\nAgent-Tool: claude-code\nAgent-Model: claude-opus-4.7\nAgent-Session: s_widget-01\nAgent-Machine: laptop\nTask-Ref: Issue#12\n";

#[track_caller]
fn check(message: &str, args: &[&str], code: i32, stdout: &[&str]) -> String {
    let assert = mp()
        .args(["commit-msg", "check", "-"])
        .args(args)
        .write_stdin(message)
        .assert()
        .code(code);
    let output = String::from_utf8(assert.get_output().stdout.clone()).expect("utf-8");
    for needle in stdout {
        assert!(output.contains(needle), "missing {needle:?} in:\n{output}");
    }
    output
}

#[test]
fn well_formed_message_exits_zero() {
    check(
        GOOD,
        &[],
        0,
        &["ok    Agent-Session: s_widget-01", "satisfies"],
    );
}

#[test]
fn missing_session_exits_one_and_names_it() {
    let message = GOOD.replace("Agent-Session: s_widget-01\n", "");
    check(
        &message,
        &[],
        1,
        &["FAIL  C5: missing trailer 'Agent-Session'", "1 problem"],
    );
}

#[test]
fn malformed_task_ref_is_named() {
    let message = GOOD.replace("Issue#12", "ISSUE#12");
    check(&message, &[], 1, &["malformed Task-Ref 'ISSUE#12'"]);
}

#[test]
fn git_comment_lines_are_ignored() {
    let message = format!(
        "{GOOD}# Please enter the commit message\n# ------------------------ >8 ------------------------\nAgent-Tool: evil\n"
    );
    check(&message, &[], 0, &["ok    Agent-Tool: claude-code"]);
}

#[test]
fn message_from_a_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("COMMIT_EDITMSG");
    std::fs::write(&path, "just a subject\n").expect("write");
    mp().args(["commit-msg", "check"])
        .arg(&path)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("5 problems"));
}

#[test]
fn json_output_is_machine_readable() {
    let message = GOOD.replace("s_widget-01", "s_-x");
    let out = check(&message, &["--format", "json"], 1, &[]);
    let doc: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(doc["ok"], false);
    assert_eq!(doc["trailers"][2]["key"], "Agent-Session");
    assert_eq!(doc["trailers"][2]["code"], "session_malformed");
    assert_eq!(doc["trailers"][0]["ok"], true);
}

#[test]
fn registry_mismatch_is_advisory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let registry = dir.path().join("agent_registry.yml");
    std::fs::write(&registry, "tools: [codex]\nmodels:\n  codex: [gpt-5]\n").expect("write");
    let arg = registry.to_str().expect("utf-8 path");
    check(
        GOOD,
        &["--registry", arg],
        0,
        &["warn  L4: Agent-Tool 'claude-code'"],
    );
}

#[test]
fn config_names_the_registry_of_a_configuration_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().to_str().expect("utf-8 path");
    // No registry in the directory: nothing to check against.
    let quiet = check(GOOD, &["--config", config], 0, &[]);
    assert!(!quiet.contains("L4"), "{quiet}");
    std::fs::write(
        dir.path().join("agent_registry.yml"),
        "tools: [codex]\nmodels:\n  codex: [gpt-5]\n",
    )
    .expect("write");
    check(
        GOOD,
        &["--config", config],
        0,
        &["warn  L4: Agent-Tool 'claude-code'"],
    );
}

#[test]
fn invalid_registry_cannot_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let registry = dir.path().join("agent_registry.yml");
    std::fs::write(&registry, "tools: [codex]\nbogus: 1\n").expect("write");
    mp().args(["commit-msg", "check", "-", "--registry"])
        .arg(&registry)
        .write_stdin(GOOD)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bogus"));
}

#[test]
fn unreadable_file_cannot_run() {
    mp().args(["commit-msg", "check", "/nonexistent/message"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("/nonexistent/message"));
}

/// The hook and C5 read one message the same way: for each tricky message, the hook's exit
/// code is what mp-core's C5 contract says of the same text.
#[test]
fn the_hook_and_c5_agree_on_every_reading_of_a_message() {
    let below_scissors = format!(
        "feat: x\n\nBody.\n# ------------------------ >8 ------------------------\n\n{}",
        GOOD.split("\n\n").last().unwrap_or_default()
    );
    let trailing_blanks = format!("{GOOD}   \n\t\n\n");
    let commented = GOOD.replace("Agent-Machine", "# a note\nAgent-Machine");
    let crlf = GOOD.replace('\n', "\r\n");
    // A NO-BREAK SPACE line is not blank to git: the trailers join the prose above them.
    let (body, block) = GOOD.rsplit_once("\n\n").unwrap_or_default();
    let nbsp_break = format!("{body}\n\u{a0}\n{block}");
    assert!(
        !mp_core::trailers::check_contract(&mp_core::trailers::Trailers::parse(&nbsp_break))
            .is_empty(),
        "a NO-BREAK SPACE line must not separate the trailers"
    );
    for message in [
        GOOD.to_owned(),
        below_scissors,
        trailing_blanks,
        commented,
        crlf,
        nbsp_break,
    ] {
        let c5 = mp_core::trailers::check_contract(&mp_core::trailers::Trailers::parse(&message));
        let code = if c5.is_empty() { 0 } else { 1 };
        check(&message, &[], code, &[]);
    }
}
