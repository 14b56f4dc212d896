//! The contract state machine: which state changes each kind allows and under which guard.
//!
//! | from | to | guard |
//! |---|---|---|
//! | Draft | Active | activation approvals: at least one, covering every required role |
//! | Active | Published | IC/TS/AC: the related gate is `approved`; PG: `approved` with every required role |
//! | Draft, Active | Frozen | a reason (failure, retry exhaustion, lock, hard_stale, expired deadline) |
//! | Frozen | Active | a reason: an explicit manual resume (decisions/0016) |
//! | Published | Superseded | the successor's version is strictly greater |
//! | Draft, Active, Frozen, Published | Revoked | a reason (audit or manual stop) |
//! | Superseded, Revoked, Published | Archived | a reason (retention or an operations rule) |
//!
//! Evidence is `Published` from birth and only ever moves to `Archived`.

use std::fmt;

use crate::error::{ContractError, codes};
use crate::kinds::{ApprovalRole, ApproverRole, FinalDecision, Kind, State, Version};

/// What must hold for an allowed state change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Guard {
    /// Draft → Active: recorded activation approvals covering every required role.
    ActivationApprovals,
    /// Active → Published for IC/TS/AC: the related PublishGate decided `approved`.
    GateApproved,
    /// Active → Published for a PublishGate: `approved` and every required role approved.
    GateComplete,
    /// Published → Superseded: the successor's version is strictly greater.
    HigherVersion,
    /// Freezing, resuming, revoking or archiving: a recorded reason.
    Reason,
}

impl Guard {
    /// A stable snake_case name.
    pub fn code(self) -> &'static str {
        match self {
            Guard::ActivationApprovals => "activation_approvals",
            Guard::GateApproved => "gate_approved",
            Guard::GateComplete => "gate_complete",
            Guard::HigherVersion => "higher_version",
            Guard::Reason => "reason",
        }
    }
}

impl fmt::Display for Guard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Guard::ActivationApprovals => "needs activation approvals covering every required role",
            Guard::GateApproved => "needs the related publish gate to be approved",
            Guard::GateComplete => "needs finalDecision approved and every required role approved",
            Guard::HigherVersion => "needs a successor with a strictly greater version",
            Guard::Reason => "needs a recorded reason",
        })
    }
}

/// The facts a guard is checked against. Only the fields the guard reads matter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TransitionContext {
    /// Roles that approved the activation (kept outside the contract, decisions/0016).
    pub activation_approvals: Vec<ApprovalRole>,
    /// The contract's `generationPolicy.requiredActivationApprovals` (empty for IC and PG).
    pub required_activation_approvals: Vec<ApprovalRole>,
    /// For IC/TS/AC: the related gate's decision; for a PG: its own `finalDecision`.
    pub gate_decision: Option<FinalDecision>,
    /// For a PG: the required roles without an `approved` entry.
    pub missing_gate_approvals: Vec<ApproverRole>,
    /// The version being superseded.
    pub current_version: Option<Version>,
    /// The successor's version.
    pub successor_version: Option<Version>,
    /// Why the change happens (freeze, resume, revoke, archive).
    pub reason: Option<String>,
}

/// The guard of `before → after` for `kind`, or `illegal-transition` (`evidence-immutable`
/// for any Evidence change but Published → Archived).
///
/// # Errors
/// Returns the refusal when the table has no such row.
pub fn guard(kind: Kind, before: State, after: State) -> Result<Guard, ContractError> {
    use State::*;
    if kind == Kind::Evidence {
        return match (before, after) {
            (Published, Archived) => Ok(Guard::Reason),
            _ => Err(refusal(
                codes::EVIDENCE_IMMUTABLE,
                format!(
                    "Evidence cannot move from {before} to {after}: it stays Published until archived"
                ),
            )),
        };
    }
    let guard = match (before, after) {
        (Draft, Active) => Guard::ActivationApprovals,
        (Active, Published) if kind == Kind::PublishGate => Guard::GateComplete,
        (Active, Published) => Guard::GateApproved,
        (Draft | Active, Frozen) | (Frozen, Active) => Guard::Reason,
        (Published, Superseded) => Guard::HigherVersion,
        (Draft | Active | Frozen | Published, Revoked) => Guard::Reason,
        (Superseded | Revoked | Published, Archived) => Guard::Reason,
        _ => {
            return Err(refusal(
                codes::ILLEGAL_TRANSITION,
                format!("{kind} cannot move from {before} to {after}"),
            ));
        }
    };
    Ok(guard)
}

