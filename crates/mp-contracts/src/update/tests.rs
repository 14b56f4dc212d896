//! Tests for changes checked as transitions: one test (at least) per rule, each naming the
//! code and pointer it expects.

use serde_json::{Value, json};

use super::*;
use crate::testkit::{acceptance, chain, evidence, gate, intent, task_seed, with};

/// `document pointer code` for every refusal.
fn found(errors: &[ContractError]) -> Vec<String> {
    errors
        .iter()
        .map(|e| format!("{} {} {}", e.document, e.pointer, e.code))
        .collect()
}

#[track_caller]
fn check(change: Change<'_>, context: &[Value], expected: &[&str]) {
    let errors = check_change(change, context);
    assert_eq!(found(&errors), expected, "{errors:#?}");
}

#[track_caller]
fn check_modified(before: &Value, after: &Value, context: &[Value], expected: &[&str]) {
    check(Change::Modified { before, after }, context, expected);
}

/// `doc` moved to `state` as the next version.
fn moved(doc: &Value, state: &str) -> Value {
    let next = doc["version"].as_u64().expect("a version") + 1;
    with(
        with(doc.clone(), "/state", json!(state)),
        "/version",
        json!(next),
    )
}

/// The chain without the document with this id.
fn context_without(id: &str) -> Vec<Value> {
    chain().into_iter().filter(|d| d["id"] != id).collect()
}

#[test]
fn an_unchanged_valid_document_is_allowed() {
    for doc in chain() {
        check_modified(&doc, &doc, &[], &[]);
    }
}

#[test]
fn a_change_along_a_row_with_a_higher_version_is_allowed() {
    let frozen = moved(&task_seed(), "Frozen");
    check_modified(&task_seed(), &frozen, &[], &[]);
    let resumed = moved(&frozen, "Active");
    check_modified(&frozen, &resumed, &[], &[]);
}

#[test]
fn both_versions_must_be_valid() {
    let broken = with(task_seed(), "/ownerRole", json!("requester"));
    let fixed = with(task_seed(), "/version", json!(2));
    check_modified(&broken, &fixed, &[], &["0 /ownerRole enum"]);
    let broken_next = with(moved(&task_seed(), "Active"), "/ownerRole", json!("nobody"));
    check_modified(&task_seed(), &broken_next, &[], &["1 /ownerRole enum"]);
}

#[test]
fn the_later_version_is_validated_within_the_context_set() {
    // Alone, TS-101 is valid; within a context that lacks its intent it dangles.
    let next = with(task_seed(), "/version", json!(2));
    let next = with(
        next,
        "/description",
        json!("Stabilise the login test for good"),
    );
    check_modified(&task_seed(), &next, &[], &[]);
    check_modified(
        &task_seed(),
        &next,
        &[acceptance()],
        &["1 /intentId dangling-reference"],
    );
    check_modified(&task_seed(), &next, &context_without("TS-101"), &[]);
}

#[test]
fn the_id_is_kept() {
    let renamed = with(moved(&intent(), "Frozen"), "/id", json!("IC-102"));
    check_modified(&intent(), &renamed, &[], &["1 /id id-changed"]);
}

#[test]
fn the_kind_is_kept() {
    let mut other = gate();
    other["id"] = json!("IC-101");
    check_modified(
        &intent(),
        &other,
        &[],
        &["1 /id pattern", "1 /kind kind-changed"],
    );
}

#[test]
fn a_state_change_must_be_a_row_of_the_state_machine() {
    let published = moved(&task_seed(), "Published");
    let draft = moved(&published, "Draft");
    check_modified(&published, &draft, &[], &["1 /state illegal-transition"]);
    let frozen = moved(&task_seed(), "Frozen");
    let published = moved(&frozen, "Published");
    check_modified(&frozen, &published, &[], &["1 /state illegal-transition"]);
}

#[test]
fn a_changed_document_raises_its_version() {
    let same = with(task_seed(), "/state", json!("Frozen"));
    check_modified(&task_seed(), &same, &[], &["1 /version version-not-raised"]);
    let edited = with(intent(), "/intent", json!("Fix the login test"));
    check_modified(&intent(), &edited, &[], &["1 /version version-not-raised"]);
}

#[test]
fn a_changed_document_never_lowers_its_version() {
    let v3 = with(intent(), "/version", json!(3));
    let v2 = with(moved(&v3, "Frozen"), "/version", json!(2));
    check_modified(&v3, &v2, &[], &["1 /version version-lowered"]);
}

