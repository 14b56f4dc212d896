//! The webhook payloads mp reads, as our own serde models: only the fields routing needs,
//! every other field ignored. Field names and nullability follow GitHub's published webhook
//! schemas (`@octokit/openapi-webhooks`); the tests parse GitHub's example deliveries
//! (`@octokit/webhooks-examples`) with them.
//!
//! Nothing here is evidence: a payload only says where to look. Every decision re-reads
//! the pull request, its checks, labels and history from the API.

use serde::Deserialize;

/// The repository of a delivery (`repository`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Repository {
    /// `owner/name`.
    pub full_name: String,
    /// The default branch (GitHub sends it on every repository object of a delivery).
    #[serde(default)]
    pub default_branch: Option<String>,
}

/// A user (`sender`, `user`); GitHub sends `null` for deleted accounts.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct User {
    /// The login.
    pub login: String,
}

/// A label.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Label {
    /// The name.
    pub name: String,
}

/// One side of a pull request (`head` or `base`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct GitSide {
    /// The commit.
    pub sha: String,
    /// The branch.
    #[serde(rename = "ref")]
    pub branch: String,
}

/// A pull request of a `pull_request` delivery.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PullRequest {
    /// Its number.
    pub number: u64,
    /// The head.
    pub head: GitSide,
    /// The base.
    pub base: GitSide,
}

/// `pull_request`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PullRequestEvent {
    /// `opened`, `synchronize`, `labeled`, ...
    pub action: String,
    /// The pull request.
    pub pull_request: PullRequest,
    /// The repository.
    pub repository: Repository,
    /// Who acted.
    #[serde(default)]
    pub sender: Option<User>,
    /// The label of `labeled` / `unlabeled`.
    #[serde(default)]
    pub label: Option<Label>,
}

/// A pull request as a check run or suite names it: number and the two sides.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PullRef {
    /// Its number.
    pub number: u64,
}

/// The check run of a `check_run` delivery.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CheckRun {
    /// The commit it reports on.
    pub head_sha: String,
    /// The name.
    pub name: String,
    /// `queued`, `in_progress`, `completed`, ...
    pub status: String,
    /// The open pull requests of the same repository with this head (empty for forks).
    #[serde(default)]
    pub pull_requests: Vec<PullRef>,
}

/// `check_run`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CheckRunEvent {
    /// `created`, `completed`, `rerequested`, `requested_action`.
    pub action: String,
    /// The run.
    pub check_run: CheckRun,
    /// The repository.
    pub repository: Repository,
}

/// The check suite of a `check_suite` delivery.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CheckSuite {
    /// The commit.
    pub head_sha: String,
    /// The open pull requests with this head.
    #[serde(default)]
    pub pull_requests: Vec<PullRef>,
}

/// `check_suite`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CheckSuiteEvent {
    /// `completed`, `requested`, `rerequested`.
    pub action: String,
    /// The suite.
    pub check_suite: CheckSuite,
    /// The repository.
    pub repository: Repository,
}

/// `status` (a commit status).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct StatusEvent {
    /// The commit.
    pub sha: String,
    /// `pending`, `success`, `failure`, `error`.
    pub state: String,
    /// The repository.
    pub repository: Repository,
}

/// The issue of an `issues` or `issue_comment` delivery.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Issue {
    /// Its number.
    pub number: u64,
    /// Its labels. GitHub's schemas of some `issues` actions (`locked`, `reopened`, ...)
    /// allow `null` entries; those are dropped rather than failing the delivery.
    #[serde(default, deserialize_with = "without_nulls")]
    pub labels: Vec<Label>,
    /// Present when the issue is a pull request.
    #[serde(default)]
    pub pull_request: Option<serde_json::Value>,
}

/// A list with its `null` entries dropped.
fn without_nulls<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    let items = Vec::<Option<T>>::deserialize(deserializer)?;
    Ok(items.into_iter().flatten().collect())
}

/// `issues` and `issue_comment`: the same routing needs.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct IssueEvent {
    /// `opened`, `edited`, `created`, `labeled`, ...
    pub action: String,
    /// The issue.
    pub issue: Issue,
    /// The repository.
    pub repository: Repository,
}

/// `push`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PushEvent {
    /// `refs/heads/<branch>` or `refs/tags/<tag>`.
    #[serde(rename = "ref")]
    pub git_ref: String,
    /// The commit before.
    pub before: String,
    /// The commit after (all zeros when the branch was deleted).
    pub after: String,
    /// Whether the push deleted the ref.
    #[serde(default)]
    pub deleted: bool,
    /// The repository.
    pub repository: Repository,
}

