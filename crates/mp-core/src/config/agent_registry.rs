//! `agent_registry.yml`: the agent tools and, per tool, the models commits may declare (L4).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_saphyr::Spanned;

use super::problem::{codes, shown};
use super::validate::{self, Sink, first_at, item};
use super::yaml::{self, SpannedMap};
use crate::registry::AgentRegistry;

/// Agent tools and their allowed models.
///
/// Commits declare `Agent-Tool` and `Agent-Model` trailers; the registry says which pairs
/// are known.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(title = "agent_registry.yml"))]
pub(crate) struct AgentRegistryFile {
    /// Every allowed `Agent-Tool` value.
    #[cfg_attr(
        feature = "schema",
        schemars(
            with = "Vec<String>",
            length(min = 1),
            inner(regex(pattern = super::validate::TOOL_PATTERN)),
            extend("uniqueItems" = true)
        )
    )]
    tools: Spanned<Vec<Spanned<String>>>,
    /// Per tool, the allowed `Agent-Model` values; `["*"]` allows any model. A tool without
    /// an entry allows any model.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "BTreeMap<String, ModelList>"))]
    models: SpannedMap<Spanned<Vec<Spanned<String>>>>,
    /// Legacy; accepted and ignored (machines are never checked).
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "Option<serde_json::Value>"))]
    machines: Option<Spanned<serde_json::Value>>,
}

/// A non-empty list of distinct model names.
#[cfg(feature = "schema")]
#[derive(schemars::JsonSchema)]
#[allow(dead_code, reason = "schema-only type")]
struct ModelList(
    #[schemars(
        length(min = 1),
        inner(length(min = 1, max = 100)),
        extend("uniqueItems" = true)
    )]
    Vec<String>,
);

/// Reads and checks an agent registry. `None` when the file cannot be read.
pub(crate) fn load(sink: &mut Sink<'_>, text: &str) -> Option<AgentRegistry> {
    let file = sink.file().to_owned();
    let raw: AgentRegistryFile = yaml::parse(&file, text, sink.problems())?;

    if raw.tools.value.is_empty() {
        sink.error(
            codes::INVALID_VALUE,
            "tools",
            &raw.tools.referenced,
            "tools is empty; list at least one agent tool",
        );
    }
    let mut tools: Vec<String> = Vec::new();
    let mut seen: BTreeMap<&str, u64> = BTreeMap::new();
    for (index, tool) in raw.tools.value.iter().enumerate() {
        let field = item("tools", index);
        if !validate::tool(sink, &field, tool) {
            continue;
        }
        if let Some(first) = seen.get(tool.value.as_str()) {
            sink.error(
                codes::INVALID_VALUE,
                &field,
                &tool.referenced,
                format!("tool `{}` is listed twice{}", tool.value, first_at(*first)),
            );
            continue;
        }
        seen.insert(&tool.value, tool.referenced.line());
        tools.push(tool.value.clone());
    }

    let mut models = BTreeMap::new();
    for (tool, list) in &raw.models.0 {
        let field = format!("models.{}", shown(&tool.value));
        if !raw.tools.value.iter().any(|t| t.value == tool.value) {
            sink.error(
                codes::INVALID_VALUE,
                &field,
                &tool.referenced,
                format!(
                    "models names tool `{}`, which is not in tools",
                    shown(&tool.value)
                ),
            );
            continue;
        }
        if list.value.is_empty() {
            sink.error(
                codes::INVALID_VALUE,
                &field,
                &list.referenced,
                format!(
                    "the model list of `{}` is empty; use [\"*\"] to allow any model",
                    tool.value
                ),
            );
            continue;
        }
        let names = validate::texts(sink, &field, &list.value, 100, "model");
        models.insert(tool.value.clone(), names);
    }

    if let Some(machines) = &raw.machines {
        sink.warning(
            codes::IGNORED_FIELD,
            "machines",
            &machines.referenced,
            "machines is a legacy setting and is ignored; Agent-Machine is never checked",
        );
    }
    Some(AgentRegistry::new(tools, models))
}
