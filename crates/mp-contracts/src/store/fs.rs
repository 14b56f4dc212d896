//! The filesystem adapter of [`ContractStore`]: one JSON file per contract version,
//! `<root>/<id>/<version>.json`. This is the only module of the crate that performs I/O.
//!
//! A write goes to a temporary file in the same directory, is flushed with `fsync`, and is
//! then published under its final name with a hard link, which fails when the name exists
//! (a rename that never replaces, decisions/0017). The temporary name is removed in every
//! case and the directory is synced, so a reader sees either no file or a complete one.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::{ContractStore, StoreError};
use crate::kinds::{Contract, ContractId, Version};

/// Contracts stored as files under a root directory.
#[derive(Debug, Clone)]
pub struct FsStore {
    root: PathBuf,
}

impl FsStore {
    /// A store rooted at `root` (created on the first write).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn dir(&self, id: &ContractId) -> PathBuf {
        self.root.join(id.as_str())
    }

    fn file(&self, id: &ContractId, version: Version) -> PathBuf {
        self.dir(id).join(format!("{version}.json"))
    }
}

fn io_error(path: &Path, source: io::Error) -> StoreError {
    StoreError::Io {
        location: path.display().to_string(),
        source,
    }
}

impl ContractStore for FsStore {
    fn put(&mut self, contract: &Contract) -> Result<(), StoreError> {
        let id = &contract.common.id;
        let version = contract.common.version;
        let dir = self.dir(id);
        fs::create_dir_all(&dir).map_err(|e| io_error(&dir, e))?;
        let mut bytes = serde_json::to_vec_pretty(contract).map_err(|e| StoreError::Corrupt {
            location: id.to_string(),
            detail: e.to_string(),
        })?;
        bytes.push(b'\n');
        let name = format!("{version}.json");
        write_new(&dir, &name, &bytes, publish_by_link).map_err(|e| {
            if e.kind() == io::ErrorKind::AlreadyExists {
                StoreError::VersionExists {
                    id: id.clone(),
                    version,
                }
            } else {
                io_error(&dir.join(&name), e)
            }
        })
    }

    fn get(&self, id: &ContractId, version: Version) -> Result<Option<Contract>, StoreError> {
        let path = self.file(id, version);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_error(&path, e)),
        };
        let corrupt = |detail: String| StoreError::Corrupt {
            location: path.display().to_string(),
            detail,
        };
        let json: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| corrupt(e.to_string()))?;
        let contract = crate::parse_document(&json).map_err(|errors| {
            corrupt(errors.first().map_or_else(String::new, ToString::to_string))
        })?;
        if contract.common.id != *id || contract.common.version != version {
            return Err(corrupt(format!(
                "holds {} version {}",
                contract.common.id, contract.common.version
            )));
        }
        Ok(Some(contract))
    }

    fn versions(&self, id: &ContractId) -> Result<Vec<Version>, StoreError> {
        let dir = self.dir(id);
        let mut versions: Vec<Version> = entries(&dir)?
            .iter()
            .filter_map(|name| name.strip_suffix(".json"))
            .filter(|stem| stem.bytes().all(|b| b.is_ascii_digit()))
            .filter_map(|stem| stem.parse::<u64>().ok())
            .filter_map(|n| Version::new(n).ok())
            .collect();
        versions.sort();
        Ok(versions)
    }

    fn ids(&self) -> Result<Vec<ContractId>, StoreError> {
        let mut ids: Vec<ContractId> = entries(&self.root)?
            .iter()
            .filter_map(|name| ContractId::parse(name).ok())
            .collect();
        ids.sort();
        Ok(ids)
    }
}

/// The entry names of a directory (none when it does not exist).
fn entries(dir: &Path) -> Result<Vec<String>, StoreError> {
    let read = match fs::read_dir(dir) {
        Ok(read) => read,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_error(dir, e)),
    };
    let mut names = Vec::new();
    for entry in read {
        let entry = entry.map_err(|e| io_error(dir, e))?;
        if let Some(name) = entry.file_name().to_str() {
            names.push(name.to_owned());
        }
    }
    Ok(names)
}

/// Gives `from` the name `to` unless `to` exists (`AlreadyExists` then).
fn publish_by_link(from: &Path, to: &Path) -> io::Result<()> {
    fs::hard_link(from, to)
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` as `dir/name`, which must not exist, so that `dir/name` is either absent
/// or complete. The temporary file is removed whatever happens.
fn write_new(
    dir: &Path,
    name: &str,
    bytes: &[u8],
    publish: fn(&Path, &Path) -> io::Result<()>,
) -> io::Result<()> {
    let target = dir.join(name);
    if target.exists() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{} exists", target.display()),
        ));
    }
    let temp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = write_synced(&temp, bytes).and_then(|()| publish(&temp, &target));
    let removed = fs::remove_file(&temp);
    result?;
    match removed {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    sync_dir(dir)
}

fn write_synced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = OpenOptions::new().write(true).create_new(true).open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// Makes the directory entries durable (a no-op where directories cannot be opened).
fn sync_dir(dir: &Path) -> io::Result<()> {
    match File::open(dir) {
        Ok(handle) => match handle.sync_all() {
            Ok(()) => Ok(()),
            // Some platforms refuse fsync on a directory handle; the file itself is synced.
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::InvalidInput => Ok(()),
            Err(e) => Err(e),
        },
        Err(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests;
