//! The lease a running tick keeps (docs/decisions/0065, 0071, 0077): renewed every third of
//! its duration as the tick goes — at its steps' boundaries, before each repository and
//! before each pull request of the pull-request path — and checked before every write of
//! every step ([`Fenced`]): a tick that has not renewed its lease within the renew
//! deadline, or found it lost, writes nothing more and stops.

use std::sync::{Mutex, PoisonError};

use mp_core::context::LabelRecord;
use mp_core::context::{
    CheckRun, Comment, CommentId, CommitContext, FileChange, LabelEvent, Reaction, RefUpdate,
    WorkflowJob,
};
use mp_core::ids::{CommitSha, Login, PrNumber, RepoName, Timestamp};
use mp_core::port::{
    CommitPull, Comparison, FileContent, FileWrite, GitHub, GitHubError, GitHubHistory, Issue,
    IssueQuery, MergeRequest, NewIssue, NewPull, PullRequest, Tree, UpdateBranchOutcome,
};

use super::LeaseClock;
use super::lease::{Lease, LeaseError, LeaseTerms};

/// What the keeper knows of its lease.
struct Kept {
    /// The lease, while the tick holds it (taken out to give it back).
    lease: Option<Lease>,
    /// When it was last renewed (or taken), by the lease clock.
    renewed: Timestamp,
    /// Why it is lost, once it is: every later check answers this.
    lost: Option<LeaseError>,
}

/// A tick's own lease, renewed as the tick goes. Without a lease (a caller that holds it
/// itself, `mp serve`) or without a [clock](super::TickOptions::with_lease_clock) (replays,
/// tests at one instant) it renews nothing and never stops a write.
pub(crate) struct Keeper<'a> {
    github: &'a dyn GitHubHistory,
    clock: Option<LeaseClock>,
    scope: String,
    /// The terms of the lease taken; `None` when the tick took none.
    terms: Option<LeaseTerms>,
    kept: Mutex<Kept>,
}

impl<'a> Keeper<'a> {
    /// Keeps `lease`, taken at `now`, renewing it through `github` by `clock`.
    pub(crate) fn new(
        github: &'a dyn GitHubHistory,
        lease: Option<Lease>,
        clock: Option<LeaseClock>,
        scope: String,
        now: Timestamp,
    ) -> Self {
        Self {
            github,
            clock,
            scope,
            terms: lease.as_ref().map(Lease::terms),
            kept: Mutex::new(Kept {
                lease,
                renewed: now,
                lost: None,
            }),
        }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The time now: the clock's, else the last renewal's (no clock never renews).
    pub(crate) fn now(&self) -> Timestamp {
        let renewed = self.kept().renewed;
        self.clock.as_ref().map_or(renewed, |clock| clock.0.now())
    }

    /// Why the lease is lost, once it is.
    pub(crate) fn lost(&self) -> Option<LeaseError> {
        self.kept().lost.clone()
    }

    /// Marks the lease lost for `why`, and answers that.
    fn lose(&self, why: LeaseError) -> LeaseError {
        let mut kept = self.kept();
        kept.lost.get_or_insert(why).clone()
    }

    /// Whether the tick may write now: its lease is not lost and was renewed within the
    /// renew deadline (by the clock). Past the deadline the lease counts as lost from here
    /// on, a third of its duration before anyone else may take it.
    ///
    /// # Errors
    /// [`LeaseError::Lost`] when it may not.
    pub(crate) fn may_write(&self) -> Result<(), LeaseError> {
        let renewed = {
            let kept = self.kept();
            if let Some(lost) = &kept.lost {
                return Err(lost.clone());
            }
            kept.renewed
        };
        let (Some(terms), Some(_)) = (self.terms, &self.clock) else {
            return Ok(());
        };
        let now = self.now();
        let since = now.seconds_since(renewed);
        let deadline = i64::try_from(terms.renew_deadline().as_secs()).unwrap_or(i64::MAX);
        if since >= deadline {
            return Err(self.lose(LeaseError::Lost {
                scope: self.scope.clone(),
                why: format!(
                    "not renewed within the renew deadline ({deadline} s since {renewed}, now {now})"
                ),
            }));
        }
        Ok(())
    }

    /// Renews the lease when a third of its duration has passed since the last renewal,
    /// before the next write. A renewal that fails for another reason than a lost lease
    /// is a warning (returned) until the renew deadline, then the lease is lost.
    ///
    /// # Errors
    /// [`LeaseError::Lost`] when the lease expired, someone else holds it, or it could not
    /// be renewed within the renew deadline: the tick writes nothing more.
    pub(crate) async fn keep(&self) -> Result<Option<String>, LeaseError> {
        if self.clock.is_none() {
            return Ok(None);
        }
        // The lease is taken out while it is renewed: a second call meanwhile (none is
        // made; the pull-request path renews between pull requests) finds nothing to do.
        let (mut lease, renewed) = {
            let mut kept = self.kept();
            if let Some(lost) = &kept.lost {
                return Err(lost.clone());
            }
            let Some(lease) = kept.lease.take() else {
                return Ok(None);
            };
            (lease, kept.renewed)
        };
        let now = self.now();
        let terms = lease.terms();
        let since = u64::try_from(now.seconds_since(renewed)).unwrap_or(0);
        if since < terms.renew_every().as_secs() && now < lease.until() {
            self.kept().lease = Some(lease);
            return Ok(None);
        }
        let renewal = lease.renew(self.github, now).await;
        self.kept().lease = Some(lease);
        match renewal {
            Ok(()) => {
                self.kept().renewed = now;
                Ok(None)
            }
            Err(error @ LeaseError::Lost { .. }) => Err(self.lose(error)),
            Err(error) if since < terms.renew_deadline().as_secs() => Ok(Some(format!(
                "the tick lease was not renewed ({error}); trying again before the next write"
            ))),
            Err(error) => Err(self.lose(LeaseError::Lost {
                scope: self.scope.clone(),
                why: format!("not renewed within the renew deadline ({error})"),
            })),
        }
    }

    /// The lease, to give back (none once lost or never taken).
    pub(crate) fn into_lease(self) -> Option<Lease> {
        let kept = self
            .kept
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        if kept.lost.is_some() {
            return None;
        }
        kept.lease
    }
}

/// A GitHub port with the lease checked before every write: reads go through; a write
/// when the lease is lost or past its renew deadline is refused without calling GitHub
/// ([`GitHubError::Unavailable`] naming the lease). The pull-request path writes through
/// it ([`GitHub`]) and stops after the pull request at hand; the decision inbox, the burn-in
/// clock, the queues, the branch supervisor and the drift check write through it too
/// ([`GitHubHistory`]), and the tick stops at its next step (decisions/0077).
pub(crate) struct Fenced<'a, 'b, G: ?Sized = dyn GitHub> {
    inner: &'a G,
    keeper: &'a Keeper<'b>,
}

impl<'a, 'b, G: ?Sized> Fenced<'a, 'b, G> {
    /// `inner`, its writes checked against `keeper`.
    pub(crate) fn new(inner: &'a G, keeper: &'a Keeper<'b>) -> Self {
        Self { inner, keeper }
    }

