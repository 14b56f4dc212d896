//! Adapters for the GitHub port that `mp-core` defines: the REST client and the in-memory
//! world used by fixtures and tests.
//!
//! Architecture invariant: depends only on `mp-core` among our crates; no governance
//! decision is made here, only translation between GitHub and the core's values.

pub mod memory;
pub mod rest;
pub mod serve;
pub mod world;

pub use memory::{Action, Endpoint, MemoryGitHub};
pub use rest::{
    Credentials, EtagCache, RestConfig, RestGitHub, RestStats, RetryPolicy, RevertMode, Secret,
};
pub use serve::{Fault, FaultRule, FaultScript, LoopbackServer, ServerClock};
pub use world::{CiSimulation, LoadWorldError, RepoLabel, World, load_world, parse_world};
