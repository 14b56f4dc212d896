//! The GitHub port: the reads and writes the tick performs (the REST endpoints behind each
//! method are named for adapter authors).

use crate::context::CommentId;
use crate::context::{
    CheckRun, Comment, CommitContext, FileChange, LabelEvent, LabelRecord, PrState, Reaction,
    RefUpdate, WorkflowJob,
};
use crate::ids::{CommitSha, Login, PrNumber, RepoName, Timestamp};

/// A pull request as listed by GitHub, before its commits, files and checks are fetched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullRequest {
    /// The repository.
    pub repo: RepoName,
    /// The number.
    pub number: PrNumber,
    /// Title.
    pub title: String,
    /// Body (empty when none).
    pub body: String,
    /// Head commit.
    pub head_sha: CommitSha,
    /// Head branch.
    pub head_ref: String,
    /// The repository the head branch lives in: the base repository, a fork, or `None`
    /// when GitHub no longer knows it (a deleted fork).
    pub head_repo: Option<RepoName>,
    /// Base commit as GitHub records it for the pull request.
    pub base_sha: CommitSha,
    /// Base branch.
    pub base_ref: String,
    /// Open or closed.
    pub state: PrState,
    /// Whether it was merged.
    pub merged: bool,
    /// The commit the merge made on the base branch, when merged.
    pub merge_commit: Option<CommitSha>,
    /// Current label names.
    pub labels: Vec<String>,
    /// Author login.
    pub author: Login,
    /// Creation time.
    pub created_at: Option<Timestamp>,
}

/// What the tick reads of one pull request besides the listing, as far as an adapter could
/// read it together with the list ([`GitHub::open_pulls_with_reads`]). A part left `None`
/// is read by its own method ([`GitHub::pull_commits`], …): a batched read that overflowed
/// a page, or an adapter that batches nothing.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct PullReads {
    /// The commits, oldest first, as [`GitHub::pull_commits`] answers them.
    pub commits: Option<Vec<CommitContext>>,
    /// The files, as [`GitHub::pull_files`] answers them.
    pub files: Option<Vec<FileChange>>,
    /// Every check run on the head, as [`GitHub::check_runs`] answers them.
    pub check_runs: Option<Vec<CheckRun>>,
    /// The label events, as [`GitHub::label_events`] answers them.
    pub label_events: Option<Vec<LabelEvent>>,
    /// The comments, oldest first, as [`GitHub::comments`] answers them.
    pub comments: Option<Vec<Comment>>,
    /// GitHub's record of every label on the pull request (when each was created and last
    /// edited), as [`GitHub::label_records`] answers it for those names: the same `Label`
    /// objects, read with the listing (decisions/0075).
    pub label_records: Option<Vec<LabelRecord>>,
    /// The repository's default branch and the commit it pointed at when the listing was
    /// read, as [`GitHub::default_branch`] and [`GitHub::branch_head`] answer them: the
    /// same for every pull request of one listing (decisions/0075).
    pub default_branch: Option<(String, CommitSha)>,
}

/// An open pull request with what was read of it along with the list.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedPull {
    /// The pull request as listed.
    pub pull: PullRequest,
    /// What was read with it; [`PullReads::default`] when nothing was.
    pub reads: PullReads,
}

/// How many entries GitHub's activity log answers per page (`per_page=100`, its maximum).
pub const ACTIVITY_PAGE: usize = 100;

/// The activity log of a whole repository as one read gave it
/// ([`GitHub::repo_activity`]): each entry with the full ref GitHub names for it
/// (`refs/heads/<branch>`), newest first, and whether the read reached the end of the log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RepoActivity {
    /// Every entry read: the ref GitHub names, and the update.
    pub entries: Vec<(String, RefUpdate)>,
    /// Whether the read reached the log's end (no page left unread) and every entry named
    /// a full ref. Only a complete log answers for a branch.
    pub complete: bool,
}

