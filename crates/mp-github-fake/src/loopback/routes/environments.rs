//! A repository's deployment environments and their custom deployment branch policies
//! (what `mp doctor` reads of the environment that holds the App's key).

use axum::extract::State;
use axum::http::Uri;
use serde_json::{Value, json};

use super::{ApiError, ApiResult, Ctx, RepoPath, RepoPathWith, linked, read, repo_of};
use crate::loopback::page::paginate;
use crate::loopback::render;
use crate::loopback::state::Shared;
use crate::world::{Environment, EnvironmentBranches};

/// An environment as GitHub renders it: its `required_reviewers` rule when it names
/// reviewers, and its `deployment_branch_policy` (`null` for every branch).
fn environment_json(s: &Shared, name: &mp_core::ids::RepoName, env: &Environment) -> Value {
    let id = render::stable_id("environment", &format!("{name}\0{}", env.name));
    let mut rules = Vec::new();
    if !env.reviewers.is_empty() {
        let reviewers: Vec<Value> = env
            .reviewers
            .iter()
            .map(|login| json!({"type": "User", "reviewer": render::user(&s.base_url, login)}))
            .collect();
        rules.push(json!({
            "id": render::stable_id("protection", &format!("{id}\0reviewers")),
            "node_id": format!("GA_loopback{id}"),
            "type": "required_reviewers",
            "prevent_self_review": false,
            "reviewers": reviewers,
        }));
    }
    let policy = match &env.branches {
        EnvironmentBranches::Any => Value::Null,
        EnvironmentBranches::Protected => {
            json!({"protected_branches": true, "custom_branch_policies": false})
        }
        EnvironmentBranches::Selected(_) => {
            json!({"protected_branches": false, "custom_branch_policies": true})
        }
    };
    if !policy.is_null() {
        rules.push(json!({
            "id": render::stable_id("protection", &format!("{id}\0branches")),
            "node_id": format!("GA_loopback_branch{id}"),
            "type": "branch_policy",
        }));
    }
    json!({
        "id": id,
        "node_id": format!("EN_loopback{id}"),
        "name": env.name,
        "url": format!("{}/repos/{name}/environments/{}", s.base_url, env.name),
        "html_url": format!("https://github.com/{name}/deployments/activity_log?environments_filter={}", env.name),
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
        "protection_rules": rules,
        "deployment_branch_policy": policy,
    })
}

/// `GET /repos/{o}/{r}/environments`: `{total_count, environments}`, paged.
pub(super) async fn list_environments(
    State(s): Ctx,
    RepoPath(name): RepoPath,
    uri: Uri,
) -> ApiResult {
    let environments = read(&s, |w| {
        repo_of(w, &name).map(|repo| repo.environments.clone())
    })?;
    let items: Vec<Value> = environments
        .iter()
        .map(|env| environment_json(&s, &name, env))
        .collect();
    let total = items.len();
    let page = paginate(items, &uri, &s.base_url);
    Ok(linked(
        json!({ "total_count": total, "environments": page.items }),
        page.link,
    ))
}

/// `GET /repos/{o}/{r}/environments/{environment_name}/deployment-branch-policies`:
/// `{total_count, branch_policies}` of an environment with custom policies (none for the
/// others); 404 for an environment the repository does not have.
pub(super) async fn list_deployment_policies(
    State(s): Ctx,
    RepoPathWith(name, environment): RepoPathWith,
    uri: Uri,
) -> ApiResult {
    let found = read(&s, |w| {
        repo_of(w, &name).map(|repo| {
            repo.environments
                .iter()
                .find(|e| e.name.eq_ignore_ascii_case(&environment))
                .cloned()
        })
    })?
    .ok_or_else(ApiError::not_found)?;
    let patterns = match &found.branches {
        EnvironmentBranches::Selected(patterns) => patterns.clone(),
        EnvironmentBranches::Any | EnvironmentBranches::Protected => Vec::new(),
    };
    let items: Vec<Value> = patterns
        .iter()
        .map(|pattern| {
            let (kind, pattern) = match pattern.strip_prefix("tag:") {
                Some(tag) => ("tag", tag),
                None => ("branch", pattern.as_str()),
            };
            let id = render::stable_id("policy", &format!("{name}\0{}\0{pattern}", found.name));
            json!({
                "id": id,
                "node_id": format!("DBP_loopback{id}"),
                "name": pattern,
                "type": kind,
            })
        })
        .collect();
    let total = items.len();
    let page = paginate(items, &uri, &s.base_url);
    Ok(linked(
        json!({ "total_count": total, "branch_policies": page.items }),
        page.link,
    ))
}
