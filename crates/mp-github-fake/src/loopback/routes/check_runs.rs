//! Check runs published by a CI App: its installation token, and the runs it creates,
//! reads and updates.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use mp_core::context::{CheckConclusion, CheckRun, CheckStatus};
use mp_core::ids::{CommitSha, RepoName, Timestamp};
use mp_core::port::{GitHub, GitHubError, NewCheckRun};
use serde_json::{Value, json};

use super::{
    ApiError, ApiResult, Ctx, RepoPath, RepoPathWith, body_json, json_answer, read, repo_of,
    required, text_field,
};
use crate::loopback::render;
use crate::loopback::state::Shared;
use crate::loopback::webhook::{self, CheckRunChange};

/// Loopback extension (not GitHub): an installation token of the App `slug`, so a test or
/// a script can publish check runs as that App (`POST /repos/{o}/{r}/check-runs`).
pub(super) async fn create_app_token(State(s): Ctx, Path(slug): Path<String>) -> ApiResult {
    if mp_core::ids::Login::for_app(&slug).is_err() {
        return Err(ApiError::invalid(format!("`{slug}` is not an App slug")));
    }
    let token = s.issue_token(&slug);
    let expires = s.memory.read(|w| w.now).plus_hours(1);
    Ok(json_answer(
        StatusCode::CREATED,
        json!({ "token": token, "expires_at": expires.to_string(), "app": slug }),
    ))
}

/// The App of the request's installation token. A token this server did not issue is the
/// bot's, as on every other route (the server cannot tell a personal token from the App's
/// installation token it was configured with); GitHub lets only Apps write check runs.
fn calling_app(s: &Shared, headers: &HeaderMap) -> String {
    s.token_app(headers)
        .unwrap_or_else(|| s.memory.read(|w| w.bot_slug.clone()))
}

/// A check run's fields from a create or update body: `status`, `conclusion` (which
/// implies `completed`), `started_at`, `completed_at`, `output.summary`, `name`.
fn apply_check_fields(run: &mut CheckRun, body: &Value) -> Result<(), ApiError> {
    let time = |field: &str| -> Result<Option<Timestamp>, ApiError> {
        text_field(body, field)
            .map(|text| {
                Timestamp::parse(&text).map_err(|_| {
                    ApiError::invalid(format!("Invalid request: `{field}` is not a timestamp"))
                })
            })
            .transpose()
    };
    if let Some(name) = text_field(body, "name") {
        run.name = name;
    }
    if let Some(status) = text_field(body, "status") {
        run.status = match status.as_str() {
            "queued" | "waiting" | "requested" | "pending" => CheckStatus::Queued,
            "in_progress" => CheckStatus::InProgress,
            "completed" => CheckStatus::Completed,
            other => {
                return Err(ApiError::invalid(format!(
                    "Invalid request: `{other}` is not a check run status"
                )));
            }
        };
    }
    if let Some(at) = time("started_at")? {
        run.started_at = Some(at);
    }
    if let Some(at) = time("completed_at")? {
        run.completed_at = Some(at);
    }
    if let Some(conclusion) = text_field(body, "conclusion") {
        let parsed = CheckConclusion::from_github(&conclusion);
        if matches!(parsed, CheckConclusion::Other(_)) {
            return Err(ApiError::invalid(format!(
                "Invalid request: `{conclusion}` is not a check run conclusion"
            )));
        }
        run.conclusion = Some(parsed);
        run.status = CheckStatus::Completed;
    }
    if run.status == CheckStatus::Completed && run.conclusion.is_none() {
        return Err(ApiError::invalid(
            "Invalid request: `conclusion` is required when the status is `completed`",
        ));
    }
    if let Some(summary) = body
        .get("output")
        .and_then(|o| o.get("summary"))
        .and_then(Value::as_str)
    {
        run.output_summary = Some(summary.to_owned());
    }
    Ok(())
}

