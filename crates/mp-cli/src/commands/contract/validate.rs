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
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

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
    /// (The input is named by its position among the INPUTs: no count shared between
    /// threads is touched per document.)
    Line(usize, usize),
}

/// Work for a checker: a batch of documents, numbered in input order by `seq`.
struct Job {
    seq: usize,
    work: Work,
}

enum Work {
    /// Files of one document each, to read.
    Files(Vec<PathBuf>),
    /// Whole lines of a JSON Lines input, the first of them line `first_line`.
    Lines {
        input: usize,
        first_line: usize,
        bytes: Vec<u8>,
    },
}

/// A checker's answer to a [`Job`]: each document of the batch, in order, checked or with
/// the reason it could not be read. Blank lines are no documents.
struct Outcome {
    seq: usize,
    documents: Vec<(Origin, anyhow::Result<CheckedDocument>)>,
}

/// Documents per batch: one message per document would spend a third of the time waking
/// threads.
const BATCH: usize = 64;
/// Bytes of JSON Lines per batch (about 64 documents of the usual size).
const LINES_BATCH: usize = 32 * 1024;
/// How many batches may wait between the reader, the checkers and the collector.
const QUEUE: usize = 8;

/// True for a JSON Lines input: `-`, `*.jsonl` or `*.ndjson`.
fn is_json_lines(path: &Path) -> bool {
    path.as_os_str() == "-"
        || path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("jsonl") || e.eq_ignore_ascii_case("ndjson"))
}

/// Parses one document and checks it on its own. Text checked as UTF-8 at once parses
/// faster than bytes, whose strings serde_json checks one by one; bytes that are not UTF-8
/// get serde_json's own error. `not_json` names the document in that error.
fn parse_and_check(
    bytes: &[u8],
    not_json: impl FnOnce() -> String,
) -> anyhow::Result<CheckedDocument> {
    let value: Value = match std::str::from_utf8(bytes) {
        Ok(text) => serde_json::from_str(text).with_context(not_json)?,
        Err(_) => serde_json::from_slice(bytes).with_context(not_json)?,
    };
    Ok(mp_contracts::check_document(&value))
}

fn check_file(path: &Path) -> anyhow::Result<CheckedDocument> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    parse_and_check(&bytes, || format!("{} is not JSON", path.display()))
}

fn check_line(line: &[u8], source: &Path, number: usize) -> anyhow::Result<CheckedDocument> {
    parse_and_check(line, || {
        format!(
            "{}:{number} is not JSON (a JSON Lines input holds one document per line)",
            source.display()
        )
    })
}

fn check(work: Work, inputs: &[PathBuf]) -> Vec<(Origin, anyhow::Result<CheckedDocument>)> {
    match work {
        Work::Files(paths) => paths
            .into_iter()
            .map(|path| {
                let checked = check_file(&path);
                (Origin::File(path), checked)
            })
            .collect(),
        Work::Lines {
            input,
            first_line,
            bytes,
        } => bytes
            .split(|&b| b == b'\n')
            .enumerate()
            .filter(|(_, line)| !line.trim_ascii().is_empty())
            .map(|(n, line)| {
                let number = first_line + n;
                let checked = match inputs.get(input) {
                    Some(source) => check_line(line, source, number),
                    None => Err(anyhow::anyhow!("no input {input}")),
                };
                (Origin::Line(input, number), checked)
            })
            .collect(),
    }
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

/// Batches the inputs in order and queues them for the checkers.
struct Queue<'q> {
    seq: usize,
    files: Vec<PathBuf>,
    jobs: &'q SyncSender<Job>,
    stop: &'q AtomicBool,
}

impl Queue<'_> {
    /// Queues a batch; fails once `stop` is set (a document failed and the collector
    /// reports it) or nobody listens any more.
    fn send(&mut self, work: Work) -> anyhow::Result<()> {
        if self.stop.load(Ordering::Relaxed) {
            bail!("validation stopped");
        }
        let job = Job {
            seq: self.seq,
            work,
        };
        self.jobs
            .send(job)
            .map_err(|_| anyhow::anyhow!("validation stopped"))?;
        self.seq += 1;
        Ok(())
    }

    fn file(&mut self, path: PathBuf) -> anyhow::Result<()> {
        self.files.push(path);
        if self.files.len() == BATCH {
            self.flush()?;
        }
        Ok(())
    }

    /// Sends the files gathered so far.
    fn flush(&mut self) -> anyhow::Result<()> {
        if self.files.is_empty() {
            return Ok(());
        }
        let files = std::mem::replace(&mut self.files, Vec::with_capacity(BATCH));
        self.send(Work::Files(files))
    }

    /// Sends the lines of a JSON Lines input in batches of whole lines.
    fn lines(&mut self, position: usize, input: &Path) -> anyhow::Result<()> {
        self.flush()?;
        let source = input.display();
        let mut reader: Box<dyn Read> = if input.as_os_str() == "-" {
            Box::new(std::io::stdin().lock())
        } else {
            Box::new(File::open(input).with_context(|| format!("reading {source}"))?)
        };
        let mut block = vec![0; 1 << 20];
        let mut pending: Vec<u8> = Vec::new();
        let mut line = 1;
        loop {
            let read = match reader.read(&mut block) {
                Ok(0) => break,
                Ok(read) => read,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e).with_context(|| format!("reading {source}")),
            };
            pending.extend_from_slice(&block[..read]);
            if pending.len() < LINES_BATCH {
                continue;
            }
            // Send the complete lines, in batches of about LINES_BATCH bytes; the
            // unfinished last line waits for more bytes.
            let Some(last) = pending.iter().rposition(|&b| b == b'\n') else {
                continue;
            };
            let mut start = 0;
            while start <= last {
                let end = pending[(start + LINES_BATCH).min(last)..=last]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(last, |at| (start + LINES_BATCH).min(last) + at);
                let bytes = pending[start..=end].to_vec();
                let lines = bytes.iter().filter(|&&b| b == b'\n').count();
                self.send(Work::Lines {
                    input: position,
                    first_line: line,
                    bytes,
                })?;
                line += lines;
                start = end + 1;
            }
            pending.drain(..=last);
        }
        if !pending.is_empty() {
            self.send(Work::Lines {
                input: position,
                first_line: line,
                bytes: pending,
            })?;
        }
        Ok(())
    }
}

