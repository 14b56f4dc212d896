//! `mp contract check-update`: changes to contract documents checked as transitions, for two
//! files or for every contract file under some paths against a git revision. Reads the
//! files and runs `git`; the rules are `mp_contracts::update::check_change`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use clap::Args;
use mp_contracts::update::{AFTER, BEFORE, Change, FIRST_CONTEXT, check_change};
use mp_contracts::{ContractError, Kind, Version};
use serde_json::{Value, json};

use crate::Exit;
use crate::cli::Format;

/// Arguments of `mp contract check-update`.
#[derive(Debug, Args)]
pub struct CheckUpdateArgs {
    /// BEFORE AFTER [CONTEXT...]: two versions of one contract document, then the contract
    /// documents the change may rely on (the PublishGate of a contract being Published).
    /// With --git-ref: the files and directories whose contract files are compared.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Compare every contract file (`*.json`) under the given paths in the working tree
    /// with its version at this git revision; the other contract files there are the
    /// context.
    #[arg(long, value_name = "REF")]
    pub git_ref: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// What happened to one contract file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Added,
    Modified,
    Deleted,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Added => "added",
            Status::Modified => "modified",
            Status::Deleted => "deleted",
        }
    }
}

/// One checked change and its refusals, with the names of the documents they point at.
struct Checked {
    /// The file the change is about (the later version, or the deleted file).
    path: String,
    status: Status,
    /// `id` of the later version (or of the deleted one).
    id: Option<String>,
    /// Each refusal with the name of its document.
    refusals: Vec<(String, ContractError)>,
}

/// Runs `mp contract check-update`.
pub fn check_update(args: &CheckUpdateArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let (checked, scope) = match &args.git_ref {
        Some(git_ref) => (against_ref(git_ref, &args.files)?, Some(git_ref.as_str())),
        None => (vec![two_files(&args.files)?], None),
    };
    report(&checked, scope, args.format, out)
}

fn read_json(path: &Path) -> anyhow::Result<Value> {
    let text = super::super::read_input(path)?;
    serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))
}

fn two_files(files: &[PathBuf]) -> anyhow::Result<Checked> {
    let [before_path, after_path, context_paths @ ..] = files else {
        bail!("check-update needs BEFORE and AFTER (or --git-ref REF and the paths to compare)");
    };
    let before = read_json(before_path)?;
    let after = read_json(after_path)?;
    let context = context_paths
        .iter()
        .map(|p| read_json(p))
        .collect::<anyhow::Result<Vec<Value>>>()?;
    let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
    let errors = check_change(
        Change::Modified {
            before: &before,
            after: &after,
        },
        &context,
    );
    Ok(Checked {
        path: names[1].clone(),
        status: Status::Modified,
        id: id_of(&after),
        refusals: errors
            .into_iter()
            .map(|e| (names.get(e.document).cloned().unwrap_or_default(), e))
            .collect(),
    })
}

fn id_of(doc: &Value) -> Option<String> {
    doc.get("id").and_then(Value::as_str).map(str::to_owned)
}

/// `kind`, `id` and `version` of a document, when it has them.
fn identity(doc: &Value) -> Option<(Kind, &str, Option<Version>)> {
    let kind = Kind::from_name(doc.get("kind")?.as_str()?)?;
    let id = doc.get("id")?.as_str()?;
    let version = doc
        .get("version")
        .and_then(|v| serde::Deserialize::deserialize(v).ok());
    Some((kind, id, version))
}

fn against_ref(git_ref: &str, paths: &[PathBuf]) -> anyhow::Result<Vec<Checked>> {
    let commit = git(&[
        "rev-parse",
        "--verify",
        "--quiet",
        &format!("{git_ref}^{{commit}}"),
    ])
    .with_context(|| format!("{git_ref} is not a commit of the repository here"))?;
    let commit = commit.trim().to_owned();
    if let Some(absolute) = paths.iter().find(|p| p.is_absolute()) {
        bail!(
            "{} is absolute: with --git-ref, give paths relative to the current directory",
            absolute.display()
        );
    }
    let paths: Vec<PathBuf> = paths.iter().map(|p| normal(p)).collect();

    let mut listing = vec!["ls-tree", "-r", "-z", "--name-only", commit.as_str(), "--"];
    let path_args: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    listing.extend(path_args.iter().map(String::as_str));
    let mut at_ref: BTreeMap<String, Value> = BTreeMap::new();
    for name in git(&listing)?.split('\0').filter(|n| is_contract_file(n)) {
        let text = git(&["show", &format!("{commit}:./{name}")])?;
        let doc =
            serde_json::from_str(&text).with_context(|| format!("{git_ref}:{name} is not JSON"))?;
        at_ref.insert(name.to_owned(), doc);
    }

    let mut here: BTreeMap<String, Value> = BTreeMap::new();
    for path in &paths {
        for file in contract_files(path)? {
            let doc = read_json(&file)?;
            here.insert(file.display().to_string(), doc);
        }
    }

    let mut checked = Vec::new();
    for (path, after) in &here {
        let before = match at_ref.get(path) {
            Some(before) if before == after => continue,
            Some(before) => Some((path.clone(), before)),
            // A new file carrying a contract known at REF (a store's next version file)
            // changes the highest version of that contract.
            None => identity(after).and_then(|(kind, id, _)| {
                at_ref
                    .iter()
                    .filter(|(_, doc)| identity(doc).is_some_and(|(k, i, _)| k == kind && i == id))
                    .max_by_key(|(_, doc)| identity(doc).and_then(|(_, _, v)| v))
                    .map(|(name, doc)| (name.clone(), doc))
            }),
        };
        let context: Vec<(&String, &Value)> = here.iter().filter(|(p, _)| *p != path).collect();
        let context_docs: Vec<Value> = context.iter().map(|(_, d)| (*d).clone()).collect();
        let (change, status, before_name) = match &before {
            Some((name, before)) => (
                Change::Modified { before, after },
                Status::Modified,
                format!("{git_ref}:{name}"),
            ),
            None => (Change::Added { after }, Status::Added, String::new()),
        };
        let name = |index: usize| match index {
            BEFORE => before_name.clone(),
            AFTER => path.clone(),
            i => context
                .get(i - FIRST_CONTEXT)
                .map(|(p, _)| (*p).clone())
                .unwrap_or_default(),
        };
        checked.push(Checked {
            path: path.clone(),
            status,
            id: id_of(after),
            refusals: check_change(change, &context_docs)
                .into_iter()
                .map(|e| (name(e.document), e))
                .collect(),
        });
    }
    for (path, before) in at_ref.iter().filter(|(p, _)| !here.contains_key(*p)) {
        checked.push(Checked {
            path: path.clone(),
            status: Status::Deleted,
            id: id_of(before),
            refusals: check_change(Change::Deleted { before }, &[])
                .into_iter()
                .map(|e| (format!("{git_ref}:{path}"), e))
                .collect(),
        });
    }
    checked.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(checked)
}

