//! Tests for the orchestrator: the happy flow, idempotent replay, retry and freezing on a
//! manual clock, the policy engine's gates and deadlines, phases and capabilities.

use jiff::{SignedDuration, Timestamp};
use serde_json::json;

use super::*;
use crate::evidence::ExecutionRecord;
use crate::kinds::{
    Decision, MergeResult, MergeStatus, PolicyVerdict, StaleClassification, StaleStatus,
};
use crate::store::MemoryStore;
use crate::testkit;

type Orch<'c> = Orchestrator<MemoryStore, &'c ManualClock>;

fn start() -> Timestamp {
    "2026-05-11T09:00:00Z"
        .parse()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn id(text: &str) -> ContractId {
    ContractId::parse(text).unwrap_or_else(|e| panic!("{e}"))
}

/// An orchestrator holding IC-101 (Active) with these capabilities.
fn setup(clock: &ManualClock, capabilities: serde_json::Value) -> Orch<'_> {
    let mut orch = Orchestrator::new(MemoryStore::new(), clock);
    let doc = testkit::with(testkit::intent(), "/requestedCapabilities", capabilities);
    let intent = crate::parse_document(&doc).unwrap_or_else(|e| panic!("{e:?}"));
    orch.submit(&intent).unwrap_or_else(|e| panic!("{e}"));
    orch
}

fn plan(_: &Contract) -> std::result::Result<TaskSeedPlan, String> {
    Ok(TaskSeedPlan {
        description: "stabilise the login test".to_owned(),
        owner_role: OwnerRole::Developer,
        execution_plan: vec!["fix".to_owned()],
    })
}

fn passed(_: &Contract) -> std::result::Result<AcceptancePlan, String> {
    Ok(AcceptancePlan {
        status: AcceptanceStatus::Passed,
        details: "all green".to_owned(),
        criteria: vec!["suite passes".to_owned()],
    })
}

fn failed(_: &Contract) -> std::result::Result<AcceptancePlan, String> {
    Ok(AcceptancePlan {
        status: AcceptanceStatus::Failed,
        ..passed(&dummy())?
    })
}

fn dummy() -> Contract {
    crate::parse_document(&testkit::intent()).unwrap_or_else(|e| panic!("{e:?}"))
}

fn record(clock: &ManualClock) -> ExecutionRecord {
    let now = stamp(clock.now());
    ExecutionRecord {
        task_seed_id: TaskSeedId::parse("TS-101").unwrap_or_else(|e| panic!("{e}")),
        base_commit: "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678".to_owned(),
        head_commit: "e4f5a6b7c8d90a1b2c3d4e5f60718293a4b5c6d7".to_owned(),
        input: Some(json!({"prompt": "fix"})),
        output: Some(json!({"patch": "..."})),
        model_name: "model-x".to_owned(),
        model_version: "unknown".to_owned(),
        parameters: None,
        tools: vec!["StructuredLogger".to_owned()],
        os: "linux".to_owned(),
        runtime: "rust".to_owned(),
        container_image_digest: None,
        lockfile: Some(b"lock".to_vec()),
        diff: b"diff".to_vec(),
        stale_status: StaleStatus {
            classification: StaleClassification::Fresh,
            evaluated_at: now.clone(),
            reason: None,
        },
        merge_result: MergeResult {
            status: MergeStatus::NotApplicable,
            merged_at: None,
            strategy: None,
            reason: None,
        },
        start_time: now.clone(),
        end_time: now,
        actor: "dev-agent-1".to_owned(),
        policy_verdict: PolicyVerdict::Approved,
        approvals_snapshot: None,
    }
}

