//! The reads (and the one write) of `mp doctor` beyond the port: the App's installation on
//! a repository, a repository's labels, creating a label, a directory listing and the
//! deployment environments (the ruleset rules that apply to a branch are a port read,
//! `GitHub::branch_rules`, since the tick reads them too).

use std::collections::BTreeMap;

use mp_core::doctor::{DeployBranches, DeployEnvironment, DeployPolicy};
use mp_core::ids::RepoName;
use mp_core::port::GitHubError;
use reqwest::Method;
use serde::Deserialize;
use serde_json::json;

use super::RestGitHub;
use super::pulls::listing;
use super::transport::Request;

/// `GET /repos/{owner}/{repo}/labels`.
const LIST_LABELS: &str = "GET /repos/{o}/{r}/labels";
/// `POST /repos/{owner}/{repo}/labels`.
const CREATE_LABEL: &str = "POST /repos/{o}/{r}/labels";
/// `PATCH /repos/{owner}/{repo}/labels/{name}`.
const UPDATE_LABEL: &str = "PATCH /repos/{o}/{r}/labels/{name}";
/// `GET /repos/{owner}/{repo}/environments`.
const LIST_ENVIRONMENTS: &str = "GET /repos/{o}/{r}/environments";
/// `GET /repos/{owner}/{repo}/environments/{environment_name}/deployment-branch-policies`.
const LIST_DEPLOYMENT_POLICIES: &str =
    "GET /repos/{o}/{r}/environments/{environment_name}/deployment-branch-policies";
/// `GET /repos/{owner}/{repo}/contents/{path}` of a directory.
const LIST_DIRECTORY: &str = "GET /repos/{o}/{r}/contents/{path}";

impl RestGitHub {
    /// Whether the client authenticates as a GitHub App.
    pub fn is_app(&self) -> bool {
        self.transport.auth().is_app()
    }

    /// The permissions of the App's installation on `repo` (`contents` -> `write`, ...), or
    /// `None` when the App is not installed there (`GET /repos/{o}/{r}/installation`).
    ///
    /// # Errors
    /// A [`GitHubError`] for token credentials or when GitHub refuses otherwise than 404.
    pub async fn installation_permissions(
        &self,
        repo: &RepoName,
    ) -> Result<Option<BTreeMap<String, String>>, GitHubError> {
        let transport = &self.transport;
        let found = transport
            .auth()
            .repo_installation_permissions(transport.http(), transport.api_url(), repo)
            .await;
        transport.record_external("GET /repos/{o}/{r}/installation", found.is_ok());
        found
    }

    /// The deployment environments of `repo`, all pages (`GET /repos/{o}/{r}/environments`),
    /// each with the number of its required reviewers and which branches may deploy to it;
    /// for custom policies, one more listing per environment
    /// (`…/environments/{name}/deployment-branch-policies`).
    ///
    /// # Errors
    /// A [`GitHubError`] when GitHub refuses or answers something unreadable.
    pub async fn environments(
        &self,
        repo: &RepoName,
    ) -> Result<Vec<DeployEnvironment>, GitHubError> {
        #[derive(Deserialize)]
        struct Page {
            environments: Vec<EnvironmentJson>,
        }
        #[derive(Deserialize)]
        struct EnvironmentJson {
            name: String,
            #[serde(default)]
            protection_rules: Vec<RuleJson>,
            deployment_branch_policy: Option<BranchPolicyJson>,
        }
        #[derive(Deserialize)]
        struct RuleJson {
            #[serde(rename = "type")]
            kind: String,
            #[serde(default)]
            reviewers: Vec<serde_json::Value>,
        }
        #[derive(Deserialize)]
        struct BranchPolicyJson {
            protected_branches: bool,
            custom_branch_policies: bool,
        }
        #[derive(Deserialize)]
        struct PoliciesPage {
            branch_policies: Vec<PolicyJson>,
        }
        #[derive(Deserialize)]
        struct PolicyJson {
            name: String,
            #[serde(rename = "type", default)]
            kind: Option<String>,
        }
        let url = self
            .transport
            .url(["repos", repo.owner(), repo.name(), "environments"]);
        let what = || format!("the environments of {repo}");
        let listed: Vec<EnvironmentJson> = self
            .transport
            .get_pages(
                LIST_ENVIRONMENTS,
                listing(url, &[]),
                repo,
                &what,
                None,
                |page: Page| page.environments,
            )
            .await?;
        let mut environments = Vec::with_capacity(listed.len());
        for environment in listed {
            let reviewers = environment
                .protection_rules
                .iter()
                .filter(|rule| rule.kind == "required_reviewers")
                .map(|rule| rule.reviewers.len())
                .sum();
            let branches = match environment.deployment_branch_policy {
                None => DeployBranches::Any,
                Some(policy) if policy.custom_branch_policies => {
                    let url = self.transport.url([
                        "repos",
                        repo.owner(),
                        repo.name(),
                        "environments",
                        environment.name.as_str(),
                        "deployment-branch-policies",
                    ]);
                    let what = || {
                        format!(
                            "the deployment branch policies of {repo} environment {}",
                            environment.name
                        )
                    };
                    let policies: Vec<PolicyJson> = self
                        .transport
                        .get_pages(
                            LIST_DEPLOYMENT_POLICIES,
                            listing(url, &[]),
                            repo,
                            &what,
                            None,
                            |page: PoliciesPage| page.branch_policies,
                        )
                        .await?;
                    DeployBranches::Selected(
                        policies
                            .into_iter()
                            .map(|policy| DeployPolicy {
                                name: policy.name,
                                tag: policy.kind.as_deref() == Some("tag"),
                            })
                            .collect(),
                    )
                }
                Some(policy) if policy.protected_branches => DeployBranches::Protected,
                // Neither flag: GitHub documents this as no restriction.
                Some(_) => DeployBranches::Any,
            };
            environments.push(DeployEnvironment {
                name: environment.name,
                reviewers,
                branches,
            });
        }
        Ok(environments)
    }

