//! `mp contract validate`: contract documents from files, directories and JSON Lines,
//! validated as they stream in.
//!
//! The inputs are read, parsed and checked on every core, each document on its own; the
//! results are taken back in input order into a [`SetValidator`], which keeps a compact
//! index (ids, references, snapshots) and drops the document. The rules across documents
//! run once every document is in. Memory therefore grows with the number of documents by
//! their index entries and names, never by the documents.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};

use anyhow::{Context, bail};
use clap::Args;
use mp_contracts::{CheckedDocument, ContractError, SetValidator};
use serde_json::{Value, json};

use crate::Exit;
use crate::cli::Format;

/// Arguments of `mp contract validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Contract documents: a FILE holding one JSON document; a DIRECTORY, meaning every
    /// `*.json` file under it, recursively, in path order; a `*.jsonl` or `*.ndjson` file
    /// of JSON Lines (one document per line); or `-`, JSON Lines on standard input.
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// Also check the rules across the documents (references, snapshots, chains): the
    /// documents of every INPUT form one closed set.
    #[arg(long)]
    pub set: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Where a document came from, as errors name it.
enum Origin {
    /// One file, one document.
    File(PathBuf),
    /// A line of a JSON Lines input (`-` for standard input), counted from 1.
    Line(Arc<str>, usize),
}

impl Origin {
    fn name(&self) -> String {
        match self {
            Self::File(path) => path.display().to_string(),
            Self::Line(source, line) => format!("{source}:{line}"),
        }
    }
}

/// One document to read and check.
enum Work {
    /// A file to read.
    File(PathBuf),
    /// A line already read.
    Text(String),
}

struct Job {
    index: usize,
    origin: Origin,
    work: Work,
}

/// A checked document, or why its input could not be used.
type Outcome = (usize, Origin, anyhow::Result<CheckedDocument>);

/// Documents travel between threads in batches: one message per document would spend a
/// third of the time waking threads.
const BATCH: usize = 64;
/// How many batches may wait between the reader, the checkers and the collector.
const QUEUE: usize = 8;

/// True for a JSON Lines input: `-`, `*.jsonl` or `*.ndjson`.
fn is_json_lines(path: &Path) -> bool {
    path.as_os_str() == "-"
        || path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("jsonl") || e.eq_ignore_ascii_case("ndjson"))
}

fn check(work: Work, origin: &Origin) -> anyhow::Result<CheckedDocument> {
    let value: Value = match work {
        Work::File(path) => {
            let bytes =
                std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
            serde_json::from_slice(&bytes)
                .with_context(|| format!("{} is not JSON", origin.name()))?
        }
        Work::Text(text) => serde_json::from_str(&text).with_context(|| {
            format!(
                "{} is not JSON (a JSON Lines input holds one document per line)",
                origin.name()
            )
        })?,
    };
    Ok(mp_contracts::check_document(&value))
}

/// The `*.json` files under `dir`, recursively, in path order. Names starting with `.` are
/// skipped (a `.git` directory is not contracts); a symbolic link to a directory is not
/// followed, one to a file is read.
fn walk(dir: &Path, each: &mut dyn FnMut(PathBuf) -> anyhow::Result<()>) -> anyhow::Result<()> {
    let mut entries: Vec<(PathBuf, bool)> = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let entry = entry.with_context(|| format!("reading {}", dir.display()))?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let is_dir = entry
            .file_type()
            .with_context(|| format!("reading {}", entry.path().display()))?
            .is_dir();
        entries.push((entry.path(), is_dir));
    }
    entries.sort();
    for (path, is_dir) in entries {
        if is_dir {
            walk(&path, each)?;
        } else if path.extension().is_some_and(|e| e == "json") {
            each(path)?;
        }
    }
    Ok(())
}

/// Numbers documents in input order and queues them for the checkers.
struct Queue<'q> {
    next: usize,
    batch: Vec<Job>,
    jobs: &'q SyncSender<Vec<Job>>,
    stop: &'q AtomicBool,
}

impl Queue<'_> {
    /// Queues the next document; fails once `stop` is set (a document failed and the
    /// collector reports it) or nobody listens any more.
    fn send(&mut self, origin: Origin, work: Work) -> anyhow::Result<()> {
        self.batch.push(Job {
            index: self.next,
            origin,
            work,
        });
        self.next += 1;
        if self.batch.len() == BATCH {
            self.flush()?;
        }
        Ok(())
    }

    /// Sends the documents queued so far.
    fn flush(&mut self) -> anyhow::Result<()> {
        if self.stop.load(Ordering::Relaxed) {
            bail!("validation stopped");
        }
        if self.batch.is_empty() {
            return Ok(());
        }
        let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH));
        self.jobs
            .send(batch)
            .map_err(|_| anyhow::anyhow!("validation stopped"))
    }
}

