//! `POST /graphql` for GitHub's merge queue (decisions/0078): the queue of a branch, a pull
//! request's entry, `enqueuePullRequest` and `dequeuePullRequest`, answered for exactly the
//! documents mp sends (validated against the pinned schema by mp-github's
//! `tests/graphql_schema.rs`), through the in-memory GitHub's port, so both fakes keep one
//! queue. A pull request's node id is `PR_` and its `owner/name#number`.
//!
//! A refused mutation answers as GitHub does: `200`, the payload `null` and an error beside
//! it (`UNPROCESSABLE` with the queue's words; a stale `expectedHeadOid` is
//! [`STALE_HEAD_MESSAGE`], the fake's words, since GitHub publishes none).

use mp_core::ids::{CommitSha, PrNumber, RepoName};
use mp_core::port::{GitHub, GitHubError, QueueEntry};
use serde_json::{Value, json};

use super::super::state::Shared;
use super::{error, not_found, spend};
use crate::world::STALE_HEAD_MESSAGE;
use mp_github::rest::merge_queue::{
    DEQUEUE_MUTATION, ENQUEUE_MUTATION, MERGE_QUEUE_QUERY, QUEUE_ENTRY_QUERY, QUEUE_REMOVAL_QUERY,
};

/// The node id of pull request `number` of `repo`.
pub(crate) fn pull_node_id(repo: &RepoName, number: PrNumber) -> String {
    format!("PR_{repo}#{number}")
}

/// The repository and number a pull request's node id names.
fn parse_node_id(id: &str) -> Option<(RepoName, PrNumber)> {
    let (repo, number) = id.strip_prefix("PR_")?.rsplit_once('#')?;
    Some((
        RepoName::parse(repo).ok()?,
        PrNumber::new(number.parse().ok()?),
    ))
}

/// GraphQL's `Actor` for a login: a bot without its `[bot]` suffix.
fn actor(login: Option<&mp_core::ids::Login>) -> Value {
    let Some(login) = login else {
        return Value::Null;
    };
    match login.as_str().strip_suffix("[bot]") {
        Some(bot) => json!({ "__typename": "Bot", "login": bot }),
        None => json!({ "__typename": "User", "login": login.as_str() }),
    }
}

/// An entry's node as the documents select it; `pullRequest` only where selected.
fn entry_node(entry: &QueueEntry, with_pull: bool) -> Value {
    let mut node = json!({
        "position": entry.position,
        "state": entry.state.as_graphql(),
        "enqueuedAt": entry.enqueued_at.map(|t| t.to_string()),
        "enqueuer": actor(entry.enqueuer.as_ref()),
        "headCommit": { "oid": entry.head.as_str() },
    });
    if with_pull {
        node["pullRequest"] = json!({ "number": entry.number.get() });
    }
    node
}

/// The mutation's answer for a refusal.
fn refused(field: &str, err: &GitHubError) -> Value {
    let (kind, message) = match err {
        GitHubError::HeadMoved { .. } => ("UNPROCESSABLE", STALE_HEAD_MESSAGE.to_owned()),
        GitHubError::NotMergeable { message, .. } => ("UNPROCESSABLE", message.clone()),
        GitHubError::NotFound { what } => ("NOT_FOUND", format!("Could not resolve {what}")),
        other => ("INTERNAL", other.to_string()),
    };
    json!({
        "data": { field: Value::Null },
        "errors": [error(kind, message, &[json!(field)])],
    })
}

/// GitHub's answer for a pull request `number` that does not exist: `NOT_FOUND` on
/// `pullRequest` in a repository that does, else on the repository.
fn no_pull(
    s: &Shared,
    repo: &RepoName,
    (owner, name): (&str, &str),
    number: PrNumber,
    rate_limit: Value,
) -> Value {
    if !s.memory.read(|w| w.repo(repo).is_some()) {
        return not_found(owner, name, rate_limit);
    }
    json!({
        "data": { "rateLimit": rate_limit, "repository": { "pullRequest": Value::Null } },
        "errors": [error(
            "NOT_FOUND",
            format!("Could not resolve to a PullRequest with the number of {number}."),
            &[json!("repository"), json!("pullRequest")],
        )],
    })
}

