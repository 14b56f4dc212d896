//! The fake GitHub of mp's tests, benchmarks and demos: the world-file format, the
//! in-memory GitHub over a world, and the loopback server that serves a world over GitHub's
//! REST paths to the real client.
//!
//! Architecture invariant: no library crate depends on this one except for its tests
//! (`cargo xtask tidy`, decisions/0050); only the `mp` binary (`--world` runs, the demo,
//! `mp dev serve-world`) and xtask link it. It depends on `mp-github` for what both sides
//! share (the route names, the GraphQL query texts, GitHub's limits), never the other way
//! round. No governance decision is made here: it plays GitHub.

pub mod loopback;
pub mod memory;
pub mod world;

pub use loopback::{Fault, FaultRule, FaultScript, LoopbackServer, ServerClock};
pub use memory::{Call, Endpoint, Failure, MemoryGitHub};
pub use world::{CiSimulation, LoadWorldError, RepoLabel, World, load_world, parse_world};
