//! `cargo xtask openapi`: GitHub's published REST description, for the conformance test of
//! the loopback server (`crates/mp-github/tests/conformance`, decisions/0029).
//!
//! It packs the npm package `@octokit/openapi` at one exact version with `npm pack`, checks
//! the tarball against the pinned sha512 integrity, and extracts the dereferenced
//! description of api.github.com to [`DESCRIPTION`] under the workspace root. A present
//! description whose stamp names the pinned integrity is kept as it is, so the step costs
//! nothing after the first run. Nothing else in the package is kept but its licence.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail};

use crate::prereq::Prerequisite;
use base64::Engine as _;
use sha2::{Digest, Sha512};

/// The npm package that publishes GitHub's REST description (MIT).
const PACKAGE: &str = "@octokit/openapi";

/// The pinned version; bump it together with [`INTEGRITY`]
/// (`npm view @octokit/openapi@<version> dist.integrity`).
const VERSION: &str = "23.0.2";

/// The registry's `dist.integrity` of [`VERSION`]'s tarball.
const INTEGRITY: &str = "sha512-pV8M7L9GY23AybNvTmo2nyjmpmnt6+2sRE/tqr0ZLQcPS4lnw7u5eZGNmwRNkBC3D7gZXbFx5AHzLUVRBXGDhg==";

/// The tarball's member that is extracted: OpenAPI 3.0.3 with every `$ref` inlined.
const MEMBER: &str = "package/generated/api.github.com.deref.json";

/// The package's licence, kept beside the description.
const LICENSE_MEMBER: &str = "package/LICENSE";

/// Where the description lands, relative to the workspace root. The conformance test reads
/// this path unless `MP_GITHUB_OPENAPI` names another file.
pub(crate) const DESCRIPTION: &str = "target/openapi/api.github.com.deref.json";

/// The environment variable through which `cargo xtask test` hands the path to the test.
pub(crate) const ENV: &str = "MP_GITHUB_OPENAPI";

/// `cargo xtask openapi`, and how `cargo xtask test` gets the description.
pub(crate) const STEP: Prerequisite = Prerequisite {
    command: "openapi",
    name: "@octokit/openapi@23.0.2",
    path: DESCRIPTION,
    help: "cargo xtask openapi [--check]

Packs @octokit/openapi at the pinned version with `npm pack`, checks its sha512
integrity and extracts target/openapi/api.github.com.deref.json for the loopback
conformance test. --check only says whether it is there.",
    present,
    install: fetch,
};

/// The description's path when it is extracted from the pinned tarball.
pub(crate) fn present(root: &Path) -> Option<PathBuf> {
    let path = root.join(DESCRIPTION);
    let stamp = fs::read_to_string(stamp_path(&path)).ok()?;
    (stamp.trim() == INTEGRITY && path.is_file()).then_some(path)
}

/// Makes sure the pinned description is extracted; its path.
pub(crate) fn fetch(root: &Path) -> anyhow::Result<PathBuf> {
    if let Some(path) = present(root) {
        return Ok(path);
    }
    let description = root.join(DESCRIPTION);
    let dir = description
        .parent()
        .context("the description's path has a parent")?
        .to_path_buf();
    fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let tarball = dir.join(format!("octokit-openapi-{VERSION}.tgz"));
    let bytes = match fs::read(&tarball) {
        Ok(bytes) if integrity(&bytes) == INTEGRITY => bytes,
        _ => {
            pack(&dir)?;
            fs::read(&tarball).with_context(|| format!("reading {}", tarball.display()))?
        }
    };
    let found = integrity(&bytes);
    if found != INTEGRITY {
        // Never keep a tarball that is not the pinned one.
        let _ = fs::remove_file(&tarball);
        bail!(
            "{PACKAGE}@{VERSION}: the tarball's integrity is {found}, the pinned one {INTEGRITY}"
        );
    }
    extract(&bytes, &description)?;
    fs::write(stamp_path(&description), format!("{INTEGRITY}\n"))
        .context("writing the integrity stamp")?;
    Ok(description)
}

fn stamp_path(description: &Path) -> PathBuf {
    description.with_extension("json.integrity")
}

/// The npm form of a tarball's sha512: `sha512-<base64>`.
fn integrity(bytes: &[u8]) -> String {
    let digest = Sha512::digest(bytes);
    format!(
        "sha512-{}",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

fn pack(dir: &Path) -> anyhow::Result<()> {
    let spec = format!("{PACKAGE}@{VERSION}");
    say(&format!("npm pack {spec} (about 29 MB)"));
    let status = Command::new("npm")
        .arg("pack")
        .arg(&spec)
        .arg("--pack-destination")
        .arg(dir)
        .arg("--silent")
        .stdout(Stdio::null())
        .status();
    match status {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => bail!("`npm pack {spec}` failed ({status})"),
        Err(err) => bail!(
            "`npm pack {spec}` could not start ({err}): install Node.js and npm, or put the \
             package's generated/api.github.com.deref.json at {DESCRIPTION}"
        ),
    }
}

/// Writes [`MEMBER`] of the gzipped tarball to `description` (through a temporary file, so
/// an interrupted run leaves nothing half-written) and the licence beside it.
fn extract(tarball: &[u8], description: &Path) -> anyhow::Result<()> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(tarball));
    let mut found = false;
    for entry in archive.entries().context("reading the tarball")? {
        let mut entry = entry.context("reading the tarball")?;
        let name = entry.path().context("a tarball entry's path")?.into_owned();
        let target = if name == Path::new(MEMBER) {
            found = true;
            description.to_path_buf()
        } else if name == Path::new(LICENSE_MEMBER) {
            description.with_file_name("LICENSE")
        } else {
            continue;
        };
        let mut bytes = Vec::new();
        entry
            .read_to_end(&mut bytes)
            .with_context(|| format!("reading {}", name.display()))?;
        let partial = target.with_extension("partial");
        fs::write(&partial, &bytes).with_context(|| format!("writing {}", partial.display()))?;
        fs::rename(&partial, &target)
            .with_context(|| format!("moving {} into place", target.display()))?;
    }
    if !found {
        bail!("{PACKAGE}@{VERSION} has no {MEMBER}");
    }
    Ok(())
}

fn say(line: &str) {
    STEP.say(line);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_step_names_the_pinned_version() {
        assert_eq!(STEP.name, format!("{PACKAGE}@{VERSION}"));
    }

    #[test]
    fn integrity_is_npm_sha512_base64() {
        // `printf '' | openssl dgst -sha512 -binary | base64`
        assert_eq!(
            integrity(b""),
            "sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg=="
        );
    }

    #[test]
    fn the_pin_is_an_exact_version_and_a_sha512() {
        assert!(VERSION.split('.').all(|p| p.parse::<u32>().is_ok()));
        assert!(INTEGRITY.starts_with("sha512-") && INTEGRITY.len() == 7 + 88);
    }
}
