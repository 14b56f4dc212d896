//! The optional, notify-only inbox lifecycle (bot.md §10.3): one reminder and one
//! escalation comment per open inbox issue once it has waited long enough, a clock that
//! the owner's outings pause, and one return digest after an outing. It never approves,
//! rejects or closes anything; off by default.
//!
//! Every comment ends with a hidden marker so each is written once:
//!
//! ```text
//! <!-- decision-inbox-lifecycle: reminder -->      (also escalation, return-digest)
//! <!-- decision-inbox-outing: <start> <end> -->    (one per window the digest records)
//! ```
//!
//! Only markers in comments written by the bot count. The windows a digest records keep
//! pausing the clock even after they leave the availability file.
//!
//! The availability file's lines that start with the configured prefix are read; each is
//! either `<start> <sep> <end> outing` (`sep` is `-`, `–` or `—`; ISO-8601 instants) or a
//! state word, `available` or `quiet`. During an outing or while `quiet`, nothing is
//! written.

use std::collections::BTreeMap;
use std::fmt;

use crate::approval::receipt::{MARKER_END, marker_value};
use crate::config::InboxLifecycle;
use crate::context::{Comment, CommentId};
use crate::ids::{Login, PrNumber, RepoName, Timestamp};
use crate::port::{Issue, IssueState};

/// Start of the marker line naming a lifecycle comment.
pub const LIFECYCLE_MARKER: &str = "<!-- decision-inbox-lifecycle:";
/// Start of the marker line recording one completed outing in the return digest.
pub const OUTING_MARKER: &str = "<!-- decision-inbox-outing:";

const REMINDER: &str = "reminder";
const ESCALATION: &str = "escalation";
const RETURN_DIGEST: &str = "return-digest";

/// A period the owner is away: `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Outing {
    /// When it starts.
    pub start: Timestamp,
    /// When it ends (after `start`).
    pub end: Timestamp,
}

impl Outing {
    fn hours(self) -> i64 {
        self.end.seconds_since(self.start) / 3600
    }
}

impl fmt::Display for Outing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} → {}", self.start, self.end)
    }
}

/// The owner's stated availability.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnerState {
    /// `available`: the lifecycle runs.
    Available,
    /// `quiet`: no lifecycle comments (the clock keeps running).
    Quiet,
}

/// The availability file as read: its outings, the last state word and the lines that
/// were not understood.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AvailabilityFile {
    /// Outings, in file order.
    pub outings: Vec<Outing>,
    /// The last state word, if any.
    pub state: Option<OwnerState>,
    /// One line per prefixed line that was not understood (1-based line numbers).
    pub problems: Vec<String>,
}

/// Reads the lines of `text` that start with `line_prefix`.
pub fn parse_availability(text: &str, line_prefix: &str) -> AvailabilityFile {
    let mut file = AvailabilityFile::default();
    for (index, line) in text.lines().enumerate() {
        let Some(rest) = line.trim_start().strip_prefix(line_prefix) else {
            continue;
        };
        let tokens: Vec<&str> = rest.split_whitespace().collect();
        match tokens.as_slice() {
            [word] if word.eq_ignore_ascii_case("available") => {
                file.state = Some(OwnerState::Available);
            }
            [word] if word.eq_ignore_ascii_case("quiet") => file.state = Some(OwnerState::Quiet),
            [start, "-" | "–" | "—", end, kind] if kind.eq_ignore_ascii_case("outing") => {
                match (Timestamp::parse(start), Timestamp::parse(end)) {
                    (Ok(start), Ok(end)) if start < end => file.outings.push(Outing { start, end }),
                    (Ok(_), Ok(_)) => file.problems.push(format!(
                        "line {}: outing ends at or before its start",
                        index + 1
                    )),
                    _ => file.problems.push(format!(
                        "line {}: outing bounds are not ISO-8601 instants",
                        index + 1
                    )),
                }
            }
            _ => file.problems.push(format!(
                "line {}: expected '<start> - <end> outing', 'available' or 'quiet' after '{line_prefix}'",
                index + 1
            )),
        }
    }
    file
}

/// One comment the lifecycle writes on an inbox issue.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LifecycleAction {
    /// The one reminder.
    Remind {
        /// The inbox repository.
        repo: RepoName,
        /// The issue.
        issue: PrNumber,
        /// The comment body.
        body: String,
    },
    /// The one escalation.
    Escalate {
        /// The inbox repository.
        repo: RepoName,
        /// The issue.
        issue: PrNumber,
        /// The comment body.
        body: String,
    },
    /// The first return digest.
    PostDigest {
        /// The inbox repository.
        repo: RepoName,
        /// The issue.
        issue: PrNumber,
        /// The comment body.
        body: String,
    },
    /// The return digest, rewritten in place to record a later outing.
    UpdateDigest {
        /// The inbox repository.
        repo: RepoName,
        /// The issue.
        issue: PrNumber,
        /// The digest comment.
        comment: CommentId,
        /// The new body.
        body: String,
    },
}

