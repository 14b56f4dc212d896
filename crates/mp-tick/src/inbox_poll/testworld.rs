//! A test world for the inbox poll: the tick's fake GitHub, plus reactions, label and
//! state changes that stick (so a second poll sees the first one's writes), owner comments
//! and a log of every port call.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use crate::testkit::{Fake, FakePr, at, login, now};
use mp_core::context::LabelRecord;
use mp_core::context::{
    CheckRun, Comment, CommentId, CommitContext, FileChange, LabelAction, LabelEvent, PrState,
    Reaction, ReactionKind, RefUpdate,
};
use mp_core::ids::{CommitSha, Login, PrNumber, RepoName};
use mp_core::port::{
    GitHub, GitHubError, Issue, IssueQuery, IssueState, MergeRequest, NewIssue, PullRequest,
    UpdateBranchOutcome,
};

/// The fake plus what the inbox poll needs on top of it.
#[derive(Debug)]
pub(crate) struct World {
    pub(crate) fake: Fake,
    reactions: Mutex<BTreeMap<(RepoName, u64), Vec<Reaction>>>,
    calls: Mutex<Vec<String>>,
    next_comment: Mutex<u64>,
}

impl World {
    pub(crate) fn new(pulls: Vec<FakePr>) -> Self {
        Self {
            fake: Fake::new(pulls),
            reactions: Mutex::new(BTreeMap::new()),
            calls: Mutex::new(Vec::new()),
            next_comment: Mutex::new(5000),
        }
    }

    fn call(&self, name: &str) {
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(name.to_owned());
    }

