//! [`Write`]: one write through the GitHub port, as a value. The same vocabulary serves
//! every place a write is told: a dry run's plan ("would merge …"), a live tick's record of
//! what it did ("merged …"), and the in-memory GitHub's action log, which also holds what
//! GitHub answered (the new comment's id, the squash commit, the new issue's number).
//!
//! A write is a request and, once done, GitHub's answer: each variant carries the port
//! method's arguments and an `answer` that is `None` while the write is only planned (or
//! when the writer did not keep it). Adding a write is one variant here, with its code and
//! its three lines, and the arms of the adapters that perform it.

use std::fmt;

use serde::ser::{Serialize, SerializeMap, Serializer};

use super::{FileWrite, MergeRequest, NewCheckRun, NewIssue, NewPull};
use crate::context::CommentId;
use crate::ids::{CommitSha, PrNumber, RepoName};

/// One write through the GitHub port. Serialized as the action log shows it: a snake_case
/// `action` tag (its [`code`](Self::code)), the repository and the essentials, GitHub's
/// answer included where known, e.g. `{"action": "add_labels", "repo": "acme/app",
/// "number": 7, "labels": [...]}`; bodies and file contents by their text, no file content.
///
/// Not `non_exhaustive`: what maps every write (the loopback server's webhooks) names each
/// one, so a new write is not forgotten there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Write {
    /// `POST /issues/{n}/comments`.
    CreateComment {
        /// The repository.
        repo: RepoName,
        /// The issue or pull request.
        number: PrNumber,
        /// The comment body.
        body: String,
        /// The new comment's id.
        answer: Option<CommentId>,
    },
    /// `PATCH /issues/comments/{id}`.
    UpdateComment {
        /// The repository.
        repo: RepoName,
        /// The comment.
        id: CommentId,
        /// The new body.
        body: String,
        /// The issue or pull request the comment is on.
        answer: Option<PrNumber>,
    },
    /// `POST /issues/{n}/labels` (labels already present stay once).
    AddLabels {
        /// The repository.
        repo: RepoName,
        /// The issue or pull request.
        number: PrNumber,
        /// The labels requested.
        labels: Vec<String>,
    },
    /// `DELETE /issues/{n}/labels/{label}`.
    RemoveLabel {
        /// The repository.
        repo: RepoName,
        /// The issue or pull request.
        number: PrNumber,
        /// The label.
        label: String,
    },
    /// `POST /issues`.
    CreateIssue {
        /// The repository.
        repo: RepoName,
        /// The issue.
        issue: NewIssue,
        /// The new issue's number.
        answer: Option<PrNumber>,
    },
    /// `PATCH /issues/{n}` with `state: closed`.
    CloseIssue {
        /// The repository.
        repo: RepoName,
        /// The issue or pull request.
        number: PrNumber,
    },
    /// `PUT /pulls/{n}/merge` (a squash merge).
    MergePull {
        /// The repository.
        repo: RepoName,
        /// The pull request.
        number: PrNumber,
        /// The merge request, with its head precondition.
        request: MergeRequest,
        /// The squash commit.
        answer: Option<Merged>,
    },
    /// `enqueuePullRequest` (GraphQL): the pull request added to its base branch's merge
    /// queue, pinned to a head.
    EnqueuePull {
        /// The repository.
        repo: RepoName,
        /// The pull request.
        number: PrNumber,
        /// The head the entry is pinned to (`expectedHeadOid`).
        expected_head: CommitSha,
        /// The entry's position in the queue.
        answer: Option<u32>,
    },
    /// `dequeuePullRequest` (GraphQL): the pull request removed from its merge queue.
    DequeuePull {
        /// The repository.
        repo: RepoName,
        /// The pull request.
        number: PrNumber,
    },
    /// `POST /check-runs`: a completed check run published on a commit.
    CreateCheckRun {
        /// The repository.
        repo: RepoName,
        /// The run.
        run: NewCheckRun,
    },
    /// `PUT /pulls/{n}/update-branch`.
    UpdateBranch {
        /// The repository.
        repo: RepoName,
        /// The pull request.
        number: PrNumber,
        /// The head the update is pinned to.
        expected_head: CommitSha,
        /// The heads after the update.
        answer: Option<BranchUpdated>,
    },
    /// `PUT /contents/{path}`: one new commit on a branch.
    PutFile {
        /// The repository.
        repo: RepoName,
        /// The write.
        write: FileWrite,
        /// The new blob and commit.
        answer: Option<FileWritten>,
    },
    /// `POST /git/refs`.
    CreateBranch {
        /// The repository.
        repo: RepoName,
        /// The new branch.
        branch: String,
        /// The commit it points at.
        sha: CommitSha,
    },
    /// `PATCH /git/refs/heads/{branch}`: a branch moved to a commit.
    UpdateBranchRef {
        /// The repository.
        repo: RepoName,
        /// The branch moved.
        branch: String,
        /// The commit it points at now.
        sha: CommitSha,
        /// Whether the move could rewrite the branch (not only fast-forward it).
        force: bool,
        /// The branch's head before the move.
        answer: Option<CommitSha>,
    },
    /// `POST /merges`: a commit merged into a branch as a new merge commit.
    MergeIntoBranch {
        /// The repository.
        repo: RepoName,
        /// The branch merged into, moved to the merge commit.
        base: String,
        /// The commit merged.
        head: CommitSha,
        /// The merge commit's message.
        message: String,
        /// The merge commit, whose parents are the branch's old head and `head`.
        answer: Option<CommitSha>,
    },
    /// `PATCH /issues/{n}` with a new body.
    UpdateIssueBody {
        /// The repository.
        repo: RepoName,
        /// The issue or pull request.
        number: PrNumber,
        /// The new body.
        body: String,
    },
    /// `POST /pulls`.
    CreatePull {
        /// The repository.
        repo: RepoName,
        /// The pull request.
        pull: NewPull,
        /// The new pull request.
        answer: Option<PullOpened>,
    },
    /// A branch pushed with one commit that reverts another.
    PushRevert {
        /// The repository.
        repo: RepoName,
        /// The commit to revert.
        sha: CommitSha,
        /// The new branch.
        branch: String,
        /// The revert commit's message.
        message: String,
        /// The revert commit, the new branch's head.
        answer: Option<CommitSha>,
    },
}

