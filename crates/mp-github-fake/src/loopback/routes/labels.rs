//! A repository's labels: list, create and edit (a rename shows everywhere the label is,
//! decisions/0048).

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use mp_core::ids::RepoName;
use serde_json::{Value, json};

use super::{
    ApiError, ApiResult, Ctx, RepoPath, RepoPathWith, body_json, json_answer, paged, read, repo_of,
    required, text_field,
};
use crate::loopback::boilerplate;
use crate::loopback::render;
use crate::loopback::state::Shared;

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
pub(super) async fn list_labels(State(s): Ctx, RepoPath(name): RepoPath, uri: Uri) -> ApiResult {
    let labels = read(&s, |w| {
        repo_of(w, &name).map(crate::world::Repo::all_labels)
    })?;
    let items = labels.iter().map(|l| label_json(&s, &name, l)).collect();
    Ok(paged(&s, &uri, items))
}

/// `POST /repos/{o}/{r}/labels` (`{name, color, description}`): 201 with the label, 422
/// `already_exists` for a name the repository has.
pub(super) async fn create_label(
    State(s): Ctx,
    RepoPath(name): RepoPath,
    body: Bytes,
) -> ApiResult {
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
pub(super) async fn edit_label(
    State(s): Ctx,
    RepoPathWith(name, label): RepoPathWith,
    body: Bytes,
) -> ApiResult {
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
