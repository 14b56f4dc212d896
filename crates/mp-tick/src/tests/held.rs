//! `Held`: the port the pull-request path's tests run over. It forwards every call to
//! the in-memory GitHub; the reads the prefetch takes are counted and can be held in
//! flight across one wait, so a test sees how many overlap (decisions/0034, 0055), and
//! `main` can move under the tick once it has read it, as another client's push.

use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use crate::MAIN_BRANCH;
use crate::testkit::{OWNER, login, repo};
use mp_core::context::{
    CheckRun, Comment, CommentId, CommitContext, FileChange, LabelEvent, LabelRecord, Reaction,
    RefUpdate, RefUpdateKind, WorkflowJob,
};
use mp_core::ids::{CommitSha, Login, PrNumber, RepoName};
use mp_core::port::{
    GitHub, GitHubError, Issue, IssueQuery, ListedPull, MergeRequest, NewIssue, PullRequest,
    UpdateBranchOutcome,
};
use mp_github_fake::MemoryGitHub;
use mp_github_fake::world::Commit;

/// The port the pull-request path runs over: every call goes to the in-memory GitHub; the
/// reads the prefetch takes (a pull request's parts, a branch head) are counted and, when
/// `holding`, held in flight across one wait, so reads in flight overlap; a push set in
/// `push_on_main` lands on `main` of `acme/app` right after the tick first reads it.
#[derive(Debug)]
pub(super) struct Held {
    pub(super) github: MemoryGitHub,
    /// Whether each counted read waits once before it is answered.
    pub(super) holding: bool,
    /// The commit another client pushes on `main` of `acme/app` once it was read.
    pub(super) push_on_main: Mutex<Option<CommitSha>>,
    /// The prefetch's reads that reached GitHub.
    pub(super) reads: AtomicUsize,
    /// Those held now, and the most held at once.
    pub(super) in_flight: AtomicUsize,
    pub(super) max_in_flight: AtomicUsize,
}

/// A future that is pending once, then ready.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

impl Held {
    /// One read of the prefetch's kind, counted, and held across one wait when holding.
    async fn read<T>(&self, read: impl Future<Output = T>) -> T {
        self.reads.fetch_add(1, Ordering::SeqCst);
        if !self.holding {
            return read.await;
        }
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_in_flight.fetch_max(now, Ordering::SeqCst);
        YieldOnce(false).await;
        let answer = read.await;
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        answer
    }

    /// Someone else pushes `to` (a child of the head) on `main` of `acme/app`.
    fn push_on_main(&self, to: CommitSha) {
        self.github.edit_world(|world| {
            let now = world.stamp();
            let app = world.repo_mut(&repo("acme/app")).expect("acme/app");
            let parent = app.branch_head(MAIN_BRANCH).cloned().expect("a main");
            app.commits.push(Commit {
                id: to.to_string(),
                sha: to.clone(),
                message: "chore: another change on main".to_owned(),
                parents: vec![parent],
                author: Some(login(OWNER)),
                committer: Some(login(OWNER)),
                date: Some(now),
                checks: Vec::new(),
                check_workflows: Default::default(),
            });
            app.move_branch(
                MAIN_BRANCH,
                Some(to),
                RefUpdateKind::Push,
                login(OWNER),
                now,
            );
        });
    }
}

