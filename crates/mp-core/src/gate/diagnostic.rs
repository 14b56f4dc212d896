//! The PR diagnostic comment: every blocking result as one line, then the warnings, and
//! the dedupe rule that keeps the bot from posting the same diagnostic twice.
//!
//! ```text
//! Merge Gate L1 — merge blocked:
//! - C1: label 'ready-to-merge' not set on PR #7
//! - C4: PR base abc1234 is stale (main HEAD is def5678). Rebase the PR.
//!
//! Warnings (non-blocking):
//! - L4: commit abc1234 declares Agent-Tool 'x' / Agent-Model 'y', not present in the agent registry
//!
//! Fix the blocking items above; the bot re-evaluates this pull request on its next tick.
//! ```

use std::fmt::Write as _;

use super::{ConditionResult, GateReport};
use crate::context::Comment;
use crate::ids::Login;
use crate::quadrant::Quadrant;

/// Every gate comment of the bot starts with this; only such bot comments are compared
/// for dedupe.
pub const DIAGNOSTIC_PREFIX: &str = "Merge Gate L1";
/// First line of a blocked diagnostic.
pub const BLOCKED_HEADER: &str = "Merge Gate L1 — merge blocked:";
/// Heading of the non-blocking warning lines.
pub const WARNINGS_HEADER: &str = "Warnings (non-blocking):";
/// Last line of a blocked diagnostic.
pub const CLOSING_LINE: &str =
    "Fix the blocking items above; the bot re-evaluates this pull request on its next tick.";
/// Bodies are kept under this many bytes (GitHub refuses comments over 65 536 characters);
/// lines beyond it are summarised as a count.
pub const MAX_BODY_BYTES: usize = 60_000;

/// Room kept for the closing lines and the "more" summaries.
const RESERVE: usize = 400;

/// Appends `- <line>` for each result while the body stays under `limit`, then one line
/// counting the rest.
fn push_lines<'a>(
    body: &mut String,
    results: impl Iterator<Item = &'a ConditionResult>,
    limit: usize,
    what: &str,
) {
    let mut omitted = 0usize;
    for result in results {
        let line = format!("- {}\n", result.to_string().replace(['\r', '\n'], " "));
        if omitted == 0 && body.len() + line.len() <= limit {
            body.push_str(&line);
        } else {
            omitted += 1;
        }
    }
    if omitted > 0 {
        // Writing to a String cannot fail.
        let _ = writeln!(body, "- … and {omitted} more {what} (see the audit log)");
    }
}

/// The diagnostic comment for a report, or `None` when nothing blocks (the bot posts no
/// diagnostic then).
pub fn render_diagnostic(report: &GateReport) -> Option<String> {
    if report.passed() {
        return None;
    }
    let limit = MAX_BODY_BYTES - RESERVE;
    let mut body = format!("{BLOCKED_HEADER}\n");
    push_lines(&mut body, report.blocking(), limit, "blocking items");
    let mut warnings = report.warnings().peekable();
    if warnings.peek().is_some() {
        body.push('\n');
        body.push_str(WARNINGS_HEADER);
        body.push('\n');
        push_lines(&mut body, warnings, limit, "warnings");
    }
    body.push('\n');
    body.push_str(CLOSING_LINE);
    body.push('\n');
    Some(body)
}

/// The text for a report where every condition holds (kept for the CLI and logs; the bot
/// does not post it).
pub fn render_all_pass(quadrant: Quadrant) -> String {
    format!("{DIAGNOSTIC_PREFIX} — all conditions satisfied (Quadrant: {quadrant}).")
}

/// The bot's latest gate comment among `comments` (in comment order): authored by `bot`
/// and starting with [`DIAGNOSTIC_PREFIX`]. Its id is the one to update.
pub fn latest_diagnostic<'a>(comments: &'a [Comment], bot: &Login) -> Option<&'a Comment> {
    comments.iter().rev().find(|c| {
        c.author.as_ref() == Some(bot) && c.body.trim_start().starts_with(DIAGNOSTIC_PREFIX)
    })
}

fn normalise(body: &str) -> String {
    body.replace("\r\n", "\n").trim().to_owned()
}

/// Whether to post `new_body`, given the body of the bot's latest gate comment (see
/// [`latest_diagnostic`]): post unless it says the same thing (line endings and
/// surrounding whitespace ignored).
pub fn should_post(previous_bot_comment_body: Option<&str>, new_body: &str) -> bool {
    previous_bot_comment_body.is_none_or(|previous| normalise(previous) != normalise(new_body))
}

#[cfg(test)]
mod tests;
