//! `POST /graphql`: the loopback GitHub answers the queries mp sends
//! ([`OPEN_PULLS_QUERY`], decisions/0035 and 0075, [`LABEL_QUERY`], decisions/0048, and
//! [`default_branches_query`], decisions/0075), resolved
//! from the world through the same port reads and renderings as the REST routes, so both
//! paths read the same facts.
//!
//! As GitHub does: the answer is `200` with `data` and, when something failed, `errors`
//! (each with `type`, `message` and `path`); a part that could not be read is `null` with
//! its error beside the data (partial data); a repository that does not exist is
//! `repository: null` with `NOT_FOUND`; GraphQL has its own budget of points
//! (`rateLimit { cost remaining resetAt }`, `X-RateLimit-Resource: graphql`), charged by
//! GitHub's rule of one request per connection at its `first`, divided by 100; a spent
//! budget answers `RATE_LIMITED`. A bot's `login` has no `[bot]` suffix, and a commit's
//! `user` is a `User` only. Any other query is refused: the fake answers only what it
//! implements.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use mp_core::context::LabelAction;
use mp_core::ids::{PrNumber, RepoName, Timestamp};
use mp_core::port::{GitHub, GitHubError};
use serde_json::{Value, json};

#[path = "graphql_queue.rs"]
mod queue;

use super::render;
use super::state::Shared;
use mp_github::rest::graphql::{LABEL_QUERY, OPEN_PULLS_QUERY, default_branches_query};

/// GitHub's GraphQL budget per hour for an installation.
pub(super) const GRAPHQL_LIMIT: u32 = 5_000;

/// Nodes each connection of the query asks for, per pull request: labels, commits, files,
/// timeline items, comments and the head commit; the commits' parents; the head commit's
/// check suites and their runs.
const CONNECTIONS_PER_PULL: u64 = 6 + 50 + 1 + 10;

/// The query's cost in points for a page of `first` pull requests: one request for the
/// page, one per nested connection of each pull request, divided by 100 and rounded, at
/// least 1 (GitHub's documented calculation).
pub(crate) fn query_cost(first: u64) -> u32 {
    let requests = 1 + first * CONNECTIONS_PER_PULL;
    u32::try_from(((requests + 50) / 100).max(1)).unwrap_or(u32::MAX)
}

fn error(kind: &str, message: impl Into<String>, path: &[Value]) -> Value {
    json!({ "type": kind, "message": message.into(), "path": path })
}

/// Spends `cost` points of the GraphQL budget: the query's `rateLimit` object, or `None`
/// when the points are spent (answer [`rate_limited`]).
fn spend(shared: &Shared, cost: u32) -> Option<Value> {
    let remaining = shared.spend_graphql(cost)?;
    let (_, reset) = shared.graphql_budget();
    let reset_at = Timestamp::from_unix_seconds(reset)
        .map(|t| t.to_string())
        .unwrap_or_default();
    Some(json!({ "cost": cost, "remaining": remaining, "resetAt": reset_at }))
}

/// GraphQL's answer when the budget's points are spent.
fn rate_limited(shared: &Shared) -> Response {
    answer(
        shared,
        &json!({ "errors": [error(
            "RATE_LIMITED",
            "API rate limit exceeded for installation ID 1.",
            &[],
        )] }),
    )
}

/// A GraphQL answer: always `200`, with the GraphQL budget's headers.
fn answer(shared: &Shared, body: &Value) -> Response {
    let (remaining, reset) = shared.graphql_budget();
    let mut response = (StatusCode::OK, axum::Json(body)).into_response();
    let pairs: [(&str, String); 5] = [
        ("x-ratelimit-limit", GRAPHQL_LIMIT.to_string()),
        ("x-ratelimit-remaining", remaining.to_string()),
        (
            "x-ratelimit-used",
            GRAPHQL_LIMIT.saturating_sub(remaining).to_string(),
        ),
        ("x-ratelimit-reset", reset.to_string()),
        ("x-ratelimit-resource", "graphql".to_owned()),
    ];
    for (name, value) in pairs {
        if let Ok(value) = HeaderValue::from_str(&value) {
            response
                .headers_mut()
                .insert(HeaderName::from_static(name), value);
        }
    }
    response
}

