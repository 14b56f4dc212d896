//! Who wrote a pull request, as far as mp can tell, and when it moved: the identity
//! trailers its commits declare, the login GitHub records as its author, when it was opened
//! and when the owner's approval label was last applied (decisions/0076).
//!
//! The trailers are claims: an agent can write any `Agent-Tool` it likes. They say which
//! tool or model an agent *declares*, which is what an owner compares agents by; the gate
//! never trusts them for anything but their form (C5) and the registry (L4). The author is
//! GitHub's record. Both are cut to [`MAX_VALUE_CHARS`] so a hostile value cannot swell the
//! audit log or a metric's label.

use crate::approval::READY_TO_MERGE;
use crate::context::{LabelAction, PrContext};
use crate::ids::{CommitSha, Login, Timestamp};
use crate::trailers::TrailerKey;

/// The longest trailer value kept, in characters; longer ones are cut and end in `…`.
pub const MAX_VALUE_CHARS: usize = 64;

/// The agent behind a pull request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentIdentity {
    /// `Agent-Tool`, as declared.
    pub tool: Option<String>,
    /// `Agent-Model`, as declared.
    pub model: Option<String>,
    /// `Agent-Session`, as declared.
    pub session: Option<String>,
    /// `Agent-Machine`, as declared.
    pub machine: Option<String>,
    /// The pull request's author, as GitHub records it.
    pub author: Login,
}

/// What agents are grouped by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AgentKey {
    /// `Agent-Tool`.
    Tool,
    /// `Agent-Model`.
    Model,
    /// `Agent-Session`.
    Session,
    /// `Agent-Machine`.
    Machine,
    /// The pull request's author.
    Author,
}

impl AgentKey {
    /// Every key, in the order of the record's fields.
    pub const ALL: [Self; 5] = [
        Self::Tool,
        Self::Model,
        Self::Session,
        Self::Machine,
        Self::Author,
    ];

    /// The field's name in records and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Tool => "tool",
            Self::Model => "model",
            Self::Session => "session",
            Self::Machine => "machine",
            Self::Author => "author",
        }
    }
}

/// The group of pull requests that declare no value for the key.
pub const UNDECLARED: &str = "(undeclared)";

impl AgentIdentity {
    /// The identity of `ctx`: each trailer from the head commit, else from the newest
    /// commit that declares it; the author from GitHub.
    pub fn of(ctx: &PrContext) -> Self {
        let declared = |key: TrailerKey| {
            let head = ctx.head_commit().and_then(|c| c.trailers.identity(key));
            head.or_else(|| {
                ctx.commits
                    .iter()
                    .rev()
                    .find_map(|c| c.trailers.identity(key))
            })
            .map(str::trim)
            .filter(|value| !value.is_empty())
            .map(cut)
        };
        Self {
            tool: declared(TrailerKey::AgentTool),
            model: declared(TrailerKey::AgentModel),
            session: declared(TrailerKey::AgentSession),
            machine: declared(TrailerKey::AgentMachine),
            author: ctx.author.clone(),
        }
    }

    /// The value for `key`, `None` for a trailer the commits do not carry.
    pub fn declared(&self, key: AgentKey) -> Option<&str> {
        match key {
            AgentKey::Tool => self.tool.as_deref(),
            AgentKey::Model => self.model.as_deref(),
            AgentKey::Session => self.session.as_deref(),
            AgentKey::Machine => self.machine.as_deref(),
            AgentKey::Author => Some(self.author.as_str()),
        }
    }

    /// The value grouped by `key`; [`UNDECLARED`] for a trailer the commits do not carry.
    pub fn value(&self, key: AgentKey) -> &str {
        self.declared(key).unwrap_or(UNDECLARED)
    }
}

/// When the owner's approval label was last applied to `ctx`, by GitHub's timeline (by
/// anyone: whether it counts is the gate's question, not this one's).
pub fn approved_at(ctx: &PrContext) -> Option<Timestamp> {
    ctx.label_events
        .iter()
        .rev()
        .find(|e| e.action == LabelAction::Labeled && e.label == READY_TO_MERGE)
        .and_then(|e| e.at)
}