/// What a squash merge made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    /// The squash commit, now the head of the base branch.
    pub sha: CommitSha,
    /// The squash commit's full message.
    pub message: String,
}

/// A pull request's branch after an update with its base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchUpdated {
    /// The new head (a merge commit).
    pub head: CommitSha,
    /// The base commit merged in (the base branch's head).
    pub base: CommitSha,
}

/// What a file write made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileWritten {
    /// The new content's blob id.
    pub blob: String,
    /// The new commit, now the branch's head.
    pub commit: CommitSha,
}

/// A pull request opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullOpened {
    /// Its number.
    pub number: PrNumber,
    /// Its head commit.
    pub head_sha: CommitSha,
}

impl Write {
    /// Stable machine-readable code, the `action` of its JSON.
    pub fn code(&self) -> &'static str {
        match self {
            Self::CreateComment { .. } => "create_comment",
            Self::UpdateComment { .. } => "update_comment",
            Self::AddLabels { .. } => "add_labels",
            Self::RemoveLabel { .. } => "remove_label",
            Self::CreateIssue { .. } => "create_issue",
            Self::CloseIssue { .. } => "close_issue",
            Self::MergePull { .. } => "merge_pull",
            Self::EnqueuePull { .. } => "enqueue_pull",
            Self::DequeuePull { .. } => "dequeue_pull",
            Self::CreateCheckRun { .. } => "create_check_run",
            Self::UpdateBranch { .. } => "update_branch",
            Self::PutFile { .. } => "put_file",
            Self::CreateBranch { .. } => "create_branch",
            Self::UpdateBranchRef { .. } => "update_branch_ref",
            Self::MergeIntoBranch { .. } => "merge_into_branch",
            Self::UpdateIssueBody { .. } => "update_issue_body",
            Self::CreatePull { .. } => "create_pull",
            Self::PushRevert { .. } => "push_revert",
        }
    }

    /// The repository written to.
    pub fn repo(&self) -> &RepoName {
        match self {
            Self::CreateComment { repo, .. }
            | Self::UpdateComment { repo, .. }
            | Self::AddLabels { repo, .. }
            | Self::RemoveLabel { repo, .. }
            | Self::CreateIssue { repo, .. }
            | Self::CloseIssue { repo, .. }
            | Self::MergePull { repo, .. }
            | Self::EnqueuePull { repo, .. }
            | Self::DequeuePull { repo, .. }
            | Self::CreateCheckRun { repo, .. }
            | Self::UpdateBranch { repo, .. }
            | Self::PutFile { repo, .. }
            | Self::CreateBranch { repo, .. }
            | Self::UpdateBranchRef { repo, .. }
            | Self::MergeIntoBranch { repo, .. }
            | Self::UpdateIssueBody { repo, .. }
            | Self::CreatePull { repo, .. }
            | Self::PushRevert { repo, .. } => repo,
        }
    }

    /// The write as planned, one line, e.g.
    /// `would merge acme/app#7 pinned to head abc1234 (squash)` (also its `Display`).
    pub fn planned_line(&self) -> String {
        self.to_string()
    }

    /// The write as done, one line in the past tense, e.g.
    /// `merged acme/app#7 pinned to head abc1234 (squash)`.
    pub fn done_line(&self) -> String {
        Phrase(self, Tense::Done).to_string()
    }

    /// The action log's line: the verb, the target and the essentials, GitHub's answer
    /// included (`?` where not known), bodies by their first line, e.g.
    /// `merge acme/app#7: head abc1234 -> base def5678`.
    pub fn log_line(&self) -> String {
        Logged(self).to_string()
    }
}

