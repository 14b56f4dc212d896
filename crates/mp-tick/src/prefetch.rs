//! Reads in parallel, writes in order (decisions/0034).
//!
//! Before the pull-request path acts on a repository, it takes every read its pull
//! requests need with at most [`ReadConcurrency`] calls in flight: commits, files, head
//! check runs, label timeline, comments, the head branch's activity log and the records of
//! the approval labels when one is present, and the gated branch's head. Parts the adapter
//! already returned with the list ([`GitHub::open_pulls_with_reads`], the GraphQL path:
//! everything but the activity log, decisions/0075) are not read again. The
//! writes then go one at a time, in the order the serial tick makes them, each pull request
//! deciding over the reads taken for it: nothing the tick writes to one pull request is
//! read back by another.
//!
//! A read that meets a rate limit stops the reads not yet started: they answer the same
//! error without calling GitHub, and the pull-request path stops at the first pull request
//! that carries it, as the serial tick would. Below [`PR_PATH_RESERVE`]
//! remaining calls no read starts, whatever the number in flight: the branch supervisor and
//! the state keep their share.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use futures_util::StreamExt as _;
use futures_util::future::BoxFuture;

use mp_core::context::{
    CheckRun, Comment, CommitContext, FileChange, HeadHistory, LabelEvent, LabelRecords, PrContext,
};
use mp_core::ids::{CommitSha, PrNumber, RepoName};
use mp_core::port::{GitHub, GitHubError, ListedPull, PullRequest};

use super::PR_PATH_RESERVE;
use super::evaluate::{
    approval_labels, base_history, context_of, head_history, head_history_unread, label_records,
    merged_parents, read_workflow_jobs,
};
use mp_core::config::ReadConcurrency;

/// The reads of one pull request, each as it came.
pub(crate) struct PullData {
    /// Commits, files, check runs, label events, head history and label records; the first error in that
    /// order, as the serial read would have stopped at it.
    pub(crate) context: Result<PrContext, GitHubError>,
    /// The comments (the receipts).
    pub(crate) comments: Result<Vec<Comment>, GitHubError>,
}

/// The reads of one repository's pull requests.
pub(crate) struct RepoReads {
    /// The gated branch's head, read when a pull request into it is listed.
    pub(crate) main_head: Option<Result<CommitSha, GitHubError>>,
    /// Per pull request into the gated branch.
    pub(crate) pulls: BTreeMap<PrNumber, PullData>,
}

/// The first rate-limit error any read met, shared by the reads in flight.
#[derive(Default)]
struct Stop(Mutex<Option<GitHubError>>);

impl Stop {
    /// Why a read must not start: an earlier read met a rate limit, or the calls left are
    /// under the reserve.
    fn refusal(&self, github: &dyn GitHub) -> Option<GitHubError> {
        let mut stopped = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if stopped.is_none()
            && let Some(remaining) = github.rate_limit_remaining()
            && remaining < PR_PATH_RESERVE
        {
            *stopped = Some(GitHubError::RateLimited { remaining });
        }
        stopped.clone()
    }

    fn note(&self, error: &GitHubError) {
        if matches!(
            error,
            GitHubError::RateLimited { .. } | GitHubError::Throttled { .. }
        ) {
            let mut stopped = self.0.lock().unwrap_or_else(PoisonError::into_inner);
            stopped.get_or_insert_with(|| error.clone());
        }
    }

    async fn read<T>(
        &self,
        github: &dyn GitHub,
        read: BoxFuture<'_, Result<T, GitHubError>>,
    ) -> Result<T, GitHubError> {
        if let Some(refusal) = self.refusal(github) {
            return Err(refusal);
        }
        let answer = read.await;
        if let Err(error) = &answer {
            self.note(error);
        }
        answer
    }
}

/// One read's answer, by the index of its pull request.
enum Answer {
    Main(Result<CommitSha, GitHubError>),
    Commits(usize, Result<Vec<CommitContext>, GitHubError>),
    Files(usize, Result<Vec<FileChange>, GitHubError>),
    Checks(usize, Result<Vec<CheckRun>, GitHubError>),
    Labels(usize, Result<Vec<LabelEvent>, GitHubError>),
    History(usize, Result<HeadHistory, GitHubError>),
    Records(usize, Result<LabelRecords, GitHubError>),
    Comments(usize, Result<Vec<Comment>, GitHubError>),
}

/// The parts of one pull request as they arrive.
struct Parts {
    commits: Option<Result<Vec<CommitContext>, GitHubError>>,
    files: Option<Result<Vec<FileChange>, GitHubError>>,
    checks: Option<Result<Vec<CheckRun>, GitHubError>>,
    labels: Option<Result<Vec<LabelEvent>, GitHubError>>,
    history: Option<Result<HeadHistory, GitHubError>>,
    records: Option<Result<LabelRecords, GitHubError>>,
    comments: Option<Result<Vec<Comment>, GitHubError>>,
}

