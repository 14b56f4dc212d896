//! `gate-for-unpassed-acceptance`: a PublishGate exists only for an Acceptance whose
//! status is `passed`.

use super::Index;
use super::index::Facts;
use crate::error::{ContractError, codes};
use crate::kinds::{AcceptanceStatus, Kind};

pub(crate) fn check_set(set: &Index, out: &mut Vec<ContractError>) {
    for gate in set.all_of(Kind::PublishGate) {
        let Some(acceptance) = set.referenced(gate, Kind::Acceptance) else {
            continue;
        };
        match &acceptance.facts {
            Facts::Acceptance {
                status: Some(status),
                ..
            } if *status != AcceptanceStatus::Passed => out.push(gate.error(
                "/entityId",
                codes::GATE_FOR_UNPASSED_ACCEPTANCE,
                format!(
                    "{} has status {status}; only a passed Acceptance gets a PublishGate",
                    set.name(acceptance)
                ),
            )),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests;
