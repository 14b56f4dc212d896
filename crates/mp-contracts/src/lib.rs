//! The agent-protocols contract domain: the five contract kinds (IntentContract, TaskSeed,
//! Acceptance, PublishGate, Evidence), their schemas, validation rules and state machines.
//!
//! Architecture invariant: this crate depends on no other mp crate and performs no network
//! or process I/O; contract persistence goes through a store port. It is embedded by other
//! teams, so every public item is documented.
#![warn(missing_docs)]
