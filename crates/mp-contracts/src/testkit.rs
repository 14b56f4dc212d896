//! Test documents: two valid, consistent chains of contracts (medium and high risk) and
//! helpers to alter them and to render errors.

use serde_json::{Value, json};

use crate::error::ContractError;

/// IC-101: read and write the repository.
pub fn intent() -> Value {
    json!({
        "schemaVersion": "1.0.0",
        "id": "IC-101",
        "kind": "IntentContract",
        "state": "Active",
        "version": 1,
        "createdAt": "2026-05-11T08:00:00Z",
        "updatedAt": "2026-05-11T08:05:00Z",
        "intent": "Fix the flaky login test",
        "creator": "alice",
        "priority": "medium",
        "requestedCapabilities": ["read_repo", "write_repo"]
    })
}

/// TS-101 from IC-101; activates by itself.
pub fn task_seed() -> Value {
    json!({
        "schemaVersion": "1.0.0",
        "id": "TS-101",
        "kind": "TaskSeed",
        "state": "Active",
        "version": 1,
        "createdAt": "2026-05-11T08:05:10Z",
        "updatedAt": "2026-05-11T08:05:10Z",
        "intentId": "IC-101",
        "description": "Stabilise the login test",
        "ownerRole": "developer",
        "executionPlan": ["reproduce", "fix", "run the suite"],
        "requestedCapabilitiesSnapshot": ["read_repo", "write_repo"],
        "generationPolicy": { "auto_activate": true, "requiredActivationApprovals": [] }
    })
}

/// AC-101 for TS-101, passed.
pub fn acceptance() -> Value {
    json!({
        "schemaVersion": "1.0.0",
        "id": "AC-101",
        "kind": "Acceptance",
        "state": "Active",
        "version": 1,
        "createdAt": "2026-05-11T08:30:00Z",
        "updatedAt": "2026-05-11T08:30:00Z",
        "taskSeedId": "TS-101",
        "status": "passed",
        "details": "the suite passed 50 times in a row",
        "criteria": ["no failure in 50 runs"],
        "generationPolicy": { "auto_activate": true, "requiredActivationApprovals": [] }
    })
}

/// PG-101 for AC-101: medium risk, approved by the policy engine, Published.
pub fn gate() -> Value {
    json!({
        "schemaVersion": "1.0.0",
        "id": "PG-101",
        "kind": "PublishGate",
        "state": "Published",
        "version": 1,
        "createdAt": "2026-05-11T08:31:00Z",
        "updatedAt": "2026-05-11T08:31:00Z",
        "entityId": "AC-101",
        "action": "publish",
        "riskLevel": "medium",
        "requiredApprovals": [],
        "approvals": [{
            "role": "policy_engine",
            "actorId": "policy-engine",
            "decision": "approved",
            "decidedAt": "2026-05-11T08:31:00Z"
        }],
        "finalDecision": "approved"
    })
}

/// EV-101: one execution of TS-101, no human decision.
pub fn evidence() -> Value {
    json!({
        "schemaVersion": "1.0.0",
        "id": "EV-101",
        "kind": "Evidence",
        "state": "Published",
        "version": 1,
        "createdAt": "2026-05-11T08:29:00Z",
        "updatedAt": "2026-05-11T08:29:00Z",
        "taskSeedId": "TS-101",
        "baseCommit": "a1b2c3d",
        "headCommit": "e4f5a6b",
        "inputHash": "sha256:0a",
        "outputHash": "sha256:0b",
        "model": { "name": "model-x", "version": "2026-04", "parametersHash": "sha256:0c" },
        "tools": ["StructuredLogger"],
        "environment": {
            "os": "linux",
            "runtime": "rust 1.95",
            "containerImageDigest": "uncontainerized",
            "lockfileHash": "sha256:0d"
        },
        "staleStatus": { "classification": "fresh", "evaluatedAt": "2026-05-11T08:10:00Z" },
        "mergeResult": { "status": "not_applicable" },
        "startTime": "2026-05-11T08:10:00Z",
        "endTime": "2026-05-11T08:28:00Z",
        "actor": "dev-agent-1",
        "policyVerdict": "approved",
        "diffHash": "sha256:0e"
    })
}

