//! `impl GitHubHistory for RestGitHub`: commits, branch history, contents, trees, refs, the
//! pull requests of a commit, issue bodies, new pull requests and reverts over REST.

use base64::Engine as _;
use mp_core::context::CommitContext;
use mp_core::ids::{CommitSha, PrNumber, RepoName};
use mp_core::port::{
    CommitPull, Comparison, FileContent, FileWrite, GitHubError, GitHubHistory, NewPull, Tree,
};
use reqwest::Method;
use serde_json::json;

use super::RestGitHub;
use super::RevertMode;
use super::model::{
    self, CommitJson, ComparisonJson, ContentJson, NumberJson, PullJson, PutContentJson, ShaJson,
    TreeJson,
};
use super::pulls::{listing, reference};
use super::revert;
use super::transport::Answer;
use crate::Endpoint;

/// Commits per page of a comparison (GitHub's largest page).
const COMPARE_PAGE: usize = 100;

/// The route of the loopback server's revert extension (not a GitHub route).
pub(crate) const LOOPBACK_REVERT: &str = "POST /repos/{o}/{r}/_loopback/revert";

/// Whether a 422 says the thing to create exists already (GitHub puts the reason in
/// `message` or in `errors[].message`).
fn already_exists(answer: &Answer) -> bool {
    answer
        .message()
        .to_ascii_lowercase()
        .contains("already exist")
}

/// A path's segments, so each is percent-encoded on its own and the slashes stay.
fn path_segments(path: &str) -> impl Iterator<Item = &str> {
    path.split('/').filter(|s| !s.is_empty())
}

#[async_trait::async_trait]
impl GitHubHistory for RestGitHub {
    async fn commit(&self, repo: &RepoName, sha: &CommitSha) -> Result<CommitContext, GitHubError> {
        let endpoint = Endpoint::GetCommit;
        let url = self.transport.repo_url(repo, &["commits", sha.as_str()]);
        let json: CommitJson = self
            .read(endpoint, url, repo, || format!("commit {sha} in {repo}"))
            .await?;
        Self::convert(endpoint).commit(json)
    }

    async fn branch_commits(
        &self,
        repo: &RepoName,
        branch: &str,
        limit: usize,
    ) -> Result<Vec<CommitContext>, GitHubError> {
        let endpoint = Endpoint::ListCommits;
        if limit == 0 {
            return Ok(Vec::new());
        }
        let url = listing(
            self.transport.repo_url(repo, &["commits"]),
            &[("sha", branch)],
        );
        let what = || format!("branch {branch} of {repo}");
        let mut commits: Vec<CommitJson> = self
            .transport
            .get_pages(
                endpoint.route(),
                url,
                repo,
                &what,
                Some(limit),
                |page: Vec<CommitJson>| page,
            )
            .await?;
        commits.truncate(limit);
        let convert = Self::convert(endpoint);
        commits.into_iter().map(|c| convert.commit(c)).collect()
    }

    async fn file(
        &self,
        repo: &RepoName,
        path: &str,
        git_ref: &str,
    ) -> Result<Option<FileContent>, GitHubError> {
        let endpoint = Endpoint::GetContents;
        let mut url = self.transport.url(
            ["repos", repo.owner(), repo.name(), "contents"]
                .into_iter()
                .chain(path_segments(path)),
        );
        url.query_pairs_mut().append_pair("ref", git_ref);
        let request = super::transport::Request::get(endpoint.route(), url, repo);
        let answer = self.transport.send(&request).await?;
        // GitHub answers 404 alike for a missing file, ref or repository: all read as absent.
        if answer.status == 404 {
            return Ok(None);
        }
        if !answer.is_success() {
            return Err(answer.refusal(|| format!("{repo} {path} at {git_ref}")));
        }
        Self::convert(endpoint)
            .content(answer.json::<ContentJson>()?)
            .map(Some)
    }

    async fn put_file(&self, repo: &RepoName, write: &FileWrite) -> Result<String, GitHubError> {
        let endpoint = Endpoint::PutContents;
        let url = self.transport.url(
            ["repos", repo.owner(), repo.name(), "contents"]
                .into_iter()
                .chain(path_segments(&write.path)),
        );
        let content = base64::engine::general_purpose::STANDARD.encode(write.text.as_bytes());
        let mut body = json!({
            "message": write.message,
            "content": content,
            "branch": write.branch,
        });
        if let Some(sha) = &write.expected_blob_sha {
            body["sha"] = json!(sha);
        }
        let answer = self
            .write(Method::PUT, endpoint, url, repo, Some(body))
            .await?;
        match answer.status {
            200..=299 => Ok(answer.json::<PutContentJson>()?.content.sha),
            409 | 422 if is_blob_mismatch(answer.status, &answer.message()) => {
                Err(GitHubError::Conflict {
                    what: format!("{repo} {}", write.path),
                    message: answer.message(),
                })
            }
            // Any other 409/422 (a file too large, a protected branch, a validation
            // failure) is permanent: retrying with a fresh blob would not help.
            _ => Err(answer.refusal(|| format!("branch {} of {repo}", write.branch))),
        }
    }