/// Checks one state change of a `kind` contract against the table and its guard.
///
/// # Errors
/// `illegal-transition` / `evidence-immutable` when the table has no row;
/// `activation-approval-missing`, `gate-not-approved`, `required-approval-missing`,
/// `version-not-greater` or `reason-required` when the guard does not hold.
pub fn transition(
    kind: Kind,
    before: State,
    after: State,
    context: &TransitionContext,
) -> Result<(), ContractError> {
    match guard(kind, before, after)? {
        Guard::ActivationApprovals => {
            let missing: Vec<&str> = context
                .required_activation_approvals
                .iter()
                .filter(|r| !context.activation_approvals.contains(r))
                .map(|r| r.as_str())
                .collect();
            if context.activation_approvals.is_empty() {
                Err(refusal(
                    codes::ACTIVATION_APPROVAL_MISSING,
                    format!("{kind} cannot become Active without an explicit approval"),
                ))
            } else if !missing.is_empty() {
                Err(refusal(
                    codes::ACTIVATION_APPROVAL_MISSING,
                    format!(
                        "{kind} activation lacks approval from {}",
                        missing.join(", ")
                    ),
                ))
            } else {
                Ok(())
            }
        }
        Guard::GateApproved | Guard::GateComplete => {
            if context.gate_decision != Some(FinalDecision::Approved) {
                let decision = context
                    .gate_decision
                    .map_or("missing", FinalDecision::as_str);
                return Err(refusal(
                    codes::GATE_NOT_APPROVED,
                    format!("{kind} cannot be Published: gate decision is {decision}"),
                ));
            }
            if !context.missing_gate_approvals.is_empty() && kind == Kind::PublishGate {
                let missing: Vec<&str> = context
                    .missing_gate_approvals
                    .iter()
                    .map(|r| r.as_str())
                    .collect();
                return Err(refusal(
                    codes::REQUIRED_APPROVAL_MISSING,
                    format!("gate cannot be Published without {}", missing.join(", ")),
                ));
            }
            Ok(())
        }
        Guard::HigherVersion => match (context.current_version, context.successor_version) {
            (Some(current), Some(next)) if next > current => Ok(()),
            (current, next) => Err(refusal(
                codes::VERSION_NOT_GREATER,
                format!(
                    "successor version {} is not greater than {}",
                    next.map_or("missing".to_owned(), |v| v.to_string()),
                    current.map_or("missing".to_owned(), |v| v.to_string())
                ),
            )),
        },
        Guard::Reason => match context.reason.as_deref().map(str::trim) {
            Some(reason) if !reason.is_empty() => Ok(()),
            _ => Err(refusal(
                codes::REASON_REQUIRED,
                format!("{kind} {before} to {after} needs a reason"),
            )),
        },
    }
}

/// The state a generated TaskSeed or Acceptance starts in: `Active` only when its source
/// is `Active` and its policy auto-activates, else `Draft`.
pub fn initial_generated_state(source: State, auto_activate: bool) -> State {
    if source == State::Active && auto_activate {
        State::Active
    } else {
        State::Draft
    }
}

fn refusal(code: &'static str, message: String) -> ContractError {
    ContractError::new(0, "/state", code, message)
}

#[cfg(test)]
mod tests;
