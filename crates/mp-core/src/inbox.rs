//! The issues the pull-request path opens: the decision inbox question for a Quadrant-D
//! pull request (bot.md §10.1), its dedupe by PR reference, and the passive audit issue
//! after a Quadrant B or C merge.
//!
//! An inbox issue body ends with hidden markers that the inbox poller reads back:
//!
//! ```text
//! <!-- decision-inbox-nonce: <32 hex> -->
//! <!-- decision-inbox-head-sha: <full sha> -->
//! ```
//!
//! When a receipt key is set, the bot signs the question in a comment it posts on the
//! issue right after opening it (the issue's number is known only then):
//!
//! ```text
//! <!-- decision-inbox-signature: <64 hex> -->
//! ```
//!
//! The MAC signs `decision-inbox-question`, the inbox repository, the issue number, the
//! pull request's repository and number, the head and the nonce, joined with `|`; so a
//! body edited to point at another pull request or head, or pasted into another issue, no
//! longer verifies (docs/decisions/0040).
//!
//! The submodules are what the inbox poller (`mp_tick::inbox_poll`) decides from what it
//! read: the question read back from an issue ([`question`]), the owner's signals
//! ([`signals`], over the plain lines of [`commands`]), a revocation ([`revocation`]), the
//! poller's own marker comments ([`notes`]), the notify-only lifecycle ([`lifecycle`]) and
//! the report of one poll ([`report`]). All of them are pure: the poller reads and writes.

pub mod commands;
pub mod lifecycle;
pub mod notes;
pub mod question;
pub mod report;
pub mod revocation;
pub mod signals;

#[cfg(test)]
mod testkit;

use std::sync::LazyLock;

use regex::Regex;
use sha2::{Digest, Sha256};

use crate::approval::KeyGeneration;
use crate::approval::ReceiptKey;
use crate::approval::receipt::{MARKER_END, mac_generation, mac_hex, verify_mac_hex};
use crate::classifier::Verdict;
use crate::context::{LabelAction, LabelEvent, PrContext};
use crate::ids::{CommitSha, Login, PrNumber, RepoName, Timestamp};
use crate::port::{Issue, IssueState, NewIssue};
use crate::quadrant::Quadrant;

pub use crate::labels::{
    AUTO_APPROVED_CRITICAL_REVERSIBLE, AUTO_APPROVED_IRREVERSIBLE_NON_CRITICAL, PENDING_OWNER,
};
/// Start of the marker line carrying the inbox issue's nonce.
pub const NONCE_MARKER: &str = "<!-- decision-inbox-nonce:";
/// Start of the marker line carrying the head SHA the question is about.
pub const INBOX_HEAD_MARKER: &str = "<!-- decision-inbox-head-sha:";
/// Start of the marker line of the bot's signature comment on its question.
pub const SIGNATURE_MARKER: &str = "<!-- decision-inbox-signature:";
/// The first part of every question MAC, so that it can never be read as another MAC.
const SIGNATURE_DOMAIN: &str = "decision-inbox-question";

/// The PR reference line of inbox bodies: ``PR: `owner/repo#N` ``.
static PR_REF: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"PR:\s*`([^`#]+)#(\d+)`").expect("the PR reference pattern is a valid regex")
});

/// The title of the inbox issue for `repo#number`.
pub fn inbox_title(repo: &RepoName, number: PrNumber) -> String {
    format!("Decision pending — PR {repo}#{number}")
}

/// The inbox nonce: the first 32 hex digits of SHA-256 over `pr_ref|head|now`. It is
/// derived rather than random so that replaying a tick gives the same body.
pub fn inbox_nonce(pr_ref: &str, head: &CommitSha, now: Timestamp) -> String {
    let digest = Sha256::digest(format!("{pr_ref}|{head}|{now}").as_bytes());
    let mut nonce = hex::encode(digest);
    nonce.truncate(32);
    nonce
}

/// What a question's MAC covers: where it is asked and what it asks about.
#[derive(Debug, Clone, Copy)]
pub struct SignedQuestion<'a> {
    /// The inbox repository.
    pub inbox: &'a RepoName,
    /// The inbox issue.
    pub issue: PrNumber,
    /// The pull request's repository.
    pub repo: &'a RepoName,
    /// The pull request.
    pub number: PrNumber,
    /// The head the question is about.
    pub head: &'a CommitSha,
    /// The body's nonce.
    pub nonce: &'a str,
}

