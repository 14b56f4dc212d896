//! L5 break-glass audit: who pushed a `[break-glass-*]` commit, and whether an ADR
//! recorded it in time.
//!
//! A commit whose subject matches `^\[break-glass-[a-z0-9-]+\]\s` bypassed the gate on
//! purpose. Who did it, and when, come from GitHub's activity log of the default branch
//! (the update that landed the commit: its pusher and GitHub's time), never from the
//! commit's author, committer or dates, which whoever made the commit wrote. mp's own
//! update (its squash of a pull request titled like that) is not a break-glass push.
//! Otherwise, when the allowlist is not empty, the pusher must be on it. Then an ADR under
//! `docs/decisions/` must name the commit's full SHA (a prefix could name another commit),
//! within `adr_deadline_hours` (default 24) of the push. Before the deadline the audit
//! waits; from the deadline on, or when GitHub gives the push no time, the commit is
//! unaudited.

use std::fmt;
use std::sync::LazyLock;

use regex::Regex;

use crate::branch::incident::IncidentLabel;
use crate::context::{CommitContext, RefUpdate};
use crate::ids::{CommitSha, Login, Timestamp};

/// The default number of hours an ADR may take to appear after a break-glass commit.
pub const DEFAULT_ADR_DEADLINE_HOURS: u32 = 24;

static SUBJECT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\[(break-glass-[a-z0-9-]+)\]\s").expect("valid regex"));

/// The break-glass tag of a subject (e.g. `break-glass-actions-outage`), or `None` when
/// the subject is not a break-glass subject.
pub fn break_glass_tag(subject: &str) -> Option<&str> {
    SUBJECT
        .captures(subject)
        .and_then(|caps| caps.get(1))
        .map(|m| m.as_str())
}

/// Whether a subject marks a break-glass commit.
pub fn is_break_glass(subject: &str) -> bool {
    break_glass_tag(subject).is_some()
}

/// Who may break glass, and how long an ADR may take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BreakGlassPolicy {
    bot: Login,
    allowlist: Vec<Login>,
    adr_deadline_hours: u32,
}

impl BreakGlassPolicy {
    /// A policy for the bot user `bot` and the owner allowlist (empty: any committer may
    /// break glass), with the default 24-hour ADR deadline.
    pub fn new(bot: Login, allowlist: Vec<Login>) -> Self {
        Self {
            bot,
            allowlist,
            adr_deadline_hours: DEFAULT_ADR_DEADLINE_HOURS,
        }
    }

    /// The same policy with another ADR deadline (`adr_deadline_hours`).
    pub fn with_adr_deadline_hours(mut self, hours: u32) -> Self {
        self.adr_deadline_hours = hours;
        self
    }

    /// The bot user.
    pub fn bot(&self) -> &Login {
        &self.bot
    }

    /// The allowlisted actors.
    pub fn allowlist(&self) -> &[Login] {
        &self.allowlist
    }

    /// Hours an ADR may take.
    pub fn adr_deadline_hours(&self) -> u32 {
        self.adr_deadline_hours
    }
}

/// The outcome of the break-glass audit for one commit.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BreakGlassVerdict {
    /// The subject is not a break-glass subject: nothing to audit.
    NotBreakGlass,
    /// mp's own update landed it (a squash of a pull request titled like a break-glass
    /// commit): not a break-glass push.
    BotCommit {
        /// The commit.
        sha: CommitSha,
    },
    /// The pusher is not on the non-empty allowlist.
    Unauthorized {
        /// The commit.
        sha: CommitSha,
        /// The break-glass tag from the subject.
        tag: String,
        /// Who pushed it, as GitHub's activity log names them (`None` when it names no one).
        actor: Option<Login>,
        /// The allowlist it was checked against.
        allowlist: Vec<Login>,
    },
    /// An ADR mentions the commit: audited.
    Audited {
        /// The commit.
        sha: CommitSha,
        /// The break-glass tag from the subject.
        tag: String,
        /// The path of the first ADR that mentions it.
        adr_path: String,
    },
    /// No ADR yet, but the deadline has not passed: check again next tick.
    Pending {
        /// The commit.
        sha: CommitSha,
        /// The break-glass tag from the subject.
        tag: String,
        /// When the commit becomes unaudited without an ADR.
        deadline: Timestamp,
    },
    /// No ADR, and the deadline has passed or GitHub gives the push no time.
    Unaudited {
        /// The commit.
        sha: CommitSha,
        /// The break-glass tag from the subject.
        tag: String,
        /// The deadline in hours that applied.
        deadline_hours: u32,
        /// GitHub's time of the push that landed it, if known.
        pushed_at: Option<Timestamp>,
    },
}

