//! `mp dev capture` against the loopback GitHub: the captured world replays what a live
//! dry-run tick decides, the capture only reads, and its refusals write nothing.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

use mp_github_fake::{FaultScript, LoopbackServer, ServerClock};
use serde_json::Value;

use crate::{mp, workspace_root};

/// The token every run here uses; it must never reach the world file.
const TOKEN: &str = "ghs_CAPTURESENTINEL";

/// A world served in this process (so its request log can be read), with its
/// configuration written to `dir/config`.
struct Served {
    server: LoopbackServer,
    url: String,
    config: PathBuf,
    // The server's tasks run on it; dropped last.
    _runtime: tokio::runtime::Runtime,
}

fn serve(world: &Path, dir: &Path) -> Served {
    let world = mp_github_fake::load_world(world).expect("the world loads");
    let config = dir.join("config");
    std::fs::create_dir_all(&config).expect("a config dir");
    for (name, text) in &world.config {
        std::fs::write(config.join(name), text).expect("a config file");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    let server = runtime
        .block_on(LoopbackServer::bind_with_clock(
            world,
            FaultScript::default(),
            SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            ServerClock::Real,
        ))
        .expect("the loopback server starts");
    Served {
        url: server.base_url(),
        server,
        config,
        _runtime: runtime,
    }
}

fn demo() -> PathBuf {
    workspace_root().join("fixtures/worlds/demo.yaml")
}

/// `mp` with the token and nothing else of the environment's GitHub settings.
fn mp_live() -> assert_cmd::Command {
    let mut command = mp();
    command
        .env("MP_GITHUB_TOKEN", TOKEN)
        .env_remove("MP_APP_ID")
        .env_remove("MP_API_URL")
        .env_remove("MP_RECEIPT_KEY");
    command
}

fn json_of(output: &std::process::Output) -> Value {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("one JSON document")
}

/// A line with every run of seven or more hex digits replaced: the SHAs a dry run makes up
/// for a planned merge differ between the adapters, the decision does not.
fn masked(line: &str) -> String {
    let mut out = String::new();
    let mut run = String::new();
    let flush = |run: &mut String, out: &mut String| {
        if run.len() >= 7 {
            out.push_str("<sha>");
        } else {
            out.push_str(run);
        }
        run.clear();
    };
    for c in line.chars() {
        if c.is_ascii_hexdigit() {
            run.push(c);
        } else {
            flush(&mut run, &mut out);
            out.push(c);
        }
    }
    flush(&mut run, &mut out);
    out
}

/// Per pull request: its action, quadrant and blocking reasons (SHAs masked).
fn decisions(tick: &Value) -> Vec<(String, String, String, Vec<String>)> {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    tick["outcomes"]
        .as_array()
        .expect("outcomes")
        .iter()
        .map(|o| {
            let blocking = o["blocking"]
                .as_array()
                .expect("blocking")
                .iter()
                .map(|b| masked(b.as_str().expect("a line")))
                .collect();
            (
                text(&o["pr"]),
                text(&o["action"]),
                text(&o["quadrant"]),
                blocking,
            )
        })
        .collect()
}

/// What `mp explain --format json` decides: route, quadrant, and each gate condition's
/// code and outcome.
fn explained(doc: &Value) -> Value {
    let gate: Vec<Value> = doc["gate"]
        .as_array()
        .expect("gate")
        .iter()
        .map(|r| serde_json::json!([r["condition"], r["code"], r["outcome"]]))
        .collect();
    serde_json::json!({"route": doc["route"], "quadrant": doc["quadrant"], "gate": gate})
}

#[test]
fn a_captured_world_replays_what_a_live_dry_run_decides() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let served = serve(&demo(), dir.path());
    let world = dir.path().join("captured.yaml");
    let summary = json_of(
        &mp_live()
            .args([
                "dev",
                "capture",
                "--format",
                "json",
                "--api-url",
                &served.url,
            ])
            .arg("--config")
            .arg(&served.config)
            .arg("--out")
            .arg(&world)
            .output()
            .expect("mp dev capture runs"),
    );

    // Read-only: only reads reached the server, and the world changed in nothing.
    let routes = served.server.requests();
    assert!(!routes.is_empty());
    for route in routes.keys() {
        assert!(
            route.starts_with("GET ") || route.starts_with("HEAD ") || route == "POST /graphql",
            "a capture makes no write: {route}"
        );
    }
    // `POST /graphql` carries queries, and the merge queue's two mutations (enqueue,
    // dequeue), which are writes the server's GitHub logs as actions: none, below.
    let documents = workspace_root().join("crates/mp-github/src/rest/graphql");
    for entry in std::fs::read_dir(&documents).expect("the GraphQL documents") {
        let path = entry.expect("an entry").path();
        let text = std::fs::read_to_string(&path).expect("a document");
        let operations: Vec<&str> = text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.starts_with(' ') && !l.trim().is_empty())
            .filter(|l| !l.starts_with('}'))
            .collect();
        assert!(
            !operations.is_empty()
                && operations.iter().all(|l| {
                    l.starts_with("query ")
                        || l.starts_with("mutation MpEnqueue(")
                        || l.starts_with("mutation MpDequeue(")
                }),
            "{}: {operations:?}",
            path.display()
        );
    }
    assert!(
        served.server.memory().actions().is_empty(),
        "no write was applied: {:?}",
        served.server.memory().actions()
    );
    let text = std::fs::read_to_string(&world).expect("the world was written");
    assert!(!text.contains(TOKEN), "no secret in the world");
    assert!(!text.contains("receipt_key"), "no receipt key in the world");

    // The summary counts what was recorded.
    let repos = summary["repos"].as_array().expect("repos");
    let names: Vec<&str> = repos.iter().filter_map(|r| r["repo"].as_str()).collect();
    assert_eq!(names, ["acme/webapp", "acme/infra", "acme/governance"]);
    assert_eq!(repos[0]["pulls"], 5);
    assert_eq!(repos[1]["pulls"], 2);
    assert!(repos[2]["issues"].as_u64() >= Some(1), "{summary}");
    assert!(repos[0]["check_runs"].as_u64() > Some(0), "{summary}");

    // A live dry run against the server and a dry run over the captured world decide
    // the same for every pull request.
    let live = json_of(
        &mp_live()
            .args([
                "tick",
                "--dry-run",
                "--format",
                "json",
                "--api-url",
                &served.url,
            ])
            .arg("--config")
            .arg(&served.config)
            .output()
            .expect("mp tick runs"),
    );
    let replay = json_of(
        &mp()
            .args(["tick", "--dry-run", "--format", "json", "--world"])
            .arg(&world)
            .env_remove("MP_RECEIPT_KEY")
            .output()
            .expect("mp tick runs"),
    );
    let live = decisions(&live);
    let actions: Vec<&str> = live.iter().map(|d| d.1.as_str()).collect();
    for varied in ["merged", "blocked", "inbox", "race-rebased"] {
        assert!(actions.contains(&varied), "{varied} in {live:?}");
    }
    assert_eq!(decisions(&replay), live);

    // So does `mp explain`, condition by condition.
    for pr in [
        "acme/webapp#1",
        "acme/webapp#3",
        "acme/webapp#4",
        "acme/webapp#5",
        "acme/infra#7",
    ] {
        let online = json_of(
            &mp_live()
                .args(["explain", "--format", "json", "--api-url", &served.url])
                .arg("--config")
                .arg(&served.config)
                .arg(pr)
                .output()
                .expect("mp explain runs"),
        );
        let offline = json_of(
            &mp()
                .args(["explain", "--format", "json", "--world"])
                .arg(&world)
                .arg(pr)
                .output()
                .expect("mp explain runs"),
        );
        assert_eq!(explained(&offline), explained(&online), "{pr}");
    }
}

