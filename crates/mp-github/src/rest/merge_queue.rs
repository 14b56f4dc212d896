//! GitHub's merge queue over GraphQL (decisions/0078): there is no REST call to read a
//! queue or to enqueue. The queue of a branch (`graphql/merge_queue.graphql`), a pull
//! request's entry and node id (`graphql/queue_entry.graphql`), and the two mutations
//! (`graphql/enqueue.graphql`, `graphql/dequeue.graphql`), each validated against GitHub's
//! published schema by `tests/graphql_schema.rs`.
//!
//! A mutation takes the pull request's node id, so enqueueing and dequeueing first read
//! it with the entry query. A refused mutation answers `errors` and a null payload: a
//! refusal that names the expected head is [`GitHubError::HeadMoved`] (nothing was
//! enqueued), any other [`GitHubError::NotMergeable`] with GitHub's words.

use mp_core::ids::{CommitSha, Login, PrNumber, RepoName, Timestamp};
use mp_core::port::{GitHubError, QueueEntry, QueueEntryState, QueueRemoval};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::RestGitHub;
use super::graphql::GRAPHQL_ROUTE;
use super::transport::Request;

/// The queue of a branch.
pub const MERGE_QUEUE_QUERY: &str = include_str!("graphql/merge_queue.graphql");
/// A pull request's entry and node id.
pub const QUEUE_ENTRY_QUERY: &str = include_str!("graphql/queue_entry.graphql");
/// A pull request's last removal from its merge queue.
pub const QUEUE_REMOVAL_QUERY: &str = include_str!("graphql/queue_removal.graphql");
/// `enqueuePullRequest`.
pub const ENQUEUE_MUTATION: &str = include_str!("graphql/enqueue.graphql");
/// `dequeuePullRequest`.
pub const DEQUEUE_MUTATION: &str = include_str!("graphql/dequeue.graphql");

#[derive(Debug, Deserialize)]
struct Answer {
    data: Option<Value>,
    #[serde(default)]
    errors: Vec<QueryError>,
}

#[derive(Debug, Deserialize)]
struct QueryError {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    message: String,
}

#[derive(Debug, Deserialize)]
struct Actor {
    #[serde(rename = "__typename")]
    typename: String,
    login: String,
}

#[derive(Debug, Deserialize)]
struct Oid {
    oid: String,
}

