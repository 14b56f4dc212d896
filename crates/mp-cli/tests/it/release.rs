//! Release binaries: what `deploy/mp-release.sh` packs (as the release workflow does) is
//! served over loopback HTTP as GitHub serves a release's assets, and the Action's install
//! step uses the binary only when its checksum and its sources verify; otherwise it builds
//! (here a stand-in `cargo` that records the call), and never keeps an unverified binary.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::workspace_root;

fn script() -> PathBuf {
    workspace_root().join("deploy/mp-release.sh")
}

/// Serves the files under `root` over HTTP on 127.0.0.1 (GET only; 404 for anything
/// else), one connection at a time, until the test ends. Returns the base URL.
fn serve_files(root: &Path) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    let url = format!("http://{}", listener.local_addr().expect("an address"));
    let root = root.to_owned();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = String::new();
            let mut reader = BufReader::new(&stream);
            if reader.read_line(&mut request).is_err() {
                continue;
            }
            // The rest of the head, up to the blank line.
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let path = request.split_whitespace().nth(1).unwrap_or("/");
            let file = root.join(path.trim_start_matches('/'));
            let body = (!path.contains("..") && file.is_file())
                .then(|| std::fs::read(&file).ok())
                .flatten();
            let _ = match body {
                Some(body) => write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                )
                .and_then(|()| stream.write_all(&body)),
                None => write!(
                    stream,
                    "HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nConnection: close\r\n\r\nNot Found"
                ),
            };
        }
    });
    url
}

fn release_sh(args: &[&str]) -> std::process::Output {
    Command::new("bash")
        .arg(script())
        .args(args)
        .output()
        .expect("bash runs")
}

const VERSION: &str = "0.1.0";
const TARGET: &str = "x86_64-unknown-linux-gnu";
/// The source digest the test's releases and action agree on.
const DIGEST: &str = "abababababababababababababababababababababababababababababababab";

/// A release of `VERSION` under `dir`, as the release workflow makes it: the archive of a
/// stand-in binary that prints `says`, then the source digest and SHA256SUMS.
fn make_release(dir: &Path, digest: &str, says: &str) {
    let binary = dir.join("built-mp");
    std::fs::write(&binary, format!("#!/bin/sh\necho '{says}'\n")).expect("written");
    let dir_text = dir.display().to_string();
    let binary_text = binary.display().to_string();
    let packed = release_sh(&["pack", VERSION, TARGET, &binary_text, &dir_text]);
    assert!(packed.status.success(), "{packed:?}");
    std::fs::remove_file(&binary).expect("removed");
    let sealed = release_sh(&["seal", VERSION, digest, &dir_text]);
    assert!(sealed.status.success(), "{sealed:?}");
}

fn archive() -> String {
    format!("mp-{VERSION}-{TARGET}.tar.gz")
}

/// Runs `mp-release.sh install` from `url` into `dest`.
fn install(url: &str, digest: &str, dest: &Path) -> std::process::Output {
    release_sh(&[
        "install",
        url,
        VERSION,
        TARGET,
        digest,
        &dest.display().to_string(),
    ])
}

#[test]
fn a_release_binary_is_installed_only_when_its_checksum_and_sources_verify() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let release = dir.path().join("release");
    std::fs::create_dir_all(&release).expect("a directory");
    make_release(&release, DIGEST, "mp from the release");
    let url = serve_files(dir.path());
    let base = format!("{url}/release");

    // Good: installed, and it runs.
    let good = dir.path().join("good");
    let output = install(&base, DIGEST, &good);
    assert!(output.status.success(), "{output:?}");
    let ran = Command::new(good.join("bin/mp")).output().expect("runs");
    assert_eq!(
        String::from_utf8_lossy(&ran.stdout),
        "mp from the release\n"
    );

    // Another commit's sources: refused.
    let other = dir.path().join("other");
    let output = install(&base, &"0".repeat(64), &other);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("built from other sources"),
        "{output:?}"
    );
    assert!(!other.join("bin/mp").exists());

    // No release at that address: nothing installed.
    let missing = dir.path().join("missing");
    let output = install(&format!("{url}/no-such-release"), DIGEST, &missing);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("cannot download"),
        "{output:?}"
    );
    assert!(!missing.join("bin/mp").exists());

    // The archive changed after its checksum was listed: refused, an installed binary of
    // an earlier run left as it was.
    let path = release.join(archive());
    let mut bytes = std::fs::read(&path).expect("the archive");
    bytes.extend_from_slice(b"tampered");
    std::fs::write(&path, bytes).expect("written");
    let before = std::fs::read(good.join("bin/mp")).expect("installed");
    let output = install(&base, DIGEST, &good);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("does not match its checksum"),
        "{output:?}"
    );
    assert_eq!(std::fs::read(good.join("bin/mp")).expect("kept"), before);
    let fresh = dir.path().join("fresh");
    let output = install(&base, DIGEST, &fresh);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(!fresh.join("bin/mp").exists(), "no unverified binary");
}

/// The script of the action's step with id `id`.
fn step_script(id: &str) -> String {
    let text = std::fs::read_to_string(workspace_root().join("action.yml")).expect("readable");
    let action: Value = serde_saphyr::from_str(&text).expect("YAML");
    let steps = action["runs"]["steps"].as_array().expect("steps");
    let step = steps
        .iter()
        .find(|s| s["id"] == id)
        .unwrap_or_else(|| panic!("a step with id {id}"));
    step["run"].as_str().expect("a script").to_owned()
}

/// What the action's install step did: `release` or `build`, whether it called cargo, and
/// what the installed `mp` says.
struct Installed {
    how: String,
    built: bool,
    says: String,
    log: String,
}

