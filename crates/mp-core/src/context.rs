//! Read-only context values handed to verdicts and skills: pull requests, commits, changed
//! files, check runs, label timeline events, comments and reactions.
//!
//! These are plain data. Adapters build them from GitHub answers; verdicts read them. A
//! skill that needs more information gets a bigger context, never an API client.

use crate::ids::{CommitSha, Login, PrNumber, RepoName, Timestamp};
use crate::trailers::Trailers;

/// Whether a pull request is open or closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrState {
    /// Open for review and merging.
    Open,
    /// Closed (merged or not; see [`PrContext::merged`]).
    Closed,
}

/// Everything the gate and the classifier know about one pull request.
#[derive(Debug, Clone, PartialEq)]
pub struct PrContext {
    /// The repository the pull request targets.
    pub repo: RepoName,
    /// The pull request number.
    pub number: PrNumber,
    /// Title.
    pub title: String,
    /// Body (may be empty).
    pub body: String,
    /// Head commit SHA.
    pub head_sha: CommitSha,
    /// Head branch name.
    pub head_ref: String,
    /// Base commit SHA as GitHub reports it for the pull request.
    pub base_sha: CommitSha,
    /// Base branch name (normally `main`).
    pub base_ref: String,
    /// Open or closed.
    pub state: PrState,
    /// Whether the pull request has been merged.
    pub merged: bool,
    /// Names of the labels currently on the pull request.
    pub labels: Vec<String>,
    /// The author's login.
    pub author: Login,
    /// The pull request's commits, oldest first.
    pub commits: Vec<CommitContext>,
    /// The files the pull request changes.
    pub files: Vec<FileChange>,
    /// Every check run reported on the head commit (same-named runs are all kept).
    pub check_runs: Vec<CheckRun>,
    /// The jobs of the GitHub Actions workflow runs on the head commit, read only when C2
    /// binds a required check to a workflow file (`required_check_workflows`); empty
    /// otherwise.
    pub workflow_jobs: Vec<WorkflowJob>,
    /// `labeled` and `unlabeled` timeline events, in timeline order.
    pub label_events: Vec<LabelEvent>,
    /// GitHub's own record of the updates of the head branch (the repository activity
    /// log), the server-side evidence that binds an owner's label to a head.
    pub head_history: HeadHistory,
    /// GitHub's record of the updates of the base branch, read (as far back as needed)
    /// only when the head branch holds a merge pushed onto it: the evidence that the merge
    /// brought in a commit the base branch pointed to, and nothing else (decisions/0026).
    pub base_history: HeadHistory,
    /// GitHub's record of the repository labels named by the approval labels on the pull
    /// request: when each was created and last edited. Read only when an approval label is
    /// present; an approval label applied before its label was last edited (renamed) or
    /// created is not honoured (decisions/0048).
    pub label_records: LabelRecords,
}

impl PrContext {
    /// Whether a label with exactly this name is currently present.
    pub fn has_label(&self, name: &str) -> bool {
        self.labels.iter().any(|l| l == name)
    }

    /// The head commit, when it is among [`PrContext::commits`].
    pub fn head_commit(&self) -> Option<&CommitContext> {
        self.commits.iter().find(|c| c.sha == self.head_sha)
    }

    /// `owner/repo#N`, the reference used in messages and audit records.
    pub fn reference(&self) -> String {
        format!("{}#{}", self.repo, self.number)
    }
}

/// One commit, with its message split into subject, body and trailers.
#[derive(Debug, Clone, PartialEq)]
pub struct CommitContext {
    /// The commit SHA.
    pub sha: CommitSha,
    /// First line of the message.
    pub subject: String,
    /// The rest of the message after the first line (may be empty).
    pub body: String,
    /// Trailers parsed from the message by the git trailer rules.
    pub trailers: Trailers,
    /// GitHub login of the author, when GitHub links one (forgeable: it is what the commit says).
    pub author_login: Option<Login>,
    /// GitHub login of the committer, when GitHub links one.
    pub committer_login: Option<Login>,
    /// Parent SHAs in order; more than one means a merge commit.
    pub parents: Vec<CommitSha>,
    /// Committer date, when present and parseable.
    pub committed_at: Option<Timestamp>,
}

impl CommitContext {
    /// Builds a commit context from a raw commit message: the subject is the first line,
    /// the body the remaining text, and trailers are parsed from the whole message.
    pub fn from_message(sha: CommitSha, message: &str) -> Self {
        let (subject, body) = match message.split_once('\n') {
            Some((subject, rest)) => (
                subject.trim_end_matches('\r'),
                rest.trim_start_matches('\n'),
            ),
            None => (message, ""),
        };
        Self {
            sha,
            subject: subject.to_owned(),
            body: body.to_owned(),
            trailers: Trailers::parse(message),
            author_login: None,
            committer_login: None,
            parents: Vec::new(),
            committed_at: None,
        }
    }

