//! Webhook deliveries of the loopback server: for each change a route makes to the world, a
//! GitHub-shaped, signed delivery POSTed to one [`WebhookTarget`], as GitHub delivers an
//! App's webhooks.
//!
//! A delivery is rendered when its change is applied (so it shows the world as it was
//! then) and queued; the API answer does not wait for it. One task per server sends the
//! queue in order, each delivery with a [`DELIVERY_TIMEOUT`]; a delivery that fails (no
//! answer in time, a connection error, a status other than 2xx) is counted in
//! [`WebhookDeliveries`] and dropped, as GitHub drops it (no retry). Concurrent requests
//! queue their deliveries in the order their handlers finish.
//!
//! The deliveries of the bot's writes are not placed by the routes: around every request
//! that may write, the middleware notes the world and the action log, and maps each
//! [`Write`] the request added to its events with one function, [`changes`], an exhaustive
//! match over the writes (decisions/0041), rendered from the world after the request.
//! What is not a write of the port delivers from its route: a check run published or
//! completed by CI's App, and `_loopback/label`, a person's label.
//!
//! Which event for which change (the REST routes act as the bot, the `sender`;
//! `_loopback/label` acts as its `actor`; check runs as their App, `<slug>[bot]`):
//!
//! | change (route)                                              | event           | action                     |
//! |-------------------------------------------------------------|-----------------|----------------------------|
//! | `POST /pulls` (a new pull request)                          | `pull_request`  | `opened`                   |
//! | `PUT /pulls/{n}/update-branch` (the head moves)             | `push` (head branch), then `pull_request` | `synchronize` |
//! | `PUT /pulls/{n}/merge`                                      | `push` (base branch), then `pull_request` | `closed` (`merged: true`) |
//! | `POST /issues/{n}/labels`, `POST /_loopback/label` on a pull request | `pull_request` | `labeled` (one per new label) |
//! | `DELETE /issues/{n}/labels/{label}` on a pull request       | `pull_request`  | `unlabeled`                |
//! | `PATCH /issues/{n}` on a pull request                       | `pull_request`  | `edited` (body), `closed`  |
//! | `POST /issues`                                              | `issues`        | `opened`, then `labeled` per label |
//! | `PATCH /issues/{n}` on an issue                             | `issues`        | `edited` (body), `closed`  |
//! | `POST /issues/{n}/labels`, `POST /_loopback/label` on an issue | `issues`     | `labeled`                  |
//! | `DELETE /issues/{n}/labels/{label}` on an issue             | `issues`        | `unlabeled`                |
//! | `POST /issues/{n}/comments`                                 | `issue_comment` | `created`                  |
//! | `PATCH /issues/comments/{id}`                               | `issue_comment` | `edited`                   |
//! | `POST /check-runs`                                          | `check_run`     | `created`, and `completed` when created completed |
//! | `PATCH /check-runs/{id}` that completes the run             | `check_run`     | `completed`                |
//! | `PUT /contents/{path}` (a commit on a branch)               | `push`          | (none)                     |
//! | `POST /git/refs` (a new branch)                             | `push` (`created: true`, no commits) | (none)  |
//! | `POST /_loopback/revert` (a new branch with the revert)     | `push` (`created: true`) | (none)            |
//! | GitHub's merge queue made a merge group (the clock moved)   | `merge_group`   | `checks_requested`         |
//! | a merge group ended (landed, dequeued, invalidated)         | `merge_group`   | `destroyed` (`reason`)     |
//!
//! Every payload carries `repository` (the REST repository object), `sender` (a user
//! object) and `installation` (`{id, node_id}`, the installation on the repository's
//! owner, numbered as `GET /app/installations` numbers them); the event's own object is
//! the REST one (`pull_request` is `GET /pulls/{n}`'s, `issue` the issues API's,
//! `check_run` `GET /check-runs/{id}`'s with its `pull_requests` and `check_suite`
//! filled in), with the few fields GitHub's webhook description requires beyond it (a
//! repository's `topics`, an issue's and a comment's `reactions`, an issue's creation
//! time). A test validates every kind of delivery against that description
//! (`@octokit/openapi-webhooks`, fetched by `cargo xtask webhooks`). Changes the server
//! makes without a request (the simulated CI of a world's `ci:`, the clock moving)
//! deliver nothing, except what GitHub's merge queue did with its merge groups: each event
//! of the world's `merge_group_log` is delivered once, at the start of the next request
//! or at the end of the request that caused it (a dequeue), sent by
//! `github-merge-queue[bot]` ([`merge_groups`], decisions/0083). The queue's landings and
//! group branches deliver no `push`.

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use hmac::{Hmac, Mac};
use mp_core::context::{CheckRun, CommentId, PrState, Reaction, ReactionKind};
use mp_core::ids::{CommitSha, Login, PrNumber, RepoName};
use mp_core::port::{IssueState, Write};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::boilerplate::{CREATED_AT, add_missing, url_path};
use super::render;
use super::state::Shared;
use crate::memory::history::branch_files;
use crate::world::{Commit, Repo, World};

/// How long one delivery may take, answer included (GitHub's own limit is 10 seconds).
pub const DELIVERY_TIMEOUT: Duration = Duration::from_secs(10);

/// How long [`super::LoopbackServer::shutdown`] waits for queued deliveries to go out.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);

/// The `User-Agent` of every delivery: GitHub's is `GitHub-Hookshot/<version>`.
const USER_AGENT: &str = "GitHub-Hookshot/loopback";

