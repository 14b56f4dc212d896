//! Tests for the bundled schemas and the mapping of their errors: one passing and one
//! failing case per schema-level code, the format and pattern semantics, and the noise
//! filter.

use serde_json::{Value, json};

use super::*;
use crate::testkit::*;
use crate::validate_document;

#[track_caller]
fn check(doc: Value, expected: &[&str]) {
    assert_eq!(lines(&validate_document(&doc)), expected);
}

#[test]
fn every_bundled_schema_compiles_offline() {
    // Building checks each schema against the 2020-12 meta-schema and resolves every $ref.
    warm_up();
    for kind in Kind::ALL {
        let source: Value = serde_json::from_str(schema_source(kind)).expect("json");
        assert_eq!(source["$id"], json!(schema_id(kind)));
        assert_eq!(source["unevaluatedProperties"], json!(false));
        assert_eq!(source["allOf"][0]["$ref"], json!("common.schema.json"));
    }
}

#[test]
fn a_valid_document_of_every_kind_passes() {
    for doc in chain().into_iter().chain(high_chain()) {
        check(doc, &[]);
    }
}

#[test]
fn version_with_a_zero_fraction_is_an_integer() {
    check(with(intent(), "/version", json!(1.0)), &[]);
    check(with(intent(), "/version", json!(2e0)), &[]);
}

#[test]
fn required_names_the_missing_property() {
    check(
        without(task_seed(), "/description"),
        &["document 0 /description: required: `description` is required"],
    );
}

#[test]
fn required_in_a_nested_object() {
    check(
        without(evidence(), "/model/parametersHash"),
        &["document 0 /model/parametersHash: required: `parametersHash` is required"],
    );
}

#[test]
fn unevaluated_property_at_the_top_level() {
    check(
        with(intent(), "/notes", json!("x")),
        &[
            "document 0 /notes: unevaluated-property: `notes` is not a property of this contract kind",
        ],
    );
}

#[test]
fn a_property_of_another_kind_is_unevaluated() {
    check(
        with(intent(), "/taskSeedId", json!("TS-101")),
        &[
            "document 0 /taskSeedId: unevaluated-property: `taskSeedId` is not a property of this contract kind",
        ],
    );
}

#[test]
fn a_failing_branch_does_not_make_its_properties_unevaluated() {
    // The kind-specific branch fails on status, so a 2020-12 validator also calls every
    // property it declared unevaluated; only the real problems are reported.
    check(
        with(
            with(acceptance(), "/status", json!("done")),
            "/more",
            json!(1),
        ),
        &[
            "document 0 /more: unevaluated-property: `more` is not a property of this contract kind",
            "document 0 /status: enum: `done` is not one of pending, passed, failed, blocked",
        ],
    );
}

#[test]
fn additional_property_in_a_nested_object() {
    check(
        with(evidence(), "/environment/gpu", json!("none")),
        &[
            "document 0 /environment/gpu: additional-property: `gpu` is not a property of this object",
        ],
    );
    check(
        with(gate(), "/approvals/0/comment", json!("ok")),
        &[
            "document 0 /approvals/0/comment: additional-property: `comment` is not a property of this object",
        ],
    );
}

#[test]
fn the_kind_pattern_narrows_the_common_one() {
    check(
        with(acceptance(), "/id", json!("ACC-709")),
        &["document 0 /id: pattern: `ACC-709` does not match ^AC-[0-9]{3,}$"],
    );
    check(
        with(acceptance(), "/id", json!("AC-7")),
        &["document 0 /id: pattern: `AC-7` does not match ^AC-[0-9]{3,}$"],
    );
}

#[test]
fn dollar_does_not_match_before_a_trailing_newline() {
    check(
        with(intent(), "/id", json!("IC-790\n")),
        &["document 0 /id: pattern: `IC-790\\n` does not match ^IC-[0-9]{3,}$"],
    );
}

#[test]
fn reference_pattern() {
    check(
        with(task_seed(), "/intentId", json!("TS-101")),
        &["document 0 /intentId: pattern: `TS-101` does not match ^IC-[0-9]{3,}$"],
    );
}

