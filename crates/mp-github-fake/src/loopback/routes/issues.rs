//! Issues and the issue side of pull requests: issues, comments, labels, reactions, the
//! timeline and a branch's activity.

use std::collections::HashMap;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, Uri};
use mp_core::context::CommentId;
use mp_core::ids::{PrNumber, RepoName};
use mp_core::port::{GitHub, GitHubHistory, IssueQuery, IssueState, NewIssue};
use serde_json::Value;

use super::{
    ApiError, ApiResult, Ctx, Params, RepoPath, RepoPathWith, body_json, json_answer, number,
    paged, read, repo_of, required, string_list, text_field,
};
use crate::loopback::render;
use crate::loopback::state::Shared;

pub(super) async fn list_issues(
    State(s): Ctx,
    RepoPath(name): RepoPath,
    Query(q): Params,
    uri: Uri,
) -> ApiResult {
    let state = match q.get("state").map_or("open", String::as_str) {
        "closed" => Some(IssueState::Closed),
        "all" => None,
        _ => Some(IssueState::Open),
    };
    let labels = q
        .get("labels")
        .map(|l| {
            l.split(',')
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let mut issues_found = s
        .memory
        .issues(&name, &IssueQuery { state, labels })
        .await?;
    if q.get("direction").is_some_and(|d| d == "asc") {
        issues_found.reverse();
    }
    let items = read(&s, |w| {
        let repo = repo_of(w, &name)?;
        let pulls = repo.pulls.iter().map(|p| (p.number, p.comments.len()));
        let issues = repo.issues.iter().map(|i| (i.number, i.comments.len()));
        let comments: HashMap<PrNumber, usize> = pulls.chain(issues).collect();
        Some(
            issues_found
                .iter()
                .map(|issue| {
                    let count = comments.get(&issue.number).copied().unwrap_or(0);
                    // A pull request's opening time, as its own answer gives it.
                    let mut issue = issue.clone();
                    if issue.is_pull_request && issue.created_at.is_none() {
                        issue.created_at = repo
                            .pull(issue.number)
                            .and_then(|pull| render::pull_created_at(repo, pull));
                    }
                    render::issue(&s.base_url, &issue, count)
                })
                .collect::<Vec<_>>(),
        )
    })?;
    Ok(paged(&s, &uri, items))
}

/// The issue or pull request `number` as the issues API shows it.
fn thread_value(s: &Shared, name: &RepoName, number: PrNumber) -> Result<Value, ApiError> {
    read(s, |w| {
        let (issue, comments) = render::thread_issue(repo_of(w, name)?, number)?;
        Some(render::issue(&s.base_url, &issue, comments))
    })
}

pub(super) async fn create_issue(
    State(s): Ctx,
    RepoPath(name): RepoPath,
    bytes: Bytes,
) -> ApiResult {
    let body = body_json(&bytes)?;
    let issue = NewIssue {
        title: required(&body, "title")?,
        body: text_field(&body, "body").unwrap_or_default(),
        labels: string_list(body.get("labels")),
    };
    let created = s.memory.create_issue(&name, &issue).await?;
    Ok(json_answer(
        StatusCode::CREATED,
        render::issue(&s.base_url, &created, 0),
    ))
}

pub(super) async fn update_issue(
    State(s): Ctx,
    RepoPathWith(name, n): RepoPathWith,
    bytes: Bytes,
) -> ApiResult {
    let number = number(&n)?;
    let body = body_json(&bytes)?;
    let state = text_field(&body, "state");
    if state
        .as_deref()
        .is_some_and(|st| st != "closed" && st != "open")
    {
        return Err(ApiError::invalid("state must be open or closed"));
    }
    if let Some(text) = text_field(&body, "body") {
        s.memory.update_issue_body(&name, number, &text).await?;
    }
    match state.as_deref() {
        Some("closed") => {
            s.memory.close_issue(&name, number).await?;
        }
        Some(_) => {
            return Err(ApiError::invalid(
                "reopening is not supported by the loopback server",
            ));
        }
        None => {}
    }
    Ok(json_answer(
        StatusCode::OK,
        thread_value(&s, &name, number)?,
    ))
}

pub(super) async fn list_comments(
    State(s): Ctx,
    RepoPathWith(name, n): RepoPathWith,
    uri: Uri,
) -> ApiResult {
    let number = number(&n)?;
    let comments = s.memory.comments(&name, number).await?;
    let items = comments
        .iter()
        .map(|c| render::comment(&s.base_url, &name, Some(number), c))
        .collect();
    Ok(paged(&s, &uri, items))
}

pub(super) async fn create_comment(
    State(s): Ctx,
    RepoPathWith(name, n): RepoPathWith,
    bytes: Bytes,
) -> ApiResult {
    let number = number(&n)?;
    let body = body_json(&bytes)?;
    let text = required(&body, "body")?;
    let comment = s.memory.create_comment(&name, number, &text).await?;
    Ok(json_answer(
        StatusCode::CREATED,
        render::comment(&s.base_url, &name, Some(number), &comment),
    ))
}

pub(super) async fn update_comment(
    State(s): Ctx,
    RepoPathWith(name, id): RepoPathWith,
    bytes: Bytes,
) -> ApiResult {
    let id = CommentId::new(id.parse::<u64>().map_err(|_| ApiError::not_found())?);
    let body = body_json(&bytes)?;
    let text = required(&body, "body")?;
    s.memory.update_comment(&name, id, &text).await?;
    let value = read(&s, |w| {
        let repo = repo_of(w, &name)?;
        let pulls = repo.pulls.iter().map(|p| (p.number, &p.comments));
        let issues = repo.issues.iter().map(|i| (i.number, &i.comments));
        pulls.chain(issues).find_map(|(number, comments)| {
            let comment = comments.iter().find(|c| c.id == id)?;
            Some(render::comment(&s.base_url, &name, Some(number), comment))
        })
    })?;
    Ok(json_answer(StatusCode::OK, value))
}

/// The current labels of `number` as GitHub's label array.
pub(super) fn label_array(
    s: &Shared,
    name: &RepoName,
    number: PrNumber,
) -> Result<Value, ApiError> {
    read(s, |w| {
        let labels = render::thread_labels(repo_of(w, name)?, number)?;
        Some(Value::Array(
            labels
                .iter()
                .map(|l| render::label(&s.base_url, name, l))
                .collect(),
        ))
    })
}

/// `GET /issues/{n}/labels`: the thread's labels, paginated like every list.
pub(super) async fn list_labels(
    State(s): Ctx,
    RepoPathWith(name, n): RepoPathWith,
    uri: Uri,
) -> ApiResult {
    let number = number(&n)?;
    let items = match label_array(&s, &name, number)? {
        Value::Array(items) => items,
        _ => Vec::new(),
    };
    Ok(paged(&s, &uri, items))
}

pub(super) async fn add_labels(
    State(s): Ctx,
    RepoPathWith(name, n): RepoPathWith,
    bytes: Bytes,
) -> ApiResult {
    let number = number(&n)?;
    let body = body_json(&bytes)?;
    // GitHub takes `{"labels": [..]}` or a bare array.
    let labels = match &body {
        Value::Array(_) => string_list(Some(&body)),
        _ => string_list(body.get("labels")),
    };
    s.memory.add_labels(&name, number, &labels).await?;
    Ok(json_answer(StatusCode::OK, label_array(&s, &name, number)?))
}

pub(super) async fn remove_label(
    State(s): Ctx,
    RepoPath(name): RepoPath,
    Path((_, _, n, label)): Path<(String, String, String, String)>,
) -> ApiResult {
    let number = number(&n)?;
    let present = s.memory.read(|w| {
        repo_of(w, &name)
            .and_then(|repo| render::thread_labels(repo, number))
            .map(|labels| labels.contains(&label))
    });
    if present == Some(false) {
        return Err(ApiError::new(StatusCode::NOT_FOUND, "Label does not exist"));
    }
    s.memory.remove_label(&name, number, &label).await?;
    Ok(json_answer(StatusCode::OK, label_array(&s, &name, number)?))
}

pub(super) async fn list_reactions(
    State(s): Ctx,
    RepoPathWith(name, n): RepoPathWith,
    uri: Uri,
) -> ApiResult {
    let number = number(&n)?;
    let reactions = s.memory.reactions(&name, number).await?;
    let items = reactions
        .iter()
        .enumerate()
        .map(|(index, reaction)| render::reaction(&s.base_url, &name, number, index, reaction))
        .collect();
    Ok(paged(&s, &uri, items))
}

pub(super) async fn list_timeline(
    State(s): Ctx,
    RepoPathWith(name, n): RepoPathWith,
    uri: Uri,
) -> ApiResult {
    let number = number(&n)?;
    let events = s.memory.label_events(&name, number).await?;
    let items = events
        .iter()
        .enumerate()
        .map(|(index, event)| render::label_event(&s.base_url, &name, number, index, event))
        .collect();
    Ok(paged(&s, &uri, items))
}

/// `GET /activity`: the repository's activity log, newest first. With `ref` (GitHub
/// accepts the branch name or `refs/heads/<name>`) the updates of that branch; without,
/// every branch's, each entry naming its full ref.
pub(super) async fn list_activity(
    State(s): Ctx,
    RepoPath(name): RepoPath,
    Query(q): Params,
    uri: Uri,
) -> ApiResult {
    let Some(git_ref) = q.get("ref") else {
        let log = s.memory.repo_activity(&name, usize::MAX).await?;
        let items = log
            .entries
            .iter()
            .enumerate()
            .map(|(index, (full_ref, update))| {
                render::activity(&s.base_url, &name, full_ref, index, update)
            })
            .collect();
        return Ok(paged(&s, &uri, items));
    };
    let branch = git_ref.strip_prefix("refs/heads/").unwrap_or(git_ref);
    let full_ref = format!("refs/heads/{branch}");
    let updates = s.memory.head_ref_updates(&name, branch).await?;
    let items = updates
        .iter()
        .enumerate()
        .map(|(index, update)| render::activity(&s.base_url, &name, &full_ref, index, update))
        .collect();
    Ok(paged(&s, &uri, items))
}
