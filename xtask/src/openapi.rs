//! `cargo xtask openapi`: GitHub's published REST description, for the conformance test of
//! the loopback server (`crates/mp-github-fake/tests/loopback/conformance`, decisions/0029).
//!
//! It packs the npm package `@octokit/openapi` (about 29 MB) at one exact version with
//! `npm pack`, checks the tarball against the pinned sha512 integrity, and extracts the
//! dereferenced description of api.github.com to [`DESCRIPTION`] under the workspace root
//! ([`NpmPackage`]). Nothing else in the package is kept but its licence.

use std::path::{Path, PathBuf};

use crate::prereq::{NpmPackage, Prerequisite};

/// The npm package that publishes GitHub's REST description (MIT). Its first member is
/// OpenAPI 3.0.3 with every `$ref` inlined; the licence is kept beside it.
const PACKAGE: NpmPackage = NpmPackage {
    name: "@octokit/openapi",
    version: "23.0.2",
    integrity: "sha512-pV8M7L9GY23AybNvTmo2nyjmpmnt6+2sRE/tqr0ZLQcPS4lnw7u5eZGNmwRNkBC3D7gZXbFx5AHzLUVRBXGDhg==",
    members: &[
        (
            "package/generated/api.github.com.deref.json",
            "api.github.com.deref.json",
        ),
        ("package/LICENSE", "LICENSE"),
    ],
};

/// Where the package's files land, relative to the workspace root.
const DIR: &str = "target/openapi";

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
    let dir = root.join(DIR);
    PACKAGE.present(&dir).then(|| PACKAGE.main_file(&dir))
}

/// Makes sure the pinned description is extracted; its path.
pub(crate) fn fetch(root: &Path) -> anyhow::Result<PathBuf> {
    let dir = root.join(DIR);
    PACKAGE.fetch(&dir, &STEP)?;
    Ok(PACKAGE.main_file(&dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_step_names_the_pinned_version() {
        assert_eq!(STEP.name, PACKAGE.spec());
    }

    #[test]
    fn the_pin_is_an_exact_version_and_a_sha512() {
        crate::prereq::assert_pinned(&PACKAGE);
    }

    #[test]
    fn the_test_reads_the_first_member() {
        assert_eq!(Path::new(DESCRIPTION), PACKAGE.main_file(Path::new(DIR)));
    }
}
