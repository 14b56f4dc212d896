//! The policy engine: creates the PublishGate of a passed Acceptance and records decisions.

use jiff::{SignedDuration, Timestamp};

use crate::kinds::{
    AcceptanceId, Approval, ApprovalRole, Decision, FinalDecision, GateAction, PublishGate,
    RiskLevel, State,
};
use crate::policy::approval_matrix;

use super::stamp;

/// How long humans have to decide a high or critical gate (not normative; decisions/0016).
pub const DEFAULT_APPROVAL_WINDOW: SignedDuration = SignedDuration::from_hours(24);

/// The body and state of a new gate for `acceptance` at `risk`, decided now for low and
/// medium (approved by the policy engine, `Published`), pending with a deadline otherwise.
pub fn new_gate(
    acceptance: AcceptanceId,
    risk: RiskLevel,
    now: Timestamp,
    window: SignedDuration,
) -> (PublishGate, State) {
    let required = approval_matrix(risk).to_vec();
    if required.is_empty() {
        let gate = PublishGate {
            entity_id: acceptance,
            action: GateAction::Publish,
            risk_level: risk,
            required_approvals: required,
            approvals: vec![Approval {
                role: ApprovalRole::PolicyEngine,
                actor_id: "policy-engine".to_owned(),
                decision: Decision::Approved,
                decided_at: stamp(now),
                reason: Some(format!("{risk} risk is approved automatically")),
            }],
            final_decision: FinalDecision::Approved,
            approval_deadline: None,
        };
        (gate, State::Published)
    } else {
        let gate = PublishGate {
            entity_id: acceptance,
            action: GateAction::Publish,
            risk_level: risk,
            required_approvals: required,
            approvals: Vec::new(),
            final_decision: FinalDecision::Pending,
            approval_deadline: Some(stamp(now.checked_add(window).unwrap_or(now))),
        };
        (gate, State::Active)
    }
}

/// The decision once `approval` is added at `now`: `expired` past the deadline (the
/// approval is then not recorded), `rejected` on any rejection, `approved` when every
/// required role approved, else `pending`.
pub fn decide(gate: &mut PublishGate, approval: Option<Approval<ApprovalRole>>, now: Timestamp) {
    if gate.final_decision != FinalDecision::Pending {
        return;
    }
    if gate
        .approval_deadline
        .as_ref()
        .is_some_and(|deadline| now > deadline.instant())
    {
        gate.final_decision = FinalDecision::Expired;
        return;
    }
    if let Some(approval) = approval {
        gate.approvals.push(approval);
    }
    if gate
        .approvals
        .iter()
        .any(|a| a.decision == Decision::Rejected)
    {
        gate.final_decision = FinalDecision::Rejected;
    } else if missing_approvals(gate).is_empty() {
        gate.final_decision = FinalDecision::Approved;
    }
}

/// The required roles without an `approved` entry (admin stands in for nobody).
pub fn missing_approvals(gate: &PublishGate) -> Vec<crate::kinds::ApproverRole> {
    gate.required_approvals
        .iter()
        .copied()
        .filter(|role| {
            !gate
                .approvals
                .iter()
                .any(|a| a.decision == Decision::Approved && a.role == ApprovalRole::from(*role))
        })
        .collect()
}