    /// The full message: subject, blank line, body.
    pub fn message(&self) -> String {
        if self.body.is_empty() {
            self.subject.clone()
        } else {
            format!("{}\n\n{}", self.subject, self.body)
        }
    }
}

/// How a pull request changes a file. GitHub statuses other than these are read as
/// [`FileStatus::Modified`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileStatus {
    /// A new file.
    Added,
    /// A changed file (also `changed`, `copied`, `unchanged` and unknown statuses).
    Modified,
    /// A deleted file.
    Removed,
    /// A moved file; see [`FileChange::previous_filename`].
    Renamed,
}

impl FileStatus {
    /// Reads a GitHub file status, normalising unknown values to `Modified`.
    pub fn from_github(status: &str) -> Self {
        match status {
            "added" => Self::Added,
            "removed" => Self::Removed,
            "renamed" => Self::Renamed,
            _ => Self::Modified,
        }
    }

    /// The GitHub spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "added",
            Self::Modified => "modified",
            Self::Removed => "removed",
            Self::Renamed => "renamed",
        }
    }
}

/// One file changed by a pull request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// Path after the change, relative to the repository root.
    pub path: String,
    /// How the file changes.
    pub status: FileStatus,
    /// Lines added.
    pub additions: u64,
    /// Lines deleted.
    pub deletions: u64,
    /// For renames, the path before the change.
    pub previous_filename: Option<String>,
}

impl FileChange {
    /// The path and, for renames, the previous path.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.path.as_str()).chain(self.previous_filename.as_deref())
    }
}

/// Where a check run is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckStatus {
    /// Waiting to start (also `waiting`, `requested`, `pending`).
    Queued,
    /// Running.
    InProgress,
    /// Finished; see the conclusion.
    Completed,
}

impl CheckStatus {
    /// Reads a GitHub check-run status; anything unknown counts as queued (not completed).
    pub fn from_github(status: &str) -> Self {
        match status {
            "completed" => Self::Completed,
            "in_progress" => Self::InProgress,
            _ => Self::Queued,
        }
    }

    /// The GitHub spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::InProgress => "in_progress",
            Self::Completed => "completed",
        }
    }
}

/// How a completed check run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckConclusion {
    /// `success`.
    Success,
    /// `failure`.
    Failure,
    /// `neutral`.
    Neutral,
    /// `cancelled`.
    Cancelled,
    /// `skipped`.
    Skipped,
    /// `timed_out`.
    TimedOut,
    /// `action_required`.
    ActionRequired,
    /// `stale`.
    Stale,
    /// Any other value GitHub may add, kept verbatim.
    Other(String),
}

impl CheckConclusion {
    /// Reads a GitHub conclusion.
    pub fn from_github(conclusion: &str) -> Self {
        match conclusion {
            "success" => Self::Success,
            "failure" => Self::Failure,
            "neutral" => Self::Neutral,
            "cancelled" => Self::Cancelled,
            "skipped" => Self::Skipped,
            "timed_out" => Self::TimedOut,
            "action_required" => Self::ActionRequired,
            "stale" => Self::Stale,
            other => Self::Other(other.to_owned()),
        }
    }

    /// The GitHub spelling.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Success => "success",
            Self::Failure => "failure",
            Self::Neutral => "neutral",
            Self::Cancelled => "cancelled",
            Self::Skipped => "skipped",
            Self::TimedOut => "timed_out",
            Self::ActionRequired => "action_required",
            Self::Stale => "stale",
            Self::Other(other) => other,
        }
    }
}

/// One check run on a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckRun {
    /// GitHub's id of the run (`id`), when the adapter knows it: what a workflow job's
    /// `check_run_url` names ([`WorkflowJob::check_run_id`]).
    pub id: Option<u64>,
    /// Check name, e.g. `test`.
    pub name: String,
    /// Life-cycle status.
    pub status: CheckStatus,
    /// Conclusion, set once completed.
    pub conclusion: Option<CheckConclusion>,
    /// When the run started.
    pub started_at: Option<Timestamp>,
    /// When the run completed.
    pub completed_at: Option<Timestamp>,
    /// Slug of the GitHub App that published the run (`app.slug`), if any.
    pub app_slug: Option<String>,
    /// `output.summary`, if any.
    pub output_summary: Option<String>,
}

impl CheckRun {
    /// Whether the run completed with exactly this conclusion.
    pub fn concluded(&self, conclusion: &CheckConclusion) -> bool {
        self.status == CheckStatus::Completed && self.conclusion.as_ref() == Some(conclusion)
    }
}

