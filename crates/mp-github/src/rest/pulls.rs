//! `impl GitHub for RestGitHub`: pull requests, their commits, files, checks and timeline,
//! comments, labels, issues, merges and branch updates over REST.

use mp_core::context::{
    CheckRun, Comment, CommentId, CommitContext, FileChange, LabelEvent, LabelRecord, Reaction,
    RefUpdate, WorkflowJob,
};
use mp_core::ids::{CommitSha, Login, PrNumber, RepoName};
use mp_core::port::{
    GitHub, GitHubError, Issue, IssueQuery, IssueState, MergeGroupRef, MergeMethod, MergeRequest,
    NewCheckRun, NewIssue, PullRequest, RepoActivity, UpdateBranchOutcome,
};
use reqwest::{Method, Url};
use serde_json::json;

use super::RestGitHub;
use super::model::{
    self, ActivityJson, BranchJson, CheckRunsPage, CommentJson, CommitJson, Convert, FileJson,
    IssueJson, MergeJson, PullJson, ReactionJson, TimelineEventJson, WorkflowJobsPage,
    WorkflowRunsPage,
};
use super::transport::Request;
use crate::Endpoint;
use crate::PULL_COMMITS_CAP;

/// `owner/repo#N`.
pub(crate) fn reference(repo: &RepoName, number: PrNumber) -> String {
    format!("{repo}#{number}")
}

/// `url` with `per_page=100` and the given query pairs.
pub(crate) fn listing(mut url: Url, pairs: &[(&str, &str)]) -> Url {
    {
        let mut query = url.query_pairs_mut();
        for (name, value) in pairs {
            query.append_pair(name, value);
        }
        query.append_pair("per_page", "100");
    }
    url
}

impl RestGitHub {
    /// Sends a write and returns its answer, whatever its status.
    pub(crate) async fn write(
        &self,
        method: Method,
        endpoint: Endpoint,
        url: Url,
        repo: &RepoName,
        body: Option<serde_json::Value>,
    ) -> Result<super::transport::Answer, GitHubError> {
        let request = Request::write(method, endpoint.route(), url, repo, body);
        self.transport.send(&request).await
    }

    /// Every page of a list under one pull request or issue,
    /// `/{pulls|issues}/{n}/{list}`, each page turned into items by `items`.
    pub(crate) async fn thread_list<P, T>(
        &self,
        endpoint: Endpoint,
        repo: &RepoName,
        number: PrNumber,
        [thread, list]: [&str; 2],
        items: impl Fn(P) -> Vec<T>,
    ) -> Result<Vec<T>, GitHubError>
    where
        P: serde::de::DeserializeOwned,
    {
        let n = number.to_string();
        let url = listing(self.transport.repo_url(repo, &[thread, &n, list]), &[]);
        let noun = if thread == "pulls" {
            "pull request"
        } else {
            "issue"
        };
        let what = || format!("{noun} {}", reference(repo, number));
        self.transport
            .get_pages(endpoint.route(), url, repo, &what, None, items)
            .await
    }

    /// Reads one JSON object.
    pub(crate) async fn read<T: serde::de::DeserializeOwned>(
        &self,
        endpoint: Endpoint,
        url: Url,
        repo: &RepoName,
        what: impl FnOnce() -> String,
    ) -> Result<T, GitHubError> {
        let request = Request::get(endpoint.route(), url, repo);
        self.transport.get_json(&request, what).await
    }

    pub(crate) fn convert(endpoint: Endpoint) -> Convert {
        Convert {
            route: endpoint.route(),
        }
    }
}

#[async_trait::async_trait]
impl GitHub for RestGitHub {
    async fn bot_login(&self) -> Result<Login, GitHubError> {
        let transport = &self.transport;
        self.bot
            .get_or_try_init(|| {
                transport
                    .auth()
                    .bot_login(transport.http(), transport.api_url())
            })
            .await
            .cloned()
    }

    fn rate_limit_remaining(&self) -> Option<u32> {
        self.transport.rate_limit_remaining()
    }

    fn graphql_remaining(&self) -> Option<u32> {
        self.transport.graphql_remaining()
    }

