//! GitHub's published GraphQL schema (`@octokit/graphql-schema`, pinned; `cargo xtask
//! graphql` extracts it), parsed and fully validated by apollo-compiler.
//!
//! The pinned SDL declares the one custom directive it uses (`@requiredCapabilities`), so no
//! lenient parsing is needed. It has one known defect, listed in [`DUPLICATE_FIELDS`]: two
//! fields of `EnterpriseOwnerInfo` are defined twice, with the same type and arguments and
//! different descriptions, which the GraphQL spec forbids and apollo-compiler rejects while
//! building the schema. Each listed duplicate is dropped from the parsed document before
//! the schema is built, and only when it has the first definition's type and arguments
//! (names, types and defaults), so which definition stays changes nothing an executable
//! document can be validated against. The schema is then validated as a whole: nothing is
//! assumed valid.

use std::path::PathBuf;
use std::sync::LazyLock;

use apollo_compiler::ast::{self, FieldDefinition};
use apollo_compiler::validation::Valid;
use apollo_compiler::{ExecutableDocument, Node, Schema};

/// The environment variable `cargo xtask test` sets to the schema's path.
pub const ENV: &str = "MP_GITHUB_GRAPHQL_SCHEMA";

/// Where `cargo xtask graphql` extracts the schema, from the workspace root.
const DEFAULT_PATH: &str = "target/graphql/schema.graphql";

/// Known defects of the pinned schema: fields (type, field) defined twice with the same
/// type and arguments. The later definition is dropped.
pub const DUPLICATE_FIELDS: &[(&str, &str)] = &[
    ("EnterpriseOwnerInfo", "repositoryDeployKeySetting"),
    (
        "EnterpriseOwnerInfo",
        "repositoryDeployKeySettingOrganizations",
    ),
];

/// The schema's path: `MP_GITHUB_GRAPHQL_SCHEMA`, else the place `cargo xtask graphql`
/// uses.
pub fn schema_path() -> PathBuf {
    std::env::var_os(ENV).map_or_else(
        || {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../..")
                .join(DEFAULT_PATH)
        },
        PathBuf::from,
    )
}

/// The validated schema and the duplicates dropped on the way.
pub struct GitHubSchema {
    pub schema: Valid<Schema>,
    /// Each entry of [`DUPLICATE_FIELDS`] that was found and dropped.
    pub dropped: Vec<(String, String)>,
}

/// The loaded schema, shared by the tests of this binary; a missing or invalid schema fails
/// the test that asks for it.
pub fn github() -> &'static GitHubSchema {
    static LOADED: LazyLock<Result<GitHubSchema, String>> = LazyLock::new(load);
    match &*LOADED {
        Ok(schema) => schema,
        Err(why) => panic!("{why}"),
    }
}

fn load() -> Result<GitHubSchema, String> {
    let path = schema_path();
    let text = std::fs::read_to_string(&path).map_err(|err| {
        format!(
            "GitHub's GraphQL schema is missing at {} ({err}): run `cargo xtask graphql` \
             (`cargo xtask test` runs it first), or set {ENV} to the file schema.graphql of \
             the npm package @octokit/graphql-schema",
            path.display()
        )
    })?;
    let mut document = ast::Document::parse(text, &path)
        .map_err(|with| format!("{}: not GraphQL SDL:\n{}", path.display(), with.errors))?;
    let dropped = drop_duplicate_fields(&mut document);
    let schema = document.to_schema_validate().map_err(|with| {
        format!(
            "{}: GitHub's schema does not validate:\n{}",
            path.display(),
            with.errors
        )
    })?;
    Ok(GitHubSchema { schema, dropped })
}

/// Drops the later definition of each field listed in [`DUPLICATE_FIELDS`] when it has the
/// first one's signature; any other duplicate stays, for the schema build to report.
fn drop_duplicate_fields(document: &mut ast::Document) -> Vec<(String, String)> {
    let mut dropped = Vec::new();
    for definition in &mut document.definitions {
        let ast::Definition::ObjectTypeDefinition(object) = definition else {
            continue;
        };
        let type_name = object.name.to_string();
        if !DUPLICATE_FIELDS.iter().any(|(t, _)| *t == type_name) {
            continue;
        }
        let object = object.make_mut();
        let mut kept: Vec<Node<FieldDefinition>> = Vec::new();
        for field in std::mem::take(&mut object.fields) {
            let listed = DUPLICATE_FIELDS.contains(&(type_name.as_str(), field.name.as_str()));
            match kept.iter().find(|first| first.name == field.name) {
                Some(first) if listed && same_signature(first, &field) => {
                    dropped.push((type_name.clone(), field.name.to_string()));
                }
                _ => kept.push(field),
            }
        }
        object.fields = kept;
    }
    dropped
}

/// Same type and the same arguments (name, type, default), descriptions and directives
/// aside.
fn same_signature(a: &FieldDefinition, b: &FieldDefinition) -> bool {
    a.ty == b.ty
        && a.arguments.len() == b.arguments.len()
        && a.arguments
            .iter()
            .zip(&b.arguments)
            .all(|(x, y)| x.name == y.name && x.ty == y.ty && x.default_value == y.default_value)
}

/// `text` parsed and validated as an executable document against `schema`, or the
/// diagnostics.
pub fn validate(
    schema: &Valid<Schema>,
    text: &str,
    path: &str,
) -> Result<Valid<ExecutableDocument>, String> {
    ExecutableDocument::parse_and_validate(schema, text, path)
        .map_err(|with| with.errors.to_string())
}