/// REST's user object as a GraphQL `Actor`: `__typename` and the login without `[bot]`.
fn actor(user: &Value) -> Value {
    let Some(login) = user.get("login").and_then(Value::as_str) else {
        return Value::Null;
    };
    let bot = user.get("type").and_then(Value::as_str) == Some("Bot");
    json!({
        "__typename": if bot { "Bot" } else { "User" },
        "login": if bot { login.trim_end_matches("[bot]") } else { login },
    })
}

/// A git author or committer: its e-mail, and the `User` GitHub links it to (never a bot).
fn git_actor(person: &Value, account: &Value) -> Value {
    let user = if account.get("type").and_then(Value::as_str) == Some("User") {
        json!({ "login": account["login"] })
    } else {
        Value::Null
    };
    json!({ "email": person["email"], "user": user })
}

/// A connection holding the first `first` of `nodes`, with their count.
fn connection(nodes: Vec<Value>, first: usize) -> Value {
    let total = nodes.len();
    let nodes: Vec<Value> = nodes.into_iter().take(first).collect();
    json!({ "totalCount": total, "nodes": nodes })
}

fn enum_word(text: &str) -> String {
    text.to_ascii_uppercase()
}

/// A part of one pull request, or `null` with its error recorded.
fn part(
    read: Result<Value, GitHubError>,
    errors: &mut Vec<Value>,
    path: &[Value],
    field: &str,
) -> Value {
    read.unwrap_or_else(|err| {
        let mut path = path.to_vec();
        path.push(json!(field));
        errors.push(error("INTERNAL", err.to_string(), &path));
        Value::Null
    })
}

/// The handler.
pub(super) async fn graphql(State(s): State<Arc<Shared>>, bytes: Bytes) -> Response {
    let Ok(body) = serde_json::from_slice::<Value>(&bytes) else {
        return (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({ "message": "Problems parsing JSON" })),
        )
            .into_response();
    };
    let Some(query) = body.get("query").and_then(Value::as_str) else {
        return answer(
            &s,
            &json!({ "errors": [{ "message": "A query attribute must be specified and must be a string." }] }),
        );
    };
    if query == LABEL_QUERY {
        return label(&s, &body["variables"]).await;
    }
    if let Some(body) = queue::answer_queue(&s, query, &body["variables"]).await {
        return answer(&s, &body);
    }
    let repos = body["variables"].as_object().map_or(0, |v| v.len() / 2);
    if repos > 0 && query == default_branches_query(repos) {
        return default_branches(&s, &body["variables"], repos);
    }
    if query != OPEN_PULLS_QUERY {
        return answer(
            &s,
            &json!({ "errors": [error(
                "LOOPBACK_UNSUPPORTED",
                "the loopback GitHub answers only the queries mp sends (MpOpenPulls, MpLabel, MpDefaultBranches, MpMergeQueue, MpQueueEntry, MpQueueRemoval, MpEnqueue, MpDequeue)",
                &[],
            )] }),
        );
    }
    let variables = &body["variables"];
    let text = |name: &str| variables.get(name).and_then(Value::as_str);
    let (Some(owner), Some(name)) = (text("owner"), text("name")) else {
        return answer(
            &s,
            &json!({ "errors": [error("INVALID_VARIABLES", "owner and name are required", &[])] }),
        );
    };
    let first = variables.get("first").and_then(Value::as_u64).unwrap_or(0);
    if !(1..=100).contains(&first) {
        return answer(
            &s,
            &json!({ "errors": [error(
                "EXCESSIVE_PAGINATION",
                format!("Requesting {first} records on the `pullRequests` connection is outside the limits of 1 to 100 records."),
                &[json!("repository"), json!("pullRequests")],
            )] }),
        );
    }
    let cost = query_cost(first);
    let Some(rate_limit) = spend(&s, cost) else {
        return rate_limited(&s);
    };
    let Ok(repo) = RepoName::parse(&format!("{owner}/{name}")) else {
        return answer(&s, &not_found(owner, name, rate_limit));
    };
    match s.memory.open_pulls(&repo).await {
        Ok(_) => {}
        Err(GitHubError::NotFound { .. }) => {
            return answer(&s, &not_found(owner, name, rate_limit));
        }
        Err(other) => {
            return answer(
                &s,
                &json!({
                    "data": Value::Null,
                    "errors": [error("INTERNAL", other.to_string(), &[json!("repository")])],
                }),
            );
        }
    }
    let offset: usize = text("after")
        .and_then(|cursor| cursor.strip_prefix("cursor:"))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let first = usize::try_from(first).unwrap_or(100);
    let base = s.base_url.clone();
    // The default branch and its head, as `GET /repos/{o}/{r}` and `GET /branches/{b}`
    // answer them (`target: null` for a branch without a commit).
    let default_branch: Value = s.memory.read(|w| {
        w.repo(&repo).map_or(Value::Null, |repository| {
            let branch = &repository.default_branch;
            json!({
                "name": branch,
                "target": repository
                    .branch_head(branch)
                    .map_or(Value::Null, |head| json!({ "oid": head.as_str() })),
            })
        })
    });
    let listed: Option<Vec<(PrNumber, Value)>> = s.memory.read(|w| {
        let repository = w.repo(&repo)?;
        let mut pulls: Vec<_> = repository
            .pulls
            .iter()
            .filter(|p| p.state == mp_core::context::PrState::Open)
            .collect();
        pulls.sort_by_key(|p| p.number);
        Some(
            pulls
                .into_iter()
                .map(|p| (p.number, render::pull(&base, repository, p, w.now, false)))
                .collect(),
        )
    });
    let Some(listed) = listed else {
        return answer(&s, &not_found(owner, name, rate_limit));
    };
    let total = listed.len();
    let page: Vec<(PrNumber, Value)> = listed.into_iter().skip(offset).take(first).collect();
    let end = offset + page.len();
    let mut errors = Vec::new();
    let mut nodes = Vec::new();
    for (index, (number, rest)) in page.into_iter().enumerate() {
        let path = [
            json!("repository"),
            json!("pullRequests"),
            json!("nodes"),
            json!(index),
        ];
        nodes.push(pull_node(&s, &repo, number, &rest, &mut errors, &path).await);
    }
    let has_next = end < total;
    let mut out = json!({
        "data": {
            "rateLimit": rate_limit,
            "repository": {
                "defaultBranchRef": default_branch,
                "pullRequests": {
                    "pageInfo": {
                        "hasNextPage": has_next,
                        "endCursor": if end > offset { json!(format!("cursor:{end}")) } else { Value::Null },
                    },
                    "nodes": nodes,
                },
            },
        },
    });
    if !errors.is_empty() {
        out["errors"] = Value::Array(errors);
    }
    answer(&s, &out)
}