    async fn open_pulls(&self, repo: &RepoName) -> Result<Vec<PullRequest>, GitHubError> {
        let endpoint = Endpoint::ListPulls;
        let url = listing(
            self.transport.repo_url(repo, &["pulls"]),
            &[("state", "open"), ("sort", "created"), ("direction", "asc")],
        );
        let what = || format!("repository {repo}");
        let pulls: Vec<PullJson> = self
            .transport
            .get_pages(
                endpoint.route(),
                url,
                repo,
                &what,
                None,
                |page: Vec<PullJson>| page,
            )
            .await?;
        let convert = Self::convert(endpoint);
        pulls.into_iter().map(|p| convert.pull(repo, p)).collect()
    }

    async fn open_pulls_with_reads(
        &self,
        repo: &RepoName,
    ) -> Result<Vec<mp_core::port::ListedPull>, GitHubError> {
        match self.reads {
            super::ReadPath::Graphql => self.open_pulls_graphql(repo).await,
            _ => Ok(self
                .open_pulls(repo)
                .await?
                .into_iter()
                .map(|pull| mp_core::port::ListedPull {
                    pull,
                    reads: mp_core::port::PullReads::default(),
                })
                .collect()),
        }
    }

    async fn pull(&self, repo: &RepoName, number: PrNumber) -> Result<PullRequest, GitHubError> {
        let endpoint = Endpoint::GetPull;
        let url = self
            .transport
            .repo_url(repo, &["pulls", &number.to_string()]);
        let json: PullJson = self
            .read(endpoint, url, repo, || {
                format!("pull request {}", reference(repo, number))
            })
            .await?;
        Self::convert(endpoint).pull(repo, json)
    }

