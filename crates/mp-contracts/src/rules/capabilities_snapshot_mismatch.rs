//! `capabilities-snapshot-mismatch`: a TaskSeed's `requestedCapabilitiesSnapshot` holds
//! the same capabilities as its IntentContract's `requestedCapabilities` (as sets). Each
//! missing capability and each extra one is reported.

use super::Index;
use super::index::Facts;
use crate::error::{ContractError, codes, push_token};
use crate::kinds::Kind;

const SNAPSHOT: &str = "/requestedCapabilitiesSnapshot";

pub(crate) fn check_set(set: &Index, out: &mut Vec<ContractError>) {
    for seed in set.all_of(Kind::TaskSeed) {
        let Some(intent) = set.referenced(seed, Kind::IntentContract) else {
            continue;
        };
        let (
            Some(snapshot),
            Facts::IntentContract {
                requested: Some(requested),
            },
        ) = (seed.capability_snapshot(), &intent.facts)
        else {
            continue;
        };
        let intent_id = set.name(intent);
        for capability in requested.iter().filter(|c| !snapshot.contains(c)) {
            out.push(seed.error(
                SNAPSHOT,
                codes::CAPABILITIES_SNAPSHOT_MISMATCH,
                format!("{capability}, requested by {intent_id}, is missing from the snapshot"),
            ));
        }
        for (i, capability) in snapshot.iter().enumerate() {
            if !requested.contains(capability) {
                out.push(seed.error(
                    push_token(SNAPSHOT, &i.to_string()),
                    codes::CAPABILITIES_SNAPSHOT_MISMATCH,
                    format!("{capability} is not requested by {intent_id}"),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests;
