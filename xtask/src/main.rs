//! Developer automation for the mp workspace, run as `cargo xtask <command>`.
//!
//! Commands: `tidy` (architecture checks, also run as tests), `schemas [--check]`
//! (regenerate or verify the JSON Schemas of the configuration files), `gen-world`
//! (write a synthetic world file for benchmarks), `bench api` (REST calls per tick),
//! `bench drain` (many agents' ready pull requests draining into `main`), `bench serve`
//! (`mp serve`'s label-to-merge latency and idle cost against the loopback GitHub),
//! `bench contracts` (`mp contract validate` against ajv on a large generated contract set,
//! whole processes: wall time and peak memory), `gen-audit-log` (a synthetic audit log) and
//! `bench agents` (`mp agents` and `mp report` over a million records: wall time and
//! peak memory),
//! `openapi` (fetch GitHub's pinned REST description for the conformance test),
//! `graphql` (fetch GitHub's pinned GraphQL schema for the query validation test),
//! `pyclient` (install the pinned PyGithub for the third-party client test),
//! `webhooks` (fetch GitHub's pinned webhook examples and schemas for mp-serve's payload
//! test),
//! `test` (install the test suite's prerequisites, then run every test).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod bench_agents;
mod bench_api;
mod bench_contracts;
mod bench_drain;
mod bench_serve;
mod gen_audit_log;
mod gen_world;
mod graphql;
mod openapi;
mod prereq;
mod pyclient;
mod schemas;
mod test;
mod tidy;
mod webhooks;

const USAGE: &str = "usage: cargo xtask <command>

commands:
  test [--no-install] [-- ARGS]
                    install what the tests need (Debian's chromium,
                    cargo-nextest, GitHub's REST description and GraphQL schema,
                    PyGithub, GitHub's webhook examples and schemas), then run
                    cargo nextest run --workspace --locked [ARGS] and, without
                    ARGS, cargo test --doc --workspace --locked
  openapi [--check] fetch @octokit/openapi at the pinned version and integrity into
                    target/openapi/ (the loopback conformance test reads it)
  graphql [--check] fetch @octokit/graphql-schema at the pinned version and integrity
                    into target/graphql/ (the GraphQL query test validates against it)
  pyclient [--check]
                    pip-install PyGithub and its dependencies at pinned versions
                    into target/pyclient/ (the third-party client test runs it)
  webhooks [--check]
                    fetch @octokit/webhooks-examples and @octokit/openapi-webhooks
                    at the pinned versions and integrity into target/webhooks/
                    (mp-serve's payload test reads them)
  tidy              check dependency edges and file headers
  schemas           regenerate schemas/*.schema.json from the configuration types
  schemas --check   fail if schemas/*.schema.json are stale
  gen-world --repos N --prs M [--seed S] [--out FILE]
                    write a synthetic world: N repositories with M open pull requests
                    each (stdout without --out)
  gen-audit-log [--records N] [--seed S] [--out FILE]
                    write a synthetic audit log of N records (default 1,000,000)
                    in the format mp tick --audit-log writes
  bench agents [--records N] [--runs K] [--mp PATH]
                    mp agents and mp report over a generated log of N records
                    (default 1,000,000): wall time and peak memory, whole processes;
                    fails over 10 s or 300 MiB
  bench api [--repos N] [--prs M] [--seed S] [--delay-ms D] [--live [--ticks K]]
                    REST calls per tick through the loopback GitHub server, by
                    endpoint: a cold tick and three warm ones (default 6 x 5);
                    --live: ticks as mp tick runs them (paced as shipped, system
                    clock, lease and pull-request time budget) until one leaves
                    nothing for the next (at most K, default 8): wall time,
                    requests, points and what each did and left
  bench drain [--skip-direct-50] [--batch-max N]
                    ready pull requests of several agents draining into main on a
                    simulated clock and CI, in today's mode and in queue mode (12
                    and 50 pull requests): merged, minutes, CI runs, API calls,
                    the failing ones named, and the proof that main only holds
                    tested trees (fails when a proof fails)
  bench serve [--repos N] [--delay-ms D] [--workers W] [--lone L]
              [--lone-every-ms E] [--pacing on|off]
                    mp serve in-process against the loopback GitHub (D ms added to
                    every request, the REST client paced and reading over GraphQL
                    as shipped): owner's label to merge, lone labels and a burst
                    (p50/p90/p99/max), the points spent a minute while the burst
                    drains, and the API cost of idle resyncs
                    (default 100 repositories, 20 ms, 4 workers)
  bench contracts [--docs N] [--runs K] [--out DIR] [--mp PATH]
                    mp contract validate against ajv (pinned, installed into
                    target/bench-ajv/) on N generated contracts, as a directory
                    tree and as JSON Lines: median and min wall time and peak
                    memory of each whole process over K runs (default 100000
                    documents in target/bench-contracts/, 3 runs, mp built with
                    cargo build --release)";

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let root = workspace_root();
    let result = match args.as_slice() {
        ["test", rest @ ..] => test::run(&root, rest),
        ["openapi", rest @ ..] => openapi::STEP.run(&root, rest),
        ["graphql", rest @ ..] => graphql::STEP.run(&root, rest),
        ["pyclient", rest @ ..] => pyclient::STEP.run(&root, rest),
        ["webhooks", rest @ ..] => webhooks::STEP.run(&root, rest),
        ["tidy"] => tidy::run(&root),
        ["schemas"] => schemas::run(&root, false),
        ["schemas", "--check"] => schemas::run(&root, true),
        ["gen-world", rest @ ..] => gen_world::run(rest),
        ["gen-audit-log", rest @ ..] => gen_audit_log::run(rest),
        ["bench", "api", rest @ ..] => bench_api::run(rest),
        ["bench", "agents", rest @ ..] => bench_agents::run(&root, rest),
        ["bench", "drain", rest @ ..] => bench_drain::run(rest),
        ["bench", "serve", rest @ ..] => bench_serve::run(rest),
        ["bench", "contracts", rest @ ..] => bench_contracts::run(&root, rest),
        _ => {
            #[allow(clippy::print_stderr)]
            {
                eprintln!("{USAGE}");
            }
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            #[allow(clippy::print_stderr)]
            {
                eprintln!("error: {err:#}");
            }
            ExitCode::FAILURE
        }
    }
}
