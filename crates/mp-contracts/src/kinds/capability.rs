//! `Capability`: what an intent may ask to do (a closed list).

use std::fmt;

use serde::{Deserialize, Serialize};

/// A capability an IntentContract requests and a TaskSeed snapshots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Capability {
    /// `read_repo`: read the repository.
    ReadRepo,
    /// `write_repo`: write to the repository.
    WriteRepo,
    /// `install_deps`: add or install dependencies.
    InstallDeps,
    /// `network_access`: reach the network.
    NetworkAccess,
    /// `read_secrets`: read secrets.
    ReadSecrets,
    /// `publish_release`: publish a release.
    PublishRelease,
}

impl Capability {
    /// Every capability.
    pub const ALL: [Capability; 6] = [
        Capability::ReadRepo,
        Capability::WriteRepo,
        Capability::InstallDeps,
        Capability::NetworkAccess,
        Capability::ReadSecrets,
        Capability::PublishRelease,
    ];

    /// The name as JSON writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Capability::ReadRepo => "read_repo",
            Capability::WriteRepo => "write_repo",
            Capability::InstallDeps => "install_deps",
            Capability::NetworkAccess => "network_access",
            Capability::ReadSecrets => "read_secrets",
            Capability::PublishRelease => "publish_release",
        }
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
