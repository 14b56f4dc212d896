//! The orchestrator and policy engine over a [`ContractStore`] and an injected [`Clock`]:
//! Active intent → TaskSeed → execution (always an Evidence) → Acceptance → PublishGate
//! (only when passed). Every state change is a new stored version and a CloudEvents event.
//!
//! Automatic generation is idempotent per [`IdempotencyKey`] (`IC-101:1:TaskSeed`) and
//! retried after 30, 60 and 120 s; the fourth failure freezes the source and emits
//! `contract.frozen.v1`. Activation approvals are kept here, outside the contracts, since
//! the closed schemas have no field for them (decisions/0016).

mod clock;
pub mod gate;
mod ledger;
mod phase;
mod retry;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fmt;

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

pub use clock::{Clock, ManualClock};
pub use ledger::{AttemptRecord, Ledger};
pub use phase::Phase;
pub use retry::{AfterFailure, Attempts, BACKOFF};

use crate::error::ContractError;
use crate::events::{Event, EventType};
use crate::evidence::{ExecutionRecord, build_evidence};
use crate::kinds::{
    Acceptance, AcceptanceId, AcceptanceStatus, Approval, ApprovalRole, Body, Capability, Common,
    Contract, ContractId, DateTime, FinalDecision, GenerationPolicy, Kind, OwnerRole, RiskLevel,
    SchemaVersion, State, TaskSeed, TaskSeedId, Version,
};
use crate::lifecycle::{TransitionContext, initial_generated_state, transition};
use crate::policy::{derive_generation_policy, risk_floor};
use crate::store::{ContractStore, StoreError};

/// A time from the clock, as contracts write it (UTC).
pub(crate) fn stamp(now: Timestamp) -> DateTime {
    DateTime::from_instant(now)
}

/// The key that makes one automatic generation happen once: source id, source version and
/// target kind, written `IC-101:1:TaskSeed`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IdempotencyKey {
    /// The contract the target is generated from.
    pub source: ContractId,
    /// The source's version.
    pub source_version: Version,
    /// The kind generated.
    pub target: Kind,
}

impl fmt::Display for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.source, self.source_version, self.target)
    }
}

/// What a generator supplies for a new TaskSeed; the rest is derived from the intent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskSeedPlan {
    /// `description`.
    pub description: String,
    /// `ownerRole`.
    pub owner_role: OwnerRole,
    /// `executionPlan`.
    pub execution_plan: Vec<String>,
}

/// What a validator supplies for a new Acceptance; the policy comes from the TaskSeed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcceptancePlan {
    /// `status`.
    pub status: AcceptanceStatus,
    /// `details`.
    pub details: String,
    /// `criteria`.
    pub criteria: Vec<String>,
}

/// The outcome of an automatic generation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Generated {
    /// A new contract was stored.
    Created(ContractId),
    /// The key was already served: nothing new was created.
    Existing(ContractId),
    /// The attempt failed or is not due yet; retry at this time.
    RetryAt(DateTime),
    /// Retries are exhausted; this contract (the source) was frozen.
    Frozen(ContractId),
    /// No gate: the Acceptance did not pass.
    NotPassed(AcceptanceStatus),
}

/// Why the orchestrator refused or failed an operation.
#[derive(Debug)]
#[non_exhaustive]
pub enum OrchestratorError {
    /// No stored contract has this id.
    NotFound(ContractId),
    /// The contract is of another kind.
    WrongKind {
        /// The contract.
        id: ContractId,
        /// The kind the operation needs.
        expected: Kind,
    },
    /// The operation needs an `Active` contract.
    NotActive {
        /// The contract.
        id: ContractId,
        /// Its state.
        state: State,
    },
    /// The state machine refused the change.
    Refused(ContractError),
    /// A generated contract did not validate.
    Invalid(Vec<ContractError>),
    /// The TaskSeed was not granted the capability.
    CapabilityNotGranted {
        /// The TaskSeed.
        task_seed: ContractId,
        /// The capability asked for.
        capability: Capability,
    },
    /// The phase table has no such move.
    IllegalPhase {
        /// The TaskSeed.
        task_seed: ContractId,
        /// Its phase.
        from: Phase,
        /// The phase asked for.
        to: Phase,
    },
    /// The gate is already decided.
    GateDecided {
        /// The gate.
        id: ContractId,
        /// Its decision.
        decision: FinalDecision,
    },
    /// The store failed.
    Store(StoreError),
}

