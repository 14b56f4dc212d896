//! What an inbox issue asks, read back from its body: the pull request and the head the
//! question is about, the body's integrity check, and the stale-head rule (bot.md §10.2
//! steps 1, 3 and 4).

use std::fmt;

use crate::approval::receipt::marker_value;
use crate::approval::{KeyGeneration, ReceiptKey};
use crate::context::Comment;
use crate::ids::{CommitSha, Login, PrNumber, RepoName};

use super::{INBOX_HEAD_MARKER, NONCE_MARKER, SIGNATURE_MARKER, SignedQuestion, referenced_pr};

/// The question an inbox issue body records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboxQuestion {
    /// The pull request's repository.
    pub repo: RepoName,
    /// The pull request.
    pub number: PrNumber,
    /// The head the question (and so every vote on it) is about.
    pub head: CommitSha,
    /// The body's nonce, when it has a well-formed nonce marker.
    pub nonce: Option<String>,
}

impl InboxQuestion {
    /// Reads the question from an inbox issue body: the ``PR: `owner/repo#N` `` line and
    /// the head marker are required (a marker counts only with its closing `-->`).
    ///
    /// # Errors
    /// [`UnreadableQuestion`] naming the missing or malformed part.
    pub fn read(body: &str) -> Result<Self, UnreadableQuestion> {
        let (repo, number) = referenced_pr(body).ok_or(UnreadableQuestion::PrReferenceMissing)?;
        let head =
            marker_value(body, INBOX_HEAD_MARKER).ok_or(UnreadableQuestion::HeadMarkerMissing)?;
        let head = CommitSha::parse(head).map_err(|_| UnreadableQuestion::HeadMarkerMalformed {
            value: head.chars().take(80).collect(),
        })?;
        let nonce = marker_value(body, NONCE_MARKER).map(str::to_owned);
        Ok(Self {
            repo,
            number,
            head,
            nonce,
        })
    }

    /// `owner/repo#N`.
    pub fn pr_reference(&self) -> String {
        format!("{}#{}", self.repo, self.number)
    }
}

/// Why an inbox issue body does not say which pull request and head it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UnreadableQuestion {
    /// No ``PR: `owner/repo#N` `` line.
    PrReferenceMissing,
    /// No well-formed head marker.
    HeadMarkerMissing,
    /// The head marker is not a full commit SHA.
    HeadMarkerMalformed {
        /// The marker's value (at most 80 characters).
        value: String,
    },
}

impl UnreadableQuestion {
    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::PrReferenceMissing => "pr_reference_missing",
            Self::HeadMarkerMissing => "head_marker_missing",
            Self::HeadMarkerMalformed { .. } => "head_marker_malformed",
        }
    }
}

impl fmt::Display for UnreadableQuestion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::PrReferenceMissing => f.write_str("no 'PR: `owner/repo#N`' line in the body"),
            Self::HeadMarkerMissing => f.write_str("no well-formed head marker in the body"),
            Self::HeadMarkerMalformed { value } => {
                write!(f, "head marker '{value}' is not a full commit sha")
            }
        }
    }
}

/// The result of the body's integrity check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Integrity {
    /// No receipt key is set: the body is trusted as it is.
    Unchecked,
    /// The bot's signature verifies for this issue and what its body records.
    Verified,
    /// Only a signature by a previous key of the ring verifies (a rotation's window is
    /// open): trusted like [`Integrity::Verified`], and the bot signs the question again
    /// with the current key.
    VerifiedByPreviousKey,
    /// A key is set and the body does not verify: never honour a vote on it.
    Failed(IntegrityFailure),
}

/// Why a body failed its integrity check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum IntegrityFailure {
    /// No well-formed nonce marker.
    NonceMissing,
    /// No signature comment of the bot on the issue.
    MacMissing,
    /// No signature of the bot verifies for this issue and the recorded pull request,
    /// head and nonce.
    MacMismatch,
}

impl IntegrityFailure {
    /// Stable machine-readable code.
    pub fn code(self) -> &'static str {
        match self {
            Self::NonceMissing => "nonce_missing",
            Self::MacMissing => "mac_missing",
            Self::MacMismatch => "mac_mismatch",
        }
    }
}

impl fmt::Display for IntegrityFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NonceMissing => "the body has no nonce marker",
            Self::MacMissing => "the issue has no signature comment of the bot",
            Self::MacMismatch => {
                "the bot's signature does not match this issue and the pull request, head and nonce the body records"
            }
        })
    }
}

/// Checks a question against `key`: without a key nothing is checked; with one, a
/// signature comment of `bot` on the issue must verify over the inbox repository, the
/// issue's number, and the pull request, head and nonce the body records. A body edited to
/// point at another pull request or head, or pasted into another issue, fails; so does a
/// question without the bot's signature (one written before signatures covered the issue,
/// or one whose signing was cut short: docs/decisions/0040).
pub fn check_integrity(
    question: &InboxQuestion,
    inbox: &RepoName,
    issue: PrNumber,
    comments: &[Comment],
    bot: &Login,
    key: Option<&ReceiptKey>,
) -> Integrity {
    let Some(key) = key else {
        return Integrity::Unchecked;
    };
    let Some(nonce) = question.nonce.as_deref() else {
        return Integrity::Failed(IntegrityFailure::NonceMissing);
    };
    let signed = SignedQuestion {
        inbox,
        issue,
        repo: &question.repo,
        number: question.number,
        head: &question.head,
        nonce,
    };
    let mut signatures = comments
        .iter()
        .filter(|c| c.author.as_ref() == Some(bot))
        .filter_map(|c| marker_value(&c.body, SIGNATURE_MARKER))
        .peekable();
    if signatures.peek().is_none() {
        return Integrity::Failed(IntegrityFailure::MacMissing);
    }
    let mut previous = false;
    for mac in signatures {
        match signed.generation(key, mac) {
            Some(KeyGeneration::Current) => return Integrity::Verified,
            Some(KeyGeneration::Previous) => previous = true,
            None => {}
        }
    }
    if previous {
        Integrity::VerifiedByPreviousKey
    } else {
        Integrity::Failed(IntegrityFailure::MacMismatch)
    }
}

/// Whether the pull request still has the head the question is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeadCheck {
    /// Same head: a verdict applies.
    Current,
    /// The head moved: no verdict applies until it returns to the recorded head.
    Moved {
        /// The head the question records.
        recorded: CommitSha,
        /// The pull request's head now.
        current: CommitSha,
    },
}

/// The stale-head rule: a verdict is bound to the recorded head and applies only while
/// the pull request's head is that SHA (again).
pub fn check_head(question: &InboxQuestion, current: &CommitSha) -> HeadCheck {
    if question.head == *current {
        HeadCheck::Current
    } else {
        HeadCheck::Moved {
            recorded: question.head.clone(),
            current: current.clone(),
        }
    }
}
