//! The user skills handed to one tick: validators, classifier rules and branch hooks, with
//! the load counters the adapter that loaded them reports.

use std::fmt;
use std::sync::Arc;

use super::{BranchHook, ClassifierRule, Validator};

/// A user validator shared with the tick.
pub type SharedValidator = Arc<dyn Validator + Send + Sync>;
/// A user classifier rule shared with the tick.
pub type SharedClassifierRule = Arc<dyn ClassifierRule + Send + Sync>;
/// A user branch hook shared with the tick.
pub type SharedBranchHook = Arc<dyn BranchHook + Send + Sync>;

/// The user skills one tick runs, in the order they run within each kind.
///
/// mp-core never loads skills: an adapter (the `mp` command, through `mp-skills`) builds the
/// set and says how many skills it loaded and how many failed to load. The default is empty:
/// a tick without user skills behaves exactly as before.
#[derive(Clone, Default)]
pub struct SkillSet {
    /// User validators; they run after C1-C5 and the built-in checks.
    pub validators: Vec<SharedValidator>,
    /// User classifier rules; their votes are added to the built-in votes.
    pub classifier_rules: Vec<SharedClassifierRule>,
    /// User branch hooks; they run on each new `main` commit in the L5 pass.
    pub branch_hooks: Vec<SharedBranchHook>,
    /// How many user skills the adapter loaded (metric `skills_loaded`).
    pub loaded: u32,
    /// How many user skills failed to load (metric `skill_load_failed`).
    pub load_failed: u32,
    /// One line per load problem, e.g. `skill_load_failed: skill x (...): ...`; the tick
    /// reports them among its warnings.
    pub load_warnings: Vec<String>,
}

impl SkillSet {
    /// Whether the set holds no skill at all.
    pub fn is_empty(&self) -> bool {
        self.validators.is_empty()
            && self.classifier_rules.is_empty()
            && self.branch_hooks.is_empty()
    }

    /// The names of the skills, validators first, then classifier rules, then hooks.
    pub fn names(&self) -> Vec<&str> {
        self.validators
            .iter()
            .map(|v| v.name())
            .chain(self.classifier_rules.iter().map(|r| r.name()))
            .chain(self.branch_hooks.iter().map(|h| h.name()))
            .collect()
    }
}

impl fmt::Debug for SkillSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SkillSet")
            .field("skills", &self.names())
            .field("loaded", &self.loaded)
            .field("load_failed", &self.load_failed)
            .field("load_warnings", &self.load_warnings)
            .finish()
    }
}

impl PartialEq for SkillSet {
    /// Two sets are equal when they name the same skills in the same order and report the
    /// same load counters and warnings.
    fn eq(&self, other: &Self) -> bool {
        self.names() == other.names()
            && self.loaded == other.loaded
            && self.load_failed == other.load_failed
            && self.load_warnings == other.load_warnings
    }
}

impl Eq for SkillSet {}
