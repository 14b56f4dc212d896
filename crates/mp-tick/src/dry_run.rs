//! A GitHub port that reads through to another one and only plans its writes, so
//! `mp tick --dry-run` shows what a tick would do without doing it.
//!
//! Reads after a planned write see it (copy-on-write): a planned label is on the pull
//! request and in its label events, a planned comment is among its comments, an edited
//! comment reads edited, a planned merge closes the pull request and moves its base
//! branch, a planned close closes the pull request or issue (the inbox's `/reject`, so the
//! pull-request path does not evaluate what the tick would have closed), and a planned ref
//! update or merge into a branch moves that branch (a merge to a synthetic commit, since
//! GitHub's SHA cannot be known). So a label the inbox applies counts for the gate later in
//! the same tick, as it would on GitHub. What GitHub would do on its own after a write (CI
//! on a merge commit, the commit itself in the branch's history) is not invented.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::{Mutex, PoisonError};

use mp_core::context::LabelAction;
use mp_core::context::LabelRecord;
use mp_core::context::{
    CheckRun, Comment, CommentId, CommitContext, FileChange, LabelEvent, Reaction, RefUpdate,
    WorkflowJob,
};
use mp_core::ids::{CommitSha, Login, PrNumber, RepoName, Timestamp};
use mp_core::port::{CommitPull, Comparison, FileContent, FileWrite, GitHubHistory, NewPull, Tree};
use mp_core::port::{
    GitHub, GitHubError, Issue, IssueQuery, IssueState, MergeRequest, NewIssue, PullRequest,
    UpdateBranchOutcome, Write,
};

#[cfg(test)]
mod tests;

/// A pull request or issue, as the overlay keys it.
type Number = (RepoName, PrNumber);

/// What the planned writes changed, as later reads see it.
#[derive(Debug, Default)]
struct Overlay {
    /// Label events planned per pull request or issue, in order.
    label_events: BTreeMap<Number, Vec<LabelEvent>>,
    /// Comments planned per pull request or issue, in order.
    comments: BTreeMap<Number, Vec<Comment>>,
    /// New bodies of edited comments.
    edits: BTreeMap<(RepoName, CommentId), String>,
    /// Planned merges: the commit each pull request lands as.
    merges: BTreeMap<Number, CommitSha>,
    /// Pull requests and issues a planned write closes (the inbox's `/reject` closes the
    /// pull request before the pull-request path lists the open ones).
    closed: BTreeSet<Number>,
    /// The base branch of every pull request read, for the merges.
    bases: BTreeMap<Number, String>,
    /// Branch heads moved by planned writes (pull-request merges, ref updates, merges
    /// into a branch): the last one that moved a branch is its head.
    heads: BTreeMap<(RepoName, String), CommitSha>,
    /// The next id of a planned comment, counting down from the top so it never meets
    /// one of GitHub's.
    next_comment: u64,
}

impl Overlay {
    fn comment_id(&mut self) -> CommentId {
        if self.next_comment == 0 {
            self.next_comment = u64::MAX;
        }
        let id = CommentId::new(self.next_comment);
        self.next_comment -= 1;
        id
    }

    /// The pull request as it reads after the planned writes.
    fn pull(&mut self, mut pull: PullRequest) -> PullRequest {
        let key = (pull.repo.clone(), pull.number);
        self.bases.insert(key.clone(), pull.base_ref.clone());
        for event in self.label_events.get(&key).into_iter().flatten() {
            match event.action {
                LabelAction::Labeled if !pull.labels.contains(&event.label) => {
                    pull.labels.push(event.label.clone());
                }
                LabelAction::Unlabeled => pull.labels.retain(|l| *l != event.label),
                LabelAction::Labeled | LabelAction::BaseChanged => {}
            }
        }
        if let Some(sha) = self.merges.get(&key) {
            pull.state = mp_core::context::PrState::Closed;
            pull.merged = true;
            pull.merge_commit = Some(sha.clone());
        } else if self.closed.contains(&key) {
            pull.state = mp_core::context::PrState::Closed;
        }
        pull
    }

    /// Whether a planned write merged or closed the pull request: no longer open.
    fn ended(&self, repo: &RepoName, number: PrNumber) -> bool {
        let key = (repo.clone(), number);
        self.merges.contains_key(&key) || self.closed.contains(&key)
    }