/// The SHA GitHub writes for "no commit" (a branch before its creation).
const ZERO_SHA: &str = "0000000000000000000000000000000000000000";

/// GitHub lists at most 20 commits in a push payload.
const PUSH_COMMITS_CAP: usize = 20;

/// Where the loopback server delivers its webhooks: the endpoint and the webhook secret
/// that signs each delivery (`X-Hub-Signature-256`). `Debug` does not print the secret.
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookTarget {
    /// The `http` or `https` URL each delivery is POSTed to.
    pub url: String,
    /// The webhook secret.
    pub secret: String,
}

impl fmt::Debug for WebhookTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebhookTarget")
            .field("url", &self.url)
            .field("secret", &"[redacted]")
            .finish()
    }
}

/// The webhook deliveries of a server so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WebhookDeliveries {
    /// Deliveries queued (each change's events), sent or not yet.
    pub queued: u64,
    /// Deliveries the target answered with a 2xx status.
    pub sent: u64,
    /// Deliveries that failed and were dropped: no answer within [`DELIVERY_TIMEOUT`], a
    /// connection error, or another status.
    pub failed: u64,
    /// The last failure: the event, the delivery id and what went wrong.
    pub last_failure: Option<String>,
}

impl WebhookDeliveries {
    /// Deliveries queued and not yet sent or failed.
    pub fn pending(&self) -> u64 {
        self.queued.saturating_sub(self.sent + self.failed)
    }
}

