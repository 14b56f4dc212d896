//! The cost of running user skills, measured (never asserted): the per-call overhead of a
//! trivial validator and of the example validator on a realistic pull request, each with
//! and without its contract's schema checks, and how far past its budget a looping skill
//! is stopped.
//!
//! Run with `cargo bench -p mp-skills --bench sandbox`. Figures: docs/performance.md.

#![allow(clippy::print_stdout, reason = "a benchmark prints its figures")]

use std::sync::Arc;
use std::time::{Duration, Instant};

use mp_core::config::skills::SkillLimits;
use mp_core::context::{CommitContext, FileChange, FileStatus, PrContext, PrState};
use mp_core::ids::{CommitSha, Login, PrNumber, RepoName};
use mp_core::severity::Severity;
use mp_core::skill::Validator;
use mp_skills::contract::{Contract, ContractSchemas};
use mp_skills::sandbox::{Limits, SkillModule, WasmValidator, pr_json};

const CONTRACT: &str =
    include_str!("../../../examples/skills/no_todos_in_prod/no_todos_in_prod.md");

/// A pull request like the ones agents open: 20 commits with identity trailers, 40 files.
fn realistic_pr() -> PrContext {
    let commits = (0..20u8)
        .map(|i| {
            CommitContext::from_message(
                CommitSha::parse(&format!("{i:02x}").repeat(20)).expect("40 hex digits"),
                &format!(
                    "feat(parser): step {i} of the new grammar\n\nLonger explanation of the change, two lines of it.\nAnd the second line.\n\nAgent-Tool: claude-code\nAgent-Model: opus\nAgent-Session: s_{i:04}\nAgent-Machine: ci-runner-3\nTask-Ref: acme/app#12"
                ),
            )
        })
        .collect();
    let files = (0..40)
        .map(|i| FileChange {
            path: format!("src/module_{i}/file_{i}.rs"),
            status: FileStatus::Modified,
            additions: 12,
            deletions: 3,
            previous_filename: None,
        })
        .collect();
    PrContext {
        workflow_jobs: Vec::new(),
        repo: RepoName::parse("acme/app").expect("valid"),
        number: PrNumber::new(42),
        title: "A new grammar for the parser".to_owned(),
        body: "Implements the grammar of issue #12.".to_owned(),
        head_sha: CommitSha::parse(&"ab".repeat(20)).expect("valid"),
        head_ref: "agent/parser".to_owned(),
        base_sha: CommitSha::parse(&"cd".repeat(20)).expect("valid"),
        base_ref: "main".to_owned(),
        state: PrState::Open,
        merged: false,
        labels: vec!["ready-to-merge".to_owned()],
        author: Login::parse("codex-agent").expect("valid"),
        commits,
        files,
        check_runs: Vec::new(),
        label_events: Vec::new(),
        head_history: Default::default(),
        base_history: Default::default(),
        label_records: Default::default(),
    }
}

/// The median and minimum per-call time over `rounds` rounds of `calls` calls.
fn measure(rounds: usize, calls: u32, mut call: impl FnMut()) -> (Duration, Duration) {
    let mut samples: Vec<Duration> = (0..rounds)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..calls {
                call();
            }
            start.elapsed() / calls
        })
        .collect();
    samples.sort();
    (samples[samples.len() / 2], samples[0])
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let pr = realistic_pr();
    let input_bytes = serde_json::to_vec(&pr_json(&pr))?.len();
    let schemas = Arc::new(ContractSchemas::compile(
        &Contract::parse(CONTRACT).map_err(|g| format!("{g:?}"))?,
    )?);
    let modules = [
        (
            "pass_validator (trivial)",
            include_str!("../src/sandbox/testdata/pass_validator.wat"),
        ),
        (
            "no_todos_in_prod (scans every subject)",
            include_str!("../../../examples/skills/no_todos_in_prod/no_todos_in_prod.wat"),
        ),
    ];
    let mut other = pr.clone();
    other.title.push_str(" (again)");
    println!(
        "per-call cost on a {input_bytes}-byte PrContext (20 commits, 40 files), through Validator::check:"
    );
    for (name, wat) in modules {
        for checked in [false, true] {
            let module = SkillModule::from_wat(name, wat)?;
            let mut validator = WasmValidator::new(module, Severity::P0, Limits::default());
            if checked {
                validator = validator.with_contract(Arc::clone(&schemas));
            }
            let mut flip = false;
            let (first, _) = measure(15, 200, || {
                flip = !flip;
                let pr = if flip { &pr } else { &other };
                let _ = std::hint::black_box(validator.check(pr));
            });
            let (again, _) = measure(15, 200, || {
                let _ = std::hint::black_box(validator.check(&pr));
            });
            println!(
                "  {name}, {}: first skill on a pull request {:.1} µs, each further skill on it {:.1} µs (medians)",
                if checked {
                    "with contract schema checks"
                } else {
                    "no schema checks"
                },
                first.as_secs_f64() * 1e6,
                again.as_secs_f64() * 1e6
            );
        }
    }

    println!("where the time of one call goes:");
    let (median, _) = measure(15, 200, || {
        let _ = std::hint::black_box(pr_json(&pr));
    });
    println!(
        "  building the input JSON value: {:.1} µs",
        median.as_secs_f64() * 1e6
    );
    let value = pr_json(&pr);
    let (median, _) = measure(15, 200, || {
        let _ = std::hint::black_box(serde_json::to_vec(&value));
    });
    println!("  encoding it: {:.1} µs", median.as_secs_f64() * 1e6);
    let bytes = serde_json::to_vec(&value)?;
    let pass = SkillModule::from_wat(
        "pass",
        include_str!("../src/sandbox/testdata/pass_validator.wat"),
    )?;
    let (median, _) = measure(15, 200, || {
        let _ = std::hint::black_box(pass.call(&bytes, &Limits::default()));
    });
    println!(
        "  the sandbox call alone (fresh instance, copy in, run, copy out): {:.1} µs",
        median.as_secs_f64() * 1e6
    );
    let (median, _) = measure(15, 200, || {
        let _ = std::hint::black_box(schemas.check_input(&value));
    });
    println!(
        "  the input schema check: {:.1} µs",
        median.as_secs_f64() * 1e6
    );

    println!("looping skill stopped at its budget (skills.yml limits.call_budget_ms):");
    let spin = SkillModule::from_wat(
        "spin",
        include_str!("../src/sandbox/testdata/infinite_loop.wat"),
    )?;
    for budget_ms in [100_u32, 250, 1000] {
        let limits = Limits::from_policy(&SkillLimits {
            call_budget_ms: budget_ms,
            ..SkillLimits::default()
        });
        let mut times: Vec<Duration> = (0..5)
            .map(|_| {
                let start = Instant::now();
                let outcome = spin.call(b"{}", &limits);
                assert!(outcome.is_err(), "an endless loop never answers");
                start.elapsed()
            })
            .collect();
        times.sort();
        let budget = Duration::from_millis(u64::from(budget_ms));
        let median = times[times.len() / 2];
        println!(
            "  budget {budget_ms} ms: stopped after median {:.1} ms (min {:.1}, max {:.1}); {:+.0}% of the budget",
            median.as_secs_f64() * 1e3,
            times[0].as_secs_f64() * 1e3,
            times[times.len() - 1].as_secs_f64() * 1e3,
            (median.as_secs_f64() / budget.as_secs_f64() - 1.0) * 100.0
        );
    }
    Ok(())
}
