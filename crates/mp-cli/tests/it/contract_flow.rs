//! `mp contract new|activate|approve|reject|run|log` and `mp evidence record|export`: a
//! whole intent-to-evidence flow over a filesystem store, replays, refusals, exit codes.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::mp;

const NOW: &str = "2026-05-11T09:00:00Z";

/// The commit a run started from and the one it produced: full SHA-1 digests.
const BASE: &str = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678";
const HEAD: &str = "e4f5a6b7c8d90a1b2c3d4e5f60718293a4b5c6d7";

/// A temporary directory holding a store directory and the input files.
struct Workdir {
    dir: tempfile::TempDir,
}

impl Workdir {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir(dir.path().join("store")).expect("store dir");
        let this = Self { dir };
        this.write("in.json", r#"{"prompt": "add a retrying client"}"#);
        this.write("out.json", r#"{"patch": "retry.rs"}"#);
        this.write("change.diff", "diff --git a/retry.rs b/retry.rs\n");
        this
    }

    fn store(&self) -> PathBuf {
        self.dir.path().join("store")
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, text).expect("write input");
        path
    }

    fn intent(&self, capabilities: &str) -> PathBuf {
        self.write(
            "intent.json",
            &format!(
                r#"{{"intent": "Add a retrying HTTP client", "creator": "alice",
                    "priority": "high", "requestedCapabilities": {capabilities}}}"#
            ),
        )
    }

    /// Runs `mp ARGS --store STORE --now TIME` and returns (exit code, stdout).
    fn run_at(&self, now: &str, args: &[&str]) -> (i32, String) {
        let output = mp()
            .args(args)
            .arg("--store")
            .arg(self.store())
            .args(["--now", now])
            .current_dir(self.dir.path())
            .output()
            .expect("run mp");
        (
            output.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        )
    }

    fn run(&self, args: &[&str]) -> (i32, String) {
        self.run_at(NOW, args)
    }

    /// Runs a command that must succeed and returns its trimmed stdout.
    #[track_caller]
    fn ok(&self, args: &[&str]) -> String {
        let (code, stdout) = self.run(args);
        assert_eq!(code, 0, "mp {args:?}: {stdout}");
        stdout.trim().to_owned()
    }

    /// Every file under the store, relative, sorted: what the store holds.
    fn files(&self) -> Vec<String> {
        let mut files = Vec::new();
        collect(&self.store(), &self.store(), &mut files);
        files.sort();
        files
    }

    fn event_types(&self) -> Vec<String> {
        let (code, stdout) = self.run(&["contract", "log", "--format", "json"]);
        assert_eq!(code, 0, "{stdout}");
        let events: Value = serde_json::from_str(&stdout).expect("json events");
        events
            .as_array()
            .expect("an array")
            .iter()
            .map(|e| {
                format!(
                    "{} {}",
                    e["type"].as_str().unwrap_or("?"),
                    e["subject"].as_str().unwrap_or("?")
                )
            })
            .collect()
    }
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            collect(root, &path, files);
        } else {
            let relative = path.strip_prefix(root).expect("under root");
            files.push(relative.display().to_string());
        }
    }
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[test]
fn a_high_risk_intent_runs_through_to_evidence() {
    let w = Workdir::new();
    let intent = w.intent(r#"["read_repo", "write_repo", "network_access"]"#);
    let intent = intent.to_str().expect("utf-8 path");
    let ic = w.ok(&["contract", "new", "IntentContract", "--from", intent]);
    w.ok(&["contract", "approve", &ic, "--actor", "alice"]);
    w.ok(&["contract", "activate", &ic]);
    let created = w.ok(&["contract", "run", &ic]);
    // network_access: the TaskSeed waits for project_lead and security_reviewer.
    w.ok(&["contract", "approve", "TS-101", "--actor", "lead"]);
    w.ok(&[
        "contract",
        "approve",
        "TS-101",
        "--actor",
        "sec",
        "--role",
        "security_reviewer",
    ]);
    w.ok(&["contract", "activate", "TS-101"]);
    let ev1 = w.ok(&[
        "evidence",
        "record",
        "--task",
        "TS-101",
        "--base",
        BASE,
        "--head",
        HEAD,
        "--actor",
        "dev-1",
        "--model",
        "coder@2",
        "--tool",
        "cargo",
        "--env",
        "os=linux",
        "--input",
        "in.json",
        "--output",
        "out.json",
        "--diff",
        "change.diff",
    ]);
    w.ok(&[
        "contract",
        "run",
        "TS-101",
        "--status",
        "passed",
        "--criterion",
        "tests pass",
    ]);
    w.ok(&["contract", "approve", "AC-101", "--actor", "lead"]);
    w.ok(&[
        "contract",
        "approve",
        "AC-101",
        "--actor",
        "sec",
        "--role",
        "security_reviewer",
    ]);
    w.ok(&["contract", "activate", "AC-101"]);
    let gate = w.ok(&["contract", "run", "AC-101", "--format", "json"]);
    let (_, first) = w.run_at(
        "2026-05-11T10:00:00Z",
        &["contract", "approve", "PG-101", "--actor", "lead"],
    );
    let (_, second) = w.run_at(
        "2026-05-11T10:05:00Z",
        &[
            "contract",
            "approve",
            "PG-101",
            "--actor",
            "sec",
            "--role",
            "security_reviewer",
            "--format",
            "json",
        ],
    );
    // A later execution with no change: empty diff, and the gate's human approvals copied.
    let (_, ev2) = w.run_at(
        "2026-05-11T10:10:00Z",
        &[
            "evidence",
            "record",
            "--task",
            "TS-101",
            "--base",
            HEAD,
            "--head",
            HEAD,
            "--actor",
            "dev-1",
            "--input",
            "in.json",
            "--output",
            "out.json",
            "--verdict",
            "manual_review_required",
            "--format",
            "json",
        ],
    );
    let gate = json(&gate);
    let second = json(&second);
    let ev2 = json(&ev2);
    let snapshot_roles: Vec<&str> = ev2["document"]["approvalsSnapshot"]
        .as_array()
        .map(|list| list.iter().filter_map(|a| a["role"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(
        (
            ic.as_str(),
            created.as_str(),
            ev1.as_str(),
            gate["riskLevel"].as_str(),
            gate["finalDecision"].as_str(),
            first.trim(),
            second["finalDecision"].as_str(),
            second["state"].as_str(),
            ev2["id"].as_str(),
            ev2["document"]["diffHash"].as_str(),
            snapshot_roles,
        ),
        (
            "IC-101",
            "created TS-101 (TaskSeed, Draft)",
            "EV-101",
            Some("high"),
            Some("pending"),
            "PG-101: approved by lead as project_lead; finalDecision pending, state Active",
            Some("approved"),
            Some("Published"),
            Some("EV-102"),
            Some("sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            vec!["project_lead", "security_reviewer"],
        )
    );
    assert_eq!(
        w.event_types(),
        [
            "intent.created.v1 IC-101",
            "taskseed.created.v1 TS-101",
            "taskseed.execution.completed.v1 TS-101",
            "evidence.created.v1 EV-101",
            "acceptance.created.v1 AC-101",
            "publishgate.created.v1 PG-101",
            "publishgate.decision.recorded.v1 PG-101",
            "publishgate.decision.recorded.v1 PG-101",
            "taskseed.execution.completed.v1 TS-101",
            "evidence.created.v1 EV-102",
        ]
    );
    // Everything stored forms one valid set (references, snapshots, policies).
    let stored: Vec<PathBuf> = w
        .files()
        .iter()
        .filter(|f| f.ends_with(".json") && f.contains('/'))
        .map(|f| w.store().join(f))
        .collect();
    mp().args(["contract", "validate", "--set"])
        .args(&stored)
        .assert()
        .success();
    // The export is an in-toto statement whose subject digests are the Evidence's hashes.
    let output = mp()
        .args([
            "evidence", "export", "EV-101", "--format", "in-toto", "--store",
        ])
        .arg(w.store())
        .output()
        .expect("run mp");
    let statement = json(&String::from_utf8_lossy(&output.stdout));
    let document = std::fs::read_to_string(w.store().join("EV-101/1.json")).expect("stored");
    let document = json(&document);
    let output_hash = document["outputHash"]
        .as_str()
        .unwrap_or("?")
        .trim_start_matches("sha256:");
    assert_eq!(
        (
            output.status.code(),
            statement["_type"].as_str(),
            statement["subject"][0]["digest"]["sha256"].as_str(),
        ),
        (
            Some(0),
            Some("https://in-toto.io/Statement/v1"),
            Some(output_hash)
        )
    );
}

#[test]
fn replayed_commands_create_nothing_twice() {
    let w = Workdir::new();
    let intent = w.intent(r#"["read_repo", "write_repo"]"#);
    let intent = intent.to_str().expect("utf-8 path");
    let record = [
        "evidence", "record", "--task", "TS-101", "--base", BASE, "--head", HEAD, "--actor",
        "dev-1", "--input", "in.json", "--output", "out.json",
    ];
    let mut outputs = Vec::new();
    let mut after_first = Vec::new();
    let steps: [&[&str]; 7] = [
        &["contract", "new", "IntentContract", "--from", intent],
        &["contract", "approve", "IC-101", "--actor", "alice"],
        &["contract", "activate", "IC-101"],
        &["contract", "run", "IC-101"],
        &record,
        &["contract", "run", "TS-101", "--status", "passed"],
        &["contract", "run", "AC-101"],
    ];
    for step in steps {
        let first = w.ok(step);
        after_first.push((w.files(), w.event_types().len()));
        let again = w.ok(step);
        outputs.push((first, again));
        assert_eq!(
            (w.files(), w.event_types().len()),
            after_first.last().cloned().unwrap_or_default(),
            "replaying {step:?} changed the store"
        );
    }
    assert_eq!(
        outputs,
        [
            ("IC-101", "IC-101"),
            (
                "IC-101: activation approval by alice as project_lead recorded; roles still missing: none",
                "IC-101: activation approval by alice as project_lead already recorded; roles still missing: none",
            ),
            ("IC-101 is Active (version 2)", "IC-101 is already Active"),
            ("created TS-101 (TaskSeed, Active)", "TS-101 already made from IC-101: nothing created"),
            ("EV-101", "EV-101"),
            ("created AC-101 (Acceptance, Active)", "AC-101 already made from TS-101: nothing created"),
            (
                "created PG-101 (PublishGate, Published); risk medium, finalDecision approved",
                "PG-101 already made from AC-101: nothing created; risk medium, finalDecision approved",
            ),
        ]
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
    );
    assert_eq!(
        w.files(),
        [
            "AC-101/1.json",
            "EV-101/1.json",
            "IC-101/1.json",
            "IC-101/2.json",
            "PG-101/1.json",
            "TS-101/1.json",
            "events.jsonl",
            "ledger.json",
        ]
    );
}

#[test]
fn a_refused_transition_exits_1_and_names_the_rule() {
    let w = Workdir::new();
    let intent = w.intent(r#"["read_repo"]"#);
    w.ok(&[
        "contract",
        "new",
        "IntentContract",
        "--from",
        intent.to_str().expect("utf-8"),
    ]);
    let (activate, text) = w.run(&["contract", "activate", "IC-101"]);
    let (reject, json_text) = w.run(&["contract", "reject", "IC-101", "--format", "json"]);
    let (run, run_text) = w.run(&["contract", "run", "IC-101"]);
    let refusal = json(&json_text);
    assert_eq!(
        (
            activate,
            text.trim(),
            reject,
            refusal["code"].as_str(),
            run,
            run_text.trim()
        ),
        (
            1,
            "refused: activation-approval-missing: IntentContract cannot become Active without an explicit approval",
            1,
            Some("reason-required"),
            1,
            "refused: not_active: IC-101 is Draft, not Active",
        )
    );
    // Nothing but the Draft was stored.
    assert_eq!(w.files(), ["IC-101/1.json", "events.jsonl", "ledger.json"]);
}

#[test]
fn an_invalid_document_exits_1_with_every_error_and_stores_nothing() {
    let w = Workdir::new();
    let bad = w.write(
        "bad.json",
        r#"{"intent": "", "priority": "urgent", "requestedCapabilities": ["read_repo"]}"#,
    );
    let (code, stdout) = w.run(&[
        "contract",
        "new",
        "IntentContract",
        "--from",
        bad.to_str().expect("utf-8"),
        "--format",
        "json",
    ]);
    let report = json(&stdout);
    let found: Vec<(String, String)> = report["errors"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|e| {
                    (
                        e["pointer"].as_str().unwrap_or("?").to_owned(),
                        e["code"].as_str().unwrap_or("?").to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        (code, found, w.files()),
        (
            1,
            vec![
                ("/creator".to_owned(), "required".to_owned()),
                ("/intent".to_owned(), "min-length".to_owned()),
                ("/priority".to_owned(), "enum".to_owned()),
            ],
            Vec::<String>::new(),
        )
    );
}

#[test]
fn a_missing_store_or_unreadable_input_exits_2() {
    let w = Workdir::new();
    let missing = w.path("no-such-store");
    let commands: [&[&str]; 5] = [
        &["contract", "log"],
        &["contract", "activate", "IC-101"],
        &["contract", "run", "IC-101"],
        &["evidence", "export", "EV-101"],
        &["contract", "new", "IntentContract", "--from", "intent.json"],
    ];
    let codes: Vec<Option<i32>> = commands
        .iter()
        .map(|args| {
            mp().args(*args)
                .arg("--store")
                .arg(&missing)
                .current_dir(w.dir.path())
                .output()
                .expect("run mp")
                .status
                .code()
        })
        .collect();
    let (unreadable, _) = w.run(&["contract", "new", "IntentContract", "--from", "absent.json"]);
    let (not_json, _) = w.run(&[
        "evidence",
        "record",
        "--task",
        "TS-101",
        "--base",
        BASE,
        "--head",
        BASE,
        "--actor",
        "dev-1",
        "--input",
        "change.diff",
        "--output",
        "out.json",
    ]);
    assert_eq!(
        (codes, unreadable, not_json, missing.exists()),
        (vec![Some(2); 5], 2, 2, false)
    );
}

#[test]
fn phases_persist_between_invocations_and_illegal_moves_are_refused() {
    let w = Workdir::new();
    let intent = w.intent(r#"["read_repo"]"#);
    w.ok(&[
        "contract",
        "new",
        "IntentContract",
        "--from",
        intent.to_str().expect("utf-8"),
    ]);
    w.ok(&["contract", "approve", "IC-101", "--actor", "alice"]);
    w.ok(&["contract", "activate", "IC-101"]);
    w.ok(&["contract", "run", "IC-101"]);
    let moved = w.ok(&["contract", "phase", "TS-101", "Build"]);
    let shown = w.ok(&["contract", "phase", "TS-101"]);
    let (skip, skipped) = w.run(&["contract", "phase", "TS-101", "Publish"]);
    let back = w.ok(&["contract", "phase", "TS-101", "Plan"]);
    assert_eq!(
        (
            moved.as_str(),
            shown.as_str(),
            skip,
            skipped.trim(),
            back.as_str()
        ),
        (
            "TS-101: phase Plan -> Build",
            "TS-101 is in phase Build",
            1,
            "refused: illegal_phase: TS-101 cannot move from phase Build to Publish",
            "TS-101: phase Build -> Plan",
        )
    );
}

#[test]
fn a_locked_store_exits_2_for_writers_but_not_for_readers() {
    let w = Workdir::new();
    let intent = w.intent(r#"["read_repo"]"#);
    let intent = intent.to_str().expect("utf-8");
    std::fs::write(w.store().join(".lock"), "4242\n").expect("lock");
    let (locked, _) = w.run(&["contract", "new", "IntentContract", "--from", intent]);
    let (log, _) = w.run(&["contract", "log"]);
    std::fs::remove_file(w.store().join(".lock")).expect("unlock");
    let (unlocked, id) = w.run(&["contract", "new", "IntentContract", "--from", intent]);
    assert_eq!(
        (
            locked,
            log,
            unlocked,
            id.trim(),
            w.store().join(".lock").exists()
        ),
        (2, 0, 0, "IC-101", false)
    );
}

#[test]
fn a_rejected_gate_stays_active_and_takes_no_more_decisions() {
    let w = Workdir::new();
    let intent = w.intent(r#"["read_repo", "write_repo"]"#);
    w.ok(&[
        "contract",
        "new",
        "IntentContract",
        "--from",
        intent.to_str().expect("utf-8"),
    ]);
    w.ok(&["contract", "approve", "IC-101", "--actor", "alice"]);
    w.ok(&["contract", "activate", "IC-101"]);
    w.ok(&["contract", "run", "IC-101"]);
    w.ok(&[
        "evidence", "record", "--task", "TS-101", "--base", BASE, "--head", HEAD, "--actor",
        "dev-1", "--input", "in.json", "--output", "out.json",
    ]);
    w.ok(&["contract", "run", "TS-101", "--status", "passed"]);
    let gate = w.ok(&["contract", "run", "AC-101", "--risk", "critical"]);
    let rejected = w.ok(&[
        "contract",
        "reject",
        "PG-101",
        "--actor",
        "sec",
        "--role",
        "security_reviewer",
        "--reason",
        "leaks a token",
    ]);
    let (late, late_text) = w.run(&["contract", "approve", "PG-101", "--actor", "lead"]);
    let (_, log) = w.run(&["contract", "log", "PG-101"]);
    let export = mp()
        .args([
            "evidence", "export", "EV-101", "--format", "text", "--store",
        ])
        .arg(w.store())
        .output()
        .expect("run mp");
    let summary = String::from_utf8_lossy(&export.stdout).into_owned();
    assert_eq!(
        (
            gate.as_str(),
            rejected.as_str(),
            late,
            late_text.trim(),
            log.lines().last(),
            summary.lines().next(),
        ),
        (
            "created PG-101 (PublishGate, Active); risk critical, finalDecision pending",
            "PG-101: rejected by sec as security_reviewer; finalDecision rejected, state Active",
            1,
            "refused: gate_decided: gate PG-101 is Active with finalDecision rejected: nothing to decide",
            Some("2 events"),
            Some("EV-101 (Evidence of TS-101)"),
        )
    );
}

#[test]
fn failed_generations_retry_after_30_60_120_seconds_then_freeze_the_intent() {
    let w = Workdir::new();
    let intent = w.intent(r#"["read_repo"]"#);
    w.ok(&[
        "contract",
        "new",
        "IntentContract",
        "--from",
        intent.to_str().expect("utf-8"),
    ]);
    w.ok(&["contract", "approve", "IC-101", "--actor", "alice"]);
    w.ok(&["contract", "activate", "IC-101"]);
    // An empty execution plan makes every generated TaskSeed invalid.
    w.write("plan.json", r#"{"executionPlan": []}"#);
    let attempts: Vec<(i32, String)> = [
        "09:00:00", "09:00:10", "09:00:30", "09:01:30", "09:03:30", "09:04:00",
    ]
    .iter()
    .map(|time| {
        let (code, stdout) = w.run_at(
            &format!("2026-05-11T{time}Z"),
            &["contract", "run", "IC-101", "--from", "plan.json"],
        );
        (code, stdout.trim().to_owned())
    })
    .collect();
    let expected = [
        "refused: retry_scheduled: TaskSeed generation from IC-101 failed (attempt 1 of 4); retry at 2026-05-11T09:00:30Z",
        "refused: retry_scheduled: the next TaskSeed generation from IC-101 is not due before 2026-05-11T09:00:30Z",
        "refused: retry_scheduled: TaskSeed generation from IC-101 failed (attempt 2 of 4); retry at 2026-05-11T09:01:30Z",
        "refused: retry_scheduled: TaskSeed generation from IC-101 failed (attempt 3 of 4); retry at 2026-05-11T09:03:30Z",
        "refused: frozen: generation failed after every retry; IC-101 is Frozen",
        "refused: not_active: IC-101 is Frozen, not Active",
    ]
    .map(|text| (1, text.to_owned()));
    assert_eq!(attempts, expected);
    assert_eq!(
        w.event_types(),
        ["intent.created.v1 IC-101", "contract.frozen.v1 IC-101"]
    );
}

/// A store with the Active TaskSeed TS-101 (read and write capabilities: no approvals).
fn active_task_seed() -> Workdir {
    let w = Workdir::new();
    let intent = w.intent(r#"["read_repo", "write_repo"]"#);
    w.ok(&[
        "contract",
        "new",
        "IntentContract",
        "--from",
        intent.to_str().expect("utf-8"),
    ]);
    w.ok(&["contract", "approve", "IC-101", "--actor", "alice"]);
    w.ok(&["contract", "activate", "IC-101"]);
    assert_eq!(
        w.ok(&["contract", "run", "IC-101"]),
        "created TS-101 (TaskSeed, Active)"
    );
    w
}

/// `mp evidence record` of TS-101 from `base` to `head`, plus `extra` arguments.
fn record_args<'a>(base: &'a str, head: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "evidence",
        "record",
        "--task",
        "TS-101",
        "--base",
        base,
        "--head",
        head,
        "--actor",
        "dev-1",
        "--input",
        "in.json",
        "--output",
        "out.json",
        "--diff",
        "change.diff",
    ];
    args.extend_from_slice(extra);
    args
}

#[test]
fn an_abbreviated_commit_is_refused_and_nothing_is_stored() {
    let w = active_task_seed();
    let before = w.files();
    let (code, text) = w.run(&record_args("a1b2c3d", HEAD, &[]));
    let (json_code, json_text) = w.run(&record_args(BASE, "E4F5A6B7", &["--format", "json"]));
    let (short_code, short_text) = w.run(&record_args(BASE, "e4f5g6h", &[]));
    let refusal = json(&json_text);
    assert_eq!(
        (
            code,
            text.lines().next(),
            json_code,
            refusal["errors"][0]["pointer"].as_str(),
            refusal["errors"][0]["code"].as_str(),
            short_code,
            short_text.lines().next(),
        ),
        (
            1,
            Some(
                "/baseCommit: commit-not-full-digest: `a1b2c3d` is an abbreviated commit: a digest is the full commit id, 40 hex digits (SHA-1) or 64 (SHA-256); pass the full id, or --repo PATH to resolve it"
            ),
            1,
            Some("/headCommit"),
            Some("commit-not-full-digest"),
            1,
            Some(
                "/headCommit: commit-not-full-digest: `e4f5g6h` is not a commit id: a digest is 40 hex digits (SHA-1) or 64 (SHA-256)"
            ),
        )
    );
    assert_eq!(w.files(), before, "a refused record stores nothing");
}

#[test]
fn an_abbreviated_commit_is_resolved_from_the_repository_given() {
    let w = active_task_seed();
    let repo = w.path("repo");
    std::fs::create_dir(&repo).expect("repo dir");
    crate::sources::git(&repo, &["init", "-q"]);
    std::fs::write(repo.join("retry.rs"), "fn retry() {}\n").expect("write");
    crate::sources::git(&repo, &["add", "."]);
    crate::sources::git(&repo, &["commit", "-q", "-m", "base"]);
    let base = crate::sources::git(&repo, &["rev-parse", "HEAD"]);
    std::fs::write(repo.join("retry.rs"), "fn retry() { loop {} }\n").expect("write");
    crate::sources::git(&repo, &["commit", "-q", "-am", "head"]);
    let head = crate::sources::git(&repo, &["rev-parse", "HEAD"]);
    let repo_arg = repo.to_str().expect("utf-8");
    let (missing, missing_text) = w.run(&record_args("0000000", &head[..9], &["--repo", repo_arg]));
    let (foreign, foreign_text) = w.run(&record_args(BASE, &head, &["--repo", repo_arg]));
    let nowhere = w.path("no-such-repo");
    let (unreadable, _) = w.run(&record_args(
        &base[..7],
        &head,
        &["--repo", nowhere.to_str().expect("utf-8")],
    ));
    let id = w.ok(&record_args(&base[..7], &head[..9], &["--repo", repo_arg]));
    let document = json(&std::fs::read_to_string(w.store().join("EV-101/1.json")).expect("stored"));
    let again = w.ok(&record_args(&base, &head, &[]));
    let export = mp()
        .args([
            "evidence", "export", "EV-101", "--format", "in-toto", "--store",
        ])
        .arg(w.store())
        .output()
        .expect("run mp");
    let statement = json(&String::from_utf8_lossy(&export.stdout));
    assert_eq!(
        (
            missing,
            missing_text.lines().next(),
            foreign,
            foreign_text.lines().next(),
            unreadable,
            id.as_str(),
            document["baseCommit"].as_str(),
            document["headCommit"].as_str(),
            again.as_str(),
            statement["predicate"]["buildDefinition"]["resolvedDependencies"][0]["digest"]
                ["gitCommit"]
                .as_str(),
        ),
        (
            1,
            Some(
                format!("/baseCommit: commit-not-found: `0000000` names no commit in {repo_arg}")
                    .as_str()
            ),
            1,
            Some(
                format!("/baseCommit: commit-not-found: `{BASE}` names no commit in {repo_arg}")
                    .as_str()
            ),
            2,
            "EV-101",
            Some(base.as_str()),
            Some(head.as_str()),
            "EV-101",
            Some(base.as_str()),
        )
    );
}

#[test]
fn a_stored_abbreviated_commit_is_never_exported_as_a_digest() {
    let w = active_task_seed();
    w.ok(&record_args(BASE, HEAD, &[]));
    let stored = w.store().join("EV-101/1.json");
    let text = std::fs::read_to_string(&stored).expect("stored");
    std::fs::write(&stored, text.replace(BASE, "a1b2c3d")).expect("rewrite");
    let export = |format: &str| {
        let output = mp()
            .args([
                "evidence", "export", "EV-101", "--format", format, "--store",
            ])
            .arg(w.store())
            .output()
            .expect("run mp");
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        )
    };
    let (in_toto, in_toto_text) = export("in-toto");
    let (document, _) = export("json");
    assert_eq!(
        (in_toto, json(&in_toto_text)["code"].as_str(), document),
        (Some(1), Some("commit-not-full-digest"), Some(0))
    );
    assert!(
        json(&in_toto_text)["message"]
            .as_str()
            .is_some_and(|m| m.contains("baseCommit `a1b2c3d` is an abbreviated commit")),
        "{in_toto_text}"
    );
}
