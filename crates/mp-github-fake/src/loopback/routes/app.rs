//! The App and its installations: `GET /app`, `GET /user`, installation tokens and the
//! installations of the world's owners.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use serde_json::{Value, json};

use super::{ApiError, ApiResult, Ctx, RepoPath, json_answer, paged, read, repo_of};
use crate::loopback::boilerplate;
use crate::loopback::render;
use crate::loopback::state::Shared;
use crate::world::World;

pub(super) async fn get_app(State(s): Ctx) -> ApiResult {
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
pub(super) async fn get_user(State(s): Ctx, headers: HeaderMap) -> ApiResult {
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

pub(super) async fn create_token(State(s): Ctx, Path(_id): Path<String>) -> ApiResult {
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
pub(super) async fn list_installations(State(s): Ctx, uri: Uri) -> ApiResult {
    let items = s.memory.read(|w| {
        installed_owners(w)
            .into_iter()
            .enumerate()
            .map(|(index, owner)| installation_of(&s, w, index + 1, owner))
            .collect()
    });
    Ok(paged(&s, &uri, items))
}

pub(super) async fn get_installation(State(s): Ctx, RepoPath(name): RepoPath) -> ApiResult {
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
