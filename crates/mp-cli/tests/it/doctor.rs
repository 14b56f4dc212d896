//! `mp doctor` against the loopback GitHub (`mp dev serve-world`): the demo world, an App
//! missing a permission, a repository without the installation, labels created by
//! `--create-labels`, the JSON output and the exit codes.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use crate::rest::{serve_demo, serve_world};
use crate::{mp, workspace_root};

/// The test App's private key (the loopback server checks that a JWT is sent, not its
/// signature).
fn app_key() -> std::path::PathBuf {
    workspace_root().join("crates/mp-github/tests/fixtures/test-app-key.pem")
}

/// Credentials as the environment gives them.
enum Auth {
    Token,
    App,
}

/// `mp doctor --config DIR --api-url URL` plus `extra`, with `auth` and, when given, the
/// receipt key; returns the exit code and standard output.
fn doctor(
    url: &str,
    config: &Path,
    auth: &Auth,
    receipt_key: bool,
    extra: &[&str],
) -> (i32, String) {
    let mut args: Vec<std::ffi::OsString> = vec![
        "doctor".into(),
        "--api-url".into(),
        url.into(),
        "--config".into(),
        config.into(),
    ];
    args.extend(extra.iter().map(Into::into));
    run(&args, auth, receipt_key)
}

/// A fix doctor printed, run exactly as printed (the command before ` (`, split into
/// words as a shell would: the test's paths hold no quotes or spaces), with `extra`
/// arguments after it.
fn run_fix(fix: &str, extra: &[&str], auth: &Auth, receipt_key: bool) -> (i32, String) {
    let command = fix.split(" (").next().unwrap_or_default();
    let mut words = command.split_whitespace();
    assert_eq!(words.next(), Some("mp"), "a fix that runs mp: {fix}");
    let mut args: Vec<std::ffi::OsString> = words.map(Into::into).collect();
    args.extend(extra.iter().map(Into::into));
    run(&args, auth, receipt_key)
}

/// `mp ARGS` with `auth` and, when given, the receipt key, and no other credentials from
/// the environment; returns the exit code and standard output.
fn run(args: &[std::ffi::OsString], auth: &Auth, receipt_key: bool) -> (i32, String) {
    let mut command = mp();
    command
        .args(args)
        .env_remove("MP_API_URL")
        .env_remove("MP_GITHUB_TOKEN")
        .env_remove("MP_APP_ID")
        .env_remove("MP_APP_PRIVATE_KEY")
        .env_remove("MP_APP_PRIVATE_KEY_PATH")
        .env_remove("MP_INSTALLATION_ID")
        .env_remove("MP_RECEIPT_KEY");
    match auth {
        Auth::Token => {
            command.env("MP_GITHUB_TOKEN", "ghp_doctor");
        }
        Auth::App => {
            command
                .env("MP_APP_ID", "1")
                .env("MP_APP_PRIVATE_KEY_PATH", app_key());
        }
    }
    if receipt_key {
        command.env("MP_RECEIPT_KEY", "doctor-receipt-key");
    }
    let output = command.output().expect("mp doctor runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("one JSON document ({e}): {text}"))
}

/// The names of the checks with `status`.
fn named(doc: &Value, status: &str) -> BTreeSet<String> {
    doc["checks"]
        .as_array()
        .expect("a check list")
        .iter()
        .filter(|c| c["status"] == status)
        .filter_map(|c| c["name"].as_str().map(str::to_owned))
        .collect()
}

/// The check named `name`.
fn check<'d>(doc: &'d Value, name: &str) -> &'d Value {
    doc["checks"]
        .as_array()
        .expect("a check list")
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check {name} in {doc}"))
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}

/// A deployment of our own: a governance repository with a workflow that runs mp, `own/app`
/// and `own/lib`, each with a green `test` from GitHub Actions. `permissions` is the world's
/// `app_permissions` line (empty for what mp needs); `lib_installed` says whether the App is
/// installed on `own/lib`.
fn own_world(permissions: &str, lib_installed: bool, merge_enabled: bool) -> String {
    format!(
        r#"now: 2026-11-29T12:00:00Z
bot: own-gate
{permissions}
config:
  files:
    owner.yml: |
      github_login: alice
    projects.yml: |
      governance_repo: own/governance
      supervised_repos: [own/app, own/lib]
    env.yml: |
      bot_app_slug: own-gate
      required_checks: [test]
      merge_enabled: {merge_enabled}
repos:
  - name: own/governance
    commits: [{{id: g1, message: "Initial", author: alice, date: 2026-11-20T09:00:00Z}}]
    branches: {{main: g1}}
    files:
      .github/workflows/mp.yml: |
        on: {{schedule: [{{cron: "*/5 * * * *"}}]}}
        concurrency: {{group: mp-tick, cancel-in-progress: false}}
        jobs:
          tick:
            runs-on: ubuntu-latest
            steps:
              - run: mp tick --config config
  - name: own/app
    commits:
      - {{id: a1, message: "Initial", author: alice, date: 2026-11-20T09:00:00Z, checks: [{{name: test, app: github-actions}}]}}
    branches: {{main: a1}}
  - name: own/lib
    app_installed: {lib_installed}
    default_branch: trunk
    commits:
      - {{id: l1, message: "Initial", author: alice, date: 2026-11-20T09:00:00Z, checks: [{{name: test, app: github-actions}}]}}
    branches: {{trunk: l1}}
"#
    )
}