/// The answer to one of the queue's documents, or `None` when `query` is none of them.
pub(super) async fn answer_queue(s: &Shared, query: &str, variables: &Value) -> Option<Value> {
    let text = |name: &str| {
        variables
            .get(name)
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let invalid = |names: &str| json!({ "errors": [error("INVALID_VARIABLES", format!("{names} required"), &[])] });
    if query == QUEUE_REMOVAL_QUERY {
        let (Some(owner), Some(name)) = (text("owner"), text("name")) else {
            return Some(invalid("owner and name are"));
        };
        let Some(number) = variables.get("number").and_then(Value::as_u64) else {
            return Some(invalid("number is"));
        };
        let Some(rate_limit) = spend(s, 1) else {
            return Some(
                json!({ "errors": [error("RATE_LIMITED", "API rate limit exceeded for installation ID 1.", &[])] }),
            );
        };
        let Ok(repo) = RepoName::parse(&format!("{owner}/{name}")) else {
            return Some(not_found(&owner, &name, rate_limit));
        };
        let number = PrNumber::new(number);
        return Some(match s.memory.last_queue_removal(&repo, number).await {
            Ok(removal) => {
                let nodes: Vec<Value> = removal
                    .iter()
                    .map(|r| {
                        json!({
                            "__typename": "RemovedFromMergeQueueEvent",
                            "createdAt": r.at.map(|t| t.to_string()),
                            "reason": r.reason,
                            "actor": actor(r.actor.as_ref()),
                            "beforeCommit": r.head.as_ref().map(|h| json!({ "oid": h.as_str() })),
                        })
                    })
                    .collect();
                json!({ "data": { "rateLimit": rate_limit, "repository": { "pullRequest": {
                    "timelineItems": { "nodes": nodes },
                } } } })
            }
            Err(GitHubError::NotFound { .. }) => {
                no_pull(s, &repo, (&owner, &name), number, rate_limit)
            }
            Err(other) => json!({
                "data": Value::Null,
                "errors": [error("INTERNAL", other.to_string(), &[json!("repository")])],
            }),
        });
    }
    if query == MERGE_QUEUE_QUERY || query == QUEUE_ENTRY_QUERY {
        let (Some(owner), Some(name)) = (text("owner"), text("name")) else {
            return Some(invalid("owner and name are"));
        };
        let Some(rate_limit) = spend(s, 1) else {
            return Some(
                json!({ "errors": [error("RATE_LIMITED", "API rate limit exceeded for installation ID 1.", &[])] }),
            );
        };
        let Ok(repo) = RepoName::parse(&format!("{owner}/{name}")) else {
            return Some(not_found(&owner, &name, rate_limit));
        };
        if query == MERGE_QUEUE_QUERY {
            let Some(branch) = text("branch") else {
                return Some(invalid("branch is"));
            };
            return Some(match s.memory.merge_queue(&repo, &branch).await {
                Ok(queue) => {
                    let settings = s.memory.read(|w| {
                        w.repo(&repo)
                            .and_then(|r| r.merge_queues.get(&branch).cloned())
                            .unwrap_or_default()
                    });
                    let node = queue.map(|entries| {
                        let nodes: Vec<Value> =
                            entries.iter().map(|e| entry_node(e, true)).collect();
                        json!({
                            "configuration": {
                                "mergeMethod": settings.merge_method,
                                "mergingStrategy": settings.grouping_strategy,
                            },
                            "entries": { "totalCount": nodes.len(), "nodes": nodes },
                        })
                    });
                    json!({ "data": { "rateLimit": rate_limit, "repository": { "mergeQueue": node } } })
                }
                Err(GitHubError::NotFound { .. }) => not_found(&owner, &name, rate_limit),
                Err(other) => json!({
                    "data": Value::Null,
                    "errors": [error("INTERNAL", other.to_string(), &[json!("repository")])],
                }),
            });
        }
        let Some(number) = variables.get("number").and_then(Value::as_u64) else {
            return Some(invalid("number is"));
        };
        let number = PrNumber::new(number);
        let head = s.memory.read(|w| {
            w.repo(&repo)
                .and_then(|r| r.pull(number))
                .map(|p| p.head_sha.clone())
        });
        return Some(match (head, s.memory.queue_entry(&repo, number).await) {
            (Some(head), Ok(entry)) => json!({
                "data": { "rateLimit": rate_limit, "repository": { "pullRequest": {
                    "id": pull_node_id(&repo, number),
                    "headRefOid": head.as_str(),
                    "isInMergeQueue": entry.is_some(),
                    "mergeQueueEntry": entry.as_ref().map(|e| entry_node(e, false)),
                } } },
            }),
            (_, Err(GitHubError::NotFound { .. }) | Ok(_)) | (None, Err(_)) => {
                no_pull(s, &repo, (&owner, &name), number, rate_limit)
            }
            (Some(_), Err(other)) => json!({
                "data": Value::Null,
                "errors": [error("INTERNAL", other.to_string(), &[json!("repository")])],
            }),
        });
    }
    if query == ENQUEUE_MUTATION {
        let (Some(id), Some(expected)) = (text("pullRequestId"), text("expectedHeadOid")) else {
            return Some(invalid("pullRequestId and expectedHeadOid are"));
        };
        let field = "enqueuePullRequest";
        let Some((repo, number)) = parse_node_id(&id) else {
            return Some(refused(
                field,
                &GitHubError::NotFound {
                    what: format!("node {id}"),
                },
            ));
        };
        let Ok(expected) = CommitSha::parse(&expected) else {
            return Some(invalid("a GitObjectID expectedHeadOid is"));
        };
        return Some(
            match s.memory.enqueue_pull(&repo, number, &expected).await {
                Ok(entry) => {
                    json!({ "data": { field: { "mergeQueueEntry": entry_node(&entry, false) } } })
                }
                Err(err) => refused(field, &err),
            },
        );
    }
    if query == DEQUEUE_MUTATION {
        let Some(id) = text("id") else {
            return Some(invalid("id is"));
        };
        let field = "dequeuePullRequest";
        let Some((repo, number)) = parse_node_id(&id) else {
            return Some(refused(
                field,
                &GitHubError::NotFound {
                    what: format!("node {id}"),
                },
            ));
        };
        return Some(match s.memory.dequeue_pull(&repo, number).await {
            Ok(()) => json!({ "data": { field: { "clientMutationId": Value::Null } } }),
            Err(err) => refused(field, &err),
        });
    }
    None
}
