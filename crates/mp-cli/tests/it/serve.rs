//! `mp serve` end to end: the loopback GitHub (`mp dev serve-world --webhook-url`) delivers
//! signed webhooks to a running `mp serve`, and an owner's label applied through the fake
//! merges without any `mp tick`. Then SIGTERM stops the service cleanly.
//!
//! The test learns that the service did something from the service's own JSON log events
//! (the start-up resync finished, a decision was made), never by polling on a timer.

use std::io::{BufRead, BufReader, Lines, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, ChildStderr, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::workspace_root;

const SECRET: &str = "serve-test-secret";

/// A child process killed on drop.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// One HTTP/1.1 request over a fresh connection: the status and the body.
fn http(method: &str, url: &str, body: Option<&Value>) -> (u16, String) {
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (host, path) = rest
        .split_once('/')
        .map_or((rest, "/".to_owned()), |(h, p)| (h, format!("/{p}")));
    let mut stream = TcpStream::connect(host).expect("connects");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("a timeout");
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer ghs_SERVETEST\r\nAccept: application/vnd.github+json\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .expect("writes");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("reads");
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// The JSON log events of a child's stderr, one per line, as they are written.
fn log_events(stderr: ChildStderr) -> mpsc::Receiver<Value> {
    let (events, received) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Ok(event) = serde_json::from_str::<Value>(&line)
                && events.send(event).is_err()
            {
                break;
            }
        }
    });
    received
}

/// Blocks until the service logs the event `wanted` accepts, the signal that the work the
/// test waits for is done. `bound` only stops a hung service from hanging the test.
fn wait_for(
    events: &mpsc::Receiver<Value>,
    what: &str,
    bound: Duration,
    wanted: impl Fn(&Value) -> bool,
) {
    let deadline = Instant::now() + bound;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match events.recv_timeout(left) {
            Ok(event) if wanted(&event) => return,
            Ok(_) => {}
            Err(error) => panic!("no log event for {what}: {error}"),
        }
    }
}

/// Whether a log event's message is `message`.
fn said(event: &Value, message: &str) -> bool {
    event["fields"]["message"] == message
}

fn merged(api: &str) -> bool {
    let (status, body) = http("GET", &format!("{api}/repos/acme/app/pulls/1"), None);
    assert_eq!(status, 200, "{body}");
    let pull: Value = serde_json::from_str(&body).expect("a pull request");
    pull["merged"] == true
}

