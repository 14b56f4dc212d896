//! `cargo bench -p mp-github-fake --bench tick`: one tick's pull-request path over a synthetic
//! world of 10,000 open pull requests (20 repositories x 500) on the in-memory GitHub.
//!
//! Measured in this process, each several times (min and median wall time): the tick in
//! observe and in merge mode (`run_pr_path` over a fresh `MemoryGitHub` each time; in merge
//! mode the first mergeable pull request of a repository merges and the later ones are
//! race-rebased, as on GitHub); the in-memory GitHub's reads alone (what the tick reads for
//! every pull request, nothing evaluated); and mp-core's pure evaluation (`assess_pr` over
//! values read beforehand). Peak memory is measured in a child process per mode that does
//! only what `mp tick --world` does after parsing: build the world, serve it, run one tick.
//!
//! Options (after `--`): `--repos N`, `--prs M` (per repository), `--seed S`,
//! `--iterations K`.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark reports on the terminal"
)]

use std::collections::BTreeMap;
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use mp_core::config::{self, Config, ConfigFiles};
use mp_core::context::{Comment, PrContext};
use mp_core::ids::{CommitSha, Timestamp};
use mp_core::port::{AuditError, AuditLog, AuditRecord, GitHub};
use mp_github_fake::MemoryGitHub;
use mp_github_fake::world::{World, synthetic_world};
use mp_tick::{self as tick, MAIN_BRANCH, MergeMode, TickOptions, TickReport, TickSetup};

/// What to run, from the command line.
#[derive(Debug, Clone)]
struct Args {
    repos: usize,
    prs: usize,
    seed: u64,
    iterations: usize,
    /// Set in the child process that measures one mode's peak memory.
    child: Option<MergeMode>,
}

impl Args {
    fn parse() -> Result<Self, String> {
        let mut args = Self {
            repos: 20,
            prs: 500,
            seed: 1,
            iterations: 7,
            child: None,
        };
        let raw: Vec<String> = std::env::args().skip(1).collect();
        let mut rest = raw.iter();
        while let Some(flag) = rest.next() {
            let mut value = || {
                rest.next()
                    .ok_or_else(|| format!("{flag} needs a value"))
                    .cloned()
            };
            let number = |text: String| -> Result<u64, String> {
                text.parse()
                    .map_err(|_| format!("{flag} expects a whole number, got {text:?}"))
            };
            match flag.as_str() {
                // cargo bench passes `--bench` to every bench target.
                "--bench" => {}
                "--repos" => args.repos = count(number(value()?)?)?,
                "--prs" => args.prs = count(number(value()?)?)?,
                "--seed" => args.seed = number(value()?)?,
                "--iterations" => args.iterations = count(number(value()?)?)?.max(1),
                "--child" => {
                    args.child = Some(match value()?.as_str() {
                        "observe" => MergeMode::Observe,
                        "merge" => MergeMode::Merge,
                        other => return Err(format!("unknown mode {other:?}")),
                    });
                }
                other => return Err(format!("unknown option {other:?}")),
            }
        }
        Ok(args)
    }

    fn total(&self) -> usize {
        self.repos * self.prs
    }
}

fn count(value: u64) -> Result<usize, String> {
    usize::try_from(value).map_err(|_| format!("{value} is too large"))
}

/// An audit log that renders every record as its JSON line, as the file adapter does, and
/// keeps only the byte count.
#[derive(Default)]
struct SinkAudit {
    bytes: std::sync::atomic::AtomicUsize,
}

