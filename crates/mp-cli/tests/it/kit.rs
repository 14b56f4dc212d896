//! The operator kit (`deploy/`) works as pasted: the systemd unit passes `systemd-analyze
//! verify` and starts `mp serve` with exactly the environment and credentials it would
//! give, logging; the cron line and the Kubernetes backstop run as written (through
//! `sh -c`) and count exit 4 as success, nothing else; docs/deploy.md shows each file
//! verbatim. The kit's absolute paths (`/etc/mp/`, `/usr/local/bin/mp`, `/var/log/mp/`)
//! are moved under a temporary directory, and GitHub is the loopback server.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::workspace_root;

fn kit(path: &str) -> String {
    std::fs::read_to_string(workspace_root().join("deploy").join(path))
        .unwrap_or_else(|e| panic!("deploy/{path}: {e}"))
}

fn deploy_md() -> String {
    std::fs::read_to_string(workspace_root().join("docs/deploy.md")).expect("docs/deploy.md")
}

fn mp_bin() -> PathBuf {
    PathBuf::from(assert_cmd::cargo::cargo_bin!("mp"))
}

/// The test App's private key (the loopback server checks that a JWT is sent, not its
/// signature).
fn app_key() -> PathBuf {
    workspace_root().join("crates/mp-github/tests/fixtures/test-app-key.pem")
}

/// The kit's absolute paths moved under `root`.
fn moved(text: &str, root: &Path) -> String {
    text.replace("/usr/local/bin/mp", &mp_bin().display().to_string())
        .replace("/etc/mp/", &format!("{}/etc/mp/", root.display()))
        .replace("/var/log/mp/", &format!("{}/var/log/mp/", root.display()))
}

/// Writes the secret files the kit reads, at their kit paths under `root`.
fn write_credentials(root: &Path) {
    let dir = root.join("etc/mp/credentials");
    std::fs::create_dir_all(&dir).expect("a directory");
    std::fs::copy(app_key(), dir.join("app.pem")).expect("the key");
    std::fs::write(dir.join("receipt-key"), "kit-receipt-key\n").expect("written");
    std::fs::write(dir.join("webhook-secret"), "kit-webhook-secret\n").expect("written");
}

/// The `[Service]` settings of a unit, in order (a key may repeat).
fn service_settings(unit: &str) -> Vec<(String, String)> {
    let mut section = "";
    let mut settings = Vec::new();
    for line in unit.lines().map(str::trim) {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        if line.starts_with('[') {
            section = if line == "[Service]" { "service" } else { "" };
            continue;
        }
        if section == "service" {
            let (key, value) = line.split_once('=').expect("KEY=VALUE");
            settings.push((key.to_owned(), value.to_owned()));
        }
    }
    settings
}

