//! `mp tick` through the REST client: a world over the loopback server, the HTTP cache
//! between runs, a live-mode tick against `mp dev serve-world`, and missing credentials.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use predicates::prelude::*;
use serde_json::Value;

use crate::{mp, workspace_root};

fn demo() -> std::path::PathBuf {
    workspace_root().join("fixtures/worlds/demo.yaml")
}

fn tick_json(args: &[&str]) -> Value {
    let assert = mp()
        .args(["tick", "--format", "json"])
        .args(args)
        .env_remove("MP_API_URL")
        .assert()
        .success();
    serde_json::from_slice(&assert.get_output().stdout).expect("one JSON document")
}

#[test]
fn the_demo_through_rest_writes_what_the_in_memory_run_writes() {
    let world = demo();
    let world = world.to_str().expect("a UTF-8 path");
    let memory = tick_json(&["--world", world]);
    let rest = tick_json(&["--world", world, "--adapter", "rest"]);
    assert_eq!(rest["writes"], memory["writes"]);
    assert_eq!(rest["outcomes"], memory["outcomes"]);
    assert!(memory.get("http").is_none(), "no HTTP in memory");
    let requests = rest["http"]["requests"].as_u64().expect("a request count");
    let calls: u64 = rest["calls"]
        .as_object()
        .expect("calls")
        .values()
        .filter_map(Value::as_u64)
        .sum();
    assert_eq!(requests, calls, "calls are the requests per route");
}

#[test]
fn a_rest_tick_reads_over_graphql_and_reports_both_budgets() {
    let world = demo();
    let world = world.to_str().expect("a UTF-8 path");
    let rest = tick_json(&["--world", world, "--adapter", "rest"]);
    let queries = rest["calls"]["POST /graphql"].as_u64().unwrap_or(0);
    assert!(
        queries > 0,
        "the default read path is GraphQL: {}",
        rest["calls"]
    );
    let left = rest["http"]["graphql_remaining"]
        .as_u64()
        .expect("points left");
    assert!(left < 5_000, "the queries spent points: {left}");
    assert_eq!(
        rest["metrics"]["graphql_remaining"],
        rest["http"]["graphql_remaining"]
    );
    assert_eq!(rest["http"]["graphql_fallbacks"], serde_json::json!([]));
    mp().args(["tick", "--adapter", "rest", "--world", world])
        .assert()
        .success()
        .stdout(predicates::str::contains(format!(
            "GraphQL points left {left}"
        )));
}

#[test]
fn a_failed_graphql_query_falls_back_to_rest_with_a_warning_and_approvals_fail_closed() {
    // Every GraphQL query fails: the pull requests are listed and read over REST instead,
    // with a warning per repository. GitHub's record of a label (when it was created and
    // last edited, decisions/0048) exists only in GraphQL, so no approval label can be
    // shown unrenamed: every pull request carrying one is skipped naming the query, and
    // nothing is written to it.
    let dir = tempfile::tempdir().expect("a temp dir");
    let faults = dir.path().join("faults");
    std::fs::write(&faults, "POST /graphql #* graphql-error\n").expect("write");
    let world = demo();
    let world = world.to_str().expect("a UTF-8 path");
    let faults = faults.to_str().expect("a UTF-8 path");
    let failing = tick_json(&["--world", world, "--adapter", "rest", "--faults", faults]);
    let fallbacks = failing["http"]["graphql_fallbacks"]
        .as_array()
        .expect("a list");
    assert!(!fallbacks.is_empty(), "every query failed");
    let warned = failing["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .filter_map(Value::as_str)
        .filter(|w| w.starts_with("graphql fallback: ") && w.contains("read over REST"))
        .count();
    assert_eq!(warned, fallbacks.len(), "{}", failing["warnings"]);
    let outcomes = failing["outcomes"].as_array().expect("outcomes");
    assert!(!outcomes.is_empty());
    for outcome in outcomes {
        assert_eq!(outcome["action"], "skipped", "{outcome}");
        assert!(
            outcome["detail"]
                .as_str()
                .is_some_and(|d| d.contains("POST /graphql")),
            "{outcome}"
        );
    }
    let pr_writes = failing["writes"]
        .as_array()
        .expect("writes")
        .iter()
        .filter(|w| {
            matches!(
                w["action"].as_str(),
                Some("merge_pull" | "add_labels" | "create_comment" | "update_branch")
            )
        })
        .count();
    assert_eq!(pr_writes, 0, "{}", failing["writes"]);
}

#[test]
fn a_corrupt_http_cache_is_a_warning_and_an_empty_cache() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let cache = dir.path().join("http.json");
    std::fs::write(&cache, "{ not json").expect("write");
    mp().args(["tick", "--dry-run", "--adapter", "rest", "--world"])
        .arg(demo())
        .arg("--http-cache")
        .arg(&cache)
        .assert()
        .success()
        .stderr(predicates::str::contains("warning"));
    let text = std::fs::read_to_string(&cache).expect("rewritten");
    serde_json::from_str::<Value>(&text).expect("a valid cache file afterwards");
}