/// The records of the approval labels on a listed pull request, when it needs none
/// (`NotRead`) or its listing carried GitHub's record of every label on it: the same
/// `Label` objects [`GitHub::label_records`] reads by name (decisions/0075). A label the
/// listing has no record of is left out, as the read by name leaves out a name GitHub has
/// no label for.
fn records_listed(listed: &ListedPull) -> Option<Result<LabelRecords, GitHubError>> {
    let names = approval_labels(&listed.pull);
    if names.is_empty() {
        return Some(Ok(LabelRecords::NotRead));
    }
    let records = listed.reads.label_records.as_ref()?;
    Some(Ok(LabelRecords::Read(
        records
            .iter()
            .filter(|record| names.contains(&record.name))
            .cloned()
            .collect(),
    )))
}

/// The gated branch's head as the listing read it, when the listing carried the head of
/// the repository's default branch and that is the gated branch (decisions/0075).
fn head_listed(pulls: &[&ListedPull], gated: &str) -> Option<CommitSha> {
    pulls
        .iter()
        .rev()
        .find_map(|listed| listed.reads.default_branch.as_ref())
        .filter(|(branch, _)| branch == gated)
        .map(|(_, head)| head.clone())
}

/// A part no read answered: a bug, reported as the read that failed rather than a panic.
fn unanswered<T>(pull: &PullRequest, part: &str) -> Result<T, GitHubError> {
    Err(GitHubError::Unavailable {
        route: format!("{}#{} {part}", pull.repo, pull.number),
        message: "the read was not answered".to_owned(),
    })
}

impl Parts {
    fn of(listed: &ListedPull) -> Self {
        let reads = &listed.reads;
        Self {
            commits: reads.commits.clone().map(Ok),
            files: reads.files.clone().map(Ok),
            checks: reads.check_runs.clone().map(Ok),
            labels: reads.label_events.clone().map(Ok),
            history: head_history_unread(&listed.pull).map(Ok),
            records: records_listed(listed),
            comments: reads.comments.clone().map(Ok),
        }
    }

    fn finish(self, pull: &PullRequest) -> PullData {
        let context = (|| {
            let commits = self
                .commits
                .unwrap_or_else(|| unanswered(pull, "commits"))?;
            let files = self.files.unwrap_or_else(|| unanswered(pull, "files"))?;
            let checks = self
                .checks
                .unwrap_or_else(|| unanswered(pull, "check runs"))?;
            let labels = self
                .labels
                .unwrap_or_else(|| unanswered(pull, "label events"))?;
            let history = self
                .history
                .unwrap_or_else(|| unanswered(pull, "head history"))?;
            let records = self
                .records
                .unwrap_or_else(|| unanswered(pull, "label records"))?;
            let mut context = context_of(pull, commits, files, checks, labels, history);
            context.label_records = records;
            Ok(context)
        })();
        PullData {
            context,
            comments: self
                .comments
                .unwrap_or_else(|| unanswered(pull, "comments")),
        }
    }
}

/// Takes every read of `pulls` (and the head of `gated` in `repo`, when `pulls` is not
/// empty) with at most `limit` in flight.
pub(crate) async fn read_repo(
    github: &dyn GitHub,
    repo: &RepoName,
    gated: &str,
    pulls: &[&ListedPull],
    limit: ReadConcurrency,
    workflows: bool,
) -> RepoReads {
    let stop = Stop::default();
    let stop = &stop;
    let mut parts: Vec<Parts> = pulls.iter().map(|listed| Parts::of(listed)).collect();
    read_repo_activity(github, stop, repo, pulls, &mut parts).await;
    let mut jobs: Vec<BoxFuture<'_, Answer>> = Vec::new();
    let listed_head = head_listed(pulls, gated);
    if !pulls.is_empty() && listed_head.is_none() {
        jobs.push(Box::pin(async move {
            Answer::Main(stop.read(github, github.branch_head(repo, gated)).await)
        }));
    }
    for (index, listed) in pulls.iter().enumerate() {
        let pull = &listed.pull;
        let (repo, number) = (&pull.repo, pull.number);
        let have = &parts[index];
        if have.commits.is_none() {
            jobs.push(Box::pin(async move {
                Answer::Commits(
                    index,
                    stop.read(github, github.pull_commits(repo, number)).await,
                )
            }));
        }
        if have.files.is_none() {
            jobs.push(Box::pin(async move {
                Answer::Files(
                    index,
                    stop.read(github, github.pull_files(repo, number)).await,
                )
            }));
        }
        if have.checks.is_none() {
            jobs.push(Box::pin(async move {
                Answer::Checks(
                    index,
                    stop.read(github, github.check_runs(repo, &pull.head_sha))
                        .await,
                )
            }));
        }
        if have.labels.is_none() {
            jobs.push(Box::pin(async move {
                Answer::Labels(
                    index,
                    stop.read(github, github.label_events(repo, number)).await,
                )
            }));
        }
        if have.history.is_none() {
            jobs.push(Box::pin(async move {
                Answer::History(
                    index,
                    stop.read(github, Box::pin(head_history(github, pull)))
                        .await,
                )
            }));
        }
        if have.records.is_none() {
            jobs.push(Box::pin(async move {
                Answer::Records(
                    index,
                    stop.read(github, Box::pin(label_records(github, pull)))
                        .await,
                )
            }));
        }
        if have.comments.is_none() {
            jobs.push(Box::pin(async move {
                Answer::Comments(
                    index,
                    stop.read(github, github.comments(repo, number)).await,
                )
            }));
        }
    }
    let answers: Vec<Answer> = futures_util::stream::iter(jobs)
        .buffer_unordered(limit.get())
        .collect()
        .await;
    let mut main_head = listed_head.map(Ok);
    for answer in answers {
        match answer {
            Answer::Main(head) => main_head = Some(head),
            Answer::Commits(i, read) => parts[i].commits = Some(read),
            Answer::Files(i, read) => parts[i].files = Some(read),
            Answer::Checks(i, read) => parts[i].checks = Some(read),
            Answer::Labels(i, read) => parts[i].labels = Some(read),
            Answer::History(i, read) => parts[i].history = Some(read),
            Answer::Records(i, read) => parts[i].records = Some(read),
            Answer::Comments(i, read) => parts[i].comments = Some(read),
        }
    }
    let mut pulls: BTreeMap<PrNumber, PullData> = pulls
        .iter()
        .zip(parts)
        .map(|(listed, parts)| (listed.pull.number, parts.finish(&listed.pull)))
        .collect();
    read_base_history(github, stop, repo, gated, &mut pulls).await;
    if workflows {
        read_workflows(github, stop, &mut pulls, limit).await;
    }
    RepoReads { main_head, pulls }
}

