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
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

/// The input document of a call, as a value (for the schema check) and as the bytes the
/// skill receives.
#[derive(Debug)]
struct Input {
    value: Value,
    bytes: Vec<u8>,
}

impl Input {
    fn new(value: Value) -> Result<Self, String> {
        let bytes =
            serde_json::to_vec(&value).map_err(|e| format!("could not encode the context: {e}"))?;
        Ok(Self { value, bytes })
    }
}

thread_local! {
    /// The input document of the last pull request a skill was called on in this thread.
    /// Every user skill of a tick is called on the same pull request in a row, and building
    /// the document is most of a call's cost; the cached one is used only for a context
    /// equal to the one it was built from.
    static LAST_PR: RefCell<Option<(PrContext, Rc<Input>)>> = const { RefCell::new(None) };
}

/// The input document of `pr`, built once per distinct context.
fn pr_input(pr: &PrContext) -> Result<Rc<Input>, String> {
    LAST_PR.with(|cell| {
        if let Some((cached, input)) = cell.borrow().as_ref()
            && cached == pr
        {
            return Ok(Rc::clone(input));
        }
        let input = Rc::new(Input::new(pr_json(pr))?);
        *cell.borrow_mut() = Some((pr.clone(), Rc::clone(&input)));
        Ok(input)
    })
}

/// Runs `module` on `input` and decodes the answer with `parse`. With a contract, the input
/// is checked against its input schema before the call and the answer against its output
/// schema before decoding: a mismatch is `skill_contract_violation`.
fn run<T>(
    module: &SkillModule,
    limits: &Limits,
    contract: Option<&ContractSchemas>,
    input: Result<Rc<Input>, String>,
    parse: fn(&[u8]) -> Result<T, FailureCause>,
) -> Result<T, SkillFailure> {
    let input = input.map_err(|message| {
        SkillFailure::new(
            module.name(),
            FailureStage::Input,
            FailureCause::Trap { message },
        )
    })?;
    let violation = |stage, side, detail| {
        SkillFailure::new(
            module.name(),
            stage,
            FailureCause::ContractViolation { side, detail },
        )
    };
    if let Some(contract) = contract {
        contract
            .check_input(&input.value)
            .map_err(|detail| violation(FailureStage::Input, "input", detail))?;
    }
    let output = module.call(&input.bytes, limits)?;
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

/// What every sandboxed skill holds: the module, its caps and its contract's schemas.
#[derive(Debug)]
struct Sandboxed {
    module: SkillModule,
    limits: Limits,
    contract: Option<Arc<ContractSchemas>>,
}

impl Sandboxed {
    fn new(module: SkillModule, limits: Limits) -> Self {
        Self {
            module,
            limits,
            contract: None,
        }
    }

    fn call<T>(
        &self,
        input: Result<Rc<Input>, String>,
        parse: fn(&[u8]) -> Result<T, FailureCause>,
    ) -> Result<T, SkillFailure> {
        run(
            &self.module,
            &self.limits,
            self.contract.as_deref(),
            input,
            parse,
        )
    }
}

/// A user validator running in the sandbox.
#[derive(Debug)]
pub struct WasmValidator {
    skill: Sandboxed,
    severity: Severity,
}

impl WasmValidator {
    /// A validator of the given severity.
    pub fn new(module: SkillModule, severity: Severity, limits: Limits) -> Self {
        Self {
            skill: Sandboxed::new(module, limits),
            severity,
        }
    }

    /// This validator with its contract's schemas enforced on every call.
    pub fn with_contract(mut self, contract: Arc<ContractSchemas>) -> Self {
        self.skill.contract = Some(contract);
        self
    }
}

impl Validator for WasmValidator {
    fn name(&self) -> &str {
        self.skill.module.name()
    }

    fn severity(&self) -> Severity {
        self.severity
    }

    fn check(&self, pr: &PrContext) -> Result<ValidationResult, SkillFailure> {
        self.skill.call(pr_input(pr), parse_validation_result)
    }
}

/// A user classifier rule running in the sandbox.
#[derive(Debug)]
pub struct WasmClassifierRule {
    skill: Sandboxed,
}

impl WasmClassifierRule {
    /// A classifier rule.
    pub fn new(module: SkillModule, limits: Limits) -> Self {
        Self {
            skill: Sandboxed::new(module, limits),
        }
    }

    /// This skill with its contract's schemas enforced on every call.
    pub fn with_contract(mut self, contract: Arc<ContractSchemas>) -> Self {
        self.skill.contract = Some(contract);
        self
    }
}

impl ClassifierRule for WasmClassifierRule {
    fn name(&self) -> &str {
        self.skill.module.name()
    }

    fn evaluate(&self, pr: &PrContext) -> Result<ClassifierVote, SkillFailure> {
        self.skill.call(pr_input(pr), parse_classifier_vote)
    }
}

/// A user branch hook running in the sandbox.
#[derive(Debug)]
pub struct WasmBranchHook {
    skill: Sandboxed,
}

impl WasmBranchHook {
    /// A branch hook.
    pub fn new(module: SkillModule, limits: Limits) -> Self {
        Self {
            skill: Sandboxed::new(module, limits),
        }
    }

    /// This skill with its contract's schemas enforced on every call.
    pub fn with_contract(mut self, contract: Arc<ContractSchemas>) -> Self {
        self.skill.contract = Some(contract);
        self
    }
}

impl BranchHook for WasmBranchHook {
    fn name(&self) -> &str {
        self.skill.module.name()
    }

    fn on_commit(&self, commit: &CommitContext) -> Result<HookResult, SkillFailure> {
        self.skill.call(
            Input::new(commit_json(commit)).map(Rc::new),
            parse_hook_result,
        )
    }
}