impl OrchestratorError {
    /// A stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            OrchestratorError::NotFound(_) => "contract_not_found",
            OrchestratorError::WrongKind { .. } => "wrong_kind",
            OrchestratorError::NotActive { .. } => "not_active",
            OrchestratorError::Refused(_) => "transition_refused",
            OrchestratorError::Invalid(_) => "invalid_contract",
            OrchestratorError::CapabilityNotGranted { .. } => "capability_not_granted",
            OrchestratorError::IllegalPhase { .. } => "illegal_phase",
            OrchestratorError::GateDecided { .. } => "gate_decided",
            OrchestratorError::Store(e) => e.code(),
        }
    }
}

impl fmt::Display for OrchestratorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OrchestratorError::NotFound(id) => write!(f, "no contract {id} in the store"),
            OrchestratorError::WrongKind { id, expected } => write!(f, "{id} is not a {expected}"),
            OrchestratorError::NotActive { id, state } => {
                write!(f, "{id} is {state}, not Active")
            }
            OrchestratorError::Refused(e) => write!(f, "{}: {}", e.code, e.message),
            OrchestratorError::Invalid(errors) => {
                let first = errors.first().map(ToString::to_string).unwrap_or_default();
                write!(
                    f,
                    "generated contract is invalid ({} errors): {first}",
                    errors.len()
                )
            }
            OrchestratorError::CapabilityNotGranted {
                task_seed,
                capability,
            } => write!(f, "{task_seed} was not granted {capability}"),
            OrchestratorError::IllegalPhase {
                task_seed,
                from,
                to,
            } => write!(f, "{task_seed} cannot move from phase {from} to {to}"),
            OrchestratorError::GateDecided { id, decision } => {
                write!(f, "gate {id} is already decided: {decision}")
            }
            OrchestratorError::Store(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for OrchestratorError {}

impl From<StoreError> for OrchestratorError {
    fn from(e: StoreError) -> Self {
        OrchestratorError::Store(e)
    }
}

/// Result of an orchestrator operation.
pub type Result<T> = std::result::Result<T, OrchestratorError>;

const ORCHESTRATOR: &str = "/mp/orchestrator";
const POLICY_ENGINE: &str = "/mp/policy-engine";
const EXECUTOR: &str = "/mp/executor";
const VALIDATOR: &str = "/mp/validator";

/// Drives contracts through the flow. The event log ([`Orchestrator::events`]) is the
/// record of what happened; [`Orchestrator::resume`] rebuilds the idempotency ledger from it.
pub struct Orchestrator<S, C> {
    store: S,
    clock: C,
    approval_window: SignedDuration,
    ledger: BTreeMap<String, ContractId>,
    attempts: BTreeMap<String, Attempts>,
    activation: BTreeMap<ContractId, Vec<Approval<ApprovalRole>>>,
    phases: BTreeMap<ContractId, Phase>,
    events: Vec<Event>,
}

impl<S: ContractStore, C: Clock> Orchestrator<S, C> {
    /// An orchestrator with an empty event log.
    pub fn new(store: S, clock: C) -> Self {
        Self::resume(store, clock, Vec::new())
    }

    /// An orchestrator continuing from an event log: every event carrying an
    /// `idempotencykey` marks that key as served by the event's subject.
    pub fn resume(store: S, clock: C, events: Vec<Event>) -> Self {
        let mut ledger = BTreeMap::new();
        for event in &events {
            if let (Some(key), Ok(id)) = (&event.idempotencykey, ContractId::parse(&event.subject))
            {
                ledger.entry(key.clone()).or_insert(id);
            }
        }
        Self {
            store,
            clock,
            approval_window: gate::DEFAULT_APPROVAL_WINDOW,
            ledger,
            attempts: BTreeMap::new(),
            activation: BTreeMap::new(),
            phases: BTreeMap::new(),
            events,
        }
    }

    /// Sets how long humans have to decide a high or critical gate.
    pub fn with_approval_window(mut self, window: SignedDuration) -> Self {
        self.approval_window = window;
        self
    }

    /// The events emitted so far, oldest first.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// The store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The phase of a TaskSeed (`Plan` once created).
    pub fn phase(&self, task_seed: &ContractId) -> Option<Phase> {
        self.phases.get(task_seed).copied()
    }

    /// The failures recorded for a key.
    pub fn attempts(&self, key: &IdempotencyKey) -> Attempts {
        self.attempts
            .get(&key.to_string())
            .copied()
            .unwrap_or_default()
    }

    /// Stores a contract written by someone else (e.g. a new IntentContract).
    ///
    /// # Errors
    /// `invalid_contract` or a store error.
    pub fn submit(&mut self, contract: &Contract) -> Result<()> {
        validated(contract)?;
        self.store.put(contract)?;
        Ok(())
    }

    fn latest(&self, id: &ContractId) -> Result<Contract> {
        self.store
            .latest(id)?
            .ok_or_else(|| OrchestratorError::NotFound(id.clone()))
    }

    fn latest_active(&self, id: &ContractId, kind: Kind) -> Result<Contract> {
        let contract = self.latest(id)?;
        if contract.kind() != kind {
            return Err(OrchestratorError::WrongKind {
                id: id.clone(),
                expected: kind,
            });
        }
        if contract.common.state != State::Active {
            return Err(OrchestratorError::NotActive {
                id: id.clone(),
                state: contract.common.state,
            });
        }
        Ok(contract)
    }

    fn now(&self) -> Timestamp {
        self.clock.now()
    }

    fn emit(
        &mut self,
        event_type: EventType,
        source: &str,
        contract: &Contract,
        key: Option<&IdempotencyKey>,
        data: Option<Value>,
    ) {
        let data = data.unwrap_or_else(|| serde_json::to_value(contract).unwrap_or(Value::Null));
        let mut event = Event::new(
            format!("evt-{:06}", self.events.len() + 1),
            source,
            event_type,
            (&contract.common.id, contract.common.version),
            stamp(self.now()),
            data,
        );
        event.idempotencykey = key.map(ToString::to_string);
        self.events.push(event);
    }

    /// Stores `contract` in `after` as its next version, if the state machine allows it.
    fn move_to(
        &mut self,
        contract: &Contract,
        after: State,
        context: &TransitionContext,
    ) -> Result<Contract> {
        transition(contract.kind(), contract.common.state, after, context)
            .map_err(OrchestratorError::Refused)?;
        let mut next = contract.clone();
        next.common.state = after;
        next.common.version = contract.common.version.next();
        next.common.updated_at = stamp(self.now());
        validated(&next)?;
        self.store.put(&next)?;
        Ok(next)
    }

    fn next_id(&self, kind: Kind) -> Result<ContractId> {
        let highest = self
            .store
            .ids()?
            .iter()
            .filter(|id| id.kind() == Some(kind))
            .filter_map(|id| {
                id.as_str()
                    .split_once('-')
                    .and_then(|(_, n)| n.parse::<u64>().ok())
            })
            .max()
            .unwrap_or(100);
        let text = format!("{}-{:03}", kind.id_prefix(), highest + 1);
        ContractId::parse(&text).map_err(|e| {
            OrchestratorError::Invalid(vec![ContractError::new(0, "/id", "pattern", e.to_string())])
        })
    }

    fn new_common(&self, id: ContractId, state: State) -> Common {
        let now = stamp(self.now());
        Common {
            schema_version: SchemaVersion::V1_0_0,
            id,
            state,
            version: Version::FIRST,
            created_at: now.clone(),
            updated_at: now,
        }
    }

    /// Records one activation approval of a Draft contract (kept outside the contract).
    ///
    /// # Errors
    /// `contract_not_found` or a store error.
    pub fn approve_activation(
        &mut self,
        id: &ContractId,
        role: ApprovalRole,
        actor: &str,
    ) -> Result<()> {
        self.latest(id)?;
        let approval = Approval {
            role,
            actor_id: actor.to_owned(),
            decision: crate::kinds::Decision::Approved,
            decided_at: stamp(self.now()),
            reason: None,
        };
        self.activation
            .entry(id.clone())
            .or_default()
            .push(approval);
        Ok(())
    }

    /// Draft → Active once the recorded approvals cover the required roles. An intent's
    /// activation emits `intent.created.v1`.
    ///
    /// # Errors
    /// `transition_refused` (e.g. `activation-approval-missing`), `contract_not_found`.
    pub fn activate(&mut self, id: &ContractId) -> Result<Contract> {
        let contract = self.latest(id)?;
        let required: Vec<ApprovalRole> = match &contract.body {
            Body::TaskSeed(ts) => ts.generation_policy.required_activation_approvals.clone(),
            Body::Acceptance(ac) => ac
                .generation_policy
                .required_activation_approvals
                .iter()
                .map(|r| ApprovalRole::from(*r))
                .collect(),
            _ => Vec::new(),
        };
        let context = TransitionContext {
            activation_approvals: self
                .activation
                .get(id)
                .map(|list| list.iter().map(|a| a.role).collect())
                .unwrap_or_default(),
            required_activation_approvals: required,
            ..TransitionContext::default()
        };
        let next = self.move_to(&contract, State::Active, &context)?;
        if next.kind() == Kind::IntentContract {
            self.emit(EventType::IntentCreated, ORCHESTRATOR, &next, None, None);
        }
        Ok(next)
    }

    /// Runs one generation for `key` unless it was served or is not due, retrying and
    /// freezing `source` as the protocol says.
    fn generate(
        &mut self,
        source: &Contract,
        target: Kind,
        make: &mut dyn FnMut(&mut Self) -> std::result::Result<Contract, String>,
    ) -> Result<Generated> {
        let key = IdempotencyKey {
            source: source.common.id.clone(),
            source_version: source.common.version,
            target,
        };
        let text = key.to_string();
        if let Some(id) = self.ledger.get(&text) {
            return Ok(Generated::Existing(id.clone()));
        }
        let now = self.now();
        let mut attempts = self.attempts.get(&text).copied().unwrap_or_default();
        if !attempts.due(now) {
            let at = attempts.next_at.unwrap_or(now);
            return Ok(Generated::RetryAt(stamp(at)));
        }
        let failure = match make(self) {
            Ok(contract) => match validated(&contract) {
                Ok(()) => {
                    self.store.put(&contract)?;
                    self.ledger.insert(text.clone(), contract.common.id.clone());
                    self.attempts.remove(&text);
                    let (event_type, emitter) = match target {
                        Kind::TaskSeed => (EventType::TaskSeedCreated, ORCHESTRATOR),
                        Kind::Acceptance => (EventType::AcceptanceCreated, VALIDATOR),
                        _ => (EventType::PublishGateCreated, POLICY_ENGINE),
                    };
                    self.emit(event_type, emitter, &contract, Some(&key), None);
                    if target == Kind::TaskSeed {
                        self.phases.insert(contract.common.id.clone(), Phase::Plan);
                    }
                    if contract
                        .as_publish_gate()
                        .is_some_and(|g| g.final_decision != FinalDecision::Pending)
                    {
                        self.emit(
                            EventType::PublishGateDecisionRecorded,
                            POLICY_ENGINE,
                            &contract,
                            None,
                            None,
                        );
                    }
                    return Ok(Generated::Created(contract.common.id));
                }
                Err(e) => e.to_string(),
            },
            Err(reason) => reason,
        };
        let after = attempts.fail(now);
        self.attempts.insert(text, attempts);
        match after {
            AfterFailure::RetryAt(at) => Ok(Generated::RetryAt(stamp(at))),
            AfterFailure::Exhausted => {
                let reason = format!(
                    "{target} generation failed {} times: {failure}",
                    attempts.failures
                );
                let context = TransitionContext {
                    reason: Some(reason.clone()),
                    ..TransitionContext::default()
                };
                let frozen = self.move_to(source, State::Frozen, &context)?;
                let data = json!({
                    "reason": reason,
                    "attempts": attempts.failures,
                    "idempotencyKey": key.to_string(),
                    "contract": frozen,
                });
                self.emit(
                    EventType::ContractFrozen,
                    ORCHESTRATOR,
                    &frozen,
                    None,
                    Some(data),
                );
                Ok(Generated::Frozen(frozen.common.id))
            }
        }
    }

    /// Generates the TaskSeed of an Active intent (once per intent version): the snapshot
    /// copies the intent's capabilities and the generation policy is derived from them.
    ///
    /// # Errors
    /// `not_active`, `wrong_kind`, `contract_not_found`, store errors.
    pub fn generate_task_seed(
        &mut self,
        intent_id: &ContractId,
        planner: &mut dyn FnMut(&Contract) -> std::result::Result<TaskSeedPlan, String>,
    ) -> Result<Generated> {
        let intent = self.latest_active(intent_id, Kind::IntentContract)?;
        let capabilities = intent
            .as_intent_contract()
            .map(|ic| ic.requested_capabilities.clone())
            .unwrap_or_default();
        let derived = derive_generation_policy(&capabilities);
        let intent_ref = intent.clone();
        self.generate(&intent, Kind::TaskSeed, &mut |this| {
            let plan = planner(&intent_ref)?;
            let intent_id = crate::kinds::IntentId::parse(intent_ref.common.id.as_str())
                .map_err(|e| e.to_string())?;
            let id = this.next_id(Kind::TaskSeed).map_err(|e| e.to_string())?;
            let state = initial_generated_state(intent_ref.common.state, derived.auto_activate);
            let body = TaskSeed {
                intent_id,
                description: plan.description,
                owner_role: plan.owner_role,
                execution_plan: plan.execution_plan,
                requested_capabilities_snapshot: capabilities.clone(),
                generation_policy: GenerationPolicy {
                    auto_activate: derived.auto_activate,
                    required_activation_approvals: derived
                        .required_activation_approvals
                        .iter()
                        .map(|r| ApprovalRole::from(*r))
                        .collect(),
                },
            };
            Ok(Contract::new(this.new_common(id, state), body))
        })
    }

    /// Refuses an operation of an Active TaskSeed that needs a capability its snapshot
    /// does not grant.
    ///
    /// # Errors
    /// `capability_not_granted`, `not_active`, `wrong_kind`, `contract_not_found`.
    pub fn authorize(&self, task_seed: &ContractId, capability: Capability) -> Result<()> {
        let ts = self.latest_active(task_seed, Kind::TaskSeed)?;
        let granted = ts
            .as_task_seed()
            .is_some_and(|t| t.requested_capabilities_snapshot.contains(&capability));
        if granted {
            Ok(())
        } else {
            Err(OrchestratorError::CapabilityNotGranted {
                task_seed: task_seed.clone(),
                capability,
            })
        }
    }

    /// Moves an Active TaskSeed to another execution phase.
    ///
    /// # Errors
    /// `illegal_phase`, `not_active`, `wrong_kind`, `contract_not_found`.
    pub fn advance_phase(&mut self, task_seed: &ContractId, to: Phase) -> Result<Phase> {
        self.latest_active(task_seed, Kind::TaskSeed)?;
        let from = self.phase(task_seed).unwrap_or(Phase::Plan);
        if !from.may_move_to(to) {
            return Err(OrchestratorError::IllegalPhase {
                task_seed: task_seed.clone(),
                from,
                to,
            });
        }
        self.phases.insert(task_seed.clone(), to);
        Ok(to)
    }

    /// Records a finished execution of an Active TaskSeed: emits
    /// `taskseed.execution.completed.v1`, stores its Evidence and emits `evidence.created.v1`.
    /// Every execution gets an Evidence, whatever its outcome.
    ///
    /// # Errors
    /// `invalid_contract` for a bad record, `not_active`, store errors.
    pub fn record_execution(
        &mut self,
        task_seed: &ContractId,
        record: &ExecutionRecord,
    ) -> Result<ContractId> {
        let ts = self.latest_active(task_seed, Kind::TaskSeed)?;
        let id = self.next_id(Kind::Evidence)?;
        let evidence = build_evidence(id.clone(), record, stamp(self.now()))
            .map_err(OrchestratorError::Invalid)?;
        self.store.put(&evidence)?;
        self.emit(
            EventType::TaskSeedExecutionCompleted,
            EXECUTOR,
            &ts,
            None,
            None,
        );
        self.emit(EventType::EvidenceCreated, EXECUTOR, &evidence, None, None);
        Ok(id)
    }

    /// Generates the Acceptance of an executed TaskSeed (once per TaskSeed version); its
    /// generation policy is the one the TaskSeed's capabilities call for.
    ///
    /// # Errors
    /// `not_active`, `wrong_kind`, `contract_not_found`, store errors.
    pub fn generate_acceptance(
        &mut self,
        task_seed: &ContractId,
        validator: &mut dyn FnMut(&Contract) -> std::result::Result<AcceptancePlan, String>,
    ) -> Result<Generated> {
        let ts = self.latest_active(task_seed, Kind::TaskSeed)?;
        let capabilities = ts
            .as_task_seed()
            .map(|t| t.requested_capabilities_snapshot.clone())
            .unwrap_or_default();
        let derived = derive_generation_policy(&capabilities);
        let ts_ref = ts.clone();
        self.generate(&ts, Kind::Acceptance, &mut |this| {
            let plan = validator(&ts_ref)?;
            let task_seed_id =
                TaskSeedId::parse(ts_ref.common.id.as_str()).map_err(|e| e.to_string())?;
            let id = this.next_id(Kind::Acceptance).map_err(|e| e.to_string())?;
            let state = initial_generated_state(ts_ref.common.state, derived.auto_activate);
            let body = Acceptance {
                task_seed_id,
                status: plan.status,
                details: plan.details,
                criteria: plan.criteria,
                generation_policy: GenerationPolicy {
                    auto_activate: derived.auto_activate,
                    required_activation_approvals: derived
                        .required_activation_approvals
                        .iter()
                        .copied()
                        .collect(),
                },
            };
            Ok(Contract::new(this.new_common(id, state), body))
        })
    }

    /// The policy engine: creates the PublishGate of a passed Acceptance (once per
    /// Acceptance version) at `risk`, raised to the capability floor of its TaskSeed.
    /// Low and medium gates are approved at once; high and critical wait for humans until
    /// the approval deadline.
    ///
    /// # Errors
    /// `not_active`, `wrong_kind`, `contract_not_found`, store errors.
    pub fn create_gate(&mut self, acceptance: &ContractId, risk: RiskLevel) -> Result<Generated> {
        let ac = self.latest_active(acceptance, Kind::Acceptance)?;
        let Some(body) = ac.as_acceptance() else {
            return Err(OrchestratorError::WrongKind {
                id: acceptance.clone(),
                expected: Kind::Acceptance,
            });
        };
        if body.status != AcceptanceStatus::Passed {
            return Ok(Generated::NotPassed(body.status));
        }
        let ts = self.latest(body.task_seed_id.as_contract_id())?;
        let floor = ts.as_task_seed().map_or(RiskLevel::Low, |t| {
            risk_floor(&t.requested_capabilities_snapshot)
        });
        let risk = risk.max(floor);
        let entity = AcceptanceId::parse(ac.common.id.as_str()).map_err(|e| {
            OrchestratorError::Invalid(vec![ContractError::new(0, "/id", "pattern", e.to_string())])
        })?;
        let window = self.approval_window;
        self.generate(&ac, Kind::PublishGate, &mut |this| {
            let (gate, state) = gate::new_gate(entity.clone(), risk, this.now(), window);
            let id = this.next_id(Kind::PublishGate).map_err(|e| e.to_string())?;
            Ok(Contract::new(this.new_common(id, state), gate))
        })
    }

    /// Records a human decision on a pending gate. Past the deadline the gate becomes
    /// `expired` and is frozen instead; once every required role approved it is Published.
    /// Each call emits `publishgate.decision.recorded.v1`.
    ///
    /// # Errors
    /// `gate_decided`, `not_active`, `wrong_kind`, `contract_not_found`, store errors.
    pub fn record_decision(
        &mut self,
        gate_id: &ContractId,
        approval: Approval<ApprovalRole>,
    ) -> Result<Contract> {
        let current = self.latest_active(gate_id, Kind::PublishGate)?;
        self.decide(current, Some(approval))
    }

    /// Expires every Active, pending gate whose deadline has passed; returns their ids.
    ///
    /// # Errors
    /// Store errors.
    pub fn expire_overdue_gates(&mut self) -> Result<Vec<ContractId>> {
        let now = self.now();
        let mut expired = Vec::new();
        for id in self.store.ids()? {
            if id.kind() != Some(Kind::PublishGate) {
                continue;
            }
            let Some(contract) = self.store.latest(&id)? else {
                continue;
            };
            let overdue = contract.common.state == State::Active
                && contract.as_publish_gate().is_some_and(|g| {
                    g.final_decision == FinalDecision::Pending
                        && g.approval_deadline
                            .as_ref()
                            .is_some_and(|d| now > d.instant())
                });
            if overdue {
                self.decide(contract, None)?;
                expired.push(id);
            }
        }
        Ok(expired)
    }

    fn decide(
        &mut self,
        current: Contract,
        approval: Option<Approval<ApprovalRole>>,
    ) -> Result<Contract> {
        let Body::PublishGate(mut body) = current.body.clone() else {
            return Err(OrchestratorError::WrongKind {
                id: current.common.id.clone(),
                expected: Kind::PublishGate,
            });
        };
        if body.final_decision != FinalDecision::Pending {
            return Err(OrchestratorError::GateDecided {
                id: current.common.id.clone(),
                decision: body.final_decision,
            });
        }
        gate::decide(&mut body, approval, self.now());
        let missing = gate::missing_approvals(&body);
        let decision = body.final_decision;
        let mut updated = current.clone();
        updated.body = Body::PublishGate(body);
        let (after, reason) = match decision {
            FinalDecision::Approved => (State::Published, None),
            FinalDecision::Expired => (
                State::Frozen,
                Some("approval deadline passed before every required role approved".to_owned()),
            ),
            FinalDecision::Pending | FinalDecision::Rejected => (State::Active, None),
        };
        let next = if after == State::Active {
            let mut next = updated;
            next.common.version = current.common.version.next();
            next.common.updated_at = stamp(self.now());
            validated(&next)?;
            self.store.put(&next)?;
            next
        } else {
            let context = TransitionContext {
                gate_decision: Some(decision),
                missing_gate_approvals: missing,
                reason,
                ..TransitionContext::default()
            };
            self.move_to(&updated, after, &context)?
        };
        self.emit(
            EventType::PublishGateDecisionRecorded,
            POLICY_ENGINE,
            &next,
            None,
            None,
        );
        Ok(next)
    }
}

fn validated(contract: &Contract) -> Result<()> {
    let json = serde_json::to_value(contract).unwrap_or(Value::Null);
    let errors = crate::validate_document(&json);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(OrchestratorError::Invalid(errors))
    }
}
