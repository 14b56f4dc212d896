//! `cargo xtask webhooks`: GitHub's example webhook deliveries and its published webhook
//! schemas, for the test that runs mp-serve's payload models over them
//! (`crates/mp-serve/tests/examples.rs`, decisions/0033).
//!
//! It packs two npm packages, each at one exact version, with `npm pack`, checks each
//! tarball against its pinned sha512 integrity, and extracts the api.github.com file of
//! each to [`DIR`] under the workspace root: [`EXAMPLES`] from `@octokit/webhooks-examples`
//! and [`SCHEMA`] from `@octokit/openapi-webhooks` (OpenAPI 3.1, `$ref`s kept). A present
//! file whose stamp names the pinned integrity is kept as it is, so the step costs nothing
//! after the first run. Nothing else in the packages is kept but their licence statements.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail};
use base64::Engine as _;
use sha2::{Digest, Sha512};

use crate::prereq::Prerequisite;

/// One pinned npm package and the members of its tarball that are kept.
struct Package {
    /// The npm name.
    name: &'static str,
    /// The pinned version; bump it together with `integrity`
    /// (`npm view <name>@<version> dist.integrity`).
    version: &'static str,
    /// The registry's `dist.integrity` of the version's tarball.
    integrity: &'static str,
    /// The file `npm pack` writes.
    tarball: &'static str,
    /// Tarball member -> file name in [`DIR`]. The first is the one the test reads; its
    /// stamp (`<file>.integrity`) names the integrity it came from.
    members: &'static [(&'static str, &'static str)],
}

/// Where the files land, relative to the workspace root.
pub(crate) const DIR: &str = "target/webhooks";

/// The example deliveries, in [`DIR`]: a list of `{name, actions, examples, ..}`, one per
/// event, each example a delivery's body.
pub(crate) const EXAMPLES: &str = "examples.api.github.com.json";

/// The webhook description, in [`DIR`]: `webhooks` and `components/schemas`.
pub(crate) const SCHEMA: &str = "openapi-webhooks.api.github.com.json";

/// The environment variable through which `cargo xtask test` hands [`EXAMPLES`]' path to
/// the test.
pub(crate) const EXAMPLES_ENV: &str = "MP_GITHUB_WEBHOOK_EXAMPLES";

/// The environment variable through which `cargo xtask test` hands [`SCHEMA`]'s path to the
/// test.
pub(crate) const SCHEMA_ENV: &str = "MP_GITHUB_WEBHOOK_SCHEMA";

/// Example deliveries contributed to octokit/webhooks (MIT; the tarball has no licence file,
/// its `package.json` states it).
const EXAMPLES_PACKAGE: Package = Package {
    name: "@octokit/webhooks-examples",
    version: "7.6.1",
    integrity: "sha512-De6U3XB6O3DtCa7bKgCMzTHdeopqqZ6SNivMYJnK65ierKL1AnNIA0tkRYCRS7lwGT792d+Ps1WbfHlso6MynQ==",
    tarball: "octokit-webhooks-examples-7.6.1.tgz",
    members: &[
        ("package/api.github.com/index.json", EXAMPLES),
        ("package/package.json", "webhooks-examples.package.json"),
    ],
};

/// GitHub's webhook schemas from github/rest-api-description, republished per release (MIT).
const SCHEMA_PACKAGE: Package = Package {
    name: "@octokit/openapi-webhooks",
    version: "12.1.0",
    integrity: "sha512-Z5eDsLCUNbx1zHpZb1LNQirADqdMTvWJQ/deahi0ws+tWWnwHXB+Pr4jfmM9OrETS9Y5iW8ZRu1fdbudObhLrg==",
    tarball: "octokit-openapi-webhooks-12.1.0.tgz",
    members: &[
        ("package/generated/api.github.com.json", SCHEMA),
        ("package/LICENSE", "openapi-webhooks.LICENSE"),
    ],
};

const PACKAGES: [&Package; 2] = [&EXAMPLES_PACKAGE, &SCHEMA_PACKAGE];

/// `cargo xtask webhooks`, and how `cargo xtask test` gets the two files.
pub(crate) const STEP: Prerequisite = Prerequisite {
    command: "webhooks",
    name: "@octokit/webhooks-examples@7.6.1 and @octokit/openapi-webhooks@12.1.0",
    path: DIR,
    help: "cargo xtask webhooks [--check]

Packs @octokit/webhooks-examples and @octokit/openapi-webhooks at the pinned versions
with `npm pack`, checks their sha512 integrity and extracts
target/webhooks/examples.api.github.com.json and
target/webhooks/openapi-webhooks.api.github.com.json for the payload test of mp-serve.
--check only says whether they are there.",
    present,
    install: fetch,
};