fn event_types(orch: &Orch<'_>) -> Vec<&'static str> {
    orch.events()
        .iter()
        .map(|e| e.event_type.as_str())
        .collect()
}

fn state(orch: &Orch<'_>, text: &str) -> Option<State> {
    orch.store()
        .latest(&id(text))
        .ok()
        .flatten()
        .map(|c| c.common.state)
}

#[track_caller]
fn check<T: PartialEq + std::fmt::Debug>(got: T, expected: T) {
    assert_eq!(got, expected);
}

#[test]
fn the_happy_flow_emits_every_event_once() {
    let clock = ManualClock::new(start());
    let mut orch = setup(&clock, json!(["read_repo", "write_repo"]));
    let ts = orch
        .generate_task_seed(&id("IC-101"), &mut plan)
        .map_err(|e| e.to_string());
    let ev = orch
        .record_execution(&id("TS-101"), &record(&clock))
        .map_err(|e| e.to_string());
    let ac = orch
        .generate_acceptance(&id("TS-101"), &mut passed)
        .map_err(|e| e.to_string());
    let pg = orch
        .create_gate(&id("AC-101"), RiskLevel::Low)
        .map_err(|e| e.to_string());
    check(
        (ts, ev, ac, pg, state(&orch, "PG-101"), event_types(&orch)),
        (
            Ok(Generated::Created(id("TS-101"))),
            Ok(id("EV-101")),
            Ok(Generated::Created(id("AC-101"))),
            Ok(Generated::Created(id("PG-101"))),
            Some(State::Published),
            vec![
                "taskseed.created.v1",
                "taskseed.execution.completed.v1",
                "evidence.created.v1",
                "acceptance.created.v1",
                "publishgate.created.v1",
                "publishgate.decision.recorded.v1",
            ],
        ),
    );
}

#[test]
fn the_task_seed_policy_is_derived_from_the_capabilities() {
    let clock = ManualClock::new(start());
    let mut orch = setup(&clock, json!(["read_repo", "publish_release"]));
    let _ = orch.generate_task_seed(&id("IC-101"), &mut plan);
    let ts = orch.store().latest(&id("TS-101")).ok().flatten();
    let policy = ts.as_ref().and_then(|c| c.as_task_seed()).map(|t| {
        (
            t.generation_policy.auto_activate,
            t.generation_policy.required_activation_approvals.clone(),
        )
    });
    check(
        (policy, ts.map(|c| c.common.state)),
        (
            Some((
                false,
                vec![ApprovalRole::ProjectLead, ApprovalRole::ReleaseManager],
            )),
            Some(State::Draft),
        ),
    );
}

#[test]
fn a_replayed_generation_creates_nothing_twice() {
    let clock = ManualClock::new(start());
    let mut orch = setup(&clock, json!(["read_repo"]));
    let first = orch
        .generate_task_seed(&id("IC-101"), &mut plan)
        .map_err(|e| e.code());
    let again = orch
        .generate_task_seed(&id("IC-101"), &mut plan)
        .map_err(|e| e.code());
    check(
        (
            first,
            again,
            orch.store().ids().map(|v| v.len()).ok(),
            orch.events().len(),
        ),
        (
            Ok(Generated::Created(id("TS-101"))),
            Ok(Generated::Existing(id("TS-101"))),
            Some(2),
            1,
        ),
    );
}

#[test]
fn a_resumed_orchestrator_honours_keys_from_the_event_log() {
    let clock = ManualClock::new(start());
    let mut orch = setup(&clock, json!(["read_repo"]));
    let _ = orch.generate_task_seed(&id("IC-101"), &mut plan);
    let events = orch.events().to_vec();
    let key = events.first().and_then(|e| e.idempotencykey.clone());
    let mut store = MemoryStore::new();
    for stored in orch.store().ids().unwrap_or_default() {
        if let Ok(Some(c)) = orch.store().latest(&stored) {
            let _ = store.put(&c);
        }
    }
    let mut resumed = Orchestrator::resume(store, &clock, events);
    let replay = resumed
        .generate_task_seed(&id("IC-101"), &mut plan)
        .map_err(|e| e.code());
    check(
        (key, replay),
        (
            Some("IC-101:1:TaskSeed".to_owned()),
            Ok(Generated::Existing(id("TS-101"))),
        ),
    );
}

#[test]
fn failures_back_off_30_60_120_then_freeze_the_source() {
    let clock = ManualClock::new(start());
    let mut orch = setup(&clock, json!(["read_repo"]));
    let mut calls = 0;
    let mut failing = |_: &Contract| -> std::result::Result<TaskSeedPlan, String> {
        calls += 1;
        Err("generator unavailable".to_owned())
    };
    let mut outcomes = Vec::new();
    let mut attempt =
        |orch: &mut Orch<'_>,
         failing: &mut dyn FnMut(&Contract) -> std::result::Result<TaskSeedPlan, String>| {
            let outcome = match orch.generate_task_seed(&id("IC-101"), failing) {
                Ok(Generated::RetryAt(at)) => format!("retry at {at}"),
                Ok(other) => format!("{other:?}"),
                Err(e) => e.code().to_owned(),
            };
            outcomes.push(outcome);
        };
    attempt(&mut orch, &mut failing);
    // Too early: the generator is not called again.
    clock.advance(SignedDuration::from_secs(29));
    attempt(&mut orch, &mut failing);
    clock.advance(SignedDuration::from_secs(1));
    attempt(&mut orch, &mut failing);
    clock.advance(SignedDuration::from_secs(60));
    attempt(&mut orch, &mut failing);
    clock.advance(SignedDuration::from_secs(120));
    attempt(&mut orch, &mut failing);
    check(
        (outcomes, calls, state(&orch, "IC-101"), event_types(&orch)),
        (
            vec![
                "retry at 2026-05-11T09:00:30Z".to_owned(),
                "retry at 2026-05-11T09:00:30Z".to_owned(),
                "retry at 2026-05-11T09:01:30Z".to_owned(),
                "retry at 2026-05-11T09:03:30Z".to_owned(),
                "Frozen(ContractId(\"IC-101\"))".to_owned(),
            ],
            4,
            Some(State::Frozen),
            vec!["contract.frozen.v1"],
        ),
    );
}

#[test]
fn the_frozen_event_says_why() {
    let clock = ManualClock::new(start());
    let mut orch = setup(&clock, json!(["read_repo"]));
    let mut failing =
        |_: &Contract| -> std::result::Result<TaskSeedPlan, String> { Err("boom".to_owned()) };
    for delay in [0, 30, 60, 120] {
        clock.advance(SignedDuration::from_secs(delay));
        let _ = orch.generate_task_seed(&id("IC-101"), &mut failing);
    }
    let data = orch.events().last().map(|e| {
        (
            e.data["reason"].clone(),
            e.data["attempts"].clone(),
            e.contractversion.clone(),
        )
    });
    check(
        data,
        Some((
            json!("TaskSeed generation failed 4 times: boom"),
            json!(4),
            "2".to_owned(),
        )),
    );
}

#[test]
fn a_success_after_a_failure_clears_the_attempts() {
    let clock = ManualClock::new(start());
    let mut orch = setup(&clock, json!(["read_repo"]));
    let mut failing =
        |_: &Contract| -> std::result::Result<TaskSeedPlan, String> { Err("boom".to_owned()) };
    let _ = orch.generate_task_seed(&id("IC-101"), &mut failing);
    clock.advance(SignedDuration::from_secs(30));
    let ok = orch
        .generate_task_seed(&id("IC-101"), &mut plan)
        .map_err(|e| e.code());
    let key = IdempotencyKey {
        source: id("IC-101"),
        source_version: Version::FIRST,
        target: Kind::TaskSeed,
    };
    check(
        (ok, orch.attempts(&key)),
        (Ok(Generated::Created(id("TS-101"))), Attempts::default()),
    );
}

#[test]
fn a_failed_acceptance_gets_no_gate() {
    let clock = ManualClock::new(start());
    let mut orch = setup(&clock, json!(["read_repo"]));
    let _ = orch.generate_task_seed(&id("IC-101"), &mut plan);
    let _ = orch.generate_acceptance(&id("TS-101"), &mut failed);
    let gate = orch
        .create_gate(&id("AC-101"), RiskLevel::Low)
        .map_err(|e| e.code());
    check(
        (gate, state(&orch, "PG-101")),
        (Ok(Generated::NotPassed(AcceptanceStatus::Failed)), None),
    );
}

/// A high-risk chain up to a pending gate PG-101 (deadline 24 h after start).
fn high_gate(clock: &ManualClock) -> Orch<'_> {
    let mut orch = setup(clock, json!(["read_repo", "network_access"]));
    let _ = orch.generate_task_seed(&id("IC-101"), &mut plan);
    let _ = orch.approve_activation(&id("TS-101"), ApprovalRole::ProjectLead, "lead");
    let _ = orch.approve_activation(&id("TS-101"), ApprovalRole::SecurityReviewer, "sec");
    let _ = orch.activate(&id("TS-101"));
    let _ = orch.generate_acceptance(&id("TS-101"), &mut passed);
    let _ = orch.approve_activation(&id("AC-101"), ApprovalRole::ProjectLead, "lead");
    let _ = orch.approve_activation(&id("AC-101"), ApprovalRole::SecurityReviewer, "sec");
    let _ = orch.activate(&id("AC-101"));
    let _ = orch.create_gate(&id("AC-101"), RiskLevel::Low);
    orch
}

