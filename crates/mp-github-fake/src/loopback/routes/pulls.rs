//! Pull requests: list, read, their commits and files, merge, update-branch and create.

use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{StatusCode, Uri};
use mp_core::ids::{CommitSha, PrNumber, RepoName};
use mp_core::port::{
    GitHub, GitHubError, GitHubHistory, MergeMethod, MergeRequest, NewPull, UpdateBranchOutcome,
};
use serde_json::{Value, json};

use super::{
    ApiError, ApiResult, Ctx, Params, RepoPath, RepoPathWith, body_json, commits_by_sha,
    json_answer, linked, number, paged, read, repo_of, required, text_field,
};
use crate::loopback::page::{paginate, window};
use crate::loopback::render;
use crate::loopback::state::Shared;

pub(super) async fn list_pulls(
    State(s): Ctx,
    RepoPath(name): RepoPath,
    Query(q): Params,
    uri: Uri,
) -> ApiResult {
    let state = q.get("state").map_or("open", String::as_str).to_owned();
    if state == "open" {
        s.memory.open_pulls(&name).await?;
    }
    let ascending = q.get("direction").is_some_and(|d| d == "asc");
    let base = s.base_url.clone();
    let items = read(&s, |w| {
        let repo = repo_of(w, &name)?;
        let mut pulls: Vec<_> = repo
            .pulls
            .iter()
            .filter(|p| match state.as_str() {
                "open" => p.state == mp_core::context::PrState::Open,
                "closed" => p.state == mp_core::context::PrState::Closed,
                _ => true,
            })
            .collect();
        pulls.sort_by_key(|p| p.number);
        if !ascending {
            pulls.reverse();
        }
        Some(
            pulls
                .into_iter()
                .map(|p| render::pull(&base, repo, p, w.now, false))
                .collect::<Vec<_>>(),
        )
    })?;
    Ok(paged(&s, &uri, items))
}

/// The full pull request `number` as `GET /pulls/{n}` shows it.
fn full_pull(s: &Shared, name: &RepoName, number: PrNumber) -> Result<Value, ApiError> {
    read(s, |w| {
        let repo = repo_of(w, name)?;
        let pull = repo.pull(number)?;
        Some(render::pull(&s.base_url, repo, pull, w.now, true))
    })
}

pub(super) async fn get_pull(State(s): Ctx, RepoPathWith(name, n): RepoPathWith) -> ApiResult {
    let number = number(&n)?;
    s.memory.pull(&name, number).await?;
    Ok(json_answer(StatusCode::OK, full_pull(&s, &name, number)?))
}

pub(super) async fn list_pull_commits(
    State(s): Ctx,
    RepoPathWith(name, n): RepoPathWith,
    uri: Uri,
) -> ApiResult {
    let number = number(&n)?;
    let contexts = s.memory.all_pull_commits(&name, number)?;
    // GitHub lists the first 250; only the requested page of them is rendered.
    let listed = contexts.len().min(mp_github::PULL_COMMITS_CAP as usize);
    let page = paginate((0..listed).map(Value::from).collect(), &uri, &s.base_url);
    let items = read(&s, |w| {
        let by_sha = commits_by_sha(repo_of(w, &name)?);
        Some(
            page.items
                .iter()
                .filter_map(Value::as_u64)
                .filter_map(|i| usize::try_from(i).ok())
                .filter_map(|i| contexts.get(i))
                .filter_map(|c| by_sha.get(&c.sha).copied())
                .map(|c| render::commit(&s.base_url, &name, c))
                .collect::<Vec<_>>(),
        )
    })?;
    Ok(linked(Value::Array(items), page.link))
}

pub(super) async fn list_pull_files(
    State(s): Ctx,
    RepoPathWith(name, n): RepoPathWith,
    uri: Uri,
) -> ApiResult {
    let number = number(&n)?;
    s.memory.pull_files(&name, number).await?;
    // GitHub lists at most 3,000 files of a pull request, silently; only the requested page
    // of them is rendered.
    let (items, link) = read(&s, |w| {
        let pull = repo_of(w, &name)?.pull(number)?;
        let listed = pull
            .files
            .len()
            .min(mp_core::classifier::empty_pr::FILE_LISTING_CAP);
        let (range, link) = window(listed, &uri, &s.base_url);
        let items: Vec<Value> = pull.files[range]
            .iter()
            .map(|f| render::pull_file(&s.base_url, &name, &pull.head_sha, f))
            .collect();
        Some((items, link))
    })?;
    Ok(linked(Value::Array(items), link))
}