/// Sends every document of `inputs` to the checkers, in input order. Stops at the first
/// input that cannot be read.
fn read_inputs(inputs: &[PathBuf], queue: &mut Queue<'_>) -> anyhow::Result<()> {
    for (position, input) in inputs.iter().enumerate() {
        if is_json_lines(input) {
            queue.lines(position, input)?;
        } else if std::fs::metadata(input).is_ok_and(|m| m.is_dir()) {
            let mut found = false;
            walk(input, &mut |path| {
                found = true;
                queue.file(path)
            })?;
            if !found {
                bail!("{} holds no *.json file", input.display());
            }
        } else {
            queue.file(input.clone())?;
        }
    }
    queue.flush()
}

/// Reads and checks batches of jobs until the queue closes.
fn checker(jobs: &Mutex<Receiver<Job>>, outcomes: &SyncSender<Outcome>, inputs: &[PathBuf]) {
    loop {
        let job = match jobs.lock() {
            Ok(queue) => queue.recv(),
            Err(_) => return,
        };
        let Ok(Job { seq, work }) = job else {
            return;
        };
        let documents = check(work, inputs);
        if outcomes.send(Outcome { seq, documents }).is_err() {
            return;
        }
    }
}

/// Every document's problems, the set's when asked, and the name of each document.
struct Report {
    errors: Vec<ContractError>,
    names: Names,
}

/// The name of every document, compactly: a file's path in one shared buffer, a line of
/// JSON Lines as its source and number (a set of 100,000 documents keeps about 1 MiB of
/// names from a JSON Lines file).
#[derive(Default)]
struct Names {
    paths: String,
    /// Every INPUT as named.
    sources: Vec<String>,
    names: Vec<Name>,
}

enum Name {
    /// `paths[start..end]`.
    File { start: usize, end: usize },
    /// Line `line` of `sources[source]`.
    Line { source: usize, line: usize },
}

impl Names {
    fn push(&mut self, origin: &Origin) {
        let name = match origin {
            Origin::File(path) => {
                let start = self.paths.len();
                self.paths.push_str(&path.display().to_string());
                Name::File {
                    start,
                    end: self.paths.len(),
                }
            }
            Origin::Line(source, line) => Name::Line {
                source: *source,
                line: *line,
            },
        };
        self.names.push(name);
    }

    fn len(&self) -> usize {
        self.names.len()
    }

    fn get(&self, index: usize) -> String {
        match self.names.get(index) {
            Some(Name::File { start, end }) => self.paths[*start..*end].to_owned(),
            Some(Name::Line { source, line }) => {
                let source = self.sources.get(*source).map_or("?", String::as_str);
                format!("{source}:{line}")
            }
            None => "?".to_owned(),
        }
    }
}

/// Runs the reader, the checkers and the collector; the first input problem ends it.
fn collect(args: &ValidateArgs) -> anyhow::Result<Report> {
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .min(8);
    let (job_tx, job_rx) = sync_channel::<Job>(QUEUE);
    let (out_tx, out_rx) = sync_channel::<Outcome>(QUEUE);
    let job_rx = Mutex::new(job_rx);
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let stop = &stop;
        let reader = scope.spawn(move || {
            let mut queue = Queue {
                seq: 0,
                files: Vec::with_capacity(BATCH),
                jobs: &job_tx,
                stop,
            };
            read_inputs(&args.inputs, &mut queue)
        });
        for _ in 0..threads {
            let out_tx = out_tx.clone();
            let job_rx = &job_rx;
            scope.spawn(move || checker(job_rx, &out_tx, &args.inputs));
        }
        drop(out_tx);

        let mut set = SetValidator::new();
        let mut errors = Vec::new();
        let mut names = Names {
            sources: args
                .inputs
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
            ..Names::default()
        };
        let mut waiting: HashMap<usize, Outcome> = HashMap::new();
        let mut next = 0;
        let mut failure = None;
        for outcome in out_rx.iter() {
            waiting.insert(outcome.seq, outcome);
            // Batches are taken in input order, so the first failure is the earliest.
            while failure.is_none()
                && let Some(outcome) = waiting.remove(&next)
            {
                next += 1;
                for (origin, checked) in outcome.documents {
                    let checked = match checked {
                        Ok(checked) => checked,
                        Err(e) => {
                            failure = Some(e);
                            stop.store(true, Ordering::Relaxed);
                            break;
                        }
                    };
                    if args.set {
                        errors.extend(set.push(checked));
                    } else {
                        let own = names.len();
                        errors.extend(checked.errors().iter().cloned().map(|mut e| {
                            e.document = own;
                            e
                        }));
                    }
                    names.push(&origin);
                }
            }
            if failure.is_some() {
                // Drain what the checkers still hold, so they can stop.
                waiting.clear();
            }
        }
        let read = reader
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the input reader stopped")));
        // A failed document stops the reader; its failure is the one to report.
        if let Some(e) = failure {
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
    let name = |index: usize| names.get(index);
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
