//! `dangling-reference`: every reference resolves to a contract of the right kind in the
//! set: `TaskSeed.intentId`, `Acceptance.taskSeedId`, `PublishGate.entityId`,
//! `Evidence.taskSeedId`. A set is closed: what it references must be in it.

use super::Index;
use crate::error::{ContractError, codes};
use crate::kinds::Kind;

/// (referring kind, pointer, referenced kind).
const REFERENCES: [(Kind, &str, Kind); 4] = [
    (Kind::TaskSeed, "/intentId", Kind::IntentContract),
    (Kind::Acceptance, "/taskSeedId", Kind::TaskSeed),
    (Kind::PublishGate, "/entityId", Kind::Acceptance),
    (Kind::Evidence, "/taskSeedId", Kind::TaskSeed),
];

pub(crate) fn check_set(set: &Index, out: &mut Vec<ContractError>) {
    for entry in set.entries.iter() {
        let Some(&(_, pointer, target)) = REFERENCES.iter().find(|(k, _, _)| entry.is(*k)) else {
            continue;
        };
        // A malformed id is the schema layer's finding, not a dangling one.
        let Some(id) = set.reference(entry).filter(|id| {
            id.strip_prefix(target.id_prefix())
                .is_some_and(|r| r.starts_with('-'))
        }) else {
            continue;
        };
        if set.referenced(entry, target).is_none() {
            out.push(entry.error(
                pointer,
                codes::DANGLING_REFERENCE,
                format!("no {target} {id} in the set"),
            ));
        }
    }
}

#[cfg(test)]
mod tests;
