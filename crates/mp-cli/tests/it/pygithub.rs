//! PyGithub, an unmodified third-party GitHub client, against `mp dev serve-world` over the
//! demo world (decisions/0031): `pygithub_demo.py` reads the repository, pull requests, files,
//! commits, branches, contents, refs, check runs and comments, and writes a comment and check
//! runs with an installation token, checking each answer against the world.
//!
//! PyGithub comes from `cargo xtask pyclient` (pinned, in `target/pyclient/`, or where
//! `MP_PYCLIENT` says); without it the test fails and names that command.

use std::path::PathBuf;
use std::process::Command;

use crate::rest::serve_demo;
use crate::workspace_root;

/// Where `cargo xtask pyclient` installs PyGithub; `cargo xtask test` passes it too.
fn pyclient() -> PathBuf {
    let dir = std::env::var_os("MP_PYCLIENT")
        .map_or_else(|| workspace_root().join("target/pyclient"), PathBuf::from);
    assert!(
        dir.join("github").join("__init__.py").is_file(),
        "PyGithub is not installed in {}: run `cargo xtask pyclient` (or `cargo xtask test`)",
        dir.display()
    );
    dir
}

#[test]
fn pygithub_reads_and_writes_the_served_demo_world() {
    let packages = pyclient();
    let dir = tempfile::tempdir().expect("a temp dir");
    let (_served, url, _config) = serve_demo(dir.path());
    let script = workspace_root().join("crates/mp-cli/tests/it/pygithub_demo.py");
    let output = Command::new("python3")
        .arg(&script)
        .arg(&url)
        .env("PYTHONPATH", &packages)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PYTHONUNBUFFERED", "1")
        .output()
        .expect("python3 starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "PyGithub against {url} failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    assert!(
        stdout.contains(&format!("PyGithub walked {url}")),
        "the script stopped early:\n{stdout}\n{stderr}"
    );
}
