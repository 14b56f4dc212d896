//! `mp evidence record` and `mp evidence export`: Evidence of one execution, with the
//! hashes derived here from the raw inputs and the commits resolved to full ids (through
//! the git CLI when `--repo` is given), and its export as in-toto / SLSA provenance.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use clap::{Args, Subcommand, ValueEnum};
use mp_contracts::codes::COMMIT_NOT_FULL_DIGEST;
use mp_contracts::evidence::{
    CommitDigest, CommitDigestError, ExecutionRecord, hash_json, sha256, to_in_toto,
};
use mp_contracts::kinds::{
    MergeResult, MergeStatus, PolicyVerdict, StaleClassification, StaleStatus,
};
use mp_contracts::{Approval, ApproverRole, ContractError, ContractId, DateTime, Kind, TaskSeedId};
use serde_json::{Value, json};

use super::contract::session::{Session, StoreArgs, done, invalid, refusal, refused};
use crate::Exit;
use crate::cli::Format;

/// `mp evidence ...`
#[derive(Debug, Subcommand)]
pub enum EvidenceCommand {
    /// Record one execution of an Active TaskSeed as an Evidence; print its id.
    ///
    /// The hashes are computed here: input, output and parameters over their RFC 8785
    /// canonical JSON, the diff and the lockfile over their bytes (no diff: the empty-diff
    /// hash). The commits are full ids (40 or 64 hex digits); an abbreviation is resolved
    /// with `git rev-parse` in --repo, and refused without it (commit-not-full-digest).
    /// Emits taskseed.execution.completed.v1 and evidence.created.v1. The same execution
    /// recorded again prints the first id and creates nothing. Exit 0 recorded, 1 invalid
    /// or refused, 2 unreadable input, missing store or a --repo git cannot read.
    Record(Box<RecordArgs>),
    /// Print a stored Evidence: the document (json), an in-toto Statement v1 with an SLSA
    /// Provenance v1 predicate (in-toto), or a summary (text). Exit 0, 1 when ID is not
    /// a stored Evidence or (in-toto) its commits are not full ids, 2 when the store is
    /// missing.
    Export(ExportArgs),
}

/// Arguments of `mp evidence record`.
#[derive(Debug, Args)]
pub struct RecordArgs {
    /// The TaskSeed that ran (`TS-<n>`, Active).
    #[arg(long, value_name = "ID")]
    pub task: String,
    /// The commit the run started from: its full id (40 or 64 hex digits), or with --repo
    /// anything `git rev-parse` resolves to a commit (an abbreviation, a branch).
    #[arg(long, value_name = "SHA")]
    pub base: String,
    /// The commit it produced (equal to --base when nothing changed), as --base.
    #[arg(long, value_name = "SHA")]
    pub head: String,
    /// A local git repository in which to resolve --base and --head to full commit ids.
    #[arg(long, value_name = "PATH")]
    pub repo: Option<PathBuf>,
    /// Who ran it.
    #[arg(long, value_name = "LOGIN")]
    pub actor: String,
    /// The model, as NAME or NAME@VERSION (version `unknown` when not given).
    #[arg(long, value_name = "MODEL", default_value = "unknown")]
    pub model: String,
    /// A tool used (repeatable; `StructuredLogger` when none is given).
    #[arg(long = "tool", value_name = "TOOL")]
    pub tools: Vec<String>,
    /// Environment facts (repeatable): os=..., runtime=..., container=DIGEST,
    /// lockfile=PATH (the file's bytes are hashed).
    #[arg(long = "env", value_name = "K=V")]
    pub env: Vec<String>,
    /// The normalised input (JSON), `-` for standard input.
    #[arg(long, value_name = "FILE")]
    pub input: PathBuf,
    /// The output (JSON).
    #[arg(long, value_name = "FILE")]
    pub output: PathBuf,
    /// The diff from base to head (bytes); none means an empty diff.
    #[arg(long, value_name = "FILE")]
    pub diff: Option<PathBuf>,
    /// The inference parameters (JSON); none hashes as `{}`.
    #[arg(long, value_name = "FILE")]
    pub parameters: Option<PathBuf>,
    /// The policy verdict: approved, rejected or manual_review_required.
    #[arg(long, value_name = "VERDICT", default_value = "approved")]
    pub verdict: String,
    /// When the run started (RFC 3339; default: now).
    #[arg(long, value_name = "TIME")]
    pub start: Option<String>,
    /// When the run ended (RFC 3339; default: now).
    #[arg(long, value_name = "TIME")]
    pub end: Option<String>,
    /// Store, clock and output.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// The output of `mp evidence export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum ExportFormat {
    /// A summary, one field per line.
    Text,
    /// The Evidence document.
    #[default]
    Json,
    /// An in-toto Statement v1 with an SLSA Provenance v1 predicate.
    InToto,
}