    async fn tree(&self, repo: &RepoName, git_ref: &str) -> Result<Tree, GitHubError> {
        let endpoint = Endpoint::GetTree;
        let mut segments = vec!["git", "trees"];
        segments.extend(path_segments(git_ref));
        let mut url = self.transport.repo_url(repo, &segments);
        url.query_pairs_mut().append_pair("recursive", "1");
        let json: TreeJson = self
            .read(endpoint, url, repo, || format!("ref {git_ref} of {repo}"))
            .await?;
        Ok(model::tree(json))
    }

    async fn create_branch(
        &self,
        repo: &RepoName,
        branch: &str,
        sha: &CommitSha,
    ) -> Result<(), GitHubError> {
        let endpoint = Endpoint::CreateRef;
        let url = self.transport.repo_url(repo, &["git", "refs"]);
        let body = json!({ "ref": format!("refs/heads/{branch}"), "sha": sha.as_str() });
        let answer = self
            .write(Method::POST, endpoint, url, repo, Some(body))
            .await?;
        if answer.is_success() {
            return Ok(());
        }
        if answer.status == 422 && already_exists(&answer) {
            return Err(GitHubError::Conflict {
                what: format!("{repo} refs/heads/{branch}"),
                message: answer.message(),
            });
        }
        Err(answer.refusal(|| format!("repository {repo}")))
    }

    async fn update_branch_ref(
        &self,
        repo: &RepoName,
        branch: &str,
        sha: &CommitSha,
        force: bool,
    ) -> Result<(), GitHubError> {
        let endpoint = Endpoint::UpdateRef;
        let mut segments = vec!["git", "refs", "heads"];
        segments.extend(path_segments(branch));
        let url = self.transport.repo_url(repo, &segments);
        let body = json!({ "sha": sha.as_str(), "force": force });
        let answer = self
            .write(Method::PATCH, endpoint, url, repo, Some(body))
            .await?;
        if answer.is_success() {
            return Ok(());
        }
        let message = answer.message();
        let lower = message.to_ascii_lowercase();
        match answer.status {
            // GitHub names a missing branch ("Reference does not exist") and an unknown
            // commit ("Object does not exist") in a 422.
            422 if lower.contains("does not exist") => Err(GitHubError::NotFound {
                what: if lower.contains("reference") {
                    format!("branch {branch} of {repo}")
                } else {
                    format!("commit {sha} in {repo}")
                },
            }),
            422 if lower.contains("fast forward") || lower.contains("fast-forward") => {
                Err(GitHubError::Conflict {
                    what: format!("{repo} refs/heads/{branch}"),
                    message,
                })
            }
            _ => Err(answer.refusal(|| format!("branch {branch} of {repo}"))),
        }
    }

    async fn merge_into_branch(
        &self,
        repo: &RepoName,
        base: &str,
        head: &CommitSha,
        commit_message: &str,
    ) -> Result<Option<CommitSha>, GitHubError> {
        let endpoint = Endpoint::MergeBranch;
        let url = self.transport.repo_url(repo, &["merges"]);
        let body = json!({
            "base": base,
            "head": head.as_str(),
            "commit_message": commit_message,
        });
        let answer = self
            .write(Method::POST, endpoint, url, repo, Some(body))
            .await?;
        match answer.status {
            201 => {
                let sha = answer.json::<ShaJson>()?.sha;
                Self::convert(endpoint).sha(&sha).map(Some)
            }
            204 => Ok(None),
            409 => Err(GitHubError::Conflict {
                what: format!("{repo} merge of {} into {base}", head.short()),
                message: answer.message(),
            }),
            _ => Err(answer.refusal(|| format!("branch {base} or commit {head} in {repo}"))),
        }
    }

    async fn compare(
        &self,
        repo: &RepoName,
        base: &CommitSha,
        head: &CommitSha,
        limit: usize,
    ) -> Result<Comparison, GitHubError> {
        let endpoint = Endpoint::Compare;
        let basehead = format!("{base}...{head}");
        let convert = Self::convert(endpoint);
        let mut commits = Vec::new();
        let mut total = 0;
        let mut fast_forward = false;
        // GitHub pages the commits of a comparison with `page`, without a `Link` header to
        // follow: pages are read until the count it gives is reached.
        for page in 1.. {
            let mut url = self
                .transport
                .repo_url(repo, &["compare", basehead.as_str()]);
            url.query_pairs_mut()
                .append_pair("per_page", &COMPARE_PAGE.to_string())
                .append_pair("page", &page.to_string());
            let json: ComparisonJson = self
                .read(endpoint, url, repo, || {
                    format!("comparison {} of {repo}", basehead)
                })
                .await?;
            total = json.total_commits;
            fast_forward = matches!(json.status.as_str(), "ahead" | "identical");
            let listed = json.commits.len();
            for commit in json.commits {
                commits.push(convert.commit(commit)?);
            }
            if listed < COMPARE_PAGE || commits.len() >= total.min(limit) {
                break;
            }
        }
        commits.truncate(limit);
        Ok(Comparison {
            commits,
            total,
            fast_forward,
        })
    }