    /// The names of every label of `repo`, all pages (`GET /repos/{o}/{r}/labels`).
    ///
    /// # Errors
    /// A [`GitHubError`] when GitHub refuses or answers something unreadable.
    pub async fn labels(&self, repo: &RepoName) -> Result<Vec<String>, GitHubError> {
        #[derive(Deserialize)]
        struct LabelJson {
            name: String,
        }
        let url = listing(self.transport.repo_url(repo, &["labels"]), &[]);
        let what = || format!("the labels of {repo}");
        self.transport
            .get_pages(
                LIST_LABELS,
                url,
                repo,
                &what,
                None,
                |page: Vec<LabelJson>| page.into_iter().map(|l| l.name).collect(),
            )
            .await
    }

    /// Creates the label `name` in `repo` (`POST /repos/{o}/{r}/labels`, 201). A label that
    /// already exists (422 `already_exists`) is `Ok(false)`.
    ///
    /// # Errors
    /// A [`GitHubError`] for any other refusal.
    pub async fn create_label(
        &self,
        repo: &RepoName,
        name: &str,
        color: &str,
        description: &str,
    ) -> Result<bool, GitHubError> {
        let url = self.transport.repo_url(repo, &["labels"]);
        let body = json!({ "name": name, "color": color, "description": description });
        let request = Request::write(Method::POST, CREATE_LABEL, url, repo, Some(body));
        let answer = self.transport.send(&request).await?;
        if answer.is_success() {
            return Ok(true);
        }
        if answer.status == 422 && answer.message().to_ascii_lowercase().contains("already") {
            return Ok(false);
        }
        Err(answer.refusal(|| format!("label {name} of {repo}")))
    }

    /// Renames the label `from` of `repo` to `to` (`PATCH /repos/{o}/{r}/labels/{name}`
    /// with `new_name`), e.g. to the exact spelling mp reads.
    ///
    /// # Errors
    /// A [`GitHubError`] when GitHub refuses.
    pub async fn rename_label(
        &self,
        repo: &RepoName,
        from: &str,
        to: &str,
    ) -> Result<(), GitHubError> {
        let url = self.transport.repo_url(repo, &["labels", from]);
        let body = json!({ "new_name": to });
        let request = Request::write(Method::PATCH, UPDATE_LABEL, url, repo, Some(body));
        let answer = self.transport.send(&request).await?;
        if answer.is_success() {
            return Ok(());
        }
        Err(answer.refusal(|| format!("label {from} of {repo}")))
    }

    /// The file names in the directory `path` of `repo` at `git_ref`
    /// (`GET /repos/{o}/{r}/contents/{path}?ref=`); empty when there is no such directory.
    ///
    /// # Errors
    /// A [`GitHubError`] when GitHub refuses otherwise than 404.
    pub async fn directory_files(
        &self,
        repo: &RepoName,
        path: &str,
        git_ref: &str,
    ) -> Result<Vec<String>, GitHubError> {
        #[derive(Deserialize)]
        struct EntryJson {
            path: String,
            #[serde(rename = "type")]
            kind: String,
        }
        let mut url = self.transport.url(
            ["repos", repo.owner(), repo.name(), "contents"]
                .into_iter()
                .chain(path.split('/').filter(|s| !s.is_empty())),
        );
        url.query_pairs_mut().append_pair("ref", git_ref);
        let answer = self
            .transport
            .send(&Request::get(LIST_DIRECTORY, url, repo))
            .await?;
        if answer.status == 404 {
            return Ok(Vec::new());
        }
        if !answer.is_success() {
            return Err(answer.refusal(|| format!("{repo} {path} at {git_ref}")));
        }
        // A file answers an object, a directory an array.
        let entries: Vec<EntryJson> = match answer.json::<serde_json::Value>()? {
            serde_json::Value::Array(items) => items
                .into_iter()
                .filter_map(|item| serde_json::from_value(item).ok())
                .collect(),
            _ => Vec::new(),
        };
        Ok(entries
            .into_iter()
            .filter(|e| e.kind == "file")
            .map(|e| e.path)
            .collect())
    }
}
