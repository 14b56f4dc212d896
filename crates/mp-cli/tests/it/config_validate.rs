//! `mp config validate`.

use std::path::Path;

use predicates::prelude::*;

use crate::{mp, workspace_root};

/// Copies an example config set into a temp dir so a test can break one file.
fn example_copy(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let source = workspace_root().join("examples").join(name);
    for entry in std::fs::read_dir(&source).expect("example dir") {
        let path = entry.expect("entry").path();
        if path.is_file() {
            std::fs::copy(&path, dir.path().join(path.file_name().expect("name"))).expect("copy");
        }
    }
    dir
}

fn append(path: &Path, text: &str) {
    let mut content = std::fs::read_to_string(path).expect("read");
    content.push_str(text);
    std::fs::write(path, content).expect("write");
}

fn line_count(path: &Path) -> usize {
    std::fs::read_to_string(path).expect("read").lines().count()
}

#[test]
fn the_directory_is_named_by_config_or_by_position_not_both() {
    let example = workspace_root().join("examples").join("solo-developer");
    mp().args(["config", "validate", "--config"])
        .arg(&example)
        .assert()
        .success()
        .stdout(predicate::str::contains("0 errors"));
    // A broken copy proves --config reads the directory it names.
    let broken = example_copy("solo-developer");
    append(&broken.path().join("env.yml"), "bogus_field: 1\n");
    mp().args(["config", "validate", "--config"])
        .arg(broken.path())
        .assert()
        .code(1)
        .stdout(predicate::str::contains("bogus_field"));
    mp().args(["config", "validate", "--config"])
        .arg(&example)
        .arg(broken.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot be used with"));
}

#[test]
fn every_unknown_configuration_file_is_reported_without_exception() {
    let dir = example_copy("solo-developer");
    std::fs::write(dir.path().join("preferences.yml"), "theme: dark\n").expect("write");
    std::fs::write(dir.path().join("README.md"), "# our configuration\n").expect("write");
    mp().args(["config", "validate", "--config"])
        .arg(dir.path())
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "preferences.yml: warning[unknown_file]",
        ))
        .stdout(predicate::str::contains("README.md").not());
}

#[test]
fn examples_are_valid() {
    for example in ["solo-developer", "small-team"] {
        mp().args(["config", "validate"])
            .arg(workspace_root().join("examples").join(example))
            .assert()
            .success()
            .stdout(predicate::str::contains("0 errors"));
    }
}

#[test]
fn unknown_key_names_file_line_and_key() {
    let dir = example_copy("solo-developer");
    let projects = dir.path().join("projects.yml");
    let line = line_count(&projects) + 1;
    append(&projects, "supervised_repo: [acme/typo]\n");
    mp().args(["config", "validate"])
        .arg(dir.path())
        .assert()
        .code(1)
        .stdout(
            predicate::str::contains(format!("projects.yml:{line}:"))
                .and(predicate::str::contains("supervised_repo"))
                .and(predicate::str::contains("unknown_field")),
        );
}

#[test]
fn every_broken_file_is_reported() {
    let dir = example_copy("solo-developer");
    append(&dir.path().join("env.yml"), "allow_no_ci: yes\n");
    std::fs::write(
        dir.path().join("skills.yml"),
        "disabled:\n  - validator_trailers\n",
    )
    .expect("write");
    let assert = mp()
        .args(["config", "validate"])
        .arg(dir.path())
        .assert()
        .code(1);
    let out = String::from_utf8(assert.get_output().stdout.clone()).expect("utf-8");
    assert!(out.contains("env.yml:"), "{out}");
    assert!(out.contains("skills.yml:2:"), "{out}");
    assert!(out.contains("cannot_disable_required_validator"), "{out}");
}

#[test]
fn json_lists_problems_with_locations() {
    let dir = example_copy("small-team");
    append(&dir.path().join("owner.yml"), "nickname: bob\n");
    let assert = mp()
        .args(["config", "validate", "--format", "json"])
        .arg(dir.path())
        .assert()
        .code(1);
    let doc: serde_json::Value =
        serde_json::from_slice(&assert.get_output().stdout).expect("json output");
    assert_eq!(doc["valid"], false);
    let problem = &doc["problems"][0];
    assert_eq!(problem["file"], "owner.yml");
    assert_eq!(problem["code"], "unknown_field");
    assert!(problem["line"].as_u64().is_some(), "{problem}");
}