impl RepoActivity {
    /// The updates of `branch`, newest first, exactly as [`GitHub::head_ref_updates`]
    /// would list them: the entries whose ref is `refs/heads/{branch}`. `None` when the
    /// log is not complete: an unread page may hold more of the branch's updates, and the
    /// binding of a label needs all of them (decisions/0022, 0070).
    pub fn branch(&self, branch: &str) -> Option<Vec<RefUpdate>> {
        if !self.complete {
            return None;
        }
        let full = format!("refs/heads/{branch}");
        Some(
            self.entries
                .iter()
                .filter(|(git_ref, _)| *git_ref == full)
                .map(|(_, update)| update.clone())
                .collect(),
        )
    }
}

/// Open or closed, for issues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IssueState {
    /// Open.
    Open,
    /// Closed.
    Closed,
}

/// An issue (or a pull request seen through the issues API).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    /// The repository.
    pub repo: RepoName,
    /// The number.
    pub number: PrNumber,
    /// Title.
    pub title: String,
    /// Body (empty when none).
    pub body: String,
    /// Open or closed.
    pub state: IssueState,
    /// Current label names.
    pub labels: Vec<String>,
    /// Author login, when known.
    pub author: Option<Login>,
    /// Creation time.
    pub created_at: Option<Timestamp>,
    /// Whether this item is a pull request.
    pub is_pull_request: bool,
}

/// Which issues to list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssueQuery {
    /// `None` lists open and closed issues (`state=all`).
    pub state: Option<IssueState>,
    /// Only issues carrying every one of these labels.
    pub labels: Vec<String>,
}

/// A new issue to open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewIssue {
    /// Title.
    pub title: String,
    /// Markdown body.
    pub body: String,
    /// Labels to set on creation.
    pub labels: Vec<String>,
}

/// How to merge. mp only squash-merges; the enum leaves room for embedders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum MergeMethod {
    /// One commit on the base branch.
    Squash,
}

/// A merge request with its head-SHA precondition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeRequest {
    /// The head the pull request must still have; GitHub refuses the merge otherwise (409).
    pub head_sha: CommitSha,
    /// The merge method.
    pub method: MergeMethod,
    /// The squash commit message (the identity block), or `None` for GitHub's default.
    pub commit_message: Option<String>,
}

/// The state of a pull request's entry in GitHub's merge queue (GraphQL
/// `MergeQueueEntryState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueEntryState {
    /// Waiting for the checks of its merge group.
    AwaitingChecks,
    /// Locked: being merged.
    Locked,
    /// Its checks passed: it merges with its group.
    Mergeable,
    /// Waiting in the queue.
    Queued,
    /// Cannot merge (a failed check, a conflict).
    Unmergeable,
}

impl QueueEntryState {
    /// GitHub's enum value, e.g. `AWAITING_CHECKS`.
    pub fn as_graphql(self) -> &'static str {
        match self {
            Self::AwaitingChecks => "AWAITING_CHECKS",
            Self::Locked => "LOCKED",
            Self::Mergeable => "MERGEABLE",
            Self::Queued => "QUEUED",
            Self::Unmergeable => "UNMERGEABLE",
        }
    }

    /// The state GitHub's enum value names, if any.
    pub fn from_graphql(value: &str) -> Option<Self> {
        [
            Self::AwaitingChecks,
            Self::Locked,
            Self::Mergeable,
            Self::Queued,
            Self::Unmergeable,
        ]
        .into_iter()
        .find(|state| state.as_graphql() == value)
    }
}

/// A pull request in GitHub's merge queue of its base branch (GraphQL `MergeQueueEntry`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueEntry {
    /// The pull request.
    pub number: PrNumber,
    /// The head commit the entry was enqueued with (`headCommit.oid`): what the queue
    /// lands.
    pub head: CommitSha,
    /// Its place in the queue, from 1 at the front.
    pub position: u32,
    /// Its state.
    pub state: QueueEntryState,
    /// When it was enqueued.
    pub enqueued_at: Option<Timestamp>,
    /// Who enqueued it (`enqueuer`, a bot's login with its `[bot]` suffix); `None` when
    /// GitHub does not say.
    pub enqueuer: Option<Login>,
}