#[test]
fn enum_is_case_sensitive() {
    check(
        with(intent(), "/state", json!("active")),
        &[
            "document 0 /state: enum: `active` is not one of Draft, Active, Frozen, Published, Superseded, Revoked, Archived",
        ],
    );
}

#[test]
fn role_lists_differ_per_field() {
    check(
        with(task_seed(), "/ownerRole", json!("security_reviewer")),
        &[
            "document 0 /ownerRole: enum: `security_reviewer` is not one of developer, ci_agent, qa, project_lead, release_manager, admin",
        ],
    );
    check(
        with(gate(), "/requiredApprovals", json!(["policy_engine"])),
        &[
            "document 0 /approvalDeadline: deadline-required: approvalDeadline is required because requiredApprovals names [policy_engine]",
            "document 0 /requiredApprovals/0: enum: `policy_engine` is not one of project_lead, security_reviewer, release_manager, admin",
        ],
    );
    // policy_engine may approve a gate, and may be required by a TaskSeed...
    check(
        with(
            task_seed(),
            "/generationPolicy/requiredActivationApprovals",
            json!(["policy_engine"]),
        ),
        &[],
    );
    // ...but not by an Acceptance.
    check(
        with(
            acceptance(),
            "/generationPolicy/requiredActivationApprovals",
            json!(["policy_engine"]),
        ),
        &[
            "document 0 /generationPolicy/requiredActivationApprovals/0: enum: `policy_engine` is not one of project_lead, security_reviewer, release_manager, admin",
        ],
    );
}

#[test]
fn const_schema_version() {
    check(
        with(intent(), "/schemaVersion", json!("1.0.1")),
        &["document 0 /schemaVersion: const: expected `1.0.0`, found `1.0.1`"],
    );
}

#[test]
fn type_is_preferred_over_other_errors_at_the_same_pointer() {
    check(
        with(intent(), "/version", json!("1")),
        &["document 0 /version: type: expected integer, found string `1`"],
    );
    check(
        with(intent(), "/version", json!(1.5)),
        &["document 0 /version: type: expected integer, found number `1.5`"],
    );
}

#[test]
fn minimum_version() {
    check(
        with(intent(), "/version", json!(0)),
        &["document 0 /version: minimum: `0` is below the minimum 1"],
    );
}

#[test]
fn min_items() {
    check(
        with(evidence(), "/tools", json!([])),
        &["document 0 /tools: min-items: needs at least 1 item(s), found 0"],
    );
}

#[test]
fn unique_items_names_the_repeated_value() {
    check(
        with(
            intent(),
            "/requestedCapabilities",
            json!(["read_repo", "read_repo"]),
        ),
        &["document 0 /requestedCapabilities: unique-items: `read_repo` appears more than once"],
    );
}

#[test]
fn min_length() {
    check(
        with(intent(), "/intent", json!("")),
        &["document 0 /intent: min-length: must not be empty"],
    );
    check(
        with(evidence(), "/baseCommit", json!("abc123")),
        &["document 0 /baseCommit: min-length: `abc123` is shorter than 7 characters"],
    );
    // No hex check: a seven-character non-hex commit passes, as the schema says.
    check(with(evidence(), "/baseCommit", json!("e4f5g6h")), &[]);
}

#[test]
fn date_times_need_an_offset() {
    check(
        with(intent(), "/createdAt", json!("2026-05-11T08:15:00")),
        &[
            "document 0 /createdAt: format: `2026-05-11T08:15:00` is not an RFC 3339 date-time with an offset: the offset is missing",
        ],
    );
}

#[test]
fn impossible_dates_and_space_separators_are_refused() {
    check(
        with(intent(), "/createdAt", json!("2026-02-30T08:15:00Z")),
        &[
            "document 0 /createdAt: format: `2026-02-30T08:15:00Z` is not an RFC 3339 date-time with an offset: no such date",
        ],
    );
    check(
        with(intent(), "/createdAt", json!("2026-05-11 08:15:00Z")),
        &[
            "document 0 /createdAt: format: `2026-05-11 08:15:00Z` is not an RFC 3339 date-time with an offset: date and time must be separated by T",
        ],
    );
}

