//! `Recording`: a pass-through over a port that keeps every write GitHub accepted, in
//! order, so a tick against GitHub can report what it did.

use std::sync::{Mutex, PoisonError};

use mp_core::context::LabelRecord;
use mp_core::context::{
    CheckRun, Comment, CommentId, CommitContext, FileChange, LabelEvent, Reaction, RefUpdate,
    WorkflowJob,
};
use mp_core::ids::{CommitSha, Login, PrNumber, RepoName};

use mp_core::port::{CommitPull, Comparison, FileContent, FileWrite, GitHubHistory, NewPull, Tree};
use mp_core::port::{
    GitHub, GitHubError, Issue, IssueQuery, MergeRequest, NewIssue, PullRequest,
    UpdateBranchOutcome, Write,
};

/// Forwards every call to the wrapped port and records each write that succeeded as a
/// [`Write`]: the request as it was made, with GitHub's answer where the port's result
/// holds all of it (a new comment's id, a new issue's number, a revert commit). Failed
/// writes are not recorded.
pub struct Recording<'a> {
    inner: &'a dyn GitHubHistory,
    done: Mutex<Vec<Write>>,
}

impl std::fmt::Debug for Recording<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recording")
            .field("done", &self.writes())
            .finish_non_exhaustive()
    }
}

impl<'a> Recording<'a> {
    /// Records the writes made through `inner`.
    pub fn new(inner: &'a dyn GitHubHistory) -> Self {
        Self {
            inner,
            done: Mutex::new(Vec::new()),
        }
    }

