//! Tests for the typed contracts: JSON round trips, the `version` and date-time readings,
//! ids, and what typed parsing refuses.

use serde_json::{Value, json};

use super::*;
use crate::testkit::*;

/// Reads `doc` as a `Contract` and writes it back.
fn round_trip(doc: &Value) -> Result<Value, String> {
    let contract: Contract = serde_json::from_value(doc.clone()).map_err(|e| e.to_string())?;
    serde_json::to_value(&contract).map_err(|e| e.to_string())
}

#[track_caller]
fn check(doc: Value, expected: Result<Value, &str>) {
    assert_eq!(round_trip(&doc), expected.map_err(str::to_owned));
}

#[test]
fn every_test_document_round_trips_unchanged() {
    for doc in chain().into_iter().chain(high_chain()) {
        check(doc.clone(), Ok(doc));
    }
}

#[test]
fn version_one_point_zero_reads_as_one() {
    check(with(intent(), "/version", json!(1.0)), Ok(intent()));
    check(
        with(intent(), "/version", json!(3e0)),
        Ok(with(intent(), "/version", json!(3))),
    );
}

#[test]
fn version_must_be_a_positive_integer() {
    check(
        with(intent(), "/version", json!(1.5)),
        Err("`1.5` is not a contract version (an integer of at least 1)"),
    );
    check(
        with(intent(), "/version", json!(0)),
        Err("`0` is not a contract version (an integer of at least 1)"),
    );
}

#[test]
fn offsets_are_kept_as_written() {
    let doc = with(intent(), "/createdAt", json!("2026-05-11T17:00:00+09:00"));
    check(doc.clone(), Ok(doc));
}

#[test]
fn unknown_fields_are_refused() {
    check(
        with(intent(), "/notes", json!("x")),
        Err(
            "IntentContract: unknown field `notes`, expected one of `intent`, `creator`, `priority`, `requestedCapabilities`",
        ),
    );
    check(
        with(evidence(), "/model/size", json!(1)),
        Err("Evidence: unknown field `size`, expected one of `name`, `version`, `parametersHash`"),
    );
}

#[test]
fn the_id_prefix_must_match_the_kind() {
    check(
        with(acceptance(), "/id", json!("TS-900")),
        Err("id `TS-900` does not have the Acceptance prefix `AC-`"),
    );
}

#[test]
fn a_reference_must_have_its_target_prefix() {
    check(
        with(task_seed(), "/intentId", json!("TS-101")),
        Err("TaskSeed: `TS-101` is not an id like IC-101"),
    );
}

#[test]
fn contract_accessors() {
    let contract: Contract = serde_json::from_value(gate()).expect("valid");
    assert_eq!(contract.kind(), Kind::PublishGate);
    assert_eq!(contract.id().as_str(), "PG-101");
    let gate = contract.as_publish_gate().expect("a gate");
    assert_eq!(gate.risk_level, RiskLevel::Medium);
    assert_eq!(gate.approvals[0].role, ApprovalRole::PolicyEngine);
    assert_eq!(gate.approvals[0].role.human(), None);
    assert!(contract.as_evidence().is_none());
}

#[test]
fn contract_ids() {
    let parsed: Vec<Option<Kind>> = ["IC-101", "TS-0042", "ABCD-999", "X-100", "IC-10", "ic-101"]
        .iter()
        .map(|t| ContractId::parse(t).ok().and_then(|id| id.kind()))
        .collect();
    assert_eq!(
        parsed,
        [
            Some(Kind::IntentContract),
            Some(Kind::TaskSeed),
            None,
            None,
            None,
            None
        ]
    );
    assert!(ContractId::parse("ABCD-999").is_ok());
    assert!(IntentId::parse("IC-101").is_ok());
    assert_eq!(
        IntentId::parse("IC-101\n").map_err(|e| e.to_string()),
        Err("`IC-101\n` is not an id like IC-101".to_owned())
    );
}

#[test]
fn date_times_compare_as_instants() {
    let tokyo = DateTime::parse("2026-05-11T09:00:00+09:00").expect("valid");
    let utc = DateTime::parse("2026-05-11T00:00:00Z").expect("valid");
    let later = DateTime::parse("2026-05-11T00:00:00.5Z").expect("valid");
    assert_eq!(tokyo, utc);
    assert!(utc < later);
    assert_eq!(tokyo.as_str(), "2026-05-11T09:00:00+09:00");
    assert_eq!(tokyo.instant().to_string(), "2026-05-11T00:00:00Z");
}

#[test]
fn a_leap_second_counts_as_second_59() {
    let leap = DateTime::parse("2026-12-31T23:59:60Z").expect("valid");
    let before = DateTime::parse("2026-12-31T23:59:59Z").expect("valid");
    assert_eq!(leap, before);
    // Local 08:59:60 at +09:00 is 23:59:60 UTC.
    assert!(DateTime::parse("2027-01-01T08:59:60+09:00").is_ok());
}

#[test]
fn date_time_errors_name_the_problem() {
    let errors: Vec<String> = [
        "2026-05-11T08:15",
        "2026-05-11T08:15:00",
        "2026-5-11T08:15:00Z",
        "2026-05-11T24:00:00Z",
        "2026-05-11T08:15:00.Z",
        "2026-05-11T08:15:00+0900",
        "2026-05-11T08:15:00+24:00",
        "2100-02-29T00:00:00Z",
    ]
    .iter()
    .map(|t| DateTime::parse(t).map_or_else(|e| e.to_string(), |_| "ok".to_owned()))
    .collect();
    let tail: Vec<&str> = errors
        .iter()
        .map(|e| e.rsplit_once(": ").map_or("", |(_, reason)| reason))
        .collect();
    assert_eq!(
        tail,
        [
            "too short",
            "the offset is missing",
            "the date must be YYYY-MM-DD",
            "no such time",
            "a fraction needs at least one digit",
            "the offset must be Z or ±hh:mm",
            "no such offset",
            "no such date",
        ]
    );
}

#[test]
fn a_contract_is_built_from_parts() {
    let original: Contract = serde_json::from_value(task_seed()).expect("valid");
    let rebuilt = Contract::new(
        original.common.clone(),
        original.as_task_seed().expect("a seed").clone(),
    );
    assert_eq!(
        serde_json::to_value(&rebuilt).expect("serializes"),
        task_seed()
    );
}