/// Serves `world` (text) from `dir`, with the fault script `faults` when not empty.
fn serve_text(
    world: &str,
    faults: &str,
    dir: &Path,
) -> (crate::rest::Served, String, std::path::PathBuf) {
    let path = dir.join("world.yaml");
    std::fs::write(&path, world).expect("the world file is written");
    let script = dir.join("faults.txt");
    std::fs::write(&script, faults).expect("the fault script is written");
    let extra: Vec<&std::ffi::OsStr> = if faults.is_empty() {
        Vec::new()
    } else {
        vec!["--faults".as_ref(), script.as_os_str()]
    };
    serve_world(&path, dir, &extra)
}

#[test]
fn the_demo_fails_only_on_its_example_names_and_labels_until_they_are_created() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let (_served, url, config) = serve_demo(dir.path());
    let (code, out) = doctor(&url, &config, &Auth::Token, true, &["--format", "json"]);
    let doc = json(&out);
    assert_eq!(code, 1, "{out}");
    assert_eq!(doc["ok"], false);
    // The demo's names are the small-team example's (acme/...), and its repositories have
    // only the labels their pull requests carry.
    assert_eq!(
        named(&doc, "fail"),
        set(&[
            "placeholders",
            "labels:acme/governance",
            "labels:acme/webapp",
            "labels:acme/infra",
        ]),
        "{out}"
    );
    // acme/infra's main has no `test` run, the demo's governance repository holds no
    // workflow, the demo binds no required check to a workflow file (C2 is forgeable by
    // any workflow an agent pushes, decisions/0047), and no ruleset protects acme/infra's
    // main (acme/webapp's main and bot-state have theirs).
    assert_eq!(
        named(&doc, "warn"),
        set(&[
            "required_checks:acme/infra",
            "check_provenance:acme/webapp",
            "check_provenance:acme/infra",
            "branch_rules:acme/infra",
            "workflow_concurrency",
        ]),
        "{out}"
    );
    assert_eq!(check(&doc, "branch_rules:acme/webapp")["status"], "ok");
    assert_eq!(check(&doc, "bot_state_rules")["status"], "ok");
    assert!(
        check(&doc, "branch_rules:acme/infra")["detail"]
            .as_str()
            .is_some_and(|d| d.contains("acme/infra@main") && d.contains("non_fast_forward")),
        "{out}"
    );
    assert!(
        check(&doc, "placeholders")["detail"]
            .as_str()
            .is_some_and(|d| d.contains("acme/governance") && d.contains("acme-merge-gate"))
    );
    let webapp = check(&doc, "labels:acme/webapp");
    assert!(
        webapp["detail"]
            .as_str()
            .is_some_and(|d| d.contains("decision:approved-A"))
    );
    assert_eq!(
        webapp["fix"],
        format!(
            "mp doctor --config {} --api-url {url} --create-labels (creates them)",
            config.display()
        )
    );
    assert!(
        check(&doc, "required_checks:acme/webapp")["detail"]
            .as_str()
            .is_some_and(|d| d.contains("test by github-actions"))
    );
    assert_eq!(check(&doc, "bot_state")["status"], "ok");
    assert_eq!(check(&doc, "credentials")["status"], "ok");

    // The fix runs as printed.
    let fix = webapp["fix"].as_str().expect("a fix");
    let (code, out) = run_fix(fix, &["--format", "json"], &Auth::Token, true);
    let created = json(&out);
    assert_eq!(code, 1, "the placeholders still fail: {out}");
    let made = created["created_labels"].as_array().expect("a list");
    assert!(made.len() > 20, "{out}");
    assert!(made.iter().all(|m| m["error"].is_null()), "{out}");
    assert!(
        made.iter()
            .any(|m| m["repo"] == "acme/webapp" && m["label"] == "decision:approved-A")
    );
    assert_eq!(named(&created, "fail"), set(&["placeholders"]), "{out}");

    let (code, out) = doctor(&url, &config, &Auth::Token, true, &[]);
    assert_eq!(code, 1);
    assert!(
        out.contains("✓ labels:acme/webapp: acme/webapp has the 6 labels mp uses"),
        "{out}"
    );
    assert!(out.contains("✗ placeholders:"), "{out}");
    assert!(out.contains("! workflow_concurrency:"), "{out}");
    assert!(
        !out.contains("created the label"),
        "a second run creates nothing: {out}"
    );
}