/// `mp dev capture` with `args` (the token set), its exit code and stderr.
fn capture_fails(args: &[&std::ffi::OsStr], token: bool) -> (Option<i32>, String) {
    let mut command = mp_live();
    if !token {
        command.env_remove("MP_GITHUB_TOKEN");
    }
    let output = command
        .args(["dev", "capture"])
        .args(args)
        .output()
        .expect("mp dev capture runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// `mp dev capture` of the served world into `out`; its JSON summary must parse.
fn capture(served: &Served, out: &Path) -> Value {
    json_of(
        &mp_live()
            .args([
                "dev",
                "capture",
                "--format",
                "json",
                "--api-url",
                &served.url,
            ])
            .arg("--config")
            .arg(&served.config)
            .arg("--out")
            .arg(out)
            .output()
            .expect("mp dev capture runs"),
    )
}

/// Captures `world` served over the loopback GitHub, then asserts that a dry run over the
/// captured world decides for every pull request what a live dry run decides.
fn assert_replays(world: &Path) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let served = serve(world, dir.path());
    let captured = dir.path().join("captured.yaml");
    capture(&served, &captured);
    let live = json_of(
        &mp_live()
            .args([
                "tick",
                "--dry-run",
                "--format",
                "json",
                "--api-url",
                &served.url,
            ])
            .arg("--config")
            .arg(&served.config)
            .output()
            .expect("mp tick runs"),
    );
    let replay = json_of(
        &mp()
            .args(["tick", "--dry-run", "--format", "json", "--world"])
            .arg(&captured)
            .env_remove("MP_RECEIPT_KEY")
            .output()
            .expect("mp tick runs"),
    );
    let live = decisions(&live);
    assert!(!live.is_empty(), "{}", world.display());
    assert_eq!(decisions(&replay), live, "{}", world.display());
}

/// The evidence the gate binds an approval with, recorded as GitHub gives it: workflow
/// jobs behind a required check, two head updates in one second, a label edited after it
/// was applied, a head in a fork, a base changed after the label.
#[test]
fn captured_scenarios_replay_their_live_decisions() {
    for scenario in [
        "c2-workflow-bound-pass",
        "attack-check-from-other-workflow",
        "update-carries-approval-same-second",
        "attack-push-in-mp-update-second",
        "attack-label-renamed-to-ready",
        "attack-fork-head",
        "attack-base-retargeted-after-label",
        "c5-missing-trailer",
    ] {
        assert_replays(
            &workspace_root()
                .join("fixtures/scenarios")
                .join(scenario)
                .join("world.yaml"),
        );
    }
}

#[test]
fn a_capture_that_cannot_run_exits_2_and_writes_nothing() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let served = serve(&demo(), dir.path());
    let out = dir.path().join("world.yaml");
    let args = |extra: &[&str]| -> Vec<std::ffi::OsString> {
        let mut args: Vec<std::ffi::OsString> = vec![
            "--api-url".into(),
            served.url.clone().into(),
            "--config".into(),
            served.config.clone().into(),
            "--out".into(),
            out.clone().into(),
        ];
        args.extend(extra.iter().map(Into::into));
        args
    };
    let call = |extra: &[&str], token: bool| {
        let owned = args(extra);
        let refs: Vec<&std::ffi::OsStr> = owned.iter().map(AsRef::as_ref).collect();
        capture_fails(&refs, token)
    };

    let (code, stderr) = call(&[], false);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("no GitHub credentials"), "{stderr}");

    let (code, stderr) = call(&["acme/elsewhere"], true);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("not in projects.yml supervised_repos"),
        "{stderr}"
    );

    // A supervised repository GitHub does not have.
    let projects = served.config.join("projects.yml");
    let text = std::fs::read_to_string(&projects).expect("projects.yml");
    std::fs::write(&projects, text.replace("acme/infra", "acme/gone")).expect("written");
    let (code, stderr) = call(&["acme/gone"], true);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("acme/gone") && stderr.contains("nothing was written"),
        "{stderr}"
    );
    assert!(!out.exists(), "nothing was written");
    std::fs::write(&projects, text).expect("restored");

    // An existing --out is left alone unless --force.
    std::fs::write(&out, "mine\n").expect("written");
    let (code, stderr) = call(&["acme/webapp"], true);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--force"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&out).expect("kept"), "mine\n");
    let (code, stderr) = call(&["acme/webapp", "--force"], true);
    assert_eq!(code, Some(0), "{stderr}");
    let world = mp_github_fake::load_world(&out).expect("a world replaced it");
    assert!(world.repos.iter().all(|r| r.name.as_str() != "acme/infra"));
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .expect("the dir")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "no temporary file is left");
}

