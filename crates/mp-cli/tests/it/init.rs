//! `mp init`: a starter configuration that validates, never half-written, never over files
//! it was not asked to replace.

use std::path::Path;

use predicates::prelude::*;

use crate::mp;

/// The flags of a complete `mp init`, writing into `out`.
fn init_args(out: &Path) -> Vec<String> {
    [
        "init",
        "--owner",
        "jane-doe",
        "--governance",
        "jane-doe/governance",
        "--repo",
        "jane-doe/webapp",
        "--repo",
        "Jane-Doe/API",
        "--app-slug",
        "jane-merge-gate",
        "--required-check",
        "test",
        "--required-check",
        "CI / lint (ubuntu-latest)",
        "--out",
    ]
    .into_iter()
    .map(str::to_owned)
    .chain([out.display().to_string()])
    .collect()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("a readable directory")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

#[test]
fn flags_write_a_configuration_that_validates_and_holds_the_values() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("my-governance").join("config");
    mp().args(init_args(&out)).assert().success().stdout(
        predicate::str::contains("owner.yml")
            .and(predicate::str::contains("projects.yml"))
            .and(predicate::str::contains("env.yml"))
            .and(predicate::str::contains("mp config validate --config"))
            .and(predicate::str::contains("mp-tick.yml"))
            .and(predicate::str::contains("merge_enabled: true")),
    );
    assert_eq!(listing(&out), ["env.yml", "owner.yml", "projects.yml"]);
    assert_eq!(
        listing(&tmp.path().join("my-governance")),
        ["config"],
        "no temporary directory is left beside it"
    );
    mp().args(["config", "validate", "--config"])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("valid (0 errors, 0 warnings)"));

    let owner = read(&out.join("owner.yml"));
    assert!(owner.contains("\ngithub_login: jane-doe\n"), "{owner}");
    let projects = read(&out.join("projects.yml"));
    assert!(
        projects.contains("governance_repo: jane-doe/governance\n"),
        "{projects}"
    );
    assert!(
        projects.contains("supervised_repos:\n  - jane-doe/webapp\n  - Jane-Doe/API\n"),
        "{projects}"
    );
    let env = read(&out.join("env.yml"));
    assert!(env.contains("bot_app_slug: jane-merge-gate\n"), "{env}");
    assert!(
        env.contains("required_checks:\n  - test\n  - \"CI / lint (ubuntu-latest)\"\n"),
        "{env}"
    );
    assert!(env.contains("\nmerge_enabled: false\n"), "{env}");
    assert!(
        env.contains("set merge_enabled: true"),
        "the file says how to merge"
    );
}

#[test]
fn an_existing_directory_is_refused_without_force_and_only_the_three_files_are_replaced_with_it() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("config");
    mp().args(init_args(&out)).assert().success();
    std::fs::write(out.join("owner.yml"), "github_login: someone-else\n").expect("edit");
    std::fs::write(
        out.join("skills.yml"),
        "disabled: [hook_hallucination_guard]\n",
    )
    .expect("a file of the user's");

    let mut again = init_args(&out);
    again[2] = "new-owner".to_owned();
    mp().args(&again).assert().code(2).stderr(
        predicate::str::contains("owner.yml, projects.yml, env.yml already exist")
            .and(predicate::str::contains("--force"))
            .and(predicate::str::contains("nothing was written")),
    );
    assert_eq!(read(&out.join("owner.yml")), "github_login: someone-else\n");

    mp().args(&again).arg("--force").assert().success();
    assert!(read(&out.join("owner.yml")).contains("github_login: new-owner\n"));
    assert_eq!(
        read(&out.join("skills.yml")),
        "disabled: [hook_hallucination_guard]\n",
        "a file mp init does not write is kept"
    );
    assert_eq!(
        listing(&out),
        ["env.yml", "owner.yml", "projects.yml", "skills.yml"],
        "no temporary file is left"
    );
    mp().args(["config", "validate", "--config"])
        .arg(&out)
        .assert()
        .success();
}

