//! `cargo xtask test`: the whole test suite on a fresh machine — installs what the tests
//! need (Debian's `chromium` for the HTML report test, GitHub's pinned REST description for
//! the loopback conformance test through `cargo xtask openapi`, GitHub's pinned GraphQL
//! schema for the query validation test through `cargo xtask graphql`, the pinned PyGithub
//! for the third-party client test through `cargo xtask pyclient`, GitHub's pinned webhook
//! examples and schemas for mp-serve's payload test through `cargo xtask webhooks`), then
//! runs the workspace tests with cargo-nextest (installed with `cargo install` when the
//! machine lacks it: each test in its own process, spread over the cores) and the
//! documentation tests with `cargo test --doc`, which nextest does not run. Each part's
//! wall time is printed.
//!
//! Installing needs root or password-less `sudo` and an `apt-get`; without them the
//! command stops before the tests and names the package to install by hand. The REST
//! description, the GraphQL schema and the webhook packages need `npm` and the npm
//! registry; PyGithub needs `python3 -m pip` and PyPI.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};

/// Where the HTML report test looks for the browser (Debian's package path).
const CHROMIUM: &str = "/usr/bin/chromium";

/// Debian packages the test suite needs, with the binary that shows each is there.
const PACKAGES: &[(&str, &str)] = &[("chromium", CHROMIUM)];

pub(crate) fn run(root: &Path, args: &[&str]) -> anyhow::Result<()> {
    let (no_install, cargo_args) = match args.split_first() {
        Some((&"--no-install", rest)) => (true, rest),
        _ => (false, args),
    };
    if cargo_args
        .first()
        .is_some_and(|a| *a == "--help" || *a == "-h")
    {
        say(HELP);
        return Ok(());
    }
    let missing: Vec<&str> = PACKAGES
        .iter()
        .filter(|(_, binary)| !Path::new(binary).exists())
        .map(|(package, _)| *package)
        .collect();
    if !missing.is_empty() {
        if no_install {
            bail!(
                "missing test prerequisites: {} (run without --no-install, or `apt-get install -y --no-install-recommends {}`)",
                missing.join(", "),
                missing.join(" ")
            );
        }
        install(&missing)?;
    }
    let description = crate::openapi::STEP.prepare(root, no_install)?;
    let graphql_schema = crate::graphql::STEP.prepare(root, no_install)?;
    let pyclient = crate::pyclient::STEP.prepare(root, no_install)?;
    let webhooks = crate::webhooks::STEP.prepare(root, no_install)?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    if !has_nextest(&cargo) {
        if no_install {
            bail!(
                "missing test prerequisite: cargo-nextest (run without --no-install, or `cargo install cargo-nextest --locked`)"
            );
        }
        say("installing cargo-nextest with cargo install");
        let status = Command::new(&cargo)
            .args(["install", "cargo-nextest", "--locked"])
            .status()
            .context("starting cargo install cargo-nextest")?;
        if !status.success() {
            bail!("cargo install cargo-nextest failed ({status})");
        }
    }
    let run = |what: &str, args: &[&str], extra: &[&str]| -> anyhow::Result<()> {
        let started = Instant::now();
        let status = Command::new(&cargo)
            .current_dir(root)
            .env(crate::openapi::ENV, &description)
            .env(crate::graphql::ENV, &graphql_schema)
            .env(crate::pyclient::ENV, &pyclient)
            .envs(crate::webhooks::envs(&webhooks))
            .args(args)
            .args(extra)
            .status()
            .with_context(|| format!("starting {what}"))?;
        say(&format!("{what}: {:.0} s", started.elapsed().as_secs_f64()));
        if !status.success() {
            bail!("{what} failed ({status})");
        }
        Ok(())
    };
    run(
        "cargo nextest run --workspace",
        &["nextest", "run", "--workspace", "--locked"],
        cargo_args,
    )?;
    // nextest runs no documentation tests; a filter given for nextest does not apply.
    if cargo_args.is_empty() {
        run(
            "cargo test --doc --workspace",
            &["test", "--doc", "--workspace", "--locked"],
            &[],
        )?;
    }
    Ok(())
}

/// Whether `cargo nextest` runs on this machine.
fn has_nextest(cargo: &str) -> bool {
    Command::new(cargo)
        .args(["nextest", "--version"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

const HELP: &str = "cargo xtask test [--no-install] [-- NEXTEST ARGS]

Installs what the test suite needs when it is missing (Debian's `chromium`, with
apt-get, as root or through password-less sudo; cargo-nextest, with cargo install;
GitHub's REST description, with `cargo xtask openapi`; GitHub's GraphQL schema, with
`cargo xtask graphql`; PyGithub, with `cargo xtask pyclient`; GitHub's webhook
examples and schemas, with `cargo xtask webhooks`), then runs
`cargo nextest run --workspace --locked` with any further arguments and, when none
are given, the documentation tests (`cargo test --doc --workspace --locked`).
--no-install  only check the prerequisites; fail naming what is missing";

fn install(packages: &[&str]) -> anyhow::Result<()> {
    if which("apt-get").is_none() {
        bail!(
            "the test suite needs {} and this machine has no apt-get: install it by hand",
            packages.join(", ")
        );
    }
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0");
    let sudo = !root
        && Command::new("sudo")
            .args(["-n", "true"])
            .status()
            .is_ok_and(|s| s.success());
    if !root && !sudo {
        bail!(
            "the test suite needs {} and installing it needs root: run `sudo apt-get install -y --no-install-recommends {}`",
            packages.join(", "),
            packages.join(" ")
        );
    }
    say(&format!("installing {} with apt-get", packages.join(", ")));
    let apt = |args: &[&str]| -> anyhow::Result<()> {
        let mut command = if sudo {
            let mut c = Command::new("sudo");
            c.arg("-n").arg("apt-get");
            c
        } else {
            Command::new("apt-get")
        };
        let status = command
            .env("DEBIAN_FRONTEND", "noninteractive")
            .args(args)
            .status()
            .context("starting apt-get")?;
        if !status.success() {
            bail!("apt-get {} failed ({status})", args.join(" "));
        }
        Ok(())
    };
    apt(&["update"])?;
    let mut args = vec!["install", "-y", "--no-install-recommends"];
    args.extend_from_slice(packages);
    apt(&args)
}

fn which(program: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

fn say(line: &str) {
    #[allow(clippy::print_stderr)]
    {
        eprintln!("xtask test: {line}");
    }
}