/// The signature GitHub sends in `X-Hub-Signature-256` for `body` under `secret`:
/// `sha256=` and the lowercase hex HMAC-SHA256.
pub fn signature_256(secret: &[u8], body: &[u8]) -> String {
    // HMAC takes a key of any length.
    let mut mac = Hmac::<Sha256>::new_from_slice(secret)
        .unwrap_or_else(|_| unreachable!("HMAC accepts keys of every length"));
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// One delivery waiting to go out.
#[derive(Debug)]
struct Delivery {
    event: &'static str,
    payload: Value,
}

#[derive(Debug, Default)]
struct Counters {
    queued: AtomicU64,
    sent: AtomicU64,
    failed: AtomicU64,
    last_failure: Mutex<Option<String>>,
}

impl Counters {
    fn last_failure(&self) -> MutexGuard<'_, Option<String>> {
        self.last_failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn snapshot(&self) -> WebhookDeliveries {
        // Read the outcomes before `queued`, so `pending` never goes below zero.
        let sent = self.sent.load(Ordering::SeqCst);
        let failed = self.failed.load(Ordering::SeqCst);
        WebhookDeliveries {
            queued: self.queued.load(Ordering::SeqCst),
            sent,
            failed,
            last_failure: self.last_failure().clone(),
        }
    }
}

/// What each delivery says about the hook: GitHub's `X-GitHub-Hook-*` values.
#[derive(Debug, Clone)]
struct HookIdentity {
    hook_id: u64,
    app_id: u64,
}

/// The delivery queue of one server and the task that sends it.
#[derive(Debug)]
pub(super) struct Webhooks {
    /// Held by a request that may write, so the actions it adds are its own.
    writes: tokio::sync::Mutex<()>,
    queue: Mutex<Option<mpsc::UnboundedSender<Delivery>>>,
    task: Mutex<Option<JoinHandle<()>>>,
    counters: Arc<Counters>,
    /// How many entries of each repository's merge-group log were delivered (or were
    /// there when the server started).
    groups_sent: Mutex<BTreeMap<RepoName, usize>>,
}

impl Webhooks {
    /// Notes the merge-group events `world` holds before the server starts: those are not
    /// delivered.
    pub(super) fn prime(&self, world: &World) {
        let mut sent = self
            .groups_sent
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for repo in &world.repos {
            sent.insert(repo.name.clone(), repo.merge_group_log.len());
        }
    }

    /// Starts the delivery task for `target`, on behalf of the App `app_slug`.
    ///
    /// # Errors
    /// When the target's URL is not an `http` or `https` URL, or no HTTP client can be
    /// built.
    pub(super) fn start(target: WebhookTarget, app_slug: &str) -> std::io::Result<Self> {
        let invalid = |reason: String| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("webhook url {:?}: {reason}", target.url),
            )
        };
        let url = reqwest::Url::parse(&target.url).map_err(|e| invalid(e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(invalid("not an http or https URL".to_owned()));
        }
        let mut builder = reqwest::Client::builder()
            .timeout(DELIVERY_TIMEOUT)
            .user_agent(USER_AGENT);
        if url.scheme() == "http" {
            // No TLS roots to load for a plain-HTTP receiver.
            builder = builder.tls_certs_only(std::iter::empty());
        }
        let client = builder.build().map_err(std::io::Error::other)?;
        let identity = HookIdentity {
            hook_id: render::stable_id("hook", app_slug),
            app_id: render::stable_id("app", app_slug),
        };
        let counters = Arc::new(Counters::default());
        let (sender, receiver) = mpsc::unbounded_channel();
        let sending = Sender {
            client,
            url,
            secret: target.secret,
            identity,
            counters: Arc::clone(&counters),
        };
        let task = tokio::spawn(sending.run(receiver));
        Ok(Self {
            writes: tokio::sync::Mutex::new(()),
            queue: Mutex::new(Some(sender)),
            task: Mutex::new(Some(task)),
            counters,
            groups_sent: Mutex::new(BTreeMap::new()),
        })
    }

    fn enqueue(&self, event: &'static str, payload: Value) {
        let queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(queue) = queue.as_ref() {
            self.counters.queued.fetch_add(1, Ordering::SeqCst);
            if queue.send(Delivery { event, payload }).is_err() {
                // The task is gone (the server is stopping): the delivery is dropped.
                self.counters.queued.fetch_sub(1, Ordering::SeqCst);
            }
        }
    }

    /// The deliveries so far.
    pub(super) fn deliveries(&self) -> WebhookDeliveries {
        self.counters.snapshot()
    }

    /// Closes the queue and waits for what is queued to go out, [`DRAIN_TIMEOUT`] at most.
    pub(super) async fn close(&self) {
        drop(
            self.queue
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
        let task = self
            .task
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(mut task) = task
            && tokio::time::timeout(DRAIN_TIMEOUT, &mut task)
                .await
                .is_err()
        {
            task.abort();
        }
    }
}

/// The delivery task's side: the client, the target and the counters.
struct Sender {
    client: reqwest::Client,
    url: reqwest::Url,
    secret: String,
    identity: HookIdentity,
    counters: Arc<Counters>,
}

impl Sender {
    async fn run(self, mut queue: mpsc::UnboundedReceiver<Delivery>) {
        let mut sequence = 0_u64;
        while let Some(delivery) = queue.recv().await {
            sequence += 1;
            let id = delivery_id(sequence);
            let outcome = self.send(&id, &delivery).await;
            match outcome {
                Ok(()) => {
                    self.counters.sent.fetch_add(1, Ordering::SeqCst);
                }
                Err(reason) => {
                    *self.counters.last_failure() =
                        Some(format!("{} delivery {id}: {reason}", delivery.event));
                    self.counters.failed.fetch_add(1, Ordering::SeqCst);
                }
            }
        }
    }

    async fn send(&self, id: &str, delivery: &Delivery) -> Result<(), String> {
        let body = serde_json::to_vec(&delivery.payload).map_err(|e| e.to_string())?;
        let signature = signature_256(self.secret.as_bytes(), &body);
        let HookIdentity { hook_id, app_id } = &self.identity;
        let answer = self
            .client
            .post(self.url.clone())
            .header("Content-Type", "application/json")
            .header("X-GitHub-Event", delivery.event)
            .header("X-GitHub-Delivery", id)
            .header("X-Hub-Signature-256", signature)
            .header("X-GitHub-Hook-ID", hook_id.to_string())
            .header("X-GitHub-Hook-Installation-Target-Type", "integration")
            .header("X-GitHub-Hook-Installation-Target-ID", app_id.to_string())
            .body(body)
            .send()
            .await;
        match answer {
            Ok(answer) if answer.status().is_success() => Ok(()),
            Ok(answer) => Err(format!("answered HTTP {}", answer.status().as_u16())),
            Err(err) if err.is_timeout() => {
                Err(format!("no answer within {} s", DELIVERY_TIMEOUT.as_secs()))
            }
            Err(err) => Err(with_causes(&err)),
        }
    }
}

/// `err` and its causes, `: `-separated (reqwest's own message omits the cause, e.g. the
/// refused connection).
fn with_causes(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// A fresh GUID-shaped delivery id (a version-4 UUID's layout), as GitHub's
/// `X-GitHub-Delivery`: the hash of the time, the process and the delivery's number.
fn delivery_id(sequence: u64) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let digest = Sha256::digest(format!("{nanos}/{}/{sequence}", std::process::id()));
    let mut bytes = [0_u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex = hex::encode(bytes);
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

// ---- payloads --------------------------------------------------------------------------

/// Renders a payload from the world and queues it, when the server delivers webhooks.
fn deliver(s: &Shared, event: &'static str, render: impl FnOnce(&World) -> Option<Value>) {
    let Some(hooks) = &s.webhooks else {
        return;
    };
    if let Some(payload) = s.memory.read(render) {
        hooks.enqueue(event, payload);
    }
}

/// The bot's login, as the REST routes act.
fn bot(world: &World) -> String {
    world.bot_login().map_or_else(
        |_| format!("{}[bot]", world.bot_slug),
        |l| l.as_str().to_owned(),
    )
}

/// The installation of the server's App on the repository's owner: `{id, node_id}`.
fn installation(world: &World, repo: &RepoName) -> Value {
    let mut owners: Vec<&str> = Vec::new();
    for found in &world.repos {
        if !owners.contains(&found.name.owner()) {
            owners.push(found.name.owner());
        }
    }
    let position = owners.iter().position(|o| *o == repo.owner()).unwrap_or(0);
    let id = position + 1;
    // GitHub's legacy global id of an installation.
    let node_id = base64::engine::general_purpose::STANDARD
        .encode(format!("023:IntegrationInstallation{id}"));
    json!({ "id": id, "node_id": node_id })
}

/// `action` (when the event has one), `repository`, `sender` and `installation`.
fn envelope(
    s: &Shared,
    world: &World,
    repo: &Repo,
    sender: &str,
    action: Option<&str>,
) -> Map<String, Value> {
    let mut map = Map::new();
    if let Some(action) = action {
        map.insert("action".to_owned(), json!(action));
    }
    let mut repository = render::repository(&s.base_url, &repo.name, &repo.default_branch);
    add_webhook_repository_fields(&mut repository);
    map.insert("repository".to_owned(), repository);
    map.insert("sender".to_owned(), render::user(&s.base_url, sender));
    map.insert("installation".to_owned(), installation(world, &repo.name));
    map
}

/// What a webhook's repository object has beside the REST one's fields.
fn add_webhook_repository_fields(repository: &mut Value) {
    add_missing(repository, json!({ "topics": [] }));
}

/// GitHub's reaction counts of an issue or a comment, from its `reactions`.
fn reaction_rollup(url: String, reactions: &[Reaction]) -> Value {
    let mut counts: BTreeMap<&str, u64> = [
        "+1", "-1", "laugh", "confused", "heart", "hooray", "eyes", "rocket",
    ]
    .into_iter()
    .map(|kind| (kind, 0))
    .collect();
    for reaction in reactions {
        let kind = match &reaction.kind {
            ReactionKind::ThumbsUp => "+1",
            ReactionKind::ThumbsDown => "-1",
            ReactionKind::Other(other) => other.as_str(),
        };
        if let Some(count) = counts.get_mut(kind) {
            *count += 1;
        }
    }
    let mut value = json!({ "url": url, "total_count": counts.values().sum::<u64>() });
    if let Value::Object(map) = &mut value {
        for (kind, count) in counts {
            map.insert(kind.to_owned(), json!(count));
        }
    }
    value
}

/// The issue (or pull request) `number` as an issue webhook shows it: the issues API's
/// object with its reactions, and a creation time even when the world has none (GitHub
/// always has one).
fn issue_object(s: &Shared, repo: &Repo, number: PrNumber) -> Option<Value> {
    let (issue, comments) = render::thread_issue(repo, number)?;
    let reactions = match repo.pull(number) {
        Some(pull) => &pull.reactions,
        None => &repo.issue(number)?.reactions,
    };
    let mut value = render::issue(&s.base_url, &issue, comments);
    let url = format!(
        "{}/repos/{}/issues/{number}/reactions",
        s.base_url, repo.name
    );
    add_missing(
        &mut value,
        json!({ "reactions": reaction_rollup(url, reactions) }),
    );
    if let Value::Object(map) = &mut value {
        for field in ["created_at", "updated_at"] {
            if map.get(field).is_none_or(Value::is_null) {
                map.insert(field.to_owned(), json!(CREATED_AT));
            }
        }
    }
    Some(value)
}

/// What changed on a pull request or an issue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ThreadChange {
    /// Created.
    Opened,
    /// The body changed from `body_from`.
    Edited {
        /// The body before.
        body_from: String,
    },
    /// Closed (a merged pull request says so in `pull_request.merged`).
    Closed,
    /// A label was applied.
    Labeled(String),
    /// A label was removed.
    Unlabeled(String),
    /// The pull request's head moved from `before` to `after`.
    Synchronize {
        /// The head before.
        before: CommitSha,
        /// The head after.
        after: CommitSha,
    },
}

impl ThreadChange {
    fn action(&self) -> &'static str {
        match self {
            Self::Opened => "opened",
            Self::Edited { .. } => "edited",
            Self::Closed => "closed",
            Self::Labeled(_) => "labeled",
            Self::Unlabeled(_) => "unlabeled",
            Self::Synchronize { .. } => "synchronize",
        }
    }
}

/// Delivers `change` of issue or pull request `number`: a `pull_request` event for a pull
/// request, an `issues` event for an issue. `sender` is the bot unless given.
pub(super) fn thread(
    s: &Shared,
    repo: &RepoName,
    number: PrNumber,
    change: &ThreadChange,
    sender: Option<&Login>,
) {
    let is_pull = s
        .memory
        .read(|w| w.repo(repo).is_some_and(|r| r.pull(number).is_some()));
    let event = if is_pull { "pull_request" } else { "issues" };
    deliver(s, event, |w| {
        let found = w.repo(repo)?;
        let sender = sender.map_or_else(|| bot(w), |l| l.as_str().to_owned());
        let mut map = envelope(s, w, found, &sender, Some(change.action()));
        if is_pull {
            let pull = found.pull(number)?;
            let mut value = render::pull(&s.base_url, found, pull, w.now, true);
            for end in ["/head/repo", "/base/repo"] {
                if let Some(repository) = value.pointer_mut(end) {
                    add_webhook_repository_fields(repository);
                }
            }
            map.insert("number".to_owned(), json!(number.get()));
            map.insert("pull_request".to_owned(), value);
        } else {
            map.insert("issue".to_owned(), issue_object(s, found, number)?);
        }
        match change {
            ThreadChange::Labeled(label) | ThreadChange::Unlabeled(label) => {
                map.insert("label".to_owned(), render::label(&s.base_url, repo, label));
            }
            ThreadChange::Edited { body_from } => {
                map.insert(
                    "changes".to_owned(),
                    json!({ "body": { "from": body_from } }),
                );
            }
            ThreadChange::Synchronize { before, after } => {
                map.insert("before".to_owned(), json!(before.as_str()));
                map.insert("after".to_owned(), json!(after.as_str()));
            }
            ThreadChange::Opened | ThreadChange::Closed => {}
        }
        Some(Value::Object(map))
    });
}

/// What happened to a comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum CommentChange {
    /// Posted.
    Created,
    /// Its body changed from `body_from`.
    Edited {
        /// The body before.
        body_from: String,
    },
}