impl fmt::Display for Write {
    /// The planned line: `would` and the request.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "would {}", Phrase(self, Tense::Planned))
    }
}

/// Which of the two request lines [`Phrase`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tense {
    /// After "would".
    Planned,
    /// In the past tense.
    Done,
}

/// A write's request line in one tense.
struct Phrase<'a>(&'a Write, Tense);

impl fmt::Display for Phrase<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self(write, tense) = *self;
        let verb = |planned: &'static str, done: &'static str| match tense {
            Tense::Planned => planned,
            Tense::Done => done,
        };
        match write {
            Write::CreateComment {
                repo, number, body, ..
            } => write!(
                f,
                "{} on {repo}#{number}: {}",
                verb("comment", "commented"),
                first_line(body)
            ),
            Write::UpdateComment { repo, id, body, .. } => write!(
                f,
                "{} comment {} in {repo}: {}",
                verb("update", "updated"),
                id.get(),
                first_line(body)
            ),
            Write::AddLabels {
                repo,
                number,
                labels,
            } => write!(
                f,
                "{} {repo}#{number} with {}",
                verb("label", "labelled"),
                labels.join(", ")
            ),
            Write::RemoveLabel {
                repo,
                number,
                label,
            } => write!(
                f,
                "{} label {label} from {repo}#{number}",
                verb("remove", "removed")
            ),
            Write::CreateIssue { repo, issue, .. } => write!(
                f,
                "{} an issue in {repo} [{}]: {}",
                verb("open", "opened"),
                issue.labels.join(", "),
                issue.title
            ),
            Write::CloseIssue { repo, number } => {
                write!(f, "{} {repo}#{number}", verb("close", "closed"))
            }
            Write::MergePull {
                repo,
                number,
                request,
                ..
            } => write!(
                f,
                "{} {repo}#{number} pinned to head {} (squash)",
                verb("merge", "merged"),
                request.head_sha.short()
            ),
            Write::EnqueuePull {
                repo,
                number,
                expected_head,
                ..
            } => write!(
                f,
                "{} {repo}#{number} in GitHub's merge queue pinned to head {}",
                verb("enqueue", "enqueued"),
                expected_head.short()
            ),
            Write::DequeuePull { repo, number } => write!(
                f,
                "{} {repo}#{number} from GitHub's merge queue",
                verb("dequeue", "dequeued")
            ),
            Write::CreateCheckRun { repo, run } => write!(
                f,
                "{} check '{}' on {repo}@{}: {}",
                verb("publish", "published"),
                run.name,
                run.head_sha.short(),
                run.conclusion.as_str()
            ),
            Write::UpdateBranch {
                repo,
                number,
                expected_head,
                ..
            } => write!(
                f,
                "{} the branch of {repo}#{number} (head {})",
                verb("update", "updated"),
                expected_head.short()
            ),
            Write::PutFile { repo, write, .. } => write!(
                f,
                "{} {} on {repo}@{}: {}",
                verb("write", "wrote"),
                write.path,
                write.branch,
                write.message
            ),
            Write::CreateBranch { repo, branch, sha } => write!(
                f,
                "{} branch {branch} in {repo} at {}",
                verb("create", "created"),
                sha.short()
            ),
            Write::UpdateBranchRef {
                repo,
                branch,
                sha,
                force,
                ..
            } => write!(
                f,
                "{} {branch} in {repo} to {}{}",
                verb("move", "moved"),
                sha.short(),
                if *force { " (forced)" } else { "" }
            ),
            Write::MergeIntoBranch {
                repo,
                base,
                head,
                message,
                ..
            } => write!(
                f,
                "{} {} into {base} in {repo}: {}",
                verb("merge", "merged"),
                head.short(),
                first_line(message)
            ),
            Write::UpdateIssueBody { repo, number, body } => write!(
                f,
                "{} the body of {repo}#{number}: {}",
                verb("rewrite", "rewrote"),
                first_line(body)
            ),
            Write::CreatePull { repo, pull, .. } => write!(
                f,
                "{} a pull request in {repo} from {}: {}",
                verb("open", "opened"),
                pull.head,
                pull.title
            ),
            Write::PushRevert {
                repo, sha, branch, ..
            } => write!(
                f,
                "{} {branch} reverting {} in {repo}",
                verb("push", "pushed"),
                sha.short()
            ),
        }
    }
}

