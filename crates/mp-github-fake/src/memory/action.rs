//! `Action`: one entry of the in-memory world's ordered log of accepted mutations.

use std::fmt;

use serde::Serialize;

/// One mutation GitHub accepted, with its essentials. Serialized with a snake_case
/// `action` tag, e.g. `{"action": "add_labels", "repo": "acme/app", "number": 7, ...}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Action {
    /// A comment was posted.
    CreateComment {
        /// `owner/repo`.
        repo: String,
        /// Issue or pull-request number.
        number: u64,
        /// The new comment's id.
        comment_id: u64,
        /// The body.
        body: String,
    },
    /// A comment's body was replaced.
    UpdateComment {
        /// `owner/repo`.
        repo: String,
        /// The issue or pull request the comment is on.
        number: u64,
        /// The comment id.
        comment_id: u64,
        /// The new body.
        body: String,
    },
    /// Labels were added (as requested; labels already present stay once).
    AddLabels {
        /// `owner/repo`.
        repo: String,
        /// Issue or pull-request number.
        number: u64,
        /// The labels requested.
        labels: Vec<String>,
    },
    /// A present label was removed.
    RemoveLabel {
        /// `owner/repo`.
        repo: String,
        /// Issue or pull-request number.
        number: u64,
        /// The label.
        label: String,
    },
    /// An issue was opened.
    CreateIssue {
        /// `owner/repo`.
        repo: String,
        /// The new issue's number.
        number: u64,
        /// Title.
        title: String,
        /// Labels set on creation.
        labels: Vec<String>,
        /// Body.
        body: String,
    },
    /// An issue or pull request was closed.
    CloseIssue {
        /// `owner/repo`.
        repo: String,
        /// Issue or pull-request number.
        number: u64,
    },
    /// A pull request was squash-merged.
    MergePull {
        /// `owner/repo`.
        repo: String,
        /// Pull-request number.
        number: u64,
        /// The head that was merged.
        head_sha: String,
        /// The squash commit, now the head of the base branch.
        merge_sha: String,
        /// The squash commit's full message.
        message: String,
    },
    /// A pull request's branch was brought up to date with its base.
    UpdateBranch {
        /// `owner/repo`.
        repo: String,
        /// Pull-request number.
        number: u64,
        /// The new head (a merge commit).
        head_sha: String,
        /// The new base commit (the base branch's head).
        base_sha: String,
    },
    /// A file was written on a branch as one new commit (`PUT /contents/{path}`).
    PutFile {
        /// `owner/repo`.
        repo: String,
        /// The branch written to, moved to the new commit.
        branch: String,
        /// The path.
        path: String,
        /// The new content's blob id.
        blob_sha: String,
        /// The new commit.
        commit_sha: String,
        /// The commit message.
        message: String,
    },
    /// A branch was created at a commit.
    CreateBranch {
        /// `owner/repo`.
        repo: String,
        /// The new branch.
        branch: String,
        /// The commit it points at.
        sha: String,
    },
    /// A branch was moved to a commit (`PATCH /git/refs/heads/{branch}`).
    UpdateRef {
        /// `owner/repo`.
        repo: String,
        /// The branch moved.
        branch: String,
        /// Its head before.
        before: String,
        /// Its head now.
        sha: String,
        /// Whether the update was forced (it need not have been a fast-forward).
        force: bool,
    },
    /// A commit was merged into a branch as a new merge commit (`POST /merges`).
    MergeBranch {
        /// `owner/repo`.
        repo: String,
        /// The branch merged into, moved to the merge commit.
        base: String,
        /// The commit merged.
        head: String,
        /// The merge commit, parents the branch's old head and `head`.
        merge_sha: String,
        /// The merge commit's message.
        message: String,
    },
    /// An issue's or pull request's body was replaced.
    UpdateIssueBody {
        /// `owner/repo`.
        repo: String,
        /// Issue or pull-request number.
        number: u64,
        /// The new body.
        body: String,
    },
    /// A pull request was opened.
    CreatePull {
        /// `owner/repo`.
        repo: String,
        /// The new pull request's number.
        number: u64,
        /// Title.
        title: String,
        /// The head branch.
        head: String,
        /// The base branch.
        base: String,
        /// The head commit.
        head_sha: String,
        /// Body.
        body: String,
    },
    /// A branch was pushed with one commit that reverts another.
    PushRevert {
        /// `owner/repo`.
        repo: String,
        /// The new branch.
        branch: String,
        /// The commit reverted.
        reverted_sha: String,
        /// The revert commit, the new branch's head.
        revert_sha: String,
        /// The revert commit's message.
        message: String,
    },
}