#[test]
fn capture_help_says_what_is_captured_and_what_is_not() {
    let output = mp()
        .args(["dev", "capture", "--help"])
        .output()
        .expect("mp runs");
    let help = String::from_utf8_lossy(&output.stdout);
    for words in [
        "Captured, per repository",
        "Not captured",
        "--prs",
        "--force",
    ] {
        assert!(help.contains(words), "{words}: {help}");
    }
}

/// The owner's `/reject` on the inbox closes the pull request before the pull-request
/// path lists the open ones. A live dry run plans that close and must then leave the pull
/// request alone, as the tick would, saying it would close it; the captured world's
/// replay (a dry run over a copy of the world, whose close is real) says the same.
#[test]
fn a_live_dry_run_does_not_evaluate_a_pull_request_the_inbox_would_close() {
    let world = workspace_root().join("fixtures/scenarios/inbox-reject-closes-pr/world.yaml");
    let dir = tempfile::tempdir().expect("a temp dir");
    let served = serve(&world, dir.path());
    let captured = dir.path().join("captured.yaml");
    capture(&served, &captured);
    let live = |format: &str| {
        mp_live()
            .args([
                "tick",
                "--dry-run",
                "--format",
                format,
                "--api-url",
                &served.url,
            ])
            .arg("--config")
            .arg(&served.config)
            .output()
            .expect("mp tick runs")
    };
    let replay = |format: &str| {
        mp().args(["tick", "--dry-run", "--format", format, "--world"])
            .arg(&captured)
            .env_remove("MP_RECEIPT_KEY")
            .output()
            .expect("mp tick runs")
    };
    for (name, json, text) in [
        ("live", json_of(&live("json")), live("text")),
        ("replay", json_of(&replay("json")), replay("text")),
    ] {
        assert_eq!(
            decisions(&json),
            Vec::new(),
            "{name}: the rejected pull request is not evaluated"
        );
        let inbox = json["inbox"].to_string();
        assert!(
            inbox.contains("acme/governance#2 (acme/app#1) rejected"),
            "{name}: {inbox}"
        );
        let text = String::from_utf8_lossy(&text.stdout).into_owned();
        assert!(
            text.contains(
                "acme/app#1 would close (rejected by the owner alice in acme/governance#2)"
            ),
            "{name}:\n{text}"
        );
        assert!(text.contains("would close acme/app#1"), "{name}:\n{text}");
        assert!(!text.contains("would merge"), "{name}:\n{text}");
    }
    assert!(
        served.server.memory().actions().is_empty(),
        "nothing was written: {:?}",
        served.server.memory().actions()
    );
}