/// A free port on 127.0.0.1 (bound and released).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// `GET path` on 127.0.0.1:`port`: the status code.
fn status_of(port: u16, path: &str) -> u16 {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connects");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .expect("writes");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("reads");
    answer
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

#[test]
fn docs_deploy_shows_every_kit_file_verbatim() {
    let doc = deploy_md();
    for file in [
        "systemd/mp-serve.service",
        "cron/mp-tick",
        "cron/tick.env",
        "kubernetes/mp-tick-backstop.yaml",
    ] {
        assert!(
            doc.contains(&kit(file)),
            "docs/deploy.md does not show deploy/{file} as it is"
        );
    }
}

#[test]
fn the_systemd_unit_verifies_and_starts_mp_serve_with_the_credentials_it_loads() {
    let unit = kit("systemd/mp-serve.service");
    let settings = service_settings(&unit);
    let get = |key: &str| -> Vec<&str> {
        settings
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .collect()
    };
    assert_eq!(get("DynamicUser"), ["yes"]);
    // `systemctl reload` sends SIGHUP (mp serve reads its configuration again), and the
    // descriptor limit leaves room for the connection cap (512) and the client.
    assert_eq!(get("ExecReload"), ["/bin/kill -HUP $MAINPID"]);
    let descriptors: Vec<u64> = get("LimitNOFILE")
        .iter()
        .filter_map(|v| v.parse().ok())
        .collect();
    assert!(
        descriptors.len() == 1 && descriptors[0] >= 512 + 256,
        "LimitNOFILE= above --max-connections: {descriptors:?}"
    );
    assert!(
        get("EnvironmentFile").is_empty(),
        "no secret file read by the dynamic user"
    );
    // Every credential loaded is used, and every `%d/NAME` is loaded.
    let loaded: BTreeMap<&str, &str> = get("LoadCredential")
        .into_iter()
        .map(|v| v.split_once(':').expect("ID:PATH"))
        .collect();
    let environment: Vec<(&str, &str)> = get("Environment")
        .into_iter()
        .map(|v| v.split_once('=').expect("NAME=VALUE"))
        .collect();
    let used: Vec<&str> = environment
        .iter()
        .filter_map(|(_, value)| value.strip_prefix("%d/"))
        .collect();
    assert_eq!(
        loaded.keys().copied().collect::<Vec<_>>(),
        {
            let mut used = used.clone();
            used.sort_unstable();
            used
        },
        "LoadCredential= and %d/ agree"
    );
    for (name, value) in &environment {
        assert!(
            !value.contains("/etc/mp/credentials"),
            "{name} points the dynamic user at a root-owned file"
        );
    }
    assert!(
        environment.iter().any(|(name, _)| *name == "MP_LOG"),
        "mp serve logs nothing unless MP_LOG is set"
    );

    let root = tempfile::tempdir().expect("a temp dir");
    let root = root.path();

    // systemd's own check, on the unit as written with the binary at its place.
    if Command::new("systemd-analyze")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        let path = root.join("mp-serve.service");
        let exe = mp_bin().display().to_string();
        std::fs::write(&path, unit.replace("/usr/local/bin/mp", &exe)).expect("written");
        let verify = Command::new("systemd-analyze")
            .args(["verify", "--man=no"])
            .arg(&path)
            .output()
            .expect("systemd-analyze runs");
        assert!(verify.status.success(), "{verify:?}");
        assert_eq!(
            String::from_utf8_lossy(&verify.stderr).trim(),
            "",
            "systemd-analyze verify warns"
        );
    }

    // What systemd gives the service: each credential copied into $CREDENTIALS_DIRECTORY,
    // `%d` expanded, the Environment= lines and nothing else.
    write_credentials(root);
    let etc = root.join("etc/mp");
    let (_served, url, _config) = crate::rest::serve_world(
        &workspace_root().join("fixtures/worlds/serve.yaml"),
        &etc,
        &[],
    );
    let credentials = root.join("run/credentials/mp-serve.service");
    std::fs::create_dir_all(&credentials).expect("a directory");
    for (id, source) in &loaded {
        std::fs::copy(moved(source, root), credentials.join(id)).expect("a credential");
    }
    std::fs::create_dir_all(root.join("var/log/mp")).expect("LogsDirectory=");
    let exec = get("ExecStart");
    let port = free_port();
    let exec = moved(exec[0], root).replace("127.0.0.1:8080", &format!("127.0.0.1:{port}"));
    let words: Vec<&str> = exec.split_whitespace().collect();
    let mut serve = Command::new(words[0]);
    serve
        .args(&words[1..])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("CREDENTIALS_DIRECTORY", &credentials)
        .env("MP_API_URL", &url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (name, value) in &environment {
        serve.env(
            name,
            value.replace("%d", &credentials.display().to_string()),
        );
    }
    let mut serve = serve.spawn().expect("mp serve starts");
    let stderr = serve.stderr.take().expect("stderr");
    let (lines_tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    });
    // Its log says when the start-up resync is done (the App's token minted with the
    // loaded key, the state read, the lease taken); the bound only stops a hung service.
    let mut seen = Vec::new();
    let finished = loop {
        match lines.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => {
                let done = line.contains("resync finished");
                seen.push(line);
                if done {
                    break true;
                }
            }
            Err(_) => break false,
        }
    };
    let ready = finished.then(|| status_of(port, "/readyz"));
    let _ = Command::new("kill")
        .args(["-TERM", &serve.id().to_string()])
        .status();
    let exit = serve.wait().expect("mp serve exits");
    assert!(finished, "no `resync finished` in the log: {seen:#?}");
    assert_eq!(ready, Some(200), "{seen:#?}");
    assert!(
        seen.iter().any(|l| l.contains("INFO")),
        "logs at info by default under the unit: {seen:#?}"
    );
    assert_eq!(exit.code(), Some(0), "{seen:#?}");
}