/// A pull request's last removal from GitHub's merge queue without merging (GraphQL
/// `RemovedFromMergeQueueEvent`): a failing group, a timeout, a conflict, a person's or an
/// App's dequeue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueRemoval {
    /// The head it was queued at (`beforeCommit`), when GitHub says.
    pub head: Option<CommitSha>,
    /// Who removed it (a bot's login with its `[bot]` suffix); `None` when GitHub does not
    /// say, as for the queue's own removals.
    pub actor: Option<Login>,
    /// Why, in GitHub's words, when it says.
    pub reason: Option<String>,
    /// When.
    pub at: Option<Timestamp>,
}

/// A merge group of GitHub's merge queue: the temporary branch
/// `gh-readonly-queue/<base>/pr-<N>-<sha>` whose head the queue tests and lands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeGroupRef {
    /// The branch, without `refs/heads/`.
    pub branch: String,
    /// Its head: the commit the queue tests, and lands when its required checks pass.
    pub head: CommitSha,
}

/// A check run mp publishes, completed at once (`POST /check-runs` with `status:
/// completed`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewCheckRun {
    /// The check's name.
    pub name: String,
    /// The commit it reports on.
    pub head_sha: CommitSha,
    /// `success` or `failure`.
    pub conclusion: crate::context::CheckConclusion,
    /// `output.title`: one line.
    pub title: String,
    /// `output.summary`: Markdown.
    pub summary: String,
}

/// What `update-branch` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpdateBranchOutcome {
    /// GitHub accepted the update (202); the head will move.
    Accepted,
    /// Nothing to do, or a conflict (422); the message says which.
    Refused {
        /// GitHub's message.
        message: String,
    },
}

/// A failed GitHub call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GitHubError {
    /// The resource does not exist (404), or is not visible to the installation.
    #[error("{what} not found")]
    NotFound {
        /// What was looked up, e.g. `acme/app#7 comments`.
        what: String,
    },
    /// A merge was refused because the head is no longer the given SHA (409).
    #[error("head of {pr} moved: merge precondition {expected} no longer holds")]
    HeadMoved {
        /// `owner/repo#N`.
        pr: String,
        /// The SHA the merge was pinned to.
        expected: CommitSha,
    },
    /// A merge was refused as not mergeable (405), e.g. conflicts or a protected branch.
    #[error("{pr} is not mergeable: {message}")]
    NotMergeable {
        /// `owner/repo#N`.
        pr: String,
        /// GitHub's message.
        message: String,
    },
    /// The primary rate limit is exhausted (or under the configured reserve).
    #[error("rate limit exhausted: {remaining} calls left")]
    RateLimited {
        /// Calls left in the current window.
        remaining: u32,
    },
    /// A secondary rate limit (403/429) persisted after the bounded retries.
    #[error("secondary rate limit; retry after {retry_after_secs} s")]
    Throttled {
        /// The server's `Retry-After`, in seconds.
        retry_after_secs: u64,
    },
    /// The call could not complete: network error, timeout, 5xx after retries.
    #[error("{route}: {message}")]
    Unavailable {
        /// The route, e.g. `GET /repos/{o}/{r}/pulls`.
        route: String,
        /// What happened.
        message: String,
    },
    /// GitHub answered something the adapter could not read.
    #[error("{route}: unreadable answer: {message}")]
    Malformed {
        /// The route.
        route: String,
        /// What was wrong.
        message: String,
    },
    /// A write refused because its precondition no longer holds (409/422): a stale blob
    /// SHA, an existing branch, an existing pull request, a revert that does not apply.
    #[error("{what}: {message}")]
    Conflict {
        /// What was written, e.g. `acme/gov bot-state/x.json`.
        what: String,
        /// GitHub's message.
        message: String,
    },
    /// A listing GitHub cuts at a fixed cap (e.g. 250 commits of a pull request): the
    /// facts beyond the cap cannot be read, so callers fail closed.
    #[error("{what}: GitHub lists at most {limit}, the rest cannot be read")]
    Truncated {
        /// What was listed, e.g. `acme/app#7 commits`.
        what: String,
        /// The cap.
        limit: u32,
    },
    /// Any other refusal, with its HTTP status.
    #[error("{route} answered HTTP {status}: {message}")]
    Status {
        /// The route.
        route: String,
        /// The HTTP status.
        status: u16,
        /// GitHub's message.
        message: String,
    },
}

