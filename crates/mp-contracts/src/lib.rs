//! The agent-protocols contract domain: the five contract kinds (IntentContract, TaskSeed,
//! Acceptance, PublishGate, Evidence), their schemas, validation rules and state machines.
//!
//! - [`kinds`]: typed contracts that read and write exactly the JSON of the schemas.
//! - [`schema`]: the bundled JSON Schemas (draft 2020-12) and their validators.
//! - [`policy`]: the protocol's tables (generation policy, risk floor, approval matrix).
//! - [`validate_document`] / [`validate_set`]: every problem as a [`ContractError`] with
//!   a document index, an RFC 6901 pointer and a stable [`codes`] entry; [`SetValidator`]
//!   validates a set one document at a time, for sets too large to hold in memory.
//! - [`lifecycle`]: the state machine per kind (`transition`, `guard`).
//! - [`update`]: a change to a document (two versions, a new one, a deleted one) checked
//!   as a transition (`check_change`).
//! - [`events`]: the normative events in a CloudEvents 1.0 envelope, as JSON lines.
//! - [`store`]: the `ContractStore` port, in memory and as files ([`store::fs`]).
//! - [`evidence`]: RFC 8785 canonical JSON, `sha256:` hashes, in-toto / SLSA export.
//! - [`orchestrator`]: generation, retries, phases and the policy engine over a store and
//!   an injected clock.
//!
//! ```
//! let doc = serde_json::json!({"kind": "TaskSeed", "id": "TS-1"});
//! let errors = mp_contracts::validate_document(&doc);
//! assert!(errors.iter().any(|e| e.pointer == "/id" && e.code == "pattern"));
//! ```
//!
//! Architecture invariant: this crate depends on no other mp crate and performs no network
//! or process I/O; contract persistence goes through a store port, and only its filesystem
//! adapter ([`store::fs`]) touches files. Time comes from an injected
//! [`orchestrator::Clock`]. It is embedded by other teams, so every public item is
//! documented.
#![warn(missing_docs)]

mod error;
pub mod events;
pub mod evidence;
pub mod kinds;
pub mod lifecycle;
pub mod orchestrator;
pub mod policy;
mod rules;
pub mod schema;
pub mod store;
pub mod update;
mod validate;

#[cfg(test)]
mod testkit;

pub use error::{ContractError, codes};
pub use kinds::{
    Acceptance, AcceptanceId, AcceptanceStatus, Approval, ApprovalRole, ApproverRole, Body,
    Capability, Common, Contract, ContractId, DateTime, Decision, Evidence, FinalDecision,
    GenerationPolicy, IntentContract, IntentId, Kind, OwnerRole, PublishGate, RiskLevel,
    SchemaVersion, State, TaskSeed, TaskSeedId, Version,
};
pub use validate::{
    CheckedDocument, SetValidator, check_document, parse_document, parse_set, validate_document,
    validate_set,
};