    /// The accepted writes so far, in order.
    pub fn writes(&self) -> Vec<Write> {
        self.done
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The accepted writes, in order, consuming the recorder.
    pub fn into_writes(self) -> Vec<Write> {
        self.done
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps `write` when `result` is a success.
    fn keep<T>(
        &self,
        result: Result<T, GitHubError>,
        write: impl FnOnce(&T) -> Write,
    ) -> Result<T, GitHubError> {
        if let Ok(answer) = &result {
            self.done
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(write(answer));
        }
        result
    }
}

#[async_trait::async_trait]
impl GitHub for Recording<'_> {
    async fn bot_login(&self) -> Result<Login, GitHubError> {
        self.inner.bot_login().await
    }

    fn rate_limit_remaining(&self) -> Option<u32> {
        self.inner.rate_limit_remaining()
    }

    fn graphql_remaining(&self) -> Option<u32> {
        self.inner.graphql_remaining()
    }

    async fn open_pulls(&self, repo: &RepoName) -> Result<Vec<PullRequest>, GitHubError> {
        self.inner.open_pulls(repo).await
    }

    async fn pull(&self, repo: &RepoName, number: PrNumber) -> Result<PullRequest, GitHubError> {
        self.inner.pull(repo, number).await
    }

    async fn pull_commits(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<CommitContext>, GitHubError> {
        self.inner.pull_commits(repo, number).await
    }

    async fn pull_files(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<FileChange>, GitHubError> {
        self.inner.pull_files(repo, number).await
    }

    async fn check_runs(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
    ) -> Result<Vec<CheckRun>, GitHubError> {
        self.inner.check_runs(repo, sha).await
    }

    async fn workflow_jobs(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
    ) -> Result<Vec<WorkflowJob>, GitHubError> {
        self.inner.workflow_jobs(repo, sha).await
    }

    async fn label_events(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<LabelEvent>, GitHubError> {
        self.inner.label_events(repo, number).await
    }

    async fn head_ref_updates(
        &self,
        repo: &RepoName,
        head_ref: &str,
    ) -> Result<Vec<RefUpdate>, GitHubError> {
        self.inner.head_ref_updates(repo, head_ref).await
    }

    async fn label_records(
        &self,
        repo: &RepoName,
        names: &[String],
    ) -> Result<Vec<LabelRecord>, GitHubError> {
        self.inner.label_records(repo, names).await
    }

    async fn branch_updates_until(
        &self,
        repo: &RepoName,
        branch: &str,
        until: &[CommitSha],
    ) -> Result<Vec<RefUpdate>, GitHubError> {
        self.inner.branch_updates_until(repo, branch, until).await
    }

    async fn repo_activity(
        &self,
        repo: &RepoName,
        max_pages: usize,
    ) -> Result<mp_core::port::RepoActivity, GitHubError> {
        self.inner.repo_activity(repo, max_pages).await
    }

    async fn comments(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<Comment>, GitHubError> {
        self.inner.comments(repo, number).await
    }

    async fn reactions(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<Reaction>, GitHubError> {
        self.inner.reactions(repo, number).await
    }

    async fn branch_head(&self, repo: &RepoName, branch: &str) -> Result<CommitSha, GitHubError> {
        self.inner.branch_head(repo, branch).await
    }

    async fn branch_rules(
        &self,
        repo: &RepoName,
        branch: &str,
    ) -> Result<Vec<String>, GitHubError> {
        self.inner.branch_rules(repo, branch).await
    }

    async fn default_branch(&self, repo: &RepoName) -> Result<String, GitHubError> {
        self.inner.default_branch(repo).await
    }

    async fn default_branches(
        &self,
        repos: &[RepoName],
    ) -> Result<std::collections::BTreeMap<RepoName, String>, GitHubError> {
        self.inner.default_branches(repos).await
    }

    async fn open_pulls_with_reads(
        &self,
        repo: &RepoName,
    ) -> Result<Vec<mp_core::port::ListedPull>, GitHubError> {
        self.inner.open_pulls_with_reads(repo).await
    }

    async fn issues(&self, repo: &RepoName, query: &IssueQuery) -> Result<Vec<Issue>, GitHubError> {
        self.inner.issues(repo, query).await
    }

    async fn create_comment(
        &self,
        repo: &RepoName,
        number: PrNumber,
        body: &str,
    ) -> Result<Comment, GitHubError> {
        let result = self.inner.create_comment(repo, number, body).await;
        self.keep(result, |comment| Write::CreateComment {
            repo: repo.clone(),
            number,
            body: body.to_owned(),
            answer: Some(comment.id),
        })
    }

    async fn update_comment(
        &self,
        repo: &RepoName,
        id: CommentId,
        body: &str,
    ) -> Result<(), GitHubError> {
        let result = self.inner.update_comment(repo, id, body).await;
        self.keep(result, |()| Write::UpdateComment {
            repo: repo.clone(),
            id,
            body: body.to_owned(),
            answer: None,
        })
    }

    async fn add_labels(
        &self,
        repo: &RepoName,
        number: PrNumber,
        labels: &[String],
    ) -> Result<(), GitHubError> {
        let result = self.inner.add_labels(repo, number, labels).await;
        self.keep(result, |_| Write::AddLabels {
            repo: repo.clone(),
            number,
            labels: labels.to_vec(),
        })
    }

    async fn remove_label(
        &self,
        repo: &RepoName,
        number: PrNumber,
        label: &str,
    ) -> Result<(), GitHubError> {
        let result = self.inner.remove_label(repo, number, label).await;
        self.keep(result, |_| Write::RemoveLabel {
            repo: repo.clone(),
            number,
            label: label.to_owned(),
        })
    }

    async fn create_issue(&self, repo: &RepoName, issue: &NewIssue) -> Result<Issue, GitHubError> {
        let result = self.inner.create_issue(repo, issue).await;
        self.keep(result, |created| Write::CreateIssue {
            repo: repo.clone(),
            issue: issue.clone(),
            answer: Some(created.number),
        })
    }

    async fn close_issue(&self, repo: &RepoName, number: PrNumber) -> Result<(), GitHubError> {
        let result = self.inner.close_issue(repo, number).await;
        self.keep(result, |_| Write::CloseIssue {
            repo: repo.clone(),
            number,
        })
    }

    async fn merge_queue(
        &self,
        repo: &RepoName,
        branch: &str,
    ) -> Result<Option<Vec<mp_core::port::QueueEntry>>, GitHubError> {
        self.inner.merge_queue(repo, branch).await
    }

    async fn queue_entry(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Option<mp_core::port::QueueEntry>, GitHubError> {
        self.inner.queue_entry(repo, number).await
    }

    async fn enqueue_pull(
        &self,
        repo: &RepoName,
        number: PrNumber,
        expected_head: &CommitSha,
    ) -> Result<mp_core::port::QueueEntry, GitHubError> {
        let result = self.inner.enqueue_pull(repo, number, expected_head).await;
        self.keep(result, |entry| Write::EnqueuePull {
            repo: repo.clone(),
            number,
            expected_head: expected_head.clone(),
            answer: Some(entry.position),
        })
    }

    async fn dequeue_pull(&self, repo: &RepoName, number: PrNumber) -> Result<(), GitHubError> {
        let result = self.inner.dequeue_pull(repo, number).await;
        self.keep(result, |()| Write::DequeuePull {
            repo: repo.clone(),
            number,
        })
    }

    async fn last_queue_removal(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Option<mp_core::port::QueueRemoval>, GitHubError> {
        self.inner.last_queue_removal(repo, number).await
    }

    async fn merge_groups(
        &self,
        repo: &RepoName,
        base: &str,
    ) -> Result<Vec<mp_core::port::MergeGroupRef>, GitHubError> {
        self.inner.merge_groups(repo, base).await
    }

    async fn create_check_run(
        &self,
        repo: &RepoName,
        run: &mp_core::port::NewCheckRun,
    ) -> Result<(), GitHubError> {
        let result = self.inner.create_check_run(repo, run).await;
        self.keep(result, |()| Write::CreateCheckRun {
            repo: repo.clone(),
            run: run.clone(),
        })
    }

    async fn merge_pull(
        &self,
        repo: &RepoName,
        number: PrNumber,
        request: &MergeRequest,
    ) -> Result<CommitSha, GitHubError> {
        let result = self.inner.merge_pull(repo, number, request).await;
        self.keep(result, |_| Write::MergePull {
            repo: repo.clone(),
            number,
            request: request.clone(),
            answer: None,
        })
    }

    async fn update_branch(
        &self,
        repo: &RepoName,
        number: PrNumber,
        expected_head: &CommitSha,
    ) -> Result<UpdateBranchOutcome, GitHubError> {
        let result = self.inner.update_branch(repo, number, expected_head).await;
        let accepted = matches!(result, Ok(UpdateBranchOutcome::Accepted));
        if !accepted {
            return result;
        }
        self.keep(result, |_| Write::UpdateBranch {
            repo: repo.clone(),
            number,
            expected_head: expected_head.clone(),
            answer: None,
        })
    }
}

#[async_trait::async_trait]
impl GitHubHistory for Recording<'_> {
    async fn commit(&self, repo: &RepoName, sha: &CommitSha) -> Result<CommitContext, GitHubError> {
        self.inner.commit(repo, sha).await
    }

    async fn branch_commits(
        &self,
        repo: &RepoName,
        branch: &str,
        limit: usize,
    ) -> Result<Vec<CommitContext>, GitHubError> {
        self.inner.branch_commits(repo, branch, limit).await
    }

    async fn file(
        &self,
        repo: &RepoName,
        path: &str,
        git_ref: &str,
    ) -> Result<Option<FileContent>, GitHubError> {
        self.inner.file(repo, path, git_ref).await
    }

    async fn put_file(&self, repo: &RepoName, write: &FileWrite) -> Result<String, GitHubError> {
        let result = self.inner.put_file(repo, write).await;
        self.keep(result, |_| Write::PutFile {
            repo: repo.clone(),
            write: write.clone(),
            answer: None,
        })
    }

    async fn tree(&self, repo: &RepoName, git_ref: &str) -> Result<Tree, GitHubError> {
        self.inner.tree(repo, git_ref).await
    }

    async fn create_branch(
        &self,
        repo: &RepoName,
        branch: &str,
        sha: &CommitSha,
    ) -> Result<(), GitHubError> {
        let result = self.inner.create_branch(repo, branch, sha).await;
        self.keep(result, |_| Write::CreateBranch {
            repo: repo.clone(),
            branch: branch.to_owned(),
            sha: sha.clone(),
        })
    }

    async fn update_branch_ref(
        &self,
        repo: &RepoName,
        branch: &str,
        sha: &CommitSha,
        force: bool,
    ) -> Result<(), GitHubError> {
        let result = self.inner.update_branch_ref(repo, branch, sha, force).await;
        self.keep(result, |()| Write::UpdateBranchRef {
            repo: repo.clone(),
            branch: branch.to_owned(),
            sha: sha.clone(),
            force,
            answer: None,
        })
    }

    async fn merge_into_branch(
        &self,
        repo: &RepoName,
        base: &str,
        head: &CommitSha,
        commit_message: &str,
    ) -> Result<Option<CommitSha>, GitHubError> {
        let result = self
            .inner
            .merge_into_branch(repo, base, head, commit_message)
            .await;
        // Nothing to merge (204) changed nothing: it is not a write done.
        if !matches!(result, Ok(Some(_))) {
            return result;
        }
        self.keep(result, |merge| Write::MergeIntoBranch {
            repo: repo.clone(),
            base: base.to_owned(),
            head: head.clone(),
            message: commit_message.to_owned(),
            answer: merge.clone(),
        })
    }

    async fn compare(
        &self,
        repo: &RepoName,
        base: &CommitSha,
        head: &CommitSha,
        limit: usize,
    ) -> Result<Comparison, GitHubError> {
        self.inner.compare(repo, base, head, limit).await
    }

    async fn commit_pulls(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
    ) -> Result<Vec<CommitPull>, GitHubError> {
        self.inner.commit_pulls(repo, sha).await
    }

    async fn update_issue_body(
        &self,
        repo: &RepoName,
        number: PrNumber,
        body: &str,
    ) -> Result<(), GitHubError> {
        let result = self.inner.update_issue_body(repo, number, body).await;
        self.keep(result, |_| Write::UpdateIssueBody {
            repo: repo.clone(),
            number,
            body: body.to_owned(),
        })
    }

    async fn create_pull(&self, repo: &RepoName, pull: &NewPull) -> Result<PrNumber, GitHubError> {
        let result = self.inner.create_pull(repo, pull).await;
        self.keep(result, |_| Write::CreatePull {
            repo: repo.clone(),
            pull: pull.clone(),
            answer: None,
        })
    }

    async fn push_revert(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
        branch: &str,
        message: &str,
    ) -> Result<CommitSha, GitHubError> {
        let result = self.inner.push_revert(repo, sha, branch, message).await;
        self.keep(result, |revert| Write::PushRevert {
            repo: repo.clone(),
            sha: sha.clone(),
            branch: branch.to_owned(),
            message: message.to_owned(),
            answer: Some(revert.clone()),
        })
    }
}

#[cfg(test)]
mod tests;