fn metric(service: &str, line_start: &str) -> Option<f64> {
    let (_, text) = http("GET", &format!("{service}/metrics"), None);
    text.lines()
        .find(|l| l.starts_with(line_start))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

/// `mp dev serve-world` over fixtures/worlds/serve.yaml, writing its configuration to
/// `config` and, given a webhook URL, delivering there with [`SECRET`]: the running world,
/// its stdout (kept open for as long as the world runs) and its API URL.
fn serve_world(
    config: &Path,
    webhook: Option<&str>,
) -> (Running, Lines<BufReader<ChildStdout>>, String) {
    let mut command = Command::new(assert_cmd::cargo::cargo_bin!("mp"));
    command
        .args(["dev", "serve-world"])
        .arg(workspace_root().join("fixtures/worlds/serve.yaml"))
        .arg("--config-out")
        .arg(config);
    if let Some(url) = webhook {
        command
            .args(["--webhook-url", url])
            .args(["--webhook-secret", SECRET]);
    }
    let mut world = command
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("mp dev serve-world starts");
    let mut lines = BufReader::new(world.stdout.take().expect("stdout")).lines();
    let world = Running(world);
    let first = lines.next().expect("a first line").expect("readable");
    let api = first.rsplit(' ').next().expect("a URL").to_owned();
    (world, lines, api)
}

#[test]
fn an_owner_label_through_the_fake_merges_through_mp_serve_without_a_tick() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let config = dir.path().join("config");
    let port = free_port();
    let service = format!("http://127.0.0.1:{port}");
    let (world, _world_lines, api) = serve_world(&config, Some(&format!("{service}/webhook")));
    assert!(api.starts_with("http://127.0.0.1:"), "{api}");

    let mut serve = Command::new(assert_cmd::cargo::cargo_bin!("mp"))
        .args(["--log-format", "json", "serve", "--config"])
        .arg(&config)
        .args(["--api-url", &api, "--listen", &format!("127.0.0.1:{port}")])
        .args(["--resync-every", "1h"])
        .env("MP_WEBHOOK_SECRET", SECRET)
        .env("MP_GITHUB_TOKEN", "ghs_SERVETEST")
        .env_remove("MP_APP_ID")
        .env_remove("MP_RECEIPT_KEY")
        .env("MP_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mp serve starts");
    let stdout = serve.stdout.take().expect("stdout");
    let events = log_events(serve.stderr.take().expect("stderr"));
    let serve = Running(serve);
    let mut serve_lines = BufReader::new(stdout).lines();
    let listening = serve_lines.next().expect("a first line").expect("readable");
    assert_eq!(listening, format!("mp serve listening on {service}"));

    // The start-up resync done, so ready: the pull request is blocked, not merged.
    wait_for(
        &events,
        "the start-up resync",
        Duration::from_secs(30),
        |e| said(e, "resync finished"),
    );
    assert_eq!(http("GET", &format!("{service}/readyz"), None).0, 200);
    assert!(!merged(&api), "nothing merges before the owner's label");

    // The owner labels the pull request; GitHub (the fake) tells mp serve.
    let (status, body) = http(
        "POST",
        &format!("{api}/repos/acme/app/_loopback/label"),
        Some(&json!({"number": 1, "label": "ready-to-merge", "actor": "alice"})),
    );
    assert_eq!(status, 200, "{body}");
    wait_for(&events, "the merge", Duration::from_secs(20), |e| {
        said(e, "decision") && e["fields"]["action"] == "merged"
    });
    assert!(merged(&api), "the decision merged it on GitHub");

    // The webhook did it: still one resync, and at least one lane evaluated the label.
    assert_eq!(metric(&service, "mp_serve_ticks_total"), Some(1.0));
    assert!(
        metric(
            &service,
            "mp_serve_webhook_deliveries_total{event=\"pull_request\",verdict=\"queued\"}"
        )
        .is_some_and(|n| n >= 1.0)
    );
    assert!(metric(&service, "mp_serve_evaluations_total{outcome=\"merged\"}") == Some(1.0));

    // SIGTERM: the service finishes, gives the lease back and exits 0.
    let pid = serve.0.id().to_string();
    let status = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let mut serve = serve;
    let exit = serve.0.wait().expect("mp serve exits");
    assert_eq!(exit.code(), Some(0));
    let rest: Vec<String> = serve_lines.map_while(Result::ok).collect();
    assert_eq!(rest.last().map(String::as_str), Some("mp serve stopped"));
    drop(world);
}

/// Starts `mp serve` over `api` on `port` as lease holder `holder`; its stdout lines and
/// its JSON log events.
fn start_serve(
    config: &Path,
    api: &str,
    port: u16,
    holder: &str,
) -> (
    Running,
    std::io::Lines<BufReader<std::process::ChildStdout>>,
    mpsc::Receiver<Value>,
) {
    let mut serve = Command::new(assert_cmd::cargo::cargo_bin!("mp"))
        .args(["--log-format", "json", "serve", "--config"])
        .arg(config)
        .args(["--api-url", api, "--listen", &format!("127.0.0.1:{port}")])
        .args(["--resync-every", "1h"])
        .env("MP_WEBHOOK_SECRET", SECRET)
        .env("MP_GITHUB_TOKEN", "ghs_SERVETEST")
        .env("MP_LEASE_HOLDER", holder)
        .env("HOSTNAME", "serve-test-host")
        .env_remove("MP_LEASE_SECONDS")
        .env_remove("MP_APP_ID")
        .env_remove("MP_RECEIPT_KEY")
        .env("MP_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mp serve starts");
    let stdout = serve.stdout.take().expect("stdout");
    let events = log_events(serve.stderr.take().expect("stderr"));
    (Running(serve), BufReader::new(stdout).lines(), events)
}

