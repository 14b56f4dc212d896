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

const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

/// A config dir trusting `acme-audit` (never fetched) with the pointers `pointers`
/// (skill name, frontmatter body).
fn pointed(dir: &Path, pointers: &[(&str, &str)]) {
    std::fs::write(
        dir.join("skill-sources.md"),
        trust_list("https://example.com/acme.git", COMMIT),
    )
    .expect("trust list");
    for (name, body) in pointers {
        let skill = dir.join("skills").join(name);
        std::fs::create_dir_all(&skill).expect("mkdir");
        std::fs::write(skill.join("source.md"), body).expect("pointer");
    }
}

fn codes_of(list: &Value) -> Vec<String> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|f| {
            format!(
                "{} {} {}",
                f["severity"].as_str().unwrap_or("-"),
                f["code"].as_str().unwrap_or("-"),
                f["line"]
            )
        })
        .collect()
}

#[test]
fn lint_reports_every_pointer_problem_with_its_line_and_exit_code() {
    let dir = tempfile::tempdir().expect("temp dir");
    pointed(
        dir.path(),
        &[
            (
                "acme-audit-escape",
                "---\nsource: acme-audit\norganization: acme\nskill_path: ../../etc\n---\n",
            ),
            (
                "acme-audit-nosource",
                "---\norganization: acme\nskill_path: skills/acme-audit-nosource\n---\n",
            ),
            ("acme-audit-bare", "# no frontmatter\n"),
            (
                "acme-audit-other",
                "---\nsource: acme-audit\norganization: umbrella\nskill_path: skills/somewhere\n---\n",
            ),
        ],
    );
    let doc = json_of(&["lint"], dir.path(), 1);
    assert_eq!(
        codes_of(&doc["findings"]),
        [
            "error source_frontmatter_invalid 1",
            "error source_pointer_path_invalid 4",
            "error source_missing_field 2",
            "error source_pointer_organization_unknown 3",
            "error source_pointer_organization_mismatch 3",
            "error source_pointer_path_mismatch 4",
            "warning source_snapshot_missing null",
            "warning source_local_lock_missing null",
        ]
    );
    assert_eq!(
        (doc["errors"].as_u64(), doc["warnings"].as_u64()),
        (Some(6), Some(2))
    );
    mp().args(["sources", "lint", "--config"])
        .arg(dir.path())
        .assert()
        .code(1)
        .stdout(
            predicate::str::contains(
                "skills/acme-audit-escape/source.md:4: source_pointer_path_invalid: source acme-audit: skill_path `../../etc` holds `..`",
            )
            .and(predicate::str::contains("error: "))
            .and(predicate::str::contains("1 sources file(s) checked: 6 error(s), 2 warning(s)")),
        );
}

#[test]
fn lint_is_clean_with_warnings_only_and_exits_2_on_an_unreadable_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    assert_eq!(
        json_of(&["lint"], dir.path(), 0)["findings"],
        serde_json::json!([])
    );
    pointed(dir.path(), &[]);
    let doc = json_of(&["lint"], dir.path(), 0);
    assert_eq!(doc["valid"], true);
    assert_eq!(doc["warnings"], 2);
    std::fs::create_dir_all(dir.path().join("sources.lock")).expect("a directory");
    let doc = json_of(&["lint"], dir.path(), 2);
    assert_eq!(doc["findings"][0]["code"], "source_file_unreadable");
}

#[test]
fn status_and_drift_report_pointer_problems_a_missing_snapshot_and_local_lock() {
    let dir = tempfile::tempdir().expect("temp dir");
    pointed(
        dir.path(),
        &[(
            "acme-audit-x",
            "---\nsource: acme-audit\norganization: acme\nskill_path: /abs/acme-audit-x\n---\n",
        )],
    );
    let status = json_of(&["status"], dir.path(), 0);
    assert_eq!(
        codes_of(&status["problems"]),
        ["error source_pointer_path_invalid 4"]
    );
    let warnings: Vec<&str> = status["sources"][0]["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .filter_map(|w| w["code"].as_str())
        .collect();
    assert_eq!(
        warnings,
        ["source_snapshot_missing", "source_local_lock_missing"]
    );
    mp().args(["sources", "status", "--config"])
        .arg(dir.path())
        .assert()
        .success()
        .stdout(
            predicate::str::contains("warning[source_local_lock_missing]").and(
                predicate::str::contains("source.md:4: source_pointer_path_invalid"),
            ),
        );
    let drift = json_of(&["drift", "--offline"], dir.path(), 1);
    assert_eq!(
        codes_of(&drift["problems"]),
        ["error source_pointer_path_invalid 4"]
    );
    let found: Vec<&str> = drift["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["code"].as_str())
        .collect();
    assert_eq!(found, ["source_unpinned"]);
}

#[test]
fn list_and_lint_report_a_broken_registry_row() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        dir.path().join("skill-sources-registry.md"),
        "# Registry\n\n## Community / external sources\n\n| Source id | Owning org | Maintainer | Repository | Notes |\n|---|---|---|---|---|\n| Not_An_Id | acme | me | r | n |\n| two-cells | acme |\n",
    )
    .expect("registry");
    let listed = json_of(&["list"], dir.path(), 0);
    let codes: Vec<String> = listed["registry_problems"]
        .as_array()
        .expect("problems")
        .iter()
        .map(|p| format!("{} {}", p["code"].as_str().unwrap_or("-"), p["line"]))
        .collect();
    assert_eq!(
        codes,
        [
            "source_registry_row_invalid 7",
            "source_registry_row_invalid 8"
        ]
    );
    let linted = json_of(&["lint"], dir.path(), 1);
    assert_eq!(
        codes_of(&linted["findings"]),
        [
            "error source_registry_row_invalid 7",
            "error source_registry_row_invalid 8"
        ]
    );
}