impl BreakGlassVerdict {
    /// Stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::NotBreakGlass => "not_break_glass",
            Self::BotCommit { .. } => "break_glass_bot_commit",
            Self::Unauthorized { .. } => "break_glass_unauthorized",
            Self::Audited { .. } => "break_glass_audited",
            Self::Pending { .. } => "break_glass_adr_pending",
            Self::Unaudited { .. } => "break_glass_unaudited",
        }
    }

    /// The incident this verdict raises, if any.
    pub fn incident(&self) -> Option<IncidentLabel> {
        match self {
            Self::Unauthorized { .. } => Some(IncidentLabel::BreakGlassUnauthorized),
            Self::Unaudited { .. } => Some(IncidentLabel::BreakGlassUnaudited),
            _ => None,
        }
    }

    /// The Markdown body of the incident, when the verdict raises one.
    pub fn incident_body(&self) -> Option<String> {
        match self {
            Self::Unauthorized {
                sha,
                tag,
                actor,
                allowlist,
            } => Some(format!(
                "Commit `{short}` is a `[{tag}]` break-glass commit, but `{actor}` pushed \
                 it to the default branch (GitHub's activity log), who is not an \
                 allowlisted actor.\n\n\
                 Allowlisted actors: {list}\n\n\
                 Either someone bypassed the gate without authority, or the allowlist is \
                 missing a trusted person.",
                short = sha.short(),
                actor = actor_text(actor.as_ref()),
                list = login_list(allowlist),
            )),
            Self::Unaudited {
                sha,
                tag,
                deadline_hours,
                pushed_at,
            } => Some(format!(
                "Commit `{short}` is a `[{tag}]` break-glass commit, but no ADR under \
                 `docs/decisions/` names its full SHA, and the {deadline_hours}-hour deadline {when}.\n\n\
                 Record the decision: add `docs/decisions/NNNN-<topic>.md` naming commit \
                 `{sha}` (all 40 characters) and merge it.",
                short = sha.short(),
                when = match pushed_at {
                    Some(at) =>
                        format!("counted from its push at {at} (GitHub's activity log) has passed"),
                    None =>
                        "cannot be checked because GitHub's activity log gives the push no time"
                            .to_owned(),
                },
            )),
            _ => None,
        }
    }
}

fn actor_text(actor: Option<&Login>) -> &str {
    actor.map_or("unknown", Login::as_str)
}

fn login_list(logins: &[Login]) -> String {
    if logins.is_empty() {
        "(none)".to_owned()
    } else {
        logins
            .iter()
            .map(Login::as_str)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for BreakGlassVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotBreakGlass => f.write_str("not a break-glass commit"),
            Self::BotCommit { sha } => write!(
                f,
                "break-glass subject on {} landed by mp itself: not a break-glass push",
                sha.short()
            ),
            Self::Unauthorized {
                sha,
                tag,
                actor,
                allowlist,
            } => write!(
                f,
                "[{tag}] commit {} pushed by '{}' who is not allowlisted (allowlist: {})",
                sha.short(),
                actor_text(actor.as_ref()),
                login_list(allowlist)
            ),
            Self::Audited { sha, tag, adr_path } => {
                write!(
                    f,
                    "[{tag}] commit {} is recorded in {adr_path}",
                    sha.short()
                )
            }
            Self::Pending { sha, tag, deadline } => write!(
                f,
                "[{tag}] commit {} has no ADR yet; deadline {deadline}",
                sha.short()
            ),
            Self::Unaudited {
                sha,
                tag,
                deadline_hours,
                pushed_at,
            } => match pushed_at {
                Some(at) => write!(
                    f,
                    "[{tag}] commit {} has no ADR within {deadline_hours} h of its push at {at}",
                    sha.short()
                ),
                None => write!(
                    f,
                    "[{tag}] commit {} has no ADR and no push time to time the {deadline_hours} h deadline",
                    sha.short()
                ),
            },
        }
    }
}