/// A job of a GitHub Actions workflow run on a commit: GitHub's record that the check run
/// [`WorkflowJob::check_run_id`] was published by a job of a run of the workflow file
/// [`WorkflowJob::workflow_path`] on [`WorkflowJob::head_sha`] (decisions/0047).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkflowJob {
    /// The id of the check run the job publishes (the last segment of its `check_run_url`).
    pub check_run_id: u64,
    /// The workflow run's id.
    pub run_id: u64,
    /// The workflow run's `path`: the workflow file, e.g. `.github/workflows/ci.yml`.
    pub workflow_path: String,
    /// The workflow run's `head_sha`.
    pub head_sha: CommitSha,
    /// The event that started the workflow run, e.g. `pull_request`.
    pub event: String,
}

impl WorkflowJob {
    /// The workflow file of `repo` that this job's run names: the path itself
    /// (`.github/workflows/ci.yml`), or the path of GitHub's longer spelling
    /// `<owner>/<repo>/.github/workflows/ci.yml@<ref>` when it names `repo`. The ref does
    /// not matter: the version run is the one at the run's `head_sha`. `None` for a
    /// workflow of another repository.
    pub fn workflow_file(&self, repo: &RepoName) -> Option<&str> {
        let path = self.workflow_path.as_str();
        let path = path.rsplit_once('@').map_or(path, |(file, _)| file);
        let repo = repo.as_str();
        match path.get(..repo.len()) {
            Some(prefix) if prefix.eq_ignore_ascii_case(repo) => {
                path[repo.len()..].strip_prefix('/')
            }
            _ if path.starts_with(".github/") => Some(path),
            _ => None,
        }
    }
}

/// Whether GitHub records `run` as published by a job of a run of the workflow file
/// `workflow` of `repo` on the commit `sha`: its id is the check run of such a job among
/// `jobs` (decisions/0047). A run created through the Checks API, or by a job of another
/// workflow file or on another commit, is not.
pub fn published_by_workflow(
    jobs: &[WorkflowJob],
    run: &CheckRun,
    workflow: &str,
    repo: &RepoName,
    sha: &CommitSha,
) -> bool {
    run.id.is_some_and(|id| {
        jobs.iter().any(|job| {
            job.check_run_id == id
                && job.workflow_file(repo) == Some(workflow)
                && &job.head_sha == sha
        })
    })
}

/// Where `run` came from, for a reason's text: the workflow file of the job among `jobs`
/// that published it (with ` on <sha>` when that job's run is on a commit other than
/// `sha`), or `None` when no workflow job published it.
pub fn run_source(jobs: &[WorkflowJob], run: &CheckRun, sha: &CommitSha) -> Option<String> {
    let job = run
        .id
        .and_then(|id| jobs.iter().find(|job| job.check_run_id == id))?;
    Some(if &job.head_sha == sha {
        job.workflow_path.clone()
    } else {
        format!("{} on {}", job.workflow_path, job.head_sha.short())
    })
}

/// Whether a timeline event added or removed a label, or changed the pull request's base.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LabelAction {
    /// `labeled`.
    Labeled,
    /// `unlabeled`.
    Unlabeled,
    /// `base_ref_changed` (someone edited the base branch) or
    /// `automatic_base_change_succeeded` (GitHub retargeted it). Such an event names no
    /// label: its `label` is empty. It ends every label's binding applied before it
    /// (decisions/0042).
    BaseChanged,
}

/// What changed the head branch, as GitHub's repository activity log names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefUpdateKind {
    /// A fast-forward push.
    Push,
    /// A push that rewrote the branch.
    ForcePush,
    /// The branch was created.
    BranchCreation,
    /// The branch was deleted.
    BranchDeletion,
    /// Any other activity type, kept verbatim (e.g. `pr_merge`).
    Other(String),
}

impl RefUpdateKind {
    /// Reads GitHub's `activity_type`.
    pub fn from_github(activity_type: &str) -> Self {
        match activity_type {
            "push" => Self::Push,
            "force_push" => Self::ForcePush,
            "branch_creation" => Self::BranchCreation,
            "branch_deletion" => Self::BranchDeletion,
            other => Self::Other(other.to_owned()),
        }
    }

    /// GitHub's `activity_type` for this kind.
    pub fn as_github(&self) -> &str {
        match self {
            Self::Push => "push",
            Self::ForcePush => "force_push",
            Self::BranchCreation => "branch_creation",
            Self::BranchDeletion => "branch_deletion",
            Self::Other(other) => other,
        }
    }
}

/// One update of a branch, from GitHub's repository activity log
/// (`GET /repos/{owner}/{repo}/activity?ref=`). The time is GitHub's, not the commit's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefUpdate {
    /// What kind of update.
    pub kind: RefUpdateKind,
    /// The branch tip before, `None` for a creation (GitHub's all-zero SHA).
    pub before: Option<CommitSha>,
    /// The branch tip after, `None` for a deletion (GitHub's all-zero SHA).
    pub after: Option<CommitSha>,
    /// GitHub's time of the update; `None` when missing or unparseable.
    pub at: Option<Timestamp>,
    /// Who made it, when GitHub names an actor.
    pub actor: Option<Login>,
}