    async fn commit_pulls(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
    ) -> Result<Vec<CommitPull>, GitHubError> {
        let endpoint = Endpoint::ListCommitPulls;
        let url = listing(
            self.transport
                .repo_url(repo, &["commits", sha.as_str(), "pulls"]),
            &[],
        );
        let what = || format!("commit {sha} in {repo}");
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
        let mut found = Vec::with_capacity(pulls.len());
        for pull in pulls {
            let number = PrNumber::new(pull.number);
            let merged = pull.merged.unwrap_or(pull.merged_at.is_some());
            if !merged {
                found.push(CommitPull {
                    number,
                    merged_by: None,
                    merge_commit_sha: None,
                });
                continue;
            }
            // List items carry no `merged_by`: the single read does.
            let single = Endpoint::GetPull;
            let url = self
                .transport
                .repo_url(repo, &["pulls", &number.to_string()]);
            let full: PullJson = self
                .read(single, url, repo, || {
                    format!("pull request {}", reference(repo, number))
                })
                .await?;
            let merge_commit_sha = full
                .merge_commit_sha
                .as_deref()
                .or(pull.merge_commit_sha.as_deref())
                .map(|s| convert.sha(s))
                .transpose()?;
            found.push(CommitPull {
                number,
                merged_by: model::optional_login(full.merged_by.as_ref()),
                merge_commit_sha,
            });
        }
        found.sort_by_key(|p| p.number);
        Ok(found)
    }

    async fn update_issue_body(
        &self,
        repo: &RepoName,
        number: PrNumber,
        body: &str,
    ) -> Result<(), GitHubError> {
        let endpoint = Endpoint::UpdateIssue;
        let url = self
            .transport
            .repo_url(repo, &["issues", &number.to_string()]);
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
            return Err(answer.refusal(|| format!("issue {}", reference(repo, number))));
        }
        Ok(())
    }

    async fn create_pull(&self, repo: &RepoName, pull: &NewPull) -> Result<PrNumber, GitHubError> {
        let endpoint = Endpoint::CreatePull;
        let url = self.transport.repo_url(repo, &["pulls"]);
        let body = json!({
            "title": pull.title,
            "body": pull.body,
            "head": pull.head,
            "base": pull.base,
        });
        let answer = self
            .write(Method::POST, endpoint, url, repo, Some(body))
            .await?;
        if answer.is_success() {
            return Ok(PrNumber::new(answer.json::<NumberJson>()?.number));
        }
        if answer.status == 422 && already_exists(&answer) {
            return Err(GitHubError::Conflict {
                what: format!("{repo} {} -> {}", pull.head, pull.base),
                message: answer.message(),
            });
        }
        Err(answer.refusal(|| format!("repository {repo}")))
    }

    async fn push_revert(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
        branch: &str,
        message: &str,
    ) -> Result<CommitSha, GitHubError> {
        match &self.revert {
            RevertMode::LoopbackExtension => {
                let url = self.transport.repo_url(repo, &["_loopback", "revert"]);
                let body = json!({ "sha": sha.as_str(), "branch": branch, "message": message });
                let request = super::transport::Request::write(
                    Method::POST,
                    LOOPBACK_REVERT,
                    url,
                    repo,
                    Some(body),
                );
                let answer = self.transport.send(&request).await?;
                match answer.status {
                    200..=299 => {
                        let convert = model::Convert {
                            route: LOOPBACK_REVERT,
                        };
                        convert.sha(&answer.json::<ShaJson>()?.sha)
                    }
                    409 | 422 => Err(GitHubError::Conflict {
                        what: format!("{repo} revert of {} on {branch}", sha.short()),
                        message: answer.message(),
                    }),
                    _ => Err(answer.refusal(|| format!("commit {sha} in {repo}"))),
                }
            }
            RevertMode::Git { remote_template } => {
                let remote_url = remote_template.replace("{repo}", repo.as_str());
                let token = revert::installation_token(&self.transport, repo).await?;
                let _serial = self.transport.write_lane().await;
                let pushed =
                    revert::push_with_git(&remote_url, token.as_ref(), sha, branch, message).await;
                self.transport
                    .record_external(Endpoint::GitPush.route(), pushed.is_ok());
                pushed
            }
        }
    }
}

/// Whether a refused `PUT /contents` is GitHub's answer to a stale or missing blob
/// precondition (another writer got there first), which a re-read and a new write can
/// fix: 409 `<path> does not match <sha>` (a stale `sha`), or 422 `"sha" wasn't supplied`
/// (the file appeared since it was read).
fn is_blob_mismatch(status: u16, message: &str) -> bool {
    match status {
        409 => message.contains("does not match"),
        422 => message.contains("\"sha\" wasn't supplied"),
        _ => false,
    }
}