    fn label_events(
        &self,
        repo: &RepoName,
        number: PrNumber,
        mut events: Vec<LabelEvent>,
    ) -> Vec<LabelEvent> {
        let key = (repo.clone(), number);
        events.extend(self.label_events.get(&key).into_iter().flatten().cloned());
        events
    }

    fn comments(
        &self,
        repo: &RepoName,
        number: PrNumber,
        mut comments: Vec<Comment>,
    ) -> Vec<Comment> {
        let key = (repo.clone(), number);
        comments.extend(self.comments.get(&key).into_iter().flatten().cloned());
        for comment in &mut comments {
            if let Some(body) = self.edits.get(&(repo.clone(), comment.id)) {
                body.clone_into(&mut comment.body);
            }
        }
        comments
    }

    /// The head of `branch` after the planned merges into it, if any.
    fn branch_head(&self, repo: &RepoName, branch: &str) -> Option<CommitSha> {
        self.heads.get(&(repo.clone(), branch.to_owned())).cloned()
    }
}

/// The SHA a dry run answers for a planned merge of `head` into `base` at `tip`: a git
/// blob id of a text naming all of them, so it is a well-formed SHA, the same for the same
/// plan, and different for every other.
fn planned_merge_sha(
    repo: &RepoName,
    base: &str,
    tip: &CommitSha,
    head: &CommitSha,
    message: &str,
) -> CommitSha {
    let text = format!("dry-run merge of {head} into {repo}@{base} at {tip}\n\n{message}");
    let sha = mp_core::branch::drift::blob_sha(text.as_bytes());
    CommitSha::parse(&sha).unwrap_or_else(|_| head.clone())
}

/// The dry run's writes under the name its tests know: the port's [`Write`].
#[cfg(test)]
pub(crate) use mp_core::port::Write as PlannedWrite;

/// Wraps a [`GitHub`] port: reads go through, writes are recorded as [`Write`]s
/// and answered with plausible values (a comment with id 0, an issue numbered 0, a merge
/// "landing" as the head SHA, an accepted branch update) without touching GitHub.
pub struct DryRun<'a> {
    inner: &'a dyn GitHub,
    history: Option<&'a dyn GitHubHistory>,
    bot: Mutex<Option<Login>>,
    planned: Mutex<Vec<Write>>,
    overlay: Mutex<Overlay>,
    now: Option<Timestamp>,
}

impl fmt::Debug for DryRun<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DryRun")
            .field("planned", &self.planned_writes())
            .finish_non_exhaustive()
    }
}

impl<'a> DryRun<'a> {
    /// A dry run over `inner`.
    pub fn new(inner: &'a dyn GitHub) -> Self {
        Self {
            inner,
            history: None,
            bot: Mutex::new(None),
            planned: Mutex::new(Vec::new()),
            overlay: Mutex::new(Overlay::default()),
            now: None,
        }
    }

    /// Dates what the planned writes add (label events, comments) at `now`, the tick's
    /// instant, as GitHub would date them.
    #[must_use]
    pub fn at(self, now: Timestamp) -> Self {
        Self {
            now: Some(now),
            ..self
        }
    }

    fn overlay(&self) -> std::sync::MutexGuard<'_, Overlay> {
        self.overlay.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A dry run over a port with history, so the whole tick ([`crate::run_tick`])
    /// can run without writing.
    pub fn with_history(inner: &'a dyn GitHubHistory) -> Self {
        Self {
            history: Some(inner),
            ..Self::new(inner)
        }
    }

