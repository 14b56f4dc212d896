//! The fault matrix: every golden scenario under every fault kind, through the REST client
//! against the loopback GitHub server. One test per scenario (made at run time, so a new
//! scenario is covered without a line here), which cargo-nextest spreads over the cores:
//! `cargo nextest run -p mp-github-fake --test faults [SCENARIO]`.

// The loopback tests' harness, shared; this binary uses part of it.
#[allow(dead_code)]
#[path = "../loopback/harness.rs"]
mod harness;
mod matrix;

fn main() -> std::process::ExitCode {
    let arguments = libtest_mimic::Arguments::from_args();
    let trials = harness::scenario_worlds()
        .into_iter()
        .map(|(name, path)| {
            libtest_mimic::Trial::test(format!("fault_matrix::{name}"), move || {
                matrix::scenario(&name, &path).map_err(Into::into)
            })
        })
        .collect();
    libtest_mimic::run(&arguments, trials).exit_code()
}
