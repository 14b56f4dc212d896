//! The agent registry: which agent tools exist and which models each may declare (L4).

use std::collections::BTreeMap;

/// Allowed `Agent-Tool` values and, per tool, allowed `Agent-Model` values.
///
/// A model list of `["*"]` allows any model; a tool without a model list allows any model.
/// Machines are never checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentRegistry {
    tools: Vec<String>,
    models: BTreeMap<String, Vec<String>>,
}

impl AgentRegistry {
    /// Builds a registry from its tool list and per-tool model lists.
    pub fn new(tools: Vec<String>, models: BTreeMap<String, Vec<String>>) -> Self {
        Self { tools, models }
    }

    /// The registered tools, in file order.
    pub fn tools(&self) -> &[String] {
        &self.tools
    }

    /// The model list of a tool, if one is given.
    pub fn models_for(&self, tool: &str) -> Option<&[String]> {
        self.models.get(tool).map(Vec::as_slice)
    }

    /// Whether `tool` is registered and `model` is allowed for it.
    pub fn model_allowed(&self, tool: &str, model: &str) -> bool {
        if !self.tools.iter().any(|t| t == tool) {
            return false;
        }
        match self.models.get(tool) {
            None => true,
            Some(models) => models.iter().any(|m| m == "*" || m == model),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_allowed_follows_the_registry() {
        let mut models = BTreeMap::new();
        models.insert("claude-code".to_owned(), vec!["*".to_owned()]);
        models.insert("manual".to_owned(), vec!["n/a".to_owned()]);
        let registry = AgentRegistry::new(
            vec!["claude-code".into(), "manual".into(), "aider".into()],
            models,
        );
        assert!(registry.model_allowed("claude-code", "anything"));
        assert!(registry.model_allowed("manual", "n/a"));
        assert!(!registry.model_allowed("manual", "gpt-5"));
        assert!(
            registry.model_allowed("aider", "gpt-5"),
            "tool without a model list allows any"
        );
        assert!(
            !registry.model_allowed("cursor", "n/a"),
            "unregistered tool"
        );
    }
}