#[test]
fn an_app_missing_a_permission_and_a_repository_without_it_fail_naming_them() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let world = own_world(
        "app_permissions: {contents: write, pull_requests: write, checks: read, metadata: read}",
        false,
        true,
    );
    let (_served, url, config) = serve_text(&world, "", dir.path());
    let (code, out) = doctor(&url, &config, &Auth::App, false, &["--format", "json"]);
    assert_eq!(code, 1, "{out}");
    let doc = json(&out);
    assert_eq!(
        named(&doc, "fail"),
        set(&[
            "installation:own/governance",
            "installation:own/app",
            "installation:own/lib",
            "labels:own/governance",
            "labels:own/app",
            "receipt_key",
        ]),
        "{out}"
    );
    let governance = check(&doc, "installation:own/governance");
    assert!(
        governance["detail"]
            .as_str()
            .is_some_and(|d| d.contains("Issues: write (not granted)")),
        "{out}"
    );
    assert!(
        governance["fix"]
            .as_str()
            .is_some_and(|f| f.contains("Permissions & events"))
    );
    let lib = check(&doc, "installation:own/lib");
    assert!(
        lib["detail"]
            .as_str()
            .is_some_and(|d| d.contains("not installed on own/lib")),
        "{out}"
    );
    assert!(
        lib["fix"]
            .as_str()
            .is_some_and(|f| f.contains("apps/own-gate/installations/new"))
    );
    // An unreachable repository gets no later checks.
    assert!(
        !doc["checks"]
            .as_array()
            .expect("checks")
            .iter()
            .any(|c| c["name"] == "labels:own/lib" || c["name"] == "default_branch:own/lib")
    );
    assert_eq!(
        check(&doc, "credentials")["detail"],
        "the GitHub App own-gate (MP_APP_ID)"
    );
    assert_eq!(check(&doc, "placeholders")["status"], "ok");
    assert_eq!(check(&doc, "workflow_concurrency")["status"], "ok");
    // The App may write contents: the first tick creates bot-state.
    let bot_state = check(&doc, "bot_state");
    assert_eq!(bot_state["status"], "ok");
    assert!(
        bot_state["detail"]
            .as_str()
            .is_some_and(|d| d.contains("first tick"))
    );
}

#[test]
fn a_deployment_with_everything_in_place_passes_once_its_labels_exist() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let (_served, url, config) = serve_text(&own_world("", true, false), "", dir.path());
    let (code, out) = doctor(&url, &config, &Auth::App, true, &["--create-labels"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("+ created the label ready-to-merge in own/app"),
        "{out}"
    );
    let (code, out) = doctor(&url, &config, &Auth::App, true, &[]);
    assert_eq!(code, 0, "{out}");
    for line in [
        "✓ config: the configuration loads",
        "✓ credentials: the GitHub App own-gate (MP_APP_ID)",
        "✓ installation:own/lib: the App is installed on own/lib with the permissions mp needs",
        "✓ default_branch:own/lib: own/lib: trunk (GitHub's default branch)",
        "✓ labels:own/governance:",
        "✓ required_checks:own/lib: own/lib: test by github-actions (on the last 1 commits)",
        "✓ receipt_key: MP_RECEIPT_KEY is set: receipts are signed",
        "✓ workflow_concurrency: .github/workflows/mp.yml runs mp with a concurrency guard",
    ] {
        assert!(out.contains(line), "{line} in:\n{out}");
    }
    assert!(!out.contains('✗') && !out.contains("+ created"), "{out}");
}