impl GitHubError {
    /// Whether retrying on a later tick may succeed without anyone changing anything.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            Self::RateLimited { .. } | Self::Throttled { .. } | Self::Unavailable { .. }
        )
    }
}

/// The branch an adapter that cannot tell names as every repository's default.
pub const DEFAULT_BRANCH_FALLBACK: &str = "main";

/// The GitHub reads and writes of one tick.
///
/// All methods take `&self`: adapters keep their own interior state (caches, counters).
/// Unless a method says otherwise, adapters return [`GitHubError::NotFound`] for a missing
/// repository, pull request or issue, [`GitHubError::RateLimited`] /
/// [`GitHubError::Throttled`] when limits stop the call, and
/// [`GitHubError::Unavailable`] for transport failures after their bounded retries.
#[async_trait::async_trait]
pub trait GitHub: Send + Sync {
    /// The bot's own login, `<app-slug>[bot]` (`GET /app`).
    ///
    /// # Errors
    /// Any error: the tick fails closed, since receipts cannot be recognised without it.
    async fn bot_login(&self) -> Result<Login, GitHubError>;

    /// Calls left in the primary rate-limit window, as last reported; `None` when unknown.
    fn rate_limit_remaining(&self) -> Option<u32>;

    /// GraphQL points left in that API's own window, as last reported; `None` when unknown
    /// or when the adapter reads no GraphQL.
    fn graphql_remaining(&self) -> Option<u32> {
        None
    }

    /// Open pull requests, oldest first (`GET /pulls?state=open&sort=created&direction=asc`,
    /// all pages).
    ///
    /// # Errors
    /// See the trait documentation.
    async fn open_pulls(&self, repo: &RepoName) -> Result<Vec<PullRequest>, GitHubError>;

    /// Open pull requests, oldest first, with as much of what the tick reads of each as the
    /// adapter reads in the same calls (a GraphQL adapter: one query per page of pull
    /// requests). The default lists with [`GitHub::open_pulls`] and reads nothing more; a
    /// wrapper must forward it. Every part an adapter returns must be exactly what the
    /// part's own method would answer: decisions may not depend on the read path.
    ///
    /// # Errors
    /// See the trait documentation.
    async fn open_pulls_with_reads(&self, repo: &RepoName) -> Result<Vec<ListedPull>, GitHubError> {
        Ok(self
            .open_pulls(repo)
            .await?
            .into_iter()
            .map(|pull| ListedPull {
                pull,
                reads: PullReads::default(),
            })
            .collect())
    }

    /// One pull request (`GET /pulls/{n}`).
    ///
    /// # Errors
    /// [`GitHubError::NotFound`] when there is no such pull request.
    async fn pull(&self, repo: &RepoName, number: PrNumber) -> Result<PullRequest, GitHubError>;