/// Delivers `issue_comment` for comment `id` on issue or pull request `number`.
pub(super) fn issue_comment(
    s: &Shared,
    repo: &RepoName,
    number: PrNumber,
    id: CommentId,
    change: &CommentChange,
) {
    deliver(s, "issue_comment", |w| {
        let found = w.repo(repo)?;
        let comments = match found.pull(number) {
            Some(pull) => &pull.comments,
            None => &found.issue(number)?.comments,
        };
        let comment = comments.iter().find(|c| c.id == id)?;
        let sender = comment
            .author
            .as_ref()
            .map_or_else(|| bot(w), |l| l.as_str().to_owned());
        let action = match change {
            CommentChange::Created => "created",
            CommentChange::Edited { .. } => "edited",
        };
        let mut map = envelope(s, w, found, &sender, Some(action));
        map.insert("issue".to_owned(), issue_object(s, found, number)?);
        let mut comment = render::comment(&s.base_url, repo, Some(number), comment);
        let reactions = format!(
            "{}/repos/{repo}/issues/comments/{}/reactions",
            s.base_url,
            id.get()
        );
        add_missing(
            &mut comment,
            json!({
                "performed_via_github_app": Value::Null,
                "reactions": reaction_rollup(reactions, &[]),
            }),
        );
        map.insert("comment".to_owned(), comment);
        if let CommentChange::Edited { body_from } = change {
            map.insert(
                "changes".to_owned(),
                json!({ "body": { "from": body_from } }),
            );
        }
        Some(Value::Object(map))
    });
}

