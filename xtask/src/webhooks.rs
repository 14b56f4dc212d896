//! `cargo xtask webhooks`: GitHub's example webhook deliveries and its published webhook
//! schemas, for the test that runs mp-serve's payload models over them
//! (`crates/mp-serve/tests/examples.rs`, decisions/0033).
//!
//! It packs two npm packages, each at one exact version, with `npm pack`, checks each
//! tarball against its pinned sha512 integrity, and extracts the api.github.com file of
//! each to [`DIR`] under the workspace root ([`NpmPackage`]): [`EXAMPLES`] from
//! `@octokit/webhooks-examples` and [`SCHEMA`] from `@octokit/openapi-webhooks` (OpenAPI
//! 3.1, `$ref`s kept). Nothing else in the packages is kept but their licence statements.

use std::path::{Path, PathBuf};

use crate::prereq::{NpmPackage, Prerequisite};

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
const EXAMPLES_PACKAGE: NpmPackage = NpmPackage {
    name: "@octokit/webhooks-examples",
    version: "7.6.1",
    integrity: "sha512-De6U3XB6O3DtCa7bKgCMzTHdeopqqZ6SNivMYJnK65ierKL1AnNIA0tkRYCRS7lwGT792d+Ps1WbfHlso6MynQ==",
    members: &[
        ("package/api.github.com/index.json", EXAMPLES),
        ("package/package.json", "webhooks-examples.package.json"),
    ],
};

/// GitHub's webhook schemas from github/rest-api-description, republished per release (MIT).
const SCHEMA_PACKAGE: NpmPackage = NpmPackage {
    name: "@octokit/openapi-webhooks",
    version: "12.1.0",
    integrity: "sha512-Z5eDsLCUNbx1zHpZb1LNQirADqdMTvWJQ/deahi0ws+tWWnwHXB+Pr4jfmM9OrETS9Y5iW8ZRu1fdbudObhLrg==",
    members: &[
        ("package/generated/api.github.com.json", SCHEMA),
        ("package/LICENSE", "openapi-webhooks.LICENSE"),
    ],
};

const PACKAGES: [&NpmPackage; 2] = [&EXAMPLES_PACKAGE, &SCHEMA_PACKAGE];

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
    for package in PACKAGES {
        package.fetch(&dir, &STEP)?;
    }
    Ok(dir)
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
            crate::prereq::assert_pinned(package);
        }
    }

    #[test]
    fn the_test_reads_the_first_member_of_each_package() {
        let dir = Path::new(DIR);
        let envs = envs(dir);
        assert_eq!(envs[0].1, EXAMPLES_PACKAGE.main_file(dir));
        assert_eq!(envs[1].1, SCHEMA_PACKAGE.main_file(dir));
    }
}
