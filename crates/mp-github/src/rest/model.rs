//! GitHub's JSON as the adapter reads it (only the fields it needs; unknown fields are
//! ignored, `null` is tolerated where GitHub may send it), and the conversion into the
//! core's values.

use base64::Engine as _;
use mp_core::context::{
    CheckConclusion, CheckRun, CheckStatus, Comment, CommentId, CommitContext, FileChange,
    FileStatus, LabelAction, LabelEvent, PrState, Reaction, ReactionKind, RefUpdate, RefUpdateKind,
};
use mp_core::ids::{CommitSha, Login, PrNumber, RepoName, Timestamp};
use mp_core::port::{FileContent, GitHubError, Issue, IssueState, PullRequest, Tree, TreeEntry};
use serde::Deserialize;
use serde::de::IgnoredAny;

/// A user object (`{login, id, type}`); `{}` and a missing login are tolerated.
#[derive(Debug, Deserialize)]
pub(crate) struct UserJson {
    #[serde(default)]
    pub(crate) login: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct LabelJson {
    pub(crate) name: String,
}

#[derive(Debug, Deserialize)]
pub(crate) struct RefJson {
    #[serde(rename = "ref")]
    pub(crate) name: String,
    pub(crate) sha: String,
    /// The repository of the branch; `null` once a fork is deleted.
    #[serde(default)]
    pub(crate) repo: Option<RefRepoJson>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct RefRepoJson {
    pub(crate) full_name: String,
}

/// One entry of `GET /repos/{o}/{r}/activity`.
#[derive(Debug, Deserialize)]
pub(crate) struct ActivityJson {
    /// The full ref (`refs/heads/<branch>`), which a read without `ref` needs.
    #[serde(default, rename = "ref")]
    pub(crate) git_ref: Option<String>,
    #[serde(default)]
    pub(crate) before: Option<String>,
    #[serde(default)]
    pub(crate) after: Option<String>,
    #[serde(default)]
    pub(crate) timestamp: Option<String>,
    pub(crate) activity_type: String,
    #[serde(default)]
    pub(crate) actor: Option<UserJson>,
}

/// A pull request, as listed or as read alone (the single read adds `merged`,
/// `merged_by`).
#[derive(Debug, Deserialize)]
pub(crate) struct PullJson {
    pub(crate) number: u64,
    #[serde(default)]
    pub(crate) title: Option<String>,
    #[serde(default)]
    pub(crate) body: Option<String>,
    pub(crate) state: String,
    #[serde(default)]
    pub(crate) merged_at: Option<String>,
    #[serde(default)]
    pub(crate) merged: Option<bool>,
    #[serde(default)]
    pub(crate) merged_by: Option<UserJson>,
    #[serde(default)]
    pub(crate) merge_commit_sha: Option<String>,
    #[serde(default)]
    pub(crate) user: Option<UserJson>,
    #[serde(default)]
    pub(crate) labels: Vec<LabelJson>,
    pub(crate) head: RefJson,
    pub(crate) base: RefJson,
    #[serde(default)]
    pub(crate) created_at: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct GitActorJson {
    #[serde(default)]
    pub(crate) date: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct CommitDetailJson {
    pub(crate) message: String,
    #[serde(default)]
    pub(crate) committer: Option<GitActorJson>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct ShaJson {
    pub(crate) sha: String,
}

/// A commit (`GET /commits/{sha}`, list items of `/commits` and `/pulls/{n}/commits`).
#[derive(Debug, Deserialize)]
pub(crate) struct CommitJson {
    pub(crate) sha: String,
    pub(crate) commit: CommitDetailJson,
    #[serde(default)]
    pub(crate) author: Option<UserJson>,
    #[serde(default)]
    pub(crate) committer: Option<UserJson>,
    #[serde(default)]
    pub(crate) parents: Vec<ShaJson>,
}

/// A comparison of two commits (`GET /compare/{base}...{head}`), the parts mp reads.
#[derive(Debug, Deserialize)]
pub(crate) struct ComparisonJson {
    /// `ahead`, `behind`, `diverged` or `identical`.
    pub(crate) status: String,
    /// Commits reachable from the head and not from the base.
    pub(crate) total_commits: usize,
    /// One page of those commits, oldest first.
    #[serde(default)]
    pub(crate) commits: Vec<CommitJson>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct FileJson {
    pub(crate) filename: String,
    pub(crate) status: String,
    #[serde(default)]
    pub(crate) additions: u64,
    #[serde(default)]
    pub(crate) deletions: u64,
    #[serde(default)]
    pub(crate) previous_filename: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct AppJson {
    #[serde(default)]
    pub(crate) slug: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct OutputJson {
    #[serde(default)]
    pub(crate) summary: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct CheckRunJson {
    #[serde(default)]
    pub(crate) id: Option<u64>,
    pub(crate) name: String,
    pub(crate) status: String,
    #[serde(default)]
    pub(crate) conclusion: Option<String>,
    #[serde(default)]
    pub(crate) started_at: Option<String>,
    #[serde(default)]
    pub(crate) completed_at: Option<String>,
    #[serde(default)]
    pub(crate) app: Option<AppJson>,
    #[serde(default)]
    pub(crate) output: Option<OutputJson>,
}

/// One page of `GET /commits/{sha}/check-runs`.
#[derive(Debug, Deserialize)]
pub(crate) struct CheckRunsPage {
    #[serde(default)]
    pub(crate) check_runs: Vec<CheckRunJson>,
}

/// A page of `GET /actions/runs`.
#[derive(Debug, Deserialize)]
pub(crate) struct WorkflowRunsPage {
    #[serde(default)]
    pub(crate) workflow_runs: Vec<WorkflowRunJson>,
}

/// A workflow run: what C2 binds a job to (decisions/0047).
#[derive(Debug, Deserialize)]
pub(crate) struct WorkflowRunJson {
    pub(crate) id: u64,
    pub(crate) path: String,
    pub(crate) head_sha: String,
    pub(crate) event: String,
}

/// A page of `GET /actions/runs/{run_id}/jobs`.
#[derive(Debug, Deserialize)]
pub(crate) struct WorkflowJobsPage {
    #[serde(default)]
    pub(crate) jobs: Vec<WorkflowJobJson>,
}

/// A job of a workflow run; `check_run_url` names the check run it publishes.
#[derive(Debug, Deserialize)]
pub(crate) struct WorkflowJobJson {
    pub(crate) check_run_url: String,
}

/// The id of the check run `check_run_url` names (its last path segment); `None` for a URL
/// that names none.
pub(crate) fn check_run_id_of(check_run_url: &str) -> Option<u64> {
    let (before, id) = check_run_url.trim_end_matches('/').rsplit_once('/')?;
    before.ends_with("/check-runs").then_some(())?;
    id.parse().ok()
}

/// One timeline event; only `labeled` / `unlabeled` are read, the rest is skipped.
#[derive(Debug, Deserialize)]
pub(crate) struct TimelineEventJson {
    #[serde(default)]
    pub(crate) event: Option<String>,
    #[serde(default)]
    pub(crate) actor: Option<UserJson>,
    #[serde(default)]
    pub(crate) created_at: Option<String>,
    #[serde(default)]
    pub(crate) label: Option<LabelJson>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct CommentJson {
    pub(crate) id: u64,
    #[serde(default)]
    pub(crate) body: Option<String>,
    #[serde(default)]
    pub(crate) user: Option<UserJson>,
    #[serde(default)]
    pub(crate) created_at: Option<String>,
    #[serde(default)]
    pub(crate) updated_at: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct ReactionJson {
    pub(crate) content: String,
    #[serde(default)]
    pub(crate) user: Option<UserJson>,
    #[serde(default)]
    pub(crate) created_at: Option<String>,
}

/// `GET /branches/{branch}`.
#[derive(Debug, Deserialize)]
pub(crate) struct BranchJson {
    pub(crate) commit: ShaJson,
}

/// One of an issue's labels: GitHub's description gives either a label object (whose
/// `name` it does not require) or the label's name as a plain string.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum IssueLabelJson {
    Name(String),
    Object {
        #[serde(default)]
        name: Option<String>,
    },
}

impl IssueLabelJson {
    fn into_name(self) -> Option<String> {
        match self {
            Self::Name(name) => Some(name),
            Self::Object { name } => name,
        }
    }
}

#[derive(Debug, Deserialize)]
pub(crate) struct IssueJson {
    pub(crate) number: u64,
    #[serde(default)]
    pub(crate) title: Option<String>,
    #[serde(default)]
    pub(crate) body: Option<String>,
    pub(crate) state: String,
    #[serde(default)]
    pub(crate) labels: Vec<IssueLabelJson>,
    #[serde(default)]
    pub(crate) user: Option<UserJson>,
    #[serde(default)]
    pub(crate) created_at: Option<String>,
    /// Present (whatever its value) on pull requests only.
    #[serde(default)]
    pub(crate) pull_request: Option<IgnoredAny>,
}

/// `PUT /pulls/{n}/merge`, 200.
#[derive(Debug, Deserialize)]
pub(crate) struct MergeJson {
    pub(crate) sha: String,
}

/// `GET /contents/{path}`.
#[derive(Debug, Deserialize)]
pub(crate) struct ContentJson {
    #[serde(rename = "type", default)]
    pub(crate) kind: Option<String>,
    pub(crate) sha: String,
    #[serde(default)]
    pub(crate) encoding: Option<String>,
    #[serde(default)]
    pub(crate) content: Option<String>,
}

/// `PUT /contents/{path}`, 200/201.
#[derive(Debug, Deserialize)]
pub(crate) struct PutContentJson {
    pub(crate) content: ShaJson,
}

#[derive(Debug, Deserialize)]
pub(crate) struct TreeItemJson {
    pub(crate) path: String,
    #[serde(rename = "type")]
    pub(crate) kind: String,
    pub(crate) sha: String,
}

/// `GET /git/trees/{ref}`.
#[derive(Debug, Deserialize)]
pub(crate) struct TreeJson {
    #[serde(default)]
    pub(crate) truncated: bool,
    #[serde(default)]
    pub(crate) tree: Vec<TreeItemJson>,
}

/// `POST /pulls`, 201.
#[derive(Debug, Deserialize)]
pub(crate) struct NumberJson {
    pub(crate) number: u64,
}

/// The converter's context: the route named in [`GitHubError::Malformed`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Convert {
    pub(crate) route: &'static str,
}

impl Convert {
    fn malformed(self, message: String) -> GitHubError {
        GitHubError::Malformed {
            route: self.route.to_owned(),
            message,
        }
    }

    pub(crate) fn sha(self, text: &str) -> Result<CommitSha, GitHubError> {
        CommitSha::parse(text).map_err(|err| self.malformed(err.to_string()))
    }

    /// A login that must be there.
    fn login(self, user: Option<&UserJson>, field: &str) -> Result<Login, GitHubError> {
        let text = user
            .and_then(|u| u.login.as_deref())
            .ok_or_else(|| self.malformed(format!("{field} has no login")))?;
        Login::parse(text).map_err(|err| self.malformed(err.to_string()))
    }

    pub(crate) fn pull(self, repo: &RepoName, json: PullJson) -> Result<PullRequest, GitHubError> {
        let merged = json.merged.unwrap_or(json.merged_at.is_some());
        Ok(PullRequest {
            repo: repo.clone(),
            number: PrNumber::new(json.number),
            title: json.title.unwrap_or_default(),
            body: json.body.unwrap_or_default(),
            head_sha: self.sha(&json.head.sha)?,
            head_repo: json
                .head
                .repo
                .as_ref()
                .and_then(|r| RepoName::parse(&r.full_name).ok()),
            head_ref: json.head.name,
            base_sha: self.sha(&json.base.sha)?,
            base_ref: json.base.name,
            state: self.pr_state(&json.state)?,
            merged,
            merge_commit: match json.merge_commit_sha.as_deref() {
                // GitHub names a test merge commit for open pull requests too.
                Some(sha) if merged => Some(self.sha(sha)?),
                _ => None,
            },
            labels: label_names(json.labels),
            // A deleted account comes as `null`: GitHub's ghost, never trusted.
            author: optional_login(json.user.as_ref()).unwrap_or_else(Login::ghost),
            created_at: timestamp(json.created_at.as_deref()),
        })
    }

    fn pr_state(self, state: &str) -> Result<PrState, GitHubError> {
        match state {
            "open" => Ok(PrState::Open),
            "closed" => Ok(PrState::Closed),
            other => Err(self.malformed(format!("unknown state {other:?}"))),
        }
    }

    fn issue_state(self, state: &str) -> Result<IssueState, GitHubError> {
        Ok(match self.pr_state(state)? {
            PrState::Open => IssueState::Open,
            PrState::Closed => IssueState::Closed,
        })
    }

    pub(crate) fn commit(self, json: CommitJson) -> Result<CommitContext, GitHubError> {
        let mut context = CommitContext::from_message(self.sha(&json.sha)?, &json.commit.message);
        context.author_login = optional_login(json.author.as_ref());
        context.committer_login = optional_login(json.committer.as_ref());
        context.parents = json
            .parents
            .iter()
            .map(|p| self.sha(&p.sha))
            .collect::<Result<_, _>>()?;
        context.committed_at = timestamp(
            json.commit
                .committer
                .as_ref()
                .and_then(|c| c.date.as_deref()),
        );
        Ok(context)
    }

    pub(crate) fn comment(self, json: CommentJson) -> Comment {
        Comment {
            id: CommentId::new(json.id),
            author: optional_login(json.user.as_ref()),
            body: json.body.unwrap_or_default(),
            created_at: timestamp(json.created_at.as_deref()),
            updated_at: timestamp(json.updated_at.as_deref()),
        }
    }

    /// One activity-log entry. GitHub writes 40 zeros for "no commit" (before a creation,
    /// after a deletion).
    pub(crate) fn activity(self, json: ActivityJson) -> Result<RefUpdate, GitHubError> {
        let tip = |text: Option<&str>| -> Result<Option<CommitSha>, GitHubError> {
            match text {
                None => Ok(None),
                Some(text) if text.bytes().all(|b| b == b'0') => Ok(None),
                Some(text) => self.sha(text).map(Some),
            }
        };
        Ok(RefUpdate {
            kind: RefUpdateKind::from_github(&json.activity_type),
            before: tip(json.before.as_deref())?,
            after: tip(json.after.as_deref())?,
            at: timestamp(json.timestamp.as_deref()),
            actor: optional_login(json.actor.as_ref()),
        })
    }

    /// A reaction; `None` for one whose user is `null` (a deleted account): nobody's vote,
    /// and not a reason to lose the others.
    pub(crate) fn reaction(self, json: ReactionJson) -> Result<Option<Reaction>, GitHubError> {
        let Some(user) = json.user.as_ref() else {
            return Ok(None);
        };
        Ok(Some(Reaction {
            kind: ReactionKind::from_github(&json.content),
            user: self.login(Some(user), "reaction user")?,
            created_at: timestamp(json.created_at.as_deref()),
        }))
    }

    pub(crate) fn issue(self, repo: &RepoName, json: IssueJson) -> Result<Issue, GitHubError> {
        Ok(Issue {
            repo: repo.clone(),
            number: PrNumber::new(json.number),
            title: json.title.unwrap_or_default(),
            body: json.body.unwrap_or_default(),
            state: self.issue_state(&json.state)?,
            labels: json
                .labels
                .into_iter()
                .filter_map(IssueLabelJson::into_name)
                .collect(),
            author: optional_login(json.user.as_ref()),
            created_at: timestamp(json.created_at.as_deref()),
            is_pull_request: json.pull_request.is_some(),
        })
    }

    pub(crate) fn content(self, json: ContentJson) -> Result<FileContent, GitHubError> {
        if let Some(kind) = json.kind.as_deref()
            && kind != "file"
        {
            return Err(self.malformed(format!("expected a file, found a {kind}")));
        }
        let encoded = json.content.unwrap_or_default();
        let bytes = match json.encoding.as_deref() {
            Some("base64") | None => {
                let compact: String = encoded.split_ascii_whitespace().collect();
                base64::engine::general_purpose::STANDARD
                    .decode(compact.as_bytes())
                    .map_err(|err| self.malformed(format!("content is not base64: {err}")))?
            }
            Some("utf-8") => encoded.into_bytes(),
            Some(other) => {
                // `none`: the file is too large for this endpoint (over 1 MB).
                return Err(self.malformed(format!("content encoding {other:?}")));
            }
        };
        Ok(FileContent {
            text: String::from_utf8_lossy(&bytes).into_owned(),
            blob_sha: json.sha,
        })
    }
}

/// A file change; GitHub statuses beyond added/removed/renamed read as modified.
pub(crate) fn file_change(json: FileJson) -> FileChange {
    FileChange {
        path: json.filename,
        status: FileStatus::from_github(&json.status),
        additions: json.additions,
        deletions: json.deletions,
        previous_filename: json.previous_filename,
    }
}

pub(crate) fn check_run(json: CheckRunJson) -> CheckRun {
    CheckRun {
        id: json.id,
        name: json.name,
        status: CheckStatus::from_github(&json.status),
        conclusion: json.conclusion.as_deref().map(CheckConclusion::from_github),
        started_at: timestamp(json.started_at.as_deref()),
        completed_at: timestamp(json.completed_at.as_deref()),
        app_slug: json.app.and_then(|a| a.slug),
        output_summary: json.output.and_then(|o| o.summary),
    }
}

/// A `labeled` / `unlabeled` event, or a change of the base branch (`base_ref_changed`,
/// `automatic_base_change_succeeded`, which name no label: the label is empty); `None` for
/// every other event.
pub(crate) fn label_event(json: TimelineEventJson) -> Option<LabelEvent> {
    let action = match json.event.as_deref()? {
        "labeled" => LabelAction::Labeled,
        "unlabeled" => LabelAction::Unlabeled,
        "base_ref_changed" | "automatic_base_change_succeeded" => LabelAction::BaseChanged,
        _ => return None,
    };
    let label = match action {
        LabelAction::BaseChanged => String::new(),
        LabelAction::Labeled | LabelAction::Unlabeled => json.label?.name,
    };
    Some(LabelEvent {
        action,
        label,
        actor: optional_login(json.actor.as_ref()),
        at: timestamp(json.created_at.as_deref()),
    })
}

/// The blobs of a tree listing, in path order.
pub(crate) fn tree(json: TreeJson) -> Tree {
    let mut entries: Vec<TreeEntry> = json
        .tree
        .into_iter()
        .filter(|item| item.kind == "blob")
        .map(|item| TreeEntry {
            path: item.path,
            blob_sha: item.sha,
        })
        .collect();
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    Tree {
        entries,
        truncated: json.truncated,
    }
}

fn label_names(labels: Vec<LabelJson>) -> Vec<String> {
    labels.into_iter().map(|l| l.name).collect()
}

/// A login GitHub may omit (an unlinked commit author, a deleted account); one that does
/// not parse reads as unknown.
pub(crate) fn optional_login(user: Option<&UserJson>) -> Option<Login> {
    user.and_then(|u| u.login.as_deref())
        .and_then(|l| Login::parse(l).ok())
}

fn timestamp(text: Option<&str>) -> Option<Timestamp> {
    text.and_then(|t| Timestamp::parse(t).ok())
}
