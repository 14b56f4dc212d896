//! Test prerequisites fetched from a registry at pinned versions (`cargo xtask openapi`,
//! `cargo xtask graphql`, `cargo xtask pyclient`, `cargo xtask webhooks`): one command
//! shape, one way for `cargo xtask test` to get them or, with `--no-install`, only check
//! them, and one way to fetch a pinned npm package.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail};
use base64::Engine as _;
use sha2::{Digest, Sha512};

/// One prerequisite: its command, what it provides, where it lands, and how to find or
/// install it.
pub(crate) struct Prerequisite {
    /// The xtask command, e.g. `openapi`.
    pub(crate) command: &'static str,
    /// What it provides, pinned, e.g. `@octokit/openapi@23.0.2`.
    pub(crate) name: &'static str,
    /// Where it lands, relative to the workspace root.
    pub(crate) path: &'static str,
    /// The command's help text.
    pub(crate) help: &'static str,
    /// Its path when it is there at the pinned version.
    pub(crate) present: fn(&Path) -> Option<PathBuf>,
    /// Installs it (a no-op when present) and returns its path.
    pub(crate) install: fn(&Path) -> anyhow::Result<PathBuf>,
}

impl Prerequisite {
    /// `cargo xtask <command> [--check]`.
    pub(crate) fn run(&self, root: &Path, args: &[&str]) -> anyhow::Result<()> {
        let path = match args {
            [] => (self.install)(root)?,
            ["--check"] => self.present_or_fail(root)?,
            _ => {
                self.say(self.help);
                bail!("unknown arguments: {}", args.join(" "))
            }
        };
        self.say(&format!("{}: {}", self.name, path.display()));
        Ok(())
    }

    /// Its path: installed when missing, or, with `no_install`, only checked.
    pub(crate) fn prepare(&self, root: &Path, no_install: bool) -> anyhow::Result<PathBuf> {
        if no_install {
            self.present_or_fail(root)
        } else {
            (self.install)(root)
        }
    }

    fn present_or_fail(&self, root: &Path) -> anyhow::Result<PathBuf> {
        (self.present)(root).with_context(|| {
            format!(
                "missing test prerequisite: {} in {} (run `cargo xtask {}`)",
                self.name, self.path, self.command
            )
        })
    }

    /// One line on stderr, prefixed with the command.
    pub(crate) fn say(&self, line: &str) {
        #[allow(clippy::print_stderr)]
        {
            eprintln!("xtask {}: {line}", self.command);
        }
    }
}

/// One npm package pinned by version and tarball integrity, and the members of its tarball
/// that are kept (`cargo xtask openapi`, `graphql`, `webhooks`).
///
/// [`NpmPackage::fetch`] packs it with `npm pack`, checks the tarball against the pinned
/// sha512 integrity and extracts the members. A present first member whose stamp
/// (`<file>.integrity`) names the pinned integrity is kept as it is, so the step costs
/// nothing after the first run.
pub(crate) struct NpmPackage {
    /// The npm name.
    pub(crate) name: &'static str,
    /// The pinned version; bump it together with `integrity`
    /// (`npm view <name>@<version> dist.integrity`).
    pub(crate) version: &'static str,
    /// The registry's `dist.integrity` of the version's tarball.
    pub(crate) integrity: &'static str,
    /// Tarball member -> file name in the step's directory. The first is the one the test
    /// reads; its stamp names the integrity it came from.
    pub(crate) members: &'static [(&'static str, &'static str)],
}

impl NpmPackage {
    /// `<name>@<version>`.
    pub(crate) fn spec(&self) -> String {
        format!("{}@{}", self.name, self.version)
    }

    /// The file `npm pack` writes: `@scope/name@v` packs to `scope-name-v.tgz`.
    fn tarball(&self) -> String {
        format!(
            "{}-{}.tgz",
            self.name.trim_start_matches('@').replace('/', "-"),
            self.version
        )
    }

    /// The file the test reads, which the stamp goes beside.
    pub(crate) fn main_file(&self, dir: &Path) -> PathBuf {
        dir.join(self.members[0].1)
    }

    /// Whether every member is extracted into `dir` and the stamp names the pinned
    /// integrity.
    pub(crate) fn present(&self, dir: &Path) -> bool {
        let main = self.main_file(dir);
        fs::read_to_string(stamp_path(&main)).is_ok_and(|stamp| stamp.trim() == self.integrity)
            && self
                .members
                .iter()
                .all(|(_, file)| dir.join(file).is_file())
    }

    /// Makes sure the members are extracted into `dir` from the pinned tarball, packing it
    /// when it is not already there; `step` prefixes what is said.
    pub(crate) fn fetch(&self, dir: &Path, step: &Prerequisite) -> anyhow::Result<()> {
        if self.present(dir) {
            return Ok(());
        }
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let tarball = dir.join(self.tarball());
        let bytes = match fs::read(&tarball) {
            Ok(bytes) if integrity(&bytes) == self.integrity => bytes,
            _ => {
                self.pack(dir, step)?;
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

    fn pack(&self, dir: &Path, step: &Prerequisite) -> anyhow::Result<()> {
        let spec = self.spec();
        step.say(&format!("npm pack {spec}"));
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
                 the package's {} at {}",
                self.members[0].0.trim_start_matches("package/"),
                self.main_file(dir).display()
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

/// Checks of every pinned npm package, called by each step's tests: an exact version, a
/// sha512 integrity, and at least the member the test reads.
#[cfg(test)]
pub(crate) fn assert_pinned(package: &NpmPackage) {
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
    assert!(!package.members.is_empty(), "{}", package.spec());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npm_pack_names_the_tarball_after_scope_name_and_version() {
        let package = NpmPackage {
            name: "@octokit/openapi",
            version: "23.0.2",
            integrity: "",
            members: &[],
        };
        assert_eq!(package.tarball(), "octokit-openapi-23.0.2.tgz");
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