    async fn pull_commits(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<CommitContext>, GitHubError> {
        let endpoint = Endpoint::ListPullCommits;
        let commits = self
            .thread_list(
                endpoint,
                repo,
                number,
                ["pulls", "commits"],
                |page: Vec<CommitJson>| page,
            )
            .await?;
        if commits.len() >= PULL_COMMITS_CAP as usize {
            return Err(GitHubError::Truncated {
                what: format!("{} commits", reference(repo, number)),
                limit: PULL_COMMITS_CAP,
            });
        }
        let convert = Self::convert(endpoint);
        commits.into_iter().map(|c| convert.commit(c)).collect()
    }

    async fn pull_files(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<FileChange>, GitHubError> {
        self.thread_list(
            Endpoint::ListPullFiles,
            repo,
            number,
            ["pulls", "files"],
            |page: Vec<FileJson>| page.into_iter().map(model::file_change).collect(),
        )
        .await
    }

    async fn check_runs(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
    ) -> Result<Vec<CheckRun>, GitHubError> {
        let endpoint = Endpoint::ListCheckRuns;
        let url = listing(
            self.transport
                .repo_url(repo, &["commits", sha.as_str(), "check-runs"]),
            &[("filter", "all")],
        );
        let what = || format!("commit {sha} in {repo}");
        let mut runs = self
            .transport
            .get_pages(
                endpoint.route(),
                url,
                repo,
                &what,
                None,
                |page: CheckRunsPage| {
                    page.check_runs
                        .into_iter()
                        .map(|json| (json.id, model::check_run(json)))
                        .collect()
                },
            )
            .await?;
        // Creation order (GitHub's ids grow), which C2's "latest run" falls back on.
        runs.sort_by_key(|(id, _)| *id);
        Ok(runs.into_iter().map(|(_, run)| run).collect())
    }

    async fn workflow_jobs(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
    ) -> Result<Vec<WorkflowJob>, GitHubError> {
        let endpoint = Endpoint::ListWorkflowRuns;
        let url = listing(
            self.transport.repo_url(repo, &["actions", "runs"]),
            &[("head_sha", sha.as_str())],
        );
        let what = || format!("workflow runs of {sha} in {repo}");
        let runs = self
            .transport
            .get_pages(
                endpoint.route(),
                url,
                repo,
                &what,
                None,
                |page: WorkflowRunsPage| page.workflow_runs,
            )
            .await?;
        let mut jobs = Vec::new();
        for run in runs {
            let Ok(head_sha) = CommitSha::parse(&run.head_sha) else {
                return Err(GitHubError::Malformed {
                    route: endpoint.route().to_owned(),
                    message: format!("workflow run {} has head_sha `{}`", run.id, run.head_sha),
                });
            };
            let endpoint = Endpoint::ListWorkflowRunJobs;
            let run_id = run.id.to_string();
            let url = listing(
                self.transport
                    .repo_url(repo, &["actions", "runs", &run_id, "jobs"]),
                &[("filter", "all")],
            );
            let what = || format!("jobs of workflow run {run_id} in {repo}");
            let urls = self
                .transport
                .get_pages(
                    endpoint.route(),
                    url,
                    repo,
                    &what,
                    None,
                    |page: WorkflowJobsPage| {
                        page.jobs.into_iter().map(|job| job.check_run_url).collect()
                    },
                )
                .await?;
            for check_run_url in urls {
                let Some(check_run_id) = model::check_run_id_of(&check_run_url) else {
                    return Err(GitHubError::Malformed {
                        route: endpoint.route().to_owned(),
                        message: format!(
                            "a job's check_run_url `{check_run_url}` names no check run"
                        ),
                    });
                };
                jobs.push(WorkflowJob {
                    check_run_id,
                    run_id: run.id,
                    workflow_path: run.path.clone(),
                    head_sha: head_sha.clone(),
                    event: run.event.clone(),
                });
            }
        }
        Ok(jobs)
    }

    async fn label_events(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<LabelEvent>, GitHubError> {
        self.thread_list(
            Endpoint::ListTimeline,
            repo,
            number,
            ["issues", "timeline"],
            |page: Vec<TimelineEventJson>| {
                page.into_iter().filter_map(model::label_event).collect()
            },
        )
        .await
    }

    async fn label_records(
        &self,
        repo: &RepoName,
        names: &[String],
    ) -> Result<Vec<LabelRecord>, GitHubError> {
        // GraphQL in both read paths: REST's label object carries no times.
        self.label_records_graphql(repo, names).await
    }

    async fn head_ref_updates(
        &self,
        repo: &RepoName,
        head_ref: &str,
    ) -> Result<Vec<RefUpdate>, GitHubError> {
        // Nothing to stop at: every page.
        self.branch_updates_until(repo, head_ref, &[]).await
    }

    async fn repo_activity(
        &self,
        repo: &RepoName,
        max_pages: usize,
    ) -> Result<RepoActivity, GitHubError> {
        let endpoint = Endpoint::ListActivity;
        // No `ref`: every branch's entries, newest first (GitHub's default direction).
        let url = listing(self.transport.repo_url(repo, &["activity"]), &[]);
        let what = || format!("activity of {repo}");
        let convert = Self::convert(endpoint);
        let (entries, mut complete) = self
            .transport
            .get_pages_capped(
                endpoint.route(),
                url,
                repo,
                &what,
                |page: Vec<ActivityJson>| {
                    page.into_iter()
                        .map(|mut entry| {
                            let git_ref = entry.git_ref.take();
                            (git_ref, convert.activity(entry))
                        })
                        .collect()
                },
                max_pages,
            )
            .await?;
        let mut log = Vec::with_capacity(entries.len());
        for (git_ref, update) in entries {
            match git_ref {
                Some(git_ref) if git_ref.starts_with("refs/") => log.push((git_ref, update?)),
                // An entry naming no full ref cannot be attributed to a branch: the log
                // then answers for none, and each branch is read on its own.
                _ => complete = false,
            }
        }
        Ok(RepoActivity {
            entries: log,
            complete,
        })
    }

    async fn branch_updates_until(
        &self,
        repo: &RepoName,
        branch: &str,
        until: &[CommitSha],
    ) -> Result<Vec<RefUpdate>, GitHubError> {
        let endpoint = Endpoint::ListActivity;
        let full_ref = format!("refs/heads/{branch}");
        let url = listing(
            self.transport.repo_url(repo, &["activity"]),
            &[("ref", full_ref.as_str())],
        );
        let what = || format!("activity of {full_ref} in {repo}");
        let convert = Self::convert(endpoint);
        // Pages run newest first: once every tip of `until` shows, older pages add nothing
        // the supervisor reads. An unreadable entry stops nothing: it fails below.
        let entries = self
            .transport
            .get_pages_until(
                endpoint.route(),
                url,
                repo,
                &what,
                |page: Vec<ActivityJson>| {
                    page.into_iter()
                        .map(|entry| convert.activity(entry))
                        .collect()
                },
                |found: &[Result<RefUpdate, GitHubError>]| {
                    !until.is_empty()
                        && until.iter().all(|tip| {
                            found.iter().any(|entry| {
                                entry
                                    .as_ref()
                                    .is_ok_and(|update| update.after.as_ref() == Some(tip))
                            })
                        })
                },
            )
            .await?;
        entries.into_iter().collect()
    }

    async fn comments(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<Comment>, GitHubError> {
        let endpoint = Endpoint::ListComments;
        let convert = Self::convert(endpoint);
        self.thread_list(
            endpoint,
            repo,
            number,
            ["issues", "comments"],
            |page: Vec<CommentJson>| page.into_iter().map(|c| convert.comment(c)).collect(),
        )
        .await
    }

    async fn reactions(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<Reaction>, GitHubError> {
        let endpoint = Endpoint::ListReactions;
        let reactions = self
            .thread_list(
                endpoint,
                repo,
                number,
                ["issues", "reactions"],
                |page: Vec<ReactionJson>| page,
            )
            .await?;
        let convert = Self::convert(endpoint);
        let converted: Vec<Option<Reaction>> = reactions
            .into_iter()
            .map(|r| convert.reaction(r))
            .collect::<Result<_, _>>()?;
        Ok(converted.into_iter().flatten().collect())
    }

    async fn branch_head(&self, repo: &RepoName, branch: &str) -> Result<CommitSha, GitHubError> {
        let endpoint = Endpoint::GetBranch;
        let mut segments = vec!["branches"];
        segments.extend(branch.split('/'));
        let url = self.transport.repo_url(repo, &segments);
        let json: BranchJson = self
            .read(endpoint, url, repo, || format!("branch {branch} of {repo}"))
            .await?;
        Self::convert(endpoint).sha(&json.commit.sha)
    }

    async fn default_branches(
        &self,
        repos: &[RepoName],
    ) -> Result<std::collections::BTreeMap<RepoName, String>, GitHubError> {
        // One query for them all on the GraphQL path; one REST read each otherwise, which
        // the ETag cache makes free on warm ticks (decisions/0075).
        if self.reads != super::ReadPath::Graphql || repos.len() < 2 {
            return Ok(std::collections::BTreeMap::new());
        }
        self.default_branches_graphql(repos).await
    }

    async fn default_branch(&self, repo: &RepoName) -> Result<String, GitHubError> {
        #[derive(serde::Deserialize)]
        struct RepoJson {
            default_branch: String,
        }
        let endpoint = Endpoint::GetRepo;
        let url = self.transport.repo_url(repo, &[]);
        let json: RepoJson = self
            .read(endpoint, url, repo, || format!("repository {repo}"))
            .await?;
        Ok(json.default_branch)
    }

    async fn branch_rules(
        &self,
        repo: &RepoName,
        branch: &str,
    ) -> Result<Vec<String>, GitHubError> {
        #[derive(serde::Deserialize)]
        struct RuleJson {
            #[serde(rename = "type")]
            kind: String,
        }
        let endpoint = Endpoint::ListBranchRules;
        let url = self.transport.url(
            ["repos", repo.owner(), repo.name(), "rules", "branches"]
                .into_iter()
                .chain(branch.split('/')),
        );
        let what = || format!("the rules of {repo}@{branch}");
        let mut rules: Vec<String> = self
            .transport
            .get_pages(
                endpoint.route(),
                listing(url, &[]),
                repo,
                &what,
                None,
                |page: Vec<RuleJson>| page.into_iter().map(|rule| rule.kind).collect(),
            )
            .await?;
        rules.sort();
        rules.dedup();
        Ok(rules)
    }

    async fn merge_queue(
        &self,
        repo: &RepoName,
        branch: &str,
    ) -> Result<Option<Vec<mp_core::port::QueueEntry>>, GitHubError> {
        self.merge_queue_graphql(repo, branch).await
    }

    async fn queue_entry(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Option<mp_core::port::QueueEntry>, GitHubError> {
        self.queue_entry_graphql(repo, number).await
    }

    async fn enqueue_pull(
        &self,
        repo: &RepoName,
        number: PrNumber,
        expected_head: &CommitSha,
    ) -> Result<mp_core::port::QueueEntry, GitHubError> {
        self.enqueue_graphql(repo, number, expected_head).await
    }

    async fn dequeue_pull(&self, repo: &RepoName, number: PrNumber) -> Result<(), GitHubError> {
        self.dequeue_graphql(repo, number).await
    }

    async fn last_queue_removal(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Option<mp_core::port::QueueRemoval>, GitHubError> {
        self.last_queue_removal_graphql(repo, number).await
    }

    async fn merge_groups(
        &self,
        repo: &RepoName,
        base: &str,
    ) -> Result<Vec<MergeGroupRef>, GitHubError> {
        #[derive(serde::Deserialize)]
        struct RefJson {
            #[serde(rename = "ref")]
            name: String,
            object: RefObject,
        }
        #[derive(serde::Deserialize)]
        struct RefObject {
            sha: String,
        }
        let endpoint = Endpoint::ListMatchingRefs;
        let prefix = mp_core::github_queue::merge_group_prefix(base);
        let mut segments = vec!["git", "matching-refs", "heads"];
        // GitHub matches by prefix; the last segment goes without its slash and the
        // answer is filtered, so `main-next/...` never counts as `main/...`.
        segments.extend(prefix.trim_end_matches('/').split('/'));
        let url = self.transport.repo_url(repo, &segments);
        let refs: Vec<RefJson> = self
            .read(endpoint, url, repo, || format!("repository {repo}"))
            .await?;
        let convert = Self::convert(endpoint);
        let mut groups = Vec::new();
        for found in refs {
            let Some(branch) = found.name.strip_prefix("refs/heads/") else {
                continue;
            };
            if !branch.starts_with(&prefix) {
                continue;
            }
            groups.push(MergeGroupRef {
                branch: branch.to_owned(),
                head: convert.sha(&found.object.sha)?,
            });
        }
        Ok(groups)
    }

    async fn create_check_run(
        &self,
        repo: &RepoName,
        run: &NewCheckRun,
    ) -> Result<(), GitHubError> {
        let endpoint = Endpoint::CreateCheckRun;
        let url = self.transport.repo_url(repo, &["check-runs"]);
        let body = json!({
            "name": run.name,
            "head_sha": run.head_sha.as_str(),
            "status": "completed",
            "conclusion": run.conclusion.as_str(),
            "output": { "title": run.title, "summary": run.summary },
        });
        let answer = self
            .write(Method::POST, endpoint, url, repo, Some(body))
            .await?;
        if answer.is_success() {
            return Ok(());
        }
        Err(answer.refusal(|| format!("commit {} of {repo}", run.head_sha)))
    }

    async fn issues(&self, repo: &RepoName, query: &IssueQuery) -> Result<Vec<Issue>, GitHubError> {
        let endpoint = Endpoint::ListIssues;
        let state = match query.state {
            Some(IssueState::Open) => "open",
            Some(IssueState::Closed) => "closed",
            None => "all",
        };
        let labels = query.labels.join(",");
        let mut pairs = vec![("state", state)];
        if !labels.is_empty() {
            pairs.push(("labels", labels.as_str()));
        }
        let url = listing(self.transport.repo_url(repo, &["issues"]), &pairs);
        let what = || format!("repository {repo}");
        let issues: Vec<IssueJson> = self
            .transport
            .get_pages(
                endpoint.route(),
                url,
                repo,
                &what,
                None,
                |page: Vec<IssueJson>| page,
            )
            .await?;
        let convert = Self::convert(endpoint);
        issues.into_iter().map(|i| convert.issue(repo, i)).collect()
    }

    async fn create_comment(
        &self,
        repo: &RepoName,
        number: PrNumber,
        body: &str,
    ) -> Result<Comment, GitHubError> {
        let endpoint = Endpoint::CreateComment;
        let n = number.to_string();
        let url = self.transport.repo_url(repo, &["issues", &n, "comments"]);
        let answer = self
            .write(
                Method::POST,
                endpoint,
                url,
                repo,
                Some(json!({ "body": body })),
            )
            .await?;
        if !answer.is_success() {
            return Err(answer.refusal(|| format!("issue {}", reference(repo, number))));
        }
        Ok(Self::convert(endpoint).comment(answer.json::<CommentJson>()?))
    }

    async fn update_comment(
        &self,
        repo: &RepoName,
        id: CommentId,
        body: &str,
    ) -> Result<(), GitHubError> {
        let endpoint = Endpoint::UpdateComment;
        let url = self
            .transport
            .repo_url(repo, &["issues", "comments", &id.get().to_string()]);
        let answer = self
            .write(
                Method::PATCH,
                endpoint,
                url,
                repo,
                Some(json!({ "body": body })),
            )
            .await?;
        if !answer.is_success() {
            return Err(answer.refusal(|| format!("comment {} in {repo}", id.get())));
        }
        Ok(())
    }

    async fn add_labels(
        &self,
        repo: &RepoName,
        number: PrNumber,
        labels: &[String],
    ) -> Result<(), GitHubError> {
        let endpoint = Endpoint::AddLabels;
        let n = number.to_string();
        let url = self.transport.repo_url(repo, &["issues", &n, "labels"]);
        let answer = self
            .write(
                Method::POST,
                endpoint,
                url,
                repo,
                Some(json!({ "labels": labels })),
            )
            .await?;
        if !answer.is_success() {
            return Err(answer.refusal(|| format!("issue {}", reference(repo, number))));
        }
        Ok(())
    }

    async fn remove_label(
        &self,
        repo: &RepoName,
        number: PrNumber,
        label: &str,
    ) -> Result<(), GitHubError> {
        let endpoint = Endpoint::RemoveLabel;
        let n = number.to_string();
        let url = self
            .transport
            .repo_url(repo, &["issues", &n, "labels", label]);
        let answer = self
            .write(Method::DELETE, endpoint, url, repo, None)
            .await?;
        // 404: the label is not on the issue, which is what was asked.
        if answer.is_success() || answer.status == 404 {
            return Ok(());
        }
        Err(answer.refusal(|| format!("issue {}", reference(repo, number))))
    }

    async fn create_issue(&self, repo: &RepoName, issue: &NewIssue) -> Result<Issue, GitHubError> {
        let endpoint = Endpoint::CreateIssue;
        let url = self.transport.repo_url(repo, &["issues"]);
        let body = json!({ "title": issue.title, "body": issue.body, "labels": issue.labels });
        let answer = self
            .write(Method::POST, endpoint, url, repo, Some(body))
            .await?;
        if !answer.is_success() {
            return Err(answer.refusal(|| format!("repository {repo}")));
        }
        Self::convert(endpoint).issue(repo, answer.json::<IssueJson>()?)
    }

    async fn close_issue(&self, repo: &RepoName, number: PrNumber) -> Result<(), GitHubError> {
        let endpoint = Endpoint::UpdateIssue;
        let url = self
            .transport
            .repo_url(repo, &["issues", &number.to_string()]);
        let body = json!({ "state": "closed" });
        let answer = self
            .write(Method::PATCH, endpoint, url, repo, Some(body))
            .await?;
        if !answer.is_success() {
            return Err(answer.refusal(|| format!("issue {}", reference(repo, number))));
        }
        Ok(())
    }

    async fn merge_pull(
        &self,
        repo: &RepoName,
        number: PrNumber,
        request: &MergeRequest,
    ) -> Result<CommitSha, GitHubError> {
        let endpoint = Endpoint::MergePull;
        let n = number.to_string();
        let url = self.transport.repo_url(repo, &["pulls", &n, "merge"]);
        let method = match request.method {
            MergeMethod::Squash => "squash",
            other => {
                return Err(GitHubError::Unavailable {
                    route: endpoint.route().to_owned(),
                    message: format!("merge method {other:?} is not supported"),
                });
            }
        };
        let mut body = json!({ "sha": request.head_sha.as_str(), "merge_method": method });
        // The port's message is the squash commit's body (the identity block); GitHub
        // keeps its default title, `<pull request title> (#N)`.
        if let Some(message) = &request.commit_message {
            body["commit_message"] = json!(message);
        }
        let answer = self
            .write(Method::PUT, endpoint, url, repo, Some(body))
            .await?;
        let pr = reference(repo, number);
        match answer.status {
            200..=299 => Self::convert(endpoint).sha(&answer.json::<MergeJson>()?.sha),
            405 => Err(GitHubError::NotMergeable {
                pr,
                message: answer.message(),
            }),
            409 => Err(GitHubError::HeadMoved {
                pr,
                expected: request.head_sha.clone(),
            }),
            _ => Err(answer.refusal(|| format!("pull request {pr}"))),
        }
    }

    async fn update_branch(
        &self,
        repo: &RepoName,
        number: PrNumber,
        expected_head: &CommitSha,
    ) -> Result<UpdateBranchOutcome, GitHubError> {
        let endpoint = Endpoint::UpdateBranch;
        let n = number.to_string();
        let url = self
            .transport
            .repo_url(repo, &["pulls", &n, "update-branch"]);
        let body = json!({ "expected_head_sha": expected_head.as_str() });
        let answer = self
            .write(Method::PUT, endpoint, url, repo, Some(body))
            .await?;
        match answer.status {
            200..=299 => Ok(UpdateBranchOutcome::Accepted),
            422 => Ok(UpdateBranchOutcome::Refused {
                message: answer.message(),
            }),
            _ => Err(answer.refusal(|| format!("pull request {}", reference(repo, number)))),
        }
    }
}