#[test]
fn a_service_killed_with_sigkill_and_restarted_takes_its_lease_back_at_once_and_merges() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let config = dir.path().join("config");
    let port = free_port();
    let service = format!("http://127.0.0.1:{port}");
    let (world, _world_lines, api) = serve_world(&config, Some(&format!("{service}/webhook")));

    // The first incarnation takes the lease and resyncs: nothing to merge yet.
    let (mut first, _first_lines, events) = start_serve(&config, &api, port, "serve@test");
    wait_for(&events, "the first lease", Duration::from_secs(30), |e| {
        said(e, "mp serve holds the tick lease")
    });
    wait_for(
        &events,
        "the start-up resync",
        Duration::from_secs(30),
        |e| said(e, "resync finished"),
    );
    assert!(!merged(&api));

    // kill -9: the lease (three minutes) is never given back.
    first.0.kill().expect("SIGKILL");
    first.0.wait().expect("reaped");
    let lease_file = || {
        let (status, body) = http(
            "GET",
            &format!("{api}/repos/acme/governance/contents/bot-state/lease.json?ref=bot-state"),
            None,
        );
        assert_eq!(status, 200, "{body}");
        body
    };
    assert!(
        lease_file().contains("content"),
        "the killed incarnation's entry is still there"
    );

    // The owner labels the pull request while the service is down: the delivery is lost.
    let (status, body) = http(
        "POST",
        &format!("{api}/repos/acme/app/_loopback/label"),
        Some(&json!({"number": 1, "label": "ready-to-merge", "actor": "alice"})),
    );
    assert!((200..300).contains(&status), "{status} {body}");
    assert!(!merged(&api));

    // The restart (same identity, new pid) takes the lease back at once and its start-up
    // resync merges what was pending.
    let (restarted, mut restarted_lines, events) = start_serve(&config, &api, port, "serve@test");
    let listening = restarted_lines
        .next()
        .expect("a first line")
        .expect("readable");
    assert_eq!(listening, format!("mp serve listening on {service}"));
    wait_for(
        &events,
        "the lease taken back",
        Duration::from_secs(30),
        |e| said(e, "mp serve holds the tick lease") && e["fields"]["holder"] == "serve@test",
    );
    wait_for(
        &events,
        "the start-up resync",
        Duration::from_secs(30),
        |e| said(e, "resync finished"),
    );
    assert!(
        merged(&api),
        "merged by the restarted service's start-up resync"
    );
    assert_eq!(http("GET", &format!("{service}/readyz"), None).0, 200);
    drop(restarted);
    drop(world);
}

#[test]
fn a_second_copy_of_a_live_service_does_not_take_its_lease() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let config = dir.path().join("config");
    let port = free_port();
    let (world, _world_lines, api) =
        serve_world(&config, Some(&format!("http://127.0.0.1:{port}/webhook")));

    let (_active, _active_lines, events) = start_serve(&config, &api, port, "serve@test");
    wait_for(&events, "the lease", Duration::from_secs(30), |e| {
        said(e, "mp serve holds the tick lease")
    });
    // The same identity, on the same host, while the first is alive: it waits.
    let copy_port = free_port();
    let (_copy, _copy_lines, events) = start_serve(&config, &api, copy_port, "serve@test");
    wait_for(&events, "the refusal", Duration::from_secs(30), |e| {
        said(e, "mp serve acts on nothing until it holds the tick lease")
            && e["fields"]["reason"]
                .as_str()
                .is_some_and(|r| r.contains("another tick holds the lease (all, serve@test"))
    });
    let (status, body) = http("GET", &format!("http://127.0.0.1:{copy_port}/readyz"), None);
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("\"lease\":false"), "{body}");
    drop(world);
}

