//! The four classifier quadrants: reversibility x criticality.

use std::fmt;
use std::str::FromStr;

/// A change's quadrant. The derived order is the escalation order `A < C < B < D`, so the
/// classifier verdict is the maximum of the votes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Quadrant {
    /// Reversible and not critical: merges on green.
    A,
    /// Irreversible but not critical: merges on green, with an audit issue.
    C,
    /// Reversible but critical: merges on green, with an audit issue.
    B,
    /// Irreversible and critical: needs the owner's decision.
    D,
}

impl Quadrant {
    /// `"A"` .. `"D"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::A => "A",
            Self::B => "B",
            Self::C => "C",
            Self::D => "D",
        }
    }

    /// Whether this quadrant passes C3 without the owner's approval.
    pub fn auto_approved(self) -> bool {
        self != Self::D
    }
}

impl fmt::Display for Quadrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The text was not one of `A`, `B`, `C`, `D`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid quadrant {0:?}: expected A, B, C or D")]
pub struct ParseQuadrantError(String);

impl FromStr for Quadrant {
    type Err = ParseQuadrantError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "A" => Ok(Self::A),
            "B" => Ok(Self::B),
            "C" => Ok(Self::C),
            "D" => Ok(Self::D),
            other => Err(ParseQuadrantError(other.chars().take(40).collect())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escalation_order_is_a_c_b_d() {
        let mut all = [Quadrant::D, Quadrant::B, Quadrant::A, Quadrant::C];
        all.sort();
        assert_eq!(all, [Quadrant::A, Quadrant::C, Quadrant::B, Quadrant::D]);
    }
}
