//! `risk-below-capability-floor`: a PublishGate's `riskLevel` is not below what the
//! capabilities of its TaskSeed imply (gate -> Acceptance -> TaskSeed snapshot): `high` for
//! install_deps, network_access, read_secrets or publish_release; `medium` for write_repo.

use super::index::Facts;
use super::{Index, bracket};
use crate::error::{ContractError, codes};
use crate::kinds::{Capability, Kind};
use crate::policy::{capability_floor, risk_floor};

pub(crate) fn check_set(set: &Index, out: &mut Vec<ContractError>) {
    for gate in set.all_of(Kind::PublishGate) {
        let Facts::PublishGate {
            risk: Some(risk), ..
        } = &gate.facts
        else {
            continue;
        };
        let Some((seed, capabilities)) = set.gate_capabilities(gate) else {
            continue;
        };
        let floor = risk_floor(capabilities);
        if *risk < floor {
            let causes: Vec<Capability> = capabilities
                .iter()
                .copied()
                .filter(|c| capability_floor(*c) == floor)
                .collect();
            out.push(gate.error(
                "/riskLevel",
                codes::RISK_BELOW_CAPABILITY_FLOOR,
                format!(
                    "riskLevel {risk} is below {floor}, the floor for {} of {}",
                    bracket(&causes),
                    set.name(seed)
                ),
            ));
        }
    }
}

#[cfg(test)]
mod tests;
