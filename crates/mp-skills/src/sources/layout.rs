//! Where the files of trusted skill sources live, all relative to the adopter's config
//! directory (the directory `mp tick --config DIR` reads). Computing a path does no I/O.

use std::path::{Path, PathBuf};

use super::model::SourceId;

/// File name of the trust list, the org-curated lists and (inside a snapshot) the files
/// that are never read.
pub const TRUST_LIST_FILE: &str = "skill-sources.md";
/// File name of the discovery registry.
pub const REGISTRY_FILE: &str = "skill-sources-registry.md";
/// File name of the committed pin lock.
pub const PIN_LOCK_FILE: &str = "sources.lock";
/// Directory (under the config dir) holding one snapshot per source; gitignored.
pub const SNAPSHOTS_DIR: &str = ".mp-sources";
/// File name of the local lock, inside [`SNAPSHOTS_DIR`] so one gitignore line covers both.
pub const LOCAL_LOCK_FILE: &str = "local.lock";
/// The line an adopter's `.gitignore` needs (relative to the config dir).
pub const GITIGNORE_LINE: &str = "/.mp-sources/";

/// The paths of every sources file for one config directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourcesLayout {
    /// The adopter's config directory.
    pub config_dir: PathBuf,
    /// The trust list: `DIR/skill-sources.md` unless overridden.
    pub trust_list: PathBuf,
    /// The snapshot directory: `DIR/.mp-sources/`.
    pub snapshots: PathBuf,
    /// The committed pin lock: `DIR/sources.lock`.
    pub pin_lock: PathBuf,
    /// The local fetch lock: `DIR/.mp-sources/local.lock`.
    pub local_lock: PathBuf,
}

impl SourcesLayout {
    /// The default layout under `config_dir`.
    pub fn new(config_dir: &Path) -> Self {
        let snapshots = config_dir.join(SNAPSHOTS_DIR);
        Self {
            config_dir: config_dir.to_path_buf(),
            trust_list: config_dir.join(TRUST_LIST_FILE),
            local_lock: snapshots.join(LOCAL_LOCK_FILE),
            snapshots,
            pin_lock: config_dir.join(PIN_LOCK_FILE),
        }
    }

    /// The same layout with the trust list read from `path` instead.
    pub fn with_trust_list(mut self, path: PathBuf) -> Self {
        self.trust_list = path;
        self
    }

    /// The org-curated list of `org`: `DIR/organizations/<org>/skill-sources.md`.
    pub fn org_curated(&self, org: &str) -> PathBuf {
        self.config_dir
            .join("organizations")
            .join(org)
            .join(TRUST_LIST_FILE)
    }

    /// The discovery registry: `DIR/skill-sources-registry.md` (never read to fetch).
    pub fn registry(&self) -> PathBuf {
        self.config_dir.join(REGISTRY_FILE)
    }

    /// The snapshot of one source: `DIR/.mp-sources/<id>/`.
    pub fn snapshot(&self, id: &SourceId) -> PathBuf {
        self.snapshots.join(id.as_str())
    }

    /// The adopter's skills directory, where pointer files `<name>/source.md` sit.
    pub fn skills_dir(&self) -> PathBuf {
        self.config_dir.join("skills")
    }
}

#[cfg(test)]
mod tests;