/// The medium-risk chain: IC-101, TS-101, AC-101, PG-101, EV-101 (documents 0 to 4).
pub fn chain() -> Vec<Value> {
    vec![intent(), task_seed(), acceptance(), gate(), evidence()]
}

/// A human approval entry.
pub fn approval(role: &str, actor: &str, at: &str) -> Value {
    json!({ "role": role, "actorId": actor, "decision": "approved", "decidedAt": at })
}

/// The high-risk chain (install_deps): IC-201, TS-201, AC-201, PG-201 approved by
/// project_lead and security_reviewer, EV-201 under manual review with their snapshot.
pub fn high_chain() -> Vec<Value> {
    let caps = json!(["read_repo", "install_deps"]);
    let roles = json!(["project_lead", "security_reviewer"]);
    let approvals = json!([
        approval("project_lead", "lead-1", "2026-05-12T09:00:00Z"),
        approval("security_reviewer", "sec-1", "2026-05-12T10:00:00+01:00"),
    ]);
    let intent = with(
        with(intent(), "/id", json!("IC-201")),
        "/requestedCapabilities",
        caps.clone(),
    );
    let mut seed = task_seed();
    for (p, v) in [
        ("/id", json!("TS-201")),
        ("/intentId", json!("IC-201")),
        ("/state", json!("Draft")),
        ("/ownerRole", json!("ci_agent")),
        ("/requestedCapabilitiesSnapshot", caps),
        (
            "/generationPolicy",
            json!({ "auto_activate": false, "requiredActivationApprovals": roles }),
        ),
    ] {
        set(&mut seed, p, v);
    }
    let mut acceptance = acceptance();
    for (p, v) in [
        ("/id", json!("AC-201")),
        ("/taskSeedId", json!("TS-201")),
        (
            "/generationPolicy",
            json!({ "auto_activate": false, "requiredActivationApprovals": roles }),
        ),
    ] {
        set(&mut acceptance, p, v);
    }
    let mut gate = gate();
    for (p, v) in [
        ("/id", json!("PG-201")),
        ("/entityId", json!("AC-201")),
        ("/riskLevel", json!("high")),
        ("/requiredApprovals", roles),
        ("/approvals", approvals.clone()),
        ("/approvalDeadline", json!("2026-05-13T08:31:00Z")),
    ] {
        set(&mut gate, p, v);
    }
    let mut evidence = evidence();
    for (p, v) in [
        ("/id", json!("EV-201")),
        ("/taskSeedId", json!("TS-201")),
        ("/startTime", json!("2026-05-12T09:30:00Z")),
        ("/endTime", json!("2026-05-12T09:45:00Z")),
        ("/policyVerdict", json!("manual_review_required")),
        ("/approvalsSnapshot", approvals),
    ] {
        set(&mut evidence, p, v);
    }
    vec![intent, seed, acceptance, gate, evidence]
}

fn split(pointer: &str) -> (&str, &str) {
    pointer
        .rsplit_once('/')
        .expect("a test pointer has a parent and a key")
}

/// Sets the value at `pointer`, creating the last key (or replacing an array item).
pub fn set(doc: &mut Value, pointer: &str, value: Value) {
    let (parent, key) = split(pointer);
    match doc.pointer_mut(parent).expect("the parent exists") {
        Value::Object(map) => {
            map.insert(key.to_owned(), value);
        }
        Value::Array(items) => {
            let i: usize = key.parse().expect("an array index");
            items[i] = value;
        }
        other => panic!("cannot set {key} in {other}"),
    }
}

/// Removes the key at `pointer`.
pub fn remove(doc: &mut Value, pointer: &str) {
    let (parent, key) = split(pointer);
    if let Some(Value::Object(map)) = doc.pointer_mut(parent) {
        map.remove(key);
    }
}

/// `doc` with `value` at `pointer`.
pub fn with(mut doc: Value, pointer: &str, value: Value) -> Value {
    set(&mut doc, pointer, value);
    doc
}

/// `doc` without the key at `pointer`.
pub fn without(mut doc: Value, pointer: &str) -> Value {
    remove(&mut doc, pointer);
    doc
}

/// Errors as their `Display` lines.
pub fn lines(errors: &[ContractError]) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}