#[test]
fn a_live_tick_without_credentials_exits_2_naming_the_variables() {
    mp().args(["tick", "--config"])
        .arg(workspace_root().join("examples/solo-developer"))
        .env_remove("MP_GITHUB_TOKEN")
        .env_remove("MP_APP_ID")
        .env_remove("MP_APP_PRIVATE_KEY")
        .env_remove("MP_APP_PRIVATE_KEY_PATH")
        .assert()
        .code(2)
        .stderr(
            predicates::str::contains("MP_GITHUB_TOKEN")
                .and(predicates::str::contains("MP_APP_ID")),
        );
}

/// `mp dev serve-world`, killed on drop, with the reader of its standard output.
pub(crate) struct Served(
    Child,
    Option<std::io::Lines<BufReader<std::process::ChildStdout>>>,
);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Serves the demo world and writes its configuration into `dir/config`; returns the
/// server, its URL and the configuration directory.
pub(crate) fn serve_demo(dir: &std::path::Path) -> (Served, String, std::path::PathBuf) {
    serve_world(&demo(), dir, &[])
}

/// Serves the world file `world` (with `extra` arguments of `mp dev serve-world`, e.g.
/// `--faults FILE`) and writes its configuration into `dir/config`; returns the server, its
/// URL and the configuration directory.
pub(crate) fn serve_world(
    world: &std::path::Path,
    dir: &std::path::Path,
    extra: &[&std::ffi::OsStr],
) -> (Served, String, std::path::PathBuf) {
    let config = dir.join("config");
    let child = Command::new(assert_cmd::cargo::cargo_bin!("mp"))
        .args(["dev", "serve-world"])
        .arg(world)
        .args(extra)
        .arg("--config-out")
        .arg(&config)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("mp dev serve-world starts");
    let mut served = Served(child, None);
    let stdout = served.0.stdout.take().expect("piped stdout");
    // The reader lives as long as the server: a closed pipe would stop it.
    let mut lines = BufReader::new(stdout).lines();
    let first = lines.next().expect("a first line").expect("readable");
    served.1 = Some(lines);
    let url = first
        .rsplit(' ')
        .next()
        .filter(|u| u.starts_with("http://127.0.0.1:"))
        .unwrap_or_else(|| panic!("no URL in {first:?}"))
        .to_owned();
    (served, url, config)
}

/// `mp tick --config DIR --api-url URL --format json` with a token, plus `extra`.
pub(crate) fn live_tick(url: &str, config: &std::path::Path, extra: &[&str]) -> (Value, String) {
    let assert = mp()
        .args(["tick", "--format", "json", "--api-url", url, "--config"])
        .arg(config)
        .args(extra)
        .env("MP_GITHUB_TOKEN", "ghs_LIVESENTINEL")
        .env_remove("MP_APP_ID")
        .assert()
        .success();
    let output = assert.get_output();
    let doc = serde_json::from_slice(&output.stdout).expect("one JSON document");
    (doc, String::from_utf8_lossy(&output.stdout).into_owned())
}

#[test]
fn the_http_cache_file_turns_unchanged_reads_into_free_304s() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let (_served, url, config) = serve_demo(dir.path());
    let cache = dir.path().join("http.json");
    let cache = cache.to_str().expect("a UTF-8 path");
    let args = ["--dry-run", "--http-cache", cache];
    let (cold, _) = live_tick(&url, &config, &args);
    let cold_304 = cold["http"]["not_modified"].as_u64().expect("a count");
    let (warm, _) = live_tick(&url, &config, &args);
    let not_modified = warm["http"]["not_modified"].as_u64().expect("a count");
    let requests = warm["http"]["requests"].as_u64().expect("a count");
    // Within one tick only repeated reads (main before each merge) can be 304; with the
    // cache file, every unchanged resource is.
    assert!(
        not_modified > cold_304 + 20,
        "cold {}, warm {}",
        cold["http"],
        warm["http"]
    );
    assert_eq!(
        warm["http"]["rate_limited_requests"].as_u64(),
        Some(requests - not_modified)
    );
    assert_eq!(
        warm["writes"], cold["writes"],
        "the cache changes no decision"
    );
}

