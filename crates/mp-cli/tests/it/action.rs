//! The GitHub Action (`action.yml`) and the example workflow: valid YAML, every input they
//! use is declared, and every flag the action passes to `mp tick` exists.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::{mp, workspace_root};

fn yaml(path: &str) -> Value {
    let text = std::fs::read_to_string(workspace_root().join(path)).expect("readable");
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{path} is not valid YAML: {e}"))
}

/// Every `--flag` token of a shell script.
fn flags(script: &str) -> BTreeSet<String> {
    script
        .split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == '"')
        .filter(|w| w.starts_with("--") && w.len() > 2)
        .map(|w| w.trim_end_matches(['=', ',']).to_owned())
        .collect()
}

#[test]
fn the_action_passes_only_flags_mp_tick_knows_and_declares_every_input_it_uses() {
    let action = yaml("action.yml");
    let steps = action["runs"]["steps"].as_array().expect("steps");
    let tick = steps
        .iter()
        .find(|s| s["id"] == "tick")
        .expect("a step with id tick");
    let script = tick["run"].as_str().expect("a script");
    let used = flags(script);
    assert!(
        used.contains("--report-file") && used.contains("--annotations"),
        "{used:?}"
    );
    let help = mp().args(["tick", "--help"]).output().expect("runs");
    let help = String::from_utf8(help.stdout).expect("utf-8");
    for flag in &used {
        assert!(help.contains(flag.as_str()), "mp tick has no {flag}");
    }

    let declared: BTreeSet<&str> = action["inputs"]
        .as_object()
        .expect("inputs")
        .keys()
        .map(String::as_str)
        .collect();
    let text = std::fs::read_to_string(workspace_root().join("action.yml")).expect("readable");
    for reference in text.split("inputs.").skip(1) {
        let name: String = reference
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        assert!(
            declared.contains(name.as_str()),
            "inputs.{name} is not declared"
        );
    }
    assert!(
        !script.contains("${{"),
        "inputs reach the script through env only"
    );
}

#[test]
fn the_example_workflow_runs_every_five_minutes_one_at_a_time() {
    let workflow = yaml("examples/workflows/mp-tick.yml");
    assert_eq!(workflow["on"]["schedule"][0]["cron"], "*/5 * * * *");
    assert_eq!(workflow["concurrency"]["cancel-in-progress"], false);
    let action = yaml("action.yml");
    let declared = action["inputs"].as_object().expect("inputs");
    let steps = workflow["jobs"]["tick"]["steps"].as_array().expect("steps");
    let uses_action = steps
        .iter()
        .find(|s| s["with"].is_object())
        .expect("a step using the action");
    for key in uses_action["with"].as_object().expect("with").keys() {
        assert!(declared.contains_key(key), "the action has no input {key}");
    }
}

#[test]
fn the_action_tick_step_writes_the_job_summary_and_annotations_against_a_served_world() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_served, url, config) = crate::rest::serve_demo(dir.path());
    let summary = dir.path().join("summary.md");
    let outputs = dir.path().join("outputs");
    let output = run_tick_step(dir.path(), &url, &config, "ghs_ACTIONSENTINEL", "--dry-run");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    let summary = std::fs::read_to_string(&summary).expect("a job summary");
    assert!(summary.starts_with("## mp tick at "), "{summary}");
    assert!(summary.contains("| repository | merged |"), "{summary}");
    assert!(summary.contains("`acme/webapp`"), "{summary}");
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("::warning title=mp%3A acme/webapp#3 blocked::")),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read_to_string(&outputs).expect("step outputs"),
        "exit-code=0\n"
    );
    assert!(!stdout.contains("ACTIONSENTINEL") && !summary.contains("ACTIONSENTINEL"));
    assert!(
        dir.path().join("http-cache.json").exists(),
        "the ETag cache is kept"
    );
}

/// The script of the action's step with id `id`.
fn step_script(id: &str) -> String {
    let action = yaml("action.yml");
    let steps = action["runs"]["steps"].as_array().expect("steps");
    let step = steps
        .iter()
        .find(|s| s["id"] == id)
        .unwrap_or_else(|| panic!("a step with id {id}"));
    step["run"].as_str().expect("a script").to_owned()
}

/// Runs the action's source-digest step over the mp sources at `root`; returns the digest.
fn source_digest(root: &std::path::Path) -> String {
    let dir = tempfile::tempdir().expect("temp dir");
    let outputs = dir.path().join("outputs");
    let output = std::process::Command::new("bash")
        .args(["-eo", "pipefail", "-c", &step_script("source")])
        .env("GITHUB_ACTION_PATH", root)
        .env("GITHUB_OUTPUT", &outputs)
        .output()
        .expect("bash runs");
    assert!(output.status.success(), "{output:?}");
    let written = std::fs::read_to_string(&outputs).expect("step outputs");
    let digest = written
        .trim()
        .strip_prefix("digest=")
        .unwrap_or_else(|| panic!("no digest in {written:?}"))
        .to_owned();
    assert!(
        digest.len() == 64 && digest.chars().all(|c| c.is_ascii_hexdigit()),
        "{digest}"
    );
    digest
}