/// The variables `cargo xtask test` sets, given the directory [`STEP`] returned.
pub(crate) fn envs(dir: &Path) -> [(&'static str, PathBuf); 2] {
    [
        (EXAMPLES_ENV, dir.join(EXAMPLES)),
        (SCHEMA_ENV, dir.join(SCHEMA)),
    ]
}

/// The directory when both packages' files are extracted from the pinned tarballs.
pub(crate) fn present(root: &Path) -> Option<PathBuf> {
    let dir = root.join(DIR);
    PACKAGES
        .iter()
        .all(|package| package.present(&dir))
        .then_some(dir)
}

/// Makes sure both pinned packages' files are extracted; the directory.
pub(crate) fn fetch(root: &Path) -> anyhow::Result<PathBuf> {
    let dir = root.join(DIR);
    fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    for package in PACKAGES {
        package.fetch(&dir)?;
    }
    Ok(dir)
}

impl Package {
    /// `<name>@<version>`.
    fn spec(&self) -> String {
        format!("{}@{}", self.name, self.version)
    }

    /// The file the stamp goes beside.
    fn main_file(&self, dir: &Path) -> PathBuf {
        dir.join(self.members[0].1)
    }

    /// Whether every member is extracted and the stamp names the pinned integrity.
    fn present(&self, dir: &Path) -> bool {
        let main = self.main_file(dir);
        fs::read_to_string(stamp_path(&main)).is_ok_and(|stamp| stamp.trim() == self.integrity)
            && self
                .members
                .iter()
                .all(|(_, file)| dir.join(file).is_file())
    }

    fn fetch(&self, dir: &Path) -> anyhow::Result<()> {
        if self.present(dir) {
            return Ok(());
        }
        let tarball = dir.join(self.tarball);
        let bytes = match fs::read(&tarball) {
            Ok(bytes) if integrity(&bytes) == self.integrity => bytes,
            _ => {
                self.pack(dir)?;
                fs::read(&tarball).with_context(|| format!("reading {}", tarball.display()))?
            }
        };
        let found = integrity(&bytes);
        if found != self.integrity {
            // Never keep a tarball that is not the pinned one.
            let _ = fs::remove_file(&tarball);
            bail!(
                "{}: the tarball's integrity is {found}, the pinned one {}",
                self.spec(),
                self.integrity
            );
        }
        self.extract(&bytes, dir)?;
        fs::write(
            stamp_path(&self.main_file(dir)),
            format!("{}\n", self.integrity),
        )
        .context("writing the integrity stamp")
    }

    fn pack(&self, dir: &Path) -> anyhow::Result<()> {
        let spec = self.spec();
        say(&format!("npm pack {spec}"));
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
                "`npm pack {spec}` could not start ({err}): install Node.js and npm, or put \
                 the package's {} at {DIR}/{}",
                self.members[0].0.trim_start_matches("package/"),
                self.members[0].1
            ),
        }
    }

    /// Writes each member of the gzipped tarball into `dir` (through a temporary file, so
    /// an interrupted run leaves nothing half-written).
    fn extract(&self, tarball: &[u8], dir: &Path) -> anyhow::Result<()> {
        let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(tarball));
        let mut found = Vec::new();
        for entry in archive.entries().context("reading the tarball")? {
            let mut entry = entry.context("reading the tarball")?;
            let name = entry.path().context("a tarball entry's path")?.into_owned();
            let Some((member, file)) = self
                .members
                .iter()
                .find(|(member, _)| name == Path::new(member))
            else {
                continue;
            };
            let mut bytes = Vec::new();
            entry
                .read_to_end(&mut bytes)
                .with_context(|| format!("reading {}", name.display()))?;
            let target = dir.join(file);
            let partial = target.with_extension("partial");
            fs::write(&partial, &bytes)
                .with_context(|| format!("writing {}", partial.display()))?;
            fs::rename(&partial, &target)
                .with_context(|| format!("moving {} into place", target.display()))?;
            found.push(*member);
        }
        if let Some((missing, _)) = self.members.iter().find(|(m, _)| !found.contains(m)) {
            bail!("{} has no {missing}", self.spec());
        }
        Ok(())
    }
}

fn stamp_path(file: &Path) -> PathBuf {
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(".integrity");
    file.with_file_name(name)
}

/// The npm form of a tarball's sha512: `sha512-<base64>`.
fn integrity(bytes: &[u8]) -> String {
    let digest = Sha512::digest(bytes);
    format!(
        "sha512-{}",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

fn say(line: &str) {
    STEP.say(line);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_step_names_the_pinned_versions() {
        assert_eq!(
            STEP.name,
            format!("{} and {}", EXAMPLES_PACKAGE.spec(), SCHEMA_PACKAGE.spec())
        );
    }

    #[test]
    fn each_pin_is_an_exact_version_and_a_sha512() {
        for package in PACKAGES {
            assert!(
                package.version.split('.').all(|p| p.parse::<u32>().is_ok()),
                "{}",
                package.spec()
            );
            assert!(
                package.integrity.starts_with("sha512-") && package.integrity.len() == 7 + 88,
                "{}",
                package.spec()
            );
            // `npm pack @scope/name@v` writes `scope-name-v.tgz`.
            let packed = format!(
                "{}-{}.tgz",
                package.name.trim_start_matches('@').replace('/', "-"),
                package.version
            );
            assert_eq!(package.tarball, packed);
        }
    }

    #[test]
    fn the_test_reads_the_first_member_of_each_package() {
        let dir = Path::new(DIR);
        let envs = envs(dir);
        assert_eq!(envs[0].1, EXAMPLES_PACKAGE.main_file(dir));
        assert_eq!(envs[1].1, SCHEMA_PACKAGE.main_file(dir));
    }

    #[test]
    fn a_stamp_sits_beside_its_file() {
        assert_eq!(
            stamp_path(Path::new("target/webhooks/a.json")),
            Path::new("target/webhooks/a.json.integrity")
        );
    }

    #[test]
    fn integrity_is_npm_sha512_base64() {
        // `printf '' | openssl dgst -sha512 -binary | base64`
        assert_eq!(
            integrity(b""),
            "sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg=="
        );
    }
}
