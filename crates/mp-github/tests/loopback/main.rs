//! The REST client against the loopback GitHub server: every golden scenario through both
//! adapters, the fault matrix, and secrets kept out of every output.

mod faults;
mod harness;
mod scenarios;
mod secrets;