#[test]
fn missing_required_file_is_an_error() {
    let dir = example_copy("solo-developer");
    std::fs::remove_file(dir.path().join("env.yml")).expect("remove");
    mp().args(["config", "validate"])
        .arg(dir.path())
        .assert()
        .code(1)
        .stdout(predicate::str::contains("env.yml").and(predicate::str::contains("missing_file")));
}

#[test]
fn a_deployment_with_no_configuration_is_not_configured_not_broken() {
    // A template repository's schedule: no directory, or a directory with no
    // configuration file. Exit 5, whichever command reads it.
    let empty = tempfile::tempdir().expect("tempdir");
    std::fs::write(empty.path().join("README.md"), "fill me in\n").expect("write");
    let missing = empty.path().join("config");
    for dir in [empty.path(), missing.as_path()] {
        for command in [
            &["config", "validate", "--config"][..],
            &["tick", "--dry-run", "--config"],
            &["serve", "--config"],
            &["skills", "status", "--config"],
        ] {
            mp().args(command)
                .arg(dir)
                .env("MP_GITHUB_TOKEN", "unused")
                .env("MP_WEBHOOK_SECRET", "unused")
                .assert()
                .code(5)
                .stderr(predicate::str::contains("not configured"));
        }
    }
    // Configuration files that are broken are broken: exit 1 from validate, 2 from tick.
    let broken = tempfile::tempdir().expect("tempdir");
    std::fs::write(broken.path().join("owner.yml"), "github_login: alice\n").expect("write");
    mp().args(["config", "validate", "--config"])
        .arg(broken.path())
        .assert()
        .code(1);
    mp().args(["tick", "--dry-run", "--config"])
        .arg(broken.path())
        .env("MP_GITHUB_TOKEN", "unused")
        .assert()
        .code(2);
}

#[test]
fn a_path_that_is_not_a_directory_cannot_run() {
    let file = tempfile::NamedTempFile::new().expect("a file");
    mp().args(["config", "validate"])
        .arg(file.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is not a directory"));
}

#[test]
fn skill_names_are_checked_against_the_skills_of_the_directory() {
    let dir = example_copy("solo-developer");
    std::fs::write(dir.path().join("skills.yml"), "enabled: [no_wip_titel]\n").expect("write");
    mp().args(["config", "validate"])
        .arg(dir.path())
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "skills.yml:1:11: error[unknown_skill]: no skill is named `no_wip_titel`: the configuration directory has no user skills",
        ));
    // With the user skill present, a typo gets the closest name, and the right name loads.
    let validators = dir.path().join("skills/validators");
    std::fs::create_dir_all(&validators).expect("mkdir");
    std::fs::write(validators.join("no_wip_title.wat"), "(module)\n").expect("write");
    mp().args(["config", "validate"])
        .arg(dir.path())
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "no skill is named `no_wip_titel`: did you mean `no_wip_title`? (field `enabled[0]`)",
        ));
    std::fs::write(dir.path().join("skills.yml"), "enabled: [no_wip_title]\n").expect("write");
    mp().args(["config", "validate"])
        .arg(dir.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("valid (0 errors, 0 warnings)"));
}

#[test]
fn an_over_indented_list_item_and_an_allowlist_without_the_owner_are_findings() {
    let dir = example_copy("solo-developer");
    let env = std::fs::read_to_string(dir.path().join("env.yml")).expect("read");
    assert!(
        env.contains("  - test\n  - lint\n"),
        "the example lists two checks"
    );
    std::fs::write(
        dir.path().join("env.yml"),
        env.replace("  - test\n  - lint\n", "  - test\n    - lint\n"),
    )
    .expect("write");
    let text = std::fs::read_to_string(dir.path().join("env.yml")).expect("read");
    let line = text
        .lines()
        .position(|l| l == "    - lint")
        .expect("the line")
        + 1;
    let out = mp()
        .args(["config", "validate"])
        .arg(dir.path())
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "env.yml:{line}:5: error[folded_list_item]: this line is read as the end of the list item on line {} (`test - lint`)",
            line - 1
        )),
        "{stdout}"
    );
    let owner = example_copy("solo-developer");
    let login = std::fs::read_to_string(owner.path().join("owner.yml")).expect("read");
    std::fs::write(
        owner.path().join("owner.yml"),
        format!("{login}allowlisted_actors: [someone-else]\n"),
    )
    .expect("write");
    mp().args(["config", "validate"])
        .arg(owner.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("warning[owner_not_allowlisted]"))
        .stdout(predicate::str::contains(
            "remove the key to trust only the owner",
        ));
}
