//! The second half of the GitHub port: history, file contents, trees and branches, for
//! the branch supervisor, the durable state, the decision inbox and the drift check.

use crate::context::CommitContext;
use crate::ids::{CommitSha, Login, PrNumber, RepoName};

use super::github::{GitHub, GitHubError};

/// A file read from a branch or commit (`GET /contents/{path}?ref=`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileContent {
    /// The decoded content. Files that are not UTF-8 are read lossily.
    pub text: String,
    /// The git blob id, the precondition for [`GitHubHistory::put_file`].
    pub blob_sha: String,
}

/// One entry of a recursive tree listing (blobs only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEntry {
    /// Path from the repository root.
    pub path: String,
    /// The git blob id of the file.
    pub blob_sha: String,
}

/// A recursive tree listing (`GET /git/trees/{ref}?recursive=1`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    /// The blobs, in path order.
    pub entries: Vec<TreeEntry>,
    /// GitHub cut the listing short (more than 100,000 entries or 7 MB): callers fall
    /// back to per-path [`GitHubHistory::file`] reads.
    pub truncated: bool,
}

/// A pull request that contains a commit (`GET /commits/{sha}/pulls`), with who merged it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitPull {
    /// The pull request.
    pub number: PrNumber,
    /// Who merged it, when it was merged and GitHub names the actor.
    pub merged_by: Option<Login>,
    /// The commit its merge produced, when merged.
    pub merge_commit_sha: Option<CommitSha>,
}

/// What lies between two commits (`GET /compare/{base}...{head}`): the commits a branch
/// update from `base` to `head` brought, whatever their dates and however they were merged.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The commits reachable from `head` and not from `base`, in GitHub's order (oldest
    /// first), at most as many as the caller asked for.
    pub commits: Vec<CommitContext>,
    /// How many such commits GitHub counts (`total_commits`): more than `commits.len()`
    /// when the listing stopped at the caller's limit.
    pub total: usize,
    /// Whether `base` is an ancestor of `head` (GitHub's status `ahead` or `identical`):
    /// false for a rewrite (`diverged`, `behind`).
    pub fast_forward: bool,
}

/// A write of one file on a branch (`PUT /contents/{path}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileWrite {
    /// The branch to commit to.
    pub branch: String,
    /// The path.
    pub path: String,
    /// The new content.
    pub text: String,
    /// The blob the file must still have (`None`: the file must not exist yet).
    pub expected_blob_sha: Option<String>,
    /// The commit message.
    pub message: String,
}

/// A new pull request (`POST /pulls`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPull {
    /// Title.
    pub title: String,
    /// Markdown body.
    pub body: String,
    /// The branch with the changes.
    pub head: String,
    /// The branch to merge into.
    pub base: String,
}

/// The reads and writes beyond the pull-request path. Every [`GitHub`] error rule applies;
/// the extra cases are named per method.
#[async_trait::async_trait]
pub trait GitHubHistory: GitHub {
    /// One commit with its parents and message (`GET /commits/{sha}`).
    ///
    /// # Errors
    /// [`GitHubError::NotFound`] for an unknown SHA.
    async fn commit(&self, repo: &RepoName, sha: &CommitSha) -> Result<CommitContext, GitHubError>;

    /// Commits reachable from a branch head, newest first, at most `limit`
    /// (`GET /commits?sha=<branch>&per_page=100`, as many pages as needed).
    ///
    /// # Errors
    /// [`GitHubError::NotFound`] when the branch does not exist.
    async fn branch_commits(
        &self,
        repo: &RepoName,
        branch: &str,
        limit: usize,
    ) -> Result<Vec<CommitContext>, GitHubError>;

    /// The commits between `base` and `head`, at most `limit` of them
    /// (`GET /compare/{base}...{head}?per_page=100&page=`, as many pages as needed).
    ///
    /// # Errors
    /// [`GitHubError::NotFound`] when either commit is unknown.
    async fn compare(
        &self,
        repo: &RepoName,
        base: &CommitSha,
        head: &CommitSha,
        limit: usize,
    ) -> Result<Comparison, GitHubError>;

