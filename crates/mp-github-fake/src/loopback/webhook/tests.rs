//! Tests of the loopback server's webhooks: a receiver on 127.0.0.1 records what the
//! server delivers while a plain HTTP client changes the world.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use mp_core::approval::{Provenance, SettleWindow, effective_applier, prove_head_at_label};
use mp_core::context::HeadHistory;
use mp_core::ids::{CommitSha, Login, PrNumber, RepoName};
use mp_core::port::GitHub;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::watch;

use super::{WebhookDeliveries, WebhookTarget, signature_256};
use crate::loopback::{FaultScript, LoopbackServer, ServerClock};
use crate::world::{World, commit_sha, parse_world};
use mp_github::rest::{Credentials, RestConfig, RestGitHub, RetryPolicy, RevertMode, Secret};

const SECRET: &str = "It's a Secret to Everybody";
const WAIT: Duration = Duration::from_secs(10);

/// Pull request 14 (head `f1`, pushed the day before `now`, no label yet) on `main` at
/// `m1`, and issue 30.
const WORLD: &str = r##"now: 2026-03-02T09:00:00Z
bot: jane-merge-gate
repos:
  - name: jane-doe/webapp
    commits:
      - {id: m1, message: "Initial commit", author: jane-doe, committer: jane-doe, date: 2026-02-01T10:00:00Z}
      - id: f1
        message: |
          Add the health endpoint

          Agent-Tool: claude-code
        parents: [m1]
        author: jane-doe
        committer: jane-doe
        date: 2026-03-01T18:00:00Z
    branches: {main: m1, agent/health: f1}
    files:
      README.md: "# webapp\n"
    pulls:
      - number: 14
        title: Add the health endpoint
        author: jane-doe
        head: agent/health
        created_at: 2026-03-01T18:05:00Z
        files:
          - {path: src/health.rs, status: added, additions: 1, content: "pub fn health() {}\n"}
    issues:
      - number: 30
        title: Decision pending
        author: jane-doe
"##;

fn world() -> World {
    parse_world("webhooks.yaml", WORLD, None).expect("the test world is valid")
}

fn repo() -> RepoName {
    RepoName::parse("jane-doe/webapp").expect("a repository name")
}

fn sha(id: &str) -> CommitSha {
    commit_sha(&repo(), id)
}

/// One delivery as the receiver got it.
#[derive(Debug, Clone)]
struct Received {
    headers: HeaderMap,
    body: Bytes,
}