impl SignedQuestion<'_> {
    fn with_parts<T>(&self, f: impl FnOnce(&[&str]) -> T) -> T {
        let (issue, number) = (self.issue.to_string(), self.number.to_string());
        f(&[
            SIGNATURE_DOMAIN,
            self.inbox.as_str(),
            &issue,
            self.repo.as_str(),
            &number,
            self.head.as_str(),
            self.nonce,
        ])
    }

    /// The MAC, as 64 hex digits.
    pub fn mac(&self, key: &ReceiptKey) -> String {
        self.with_parts(|parts| mac_hex(key, parts))
    }

    /// Whether `mac` is this question's MAC under a key of the ring (constant-time).
    pub fn verifies(&self, key: &ReceiptKey, mac: &str) -> bool {
        self.with_parts(|parts| verify_mac_hex(key, parts, mac))
    }

    /// Which key of the ring `mac` verifies with, if any (constant-time).
    pub fn generation(&self, key: &ReceiptKey, mac: &str) -> Option<KeyGeneration> {
        self.with_parts(|parts| mac_generation(key, parts, mac))
    }

    /// The body of the bot's signature comment on the question.
    pub fn comment(&self, key: &ReceiptKey) -> String {
        format!(
            "Merge Gate: this question is signed for `{}#{}`: pull request `{}#{}` at head `{}`.\n\
             {SIGNATURE_MARKER} {} {MARKER_END}\n",
            self.inbox,
            self.issue,
            self.repo,
            self.number,
            self.head.short(),
            self.mac(key),
        )
    }
}

/// The signature comment for the question `issue` just opened for `pr` in `inbox`, or
/// `None` when no key is set (or the body has no nonce).
pub fn signature_comment(
    key: Option<&ReceiptKey>,
    inbox: &RepoName,
    issue: &Issue,
    pr: &PrContext,
) -> Option<String> {
    let key = key?;
    let nonce = crate::approval::receipt::marker_value(&issue.body, NONCE_MARKER)?;
    let question = SignedQuestion {
        inbox,
        issue: issue.number,
        repo: &pr.repo,
        number: pr.number,
        head: &pr.head_sha,
        nonce,
    };
    Some(question.comment(key))
}

/// The decision inbox issue for a Quadrant-D pull request whose only blocking condition is
/// the owner's approval, opened at `now`. The body is never signed itself: with a key,
/// [`signature_comment`] signs it once the issue has its number.
pub fn inbox_issue(pr: &PrContext, verdict: &Verdict, now: Timestamp) -> NewIssue {
    let pr_ref = pr.reference();
    let head = &pr.head_sha;
    let nonce = inbox_nonce(&pr_ref, head, now);
    let reasoning = verdict.d_reasoning();
    let reasoning = if reasoning.is_empty() {
        "no rule voted D".to_owned()
    } else {
        reasoning
    };
    let short = head.short();
    let body = format!(
        "**Your decision is needed.** Pull request `{pr_ref}` is Quadrant D: the classifier \
         routes it to you (see the reasoning). Every other gate condition holds, so it now \
         waits only for you.\n\
         \n\
         - PR: `{pr_ref}` — head `{short}`\n\
         - Classifier: Quadrant {quadrant}\n\
         - Reasoning: {reasoning}\n\
         - Opened at: {now}\n\
         \n\
         ### How to decide\n\
         \n\
         Only reactions and comments of allowlisted owners count; the latest one wins.\n\
         \n\
         - 👍 on this issue, or comment `/approve A`: **option A, approve.** The bot merges the \
         pull request on a later tick if every other condition still holds.\n\
         - Comment `/approve B`: **option B, approve the alternate.** Same as A, recorded as \
         the alternate option.\n\
         - Comment `/approve C`: **option C, defer.** The pull request is marked \
         `decision:deferred` and waits for more information.\n\
         - 👎 on this issue, or comment `/reject`: **reject.** The bot closes the pull request.\n\
         \n\
         - [ ] A: approve\n\
         - [ ] B: approve the alternate\n\
         - [ ] C: defer, more information needed\n\
         \n\
         The boxes are for your notes; the bot reads only reactions and commands. A new push \
         to the pull request invalidates a decision taken for head `{short}`.\n\
         \n\
         {NONCE_MARKER} {nonce} {MARKER_END}\n\
         {INBOX_HEAD_MARKER} {head} {MARKER_END}\n",
        quadrant = verdict.quadrant,
    );
    NewIssue {
        title: inbox_title(&pr.repo, pr.number),
        body,
        labels: vec![PENDING_OWNER.to_owned()],
    }
}

/// The pull request an inbox body refers to: the first ``PR: `owner/repo#N` `` in it.
pub fn referenced_pr(body: &str) -> Option<(RepoName, PrNumber)> {
    let captures = PR_REF.captures(body)?;
    let repo = RepoName::parse(captures.get(1)?.as_str().trim()).ok()?;
    let number = captures.get(2)?.as_str().parse().ok()?;
    Some((repo, PrNumber::new(number)))
}