/// Runs the action's install step (`install: release`) against the releases served at
/// `server` for the repository `acme/mp`, with `digest` as this action's source digest
/// and a stand-in `cargo` that installs a binary saying "mp built from source".
fn install_step(server: &str, digest: &str) -> Installed {
    let home = tempfile::tempdir().expect("a temp dir");
    let tools = home.path().join("tools");
    std::fs::create_dir_all(&tools).expect("a directory");
    let cargo = tools.join("cargo");
    std::fs::write(
        &cargo,
        "#!/bin/sh\n# cargo install --locked --path P --root ROOT\n\
         touch \"$HOME/cargo-called\"\nfor last; do :; done\nmkdir -p \"$last/bin\"\n\
         printf '#!/bin/sh\\necho mp built from source\\n' > \"$last/bin/mp\"\n\
         chmod 755 \"$last/bin/mp\"\n",
    )
    .expect("written");
    let status = Command::new("chmod")
        .arg("755")
        .arg(&cargo)
        .status()
        .expect("chmod");
    assert!(status.success());
    let outputs = home.path().join("outputs");
    let output = Command::new("bash")
        .args(["-e", "-c", &step_script("install")])
        .env(
            "PATH",
            format!(
                "{}:{}",
                tools.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("HOME", home.path())
        .env("GITHUB_ACTION_PATH", workspace_root())
        .env("GITHUB_SERVER_URL", server)
        .env("GITHUB_OUTPUT", &outputs)
        .env("MP_ACTION_INSTALL", "release")
        .env("MP_ACTION_RELEASES", "acme/mp")
        .env("MP_ACTION_DIGEST", digest)
        .output()
        .expect("bash runs");
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{log}");
    let how = std::fs::read_to_string(&outputs)
        .expect("step outputs")
        .trim()
        .strip_prefix("how=")
        .expect("how=")
        .to_owned();
    let ran = Command::new(home.path().join(".mp-bin/bin/mp"))
        .output()
        .expect("an mp is installed");
    Installed {
        how,
        built: home.path().join("cargo-called").exists(),
        says: String::from_utf8_lossy(&ran.stdout).trim().to_owned(),
        log,
    }
}

#[test]
fn the_action_uses_a_verified_release_binary_and_builds_when_there_is_none() {
    let version_line = format!("version = \"{VERSION}\"");
    let manifest =
        std::fs::read_to_string(workspace_root().join("Cargo.toml")).expect("Cargo.toml");
    assert!(
        manifest.lines().any(|l| l == version_line),
        "the test's release is the workspace's version"
    );
    let dir = tempfile::tempdir().expect("a temp dir");
    let release = dir
        .path()
        .join(format!("acme/mp/releases/download/v{VERSION}"));
    std::fs::create_dir_all(&release).expect("a directory");
    make_release(&release, DIGEST, "mp from the release");
    let server = serve_files(dir.path());

    let good = install_step(&server, DIGEST);
    assert_eq!(
        (good.how.as_str(), good.built, good.says.as_str()),
        ("release", false, "mp from the release"),
        "{}",
        good.log
    );

    let other = install_step(&server, &"1".repeat(64));
    assert_eq!(
        (other.how.as_str(), other.built, other.says.as_str()),
        ("build", true, "mp built from source"),
        "{}",
        other.log
    );

    let path = release.join(archive());
    let mut bytes = std::fs::read(&path).expect("the archive");
    bytes.extend_from_slice(b"tampered");
    std::fs::write(&path, bytes).expect("written");
    let bad = install_step(&server, DIGEST);
    assert_eq!(
        (bad.how.as_str(), bad.built, bad.says.as_str()),
        ("build", true, "mp built from source"),
        "{}",
        bad.log
    );
    assert!(
        bad.log.contains("does not match its checksum"),
        "{}",
        bad.log
    );

    std::fs::remove_dir_all(&release).expect("removed");
    let none = install_step(&server, DIGEST);
    assert_eq!(
        (none.how.as_str(), none.built, none.says.as_str()),
        ("build", true, "mp built from source"),
        "{}",
        none.log
    );
}

#[test]
fn the_release_workflow_packs_with_the_script_the_action_unpacks_with() {
    let text = std::fs::read_to_string(workspace_root().join(".github/workflows/release.yml"))
        .expect("the release workflow");
    let workflow: Value = serde_saphyr::from_str(&text).expect("YAML");
    assert_eq!(workflow["on"]["push"]["tags"], serde_json::json!(["v*"]));
    let targets: Vec<&str> = workflow["jobs"]["build"]["strategy"]["matrix"]["include"]
        .as_array()
        .expect("a matrix")
        .iter()
        .filter_map(|t| t["target"].as_str())
        .collect();
    assert!(targets.contains(&TARGET), "{targets:?}");
    for step in [
        "git merge-base --is-ancestor \"$GITHUB_SHA\" \"origin/$DEFAULT_BRANCH\"",
        "deploy/mp-release.sh pack",
        "deploy/mp-release.sh seal",
        "gh release create",
    ] {
        assert!(text.contains(step), "the workflow runs {step}");
    }
    assert_eq!(
        workflow["jobs"]["publish"]["permissions"]["contents"],
        "write"
    );
    // The action computes the source digest with the same script.
    let digest = Command::new("bash")
        .arg(script())
        .arg("digest")
        .arg(workspace_root())
        .output()
        .expect("bash runs");
    assert!(digest.status.success(), "{digest:?}");
    let digest = String::from_utf8_lossy(&digest.stdout).trim().to_owned();
    assert!(
        digest.len() == 64 && digest.chars().all(|c| c.is_ascii_hexdigit()),
        "{digest}"
    );
}
