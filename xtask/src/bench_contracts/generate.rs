//! The contract set of `cargo xtask bench contracts`: consistent chains of the five kinds
//! (IntentContract, TaskSeed, Acceptance, PublishGate, Evidence), generated
//! deterministically and written as one file per document and as one JSON Lines file.
//!
//! The documents have the shapes of `chain()` in `crates/mp-contracts/benches/validate.rs`,
//! from the same xorshift64* generator and seed; they differ in three ways: ids have six
//! digits (`IC-000001`, room for 999,999 chains), `baseCommit` and `headCommit` are full
//! 40-digit hex shas, and a chain is numbered from 0 in the order it is written.

use std::fs::{self, File};
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use serde_json::{Value, json};

/// Documents per chain.
pub const CHAIN_LEN: usize = 5;

/// Chains per subdirectory of `docs/`: 200 chains are 1,000 documents, so the default
/// 100,000 documents fill 100 subdirectories.
const CHAINS_PER_DIR: usize = 200;

/// The marker that says which set `out` holds; written last, so a set whose writing was
/// interrupted has none and is written again.
const MARKER: &str = "generated.txt";

/// What the marker says: the generator's revision and the number of documents. Bump the
/// revision when the documents change.
fn marker_text(docs: usize) -> String {
    format!("mp bench contracts set, revision 1, {docs} documents\n")
}

/// Where one set lives: the directory tree and the JSON Lines file under `out`.
#[derive(Debug, Clone)]
pub struct SetPaths {
    /// `<out>/docs`: `<chain / 200 as three digits>/<ID>.json`.
    pub dir: PathBuf,
    /// `<out>/docs.jsonl`: one document per line, in chain order.
    pub jsonl: PathBuf,
}

impl SetPaths {
    /// The paths under `out`.
    pub fn new(out: &Path) -> Self {
        Self {
            dir: out.join("docs"),
            jsonl: out.join("docs.jsonl"),
        }
    }
}

/// Makes sure `out` holds the set of `docs` documents, writing it unless its marker says it
/// is already there. Returns whether it was written.
///
/// # Errors
/// When `docs` is not a positive multiple of five, or a file cannot be written.
pub fn ensure(out: &Path, docs: usize) -> anyhow::Result<bool> {
    if docs == 0 || !docs.is_multiple_of(CHAIN_LEN) {
        bail!("--docs must be a positive multiple of {CHAIN_LEN} (whole chains), not {docs}");
    }
    let marker = out.join(MARKER);
    if fs::read_to_string(&marker).is_ok_and(|m| m == marker_text(docs)) {
        return Ok(false);
    }
    let paths = SetPaths::new(out);
    let _ = fs::remove_file(&marker);
    if paths.dir.exists() {
        fs::remove_dir_all(&paths.dir)
            .with_context(|| format!("removing {}", paths.dir.display()))?;
    }
    fs::create_dir_all(&paths.dir).with_context(|| format!("creating {}", paths.dir.display()))?;
    write_set(&paths, docs / CHAIN_LEN)?;
    fs::write(&marker, marker_text(docs))
        .with_context(|| format!("writing {}", marker.display()))?;
    Ok(true)
}

fn write_set(paths: &SetPaths, chains: usize) -> anyhow::Result<()> {
    let file = File::create(&paths.jsonl)
        .with_context(|| format!("creating {}", paths.jsonl.display()))?;
    let mut jsonl = BufWriter::new(file);
    let mut line = Vec::new();
    for (n, chain) in Chains::new(chains).enumerate() {
        let sub = paths.dir.join(format!("{:03}", n / CHAINS_PER_DIR));
        if n % CHAINS_PER_DIR == 0 {
            fs::create_dir_all(&sub).with_context(|| format!("creating {}", sub.display()))?;
        }
        for doc in &chain {
            line.clear();
            serde_json::to_writer(&mut line, doc)?;
            let id = doc["id"]
                .as_str()
                .context("a generated document has no id")?;
            let path = sub.join(format!("{id}.json"));
            fs::write(&path, &line).with_context(|| format!("writing {}", path.display()))?;
            line.push(b'\n');
            jsonl
                .write_all(&line)
                .with_context(|| format!("writing {}", paths.jsonl.display()))?;
        }
    }
    jsonl
        .flush()
        .with_context(|| format!("writing {}", paths.jsonl.display()))
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn set(chains: usize) -> Vec<Value> {
        Chains::new(chains).flatten().collect()
    }

    /// The set is valid, schema and cross-document rules, and so is every document on
    /// its own.
    #[test]
    fn a_generated_set_is_valid() {
        let docs = set(60);
        assert_eq!(docs.len(), 300);
        let errors = mp_contracts::validate_set(&docs);
        assert!(errors.is_empty(), "{:#?}", &errors[..errors.len().min(5)]);
    }

    /// The check above can fail: a broken document is reported.
    #[test]
    fn a_broken_document_is_reported() {
        let mut docs = set(2);
        docs[9]["headCommit"] = json!("abc");
        assert!(!mp_contracts::validate_set(&docs).is_empty());
    }

    #[test]
    fn ids_are_six_digits_and_commits_forty_hex_digits() {
        let docs = set(3);
        assert_eq!(docs[10]["id"], "IC-000002");
        assert_eq!(docs[14]["taskSeedId"], "TS-000002");
        for key in ["baseCommit", "headCommit"] {
            let sha = docs[4][key].as_str().unwrap_or_default();
            assert_eq!(sha.len(), 40, "{sha}");
            assert!(sha.bytes().all(|b| b.is_ascii_hexdigit()), "{sha}");
        }
    }

    #[test]
    fn the_same_chains_every_time() {
        assert_eq!(set(4), set(4));
    }

    /// Both forms hold the same documents; the marker keeps a second call from writing.
    #[test]
    fn the_tree_and_the_lines_hold_the_same_documents() -> anyhow::Result<()> {
        let out = std::env::temp_dir().join(format!("mp-bench-contracts-{}", std::process::id()));
        let _ = fs::remove_dir_all(&out);
        assert!(ensure(&out, 10 * CHAIN_LEN)?);
        assert!(!ensure(&out, 10 * CHAIN_LEN)?);
        let paths = SetPaths::new(&out);
        let lines = fs::read_to_string(&paths.jsonl)?;
        let expected = set(10);
        assert_eq!(lines.lines().count(), expected.len());
        for (line, doc) in lines.lines().zip(&expected) {
            let id = doc["id"].as_str().unwrap_or_default();
            let file = fs::read_to_string(paths.dir.join("000").join(format!("{id}.json")))?;
            assert_eq!(file, line);
            assert_eq!(&serde_json::from_str::<Value>(line)?, doc);
        }
        assert!(ensure(&out, 12).is_err());
        fs::remove_dir_all(&out)?;
        Ok(())
    }
}