impl LifecycleAction {
    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Remind { .. } => "remind",
            Self::Escalate { .. } => "escalate",
            Self::PostDigest { .. } => "post_digest",
            Self::UpdateDigest { .. } => "update_digest",
        }
    }

    /// The inbox repository.
    pub fn repo(&self) -> &RepoName {
        match self {
            Self::Remind { repo, .. }
            | Self::Escalate { repo, .. }
            | Self::PostDigest { repo, .. }
            | Self::UpdateDigest { repo, .. } => repo,
        }
    }

    /// The issue written on.
    pub fn issue(&self) -> PrNumber {
        match self {
            Self::Remind { issue, .. }
            | Self::Escalate { issue, .. }
            | Self::PostDigest { issue, .. }
            | Self::UpdateDigest { issue, .. } => *issue,
        }
    }

    /// The comment body.
    pub fn body(&self) -> &str {
        match self {
            Self::Remind { body, .. }
            | Self::Escalate { body, .. }
            | Self::PostDigest { body, .. }
            | Self::UpdateDigest { body, .. } => body,
        }
    }
}

impl fmt::Display for LifecycleAction {
    /// `remind acme/governance#100: [REMINDER_72H] ...` (the body's first line).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let first = self.body().lines().next().unwrap_or_default();
        write!(
            f,
            "{} {}#{}: {first}",
            self.code(),
            self.repo(),
            self.issue()
        )
    }
}

/// The lifecycle comments due now on the open inbox `issues`.
///
/// Nothing when `settings` is disabled. An issue is looked at only when it is open, not a
/// pull request, has a creation time and its comments are in `comments_by_issue` (without
/// them the markers cannot be checked). Its effective age is `now − created_at` minus the
/// time that completed outings (from the availability file or recorded by an earlier
/// digest) overlap its life. While an outing is active or the owner is `quiet`, nothing is
/// written. Otherwise, per issue and in this order: the return digest when a completed
/// outing is not recorded yet (posted once, then updated in place), the reminder at
/// `reminder_hours` and the escalation at `escalate_hours` (boundaries inclusive), each
/// once ever.
///
/// `availability_text` is the availability file's content as the caller read it; it is
/// ignored unless `settings` names a file.
pub fn inbox_lifecycle(
    issues: &[Issue],
    comments_by_issue: &BTreeMap<PrNumber, Vec<Comment>>,
    availability_text: Option<&str>,
    settings: &InboxLifecycle,
    bot: &Login,
    now: Timestamp,
) -> Vec<LifecycleAction> {
    if !settings.enabled() {
        return Vec::new();
    }
    let file = match (settings.availability(), availability_text) {
        (Some(availability), Some(text)) => parse_availability(text, availability.line_prefix()),
        _ => AvailabilityFile::default(),
    };
    let away = file.state == Some(OwnerState::Quiet)
        || file
            .outings
            .iter()
            .any(|outing| outing.start <= now && now < outing.end);
    if away {
        return Vec::new();
    }
    let mut actions = Vec::new();
    for issue in issues {
        if issue.state != IssueState::Open || issue.is_pull_request {
            continue;
        }
        let (Some(created), Some(comments)) =
            (issue.created_at, comments_by_issue.get(&issue.number))
        else {
            continue;
        };
        let clock = IssueClock {
            issue,
            created,
            comments,
            bot,
            now,
        };
        actions.extend(clock.actions(&file.outings, settings));
    }
    actions
}

/// One issue's lifecycle at `now`.
struct IssueClock<'a> {
    issue: &'a Issue,
    created: Timestamp,
    comments: &'a [Comment],
    bot: &'a Login,
    now: Timestamp,
}