/// What happened to a check run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CheckRunChange {
    /// Published.
    Created,
    /// Its status became `completed`.
    Completed,
}

/// A pull request as a check run or a check suite lists it: number, head and base.
fn check_pull(base: &str, repo: &Repo, pull: &crate::world::Pull) -> Value {
    let name = &repo.name;
    let repo_ref = json!({
        "id": render::stable_id("repo", name.as_str()),
        "url": format!("{base}/repos/{name}"),
        "name": name.name(),
    });
    json!({
        "url": format!("{base}/repos/{name}/pulls/{}", pull.number),
        "id": render::stable_id("pull", &format!("{name}#{}", pull.number)),
        "number": pull.number.get(),
        "head": { "ref": pull.head_ref, "sha": pull.head_sha.as_str(), "repo": repo_ref.clone() },
        "base": { "ref": pull.base_ref, "sha": pull.base_sha.as_str(), "repo": repo_ref },
    })
}

/// Delivers `check_run` for run `index` of commit `head`; the sender is the run's App.
pub(super) fn check_run(
    s: &Shared,
    repo: &RepoName,
    head: &CommitSha,
    index: usize,
    change: CheckRunChange,
) {
    deliver(s, "check_run", |w| {
        let found = w.repo(repo)?;
        let run: &CheckRun = found.commit(head)?.checks.get(index)?;
        let sender = match &run.app_slug {
            Some(slug) => format!("{slug}[bot]"),
            None => bot(w),
        };
        let action = match change {
            CheckRunChange::Created => "created",
            CheckRunChange::Completed => "completed",
        };
        let mut map = envelope(s, w, found, &sender, Some(action));
        let base = &s.base_url;
        let open: Vec<&crate::world::Pull> = found
            .pulls
            .iter()
            .filter(|p| p.state == PrState::Open && &p.head_sha == head)
            .collect();
        let pulls: Vec<Value> = open.iter().map(|p| check_pull(base, found, p)).collect();
        let mut value = render::check_run(base, repo, head, index, run);
        let suite_id = value
            .pointer("/check_suite/id")
            .and_then(Value::as_u64)
            .unwrap_or_default();
        let suite = json!({
            "id": suite_id,
            "node_id": format!("CS_loopback{suite_id}"),
            "head_branch": open.first().map(|p| p.head_ref.clone()),
            "head_sha": head.as_str(),
            "status": run.status.as_str(),
            "conclusion": run.conclusion.as_ref().map(|c| c.as_str().to_owned()),
            "url": format!("{base}/repos/{repo}/check-suites/{suite_id}"),
            "before": Value::Null,
            "after": head.as_str(),
            "pull_requests": pulls.clone(),
            "app": value.get("app").cloned().unwrap_or(Value::Null),
            "created_at": render::time(run.started_at),
            "updated_at": render::time(run.completed_at.or(run.started_at)),
        });
        if let Value::Object(run_map) = &mut value {
            run_map.insert("pull_requests".to_owned(), Value::Array(pulls));
            run_map.insert("check_suite".to_owned(), suite);
        }
        map.insert("check_run".to_owned(), value);
        Some(Value::Object(map))
    });
}

/// A branch before a push: its head (`None` before its creation) and the files the push's
/// file lists compare with.
#[derive(Debug, Clone)]
pub(super) struct BranchBefore {
    head: Option<CommitSha>,
    files: BTreeMap<String, String>,
}

/// The paths added, removed and modified from `before` to `after`.
fn file_lists(
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
) -> (Vec<String>, Vec<String>, Vec<String>) {
    let added = after
        .keys()
        .filter(|p| !before.contains_key(*p))
        .cloned()
        .collect();
    let removed = before
        .keys()
        .filter(|p| !after.contains_key(*p))
        .cloned()
        .collect();
    let modified = after
        .iter()
        .filter(|(p, text)| before.get(*p).is_some_and(|old| old != *text))
        .map(|(p, _)| p.clone())
        .collect();
    (added, removed, modified)
}

/// A git identity as a push payload names it.
fn push_person(login: Option<&Login>) -> Value {
    match login {
        Some(login) => json!({
            "name": login.as_str(),
            "email": format!("{}@users.noreply.github.com", login.as_str()),
            "username": login.as_str(),
        }),
        None => json!({ "name": "unknown", "email": "unknown@example.invalid" }),
    }
}