/// `MpLabel`: GitHub's record of one label (`label: null` for a name the repository has
/// no label for), one point.
async fn label(s: &Shared, variables: &Value) -> Response {
    let text = |name: &str| variables.get(name).and_then(Value::as_str);
    let (Some(owner), Some(name), Some(label)) = (text("owner"), text("name"), text("label"))
    else {
        return answer(
            s,
            &json!({ "errors": [error("INVALID_VARIABLES", "owner, name and label are required", &[])] }),
        );
    };
    let Some(rate_limit) = spend(s, 1) else {
        return rate_limited(s);
    };
    let Ok(repo) = RepoName::parse(&format!("{owner}/{name}")) else {
        return answer(s, &not_found(owner, name, rate_limit));
    };
    match s.memory.label_records(&repo, &[label.to_owned()]).await {
        Ok(records) => {
            let node = records.first().map_or(Value::Null, |record| {
                json!({
                    "name": record.name,
                    "createdAt": record.created_at.map(|t| t.to_string()),
                    "updatedAt": record.updated_at.map(|t| t.to_string()),
                })
            });
            answer(
                s,
                &json!({ "data": { "rateLimit": rate_limit, "repository": { "label": node } } }),
            )
        }
        Err(GitHubError::NotFound { .. }) => answer(s, &not_found(owner, name, rate_limit)),
        Err(other) => answer(
            s,
            &json!({
                "data": Value::Null,
                "errors": [error("INTERNAL", other.to_string(), &[json!("repository")])],
            }),
        ),
    }
}

