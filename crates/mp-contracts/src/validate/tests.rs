//! Tests for the validation entry points, and the properties: generated valid documents
//! stay valid through a typed read and write, and no input makes the validator panic.

use proptest::prelude::*;
use proptest::sample::{select, subsequence};
use serde_json::{Map, Value, json};

use super::*;
use crate::kinds::{Capability, Contract};
use crate::policy::{approval_matrix, derive_generation_policy};
use crate::testkit::*;

#[track_caller]
fn check(docs: Vec<Value>, expected: &[&str]) {
    assert_eq!(lines(&validate_set(&docs)), expected);
}

#[test]
fn errors_are_ordered_by_document_then_pointer() {
    let mut docs = chain();
    set(&mut docs[4], "/state", json!("Draft"));
    set(&mut docs[4], "/extra", json!(true));
    set(&mut docs[0], "/priority", json!("urgent"));
    set(&mut docs[3], "/riskLevel", json!("low"));
    check(
        docs,
        &[
            "document 0 /priority: enum: `urgent` is not one of low, medium, high, critical",
            "document 3 /riskLevel: risk-below-capability-floor: riskLevel low is below medium, the floor for [write_repo] of TS-101",
            "document 4 /extra: unevaluated-property: `extra` is not a property of this contract kind",
            "document 4 /state: evidence-not-published: an Evidence is Published from birth, found Draft",
        ],
    );
}

#[test]
fn a_schema_invalid_document_still_gets_its_semantic_findings() {
    let doc = with(
        with(evidence(), "/startTime", json!("2026-05-11T09:00:00Z")),
        "/tools",
        json!("StructuredLogger"),
    );
    assert_eq!(
        lines(&validate_document(&doc)),
        [
            "document 0 /startTime: start-after-end: startTime 2026-05-11T09:00:00Z is after endTime 2026-05-11T08:28:00Z",
            "document 0 /tools: type: expected array, found string `StructuredLogger`",
        ]
    );
}

