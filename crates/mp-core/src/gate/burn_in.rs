//! The L4 burn-in clock: L4 stays advisory (P2) for a number of days after the clock
//! starts, then is promoted to blocking (P0). A pure function of the stored state and `now`.
//!
//! The clock is opt-in (`l4_burn_in_days`, 0 = off) and yields to any severity override of
//! the registry validator. A missing or corrupt state file restarts the clock (fail-safe:
//! it never promotes early). The caller writes [`BurnInOutcome::write`] when it is set.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::DEFAULT_REGISTRY_SEVERITY;
use crate::ids::Timestamp;
use crate::severity::Severity;

/// Where the state lives on the governance repository's `bot-state` branch.
pub const BURN_IN_STATE_PATH: &str = "bot-state/l4_burn_in.json";

/// The stored clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BurnInState {
    /// When the advisory period started.
    pub advisory_started_at: Timestamp,
    /// When L4 was first seen promoted, once it has been.
    pub promoted_at: Option<Timestamp>,
}

#[derive(Serialize, Deserialize)]
struct StateFile {
    advisory_started_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    promoted_at: Option<String>,
}

impl BurnInState {
    /// The state file's JSON text: `{"advisory_started_at": "...Z", "promoted_at": "...Z"}`
    /// (`promoted_at` omitted until promotion), with a trailing newline.
    pub fn to_json(&self) -> String {
        let file = StateFile {
            advisory_started_at: self.advisory_started_at.to_string(),
            promoted_at: self.promoted_at.map(|t| t.to_string()),
        };
        let mut text =
            serde_json::to_string_pretty(&file).expect("a struct of strings always serialises");
        text.push('\n');
        text
    }
}

/// The state as read from storage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoredBurnIn {
    /// No state file (or it could not be read).
    Missing,
    /// The file exists but is not a valid state.
    Corrupt {
        /// What is wrong with it.
        reason: String,
    },
    /// A valid state.
    Parsed(BurnInState),
}

impl StoredBurnIn {
    /// Reads the state file's text; `None` means the file is missing.
    pub fn from_json(text: Option<&str>) -> Self {
        let Some(text) = text else {
            return Self::Missing;
        };
        let corrupt = |reason: String| Self::Corrupt { reason };
        let file: StateFile = match serde_json::from_str(text) {
            Ok(file) => file,
            Err(err) => return corrupt(format!("not a burn-in state: {err}")),
        };
        let advisory_started_at = match Timestamp::parse(&file.advisory_started_at) {
            Ok(at) => at,
            Err(err) => return corrupt(format!("advisory_started_at: {err}")),
        };
        let promoted_at = match file.promoted_at.as_deref().map(Timestamp::parse) {
            None => None,
            Some(Ok(at)) => Some(at),
            Some(Err(err)) => return corrupt(format!("promoted_at: {err}")),
        };
        Self::Parsed(BurnInState {
            advisory_started_at,
            promoted_at,
        })
    }
}

/// Why the clock gave the severity it gave.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BurnInStatus {
    /// The clock is off (`l4_burn_in_days` is 0).
    Off,
    /// A severity override for the registry validator wins; the clock is inert.
    Overridden {
        /// The overriding severity.
        severity: Severity,
    },
    /// No state file: the clock starts now.
    Started,
    /// The state file is corrupt: the clock restarts now (fail-safe).
    Restarted {
        /// What was wrong with the file.
        reason: String,
    },
    /// Still advisory.
    Advisory {
        /// When promotion happens.
        promotes_at: Timestamp,
    },
    /// Promoted to blocking.
    Promoted {
        /// When promotion was first recorded.
        since: Timestamp,
    },
}

impl BurnInStatus {
    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Off => "burn_in_off",
            Self::Overridden { .. } => "burn_in_overridden",
            Self::Started => "burn_in_started",
            Self::Restarted { .. } => "burn_in_restarted",
            Self::Advisory { .. } => "burn_in_advisory",
            Self::Promoted { .. } => "burn_in_promoted",
        }
    }
}

impl fmt::Display for BurnInStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Off => f.write_str("L4 burn-in is off"),
            Self::Overridden { severity } => {
                write!(
                    f,
                    "L4 severity is overridden to {severity}; burn-in is inert"
                )
            }
            Self::Started => f.write_str("L4 burn-in clock started"),
            Self::Restarted { reason } => {
                write!(
                    f,
                    "L4 burn-in state was corrupt ({reason}); clock restarted"
                )
            }
            Self::Advisory { promotes_at } => {
                write!(f, "L4 is advisory until {promotes_at}")
            }
            Self::Promoted { since } => write!(f, "L4 is blocking since {since}"),
        }
    }
}

/// The clock's verdict for this tick.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BurnInOutcome {
    /// The L4 severity to use this tick.
    pub severity: Severity,
    /// Why.
    pub status: BurnInStatus,
    /// The state to store, when it changed; `None` means write nothing.
    pub write: Option<BurnInState>,
    /// Whether promotion happened on this tick (counted once in tick metrics).
    pub just_promoted: bool,
}

/// Runs the burn-in clock.
///
/// * `days == 0`: off; L4 stays at its default P2.
/// * `severity_override` set (either direction): that severity; the state is not touched.
/// * State missing or corrupt: start the clock at `now`, stay P2, write the new state.
/// * `now >= advisory_started_at + days`: P0; the first such tick records `promoted_at`
///   and sets `just_promoted`.
/// * Otherwise P2, nothing to write.
pub fn burn_in(
    days: u32,
    stored: &StoredBurnIn,
    severity_override: Option<Severity>,
    now: Timestamp,
) -> BurnInOutcome {
    let outcome = |severity, status, write| BurnInOutcome {
        severity,
        status,
        write,
        just_promoted: false,
    };
    if days == 0 {
        return outcome(DEFAULT_REGISTRY_SEVERITY, BurnInStatus::Off, None);
    }
    if let Some(severity) = severity_override {
        return outcome(severity, BurnInStatus::Overridden { severity }, None);
    }
    let fresh = BurnInState {
        advisory_started_at: now,
        promoted_at: None,
    };
    let state = match stored {
        StoredBurnIn::Missing => {
            return outcome(
                DEFAULT_REGISTRY_SEVERITY,
                BurnInStatus::Started,
                Some(fresh),
            );
        }
        StoredBurnIn::Corrupt { reason } => {
            let status = BurnInStatus::Restarted {
                reason: reason.clone(),
            };
            return outcome(DEFAULT_REGISTRY_SEVERITY, status, Some(fresh));
        }
        StoredBurnIn::Parsed(state) => *state,
    };
    let promotes_at = state.advisory_started_at.plus_hours(24 * i64::from(days));
    if now < promotes_at {
        return outcome(
            DEFAULT_REGISTRY_SEVERITY,
            BurnInStatus::Advisory { promotes_at },
            None,
        );
    }
    match state.promoted_at {
        Some(since) => outcome(Severity::P0, BurnInStatus::Promoted { since }, None),
        None => BurnInOutcome {
            severity: Severity::P0,
            status: BurnInStatus::Promoted { since: now },
            write: Some(BurnInState {
                promoted_at: Some(now),
                ..state
            }),
            just_promoted: true,
        },
    }
}

#[cfg(test)]
mod tests;