/// Standard base64 of `bytes` (the contents API's encoding).
fn base64(bytes: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(TABLE[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[test]
fn a_tick_whose_killed_predecessor_left_the_lease_runs_at_once_and_another_identity_waits() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let config = dir.path().join("config");
    let (world, _world_lines, api) = serve_world(&config, None);

    let tick = |holder: &str| {
        Command::new(assert_cmd::cargo::cargo_bin!("mp"))
            .args(["tick", "--config"])
            .arg(&config)
            .args(["--api-url", &api])
            .env("MP_GITHUB_TOKEN", "ghs_SERVETEST")
            .env("MP_LEASE_HOLDER", holder)
            .env("HOSTNAME", "tick-test-host")
            .env_remove("MP_LEASE_SECONDS")
            .env_remove("MP_APP_ID")
            .env_remove("MP_RECEIPT_KEY")
            .output()
            .expect("mp tick runs")
    };
    // A first run creates the state branch and the lease file.
    let first_run = tick("tick@test");
    assert_eq!(first_run.status.code(), Some(0), "{first_run:?}");

    // A tick of identity tick@test killed with SIGKILL mid-run: its process is gone, its
    // entry (renewed a moment ago, two minutes left) stays in the lease file.
    let mut killed = Command::new("sleep")
        .arg("30")
        .spawn()
        .expect("a process to kill");
    let dead = killed.id();
    killed.kill().expect("SIGKILL");
    killed.wait().expect("reaped");
    let now = jiff::Timestamp::now();
    let until = now + jiff::SignedDuration::from_secs(120);
    let entry = json!({"leases": {"all": {
        "holder": "tick@test",
        "since": now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        "until": until.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        "incarnation": {"host": "tick-test-host", "pid": dead, "started": "killed"}
    }}});
    let (status, body) = http(
        "GET",
        &format!("{api}/repos/acme/governance/contents/bot-state/lease.json?ref=bot-state"),
        None,
    );
    assert_eq!(status, 200, "{body}");
    let sha = serde_json::from_str::<Value>(&body).expect("json")["sha"].clone();
    let (status, body) = http(
        "PUT",
        &format!("{api}/repos/acme/governance/contents/bot-state/lease.json"),
        Some(&json!({
            "message": "chore(bot-state): take the tick lease",
            "branch": "bot-state",
            "sha": sha,
            "content": base64(format!("{entry:#}\n").as_bytes()),
        })),
    );
    assert!((200..300).contains(&status), "{status} {body}");

    // Another identity waits for the entry to expire: exit 4, nothing written.
    let other = tick("tick@elsewhere");
    assert_eq!(other.status.code(), Some(4), "{other:?}");
    assert!(
        String::from_utf8_lossy(&other.stderr)
            .contains("another tick holds the lease (all, tick@test"),
        "{other:?}"
    );
    // The next run of the killed tick's own identity takes it back at once.
    let next = tick("tick@test");
    assert_eq!(next.status.code(), Some(0), "{next:?}");
    drop(world);
}

/// A signed `pull_request` `labeled` delivery of acme/app#1 sent straight to the service;
/// `nonce` makes each body different (the service dedupes a body it has seen).
fn deliver_labeled(service: &str, nonce: u64) -> (u16, String) {
    let payload = json!({
        "action": "labeled",
        "number": 1,
        "label": {"name": "ready-to-merge"},
        "pull_request": {
            "number": 1,
            "head": {"sha": "0".repeat(40), "ref": "agent/readme-fix"},
            "base": {"sha": "1".repeat(40), "ref": "main"},
        },
        "repository": {"full_name": "acme/app", "default_branch": "main"},
        "sender": {"login": "alice"},
        "test_nonce": nonce,
    })
    .to_string();
    let signature = mp_serve::WebhookSecret::new(SECRET)
        .expect("a secret")
        .sign(payload.as_bytes());
    let host = service.strip_prefix("http://").expect("an http URL");
    let mut stream = TcpStream::connect(host).expect("connects");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("a timeout");
    write!(
        stream,
        "POST /webhook HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nX-GitHub-Event: pull_request\r\nX-GitHub-Delivery: hup-{nonce}\r\nX-Hub-Signature-256: {signature}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{payload}",
        payload.len()
    )
    .expect("writes");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("reads");
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, answer)
}

fn hang_up(serve: &Running) {
    let status = Command::new("kill")
        .args(["-HUP", &serve.0.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
}

/// The action of the next decision the service logs on acme/app#1.
fn next_decision(events: &mpsc::Receiver<Value>) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let event = events.recv_timeout(left).expect("a decision");
        if said(&event, "decision") {
            return event["fields"]["action"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
        }
    }
}

#[test]
fn sighup_reloads_a_valid_configuration_and_keeps_the_one_in_force_when_a_file_is_bad() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let config = dir.path().join("config");
    let port = free_port();
    let service = format!("http://127.0.0.1:{port}");
    let (world, _world_lines, api) = serve_world(&config, None);
    // The service starts with bob as the owner: alice's label is not the owner's.
    std::fs::write(config.join("owner.yml"), "github_login: bob\n").expect("writes");
    let env = std::fs::read_to_string(config.join("env.yml")).expect("env.yml");
    let (serve, _lines, events) = start_serve(&config, &api, port, "serve@hup");
    wait_for(
        &events,
        "the start-up resync",
        Duration::from_secs(30),
        |e| said(e, "resync finished"),
    );
    // alice labels it (the fake records the label; the delivery goes straight to mp serve).
    let (status, body) = http(
        "POST",
        &format!("{api}/repos/acme/app/_loopback/label"),
        Some(&json!({"number": 1, "label": "ready-to-merge", "actor": "alice"})),
    );
    assert_eq!(status, 200, "{body}");
    let (status, answer) = deliver_labeled(&service, 1);
    assert_eq!(status, 202, "{answer}");
    assert_ne!(
        next_decision(&events),
        "merged",
        "bob owns the configuration"
    );

    // alice becomes the owner, but env.yml is broken in the same change: SIGHUP keeps the
    // configuration in force and names the file and line.
    std::fs::write(config.join("owner.yml"), "github_login: alice\n").expect("writes");
    std::fs::write(
        config.join("env.yml"),
        format!("{env}required_checks: [test\n"),
    )
    .expect("writes");
    hang_up(&serve);
    wait_for(
        &events,
        "the refused reload",
        Duration::from_secs(30),
        |e| {
            e["level"] == "ERROR"
                && said(e, "configuration not reloaded")
                && e["fields"]["problem"]
                    .as_str()
                    .is_some_and(|p| p.starts_with("env.yml:"))
        },
    );
    let (status, answer) = deliver_labeled(&service, 2);
    assert_eq!(status, 202, "{answer}");
    assert_ne!(
        next_decision(&events),
        "merged",
        "the old configuration (owner bob) is still in force"
    );
    assert!(!merged(&api));

    // env.yml fixed: the next SIGHUP swaps the configuration in, and the next job uses it.
    std::fs::write(config.join("env.yml"), &env).expect("writes");
    hang_up(&serve);
    wait_for(&events, "the reload", Duration::from_secs(30), |e| {
        said(
            e,
            "configuration reloaded: the jobs that start from now on use it",
        )
    });
    let (status, answer) = deliver_labeled(&service, 3);
    assert_eq!(status, 202, "{answer}");
    assert_eq!(next_decision(&events), "merged");
    assert!(merged(&api));
    drop(serve);
    drop(world);
}

#[test]
fn under_a_128_descriptor_limit_300_idle_connections_keep_neither_a_delivery_nor_healthz_out() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let config = dir.path().join("config");
    let port = free_port();
    let service = format!("http://127.0.0.1:{port}");
    let (world, _world_lines, api) = serve_world(&config, None);
    // The incident: a low descriptor limit (set by the shell that execs mp serve) and the
    // default connection cap (512) above it, so accepting fails with EMFILE.
    let mut serve = Command::new("sh")
        .args(["-c", "ulimit -n 128 && exec \"$0\" \"$@\""])
        .arg(assert_cmd::cargo::cargo_bin!("mp"))
        .args(["--log-format", "json", "serve", "--config"])
        .arg(&config)
        .args(["--api-url", &api, "--listen", &format!("127.0.0.1:{port}")])
        .args(["--resync-every", "1h"])
        .env("MP_WEBHOOK_SECRET", SECRET)
        .env("MP_GITHUB_TOKEN", "ghs_SERVETEST")
        .env_remove("MP_APP_ID")
        .env_remove("MP_RECEIPT_KEY")
        .env("MP_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mp serve starts");
    let events = log_events(serve.stderr.take().expect("stderr"));
    let serve = Running(serve);
    wait_for(
        &events,
        "the start-up resync",
        Duration::from_secs(30),
        |e| said(e, "resync finished"),
    );
    let host = service.strip_prefix("http://").expect("an http URL");
    let idle: Vec<TcpStream> = (0..300)
        .map(|_| TcpStream::connect(host).expect("connects"))
        .collect();
    // GitHub's delivery and the health check still get through, promptly.
    let started = Instant::now();
    let (status, answer) = deliver_labeled(&service, 1);
    assert_eq!(status, 202, "{answer}");
    assert_eq!(http("GET", &format!("{service}/healthz"), None).0, 200);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // And the log says what happened.
    wait_for(&events, "the EMFILE error", Duration::from_secs(10), |e| {
        e["level"] == "ERROR"
            && e["fields"]["message"].as_str().is_some_and(|m| {
                m.starts_with("accepting a connection failed: out of file descriptors")
            })
    });
    wait_for(
        &events,
        "an idle connection closed",
        Duration::from_secs(10),
        |e| {
            said(
                e,
                "closed the connection that waited longest for a request, to make room",
            )
        },
    );
    drop(idle);
    drop(serve);
    drop(world);
}