#[test]
fn an_invalid_configuration_fails_before_any_call_and_lists_its_problems() {
    let dir = tempfile::tempdir().expect("a temp dir");
    std::fs::write(dir.path().join("owner.yml"), "github_login: alice\n").expect("written");
    std::fs::write(dir.path().join("env.yml"), "bot_app_slug: [not, a, slug]\n").expect("written");
    // No server: a valid configuration would need one.
    let (code, out) = doctor(
        "http://127.0.0.1:9",
        dir.path(),
        &Auth::Token,
        false,
        &["--format", "json"],
    );
    assert_eq!(code, 1, "{out}");
    let doc = json(&out);
    assert_eq!(doc["ok"], false);
    let config = check(&doc, "config");
    assert_eq!(config["status"], "fail");
    assert!(
        config["detail"]
            .as_str()
            .is_some_and(|d| d.contains("projects.yml")),
        "{out}"
    );
}

#[test]
fn no_credentials_exit_2_and_no_configuration_exits_5() {
    mp().args(["doctor", "--config"])
        .arg(workspace_root().join("examples/solo-developer"))
        .env_remove("MP_GITHUB_TOKEN")
        .env_remove("MP_APP_ID")
        .env_remove("MP_APP_PRIVATE_KEY")
        .env_remove("MP_APP_PRIVATE_KEY_PATH")
        .assert()
        .code(2)
        .stderr(predicates::str::contains("MP_GITHUB_TOKEN"));
    let empty = tempfile::tempdir().expect("a temp dir");
    mp().args(["doctor", "--config"])
        .arg(empty.path())
        .env("MP_GITHUB_TOKEN", "ghp_doctor")
        .assert()
        .code(5)
        .stderr(predicates::str::contains("not configured"));
}

#[test]
fn credentials_github_refuses_or_another_app_fail() {
    let dir = tempfile::tempdir().expect("a temp dir");
    // GitHub refuses the token on its first read: "Bad credentials".
    let (_served, url, config) = serve_text(
        &own_world("", true, false),
        "GET /repos/{o}/{r} #* status 401\n",
        dir.path(),
    );
    let (code, out) = doctor(&url, &config, &Auth::Token, false, &["--format", "json"]);
    assert_eq!(code, 1, "{out}");
    let doc = json(&out);
    let credentials = check(&doc, "credentials");
    assert_eq!(credentials["status"], "fail", "{out}");
    assert!(
        credentials["detail"]
            .as_str()
            .is_some_and(|d| d.contains("does not work") && d.contains("401")),
        "{out}"
    );

    // The App is own-gate; env.yml names another.
    let other = tempfile::tempdir().expect("a temp dir");
    let world =
        own_world("", true, false).replace("bot_app_slug: own-gate", "bot_app_slug: another-gate");
    let (_served, url, config) = serve_text(&world, "", other.path());
    let (code, out) = doctor(&url, &config, &Auth::App, false, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(
            "✗ credentials: MP_APP_ID is the App own-gate, but env.yml bot_app_slug is another-gate"
        ),
        "{out}"
    );
    assert!(
        out.contains("fix: set bot_app_slug: own-gate in env.yml"),
        "{out}"
    );
}

#[test]
fn a_label_spelled_in_another_case_fails_as_the_gate_would_and_the_printed_fix_renames_it() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let world = own_world("", true, false).replace(
        "    branches: {main: a1}\n",
        "    branches: {main: a1}\n    labels:\n      - {name: Ready-To-Merge}\n",
    );
    assert!(
        world.contains("Ready-To-Merge"),
        "the world names the label"
    );
    let (_served, url, config) = serve_text(&world, "", dir.path());
    let (code, out) = doctor(&url, &config, &Auth::App, false, &["--format", "json"]);
    assert_eq!(code, 1, "{out}");
    let doc = json(&out);
    let app = check(&doc, "labels:own/app");
    assert_eq!(app["status"], "fail", "{out}");
    assert!(
        app["detail"]
            .as_str()
            .is_some_and(|d| d.contains("`Ready-To-Merge` (mp reads `ready-to-merge`)")),
        "{out}"
    );
    let fix = app["fix"].as_str().expect("a fix");
    let (_, out) = run_fix(fix, &[], &Auth::App, false);
    assert!(
        out.contains("+ renamed the label Ready-To-Merge to ready-to-merge in own/app"),
        "{out}"
    );
    let (code, out) = doctor(&url, &config, &Auth::App, false, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("✓ labels:own/app:"), "{out}");
}