/// `path` without `.` components, so it matches the names `git ls-tree` prints.
fn normal(path: &Path) -> PathBuf {
    path.components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect()
}

/// A `*.json` file whose name does not start with a dot (the store's temporary files do).
fn is_contract_file(name: &str) -> bool {
    let file = name.rsplit('/').next().unwrap_or(name);
    file.ends_with(".json") && !file.starts_with('.')
}

/// The contract files at or under `path` in the working tree (none when it is gone).
fn contract_files(path: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    if path.is_file() {
        if is_contract_file(&path.display().to_string()) {
            found.push(path.to_owned());
        }
        return Ok(found);
    }
    if !path.is_dir() {
        return Ok(found);
    }
    let mut pending = vec![path.to_owned()];
    while let Some(dir) = pending.pop() {
        let entries =
            std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))?;
        for entry in entries {
            let entry = entry.with_context(|| format!("reading {}", dir.display()))?;
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            if entry.file_type()?.is_dir() {
                pending.push(path);
            } else if is_contract_file(&name) {
                found.push(path);
            }
        }
    }
    Ok(found)
}

/// Runs `git ARGS` in the current directory; its stdout, or the reason it failed.
fn git(args: &[&str]) -> anyhow::Result<String> {
    let output = Command::new("git")
        .args(["-c", "core.quotePath=false"])
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .context("running git")?;
    if !output.status.success() {
        bail!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    String::from_utf8(output.stdout).context("git printed a name that is not UTF-8")
}

fn report(
    checked: &[Checked],
    git_ref: Option<&str>,
    format: Format,
    out: &mut dyn Write,
) -> anyhow::Result<Exit> {
    let refusals = checked.iter().map(|c| c.refusals.len()).sum::<usize>();
    let allowed = refusals == 0;
    match format {
        Format::Text => {
            for (document, e) in checked.iter().flat_map(|c| &c.refusals) {
                let pointer = if e.pointer.is_empty() {
                    "(root)"
                } else {
                    &e.pointer
                };
                writeln!(out, "{document} {pointer}: {}: {}", e.code, e.message)?;
            }
            let verdict = if allowed {
                "allowed".to_owned()
            } else {
                format!("refused ({refusals} refusals)")
            };
            match git_ref {
                Some(git_ref) => {
                    for c in checked {
                        let mark = if c.refusals.is_empty() {
                            "ok"
                        } else {
                            "refused"
                        };
                        writeln!(out, "{} {}: {mark}", c.status.as_str(), c.path)?;
                    }
                    writeln!(
                        out,
                        "{} contract files changed since {git_ref}: {verdict}",
                        checked.len()
                    )?;
                }
                None => writeln!(out, "update: {verdict}")?,
            }
        }
        Format::Json => {
            let changes: Vec<Value> = checked
                .iter()
                .map(|c| {
                    json!({
                        "path": c.path,
                        "change": c.status.as_str(),
                        "id": c.id,
                        "allowed": c.refusals.is_empty(),
                    })
                })
                .collect();
            let list: Vec<Value> = checked
                .iter()
                .flat_map(|c| &c.refusals)
                .map(|(document, e)| {
                    json!({
                        "document": document,
                        "pointer": e.pointer,
                        "code": e.code,
                        "message": e.message,
                    })
                })
                .collect();
            crate::output::json(
                out,
                &json!({"allowed": allowed, "changes": changes, "refusals": list}),
            )?;
        }
    }
    Ok(if allowed { Exit::Ok } else { Exit::Findings })
}
