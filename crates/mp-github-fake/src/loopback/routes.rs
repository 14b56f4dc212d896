//! The loopback server's routes: GitHub's REST paths, each answered through the
//! `MemoryGitHub` port (every mutation goes through a port method, so the action log is the
//! one a direct in-memory run writes) and rendered from the world where GitHub sends more
//! than the port's values carry.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::header::{HeaderValue, LINK};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, any, delete, get, patch, post, put};
use base64::Engine as _;
use mp_core::context::{CheckConclusion, CheckRun, CheckStatus, CommentId};
use mp_core::ids::{CommitSha, Login, PrNumber, RepoName, Timestamp};
use mp_core::port::{
    FileWrite, GitHub, GitHubError, GitHubHistory, IssueQuery, IssueState, MergeMethod,
    MergeRequest, NewIssue, NewPull, UpdateBranchOutcome,
};
use serde_json::{Value, json};
use sha1::{Digest, Sha1};

use super::boilerplate;
use super::middleware::{RouteLayer, around_handler};
use super::page::{paginate, window};
use super::render;
use super::state::{DOCUMENTATION_URL, Shared};
use super::webhook::{self, CheckRunChange, CommentChange, ThreadChange};
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
        ("/app", get(get_app)),
        ("/user", get(get_user)),
        ("/app/installations", get(list_installations)),
        ("/app/installations/{id}/access_tokens", post(create_token)),
        ("/repos/{o}/{r}", get(get_repo)),
        ("/repos/{o}/{r}/installation", get(get_installation)),
        ("/repos/{o}/{r}/labels", get(list_labels).post(create_label)),
        ("/repos/{o}/{r}/labels/{name}", patch(edit_label)),
        ("/repos/{o}/{r}/pulls", get(list_pulls).post(create_pull)),
        ("/repos/{o}/{r}/pulls/{n}", get(get_pull)),
        ("/repos/{o}/{r}/pulls/{n}/commits", get(list_pull_commits)),
        ("/repos/{o}/{r}/pulls/{n}/files", get(list_pull_files)),
        ("/repos/{o}/{r}/pulls/{n}/merge", put(merge_pull)),
        ("/repos/{o}/{r}/pulls/{n}/update-branch", put(update_branch)),
        ("/repos/{o}/{r}/commits", get(list_commits)),
        ("/repos/{o}/{r}/commits/{sha}", get(get_commit)),
        (
            "/repos/{o}/{r}/commits/{sha}/check-runs",
            get(list_check_runs),
        ),
        ("/repos/{o}/{r}/check-runs", post(create_check_run)),
        ("/repos/{o}/{r}/actions/runs", get(list_workflow_runs)),
        (
            "/repos/{o}/{r}/actions/runs/{run_id}/jobs",
            get(list_workflow_jobs),
        ),
        (
            "/repos/{o}/{r}/check-runs/{id}",
            get(get_check_run).patch(update_check_run),
        ),
        ("/_loopback/apps/{slug}/token", post(create_app_token)),
        ("/repos/{o}/{r}/commits/{sha}/pulls", get(list_commit_pulls)),
        ("/repos/{o}/{r}/compare/{basehead}", get(compare)),
        ("/repos/{o}/{r}/branches/{*branch}", get(get_branch)),
        ("/repos/{o}/{r}/rules/branches/{*branch}", get(branch_rules)),
        ("/repos/{o}/{r}/issues", get(list_issues).post(create_issue)),
        ("/repos/{o}/{r}/issues/comments/{id}", patch(update_comment)),
        ("/repos/{o}/{r}/issues/{n}", patch(update_issue)),
        (
            "/repos/{o}/{r}/issues/{n}/comments",
            get(list_comments).post(create_comment),
        ),
        ("/repos/{o}/{r}/issues/{n}/labels", post(add_labels)),
        (
            "/repos/{o}/{r}/issues/{n}/labels/{label}",
            delete(remove_label),
        ),
        ("/repos/{o}/{r}/issues/{n}/reactions", get(list_reactions)),
        ("/repos/{o}/{r}/issues/{n}/timeline", get(list_timeline)),
        ("/repos/{o}/{r}/activity", get(list_activity)),
        ("/repos/{o}/{r}/contents", get(get_root_contents)),
        ("/repos/{o}/{r}/contents/", get(get_root_contents)),
        (
            "/repos/{o}/{r}/contents/{*path}",
            get(get_contents).put(put_contents),
        ),
        ("/repos/{o}/{r}/git/trees/{*ref}", get(get_tree)),
        ("/repos/{o}/{r}/git/ref/{*ref}", get(get_ref)),
        ("/repos/{o}/{r}/git/refs", post(create_ref)),
        ("/repos/{o}/{r}/_loopback/revert", post(push_revert)),
        ("/repos/{o}/{r}/_loopback/label", post(label_as_person)),
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

// ---- helpers ---------------------------------------------------------------------------

fn repo_name(owner: &str, name: &str) -> Result<RepoName, ApiError> {
    RepoName::parse(&format!("{owner}/{name}")).map_err(|_| ApiError::not_found())
}

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

// ---- the App and the installation ------------------------------------------------------

async fn get_app(State(s): Ctx) -> ApiResult {
    let (slug, owner, permissions) = s.memory.read(|w| {
        let owner = w
            .repos
            .first()
            .map_or("loopback".to_owned(), |r| r.name.owner().to_owned());
        (w.bot_slug.clone(), owner, w.installation_permissions())
    });
    let id = render::stable_id("app", &slug);
    let mut app = boilerplate::app(&slug, id, render::user(&s.base_url, &owner));
    app["permissions"] = json!(permissions);
    Ok(json_answer(StatusCode::OK, app))
}

/// `GET /user`: the token's owner. Installation tokens (`ghs_...`, an App's or Actions'
/// `GITHUB_TOKEN`) belong to no user: GitHub answers them 403.
async fn get_user(State(s): Ctx, headers: HeaderMap) -> ApiResult {
    let installation = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().split_once(' '))
        .is_some_and(|(_, token)| token.trim().starts_with("ghs_"));
    if installation {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "Resource not accessible by integration",
        ));
    }
    let login = s
        .memory
        .read(World::bot_login)
        .map_err(|err| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, err.to_string()))?;
    let mut user = render::user(&s.base_url, login.as_str());
    boilerplate::add_missing(&mut user, boilerplate::private_user(login.as_str()));
    Ok(json_answer(StatusCode::OK, user))
}