/// A commit as a push payload lists it, with its file lists.
fn push_commit(
    repo: &RepoName,
    commit: &Commit,
    files: &(Vec<String>, Vec<String>, Vec<String>),
) -> Value {
    let sha = commit.sha.as_str();
    json!({
        "id": sha,
        "tree_id": render::tree_sha(sha),
        "distinct": true,
        "message": commit.message,
        "timestamp": render::time(commit.date),
        "url": format!("https://github.com/{repo}/commit/{sha}"),
        "author": push_person(commit.author.as_ref()),
        "committer": push_person(commit.committer.as_ref()),
        "added": files.0,
        "removed": files.1,
        "modified": files.2,
    })
}

/// Delivers `push` for `branch` of `repo`, moved from `before` to its current head by the
/// bot, with `new_commits` (oldest first) the push brought; the file lists go on the
/// newest. Nothing when `before` is `None` (the server delivers no webhooks).
pub(super) fn push(
    s: &Shared,
    repo: &RepoName,
    branch: &str,
    before: Option<BranchBefore>,
    new_commits: &[CommitSha],
) {
    let Some(before) = before else {
        return;
    };
    deliver(s, "push", |w| {
        let found = w.repo(repo)?;
        let after = found.branch_head(branch)?.clone();
        let pusher = bot(w);
        let mut map = envelope(s, w, found, &pusher, None);
        let files = file_lists(&before.files, branch_files(found, branch));
        let no_files = (Vec::new(), Vec::new(), Vec::new());
        let listed = &new_commits[new_commits.len().saturating_sub(PUSH_COMMITS_CAP)..];
        let commits: Vec<Value> = listed
            .iter()
            .enumerate()
            .filter_map(|(index, sha)| {
                let newest = index + 1 == listed.len();
                let commit = found.commit(sha)?;
                Some(push_commit(
                    repo,
                    commit,
                    if newest { &files } else { &no_files },
                ))
            })
            .collect();
        let head_commit = match commits.last() {
            Some(newest) => newest.clone(),
            None => found
                .commit(&after)
                .map_or(Value::Null, |c| push_commit(repo, c, &no_files)),
        };
        let created = before.head.is_none();
        // A move that leaves the old head out of the branch rewrote it.
        let forced = before.head.as_ref().is_some_and(|from| {
            !crate::memory::history::commits_between(found, &after, from).is_empty()
        });
        let before_sha = before.head.as_ref().map_or(ZERO_SHA, CommitSha::as_str);
        let compare = if created {
            format!("https://github.com/{repo}/compare/{}", url_path(branch))
        } else {
            format!(
                "https://github.com/{repo}/compare/{}...{}",
                &before_sha[..12],
                &after.as_str()[..12]
            )
        };
        let fields = json!({
            "ref": format!("refs/heads/{branch}"),
            "before": before_sha,
            "after": after.as_str(),
            "created": created,
            "deleted": false,
            "forced": forced,
            "base_ref": Value::Null,
            "compare": compare,
            "commits": commits,
            "head_commit": head_commit,
            "pusher": {
                "name": pusher,
                "email": format!("{pusher}@users.noreply.github.com"),
            },
        });
        if let Value::Object(fields) = fields {
            map.extend(fields);
        }
        Some(Value::Object(map))
    });
}

/// Delivers `merge_group` for every merge-group event the world logged since the last
/// call (decisions/0083): `checks_requested` when GitHub's queue made a group,
/// `destroyed` with its reason when one ended. The queue acts when the clock moves or a
/// pull request leaves it, not through a request of mp's, so the server delivers what
/// happened at its next request, and after each request that writes.
pub(super) fn merge_groups(s: &Shared) {
    let Some(hooks) = &s.webhooks else {
        return;
    };
    let mut sent = hooks
        .groups_sent
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let payloads: Vec<Value> = s.memory.read(|world| {
        let mut payloads = Vec::new();
        for repo in &world.repos {
            let from = sent.get(&repo.name).copied().unwrap_or(0);
            let log = &repo.merge_group_log;
            for event in log.get(from..).unwrap_or_default() {
                payloads.push(merge_group_payload(s, world, repo, event));
            }
            sent.insert(repo.name.clone(), log.len());
        }
        payloads
    });
    for payload in payloads {
        hooks.enqueue("merge_group", payload);
    }
}

/// One `merge_group` delivery; the sender is the merge queue's App.
fn merge_group_payload(
    s: &Shared,
    world: &World,
    repo: &Repo,
    event: &crate::world::MergeGroupEvent,
) -> Value {
    let group = &event.group;
    let sender = format!("{}[bot]", crate::world::MERGE_QUEUE_APP);
    let action = if event.destroyed.is_some() {
        "destroyed"
    } else {
        "checks_requested"
    };
    let mut map = envelope(s, world, repo, &sender, Some(action));
    if let Some(why) = event.destroyed {
        map.insert("reason".to_owned(), json!(why.as_str()));
    }
    let sha = group.head.as_str();
    let head_commit = repo.commit(&group.head).map_or_else(
        || {
            json!({
                "id": sha, "tree_id": render::tree_sha(sha), "message": "",
                "timestamp": render::time(Some(group.created_at)),
                "author": Value::Null, "committer": Value::Null,
            })
        },
        |commit| {
            let person = |login: Option<&Login>| {
                let mut person = push_person(login);
                if let Value::Object(fields) = &mut person {
                    fields.remove("username");
                }
                person
            };
            json!({
                "id": sha,
                "tree_id": render::tree_sha(sha),
                "message": commit.message,
                "timestamp": render::time(commit.date),
                "author": person(commit.author.as_ref()),
                "committer": person(commit.committer.as_ref()),
            })
        },
    );
    map.insert(
        "merge_group".to_owned(),
        json!({
            "head_sha": sha,
            "head_ref": format!("refs/heads/{}", group.head_ref),
            "base_sha": group.base.as_str(),
            "base_ref": format!("refs/heads/{}", event.base_ref),
            "head_commit": head_commit,
        }),
    );
    Value::Object(map)
}

