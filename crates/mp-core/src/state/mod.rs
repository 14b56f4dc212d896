//! The bot's durable state on the governance repository's `bot-state` branch (bot.md §16):
//! the branch supervisor's watermarks, the L4 burn-in clock, and who may have written them
//! (`writers`: only mp, or the owner restoring them, by GitHub's activity log).
//!
//! Pure models only: text in, values out, and back again. Reading and writing the files
//! goes through the GitHub port in the tick (`mp_tick::state_store`).
//!
//! The two files fail in opposite directions on purpose. Corrupt watermarks stop the tick
//! (fail closed): guessing them would either re-walk old history and flood incidents, or
//! skip history and hide them. A bad burn-in clock restarts the clock (fail safe): the
//! worst outcome is that L4 stays advisory a little longer.

pub mod watermarks;
pub mod writers;

#[cfg(test)]
mod tests;

pub use crate::gate::burn_in::BURN_IN_STATE_PATH;
pub use watermarks::{
    BREAK_GLASS_PENDING_KEY, CHECKED_THROUGH_KEY, CorruptStateError, Layer, UNSETTLED_KEY,
    Watermarks,
};
pub use writers::{StateWriters, Steered, check_state_writers, restored_text};

use crate::gate::burn_in::{BurnInState, StoredBurnIn};

/// The branch of the governance repository that holds the state; never `main`.
pub const BOT_STATE_BRANCH: &str = "bot-state";

/// The watermarks file on [`BOT_STATE_BRANCH`].
pub const WATERMARKS_PATH: &str = "bot-state/branch_supervisor_watermarks.json";

/// The commit message of every watermarks write.
pub const WATERMARKS_COMMIT_MESSAGE: &str = "chore(bot-state): update branch_supervisor watermarks";

/// The commit message of every burn-in clock write.
pub const BURN_IN_COMMIT_MESSAGE: &str = "chore(bot-state): update l4 burn-in clock";

/// The burn-in clock as read from storage, fail-safe: a missing file and a file that could
/// not be read both restart the clock, and a corrupt one restarts it with the reason.
///
/// `read` is the file text (`Ok(None)`: no file) or why it could not be read. The second
/// value is a warning for the tick report when the read failed.
pub fn stored_burn_in(read: Result<Option<&str>, String>) -> (StoredBurnIn, Option<String>) {
    match read {
        Ok(text) => (StoredBurnIn::from_json(text), None),
        Err(reason) => (
            StoredBurnIn::Missing,
            Some(format!(
                "{BURN_IN_STATE_PATH} could not be read ({reason}); the burn-in clock restarts (fail-safe)"
            )),
        ),
    }
}

/// The burn-in state file's text (JSON, trailing newline).
pub fn burn_in_text(state: &BurnInState) -> String {
    state.to_json()
}
