//! The normative contract events in a CloudEvents 1.0 envelope, written as JSON lines.
//!
//! The seven v1 names are [`EventType`]'s normative variants; [`EventType::ContractFrozen`]
//! is our failure event (decisions/0016). Attribute names are the CloudEvents ones, all
//! lowercase; our extensions are `contractid`, `contractversion`, `idempotencykey`,
//! `correlationid` and `causationid`.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::kinds::{ContractId, DateTime, Version};

/// The CloudEvents `specversion` written by [`Event`].
pub const SPEC_VERSION: &str = "1.0";

/// The `datacontenttype` of every event: `data` is a JSON value.
pub const DATA_CONTENT_TYPE: &str = "application/json";

/// An event name (the CloudEvents `type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum EventType {
    /// `intent.created.v1`: an IntentContract became Active.
    #[serde(rename = "intent.created.v1")]
    IntentCreated,
    /// `taskseed.created.v1`: a TaskSeed was persisted.
    #[serde(rename = "taskseed.created.v1")]
    TaskSeedCreated,
    /// `taskseed.execution.completed.v1`: an Active TaskSeed finished executing.
    #[serde(rename = "taskseed.execution.completed.v1")]
    TaskSeedExecutionCompleted,
    /// `acceptance.created.v1`: an Acceptance was persisted.
    #[serde(rename = "acceptance.created.v1")]
    AcceptanceCreated,
    /// `publishgate.created.v1`: a PublishGate was persisted.
    #[serde(rename = "publishgate.created.v1")]
    PublishGateCreated,
    /// `publishgate.decision.recorded.v1`: an approval, rejection, auto-approval or expiry.
    #[serde(rename = "publishgate.decision.recorded.v1")]
    PublishGateDecisionRecorded,
    /// `evidence.created.v1`: an Evidence was persisted.
    #[serde(rename = "evidence.created.v1")]
    EvidenceCreated,
    /// `contract.frozen.v1` (ours, not in the v1 list): a contract was frozen, e.g. after
    /// retry exhaustion.
    #[serde(rename = "contract.frozen.v1")]
    ContractFrozen,
}

impl EventType {
    /// The seven names the protocol fixes, in flow order.
    pub const NORMATIVE: [EventType; 7] = [
        EventType::IntentCreated,
        EventType::TaskSeedCreated,
        EventType::TaskSeedExecutionCompleted,
        EventType::AcceptanceCreated,
        EventType::PublishGateCreated,
        EventType::PublishGateDecisionRecorded,
        EventType::EvidenceCreated,
    ];

    /// The name as the `type` attribute writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::IntentCreated => "intent.created.v1",
            EventType::TaskSeedCreated => "taskseed.created.v1",
            EventType::TaskSeedExecutionCompleted => "taskseed.execution.completed.v1",
            EventType::AcceptanceCreated => "acceptance.created.v1",
            EventType::PublishGateCreated => "publishgate.created.v1",
            EventType::PublishGateDecisionRecorded => "publishgate.decision.recorded.v1",
            EventType::EvidenceCreated => "evidence.created.v1",
            EventType::ContractFrozen => "contract.frozen.v1",
        }
    }
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One event: the CloudEvents 1.0 context attributes, our extensions and the `data`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// `specversion`: always [`SPEC_VERSION`].
    pub specversion: String,
    /// `id`: unique per `source`.
    pub id: String,
    /// `source`: the emitting component as a URI reference (`/mp/orchestrator`).
    pub source: String,
    /// `type`: the event name.
    #[serde(rename = "type")]
    pub event_type: EventType,
    /// `subject`: the contract id the event is about.
    pub subject: String,
    /// `time`: when it happened (RFC 3339).
    pub time: DateTime,
    /// `datacontenttype`: always [`DATA_CONTENT_TYPE`].
    pub datacontenttype: String,
    /// Extension `contractid`: the contract id (same as `subject`).
    pub contractid: String,
    /// Extension `contractversion`: the contract version, as a string.
    pub contractversion: String,
    /// Extension `idempotencykey`: present on events of generated contracts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotencykey: Option<String>,
    /// Extension `correlationid`: the id of the intent the flow started from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correlationid: Option<String>,
    /// Extension `causationid`: the id of the event this one answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub causationid: Option<String>,
    /// `data`: the contract document (for `contract.frozen.v1`: `{reason, attempts, contract}`).
    pub data: Value,
}

impl Event {
    /// An event about `contract` (`id` at `version`) with the fixed attributes filled in.
    pub fn new(
        id: impl Into<String>,
        source: impl Into<String>,
        event_type: EventType,
        contract: (&ContractId, Version),
        time: DateTime,
        data: Value,
    ) -> Self {
        Self {
            specversion: SPEC_VERSION.to_owned(),
            id: id.into(),
            source: source.into(),
            event_type,
            subject: contract.0.to_string(),
            time,
            datacontenttype: DATA_CONTENT_TYPE.to_owned(),
            contractid: contract.0.to_string(),
            contractversion: contract.1.to_string(),
            idempotencykey: None,
            correlationid: None,
            causationid: None,
            data,
        }
    }

    /// One JSON line (no trailing newline).
    pub fn to_json_line(&self) -> String {
        // Serialising a struct of strings and a `Value` cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// Events as JSON lines, each ended by `\n`.
pub fn to_json_lines(events: &[Event]) -> String {
    events
        .iter()
        .map(|e| e.to_json_line() + "\n")
        .collect::<String>()
}

/// Reads JSON lines back (blank lines skipped).
///
/// # Errors
/// Returns the 1-based line number and the parse error of the first bad line.
pub fn from_json_lines(text: &str) -> Result<Vec<Event>, (usize, serde_json::Error)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| (i + 1, e)))
        .collect()
}

#[cfg(test)]
mod tests;