/// The open `decision:pending-owner` issues (not pull requests) opened by `bot` among
/// `issues` whose body refers to `repo#number`, in the listing's order. A look-alike issue
/// opened by anyone else never stands for the bot's question; one the bot opened stands
/// for it only when the bot also applied the label ([`labelled_by_bot`]), which the
/// listing does not show.
pub fn pending_candidates<'a>(
    issues: &'a [Issue],
    repo: &'a RepoName,
    number: PrNumber,
    bot: &'a Login,
) -> impl Iterator<Item = &'a Issue> {
    issues.iter().filter(move |issue| {
        issue.author.as_ref() == Some(bot)
            && issue.state == IssueState::Open
            && !issue.is_pull_request
            && issue.labels.iter().any(|l| l == PENDING_OWNER)
            && referenced_pr(&issue.body).is_some_and(|(r, n)| r == *repo && n == number)
    })
}

/// The first of [`pending_candidates`], if any.
pub fn find_pending<'a>(
    issues: &'a [Issue],
    repo: &'a RepoName,
    number: PrNumber,
    bot: &'a Login,
) -> Option<&'a Issue> {
    pending_candidates(issues, repo, number, bot).next()
}

/// Who applied `label` last by an issue's timeline `events` (in timeline order): `None`
/// when no `labeled` event names it, `Some(None)` when GitHub names no actor.
pub fn last_labelled_by<'a>(events: &'a [LabelEvent], label: &str) -> Option<Option<&'a Login>> {
    events
        .iter()
        .rev()
        .find(|e| e.action == LabelAction::Labeled && e.label == label)
        .map(|e| e.actor.as_ref())
}

/// When `label` was applied last by an issue's timeline `events`: `None` when no `labeled`
/// event names it or GitHub gives it no time.
pub fn labelled_at(events: &[LabelEvent], label: &str) -> Option<Timestamp> {
    events
        .iter()
        .rev()
        .find(|e| e.action == LabelAction::Labeled && e.label == label)
        .and_then(|e| e.at)
}

/// Whether `bot` applied `decision:pending-owner` last: only then is an issue the bot
/// opened a question. Anyone with triage access can label an issue, so an audit issue the
/// bot opened and an agent labelled is not a question.
pub fn labelled_by_bot(events: &[LabelEvent], bot: &Login) -> bool {
    last_labelled_by(events, PENDING_OWNER) == Some(Some(bot))
}

/// The audit-issue label of a merged quadrant: B and C have one, A and D none.
pub fn auto_approved_label(quadrant: Quadrant) -> Option<&'static str> {
    match quadrant {
        Quadrant::B => Some(AUTO_APPROVED_CRITICAL_REVERSIBLE),
        Quadrant::C => Some(AUTO_APPROVED_IRREVERSIBLE_NON_CRITICAL),
        Quadrant::A | Quadrant::D => None,
    }
}

/// The passive audit issue after merging a Quadrant B or C pull request as `merged` at
/// `now`; `None` for the other quadrants.
pub fn audit_issue(
    pr: &PrContext,
    verdict: &Verdict,
    merged: &CommitSha,
    now: Timestamp,
) -> Option<NewIssue> {
    landed_audit_issue(pr, verdict, merged, "squash", now)
}

/// [`audit_issue`] for a pull request that landed as `merged` by `how` (`squash` when mp
/// merged it; `GitHub's merge queue` when the queue landed its group: decisions/0084),
/// noticed at `now`.
pub fn landed_audit_issue(
    pr: &PrContext,
    verdict: &Verdict,
    merged: &CommitSha,
    how: &str,
    now: Timestamp,
) -> Option<NewIssue> {
    let quadrant = verdict.quadrant;
    let label = auto_approved_label(quadrant)?;
    let meaning = match quadrant {
        Quadrant::B => "reversible but critical",
        _ => "irreversible but not critical",
    };
    let pr_ref = pr.reference();
    let reasoning = verdict
        .deciding_votes()
        .map(|v| format!("{} ({})", v.reasoning, v.rule))
        .collect::<Vec<_>>()
        .join("; ");
    let body = format!(
        "Pull request `{pr_ref}` was merged without asking the owner, as Quadrant {quadrant} \
         ({meaning}).\n\
         \n\
         - PR: `{pr_ref}` — head `{head}`\n\
         - Merged as: `{merged}` ({how})\n\
         - Classifier: Quadrant {quadrant}\n\
         - Reasoning: {reasoning}\n\
         - Merged at: {now}\n\
         \n\
         This is a passive audit record: nothing waits on it. Review the change and close the \
         issue; if it should not have landed, revert it through a pull request.\n",
        head = pr.head_sha.short(),
        merged = merged.short(),
    );
    Some(NewIssue {
        title: format!("Auto-approved ({quadrant}) — {pr_ref}"),
        body,
        labels: vec![label.to_owned()],
    })
}
