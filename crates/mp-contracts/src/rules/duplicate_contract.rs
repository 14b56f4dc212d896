//! `duplicate-contract`: one id and version appear at most once in a set. Two documents
//! with the same version of the same contract need manual resolution (the higher version
//! wins; equal versions never merge), and references to them would be ambiguous.

use std::collections::HashMap;

use super::Index;
use crate::error::{ContractError, codes};
use crate::kinds::Version;

pub(crate) fn check_set(set: &Index, out: &mut Vec<ContractError>) {
    let mut first: HashMap<(&str, Version), usize> = HashMap::new();
    for entry in &set.entries {
        let (Some(id), Some(version)) = (set.id(entry), entry.version) else {
            continue;
        };
        match first.get(&(id, version)) {
            Some(&earlier) => out.push(entry.error(
                "/version",
                codes::DUPLICATE_CONTRACT,
                format!("{id} version {version} also appears as document {earlier}"),
            )),
            None => {
                first.insert((id, version), entry.index);
            }
        }
    }
}

#[cfg(test)]
mod tests;