#[async_trait::async_trait]
impl GitHub for Held {
    async fn bot_login(&self) -> Result<Login, GitHubError> {
        self.github.bot_login().await
    }
    fn rate_limit_remaining(&self) -> Option<u32> {
        self.github.rate_limit_remaining()
    }
    fn graphql_remaining(&self) -> Option<u32> {
        self.github.graphql_remaining()
    }
    async fn open_pulls(&self, repo: &RepoName) -> Result<Vec<PullRequest>, GitHubError> {
        self.github.open_pulls(repo).await
    }
    async fn open_pulls_with_reads(&self, repo: &RepoName) -> Result<Vec<ListedPull>, GitHubError> {
        self.github.open_pulls_with_reads(repo).await
    }
    async fn pull(&self, repo: &RepoName, number: PrNumber) -> Result<PullRequest, GitHubError> {
        self.github.pull(repo, number).await
    }
    async fn pull_commits(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<CommitContext>, GitHubError> {
        self.read(self.github.pull_commits(repo, number)).await
    }
    async fn pull_files(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<FileChange>, GitHubError> {
        self.read(self.github.pull_files(repo, number)).await
    }
    async fn check_runs(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
    ) -> Result<Vec<CheckRun>, GitHubError> {
        self.read(self.github.check_runs(repo, sha)).await
    }
    async fn workflow_jobs(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
    ) -> Result<Vec<WorkflowJob>, GitHubError> {
        self.github.workflow_jobs(repo, sha).await
    }
    async fn label_events(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<LabelEvent>, GitHubError> {
        self.read(self.github.label_events(repo, number)).await
    }
    async fn head_ref_updates(
        &self,
        repo: &RepoName,
        head_ref: &str,
    ) -> Result<Vec<RefUpdate>, GitHubError> {
        self.read(self.github.head_ref_updates(repo, head_ref))
            .await
    }
    async fn label_records(
        &self,
        repo: &RepoName,
        names: &[String],
    ) -> Result<Vec<LabelRecord>, GitHubError> {
        self.read(self.github.label_records(repo, names)).await
    }
    async fn branch_updates_until(
        &self,
        repo: &RepoName,
        branch: &str,
        until: &[CommitSha],
    ) -> Result<Vec<RefUpdate>, GitHubError> {
        self.github.branch_updates_until(repo, branch, until).await
    }
    async fn comments(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<Comment>, GitHubError> {
        self.read(self.github.comments(repo, number)).await
    }
    async fn reactions(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<Reaction>, GitHubError> {
        self.github.reactions(repo, number).await
    }
    async fn branch_head(&self, repo: &RepoName, branch: &str) -> Result<CommitSha, GitHubError> {
        let head = self.read(self.github.branch_head(repo, branch)).await;
        if repo.as_str() == "acme/app" && branch == MAIN_BRANCH {
            let pushed = self
                .push_on_main
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            if let Some(to) = pushed {
                self.push_on_main(to);
            }
        }
        head
    }
    async fn branch_rules(
        &self,
        repo: &RepoName,
        branch: &str,
    ) -> Result<Vec<String>, GitHubError> {
        self.github.branch_rules(repo, branch).await
    }

    async fn default_branch(&self, repo: &RepoName) -> Result<String, GitHubError> {
        self.github.default_branch(repo).await
    }

    async fn default_branches(
        &self,
        repos: &[RepoName],
    ) -> Result<std::collections::BTreeMap<RepoName, String>, GitHubError> {
        self.github.default_branches(repos).await
    }
    async fn issues(&self, repo: &RepoName, query: &IssueQuery) -> Result<Vec<Issue>, GitHubError> {
        self.github.issues(repo, query).await
    }
    async fn create_comment(
        &self,
        repo: &RepoName,
        number: PrNumber,
        body: &str,
    ) -> Result<Comment, GitHubError> {
        self.github.create_comment(repo, number, body).await
    }
    async fn update_comment(
        &self,
        repo: &RepoName,
        id: CommentId,
        body: &str,
    ) -> Result<(), GitHubError> {
        self.github.update_comment(repo, id, body).await
    }
    async fn add_labels(
        &self,
        repo: &RepoName,
        number: PrNumber,
        labels: &[String],
    ) -> Result<(), GitHubError> {
        self.github.add_labels(repo, number, labels).await
    }
    async fn remove_label(
        &self,
        repo: &RepoName,
        number: PrNumber,
        label: &str,
    ) -> Result<(), GitHubError> {
        self.github.remove_label(repo, number, label).await
    }
    async fn create_issue(&self, repo: &RepoName, issue: &NewIssue) -> Result<Issue, GitHubError> {
        self.github.create_issue(repo, issue).await
    }
    async fn close_issue(&self, repo: &RepoName, number: PrNumber) -> Result<(), GitHubError> {
        self.github.close_issue(repo, number).await
    }
    async fn merge_queue(
        &self,
        repo: &RepoName,
        branch: &str,
    ) -> Result<Option<Vec<mp_core::port::QueueEntry>>, GitHubError> {
        self.github.merge_queue(repo, branch).await
    }
    async fn queue_entry(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Option<mp_core::port::QueueEntry>, GitHubError> {
        self.github.queue_entry(repo, number).await
    }
    async fn enqueue_pull(
        &self,
        repo: &RepoName,
        number: PrNumber,
        expected_head: &CommitSha,
    ) -> Result<mp_core::port::QueueEntry, GitHubError> {
        self.github.enqueue_pull(repo, number, expected_head).await
    }
    async fn dequeue_pull(&self, repo: &RepoName, number: PrNumber) -> Result<(), GitHubError> {
        self.github.dequeue_pull(repo, number).await
    }

    async fn last_queue_removal(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Option<mp_core::port::QueueRemoval>, GitHubError> {
        self.github.last_queue_removal(repo, number).await
    }

    async fn merge_groups(
        &self,
        repo: &RepoName,
        base: &str,
    ) -> Result<Vec<mp_core::port::MergeGroupRef>, GitHubError> {
        self.github.merge_groups(repo, base).await
    }

    async fn create_check_run(
        &self,
        repo: &RepoName,
        run: &mp_core::port::NewCheckRun,
    ) -> Result<(), GitHubError> {
        self.github.create_check_run(repo, run).await
    }
    async fn merge_pull(
        &self,
        repo: &RepoName,
        number: PrNumber,
        request: &MergeRequest,
    ) -> Result<CommitSha, GitHubError> {
        self.github.merge_pull(repo, number, request).await
    }
    async fn update_branch(
        &self,
        repo: &RepoName,
        number: PrNumber,
        expected_head: &CommitSha,
    ) -> Result<UpdateBranchOutcome, GitHubError> {
        self.github.update_branch(repo, number, expected_head).await
    }
}
