//! `mp sources`: a trusted git-tag source with a skill family is fetched, pinned and loaded
//! into a live tick; moving its tag upstream fails `verify` and shows in `drift`; a source
//! only the registry mentions is never fetched.

use std::path::Path;
use std::process::Command;

use predicates::prelude::*;
use serde_json::Value;

use crate::rest::{live_tick, serve_demo};
use crate::{mp, workspace_root};

/// `git` in `dir` with a fixed identity and no user or system configuration.
pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .args([
            "-c",
            "user.name=Up Stream",
            "-c",
            "user.email=up@example.org",
        ])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(["-c", "tag.gpgsign=false"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(output.status.success(), "git {args:?}: {output:?}");
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// An upstream repository providing the family `acme-audit-*` (one validator), tagged
/// `v1`; returns its directory and the tagged commit.
fn upstream(dir: &Path) -> String {
    let example = workspace_root().join("examples/skills/no_todos_in_prod");
    let contract =
        std::fs::read_to_string(example.join("no_todos_in_prod.md")).expect("example contract");
    let module =
        std::fs::read_to_string(example.join("no_todos_in_prod.wat")).expect("example module");
    let skill = dir.join("skills/acme-audit-todos");
    std::fs::create_dir_all(&skill).expect("mkdir");
    std::fs::write(
        skill.join("SKILL.md"),
        format!("---\nname: acme-audit-todos\nkind: validators\n---\n{contract}"),
    )
    .expect("SKILL.md");
    std::fs::write(skill.join("acme-audit-todos.wat"), module).expect("module");
    git(dir, &["init", "--quiet"]);
    git(dir, &["add", "--all"]);
    git(dir, &["commit", "--quiet", "-m", "acme audit skills"]);
    git(dir, &["tag", "v1"]);
    git(dir, &["rev-parse", "HEAD"])
}

fn trust_list(url: &str, commit: &str) -> String {
    format!(
        "# Trusted skill sources\n\n## Trusted sources\n\n```yaml\n- id: acme-audit\n  organization: acme\n  name: Acme audit skills\n  method: git-tag\n  url: {url}\n  ref: v1\n  commit: {commit}\n  provides:\n    - family: acme-audit-*\n```\n"
    )
}

fn json_of(args: &[&str], config: &Path, code: i32) -> Value {
    let output = mp()
        .args(["sources"])
        .args(args)
        .args(["--format", "json", "--config"])
        .arg(config)
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(code), "{output:?}");
    serde_json::from_slice(&output.stdout).expect("JSON")
}

#[test]
fn a_trusted_family_is_fetched_pinned_loaded_into_a_tick_and_a_moved_tag_is_caught() {
    let dir = tempfile::tempdir().expect("temp dir");
    let up = dir.path().join("upstream");
    std::fs::create_dir_all(&up).expect("mkdir");
    let commit = upstream(&up);
    let (_served, url, config) = serve_demo(&dir.path().join("gov"));
    std::fs::write(
        config.join("skill-sources.md"),
        trust_list(&format!("file://{}", up.display()), &commit),
    )
    .expect("trust list");
    std::fs::write(
        config.join("skill-sources-registry.md"),
        "# Registry\n\n## Community / external sources\n\n| Source id | Owning org | Maintainer | Repository | Notes |\n|---|---|---|---|---|\n| other-skills | acme | someone | https://example.com/other.git | not trusted |\n",
    )
    .expect("registry");

    let listed = json_of(&["list"], &config, 0);
    assert_eq!(listed["trusted"][0]["id"], "acme-audit");
    assert_eq!(
        listed["discoverable_not_trusted"],
        serde_json::json!(["other-skills"])
    );

    let fetched = json_of(&["fetch"], &config, 0);
    assert_eq!(fetched["fetched"][0]["resolved"], commit.as_str());
    assert_eq!(fetched["fetched"][0]["first_pin"], true);
    assert_eq!(
        fetched["fetched"][0]["skills"],
        serde_json::json!(["acme-audit-todos"])
    );
    let lock = std::fs::read_to_string(config.join("sources.lock")).expect("pin lock");
    assert!(lock.contains(&commit));

    mp().args(["skills", "status", "--config"])
        .arg(&config)
        .assert()
        .success()
        .stdout(
            predicate::str::contains("acme-audit-todos")
                .and(predicate::str::contains("source acme-audit")),
        );

    let audit = dir.path().join("audit.jsonl");
    let (doc, _) = live_tick(
        &url,
        &config,
        &["--audit-log", audit.to_str().expect("UTF-8 path")],
    );
    assert!(doc["outcomes"].as_array().is_some_and(|o| !o.is_empty()));
    let log = std::fs::read_to_string(&audit).expect("audit log");
    let calls: Vec<Value> = log
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["record"] == "skill_call")
        .collect();
    assert!(
        calls.iter().any(|c| c["skill"] == "acme-audit-todos"),
        "the fetched skill ran in the tick: {log}"
    );

    assert_eq!(
        json_of(&["verify"], &config, 0)["findings"],
        serde_json::json!([])
    );
    std::fs::write(up.join("README.md"), "moved\n").expect("write");
    git(&up, &["add", "--all"]);
    git(&up, &["commit", "--quiet", "-m", "moved"]);
    git(&up, &["tag", "-f", "v1"]);
    let verified = json_of(&["verify"], &config, 1);
    assert_eq!(verified["findings"][0]["code"], "source_tag_moved");
    let drift = json_of(&["drift"], &config, 1);
    let codes: Vec<&str> = drift["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["code"].as_str())
        .collect();
    assert_eq!(codes, ["source_tag_moved"]);
    let refetch = json_of(&["fetch"], &config, 1);
    assert_eq!(refetch["refused"][0]["code"], "source_tag_moved");
    mp().args(["skills", "status", "--config"])
        .arg(&config)
        .assert()
        .success()
        .stdout(predicate::str::contains("source acme-audit"));

    let other = json_of(&["fetch", "other-skills"], &config, 1);
    assert_eq!(other["refused"][0]["code"], "source_not_trusted");
    assert!(!config.join(".mp-sources/other-skills").exists());
}

#[test]
fn no_trust_list_means_nothing_to_do_and_a_broken_one_exits_2() {
    let dir = tempfile::tempdir().expect("temp dir");
    mp().args(["sources", "fetch", "--config"])
        .arg(dir.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("nothing to do"));
    std::fs::write(
        dir.path().join("skill-sources.md"),
        "# Trust\n\n## Trusted sources\n\n```yaml\n- id: Not_Kebab\n```\n",
    )
    .expect("write");
    let output = mp()
        .args(["sources", "list", "--config"])
        .arg(dir.path())
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.code() == Some(1) || output.status.code() == Some(2),
        "{output:?}"
    );
    assert!(
        text.contains("Not_Kebab"),
        "the refusal names the id: {text}"
    );
}