/// The message the core handed to the merge, rebuilt from GitHub's title/message split: the
/// client sends the first line as `commit_title` and the rest as `commit_message`. A title
/// equal to GitHub's default (`<title> (#N)`) is dropped, as the port adds it itself.
fn merge_message(
    title: Option<String>,
    message: Option<String>,
    default_title: &str,
) -> Option<String> {
    let message = message.filter(|m| !m.is_empty());
    match (title, message) {
        (None, message) => message,
        (Some(title), message) if title == default_title => message,
        (Some(title), None) => Some(title),
        (Some(title), Some(message)) => Some(format!("{title}\n\n{message}")),
    }
}

pub(super) async fn merge_pull(
    State(s): Ctx,
    RepoPathWith(name, n): RepoPathWith,
    bytes: Bytes,
) -> ApiResult {
    let number = number(&n)?;
    let body = body_json(&bytes)?;
    if let Some(method) = text_field(&body, "merge_method")
        && method != "squash"
    {
        return Err(ApiError::invalid(format!(
            "merge_method {method} is not supported by the loopback server (squash only)"
        )));
    }
    let (head, default_title) = read(&s, |w| {
        let pull = repo_of(w, &name)?.pull(number)?;
        Some((
            pull.head_sha.clone(),
            format!("{} (#{})", pull.title, pull.number),
        ))
    })
    .ok()
    .unzip();
    let head_sha = match text_field(&body, "sha") {
        Some(given) => CommitSha::parse(&given)
            .map_err(|_| ApiError::invalid(format!("sha {given} is not a commit SHA")))?,
        None => head.ok_or_else(ApiError::not_found)?,
    };
    let request = MergeRequest {
        head_sha,
        method: MergeMethod::Squash,
        commit_message: merge_message(
            text_field(&body, "commit_title"),
            text_field(&body, "commit_message"),
            default_title.as_deref().unwrap_or(""),
        ),
    };
    let merged = s.memory.merge_pull(&name, number, &request).await?;
    Ok(json_answer(
        StatusCode::OK,
        json!({ "sha": merged.as_str(), "merged": true, "message": "Pull Request successfully merged" }),
    ))
}

pub(super) async fn update_branch(
    State(s): Ctx,
    RepoPathWith(name, n): RepoPathWith,
    bytes: Bytes,
) -> ApiResult {
    let number = number(&n)?;
    let body = body_json(&bytes)?;
    let expected = match text_field(&body, "expected_head_sha") {
        Some(given) => CommitSha::parse(&given)
            .map_err(|_| ApiError::invalid(format!("expected_head_sha {given} is not a SHA")))?,
        None => read(&s, |w| {
            Some(repo_of(w, &name)?.pull(number)?.head_sha.clone())
        })?,
    };
    match s.memory.update_branch(&name, number, &expected).await? {
        UpdateBranchOutcome::Accepted => Ok(json_answer(
            StatusCode::ACCEPTED,
            json!({
                "message": "Updating pull request branch.",
                "url": format!("https://github.com/{name}/pull/{number}"),
            }),
        )),
        UpdateBranchOutcome::Refused { message } => Err(ApiError::invalid(message)),
    }
}

pub(super) async fn create_pull(
    State(s): Ctx,
    RepoPath(name): RepoPath,
    bytes: Bytes,
) -> ApiResult {
    let body = body_json(&bytes)?;
    let head = required(&body, "head")?;
    // `owner:branch` names a branch of the same repository here.
    let head = head
        .split_once(':')
        .map_or(head.clone(), |(_, branch)| branch.to_owned());
    let pull = NewPull {
        title: required(&body, "title")?,
        body: text_field(&body, "body").unwrap_or_default(),
        head,
        base: required(&body, "base")?,
    };
    let created = s
        .memory
        .create_pull(&name, &pull)
        .await
        .map_err(|err| match err {
            GitHubError::Conflict { message, .. } => ApiError::invalid(message),
            other => ApiError::from(other),
        })?;
    Ok(json_answer(
        StatusCode::CREATED,
        full_pull(&s, &name, created)?,
    ))
}
