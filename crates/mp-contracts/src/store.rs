//! The contract store port and its adapters: [`MemoryStore`] and, in [`fs`], a directory of
//! JSON files. A stored version never changes: `put` of an existing id and version fails.

pub mod fs;

use std::collections::BTreeMap;
use std::fmt;

use crate::kinds::{Contract, ContractId, Version};

/// Why a store operation failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum StoreError {
    /// The id already has this version; stored versions are immutable.
    VersionExists {
        /// The contract id.
        id: ContractId,
        /// The version that is already stored.
        version: Version,
    },
    /// A stored file is not a valid contract.
    Corrupt {
        /// The file or key that could not be read.
        location: String,
        /// What was wrong.
        detail: String,
    },
    /// The underlying storage failed.
    Io {
        /// The file or directory involved.
        location: String,
        /// The operating system error.
        source: std::io::Error,
    },
}

impl StoreError {
    /// A stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            StoreError::VersionExists { .. } => "version_exists",
            StoreError::Corrupt { .. } => "corrupt_contract",
            StoreError::Io { .. } => "store_io",
        }
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::VersionExists { id, version } => {
                write!(f, "{id} version {version} is already stored")
            }
            StoreError::Corrupt { location, detail } => {
                write!(f, "stored contract {location} is unreadable: {detail}")
            }
            StoreError::Io { location, source } => write!(f, "cannot access {location}: {source}"),
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StoreError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Where contracts live. Each (id, version) is written once and never changes.
pub trait ContractStore {
    /// Stores a new version of a contract.
    ///
    /// # Errors
    /// [`StoreError::VersionExists`] when that id and version are already stored; I/O errors.
    fn put(&mut self, contract: &Contract) -> Result<(), StoreError>;

    /// One version of a contract, if stored.
    ///
    /// # Errors
    /// I/O errors or a corrupt stored contract.
    fn get(&self, id: &ContractId, version: Version) -> Result<Option<Contract>, StoreError>;

    /// The stored versions of an id, ascending (empty when unknown).
    ///
    /// # Errors
    /// I/O errors.
    fn versions(&self, id: &ContractId) -> Result<Vec<Version>, StoreError>;

    /// Every stored id, ascending.
    ///
    /// # Errors
    /// I/O errors.
    fn ids(&self) -> Result<Vec<ContractId>, StoreError>;

    /// The highest stored version of an id, if any.
    ///
    /// # Errors
    /// As [`ContractStore::get`].
    fn latest(&self, id: &ContractId) -> Result<Option<Contract>, StoreError> {
        match self.versions(id)?.last() {
            Some(version) => self.get(id, *version),
            None => Ok(None),
        }
    }
}

/// A store in memory, for tests and embedding.
#[derive(Debug, Clone, Default)]
pub struct MemoryStore {
    contracts: BTreeMap<(ContractId, Version), Contract>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl ContractStore for MemoryStore {
    fn put(&mut self, contract: &Contract) -> Result<(), StoreError> {
        let key = (contract.common.id.clone(), contract.common.version);
        if self.contracts.contains_key(&key) {
            return Err(StoreError::VersionExists {
                id: key.0,
                version: key.1,
            });
        }
        self.contracts.insert(key, contract.clone());
        Ok(())
    }

    fn get(&self, id: &ContractId, version: Version) -> Result<Option<Contract>, StoreError> {
        Ok(self.contracts.get(&(id.clone(), version)).cloned())
    }

    fn versions(&self, id: &ContractId) -> Result<Vec<Version>, StoreError> {
        Ok(self
            .contracts
            .keys()
            .filter(|(i, _)| i == id)
            .map(|(_, v)| *v)
            .collect())
    }

    fn ids(&self) -> Result<Vec<ContractId>, StoreError> {
        let mut ids: Vec<ContractId> = self.contracts.keys().map(|(i, _)| i.clone()).collect();
        ids.dedup();
        Ok(ids)
    }
}

#[cfg(test)]
mod tests;
