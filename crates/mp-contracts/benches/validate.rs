//! Validation throughput: 10,000 generated contracts of all five kinds, schema and
//! semantic rules, on one thread. Run with `cargo bench -p mp-contracts`.
//!
//! The documents form 2,000 consistent chains (IntentContract, TaskSeed, Acceptance,
//! PublishGate, Evidence) across the four risk levels, so every rule does real work.
//! Three workloads are timed, each several times (the best and median runs are printed):
//! the whole set through `validate_set`, each document through `validate_document`, and
//! the set again with one document in ten broken (the error path).

use std::io::Write;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const CHAINS: usize = 2_000;
const RUNS: usize = 7;
/// Without `--bench` (as under `cargo test --all-targets`), a quick smoke run.
const SMOKE_CHAINS: usize = 20;

/// A small deterministic generator (xorshift64*), so every run sees the same documents.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        let len = u64::try_from(items.len()).unwrap_or(1);
        let i = usize::try_from(self.below(len)).unwrap_or(0);
        items[i]
    }
}

fn time(day: u64, minute: u64) -> String {
    format!(
        "2026-{:02}-{:02}T{:02}:{:02}:00Z",
        1 + day % 12,
        1 + day % 28,
        (minute / 60) % 24,
        minute % 60
    )
}

fn common(kind: &str, id: &str, state: &str, day: u64, minute: u64) -> Value {
    json!({
        "schemaVersion": "1.0.0",
        "id": id,
        "kind": kind,
        "state": state,
        "version": 1,
        "createdAt": time(day, minute),
        "updatedAt": time(day, minute + 1),
    })
}

fn merge(mut base: Value, body: Value) -> Value {
    if let (Value::Object(base_map), Value::Object(fields)) = (&mut base, body) {
        base_map.extend(fields);
    }
    base
}

fn chain(n: usize, rng: &mut Rng) -> Vec<Value> {
    let day = rng.below(300);
    // Capability profiles: read-only, read-write, dependencies, publishing, secrets + publishing.
    let profiles: [(&[&str], &str, &[&str]); 5] = [
        (&["read_repo"], "low", &[]),
        (&["read_repo", "write_repo"], "medium", &[]),
        (
            &["read_repo", "write_repo", "install_deps"],
            "high",
            &["project_lead", "security_reviewer"],
        ),
        (
            &["read_repo", "publish_release"],
            "high",
            &["project_lead", "release_manager"],
        ),
        (
            &["read_repo", "read_secrets", "publish_release"],
            "critical",
            &["project_lead", "security_reviewer", "release_manager"],
        ),
    ];
    let (caps, risk, activation) = profiles[usize::try_from(rng.below(5)).unwrap_or(0)];
    let safe = activation.is_empty();
    let required: &[&str] = match risk {
        "high" => &["project_lead", "security_reviewer"],
        "critical" => &["project_lead", "security_reviewer", "release_manager"],
        _ => &[],
    };
    let policy = json!({ "auto_activate": safe, "requiredActivationApprovals": activation });
    let (ic, ts, ac, pg, ev) = (
        format!("IC-{n:05}"),
        format!("TS-{n:05}"),
        format!("AC-{n:05}"),
        format!("PG-{n:05}"),
        format!("EV-{n:05}"),
    );
    let intent = merge(
        common("IntentContract", &ic, "Active", day, 0),
        json!({
            "intent": format!("request number {n}"),
            "creator": rng.pick(&["alice", "bob", "carol"]),
            "priority": rng.pick(&["low", "medium", "high", "critical"]),
            "requestedCapabilities": caps,
        }),
    );
    let seed = merge(
        common(
            "TaskSeed",
            &ts,
            if safe { "Active" } else { "Draft" },
            day,
            2,
        ),
        json!({
            "intentId": ic,
            "description": "carry out the request",
            "ownerRole": rng.pick(&["developer", "ci_agent", "qa"]),
            "executionPlan": ["plan", "build", "test"],
            "requestedCapabilitiesSnapshot": caps,
            "generationPolicy": policy,
        }),
    );
    let acceptance = merge(
        common("Acceptance", &ac, "Active", day, 40),
        json!({
            "taskSeedId": ts,
            "status": "passed",
            "details": "all criteria met",
            "criteria": ["tests pass", "lint clean"],
            "generationPolicy": policy,
        }),
    );
    let human: Vec<Value> = required
        .iter()
        .enumerate()
        .map(|(i, role)| {
            json!({
                "role": role,
                "actorId": format!("{role}-{}", rng.below(9)),
                "decision": "approved",
                "decidedAt": time(day, 50 + u64::try_from(i).unwrap_or(0)),
            })
        })
        .collect();
    let mut gate_body = json!({
        "entityId": ac,
        "action": "publish",
        "riskLevel": risk,
        "requiredApprovals": required,
        "finalDecision": "approved",
    });
    if human.is_empty() {
        gate_body["approvals"] = json!([{
            "role": "policy_engine", "actorId": "policy-engine",
            "decision": "approved", "decidedAt": time(day, 41),
        }]);
    } else {
        gate_body["approvals"] = json!(human);
        gate_body["approvalDeadline"] = time(day + 1, 41).into();
    }
    let gate = merge(common("PublishGate", &pg, "Published", day, 41), gate_body);
    let mut evidence_body = json!({
        "taskSeedId": ts,
        "baseCommit": format!("{:012x}", rng.next()),
        "headCommit": format!("{:012x}", rng.next()),
        "inputHash": format!("sha256:{:016x}", rng.next()),
        "outputHash": format!("sha256:{:016x}", rng.next()),
        "model": { "name": "model-x", "version": "2026-04", "parametersHash": "sha256:00" },
        "tools": ["StructuredLogger", "cargo"],
        "environment": {
            "os": "linux", "runtime": "rust 1.95",
            "containerImageDigest": "uncontainerized", "lockfileHash": "sha256:11",
        },
        "staleStatus": { "classification": "fresh", "evaluatedAt": time(day, 55) },
        "mergeResult": { "status": "not_applicable" },
        "startTime": time(day, 55),
        "endTime": time(day, 58),
        "actor": "agent-1",
        "policyVerdict": if human.is_empty() { "approved" } else { "manual_review_required" },
        "diffHash": format!("sha256:{:016x}", rng.next()),
    });
    if !human.is_empty() {
        evidence_body["approvalsSnapshot"] = json!(human);
    }
    let evidence = merge(common("Evidence", &ev, "Published", day, 59), evidence_body);
    vec![intent, seed, acceptance, gate, evidence]
}

