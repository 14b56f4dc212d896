//! The fields every contract carries: schema version, id, kind, state, version, times.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{ContractId, DateTime};

/// The five contract kinds, as the `kind` field names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Kind {
    /// What was asked for and which capabilities it needs (`IC-<n>`).
    IntentContract,
    /// An executable unit of work generated from an intent (`TS-<n>`).
    TaskSeed,
    /// The verification result of a task seed's execution (`AC-<n>`).
    Acceptance,
    /// Whether an acceptance may be published, and who approved it (`PG-<n>`).
    PublishGate,
    /// The reproducible record of one execution (`EV-<n>`).
    Evidence,
}

impl Kind {
    /// Every kind, in the order of the generation flow.
    pub const ALL: [Kind; 5] = [
        Kind::IntentContract,
        Kind::TaskSeed,
        Kind::Acceptance,
        Kind::PublishGate,
        Kind::Evidence,
    ];

    /// The name as the `kind` field writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::IntentContract => "IntentContract",
            Kind::TaskSeed => "TaskSeed",
            Kind::Acceptance => "Acceptance",
            Kind::PublishGate => "PublishGate",
            Kind::Evidence => "Evidence",
        }
    }

    /// The kind a `kind` field names, if any (case-sensitive).
    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// The id prefix of this kind (`IC`, `TS`, `AC`, `PG`, `EV`).
    pub fn id_prefix(self) -> &'static str {
        match self {
            Kind::IntentContract => "IC",
            Kind::TaskSeed => "TS",
            Kind::Acceptance => "AC",
            Kind::PublishGate => "PG",
            Kind::Evidence => "EV",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The lifecycle state shared by every kind (case-sensitive in JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum State {
    /// Editable; cannot run.
    Draft,
    /// Runnable; may emit events.
    Active,
    /// Paused pending investigation; nothing runs automatically.
    Frozen,
    /// The final effective state after the publish decision.
    Published,
    /// Replaced by a later version.
    Superseded,
    /// Explicitly invalidated.
    Revoked,
    /// Kept for the record only; no further change.
    Archived,
}

impl State {
    /// Every state.
    pub const ALL: [State; 7] = [
        State::Draft,
        State::Active,
        State::Frozen,
        State::Published,
        State::Superseded,
        State::Revoked,
        State::Archived,
    ];

    /// The name as the `state` field writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Draft => "Draft",
            State::Active => "Active",
            State::Frozen => "Frozen",
            State::Published => "Published",
            State::Superseded => "Superseded",
            State::Revoked => "Revoked",
            State::Archived => "Archived",
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `schemaVersion` these types and the bundled schemas implement: `1.0.0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum SchemaVersion {
    /// `1.0.0`, the agent-protocols v1 contract schemas.
    #[default]
    #[serde(rename = "1.0.0")]
    V1_0_0,
}

impl SchemaVersion {
    /// The version as written.
    pub fn as_str(self) -> &'static str {
        match self {
            SchemaVersion::V1_0_0 => "1.0.0",
        }
    }
}

/// A contract's revision number (`version`, at least 1). A successor of the same contract
/// has a strictly greater version.
///
/// JSON Schema counts any number with a zero fraction as an integer, so `1.0` and `2e0` are
/// read as 1 and 2; they serialize back as plain integers. Values above `u64::MAX` are
/// valid for the schema but not representable here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version(u64);

/// Why a number is not a contract version.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("`{0}` is not a contract version (an integer of at least 1)")]
pub struct VersionError(String);

impl Version {
    /// The first version.
    pub const FIRST: Version = Version(1);

    /// A version from its number.
    ///
    /// # Errors
    /// Returns [`VersionError`] for 0.
    pub fn new(number: u64) -> Result<Self, VersionError> {
        if number == 0 {
            Err(VersionError(number.to_string()))
        } else {
            Ok(Self(number))
        }
    }

    /// The number.
    pub fn get(self) -> u64 {
        self.0
    }

    /// The next version (saturating).
    pub fn next(self) -> Version {
        Version(self.0.saturating_add(1))
    }

    fn from_f64(value: f64) -> Result<Self, VersionError> {
        // 2^64 as f64; every integral f64 below it converts exactly.
        const LIMIT: f64 = 18_446_744_073_709_551_616.0;
        if value.fract() == 0.0 && (1.0..LIMIT).contains(&value) {
            Ok(Self(value as u64))
        } else {
            Err(VersionError(value.to_string()))
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl Serialize for Version {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(self.0)
    }
}

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Version;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an integer of at least 1")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Version, E> {
                Version::new(v).map_err(E::custom)
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Version, E> {
                u64::try_from(v)
                    .map_err(|_| E::custom(VersionError(v.to_string())))
                    .and_then(|n| Version::new(n).map_err(E::custom))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Version, E> {
                Version::from_f64(v).map_err(E::custom)
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// The common fields of every contract, except `kind`, which [`crate::Body`] carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Common {
    /// `schemaVersion`: always `1.0.0`.
    pub schema_version: SchemaVersion,
    /// `id`: its prefix must name the contract's kind.
    pub id: ContractId,
    /// `state`.
    pub state: State,
    /// `version`: at least 1.
    pub version: Version,
    /// `createdAt`.
    pub created_at: DateTime,
    /// `updatedAt`. No rule orders it against `createdAt`.
    pub updated_at: DateTime,
}