#[test]
fn the_action_caches_the_binary_under_a_digest_of_its_sources_not_a_branch_name() {
    let action = std::fs::read_to_string(workspace_root().join("action.yml")).expect("readable");
    assert!(
        !action.contains("github.action_ref"),
        "a branch name keys nothing"
    );
    assert!(action.contains(
        "key: mp-bin-${{ runner.os }}-${{ runner.arch }}-${{ steps.source.outputs.digest }}"
    ));
    // A copy of the sources has the same digest; one changed line gives another.
    let copy = tempfile::tempdir().expect("temp dir");
    let root = workspace_root();
    let status = std::process::Command::new("cp")
        .arg("-R")
        .args(
            [
                "Cargo.toml",
                "Cargo.lock",
                "crates",
                "schemas",
                "fixtures",
                "examples",
            ]
            .iter()
            .map(|name| root.join(name)),
        )
        .arg(copy.path())
        .status()
        .expect("cp runs");
    assert!(status.success());
    let first = source_digest(copy.path());
    assert_eq!(source_digest(copy.path()), first, "the digest is stable");
    let main = copy.path().join("crates/mp-cli/src/main.rs");
    let text = std::fs::read_to_string(&main).expect("readable");
    std::fs::write(&main, format!("{text}\n// a change\n")).expect("written");
    assert_ne!(
        source_digest(copy.path()),
        first,
        "a changed source, a new binary"
    );
}

#[test]
fn the_action_stays_green_when_another_tick_holds_the_lease() {
    let dir = tempfile::tempdir().expect("temp dir");
    // The scenario's lease, held for two more minutes by the clock this live tick reads
    // (a lease further ahead than any mp takes is a hand-written one and holds no one out).
    let text = std::fs::read_to_string(
        workspace_root().join("fixtures/scenarios/state-lease-held-by-another-tick/world.yaml"),
    )
    .expect("readable");
    let until = jiff::Timestamp::from_second(jiff::Timestamp::now().as_second() + 120)
        .expect("a time")
        .to_string();
    let held = text.replace(
        "\"until\": \"2026-03-10T12:02:00Z\"",
        &format!("\"until\": \"{until}\""),
    );
    assert_ne!(held, text, "the lease is moved to now");
    let world = dir.path().join("world.yaml");
    std::fs::write(&world, held).expect("written");
    let (_served, url, config) = crate::rest::serve_world(&world, dir.path(), &[]);
    let outputs = dir.path().join("outputs");
    let output = run_tick_step(dir.path(), &url, &config, "ghs_lease", "");
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        std::fs::read_to_string(&outputs).expect("step outputs"),
        "exit-code=4\n",
        "{output:?}"
    );
    assert!(
        String::from_utf8_lossy(&output.stdout)
            .contains("::notice title=mp::another tick holds the lease"),
        "{output:?}"
    );
}

/// Runs the action's tick step in `dir` against the served GitHub at `url` with the
/// configuration `config`, the token `token` and the extra `args`, with the environment
/// the runner sets from the inputs (empty ones included); the summary and the step outputs
/// go to `dir/summary.md` and `dir/outputs`.
fn run_tick_step(
    dir: &std::path::Path,
    url: &str,
    config: &std::path::Path,
    token: &str,
    args: &str,
) -> std::process::Output {
    let mp_dir = std::path::Path::new(assert_cmd::cargo::cargo_bin!("mp"))
        .parent()
        .expect("the binary's directory")
        .to_owned();
    let path = format!(
        "{}:{}",
        mp_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    std::process::Command::new("bash")
        .args(["-e", "-c", &step_script("tick")])
        .current_dir(dir)
        .env("PATH", path)
        .env("GITHUB_STEP_SUMMARY", dir.join("summary.md"))
        .env("GITHUB_OUTPUT", dir.join("outputs"))
        .env("MP_APP_ID", "")
        .env("MP_APP_PRIVATE_KEY", "")
        .env("MP_INSTALLATION_ID", "")
        .env("MP_GITHUB_TOKEN", token)
        .env("MP_RECEIPT_KEY", "")
        .env("MP_API_URL", url)
        .env("MP_ACTION_CONFIG", config)
        .env("MP_ACTION_SHARD", "")
        .env("MP_ACTION_CACHE", dir.join("http-cache.json"))
        .env("MP_ACTION_ARGS", args)
        .output()
        .expect("bash runs")
}