// ---- writes to changes -----------------------------------------------------------------

/// One change a write made, as GitHub delivers it.
#[derive(Debug, Clone)]
pub(super) enum Change {
    /// A pull request or an issue changed.
    Thread {
        /// Its repository.
        repo: RepoName,
        /// Its number.
        number: PrNumber,
        /// What changed.
        change: ThreadChange,
    },
    /// A comment was posted or edited.
    Comment {
        /// Its repository.
        repo: RepoName,
        /// The issue or pull request it is on.
        number: PrNumber,
        /// The comment.
        id: CommentId,
        /// What happened to it.
        change: CommentChange,
    },
    /// A branch moved (or was created) by the bot.
    Push {
        /// Its repository.
        repo: RepoName,
        /// The branch.
        branch: String,
        /// The branch before the push.
        before: BranchBefore,
        /// The commits the push brought, oldest first.
        commits: Vec<CommitSha>,
    },
}

/// `branch` of `repo` as it was: its head (`None` when it did not exist) and its files.
fn branch_as_was(repo: Option<&Repo>, branch: &str) -> BranchBefore {
    BranchBefore {
        head: repo.and_then(|r| r.branch_head(branch).cloned()),
        files: repo
            .map(|r| branch_files(r, branch).clone())
            .unwrap_or_default(),
    }
}

/// The body comment `id` had on `number`, if it was there.
fn comment_body(repo: &Repo, number: PrNumber, id: CommentId) -> Option<String> {
    let comments = match repo.pull(number) {
        Some(pull) => &pull.comments,
        None => &repo.issue(number)?.comments,
    };
    comments.iter().find(|c| c.id == id).map(|c| c.body.clone())
}