/// `POST /repos/{o}/{r}/check-runs`: an App publishes a run on a commit.
pub(super) async fn create_check_run(
    State(s): Ctx,
    RepoPath(name): RepoPath,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult {
    let app = calling_app(&s, &headers);
    let body = body_json(&body)?;
    if app == s.memory.read(|w| w.bot_slug.clone())
        && let Some(run) = bot_check_run(&body)?
    {
        return create_bot_check_run(&s, &name, run).await;
    }
    let check = required(&body, "name")?;
    let head = required(&body, "head_sha")?;
    let head = CommitSha::parse(&head)
        .map_err(|_| ApiError::invalid(format!("No commit found for SHA: {head}")))?;
    let now = s.memory.stamp();
    let mut run = CheckRun {
        id: None,
        name: check,
        status: CheckStatus::Queued,
        conclusion: None,
        started_at: Some(now),
        completed_at: None,
        app_slug: Some(app),
        output_summary: None,
    };
    apply_check_fields(&mut run, &body)?;
    if run.status == CheckStatus::Completed && run.completed_at.is_none() {
        run.completed_at = Some(now);
    }
    let index = s
        .memory
        .add_check_run(&name, &head, run.clone())
        .map_err(|e| match e {
            GitHubError::NotFound { .. } => {
                ApiError::invalid(format!("No commit found for SHA: {head}"))
            }
            other => ApiError::from(other),
        })?;
    webhook::check_run(&s, &name, &head, index, CheckRunChange::Created);
    if run.status == CheckStatus::Completed {
        webhook::check_run(&s, &name, &head, index, CheckRunChange::Completed);
    }
    Ok(json_answer(
        StatusCode::CREATED,
        render::check_run(&s.base_url, &name, &head, index, &run),
    ))
}

/// The bot's completed check run of a create body (`name`, `head_sha`, `conclusion`,
/// `output.title`, `output.summary`: what the port's `create_check_run` sends); `None` for
/// a run not created completed, which takes the route's general path.
fn bot_check_run(body: &Value) -> Result<Option<NewCheckRun>, ApiError> {
    let Some(conclusion) = text_field(body, "conclusion") else {
        return Ok(None);
    };
    let head = required(body, "head_sha")?;
    let head_sha = CommitSha::parse(&head)
        .map_err(|_| ApiError::invalid(format!("No commit found for SHA: {head}")))?;
    let conclusion = CheckConclusion::from_github(&conclusion);
    if matches!(conclusion, CheckConclusion::Other(_)) {
        return Err(ApiError::invalid(format!(
            "Invalid request: `{}` is not a check run conclusion",
            conclusion.as_str()
        )));
    }
    let output = |field: &str| {
        body.get("output")
            .and_then(|o| o.get(field))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    Ok(Some(NewCheckRun {
        name: required(body, "name")?,
        head_sha,
        conclusion,
        title: output("title"),
        summary: output("summary"),
    }))
}

/// The bot's completed run, through the port (so the action log records the write).
async fn create_bot_check_run(s: &Shared, name: &RepoName, run: NewCheckRun) -> ApiResult {
    s.memory
        .create_check_run(name, &run)
        .await
        .map_err(|e| match e {
            GitHubError::NotFound { .. } => {
                ApiError::invalid(format!("No commit found for SHA: {}", run.head_sha))
            }
            other => ApiError::from(other),
        })?;
    let head = &run.head_sha;
    let (index, created) = read(s, |w| {
        let commit = repo_of(w, name)?.commit(head)?;
        let index = commit.checks.len().checked_sub(1)?;
        Some((index, commit.checks[index].clone()))
    })?;
    webhook::check_run(s, name, head, index, CheckRunChange::Created);
    webhook::check_run(s, name, head, index, CheckRunChange::Completed);
    Ok(json_answer(
        StatusCode::CREATED,
        render::check_run(&s.base_url, name, head, index, &created),
    ))
}

/// The commit and position of the run whose id is `id`.
fn find_check_run(
    s: &Shared,
    name: &RepoName,
    id: &str,
) -> Result<(CommitSha, usize, CheckRun), ApiError> {
    let id: u64 = id.parse().map_err(|_| ApiError::not_found())?;
    read(s, |w| {
        repo_of(w, name)?.commits.iter().find_map(|commit| {
            commit.checks.iter().enumerate().find_map(|(index, run)| {
                (render::check_run_id(name, &commit.sha, index) == id)
                    .then(|| (commit.sha.clone(), index, run.clone()))
            })
        })
    })
}

/// `GET /repos/{o}/{r}/check-runs/{id}`.
pub(super) async fn get_check_run(
    State(s): Ctx,
    RepoPathWith(name, id): RepoPathWith,
) -> ApiResult {
    let (head, index, run) = find_check_run(&s, &name, &id)?;
    Ok(json_answer(
        StatusCode::OK,
        render::check_run(&s.base_url, &name, &head, index, &run),
    ))
}

/// `PATCH /repos/{o}/{r}/check-runs/{id}`: the App that created a run updates it.
pub(super) async fn update_check_run(
    State(s): Ctx,
    RepoPathWith(name, id): RepoPathWith,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult {
    let app = calling_app(&s, &headers);
    let body = body_json(&body)?;
    let (head, index, mut run) = find_check_run(&s, &name, &id)?;
    if run.app_slug.as_deref() != Some(app.as_str()) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "Only the GitHub App that created a check run can update it.",
        ));
    }
    let was_completed = run.status == CheckStatus::Completed;
    apply_check_fields(&mut run, &body)?;
    if run.status == CheckStatus::Completed && !was_completed && run.completed_at.is_none() {
        run.completed_at = Some(s.memory.stamp());
    }
    let updated = run.clone();
    s.memory
        .edit_check_run(&name, &head, index, |stored| *stored = updated)?;
    if run.status == CheckStatus::Completed && !was_completed {
        webhook::check_run(&s, &name, &head, index, CheckRunChange::Completed);
    }
    Ok(json_answer(
        StatusCode::OK,
        render::check_run(&s.base_url, &name, &head, index, &run),
    ))
}