    fn may_write(&self) -> Result<(), GitHubError> {
        self.keeper
            .may_write()
            .map_err(|error| GitHubError::Unavailable {
                route: "tick lease".to_owned(),
                message: format!("{error}; nothing written"),
            })
    }
}

#[async_trait::async_trait]
impl<G: GitHub + ?Sized> GitHub for Fenced<'_, '_, G> {
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

    async fn branch_rules(
        &self,
        repo: &RepoName,
        branch: &str,
    ) -> Result<Vec<String>, GitHubError> {
        self.inner.branch_rules(repo, branch).await
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
        self.may_write()?;
        self.inner.create_comment(repo, number, body).await
    }

    async fn update_comment(
        &self,
        repo: &RepoName,
        id: CommentId,
        body: &str,
    ) -> Result<(), GitHubError> {
        self.may_write()?;
        self.inner.update_comment(repo, id, body).await
    }

    async fn add_labels(
        &self,
        repo: &RepoName,
        number: PrNumber,
        labels: &[String],
    ) -> Result<(), GitHubError> {
        self.may_write()?;
        self.inner.add_labels(repo, number, labels).await
    }

    async fn remove_label(
        &self,
        repo: &RepoName,
        number: PrNumber,
        label: &str,
    ) -> Result<(), GitHubError> {
        self.may_write()?;
        self.inner.remove_label(repo, number, label).await
    }

    async fn create_issue(&self, repo: &RepoName, issue: &NewIssue) -> Result<Issue, GitHubError> {
        self.may_write()?;
        self.inner.create_issue(repo, issue).await
    }

    async fn close_issue(&self, repo: &RepoName, number: PrNumber) -> Result<(), GitHubError> {
        self.may_write()?;
        self.inner.close_issue(repo, number).await
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
        self.may_write()?;
        self.inner.enqueue_pull(repo, number, expected_head).await
    }

    async fn dequeue_pull(&self, repo: &RepoName, number: PrNumber) -> Result<(), GitHubError> {
        self.may_write()?;
        self.inner.dequeue_pull(repo, number).await
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
        self.may_write()?;
        self.inner.create_check_run(repo, run).await
    }

    async fn merge_pull(
        &self,
        repo: &RepoName,
        number: PrNumber,
        request: &MergeRequest,
    ) -> Result<CommitSha, GitHubError> {
        self.may_write()?;
        self.inner.merge_pull(repo, number, request).await
    }

    async fn update_branch(
        &self,
        repo: &RepoName,
        number: PrNumber,
        expected_head: &CommitSha,
    ) -> Result<UpdateBranchOutcome, GitHubError> {
        self.may_write()?;
        self.inner.update_branch(repo, number, expected_head).await
    }
}

#[async_trait::async_trait]
impl<G: GitHubHistory + ?Sized> GitHubHistory for Fenced<'_, '_, G> {
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

    async fn compare(
        &self,
        repo: &RepoName,
        base: &CommitSha,
        head: &CommitSha,
        limit: usize,
    ) -> Result<Comparison, GitHubError> {
        self.inner.compare(repo, base, head, limit).await
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
        self.may_write()?;
        self.inner.put_file(repo, write).await
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
        self.may_write()?;
        self.inner.create_branch(repo, branch, sha).await
    }

    async fn update_branch_ref(
        &self,
        repo: &RepoName,
        branch: &str,
        sha: &CommitSha,
        force: bool,
    ) -> Result<(), GitHubError> {
        self.may_write()?;
        self.inner.update_branch_ref(repo, branch, sha, force).await
    }

    async fn merge_into_branch(
        &self,
        repo: &RepoName,
        base: &str,
        head: &CommitSha,
        commit_message: &str,
    ) -> Result<Option<CommitSha>, GitHubError> {
        self.may_write()?;
        self.inner
            .merge_into_branch(repo, base, head, commit_message)
            .await
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
        self.may_write()?;
        self.inner.update_issue_body(repo, number, body).await
    }

    async fn create_pull(&self, repo: &RepoName, pull: &NewPull) -> Result<PrNumber, GitHubError> {
        self.may_write()?;
        self.inner.create_pull(repo, pull).await
    }

    async fn push_revert(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
        branch: &str,
        message: &str,
    ) -> Result<CommitSha, GitHubError> {
        self.may_write()?;
        self.inner.push_revert(repo, sha, branch, message).await
    }
}