/// What GitHub delivers for `write`, the world having been `before` it: the one place a
/// write of the port is mapped to its webhook events (the table at the top of this
/// module). A write the log holds without GitHub's answer delivers nothing.
pub(super) fn changes(write: &Write, before: &World, after: &World) -> Vec<Change> {
    let repo = write.repo().clone();
    let was = before.repo(&repo);
    let now = after.repo(&repo);
    // A move of a branch merges the open pull requests into it whose heads it reached
    // (GitHub closes them as merged): `pull_request` `closed` for each, after the push.
    let reached = |branch: &str| -> Vec<Change> {
        let (Some(was), Some(now)) = (was, now) else {
            return Vec::new();
        };
        was.pulls
            .iter()
            .filter(|p| p.state == PrState::Open && p.base_ref == branch)
            .filter(|p| now.pull(p.number).is_some_and(|after| after.merged))
            .map(|p| Change::Thread {
                repo: repo.clone(),
                number: p.number,
                change: ThreadChange::Closed,
            })
            .collect()
    };
    let thread = |number: PrNumber, change: ThreadChange| Change::Thread {
        repo: repo.clone(),
        number,
        change,
    };
    let push = |branch: &str, before: BranchBefore, commits: Vec<CommitSha>| Change::Push {
        repo: repo.clone(),
        branch: branch.to_owned(),
        before,
        commits,
    };
    match write {
        Write::CreateComment { number, answer, .. } => answer
            .iter()
            .map(|id| Change::Comment {
                repo: repo.clone(),
                number: *number,
                id: *id,
                change: CommentChange::Created,
            })
            .collect(),
        Write::UpdateComment { id, answer, .. } => answer
            .and_then(|number| {
                let body_from = comment_body(was?, number, *id)?;
                Some(Change::Comment {
                    repo: repo.clone(),
                    number,
                    id: *id,
                    change: CommentChange::Edited { body_from },
                })
            })
            .into_iter()
            .collect(),
        Write::AddLabels { number, labels, .. } => {
            // One `labeled` per label the thread did not have, requested twice or not.
            let present = was
                .and_then(|r| render::thread_labels(r, *number))
                .unwrap_or_default();
            let mut applied: Vec<&String> = Vec::new();
            for label in labels {
                if !present.contains(label) && !applied.contains(&label) {
                    applied.push(label);
                }
            }
            applied
                .into_iter()
                .map(|label| thread(*number, ThreadChange::Labeled(label.clone())))
                .collect()
        }
        Write::RemoveLabel { number, label, .. } => {
            vec![thread(*number, ThreadChange::Unlabeled(label.clone()))]
        }
        Write::CreateIssue { issue, answer, .. } => answer
            .iter()
            .flat_map(|number| {
                let labels = issue
                    .labels
                    .iter()
                    .map(|label| thread(*number, ThreadChange::Labeled(label.clone())));
                std::iter::once(thread(*number, ThreadChange::Opened)).chain(labels)
            })
            .collect(),
        Write::CloseIssue { number, .. } => {
            let was_open = was
                .and_then(|r| render::thread_issue(r, *number))
                .is_some_and(|(issue, _)| issue.state == IssueState::Open);
            if was_open {
                vec![thread(*number, ThreadChange::Closed)]
            } else {
                Vec::new()
            }
        }
        Write::MergePull { number, answer, .. } => {
            let Some(merged) = answer else {
                return Vec::new();
            };
            let base = was.and_then(|r| r.pull(*number)).map(|p| &p.base_ref);
            let mut changes: Vec<Change> = base
                .map(|base| push(base, branch_as_was(was, base), vec![merged.sha.clone()]))
                .into_iter()
                .collect();
            changes.push(thread(*number, ThreadChange::Closed));
            changes
        }
        // GitHub's `pull_request` `enqueued`/`dequeued` deliveries are not simulated yet;
        // the `merge_group` events these cause come from the world's log
        // ([`merge_groups`]).
        Write::EnqueuePull { .. } | Write::DequeuePull { .. } => Vec::new(),
        // The check-run route delivers `check_run` itself, for the bot as for any App.
        Write::CreateCheckRun { .. } => Vec::new(),
        Write::UpdateBranch {
            number,
            expected_head,
            answer,
            ..
        } => {
            let (Some(updated), Some(pull)) = (answer, was.and_then(|r| r.pull(*number))) else {
                return Vec::new();
            };
            let head_ref = &pull.head_ref;
            vec![
                push(
                    head_ref,
                    branch_as_was(was, head_ref),
                    vec![updated.head.clone()],
                ),
                thread(
                    *number,
                    ThreadChange::Synchronize {
                        before: expected_head.clone(),
                        after: updated.head.clone(),
                    },
                ),
            ]
        }
        Write::PutFile { write, answer, .. } => answer
            .iter()
            .map(|written| {
                push(
                    &write.branch,
                    branch_as_was(was, &write.branch),
                    vec![written.commit.clone()],
                )
            })
            .chain(reached(&write.branch))
            .collect(),
        Write::UpdateBranchRef {
            branch,
            sha,
            answer,
            ..
        } => {
            // The commits the move brought, oldest first; all of the tip's when the
            // branch's old head is not among its ancestors.
            let brought = match (answer, now) {
                (Some(from), Some(now)) => crate::memory::history::commits_between(now, from, sha),
                _ => vec![sha.clone()],
            };
            std::iter::once(push(branch, branch_as_was(was, branch), brought))
                .chain(reached(branch))
                .collect()
        }
        Write::MergeIntoBranch { base, answer, .. } => answer
            .iter()
            .map(|merge| push(base, branch_as_was(was, base), vec![merge.clone()]))
            .chain(reached(base))
            .collect(),
        Write::CreateBranch { branch, .. } => {
            let created = BranchBefore {
                head: None,
                files: BTreeMap::new(),
            };
            vec![push(branch, created, Vec::new())]
        }
        Write::UpdateIssueBody { number, body, .. } => {
            let body_from = was
                .and_then(|r| render::thread_issue(r, *number))
                .map(|(issue, _)| issue.body)
                .filter(|from| from != body);
            body_from
                .map(|body_from| thread(*number, ThreadChange::Edited { body_from }))
                .into_iter()
                .collect()
        }
        Write::CreatePull { answer, .. } => answer
            .iter()
            .map(|opened| thread(opened.number, ThreadChange::Opened))
            .collect(),
        Write::PushRevert { branch, answer, .. } => {
            // The revert branch starts with the default branch's files, as the world's
            // reverts do.
            let files = was
                .map(|r| branch_files(r, &r.default_branch).clone())
                .unwrap_or_default();
            let created = BranchBefore { head: None, files };
            answer
                .iter()
                .map(|revert| push(branch, created.clone(), vec![revert.clone()]))
                .collect()
        }
    }
}

/// Queues the deliveries of `changes`, each rendered from the world as it is now.
pub(super) fn deliver_changes(s: &Shared, changes: Vec<Change>) {
    for change in changes {
        match change {
            Change::Thread {
                repo,
                number,
                change,
            } => thread(s, &repo, number, &change, None),
            Change::Comment {
                repo,
                number,
                id,
                change,
            } => issue_comment(s, &repo, number, id, &change),
            Change::Push {
                repo,
                branch,
                before,
                commits,
            } => push(s, &repo, &branch, Some(before), &commits),
        }
    }
}

/// What a request's webhooks need from before it: the world and how long the action log
/// was. While it is held no other request writes, so the actions added meanwhile are the
/// request's own.
pub(super) struct BeforeWrite<'a> {
    _turn: tokio::sync::MutexGuard<'a, ()>,
    world: World,
    actions: usize,
}

/// Takes the write turn and notes the world before a request that may write; `None` when
/// the server delivers no webhooks.
pub(super) async fn before_write(s: &Shared) -> Option<BeforeWrite<'_>> {
    let hooks = s.webhooks.as_ref()?;
    let turn = hooks.writes.lock().await;
    let world = s.memory.world();
    let actions = s.memory.actions().len();
    Some(BeforeWrite {
        _turn: turn,
        world,
        actions,
    })
}

/// Delivers the webhooks of the writes the request added to the action log, in order.
pub(super) fn after_write(s: &Shared, before: BeforeWrite<'_>) {
    let actions = s.memory.actions();
    let added = actions.get(before.actions..).unwrap_or_default();
    if added.is_empty() {
        return;
    }
    let after = s.memory.world();
    for write in added {
        deliver_changes(s, changes(write, &before.world, &after));
    }
}