/// One broken field per tenth document, of a kind that exercises both layers.
fn break_some(docs: &mut [Value]) {
    for (i, doc) in docs.iter_mut().enumerate().filter(|(i, _)| i % 10 == 3) {
        match i % 4 {
            0 => doc["extra"] = json!(true),
            1 => doc["createdAt"] = json!("2026-02-30T00:00:00"),
            2 => doc["state"] = json!("Done"),
            _ => doc["version"] = json!(0),
        }
    }
}

struct Figures {
    best: Duration,
    median: Duration,
    errors: usize,
}

fn measure(runs: usize, mut run: impl FnMut() -> usize) -> Figures {
    let mut times = Vec::with_capacity(runs);
    let mut errors = 0;
    for _ in 0..runs {
        let start = Instant::now();
        errors = std::hint::black_box(run());
        times.push(start.elapsed());
    }
    times.sort();
    Figures {
        best: times[0],
        median: times[runs / 2],
        errors,
    }
}

fn per_second(docs: usize, d: Duration) -> f64 {
    // Exact for any realistic count.
    #[allow(clippy::cast_precision_loss)]
    let n = docs as f64;
    n / d.as_secs_f64()
}

fn main() -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    let full = std::env::args().any(|a| a == "--bench");
    let (chains, runs) = if full {
        (CHAINS, RUNS)
    } else {
        (SMOKE_CHAINS, 1)
    };
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let docs: Vec<Value> = (0..chains).flat_map(|n| chain(n, &mut rng)).collect();

    let cold = Instant::now();
    let first = mp_contracts::validate_set(&docs);
    let cold = cold.elapsed();
    if let Some(e) = first.first() {
        return Err(std::io::Error::other(format!(
            "generated set is not valid: {e}"
        )));
    }

    let mut broken = docs.clone();
    break_some(&mut broken);

    let set = measure(runs, || mp_contracts::validate_set(&docs).len());
    let each = measure(runs, || {
        docs.iter()
            .map(|d| mp_contracts::validate_document(d).len())
            .sum()
    });
    let bad = measure(runs, || mp_contracts::validate_set(&broken).len());
    if bad.errors != docs.len() / 10 {
        return Err(std::io::Error::other(format!(
            "expected one error per broken document, got {}",
            bad.errors
        )));
    }

    writeln!(
        out,
        "mp-contracts validation throughput ({} documents, {runs} runs, one thread)",
        docs.len()
    )?;
    writeln!(
        out,
        "first validate_set incl. building the validators: {:.1} ms",
        cold.as_secs_f64() * 1e3
    )?;
    for (name, f) in [
        ("validate_set, all valid", &set),
        ("validate_document each, all valid", &each),
        ("validate_set, 1 in 10 broken", &bad),
    ] {
        writeln!(
            out,
            "{name:<36} best {:>8.1} ms  median {:>8.1} ms  {:>9.0} docs/s (median)  errors {}",
            f.best.as_secs_f64() * 1e3,
            f.median.as_secs_f64() * 1e3,
            per_second(docs.len(), f.median),
            f.errors,
        )?;
    }
    Ok(())
}