/// Arguments of `mp evidence export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The Evidence id (`EV-<n>`).
    pub id: String,
    /// The store directory.
    #[arg(long, value_name = "DIR")]
    pub store: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ExportFormat::Json)]
    pub format: ExportFormat,
}

/// Runs a `mp evidence` subcommand.
pub fn run(command: &EvidenceCommand, out: &mut dyn Write) -> anyhow::Result<Exit> {
    match command {
        EvidenceCommand::Record(args) => record(args, out),
        EvidenceCommand::Export(args) => export(args, out),
    }
}

fn read_json(path: &Path) -> anyhow::Result<Value> {
    let text = super::read_input(path)?;
    serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))
}

fn read_bytes(path: &Path) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("reading {}", path.display()))
}

fn parse_time(text: Option<&str>, now: &DateTime, what: &str) -> anyhow::Result<DateTime> {
    match text {
        Some(text) => DateTime::parse(text).map_err(|e| anyhow::anyhow!("--{what} {text}: {e}")),
        None => Ok(now.clone()),
    }
}

/// The `--env` facts: os, runtime, container, lockfile.
struct EnvFacts {
    os: String,
    runtime: String,
    container: Option<String>,
    lockfile: Option<Vec<u8>>,
}

fn env_facts(pairs: &[String]) -> anyhow::Result<EnvFacts> {
    let mut map = BTreeMap::new();
    for pair in pairs {
        let Some((key, value)) = pair.split_once('=') else {
            bail!("--env {pair}: expected KEY=VALUE");
        };
        if value.is_empty() {
            bail!("--env {pair}: the value is empty");
        }
        if !matches!(key, "os" | "runtime" | "container" | "lockfile") {
            bail!(
                "--env {pair}: unknown key `{key}` (expected os, runtime, container or lockfile)"
            );
        }
        map.insert(key.to_owned(), value.to_owned());
    }
    let lockfile = map
        .get("lockfile")
        .map(|path| read_bytes(Path::new(path)))
        .transpose()?;
    Ok(EnvFacts {
        os: map
            .remove("os")
            .unwrap_or_else(|| std::env::consts::OS.to_owned()),
        runtime: map
            .remove("runtime")
            .unwrap_or_else(|| "unknown".to_owned()),
        container: map.remove("container"),
        lockfile,
    })
}

/// The human decisions on gates of `task` made by `end`: the Evidence's approvals snapshot.
fn approvals_snapshot(
    session: &Session,
    task: &ContractId,
    end: &DateTime,
) -> anyhow::Result<Vec<Approval<ApproverRole>>> {
    let all = session.all_latest()?;
    let mut snapshot = Vec::new();
    for gate in all.iter().filter_map(|c| c.as_publish_gate()) {
        let of_task = all.iter().any(|c| {
            c.common.id == *gate.entity_id.as_contract_id()
                && c.as_acceptance()
                    .is_some_and(|a| a.task_seed_id.as_contract_id() == task)
        });
        if !of_task {
            continue;
        }
        for approval in &gate.approvals {
            if approval.decided_at.instant() > end.instant() {
                continue;
            }
            if let Some(role) = approval.role.human() {
                snapshot.push(Approval {
                    role,
                    actor_id: approval.actor_id.clone(),
                    decision: approval.decision,
                    decided_at: approval.decided_at.clone(),
                    reason: approval.reason.clone(),
                });
            }
        }
    }
    Ok(snapshot)
}

/// `git` for `rev-parse` in `repo`, blind to the variables that would point it elsewhere
/// (mp may run inside a git hook of another repository).
fn git_in(repo: &Path) -> Command {
    let mut command = Command::new("git");
    command
        .arg("-C")
        .arg(repo)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0");
    for name in mp_skills::sources::git::REPOSITORY_VARIABLES {
        command.env_remove(name);
    }
    command
}

