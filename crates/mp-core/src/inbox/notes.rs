//! The comments the inbox poller writes, each ending with a hidden marker so a later tick
//! can tell it has already said something (bot.md §10.2 steps 3-6), and reading those
//! markers back from the bot's own comments.
//!
//! ```text
//! <!-- decision-inbox-note: deferred -->      (also stale-head, integrity-failed, pr-closed)
//! <!-- decision-inbox-failures: 2 -->         (the poison guard's counter, docs/decisions/0005)
//! ```

use crate::approval::receipt::{MARKER_END, marker_value};
use crate::context::{Comment, CommentId};
use crate::ids::{CommitSha, Login};

use super::question::IntegrityFailure;
use super::signals::OwnerVerdict;

/// Start of the marker line naming what a poller comment said.
pub const NOTE_MARKER: &str = "<!-- decision-inbox-note:";
/// Start of the marker line carrying the poison guard's count of consecutive failures.
pub const FAILURES_MARKER: &str = "<!-- decision-inbox-failures:";

/// The note of the comment acknowledging `/approve C`.
pub const DEFERRED_NOTE: &str = "deferred";
/// The note of the comment saying the head moved.
pub const STALE_NOTE: &str = "stale-head";
/// The note of the comment saying the body failed its integrity check.
pub const INTEGRITY_NOTE: &str = "integrity-failed";
/// The note of the comment closing the issue because its pull request is gone.
pub const PR_CLOSED_NOTE: &str = "pr-closed";
/// The note of the comment closing a pull request on `/reject`.
pub const REJECTED_NOTE: &str = "rejected";

fn note(name: &str) -> String {
    format!("{NOTE_MARKER} {name} {MARKER_END}\n")
}

/// Whether `bot` wrote a comment carrying the note `name`.
pub fn has_note(comments: &[Comment], bot: &Login, name: &str) -> bool {
    comments.iter().any(|comment| {
        comment.author.as_ref() == Some(bot)
            && marker_value(&comment.body, NOTE_MARKER) == Some(name)
    })
}

/// The note of the comment closing a pull request on `/reject` in the inbox issue
/// `issue_ref`: a pull request turned down, reopened and turned down again in another
/// issue gets a second comment, a retried rejection does not.
pub fn rejected_note(issue_ref: &str) -> String {
    format!("{REJECTED_NOTE} {issue_ref}")
}

/// The comment on the pull request before it is closed on `/reject`.
pub fn rejected_comment(issue_ref: &str, verdict: &OwnerVerdict) -> String {
    format!(
        "Closed per Decision Inbox `/reject`: {actor} turned this pull request down in {issue_ref}. \
         Nothing was merged; reopening it needs a new decision.\n\
         {marker}",
        actor = verdict.actor,
        marker = note(&rejected_note(issue_ref)),
    )
}

/// The comment on the issue acknowledging `/approve C`.
pub fn deferred_comment(pr_ref: &str, verdict: &OwnerVerdict) -> String {
    format!(
        "Deferred per `/approve C` from {actor}: `{pr_ref}` now carries `decision:deferred` and \
         will not merge on this question's account. The issue stays open, so a later approval \
         or rejection here still counts.\n\
         {marker}",
        actor = verdict.actor,
        marker = note(DEFERRED_NOTE),
    )
}

/// The comment on the issue when the pull request's head moved away from the recorded one.
pub fn stale_comment(pr_ref: &str, recorded: &CommitSha, current: &CommitSha) -> String {
    format!(
        "⚠️ The head of `{pr_ref}` changed since this question was opened (`{old}` → `{new}`). \
         Decisions here are bound to `{old}`, so none is applied to the new head. If the head \
         goes back to `{old}`, the latest decision applies again; otherwise close this issue \
         and the next tick asks again about `{new}`.\n\
         {marker}",
        old = recorded.short(),
        new = current.short(),
        marker = note(STALE_NOTE),
    )
}

/// The comment on the issue when its body fails the integrity check.
pub fn integrity_comment(failure: IntegrityFailure) -> String {
    format!(
        "⚠️ This inbox question failed its integrity check: {failure}. The body may have been \
         edited or pasted from another issue after the bot wrote it, so no vote on it is \
         applied. If the pull request still waits for a decision, the bot asks again in a \
         fresh issue; close this one.\n\
         {marker}",
        marker = note(INTEGRITY_NOTE),
    )
}

/// The comment on the issue before closing it because its pull request merged or closed.
pub fn pr_closed_comment(pr_ref: &str, merged: bool) -> String {
    let what = if merged {
        "was merged"
    } else {
        "was closed without merging"
    };
    format!(
        "`{pr_ref}` {what}, so there is nothing left to decide here; closing this question.\n\
         {marker}",
        marker = note(PR_CLOSED_NOTE),
    )
}

/// The poison guard's counter comment after `count` consecutive failed ticks.
pub fn failures_comment(count: u32, threshold: u32, error: &str) -> String {
    let status = if count >= threshold {
        "The issue is labelled `decision:inbox-error`; a person needs to look at it."
    } else {
        "The bot keeps trying on every tick."
    };
    format!(
        "The bot failed to process this inbox question on {count} consecutive tick(s); last \
         error: {error}. {status}\n\
         {FAILURES_MARKER} {count} {MARKER_END}\n"
    )
}

/// The counter comment once processing succeeds again.
pub fn recovered_comment(previous: u32) -> String {
    format!(
        "The bot processed this inbox question again after {previous} failed tick(s).\n\
         {FAILURES_MARKER} 0 {MARKER_END}\n"
    )
}

/// The bot's latest counter comment and its count, if any.
pub fn failure_count(comments: &[Comment], bot: &Login) -> Option<(CommentId, u32)> {
    comments.iter().rev().find_map(|comment| {
        if comment.author.as_ref() != Some(bot) {
            return None;
        }
        let count = marker_value(&comment.body, FAILURES_MARKER)?.parse().ok()?;
        Some((comment.id, count))
    })
}
