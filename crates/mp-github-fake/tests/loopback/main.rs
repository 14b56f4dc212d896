//! The REST client against the loopback GitHub server: every golden scenario through both
//! adapters, secrets kept out of every output, and the server's answers against GitHub's
//! published REST description. The fault matrix is its own test binary (`tests/faults/`).

mod conformance;
// Shared with the fault matrix (`tests/faults/`), which uses parts this binary does not.
mod github_queue;
#[allow(dead_code)]
mod harness;
mod queue_git;
mod scenarios;
mod secrets;