fn approval(role: ApprovalRole, decision: Decision, clock: &ManualClock) -> Approval<ApprovalRole> {
    Approval {
        role,
        actor_id: role.as_str().to_owned(),
        decision,
        decided_at: stamp(clock.now()),
        reason: None,
    }
}

fn gate_view(orch: &Orch<'_>) -> Option<(State, RiskLevel, FinalDecision)> {
    orch.store()
        .latest(&id("PG-101"))
        .ok()
        .flatten()
        .and_then(|c| {
            c.as_publish_gate()
                .map(|g| (c.common.state, g.risk_level, g.final_decision))
        })
}

#[test]
fn a_high_gate_is_raised_to_the_floor_and_waits_for_humans() {
    let clock = ManualClock::new(start());
    let orch = high_gate(&clock);
    check(
        gate_view(&orch),
        Some((State::Active, RiskLevel::High, FinalDecision::Pending)),
    );
}

#[test]
fn a_high_gate_publishes_when_every_role_approved() {
    let clock = ManualClock::new(start());
    let mut orch = high_gate(&clock);
    let one = orch
        .record_decision(
            &id("PG-101"),
            approval(ApprovalRole::ProjectLead, Decision::Approved, &clock),
        )
        .map(|c| c.common.state)
        .map_err(|e| e.code());
    let two = orch
        .record_decision(
            &id("PG-101"),
            approval(ApprovalRole::SecurityReviewer, Decision::Approved, &clock),
        )
        .map(|c| c.common.state)
        .map_err(|e| e.code());
    check(
        (one, two, gate_view(&orch)),
        (
            Ok(State::Active),
            Ok(State::Published),
            Some((State::Published, RiskLevel::High, FinalDecision::Approved)),
        ),
    );
}

