//! `approvals-snapshot-mismatch`: an Evidence's `approvalsSnapshot` is a copy of the human
//! approvals of the PublishGate(s) of the same TaskSeed: every entry appears, field for
//! field, in a gate's `approvals`, and every human decision a gate recorded no later than
//! the Evidence's `endTime` appears in the snapshot. `policy_engine` entries are never
//! copied (the snapshot's role list has no such role; decisions/0011).

use super::Index;
use super::index::{Entry, Facts, SnapshotField};
use crate::error::{ContractError, codes, push_token};
use crate::kinds::{Approval, ApprovalRole, ApproverRole, Kind};

const SNAPSHOT: &str = "/approvalsSnapshot";

/// The snapshot entry and the recorded approval say the same, field for field.
fn same(entry: &Approval<ApproverRole>, recorded: &Approval<ApprovalRole>) -> bool {
    ApprovalRole::from(entry.role) == recorded.role
        && entry.actor_id == recorded.actor_id
        && entry.decision == recorded.decision
        && entry.decided_at == recorded.decided_at
        && entry.reason == recorded.reason
}

fn describe<R: std::fmt::Display>(a: &Approval<R>) -> String {
    format!(
        "{} {} by {} at {}",
        a.role, a.decision, a.actor_id, a.decided_at
    )
}

pub(crate) fn check_set(set: &Index, out: &mut Vec<ContractError>) {
    for evidence in set.all_of(Kind::Evidence) {
        let Facts::Evidence {
            snapshot: SnapshotField::Entries(snapshot),
            end,
            ..
        } = &evidence.facts
        else {
            continue;
        };
        let Some(seed) = set.reference(evidence) else {
            continue;
        };
        let gates: Vec<&Entry> = set.gates_of_referenced_seed(evidence).collect();
        if gates.is_empty() {
            if set.referenced(evidence, Kind::TaskSeed).is_some() {
                out.push(evidence.error(
                    SNAPSHOT,
                    codes::APPROVALS_SNAPSHOT_MISMATCH,
                    format!("no PublishGate of {seed} in the set records these approvals"),
                ));
            }
            continue;
        }
        let gate_names: Vec<&str> = gates.iter().map(|g| set.name(g)).collect();
        let gate_names = gate_names.join(", ");
        for (i, entry) in snapshot.iter().enumerate() {
            let Some(entry) = entry else { continue };
            if !gates
                .iter()
                .flat_map(|g| g.approvals())
                .any(|r| same(entry, r))
            {
                out.push(evidence.error(
                    push_token(SNAPSHOT, &i.to_string()),
                    codes::APPROVALS_SNAPSHOT_MISMATCH,
                    format!(
                        "{} is not in the approvals of {gate_names}",
                        describe(entry)
                    ),
                ));
            }
        }
        let Some(end) = end else {
            continue;
        };
        for gate in gates {
            for decision in gate.human_decisions_until(*end) {
                if !snapshot.iter().flatten().any(|entry| same(entry, decision)) {
                    out.push(evidence.error(
                        SNAPSHOT,
                        codes::APPROVALS_SNAPSHOT_MISMATCH,
                        format!(
                            "{} recorded {} before this execution ended; the snapshot lacks it",
                            set.name(gate),
                            describe(decision)
                        ),
                    ));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
