//! `cargo xtask bench contracts`: `mp contract validate` against ajv (draft 2020-12, Node)
//! on a large generated contract set, each timed as a whole process.
//!
//! The set ([`generate`]) is written once under `--out` (default `target/bench-contracts/`)
//! as a directory tree and as JSON Lines; ajv is installed from `xtask/bench/ajv/`'s pinned
//! lock into `target/bench-ajv/` with `npm ci`, and `validate.mjs` (ours) drives it. mp is
//! `--mp PATH`, or `target/release/mp` after `cargo build --release --locked -p mp-cli`.
//!
//! Each command runs `--runs` times. A run is measured by a fresh copy of this binary
//! (`xtask bench contracts --measure REPORT -- COMMAND...`, internal): it spawns the command,
//! times it from spawn to exit, and reads its peak resident memory from
//! `getrusage(RUSAGE_CHILDREN)`, which, in a process whose only child is the command, is
//! the command's own (and any of its children it waited for). Linux also counts, at
//! `exec`, the high-water mark of the address space the command was forked from, so a peak
//! below the measuring process's own (about 8 MiB) reads as that floor.
//!
//! The table gives the median and minimum wall time, the peak over the runs, the exit
//! codes, the last line of output, and for each mp row the time of the ajv row that reads
//! the same input divided by its own (above 1: mp is faster).

mod generate;

use std::fmt::Write as _;
use std::fs;
use std::io::{BufRead as _, BufReader, Read};
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use nix::sys::resource::{UsageWho, getrusage};

const HELP: &str =
    "usage: cargo xtask bench contracts [--docs N] [--runs K] [--out DIR] [--mp PATH]
  --docs N    documents in the set, a multiple of 5 (default 100000)
  --runs K    runs of each command (default 3)
  --out DIR   where the set is written (default target/bench-contracts)
  --mp PATH   the mp binary (default: cargo build --release --locked -p mp-cli,
              then target/release/mp)";

/// The command line.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Options {
    docs: usize,
    runs: usize,
    out: Option<PathBuf>,
    mp: Option<PathBuf>,
}

fn parse(args: &[&str]) -> anyhow::Result<Options> {
    let mut options = Options {
        docs: 100_000,
        runs: 3,
        out: None,
        mp: None,
    };
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let mut value = || {
            rest.next()
                .copied()
                .with_context(|| format!("{flag} needs a value\n{HELP}"))
        };
        match *flag {
            "--docs" => options.docs = value()?.parse().context("--docs must be a number")?,
            "--runs" => options.runs = value()?.parse().context("--runs must be a number")?,
            // Absolute, since the commands run in the workspace root.
            "--out" => options.out = Some(std::path::absolute(value()?)?),
            "--mp" => options.mp = Some(std::path::absolute(value()?)?),
            _ => bail!("unknown argument {flag:?}\n{HELP}"),
        }
    }
    if options.runs == 0 {
        bail!("--runs must be at least 1");
    }
    Ok(options)
}

/// `cargo xtask bench contracts ...`, and the internal `--measure` form.
pub fn run(root: &Path, args: &[&str]) -> anyhow::Result<()> {
    if let ["--measure", report, "--", command @ ..] = args {
        return measure_child(Path::new(report), command);
    }
    let options = parse(args)?;
    let out = options
        .out
        .clone()
        .unwrap_or_else(|| root.join("target/bench-contracts"));
    let mp = match &options.mp {
        Some(mp) => mp.clone(),
        None => build_mp(root)?,
    };
    say(&format!(
        "generating {} documents in {}",
        options.docs,
        out.display()
    ));
    if !generate::ensure(&out, options.docs)? {
        say("the set is already there");
    }
    let validate_mjs = ensure_ajv(root)?;
    let set = generate::SetPaths::new(&out);
    let schemas = root.join("crates/mp-contracts/schemas");
    let ajv = |input: &Path| -> Vec<String> {
        let mut command = vec!["node".to_owned(), display(&validate_mjs)];
        command.extend(["--schemas".to_owned(), display(&schemas), display(input)]);
        command
    };
    let mp_validate = |set_flag: bool, input: &Path| -> Vec<String> {
        let mut command = vec![display(&mp), "contract".to_owned(), "validate".to_owned()];
        if set_flag {
            command.push("--set".to_owned());
        }
        command.push(display(input));
        command
    };
    let benches = [
        Bench::new("ajv: node validate.mjs docs/", ajv(&set.dir), None),
        Bench::new("ajv: node validate.mjs docs.jsonl", ajv(&set.jsonl), None),
        Bench::new(
            "mp contract validate docs/",
            mp_validate(false, &set.dir),
            Some(0),
        ),
        Bench::new(
            "mp contract validate --set docs/",
            mp_validate(true, &set.dir),
            Some(0),
        ),
        Bench::new(
            "mp contract validate --set docs.jsonl",
            mp_validate(true, &set.jsonl),
            Some(1),
        ),
    ];
    let mut results = Vec::new();
    for bench in &benches {
        let mut samples = Vec::new();
        for index in 0..options.runs {
            say(&format!(
                "{} (run {}/{})",
                bench.label,
                index + 1,
                options.runs
            ));
            samples.push(measure(root, &bench.command)?);
        }
        results.push(Summary::of(&samples));
    }
    #[allow(clippy::print_stdout)]
    {
        println!(
            "\n{} documents ({} chains) in {}; {} run(s) each, whole processes\n",
            options.docs,
            options.docs / generate::CHAIN_LEN,
            out.display(),
            options.runs
        );
        print!("{}", table(&benches, &results));
    }
    Ok(())
}