    fn history(&self) -> Result<&'a dyn GitHubHistory, GitHubError> {
        self.history.ok_or_else(|| GitHubError::Unavailable {
            route: "history".to_owned(),
            message: "this dry run wraps a port without history".to_owned(),
        })
    }

    /// The writes planned so far, in order.
    pub fn planned_writes(&self) -> Vec<Write> {
        self.planned
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The writes planned, in order, consuming the dry run.
    pub fn into_planned_writes(self) -> Vec<Write> {
        self.planned
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn plan(&self, write: Write) {
        self.planned
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(write);
    }

    /// The bot user learned through [`GitHub::bot_login`], as the author of planned comments.
    fn bot(&self) -> Option<Login> {
        self.bot
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

#[async_trait::async_trait]
impl GitHub for DryRun<'_> {
    async fn bot_login(&self) -> Result<Login, GitHubError> {
        let login = self.inner.bot_login().await?;
        *self.bot.lock().unwrap_or_else(PoisonError::into_inner) = Some(login.clone());
        Ok(login)
    }

    fn rate_limit_remaining(&self) -> Option<u32> {
        self.inner.rate_limit_remaining()
    }

    fn graphql_remaining(&self) -> Option<u32> {
        self.inner.graphql_remaining()
    }

    async fn open_pulls(&self, repo: &RepoName) -> Result<Vec<PullRequest>, GitHubError> {
        let pulls = self.inner.open_pulls(repo).await?;
        let mut overlay = self.overlay();
        let mut open = Vec::with_capacity(pulls.len());
        for pull in pulls {
            if !overlay.ended(&pull.repo, pull.number) {
                open.push(overlay.pull(pull));
            }
        }
        Ok(open)
    }

    async fn pull(&self, repo: &RepoName, number: PrNumber) -> Result<PullRequest, GitHubError> {
        let pull = self.inner.pull(repo, number).await?;
        Ok(self.overlay().pull(pull))
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
        let events = self.inner.label_events(repo, number).await?;
        Ok(self.overlay().label_events(repo, number, events))
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
        let mut records = self.inner.label_records(repo, names).await?;
        // GitHub creates a label the first time it is applied: a label only a planned write
        // applies is created then, and never edited.
        let overlay = self.overlay();
        for name in names {
            if records.iter().any(|r| r.name == *name) {
                continue;
            }
            let planned = overlay
                .label_events
                .iter()
                .filter(|((planned_repo, _), _)| planned_repo == repo)
                .flat_map(|(_, events)| events)
                .find(|e| e.action == LabelAction::Labeled && e.label == *name);
            if let Some(event) = planned {
                records.push(LabelRecord {
                    name: name.clone(),
                    created_at: event.at,
                    updated_at: event.at,
                });
            }
        }
        Ok(records)
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
        let comments = self.inner.comments(repo, number).await?;
        Ok(self.overlay().comments(repo, number, comments))
    }

    async fn reactions(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<Reaction>, GitHubError> {
        self.inner.reactions(repo, number).await
    }

    async fn branch_head(&self, repo: &RepoName, branch: &str) -> Result<CommitSha, GitHubError> {
        let head = self.inner.branch_head(repo, branch).await?;
        Ok(self.overlay().branch_head(repo, branch).unwrap_or(head))
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
        let listed = self.inner.open_pulls_with_reads(repo).await?;
        let mut overlay = self.overlay();
        let mut open = Vec::with_capacity(listed.len());
        for mut l in listed {
            let number = l.pull.number;
            if overlay.ended(repo, number) {
                continue;
            }
            l.reads.label_events = l
                .reads
                .label_events
                .map(|events| overlay.label_events(repo, number, events));
            l.reads.comments = l
                .reads
                .comments
                .map(|comments| overlay.comments(repo, number, comments));
            // Read through the overlay instead: a planned write may have applied a label
            // or moved the default branch.
            l.reads.label_records = None;
            l.reads.default_branch = None;
            l.pull = overlay.pull(l.pull);
            open.push(l);
        }
        Ok(open)
    }

    async fn issues(&self, repo: &RepoName, query: &IssueQuery) -> Result<Vec<Issue>, GitHubError> {
        let mut issues = self.inner.issues(repo, query).await?;
        let overlay = self.overlay();
        for issue in &mut issues {
            if overlay.closed.contains(&(repo.clone(), issue.number)) {
                issue.state = IssueState::Closed;
            }
        }
        // An issue a planned write closed is no longer among the open ones.
        if query.state == Some(IssueState::Open) {
            issues.retain(|issue| issue.state == IssueState::Open);
        }
        Ok(issues)
    }

    async fn create_comment(
        &self,
        repo: &RepoName,
        number: PrNumber,
        body: &str,
    ) -> Result<Comment, GitHubError> {
        self.plan(Write::CreateComment {
            repo: repo.clone(),
            number,
            body: body.to_owned(),
            answer: None,
        });
        let mut overlay = self.overlay();
        let comment = Comment {
            id: overlay.comment_id(),
            author: self.bot(),
            body: body.to_owned(),
            created_at: self.now,
            updated_at: self.now,
        };
        overlay
            .comments
            .entry((repo.clone(), number))
            .or_default()
            .push(comment.clone());
        Ok(comment)
    }

    async fn update_comment(
        &self,
        repo: &RepoName,
        id: CommentId,
        body: &str,
    ) -> Result<(), GitHubError> {
        self.plan(Write::UpdateComment {
            repo: repo.clone(),
            id,
            body: body.to_owned(),
            answer: None,
        });
        self.overlay()
            .edits
            .insert((repo.clone(), id), body.to_owned());
        Ok(())
    }

    async fn add_labels(
        &self,
        repo: &RepoName,
        number: PrNumber,
        labels: &[String],
    ) -> Result<(), GitHubError> {
        self.plan(Write::AddLabels {
            repo: repo.clone(),
            number,
            labels: labels.to_vec(),
        });
        let events = labels.iter().map(|label| LabelEvent {
            action: LabelAction::Labeled,
            label: label.clone(),
            actor: self.bot(),
            at: self.now,
        });
        self.overlay()
            .label_events
            .entry((repo.clone(), number))
            .or_default()
            .extend(events);
        Ok(())
    }

    async fn remove_label(
        &self,
        repo: &RepoName,
        number: PrNumber,
        label: &str,
    ) -> Result<(), GitHubError> {
        self.plan(Write::RemoveLabel {
            repo: repo.clone(),
            number,
            label: label.to_owned(),
        });
        let event = LabelEvent {
            action: LabelAction::Unlabeled,
            label: label.to_owned(),
            actor: self.bot(),
            at: self.now,
        };
        self.overlay()
            .label_events
            .entry((repo.clone(), number))
            .or_default()
            .push(event);
        Ok(())
    }

    async fn create_issue(&self, repo: &RepoName, issue: &NewIssue) -> Result<Issue, GitHubError> {
        self.plan(Write::CreateIssue {
            repo: repo.clone(),
            issue: issue.clone(),
            answer: None,
        });
        Ok(Issue {
            repo: repo.clone(),
            number: PrNumber::new(0),
            title: issue.title.clone(),
            body: issue.body.clone(),
            state: IssueState::Open,
            labels: issue.labels.clone(),
            author: self.bot(),
            created_at: None,
            is_pull_request: false,
        })
    }

    async fn close_issue(&self, repo: &RepoName, number: PrNumber) -> Result<(), GitHubError> {
        self.plan(Write::CloseIssue {
            repo: repo.clone(),
            number,
        });
        // GitHub closes a pull request through its issue as well: later reads see it closed.
        self.overlay().closed.insert((repo.clone(), number));
        Ok(())
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
        self.plan(Write::EnqueuePull {
            repo: repo.clone(),
            number,
            expected_head: expected_head.clone(),
            answer: None,
        });
        // GitHub would place it; the dry run cannot know where.
        Ok(mp_core::port::QueueEntry {
            number,
            head: expected_head.clone(),
            position: 0,
            state: mp_core::port::QueueEntryState::Queued,
            enqueued_at: None,
            enqueuer: None,
        })
    }

    async fn dequeue_pull(&self, repo: &RepoName, number: PrNumber) -> Result<(), GitHubError> {
        self.plan(Write::DequeuePull {
            repo: repo.clone(),
            number,
        });
        Ok(())
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
        self.plan(Write::CreateCheckRun {
            repo: repo.clone(),
            run: run.clone(),
        });
        Ok(())
    }

    async fn merge_pull(
        &self,
        repo: &RepoName,
        number: PrNumber,
        request: &MergeRequest,
    ) -> Result<CommitSha, GitHubError> {
        self.plan(Write::MergePull {
            repo: repo.clone(),
            number,
            request: request.clone(),
            answer: None,
        });
        // The merge lands as the head it is pinned to (GitHub would make a new commit;
        // the dry run cannot know its SHA). Without the base, nothing moves.
        let mut overlay = self.overlay();
        let key = (repo.clone(), number);
        if let Some(base) = overlay.bases.get(&key).cloned() {
            overlay
                .heads
                .insert((repo.clone(), base), request.head_sha.clone());
            overlay.merges.insert(key, request.head_sha.clone());
        }
        Ok(request.head_sha.clone())
    }

    async fn update_branch(
        &self,
        repo: &RepoName,
        number: PrNumber,
        expected_head: &CommitSha,
    ) -> Result<UpdateBranchOutcome, GitHubError> {
        self.plan(Write::UpdateBranch {
            repo: repo.clone(),
            number,
            expected_head: expected_head.clone(),
            answer: None,
        });
        Ok(UpdateBranchOutcome::Accepted)
    }
}

#[async_trait::async_trait]
impl GitHubHistory for DryRun<'_> {
    async fn commit(&self, repo: &RepoName, sha: &CommitSha) -> Result<CommitContext, GitHubError> {
        self.history()?.commit(repo, sha).await
    }

    async fn branch_commits(
        &self,
        repo: &RepoName,
        branch: &str,
        limit: usize,
    ) -> Result<Vec<CommitContext>, GitHubError> {
        self.history()?.branch_commits(repo, branch, limit).await
    }

    async fn file(
        &self,
        repo: &RepoName,
        path: &str,
        git_ref: &str,
    ) -> Result<Option<FileContent>, GitHubError> {
        self.history()?.file(repo, path, git_ref).await
    }

    async fn put_file(&self, repo: &RepoName, write: &FileWrite) -> Result<String, GitHubError> {
        self.history()?;
        self.plan(Write::PutFile {
            repo: repo.clone(),
            write: write.clone(),
            answer: None,
        });
        Ok(mp_core::branch::drift::blob_sha(write.text.as_bytes()))
    }

    async fn tree(&self, repo: &RepoName, git_ref: &str) -> Result<Tree, GitHubError> {
        self.history()?.tree(repo, git_ref).await
    }

    async fn create_branch(
        &self,
        repo: &RepoName,
        branch: &str,
        sha: &CommitSha,
    ) -> Result<(), GitHubError> {
        self.history()?;
        self.plan(Write::CreateBranch {
            repo: repo.clone(),
            branch: branch.to_owned(),
            sha: sha.clone(),
        });
        Ok(())
    }

    async fn update_branch_ref(
        &self,
        repo: &RepoName,
        branch: &str,
        sha: &CommitSha,
        force: bool,
    ) -> Result<(), GitHubError> {
        self.history()?;
        self.plan(Write::UpdateBranchRef {
            repo: repo.clone(),
            branch: branch.to_owned(),
            sha: sha.clone(),
            force,
            answer: None,
        });
        self.overlay()
            .heads
            .insert((repo.clone(), branch.to_owned()), sha.clone());
        Ok(())
    }

    async fn merge_into_branch(
        &self,
        repo: &RepoName,
        base: &str,
        head: &CommitSha,
        commit_message: &str,
    ) -> Result<Option<CommitSha>, GitHubError> {
        self.history()?;
        // The merge commit GitHub would make cannot be known: the dry run answers a
        // synthetic SHA derived from the branch's planned head and the merge, so each
        // planned merge gets its own and a later merge into the branch builds on it. It
        // names no commit on GitHub.
        let tip = self.branch_head(repo, base).await?;
        let sha = planned_merge_sha(repo, base, &tip, head, commit_message);
        self.plan(Write::MergeIntoBranch {
            repo: repo.clone(),
            base: base.to_owned(),
            head: head.clone(),
            message: commit_message.to_owned(),
            answer: Some(sha.clone()),
        });
        self.overlay()
            .heads
            .insert((repo.clone(), base.to_owned()), sha.clone());
        Ok(Some(sha))
    }

    async fn compare(
        &self,
        repo: &RepoName,
        base: &CommitSha,
        head: &CommitSha,
        limit: usize,
    ) -> Result<Comparison, GitHubError> {
        self.history()?.compare(repo, base, head, limit).await
    }

    async fn commit_pulls(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
    ) -> Result<Vec<CommitPull>, GitHubError> {
        self.history()?.commit_pulls(repo, sha).await
    }

    async fn update_issue_body(
        &self,
        repo: &RepoName,
        number: PrNumber,
        body: &str,
    ) -> Result<(), GitHubError> {
        self.history()?;
        self.plan(Write::UpdateIssueBody {
            repo: repo.clone(),
            number,
            body: body.to_owned(),
        });
        Ok(())
    }

    async fn create_pull(&self, repo: &RepoName, pull: &NewPull) -> Result<PrNumber, GitHubError> {
        self.history()?;
        self.plan(Write::CreatePull {
            repo: repo.clone(),
            pull: pull.clone(),
            answer: None,
        });
        Ok(PrNumber::new(0))
    }

    async fn push_revert(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
        branch: &str,
        message: &str,
    ) -> Result<CommitSha, GitHubError> {
        self.history()?;
        self.plan(Write::PushRevert {
            repo: repo.clone(),
            sha: sha.clone(),
            branch: branch.to_owned(),
            message: message.to_owned(),
            answer: None,
        });
        Ok(sha.clone())
    }
}