/// An answer's part for the log line: its text, or `?` while not known.
fn known<T: fmt::Display>(answer: Option<T>) -> String {
    answer.map_or_else(|| "?".to_owned(), |a| a.to_string())
}

/// The short form of a known commit, or `?`.
fn short(sha: Option<&CommitSha>) -> &str {
    sha.map_or("?", CommitSha::short)
}

/// A write as the action log shows it.
struct Logged<'a>(&'a Write);

impl fmt::Display for Logged<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Write::CreateComment {
                repo,
                number,
                body,
                answer,
            } => write!(
                f,
                "comment {repo}#{number} (id {}): {}",
                known(answer.map(CommentId::get)),
                first_line(body)
            ),
            Write::UpdateComment {
                repo,
                id,
                body,
                answer,
            } => write!(
                f,
                "update comment {} on {repo}#{}: {}",
                id.get(),
                known(*answer),
                first_line(body)
            ),
            Write::AddLabels {
                repo,
                number,
                labels,
            } => write!(f, "add labels {repo}#{number}: {}", labels.join(", ")),
            Write::RemoveLabel {
                repo,
                number,
                label,
            } => write!(f, "remove label {repo}#{number}: {label}"),
            Write::CreateIssue {
                repo,
                issue,
                answer,
            } => {
                write!(f, "open issue {repo}#{}: {}", known(*answer), issue.title)?;
                if !issue.labels.is_empty() {
                    write!(f, " [{}]", issue.labels.join(", "))?;
                }
                Ok(())
            }
            Write::CloseIssue { repo, number } => write!(f, "close {repo}#{number}"),
            Write::MergePull {
                repo,
                number,
                request,
                answer,
            } => write!(
                f,
                "merge {repo}#{number}: head {} -> base {}",
                request.head_sha.short(),
                short(answer.as_ref().map(|m| &m.sha))
            ),
            Write::EnqueuePull {
                repo,
                number,
                expected_head,
                answer,
            } => write!(
                f,
                "enqueue {repo}#{number}: head {} at position {}",
                expected_head.short(),
                known(*answer)
            ),
            Write::DequeuePull { repo, number } => write!(f, "dequeue {repo}#{number}"),
            Write::CreateCheckRun { repo, run } => write!(
                f,
                "check run {repo}@{}: {} {}",
                run.head_sha.short(),
                run.name,
                run.conclusion.as_str()
            ),
            Write::UpdateBranch {
                repo,
                number,
                answer,
                ..
            } => write!(
                f,
                "update branch {repo}#{number}: head {} on base {}",
                short(answer.as_ref().map(|u| &u.head)),
                short(answer.as_ref().map(|u| &u.base))
            ),
            Write::PutFile {
                repo,
                write,
                answer,
            } => write!(
                f,
                "write {repo}@{} {} (blob {}, commit {}): {}",
                write.branch,
                write.path,
                answer
                    .as_ref()
                    .map_or("?", |a| a.blob.get(..7).unwrap_or(&a.blob)),
                short(answer.as_ref().map(|a| &a.commit)),
                first_line(&write.message)
            ),
            Write::CreateBranch { repo, branch, sha } => {
                write!(f, "create branch {repo}@{branch} at {}", sha.short())
            }
            Write::UpdateBranchRef {
                repo,
                branch,
                sha,
                force,
                answer,
            } => write!(
                f,
                "move {repo}@{branch}: {} -> {}{}",
                short(answer.as_ref()),
                sha.short(),
                if *force { " (forced)" } else { "" }
            ),
            Write::MergeIntoBranch {
                repo,
                base,
                head,
                message,
                answer,
            } => write!(
                f,
                "merge {} into {repo}@{base} as {}: {}",
                head.short(),
                short(answer.as_ref()),
                first_line(message)
            ),
            Write::UpdateIssueBody { repo, number, body } => {
                write!(f, "update body of {repo}#{number}: {}", first_line(body))
            }
            Write::CreatePull { repo, pull, answer } => write!(
                f,
                "open pull request {repo}#{}: {} ({} -> {})",
                known(answer.as_ref().map(|a| a.number)),
                pull.title,
                pull.head,
                pull.base
            ),
            Write::PushRevert {
                repo,
                sha,
                branch,
                answer,
                ..
            } => write!(
                f,
                "push revert {repo}@{branch}: {} reverts {}",
                short(answer.as_ref()),
                sha.short()
            ),
        }
    }
}