#[test]
fn superseding_raises_the_version() {
    let published = with(task_seed(), "/state", json!("Published"));
    let superseded = with(published.clone(), "/state", json!("Superseded"));
    check_modified(
        &published,
        &superseded,
        &[],
        &["1 /version version-not-greater"],
    );
    check_modified(&published, &moved(&published, "Superseded"), &[], &[]);
}

#[test]
fn revoked_and_superseded_never_come_back() {
    for terminal in ["Revoked", "Superseded"] {
        let before = with(task_seed(), "/state", json!(terminal));
        for after in ["Active", "Draft", "Published", "Frozen"] {
            check_modified(
                &before,
                &moved(&before, after),
                &[],
                &["1 /state terminal-state-left"],
            );
        }
        check_modified(&before, &moved(&before, "Archived"), &[], &[]);
    }
}

#[test]
fn an_archived_contract_never_changes() {
    let archived = with(task_seed(), "/state", json!("Archived"));
    check_modified(
        &archived,
        &moved(&archived, "Active"),
        &[],
        &["1 /state archived-changed", "1 /version archived-changed"],
    );
    let edited = with(archived.clone(), "/description", json!("another"));
    check_modified(
        &archived,
        &edited,
        &[],
        &["1 /description archived-changed"],
    );
}

#[test]
fn publishing_an_acceptance_needs_an_approved_gate_in_the_context() {
    let published = moved(&acceptance(), "Published");
    check_modified(
        &acceptance(),
        &published,
        &[],
        &["1 /state gate-not-approved"],
    );
    check_modified(&acceptance(), &published, &context_without("AC-101"), &[]);
    check_modified(
        &acceptance(),
        &published,
        &[gate()],
        &["1 /taskSeedId dangling-reference"],
    );
}

#[test]
fn a_pending_or_invalid_gate_does_not_let_a_contract_be_published() {
    let mut pending = high_gate();
    pending["finalDecision"] = json!("pending");
    pending["state"] = json!("Active");
    pending["approvals"] = json!([]);
    let published = moved(&acceptance(), "Published");
    let context = |gate: Value| -> Vec<Value> {
        let mut docs = context_without("AC-101");
        docs.retain(|d| d["kind"] != "PublishGate");
        docs.push(gate);
        docs
    };
    check_modified(
        &acceptance(),
        &published,
        &context(pending),
        &["1 /state gate-not-approved"],
    );
    // `approved` while a required role never approved: not an approved gate.
    let mut unapproved = high_gate();
    unapproved["approvals"] = json!([]);
    check_modified(
        &acceptance(),
        &published,
        &context(unapproved),
        &["1 /state gate-not-approved"],
    );
    let revoked = with(gate(), "/state", json!("Revoked"));
    check_modified(
        &acceptance(),
        &published,
        &context(revoked),
        &["1 /state gate-not-approved"],
    );
}

/// PG-101 as a high-risk gate approved by both required roles.
fn high_gate() -> Value {
    let mut gate = gate();
    gate["riskLevel"] = json!("high");
    gate["requiredApprovals"] = json!(["project_lead", "security_reviewer"]);
    gate["approvalDeadline"] = json!("2026-05-13T08:31:00Z");
    gate["approvals"] = json!([
        crate::testkit::approval("project_lead", "lead-1", "2026-05-12T09:00:00Z"),
        crate::testkit::approval("security_reviewer", "sec-1", "2026-05-12T09:10:00Z"),
    ]);
    gate
}

#[test]
fn publishing_a_task_seed_or_an_intent_follows_the_chain_to_its_gate() {
    for (doc, id) in [(task_seed(), "TS-101"), (intent(), "IC-101")] {
        let published = moved(&doc, "Published");
        check_modified(&doc, &published, &context_without(id), &[]);
        let mut no_gate = context_without(id);
        no_gate.retain(|d| d["kind"] != "PublishGate" && d["kind"] != "Evidence");
        check_modified(&doc, &published, &no_gate, &["1 /state gate-not-approved"]);
    }
}

#[test]
fn evidence_never_changes() {
    let archived = moved(&evidence(), "Archived");
    check_modified(
        &evidence(),
        &archived,
        &[],
        &[
            "1 /state evidence-not-published",
            "1 /state evidence-changed",
            "1 /version evidence-changed",
        ],
    );
    let edited = with(evidence(), "/model/version", json!("2026-05"));
    check_modified(
        &evidence(),
        &edited,
        &[],
        &["1 /model/version evidence-changed"],
    );
    let added = with(evidence(), "/mergeResult/reason", json!("none"));
    check_modified(
        &evidence(),
        &added,
        &[],
        &["1 /mergeResult/reason evidence-changed"],
    );
    let longer = with(evidence(), "/tools", json!(["StructuredLogger", "cargo"]));
    check_modified(&evidence(), &longer, &[], &["1 /tools evidence-changed"]);
}