    /// A file at a branch or commit, `None` when it does not exist there
    /// (`GET /contents/{path}?ref=`; 404 is `Ok(None)`).
    ///
    /// # Errors
    /// [`GitHubError::NotFound`] when the repository or the ref does not exist.
    async fn file(
        &self,
        repo: &RepoName,
        path: &str,
        git_ref: &str,
    ) -> Result<Option<FileContent>, GitHubError>;

    /// Writes one file as one commit on a branch and returns the new blob id
    /// (`PUT /contents/{path}` with the blob precondition).
    ///
    /// # Errors
    /// [`GitHubError::Conflict`] when the file's blob is not `expected_blob_sha` (409/422);
    /// [`GitHubError::NotFound`] when the branch does not exist.
    async fn put_file(&self, repo: &RepoName, write: &FileWrite) -> Result<String, GitHubError>;

    /// The recursive tree of a branch or commit (`GET /git/trees/{ref}?recursive=1`).
    ///
    /// # Errors
    /// [`GitHubError::NotFound`] when the ref does not exist.
    async fn tree(&self, repo: &RepoName, git_ref: &str) -> Result<Tree, GitHubError>;

    /// Creates a branch at a commit (`POST /git/refs`).
    ///
    /// # Errors
    /// [`GitHubError::Conflict`] when the branch already exists (422).
    async fn create_branch(
        &self,
        repo: &RepoName,
        branch: &str,
        sha: &CommitSha,
    ) -> Result<(), GitHubError>;

    /// Moves a branch to a commit (`PATCH /git/refs/heads/{branch}` with `sha` and
    /// `force`). Without `force` GitHub refuses (422) unless the move is a fast-forward.
    ///
    /// # Errors
    /// [`GitHubError::Conflict`] when `force` is false and `sha` does not descend from the
    /// branch's head (422 "Update is not a fast forward");
    /// [`GitHubError::NotFound`] when the branch does not exist (GitHub answers 422
    /// "Reference does not exist"; the adapter maps it) or the commit is unknown.
    async fn update_branch_ref(
        &self,
        repo: &RepoName,
        branch: &str,
        sha: &CommitSha,
        force: bool,
    ) -> Result<(), GitHubError>;

    /// Merges a commit into a branch (`POST /merges` with `base`, `head` = the SHA and
    /// `commit_message`) and returns the merge commit, or `None` when there was nothing to
    /// merge (204: `head` is already reachable from the branch).
    ///
    /// # Errors
    /// [`GitHubError::Conflict`] on a merge conflict (409);
    /// [`GitHubError::NotFound`] when the branch or the commit does not exist (404).
    async fn merge_into_branch(
        &self,
        repo: &RepoName,
        base: &str,
        head: &CommitSha,
        commit_message: &str,
    ) -> Result<Option<CommitSha>, GitHubError>;

    /// The pull requests that contain a commit (`GET /commits/{sha}/pulls`).
    ///
    /// # Errors
    /// See the trait documentation.
    async fn commit_pulls(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
    ) -> Result<Vec<CommitPull>, GitHubError>;

    /// Replaces an issue's body (`PATCH /issues/{n}` with `body`).
    ///
    /// # Errors
    /// [`GitHubError::NotFound`] for an unknown issue.
    async fn update_issue_body(
        &self,
        repo: &RepoName,
        number: PrNumber,
        body: &str,
    ) -> Result<(), GitHubError>;

    /// Opens a pull request (`POST /pulls`) and returns its number.
    ///
    /// # Errors
    /// [`GitHubError::Conflict`] when one is already open for the same head (422).
    async fn create_pull(&self, repo: &RepoName, pull: &NewPull) -> Result<PrNumber, GitHubError>;

    /// Creates `branch` from `main` with one commit that reverts `sha` (a commit with at
    /// most one parent; the caller proves that first) and the given message, and returns
    /// the revert commit. The REST adapter does this with git; the in-memory world
    /// records it.
    ///
    /// # Errors
    /// [`GitHubError::Conflict`] when the revert does not apply cleanly or the branch exists.
    async fn push_revert(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
        branch: &str,
        message: &str,
    ) -> Result<CommitSha, GitHubError>;
}