/// Resolves `text` to a full commit id in `repo` (`git rev-parse --verify <text>^{commit}`):
/// `Ok(None)` when it names no commit there.
///
/// # Errors
/// When git cannot run or `repo` is not a repository git can read.
fn rev_parse(repo: &Path, text: &str) -> anyhow::Result<Option<String>> {
    if text.starts_with('-') || text.is_empty() {
        return Ok(None);
    }
    let output = git_in(repo)
        .args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
        .arg(format!("{text}^{{commit}}"))
        .output()
        .context("cannot run git to resolve a commit")?;
    match output.status.code() {
        Some(0) => Ok(Some(
            String::from_utf8_lossy(&output.stdout).trim().to_owned(),
        )),
        // `--verify --quiet`: exit 1 with nothing on stderr for a name that is no commit.
        Some(1) if output.stderr.is_empty() => Ok(None),
        _ => bail!(
            "--repo {}: {}",
            repo.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        ),
    }
}

/// The full commit id of `--base` or `--head` (`field` is `baseCommit` or `headCommit`), or
/// the error that refuses it: without a repository the text must be a full id; with one,
/// it is whatever git resolves it to.
fn resolve_commit(
    repo: Option<&Path>,
    field: &str,
    text: &str,
) -> anyhow::Result<Result<CommitDigest, ContractError>> {
    let refuse = |code: &'static str, message: String| {
        Ok(Err(ContractError::new(
            0,
            format!("/{field}"),
            code,
            message,
        )))
    };
    let Some(repo) = repo else {
        return match CommitDigest::parse(text) {
            Ok(digest) => Ok(Ok(digest)),
            Err(error @ CommitDigestError::Abbreviated(_)) => refuse(
                COMMIT_NOT_FULL_DIGEST,
                format!("{error}; pass the full id, or --repo PATH to resolve it"),
            ),
            Err(error) => refuse(COMMIT_NOT_FULL_DIGEST, error.to_string()),
        };
    };
    // With a repository, even a full id must name one of its commits.
    match rev_parse(repo, text)? {
        Some(full) => match CommitDigest::parse(&full) {
            Ok(digest) => Ok(Ok(digest)),
            Err(e) => bail!("git rev-parse in {} answered {e}", repo.display()),
        },
        None => refuse(
            "commit-not-found",
            format!(
                "`{}` names no commit in {}",
                text.chars().take(80).collect::<String>(),
                repo.display()
            ),
        ),
    }
}

