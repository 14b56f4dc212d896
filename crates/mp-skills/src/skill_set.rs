//! The registry's user skills as the mp-core [`SkillSet`] a tick runs: one
//! [`RegistrySkill`] handle per user skill, found by name in the shared registry at each
//! call, and every call recorded as a [`SkillCall`] (which skill, on what, a digest of the
//! exact input, the verdict, the time taken) for the caller's audit log.
//!
//! The built-ins are not in the set: the gate, the classifier and the supervisor run them
//! through mp-core's catalog under `skills.yml`.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use mp_core::Severity;
use mp_core::context::{CommitContext, PrContext};
use mp_core::skill::{
    BranchHook, ClassifierRule, ClassifierVote, HookResult, SkillFailure, SkillSet,
    ValidationResult, Validator,
};
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::registry::{LoadWarning, Registry};
use crate::sandbox::{commit_json, pr_json};

/// One call of a user skill, as the audit log keeps it: which skill, on what, a digest of
/// the exact input it was given, what it answered and how long it took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillCall {
    /// The skill's name.
    pub skill: String,
    /// `validator`, `classifier` or `branch_hook`.
    pub kind: &'static str,
    /// `owner/repo#N` for a pull request, the commit SHA for a branch hook.
    pub subject: String,
    /// SHA-256 (hex) of the input JSON the skill received.
    pub input_sha256: String,
    /// The verdict's line, or `error: ...` for a failed call.
    pub verdict: String,
    /// Wall-clock time of the call, in microseconds.
    pub duration_us: u64,
}

impl SkillCall {
    /// The call as one audit-log JSON line (`"kind": "skill_call"`), stamped `at`.
    pub fn to_json_line(&self, at: mp_core::Timestamp) -> String {
        json!({
            "ts": at.to_string(),
            "record": "skill_call",
            "skill": self.skill,
            "kind": self.kind,
            "subject": self.subject,
            "input_sha256": self.input_sha256,
            "verdict": self.verdict,
            "duration_us": self.duration_us,
        })
        .to_string()
    }
}

/// The calls made through one loaded [`SkillSet`], in order; clones share the list.
#[derive(Debug, Clone, Default)]
pub struct SkillCalls(Arc<Mutex<Vec<SkillCall>>>);

impl SkillCalls {
    /// Takes the calls recorded so far.
    pub fn take(&self) -> Vec<SkillCall> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    fn push(&self, call: SkillCall) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(call);
    }
}

fn sha256_hex(value: &serde_json::Value) -> String {
    let bytes = serde_json::to_vec(value).unwrap_or_default();
    Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The registry's active user skills as a [`SkillSet`] whose calls go to `calls`, with
/// its load counters and every load warning as `warning_line` renders it.
pub fn user_skills(
    registry: Registry,
    calls: &SkillCalls,
    warning_line: impl Fn(&LoadWarning) -> String,
) -> SkillSet {
    let load_warnings: Vec<String> = registry.warnings().iter().map(warning_line).collect();
    let load_failed = registry
        .warnings()
        .iter()
        .filter(|w| w.code == "skill_load_failed")
        .count();
    let validators: Vec<String> = registry
        .user_validators()
        .map(|v| v.name().to_owned())
        .collect();
    let rules: Vec<String> = registry
        .user_classifier_rules()
        .map(|r| r.name().to_owned())
        .collect();
    let hooks: Vec<String> = registry
        .user_branch_hooks()
        .map(|h| h.name().to_owned())
        .collect();
    let loaded = validators.len() + rules.len() + hooks.len();
    let registry = Arc::new(registry);
    let handle = |name: String| RegistrySkill {
        registry: Arc::clone(&registry),
        name,
        calls: calls.clone(),
    };
    SkillSet {
        validators: validators
            .into_iter()
            .map(|n| Arc::new(handle(n)) as Arc<dyn Validator + Send + Sync>)
            .collect(),
        classifier_rules: rules
            .into_iter()
            .map(|n| Arc::new(handle(n)) as Arc<dyn ClassifierRule + Send + Sync>)
            .collect(),
        branch_hooks: hooks
            .into_iter()
            .map(|n| Arc::new(handle(n)) as Arc<dyn BranchHook + Send + Sync>)
            .collect(),
        loaded: u32::try_from(loaded).unwrap_or(u32::MAX),
        load_failed: u32::try_from(load_failed).unwrap_or(u32::MAX),
        load_warnings,
    }
}

/// One user skill of a shared registry, found by name at each call.
pub struct RegistrySkill {
    registry: Arc<Registry>,
    name: String,
    calls: SkillCalls,
}
impl RegistrySkill {
    /// Records one call for the audit log.
    fn record<T: std::fmt::Display>(
        &self,
        kind: &'static str,
        subject: String,
        input: &serde_json::Value,
        result: &Result<T, SkillFailure>,
        took: Duration,
    ) {
        let verdict = match result {
            Ok(verdict) => verdict.to_string(),
            Err(failure) => format!("error: {failure}"),
        };
        self.calls.push(SkillCall {
            skill: self.name.clone(),
            kind,
            subject,
            input_sha256: sha256_hex(input),
            verdict,
            duration_us: u64::try_from(took.as_micros()).unwrap_or(u64::MAX),
        });
    }

    fn missing(&self) -> SkillFailure {
        SkillFailure::new(
            &self.name,
            mp_core::skill::FailureStage::Load,
            mp_core::skill::FailureCause::LoadFailed {
                detail: "no longer in the registry".to_owned(),
            },
        )
    }
}

impl Validator for RegistrySkill {
    fn name(&self) -> &str {
        &self.name
    }

    fn severity(&self) -> Severity {
        self.registry
            .user_validators()
            .find(|v| v.name() == self.name)
            .map_or(Severity::P0, |v| v.severity())
    }

    fn check(&self, pr: &PrContext) -> Result<ValidationResult, SkillFailure> {
        let started = Instant::now();
        let result = match self
            .registry
            .user_validators()
            .find(|v| v.name() == self.name)
        {
            Some(validator) => validator.check(pr),
            None => Err(self.missing()),
        };
        let subject = format!("{}#{}", pr.repo, pr.number);
        self.record(
            "validator",
            subject,
            &pr_json(pr),
            &result,
            started.elapsed(),
        );
        result
    }
}

impl ClassifierRule for RegistrySkill {
    fn name(&self) -> &str {
        &self.name
    }

    fn evaluate(&self, pr: &PrContext) -> Result<ClassifierVote, SkillFailure> {
        let started = Instant::now();
        let result = match self
            .registry
            .user_classifier_rules()
            .find(|r| r.name() == self.name)
        {
            Some(rule) => rule.evaluate(pr),
            None => Err(self.missing()),
        };
        let subject = format!("{}#{}", pr.repo, pr.number);
        self.record(
            "classifier",
            subject,
            &pr_json(pr),
            &result,
            started.elapsed(),
        );
        result
    }
}

impl BranchHook for RegistrySkill {
    fn name(&self) -> &str {
        &self.name
    }

    fn on_commit(&self, commit: &CommitContext) -> Result<HookResult, SkillFailure> {
        let started = Instant::now();
        let result = match self
            .registry
            .user_branch_hooks()
            .find(|h| h.name() == self.name)
        {
            Some(hook) => hook.on_commit(commit),
            None => Err(self.missing()),
        };
        let subject = commit.sha.to_string();
        self.record(
            "branch_hook",
            subject,
            &commit_json(commit),
            &result,
            started.elapsed(),
        );
        result
    }
}

#[cfg(test)]
mod tests;
