//! End-to-end tests of the `mp` binary: real processes, real files, exit codes and output.

mod action;
mod agents;
mod capture;
mod commit_msg;
mod config_validate;
mod contract;
mod contract_flow;
mod contract_update;
mod docs;
mod doctor;
mod init;
mod kit;
mod misc;
mod pygithub;
mod release;
mod report_html;
mod rest;
mod scenarios;
mod serve;
mod shard;
mod skills;
mod sources;
mod tick;

use assert_cmd::Command;

/// A command running the freshly built `mp` binary.
pub fn mp() -> Command {
    Command::new(assert_cmd::cargo::cargo_bin!("mp"))
}

/// The workspace root, for reaching `examples/` and `fixtures/`.
pub fn workspace_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}
