//! The REST client against the loopback GitHub server: every golden scenario through both
//! adapters, the fault matrix, secrets kept out of every output, and the server's answers
//! against GitHub's published REST description.

mod conformance;
mod faults;
mod harness;
mod scenarios;
mod secrets;
