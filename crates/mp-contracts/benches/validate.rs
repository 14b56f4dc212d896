//! Validation throughput: 10,000 generated contracts of all five kinds, schema and
//! semantic rules, on one thread. Run with `cargo bench -p mp-contracts`.
//!
//! The documents form 2,000 consistent chains (IntentContract, TaskSeed, Acceptance,
//! PublishGate, Evidence) across the four risk levels, so every rule does real work
//! (`support/chains.rs`, the generator `cargo xtask bench contracts` uses too).
//! Three workloads are timed, each several times (the best and median runs are printed):
//! the whole set through `validate_set`, each document through `validate_document`, and
//! the set again with one document in ten broken (the error path).

use std::io::Write;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[path = "support/chains.rs"]
mod chains;

const CHAINS: usize = 2_000;
const RUNS: usize = 7;
/// Without `--bench` (as under `cargo test --all-targets`), a quick smoke run.
const SMOKE_CHAINS: usize = 20;

/// One broken field per tenth document, of a kind that exercises both layers.
fn break_some(docs: &mut [Value]) {
    for (i, doc) in docs.iter_mut().enumerate().filter(|(i, _)| i % 10 == 3) {
        match i % 4 {
            0 => doc["extra"] = json!(true),
            1 => doc["createdAt"] = json!("2026-02-30T00:00:00"),
            2 => doc["state"] = json!("Done"),
            _ => doc["version"] = json!(0),
        }
    }
}

struct Figures {
    best: Duration,
    median: Duration,
    errors: usize,
}

fn measure(runs: usize, mut run: impl FnMut() -> usize) -> Figures {
    let mut times = Vec::with_capacity(runs);
    let mut errors = 0;
    for _ in 0..runs {
        let start = Instant::now();
        errors = std::hint::black_box(run());
        times.push(start.elapsed());
    }
    times.sort();
    Figures {
        best: times[0],
        median: times[runs / 2],
        errors,
    }
}

fn per_second(docs: usize, d: Duration) -> f64 {
    // Exact for any realistic count.
    #[allow(clippy::cast_precision_loss)]
    let n = docs as f64;
    n / d.as_secs_f64()
}

fn main() -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    let full = std::env::args().any(|a| a == "--bench");
    let (chains, runs) = if full {
        (CHAINS, RUNS)
    } else {
        (SMOKE_CHAINS, 1)
    };
    let docs: Vec<Value> = chains::Chains::new(chains).flatten().collect();
    assert_eq!(docs.len(), chains * chains::CHAIN_LEN);

    let cold = Instant::now();
    let first = mp_contracts::validate_set(&docs);
    let cold = cold.elapsed();
    if let Some(e) = first.first() {
        return Err(std::io::Error::other(format!(
            "generated set is not valid: {e}"
        )));
    }

    let mut broken = docs.clone();
    break_some(&mut broken);

    let set = measure(runs, || mp_contracts::validate_set(&docs).len());
    let each = measure(runs, || {
        docs.iter()
            .map(|d| mp_contracts::validate_document(d).len())
            .sum()
    });
    let bad = measure(runs, || mp_contracts::validate_set(&broken).len());
    if bad.errors != docs.len() / 10 {
        return Err(std::io::Error::other(format!(
            "expected one error per broken document, got {}",
            bad.errors
        )));
    }

    writeln!(
        out,
        "mp-contracts validation throughput ({} documents, {runs} runs, one thread)",
        docs.len()
    )?;
    writeln!(
        out,
        "first validate_set incl. building the validators: {:.1} ms",
        cold.as_secs_f64() * 1e3
    )?;
    for (name, f) in [
        ("validate_set, all valid", &set),
        ("validate_document each, all valid", &each),
        ("validate_set, 1 in 10 broken", &bad),
    ] {
        writeln!(
            out,
            "{name:<36} best {:>8.1} ms  median {:>8.1} ms  {:>9.0} docs/s (median)  errors {}",
            f.best.as_secs_f64() * 1e3,
            f.median.as_secs_f64() * 1e3,
            per_second(docs.len(), f.median),
            f.errors,
        )?;
    }
    Ok(())
}