async fn create_token(State(s): Ctx, Path(_id): Path<String>) -> ApiResult {
    let (slug, permissions) = s
        .memory
        .read(|w| (w.bot_slug.clone(), w.installation_permissions()));
    let token = s.issue_token(&slug);
    let expires = s.memory.read(|w| w.now).plus_hours(1);
    Ok(json_answer(
        StatusCode::CREATED,
        json!({
            "token": token,
            "expires_at": expires.to_string(),
            "permissions": permissions,
            "repository_selection": "all",
        }),
    ))
}

/// The accounts the App is installed on: every owner of the world's repositories, in the
/// order the world first names them; installation `n` (from 1) is the `n`-th.
fn installed_owners(world: &World) -> Vec<&str> {
    let mut owners: Vec<&str> = Vec::new();
    for repo in &world.repos {
        let owner = repo.name.owner();
        if !owners.contains(&owner) {
            owners.push(owner);
        }
    }
    owners
}

/// The installation `id` of the world's App on `owner`'s account, with the world's
/// permissions.
fn installation_of(s: &Shared, world: &World, id: usize, owner: &str) -> Value {
    let slug = &world.bot_slug;
    let app_id = render::stable_id("app", slug);
    let account = render::user(&s.base_url, owner);
    let id = u64::try_from(id).unwrap_or(u64::MAX);
    let mut installation = boilerplate::installation(&s.base_url, id, app_id, slug, account);
    installation["permissions"] = json!(world.installation_permissions());
    installation
}

/// `GET /app/installations` (an App JWT's call on GitHub): one installation per owner.
async fn list_installations(State(s): Ctx, uri: Uri) -> ApiResult {
    let items = s.memory.read(|w| {
        installed_owners(w)
            .into_iter()
            .enumerate()
            .map(|(index, owner)| installation_of(&s, w, index + 1, owner))
            .collect()
    });
    Ok(paged(&s, &uri, items))
}

async fn get_installation(State(s): Ctx, Path((o, r)): Path<(String, String)>) -> ApiResult {
    let name = repo_name(&o, &r)?;
    let value = read(&s, |w| {
        // A repository the App's installation leaves out is not found, as on GitHub.
        if !repo_of(w, &name)?.app_installed {
            return None;
        }
        let (index, owner) = installed_owners(w)
            .into_iter()
            .enumerate()
            .find(|(_, owner)| *owner == name.owner())?;
        Some(installation_of(&s, w, index + 1, owner))
    })?;
    Ok(json_answer(StatusCode::OK, value))
}

/// A repository label as GitHub renders it.
fn label_json(s: &Shared, name: &RepoName, label: &crate::world::RepoLabel) -> Value {
    let id = render::stable_id("label", &format!("{name}\0{}", label.name));
    json!({
        "id": id,
        "node_id": format!("LA_loopback{id}"),
        "url": format!(
            "{}/repos/{name}/labels/{}",
            s.base_url,
            boilerplate::url_path(&label.name)
        ),
        "name": label.name,
        "description": label.description,
        "color": label.color,
        "default": false,
    })
}

/// `GET /repos/{o}/{r}/labels`: the world's labels and those its threads carry.
async fn list_labels(State(s): Ctx, Path((o, r)): Path<(String, String)>, uri: Uri) -> ApiResult {
    let name = repo_name(&o, &r)?;
    let labels = read(&s, |w| {
        repo_of(w, &name).map(crate::world::Repo::all_labels)
    })?;
    let items = labels.iter().map(|l| label_json(&s, &name, l)).collect();
    Ok(paged(&s, &uri, items))
}

/// `POST /repos/{o}/{r}/labels` (`{name, color, description}`): 201 with the label, 422
/// `already_exists` for a name the repository has.
async fn create_label(
    State(s): Ctx,
    Path((o, r)): Path<(String, String)>,
    body: Bytes,
) -> ApiResult {
    let name = repo_name(&o, &r)?;
    let body = body_json(&body)?;
    let label_name = required(&body, "name")?;
    let color = text_field(&body, "color")
        .map(|c| c.trim_start_matches('#').to_owned())
        .unwrap_or_else(|| "ededed".to_owned());
    if color.len() != 6 || !color.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(ApiError::invalid(format!("color `{color}` is invalid")));
    }
    let label = crate::world::RepoLabel {
        name: label_name,
        color,
        description: text_field(&body, "description"),
        created_at: None,
        updated_at: None,
    };
    if !s.memory.create_repo_label(&name, label.clone())? {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Validation Failed: label already_exists",
        ));
    }
    Ok(json_answer(
        StatusCode::CREATED,
        label_json(&s, &name, &label),
    ))
}

/// `PATCH /repos/{o}/{r}/labels/{name}` (`{new_name, color, description}`, each optional):
/// 200 with the label as it is now. A rename shows on every pull request and issue that
/// carries the label, earlier timeline events included, and GitHub's record of the label
/// (GraphQL `updatedAt`) moves to now (decisions/0048). 404 for no such label, 422 when
/// the new name is taken.
async fn edit_label(
    State(s): Ctx,
    Path((o, r, label)): Path<(String, String, String)>,
    body: Bytes,
) -> ApiResult {
    let name = repo_name(&o, &r)?;
    let body = body_json(&body)?;
    let color = text_field(&body, "color").map(|c| c.trim_start_matches('#').to_owned());
    if let Some(color) = &color
        && (color.len() != 6 || !color.chars().all(|c| c.is_ascii_hexdigit()))
    {
        return Err(ApiError::invalid(format!("color `{color}` is invalid")));
    }
    let exists = read(&s, |w| {
        repo_of(w, &name).map(|repo| {
            repo.all_labels()
                .iter()
                .any(|l| l.name.eq_ignore_ascii_case(&label))
        })
    })?;
    if !exists {
        return Err(ApiError::not_found());
    }
    let new_name = text_field(&body, "new_name");
    let edited = s.memory.edit_repo_label(
        &name,
        &label,
        new_name.as_deref(),
        color,
        text_field(&body, "description"),
    )?;
    let Some(edited) = edited else {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Validation Failed: label already_exists",
        ));
    };
    Ok(json_answer(StatusCode::OK, label_json(&s, &name, &edited)))
}

// ---- pull requests ---------------------------------------------------------------------

