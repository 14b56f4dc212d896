//! `EtagCache`: GET answers kept by URL with their `ETag`, for conditional requests across
//! runs.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The file format version [`EtagCache::save`] writes and [`EtagCache::load`] accepts.
const VERSION: u32 = 1;

/// Cached GET answers keyed by the full request URL: the `ETag`, the body and the `Link`
/// header. A 304 answer reuses the body and the link.
///
/// Only entries read or stored since the cache was loaded are saved, so the file holds
/// what the last run needed and does not grow without bound.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EtagCache {
    entries: BTreeMap<String, CacheEntry>,
    used: BTreeSet<String>,
}

/// One cached answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct CacheEntry {
    pub(crate) etag: String,
    pub(crate) body: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) link: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct CacheFile {
    version: u32,
    entries: BTreeMap<String, CacheEntry>,
}

impl EtagCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads a cache file. Losing the cache only costs requests, so nothing fails: a
    /// missing file gives an empty cache, an unreadable or corrupt one an empty cache and
    /// a warning naming the file.
    pub fn load(path: &Path) -> (Self, Option<String>) {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return (Self::new(), None),
            Err(err) => {
                let warning = format!(
                    "etag cache {} unreadable, starting empty: {err}",
                    path.display()
                );
                return (Self::new(), Some(warning));
            }
        };
        match serde_json::from_str::<CacheFile>(&text) {
            Ok(file) if file.version == VERSION => (
                Self {
                    entries: file.entries,
                    used: BTreeSet::new(),
                },
                None,
            ),
            Ok(file) => (
                Self::new(),
                Some(format!(
                    "etag cache {} has version {}, expected {VERSION}; starting empty",
                    path.display(),
                    file.version
                )),
            ),
            Err(err) => (
                Self::new(),
                Some(format!(
                    "etag cache {} is corrupt, starting empty: {err}",
                    path.display()
                )),
            ),
        }
    }

    /// Writes the entries used or stored since loading, atomically: a temporary file in
    /// the same directory, then a rename over `path`.
    ///
    /// # Errors
    /// The I/O error of creating, writing or renaming the file.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let file = CacheFile {
            version: VERSION,
            entries: self
                .entries
                .iter()
                .filter(|(url, _)| self.used.contains(*url))
                .map(|(url, entry)| (url.clone(), entry.clone()))
                .collect(),
        };
        let json = serde_json::to_vec(&file).map_err(std::io::Error::other)?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "etag-cache".to_owned());
        let temp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
        let written = (|| {
            let mut out = std::fs::File::create(&temp)?;
            out.write_all(&json)?;
            out.sync_all()?;
            std::fs::rename(&temp, path)
        })();
        if written.is_err() {
            // Best effort: the temporary file is useless once the save failed.
            let _ = std::fs::remove_file(&temp);
        }
        written
    }

    /// How many entries the cache holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the cache holds no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The `ETag` stored for `url`.
    pub(crate) fn etag(&self, url: &str) -> Option<&str> {
        self.entries.get(url).map(|e| e.etag.as_str())
    }

    /// The entry for `url`, marked as used.
    pub(crate) fn reuse(&mut self, url: &str) -> Option<CacheEntry> {
        let entry = self.entries.get(url).cloned()?;
        self.used.insert(url.to_owned());
        Some(entry)
    }

    /// Stores (or replaces) the entry for `url`, marked as used.
    pub(crate) fn store(&mut self, url: &str, entry: CacheEntry) {
        self.used.insert(url.to_owned());
        self.entries.insert(url.to_owned(), entry);
    }

    /// Drops the entry for `url` (its resource answered without an `ETag`).
    pub(crate) fn forget(&mut self, url: &str) {
        self.entries.remove(url);
        self.used.remove(url);
    }
}
