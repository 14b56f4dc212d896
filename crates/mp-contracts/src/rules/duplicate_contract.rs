//! `duplicate-contract`: one id and version appear at most once in a set. Two documents
//! with the same version of the same contract need manual resolution (the higher version
//! wins; equal versions never merge), and references to them would be ambiguous.

use std::collections::HashMap;

use super::Set;
use crate::error::{ContractError, codes};
use crate::kinds::Version;

pub(crate) fn check_set(set: &Set<'_>, out: &mut Vec<ContractError>) {
    let mut first: HashMap<(&str, Version), usize> = HashMap::new();
    for doc in &set.docs {
        let (Some(id), Some(version), Some(_)) = (doc.id(), doc.version(), doc.kind) else {
            continue;
        };
        match first.get(&(id, version)) {
            Some(&earlier) => out.push(doc.error(
                "/version",
                codes::DUPLICATE_CONTRACT,
                format!("{id} version {version} also appears as document {earlier}"),
            )),
            None => {
                first.insert((id, version), doc.index);
            }
        }
    }
}

#[cfg(test)]
mod tests;
