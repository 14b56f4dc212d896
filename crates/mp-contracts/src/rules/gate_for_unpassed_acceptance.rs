//! `gate-for-unpassed-acceptance`: a PublishGate exists only for an Acceptance whose
//! status is `passed`.

use super::Set;
use crate::error::{ContractError, codes};
use crate::kinds::{AcceptanceStatus, Kind};

pub(crate) fn check_set(set: &Set<'_>, out: &mut Vec<ContractError>) {
    for gate in set.all_of(Kind::PublishGate) {
        let Some(acceptance) = set.referenced(gate, "/entityId", Kind::Acceptance) else {
            continue;
        };
        match acceptance.get::<AcceptanceStatus>("/status") {
            Some(AcceptanceStatus::Passed) | None => {}
            Some(status) => out.push(gate.error(
                "/entityId",
                codes::GATE_FOR_UNPASSED_ACCEPTANCE,
                format!(
                    "{} has status {status}; only a passed Acceptance gets a PublishGate",
                    acceptance.id().unwrap_or("?")
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests;