/// One line on stderr, prefixed with the command.
fn say(line: &str) {
    #[allow(clippy::print_stderr)]
    {
        eprintln!("xtask bench contracts: {line}");
    }
}

fn display(path: &Path) -> String {
    path.display().to_string()
}

/// `cargo build --release --locked -p mp-cli`, and the binary it leaves.
pub(crate) fn build_mp(root: &Path) -> anyhow::Result<PathBuf> {
    say("cargo build --release --locked -p mp-cli");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--release", "--locked", "-p", "mp-cli"])
        .current_dir(root)
        .status()
        .context("running cargo build")?;
    if !status.success() {
        bail!("cargo build --release -p mp-cli failed ({status})");
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| root.join("target"), |dir| root.join(dir));
    Ok(target.join("release/mp"))
}

/// Installs the pinned ajv into `target/bench-ajv/` unless the installed lock is the
/// pinned one, copies `validate.mjs` beside it, and returns the script's path.
fn ensure_ajv(root: &Path) -> anyhow::Result<PathBuf> {
    let source = root.join("xtask/bench/ajv");
    let dir = root.join("target/bench-ajv");
    let lock = fs::read(source.join("package-lock.json")).context("reading the ajv lock")?;
    // npm ci empties node_modules first, so a stamp in it never outlives its install.
    let stamp = dir.join("node_modules/.mp-bench-lock");
    let installed = fs::read(&stamp).is_ok_and(|s| s == lock)
        && dir.join("node_modules/ajv/package.json").is_file()
        && dir.join("node_modules/ajv-formats/package.json").is_file();
    fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    if !installed {
        for file in ["package.json", "package-lock.json"] {
            fs::copy(source.join(file), dir.join(file))
                .with_context(|| format!("copying {file} to {}", dir.display()))?;
        }
        say(&format!("npm ci --prefix {}", dir.display()));
        let status = Command::new("npm")
            .args([
                "ci",
                "--ignore-scripts",
                "--no-audit",
                "--no-fund",
                "--prefix",
            ])
            .arg(&dir)
            .stdout(Stdio::null())
            .status();
        match status {
            Ok(status) if status.success() => {}
            Ok(status) => bail!("`npm ci --prefix {}` failed ({status})", dir.display()),
            Err(err) => bail!("`npm ci` could not start ({err}): install Node.js and npm"),
        }
        fs::write(&stamp, &lock).with_context(|| format!("writing {}", stamp.display()))?;
    }
    let script = dir.join("validate.mjs");
    fs::copy(source.join("validate.mjs"), &script)
        .with_context(|| format!("copying validate.mjs to {}", dir.display()))?;
    Ok(script)
}

/// One timed command, and the row of the ajv command it is compared with.
struct Bench {
    label: &'static str,
    command: Vec<String>,
    versus: Option<usize>,
}

impl Bench {
    fn new(label: &'static str, command: Vec<String>, versus: Option<usize>) -> Self {
        Self {
            label,
            command,
            versus,
        }
    }
}

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum End {
    Code(i32),
    Signal(i32),
}

impl End {
    fn text(self) -> String {
        match self {
            Self::Code(code) => code.to_string(),
            Self::Signal(signal) => format!("signal {signal}"),
        }
    }

    /// Exit 0 (valid) or 1 (problems found): the input was read and validated.
    fn validated(self) -> bool {
        matches!(self, Self::Code(0 | 1))
    }