#[test]
fn a_live_tick_against_a_served_world_merges_like_the_world_tick() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let (_served, url, config) = serve_demo(dir.path());
    let (live, text) = live_tick(&url, &config, &[]);
    assert!(!text.contains("LIVESENTINEL"), "the token leaked: {text}");
    let actions = |doc: &Value| -> Vec<(String, String)> {
        doc["outcomes"]
            .as_array()
            .expect("outcomes")
            .iter()
            .map(|o| (o["pr"].to_string(), o["action"].to_string()))
            .collect()
    };
    let world = demo();
    let world_tick = tick_json(&["--world", world.to_str().expect("a UTF-8 path")]);
    assert_eq!(actions(&live), actions(&world_tick));
    assert!(live["http"]["requests"].as_u64().is_some_and(|n| n > 0));
    let lines: Vec<&str> = live["writes"]
        .as_array()
        .expect("writes")
        .iter()
        .filter_map(|w| w["line"].as_str())
        .collect();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("merged acme/webapp#1 pinned to head")),
        "the accepted writes are listed: {lines:?}"
    );
}

/// A live tick reads the system clock, and `mp dev serve-world` (on the system clock by
/// default) dates the squash commits it makes now: the live tick opens exactly the issues
/// the world tick opens, and no post-merge incident on mp's own fresh merges.
#[test]
fn a_live_tick_opens_the_issues_the_world_tick_opens() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let (_served, url, config) = serve_demo(dir.path());
    let (live, _) = live_tick(&url, &config, &[]);
    let live_titles: Vec<String> = live["writes"]
        .as_array()
        .expect("writes")
        .iter()
        .filter_map(|w| w["line"].as_str())
        .filter_map(|l| l.strip_prefix("opened an issue in "))
        .map(str::to_owned)
        .collect();
    let world = demo();
    let world_tick = tick_json(&["--world", world.to_str().expect("a UTF-8 path")]);
    let world_titles: Vec<String> = world_tick["writes"]
        .as_array()
        .expect("writes")
        .iter()
        .filter(|w| w["action"] == "create_issue")
        .map(|w| {
            format!(
                "{} [{}]: {}",
                w["repo"].as_str().unwrap_or_default(),
                w["labels"][0].as_str().unwrap_or_default(),
                w["title"].as_str().unwrap_or_default()
            )
        })
        .collect();
    assert!(!world_titles.is_empty());
    assert_eq!(live_titles, world_titles);
}

/// The pull-request writes of a live tick's JSON, in order, and its outcomes (pull
/// request, action, quadrant: the SHA of a squash commit only GitHub knows).
fn pull_request_plan(doc: &Value) -> (Vec<String>, Vec<(String, String, String)>) {
    let pr_writes = [
        "add_labels",
        "remove_label",
        "create_comment",
        "update_comment",
        "merge_pull",
        "update_branch",
    ];
    let writes = doc["writes"]
        .as_array()
        .expect("writes")
        .iter()
        .map(|w| w["action"].as_str().expect("an action").to_owned())
        .filter(|a| pr_writes.contains(&a.as_str()))
        .collect();
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let outcomes = doc["outcomes"]
        .as_array()
        .expect("outcomes")
        .iter()
        .map(|o| (text(&o["pr"]), text(&o["action"]), text(&o["quadrant"])))
        .collect();
    (writes, outcomes)
}

