//! The loopback server's routes: GitHub's REST paths, each answered through the
//! `MemoryGitHub` port (every mutation goes through a port method, so the action log is the
//! one a direct in-memory run writes) and rendered from the world where GitHub sends more
//! than the port's values carry.
//!
//! One module per part of the API (`app`, `labels`, `pulls`, `commits`, `actions`,
//! `check_runs`, `issues`, `contents` with the Git data routes); this one holds the router, the error answer, the
//! repository-path extractors and the helpers the handlers share.

mod actions;
mod app;
mod check_runs;
mod commits;
mod contents;
mod environments;
mod issues;
mod labels;
mod pulls;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{FromRequestParts, Path, Query, State};
use axum::http::header::{HeaderValue, LINK};
use axum::http::request::Parts;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, any, delete, get, patch, post, put};
use mp_core::ids::{CommitSha, PrNumber, RepoName};
use mp_core::port::GitHubError;
use serde_json::{Value, json};

use super::middleware::{RouteLayer, around_handler};
use super::page::paginate;
use super::state::{DOCUMENTATION_URL, Shared};
use crate::world::{Commit, Repo, World};

type Ctx = State<Arc<Shared>>;
type ApiResult = Result<Response, ApiError>;
type Params = Query<BTreeMap<String, String>>;

/// An error answer: a status and GitHub's `{message, documentation_url}` body.
#[derive(Debug)]
pub(super) struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }

    fn not_found() -> Self {
        Self::new(StatusCode::NOT_FOUND, "Not Found")
    }

    fn invalid(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, message)
    }
}

/// The port's refusals keep the port's message (so a client reports what a direct run
/// reports); the others get GitHub's wording.
impl From<GitHubError> for ApiError {
    fn from(err: GitHubError) -> Self {
        let (status, message) = match err {
            GitHubError::NotFound { .. } => (StatusCode::NOT_FOUND, "Not Found".to_owned()),
            GitHubError::HeadMoved { .. } => (
                StatusCode::CONFLICT,
                "Head branch was modified. Review and try the merge again.".to_owned(),
            ),
            GitHubError::NotMergeable { message, .. } => (StatusCode::METHOD_NOT_ALLOWED, message),
            GitHubError::Conflict { message, .. } => (StatusCode::CONFLICT, message),
            GitHubError::RateLimited { .. } => (
                StatusCode::FORBIDDEN,
                "API rate limit exceeded for installation ID 1.".to_owned(),
            ),
            GitHubError::Throttled { .. } => (
                StatusCode::FORBIDDEN,
                "You have exceeded a secondary rate limit.".to_owned(),
            ),
            GitHubError::Unavailable { message, .. } => (StatusCode::BAD_GATEWAY, message),
            GitHubError::Status {
                status, message, ..
            } => (
                StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                message,
            ),
            other => (StatusCode::INTERNAL_SERVER_ERROR, other.to_string()),
        };
        Self { status, message }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({ "message": self.message, "documentation_url": DOCUMENTATION_URL });
        (self.status, axum::Json(body)).into_response()
    }
}