impl IssueClock<'_> {
    fn actions(&self, outings: &[Outing], settings: &InboxLifecycle) -> Vec<LifecycleAction> {
        let repo = self.issue.repo.clone();
        let issue = self.issue.number;
        let mut actions = Vec::new();
        let digest = self.latest_bot_comment(RETURN_DIGEST, None);
        let recorded = digest.map(recorded_outings).unwrap_or_default();
        let mut windows = recorded.clone();
        for outing in outings {
            let completed = outing.end <= self.now;
            let overlaps_life = outing.end > self.created;
            if completed && overlaps_life && !windows.contains(outing) {
                windows.push(*outing);
            }
        }
        windows.sort();
        if windows != recorded {
            let body = digest_body(&windows);
            actions.push(match digest {
                Some(comment) => LifecycleAction::UpdateDigest {
                    repo: repo.clone(),
                    issue,
                    comment: comment.id,
                    body,
                },
                None => LifecycleAction::PostDigest {
                    repo: repo.clone(),
                    issue,
                    body,
                },
            });
        }
        let age = self.now.seconds_since(self.created) - self.paused_seconds(&windows);
        let reminder = settings.reminder_hours();
        if age >= i64::from(reminder) * 3600
            && self
                .latest_bot_comment(REMINDER, Some("[REMINDER_"))
                .is_none()
        {
            actions.push(LifecycleAction::Remind {
                repo: repo.clone(),
                issue,
                body: reminder_body(reminder),
            });
        }
        let escalate = settings.escalate_hours();
        if age >= i64::from(escalate) * 3600
            && self
                .latest_bot_comment(ESCALATION, Some("[ESCALATION_"))
                .is_none()
        {
            actions.push(LifecycleAction::Escalate {
                repo,
                issue,
                body: escalation_body(escalate),
            });
        }
        actions
    }

    /// The bot's latest comment carrying the lifecycle marker `name` (or, for comments
    /// without markers, starting with `tag`).
    fn latest_bot_comment(&self, name: &str, tag: Option<&str>) -> Option<&Comment> {
        self.comments.iter().rev().find(|comment| {
            comment.author.as_ref() == Some(self.bot)
                && (marker_value(&comment.body, LIFECYCLE_MARKER) == Some(name)
                    || tag.is_some_and(|tag| comment.body.trim_start().starts_with(tag)))
        })
    }

    /// Seconds of the issue's life `[created, now)` covered by the windows (overlaps
    /// counted once).
    fn paused_seconds(&self, windows: &[Outing]) -> i64 {
        let mut clipped: Vec<(Timestamp, Timestamp)> = windows
            .iter()
            .map(|w| (w.start.max(self.created), w.end.min(self.now)))
            .filter(|(start, end)| start < end)
            .collect();
        clipped.sort();
        let mut total = 0;
        let mut covered_until: Option<Timestamp> = None;
        for (start, end) in clipped {
            let start = covered_until.map_or(start, |until| start.max(until));
            if start < end {
                total += end.seconds_since(start);
            }
            covered_until = Some(covered_until.map_or(end, |until| until.max(end)));
        }
        total
    }
}

/// The outings a digest comment records.
fn recorded_outings(comment: &Comment) -> Vec<Outing> {
    let mut outings: Vec<Outing> = comment
        .body
        .lines()
        .filter_map(|line| {
            let value = line
                .trim()
                .strip_prefix(OUTING_MARKER)?
                .strip_suffix(MARKER_END)?;
            let mut bounds = value.split_whitespace();
            let start = Timestamp::parse(bounds.next()?).ok()?;
            let end = Timestamp::parse(bounds.next()?).ok()?;
            (start < end).then_some(Outing { start, end })
        })
        .collect();
    outings.sort();
    outings.dedup();
    outings
}

fn marker(name: &str) -> String {
    format!("{LIFECYCLE_MARKER} {name} {MARKER_END}\n")
}

fn reminder_body(hours: u32) -> String {
    format!(
        "[REMINDER_{hours}H] This decision has been waiting for {hours} hours, not counting \
         recorded time away. React 👍 or 👎, or comment `/approve A`, `/approve B`, \
         `/approve C` or `/reject`; the pull request stays unmerged until then.\n\
         {}",
        marker(REMINDER)
    )
}

fn escalation_body(hours: u32) -> String {
    format!(
        "[ESCALATION_{hours}H] This decision is still open after {hours} hours, not counting \
         recorded time away. Nothing is approved, rejected or closed automatically: only an \
         allowlisted owner's vote settles it.\n\
         {}",
        marker(ESCALATION)
    )
}

fn digest_body(windows: &[Outing]) -> String {
    let mut body = String::from(
        "[RETURN_DIGEST] Welcome back. This decision waited for you; the reminder clock did \
         not run while you were away:\n",
    );
    for window in windows {
        body.push_str(&format!("- {window} ({} h)\n", window.hours()));
    }
    body.push_str(&marker(RETURN_DIGEST));
    for window in windows {
        body.push_str(&format!(
            "{OUTING_MARKER} {} {} {MARKER_END}\n",
            window.start, window.end
        ));
    }
    body
}

#[cfg(test)]
mod tests;
