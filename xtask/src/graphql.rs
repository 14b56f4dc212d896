//! `cargo xtask graphql`: GitHub's published GraphQL schema, for the test that validates
//! every query mp sends against it (`crates/mp-github/tests/graphql_schema.rs`).
//!
//! It packs the npm package `@octokit/graphql-schema` at one exact version with `npm pack`,
//! checks the tarball against the pinned sha512 integrity, and extracts the schema of
//! api.github.com (SDL, about 1.2 MB) to [`SCHEMA`] under the workspace root
//! ([`NpmPackage`]). Nothing else in the package is kept but its licence.

use std::path::{Path, PathBuf};

use crate::prereq::{NpmPackage, Prerequisite};

/// GitHub's GraphQL schema as its public schema endpoint gives it, republished by octokit
/// (MIT). The licence is kept beside the schema.
const PACKAGE: NpmPackage = NpmPackage {
    name: "@octokit/graphql-schema",
    version: "15.26.1",
    integrity: "sha512-RFDC2MpRBd4AxSRvUeBIVeBU7ojN/SxDfALUd7iVYOSeEK3gZaqR2MGOysj4Zh2xj2RY5fQAUT+Oqq7hWTraMA==",
    members: &[
        ("package/schema.graphql", "schema.graphql"),
        ("package/LICENSE.md", "LICENSE.md"),
    ],
};

/// Where the package's files land, relative to the workspace root.
const DIR: &str = "target/graphql";

/// Where the schema lands, relative to the workspace root. The test reads this path unless
/// [`ENV`] names another file.
pub(crate) const SCHEMA: &str = "target/graphql/schema.graphql";

/// The environment variable through which `cargo xtask test` hands the path to the test.
pub(crate) const ENV: &str = "MP_GITHUB_GRAPHQL_SCHEMA";

/// `cargo xtask graphql`, and how `cargo xtask test` gets the schema.
pub(crate) const STEP: Prerequisite = Prerequisite {
    command: "graphql",
    name: "@octokit/graphql-schema@15.26.1",
    path: SCHEMA,
    help: "cargo xtask graphql [--check]

Packs @octokit/graphql-schema at the pinned version with `npm pack`, checks its sha512
integrity and extracts target/graphql/schema.graphql for the test that validates mp's
GraphQL queries. --check only says whether it is there.",
    present,
    install: fetch,
};

/// The schema's path when it is extracted from the pinned tarball.
pub(crate) fn present(root: &Path) -> Option<PathBuf> {
    let dir = root.join(DIR);
    PACKAGE.present(&dir).then(|| PACKAGE.main_file(&dir))
}

/// Makes sure the pinned schema is extracted; its path.
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
        assert_eq!(Path::new(SCHEMA), PACKAGE.main_file(Path::new(DIR)));
    }
}