#[test]
fn a_directory_holding_other_files_is_refused_and_named() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("config");
    std::fs::create_dir(&out).expect("dir");
    std::fs::write(out.join("README.md"), "notes\n").expect("a file");
    mp().args(init_args(&out))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("it holds README.md"));
    assert_eq!(listing(&out), ["README.md"]);
    // An empty directory is fine.
    std::fs::remove_file(out.join("README.md")).expect("rm");
    mp().args(init_args(&out)).assert().success();
    assert_eq!(listing(&out), ["env.yml", "owner.yml", "projects.yml"]);
}

#[test]
fn force_never_writes_a_directory_a_kept_file_makes_invalid() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("config");
    std::fs::create_dir(&out).expect("dir");
    std::fs::write(out.join("skills.yml"), "bogus: 1\n").expect("a broken file");
    mp().args(init_args(&out))
        .arg("--force")
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("skills.yml:1:1: error[unknown_field]")
                .and(predicate::str::contains("nothing was written")),
        );
    assert_eq!(listing(&out), ["skills.yml"]);
}

#[test]
fn missing_flags_without_a_terminal_are_all_named() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("config");
    let assert = mp()
        .args(["init", "--governance", "jane-doe/governance", "--out"])
        .arg(&out)
        .write_stdin("")
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        stderr.contains("missing --owner, --repo, --app-slug"),
        "{stderr}"
    );
    assert!(!stderr.contains("--governance"), "{stderr}");
    assert!(!out.exists(), "nothing is written");
}

#[test]
fn invalid_values_exit_2_name_each_flag_and_write_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("gov").join("config");
    let mut args = init_args(&out);
    let at =
        |flag: &str, args: &[String]| args.iter().position(|a| a == flag).expect("the flag") + 1;
    let repo = at("--repo", &args);
    args[repo] = "not-a-repo".to_owned();
    let owner = at("--owner", &args);
    args[owner] = "your-github-login".to_owned();
    mp().args(&args).assert().code(2).stderr(
        predicate::str::contains("--repo: invalid repository `not-a-repo`: expected OWNER/REPO")
            .and(predicate::str::contains(
                "--owner: invalid GitHub login `your-github-login`: this is a placeholder",
            ))
            .and(predicate::str::contains("refused 2 values")),
    );
    assert!(
        !tmp.path().join("gov").exists(),
        "not even the parent directory is created"
    );

    let mut governance = init_args(&out);
    let at_governance = at("--governance", &governance);
    governance[at_governance] = "jane-doe/governance/extra".to_owned();
    mp().args(&governance)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--governance: invalid repository"));
    assert!(!tmp.path().join("gov").exists());
}

#[test]
fn json_output_names_the_directory_and_files() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("config");
    let assert = mp()
        .args(init_args(&out))
        .args(["--format", "json"])
        .assert()
        .success();
    let report: serde_json::Value =
        serde_json::from_slice(&assert.get_output().stdout).expect("one JSON document");
    let dir = out.display().to_string();
    assert_eq!(report["directory"], dir.as_str());
    assert_eq!(report["merge_enabled"], false);
    let files: Vec<&str> = report["files"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|f| f.as_str().expect("a path"))
        .collect();
    let expected: Vec<String> = ["owner.yml", "projects.yml", "env.yml"]
        .iter()
        .map(|f| out.join(f).display().to_string())
        .collect();
    assert_eq!(files, expected);
    assert_eq!(report["warnings"], serde_json::json!([]));
    for file in files {
        assert!(Path::new(file).is_file(), "{file}");
    }
}

#[test]
fn no_required_check_is_valid_and_warns_about_the_c2_posture() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("config");
    mp().args([
        "init",
        "--owner",
        "jane-doe",
        "--governance",
        "jane-doe/governance",
        "--repo",
        "jane-doe/webapp",
        "--app-slug",
        "jane-merge-gate",
        "--out",
    ])
    .arg(&out)
    .assert()
    .success()
    .stdout(predicate::str::contains("warning[c2_posture]"));
    mp().args(["config", "validate", "--config"])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("0 errors"));
}
