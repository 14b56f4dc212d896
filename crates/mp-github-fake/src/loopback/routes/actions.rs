//! GitHub Actions workflow runs and their jobs (decisions/0047).

use axum::extract::{Query, State};
use axum::http::Uri;
use serde_json::{Value, json};

use super::{ApiError, ApiResult, Ctx, Params, RepoPath, RepoPathWith, linked, read, repo_of};
use crate::loopback::page::paginate;
use crate::loopback::render;

/// `GET /repos/{o}/{r}/actions/runs`: the world's workflow runs, newest commit first, of
/// the commit `head_sha` names (every commit without it). GitHub answers an empty list,
/// not 404, for a SHA it has no run of.
pub(super) async fn list_workflow_runs(
    State(s): Ctx,
    RepoPath(name): RepoPath,
    Query(q): Params,
    uri: Uri,
) -> ApiResult {
    let head = q.get("head_sha").cloned();
    let now = s.memory.now();
    let base = s.base_url.clone();
    let items: Vec<Value> = read(&s, |w| {
        let repo = repo_of(w, &name)?;
        Some(
            repo.commits
                .iter()
                .rev()
                .filter(|commit| head.as_deref().is_none_or(|h| commit.sha.as_str() == h))
                .flat_map(|commit| {
                    commit
                        .workflow_runs(&name)
                        .into_iter()
                        .map(|run| render::workflow_run(&base, repo, commit, &run, now))
                        .collect::<Vec<_>>()
                })
                .collect(),
        )
    })?;
    let total = items.len();
    let page = paginate(items, &uri, &s.base_url);
    Ok(linked(
        json!({ "total_count": total, "workflow_runs": page.items }),
        page.link,
    ))
}

/// `GET /repos/{o}/{r}/actions/runs/{run_id}/jobs`: the jobs of one workflow run (every
/// attempt's: the world has one).
pub(super) async fn list_workflow_jobs(
    State(s): Ctx,
    RepoPathWith(name, run_id): RepoPathWith,
    uri: Uri,
) -> ApiResult {
    let run_id: u64 = run_id.parse().map_err(|_| ApiError::not_found())?;
    let now = s.memory.now();
    let base = s.base_url.clone();
    let items: Vec<Value> = read(&s, |w| {
        repo_of(w, &name)?.commits.iter().find_map(|commit| {
            let run = commit
                .workflow_runs(&name)
                .into_iter()
                .find(|run| run.id == run_id)?;
            Some(
                run.jobs
                    .iter()
                    .filter_map(|index| {
                        render::workflow_job(&base, &name, commit, &run, *index, now)
                    })
                    .collect(),
            )
        })
    })?;
    let total = items.len();
    let page = paginate(items, &uri, &s.base_url);
    Ok(linked(
        json!({ "total_count": total, "jobs": page.items }),
        page.link,
    ))
}
