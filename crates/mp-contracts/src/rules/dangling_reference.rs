//! `dangling-reference`: every reference resolves to a contract of the right kind in the
//! set: `TaskSeed.intentId`, `Acceptance.taskSeedId`, `PublishGate.entityId`,
//! `Evidence.taskSeedId`. A set is closed: what it references must be in it.

use super::Set;
use crate::error::{ContractError, codes};
use crate::kinds::Kind;

/// (referring kind, pointer, referenced kind).
const REFERENCES: [(Kind, &str, Kind); 4] = [
    (Kind::TaskSeed, "/intentId", Kind::IntentContract),
    (Kind::Acceptance, "/taskSeedId", Kind::TaskSeed),
    (Kind::PublishGate, "/entityId", Kind::Acceptance),
    (Kind::Evidence, "/taskSeedId", Kind::TaskSeed),
];

pub(crate) fn check_set(set: &Set<'_>, out: &mut Vec<ContractError>) {
    for doc in &set.docs {
        let Some(&(_, pointer, target)) = REFERENCES.iter().find(|(k, _, _)| doc.is(*k)) else {
            continue;
        };
        // A value that is not an id of the right kind is a schema error already.
        let Some(id) = doc.str(pointer).filter(|id| {
            id.strip_prefix(target.id_prefix())
                .is_some_and(|r| r.starts_with('-'))
        }) else {
            continue;
        };
        if set.resolve(id, target).is_none() {
            out.push(doc.error(
                pointer,
                codes::DANGLING_REFERENCE,
                format!("no {target} {id} in the set"),
            ));
        }
    }
}

#[cfg(test)]
mod tests;