/// The most pages of the repository's activity log the pull-request path reads before it
/// gives up on it and reads each head branch on its own (decisions/0070).
pub(crate) const MAX_ACTIVITY_PAGES: usize = 10;

/// The head branches' histories from one read of the repository's activity log, when more
/// than one pull request needs its head branch's: read at most one page fewer than the
/// per-branch reads it replaces (and [`MAX_ACTIVITY_PAGES`]), so it never costs more than
/// they would when it succeeds. A log read to its end gives every branch its entries (the
/// same server-side record the per-branch read filters by `ref`); a longer log, an entry
/// without a full ref, or a failed read leaves every branch to its own read.
async fn read_repo_activity(
    github: &dyn GitHub,
    stop: &Stop,
    repo: &RepoName,
    pulls: &[&ListedPull],
    parts: &mut [Parts],
) {
    let needed: Vec<usize> = parts
        .iter()
        .enumerate()
        .filter(|(_, part)| part.history.is_none())
        .map(|(index, _)| index)
        .collect();
    if needed.len() < 2 {
        return;
    }
    let pages = (needed.len() - 1).min(MAX_ACTIVITY_PAGES);
    let Ok(log) = stop.read(github, github.repo_activity(repo, pages)).await else {
        return;
    };
    for index in needed {
        if let Some(updates) = log.branch(&pulls[index].pull.head_ref) {
            parts[index].history = Some(Ok(HeadHistory::Read(updates)));
        }
    }
}

/// The jobs of the workflow runs on each pull request's head (C2 binds a required check to
/// a workflow file, decisions/0047); a read that fails fails that pull request's context.
async fn read_workflows(
    github: &dyn GitHub,
    stop: &Stop,
    pulls: &mut BTreeMap<PrNumber, PullData>,
    limit: ReadConcurrency,
) {
    let reads: Vec<BoxFuture<'_, ()>> = pulls
        .values_mut()
        .map(|data| -> BoxFuture<'_, ()> {
            Box::pin(async move {
                let Ok(context) = &mut data.context else {
                    return;
                };
                let read = stop
                    .read(github, Box::pin(read_workflow_jobs(github, context)))
                    .await;
                if let Err(err) = read {
                    data.context = Err(err);
                }
            })
        })
        .collect();
    futures_util::stream::iter(reads)
        .buffer_unordered(limit.get())
        .collect::<Vec<()>>()
        .await;
}

/// The gated branch's update history for every pull request whose head branch holds a
/// merge pushed onto it, in one read back as far as all their second parents; a read that
/// fails fails those pull requests' contexts.
async fn read_base_history(
    github: &dyn GitHub,
    stop: &Stop,
    repo: &RepoName,
    gated: &str,
    pulls: &mut BTreeMap<PrNumber, PullData>,
) {
    let mut needed: Vec<CommitSha> = pulls
        .values()
        .filter_map(|data| data.context.as_ref().ok())
        .flat_map(merged_parents)
        .collect();
    if needed.is_empty() {
        return;
    }
    needed.sort();
    needed.dedup();
    let read = stop
        .read(github, Box::pin(base_history(github, repo, gated, &needed)))
        .await;
    for data in pulls.values_mut() {
        let Ok(context) = &mut data.context else {
            continue;
        };
        if merged_parents(context).is_empty() {
            continue;
        }
        match &read {
            Ok(history) => context.base_history = history.clone(),
            Err(err) => data.context = Err(err.clone()),
        }
    }
}