/// `MpDefaultBranches`: the default branch of each aliased repository (`r{i}`, from the
/// variables `o{i}` and `n{i}`), `null` with `NOT_FOUND` for one that does not exist; one
/// point for the whole query, as GitHub charges a query without connections.
fn default_branches(s: &Shared, variables: &Value, repos: usize) -> Response {
    let Some(rate_limit) = spend(s, 1) else {
        return rate_limited(s);
    };
    let mut data = serde_json::Map::new();
    data.insert("rateLimit".to_owned(), rate_limit);
    let mut errors = Vec::new();
    for i in 0..repos {
        let alias = format!("r{i}");
        let text = |name: String| variables.get(name).and_then(Value::as_str);
        let (Some(owner), Some(name)) = (text(format!("o{i}")), text(format!("n{i}"))) else {
            return answer(
                s,
                &json!({ "errors": [error("INVALID_VARIABLES", format!("o{i} and n{i} are required"), &[])] }),
            );
        };
        let branch = RepoName::parse(&format!("{owner}/{name}"))
            .ok()
            .and_then(|repo| {
                s.memory
                    .read(|w| w.repo(&repo).map(|r| r.default_branch.clone()))
            });
        match branch {
            Some(branch) => {
                data.insert(alias, json!({ "defaultBranchRef": { "name": branch } }));
            }
            None => {
                data.insert(alias.clone(), Value::Null);
                errors.push(error(
                    "NOT_FOUND",
                    format!("Could not resolve to a Repository with the name '{owner}/{name}'."),
                    &[json!(alias)],
                ));
            }
        }
    }
    let mut out = json!({ "data": data });
    if !errors.is_empty() {
        out["errors"] = Value::Array(errors);
    }
    answer(s, &out)
}

fn not_found(owner: &str, name: &str, rate_limit: Value) -> Value {
    json!({
        "data": { "rateLimit": rate_limit, "repository": Value::Null },
        "errors": [error(
            "NOT_FOUND",
            format!("Could not resolve to a Repository with the name '{owner}/{name}'."),
            &[json!("repository")],
        )],
    })
}

/// One pull request node: the listing from REST's rendering, each part through the port.
async fn pull_node(
    s: &Shared,
    repo: &RepoName,
    number: PrNumber,
    rest: &Value,
    errors: &mut Vec<Value>,
    path: &[Value],
) -> Value {
    let base = s.base_url.as_str();
    // Each label with GitHub's record of it, as `MpLabel` reads it by name.
    let known = s
        .memory
        .read(|w| w.repo(repo).map(crate::world::Repo::all_labels))
        .unwrap_or_default();
    let labels: Vec<Value> = rest["labels"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| {
            let name = l["name"].as_str().unwrap_or_default();
            let record = known
                .iter()
                .find(|label| label.name.eq_ignore_ascii_case(name))
                .map(crate::world::RepoLabel::record);
            json!({
                "name": name,
                "createdAt": record.as_ref().and_then(|r| r.created_at).map(|t| t.to_string()),
                "updatedAt": record.as_ref().and_then(|r| r.updated_at).map(|t| t.to_string()),
            })
        })
        .collect();
    let head_sha = rest["head"]["sha"].as_str().unwrap_or_default().to_owned();
    let commits = commits(s, repo, number).await;
    let files = s.memory.pull_files(repo, number).await.map(|files| {
        let nodes = files
            .iter()
            .map(|f| {
                json!({
                    "path": f.path,
                    "changeType": match f.status.as_str() {
                        "added" => "ADDED",
                        "removed" => "DELETED",
                        "renamed" => "RENAMED",
                        _ => "MODIFIED",
                    },
                    "additions": f.additions,
                    "deletions": f.deletions,
                })
            })
            .collect();
        connection(nodes, 100)
    });
    let timeline = s.memory.label_events(repo, number).await.map(|events| {
        let nodes = events
            .iter()
            .enumerate()
            .map(|(index, event)| {
                let rest = render::label_event(base, repo, number, index, event);
                let typename = match event.action {
                    LabelAction::Labeled => "LabeledEvent",
                    LabelAction::Unlabeled => "UnlabeledEvent",
                    LabelAction::BaseChanged => "BaseRefChangedEvent",
                };
                let mut node = json!({
                    "__typename": typename,
                    "createdAt": rest["created_at"],
                    "actor": actor(&rest["actor"]),
                });
                if event.action != LabelAction::BaseChanged {
                    node["label"] = json!({ "name": rest["label"]["name"] });
                }
                node
            })
            .collect();
        connection(nodes, 100)
    });
    let comments = s.memory.comments(repo, number).await.map(|comments| {
        let nodes = comments
            .iter()
            .map(|comment| {
                let rest = render::comment(base, repo, Some(number), comment);
                json!({
                    "databaseId": rest["id"],
                    "author": actor(&rest["user"]),
                    "body": rest["body"],
                    "createdAt": rest["created_at"],
                    "updatedAt": rest["updated_at"],
                })
            })
            .collect();
        connection(nodes, 100)
    });
    let head = head_commit(s, repo, &head_sha).await;
    json!({
        "number": number.get(),
        "title": rest["title"],
        "body": rest["body"].as_str().unwrap_or_default(),
        "createdAt": rest["created_at"],
        "author": actor(&rest["user"]),
        "headRefName": rest["head"]["ref"],
        "headRefOid": head_sha,
        "headRepository": rest["head"]["repo"]
            .get("full_name")
            .map_or(Value::Null, |name| json!({ "nameWithOwner": name })),
        "baseRefName": rest["base"]["ref"],
        "baseRefOid": rest["base"]["sha"],
        "labels": connection(labels, 100),
        "commits": part(commits, errors, path, "commits"),
        "files": part(files, errors, path, "files"),
        "timelineItems": part(timeline, errors, path, "timelineItems"),
        "comments": part(comments, errors, path, "comments"),
        "headCommit": part(head, errors, path, "headCommit"),
    })
}