#[test]
fn accepted_date_time_spellings() {
    for text in [
        "2026-05-11T08:15:00Z",
        "2026-05-11t08:15:00z",
        "2026-05-11T17:15:00.123456+09:00",
        "2026-12-31T23:59:60Z",
        "2024-02-29T00:00:00-00:00",
    ] {
        check(with(intent(), "/updatedAt", json!(text)), &[]);
    }
}

#[test]
fn a_leap_second_off_the_end_of_the_day_is_refused() {
    check(
        with(intent(), "/updatedAt", json!("2026-12-31T12:30:60Z")),
        &[
            "document 0 /updatedAt: format: `2026-12-31T12:30:60Z` is not an RFC 3339 date-time with an offset: a leap second is only allowed at 23:59:60 UTC",
        ],
    );
}

#[test]
fn nested_date_times_are_checked_too() {
    check(
        with(gate(), "/approvals/0/decidedAt", json!("yesterday")),
        &[
            "document 0 /approvals/0/decidedAt: format: `yesterday` is not an RFC 3339 date-time with an offset: too short",
        ],
    );
}

#[test]
fn every_error_of_a_document_is_reported() {
    let mut doc = evidence();
    set(&mut doc, "/id", json!("EV-1"));
    set(&mut doc, "/tools", json!([]));
    set(&mut doc, "/mergeResult/status", json!("done"));
    remove(&mut doc, "/actor");
    check(
        doc,
        &[
            "document 0 /actor: required: `actor` is required",
            "document 0 /id: pattern: `EV-1` does not match ^EV-[0-9]{3,}$",
            "document 0 /mergeResult/status: enum: `done` is not one of not_applicable, not_attempted, merged, manual_resolution_required",
            "document 0 /tools: min-items: needs at least 1 item(s), found 0",
        ],
    );
}

#[test]
fn an_unknown_kind_is_described_against_the_common_fields() {
    check(
        json!({"kind": "Ticket", "id": "TK-1"}),
        &[
            "document 0 /createdAt: required: `createdAt` is required",
            "document 0 /id: pattern: `TK-1` does not match ^[A-Z]{2,4}-[0-9]{3,}$",
            "document 0 /kind: enum: `Ticket` is not one of IntentContract, TaskSeed, Acceptance, PublishGate, Evidence",
            "document 0 /schemaVersion: required: `schemaVersion` is required",
            "document 0 /state: required: `state` is required",
            "document 0 /updatedAt: required: `updatedAt` is required",
            "document 0 /version: required: `version` is required",
        ],
    );
}

#[test]
fn a_missing_kind_and_a_non_object() {
    check(
        without(intent(), "/kind"),
        &["document 0 /kind: required: `kind` is required"],
    );
    check(
        json!([1, 2]),
        &["document 0 (root): type: expected object, found array `[1,2]`"],
    );
}

#[test]
fn conditional_auto_activate_requires_approvals() {
    check(
        with(task_seed(), "/generationPolicy/auto_activate", json!(false)),
        &[
            "document 0 /generationPolicy/requiredActivationApprovals: auto-activate-requires-approvals: requiredActivationApprovals is empty while auto_activate is false; name at least one role",
        ],
    );
}

#[test]
fn conditional_deadline_required() {
    let mut doc = high_chain().remove(3);
    remove(&mut doc, "/approvalDeadline");
    check(
        doc,
        &[
            "document 0 /approvalDeadline: deadline-required: approvalDeadline is required because requiredApprovals names [project_lead, security_reviewer]",
        ],
    );
}

#[test]
fn conditional_final_decision_required_refuses_pending_and_expired() {
    for decision in ["pending", "expired"] {
        let doc = with(
            with(gate(), "/finalDecision", json!(decision)),
            "/state",
            json!("Active"),
        );
        let expected = format!(
            "document 0 /finalDecision: final-decision-required: finalDecision `{decision}` needs required approvals; with none it must be approved or rejected"
        );
        check(doc, &[expected.as_str()]);
    }
}

#[test]
fn a_bad_final_decision_is_an_enum_error_not_a_conditional_one() {
    check(
        with(gate(), "/finalDecision", json!("done")),
        &[
            "document 0 /finalDecision: enum: `done` is not one of pending, approved, rejected, expired",
        ],
    );
}