/// A repository as `installation_repositories` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct InstalledRepository {
    /// `owner/name`.
    pub full_name: String,
}

/// `installation_repositories`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct InstallationRepositoriesEvent {
    /// `added` or `removed`.
    pub action: String,
    /// The repositories the installation gained.
    #[serde(default)]
    pub repositories_added: Vec<InstalledRepository>,
    /// The repositories it lost.
    #[serde(default)]
    pub repositories_removed: Vec<InstalledRepository>,
}

/// The merge group of a `merge_group` delivery: a temporary branch of GitHub's merge queue
/// (`refs/heads/gh-readonly-queue/<base>/pr-<N>-<sha>`) that tests a queued pull request
/// merged onto the branch and the entries ahead of it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct MergeGroup {
    /// The group's commit.
    pub head_sha: String,
    /// The group's full ref.
    pub head_ref: String,
    /// The full ref of the branch it lands on.
    pub base_ref: String,
}

impl MergeGroup {
    /// The pull request the group was made for, from its ref's `pr-<N>-` (GitHub's
    /// naming, not evidence: only where to look).
    pub fn pull_number(&self) -> Option<u64> {
        let name = self.head_ref.rsplit('/').next()?;
        let digits = name.strip_prefix("pr-")?.split('-').next()?;
        digits.parse().ok()
    }
}

/// `merge_group`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct MergeGroupEvent {
    /// `checks_requested` or `destroyed`.
    pub action: String,
    /// The group.
    pub merge_group: MergeGroup,
    /// Why a `destroyed` group ended: `merged`, `invalidated` or `dequeued`.
    #[serde(default)]
    pub reason: Option<String>,
    /// The repository (GitHub's schema does not require it).
    #[serde(default)]
    pub repository: Option<Repository>,
}

/// A delivery mp routes, by its `X-GitHub-Event`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// `ping`: sent once when the webhook is set up.
    Ping,
    /// `pull_request`.
    PullRequest(Box<PullRequestEvent>),
    /// `check_run`.
    CheckRun(Box<CheckRunEvent>),
    /// `check_suite`.
    CheckSuite(Box<CheckSuiteEvent>),
    /// `status`.
    Status(Box<StatusEvent>),
    /// `issues`.
    Issues(Box<IssueEvent>),
    /// `issue_comment`.
    IssueComment(Box<IssueEvent>),
    /// `push`.
    Push(Box<PushEvent>),
    /// `installation_repositories`.
    InstallationRepositories(Box<InstallationRepositoriesEvent>),
    /// `merge_group` (GitHub's merge queue).
    MergeGroup(Box<MergeGroupEvent>),
}

/// The events [`Event::parse`] knows, by `X-GitHub-Event`.
pub const KNOWN_EVENTS: [&str; 10] = [
    "ping",
    "pull_request",
    "check_run",
    "check_suite",
    "status",
    "issues",
    "issue_comment",
    "push",
    "installation_repositories",
    "merge_group",
];

/// Why a delivery cannot be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// An event mp does not act on.
    #[error("event '{0}' is not one mp acts on")]
    Unknown(String),
    /// The body is not the event's JSON.
    #[error("the body is not a {event} payload: {reason}")]
    Malformed {
        /// The event.
        event: String,
        /// serde's message, with line and column.
        reason: String,
    },
}

impl Event {
    /// Parses the body of an `event` delivery.
    ///
    /// # Errors
    /// [`ParseError::Unknown`] for an event mp does not act on, [`ParseError::Malformed`]
    /// when the body does not parse as the event's payload.
    pub fn parse(event: &str, body: &[u8]) -> Result<Self, ParseError> {
        fn json<T: serde::de::DeserializeOwned>(
            event: &str,
            body: &[u8],
        ) -> Result<Box<T>, ParseError> {
            serde_json::from_slice(body).map_err(|e| ParseError::Malformed {
                event: event.to_owned(),
                reason: e.to_string(),
            })
        }
        Ok(match event {
            "ping" => {
                json::<serde_json::Value>(event, body)?;
                Self::Ping
            }
            "pull_request" => Self::PullRequest(json(event, body)?),
            "check_run" => Self::CheckRun(json(event, body)?),
            "check_suite" => Self::CheckSuite(json(event, body)?),
            "status" => Self::Status(json(event, body)?),
            "issues" => Self::Issues(json(event, body)?),
            "issue_comment" => Self::IssueComment(json(event, body)?),
            "push" => Self::Push(json(event, body)?),
            "installation_repositories" => Self::InstallationRepositories(json(event, body)?),
            "merge_group" => Self::MergeGroup(json(event, body)?),
            other => return Err(ParseError::Unknown(other.to_owned())),
        })
    }
}
