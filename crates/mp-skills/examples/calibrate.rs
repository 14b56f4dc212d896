//! Measures the sandbox on this machine: fuel burnt per second on an endless loop (the
//! fuel ↔ time calibration of `docs/skills-abi.md`) and the cost of one skill call.
//!
//! Run with `cargo run --release -p mp-skills --example calibrate`.

use std::io::Write;
use std::time::Instant;

use mp_skills::sandbox::{Limits, SkillModule};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut out = std::io::stdout();
    let spin = SkillModule::from_wat(
        "spin",
        include_str!("../src/sandbox/testdata/infinite_loop.wat"),
    )?;
    for fuel in [100_000_000_u64, 1_000_000_000] {
        // Fuel alone: the clock backstop would cut the measurement.
        let limits = Limits {
            fuel,
            clock: None,
            ..Limits::default()
        };
        let start = Instant::now();
        let outcome = spin.call(b"{}", &limits);
        let took = start.elapsed();
        let code = outcome.err().map_or("answered", |f| f.code());
        writeln!(
            out,
            "endless loop, {fuel} fuel: {code} after {:.1} ms ({:.0} M fuel/s)",
            took.as_secs_f64() * 1e3,
            fuel as f64 / took.as_secs_f64() / 1e6
        )?;
    }

    let pass = SkillModule::from_wat(
        "pass",
        include_str!("../src/sandbox/testdata/pass_validator.wat"),
    )?;
    let todo = SkillModule::from_wat(
        "no_todos_in_prod",
        include_str!("../../../examples/skills/no_todos_in_prod/no_todos_in_prod.wat"),
    )?;
    let commits: Vec<String> = (0..50)
        .map(|i| {
            format!(
                r#"{{"sha":"{i:040x}","subject":"fix: change number {i}","body":"","trailers":[]}}"#
            )
        })
        .collect();
    let input = format!(
        r#"{{"pr":{{"number":7,"commits":[{}]}}}}"#,
        commits.join(",")
    );
    for (name, module) in [("pass_validator", &pass), ("no_todos_in_prod", &todo)] {
        let calls = 2_000;
        let start = Instant::now();
        let mut fuel = 0;
        for _ in 0..calls {
            fuel = module.call(input.as_bytes(), &Limits::default())?.fuel_used;
        }
        let per_call = start.elapsed().as_secs_f64() / f64::from(calls);
        writeln!(
            out,
            "{name}: {:.1} µs per call (fresh store + instantiate + call) on a {}-byte input, {fuel} fuel",
            per_call * 1e6,
            input.len()
        )?;
    }
    Ok(())
}
