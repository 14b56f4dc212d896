//! The three skill interfaces implemented over a sandboxed [`SkillModule`].

use mp_core::context::{CommitContext, PrContext};
use mp_core::severity::Severity;
use mp_core::skill::{
    BranchHook, ClassifierRule, ClassifierVote, FailureCause, FailureStage, HookResult,
    SkillFailure, ValidationResult, Validator,
};
use serde_json::Value;

use super::verdict::{parse_classifier_vote, parse_hook_result, parse_validation_result};
use super::{Limits, SkillModule, commit_json, pr_json};
use crate::contract::ContractSchemas;
use std::sync::Arc;

/// Runs `module` on `input` and decodes the answer with `parse`. With a contract, the input
/// is checked against its input schema before the call and the answer against its output
/// schema before decoding: a mismatch is `skill_contract_violation`.
fn run<T>(
    module: &SkillModule,
    limits: &Limits,
    contract: Option<&ContractSchemas>,
    input: &Value,
    parse: fn(&[u8]) -> Result<T, FailureCause>,
) -> Result<T, SkillFailure> {
    let violation = |stage, side, detail| {
        SkillFailure::new(
            module.name(),
            stage,
            FailureCause::ContractViolation { side, detail },
        )
    };
    if let Some(contract) = contract {
        contract
            .check_input(input)
            .map_err(|detail| violation(FailureStage::Input, "input", detail))?;
    }
    let bytes = serde_json::to_vec(input).map_err(|e| {
        SkillFailure::new(
            module.name(),
            FailureStage::Input,
            FailureCause::Trap {
                message: format!("could not encode the context: {e}"),
            },
        )
    })?;
    let output = module.call(&bytes, limits)?;
    if let Some(contract) = contract {
        // An answer that is not JSON at all is left to `parse`, which names it malformed.
        if let Ok(answer) = serde_json::from_slice::<Value>(&output.verdict) {
            contract
                .check_output(&answer)
                .map_err(|detail| violation(FailureStage::Output, "output", detail))?;
        }
    }
    parse(&output.verdict)
        .map_err(|cause| SkillFailure::new(module.name(), FailureStage::Output, cause))
}

/// A user validator running in the sandbox.
#[derive(Debug)]
pub struct WasmValidator {
    module: SkillModule,
    severity: Severity,
    limits: Limits,
    contract: Option<Arc<ContractSchemas>>,
}

impl WasmValidator {
    /// A validator of the given severity.
    pub fn new(module: SkillModule, severity: Severity, limits: Limits) -> Self {
        Self {
            module,
            severity,
            limits,
            contract: None,
        }
    }

    /// This validator with its contract's schemas enforced on every call.
    pub fn with_contract(mut self, contract: Arc<ContractSchemas>) -> Self {
        self.contract = Some(contract);
        self
    }
}

impl Validator for WasmValidator {
    fn name(&self) -> &str {
        self.module.name()
    }

    fn severity(&self) -> Severity {
        self.severity
    }

    fn check(&self, pr: &PrContext) -> Result<ValidationResult, SkillFailure> {
        run(
            &self.module,
            &self.limits,
            self.contract.as_deref(),
            &pr_json(pr),
            parse_validation_result,
        )
    }
}

/// A user classifier rule running in the sandbox.
#[derive(Debug)]
pub struct WasmClassifierRule {
    module: SkillModule,
    limits: Limits,
    contract: Option<Arc<ContractSchemas>>,
}

impl WasmClassifierRule {
    /// A classifier rule.
    pub fn new(module: SkillModule, limits: Limits) -> Self {
        Self {
            module,
            limits,
            contract: None,
        }
    }

    /// This skill with its contract's schemas enforced on every call.
    pub fn with_contract(mut self, contract: Arc<ContractSchemas>) -> Self {
        self.contract = Some(contract);
        self
    }
}

impl ClassifierRule for WasmClassifierRule {
    fn name(&self) -> &str {
        self.module.name()
    }

    fn evaluate(&self, pr: &PrContext) -> Result<ClassifierVote, SkillFailure> {
        run(
            &self.module,
            &self.limits,
            self.contract.as_deref(),
            &pr_json(pr),
            parse_classifier_vote,
        )
    }
}

/// A user branch hook running in the sandbox.
#[derive(Debug)]
pub struct WasmBranchHook {
    module: SkillModule,
    limits: Limits,
    contract: Option<Arc<ContractSchemas>>,
}

impl WasmBranchHook {
    /// A branch hook.
    pub fn new(module: SkillModule, limits: Limits) -> Self {
        Self {
            module,
            limits,
            contract: None,
        }
    }

    /// This skill with its contract's schemas enforced on every call.
    pub fn with_contract(mut self, contract: Arc<ContractSchemas>) -> Self {
        self.contract = Some(contract);
        self
    }
}

impl BranchHook for WasmBranchHook {
    fn name(&self) -> &str {
        self.module.name()
    }

    fn on_commit(&self, commit: &CommitContext) -> Result<HookResult, SkillFailure> {
        run(
            &self.module,
            &self.limits,
            self.contract.as_deref(),
            &commit_json(commit),
            parse_hook_result,
        )
    }
}