/// The path of the first `*.md` file whose text contains the commit's full SHA (in any
/// case). A prefix never counts: a prefix can be ground to name another commit.
/// `files` holds `(path, text)` pairs of the governance repo's `docs/decisions/`.
pub fn find_adr<'a>(sha: &CommitSha, files: &'a [(String, String)]) -> Option<&'a str> {
    files
        .iter()
        .filter(|(path, _)| path.ends_with(".md"))
        .find(|(_, text)| text.to_ascii_lowercase().contains(sha.as_str()))
        .map(|(path, _)| path.as_str())
}

/// Audits one commit on the default branch (see the module docs). `landing` is the
/// update of GitHub's activity log that brought the commit to the branch; `adr_files`
/// holds `(path, text)` pairs of the governance repo's `docs/decisions/*.md`.
pub fn audit_break_glass(
    commit: &CommitContext,
    landing: &RefUpdate,
    policy: &BreakGlassPolicy,
    adr_files: &[(String, String)],
    now: Timestamp,
) -> BreakGlassVerdict {
    let Some(tag) = break_glass_tag(&commit.subject) else {
        return BreakGlassVerdict::NotBreakGlass;
    };
    let sha = commit.sha.clone();
    let actor = landing.actor.as_ref();
    if actor == Some(&policy.bot) {
        return BreakGlassVerdict::BotCommit { sha };
    }
    if !policy.allowlist.is_empty() && !actor.is_some_and(|a| policy.allowlist.contains(a)) {
        return BreakGlassVerdict::Unauthorized {
            sha,
            tag: tag.to_owned(),
            actor: actor.cloned(),
            allowlist: policy.allowlist.clone(),
        };
    }
    audit_adr(&sha, tag, landing.at, policy, adr_files, now)
}

/// The ADR half of the audit, for a break-glass commit whose pusher was already found
/// allowlisted (a commit pending its ADR is audited again on every tick from the push
/// time kept in the state): audited when an ADR names its full SHA, pending before the
/// deadline counted from `pushed_at`, unaudited after it or without a push time.
pub fn audit_adr(
    sha: &CommitSha,
    tag: &str,
    pushed_at: Option<Timestamp>,
    policy: &BreakGlassPolicy,
    adr_files: &[(String, String)],
    now: Timestamp,
) -> BreakGlassVerdict {
    let (sha, tag) = (sha.clone(), tag.to_owned());
    if let Some(path) = find_adr(&sha, adr_files) {
        return BreakGlassVerdict::Audited {
            sha,
            tag,
            adr_path: path.to_owned(),
        };
    }
    let deadline_hours = policy.adr_deadline_hours;
    match pushed_at {
        Some(at) => {
            let deadline = at.plus_hours(i64::from(deadline_hours));
            if now < deadline {
                BreakGlassVerdict::Pending { sha, tag, deadline }
            } else {
                BreakGlassVerdict::Unaudited {
                    sha,
                    tag,
                    deadline_hours,
                    pushed_at: Some(at),
                }
            }
        }
        None => BreakGlassVerdict::Unaudited {
            sha,
            tag,
            deadline_hours,
            pushed_at: None,
        },
    }
}

#[cfg(test)]
mod tests;
