//! Tests for the whole L1 gate: every condition runs and every failure is listed.

use std::collections::BTreeMap;

use super::*;
use crate::approval::{READY_TO_MERGE, Receipt};
use crate::gate::testkit::{OWNER, Pr, commit, good_commit, lines, now, policy, receipt, sha};

#[track_caller]
fn check(
    pr: Pr,
    receipts: &[Receipt],
    quadrant: Option<Quadrant>,
    policy: &GatePolicy,
    expected: &[&str],
) -> GateReport {
    let mut all = Receipts::new();
    for r in receipts {
        all.insert(r.clone());
    }
    let report = evaluate_gate(&pr.build(), &all, &sha("b"), quadrant, policy, now());
    assert_eq!(lines(&report.results), expected);
    report
}

fn green() -> Pr {
    Pr::new()
        .applied(READY_TO_MERGE, OWNER, "2026-03-01T11:00:00Z")
        .check("test", "success", Some("github-actions"))
}

fn full_policy() -> GatePolicy {
    let mut policy = policy();
    policy.required_checks = vec!["test".to_owned()];
    let mut models = BTreeMap::new();
    models.insert("claude-code".to_owned(), vec!["*".to_owned()]);
    policy.registry = Some(AgentRegistry::new(vec!["claude-code".into()], models));
    policy
}

#[test]
fn a_green_pr_passes_every_condition_once() {
    let report = check(
        green(),
        &[receipt(READY_TO_MERGE, "a", "2026-03-01T11:00:00Z")],
        Some(Quadrant::A),
        &full_policy(),
        &[
            "pass | C1: label 'ready-to-merge' applied by alice and recorded for head a000000; bound by: branch creation of a000000 at 2026-03-01T10:00:00Z is the last head update before the label at 2026-03-01T11:00:00Z (GitHub activity log)",
            "pass | C2: required checks green: test",
            "pass | C3: quadrant A needs no owner approval",
            "pass | C4: PR base b000000 is the main HEAD",
            "pass | C5: identity trailers well formed on 1 commit",
            "pass | Publisher: no 'classifier-judgment' check run",
            "pass | L4: declared agent tools and models are registered on 1 commit",
        ],
    );
    assert!(report.passed());
    assert_eq!(report.warnings().count(), 0);
    assert!(!report.awaits_owner_only());
    assert_eq!(report.pr.to_string(), "acme/widget#7");
}

#[test]
fn every_failure_is_listed_at_once() {
    let report = check(
        Pr::new()
            .base("dead")
            .commits(vec![
                good_commit("1"),
                commit("2", "x\n\nAgent-Tool: cursor\nAgent-Model: gpt-5\nAgent-Session: s_ok-1\nAgent-Machine: m\nTask-Ref: Issue#x"),
                commit("3", "no trailers"),
            ])
            .check("test", "failure", Some("github-actions"))
            .check("classifier-judgment", "success", Some("evil-ci")),
        &[],
        Some(Quadrant::D),
        &full_policy(),
        &[
            "fail | C1: label 'ready-to-merge' not set on PR #7",
            "fail | C2: check 'test' did not succeed (conclusion: failure)",
            "fail | C3: owner approval missing (quadrant=D)",
            "fail | C4: PR base dead000 is stale (main HEAD is b000000). Rebase the PR.",
            "fail | C5: commit 2000000 has malformed Task-Ref 'Issue#x' (expected Issue#N, PR#N, none, round-N/<topic> or bot/<topic>)",
            "fail | C5: commit 3000000 missing trailer 'Agent-Tool'",
            "fail | C5: commit 3000000 missing trailer 'Agent-Model'",
            "fail | C5: commit 3000000 missing trailer 'Agent-Session'",
            "fail | C5: commit 3000000 missing trailer 'Agent-Machine'",
            "fail | C5: commit 3000000 missing trailer 'Task-Ref'",
            "fail | Publisher: check run 'classifier-judgment' was published by 'evil-ci', not the canonical publisher 'github-actions'",
            "advisory P2 | L4: commit 2000000 declares Agent-Tool 'cursor' / Agent-Model 'gpt-5', not present in the agent registry",
        ],
    );
    assert!(!report.passed());
    assert_eq!(report.blocking().count(), 11);
    assert_eq!(report.warnings().count(), 1);
    let codes: Vec<&str> = report
        .results_for(&ConditionId::C5)
        .map(ConditionResult::code)
        .collect();
    assert_eq!(
        codes,
        [
            "task_ref_malformed",
            "trailer_missing",
            "trailer_missing",
            "trailer_missing",
            "trailer_missing",
            "trailer_missing"
        ]
    );
}

