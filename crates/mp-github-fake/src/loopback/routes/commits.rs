//! Commits, branches and the repository: commit listings and comparisons, a commit's
//! check runs and pull requests, the repository, a branch and its rules.

use std::collections::{BTreeMap, BTreeSet};

use axum::extract::{Query, State};
use axum::http::{StatusCode, Uri};
use mp_core::context::CheckRun;
use mp_core::ids::CommitSha;
use mp_core::port::{GitHub, GitHubError, GitHubHistory};
use serde_json::{Value, json};

use super::{
    ApiError, ApiResult, Ctx, Params, RepoPath, RepoPathWith, commits_by_sha, default_branch_of,
    json_answer, linked, paged, read, repo_of, sha,
};
use crate::loopback::boilerplate;
use crate::loopback::page::paginate;
use crate::loopback::render;
use crate::world::Repo;

pub(super) async fn list_commits(
    State(s): Ctx,
    RepoPath(name): RepoPath,
    Query(q): Params,
    uri: Uri,
) -> ApiResult {
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

pub(super) async fn get_commit(
    State(s): Ctx,
    RepoPathWith(name, sha_text): RepoPathWith,
) -> ApiResult {
    let sha = sha(&sha_text)?;
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
pub(super) async fn compare(
    State(s): Ctx,
    RepoPathWith(name, basehead): RepoPathWith,
    Query(q): Params,
) -> ApiResult {
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

pub(super) async fn list_check_runs(
    State(s): Ctx,
    RepoPathWith(name, sha_text): RepoPathWith,
    Query(q): Params,
    uri: Uri,
) -> ApiResult {
    let sha = sha(&sha_text)?;
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

pub(super) async fn list_commit_pulls(
    State(s): Ctx,
    RepoPathWith(name, sha_text): RepoPathWith,
    uri: Uri,
) -> ApiResult {
    let sha = sha(&sha_text)?;
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

pub(super) async fn get_repo(State(s): Ctx, RepoPath(name): RepoPath) -> ApiResult {
    let default_branch = s.memory.default_branch(&name).await?;
    Ok(json_answer(
        StatusCode::OK,
        render::repository(&s.base_url, &name, &default_branch),
    ))
}

/// `GET /repos/{o}/{r}/rules/branches/{branch}`: the rules of the repository's active
/// rulesets that apply to the branch (the world's `branch_rules`), one ruleset per
/// repository in the fake; a `merge_queue` rule carries its `parameters` (the world's
/// `merge_queues`, all seven as the REST description requires). The branch need not exist,
/// as on GitHub. Served through the port's read, so the call is counted as the in-memory
/// GitHub counts it.
pub(super) async fn branch_rules(
    State(s): Ctx,
    RepoPathWith(name, branch): RepoPathWith,
    uri: Uri,
) -> ApiResult {
    let rules = s.memory.branch_rules(&name, &branch).await?;
    let queue = read(&s, |w| {
        repo_of(w, &name).map(|repo| repo.merge_queues.get(&branch).cloned().unwrap_or_default())
    })?;
    let ruleset_id = render::stable_id("ruleset", name.as_str());
    let items = rules
        .iter()
        .map(|rule| {
            let mut item = json!({
                "type": rule,
                "ruleset_source_type": "Repository",
                "ruleset_source": name.as_str(),
                "ruleset_id": ruleset_id,
            });
            if rule == mp_core::github_queue::MERGE_QUEUE_RULE {
                item["parameters"] = json!({
                    "check_response_timeout_minutes": queue.check_response_timeout_minutes,
                    "grouping_strategy": queue.grouping_strategy,
                    "max_entries_to_build": queue.max_entries_to_build,
                    "max_entries_to_merge": queue.max_entries_to_merge,
                    "merge_method": queue.merge_method,
                    "min_entries_to_merge": queue.min_entries_to_merge,
                    "min_entries_to_merge_wait_minutes": queue.min_entries_to_merge_wait_minutes,
                });
            }
            item
        })
        .collect();
    Ok(paged(&s, &uri, items))
}

pub(super) async fn get_branch(
    State(s): Ctx,
    RepoPathWith(name, branch): RepoPathWith,
) -> ApiResult {
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