    /// The port calls made since the last call, by method name.
    pub(crate) fn take_calls(&self) -> Vec<String> {
        std::mem::take(&mut *self.calls.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// `who` reacts `content` (`+1`, `-1`, ...) on `repo#number` at `when`.
    pub(crate) fn react(&self, repo: &RepoName, number: u64, content: &str, who: &str, when: &str) {
        self.reactions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry((repo.clone(), number))
            .or_default()
            .push(Reaction {
                kind: ReactionKind::from_github(content),
                user: login(who),
                created_at: Some(at(when)),
            });
    }

    /// `who` comments `body` on `repo#number` at `when`.
    pub(crate) fn comment(&self, repo: &RepoName, number: u64, who: &str, body: &str, when: &str) {
        let id = {
            let mut next = self
                .next_comment
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            *next += 1;
            *next
        };
        let comment = Comment {
            id: CommentId::new(id),
            author: Some(login(who)),
            body: body.to_owned(),
            created_at: Some(at(when)),
            updated_at: Some(at(when)),
        };
        self.fake.with(|s| {
            s.comments
                .entry((repo.clone(), number))
                .or_default()
                .push(comment);
        });
    }
}

fn bot_event(action: LabelAction, label: &str, bot: Option<Login>) -> LabelEvent {
    LabelEvent {
        action,
        label: label.to_owned(),
        actor: bot,
        at: Some(now()),
    }
}

#[async_trait::async_trait]
impl GitHub for World {
    async fn bot_login(&self) -> Result<Login, GitHubError> {
        self.call("bot_login");
        self.fake.bot_login().await
    }

    fn rate_limit_remaining(&self) -> Option<u32> {
        self.fake.rate_limit_remaining()
    }

    async fn open_pulls(&self, repo: &RepoName) -> Result<Vec<PullRequest>, GitHubError> {
        self.call("open_pulls");
        self.fake.open_pulls(repo).await
    }

    async fn pull(&self, repo: &RepoName, number: PrNumber) -> Result<PullRequest, GitHubError> {
        self.call("pull");
        self.fake.pull(repo, number).await
    }

    async fn pull_commits(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<CommitContext>, GitHubError> {
        self.call("pull_commits");
        self.fake.pull_commits(repo, number).await
    }

    async fn pull_files(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<FileChange>, GitHubError> {
        self.call("pull_files");
        self.fake.pull_files(repo, number).await
    }

    async fn check_runs(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
    ) -> Result<Vec<CheckRun>, GitHubError> {
        self.call("check_runs");
        self.fake.check_runs(repo, sha).await
    }

    async fn label_events(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<LabelEvent>, GitHubError> {
        self.call("label_events");
        self.fake.label_events(repo, number).await
    }

    async fn head_ref_updates(
        &self,
        repo: &RepoName,
        head_ref: &str,
    ) -> Result<Vec<RefUpdate>, GitHubError> {
        self.call("head_ref_updates");
        self.fake.head_ref_updates(repo, head_ref).await
    }

    async fn label_records(
        &self,
        repo: &RepoName,
        names: &[String],
    ) -> Result<Vec<LabelRecord>, GitHubError> {
        self.call("label_records");
        self.fake.label_records(repo, names).await
    }

    async fn comments(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<Comment>, GitHubError> {
        self.call("comments");
        self.fake.comments(repo, number).await
    }

    async fn reactions(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<Reaction>, GitHubError> {
        self.call("reactions");
        Ok(self
            .reactions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&(repo.clone(), number.get()))
            .cloned()
            .unwrap_or_default())
    }

    async fn branch_head(&self, repo: &RepoName, branch: &str) -> Result<CommitSha, GitHubError> {
        self.call("branch_head");
        self.fake.branch_head(repo, branch).await
    }

    async fn issues(&self, repo: &RepoName, query: &IssueQuery) -> Result<Vec<Issue>, GitHubError> {
        self.call("issues");
        self.fake.issues(repo, query).await
    }

    async fn create_comment(
        &self,
        repo: &RepoName,
        number: PrNumber,
        body: &str,
    ) -> Result<Comment, GitHubError> {
        self.call("create_comment");
        self.fake.create_comment(repo, number, body).await
    }

    async fn update_comment(
        &self,
        repo: &RepoName,
        id: CommentId,
        body: &str,
    ) -> Result<(), GitHubError> {
        self.call("update_comment");
        self.fake.update_comment(repo, id, body).await
    }

    async fn add_labels(
        &self,
        repo: &RepoName,
        number: PrNumber,
        labels: &[String],
    ) -> Result<(), GitHubError> {
        self.call("add_labels");
        self.fake.add_labels(repo, number, labels).await?;
        self.fake.with(|s| {
            let bot = s.bot.clone();
            for label in labels {
                if let Some(issue) = s
                    .issues
                    .iter_mut()
                    .find(|i| i.repo == *repo && i.number == number)
                    && !issue.labels.contains(label)
                {
                    issue.labels.push(label.clone());
                }
                if let Some(pr) = s
                    .pulls
                    .iter_mut()
                    .find(|p| p.pull.repo == *repo && p.pull.number == number)
                    && !pr.pull.labels.contains(label)
                {
                    pr.pull.labels.push(label.clone());
                    pr.events
                        .push(bot_event(LabelAction::Labeled, label, bot.clone()));
                }
            }
        });
        Ok(())
    }

    async fn remove_label(
        &self,
        repo: &RepoName,
        number: PrNumber,
        label: &str,
    ) -> Result<(), GitHubError> {
        self.call("remove_label");
        self.fake.remove_label(repo, number, label).await?;
        self.fake.with(|s| {
            let bot = s.bot.clone();
            for issue in s.issues.iter_mut() {
                if issue.repo == *repo && issue.number == number {
                    issue.labels.retain(|l| l != label);
                }
            }
            for pr in s.pulls.iter_mut() {
                if pr.pull.repo == *repo && pr.pull.number == number {
                    pr.pull.labels.retain(|l| l != label);
                    pr.events
                        .push(bot_event(LabelAction::Unlabeled, label, bot.clone()));
                }
            }
        });
        Ok(())
    }

    async fn create_issue(&self, repo: &RepoName, issue: &NewIssue) -> Result<Issue, GitHubError> {
        self.call("create_issue");
        self.fake.create_issue(repo, issue).await
    }

    async fn close_issue(&self, repo: &RepoName, number: PrNumber) -> Result<(), GitHubError> {
        self.call("close_issue");
        self.fake.close_issue(repo, number).await?;
        self.fake.with(|s| {
            for issue in s.issues.iter_mut() {
                if issue.repo == *repo && issue.number == number {
                    issue.state = IssueState::Closed;
                }
            }
            for pr in s.pulls.iter_mut() {
                if pr.pull.repo == *repo && pr.pull.number == number {
                    pr.pull.state = PrState::Closed;
                }
            }
        });
        Ok(())
    }

    async fn merge_pull(
        &self,
        repo: &RepoName,
        number: PrNumber,
        request: &MergeRequest,
    ) -> Result<CommitSha, GitHubError> {
        self.call("merge_pull");
        self.fake.merge_pull(repo, number, request).await
    }

    async fn update_branch(
        &self,
        repo: &RepoName,
        number: PrNumber,
        expected_head: &CommitSha,
    ) -> Result<UpdateBranchOutcome, GitHubError> {
        self.call("update_branch");
        self.fake.update_branch(repo, number, expected_head).await
    }
}