#[test]
fn a_live_dry_run_plans_what_the_tick_does_on_github() {
    // Two servers of the same world: one for the dry run, one for the real tick.
    let dry_dir = tempfile::tempdir().expect("a temp dir");
    let (_dry_served, dry_url, dry_config) = serve_demo(dry_dir.path());
    let (dry, _) = live_tick(&dry_url, &dry_config, &["--dry-run"]);
    let real_dir = tempfile::tempdir().expect("a temp dir");
    let (_real_served, real_url, real_config) = serve_demo(real_dir.path());
    let (real, _) = live_tick(&real_url, &real_config, &[]);
    let planned = pull_request_plan(&dry);
    let done = pull_request_plan(&real);
    // The inbox's approval label counts for the gate in the same tick, as on GitHub.
    assert!(
        planned.0.iter().filter(|a| *a == "merge_pull").count() >= 2,
        "{planned:?}"
    );
    assert_eq!(planned, done);
    // The dry run wrote nothing: the world still plans the same.
    let (again, _) = live_tick(&dry_url, &dry_config, &["--dry-run"]);
    assert_eq!(pull_request_plan(&again), planned);
}

/// `mp explain --config DIR --api-url URL` reads the pull request live through the REST
/// client and says exactly what `mp explain --world` says of the same world, for every
/// open pull request of the demo, in JSON.
#[test]
fn a_live_explain_says_what_the_world_explain_says() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let (_served, url, config) = serve_demo(dir.path());
    let explain = |source: &[&std::ffi::OsStr], pr: &str| -> serde_json::Value {
        let output = mp()
            .arg("explain")
            .args(source)
            .args(["--now", "2026-11-29T12:00:00Z", "--format", "json", pr])
            .env("MP_GITHUB_TOKEN", "ghp_explain")
            .env_remove("MP_APP_ID")
            .env_remove("MP_RECEIPT_KEY")
            .env_remove("MP_API_URL")
            .output()
            .expect("mp explain runs");
        assert!(
            output.status.success(),
            "{pr}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).expect("one JSON document")
    };
    let world = demo();
    let live: Vec<&std::ffi::OsStr> = vec![
        "--config".as_ref(),
        config.as_os_str(),
        "--api-url".as_ref(),
        url.as_ref(),
    ];
    for pr in [
        "acme/webapp#1",
        "acme/webapp#2",
        "acme/webapp#4",
        "acme/webapp#5",
    ] {
        let offline = explain(&["--world".as_ref(), world.as_os_str()], pr);
        let online = explain(&live, pr);
        assert_eq!(online, offline, "{pr}");
        assert!(
            offline["gate"].as_array().is_some_and(|g| !g.is_empty()),
            "{pr}"
        );
    }
}

/// Credentials GitHub refuses ("Bad credentials", 401 on the first read) are invalid
/// credentials: exit 2 as docs/cli.md says, not a tick that failed closed (3); with
/// `--format json` the report on stdout says why.
#[test]
fn credentials_github_refuses_exit_2() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let faults = dir.path().join("faults.txt");
    std::fs::write(&faults, "GET /user #* status 401\n").expect("written");
    let (_served, url, config) = serve_world(
        &demo(),
        dir.path(),
        &["--faults".as_ref(), faults.as_os_str()],
    );
    let output = mp()
        .args(["tick", "--format", "json", "--config"])
        .arg(&config)
        .args(["--api-url", &url])
        .env("MP_GITHUB_TOKEN", "ghp_refused")
        .env_remove("MP_APP_ID")
        .output()
        .expect("mp tick runs");
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("GitHub refused the credentials"),
        "{stderr}"
    );
    let doc: Value = serde_json::from_slice(&output.stdout).expect("a JSON report");
    assert!(
        doc["failed"].as_str().is_some_and(|f| f.contains("401")),
        "{doc}"
    );
}

/// `--format json` puts one JSON object on stdout for exits 2 and 5 too (the reason is on
/// stderr as well).
#[test]
fn errors_are_json_on_stdout_when_json_is_asked_for() {
    let empty = tempfile::tempdir().expect("a temp dir");
    for (args, code) in [
        (vec!["tick", "--format", "json", "--config"], 5),
        (vec!["tick", "--format=json", "--world"], 2),
    ] {
        let output = mp()
            .args(&args)
            .arg(empty.path())
            .env_remove("MP_GITHUB_TOKEN")
            .env_remove("MP_APP_ID")
            .output()
            .expect("mp runs");
        assert_eq!(output.status.code(), Some(code), "{args:?}: {output:?}");
        let doc: Value = serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: one JSON object ({e}): {output:?}"));
        assert_eq!(doc["exit_code"], code, "{doc}");
        assert!(
            doc["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{doc}"
        );
    }
}
