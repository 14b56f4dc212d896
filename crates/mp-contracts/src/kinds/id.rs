//! Contract ids: `ContractId` for any kind, and the typed ids that references use.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::Kind;

/// Why a text is not a contract id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not {expected}")]
pub struct ParseIdError {
    text: String,
    expected: &'static str,
}

/// Checks `<prefix>-<at least three ASCII digits>`; `prefix_ok` judges the prefix.
fn well_formed(text: &str, prefix_ok: impl Fn(&str) -> bool) -> bool {
    let Some((prefix, number)) = text.split_once('-') else {
        return false;
    };
    prefix_ok(prefix) && number.len() >= 3 && number.bytes().all(|b| b.is_ascii_digit())
}

/// The id of a contract of any kind: two to four upper-case ASCII letters, a hyphen and at
/// least three ASCII digits (`IC-101`, `TS-0042`). The schema of each kind narrows the
/// prefix (see [`Kind::id_prefix`]).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ContractId(String);

impl ContractId {
    /// Parses an id of any kind.
    ///
    /// # Errors
    /// Returns [`ParseIdError`] when the text does not have the common id shape.
    pub fn parse(text: &str) -> Result<Self, ParseIdError> {
        let prefix_ok =
            |p: &str| (2..=4).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_uppercase());
        if well_formed(text, prefix_ok) {
            Ok(Self(text.to_owned()))
        } else {
            Err(ParseIdError {
                text: text.to_owned(),
                expected: "a contract id like IC-101 (2-4 capitals, a hyphen, 3+ digits)",
            })
        }
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The kind its prefix names, if it is one of the five.
    pub fn kind(&self) -> Option<Kind> {
        let prefix = self.0.split_once('-').map_or("", |(p, _)| p);
        Kind::ALL.into_iter().find(|k| k.id_prefix() == prefix)
    }
}

impl fmt::Display for ContractId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for ContractId {
    type Err = ParseIdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl Serialize for ContractId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for ContractId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// Declares an id type that accepts only one kind's prefix.
macro_rules! kind_id {
    ($(#[$doc:meta])* $name:ident, $kind:expr, $example:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(ContractId);

        impl $name {
            /// The kind this id refers to.
            pub const KIND: Kind = $kind;

            /// Parses an id with this kind's prefix.
            ///
            /// # Errors
            /// Returns [`ParseIdError`] when the text is not an id of this kind.
            pub fn parse(text: &str) -> Result<Self, ParseIdError> {
                let prefix = Self::KIND.id_prefix();
                if well_formed(text, |p| p == prefix) {
                    Ok(Self(ContractId(text.to_owned())))
                } else {
                    Err(ParseIdError {
                        text: text.to_owned(),
                        expected: concat!("an id like ", $example),
                    })
                }
            }

            /// The id as text.
            pub fn as_str(&self) -> &str {
                self.0.as_str()
            }

            /// The same id, untyped.
            pub fn as_contract_id(&self) -> &ContractId {
                &self.0
            }
        }

        impl From<$name> for ContractId {
            fn from(id: $name) -> Self {
                id.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = ParseIdError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::parse(s)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = String::deserialize(deserializer)?;
                Self::parse(&text).map_err(serde::de::Error::custom)
            }
        }
    };
}

kind_id!(
    /// The id of an IntentContract (`IC-<digits>`), as `TaskSeed.intentId` holds it.
    IntentId,
    Kind::IntentContract,
    "IC-101"
);
kind_id!(
    /// The id of a TaskSeed (`TS-<digits>`), as `Acceptance.taskSeedId` and
    /// `Evidence.taskSeedId` hold it.
    TaskSeedId,
    Kind::TaskSeed,
    "TS-101"
);
kind_id!(
    /// The id of an Acceptance (`AC-<digits>`), as `PublishGate.entityId` holds it.
    AcceptanceId,
    Kind::Acceptance,
    "AC-101"
);
