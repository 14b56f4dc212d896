//! L5 break-glass audit: who pushed a `[break-glass-*]` commit, and whether an ADR
//! recorded it in time.
//!
//! A commit whose subject matches `^\[break-glass-[a-z0-9-]+\]\s` bypassed the gate on
//! purpose. The bot's own squash of a pull request titled like that is not a break-glass
//! push. Otherwise the actor is the **committer** (the author field can be forged); when the
//! allowlist is not empty the committer must be on it. Then an ADR under
//! `docs/decisions/` must mention the commit's full SHA or its 7-character prefix, within
//! `adr_deadline_hours` (default 24) of the committer date. Before the deadline the audit
//! waits; from the deadline on, or when the committer date is unknown, the commit is
//! unaudited.

use std::fmt;
use std::sync::LazyLock;

use regex::Regex;

use crate::branch::incident::IncidentLabel;
use crate::context::CommitContext;
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
    /// The bot committed it (a squash of a pull request titled like a break-glass
    /// commit): not a break-glass push.
    BotCommit {
        /// The commit.
        sha: CommitSha,
    },
    /// The committer is not on the non-empty allowlist.
    Unauthorized {
        /// The commit.
        sha: CommitSha,
        /// The break-glass tag from the subject.
        tag: String,
        /// The committer (`None` when GitHub links no account).
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
    /// No ADR, and the deadline has passed or the committer date is unknown.
    Unaudited {
        /// The commit.
        sha: CommitSha,
        /// The break-glass tag from the subject.
        tag: String,
        /// The deadline in hours that applied.
        deadline_hours: u32,
        /// The committer date, if known.
        committed_at: Option<Timestamp>,
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
                "Commit `{short}` is a `[{tag}]` break-glass commit, but its committer \
                 `{actor}` is not an allowlisted actor.\n\n\
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
                committed_at,
            } => Some(format!(
                "Commit `{short}` is a `[{tag}]` break-glass commit, but no ADR under \
                 `docs/decisions/` mentions it, and the {deadline_hours}-hour deadline {when}.\n\n\
                 Record the decision: add `docs/decisions/NNNN-<topic>.md` naming commit \
                 `{sha}` and merge it.",
                short = sha.short(),
                when = match committed_at {
                    Some(at) => format!("counted from the committer date {at} has passed"),
                    None => "cannot be checked because the committer date is unknown".to_owned(),
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
                "break-glass subject on {} committed by the bot: not a break-glass push",
                sha.short()
            ),
            Self::Unauthorized {
                sha,
                tag,
                actor,
                allowlist,
            } => write!(
                f,
                "[{tag}] commit {} by committer '{}' who is not allowlisted (allowlist: {})",
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
                committed_at,
            } => match committed_at {
                Some(at) => write!(
                    f,
                    "[{tag}] commit {} has no ADR within {deadline_hours} h of its committer date {at}",
                    sha.short()
                ),
                None => write!(
                    f,
                    "[{tag}] commit {} has no ADR and no committer date to time the {deadline_hours} h deadline",
                    sha.short()
                ),
            },
        }
    }
}

/// The path of the first `*.md` file whose text contains the full SHA or its 7-character
/// prefix. `files` holds `(path, text)` pairs of the governance repo's `docs/decisions/`.
pub fn find_adr<'a>(sha: &CommitSha, files: &'a [(String, String)]) -> Option<&'a str> {
    files
        .iter()
        .filter(|(path, _)| path.ends_with(".md"))
        .find(|(_, text)| text.contains(sha.as_str()) || text.contains(sha.short()))
        .map(|(path, _)| path.as_str())
}

/// Audits one commit on `main` (see the module docs). `adr_files` holds `(path, text)`
/// pairs of the governance repo's `docs/decisions/*.md`.
pub fn audit_break_glass(
    commit: &CommitContext,
    policy: &BreakGlassPolicy,
    adr_files: &[(String, String)],
    now: Timestamp,
) -> BreakGlassVerdict {
    let Some(tag) = break_glass_tag(&commit.subject) else {
        return BreakGlassVerdict::NotBreakGlass;
    };
    let sha = commit.sha.clone();
    let tag = tag.to_owned();
    let actor = commit.committer_login.as_ref();
    if actor == Some(&policy.bot) {
        return BreakGlassVerdict::BotCommit { sha };
    }
    if !policy.allowlist.is_empty() && !actor.is_some_and(|a| policy.allowlist.contains(a)) {
        return BreakGlassVerdict::Unauthorized {
            sha,
            tag,
            actor: actor.cloned(),
            allowlist: policy.allowlist.clone(),
        };
    }
    if let Some(path) = find_adr(&sha, adr_files) {
        return BreakGlassVerdict::Audited {
            sha,
            tag,
            adr_path: path.to_owned(),
        };
    }
    let deadline_hours = policy.adr_deadline_hours;
    match commit.committed_at {
        Some(at) => {
            let deadline = at.plus_hours(i64::from(deadline_hours));
            if now < deadline {
                BreakGlassVerdict::Pending { sha, tag, deadline }
            } else {
                BreakGlassVerdict::Unaudited {
                    sha,
                    tag,
                    deadline_hours,
                    committed_at: Some(at),
                }
            }
        }
        None => BreakGlassVerdict::Unaudited {
            sha,
            tag,
            deadline_hours,
            committed_at: None,
        },
    }
}

#[cfg(test)]
mod tests;
