//! How closely the sandbox keeps a call's time budget against hostile modules: each module
//! never answers, and runs at budgets of 100 ms, 1 s and 10 s, once on fuel alone and once
//! with the wall-clock backstop (`Limits::clock`), as mp runs skills. Prints the time each
//! call took and its ratio to the budget (target: at most 1.2).
//!
//! `cargo run --release -p mp-skills --example budget [-- --quick]` (`--quick` skips 10 s).

use std::io::Write as _;
use std::time::{Duration, Instant};

use mp_skills::sandbox::{FUEL_PER_MS, Limits, SkillModule};

/// The ABI's memory and bump allocator, shared by every module.
const ALLOC: &str = r#"
  (memory (export "memory") 2 256)
  (global $heap (mut i32) (i32.const 4096))
  (func (export "alloc") (param $len i32) (result i32)
    (local $p i32)
    (local.set $p (global.get $heap))
    (global.set $heap (i32.add (global.get $heap) (local.get $len)))
    (local.get $p))
"#;

/// Name, extra module fields, and the body of `call`, which never answers.
const CORPUS: &[(&str, &str, &str)] = &[
    ("plain loop", "", "(loop $l (br $l))"),
    (
        "mp.log loop",
        r#"(import "mp" "log" (func $log (param i32 i32)))"#,
        "(loop $l (call $log (i32.const 0) (i32.const 64)) (br $l))",
    ),
    (
        "tail-call loop",
        "(func $spin (param i32) (result i64) (return_call $spin (local.get 0)))",
        "(return_call $spin (i32.const 0))",
    ),
    (
        "memory.copy loop",
        "",
        "(loop $l (memory.copy (i32.const 0) (i32.const 65536) (i32.const 65536)) (br $l))",
    ),
    (
        "memory.fill loop",
        "",
        "(loop $l (memory.fill (i32.const 0) (i32.const 7) (i32.const 131072)) (br $l))",
    ),
    (
        "table.fill loop",
        "(table 10000 funcref) (func $f) (elem declare func $f)",
        "(loop $l (table.fill 0 (i32.const 0) (ref.func $f) (i32.const 10000)) (br $l))",
    ),
    (
        "deep recursion",
        "(func $down (param i32) (result i64) (call $down (local.get 0)))",
        "(drop (call $down (i32.const 0)))",
    ),
    (
        "memory growth",
        "",
        "(loop $l (drop (memory.grow (i32.const 1))) (br $l))",
    ),
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let quick = std::env::args().any(|a| a == "--quick");
    let budgets: &[u64] = if quick {
        &[100, 1_000]
    } else {
        &[100, 1_000, 10_000]
    };
    let mut out = std::io::stdout();
    writeln!(out, "| module | budget | fuel alone | with the clock |")?;
    writeln!(out, "|---|---:|---:|---:|")?;
    for (name, fields, body) in CORPUS {
        let wat = format!(
            "(module {fields} {ALLOC} (func (export \"call\") (param i32 i32) (result i64) {body} (i64.const 0)))"
        );
        let module = SkillModule::from_wat(name, &wat)?;
        for &ms in budgets {
            let mut cells = Vec::new();
            for clock in [None, Some(Duration::from_millis(ms))] {
                let limits = Limits {
                    fuel: ms * FUEL_PER_MS,
                    clock,
                    ..Limits::default()
                };
                let started = Instant::now();
                let outcome = module.call(b"{}", &limits);
                let took = started.elapsed().as_secs_f64() * 1e3;
                let code = outcome.err().map_or("answered", |f| f.code());
                #[allow(clippy::cast_precision_loss)]
                let ratio = took / ms as f64;
                cells.push(format!("{took:.0} ms ({ratio:.2}x, {code})"));
            }
            writeln!(out, "| {name} | {ms} ms | {} |", cells.join(" | "))?;
        }
    }
    Ok(())
}
