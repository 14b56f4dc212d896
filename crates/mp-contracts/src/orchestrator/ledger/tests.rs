//! Tests for saving and restoring the orchestrator's ledger.

use jiff::Timestamp;
use serde_json::json;

use super::*;
use crate::kinds::ContractId;
use crate::orchestrator::{Generated, IdempotencyKey, ManualClock, TaskSeedPlan};
use crate::store::MemoryStore;
use crate::testkit;
use crate::{Contract, Kind, OwnerRole, Version};

fn start() -> Timestamp {
    "2026-05-11T09:00:00Z"
        .parse()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn id(text: &str) -> ContractId {
    ContractId::parse(text).unwrap_or_else(|e| panic!("{e}"))
}

fn draft_intent() -> Contract {
    let doc = testkit::with(testkit::intent(), "/state", json!("Draft"));
    crate::parse_document(&doc).unwrap_or_else(|e| panic!("{e:?}"))
}

fn plan(_: &Contract) -> std::result::Result<TaskSeedPlan, String> {
    Ok(TaskSeedPlan {
        description: "d".to_owned(),
        owner_role: OwnerRole::Developer,
        execution_plan: vec!["fix".to_owned()],
    })
}

#[track_caller]
fn check<T: PartialEq + std::fmt::Debug>(got: T, expected: T) {
    assert_eq!(got, expected);
}

#[test]
fn approvals_phases_and_attempts_survive_a_restart() {
    let clock = ManualClock::new(start());
    let mut first = Orchestrator::new(MemoryStore::new(), &clock);
    let submitted = first.submit(&draft_intent()).map_err(|e| e.to_string());
    let approved = first
        .approve_activation(&id("IC-101"), ApprovalRole::ProjectLead, "lead")
        .map_err(|e| e.to_string());
    let saved = serde_json::to_string(&first.ledger()).unwrap_or_default();
    let ledger: Ledger = serde_json::from_str(&saved).unwrap_or_default();
    let store = first.store().clone();
    let events = first.events().to_vec();
    let mut second = Orchestrator::restore(store, &clock, events, ledger);
    let roles: Vec<ApprovalRole> = second
        .activation_approvals(&id("IC-101"))
        .iter()
        .map(|a| a.role)
        .collect();
    let activated = second
        .activate(&id("IC-101"))
        .map(|c| c.common.state)
        .map_err(|e| e.to_string());
    let generated = second
        .generate_task_seed(&id("IC-101"), &mut plan)
        .map_err(|e| e.to_string());
    let saved = serde_json::to_value(second.ledger()).unwrap_or_default();
    check(
        (
            submitted,
            approved,
            roles,
            activated,
            generated,
            saved["phases"].clone(),
        ),
        (
            Ok(()),
            Ok(()),
            vec![ApprovalRole::ProjectLead],
            Ok(State::Active),
            Ok(Generated::Created(id("TS-101"))),
            json!({"TS-101": "Plan"}),
        ),
    );
}

#[test]
fn retry_attempts_round_trip() {
    let clock = ManualClock::new(start());
    let mut ledger = Ledger::default();
    ledger.attempts.insert(
        "IC-101:1:TaskSeed".to_owned(),
        AttemptRecord {
            failures: 2,
            next_at: Some(start()),
        },
    );
    let orch = Orchestrator::restore(MemoryStore::new(), &clock, Vec::new(), ledger.clone());
    let key = IdempotencyKey {
        source: id("IC-101"),
        source_version: Version::FIRST,
        target: Kind::TaskSeed,
    };
    check((orch.attempts(&key).failures, orch.ledger()), (2, ledger));
}

#[test]
fn revoking_needs_a_reason() {
    let clock = ManualClock::new(start());
    let mut orch = Orchestrator::new(MemoryStore::new(), &clock);
    let _ = orch.submit(&draft_intent());
    let without = orch.revoke(&id("IC-101"), None).map_err(|e| e.to_string());
    let with = orch
        .revoke(&id("IC-101"), Some("duplicate request".to_owned()))
        .map(|c| (c.common.state, c.common.version.get()))
        .map_err(|e| e.to_string());
    check(
        (without, with),
        (
            Err("reason-required: IntentContract Draft to Revoked needs a reason".to_owned()),
            Ok((State::Revoked, 2)),
        ),
    );
}

#[test]
fn an_unknown_phase_is_refused() {
    let parsed: std::result::Result<Phase, _> = serde_json::from_value(json!("Ship"));
    check(
        parsed.map_err(|e| e.to_string()),
        Err("unknown phase `Ship`".to_owned()),
    );
}