#[derive(Debug, Deserialize)]
struct Number {
    number: u64,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct EntryNode {
    position: u32,
    state: String,
    enqueued_at: Option<String>,
    enqueuer: Option<Actor>,
    head_commit: Option<Oid>,
    #[serde(default)]
    pull_request: Option<Number>,
}

#[derive(Debug, Deserialize)]
struct QueueData {
    repository: Option<QueueRepository>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct QueueRepository {
    merge_queue: Option<QueueNode>,
}

#[derive(Debug, Deserialize)]
struct QueueNode {
    entries: Option<Entries>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entries {
    total_count: u32,
    nodes: Option<Vec<Option<EntryNode>>>,
}

#[derive(Debug, Deserialize)]
struct PullData {
    repository: Option<PullRepository>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PullRepository {
    pull_request: Option<PullNode>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PullNode {
    id: String,
    is_in_merge_queue: bool,
    merge_queue_entry: Option<EntryNode>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct EnqueueData {
    enqueue_pull_request: Option<EnqueuePayload>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct EnqueuePayload {
    merge_queue_entry: Option<EntryNode>,
}

#[derive(Debug, Deserialize)]
struct RemovalData {
    repository: Option<RemovalRepository>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RemovalRepository {
    pull_request: Option<RemovalPull>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RemovalPull {
    timeline_items: RemovalItems,
}

#[derive(Debug, Deserialize)]
struct RemovalItems {
    nodes: Option<Vec<Option<RemovalNode>>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RemovalNode {
    created_at: Option<String>,
    reason: Option<String>,
    actor: Option<Actor>,
    before_commit: Option<Oid>,
}

/// `what` not found, with GitHub's first error's words when it gave one.
fn not_found(what: String, errors: &[QueryError]) -> GitHubError {
    GitHubError::NotFound {
        what: format!(
            "{what}{}",
            errors
                .first()
                .map(|e| format!(" ({})", e.message))
                .unwrap_or_default()
        ),
    }
}

/// The variables of a query about one pull request.
fn pull_variables(repo: &RepoName, number: PrNumber) -> Value {
    json!({ "owner": repo.owner(), "name": repo.name(), "number": number.get() })
}

fn malformed(message: impl Into<String>) -> GitHubError {
    GitHubError::Malformed {
        route: GRAPHQL_ROUTE.to_owned(),
        message: message.into(),
    }
}

/// A GraphQL actor's login as the port gives it: a bot's with its `[bot]` suffix.
fn actor_login(actor: Actor) -> Option<Login> {
    let login = if actor.typename == "Bot" {
        format!("{}[bot]", actor.login)
    } else {
        actor.login
    };
    Login::parse(&login).ok()
}

/// An entry as the port gives it; `number` is the pull request's when the node has none.
fn entry(node: EntryNode, number: Option<PrNumber>) -> Result<QueueEntry, GitHubError> {
    let number = node
        .pull_request
        .map(|p| PrNumber::new(p.number))
        .or(number)
        .ok_or_else(|| malformed("a merge queue entry without its pull request"))?;
    let head = node
        .head_commit
        .ok_or_else(|| malformed(format!("the merge queue entry of #{number} has no head")))?;
    let head = CommitSha::parse(&head.oid).map_err(|e| malformed(e.to_string()))?;
    let state = QueueEntryState::from_graphql(&node.state)
        .ok_or_else(|| malformed(format!("unknown merge queue entry state {}", node.state)))?;
    let enqueuer = node.enqueuer.and_then(actor_login);
    Ok(QueueEntry {
        number,
        head,
        position: node.position,
        state,
        enqueued_at: node.enqueued_at.and_then(|t| Timestamp::parse(&t).ok()),
        enqueuer,
    })
}

impl RestGitHub {
    /// Sends one operation and hands back its `data` and `errors`; a GraphQL rate limit or
    /// an answer without data is an error (nothing is assumed).
    async fn merge_queue_operation<T: DeserializeOwned>(
        &self,
        repo: &RepoName,
        document: &str,
        operation: &str,
        variables: Value,
        mutation: bool,
    ) -> Result<(Option<T>, Vec<QueryError>), GitHubError> {
        let body = json!({ "query": document, "operationName": operation, "variables": variables });
        let url = self.graphql_url();
        let request = if mutation {
            Request::graphql_mutation(GRAPHQL_ROUTE, url, repo, body)
        } else {
            Request::graphql(GRAPHQL_ROUTE, url, repo, body)
        };
        let answer = self.transport.send(&request).await?;
        if !answer.is_success() {
            return Err(answer.refusal(|| format!("GraphQL {operation} on {repo}")));
        }
        let decoded: Answer = answer.json()?;
        if let Some(error) = decoded
            .errors
            .iter()
            .find(|e| e.kind.as_deref() == Some("RATE_LIMITED"))
        {
            return Err(GitHubError::Unavailable {
                route: GRAPHQL_ROUTE.to_owned(),
                message: format!("RATE_LIMITED: {}", error.message),
            });
        }
        if let Some(remaining) = decoded
            .data
            .as_ref()
            .and_then(|d| d.pointer("/rateLimit/remaining"))
            .and_then(Value::as_u64)
        {
            self.transport
                .note_graphql_remaining(u32::try_from(remaining).unwrap_or(u32::MAX));
        }
        let data = match decoded.data {
            Some(Value::Null) | None => None,
            Some(data) => Some(serde_json::from_value(data).map_err(|e| malformed(e.to_string()))?),
        };
        Ok((data, decoded.errors))
    }

    /// The pull request's node: its id and entry.
    async fn pull_queue_node(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<PullNode, GitHubError> {
        let variables = pull_variables(repo, number);
        let (data, errors) = self
            .merge_queue_operation::<PullData>(
                repo,
                QUEUE_ENTRY_QUERY,
                "MpQueueEntry",
                variables,
                false,
            )
            .await?;
        data.and_then(|d| d.repository)
            .and_then(|r| r.pull_request)
            .ok_or_else(|| not_found(format!("{repo}#{number}"), &errors))
    }

    pub(crate) async fn merge_queue_graphql(
        &self,
        repo: &RepoName,
        branch: &str,
    ) -> Result<Option<Vec<QueueEntry>>, GitHubError> {
        let variables = json!({ "owner": repo.owner(), "name": repo.name(), "branch": branch });
        let (data, errors) = self
            .merge_queue_operation::<QueueData>(
                repo,
                MERGE_QUEUE_QUERY,
                "MpMergeQueue",
                variables,
                false,
            )
            .await?;
        let Some(repository) = data.and_then(|d| d.repository) else {
            return Err(not_found(format!("repository {repo}"), &errors));
        };
        let Some(queue) = repository.merge_queue else {
            return Ok(None);
        };
        let entries = queue
            .entries
            .ok_or_else(|| malformed("a merge queue without its entries"))?;
        let nodes: Vec<EntryNode> = entries
            .nodes
            .unwrap_or_default()
            .into_iter()
            .flatten()
            .collect();
        if usize::try_from(entries.total_count).unwrap_or(usize::MAX) != nodes.len() {
            // More than one page: fail closed rather than miss an entry.
            return Err(GitHubError::Truncated {
                what: format!("the merge queue of {repo}@{branch}"),
                limit: 100,
            });
        }
        nodes
            .into_iter()
            .map(|node| entry(node, None))
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    pub(crate) async fn last_queue_removal_graphql(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Option<QueueRemoval>, GitHubError> {
        let variables = pull_variables(repo, number);
        let (data, errors) = self
            .merge_queue_operation::<RemovalData>(
                repo,
                QUEUE_REMOVAL_QUERY,
                "MpQueueRemoval",
                variables,
                false,
            )
            .await?;
        let pull = data
            .and_then(|d| d.repository)
            .and_then(|r| r.pull_request)
            .ok_or_else(|| not_found(format!("{repo}#{number}"), &errors))?;
        let Some(node) = pull
            .timeline_items
            .nodes
            .unwrap_or_default()
            .into_iter()
            .flatten()
            .last()
        else {
            return Ok(None);
        };
        let head = match node.before_commit {
            Some(oid) => Some(CommitSha::parse(&oid.oid).map_err(|e| malformed(e.to_string()))?),
            None => None,
        };
        Ok(Some(QueueRemoval {
            head,
            actor: node.actor.and_then(actor_login),
            reason: node.reason,
            at: node.created_at.and_then(|t| Timestamp::parse(&t).ok()),
        }))
    }

    pub(crate) async fn queue_entry_graphql(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Option<QueueEntry>, GitHubError> {
        let node = self.pull_queue_node(repo, number).await?;
        match (node.is_in_merge_queue, node.merge_queue_entry) {
            (true, Some(found)) => entry(found, Some(number)).map(Some),
            _ => Ok(None),
        }
    }

    pub(crate) async fn enqueue_graphql(
        &self,
        repo: &RepoName,
        number: PrNumber,
        expected_head: &CommitSha,
    ) -> Result<QueueEntry, GitHubError> {
        let node = self.pull_queue_node(repo, number).await?;
        let variables =
            json!({ "pullRequestId": node.id, "expectedHeadOid": expected_head.as_str() });
        let (data, errors) = self
            .merge_queue_operation::<EnqueueData>(
                repo,
                ENQUEUE_MUTATION,
                "MpEnqueue",
                variables,
                true,
            )
            .await?;
        let pr = format!("{repo}#{number}");
        let payload = data
            .and_then(|d| d.enqueue_pull_request)
            .and_then(|p| p.merge_queue_entry);
        match payload {
            Some(found) => entry(found, Some(number)),
            None => {
                let message: Vec<&str> = errors.iter().map(|e| e.message.as_str()).collect();
                let message = message.join("; ");
                if message.to_ascii_lowercase().contains("expected head") {
                    Err(GitHubError::HeadMoved {
                        pr,
                        expected: expected_head.clone(),
                    })
                } else {
                    Err(GitHubError::NotMergeable { pr, message })
                }
            }
        }
    }

    pub(crate) async fn dequeue_graphql(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<(), GitHubError> {
        let node = self.pull_queue_node(repo, number).await?;
        let variables = json!({ "id": node.id });
        let (data, errors) = self
            .merge_queue_operation::<Value>(repo, DEQUEUE_MUTATION, "MpDequeue", variables, true)
            .await?;
        let done = data
            .as_ref()
            .and_then(|d| d.get("dequeuePullRequest"))
            .is_some_and(|p| !p.is_null());
        if done && errors.is_empty() {
            return Ok(());
        }
        let message: Vec<&str> = errors.iter().map(|e| e.message.as_str()).collect();
        Err(GitHubError::NotMergeable {
            pr: format!("{repo}#{number}"),
            message: message.join("; "),
        })
    }
}
