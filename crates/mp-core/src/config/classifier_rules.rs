//! `classifier_rules.yml`: the path rule's glob lists, checked glob by glob.

use std::collections::BTreeMap;

use globset::GlobBuilder;
use serde::Deserialize;
use serde_saphyr::Spanned;

use super::problem::{codes, shown};
use super::validate::{Sink, first_at, item};
use super::yaml;
use crate::classifier::path_rules::PathRulesSpec;

/// Path globs of the default classifier rule.
///
/// Globs match repository paths: `*` stays within one directory, `**` spans directories.
/// A list left out keeps the shipped default; an explicit empty list turns it off.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(title = "classifier_rules.yml"))]
pub(crate) struct ClassifierRulesFile {
    /// A change to a matching path makes the pull request Quadrant D.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "Option<GlobList>"))]
    always_d: Option<Vec<Spanned<String>>>,
    /// Matching paths are append-only: adding files is fine, any other change is Quadrant D.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "Option<GlobList>"))]
    append_only: Option<Vec<Spanned<String>>>,
    /// A change to a matching path makes the pull request critical (Quadrant B, or D when
    /// it is also irreversible).
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "Option<GlobList>"))]
    critical: Option<Vec<Spanned<String>>>,
}

/// A list of distinct path globs.
#[cfg(feature = "schema")]
#[derive(schemars::JsonSchema)]
#[allow(dead_code, reason = "schema-only type")]
struct GlobList(#[schemars(inner(length(min = 1)), extend("uniqueItems" = true))] Vec<String>);

/// Reads and checks the path rules; lists left out keep [`PathRulesSpec::default`].
/// `None` when the file cannot be read.
pub(crate) fn load(sink: &mut Sink<'_>, text: &str) -> Option<PathRulesSpec> {
    let file = sink.file().to_owned();
    let raw: ClassifierRulesFile = yaml::parse(&file, text, sink.problems())?;
    let defaults = PathRulesSpec::default();
    Some(PathRulesSpec {
        always_d: globs(sink, "always_d", raw.always_d.as_deref(), defaults.always_d),
        append_only: globs(
            sink,
            "append_only",
            raw.append_only.as_deref(),
            defaults.append_only,
        ),
        critical: globs(sink, "critical", raw.critical.as_deref(), defaults.critical),
    })
}

/// The valid, distinct globs of one list (the default when the list is absent).
fn globs(
    sink: &mut Sink<'_>,
    field: &str,
    raw: Option<&[Spanned<String>]>,
    default: Vec<String>,
) -> Vec<String> {
    let Some(raw) = raw else {
        return default;
    };
    let mut out = Vec::new();
    let mut seen: BTreeMap<&str, u64> = BTreeMap::new();
    for (index, pattern) in raw.iter().enumerate() {
        let item_field = item(field, index);
        if let Some(problem) = glob_problem(&pattern.value) {
            sink.error(
                codes::BAD_PATTERN,
                &item_field,
                &pattern.referenced,
                format!("bad glob `{}`: {problem}", shown(&pattern.value)),
            );
            continue;
        }
        if let Some(first) = seen.get(pattern.value.as_str()) {
            sink.error(
                codes::INVALID_VALUE,
                &item_field,
                &pattern.referenced,
                format!(
                    "glob `{}` is listed twice{}",
                    shown(&pattern.value),
                    first_at(*first)
                ),
            );
            continue;
        }
        seen.insert(&pattern.value, pattern.referenced.line());
        out.push(pattern.value.clone());
    }
    out
}

/// Why `pattern` is not a usable path glob, if it is not.
pub(crate) fn glob_problem(pattern: &str) -> Option<String> {
    if pattern.trim().is_empty() {
        return Some("the pattern is empty".to_owned());
    }
    if pattern.trim() != pattern {
        return Some("the pattern starts or ends with whitespace".to_owned());
    }
    if pattern.starts_with('/') {
        return Some(
            "the pattern starts with `/` and can never match; paths are relative to the repository root"
                .to_owned(),
        );
    }
    if pattern.starts_with("./") {
        return Some(
            "the pattern starts with `./` and can never match; write the path without it"
                .to_owned(),
        );
    }
    match GlobBuilder::new(pattern).literal_separator(true).build() {
        Ok(_) => None,
        Err(err) => Some(shown(&err.kind().to_string())),
    }
}