/// The router, each route (and the fallback) behind the middleware.
pub(super) fn router(shared: Arc<Shared>) -> Router {
    let gated = |path: Option<&'static str>, route: MethodRouter<Arc<Shared>>| {
        let layer = RouteLayer {
            shared: Arc::clone(&shared),
            path,
        };
        route.layer(axum::middleware::from_fn_with_state(layer, around_handler))
    };
    let routes: Vec<(&'static str, MethodRouter<Arc<Shared>>)> = vec![
        ("/app", get(app::get_app)),
        ("/user", get(app::get_user)),
        ("/app/installations", get(app::list_installations)),
        (
            "/app/installations/{id}/access_tokens",
            post(app::create_token),
        ),
        ("/repos/{o}/{r}", get(commits::get_repo)),
        ("/repos/{o}/{r}/installation", get(app::get_installation)),
        (
            "/repos/{o}/{r}/labels",
            get(labels::list_labels).post(labels::create_label),
        ),
        ("/repos/{o}/{r}/labels/{name}", patch(labels::edit_label)),
        (
            "/repos/{o}/{r}/pulls",
            get(pulls::list_pulls).post(pulls::create_pull),
        ),
        ("/repos/{o}/{r}/pulls/{n}", get(pulls::get_pull)),
        (
            "/repos/{o}/{r}/pulls/{n}/commits",
            get(pulls::list_pull_commits),
        ),
        (
            "/repos/{o}/{r}/pulls/{n}/files",
            get(pulls::list_pull_files),
        ),
        ("/repos/{o}/{r}/pulls/{n}/merge", put(pulls::merge_pull)),
        (
            "/repos/{o}/{r}/pulls/{n}/update-branch",
            put(pulls::update_branch),
        ),
        ("/repos/{o}/{r}/commits", get(commits::list_commits)),
        ("/repos/{o}/{r}/commits/{sha}", get(commits::get_commit)),
        (
            "/repos/{o}/{r}/commits/{sha}/check-runs",
            get(commits::list_check_runs),
        ),
        (
            "/repos/{o}/{r}/check-runs",
            post(check_runs::create_check_run),
        ),
        (
            "/repos/{o}/{r}/actions/runs",
            get(actions::list_workflow_runs),
        ),
        (
            "/repos/{o}/{r}/actions/runs/{run_id}/jobs",
            get(actions::list_workflow_jobs),
        ),
        (
            "/repos/{o}/{r}/check-runs/{id}",
            get(check_runs::get_check_run).patch(check_runs::update_check_run),
        ),
        (
            "/_loopback/apps/{slug}/token",
            post(check_runs::create_app_token),
        ),
        (
            "/repos/{o}/{r}/commits/{sha}/pulls",
            get(commits::list_commit_pulls),
        ),
        ("/repos/{o}/{r}/compare/{basehead}", get(commits::compare)),
        (
            "/repos/{o}/{r}/branches/{*branch}",
            get(commits::get_branch),
        ),
        (
            "/repos/{o}/{r}/rules/branches/{*branch}",
            get(commits::branch_rules),
        ),
        (
            "/repos/{o}/{r}/environments",
            get(environments::list_environments),
        ),
        (
            "/repos/{o}/{r}/environments/{environment_name}/deployment-branch-policies",
            get(environments::list_deployment_policies),
        ),
        (
            "/repos/{o}/{r}/issues",
            get(issues::list_issues).post(issues::create_issue),
        ),
        (
            "/repos/{o}/{r}/issues/comments/{id}",
            patch(issues::update_comment),
        ),
        ("/repos/{o}/{r}/issues/{n}", patch(issues::update_issue)),
        (
            "/repos/{o}/{r}/issues/{n}/comments",
            get(issues::list_comments).post(issues::create_comment),
        ),
        (
            "/repos/{o}/{r}/issues/{n}/labels",
            get(issues::list_labels).post(issues::add_labels),
        ),
        (
            "/repos/{o}/{r}/issues/{n}/labels/{label}",
            delete(issues::remove_label),
        ),
        (
            "/repos/{o}/{r}/issues/{n}/reactions",
            get(issues::list_reactions),
        ),
        (
            "/repos/{o}/{r}/issues/{n}/timeline",
            get(issues::list_timeline),
        ),
        ("/repos/{o}/{r}/activity", get(issues::list_activity)),
        ("/repos/{o}/{r}/contents", get(contents::get_root_contents)),
        ("/repos/{o}/{r}/contents/", get(contents::get_root_contents)),
        (
            "/repos/{o}/{r}/contents/{*path}",
            get(contents::get_contents).put(contents::put_contents),
        ),
        ("/repos/{o}/{r}/git/trees/{*ref}", get(contents::get_tree)),
        ("/repos/{o}/{r}/git/ref/{*ref}", get(contents::get_ref)),
        (
            "/repos/{o}/{r}/git/matching-refs/{*ref}",
            get(contents::list_matching_refs),
        ),
        ("/repos/{o}/{r}/git/refs", post(contents::create_ref)),
        (
            "/repos/{o}/{r}/git/refs/{*ref}",
            patch(contents::update_ref),
        ),
        ("/repos/{o}/{r}/merges", post(contents::merge_into_branch)),
        (
            "/repos/{o}/{r}/_loopback/revert",
            post(contents::push_revert),
        ),
        (
            "/repos/{o}/{r}/_loopback/label",
            post(contents::label_as_person),
        ),
        ("/graphql", post(super::graphql::graphql)),
    ];
    let mut router = Router::new();
    for (path, route) in routes {
        router = router.route(path, gated(Some(path), route));
    }
    let fallback = gated(None, any(|| async { ApiError::not_found() }));
    router
        .fallback_service(fallback.with_state(Arc::clone(&shared)))
        .with_state(shared)
}

/// The repository `{o}/{r}` of a `/repos/{o}/{r}/...` path names, resolved against the
/// world: a path that names no repository of the world is GitHub's 404, before the handler
/// reads anything else of the request.
#[derive(Debug)]
pub(super) struct RepoPath(pub(super) RepoName);