#[test]
fn the_environment_holding_the_app_key_must_admit_only_the_default_branch() {
    // The governance workflow reads the App's key through the environment `mp`.
    let with_key = |branches: &str| {
        own_world("", true, false)
            .replace(
                "          tick:\n            runs-on: ubuntu-latest\n",
                "          tick:\n            runs-on: ubuntu-latest\n            environment: mp\n            env:\n              MP_APP_PRIVATE_KEY: ${{ secrets.MP_APP_PRIVATE_KEY }}\n",
            )
            .replace(
                "    branches: {main: g1}\n",
                &format!("    branches: {{main: g1}}\n    environments:\n      - {{name: mp, branches: {branches}}}\n"),
            )
    };
    for (branches, status, words) in [
        (
            "[main]",
            "ok",
            "environment `mp`: deployments from `main` only; no required reviewers",
        ),
        ("any", "warn", "any branch may deploy to it"),
        (
            "[main, 'agent/*']",
            "warn",
            "also admit `agent/*` besides `main`",
        ),
    ] {
        let dir = tempfile::tempdir().expect("a temp dir");
        let world = with_key(branches);
        assert!(world.contains("environment: mp") && world.contains("environments:"));
        let (_served, url, config) = serve_text(&world, "", dir.path());
        let (_, out) = doctor(&url, &config, &Auth::App, false, &["--format", "json"]);
        let doc = json(&out);
        let found = check(&doc, "app_key_environment:mp");
        assert_eq!(found["status"], status, "{branches}: {out}");
        assert!(
            found["detail"].as_str().is_some_and(|d| d.contains(words)),
            "{branches}: {out}"
        );
        assert_eq!(check(&doc, "app_key_environment")["status"], "ok", "{out}");
    }
}

/// A `bot-state` branch someone made by hand, without the state file: the tick would stop
/// with exit 3, so doctor fails with the tick's own reason instead of passing it.
#[test]
fn a_hand_made_bot_state_branch_fails_as_the_tick_would() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let world = own_world("", true, false).replacen(
        "branches: {main: g1}",
        "branches: {main: g1, bot-state: g1}",
        1,
    );
    let (_served, url, config) = serve_text(&world, "", dir.path());
    let (code, out) = doctor(&url, &config, &Auth::App, true, &["--format", "json"]);
    let doc = json(&out);
    assert_eq!(code, 1, "{out}");
    assert_eq!(check(&doc, "bot_state")["status"], "ok");
    let load = check(&doc, "bot_state_load");
    assert_eq!(load["status"], "fail", "{out}");
    assert!(
        load["detail"]
            .as_str()
            .is_some_and(|d| d.contains("exit 3") && d.contains("has no state file")),
        "{out}"
    );
    assert!(
        load["fix"]
            .as_str()
            .is_some_and(|f| f.contains("Recovering the state")),
        "{out}"
    );
}

#[test]
fn doctor_recommends_github_queue_mode_where_a_merge_queue_protects_the_branch() {
    let dir = tempfile::tempdir().expect("a temp dir");
    // own/app's main is behind GitHub's merge queue in direct mode; own/lib is in
    // github-queue mode without a queue on trunk.
    let world = own_world("", true, true)
        .replace(
            "      supervised_repos: [own/app, own/lib]\n",
            "      supervised_repos: [own/app, own/lib]\n      repo_overrides:\n        own/lib:\n          merge:\n            mode: github-queue\n",
        )
        .replace(
            "    branches: {main: a1}\n",
            "    branches: {main: a1}\n    branch_rules:\n      main: [deletion, non_fast_forward, pull_request]\n    merge_queues:\n      main: {merge_method: SQUASH, grouping_strategy: HEADGREEN}\n",
        );
    let (_served, url, config) = serve_text(&world, "", dir.path());
    let (_, out) = doctor(&url, &config, &Auth::App, true, &["--format", "json"]);
    let doc = json(&out);
    // The queue's rule is among the rules read over REST (with its parameters).
    assert!(
        check(&doc, "branch_rules:own/app")["detail"]
            .as_str()
            .is_some_and(|d| d.contains("merge_queue")),
        "{out}"
    );
    let app = check(&doc, "merge_queue:own/app");
    assert_eq!(app["status"], "warn", "{out}");
    assert_eq!(
        app["fix"],
        "set the mode in projects.yml: repo_overrides: {own/app: {merge: {mode: github-queue}}} (docs/queue.md, \"GitHub's merge queue\")"
    );
    let lib = check(&doc, "merge_queue:own/lib");
    assert_eq!(lib["status"], "warn", "{out}");
    assert!(
        lib["detail"]
            .as_str()
            .is_some_and(|d| d.contains("no merge queue protects own/lib@trunk")),
        "{out}"
    );
    // The governance repository has neither a queue nor the mode: no line.
    assert!(
        !doc["checks"]
            .as_array()
            .expect("a check list")
            .iter()
            .any(|c| c["name"] == "merge_queue:own/governance"),
        "{out}"
    );
}