impl Received {
    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    }

    fn event(&self) -> &str {
        self.header("x-github-event")
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    fn action(&self) -> String {
        self.json()["action"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }
}

/// A webhook receiver answering `status`, and what it received so far.
struct Receiver {
    url: String,
    seen: watch::Receiver<Vec<Received>>,
}

impl Receiver {
    async fn start(status: StatusCode) -> Self {
        let (record, seen) = watch::channel(Vec::new());
        let record = Arc::new(record);
        let app = Router::new().route(
            "/hook",
            post(move |headers: HeaderMap, body: Bytes| {
                let record = Arc::clone(&record);
                async move {
                    record.send_modify(|all| all.push(Received { headers, body }));
                    status
                }
            }),
        );
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("the receiver binds");
        let addr = listener.local_addr().expect("a local address");
        tokio::spawn(async move {
            // The receiver serves until the test ends.
            let _ = axum::serve(listener, app).await;
        });
        Self {
            url: format!("http://{addr}/hook"),
            seen,
        }
    }

    /// The first delivery of `event` with `action` (empty: any) that `matches` accepts,
    /// waiting for it.
    async fn wait_for(
        &mut self,
        event: &str,
        action: &str,
        matches: impl Fn(&Value) -> bool,
    ) -> Received {
        let wanted = |r: &Received| {
            r.event() == event && (action.is_empty() || r.action() == action) && matches(&r.json())
        };
        let found = tokio::time::timeout(WAIT, self.seen.wait_for(|all| all.iter().any(wanted)))
            .await
            .ok()
            .and_then(Result::ok)
            .and_then(|all| all.iter().find(|r| wanted(r)).cloned());
        found.unwrap_or_else(|| {
            let got: Vec<String> = self
                .seen
                .borrow()
                .iter()
                .map(|r| format!("{} {}", r.event(), r.action()))
                .collect();
            panic!("no {event} {action} delivery within {WAIT:?}; got {got:?}")
        })
    }

    fn all(&self) -> Vec<Received> {
        self.seen.borrow().clone()
    }
}

async fn serve_to(url: &str) -> LoopbackServer {
    let target = WebhookTarget {
        url: url.to_owned(),
        secret: SECRET.to_owned(),
    };
    LoopbackServer::bind_with_webhooks(
        world(),
        FaultScript::default(),
        std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
        ServerClock::World,
        target,
    )
    .await
    .expect("the loopback server starts")
}

async fn call_as(
    server: &LoopbackServer,
    token: &str,
    method: reqwest::Method,
    path: &str,
    body: Value,
) -> (u16, Value) {
    let answer = reqwest::Client::new()
        .request(method, format!("{}{path}", server.base_url()))
        .header("Authorization", format!("Bearer {token}"))
        .json(&body)
        .send()
        .await
        .expect("the server answers");
    let status = answer.status().as_u16();
    let json = answer.json().await.unwrap_or(Value::Null);
    (status, json)
}

async fn call(
    server: &LoopbackServer,
    method: reqwest::Method,
    path: &str,
    body: Value,
) -> (u16, Value) {
    call_as(server, "ghs_test", method, path, body).await
}

async fn label_as_owner(server: &LoopbackServer, number: u64) -> (u16, Value) {
    call(
        server,
        reqwest::Method::POST,
        "/repos/jane-doe/webapp/_loopback/label",
        json!({"number": number, "label": "ready-to-merge", "actor": "jane-doe"}),
    )
    .await
}

/// Polls the server's counters until `done` holds.
async fn deliveries_until(
    server: &LoopbackServer,
    done: impl Fn(&WebhookDeliveries) -> bool,
) -> WebhookDeliveries {
    let polling = async {
        loop {
            let deliveries = server.webhook_deliveries();
            if done(&deliveries) {
                return deliveries;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    match tokio::time::timeout(WAIT, polling).await {
        Ok(deliveries) => deliveries,
        Err(_) => panic!(
            "the deliveries did not settle: {:?}",
            server.webhook_deliveries()
        ),
    }
}

#[test]
fn the_signature_is_githubs_hmac_sha256_and_the_target_hides_its_secret() {
    // The example of GitHub's "Validating webhook deliveries".
    assert_eq!(
        signature_256(SECRET.as_bytes(), b"Hello, World!"),
        "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    );
    let target = WebhookTarget {
        url: "http://127.0.0.1:1/hook".to_owned(),
        secret: "s3cr3t-value".to_owned(),
    };
    let shown = format!("{target:?}");
    assert!(!shown.contains("s3cr3t-value"), "{shown}");
    assert!(shown.contains("[redacted]"), "{shown}");
}

#[test]
fn delivery_ids_are_fresh_guids() {
    let (one, two) = (super::delivery_id(1), super::delivery_id(2));
    assert_ne!(one, two);
    for id in [&one, &two] {
        let groups: Vec<usize> = id.split('-').map(str::len).collect();
        assert_eq!(groups, [8, 4, 4, 4, 12], "{id}");
        assert!(
            id.chars().all(|c| c == '-' || c.is_ascii_hexdigit()),
            "{id}"
        );
    }
}

/// (a) A person's label through `_loopback/label`: a signed `pull_request` `labeled`
/// delivery with the label and the person as sender, and GitHub's headers.
#[tokio::test]
async fn a_persons_label_is_delivered_as_pull_request_labeled_signed_with_the_secret() {
    let mut receiver = Receiver::start(StatusCode::NO_CONTENT).await;
    let server = serve_to(&receiver.url).await;
    let (status, labels) = label_as_owner(&server, 14).await;
    assert_eq!(status, 200, "{labels}");
    assert_eq!(labels[0]["name"], json!("ready-to-merge"));

    let delivery = receiver.wait_for("pull_request", "labeled", |_| true).await;
    let payload = delivery.json();
    assert_eq!(payload["label"]["name"], json!("ready-to-merge"));
    assert_eq!(payload["sender"]["login"], json!("jane-doe"));
    assert_eq!(payload["sender"]["type"], json!("User"));
    assert_eq!(payload["number"], json!(14));
    assert_eq!(payload["pull_request"]["number"], json!(14));
    assert_eq!(
        payload["pull_request"]["head"]["sha"],
        json!(sha("f1").as_str())
    );
    assert_eq!(
        payload["pull_request"]["labels"][0]["name"],
        json!("ready-to-merge")
    );
    assert_eq!(payload["repository"]["full_name"], json!("jane-doe/webapp"));
    assert_eq!(payload["repository"]["default_branch"], json!("main"));
    assert_eq!(payload["repository"]["owner"]["login"], json!("jane-doe"));
    assert_eq!(payload["installation"]["id"], json!(1));
    assert!(payload["installation"]["node_id"].is_string(), "{payload}");

    // GitHub's headers, and a signature only the secret makes.
    let signature = delivery.header("x-hub-signature-256");
    assert_eq!(signature, signature_256(SECRET.as_bytes(), &delivery.body));
    assert_ne!(signature, signature_256(b"another secret", &delivery.body));
    assert!(signature.starts_with("sha256="), "{signature}");
    assert_eq!(delivery.header("content-type"), "application/json");
    assert!(
        delivery
            .header("user-agent")
            .starts_with("GitHub-Hookshot/"),
        "{:?}",
        delivery.headers
    );
    assert_eq!(
        delivery.header("x-github-hook-installation-target-type"),
        "integration"
    );
    for numeric in ["x-github-hook-id", "x-github-hook-installation-target-id"] {
        assert!(
            delivery.header(numeric).parse::<u64>().is_ok(),
            "{numeric}: {:?}",
            delivery.headers
        );
    }
    assert_eq!(delivery.header("x-github-delivery").len(), 36);

    // A label already present changes nothing and delivers nothing.
    let (status, _) = label_as_owner(&server, 14).await;
    assert_eq!(status, 200);
    let deliveries = deliveries_until(&server, |d| d.pending() == 0).await;
    assert_eq!(
        (deliveries.queued, deliveries.sent, deliveries.failed),
        (1, 1, 0)
    );
    server.shutdown().await;
}

/// (d) The gate reads the person's label through the REST client: established by the
/// owner, and applied to the current head per the head branch's activity log.
#[tokio::test]
async fn the_gate_binds_a_persons_label_to_the_current_head() {
    let receiver = Receiver::start(StatusCode::OK).await;
    let server = serve_to(&receiver.url).await;
    let (status, _) = label_as_owner(&server, 14).await;
    assert_eq!(status, 200);

    let mut config = RestConfig::new(
        server.base_url(),
        Credentials::Token(Secret::new("ghs_test".to_owned())),
    );
    config.token_app_slug = Some("jane-merge-gate".to_owned());
    config.revert = RevertMode::LoopbackExtension;
    config.retry = RetryPolicy::fast();
    let client = RestGitHub::new(config).expect("the client builds");
    let (repo, n14) = (repo(), PrNumber::new(14));

    let pull = client.pull(&repo, n14).await.expect("the pull request");
    assert_eq!(pull.labels, ["ready-to-merge"]);
    let events = client.label_events(&repo, n14).await.expect("the timeline");
    let Provenance::Established(applier) = effective_applier(&events, "ready-to-merge") else {
        panic!("the label's applier is known: {events:?}");
    };
    let owner = Login::parse("jane-doe").expect("a login");
    assert_eq!(applier.actor.as_ref(), Some(&owner));
    assert_eq!(applier.at, Some(server.memory().now()));

    let updates = client
        .head_ref_updates(&repo, &pull.head_ref)
        .await
        .expect("the activity log");
    let commits = client.pull_commits(&repo, n14).await.expect("the commits");
    let bot = client.bot_login().await.expect("the bot");
    let bound = prove_head_at_label(
        &HeadHistory::Read(updates),
        applier.at,
        &pull.head_sha,
        &commits,
        Some(&bot),
        SettleWindow::DEFAULT,
    )
    .expect("the label binds the head");
    assert_eq!(bound.labeled_head, sha("f1"));
    assert_eq!(bound.head, sha("f1"));
    // A person's label is not the bot's action.
    assert!(
        server.memory().actions().is_empty(),
        "{:?}",
        server.memory().actions()
    );
    server.shutdown().await;
}

/// (b) A CI App completes its run over the check-run routes: `check_run` `created`, then
/// `completed` with the head and the open pull request on it.
#[tokio::test]
async fn completing_a_check_run_delivers_check_run_completed_with_its_pull_request() {
    let mut receiver = Receiver::start(StatusCode::OK).await;
    let server = serve_to(&receiver.url).await;
    let head = sha("f1");
    let (_, minted) = call(
        &server,
        reqwest::Method::POST,
        "/_loopback/apps/ci-app/token",
        json!({}),
    )
    .await;
    let token = minted["token"].as_str().unwrap_or_default().to_owned();
    let runs = "/repos/jane-doe/webapp/check-runs";
    let start = json!({"name": "test", "head_sha": head.as_str(), "status": "in_progress"});
    let (status, created) = call_as(&server, &token, reqwest::Method::POST, runs, start).await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_u64().unwrap_or_default();

    let first = receiver.wait_for("check_run", "created", |_| true).await;
    assert_eq!(first.json()["check_run"]["status"], json!("in_progress"));
    assert_eq!(first.json()["sender"]["login"], json!("ci-app[bot]"));

    let done = json!({"conclusion": "success"});
    let (status, _) = call_as(
        &server,
        &token,
        reqwest::Method::PATCH,
        &format!("{runs}/{id}"),
        done,
    )
    .await;
    assert_eq!(status, 200);
    let completed = receiver.wait_for("check_run", "completed", |_| true).await;
    let run = &completed.json()["check_run"];
    assert_eq!(run["id"], json!(id));
    assert_eq!(run["head_sha"], json!(head.as_str()));
    assert_eq!(run["status"], json!("completed"));
    assert_eq!(run["conclusion"], json!("success"));
    assert_eq!(run["app"]["slug"], json!("ci-app"));
    assert_eq!(run["pull_requests"][0]["number"], json!(14));
    assert_eq!(run["pull_requests"][0]["head"]["sha"], json!(head.as_str()));
    assert_eq!(
        run["pull_requests"][0]["head"]["ref"],
        json!("agent/health")
    );
    assert_eq!(run["pull_requests"][0]["base"]["ref"], json!("main"));
    assert_eq!(run["check_suite"]["head_branch"], json!("agent/health"));
    // Created, then completed: in order.
    let order: Vec<String> = receiver.all().iter().map(Received::action).collect();
    assert_eq!(order, ["created", "completed"]);
    server.shutdown().await;
}

/// (c) A merge over the REST route: `push` to the base branch with the squash commit,
/// then `pull_request` `closed` and merged.
#[tokio::test]
async fn a_merge_delivers_a_push_to_the_base_and_pull_request_closed_merged() {
    let mut receiver = Receiver::start(StatusCode::OK).await;
    let server = serve_to(&receiver.url).await;
    let (status, merged) = call(
        &server,
        reqwest::Method::PUT,
        "/repos/jane-doe/webapp/pulls/14/merge",
        json!({"sha": sha("f1").as_str(), "merge_method": "squash"}),
    )
    .await;
    assert_eq!(status, 200, "{merged}");
    let merge_sha = merged["sha"].as_str().unwrap_or_default().to_owned();
    assert_eq!(merge_sha.len(), 40, "{merged}");

    let push = receiver.wait_for("push", "", |_| true).await.json();
    assert_eq!(push["ref"], json!("refs/heads/main"));
    assert_eq!(push["before"], json!(sha("m1").as_str()));
    assert_eq!(push["after"], json!(merge_sha));
    assert_eq!(push["created"], json!(false));
    assert_eq!(push["commits"][0]["id"], json!(merge_sha));
    assert_eq!(push["commits"][0]["added"], json!(["src/health.rs"]));
    assert_eq!(push["head_commit"]["id"], json!(merge_sha));
    assert_eq!(push["pusher"]["name"], json!("jane-merge-gate[bot]"));
    assert_eq!(push["sender"]["login"], json!("jane-merge-gate[bot]"));
    assert_eq!(push["repository"]["full_name"], json!("jane-doe/webapp"));

    let closed = receiver
        .wait_for("pull_request", "closed", |_| true)
        .await
        .json();
    assert_eq!(closed["pull_request"]["merged"], json!(true));
    assert_eq!(closed["pull_request"]["state"], json!("closed"));
    assert_eq!(closed["pull_request"]["merge_commit_sha"], json!(merge_sha));
    let events: Vec<String> = receiver
        .all()
        .iter()
        .map(|r| r.event().to_owned())
        .collect();
    assert_eq!(events, ["push", "pull_request"]);
    server.shutdown().await;
}

/// A write to `main` over the contents route is a `push`; bringing the pull request up to
/// date moves its head: a `push` of the head branch and `pull_request` `synchronize`.
#[tokio::test]
async fn a_contents_write_and_an_update_branch_deliver_push_and_synchronize() {
    let mut receiver = Receiver::start(StatusCode::OK).await;
    let server = serve_to(&receiver.url).await;
    let (status, written) = call(
        &server,
        reqwest::Method::PUT,
        "/repos/jane-doe/webapp/contents/docs/notes.md",
        json!({"message": "Add notes", "content": "bm90ZXMK", "branch": "main"}),
    )
    .await;
    assert_eq!(status, 201, "{written}");
    let push = receiver.wait_for("push", "", |_| true).await.json();
    assert_eq!(push["ref"], json!("refs/heads/main"));
    assert_eq!(push["after"], written["commit"]["sha"]);
    assert_eq!(push["commits"][0]["message"], json!("Add notes"));
    assert_eq!(push["commits"][0]["added"], json!(["docs/notes.md"]));

    let (status, answer) = call(
        &server,
        reqwest::Method::PUT,
        "/repos/jane-doe/webapp/pulls/14/update-branch",
        json!({"expected_head_sha": sha("f1").as_str()}),
    )
    .await;
    assert_eq!(status, 202, "{answer}");
    let head_push = receiver
        .wait_for("push", "", |p| p["ref"] == json!("refs/heads/agent/health"))
        .await
        .json();
    assert_eq!(head_push["before"], json!(sha("f1").as_str()));
    let synchronize = receiver
        .wait_for("pull_request", "synchronize", |_| true)
        .await
        .json();
    assert_eq!(synchronize["before"], json!(sha("f1").as_str()));
    assert_eq!(synchronize["after"], head_push["after"]);
    assert_eq!(
        synchronize["pull_request"]["head"]["sha"],
        head_push["after"]
    );
    server.shutdown().await;
}

/// The issue routes: a comment, a label, an edit and a close of an issue deliver
/// `issue_comment` and `issues`; a new branch is a `push` that creates it.
#[tokio::test]
async fn issue_routes_deliver_issues_and_issue_comment_events() {
    let mut receiver = Receiver::start(StatusCode::OK).await;
    let server = serve_to(&receiver.url).await;
    let issue = "/repos/jane-doe/webapp/issues/30";
    let (status, comment) = call(
        &server,
        reqwest::Method::POST,
        &format!("{issue}/comments"),
        json!({"body": "noted"}),
    )
    .await;
    assert_eq!(status, 201, "{comment}");
    let created = receiver
        .wait_for("issue_comment", "created", |_| true)
        .await
        .json();
    assert_eq!(created["comment"]["body"], json!("noted"));
    assert_eq!(created["issue"]["number"], json!(30));
    let id = comment["id"].as_u64().unwrap_or_default();
    call(
        &server,
        reqwest::Method::PATCH,
        &format!("/repos/jane-doe/webapp/issues/comments/{id}"),
        json!({"body": "noted twice"}),
    )
    .await;
    let edited = receiver
        .wait_for("issue_comment", "edited", |_| true)
        .await
        .json();
    assert_eq!(edited["changes"]["body"]["from"], json!("noted"));
    assert_eq!(edited["comment"]["body"], json!("noted twice"));

    call(
        &server,
        reqwest::Method::POST,
        &format!("{issue}/labels"),
        json!({"labels": ["decision:pending-owner"]}),
    )
    .await;
    let labeled = receiver
        .wait_for("issues", "labeled", |_| true)
        .await
        .json();
    assert_eq!(labeled["label"]["name"], json!("decision:pending-owner"));
    assert_eq!(labeled["sender"]["login"], json!("jane-merge-gate[bot]"));

    call(
        &server,
        reqwest::Method::PATCH,
        issue,
        json!({"body": "decided", "state": "closed"}),
    )
    .await;
    let edited = receiver.wait_for("issues", "edited", |_| true).await.json();
    assert_eq!(edited["issue"]["body"], json!("decided"));
    let closed = receiver.wait_for("issues", "closed", |_| true).await.json();
    assert_eq!(closed["issue"]["state"], json!("closed"));

    let (status, _) = call(
        &server,
        reqwest::Method::POST,
        "/repos/jane-doe/webapp/git/refs",
        json!({"ref": "refs/heads/release", "sha": sha("m1").as_str()}),
    )
    .await;
    assert_eq!(status, 201);
    let created = receiver.wait_for("push", "", |_| true).await.json();
    assert_eq!(created["ref"], json!("refs/heads/release"));
    assert_eq!(created["created"], json!(true));
    assert_eq!(
        created["before"],
        json!("0000000000000000000000000000000000000000")
    );
    assert_eq!(created["after"], json!(sha("m1").as_str()));
    assert_eq!(created["commits"], json!([]));
    server.shutdown().await;
}

/// A target that refuses connections: each delivery fails, is counted and dropped, and
/// the API answers as always.
#[tokio::test]
async fn a_failed_delivery_is_counted_and_dropped() {
    let closed = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port to close");
    let addr = closed.local_addr().expect("a local address");
    drop(closed);
    let server = serve_to(&format!("http://{addr}/hook")).await;
    let (status, _) = label_as_owner(&server, 14).await;
    assert_eq!(status, 200);
    let (status, _) = call(
        &server,
        reqwest::Method::POST,
        "/repos/jane-doe/webapp/issues/30/comments",
        json!({"body": "hello"}),
    )
    .await;
    assert_eq!(status, 201);
    let deliveries = deliveries_until(&server, |d| d.failed == 2).await;
    assert_eq!((deliveries.queued, deliveries.sent), (2, 0));
    let last = deliveries.last_failure.unwrap_or_default();
    assert!(last.starts_with("issue_comment delivery "), "{last}");
    server.shutdown().await;
}

/// A receiver answering 500 fails the delivery, as GitHub counts it.
#[tokio::test]
async fn a_delivery_answered_with_an_error_status_fails() {
    let mut receiver = Receiver::start(StatusCode::INTERNAL_SERVER_ERROR).await;
    let server = serve_to(&receiver.url).await;
    label_as_owner(&server, 14).await;
    receiver.wait_for("pull_request", "labeled", |_| true).await;
    let deliveries = deliveries_until(&server, |d| d.pending() == 0).await;
    assert_eq!((deliveries.sent, deliveries.failed), (0, 1));
    assert!(
        deliveries
            .last_failure
            .as_deref()
            .is_some_and(|f| f.ends_with("answered HTTP 500")),
        "{deliveries:?}"
    );
    server.shutdown().await;
}

/// Without a target nothing is delivered or counted; `_loopback/label` still applies.
#[tokio::test]
async fn without_a_target_the_server_delivers_nothing() {
    let server = LoopbackServer::start(world(), FaultScript::default())
        .await
        .expect("the loopback server starts");
    let (status, labels) = label_as_owner(&server, 14).await;
    assert_eq!(status, 200, "{labels}");
    assert_eq!(server.webhook_deliveries(), WebhookDeliveries::default());
    for (body, status) in [
        (json!({"label": "x", "actor": "jane-doe"}), 422),
        (json!({"number": 14, "actor": "jane-doe"}), 422),
        (
            json!({"number": 14, "label": "x", "actor": "not a login"}),
            422,
        ),
        (
            json!({"number": 99, "label": "x", "actor": "jane-doe"}),
            404,
        ),
    ] {
        let (got, answer) = call(
            &server,
            reqwest::Method::POST,
            "/repos/jane-doe/webapp/_loopback/label",
            body,
        )
        .await;
        assert_eq!(got, status, "{answer}");
    }
    server.shutdown().await;
}

/// The environment variable `cargo xtask test` sets to `@octokit/openapi-webhooks`'
/// description (`cargo xtask webhooks` fetches it).
const SCHEMA_ENV: &str = "MP_GITHUB_WEBHOOK_SCHEMA";

/// GitHub's published webhook description: `MP_GITHUB_WEBHOOK_SCHEMA`, else where `cargo
/// xtask webhooks` puts it. Missing, the test fails and names the command, as the REST
/// conformance test does: a skipped check would pass without checking anything.
fn webhook_description() -> Value {
    let path = std::env::var_os(SCHEMA_ENV).map_or_else(
        || {
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../target/webhooks/openapi-webhooks.api.github.com.json")
        },
        std::path::PathBuf::from,
    );
    let text = std::fs::read(&path).unwrap_or_else(|err| {
        panic!(
            "GitHub's webhook description is missing at {} ({err}): run `cargo xtask webhooks` (or set {SCHEMA_ENV})",
            path.display()
        )
    });
    serde_json::from_slice(&text).expect("the webhook description is JSON")
}

/// Every kind of delivery the server makes validates against GitHub's published schema of
/// its event and action (`@octokit/openapi-webhooks`, fetched by `cargo xtask webhooks`).
/// Every way the deliveries break GitHub's webhook schema of their event and action, and
/// the schemas checked (`push`, `pull-request-closed`, ...).
fn schema_failures(
    description: &Value,
    deliveries: &[Received],
) -> (Vec<String>, std::collections::BTreeSet<String>) {
    let components = description
        .pointer("/components")
        .cloned()
        .unwrap_or(Value::Null);
    let mut failures: Vec<String> = Vec::new();
    let mut checked = std::collections::BTreeSet::new();
    let mut validators = std::collections::BTreeMap::new();
    for delivery in deliveries {
        let action = delivery.action();
        let name = match action.as_str() {
            "" => delivery.event().replace('_', "-"),
            action => format!(
                "{}-{}",
                delivery.event().replace('_', "-"),
                action.replace('_', "-")
            ),
        };
        checked.insert(name.clone());
        let validator = validators.entry(name.clone()).or_insert_with(|| {
            let schema = json!({
                "$ref": format!("#/components/schemas/webhook-{name}"),
                "components": components,
            });
            jsonschema::options()
                .with_draft(jsonschema::Draft::Draft202012)
                .build(&schema)
                .unwrap_or_else(|err| panic!("the schema of {name} compiles: {err}"))
        });
        let payload = delivery.json();
        for error in validator.iter_errors(&payload) {
            failures.push(format!("{name} {}: {error}", error.instance_path()));
        }
    }
    (failures, checked)
}

#[tokio::test]
async fn every_delivery_validates_against_githubs_webhook_schema() {
    let description = webhook_description();
    let mut receiver = Receiver::start(StatusCode::OK).await;
    let server = serve_to(&receiver.url).await;
    let repo_path = "/repos/jane-doe/webapp";
    let put = reqwest::Method::PUT;
    let post = reqwest::Method::POST;
    let patch = reqwest::Method::PATCH;
    let delete = reqwest::Method::DELETE;
    let (_, minted) = call(
        &server,
        post.clone(),
        "/_loopback/apps/ci-app/token",
        json!({}),
    )
    .await;
    let ci = minted["token"].as_str().unwrap_or_default().to_owned();
    let head = sha("f1");
    let steps: Vec<(reqwest::Method, String, Value)> = vec![
        (
            post.clone(),
            format!("{repo_path}/_loopback/label"),
            json!({"number": 14, "label": "ready-to-merge", "actor": "jane-doe"}),
        ),
        (
            delete.clone(),
            format!("{repo_path}/issues/14/labels/ready-to-merge"),
            json!({}),
        ),
        (
            post.clone(),
            format!("{repo_path}/issues/14/comments"),
            json!({"body": "first"}),
        ),
        (
            patch.clone(),
            format!("{repo_path}/issues/14"),
            json!({"body": "a new body"}),
        ),
        (
            post.clone(),
            format!("{repo_path}/issues"),
            json!({"title": "Inbox", "body": "b", "labels": ["decision:pending-owner"]}),
        ),
        (
            post.clone(),
            format!("{repo_path}/issues/30/labels"),
            json!({"labels": ["x"]}),
        ),
        (
            delete.clone(),
            format!("{repo_path}/issues/30/labels/x"),
            json!({}),
        ),
        (
            patch.clone(),
            format!("{repo_path}/issues/30"),
            json!({"body": "decided", "state": "closed"}),
        ),
        (
            put.clone(),
            format!("{repo_path}/contents/docs/notes.md"),
            json!({"message": "Add notes", "content": "bm90ZXMK", "branch": "main"}),
        ),
        (
            put.clone(),
            format!("{repo_path}/pulls/14/update-branch"),
            json!({"expected_head_sha": head.as_str()}),
        ),
        (
            post.clone(),
            format!("{repo_path}/git/refs"),
            json!({"ref": "refs/heads/agent/next", "sha": sha("m1").as_str()}),
        ),
        (
            put.clone(),
            format!("{repo_path}/contents/next.md"),
            json!({"message": "Next", "content": "bm90ZXMK", "branch": "agent/next"}),
        ),
        (
            post.clone(),
            format!("{repo_path}/pulls"),
            json!({"title": "Next", "head": "agent/next", "base": "main"}),
        ),
    ];
    for (method, path, body) in steps {
        let (status, answer) = call(&server, method.clone(), &path, body).await;
        assert!(
            (200..300).contains(&status),
            "{method} {path}: {status} {answer}"
        );
    }
    let (_, comment) = call(
        &server,
        post.clone(),
        &format!("{repo_path}/issues/30/comments"),
        json!({"body": "a comment"}),
    )
    .await;
    let comment = comment["id"].as_u64().unwrap_or_default();
    call(
        &server,
        patch.clone(),
        &format!("{repo_path}/issues/comments/{comment}"),
        json!({"body": "an edited comment"}),
    )
    .await;
    let pull_head = server
        .memory()
        .read(|w| {
            w.repo(&repo())
                .and_then(|r| r.pull(PrNumber::new(14)))
                .map(|p| p.head_sha.clone())
        })
        .expect("pull request 14");
    let runs = format!("{repo_path}/check-runs");
    let start = json!({"name": "test", "head_sha": pull_head.as_str(), "status": "in_progress"});
    let (_, run) = call_as(&server, &ci, post.clone(), &runs, start).await;
    let id = run["id"].as_u64().unwrap_or_default();
    call_as(
        &server,
        &ci,
        patch.clone(),
        &format!("{runs}/{id}"),
        json!({"conclusion": "success"}),
    )
    .await;
    let (status, merged) = call(
        &server,
        put.clone(),
        &format!("{repo_path}/pulls/14/merge"),
        json!({"merge_method": "squash"}),
    )
    .await;
    assert_eq!(status, 200, "{merged}");
    receiver.wait_for("pull_request", "closed", |_| true).await;

    let (failures, checked) = schema_failures(&description, &receiver.all());
    let expected = [
        "check-run-completed",
        "check-run-created",
        "issue-comment-created",
        "issue-comment-edited",
        "issues-closed",
        "issues-edited",
        "issues-labeled",
        "issues-opened",
        "issues-unlabeled",
        "pull-request-closed",
        "pull-request-edited",
        "pull-request-labeled",
        "pull-request-opened",
        "pull-request-synchronize",
        "pull-request-unlabeled",
        "push",
    ];
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(
        checked.iter().map(String::as_str).collect::<Vec<_>>(),
        expected
    );
    server.shutdown().await;
}

/// The queue's writes over the REST routes: a merge into a staging branch is a `push` of
/// that branch; fast-forwarding `main` to it is a `push` of `main` listing the commits it
/// brought, then `pull_request` `closed` for the pull request whose head it reached,
/// merged by the bot with the new tip as its merge commit. Every payload validates.
#[tokio::test]
async fn a_fast_forward_that_reaches_a_head_delivers_push_and_pull_request_closed_merged() {
    let description = webhook_description();
    let mut receiver = Receiver::start(StatusCode::OK).await;
    let server = serve_to(&receiver.url).await;
    let post = reqwest::Method::POST;
    let (status, _) = call(
        &server,
        post.clone(),
        "/repos/jane-doe/webapp/git/refs",
        json!({"ref": "refs/heads/mp-queue/main", "sha": sha("m1").as_str()}),
    )
    .await;
    assert_eq!(status, 201);
    let (status, merge) = call(
        &server,
        post,
        "/repos/jane-doe/webapp/merges",
        json!({"base": "mp-queue/main", "head": sha("f1").as_str(), "commit_message": "Merge #14"}),
    )
    .await;
    assert_eq!(status, 201, "{merge}");
    let tip = merge["sha"].as_str().unwrap_or_default().to_owned();
    let staged = receiver
        .wait_for("push", "", |p| p["after"] == json!(tip))
        .await
        .json();
    assert_eq!(staged["ref"], json!("refs/heads/mp-queue/main"));
    let (status, moved) = call(
        &server,
        reqwest::Method::PATCH,
        "/repos/jane-doe/webapp/git/refs/heads/main",
        json!({"sha": tip, "force": false}),
    )
    .await;
    assert_eq!(status, 200, "{moved}");
    assert_eq!(moved["object"]["sha"], json!(tip));
    let push = receiver
        .wait_for("push", "", |p| p["ref"] == json!("refs/heads/main"))
        .await
        .json();
    assert_eq!(push["before"], json!(sha("m1").as_str()));
    assert_eq!(push["after"], json!(tip));
    assert_eq!(push["forced"], json!(false));
    let brought: Vec<&str> = push["commits"]
        .as_array()
        .map(|c| c.iter().filter_map(|c| c["id"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(brought, [sha("f1").as_str(), tip.as_str()]);
    assert_eq!(push["head_commit"]["added"], json!(["src/health.rs"]));
    let closed = receiver
        .wait_for("pull_request", "closed", |_| true)
        .await
        .json();
    assert_eq!(closed["number"], json!(14));
    assert_eq!(closed["pull_request"]["merged"], json!(true));
    assert_eq!(closed["pull_request"]["merge_commit_sha"], json!(tip));
    assert_eq!(
        closed["pull_request"]["merged_by"]["login"],
        json!("jane-merge-gate[bot]")
    );
    assert_eq!(
        closed["pull_request"]["merged_at"],
        json!("2026-03-02T09:00:00Z")
    );
    let (failures, checked) = schema_failures(&description, &receiver.all());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(
        checked.iter().map(String::as_str).collect::<Vec<_>>(),
        ["pull-request-closed", "push"]
    );
    server.shutdown().await;
}

/// GitHub's merge queue over the loopback server (decisions/0083): a merge group made when
/// the clock moves is delivered at the next request as `merge_group` `checks_requested`
/// naming the group's ref (`gh-readonly-queue/main/pr-14-<the commit it is made on>`), its
/// head and its base; a required check that never reports ends the group, delivered as
/// `destroyed` with reason `dequeued`. Both validate against GitHub's schema; nothing the
/// world held before the server started is delivered.
#[tokio::test]
async fn merge_groups_are_delivered_as_merge_group_events() {
    let description = webhook_description();
    let mut receiver = Receiver::start(StatusCode::OK).await;
    let mut world = world();
    let app = &mut world.repos[0];
    app.merge_queues.insert(
        "main".to_owned(),
        crate::world::MergeQueueSettings {
            check_response_timeout_minutes: 5,
            required_checks: Some(vec![crate::world::RequiredCheck {
                name: "mp-gate".to_owned(),
                app: "jane-merge-gate".to_owned(),
            }]),
            ..crate::world::MergeQueueSettings::default()
        },
    );
    app.branch_rules
        .insert("main".to_owned(), vec!["merge_queue".to_owned()]);
    let start = world.now;
    let server = LoopbackServer::bind_with_webhooks(
        world,
        FaultScript::default(),
        std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
        ServerClock::World,
        WebhookTarget {
            url: receiver.url.clone(),
            secret: SECRET.to_owned(),
        },
    )
    .await
    .expect("the loopback server starts");
    let jane = Login::parse("jane-doe").expect("a login");
    server
        .memory()
        .enqueue_as(&jane, &repo(), PrNumber::new(14))
        .expect("enqueued");
    server.memory().set_now(start.plus_seconds(60));
    let group = server
        .memory()
        .read(|w| w.repos[0].merge_groups_of("main").first().cloned())
        .expect("a merge group");
    let get = reqwest::Method::GET;
    call(&server, get.clone(), "/repos/jane-doe/webapp", json!({})).await;
    let requested = receiver
        .wait_for("merge_group", "checks_requested", |_| true)
        .await
        .json();
    assert_eq!(
        requested["merge_group"]["head_ref"],
        format!("refs/heads/gh-readonly-queue/main/pr-14-{}", sha("m1"))
    );
    assert_eq!(requested["merge_group"]["head_sha"], group.head.as_str());
    assert_eq!(requested["merge_group"]["base_sha"], sha("m1").as_str());
    assert_eq!(requested["merge_group"]["base_ref"], "refs/heads/main");
    assert_eq!(requested["sender"]["login"], "github-merge-queue[bot]");

    server.memory().set_now(start.plus_seconds(6 * 60));
    call(&server, get, "/repos/jane-doe/webapp", json!({})).await;
    let destroyed = receiver
        .wait_for("merge_group", "destroyed", |_| true)
        .await
        .json();
    assert_eq!(destroyed["reason"], "dequeued");
    assert_eq!(destroyed["merge_group"]["head_sha"], group.head.as_str());

    let all = receiver.all();
    let groups: Vec<String> = all
        .iter()
        .filter(|r| r.event() == "merge_group")
        .map(Received::action)
        .collect();
    assert_eq!(groups, ["checks_requested", "destroyed"], "each once");
    let (failures, checked) = schema_failures(&description, &all);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked.contains("merge-group-destroyed"), "{checked:?}");
    server.shutdown().await;
}
