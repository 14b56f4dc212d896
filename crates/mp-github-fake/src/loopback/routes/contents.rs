//! Contents, trees, refs, merges and reverts: files and directories at a ref, a file
//! written to a branch, a tree, a reference created or moved, a commit merged into a
//! branch, and the loopback's revert push and person's label.

use std::collections::BTreeMap;

use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use base64::Engine as _;
use mp_core::ids::{CommitSha, Login, PrNumber, RepoName};
use mp_core::port::{FileWrite, GitHub, GitHubError, GitHubHistory};
use serde_json::{Value, json};
use sha1::{Digest, Sha1};

use super::issues::label_array;
use super::{
    ApiError, ApiResult, Ctx, Params, RepoPath, RepoPathWith, body_json, default_branch_of,
    json_answer, read, repo_of, required, sha, text_field,
};
use crate::loopback::boilerplate;
use crate::loopback::render;
use crate::loopback::state::Shared;
use crate::loopback::webhook::{self, ThreadChange};

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

pub(super) async fn get_contents(
    State(s): Ctx,
    RepoPathWith(name, path): RepoPathWith,
    Query(q): Params,
) -> ApiResult {
    contents(&s, &name, &path, &q).await
}

/// `GET /contents` and `GET /contents/`: the root directory.
pub(super) async fn get_root_contents(
    State(s): Ctx,
    RepoPath(name): RepoPath,
    Query(q): Params,
) -> ApiResult {
    contents(&s, &name, "", &q).await
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

pub(super) async fn put_contents(
    State(s): Ctx,
    RepoPathWith(name, path): RepoPathWith,
    bytes: Bytes,
) -> ApiResult {
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

pub(super) async fn get_tree(
    State(s): Ctx,
    RepoPathWith(name, git_ref): RepoPathWith,
    Query(q): Params,
) -> ApiResult {
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

pub(super) async fn create_ref(State(s): Ctx, RepoPath(name): RepoPath, bytes: Bytes) -> ApiResult {
    let body = body_json(&bytes)?;
    let full_ref = required(&body, "ref")?;
    let branch = full_ref
        .strip_prefix("refs/heads/")
        .ok_or_else(|| ApiError::invalid(format!("{full_ref} is not a valid branch reference")))?
        .to_owned();
    let sha_text = required(&body, "sha")?;
    let target = CommitSha::parse(&sha_text)
        .map_err(|_| ApiError::invalid(format!("sha {sha_text} is not a commit SHA")))?;
    s.memory
        .create_branch(&name, &branch, &target)
        .await
        .map_err(|err| match err {
            GitHubError::Conflict { .. } => ApiError::invalid("Reference already exists"),
            other => ApiError::from(other),
        })?;
    Ok(json_answer(
        StatusCode::CREATED,
        git_ref_value(&s.base_url, &name, &full_ref, &target),
    ))
}

/// `PATCH /git/refs/{ref}`: moves a branch (`heads/<branch>`; the world has no other
/// references) to `sha`, a fast-forward unless `force`. GitHub's refusals are 422s with its
/// messages: "Reference does not exist", "Object does not exist", "Update is not a fast
/// forward".
pub(super) async fn update_ref(
    State(s): Ctx,
    RepoPathWith(name, git_ref): RepoPathWith,
    bytes: Bytes,
) -> ApiResult {
    let body = body_json(&bytes)?;
    let branch = git_ref
        .strip_prefix("heads/")
        .filter(|branch| !branch.is_empty())
        .ok_or_else(|| ApiError::invalid(REFERENCE_MISSING))?
        .to_owned();
    let sha_text = required(&body, "sha")?;
    let force = match body.get("force") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(force)) => *force,
        Some(_) => {
            return Err(ApiError::invalid(
                "Invalid request: `force` is not a boolean",
            ));
        }
    };
    let target = CommitSha::parse(&sha_text).map_err(|_| ApiError::invalid(OBJECT_MISSING))?;
    s.memory
        .update_branch_ref(&name, &branch, &target, force)
        .await
        .map_err(|err| match err {
            GitHubError::NotFound { what } if what.starts_with("branch ") => {
                ApiError::invalid(REFERENCE_MISSING)
            }
            GitHubError::NotFound { .. } => ApiError::invalid(OBJECT_MISSING),
            GitHubError::Conflict { message, .. } => ApiError::invalid(message),
            other => ApiError::from(other),
        })?;
    Ok(json_answer(
        StatusCode::OK,
        git_ref_value(&s.base_url, &name, &format!("refs/{git_ref}"), &target),
    ))
}

/// GitHub's 422 message for a reference that does not exist.
const REFERENCE_MISSING: &str = "Reference does not exist";

/// GitHub's 422 message for a SHA that names no object.
const OBJECT_MISSING: &str = "Object does not exist";

/// `POST /merges`: merges `head` (a SHA or a branch name) into the branch `base`. 201 and
/// the merge commit; 204 with no body when `head` is in `base` already; 409 "Merge
/// conflict"; 404 "Base does not exist" or "Head does not exist".
pub(super) async fn merge_into_branch(
    State(s): Ctx,
    RepoPath(name): RepoPath,
    bytes: Bytes,
) -> ApiResult {
    let body = body_json(&bytes)?;
    let base = required(&body, "base")?;
    let head_text = required(&body, "head")?;
    let head_missing = || ApiError::new(StatusCode::NOT_FOUND, "Head does not exist");
    let head = match CommitSha::parse(&head_text) {
        Ok(sha) => sha,
        Err(_) => read(&s, |w| repo_of(w, &name)?.branch_head(&head_text).cloned())
            .map_err(|_| head_missing())?,
    };
    let message = text_field(&body, "commit_message")
        .unwrap_or_else(|| format!("Merge {head_text} into {base}"));
    let merged = s
        .memory
        .merge_into_branch(&name, &base, &head, &message)
        .await
        .map_err(|err| match err {
            GitHubError::NotFound { what } if what.starts_with("branch ") => {
                ApiError::new(StatusCode::NOT_FOUND, "Base does not exist")
            }
            GitHubError::NotFound { .. } => head_missing(),
            other => ApiError::from(other),
        })?;
    let Some(merge) = merged else {
        return Ok(StatusCode::NO_CONTENT.into_response());
    };
    let value = read(&s, |w| {
        let commit = repo_of(w, &name)?.commit(&merge)?;
        Some(render::commit(&s.base_url, &name, commit))
    })?;
    Ok(json_answer(StatusCode::CREATED, value))
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
pub(super) async fn get_ref(State(s): Ctx, RepoPathWith(name, git_ref): RepoPathWith) -> ApiResult {
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

/// `GET /git/matching-refs/{ref}`: every reference whose name starts with `refs/<ref>`
/// (the world has only branches), in name order; `[]` when none matches.
pub(super) async fn list_matching_refs(
    State(s): Ctx,
    RepoPathWith(name, git_ref): RepoPathWith,
) -> ApiResult {
    let prefix = format!("refs/{git_ref}");
    let refs = read(&s, |w| {
        let repo = repo_of(w, &name)?;
        Some(
            repo.branches
                .iter()
                .map(|(branch, head)| (format!("refs/heads/{branch}"), head.clone()))
                .filter(|(full, _)| full.starts_with(&prefix))
                .collect::<Vec<_>>(),
        )
    })?;
    let listed: Vec<Value> = refs
        .iter()
        .map(|(full, head)| git_ref_value(&s.base_url, &name, full, head))
        .collect();
    Ok(json_answer(StatusCode::OK, Value::Array(listed)))
}

pub(super) async fn push_revert(
    State(s): Ctx,
    RepoPath(name): RepoPath,
    bytes: Bytes,
) -> ApiResult {
    let body = body_json(&bytes)?;
    let reverted = sha(&required(&body, "sha")?)?;
    let branch = required(&body, "branch")?;
    let message = required(&body, "message")?;
    let revert = s
        .memory
        .push_revert(&name, &reverted, &branch, &message)
        .await?;
    Ok(json_answer(
        StatusCode::CREATED,
        json!({ "sha": revert.as_str() }),
    ))
}

/// Loopback extension (not GitHub): a person applies a label, `{"number": N, "label": L,
/// "actor": LOGIN}`, at the world's clock, recorded as a world file records a human's
/// label; a `pull_request` (or `issues`) `labeled` webhook names `actor` as its sender.
/// Answers the thread's labels.
pub(super) async fn label_as_person(
    State(s): Ctx,
    RepoPath(name): RepoPath,
    bytes: Bytes,
) -> ApiResult {
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