/// The commits `ctx`'s commits say they revert: each `This reverts commit <sha>.` line of
/// a commit's body (the line `git revert` writes) naming a full SHA, each once,
/// in commit order. What a commit says, not a proof: the agents view uses it to count a
/// revert against the pull request that merged that commit.
pub fn reverted_commits(ctx: &PrContext) -> Vec<CommitSha> {
    let mut found: Vec<CommitSha> = Vec::new();
    for commit in &ctx.commits {
        for line in commit.body.lines() {
            let Some(rest) = line.trim().strip_prefix("This reverts commit ") else {
                continue;
            };
            if let Ok(sha) = CommitSha::parse(rest.trim_end_matches('.').trim())
                && !found.contains(&sha)
            {
                found.push(sha);
            }
        }
    }
    found
}

/// `value` cut to [`MAX_VALUE_CHARS`] characters, control characters replaced.
fn cut(value: &str) -> String {
    let mut kept: String = value
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(MAX_VALUE_CHARS)
        .collect();
    if value.chars().count() > MAX_VALUE_CHARS {
        kept.pop();
        kept.push('…');
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::testkit::{Pr, at, commit};

    /// A pull request whose commits carry `messages`, the last one its head.
    fn ctx(messages: &[&str]) -> PrContext {
        let commits: Vec<_> = messages
            .iter()
            .enumerate()
            .map(|(i, m)| commit(&format!("{}", i + 1), m))
            .collect();
        let head = commits.last().map(|c| c.sha.clone()).expect("a commit");
        let mut ctx = Pr::new().commits(commits).build();
        ctx.head_sha = head;
        ctx
    }

    #[test]
    fn the_head_commit_speaks_first_then_the_newest_that_declares() {
        let ctx = ctx(&[
            "one\n\nAgent-Tool: old-tool\nAgent-Machine: box-1",
            "two\n\nAgent-Tool: new-tool\nAgent-Model: m-2",
            "three\n\nAgent-Model: m-3",
        ]);
        let who = AgentIdentity::of(&ctx);
        assert_eq!(who.tool.as_deref(), Some("new-tool"));
        assert_eq!(who.model.as_deref(), Some("m-3"));
        assert_eq!(who.machine.as_deref(), Some("box-1"));
        assert_eq!(who.session, None);
        assert_eq!(who.value(AgentKey::Session), UNDECLARED);
        assert_eq!(who.value(AgentKey::Author), ctx.author.as_str());
    }

    #[test]
    fn a_long_or_controlled_value_is_cut() {
        let long = "x".repeat(500);
        let ctx = ctx(&[&format!("one\n\nAgent-Tool: {long}\nAgent-Model: a\u{7}b")]);
        let who = AgentIdentity::of(&ctx);
        let tool = who.tool.expect("declared");
        assert_eq!(tool.chars().count(), MAX_VALUE_CHARS);
        assert!(tool.ends_with('…'));
        assert_eq!(who.model.as_deref(), Some("a b"));
    }

    #[test]
    fn reverted_commits_are_the_full_shas_git_revert_names() {
        let full = "0123456789abcdef0123456789abcdef01234567";
        let ctx = ctx(&[
            &format!("Revert \"x\"\n\nThis reverts commit {full}.\n\nAgent-Tool: t"),
            "Revert \"y\"\n\nThis reverts commit 0123456.",
            &format!("again\n\nThis reverts commit {}.", full.to_uppercase()),
        ]);
        assert_eq!(
            reverted_commits(&ctx),
            [CommitSha::parse(full).expect("a sha")]
        );
        assert!(reverted_commits(&Pr::new().build()).is_empty());
    }

    #[test]
    fn approval_time_is_the_last_application_of_the_label() {
        let ctx = Pr::new()
            .labeled(READY_TO_MERGE, "alice", "2026-03-01T10:00:00Z")
            .unlabeled(READY_TO_MERGE, "alice", "2026-03-01T11:00:00Z")
            .labeled(READY_TO_MERGE, "alice", "2026-03-01T12:00:00Z")
            .labeled("other", "alice", "2026-03-01T13:00:00Z")
            .build();
        assert_eq!(approved_at(&ctx), Some(at("2026-03-01T12:00:00Z")));
        assert_eq!(approved_at(&Pr::new().build()), None);
    }
}