#[test]
fn admin_does_not_stand_in_for_a_required_role() {
    let clock = ManualClock::new(start());
    let mut orch = high_gate(&clock);
    let _ = orch.record_decision(
        &id("PG-101"),
        approval(ApprovalRole::ProjectLead, Decision::Approved, &clock),
    );
    let _ = orch.record_decision(
        &id("PG-101"),
        approval(ApprovalRole::Admin, Decision::Approved, &clock),
    );
    check(
        gate_view(&orch),
        Some((State::Active, RiskLevel::High, FinalDecision::Pending)),
    );
}

#[test]
fn a_rejection_decides_the_gate() {
    let clock = ManualClock::new(start());
    let mut orch = high_gate(&clock);
    let _ = orch.record_decision(
        &id("PG-101"),
        approval(ApprovalRole::SecurityReviewer, Decision::Rejected, &clock),
    );
    let again = orch
        .record_decision(
            &id("PG-101"),
            approval(ApprovalRole::ProjectLead, Decision::Approved, &clock),
        )
        .map_err(|e| e.code());
    check(
        (gate_view(&orch), again.err()),
        (
            Some((State::Active, RiskLevel::High, FinalDecision::Rejected)),
            Some("gate_decided"),
        ),
    );
}

#[test]
fn an_unanswered_gate_expires_after_the_deadline_and_freezes() {
    let clock = ManualClock::new(start());
    let mut orch = high_gate(&clock);
    clock.advance(SignedDuration::from_hours(24));
    let on_time = orch.expire_overdue_gates().map_err(|e| e.code());
    clock.advance(SignedDuration::from_secs(1));
    let late = orch.expire_overdue_gates().map_err(|e| e.code());
    check(
        (
            on_time,
            late,
            gate_view(&orch),
            event_types(&orch).last().copied(),
        ),
        (
            Ok(vec![]),
            Ok(vec![id("PG-101")]),
            Some((State::Frozen, RiskLevel::High, FinalDecision::Expired)),
            Some("publishgate.decision.recorded.v1"),
        ),
    );
}

#[test]
fn a_late_approval_expires_the_gate() {
    let clock = ManualClock::new(start());
    let mut orch = high_gate(&clock);
    clock.advance(SignedDuration::from_hours(25));
    let late = orch
        .record_decision(
            &id("PG-101"),
            approval(ApprovalRole::ProjectLead, Decision::Approved, &clock),
        )
        .ok()
        .and_then(|c| {
            c.as_publish_gate()
                .map(|g| (g.final_decision, g.approvals.len()))
        });
    check(late, Some((FinalDecision::Expired, 0)));
}

