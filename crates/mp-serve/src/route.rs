//! Which work a delivery asks for: a pure function of the event, the configuration, the
//! shard and the gated branches.
//!
//! | Event | Work |
//! |---|---|
//! | `pull_request` opened, reopened, synchronize, edited, labeled, unlabeled, ready_for_review | that pull request |
//! | `check_run` / `check_suite` completed | the open pull requests with that head (and those the payload names) |
//! | `status` | the open pull requests with that head |
//! | `issues`, `issue_comment` on a `decision:pending-owner` issue of the governance repository | a resync (the inbox poll runs in it, so an approval merges in it) |
//! | `push` to a repository's gated branch | the branch supervisor of that repository and its ready pull requests (the race guard) |
//! | `installation_repositories` | a resync |
//! | `merge_group` checks_requested, into a gated branch | the pull request the group was made for (`gh-readonly-queue/<base>/pr-<N>-...`): its gate is judged again at once, with every ready pull request of the repository, so one it refuses leaves GitHub's merge queue before the group's checks finish and mp's check on the group is published (decisions/0079, 0084) |
//! | `ping` | nothing (answered `pong`) |
//!
//! Everything else is ignored with its reason: other actions, other branches, repositories
//! not in `projects.yml`, repositories of another shard, tags, deleted branches. GitHub
//! sends no webhook for reactions: an owner's 👍 on an inbox issue is read by the next
//! resync (docs/decisions/0032).

use mp_core::config::Config;
use mp_core::ids::{CommitSha, PrNumber, RepoName};
use mp_core::inbox::PENDING_OWNER;
use mp_tick::{DefaultBranches, Shard};

use crate::payload::{Event, IssueEvent, MergeGroupEvent, PullRef, Repository};

/// The work a delivery asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Work {
    /// Evaluate these pull requests of `repo`: by number, and the open ones with a head.
    Pulls {
        /// The repository.
        repo: RepoName,
        /// Pull requests by number.
        numbers: Vec<PrNumber>,
        /// Pull requests by head commit.
        heads: Vec<CommitSha>,
    },
    /// The gated branch of `repo` moved: its branch supervisor, then its ready pull
    /// requests (those with an approval label re-check the race guard).
    BranchMoved {
        /// The repository.
        repo: RepoName,
        /// Whether its pull requests are gated (not audit-only).
        gated: bool,
    },
    /// GitHub's merge queue asks for the checks of a group made for pull request `number`:
    /// that pull request and every ready one of `repo` (the group holds the entries ahead
    /// of it), then mp's check on the repository's groups (decisions/0084).
    MergeGroup {
        /// The repository.
        repo: RepoName,
        /// The pull request the group was made for.
        number: PrNumber,
    },
    /// The whole tick: inbox, every pull request, every supervisor, the drift check.
    Resync,
}

/// What to do with a delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Routed {
    /// Queue this work.
    Work(Vec<Work>),
    /// Nothing to do, and why.
    Ignored(String),
    /// A `ping`.
    Pong,
    /// Nothing to decide, but a fact for the audit log: the record's fields (the service
    /// adds `ts` and `record`), and why.
    Record {
        /// The record's fields.
        fields: serde_json::Map<String, serde_json::Value>,
        /// What the delivery was.
        reason: String,
    },
}

/// What routing needs to know besides the delivery.
#[derive(Debug, Clone, Copy)]
pub struct RouteContext<'a> {
    /// The configuration.
    pub config: &'a Config,
    /// This replica's shard, when sharded.
    pub shard: Option<Shard>,
    /// The gated branch of each repository.
    pub branches: &'a DefaultBranches,
}

impl RouteContext<'_> {
    /// The repository of a delivery when this replica supervises it, else why not.
    fn supervised(&self, repository: &Repository) -> Result<RepoName, String> {
        let repo = RepoName::parse(&repository.full_name)
            .map_err(|e| format!("repository '{}': {e}", repository.full_name))?;
        if !self.config.projects().is_supervised(&repo) {
            return Err(format!(
                "{repo} is not a supervised repository of projects.yml"
            ));
        }
        if let Some(shard) = self.shard
            && !shard.owns(&repo)
        {
            return Err(format!("{repo} belongs to another shard than {shard}"));
        }
        Ok(repo)
    }

    /// The repository when its pull requests are gated here, else why not.
    fn gated(&self, repository: &Repository) -> Result<RepoName, String> {
        let repo = self.supervised(repository)?;
        if !self.config.projects().is_gated(&repo) {
            return Err(format!(
                "{repo} is audit-only: its pull requests are not gated"
            ));
        }
        Ok(repo)
    }
}

const PULL_ACTIONS: [&str; 7] = [
    "opened",
    "reopened",
    "synchronize",
    "edited",
    "labeled",
    "unlabeled",
    "ready_for_review",
];

fn pulls(repo: RepoName, refs: &[PullRef], head: &str) -> Routed {
    let numbers = refs.iter().map(|p| PrNumber::new(p.number)).collect();
    let heads = CommitSha::parse(head).into_iter().collect();
    Routed::Work(vec![Work::Pulls {
        repo,
        numbers,
        heads,
    }])
}

fn ignored(reason: impl Into<String>) -> Routed {
    Routed::Ignored(reason.into())
}

/// Routes a parsed delivery.
pub fn route(event: &Event, cx: &RouteContext<'_>) -> Routed {
    match route_or_why(event, cx) {
        Ok(routed) => routed,
        Err(reason) => Routed::Ignored(reason),
    }
}

