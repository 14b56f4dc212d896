//! Severity of a validator failure: P0/P1 block a merge, P2 warns, P3 is only recorded.

use std::fmt;
use std::str::FromStr;

/// How much a failed validator matters. Ordered from most (`P0`) to least (`P3`) severe,
/// so `P0 < P3` in the derived order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Blocks the merge.
    P0,
    /// Blocks the merge.
    P1,
    /// A non-blocking warning shown in the diagnostic comment.
    P2,
    /// Recorded only.
    P3,
}

impl Severity {
    /// Whether a failure at this severity blocks the merge.
    pub fn blocks(self) -> bool {
        matches!(self, Self::P0 | Self::P1)
    }

    /// `"P0"` .. `"P3"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::P0 => "P0",
            Self::P1 => "P1",
            Self::P2 => "P2",
            Self::P3 => "P3",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The text was not one of `P0`, `P1`, `P2`, `P3`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid severity {0:?}: expected P0, P1, P2 or P3")]
pub struct ParseSeverityError(String);

impl FromStr for Severity {
    type Err = ParseSeverityError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "P0" => Ok(Self::P0),
            "P1" => Ok(Self::P1),
            "P2" => Ok(Self::P2),
            "P3" => Ok(Self::P3),
            other => Err(ParseSeverityError(other.chars().take(40).collect())),
        }
    }
}