    /// The pull request's commits, oldest first, with parsed messages (`GET /pulls/{n}/commits`).
    ///
    /// # Errors
    /// See the trait documentation.
    async fn pull_commits(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<CommitContext>, GitHubError>;

    /// The files the pull request changes (`GET /pulls/{n}/files`).
    ///
    /// # Errors
    /// See the trait documentation.
    async fn pull_files(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<FileChange>, GitHubError>;

    /// Every check run on a commit, same-named runs included
    /// (`GET /commits/{sha}/check-runs?filter=all`).
    ///
    /// # Errors
    /// See the trait documentation.
    async fn check_runs(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
    ) -> Result<Vec<CheckRun>, GitHubError>;

    /// The jobs of every GitHub Actions workflow run on a commit, with each run's workflow
    /// file, head and event (`GET /actions/runs?head_sha={sha}`, all pages, then
    /// `GET /actions/runs/{run_id}/jobs?filter=all` of each run, all pages). The tick reads
    /// it for the head of a pull request only when C2 binds a required check to a workflow
    /// file (`required_check_workflows`). The default answers
    /// [`GitHubError::NotFound`]: an adapter that cannot read workflow runs makes such a
    /// check fail closed. A wrapper must forward it.
    ///
    /// # Errors
    /// See the trait documentation.
    async fn workflow_jobs(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
    ) -> Result<Vec<WorkflowJob>, GitHubError> {
        Err(GitHubError::NotFound {
            what: format!("workflow runs of {sha} in {repo}"),
        })
    }

    /// `labeled` / `unlabeled` events of an issue or pull request, in timeline order
    /// (`GET /issues/{n}/timeline`).
    ///
    /// # Errors
    /// See the trait documentation.
    async fn label_events(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<LabelEvent>, GitHubError>;

    /// GitHub's record of the updates of a branch (pushes, force pushes, creation,
    /// deletion), each with GitHub's time and the tips before and after, in any order
    /// (`GET /activity?ref=refs/heads/{branch}`, all pages). The tick reads it for the
    /// head branch of a pull request that carries an approval label, as the evidence of
    /// which head the label was applied to.
    ///
    /// # Errors
    /// See the trait documentation. [`GitHubError::NotFound`] when the server has no
    /// activity log (older GitHub Enterprise Server): the tick then binds nothing.
    async fn head_ref_updates(
        &self,
        repo: &RepoName,
        head_ref: &str,
    ) -> Result<Vec<RefUpdate>, GitHubError>;

    /// GitHub's activity log of the whole repository, newest first, at most `max_pages`
    /// pages of [`ACTIVITY_PAGE`] entries (`GET /activity` without `ref`, `per_page=100`).
    /// The pull-request path reads it once per repository and takes every labelled head
    /// branch's updates from it when it is [complete](RepoActivity::complete); otherwise
    /// it reads each branch with [`GitHub::head_ref_updates`]. The default answers
    /// [`GitHubError::NotFound`] (the per-branch reads then run); a wrapper must forward it.
    ///
    /// # Errors
    /// See the trait documentation.
    async fn repo_activity(
        &self,
        repo: &RepoName,
        max_pages: usize,
    ) -> Result<RepoActivity, GitHubError> {
        let _ = max_pages;
        Err(GitHubError::NotFound {
            what: format!("the activity log of {repo}"),
        })
    }

    /// GitHub's record of the repository's labels with these names: when each was created
    /// and last edited (GraphQL `repository { label(name:) { name createdAt updatedAt } }`,
    /// one query per name; REST's label object carries no times). A name GitHub has no
    /// label for is left out. The tick reads it for the approval labels on a pull request,
    /// the evidence that none of them was renamed after it was applied (decisions/0048).
    ///
    /// # Errors
    /// See the trait documentation. [`GitHubError::NotFound`] when the records cannot be
    /// had at all: the tick then honours no approval label on the pull request.
    async fn label_records(
        &self,
        repo: &RepoName,
        names: &[String],
    ) -> Result<Vec<LabelRecord>, GitHubError>;

    /// The updates of a branch, newest first, as [`GitHub::head_ref_updates`] answers
    /// them, but read only as far back as needed: an adapter that pages may stop after the
    /// page at which every tip of `until` shows as a tip an update left (or read on to the
    /// end when one never does). The answer may hold more than that, never less. The
    /// supervisor reads the default branch and `bot-state` this way, from its watermarks.
    /// The default reads the whole log; a wrapper must forward it.
    ///
    /// # Errors
    /// As [`GitHub::head_ref_updates`].
    async fn branch_updates_until(
        &self,
        repo: &RepoName,
        branch: &str,
        until: &[CommitSha],
    ) -> Result<Vec<RefUpdate>, GitHubError> {
        let _ = until;
        self.head_ref_updates(repo, branch).await
    }

    /// Comments of an issue or pull request, oldest first (`GET /issues/{n}/comments`).
    ///
    /// # Errors
    /// See the trait documentation. The tick skips a pull request whose comments cannot
    /// be read (its receipts are unknown).
    async fn comments(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<Comment>, GitHubError>;

    /// Reactions on an issue or pull request (`GET /issues/{n}/reactions`).
    ///
    /// # Errors
    /// See the trait documentation.
    async fn reactions(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<Reaction>, GitHubError>;

    /// The head commit of a branch (`GET /branches/{branch}`).
    ///
    /// # Errors
    /// [`GitHubError::NotFound`] when the branch does not exist.
    async fn branch_head(&self, repo: &RepoName, branch: &str) -> Result<CommitSha, GitHubError>;

    /// The repository's default branch (`GET /repos/{o}/{r}`, `default_branch`): the branch
    /// mp gates, merges into and supervises unless `projects.yml` names another. The
    /// default answers `main`, for adapters whose repositories all use it; wrappers must
    /// forward it.
    ///
    /// # Errors
    /// [`GitHubError::NotFound`] when there is no such repository.
    async fn default_branch(&self, repo: &RepoName) -> Result<String, GitHubError> {
        let _ = repo;
        Ok(DEFAULT_BRANCH_FALLBACK.to_owned())
    }

    /// The default branches of several repositories in as few calls as the adapter can
    /// (a GraphQL adapter: one query for them all), each exactly as
    /// [`GitHub::default_branch`] answers it. A repository left out of the answer is read
    /// with [`GitHub::default_branch`] by the caller. The default reads none together (an
    /// empty answer); wrappers must forward it.
    ///
    /// # Errors
    /// Any error of the batched read: the caller then reads each repository on its own.
    async fn default_branches(
        &self,
        repos: &[RepoName],
    ) -> Result<std::collections::BTreeMap<RepoName, String>, GitHubError> {
        let _ = repos;
        Ok(std::collections::BTreeMap::new())
    }

    /// The types of the rules that the repository's active rulesets (of the repository or
    /// its organization) apply to `branch`, sorted, each once
    /// (`GET /repos/{o}/{r}/rules/branches/{branch}`, all pages: `deletion`,
    /// `non_fast_forward`, `pull_request`, `merge_queue`, ...). Rulesets only evaluated or
    /// disabled are not listed, as GitHub does not list them; the branch need not exist.
    ///
    /// # Errors
    /// [`GitHubError::NotFound`] when there is no such repository; see the trait
    /// documentation.
    async fn branch_rules(&self, repo: &RepoName, branch: &str)
    -> Result<Vec<String>, GitHubError>;

    /// The entries of GitHub's merge queue of `branch`, front first
    /// (`Repository.mergeQueue(branch) { entries }` over GraphQL); `None` when the branch
    /// has no merge queue (`mergeQueue: null`).
    ///
    /// # Errors
    /// See the trait documentation.
    async fn merge_queue(
        &self,
        repo: &RepoName,
        branch: &str,
    ) -> Result<Option<Vec<QueueEntry>>, GitHubError>;

    /// The pull request's entry in its base branch's merge queue, `None` when it is not in
    /// one (`PullRequest.isInMergeQueue`, `mergeQueueEntry` over GraphQL).
    ///
    /// # Errors
    /// See the trait documentation.
    async fn queue_entry(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Option<QueueEntry>, GitHubError>;

    /// Adds the pull request to its base branch's merge queue, pinned to its head
    /// (`enqueuePullRequest(input: {pullRequestId, expectedHeadOid})` over GraphQL; there is
    /// no REST call). Returns the new entry.
    ///
    /// # Errors
    /// [`GitHubError::HeadMoved`] when the head is not `expected_head` (nothing is
    /// enqueued); [`GitHubError::NotMergeable`] when GitHub refuses (no queue on the base
    /// branch, a closed pull request).
    async fn enqueue_pull(
        &self,
        repo: &RepoName,
        number: PrNumber,
        expected_head: &CommitSha,
    ) -> Result<QueueEntry, GitHubError>;

    /// Removes the pull request from its base branch's merge queue
    /// (`dequeuePullRequest(input: {id})` over GraphQL).
    ///
    /// # Errors
    /// [`GitHubError::NotMergeable`] when it is not in a queue; see the trait
    /// documentation.
    async fn dequeue_pull(&self, repo: &RepoName, number: PrNumber) -> Result<(), GitHubError>;

    /// The pull request's last removal from a merge queue without merging, `None` when it
    /// never left one (`PullRequest.timelineItems(last: 1, itemTypes:
    /// [REMOVED_FROM_MERGE_QUEUE_EVENT])` over GraphQL).
    ///
    /// # Errors
    /// See the trait documentation.
    async fn last_queue_removal(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Option<QueueRemoval>, GitHubError>;

    /// The merge groups GitHub's merge queue of `base` is testing: its branches
    /// `gh-readonly-queue/<base>/...` with their heads
    /// (`GET /git/matching-refs/heads/gh-readonly-queue/<base>/`), in GitHub's order.
    ///
    /// # Errors
    /// See the trait documentation.
    async fn merge_groups(
        &self,
        repo: &RepoName,
        base: &str,
    ) -> Result<Vec<MergeGroupRef>, GitHubError>;

    /// Publishes a completed check run on a commit (`POST /check-runs`; the App's
    /// *Checks: write* permission).
    ///
    /// # Errors
    /// See the trait documentation.
    async fn create_check_run(&self, repo: &RepoName, run: &NewCheckRun)
    -> Result<(), GitHubError>;

    /// Issues matching a query (`GET /issues?state=&labels=`, all pages), pull requests
    /// included and marked.
    ///
    /// # Errors
    /// See the trait documentation.
    async fn issues(&self, repo: &RepoName, query: &IssueQuery) -> Result<Vec<Issue>, GitHubError>;

    /// Posts a comment (`POST /issues/{n}/comments`) and returns it as stored.
    ///
    /// # Errors
    /// See the trait documentation.
    async fn create_comment(
        &self,
        repo: &RepoName,
        number: PrNumber,
        body: &str,
    ) -> Result<Comment, GitHubError>;

    /// Replaces a comment's body (`PATCH /issues/comments/{id}`).
    ///
    /// # Errors
    /// [`GitHubError::NotFound`] when the comment is gone.
    async fn update_comment(
        &self,
        repo: &RepoName,
        id: CommentId,
        body: &str,
    ) -> Result<(), GitHubError>;

    /// Adds labels (`POST /issues/{n}/labels`); labels already present are kept once.
    ///
    /// # Errors
    /// See the trait documentation.
    async fn add_labels(
        &self,
        repo: &RepoName,
        number: PrNumber,
        labels: &[String],
    ) -> Result<(), GitHubError>;

    /// Removes a label (`DELETE /issues/{n}/labels/{label}`); removing an absent label is
    /// not an error.
    ///
    /// # Errors
    /// See the trait documentation.
    async fn remove_label(
        &self,
        repo: &RepoName,
        number: PrNumber,
        label: &str,
    ) -> Result<(), GitHubError>;

    /// Opens an issue (`POST /issues`).
    ///
    /// # Errors
    /// See the trait documentation.
    async fn create_issue(&self, repo: &RepoName, issue: &NewIssue) -> Result<Issue, GitHubError>;

    /// Closes an issue or pull request (`PATCH /issues/{n}` with `state: closed`).
    ///
    /// # Errors
    /// See the trait documentation.
    async fn close_issue(&self, repo: &RepoName, number: PrNumber) -> Result<(), GitHubError>;

    /// Squash-merges a pull request pinned to its head (`PUT /pulls/{n}/merge` with `sha`)
    /// and returns the new commit on the base branch.
    ///
    /// # Errors
    /// [`GitHubError::HeadMoved`] when the head is not `request.head_sha` (409);
    /// [`GitHubError::NotMergeable`] when GitHub refuses the merge (405).
    async fn merge_pull(
        &self,
        repo: &RepoName,
        number: PrNumber,
        request: &MergeRequest,
    ) -> Result<CommitSha, GitHubError>;

    /// Brings the pull request's branch up to date with its base
    /// (`PUT /pulls/{n}/update-branch` with `expected_head_sha`).
    ///
    /// # Errors
    /// See the trait documentation; a refusal (422) is an [`UpdateBranchOutcome::Refused`]
    /// value, not an error.
    async fn update_branch(
        &self,
        repo: &RepoName,
        number: PrNumber,
        expected_head: &CommitSha,
    ) -> Result<UpdateBranchOutcome, GitHubError>;
}