fn route_or_why(event: &Event, cx: &RouteContext<'_>) -> Result<Routed, String> {
    Ok(match event {
        Event::Ping => Routed::Pong,
        Event::PullRequest(e) => {
            let repo = cx.gated(&e.repository)?;
            if !PULL_ACTIONS.contains(&e.action.as_str()) {
                return Ok(ignored(format!(
                    "pull_request {} needs no evaluation",
                    e.action
                )));
            }
            Routed::Work(vec![Work::Pulls {
                repo,
                numbers: vec![PrNumber::new(e.pull_request.number)],
                heads: Vec::new(),
            }])
        }
        Event::CheckRun(e) => {
            let repo = cx.gated(&e.repository)?;
            if e.action != "completed" {
                return Ok(ignored(format!(
                    "check_run {} changes no verdict",
                    e.action
                )));
            }
            pulls(repo, &e.check_run.pull_requests, &e.check_run.head_sha)
        }
        Event::CheckSuite(e) => {
            let repo = cx.gated(&e.repository)?;
            if e.action != "completed" {
                return Ok(ignored(format!(
                    "check_suite {} changes no verdict",
                    e.action
                )));
            }
            pulls(repo, &e.check_suite.pull_requests, &e.check_suite.head_sha)
        }
        Event::Status(e) => {
            let repo = cx.gated(&e.repository)?;
            pulls(repo, &[], &e.sha)
        }
        Event::Issues(e) | Event::IssueComment(e) => inbox(e, cx)?,
        Event::Push(e) => {
            let repo = cx.supervised(&e.repository)?;
            let branch = cx.branches.of(&repo);
            let Some(pushed) = e.git_ref.strip_prefix("refs/heads/") else {
                return Ok(ignored(format!("push to {} is not a branch", e.git_ref)));
            };
            if pushed != branch {
                return Ok(ignored(format!(
                    "push to {pushed}, not the gated branch {branch} of {repo}"
                )));
            }
            if e.deleted {
                return Ok(ignored(format!("push deleted {pushed} of {repo}")));
            }
            let gated = cx.config.projects().is_gated(&repo);
            Routed::Work(vec![Work::BranchMoved { repo, gated }])
        }
        Event::InstallationRepositories(_) => Routed::Work(vec![Work::Resync]),
        Event::MergeGroup(e) => merge_group(e, cx)?,
    })
}

/// `merge_group` `checks_requested`: GitHub's queue starts testing a group; the pull request
/// it was made for is judged again. A `destroyed` group is not: a pull request the queue
/// removed for a failing group would be enqueued again at once (decisions/0079).
fn merge_group(e: &MergeGroupEvent, cx: &RouteContext<'_>) -> Result<Routed, String> {
    let Some(repository) = &e.repository else {
        return Ok(ignored("merge_group without a repository"));
    };
    let repo = cx.gated(repository)?;
    let group = &e.merge_group;
    if e.action != "checks_requested" && e.action != "destroyed" {
        return Ok(ignored(format!(
            "merge_group {} of {} in {repo} changes no verdict",
            e.action, group.head_ref
        )));
    }
    let branch = cx.branches.of(&repo);
    if group.base_ref.strip_prefix("refs/heads/") != Some(branch) {
        return Ok(ignored(format!(
            "merge_group into {}, not the gated branch {branch} of {repo}",
            group.base_ref
        )));
    }
    let Some(number) = group.pull_number() else {
        return Ok(ignored(format!(
            "merge_group {} names no pull request",
            group.head_ref
        )));
    };
    if e.action == "destroyed" {
        // Recorded, not judged: judging it again would enqueue a pull request whose group
        // just failed; a landing reaches the supervisor through `push` (decisions/0079).
        let reason = e.reason.as_deref().unwrap_or("unknown");
        let fields: serde_json::Map<String, serde_json::Value> = [
            ("action", "destroyed".to_owned()),
            ("reason", reason.to_owned()),
            ("repo", repo.as_str().to_owned()),
            ("pr", format!("{repo}#{number}")),
            ("head_ref", group.head_ref.clone()),
            ("head_sha", group.head_sha.clone()),
        ]
        .into_iter()
        .map(|(key, value)| (key.to_owned(), value.into()))
        .collect();
        return Ok(Routed::Record {
            fields,
            reason: format!(
                "merge_group destroyed ({reason}) of {} in {repo}: recorded; no verdict changes",
                group.head_ref
            ),
        });
    }
    Ok(Routed::Work(vec![Work::MergeGroup {
        repo,
        number: PrNumber::new(number),
    }]))
}

fn inbox(e: &IssueEvent, cx: &RouteContext<'_>) -> Result<Routed, String> {
    let repo = RepoName::parse(&e.repository.full_name)
        .map_err(|error| format!("repository '{}': {error}", e.repository.full_name))?;
    let governance = cx.config.projects().governance_repo();
    if &repo != governance {
        return Ok(ignored(format!(
            "{repo}#{}: not the governance repository {governance}",
            e.issue.number
        )));
    }
    if e.issue.pull_request.is_some() {
        return Ok(ignored(format!(
            "{repo}#{}: a pull request, not an inbox issue",
            e.issue.number
        )));
    }
    if !e.issue.labels.iter().any(|l| l.name == PENDING_OWNER) {
        return Ok(ignored(format!(
            "{repo}#{}: not a {PENDING_OWNER} inbox issue",
            e.issue.number
        )));
    }
    Ok(Routed::Work(vec![Work::Resync]))
}
