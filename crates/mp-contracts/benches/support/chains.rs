//! The generated contract sets of the benchmarks: consistent chains of the five kinds
//! (IntentContract, TaskSeed, Acceptance, PublishGate, Evidence) over five capability
//! profiles and all four risk levels, with human approvals and approvals snapshots where
//! the matrix calls for them, from a fixed xorshift64* seed. Chain `n` has ids ending in
//! `n` as six digits (`IC-000001`) and full 40-digit commits.
//!
//! Used by `benches/validate.rs` and, through a `#[path]` module, by `cargo xtask bench
//! contracts`: one generator for both.

use serde_json::{Value, json};

/// Documents per chain.
pub const CHAIN_LEN: usize = 5;

/// The chains, in order: chain `n` is five documents whose ids end in `n` as six digits.
pub struct Chains {
    rng: Rng,
    next: usize,
    count: usize,
}

impl Chains {
    /// `count` chains from the fixed seed.
    pub fn new(count: usize) -> Self {
        Self {
            rng: Rng(0x9E37_79B9_7F4A_7C15),
            next: 0,
            count,
        }
    }
}

impl Iterator for Chains {
    type Item = [Value; CHAIN_LEN];

    fn next(&mut self) -> Option<Self::Item> {
        if self.next == self.count {
            return None;
        }
        let chain = chain(self.next, &mut self.rng);
        self.next += 1;
        Some(chain)
    }
}

/// A small deterministic generator (xorshift64*), the benchmark's own.
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

    /// A 40-digit hex commit sha.
    fn sha(&mut self) -> String {
        format!(
            "{:016x}{:016x}{:08x}",
            self.next(),
            self.next(),
            self.next() >> 32
        )
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

fn chain(n: usize, rng: &mut Rng) -> [Value; CHAIN_LEN] {
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
        format!("IC-{n:06}"),
        format!("TS-{n:06}"),
        format!("AC-{n:06}"),
        format!("PG-{n:06}"),
        format!("EV-{n:06}"),
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
        "baseCommit": rng.sha(),
        "headCommit": rng.sha(),
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
    [intent, seed, acceptance, gate, evidence]
}
