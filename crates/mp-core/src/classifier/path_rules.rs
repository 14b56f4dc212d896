//! The path rule's pattern lists (`classifier_rules.yml`) and their shipped default.

/// The three glob lists of the path rule, as written in `classifier_rules.yml`.
///
/// Patterns are path globs where `*` never crosses `/` and `**` spans directories.
/// Every list is matched against a file's path and, for renames, its previous path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathRulesSpec {
    /// A change to any matching path makes the pull request Quadrant D.
    pub always_d: Vec<String>,
    /// Matching paths are append-only: adding is fine, any other change is Quadrant D.
    pub append_only: Vec<String>,
    /// A change to any matching path makes the pull request critical (B, or D if it also
    /// removes a file).
    pub critical: Vec<String>,
}

impl Default for PathRulesSpec {
    /// The shipped default, equivalent to the reference bot's hard-coded prefixes.
    fn default() -> Self {
        let list = |items: &[&str]| items.iter().map(|s| (*s).to_owned()).collect();
        Self {
            always_d: list(&[
                "docs/concepts/**",
                "config/**",
                "governance/**",
                ".github/workflows/**",
                ".github/scripts/**",
                ".github/actions/**",
                "schemas/**",
                "bot-state/**",
            ]),
            append_only: list(&["docs/decisions/**", "docs/meetings/**"]),
            critical: list(&[
                "src/**",
                "schemas/**",
                "docs/concepts/**",
                ".github/workflows/**",
                "config/**",
                "governance/**",
            ]),
        }
    }
}