async fn list_pulls(
    State(s): Ctx,
    Path((o, r)): Path<(String, String)>,
    Query(q): Params,
    uri: Uri,
) -> ApiResult {
    let name = repo_name(&o, &r)?;
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

async fn get_pull(State(s): Ctx, Path((o, r, n)): Path<(String, String, String)>) -> ApiResult {
    let (name, number) = (repo_name(&o, &r)?, number(&n)?);
    s.memory.pull(&name, number).await?;
    Ok(json_answer(StatusCode::OK, full_pull(&s, &name, number)?))
}

async fn list_pull_commits(
    State(s): Ctx,
    Path((o, r, n)): Path<(String, String, String)>,
    uri: Uri,
) -> ApiResult {
    let (name, number) = (repo_name(&o, &r)?, number(&n)?);
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

async fn list_pull_files(
    State(s): Ctx,
    Path((o, r, n)): Path<(String, String, String)>,
    uri: Uri,
) -> ApiResult {
    let (name, number) = (repo_name(&o, &r)?, number(&n)?);
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

async fn merge_pull(
    State(s): Ctx,
    Path((o, r, n)): Path<(String, String, String)>,
    bytes: Bytes,
) -> ApiResult {
    let (name, number) = (repo_name(&o, &r)?, number(&n)?);
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
    let base_ref = webhook::enabled(&s)
        .then(|| {
            read(&s, |w| {
                Some(repo_of(w, &name)?.pull(number)?.base_ref.clone())
            })
            .ok()
        })
        .flatten();
    let before = base_ref
        .as_deref()
        .and_then(|base_ref| webhook::before_push(&s, &name, base_ref));
    let merged = s.memory.merge_pull(&name, number, &request).await?;
    if let Some(base_ref) = &base_ref {
        webhook::push(&s, &name, base_ref, before, std::slice::from_ref(&merged));
    }
    webhook::thread(&s, &name, number, &ThreadChange::Closed, None);
    Ok(json_answer(
        StatusCode::OK,
        json!({ "sha": merged.as_str(), "merged": true, "message": "Pull Request successfully merged" }),
    ))
}

async fn update_branch(
    State(s): Ctx,
    Path((o, r, n)): Path<(String, String, String)>,
    bytes: Bytes,
) -> ApiResult {
    let (name, number) = (repo_name(&o, &r)?, number(&n)?);
    let body = body_json(&bytes)?;
    let expected = match text_field(&body, "expected_head_sha") {
        Some(given) => CommitSha::parse(&given)
            .map_err(|_| ApiError::invalid(format!("expected_head_sha {given} is not a SHA")))?,
        None => read(&s, |w| {
            Some(repo_of(w, &name)?.pull(number)?.head_sha.clone())
        })?,
    };
    // Read only for the webhooks: a missing pull request is the port's 404 to give.
    let head_ref = webhook::enabled(&s)
        .then(|| {
            read(&s, |w| {
                Some(repo_of(w, &name)?.pull(number)?.head_ref.clone())
            })
            .ok()
        })
        .flatten();
    let before = head_ref
        .as_deref()
        .and_then(|head_ref| webhook::before_push(&s, &name, head_ref));
    match s.memory.update_branch(&name, number, &expected).await? {
        UpdateBranchOutcome::Accepted => {
            if let Some(head_ref) = &head_ref {
                branch_updated(&s, &name, number, head_ref, before, &expected);
            }
            Ok(json_answer(
                StatusCode::ACCEPTED,
                json!({
                    "message": "Updating pull request branch.",
                    "url": format!("https://github.com/{name}/pull/{number}"),
                }),
            ))
        }
        UpdateBranchOutcome::Refused { message } => Err(ApiError::invalid(message)),
    }
}

/// The webhooks of a pull request's head moved by update-branch from `before_head`: a
/// `push` of the head branch, then `pull_request` `synchronize`.
fn branch_updated(
    s: &Shared,
    name: &RepoName,
    number: PrNumber,
    head_ref: &str,
    before: Option<webhook::BranchBefore>,
    before_head: &CommitSha,
) {
    let Ok(after) = read(s, |w| {
        Some(repo_of(w, name)?.pull(number)?.head_sha.clone())
    }) else {
        return;
    };
    webhook::push(s, name, head_ref, before, std::slice::from_ref(&after));
    let change = ThreadChange::Synchronize {
        before: before_head.clone(),
        after,
    };
    webhook::thread(s, name, number, &change, None);
}

async fn create_pull(
    State(s): Ctx,
    Path((o, r)): Path<(String, String)>,
    bytes: Bytes,
) -> ApiResult {
    let name = repo_name(&o, &r)?;
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
    webhook::thread(&s, &name, created, &ThreadChange::Opened, None);
    Ok(json_answer(
        StatusCode::CREATED,
        full_pull(&s, &name, created)?,
    ))
}

// ---- commits, branches, checks ---------------------------------------------------------

async fn list_commits(
    State(s): Ctx,
    Path((o, r)): Path<(String, String)>,
    Query(q): Params,
    uri: Uri,
) -> ApiResult {
    let name = repo_name(&o, &r)?;
    let branch = match q.get("sha") {
        Some(branch) => branch.clone(),
        None => default_branch_of(&s, &name)?,
    };
    let contexts = s.memory.branch_commits(&name, &branch, usize::MAX).await?;
    let items = read(&s, |w| {
        let by_sha = commits_by_sha(repo_of(w, &name)?);
        Some(
            contexts
                .iter()
                .filter_map(|c| by_sha.get(&c.sha).copied())
                .map(|c| render::commit(&s.base_url, &name, c))
                .collect::<Vec<_>>(),
        )
    })?;
    Ok(paged(&s, &uri, items))
}

async fn get_commit(
    State(s): Ctx,
    Path((o, r, sha_text)): Path<(String, String, String)>,
) -> ApiResult {
    let (name, sha) = (repo_name(&o, &r)?, sha(&sha_text)?);
    s.memory.commit(&name, &sha).await?;
    let value = read(&s, |w| {
        let commit = repo_of(w, &name)?.commit(&sha)?;
        Some(render::commit(&s.base_url, &name, commit))
    })?;
    Ok(json_answer(StatusCode::OK, value))
}

/// The commits reachable from `sha`, itself included, in breadth-first order.
fn ancestors(repo: &Repo, sha: &CommitSha) -> Vec<CommitSha> {
    let mut seen: BTreeSet<CommitSha> = BTreeSet::new();
    let mut queue = std::collections::VecDeque::from([sha.clone()]);
    let mut order = Vec::new();
    while let Some(next) = queue.pop_front() {
        if !seen.insert(next.clone()) {
            continue;
        }
        if let Some(commit) = repo.commit(&next) {
            queue.extend(commit.parents.iter().cloned());
        }
        order.push(next);
    }
    order
}

/// `GET /compare/{base}...{head}`: the commits reachable from the head and not from the
/// base (one page of them, `page` and `per_page` as GitHub reads them, default 250 on the
/// first page), the counts, the status and the merge base. No `files`: mp reads none.
async fn compare(
    State(s): Ctx,
    Path((o, r, basehead)): Path<(String, String, String)>,
    Query(q): Params,
) -> ApiResult {
    let name = repo_name(&o, &r)?;
    let Some((base_text, head_text)) = basehead.split_once("...") else {
        return Err(ApiError::not_found());
    };
    let (base, head) = (sha(base_text)?, sha(head_text)?);
    let comparison = s.memory.compare(&name, &base, &head, usize::MAX).await?;
    let per_page: usize = q
        .get("per_page")
        .and_then(|v| v.parse().ok())
        .map_or(250, |n: usize| n.clamp(1, 250));
    let page: usize = q
        .get("page")
        .and_then(|v| v.parse().ok())
        .map_or(1, |n: usize| n.max(1));
    let value = read(&s, |w| {
        let repo = repo_of(w, &name)?;
        let from_base = ancestors(repo, &base);
        let from_head = ancestors(repo, &head);
        let merge_base = from_head.iter().find(|sha| from_base.contains(sha))?;
        let behind_by = from_base
            .iter()
            .filter(|sha| !from_head.contains(sha))
            .count();
        let ahead_by = comparison.total;
        let status = match (ahead_by, behind_by) {
            (0, 0) => "identical",
            (_, 0) => "ahead",
            (0, _) => "behind",
            _ => "diverged",
        };
        let by_sha = commits_by_sha(repo);
        let commits: Vec<Value> = comparison
            .commits
            .iter()
            .skip((page - 1) * per_page)
            .take(per_page)
            .filter_map(|c| by_sha.get(&c.sha).copied())
            .map(|c| render::commit(&s.base_url, &name, c))
            .collect();
        let url = format!("{}/repos/{name}/compare/{basehead}", s.base_url);
        let html = format!("https://github.com/{name}/compare/{basehead}");
        Some(serde_json::json!({
            "url": url,
            "html_url": html,
            "permalink_url": format!("https://github.com/{name}/compare/{}...{}", base.short(), head.short()),
            "diff_url": format!("{html}.diff"),
            "patch_url": format!("{html}.patch"),
            "base_commit": render::commit(&s.base_url, &name, repo.commit(&base)?),
            "merge_base_commit": render::commit(&s.base_url, &name, repo.commit(merge_base)?),
            "status": status,
            "ahead_by": ahead_by,
            "behind_by": behind_by,
            "total_commits": ahead_by,
            "commits": commits,
        }))
    })?;
    Ok(json_answer(StatusCode::OK, value))
}

/// The runs of a commit that `GET /commits/{sha}/check-runs` lists, each with its position
/// on the commit (its id). `filter=latest` (GitHub's default) keeps the most recently
/// created run of each name in each check suite, which is one per App here; `filter=all`
/// keeps every run. `check_name`, `status` and `app_id` then narrow the list.
fn listed_runs<'r>(
    runs: &'r [CheckRun],
    query: &BTreeMap<String, String>,
) -> Vec<(usize, &'r CheckRun)> {
    let mut listed: Vec<(usize, &CheckRun)> = runs.iter().enumerate().collect();
    if query.get("filter").is_none_or(|filter| filter != "all") {
        let mut seen = BTreeSet::new();
        listed.reverse();
        listed.retain(|(_, run)| seen.insert((run.app_slug.as_deref(), run.name.as_str())));
        listed.reverse();
    }
    let app_id = |run: &CheckRun| {
        run.app_slug
            .as_deref()
            .map(|slug| render::stable_id("app", slug).to_string())
    };
    listed.retain(|(_, run)| {
        query.get("check_name").is_none_or(|name| *name == run.name)
            && query
                .get("status")
                .is_none_or(|status| status == run.status.as_str())
            && query
                .get("app_id")
                .is_none_or(|id| app_id(run).as_ref() == Some(id))
    });
    listed
}

async fn list_check_runs(
    State(s): Ctx,
    Path((o, r, sha_text)): Path<(String, String, String)>,
    Query(q): Params,
    uri: Uri,
) -> ApiResult {
    let (name, sha) = (repo_name(&o, &r)?, sha(&sha_text)?);
    let runs = s.memory.check_runs(&name, &sha).await?;
    let listed = listed_runs(&runs, &q);
    let total = listed.len();
    let items: Vec<Value> = listed
        .into_iter()
        .map(|(index, run)| render::check_run(&s.base_url, &name, &sha, index, run))
        .collect();
    let page = paginate(items, &uri, &s.base_url);
    Ok(linked(
        json!({ "total_count": total, "check_runs": page.items }),
        page.link,
    ))
}

// ---- GitHub Actions workflow runs (decisions/0047) --------------------------------------

/// `GET /repos/{o}/{r}/actions/runs`: the world's workflow runs, newest commit first, of
/// the commit `head_sha` names (every commit without it). GitHub answers an empty list,
/// not 404, for a SHA it has no run of.
async fn list_workflow_runs(
    State(s): Ctx,
    Path((o, r)): Path<(String, String)>,
    Query(q): Params,
    uri: Uri,
) -> ApiResult {
    let name = repo_name(&o, &r)?;
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
async fn list_workflow_jobs(
    State(s): Ctx,
    Path((o, r, run_id)): Path<(String, String, String)>,
    uri: Uri,
) -> ApiResult {
    let name = repo_name(&o, &r)?;
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

// ---- check runs published by a CI App ---------------------------------------------------

/// Loopback extension (not GitHub): an installation token of the App `slug`, so a test or
/// a script can publish check runs as that App (`POST /repos/{o}/{r}/check-runs`).
async fn create_app_token(State(s): Ctx, Path(slug): Path<String>) -> ApiResult {
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

/// The App of the request's installation token; GitHub lets only Apps write check runs.
fn calling_app(s: &Shared, headers: &HeaderMap) -> Result<String, ApiError> {
    s.token_app(headers).ok_or_else(|| {
        ApiError::new(
            StatusCode::FORBIDDEN,
            "You must authenticate via a GitHub App.",
        )
    })
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
async fn create_check_run(
    State(s): Ctx,
    Path((o, r)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult {
    let name = repo_name(&o, &r)?;
    let app = calling_app(&s, &headers)?;
    let body = body_json(&body)?;
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
async fn get_check_run(
    State(s): Ctx,
    Path((o, r, id)): Path<(String, String, String)>,
) -> ApiResult {
    let name = repo_name(&o, &r)?;
    let (head, index, run) = find_check_run(&s, &name, &id)?;
    Ok(json_answer(
        StatusCode::OK,
        render::check_run(&s.base_url, &name, &head, index, &run),
    ))
}

/// `PATCH /repos/{o}/{r}/check-runs/{id}`: the App that created a run updates it.
async fn update_check_run(
    State(s): Ctx,
    Path((o, r, id)): Path<(String, String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult {
    let name = repo_name(&o, &r)?;
    let app = calling_app(&s, &headers)?;
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

async fn list_commit_pulls(
    State(s): Ctx,
    Path((o, r, sha_text)): Path<(String, String, String)>,
    uri: Uri,
) -> ApiResult {
    let (name, sha) = (repo_name(&o, &r)?, sha(&sha_text)?);
    let pulls = s.memory.commit_pulls(&name, &sha).await?;
    let items = read(&s, |w| {
        let repo = repo_of(w, &name)?;
        Some(
            pulls
                .iter()
                .filter_map(|p| repo.pull(p.number))
                .map(|p| render::pull(&s.base_url, repo, p, w.now, false))
                .collect::<Vec<_>>(),
        )
    })?;
    Ok(paged(&s, &uri, items))
}

async fn get_repo(State(s): Ctx, Path((o, r)): Path<(String, String)>) -> ApiResult {
    let name = repo_name(&o, &r)?;
    let default_branch = s.memory.default_branch(&name).await?;
    Ok(json_answer(
        StatusCode::OK,
        super::render::repository(&s.base_url, &name, &default_branch),
    ))
}

/// `GET /repos/{o}/{r}/rules/branches/{branch}`: the rules of the repository's active
/// rulesets that apply to the branch (the world's `branch_rules`), one ruleset per
/// repository in the fake. The branch need not exist, as on GitHub.
async fn branch_rules(
    State(s): Ctx,
    Path((o, r, branch)): Path<(String, String, String)>,
    uri: Uri,
) -> ApiResult {
    let name = repo_name(&o, &r)?;
    let rules = read(&s, |w| {
        repo_of(w, &name).map(|repo| repo.branch_rules.get(&branch).cloned().unwrap_or_default())
    })?;
    let ruleset_id = render::stable_id("ruleset", name.as_str());
    let items = rules
        .iter()
        .map(|rule| {
            json!({
                "type": rule,
                "ruleset_source_type": "Repository",
                "ruleset_source": name.as_str(),
                "ruleset_id": ruleset_id,
            })
        })
        .collect();
    Ok(paged(&s, &uri, items))
}

async fn get_branch(
    State(s): Ctx,
    Path((o, r, branch)): Path<(String, String, String)>,
) -> ApiResult {
    let name = repo_name(&o, &r)?;
    let head = s
        .memory
        .branch_head(&name, &branch)
        .await
        .map_err(|err| match err {
            GitHubError::NotFound { .. } => {
                ApiError::new(StatusCode::NOT_FOUND, "Branch not found")
            }
            other => ApiError::from(other),
        })?;
    let base = &s.base_url;
    // GitHub sends the head as a full commit.
    let commit = s
        .memory
        .read(|w| {
            let commit = repo_of(w, &name)?.commit(&head)?;
            Some(render::commit(base, &name, commit))
        })
        .unwrap_or_else(|| {
            json!({ "sha": head.as_str(), "url": format!("{base}/repos/{name}/commits/{head}") })
        });
    let encoded = boilerplate::url_path(&branch);
    let mut value = json!({
        "name": branch,
        "commit": commit,
        "protected": false,
        "_links": {
            "self": format!("{base}/repos/{name}/branches/{encoded}"),
            "html": format!("https://github.com/{name}/tree/{encoded}"),
        },
    });
    boilerplate::add_missing(&mut value, boilerplate::no_protection(base, &name, &branch));
    Ok(json_answer(StatusCode::OK, value))
}

// ---- issues, comments, labels, reactions, timeline -------------------------------------

async fn list_issues(
    State(s): Ctx,
    Path((o, r)): Path<(String, String)>,
    Query(q): Params,
    uri: Uri,
) -> ApiResult {
    let name = repo_name(&o, &r)?;
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

async fn create_issue(
    State(s): Ctx,
    Path((o, r)): Path<(String, String)>,
    bytes: Bytes,
) -> ApiResult {
    let name = repo_name(&o, &r)?;
    let body = body_json(&bytes)?;
    let issue = NewIssue {
        title: required(&body, "title")?,
        body: text_field(&body, "body").unwrap_or_default(),
        labels: string_list(body.get("labels")),
    };
    let created = s.memory.create_issue(&name, &issue).await?;
    webhook::thread(&s, &name, created.number, &ThreadChange::Opened, None);
    for label in &created.labels {
        let change = ThreadChange::Labeled(label.clone());
        webhook::thread(&s, &name, created.number, &change, None);
    }
    Ok(json_answer(
        StatusCode::CREATED,
        render::issue(&s.base_url, &created, 0),
    ))
}

async fn update_issue(
    State(s): Ctx,
    Path((o, r, n)): Path<(String, String, String)>,
    bytes: Bytes,
) -> ApiResult {
    let (name, number) = (repo_name(&o, &r)?, number(&n)?);
    let body = body_json(&bytes)?;
    let state = text_field(&body, "state");
    if state
        .as_deref()
        .is_some_and(|st| st != "closed" && st != "open")
    {
        return Err(ApiError::invalid("state must be open or closed"));
    }
    // The body and state before, for the webhooks.
    let (body_before, was_open) = match s.memory.read(|w| {
        render::thread_issue(repo_of(w, &name)?, number)
            .map(|(issue, _)| (issue.body, issue.state == IssueState::Open))
    }) {
        Some((body, open)) => (Some(body), open),
        None => (None, false),
    };
    if let Some(text) = text_field(&body, "body") {
        s.memory.update_issue_body(&name, number, &text).await?;
        if let Some(from) = body_before.filter(|from| *from != text) {
            let change = ThreadChange::Edited { body_from: from };
            webhook::thread(&s, &name, number, &change, None);
        }
    }
    match state.as_deref() {
        Some("closed") => {
            s.memory.close_issue(&name, number).await?;
            if was_open {
                webhook::thread(&s, &name, number, &ThreadChange::Closed, None);
            }
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

async fn list_comments(
    State(s): Ctx,
    Path((o, r, n)): Path<(String, String, String)>,
    uri: Uri,
) -> ApiResult {
    let (name, number) = (repo_name(&o, &r)?, number(&n)?);
    let comments = s.memory.comments(&name, number).await?;
    let items = comments
        .iter()
        .map(|c| render::comment(&s.base_url, &name, Some(number), c))
        .collect();
    Ok(paged(&s, &uri, items))
}

async fn create_comment(
    State(s): Ctx,
    Path((o, r, n)): Path<(String, String, String)>,
    bytes: Bytes,
) -> ApiResult {
    let (name, number) = (repo_name(&o, &r)?, number(&n)?);
    let body = body_json(&bytes)?;
    let text = required(&body, "body")?;
    let comment = s.memory.create_comment(&name, number, &text).await?;
    webhook::issue_comment(&s, &name, number, comment.id, &CommentChange::Created);
    Ok(json_answer(
        StatusCode::CREATED,
        render::comment(&s.base_url, &name, Some(number), &comment),
    ))
}

async fn update_comment(
    State(s): Ctx,
    Path((o, r, id)): Path<(String, String, String)>,
    bytes: Bytes,
) -> ApiResult {
    let name = repo_name(&o, &r)?;
    let id = CommentId::new(id.parse::<u64>().map_err(|_| ApiError::not_found())?);
    let body = body_json(&bytes)?;
    let text = required(&body, "body")?;
    let before = s.memory.read(|w| {
        let repo = repo_of(w, &name)?;
        let pulls = repo.pulls.iter().map(|p| (p.number, &p.comments));
        let issues = repo.issues.iter().map(|i| (i.number, &i.comments));
        pulls.chain(issues).find_map(|(number, comments)| {
            let comment = comments.iter().find(|c| c.id == id)?;
            Some((number, comment.body.clone()))
        })
    });
    s.memory.update_comment(&name, id, &text).await?;
    if let Some((number, body_from)) = before {
        let change = CommentChange::Edited { body_from };
        webhook::issue_comment(&s, &name, number, id, &change);
    }
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
fn label_array(s: &Shared, name: &RepoName, number: PrNumber) -> Result<Value, ApiError> {
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

async fn add_labels(
    State(s): Ctx,
    Path((o, r, n)): Path<(String, String, String)>,
    bytes: Bytes,
) -> ApiResult {
    let (name, number) = (repo_name(&o, &r)?, number(&n)?);
    let body = body_json(&bytes)?;
    // GitHub takes `{"labels": [..]}` or a bare array.
    let labels = match &body {
        Value::Array(_) => string_list(Some(&body)),
        _ => string_list(body.get("labels")),
    };
    let present = s
        .memory
        .read(|w| render::thread_labels(repo_of(w, &name)?, number))
        .unwrap_or_default();
    s.memory.add_labels(&name, number, &labels).await?;
    let mut applied: Vec<&String> = Vec::new();
    for label in &labels {
        if !present.contains(label) && !applied.contains(&label) {
            applied.push(label);
            let change = ThreadChange::Labeled(label.clone());
            webhook::thread(&s, &name, number, &change, None);
        }
    }
    Ok(json_answer(StatusCode::OK, label_array(&s, &name, number)?))
}

async fn remove_label(
    State(s): Ctx,
    Path((o, r, n, label)): Path<(String, String, String, String)>,
) -> ApiResult {
    let (name, number) = (repo_name(&o, &r)?, number(&n)?);
    let present = s.memory.read(|w| {
        repo_of(w, &name)
            .and_then(|repo| render::thread_labels(repo, number))
            .map(|labels| labels.contains(&label))
    });
    if present == Some(false) {
        return Err(ApiError::new(StatusCode::NOT_FOUND, "Label does not exist"));
    }
    s.memory.remove_label(&name, number, &label).await?;
    if present == Some(true) {
        let change = ThreadChange::Unlabeled(label.clone());
        webhook::thread(&s, &name, number, &change, None);
    }
    Ok(json_answer(StatusCode::OK, label_array(&s, &name, number)?))
}

async fn list_reactions(
    State(s): Ctx,
    Path((o, r, n)): Path<(String, String, String)>,
    uri: Uri,
) -> ApiResult {
    let (name, number) = (repo_name(&o, &r)?, number(&n)?);
    let reactions = s.memory.reactions(&name, number).await?;
    let items = reactions
        .iter()
        .enumerate()
        .map(|(index, reaction)| render::reaction(&s.base_url, &name, number, index, reaction))
        .collect();
    Ok(paged(&s, &uri, items))
}

async fn list_timeline(
    State(s): Ctx,
    Path((o, r, n)): Path<(String, String, String)>,
    uri: Uri,
) -> ApiResult {
    let (name, number) = (repo_name(&o, &r)?, number(&n)?);
    let events = s.memory.label_events(&name, number).await?;
    let items = events
        .iter()
        .enumerate()
        .map(|(index, event)| render::label_event(&s.base_url, &name, number, index, event))
        .collect();
    Ok(paged(&s, &uri, items))
}

/// `GET /activity?ref=`: the updates of one branch, newest first. GitHub accepts the
/// branch name or `refs/heads/<name>`; without `ref` the fake serves nothing it can
/// attribute, so it answers 422 rather than pretend to list the whole repository.
async fn list_activity(
    State(s): Ctx,
    Path((o, r)): Path<(String, String)>,
    Query(q): Params,
    uri: Uri,
) -> ApiResult {
    let name = repo_name(&o, &r)?;
    let Some(git_ref) = q.get("ref") else {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "the loopback GitHub lists activity per branch: pass `ref`",
        ));
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

// ---- contents, trees, refs, reverts ----------------------------------------------------

/// Base64 wrapped at 60 columns with `\n`, as GitHub sends file contents.
fn wrapped_base64(bytes: &[u8]) -> String {
    let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
    let mut out = String::with_capacity(encoded.len() + encoded.len() / 60 + 1);
    for (index, c) in encoded.chars().enumerate() {
        if index > 0 && index % 60 == 0 {
            out.push('\n');
        }
        out.push(c);
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

async fn get_contents(
    State(s): Ctx,
    Path((o, r, path)): Path<(String, String, String)>,
    Query(q): Params,
) -> ApiResult {
    contents(&s, &repo_name(&o, &r)?, &path, &q).await
}

/// `GET /contents` and `GET /contents/`: the root directory.
async fn get_root_contents(
    State(s): Ctx,
    Path((o, r)): Path<(String, String)>,
    Query(q): Params,
) -> ApiResult {
    contents(&s, &repo_name(&o, &r)?, "", &q).await
}

/// The commit a tree listing names for `git_ref`: a branch's head, else `git_ref` itself.
fn resolved_ref(s: &Shared, name: &RepoName, git_ref: &str) -> String {
    s.memory
        .read(|w| repo_of(w, name)?.branch_head(git_ref).cloned())
        .map_or_else(|| git_ref.to_owned(), |sha| sha.to_string())
}

/// The SHA given to `directory`'s tree at `resolved` (the world keeps no trees).
fn directory_sha(resolved: &str, directory: &str) -> String {
    hex::encode(Sha1::digest(format!("tree {resolved} {directory}")))
}

/// `path` at `?ref=` (the default branch without it): a file as an object with its content,
/// a directory (the root for an empty path) as the array of its entries.
async fn contents(
    s: &Shared,
    name: &RepoName,
    path: &str,
    q: &BTreeMap<String, String>,
) -> ApiResult {
    let git_ref = match q.get("ref") {
        Some(git_ref) => git_ref.clone(),
        None => default_branch_of(s, name)?,
    };
    let git_ref = git_ref.as_str();
    let path = path.trim_matches('/');
    let file = match path {
        "" => None,
        path => s.memory.file(name, path, git_ref).await?,
    };
    let Some(file) = file else {
        return directory(s, name, path, git_ref).await;
    };
    let file_name = path.rsplit('/').next().unwrap_or(path);
    let mut value = json!({
        "type": "file",
        "encoding": "base64",
        "size": file.text.len(),
        "name": file_name,
        "path": path,
        "sha": file.blob_sha,
        "content": wrapped_base64(file.text.as_bytes()),
    });
    boilerplate::add_missing(
        &mut value,
        boilerplate::content_file(&s.base_url, name, path, git_ref, &file.blob_sha),
    );
    Ok(json_answer(StatusCode::OK, value))
}

/// The entries of the directory `path` at `git_ref` (the root when empty): its files and
/// subdirectories in git's tree order, which sorts a directory as if its name ended in `/`.
/// A path that names nothing is a 404.
async fn directory(s: &Shared, name: &RepoName, path: &str, git_ref: &str) -> ApiResult {
    let tree = s.memory.tree(name, git_ref).await?;
    let prefix = match path {
        "" => String::new(),
        path => format!("{path}/"),
    };
    let resolved = resolved_ref(s, name, git_ref);
    let base = &s.base_url;
    let mut entries: BTreeMap<String, Value> = BTreeMap::new();
    for entry in &tree.entries {
        let Some(rest) = entry.path.strip_prefix(&prefix) else {
            continue;
        };
        if let Some((child, _)) = rest.split_once('/') {
            let child_path = format!("{prefix}{child}");
            entries.entry(format!("{child}/")).or_insert_with(|| {
                let sha = directory_sha(&resolved, &child_path);
                let mut value = json!({
                    "type": "dir", "size": 0, "name": child, "path": child_path, "sha": sha,
                });
                boilerplate::add_missing(
                    &mut value,
                    boilerplate::content_dir(base, name, &child_path, git_ref, &sha),
                );
                value
            });
            continue;
        }
        let size = s
            .memory
            .file(name, &entry.path, git_ref)
            .await?
            .map_or(0, |file| file.text.len());
        let mut value = json!({
            "type": "file", "size": size, "name": rest, "path": entry.path, "sha": entry.blob_sha,
        });
        boilerplate::add_missing(
            &mut value,
            boilerplate::content_file(base, name, &entry.path, git_ref, &entry.blob_sha),
        );
        entries.insert(rest.to_owned(), value);
    }
    if entries.is_empty() {
        return Err(ApiError::not_found());
    }
    Ok(json_answer(
        StatusCode::OK,
        Value::Array(entries.into_values().collect()),
    ))
}

async fn put_contents(
    State(s): Ctx,
    Path((o, r, path)): Path<(String, String, String)>,
    bytes: Bytes,
) -> ApiResult {
    let name = repo_name(&o, &r)?;
    let body = body_json(&bytes)?;
    let message = required(&body, "message")?;
    let encoded: String = required(&body, "content")?
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.as_bytes())
        .map_err(|_| ApiError::invalid("content is not valid Base64"))?;
    let text = String::from_utf8(decoded).map_err(|_| {
        ApiError::invalid("content is not UTF-8 text (the loopback world keeps text)")
    })?;
    let expected = text_field(&body, "sha");
    let branch = match text_field(&body, "branch") {
        Some(branch) => branch,
        None => default_branch_of(&s, &name)?,
    };
    let write = FileWrite {
        branch: branch.clone(),
        path: path.clone(),
        text,
        expected_blob_sha: expected.clone(),
        message: message.clone(),
    };
    // 201 when the file is created, 200 when it is replaced (a `sha` given for a file
    // that does not exist is ignored, as GitHub does).
    let existed = read(&s, |w| {
        let repo = repo_of(w, &name)?;
        Some(crate::memory::history::branch_files(repo, &branch).contains_key(&path))
    })
    .unwrap_or(false);
    let before = webhook::before_push(&s, &name, &branch);
    let blob = s
        .memory
        .put_file(&name, &write)
        .await
        .map_err(|err| match err {
            // A missing `sha` for an existing file is a validation failure (422); a wrong
            // one a conflict (409). Both carry GitHub's own message.
            GitHubError::Conflict { message, .. } if expected.is_none() => ApiError {
                status: StatusCode::UNPROCESSABLE_ENTITY,
                message,
            },
            other => ApiError::from(other),
        })?;
    let commit = read(&s, |w| repo_of(w, &name)?.branch_head(&branch).cloned())?;
    webhook::push(&s, &name, &branch, before, std::slice::from_ref(&commit));
    let status = if existed {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    };
    let base = &s.base_url;
    let file_name = path.rsplit('/').next().unwrap_or(&path);
    Ok(json_answer(
        status,
        json!({
            "content": {
                "type": "file",
                "name": file_name,
                "path": path,
                "sha": blob,
                "size": write.text.len(),
                "url": format!("{base}/repos/{name}/contents/{path}?ref={branch}"),
            },
            "commit": {
                "sha": commit.as_str(),
                "message": message,
                "url": format!("{base}/repos/{name}/git/commits/{commit}"),
            },
        }),
    ))
}

async fn get_tree(
    State(s): Ctx,
    Path((o, r, git_ref)): Path<(String, String, String)>,
    Query(q): Params,
) -> ApiResult {
    let name = repo_name(&o, &r)?;
    let recursive = q
        .get("recursive")
        .is_some_and(|v| !v.is_empty() && v != "0" && v != "false");
    let tree = s.memory.tree(&name, &git_ref).await?;
    let resolved = resolved_ref(&s, &name, &git_ref);
    let mut entries: BTreeMap<String, Value> = BTreeMap::new();
    for entry in &tree.entries {
        // Each directory above the file gets a `tree` entry, as a recursive listing has.
        for (at, _) in entry.path.match_indices('/') {
            let directory = &entry.path[..at];
            entries.entry(directory.to_owned()).or_insert_with(|| {
                let sha = directory_sha(&resolved, directory);
                json!({ "path": directory, "mode": "040000", "type": "tree", "sha": sha })
            });
        }
        entries.insert(
            entry.path.clone(),
            json!({ "path": entry.path, "mode": "100644", "type": "blob", "sha": entry.blob_sha }),
        );
    }
    let listed: Vec<Value> = entries
        .into_iter()
        .filter(|(path, _)| recursive || !path.contains('/'))
        .map(|(_, value)| value)
        .collect();
    let base = &s.base_url;
    Ok(json_answer(
        StatusCode::OK,
        json!({
            "sha": resolved,
            "url": format!("{base}/repos/{name}/git/trees/{resolved}"),
            "truncated": tree.truncated,
            "tree": listed,
        }),
    ))
}

async fn create_ref(
    State(s): Ctx,
    Path((o, r)): Path<(String, String)>,
    bytes: Bytes,
) -> ApiResult {
    let name = repo_name(&o, &r)?;
    let body = body_json(&bytes)?;
    let full_ref = required(&body, "ref")?;
    let branch = full_ref
        .strip_prefix("refs/heads/")
        .ok_or_else(|| ApiError::invalid(format!("{full_ref} is not a valid branch reference")))?
        .to_owned();
    let sha_text = required(&body, "sha")?;
    let target = CommitSha::parse(&sha_text)
        .map_err(|_| ApiError::invalid(format!("sha {sha_text} is not a commit SHA")))?;
    let before = webhook::before_creation(&s, &name, None);
    s.memory
        .create_branch(&name, &branch, &target)
        .await
        .map_err(|err| match err {
            GitHubError::Conflict { .. } => ApiError::invalid("Reference already exists"),
            other => ApiError::from(other),
        })?;
    webhook::push(&s, &name, &branch, before, &[]);
    Ok(json_answer(
        StatusCode::CREATED,
        git_ref_value(&s.base_url, &name, &full_ref, &target),
    ))
}

/// A reference as GitHub's git database shows it: `full_ref` (`refs/heads/main`) at the
/// commit `target`.
fn git_ref_value(base: &str, name: &RepoName, full_ref: &str, target: &CommitSha) -> Value {
    let id = render::stable_id("ref", &format!("{name}:{full_ref}"));
    json!({
        "ref": full_ref,
        "node_id": format!("REF_loopback{id}"),
        "url": format!("{base}/repos/{name}/git/{}", boilerplate::url_path(full_ref)),
        "object": {
            "sha": target.as_str(),
            "type": "commit",
            "url": format!("{base}/repos/{name}/git/commits/{target}"),
        },
    })
}

/// `GET /git/ref/{ref}`: one reference named without `refs/`, e.g. `heads/main` (the world
/// has branches only, so any other reference is a 404).
async fn get_ref(
    State(s): Ctx,
    Path((o, r, git_ref)): Path<(String, String, String)>,
) -> ApiResult {
    let name = repo_name(&o, &r)?;
    let branch = git_ref
        .strip_prefix("heads/")
        .filter(|branch| !branch.is_empty())
        .ok_or_else(ApiError::not_found)?;
    let head = s.memory.branch_head(&name, branch).await?;
    Ok(json_answer(
        StatusCode::OK,
        git_ref_value(&s.base_url, &name, &format!("refs/{git_ref}"), &head),
    ))
}

async fn push_revert(
    State(s): Ctx,
    Path((o, r)): Path<(String, String)>,
    bytes: Bytes,
) -> ApiResult {
    let name = repo_name(&o, &r)?;
    let body = body_json(&bytes)?;
    let reverted = sha(&required(&body, "sha")?)?;
    let branch = required(&body, "branch")?;
    let message = required(&body, "message")?;
    // The revert branch starts from `main` with the default branch's files, as the
    // world's reverts do.
    let default_branch = default_branch_of(&s, &name).ok();
    let before = webhook::before_creation(&s, &name, default_branch.as_deref());
    let revert = s
        .memory
        .push_revert(&name, &reverted, &branch, &message)
        .await?;
    webhook::push(&s, &name, &branch, before, std::slice::from_ref(&revert));
    Ok(json_answer(
        StatusCode::CREATED,
        json!({ "sha": revert.as_str() }),
    ))
}

/// Loopback extension (not GitHub): a person applies a label, `{"number": N, "label": L,
/// "actor": LOGIN}`, at the world's clock, recorded as a world file records a human's
/// label; a `pull_request` (or `issues`) `labeled` webhook names `actor` as its sender.
/// Answers the thread's labels.
async fn label_as_person(
    State(s): Ctx,
    Path((o, r)): Path<(String, String)>,
    bytes: Bytes,
) -> ApiResult {
    let name = repo_name(&o, &r)?;
    let body = body_json(&bytes)?;
    let number = body
        .get("number")
        .and_then(Value::as_u64)
        .map(PrNumber::new)
        .ok_or_else(|| ApiError::invalid("Invalid request: `number` wasn't supplied"))?;
    let label = required(&body, "label")?;
    if label.trim().is_empty() {
        return Err(ApiError::invalid("Invalid request: `label` is empty"));
    }
    let actor = required(&body, "actor")?;
    let actor = Login::parse(&actor)
        .map_err(|_| ApiError::invalid(format!("Invalid request: `{actor}` is not a login")))?;
    if s.memory.apply_label_as(&name, number, &label, &actor)? {
        let change = ThreadChange::Labeled(label);
        webhook::thread(&s, &name, number, &change, Some(&actor));
    }
    Ok(json_answer(StatusCode::OK, label_array(&s, &name, number)?))
}