    fn parse(text: &str) -> Option<Self> {
        match text.strip_prefix("signal:") {
            Some(signal) => signal.parse().ok().map(Self::Signal),
            None => text.parse().ok().map(Self::Code),
        }
    }
}

/// One run of a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sample {
    pub(crate) wall: Duration,
    /// Peak resident set, KiB.
    pub(crate) max_rss_kib: u64,
    pub(crate) end: End,
    /// The last non-empty line of stdout, else of stderr.
    pub(crate) last_line: String,
}

/// The internal `--measure REPORT -- COMMAND...`: runs the command with this process's
/// stdin, stdout and stderr, then writes `<wall ns> <max rss KiB> <exit code | signal:N>` to
/// REPORT.
fn measure_child(report: &Path, command: &[&str]) -> anyhow::Result<()> {
    let [program, args @ ..] = command else {
        bail!("--measure needs a command");
    };
    let start = Instant::now();
    let status = Command::new(program)
        .args(args)
        .status()
        .with_context(|| format!("starting {program}"))?;
    let wall = start.elapsed();
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN).context("getrusage")?;
    let end = match (status.code(), status.signal()) {
        (Some(code), _) => code.to_string(),
        (None, Some(signal)) => format!("signal:{signal}"),
        (None, None) => bail!("{program} ended with neither a code nor a signal"),
    };
    fs::write(
        report,
        format!("{} {} {end}\n", wall.as_nanos(), usage.max_rss()),
    )
    .with_context(|| format!("writing {}", report.display()))
}

/// Runs `command` once under a fresh `--measure` copy of this binary (also used by
/// `bench agents`).
pub(crate) fn measure(root: &Path, command: &[String]) -> anyhow::Result<Sample> {
    let report = root.join(format!(
        "target/bench-contracts-measure-{}.txt",
        std::process::id()
    ));
    let _ = fs::remove_file(&report);
    let exe = std::env::current_exe().context("finding the xtask binary")?;
    let mut child = Command::new(exe)
        .args(["bench", "contracts", "--measure"])
        .arg(&report)
        .arg("--")
        .args(command)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting the measuring process")?;
    let stderr = child.stderr.take().map(|e| thread::spawn(|| last_line(e)));
    let stdout = child.stdout.take().map(last_line).unwrap_or_default();
    let stderr = stderr.and_then(|t| t.join().ok()).unwrap_or_default();
    let status = child.wait().context("waiting for the measuring process")?;
    let text = fs::read_to_string(&report);
    let _ = fs::remove_file(&report);
    let text = match text {
        Ok(text) if status.success() => text,
        _ => bail!("could not measure `{}`: {stderr}", command.join(" ")),
    };
    let sample = parse_report(&text).with_context(|| format!("a bad measure report {text:?}"))?;
    Ok(Sample {
        last_line: if stdout.is_empty() { stderr } else { stdout },
        ..sample
    })
}

fn parse_report(text: &str) -> Option<Sample> {
    let mut fields = text.split_whitespace();
    let wall = fields.next()?.parse::<u64>().ok()?;
    let max_rss_kib = fields.next()?.parse().ok()?;
    let end = End::parse(fields.next()?)?;
    Some(Sample {
        wall: Duration::from_nanos(wall),
        max_rss_kib,
        end,
        last_line: String::new(),
    })
}

/// The last non-empty line read from `stream`, holding no more than one line at a time.
fn last_line(stream: impl Read) -> String {
    let mut reader = BufReader::new(stream);
    let mut line = Vec::new();
    let mut last = String::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return last,
            Ok(_) => {
                let text = String::from_utf8_lossy(&line);
                if !text.trim().is_empty() {
                    last = text.trim().to_owned();
                }
            }
        }
    }
}

/// A command's runs, summed up.
#[derive(Debug, Clone, PartialEq)]
struct Summary {
    median: Duration,
    min: Duration,
    peak_mib: f64,
    ends: Vec<End>,
    last_line: String,
}

impl Summary {
    fn of(samples: &[Sample]) -> Self {
        let mut walls: Vec<Duration> = samples.iter().map(|s| s.wall).collect();
        walls.sort();
        let mut ends: Vec<End> = samples.iter().map(|s| s.end).collect();
        ends.sort();
        ends.dedup();
        let peak = samples.iter().map(|s| s.max_rss_kib).max().unwrap_or(0);
        // Exact below 2^52 KiB.
        #[allow(clippy::cast_precision_loss)]
        let peak_mib = peak as f64 / 1024.0;
        Self {
            median: walls.get(walls.len() / 2).copied().unwrap_or_default(),
            min: walls.first().copied().unwrap_or_default(),
            peak_mib,
            ends,
            last_line: samples
                .last()
                .map(|s| s.last_line.clone())
                .unwrap_or_default(),
        }
    }

