//! Shards of a tick (`mp tick --shard I/N`): a stable share of the supervised repositories,
//! so that N ticks on an existing scheduler (a GitHub Actions matrix, a Kubernetes indexed
//! Job) together do the work of one tick. The state stays in GitHub, so the shards share
//! nothing but the `bot-state` branch (see `state_store` for how their saves merge).
//!
//! Shards are numbered from 0: `I/N` with `0 <= I < N` and `N >= 1`; `0/1` is the whole
//! tick. A repository belongs to shard `fnv1a64(name) mod N`, where `name` is the
//! lower-cased `owner/name` as UTF-8 bytes and `fnv1a64` is 64-bit FNV-1a (offset basis
//! `0xcbf29ce484222325`, prime `0x100000001b3`). The function is fixed: changing it would
//! move repositories between shards, so its values are pinned by tests. Work that belongs
//! to no repository (the drift check) runs in shard 0 only; docs/decisions/0021 lists the
//! decision for every step of the tick.

use std::fmt;
use std::str::FromStr;

use crate::ids::RepoName;

#[cfg(test)]
mod tests;

const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// 64-bit FNV-1a of `bytes`: the stable hash behind [`Shard::of`].
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(FNV_OFFSET_BASIS, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(FNV_PRIME)
    })
}

/// One shard of a tick: `index` of `count`, 0-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Shard {
    index: u32,
    count: u32,
}

/// Why a shard text such as `1/3` was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseShardError {
    /// The text is not `I/N`.
    #[error("shard {text:?} is not of the form I/N (e.g. 0/3)")]
    Shape {
        /// The text given.
        text: String,
    },
    /// One side is not a whole number.
    #[error("shard {text:?}: {part:?} is not a whole number")]
    NotANumber {
        /// The text given.
        text: String,
        /// The side that did not parse.
        part: String,
    },
    /// `N` is 0.
    #[error("shard {text:?}: the shard count must be at least 1")]
    NoShards {
        /// The text given.
        text: String,
    },
    /// `I` is not below `N` (shards are numbered from 0).
    #[error(
        "shard {text:?}: the index {index} must be below the count {count} (shards are numbered from 0)"
    )]
    IndexOutOfRange {
        /// The text given.
        text: String,
        /// The index.
        index: u32,
        /// The count.
        count: u32,
    },
}

impl ParseShardError {
    /// Stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Shape { .. } => "shard_shape",
            Self::NotANumber { .. } => "shard_not_a_number",
            Self::NoShards { .. } => "shard_count_zero",
            Self::IndexOutOfRange { .. } => "shard_index_out_of_range",
        }
    }
}

impl Shard {
    /// The whole tick as one shard, `0/1`.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// Shard `index` of `count`.
    ///
    /// # Errors
    /// [`ParseShardError::NoShards`] when `count` is 0,
    /// [`ParseShardError::IndexOutOfRange`] when `index >= count`.
    pub fn new(index: u32, count: u32) -> Result<Self, ParseShardError> {
        let text = format!("{index}/{count}");
        if count == 0 {
            return Err(ParseShardError::NoShards { text });
        }
        if index >= count {
            return Err(ParseShardError::IndexOutOfRange { text, index, count });
        }
        Ok(Self { index, count })
    }

    /// Parses `I/N` (surrounding spaces allowed around each number).
    ///
    /// # Errors
    /// [`ParseShardError`] naming what is wrong.
    pub fn parse(text: &str) -> Result<Self, ParseShardError> {
        let Some((index, count)) = text.split_once('/') else {
            return Err(ParseShardError::Shape {
                text: text.to_owned(),
            });
        };
        let number = |part: &str| {
            let part = part.trim();
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return Err(ParseShardError::NotANumber {
                    text: text.to_owned(),
                    part: part.to_owned(),
                });
            }
            part.parse::<u32>()
                .map_err(|_| ParseShardError::NotANumber {
                    text: text.to_owned(),
                    part: part.to_owned(),
                })
        };
        let (index, count) = (number(index)?, number(count)?);
        Self::new(index, count).map_err(|error| match error {
            ParseShardError::NoShards { .. } => ParseShardError::NoShards {
                text: text.to_owned(),
            },
            ParseShardError::IndexOutOfRange { index, count, .. } => {
                ParseShardError::IndexOutOfRange {
                    text: text.to_owned(),
                    index,
                    count,
                }
            }
            other => other,
        })
    }

    /// The shard's number, from 0.
    pub fn index(self) -> u32 {
        self.index
    }

    /// How many shards there are.
    pub fn count(self) -> u32 {
        self.count
    }

    /// Whether this is the first shard, which also runs the work of no repository.
    pub fn is_first(self) -> bool {
        self.index == 0
    }

    /// The shard number of `repo` among `count` shards (`count` 0 counts as 1).
    pub fn number_of(repo: &RepoName, count: u32) -> u32 {
        let hash = fnv1a64(repo.as_str().as_bytes());
        let number = hash % u64::from(count.max(1));
        u32::try_from(number).expect("a remainder below a u32 count fits in a u32")
    }

    /// The shard of `count` that owns `repo`.
    pub fn of(repo: &RepoName, count: u32) -> Self {
        Self {
            index: Self::number_of(repo, count),
            count: count.max(1),
        }
    }

    /// Whether `repo` belongs to this shard.
    pub fn owns(self, repo: &RepoName) -> bool {
        Self::number_of(repo, self.count) == self.index
    }
}

impl fmt::Display for Shard {
    /// `I/N`, as parsed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = ParseShardError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse(text)
    }
}