#[test]
fn a_draft_task_seed_activates_only_with_every_required_role() {
    let clock = ManualClock::new(start());
    let mut orch = setup(&clock, json!(["read_repo", "read_secrets"]));
    let _ = orch.generate_task_seed(&id("IC-101"), &mut plan);
    let _ = orch.approve_activation(&id("TS-101"), ApprovalRole::ProjectLead, "lead");
    let early = orch
        .activate(&id("TS-101"))
        .map(|_| ())
        .map_err(|e| e.to_string());
    let _ = orch.approve_activation(&id("TS-101"), ApprovalRole::SecurityReviewer, "sec");
    let later = orch
        .activate(&id("TS-101"))
        .map(|c| c.common.state)
        .map_err(|e| e.to_string());
    check(
        (early, later),
        (
            Err("activation-approval-missing: TaskSeed activation lacks approval from security_reviewer".to_owned()),
            Ok(State::Active),
        ),
    );
}

#[test]
fn a_draft_task_seed_cannot_execute() {
    let clock = ManualClock::new(start());
    let mut orch = setup(&clock, json!(["read_repo", "install_deps"]));
    let _ = orch.generate_task_seed(&id("IC-101"), &mut plan);
    let refused = orch
        .record_execution(&id("TS-101"), &record(&clock))
        .map_err(|e| e.to_string());
    check(refused, Err("TS-101 is Draft, not Active".to_owned()));
}

#[test]
fn activating_an_intent_emits_intent_created() {
    let clock = ManualClock::new(start());
    let mut orch = Orchestrator::new(MemoryStore::new(), &clock);
    let draft = testkit::with(testkit::intent(), "/state", json!("Draft"));
    let intent = crate::parse_document(&draft).unwrap_or_else(|e| panic!("{e:?}"));
    let _ = orch.submit(&intent);
    let _ = orch.approve_activation(&id("IC-101"), ApprovalRole::ProjectLead, "lead");
    let active = orch
        .activate(&id("IC-101"))
        .map(|c| (c.common.state, c.common.version.get()))
        .map_err(|e| e.code());
    check(
        (active, event_types(&orch)),
        (Ok((State::Active, 2)), vec!["intent.created.v1"]),
    );
}

#[test]
fn phases_follow_the_table() {
    let clock = ManualClock::new(start());
    let mut orch = setup(&clock, json!(["read_repo"]));
    let _ = orch.generate_task_seed(&id("IC-101"), &mut plan);
    let ts = id("TS-101");
    let moves: Vec<String> = [
        Phase::Stabilize,
        Phase::Build,
        Phase::Plan,
        Phase::Build,
        Phase::Stabilize,
        Phase::Build,
        Phase::Stabilize,
        Phase::Refactor,
        Phase::Build,
        Phase::Stabilize,
        Phase::Refactor,
        Phase::Publish,
        Phase::Done,
    ]
    .into_iter()
    .map(|to| match orch.advance_phase(&ts, to) {
        Ok(p) => p.to_string(),
        Err(e) => e.code().to_owned(),
    })
    .collect();
    check(
        moves,
        [
            "illegal_phase",
            "Build",
            "Plan",
            "Build",
            "Stabilize",
            "Build",
            "Stabilize",
            "Refactor",
            "Build",
            "Stabilize",
            "Refactor",
            "Publish",
            "Done",
        ]
        .map(str::to_owned)
        .to_vec(),
    );
}

#[test]
fn an_operation_needing_an_ungranted_capability_is_refused() {
    let clock = ManualClock::new(start());
    let mut orch = setup(&clock, json!(["read_repo", "write_repo"]));
    let _ = orch.generate_task_seed(&id("IC-101"), &mut plan);
    let results: Vec<std::result::Result<(), String>> =
        [Capability::WriteRepo, Capability::NetworkAccess]
            .into_iter()
            .map(|c| orch.authorize(&id("TS-101"), c).map_err(|e| e.to_string()))
            .collect();
    check(
        results,
        vec![
            Ok(()),
            Err("TS-101 was not granted network_access".to_owned()),
        ],
    );
}

#[test]
fn every_execution_gets_its_own_evidence() {
    let clock = ManualClock::new(start());
    let mut orch = setup(&clock, json!(["read_repo"]));
    let _ = orch.generate_task_seed(&id("IC-101"), &mut plan);
    let first = orch
        .record_execution(&id("TS-101"), &record(&clock))
        .map_err(|e| e.code());
    let second = orch
        .record_execution(&id("TS-101"), &record(&clock))
        .map_err(|e| e.code());
    check(
        (first, second, state(&orch, "EV-102")),
        (Ok(id("EV-101")), Ok(id("EV-102")), Some(State::Published)),
    );
}