/// The pull request's commits as REST renders them, as GraphQL `Commit` nodes.
async fn commits(s: &Shared, repo: &RepoName, number: PrNumber) -> Result<Value, GitHubError> {
    let contexts = s.memory.all_pull_commits(repo, number)?;
    let base = s.base_url.as_str();
    // The query asks for the first 50: only those are rendered.
    let rendered: Vec<Value> = s.memory.read(|w| {
        let Some(repository) = w.repo(repo) else {
            return Vec::new();
        };
        contexts
            .iter()
            .take(PULL_COMMITS_FIRST)
            .filter_map(|c| repository.commits.iter().find(|commit| commit.sha == c.sha))
            .map(|commit| render::commit(base, repo, commit))
            .collect()
    });
    let nodes = rendered
        .iter()
        .map(|rest| {
            let parents: Vec<Value> = rest["parents"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| json!({ "oid": p["sha"] }))
                .collect();
            json!({
                "commit": {
                    "oid": rest["sha"],
                    "message": rest["commit"]["message"],
                    "committedDate": rest["commit"]["committer"]["date"],
                    "author": git_actor(&rest["commit"]["author"], &rest["author"]),
                    "committer": git_actor(&rest["commit"]["committer"], &rest["committer"]),
                    "parents": connection(parents, 2),
                },
            })
        })
        .collect::<Vec<Value>>();
    Ok(json!({ "totalCount": contexts.len(), "nodes": nodes }))
}

/// `commits(first: 50)` in the open pull requests query.
const PULL_COMMITS_FIRST: usize = 50;

/// `commits(last: 1)`: the head commit with its check suites (one per App, as GitHub keeps
/// them) and every run of each, `filterBy: { checkType: ALL }`.
async fn head_commit(s: &Shared, repo: &RepoName, head: &str) -> Result<Value, GitHubError> {
    let Ok(sha) = mp_core::ids::CommitSha::parse(head) else {
        return Ok(json!({ "nodes": [] }));
    };
    let runs = s.memory.check_runs(repo, &sha).await?;
    let base = s.base_url.as_str();
    let mut suites: Vec<(Option<String>, Vec<Value>)> = Vec::new();
    for (index, run) in runs.iter().enumerate() {
        let rest = render::check_run(base, repo, &sha, index, run);
        let node = json!({
            "databaseId": rest["id"],
            "name": rest["name"],
            "status": enum_word(rest["status"].as_str().unwrap_or("completed")),
            "conclusion": rest["conclusion"].as_str().map(enum_word),
            "startedAt": rest["started_at"],
            "completedAt": rest["completed_at"],
            "summary": rest["output"]["summary"],
        });
        match suites.iter_mut().find(|(slug, _)| *slug == run.app_slug) {
            Some((_, nodes)) => nodes.push(node),
            None => suites.push((run.app_slug.clone(), vec![node])),
        }
    }
    let suites: Vec<Value> = suites
        .into_iter()
        .map(|(slug, runs)| {
            json!({
                "app": slug.map_or(Value::Null, |slug| json!({ "slug": slug })),
                "checkRuns": connection(runs, 100),
            })
        })
        .collect();
    Ok(json!({
        "nodes": [{ "commit": { "oid": head, "checkSuites": connection(suites, 10) } }],
    }))
}
