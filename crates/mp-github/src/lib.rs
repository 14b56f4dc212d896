//! Adapters for the GitHub port that `mp-core` defines: the REST client and the in-memory
//! world used by fixtures and tests.
//!
//! Architecture invariant: depends only on `mp-core` among our crates; no governance
//! decision is made here, only translation between GitHub and the core's values.

/// GitHub lists at most this many commits of a pull request (`GET /pulls/{n}/commits`): the
/// rest cannot be read. Both adapters answer [`mp_core::port::GitHubError::Truncated`] for a
/// pull request with this many commits or more (exactly this many cannot be told apart from
/// more), and the loopback server lists no more than this.
pub(crate) const PULL_COMMITS_CAP: u32 = 250;

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