#[test]
fn a_set_checked_on_other_threads_and_pushed_in_order_gives_the_same_errors() {
    // Two versions of one TaskSeed (references resolve to the higher), a gate for an
    // Acceptance that is not passed, a duplicate, an Evidence whose snapshot lacks a gate
    // decision: every set rule has something to say.
    let mut docs = high_chain();
    docs.push(with(docs[1].clone(), "/version", json!(2)));
    docs.push(docs[0].clone());
    docs[2] = with(docs[2].clone(), "/status", json!("failed"));
    docs[4] = with(docs[4].clone(), "/approvalsSnapshot", json!([]));
    let expected = lines(&validate_set(&docs));
    assert!(expected.len() >= 3, "{expected:?}");

    // Checked on threads, then the documents dropped before anything is pushed.
    let checked: Vec<CheckedDocument> = std::thread::scope(|scope| {
        let handles: Vec<_> = docs
            .iter()
            .map(|doc| scope.spawn(move || check_document(doc)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("no panic"))
            .collect()
    });
    drop(docs);
    let mut set = SetValidator::new();
    let mut errors = Vec::new();
    for one in checked {
        assert!(one.errors().iter().all(|e| e.document == 0));
        errors.extend(set.push(one));
    }
    assert_eq!(set.len(), 7);
    errors.extend(set.finish());
    errors.sort_by(|a, b| (a.document, &a.pointer).cmp(&(b.document, &b.pointer)));
    assert_eq!(lines(&errors), expected);
}

#[test]
fn a_set_larger_than_an_index_block_resolves_across_blocks() {
    // 1,000 chains of five: 5,000 entries, more than one block of the index.
    let template = Value::Array(chain()).to_string();
    let mut docs: Vec<Value> = (0..1000)
        .flat_map(|n| {
            let text = template.replace("-101\"", &format!("-{}\"", 1000 + n));
            match serde_json::from_str(&text) {
                Ok(Value::Array(chain)) => chain,
                _ => Vec::new(),
            }
        })
        .collect();
    assert_eq!(docs.len(), 5000);
    assert!(validate_set(&docs).is_empty());
    // The last Evidence names the first TaskSeed (block 0 from block 1): still resolved,
    // and its snapshot is checked against that seed's gate. A TaskSeed naming a missing
    // intent dangles wherever it is.
    docs[4999]["taskSeedId"] = json!("TS-1000");
    docs[4501]["intentId"] = json!("IC-99999");
    assert_eq!(
        lines(&validate_set(&docs))
            .iter()
            .map(|l| l.split(':').next().unwrap_or_default())
            .collect::<Vec<_>>(),
        ["document 4501 /intentId"]
    );
}

#[test]
fn parse_document_returns_the_contract_or_every_error() {
    let contract = parse_document(&gate()).expect("valid");
    assert_eq!(contract.id().as_str(), "PG-101");
    let errors = parse_document(&with(gate(), "/action", json!("ship"))).map(|c| c.kind());
    assert_eq!(
        errors.map_err(|e| lines(&e)),
        Err(vec![
            "document 0 /action: enum: `ship` is not one of publish, reject, hold".to_owned()
        ])
    );
}

#[test]
fn parse_set_reads_every_document_in_order() {
    let kinds: Vec<String> = parse_set(&high_chain())
        .expect("valid")
        .iter()
        .map(|c| c.kind().to_string())
        .collect();
    assert_eq!(
        kinds,
        [
            "IntentContract",
            "TaskSeed",
            "Acceptance",
            "PublishGate",
            "Evidence"
        ]
    );
    assert_eq!(
        parse_set(&[gate()]).map(|c| c.len()).map_err(|e| lines(&e)),
        Err(vec![
            "document 0 /entityId: dangling-reference: no Acceptance AC-101 in the set".to_owned()
        ])
    );
}

#[test]
fn every_code_is_documented() {
    let doc = include_str!("../../../../docs/contracts.md");
    let missing: Vec<&str> = crate::codes::ALL
        .iter()
        .copied()
        .filter(|code| !doc.contains(&format!("`{code}`")))
        .collect();
    assert_eq!(missing, Vec::<&str>::new());
}

// ---------------------------------------------------------------------------------------
// Generators

fn text() -> impl Strategy<Value = String> {
    "\\PC{1,16}"
}

fn id(prefix: &'static str) -> impl Strategy<Value = String> {
    "[0-9]{3,6}".prop_map(move |n| format!("{prefix}-{n}"))
}

/// An RFC 3339 date-time with a random offset, fraction and separator case.
fn date_time() -> impl Strategy<Value = String> {
    (
        (1970u32..2100, 1u32..=12, 1u32..=28),
        (0u32..24, 0u32..60, 0u32..60),
        prop::option::of("[0-9]{1,9}"),
        prop_oneof![
            Just("Z".to_owned()),
            Just("z".to_owned()),
            (prop::bool::ANY, 0u32..24, 0u32..60)
                .prop_map(|(plus, h, m)| format!("{}{h:02}:{m:02}", if plus { '+' } else { '-' })),
        ],
        prop::bool::ANY,
    )
        .prop_map(|((y, mo, d), (h, mi, s), fraction, offset, lower)| {
            let fraction = fraction.map(|f| format!(".{f}")).unwrap_or_default();
            let t = if lower { 't' } else { 'T' };
            format!("{y:04}-{mo:02}-{d:02}{t}{h:02}:{mi:02}:{s:02}{fraction}{offset}")
        })
}

/// `version`, sometimes written with a zero fraction.
fn version() -> impl Strategy<Value = Value> {
    (1u32..100_000, prop::bool::ANY).prop_map(
        |(n, float)| {
            if float { json!(f64::from(n)) } else { json!(n) }
        },
    )
}

fn capabilities() -> impl Strategy<Value = Vec<Capability>> {
    subsequence(Capability::ALL.to_vec(), 1..=6).prop_shuffle()
}

fn common(kind: &'static str, prefix: &'static str) -> impl Strategy<Value = Map<String, Value>> {
    (
        id(prefix),
        select(crate::kinds::State::ALL.to_vec()),
        version(),
        date_time(),
        date_time(),
    )
        .prop_map(move |(id, state, version, created, updated)| {
            let mut map = Map::new();
            map.insert("schemaVersion".into(), json!("1.0.0"));
            map.insert("id".into(), json!(id));
            map.insert("kind".into(), json!(kind));
            map.insert("state".into(), json!(state.as_str()));
            map.insert("version".into(), version);
            map.insert("createdAt".into(), json!(created));
            map.insert("updatedAt".into(), json!(updated));
            map
        })
}

fn merge(mut common: Map<String, Value>, body: Value) -> Value {
    if let Value::Object(fields) = body {
        common.extend(fields);
    }
    Value::Object(common)
}

/// A generation policy at least as strict as the derived one.
fn policy(caps: &[Capability], extra: Vec<&'static str>, stricter: bool) -> Value {
    let derived = derive_generation_policy(caps);
    let mut roles: Vec<String> = derived
        .required_activation_approvals
        .iter()
        .map(|r| r.as_str().to_owned())
        .collect();
    if stricter || !derived.auto_activate {
        for role in extra {
            if !roles.iter().any(|r| r == role) {
                roles.push(role.to_owned());
            }
        }
    }
    let auto = derived.auto_activate && !stricter;
    if !auto && roles.is_empty() {
        roles.push("admin".to_owned());
    }
    json!({ "auto_activate": auto, "requiredActivationApprovals": roles })
}

const HUMAN: [&str; 4] = [
    "project_lead",
    "security_reviewer",
    "release_manager",
    "admin",
];

fn intent_doc() -> impl Strategy<Value = Value> {
    (
        common("IntentContract", "IC"),
        text(),
        text(),
        select(vec!["low", "medium", "high", "critical"]),
        capabilities(),
    )
        .prop_map(|(c, intent, creator, priority, caps)| {
            merge(
                c,
                json!({
                    "intent": intent, "creator": creator, "priority": priority,
                    "requestedCapabilities": caps,
                }),
            )
        })
}

fn task_seed_doc() -> impl Strategy<Value = Value> {
    (
        common("TaskSeed", "TS"),
        id("IC"),
        text(),
        select(vec![
            "developer",
            "ci_agent",
            "qa",
            "project_lead",
            "release_manager",
            "admin",
        ]),
        prop::collection::vec(text(), 1..4),
        capabilities(),
        subsequence(HUMAN.to_vec(), 0..=2),
        prop::bool::ANY,
    )
        .prop_map(
            |(c, intent, description, owner, plan, caps, extra, stricter)| {
                let policy = policy(&caps, extra, stricter);
                merge(
                    c,
                    json!({
                        "intentId": intent, "description": description, "ownerRole": owner,
                        "executionPlan": plan, "requestedCapabilitiesSnapshot": caps,
                        "generationPolicy": policy,
                    }),
                )
            },
        )
}

fn acceptance_doc() -> impl Strategy<Value = Value> {
    (
        common("Acceptance", "AC"),
        id("TS"),
        select(vec!["pending", "passed", "failed", "blocked"]),
        text(),
        prop::collection::vec(text(), 1..4),
        capabilities(),
        subsequence(HUMAN.to_vec(), 0..=2),
        prop::bool::ANY,
    )
        .prop_map(|(c, seed, status, details, criteria, caps, extra, stricter)| {
            merge(c, json!({
                "taskSeedId": seed, "status": status, "details": details, "criteria": criteria,
                "generationPolicy": policy(&caps, extra, stricter),
            }))
        })
}

fn approval_entry(roles: Vec<&'static str>) -> impl Strategy<Value = Value> {
    (
        select(roles),
        text(),
        select(vec!["approved", "rejected"]),
        date_time(),
        prop::option::of(".{0,8}"),
    )
        .prop_map(|(role, actor, decision, at, reason)| {
            let mut entry =
                json!({ "role": role, "actorId": actor, "decision": decision, "decidedAt": at });
            if let Some(reason) = reason {
                entry["reason"] = json!(reason);
            }
            entry
        })
}

fn gate_doc() -> impl Strategy<Value = Value> {
    let roles = vec![
        "policy_engine",
        "project_lead",
        "security_reviewer",
        "release_manager",
        "admin",
    ];
    (
        common("PublishGate", "PG"),
        id("AC"),
        select(vec!["publish", "reject", "hold"]),
        select(crate::kinds::RiskLevel::ALL.to_vec()),
        prop::collection::vec(approval_entry(roles), 0..3),
        prop::bool::ANY,
        date_time(),
    )
        .prop_map(
            |(c, entity, action, risk, mut approvals, decided, deadline)| {
                let required: Vec<&str> =
                    approval_matrix(risk).iter().map(|r| r.as_str()).collect();
                let mut body = json!({
                    "entityId": entity, "action": action, "riskLevel": risk.as_str(),
                    "requiredApprovals": required,
                });
                let (decision, state) = if required.is_empty() {
                    if decided {
                        ("approved", "Published")
                    } else {
                        ("rejected", "Active")
                    }
                } else {
                    body["approvalDeadline"] = json!(deadline);
                    if decided {
                        for role in &required {
                            approvals.push(json!({
                                "role": role, "actorId": "someone", "decision": "approved",
                                "decidedAt": "2026-05-12T09:00:00Z",
                            }));
                        }
                        ("approved", "Published")
                    } else {
                        ("pending", "Active")
                    }
                };
                body["approvals"] = json!(approvals);
                body["finalDecision"] = json!(decision);
                let mut doc = merge(c, body);
                doc["state"] = json!(state);
                doc
            },
        )
}

fn evidence_doc() -> impl Strategy<Value = Value> {
    (
        common("Evidence", "EV"),
        (id("TS"), "[0-9a-f]{7,40}", "[0-9a-f]{7,40}", text(), text(), text()),
        (text(), text(), text(), prop::collection::vec(text(), 1..3)),
        (text(), text(), text(), text()),
        (select(vec!["fresh", "soft_stale", "hard_stale"]), date_time(), prop::option::of(".{0,8}")),
        (select(vec!["not_applicable", "not_attempted", "merged", "manual_resolution_required"]), prop::option::of(date_time())),
        (date_time(), date_time(), text()),
        (select(vec!["approved", "rejected", "manual_review_required"]), prop::collection::vec(approval_entry(HUMAN.to_vec()), 1..3)),
    )
        .prop_map(|(c, refs, model, env, stale, merge_result, times, verdict)| {
            let (seed, base, head, input, output, diff) = refs;
            let (name, model_version, params, tools) = model;
            let (os, runtime, image, lock) = env;
            let (classification, evaluated, stale_reason) = stale;
            let (merge_status, merged_at) = merge_result;
            let (a, b, actor) = times;
            let instant = |t: &String| crate::DateTime::parse(t).map(|d| d.instant()).ok();
            let (start, end) = if instant(&a) <= instant(&b) { (a, b) } else { (b, a) };
            let (policy_verdict, snapshot) = verdict;
            let mut stale_status = json!({ "classification": classification, "evaluatedAt": evaluated });
            if let Some(reason) = stale_reason {
                stale_status["reason"] = json!(reason);
            }
            let mut merge_result = json!({ "status": merge_status });
            if let Some(at) = merged_at {
                merge_result["mergedAt"] = json!(at);
            }
            let mut body = json!({
                "taskSeedId": seed, "baseCommit": base, "headCommit": head,
                "inputHash": input, "outputHash": output, "diffHash": diff,
                "model": { "name": name, "version": model_version, "parametersHash": params },
                "tools": tools,
                "environment": { "os": os, "runtime": runtime, "containerImageDigest": image, "lockfileHash": lock },
                "staleStatus": stale_status, "mergeResult": merge_result,
                "startTime": start, "endTime": end, "actor": actor, "policyVerdict": policy_verdict,
            });
            if policy_verdict == "manual_review_required" {
                body["approvalsSnapshot"] = json!(snapshot);
            }
            let mut doc = merge(c, body);
            doc["state"] = json!("Published");
            doc
        })
}

fn valid_doc() -> impl Strategy<Value = Value> {
    prop_oneof![
        intent_doc(),
        task_seed_doc(),
        acceptance_doc(),
        gate_doc(),
        evidence_doc()
    ]
}

/// Any JSON value, with objects biased towards contract field names and kinds.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        ".{0,12}".prop_map(Value::from),
        select(vec![
            "IntentContract",
            "TaskSeed",
            "Acceptance",
            "PublishGate",
            "Evidence",
            "IC-101",
            "TS-101",
            "AC-101",
            "2026-05-11T08:00:00Z",
            "1.0.0",
            "Published",
            "manual_review_required"
        ])
        .prop_map(Value::from),
    ];
    let keys = select(vec![
        "kind",
        "id",
        "state",
        "version",
        "schemaVersion",
        "createdAt",
        "requiredApprovals",
        "approvals",
        "finalDecision",
        "approvalDeadline",
        "riskLevel",
        "entityId",
        "taskSeedId",
        "intentId",
        "generationPolicy",
        "auto_activate",
        "requiredActivationApprovals",
        "approvalsSnapshot",
        "startTime",
        "endTime",
        "policyVerdict",
        "role",
        "decision",
        "decidedAt",
        "requestedCapabilitiesSnapshot",
        "requestedCapabilities",
        "status",
        "x~/y",
    ]);
    leaf.prop_recursive(4, 48, 8, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((keys.clone(), inner), 0..8).prop_map(|pairs| Value::Object(
                pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
            )),
        ]
    })
}