    fn validated(&self) -> bool {
        self.ends.iter().all(|e| e.validated())
    }
}

/// The Markdown table: one row per command.
fn table(benches: &[Bench], results: &[Summary]) -> String {
    let mut table = String::from(
        "| command | median s | min s | peak MiB | exit | ajv ÷ mp time | last line |\n|---|---:|---:|---:|---|---:|---|\n",
    );
    for (bench, result) in benches.iter().zip(results) {
        let versus = match bench.versus.and_then(|i| results.get(i)) {
            Some(ajv) if ajv.validated() && result.validated() => format!(
                "{:.2}×",
                ajv.median.as_secs_f64() / result.median.as_secs_f64()
            ),
            Some(_) => "n/a (not validated)".to_owned(),
            None => String::new(),
        };
        let ends: Vec<String> = result.ends.iter().map(|e| e.text()).collect();
        let _ = writeln!(
            table,
            "| {} | {:.3} | {:.3} | {:.1} | {} | {versus} | {} |",
            bench.label,
            result.median.as_secs_f64(),
            result.min.as_secs_f64(),
            result.peak_mib,
            ends.join(", "),
            result.last_line.replace('|', "\\|"),
        );
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_default_and_parse() -> anyhow::Result<()> {
        let defaults = parse(&[])?;
        assert_eq!((defaults.docs, defaults.runs), (100_000, 3));
        let options = parse(&["--docs", "50", "--runs", "1", "--mp", "/bin/mp"])?;
        assert_eq!(options.docs, 50);
        assert_eq!(options.runs, 1);
        assert_eq!(options.mp, Some(PathBuf::from("/bin/mp")));
        assert!(parse(&["--runs", "0"]).is_err());
        assert!(parse(&["--docs"]).is_err());
        assert!(parse(&["--fast"]).is_err());
        Ok(())
    }

    #[test]
    fn a_report_reads_back() {
        let sample = parse_report("1500000000 20480 2\n");
        assert_eq!(
            sample.map(|s| (s.wall, s.max_rss_kib, s.end)),
            Some((Duration::from_millis(1500), 20480, End::Code(2)))
        );
        assert_eq!(
            parse_report("1 2 signal:9").map(|s| s.end),
            Some(End::Signal(9))
        );
        assert_eq!(parse_report("1 2"), None);
    }

    #[test]
    fn the_last_non_empty_line_is_kept() {
        assert_eq!(last_line(&b"a\nb\n\n  \n"[..]), "b");
        assert_eq!(last_line(&b""[..]), "");
    }

    /// The measuring side reports what the child did: its exit code, and a peak memory at
    /// least that of the 64 MiB string it held. (Here, in the test process, other tests'
    /// children count too, which can only raise the peak; under `bench contracts` the
    /// measuring process is a fresh one with the command as its only child.)
    #[test]
    fn a_child_is_measured() -> anyhow::Result<()> {
        let report = std::env::temp_dir().join(format!("mp-measure-{}.txt", std::process::id()));
        measure_child(
            &report,
            &[
                "sh",
                "-c",
                "x=$(head -c 67108864 /dev/zero | tr '\\0' a); exit 3",
            ],
        )?;
        let sample = parse_report(&fs::read_to_string(&report)?).context("a report")?;
        fs::remove_file(&report)?;
        assert_eq!(sample.end, End::Code(3));
        assert!(sample.max_rss_kib >= 64 * 1024, "{sample:?}");
        Ok(())
    }

    #[test]
    fn the_ratio_needs_both_sides_validated() {
        let summary = |secs: u64, code: i32| Summary {
            median: Duration::from_secs(secs),
            min: Duration::from_secs(secs),
            peak_mib: 1.0,
            ends: vec![End::Code(code)],
            last_line: "x | y".to_owned(),
        };
        let benches = [
            Bench::new("ajv", vec![], None),
            Bench::new("mp ok", vec![], Some(0)),
            Bench::new("mp broken", vec![], Some(0)),
        ];
        let text = table(&benches, &[summary(4, 0), summary(2, 1), summary(1, 2)]);
        let rows: Vec<&str> = text.lines().skip(2).collect();
        assert!(rows[1].contains("| 2.00× |"), "{text}");
        assert!(rows[2].contains("n/a (not validated)"), "{text}");
        assert!(rows[2].contains("x \\| y"), "{text}");
    }
}