#[test]
fn owner_approval_alone_routes_to_the_inbox() {
    let report = check(
        green(),
        &[receipt(READY_TO_MERGE, "a", "2026-03-01T11:00:00Z")],
        Some(Quadrant::D),
        &full_policy(),
        &[
            "pass | C1: label 'ready-to-merge' applied by alice and recorded for head a000000; bound by: branch creation of a000000 at 2026-03-01T10:00:00Z is the last head update before the label at 2026-03-01T11:00:00Z (GitHub activity log)",
            "pass | C2: required checks green: test",
            "fail | C3: owner approval missing (quadrant=D)",
            "pass | C4: PR base b000000 is the main HEAD",
            "pass | C5: identity trailers well formed on 1 commit",
            "pass | Publisher: no 'classifier-judgment' check run",
            "pass | L4: declared agent tools and models are registered on 1 commit",
        ],
    );
    assert!(report.awaits_owner_only());
}

#[test]
fn a_promoted_registry_blocks_the_merge() {
    let mut policy = full_policy();
    policy.registry_severity = Severity::P0;
    let report = check(
        green().commits(vec![commit(
            "a",
            "x\n\nAgent-Tool: aider\nAgent-Model: m\nAgent-Session: s_abcd\nAgent-Machine: m\nTask-Ref: none",
        )]),
        &[receipt(READY_TO_MERGE, "a", "2026-03-01T11:00:00Z")],
        Some(Quadrant::A),
        &policy,
        &[
            "pass | C1: label 'ready-to-merge' applied by alice and recorded for head a000000; bound by: branch creation of a000000 at 2026-03-01T10:00:00Z is the last head update before the label at 2026-03-01T11:00:00Z (GitHub activity log)",
            "pass | C2: required checks green: test",
            "pass | C3: quadrant A needs no owner approval",
            "pass | C4: PR base b000000 is the main HEAD",
            "pass | C5: identity trailers well formed on 1 commit",
            "pass | Publisher: no 'classifier-judgment' check run",
            "fail | L4: commit a000000 declares Agent-Tool 'aider' / Agent-Model 'm', not present in the agent registry",
        ],
    );
    assert!(!report.passed());
    assert!(!report.awaits_owner_only());
}

#[test]
fn condition_ids_have_stable_names() {
    let ids = [
        ConditionId::C1,
        ConditionId::C2,
        ConditionId::C3,
        ConditionId::C4,
        ConditionId::C5,
        ConditionId::ClassifierPublisher,
        ConditionId::AgentRegistry,
        ConditionId::User("no_todo".to_owned()),
    ];
    let got: Vec<String> = ids
        .iter()
        .map(|id| {
            format!(
                "{id} {} {} {}",
                id.code(),
                id.validator_name(),
                id.is_required()
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            "C1 c1_ready_to_merge validator_ready_to_merge true",
            "C2 c2_checks_green validator_ci_green true",
            "C3 c3_owner_approval validator_owner_approval true",
            "C4 c4_base_is_main validator_base_up_to_date true",
            "C5 c5_trailers validator_trailers true",
            "Publisher classifier_publisher validator_classifier_publisher true",
            "L4 l4_agent_registry validator_agent_registry false",
            "no_todo no_todo no_todo false",
        ]
    );
}

#[test]
fn a_disabled_registry_validator_is_not_run_and_the_core_ones_always_are() {
    let mut policy = full_policy();
    policy.registry_severity = Severity::P0;
    let pr = green()
        .commits(vec![commit(
            "a",
            "x\n\nAgent-Tool: aider\nAgent-Model: m\nAgent-Session: s_abcd\nAgent-Machine: m\nTask-Ref: none",
        )])
        .build();
    let mut receipts = Receipts::new();
    receipts.insert(receipt(READY_TO_MERGE, "a", "2026-03-01T11:00:00Z"));
    let skills = crate::config::SkillsPolicy::default()
        .with_disabled("validator_agent_registry")
        .with_disabled("validator_trailers");
    let report = evaluate_gate_with(
        &GateInput {
            pr: &pr,
            receipts: &receipts,
            main_head: &sha("b"),
            quadrant: Some(Quadrant::A),
            policy: &policy,
            now: now(),
        },
        skills.built_ins(),
    );
    assert_eq!(
        lines(&report.results),
        [
            "pass | C1: label 'ready-to-merge' applied by alice and recorded for head a000000; bound by: branch creation of a000000 at 2026-03-01T10:00:00Z is the last head update before the label at 2026-03-01T11:00:00Z (GitHub activity log)",
            "pass | C2: required checks green: test",
            "pass | C3: quadrant A needs no owner approval",
            "pass | C4: PR base b000000 is the main HEAD",
            "pass | C5: identity trailers well formed on 1 commit",
            "pass | Publisher: no 'classifier-judgment' check run",
        ]
    );
    assert!(report.passed());
}