fn record(args: &RecordArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let format = args.store.format;
    let task = TaskSeedId::parse(&args.task).map_err(|e| anyhow::anyhow!("--task: {e}"))?;
    let verdict: PolicyVerdict = serde_json::from_value(Value::String(args.verdict.clone()))
        .with_context(|| format!("--verdict {} is not a policy verdict", args.verdict))?;
    let mut session = Session::open(&args.store)?;
    let base = resolve_commit(args.repo.as_deref(), "baseCommit", &args.base)?;
    let head = resolve_commit(args.repo.as_deref(), "headCommit", &args.head)?;
    let (base, head) = match (base, head) {
        (Ok(base), Ok(head)) => (base.to_string(), head.to_string()),
        (base, head) => {
            let errors: Vec<ContractError> =
                [base.err(), head.err()].into_iter().flatten().collect();
            return invalid(out, format, &errors);
        }
    };
    let input = read_json(&args.input)?;
    let output = read_json(&args.output)?;
    let diff = args
        .diff
        .as_deref()
        .map(read_bytes)
        .transpose()?
        .unwrap_or_default();
    let parameters = args.parameters.as_deref().map(read_json).transpose()?;
    let env = env_facts(&args.env)?;
    let now = DateTime::from_instant(session.now());
    let start = parse_time(args.start.as_deref(), &now, "start")?;
    let end = parse_time(args.end.as_deref(), &now, "end")?;
    let (model_name, model_version) = match args.model.split_once('@') {
        Some((name, version)) => (name.to_owned(), version.to_owned()),
        None => (args.model.clone(), "unknown".to_owned()),
    };
    let tools = if args.tools.is_empty() {
        vec!["StructuredLogger".to_owned()]
    } else {
        args.tools.clone()
    };
    let key = format!(
        "evidence:{}",
        hash_json(&json!({
            "task": task.as_str(),
            "base": base,
            "head": head,
            "input": hash_json(&input),
            "output": hash_json(&output),
            "diff": sha256(&diff),
            "actor": args.actor,
        }))
    );
    if let Some(id) = session.submissions.get(&key) {
        return done(
            out,
            format,
            id.as_str(),
            json!({"id": id.as_str(), "created": false}),
        );
    }
    if base == head && !diff.is_empty() {
        return invalid(
            out,
            format,
            &[ContractError::new(
                0,
                "/diffHash",
                "diff-without-change",
                format!(
                    "base and head are both {base} but the diff has {} bytes",
                    diff.len()
                ),
            )],
        );
    }
    let snapshot = approvals_snapshot(&session, task.as_contract_id(), &end)?;
    let record = ExecutionRecord {
        task_seed_id: task.clone(),
        base_commit: base,
        head_commit: head,
        input: Some(input),
        output: Some(output),
        model_name,
        model_version,
        parameters,
        tools,
        os: env.os,
        runtime: env.runtime,
        container_image_digest: env.container,
        lockfile: env.lockfile,
        diff,
        stale_status: StaleStatus {
            classification: StaleClassification::Fresh,
            evaluated_at: now.clone(),
            reason: None,
        },
        merge_result: MergeResult {
            status: MergeStatus::NotApplicable,
            merged_at: None,
            strategy: None,
            reason: None,
        },
        start_time: start,
        end_time: end,
        actor: args.actor.clone(),
        policy_verdict: verdict,
        approvals_snapshot: (!snapshot.is_empty()).then_some(snapshot),
    };
    let id = match session
        .orch
        .record_execution(task.as_contract_id(), &record)
    {
        Ok(id) => id,
        Err(e) => return refusal(out, format, e),
    };
    session.submissions.insert(key, id.clone());
    session.save()?;
    let evidence = session.latest(&id)?;
    done(
        out,
        format,
        id.as_str(),
        json!({
            "id": id.as_str(),
            "created": true,
            "taskSeedId": task.as_str(),
            "document": evidence,
        }),
    )
}

fn export(args: &ExportArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let id = ContractId::parse(&args.id).map_err(|e| anyhow::anyhow!("{e}"))?;
    let store = StoreArgs {
        store: args.store.clone(),
        now: None,
        format: Format::Json,
    };
    let session = Session::open_read(&store)?;
    let text_format = if args.format == ExportFormat::Text {
        Format::Text
    } else {
        Format::Json
    };
    let contract = match session.latest(&id)? {
        Some(contract) if contract.kind() == Kind::Evidence => contract,
        Some(contract) => {
            return refused(
                out,
                text_format,
                "wrong_kind",
                &format!("{id} is a {}, not an Evidence", contract.kind()),
            );
        }
        None => {
            return refused(
                out,
                text_format,
                "contract_not_found",
                &format!("no contract {id} in the store"),
            );
        }
    };
    match args.format {
        ExportFormat::Json => crate::output::json(out, &serde_json::to_value(&contract)?)?,
        ExportFormat::InToto => match to_in_toto(&contract) {
            Ok(statement) => crate::output::json(out, &statement)?,
            Err(e) => return refused(out, text_format, e.code(), &e.to_string()),
        },
        ExportFormat::Text => {
            if let Some(ev) = contract.as_evidence() {
                writeln!(out, "{id} (Evidence of {})", ev.task_seed_id)?;
                writeln!(out, "commits     {} -> {}", ev.base_commit, ev.head_commit)?;
                writeln!(out, "actor       {}", ev.actor)?;
                writeln!(out, "model       {}@{}", ev.model.name, ev.model.version)?;
                writeln!(out, "tools       {}", ev.tools.join(", "))?;
                writeln!(out, "time        {} .. {}", ev.start_time, ev.end_time)?;
                writeln!(out, "verdict     {}", ev.policy_verdict)?;
                writeln!(out, "inputHash   {}", ev.input_hash)?;
                writeln!(out, "outputHash  {}", ev.output_hash)?;
                writeln!(out, "diffHash    {}", ev.diff_hash)?;
            }
        }
    }
    Ok(Exit::Ok)
}