/// [`RepoPath`] and the path's one other parameter (`{n}`, `{sha}`, `{id}`, `{*path}`...),
/// as text: the handler says what it must be.
#[derive(Debug)]
pub(super) struct RepoPathWith(pub(super) RepoName, pub(super) String);

/// The path's parameters in route order; a route without them is a 404.
async fn path_parameters(
    parts: &mut Parts,
    shared: &Arc<Shared>,
) -> Result<Vec<(String, String)>, ApiError> {
    Path::<Vec<(String, String)>>::from_request_parts(parts, shared)
        .await
        .map(|Path(parameters)| parameters)
        .map_err(|_| ApiError::not_found())
}

/// The repository the `o` and `r` parameters name, when the world has it.
fn resolve(shared: &Shared, parameters: &[(String, String)]) -> Result<RepoName, ApiError> {
    let value = |key: &str| {
        parameters
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value.as_str())
    };
    let (Some(owner), Some(repo)) = (value("o"), value("r")) else {
        return Err(ApiError::not_found());
    };
    let name = RepoName::parse(&format!("{owner}/{repo}")).map_err(|_| ApiError::not_found())?;
    if shared.memory.read(|w| repo_of(w, &name).is_some()) {
        Ok(name)
    } else {
        Err(ApiError::not_found())
    }
}

impl FromRequestParts<Arc<Shared>> for RepoPath {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        shared: &Arc<Shared>,
    ) -> Result<Self, Self::Rejection> {
        let parameters = path_parameters(parts, shared).await?;
        resolve(shared, &parameters).map(Self)
    }
}

impl FromRequestParts<Arc<Shared>> for RepoPathWith {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        shared: &Arc<Shared>,
    ) -> Result<Self, Self::Rejection> {
        let parameters = path_parameters(parts, shared).await?;
        let name = resolve(shared, &parameters)?;
        let other = parameters
            .into_iter()
            .find(|(key, _)| key != "o" && key != "r")
            .map(|(_, value)| value)
            .ok_or_else(ApiError::not_found)?;
        Ok(Self(name, other))
    }
}

// ---- helpers ---------------------------------------------------------------------------

fn number(text: &str) -> Result<PrNumber, ApiError> {
    text.parse::<u64>()
        .map(PrNumber::new)
        .map_err(|_| ApiError::not_found())
}

fn sha(text: &str) -> Result<CommitSha, ApiError> {
    CommitSha::parse(text).map_err(|_| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            format!("No commit found for SHA: {text}"),
        )
    })
}

fn json_answer(status: StatusCode, value: Value) -> Response {
    (status, axum::Json(value)).into_response()
}

/// One page of `items` as `uri` asks, with its `Link` header.
fn paged(shared: &Shared, uri: &Uri, items: Vec<Value>) -> Response {
    let page = paginate(items, uri, &shared.base_url);
    linked(Value::Array(page.items), page.link)
}

/// A 200 answer of `body` with the `Link` header `link`, when there is one.
fn linked(body: Value, link: Option<String>) -> Response {
    let mut response = json_answer(StatusCode::OK, body);
    if let Some(value) = link.and_then(|l| HeaderValue::from_str(&l).ok()) {
        response.headers_mut().insert(LINK, value);
    }
    response
}

/// Reads the world; `None` from `read` is a 404.
fn read<R>(shared: &Shared, read: impl FnOnce(&World) -> Option<R>) -> Result<R, ApiError> {
    shared.memory.read(read).ok_or_else(ApiError::not_found)
}

/// The repository's commits by SHA, for rendering many of them.
fn commits_by_sha(repo: &Repo) -> HashMap<&CommitSha, &Commit> {
    repo.commits.iter().map(|c| (&c.sha, c)).collect()
}

fn repo_of<'w>(world: &'w World, name: &RepoName) -> Option<&'w Repo> {
    world.repo(name)
}

/// The repository's default branch, which GitHub reads when a request names no branch.
fn default_branch_of(s: &Shared, name: &RepoName) -> Result<String, ApiError> {
    read(s, |w| repo_of(w, name).map(|r| r.default_branch.clone()))
}

fn body_json(bytes: &Bytes) -> Result<Value, ApiError> {
    if bytes.is_empty() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    serde_json::from_slice(bytes)
        .map_err(|_| ApiError::new(StatusCode::BAD_REQUEST, "Problems parsing JSON"))
}

fn text_field(body: &Value, name: &str) -> Option<String> {
    body.get(name).and_then(Value::as_str).map(str::to_owned)
}

fn required(body: &Value, name: &str) -> Result<String, ApiError> {
    text_field(body, name)
        .ok_or_else(|| ApiError::invalid(format!("Invalid request: `{name}` wasn't supplied")))
}

fn string_list(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}