/// Sends every document of `inputs` to the checkers, in input order. Stops at the first
/// input that cannot be read.
fn read_inputs(inputs: &[PathBuf], queue: &mut Queue<'_>) -> anyhow::Result<()> {
    for input in inputs {
        if is_json_lines(input) {
            let source: Arc<str> = Arc::from(input.display().to_string());
            let reader: Box<dyn BufRead> = if input.as_os_str() == "-" {
                Box::new(std::io::stdin().lock())
            } else {
                let file =
                    File::open(input).with_context(|| format!("reading {}", input.display()))?;
                Box::new(BufReader::with_capacity(1 << 16, file))
            };
            for (n, line) in reader.lines().enumerate() {
                let line = line.with_context(|| format!("reading {source}:{}", n + 1))?;
                if line.trim().is_empty() {
                    continue;
                }
                queue.send(Origin::Line(source.clone(), n + 1), Work::Text(line))?;
            }
        } else if std::fs::metadata(input).is_ok_and(|m| m.is_dir()) {
            let before = queue.next;
            walk(input, &mut |path| {
                queue.send(Origin::File(path.clone()), Work::File(path))
            })?;
            if queue.next == before {
                bail!("{} holds no *.json file", input.display());
            }
        } else {
            queue.send(Origin::File(input.clone()), Work::File(input.clone()))?;
        }
    }
    queue.flush()
}

/// Reads and checks batches of jobs until the queue closes.
fn checker(jobs: &Mutex<Receiver<Vec<Job>>>, outcomes: &SyncSender<Vec<Outcome>>) {
    loop {
        let batch = match jobs.lock() {
            Ok(queue) => queue.recv(),
            Err(_) => return,
        };
        let Ok(batch) = batch else {
            return;
        };
        let checked = batch
            .into_iter()
            .map(|job| {
                let checked = check(job.work, &job.origin);
                (job.index, job.origin, checked)
            })
            .collect();
        if outcomes.send(checked).is_err() {
            return;
        }
    }
}

/// Every document's problems, the set's when asked, and the name of each document.
struct Report {
    errors: Vec<ContractError>,
    names: Vec<String>,
}

/// Runs the reader, the checkers and the collector; the first input problem ends it.
fn collect(args: &ValidateArgs) -> anyhow::Result<Report> {
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .min(8);
    let (job_tx, job_rx) = sync_channel::<Vec<Job>>(QUEUE);
    let (out_tx, out_rx) = sync_channel::<Vec<Outcome>>(QUEUE);
    let job_rx = Mutex::new(job_rx);
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let stop = &stop;
        let reader = scope.spawn(move || {
            let mut queue = Queue {
                next: 0,
                batch: Vec::with_capacity(BATCH),
                jobs: &job_tx,
                stop,
            };
            read_inputs(&args.inputs, &mut queue)
        });
        for _ in 0..threads {
            let out_tx = out_tx.clone();
            let job_rx = &job_rx;
            scope.spawn(move || checker(job_rx, &out_tx));
        }
        drop(out_tx);

        let mut set = SetValidator::new();
        let mut errors = Vec::new();
        let mut names = Vec::new();
        let mut waiting: HashMap<usize, (Origin, CheckedDocument)> = HashMap::new();
        let mut failure = None;
        for (index, origin, checked) in out_rx.iter().flatten() {
            match checked {
                Ok(checked) => {
                    waiting.insert(index, (origin, checked));
                }
                // The earliest failure in input order is the one to report.
                Err(e) => {
                    if failure.as_ref().is_none_or(|(at, _)| index < *at) {
                        failure = Some((index, e));
                    }
                    stop.store(true, Ordering::Relaxed);
                }
            }
            if failure.is_some() {
                // Stop reading; let the checkers drain what is queued.
                continue;
            }
            while let Some((origin, checked)) = waiting.remove(&names.len()) {
                if args.set {
                    errors.extend(set.push(checked));
                } else {
                    let own = names.len();
                    errors.extend(checked.errors().iter().cloned().map(|mut e| {
                        e.document = own;
                        e
                    }));
                }
                names.push(origin.name());
            }
        }
        let read = reader
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the input reader stopped")));
        // A failed document stops the reader; its failure is the one to report.
        if let Some((_, e)) = failure {
            return Err(e);
        }
        read?;
        if args.set {
            errors.extend(set.finish());
            errors.sort_by(|a, b| {
                a.document
                    .cmp(&b.document)
                    .then_with(|| a.pointer.cmp(&b.pointer))
            });
        }
        Ok(Report { errors, names })
    })
}

pub(super) fn validate(args: &ValidateArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let Report { errors, names } = collect(args)?;
    let name = |index: usize| names.get(index).map_or("?", String::as_str);
    match args.format {
        Format::Text => {
            for e in &errors {
                let pointer = if e.pointer.is_empty() {
                    "(root)"
                } else {
                    &e.pointer
                };
                writeln!(
                    out,
                    "{} {pointer}: {}: {}",
                    name(e.document),
                    e.code,
                    e.message
                )?;
            }
            let verdict = if errors.is_empty() {
                "valid"
            } else {
                "invalid"
            };
            writeln!(
                out,
                "{} documents: {verdict} ({} errors)",
                names.len(),
                errors.len()
            )?;
        }
        Format::Json => {
            let list: Vec<Value> = errors
                .iter()
                .map(|e| {
                    json!({
                        "document": name(e.document),
                        "pointer": e.pointer,
                        "code": e.code,
                        "message": e.message,
                    })
                })
                .collect();
            crate::output::json(out, &Value::Array(list))?;
        }
    }
    Ok(if errors.is_empty() {
        Exit::Ok
    } else {
        Exit::Findings
    })
}