/// Every pointer in a document.
fn pointers(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let p = crate::error::push_token(&at, k);
                out.push(p.clone());
                pointers(v, p, out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                let p = format!("{at}/{i}");
                out.push(p.clone());
                pointers(v, p, out);
            }
        }
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn a_valid_document_stays_valid_through_serialize_and_parse(doc in valid_doc()) {
        prop_assert_eq!(lines(&validate_document(&doc)), Vec::<String>::new());
        let contract: Contract = serde_json::from_value(doc.clone()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let written = serde_json::to_value(&contract).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(lines(&validate_document(&written)), Vec::<String>::new());
        let reread: Contract = serde_json::from_value(written.clone()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&reread, &contract);
        // Only `version: 2.0` is rewritten (as 2); everything else comes back as it was.
        let mut expected = doc.clone();
        expected["version"] = json!(contract.common.version.get());
        prop_assert_eq!(written, expected);
    }

    #[test]
    fn no_json_value_panics_the_validator(doc in any_json()) {
        let _ = validate_document(&doc);
        let _ = validate_set(&[doc.clone(), doc]);
    }

    #[test]
    fn no_mutation_of_a_valid_chain_panics_the_validator(
        which in 0usize..10,
        pick in any::<prop::sample::Index>(),
        replacement in any_json(),
        delete in any::<bool>(),
    ) {
        let mut docs: Vec<Value> = chain().into_iter().chain(high_chain()).collect();
        let mut all = Vec::new();
        pointers(&docs[which], String::new(), &mut all);
        let pointer = pick.get(&all).clone();
        if delete {
            remove(&mut docs[which], &pointer);
        } else if let Some(slot) = docs[which].pointer_mut(&pointer) {
            *slot = replacement;
        }
        let errors = validate_set(&docs);
        for e in &errors {
            prop_assert!(e.document < docs.len());
            prop_assert!(crate::codes::ALL.contains(&e.code), "unknown code {}", e.code);
        }
    }
}
