//! The orchestrator's working memory as a value: activation approvals, execution phases and
//! retry attempts, so that a process can stop and a later one continue (decisions/0016).
//!
//! The event log rebuilds the idempotency ledger ([`Orchestrator::resume`]); everything
//! else the orchestrator remembers between calls is in a [`Ledger`]. Saving it is the
//! caller's business (the command line keeps it as `ledger.json` beside the store).

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::{Attempts, Orchestrator, Phase, Result};
use crate::events::Event;
use crate::kinds::{Approval, ApprovalRole, Contract, ContractId, State};
use crate::lifecycle::TransitionContext;
use crate::store::ContractStore;

use super::Clock;

/// What the orchestrator remembers outside the contracts and the event log.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Ledger {
    /// Activation approvals per contract id, oldest first.
    #[serde(default)]
    pub activation_approvals: BTreeMap<ContractId, Vec<Approval<ApprovalRole>>>,
    /// The execution phase per TaskSeed id.
    #[serde(default)]
    pub phases: BTreeMap<ContractId, Phase>,
    /// Failed generation attempts per idempotency key (`IC-101:1:TaskSeed`).
    #[serde(default)]
    pub attempts: BTreeMap<String, AttemptRecord>,
}

/// The failures recorded for one idempotency key, as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AttemptRecord {
    /// Failed attempts so far.
    pub failures: u32,
    /// When the next attempt may run (absent: now).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_at: Option<Timestamp>,
}

impl From<Attempts> for AttemptRecord {
    fn from(a: Attempts) -> Self {
        Self {
            failures: a.failures,
            next_at: a.next_at,
        }
    }
}

impl From<AttemptRecord> for Attempts {
    fn from(a: AttemptRecord) -> Self {
        Self {
            failures: a.failures,
            next_at: a.next_at,
        }
    }
}

impl<S: ContractStore, C: Clock> Orchestrator<S, C> {
    /// An orchestrator continuing from an event log and a saved [`Ledger`].
    pub fn restore(store: S, clock: C, events: Vec<Event>, ledger: Ledger) -> Self {
        let mut this = Self::resume(store, clock, events);
        this.activation = ledger.activation_approvals;
        this.phases = ledger.phases;
        this.attempts = ledger
            .attempts
            .into_iter()
            .map(|(key, record)| (key, Attempts::from(record)))
            .collect();
        this
    }

    /// The working memory to save, for [`Orchestrator::restore`].
    pub fn ledger(&self) -> Ledger {
        Ledger {
            activation_approvals: self.activation.clone(),
            phases: self.phases.clone(),
            attempts: self
                .attempts
                .iter()
                .map(|(key, a)| (key.clone(), AttemptRecord::from(*a)))
                .collect(),
        }
    }

    /// The activation approvals recorded for a contract, oldest first.
    pub fn activation_approvals(&self, id: &ContractId) -> &[Approval<ApprovalRole>] {
        self.activation.get(id).map_or(&[], Vec::as_slice)
    }

    /// Revokes a contract (any state the table allows: Draft, Active, Frozen, Published)
    /// as its next version; `reason` is required.
    ///
    /// # Errors
    /// `transition_refused` (`reason-required`, `illegal-transition`,
    /// `evidence-immutable`), `contract_not_found`, store errors.
    pub fn revoke(&mut self, id: &ContractId, reason: Option<String>) -> Result<Contract> {
        let contract = self.latest(id)?;
        let context = TransitionContext {
            reason,
            ..TransitionContext::default()
        };
        self.move_to(&contract, State::Revoked, &context)
    }
}

impl Serialize for Phase {
    fn serialize<Se: serde::Serializer>(
        &self,
        serializer: Se,
    ) -> std::result::Result<Se::Ok, Se::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Phase {
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Phase::ALL
            .into_iter()
            .find(|p| p.as_str() == text)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown phase `{text}`")))
    }
}

impl Phase {
    /// Every phase, in flow order.
    pub const ALL: [Phase; 6] = [
        Phase::Plan,
        Phase::Build,
        Phase::Stabilize,
        Phase::Refactor,
        Phase::Publish,
        Phase::Done,
    ];
}

#[cfg(test)]
mod tests;