#[test]
fn a_new_document_starts_in_an_initial_state() {
    let added = |after: &Value, context: &[Value], expected: &[&str]| {
        check(Change::Added { after }, context, expected);
    };
    added(&with(intent(), "/state", json!("Draft")), &[], &[]);
    added(&intent(), &[], &["1 /state initial-state-invalid"]);
    // TS-101 auto-activates from an Active intent; from a Draft intent it starts Draft.
    added(&task_seed(), &[intent()], &[]);
    added(
        &task_seed(),
        &[with(intent(), "/state", json!("Draft"))],
        &["1 /state initial-state-invalid"],
    );
    added(&with(task_seed(), "/state", json!("Draft")), &[], &[]);
    let manual = with(
        task_seed(),
        "/generationPolicy",
        json!({"auto_activate": false, "requiredActivationApprovals": ["project_lead"]}),
    );
    added(&manual, &[], &["1 /state initial-state-invalid"]);
    added(
        &with(acceptance(), "/state", json!("Frozen")),
        &[],
        &["1 /state initial-state-invalid"],
    );
    // A low/medium gate may be born Published; a high gate starts Active.
    added(&gate(), &[], &[]);
    added(&high_gate(), &[], &["1 /state initial-state-invalid"]);
    added(&with(high_gate(), "/state", json!("Active")), &[], &[]);
    added(&evidence(), &[], &[]);
}

#[test]
fn a_new_document_is_validated() {
    let after = with(intent(), "/state", json!("Drafted"));
    check(Change::Added { after: &after }, &[], &["1 /state enum"]);
}

#[test]
fn a_deleted_contract_is_refused() {
    let before = gate();
    check(
        Change::Deleted { before: &before },
        &[],
        &["0  contract-deleted"],
    );
}

#[test]
fn every_problem_is_reported_at_once() {
    let before = with(task_seed(), "/state", json!("Revoked"));
    let after = with(
        with(before.clone(), "/state", json!("Active")),
        "/id",
        json!("TS-102"),
    );
    let after = with(after, "/version", json!(0));
    check_modified(
        &before,
        &after,
        &[],
        &[
            "1 /id id-changed",
            "1 /state terminal-state-left",
            "1 /version minimum",
        ],
    );
}

#[test]
fn differences_point_at_every_changed_leaf() {
    let before = json!({"a": 1, "b": {"c": [1, 2], "d~/": "x"}, "e": [1]});
    let after = json!({"a": 1, "b": {"c": [1, 3], "d~/": "y"}, "e": [1, 2], "f": null});
    assert_eq!(
        differences(&before, &after),
        ["/b/c/1", "/b/d~0~1", "/e", "/f"]
    );
    assert!(differences(&before, &before).is_empty());
}

#[test]
fn malformed_documents_give_findings_not_panics() {
    for (before, after) in [
        (json!(null), json!([])),
        (json!({"kind": 3}), json!({"kind": "TaskSeed", "state": 4})),
        (
            json!({"kind": "Evidence"}),
            json!({"kind": "Evidence", "x": 1}),
        ),
    ] {
        let errors = check_change(
            Change::Modified {
                before: &before,
                after: &after,
            },
            &[json!("not a contract")],
        );
        assert!(!errors.is_empty());
        let _ = check_change(Change::Added { after: &after }, &[]);
        let _ = check_change(Change::Deleted { before: &before }, &[]);
    }
}

#[test]
fn a_refused_publication_names_the_gate_and_why() {
    let published = moved(&acceptance(), "Published");
    let message = |gate: Value| -> String {
        let mut context = context_without("AC-101");
        context.retain(|d| d["kind"] != "PublishGate");
        context.push(gate);
        let errors = check_change(
            Change::Modified {
                before: &acceptance(),
                after: &published,
            },
            &context,
        );
        errors.iter().map(|e| e.message.clone()).collect()
    };
    let mut pending = high_gate();
    pending["finalDecision"] = json!("pending");
    pending["state"] = json!("Active");
    assert_eq!(
        message(pending),
        "Acceptance cannot be Published: gate decision is pending (PG-101)"
    );
    assert_eq!(
        message(with(gate(), "/state", json!("Revoked"))),
        "Acceptance AC-101 cannot be Published: its gate PG-101 is approved but Revoked"
    );
    let mut unapproved = high_gate();
    unapproved["approvals"] = json!([]);
    assert_eq!(
        message(unapproved),
        "Acceptance AC-101 cannot be Published: its gate PG-101 is approved but not valid"
    );
}