impl Action {
    /// What was acted on: `owner/repo#N` for an issue or pull request, `owner/repo@branch`
    /// for a branch.
    pub fn target(&self) -> String {
        let (repo, number) = match self {
            Self::CreateComment { repo, number, .. }
            | Self::UpdateComment { repo, number, .. }
            | Self::AddLabels { repo, number, .. }
            | Self::RemoveLabel { repo, number, .. }
            | Self::CreateIssue { repo, number, .. }
            | Self::CloseIssue { repo, number }
            | Self::MergePull { repo, number, .. }
            | Self::UpdateBranch { repo, number, .. }
            | Self::UpdateIssueBody { repo, number, .. }
            | Self::CreatePull { repo, number, .. } => (repo, number),
            Self::PutFile { repo, branch, .. }
            | Self::CreateBranch { repo, branch, .. }
            | Self::UpdateRef { repo, branch, .. }
            | Self::MergeBranch {
                repo, base: branch, ..
            }
            | Self::PushRevert { repo, branch, .. } => return format!("{repo}@{branch}"),
        };
        format!("{repo}#{number}")
    }
}

impl fmt::Display for Action {
    /// One line: the verb, the target and the essentials (bodies by their first line).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let target = self.target();
        match self {
            Self::CreateComment {
                comment_id, body, ..
            } => write!(
                f,
                "comment {target} (id {comment_id}): {}",
                first_line(body)
            ),
            Self::UpdateComment {
                comment_id, body, ..
            } => write!(
                f,
                "update comment {comment_id} on {target}: {}",
                first_line(body)
            ),
            Self::AddLabels { labels, .. } => {
                write!(f, "add labels {target}: {}", labels.join(", "))
            }
            Self::RemoveLabel { label, .. } => write!(f, "remove label {target}: {label}"),
            Self::CreateIssue { title, labels, .. } => {
                write!(f, "open issue {target}: {title}")?;
                if !labels.is_empty() {
                    write!(f, " [{}]", labels.join(", "))?;
                }
                Ok(())
            }
            Self::CloseIssue { .. } => write!(f, "close {target}"),
            Self::MergePull {
                head_sha,
                merge_sha,
                ..
            } => write!(
                f,
                "merge {target}: head {} -> base {}",
                short(head_sha),
                short(merge_sha)
            ),
            Self::UpdateBranch {
                head_sha, base_sha, ..
            } => write!(
                f,
                "update branch {target}: head {} on base {}",
                short(head_sha),
                short(base_sha)
            ),
            Self::PutFile {
                path,
                blob_sha,
                commit_sha,
                message,
                ..
            } => write!(
                f,
                "write {target} {path} (blob {}, commit {}): {}",
                short(blob_sha),
                short(commit_sha),
                first_line(message)
            ),
            Self::CreateBranch { sha, .. } => {
                write!(f, "create branch {target} at {}", short(sha))
            }
            Self::UpdateRef {
                before, sha, force, ..
            } => write!(
                f,
                "move {target}: {} -> {}{}",
                short(before),
                short(sha),
                if *force { " (forced)" } else { "" }
            ),
            Self::MergeBranch {
                head,
                merge_sha,
                message,
                ..
            } => write!(
                f,
                "merge {} into {target} as {}: {}",
                short(head),
                short(merge_sha),
                first_line(message)
            ),
            Self::UpdateIssueBody { body, .. } => {
                write!(f, "update body of {target}: {}", first_line(body))
            }
            Self::CreatePull {
                title, head, base, ..
            } => write!(f, "open pull request {target}: {title} ({head} -> {base})"),
            Self::PushRevert {
                reverted_sha,
                revert_sha,
                ..
            } => write!(
                f,
                "push revert {target}: {} reverts {}",
                short(revert_sha),
                short(reverted_sha)
            ),
        }
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

fn short(sha: &str) -> &str {
    sha.get(..7).unwrap_or(sha)
}
