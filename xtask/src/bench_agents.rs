//! `cargo xtask bench agents`: `mp agents` and `mp report` over a generated audit log of a
//! million records (`cargo xtask gen-audit-log`), whole processes: wall time and peak
//! memory, against the targets (under 10 s and 300 MB; docs/performance.md).
//!
//! The log is written once into `target/bench-agents/` (regenerated when asked for another
//! size); `mp` is the release binary (`--mp PATH`, or built). Each command runs K times
//! under the measuring process of `bench contracts` (`getrusage(RUSAGE_CHILDREN)` of a
//! process whose only child is the command).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};

use crate::bench_contracts::{End, Sample, build_mp, measure};

/// The targets: wall time and peak resident memory.
const TARGET_WALL: Duration = Duration::from_secs(10);
const TARGET_MIB: f64 = 300.0;

struct Options {
    records: u64,
    runs: usize,
    mp: Option<PathBuf>,
}

fn parse(args: &[&str]) -> anyhow::Result<Options> {
    let mut options = Options {
        records: 1_000_000,
        runs: 3,
        mp: None,
    };
    let mut rest = args;
    while let [flag, value, tail @ ..] = rest {
        match *flag {
            "--records" => options.records = value.parse().context("--records")?,
            "--runs" => options.runs = value.parse().context("--runs")?,
            "--mp" => options.mp = Some(PathBuf::from(value)),
            other => bail!("bench agents: unknown option {other}"),
        }
        rest = tail;
    }
    if !rest.is_empty() || options.runs == 0 {
        bail!("usage: cargo xtask bench agents [--records N] [--runs K] [--mp PATH]");
    }
    Ok(options)
}

fn say(line: &str) {
    #[allow(clippy::print_stderr)]
    {
        eprintln!("xtask bench agents: {line}");
    }
}

/// Runs the benchmark; fails when a run fails or misses a target.
pub fn run(root: &Path, args: &[&str]) -> anyhow::Result<()> {
    let options = parse(args)?;
    let dir = root.join("target/bench-agents");
    let log = dir.join(format!("audit-{}.jsonl", options.records));
    if log.exists() {
        say(&format!("the log is already there: {}", log.display()));
    } else {
        say(&format!("generating {} records", options.records));
        crate::gen_audit_log::write(&log, options.records, 36)?;
    }
    let bytes = std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0);
    let mp = match &options.mp {
        Some(mp) => mp.clone(),
        None => build_mp(root)?,
    };
    let log_arg = log.display().to_string();
    let mp_arg = mp.display().to_string();
    let page = dir.join("report").display().to_string();
    let commands: Vec<(String, Vec<String>)> = [
        ("mp agents (text, by tool)", vec!["agents", "--audit-log"]),
        (
            "mp report (overview and Agents page)",
            vec!["report", "--out", page.as_str(), "--audit-log"],
        ),
        (
            "mp agents --by author --format json",
            vec![
                "agents",
                "--by",
                "author",
                "--format",
                "json",
                "--audit-log",
            ],
        ),
    ]
    .into_iter()
    .map(|(label, args)| {
        let mut command = vec![mp_arg.clone()];
        command.extend(args.into_iter().map(str::to_owned));
        command.push(log_arg.clone());
        (label.to_owned(), command)
    })
    .collect();
    let mut table = String::from(
        "| command | median s | min s | peak MiB | within target |\n|---|---:|---:|---:|---|\n",
    );
    let mut missed = Vec::new();
    for (label, command) in &commands {
        let mut samples: Vec<Sample> = Vec::new();
        for index in 0..options.runs {
            say(&format!("{label} (run {}/{})", index + 1, options.runs));
            let sample = measure(root, command)?;
            if sample.end != End::Code(0) {
                bail!("`{}` failed: {}", command.join(" "), sample.last_line);
            }
            samples.push(sample);
        }
        let mut walls: Vec<Duration> = samples.iter().map(|s| s.wall).collect();
        walls.sort();
        let median = walls[walls.len() / 2];
        let min = walls[0];
        #[allow(clippy::cast_precision_loss)]
        let peak = samples.iter().map(|s| s.max_rss_kib).max().unwrap_or(0) as f64 / 1024.0;
        let within = median < TARGET_WALL && peak < TARGET_MIB;
        if !within {
            missed.push(label.clone());
        }
        table.push_str(&format!(
            "| `{label}` | {:.2} | {:.2} | {peak:.1} | {} |\n",
            median.as_secs_f64(),
            min.as_secs_f64(),
            if within { "yes" } else { "**no**" }
        ));
    }
    #[allow(clippy::print_stdout)]
    {
        #[allow(clippy::cast_precision_loss)]
        let mib = bytes as f64 / 1_048_576.0;
        println!(
            "\n{} records ({mib:.0} MiB) in {}; {} run(s) each, whole processes; targets: under {} s and {TARGET_MIB} MiB\n",
            options.records,
            log.display(),
            options.runs,
            TARGET_WALL.as_secs()
        );
        print!("{table}");
    }
    if !missed.is_empty() {
        bail!("over target: {}", missed.join(", "));
    }
    Ok(())
}
