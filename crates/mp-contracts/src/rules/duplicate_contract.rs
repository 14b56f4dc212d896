//! `duplicate-contract`: one id and version appear at most once in a set. Two documents
//! with the same version of the same contract need manual resolution (the higher version
//! wins; equal versions never merge), and references to them would be ambiguous.

use hashbrown::HashMap;

use super::Index;
use crate::error::{ContractError, codes};
use crate::kinds::Version;

pub(crate) fn check_set(set: &Index, out: &mut Vec<ContractError>) {
    let mut first: HashMap<(u32, Version), usize> = HashMap::with_capacity(set.entries.len());
    for entry in set.entries.iter() {
        let (Some(number), Some(version)) = (set.id_number(entry), entry.version) else {
            continue;
        };
        let id = set.name(entry);
        match first.get(&(number, version)) {
            Some(&earlier) => out.push(entry.error(
                "/version",
                codes::DUPLICATE_CONTRACT,
                format!("{id} version {version} also appears as document {earlier}"),
            )),
            None => {
                first.insert((number, version), entry.index);
            }
        }
    }
}

#[cfg(test)]
mod tests;
