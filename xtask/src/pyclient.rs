//! `cargo xtask pyclient`: PyGithub, an unmodified third-party GitHub client, for the test
//! that runs it against `mp dev serve-world` (`crates/mp-cli/tests/it/pygithub.rs`,
//! decisions/0031).
//!
//! It installs [`PINS`] (PyGithub and every package it pulls in, each at one exact version,
//! wheels only, nothing resolved beyond the list) from PyPI with `python3 -m pip install
//! --target` into [`DIR`] under the workspace root. A present directory whose stamp lists
//! the same pins is kept as it is, so the step costs nothing after the first run.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

use crate::prereq::Prerequisite;

/// PyGithub's pinned version; bump it together with [`PINS`].
const PYGITHUB: &str = "PyGithub==2.10.0";

/// Everything installed: PyGithub and what it requires, each at one exact version (the
/// versions `pip install PyGithub==2.10.0` resolved on Python 3.11, x86_64 Linux).
const PINS: &[&str] = &[
    PYGITHUB,
    "certifi==2026.10.19.post1",
    "cffi==2.1.1",
    "charset-normalizer==3.5.3",
    "cryptography==50.0.2",
    "idna==3.20",
    "pycparser==3.12",
    "PyJWT==2.15.1",
    "PyNaCl==1.6.2",
    "requests==2.34.2",
    "typing-extensions==4.16.0",
    "urllib3==2.8.0",
];

/// Where the packages land, relative to the workspace root; it goes on `PYTHONPATH`. The
/// test reads this path unless [`ENV`] names another directory.
pub(crate) const DIR: &str = "target/pyclient";

/// The environment variable through which `cargo xtask test` hands the directory to the
/// test.
pub(crate) const ENV: &str = "MP_PYCLIENT";

/// The file in [`DIR`] that lists the installed pins.
const STAMP: &str = "pins.txt";

/// `cargo xtask pyclient`, and how `cargo xtask test` gets PyGithub.
pub(crate) const STEP: Prerequisite = Prerequisite {
    command: "pyclient",
    name: PYGITHUB,
    path: DIR,
    help: "cargo xtask pyclient [--check]

Installs PyGithub and its dependencies at pinned versions from PyPI into
target/pyclient/ (python3 -m pip install --target, wheels only) for the test that
runs PyGithub against mp dev serve-world. --check only says whether it is there.",
    present,
    install,
};

/// The stamp's text: every pin, one per line.
fn stamp_text() -> String {
    let mut text = PINS.join("\n");
    text.push('\n');
    text
}

/// The directory when the pinned packages are installed in it.
pub(crate) fn present(root: &Path) -> Option<PathBuf> {
    let dir = root.join(DIR);
    let stamp = fs::read_to_string(dir.join(STAMP)).ok()?;
    (stamp == stamp_text() && dir.join("github").join("__init__.py").is_file()).then_some(dir)
}

/// Makes sure the pinned packages are installed; the directory.
pub(crate) fn install(root: &Path) -> anyhow::Result<PathBuf> {
    if let Some(dir) = present(root) {
        return Ok(dir);
    }
    let dir = root.join(DIR);
    // Installed beside the final place and moved there whole, so an interrupted run leaves
    // nothing that looks installed.
    let partial = dir.with_extension("partial");
    for stale in [&partial, &dir] {
        if stale.exists() {
            fs::remove_dir_all(stale).with_context(|| format!("removing {}", stale.display()))?;
        }
    }
    let command = format!(
        "python3 -m pip install --target {} --no-deps --only-binary :all: {}",
        partial.display(),
        PINS.join(" ")
    );
    say(&format!("installing {PYGITHUB} from PyPI"));
    let status = Command::new("python3")
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .args([
            "--no-input",
            "--no-deps",
            "--only-binary",
            ":all:",
            "--target",
        ])
        .arg(&partial)
        .args(PINS)
        .status();
    match status {
        Ok(status) if status.success() => {}
        Ok(status) => bail!(
            "`{command}` failed ({status}); without pip, `apt-get install -y python3-pip` first"
        ),
        Err(err) => bail!("`{command}` could not start ({err}): install Python 3 and pip"),
    }
    fs::write(partial.join(STAMP), stamp_text()).context("writing the pin stamp")?;
    fs::rename(&partial, &dir).with_context(|| format!("moving {} into place", dir.display()))?;
    Ok(dir)
}

fn say(line: &str) {
    STEP.say(line);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pin_is_one_exact_version() {
        for pin in PINS {
            let (name, version) = pin.split_once("==").expect("name==version");
            assert!(!name.is_empty() && !version.is_empty(), "{pin}");
            assert!(
                !version.contains(['*', ',', '<', '>', '=', '~']),
                "{pin} is not exact"
            );
        }
        assert!(PINS.contains(&PYGITHUB));
    }
}