#[async_trait::async_trait]
impl AuditLog for SinkAudit {
    async fn append(&self, record: &AuditRecord) -> Result<(), AuditError> {
        let line = record.to_json_line();
        self.bytes
            .fetch_add(line.len() + 1, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }
}

/// The world's configuration, loaded as `mp tick` loads it.
fn load_config(world: &World) -> Config {
    let files: ConfigFiles = world.config.clone().into_iter().collect();
    let report = config::load(&files);
    let problems: Vec<String> = report.errors().map(ToString::to_string).collect();
    report
        .config
        .unwrap_or_else(|| panic!("the synthetic configuration is invalid: {problems:#?}"))
}

fn options(world: &World, config: &Config, mode: MergeMode) -> TickOptions {
    let options = TickOptions::from_config(config).with_merge_mode(mode);
    match world.receipt_key.clone() {
        Some(key) => options.with_receipt_key(key),
        None => options,
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime builds")
}

/// The wall time and this thread's CPU time of one run.
#[derive(Debug, Clone, Copy)]
struct Sample {
    wall: Duration,
    cpu: Duration,
}

/// Time this thread has spent on a CPU (`/proc/thread-self/schedstat`, nanoseconds): unlike
/// wall time, it does not grow when other processes take the machine's cores.
fn thread_cpu() -> Duration {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    let nanos = text
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    Duration::from_nanos(nanos)
}

/// Runs `work` and times it.
fn timed<T>(work: impl FnOnce() -> T) -> (T, Sample) {
    let (wall, cpu) = (Instant::now(), thread_cpu());
    let output = work();
    let sample = Sample {
        wall: wall.elapsed(),
        cpu: thread_cpu().saturating_sub(cpu),
    };
    (output, sample)
}

/// One tick over `world` in `mode`: its time, report and API calls. Serving the world and
/// dropping it afterwards are not timed.
fn tick_once(world: World, config: &Config, mode: MergeMode) -> (Sample, TickReport, u64) {
    let options = options(&world, config, mode);
    let now = world.now;
    let github = MemoryGitHub::new(world);
    let audit = SinkAudit::default();
    let runtime = runtime();
    let (report, sample) = timed(|| {
        runtime
            .block_on(tick::run_pr_path(&github, &audit, config, &options, now))
            .expect("the tick runs")
    });
    (sample, report, github.total_calls())
}

/// Everything the tick reads for one pull request before it decides.
struct Read {
    pr: PrContext,
    comments: Vec<Comment>,
    main_head: CommitSha,
}

/// The reads of a tick, without evaluating: every open pull request's context and comments,
/// and each repository's `main` head.
async fn read_all(github: &MemoryGitHub, setup: &TickSetup<'_>) -> Vec<Read> {
    let mut reads = Vec::new();
    for repo in setup.gated_repos() {
        let pulls = github.open_pulls(repo).await.expect("pulls are listed");
        let main_head = github
            .branch_head(repo, MAIN_BRANCH)
            .await
            .expect("main exists");
        for pull in &pulls {
            let pr = tick::fetch_context(github, pull)
                .await
                .expect("the context reads");
            let comments = github
                .comments(repo, pull.number)
                .await
                .expect("the comments read");
            reads.push(Read {
                pr,
                comments,
                main_head: main_head.clone(),
            });
        }
    }
    reads
}

fn setup<'a>(world: &World, config: &'a Config, options: &'a TickOptions) -> TickSetup<'a> {
    let bot = world.bot_login().expect("the bot login is valid");
    TickSetup::new(config, options, bot).expect("the path rules compile")
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

/// Prints the table's header.
fn header() {
    println!(
        "{:<34} {:>10} {:>10} {:>10} {:>10}  notes",
        "measure", "wall min", "median", "CPU min", "per PR"
    );
}

/// Prints one row: min and median wall time, min CPU time, and the median wall time per
/// pull request.
fn row(name: &str, samples: &[Sample], total: usize, note: &str) {
    let mut walls: Vec<Duration> = samples.iter().map(|s| s.wall).collect();
    walls.sort();
    let cpu = samples.iter().map(|s| s.cpu).min().unwrap_or_default();
    let (min, median) = (walls[0], walls[walls.len() / 2]);
    let per_pr = median.as_secs_f64() * 1e6 / total.max(1) as f64;
    println!(
        "{name:<34} {:>10} {:>10} {:>10} {:>10}  {note}",
        ms(min),
        ms(median),
        ms(cpu),
        format!("{per_pr:.1} µs"),
    );
}

/// `action count` pairs of a report, most frequent first.
fn outcome_summary(report: &TickReport) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for outcome in &report.outcomes {
        *counts.entry(outcome.action.as_str()).or_default() += 1;
    }
    let mut counts: Vec<(&str, usize)> = counts.into_iter().collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    counts
        .iter()
        .map(|(action, count)| format!("{action} {count}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `(VmRSS, VmHWM)` of this process, in KiB.
fn memory_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kib| kib.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

/// The child: build the world, serve it, run one tick; print `before world tick` KiB.
fn child(args: &Args, mode: MergeMode) {
    let (before, _) = memory_kib();
    let world = synthetic_world(args.repos, args.prs, args.seed);
    let config = load_config(&world);
    let (after_world, _) = memory_kib();
    let (_, report, _) = tick_once(world, &config, mode);
    let (_, peak) = memory_kib();
    assert_eq!(report.outcomes.len(), args.total());
    println!("{before} {after_world} {peak}");
}

/// Runs the child for `mode` and reads its three figures.
fn measure_memory(args: &Args, mode: MergeMode) -> Result<(u64, u64, u64), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this benchmark: {e}"))?;
    let output = Command::new(exe)
        .args([
            "--repos",
            &args.repos.to_string(),
            "--prs",
            &args.prs.to_string(),
            "--seed",
            &args.seed.to_string(),
            "--child",
            mode_name(mode),
        ])
        .output()
        .map_err(|e| format!("cannot start the memory child: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "the memory child failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let figures: Vec<u64> = text
        .split_whitespace()
        .filter_map(|n| n.parse().ok())
        .collect();
    match figures[..] {
        [before, world, peak] => Ok((before, world, peak)),
        _ => Err(format!("the memory child printed {text:?}")),
    }
}

fn mode_name(mode: MergeMode) -> &'static str {
    match mode {
        MergeMode::Observe => "observe",
        MergeMode::Merge => "merge",
    }
}

fn main() -> ExitCode {
    let args = match Args::parse() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("tick bench: {message}");
            return ExitCode::from(2);
        }
    };
    if let Some(mode) = args.child {
        child(&args, mode);
        return ExitCode::SUCCESS;
    }
    let total = args.total();
    let iterations = args.iterations;
    println!(
        "tick over {} repositories x {} open pull requests = {total} (seed {}), {iterations} iterations each",
        args.repos, args.prs, args.seed
    );

    let mut builds = Vec::new();
    let mut world = None;
    for _ in 0..iterations {
        let (built, sample) = timed(|| synthetic_world(args.repos, args.prs, args.seed));
        builds.push(sample);
        world = Some(built);
    }
    let world = world.expect("at least one iteration");
    let config = load_config(&world);
    println!();
    header();
    row("build the world (synthetic_world)", &builds, total, "");

    for mode in [MergeMode::Observe, MergeMode::Merge] {
        let mut samples = Vec::new();
        let mut last = None;
        for _ in 0..iterations {
            let (sample, report, calls) = tick_once(world.clone(), &config, mode);
            assert_eq!(
                report.outcomes.len(),
                total,
                "every pull request has an outcome"
            );
            samples.push(sample);
            last = Some((report, calls));
        }
        let (report, calls) = last.expect("at least one iteration");
        row(
            &format!("tick, {} mode", mode_name(mode)),
            &samples,
            total,
            &format!("{}; {calls} API calls", outcome_summary(&report)),
        );
    }

    // The in-memory GitHub's share: the same reads without evaluating anything.
    let observe = options(&world, &config, MergeMode::Observe);
    let setup = setup(&world, &config, &observe);
    let github = MemoryGitHub::new(world.clone());
    let runtime = runtime();
    let mut read_samples = Vec::new();
    let mut reads = Vec::new();
    for _ in 0..iterations {
        let sample;
        (reads, sample) = timed(|| runtime.block_on(read_all(&github, &setup)));
        read_samples.push(sample);
    }
    row(
        "in-memory GitHub reads alone",
        &read_samples,
        total,
        &format!("{} pull requests read", reads.len()),
    );

    // mp-core's share: the pure decision over values already read.
    let now: Timestamp = world.now;
    let mut assess_samples = Vec::new();
    let mut mergeable = 0;
    for _ in 0..iterations {
        let inputs: Vec<Read> = reads
            .iter()
            .map(|r| Read {
                pr: r.pr.clone(),
                comments: r.comments.clone(),
                main_head: r.main_head.clone(),
            })
            .collect();
        let sample;
        (mergeable, sample) = timed(|| {
            let mut passed = 0;
            for read in inputs {
                let evaluation =
                    tick::assess_pr(&setup, read.pr, read.comments, read.main_head, now);
                passed += usize::from(evaluation.gate.passed());
            }
            passed
        });
        assess_samples.push(sample);
    }
    row(
        "pure evaluation (assess_pr)",
        &assess_samples,
        total,
        &format!("{mergeable} pass the gate"),
    );
    drop(reads);
    drop(github);

    println!();
    println!("peak memory, one process per mode: build the world, serve it, one tick");
    println!(
        "{:<34} {:>10} {:>14} {:>14}",
        "mode", "at start", "world built", "peak (VmHWM)"
    );
    for mode in [MergeMode::Observe, MergeMode::Merge] {
        match measure_memory(&args, mode) {
            Ok((before, built, peak)) => println!(
                "{:<34} {:>10} {:>14} {:>14}",
                format!("tick, {} mode", mode_name(mode)),
                mib(before),
                mib(built),
                mib(peak)
            ),
            Err(message) => {
                eprintln!("tick bench: {message}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