/// The head branch's update history, or why it is not known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum HeadHistory {
    /// Not read (no receipt-bound label is on the pull request, or an embedder did not
    /// fetch it). Nothing can be bound to a head on it.
    #[default]
    NotRead,
    /// GitHub's record of the head branch's updates, in any order.
    Read(Vec<RefUpdate>),
    /// It cannot be had, e.g. the head branch lives in a fork.
    Unavailable {
        /// Why.
        reason: String,
    },
}

/// GitHub's record of one repository label (GraphQL `Label`: `name`, `createdAt`,
/// `updatedAt`; REST's label object carries no times).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelRecord {
    /// The label's current name.
    pub name: String,
    /// When GitHub created the label; `None` when GitHub gives no time.
    pub created_at: Option<Timestamp>,
    /// When the label was last edited (renamed, recoloured, re-described); GitHub reports
    /// the creation time for a label nobody edited. `None` when GitHub gives no time.
    pub updated_at: Option<Timestamp>,
}

impl LabelRecord {
    /// A record with both times equal: a label created at `at` and never edited.
    pub fn created(name: &str, at: Timestamp) -> Self {
        Self {
            name: name.to_owned(),
            created_at: Some(at),
            updated_at: Some(at),
        }
    }
}

/// The records of the labels a pull request's approval labels name, or why they are not
/// known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum LabelRecords {
    /// Not read (no approval label is on the pull request, or an embedder did not fetch
    /// them). No approval label is honoured on it.
    #[default]
    NotRead,
    /// GitHub's records; a label GitHub does not know is left out.
    Read(Vec<LabelRecord>),
    /// They cannot be had (GitHub answered that it has none to give).
    Unavailable {
        /// Why.
        reason: String,
    },
}

impl LabelRecords {
    /// The record of the label with exactly this name, when read.
    pub fn get(&self, name: &str) -> Option<&LabelRecord> {
        match self {
            Self::Read(records) => records.iter().find(|r| r.name == name),
            Self::NotRead | Self::Unavailable { .. } => None,
        }
    }
}

/// One `labeled` / `unlabeled` event from an issue or pull-request timeline, or a change of
/// a pull request's base ([`LabelAction::BaseChanged`], with an empty `label`): the events
/// that decide what a label binds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelEvent {
    /// Added or removed.
    pub action: LabelAction,
    /// The label name.
    pub label: String,
    /// Who did it, when GitHub names an actor.
    pub actor: Option<Login>,
    /// GitHub's event time; `None` when missing or unparseable.
    pub at: Option<Timestamp>,
}

/// Identifier of an issue or pull-request comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CommentId(u64);

impl CommentId {
    /// Wraps an id.
    pub const fn new(id: u64) -> Self {
        Self(id)
    }

    /// The id.
    pub const fn get(self) -> u64 {
        self.0
    }
}

/// One comment on an issue or pull request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comment {
    /// The comment id.
    pub id: CommentId,
    /// Author login, when known.
    pub author: Option<Login>,
    /// Markdown body.
    pub body: String,
    /// Server creation time, when parseable.
    pub created_at: Option<Timestamp>,
    /// Server time of the last edit, when parseable. GitHub reports `updated_at` equal
    /// to `created_at` for a comment nobody edited; anyone with write access can edit
    /// anyone's comment, so a later time means "edited, by somebody".
    pub updated_at: Option<Timestamp>,
}

impl Comment {
    /// Whether the comment was edited after it was written (`updated_at` later than
    /// `created_at`). An unknown creation time with a known update time counts as edited.
    pub fn is_edited(&self) -> bool {
        match (self.created_at, self.updated_at) {
            (Some(created), Some(updated)) => updated > created,
            (None, Some(_)) => true,
            (_, None) => false,
        }
    }
}

/// The emoji of a reaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReactionKind {
    /// 👍 (`+1`).
    ThumbsUp,
    /// 👎 (`-1`).
    ThumbsDown,
    /// Any other reaction, kept verbatim.
    Other(String),
}

impl ReactionKind {
    /// Reads GitHub's reaction content.
    pub fn from_github(content: &str) -> Self {
        match content {
            "+1" => Self::ThumbsUp,
            "-1" => Self::ThumbsDown,
            other => Self::Other(other.to_owned()),
        }
    }
}

/// One reaction on an issue or comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reaction {
    /// The emoji.
    pub kind: ReactionKind,
    /// Who reacted.
    pub user: Login,
    /// When, if known.
    pub created_at: Option<Timestamp>,
}