/// The first line of a body, for one-line displays.
fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

impl Serialize for Write {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("action", self.code())?;
        map.serialize_entry("repo", self.repo().as_str())?;
        match self {
            Self::CreateComment {
                number,
                body,
                answer,
                ..
            } => {
                map.serialize_entry("number", &number.get())?;
                if let Some(id) = answer {
                    map.serialize_entry("comment_id", &id.get())?;
                }
                map.serialize_entry("body", body)?;
            }
            Self::UpdateComment {
                id, body, answer, ..
            } => {
                if let Some(number) = answer {
                    map.serialize_entry("number", &number.get())?;
                }
                map.serialize_entry("comment_id", &id.get())?;
                map.serialize_entry("body", body)?;
            }
            Self::AddLabels { number, labels, .. } => {
                map.serialize_entry("number", &number.get())?;
                map.serialize_entry("labels", labels)?;
            }
            Self::RemoveLabel { number, label, .. } => {
                map.serialize_entry("number", &number.get())?;
                map.serialize_entry("label", label)?;
            }
            Self::CreateIssue { issue, answer, .. } => {
                if let Some(number) = answer {
                    map.serialize_entry("number", &number.get())?;
                }
                map.serialize_entry("title", &issue.title)?;
                map.serialize_entry("labels", &issue.labels)?;
                map.serialize_entry("body", &issue.body)?;
            }
            Self::CloseIssue { number, .. } => {
                map.serialize_entry("number", &number.get())?;
            }
            Self::MergePull {
                number,
                request,
                answer,
                ..
            } => {
                map.serialize_entry("number", &number.get())?;
                map.serialize_entry("head_sha", request.head_sha.as_str())?;
                if let Some(merged) = answer {
                    map.serialize_entry("merge_sha", merged.sha.as_str())?;
                    map.serialize_entry("message", &merged.message)?;
                }
            }
            Self::EnqueuePull {
                number,
                expected_head,
                answer,
                ..
            } => {
                map.serialize_entry("number", &number.get())?;
                map.serialize_entry("head_sha", expected_head.as_str())?;
                if let Some(position) = answer {
                    map.serialize_entry("position", position)?;
                }
            }
            Self::DequeuePull { number, .. } => {
                map.serialize_entry("number", &number.get())?;
            }
            Self::CreateCheckRun { run, .. } => {
                map.serialize_entry("name", &run.name)?;
                map.serialize_entry("head_sha", run.head_sha.as_str())?;
                map.serialize_entry("conclusion", run.conclusion.as_str())?;
                map.serialize_entry("title", &run.title)?;
            }
            Self::UpdateBranch {
                number,
                expected_head,
                answer,
                ..
            } => {
                map.serialize_entry("number", &number.get())?;
                match answer {
                    Some(updated) => {
                        map.serialize_entry("head_sha", updated.head.as_str())?;
                        map.serialize_entry("base_sha", updated.base.as_str())?;
                    }
                    None => map.serialize_entry("expected_head", expected_head.as_str())?,
                }
            }
            Self::PutFile { write, answer, .. } => {
                map.serialize_entry("branch", &write.branch)?;
                map.serialize_entry("path", &write.path)?;
                if let Some(written) = answer {
                    map.serialize_entry("blob_sha", &written.blob)?;
                    map.serialize_entry("commit_sha", written.commit.as_str())?;
                }
                map.serialize_entry("message", &write.message)?;
            }
            Self::CreateBranch { branch, sha, .. } => {
                map.serialize_entry("branch", branch)?;
                map.serialize_entry("sha", sha.as_str())?;
            }
            Self::UpdateBranchRef {
                branch,
                sha,
                force,
                answer,
                ..
            } => {
                map.serialize_entry("branch", branch)?;
                if let Some(before) = answer {
                    map.serialize_entry("before", before.as_str())?;
                }
                map.serialize_entry("sha", sha.as_str())?;
                map.serialize_entry("force", force)?;
            }
            Self::MergeIntoBranch {
                base,
                head,
                message,
                answer,
                ..
            } => {
                map.serialize_entry("base", base)?;
                map.serialize_entry("head", head.as_str())?;
                if let Some(merge) = answer {
                    map.serialize_entry("merge_sha", merge.as_str())?;
                }
                map.serialize_entry("message", message)?;
            }
            Self::UpdateIssueBody { number, body, .. } => {
                map.serialize_entry("number", &number.get())?;
                map.serialize_entry("body", body)?;
            }
            Self::CreatePull { pull, answer, .. } => {
                if let Some(opened) = answer {
                    map.serialize_entry("number", &opened.number.get())?;
                }
                map.serialize_entry("title", &pull.title)?;
                map.serialize_entry("head", &pull.head)?;
                map.serialize_entry("base", &pull.base)?;
                if let Some(opened) = answer {
                    map.serialize_entry("head_sha", opened.head_sha.as_str())?;
                }
                map.serialize_entry("body", &pull.body)?;
            }
            Self::PushRevert {
                sha,
                branch,
                message,
                answer,
                ..
            } => {
                map.serialize_entry("branch", branch)?;
                map.serialize_entry("reverted_sha", sha.as_str())?;
                if let Some(revert) = answer {
                    map.serialize_entry("revert_sha", revert.as_str())?;
                }
                map.serialize_entry("message", message)?;
            }
        }
        map.end()
    }
}

#[cfg(test)]
mod tests;