/// The command of the kit's cron line (after the five time fields and the user).
fn cron_command() -> String {
    let text = kit("cron/mp-tick");
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .collect();
    assert_eq!(lines.len(), 1, "one cron line: {lines:?}");
    let fields: Vec<&str> = lines[0].splitn(7, ' ').collect();
    assert_eq!(
        fields.len(),
        7,
        "minute hour day month weekday user command"
    );
    assert_eq!(fields[5], "mp", "runs as the system user mp");
    assert!(!fields[6].contains('%'), "cron turns % into a line break");
    fields[6].to_owned()
}

/// Runs `command` as cron would (`sh -c`, a bare environment) with the kit's paths moved
/// under `root`; GitHub is the loopback at `url`. Returns the exit code and stderr.
fn run_as_cron(command: &str, root: &Path, url: &str) -> (Option<i32>, String) {
    let output = Command::new("sh")
        .arg("-c")
        .arg(moved(command, root))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", root)
        .env("MP_API_URL", url)
        .current_dir(root)
        .output()
        .expect("sh runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A world whose lease is held by another tick for two more minutes of the system clock
/// (a live tick reads it).
pub(crate) fn world_with_a_held_lease(dir: &Path) -> PathBuf {
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
    let world = dir.join("world.yaml");
    std::fs::write(&world, held).expect("written");
    world
}

/// `root/etc/mp/tick.env` from the kit, with its paths under `root`, less the lines
/// `drop` names.
fn write_tick_env(root: &Path, drop: &[&str]) {
    let text: String = kit("cron/tick.env")
        .lines()
        .filter(|l| !drop.iter().any(|d| l.starts_with(d)))
        .map(|l| format!("{}\n", moved(l, root)))
        .collect();
    std::fs::write(root.join("etc/mp/tick.env"), text).expect("written");
}

#[test]
fn the_cron_line_loads_its_secrets_and_counts_only_exit_4_as_success() {
    let command = cron_command();
    let held = tempfile::tempdir().expect("a temp dir");
    let root = held.path();
    write_credentials(root);
    let world = world_with_a_held_lease(root);
    let (_served, url, _config) = crate::rest::serve_world(&world, &root.join("etc/mp"), &[]);

    // The service holds the lease: mp exits 4, the line succeeds.
    write_tick_env(root, &[]);
    let (code, stderr) = run_as_cron(&command, root, &url);
    assert!(
        stderr.contains("another tick holds the lease"),
        "mp ran with the env file's App and stopped at the lease: {stderr}"
    );
    assert_eq!(code, Some(0), "{stderr}");

    // Without the env file's secrets mp cannot run (exit 2): the line fails.
    write_tick_env(root, &["MP_APP_ID", "MP_APP_PRIVATE_KEY_PATH"]);
    let (code, stderr) = run_as_cron(&command, root, &url);
    assert!(stderr.contains("no GitHub credentials"), "{stderr}");
    assert_eq!(code, Some(1), "{stderr}");

    // A key file the cron user cannot read: exit 2 names it, the line fails.
    write_tick_env(root, &[]);
    std::fs::remove_file(root.join("etc/mp/credentials/receipt-key")).expect("removed");
    let (code, stderr) = run_as_cron(&command, root, &url);
    assert!(
        stderr.contains("MP_RECEIPT_KEY_FILE: cannot read"),
        "{stderr}"
    );
    assert_eq!(code, Some(1), "{stderr}");

    // No lease held: the tick runs and the line succeeds.
    let free = tempfile::tempdir().expect("a temp dir");
    let root = free.path();
    write_credentials(root);
    let (_served, url, _config) = crate::rest::serve_world(
        &workspace_root().join("fixtures/worlds/demo.yaml"),
        &root.join("etc/mp"),
        &[],
    );
    write_tick_env(root, &[]);
    let (code, stderr) = run_as_cron(&command, root, &url);
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn the_kubernetes_backstop_counts_exit_4_as_success() {
    let text = kit("kubernetes/mp-tick-backstop.yaml");
    let job: serde_json::Value = serde_saphyr::from_str(&text).expect("YAML");
    let pod = &job["spec"]["jobTemplate"]["spec"]["template"]["spec"];
    assert_eq!(job["spec"]["concurrencyPolicy"], "Forbid");
    let container = &pod["containers"][0];
    assert_eq!(container["command"], serde_json::json!(["/bin/sh", "-c"]));
    let script = container["args"][0].as_str().expect("one script");

    let dir = tempfile::tempdir().expect("a temp dir");
    let root = dir.path();
    let world = world_with_a_held_lease(root);
    let (_served, url, _config) = crate::rest::serve_world(&world, &root.join("etc/mp"), &[]);
    let bin = mp_bin();
    let path = format!(
        "{}:/usr/bin:/bin",
        bin.parent().expect("a directory").display()
    );
    let run = |token: Option<&str>| {
        let mut command = Command::new("/bin/sh");
        command
            .arg("-c")
            .arg(moved(script, root))
            .env_clear()
            .env("PATH", &path)
            .env("MP_API_URL", &url)
            .current_dir(root);
        if let Some(token) = token {
            command.env("MP_GITHUB_TOKEN", token);
        }
        command.output().expect("sh runs")
    };
    let held = run(Some("ghs_BACKSTOP"));
    let stderr = String::from_utf8_lossy(&held.stderr);
    assert!(stderr.contains("another tick holds the lease"), "{stderr}");
    assert_eq!(held.status.code(), Some(0), "{stderr}");
    let broken = run(None);
    assert_ne!(broken.status.code(), Some(0), "{broken:?}");
}

#[test]
fn the_deploy_docs_name_every_exit_code_and_no_image_that_does_not_exist() {
    let deploy = deploy_md();
    let action = std::fs::read_to_string(workspace_root().join("action.yml")).expect("action.yml");
    for (name, text) in [("docs/deploy.md", &deploy), ("action.yml", &action)] {
        for code in ["4 another tick holds the lease", "5 not configured"] {
            assert!(text.contains(code), "{name} does not say `{code}`");
        }
    }
    // mp publishes no container image: every image a document names is the reader's own,
    // and says so.
    let mut documents = vec![("README.md".to_owned(), {
        std::fs::read_to_string(workspace_root().join("README.md")).expect("README.md")
    })];
    for entry in std::fs::read_dir(workspace_root().join("docs")).expect("docs/") {
        let path = entry.expect("an entry").path();
        if path.extension().is_some_and(|e| e == "md") {
            let text = std::fs::read_to_string(&path).expect("readable");
            documents.push((path.display().to_string(), text));
        }
    }
    documents.push((
        "deploy/kubernetes".to_owned(),
        kit("kubernetes/mp-tick-backstop.yaml"),
    ));
    for (name, text) in &documents {
        assert!(
            !text.contains("ghcr.io"),
            "{name} names an image on ghcr.io"
        );
        for line in text
            .lines()
            .filter(|l| l.trim_start().starts_with("image:"))
        {
            assert!(
                line.contains("registry.example.com/mp:") && line.contains("# your image"),
                "{name}: {line}"
            );
        }
    }
}
