//! Tests for the state machine: every row allowed, every other pair refused, every guard.

use super::*;
use Kind::*;
use State::*;

/// `Ok("")` when allowed, else the refusal code.
#[track_caller]
fn check(kind: Kind, before: State, after: State, context: &TransitionContext, expected: &str) {
    let got = match transition(kind, before, after, context) {
        Ok(()) => "",
        Err(e) => e.code,
    };
    assert_eq!(got, expected, "{kind} {before} -> {after}");
}

fn with_reason() -> TransitionContext {
    TransitionContext {
        reason: Some("manual stop".to_owned()),
        ..TransitionContext::default()
    }
}

const CONTRACT_KINDS: [Kind; 4] = [IntentContract, TaskSeed, Acceptance, PublishGate];

#[test]
fn the_table_is_exactly_the_allowed_pairs() {
    let mut allowed = Vec::new();
    for kind in Kind::ALL {
        for before in State::ALL {
            for after in State::ALL {
                if guard(kind, before, after).is_ok() {
                    allowed.push(format!("{kind}:{before}>{after}"));
                }
            }
        }
    }
    let mut expected = Vec::new();
    for kind in CONTRACT_KINDS {
        for (b, a) in [
            (Draft, Active),
            (Draft, Frozen),
            (Draft, Revoked),
            (Active, Frozen),
            (Active, Published),
            (Active, Revoked),
            (Frozen, Active),
            (Frozen, Revoked),
            (Published, Superseded),
            (Published, Revoked),
            (Published, Archived),
            (Superseded, Archived),
            (Revoked, Archived),
        ] {
            expected.push(format!("{kind}:{b}>{a}"));
        }
    }
    expected.push("Evidence:Published>Archived".to_owned());
    allowed.sort();
    expected.sort();
    assert_eq!(allowed, expected);
}

#[test]
fn unlisted_pairs_are_illegal() {
    for (b, a) in [
        (Draft, Published),
        (Frozen, Published),
        (Archived, Active),
        (Superseded, Active),
        (Revoked, Active),
        (Active, Active),
        (Active, Superseded),
        (Draft, Archived),
    ] {
        for kind in CONTRACT_KINDS {
            check(kind, b, a, &with_reason(), "illegal-transition");
        }
    }
}

#[test]
fn evidence_moves_only_to_archived() {
    check(
        Evidence,
        Published,
        Revoked,
        &with_reason(),
        "evidence-immutable",
    );
    check(
        Evidence,
        Draft,
        Active,
        &with_reason(),
        "evidence-immutable",
    );
    check(
        Evidence,
        Published,
        Superseded,
        &with_reason(),
        "evidence-immutable",
    );
    check(Evidence, Published, Archived, &with_reason(), "");
}

#[test]
fn activation_needs_an_explicit_approval() {
    check(
        IntentContract,
        Draft,
        Active,
        &TransitionContext::default(),
        "activation-approval-missing",
    );
}

#[test]
fn activation_with_an_approval_is_allowed() {
    let context = TransitionContext {
        activation_approvals: vec![ApprovalRole::ProjectLead],
        ..TransitionContext::default()
    };
    check(IntentContract, Draft, Active, &context, "");
}

#[test]
fn activation_needs_every_required_role() {
    let context = TransitionContext {
        activation_approvals: vec![ApprovalRole::ProjectLead],
        required_activation_approvals: vec![
            ApprovalRole::ProjectLead,
            ApprovalRole::SecurityReviewer,
        ],
        ..TransitionContext::default()
    };
    check(
        TaskSeed,
        Draft,
        Active,
        &context,
        "activation-approval-missing",
    );
}

#[test]
fn activation_with_every_required_role_is_allowed() {
    let context = TransitionContext {
        activation_approvals: vec![ApprovalRole::SecurityReviewer, ApprovalRole::ProjectLead],
        required_activation_approvals: vec![
            ApprovalRole::ProjectLead,
            ApprovalRole::SecurityReviewer,
        ],
        ..TransitionContext::default()
    };
    check(Acceptance, Draft, Active, &context, "");
}

#[test]
fn publishing_needs_an_approved_gate() {
    for decision in [
        None,
        Some(FinalDecision::Pending),
        Some(FinalDecision::Rejected),
        Some(FinalDecision::Expired),
    ] {
        let context = TransitionContext {
            gate_decision: decision,
            ..TransitionContext::default()
        };
        check(TaskSeed, Active, Published, &context, "gate-not-approved");
    }
}

#[test]
fn publishing_with_an_approved_gate_is_allowed() {
    let context = TransitionContext {
        gate_decision: Some(FinalDecision::Approved),
        ..TransitionContext::default()
    };
    check(IntentContract, Active, Published, &context, "");
}

#[test]
fn a_gate_publishes_only_with_every_required_role() {
    let context = TransitionContext {
        gate_decision: Some(FinalDecision::Approved),
        missing_gate_approvals: vec![ApproverRole::SecurityReviewer],
        ..TransitionContext::default()
    };
    check(
        PublishGate,
        Active,
        Published,
        &context,
        "required-approval-missing",
    );
}

#[test]
fn superseding_needs_a_greater_version() {
    let v = |n| Version::new(n).ok();
    let context = TransitionContext {
        current_version: v(2),
        successor_version: v(2),
        ..TransitionContext::default()
    };
    check(
        IntentContract,
        Published,
        Superseded,
        &context,
        "version-not-greater",
    );
}

#[test]
fn superseding_by_a_greater_version_is_allowed() {
    let v = |n| Version::new(n).ok();
    let context = TransitionContext {
        current_version: v(2),
        successor_version: v(3),
        ..TransitionContext::default()
    };
    check(Acceptance, Published, Superseded, &context, "");
}

#[test]
fn freezing_resuming_revoking_and_archiving_need_a_reason() {
    for (b, a) in [
        (Draft, Frozen),
        (Active, Frozen),
        (Frozen, Active),
        (Frozen, Revoked),
        (Published, Archived),
    ] {
        check(
            TaskSeed,
            b,
            a,
            &TransitionContext::default(),
            "reason-required",
        );
        check(TaskSeed, b, a, &with_reason(), "");
    }
}

#[test]
fn a_blank_reason_is_no_reason() {
    let context = TransitionContext {
        reason: Some("  ".to_owned()),
        ..TransitionContext::default()
    };
    check(PublishGate, Active, Revoked, &context, "reason-required");
}

#[test]
fn the_refusal_names_the_states() {
    let message = transition(TaskSeed, Archived, Active, &with_reason())
        .map_err(|e| e.to_string())
        .err();
    assert_eq!(
        message.as_deref(),
        Some("document 0 /state: illegal-transition: TaskSeed cannot move from Archived to Active")
    );
}

#[test]
fn generated_contracts_start_active_only_from_an_active_source() {
    let got: Vec<State> = [
        (Active, true),
        (Active, false),
        (Draft, true),
        (Frozen, true),
    ]
    .into_iter()
    .map(|(s, auto)| initial_generated_state(s, auto))
    .collect();
    assert_eq!(got, vec![Active, Draft, Draft, Draft]);
}
