//! Tests of the REST adapter against small scripted stub servers on 127.0.0.1.

use std::fmt::Debug;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, Response, Uri};
use mp_core::context::PrState;
use mp_core::context::{
    CheckConclusion, CheckRun, CheckStatus, Comment, CommentId, CommitContext, FileChange,
    FileStatus, LabelAction, LabelEvent, Reaction, ReactionKind,
};
use mp_core::ids::{CommitSha, Login, PrNumber, RepoName, Timestamp};
use mp_core::port::{
    CommitPull, FileContent, FileWrite, GitHub, GitHubError, GitHubHistory, Issue, IssueQuery,
    IssueState, MergeMethod, MergeRequest, PullRequest, UpdateBranchOutcome,
};
use serde_json::{Value, json};

use super::{
    Credentials, EtagCache, RestConfig, RestGitHub, RetryPolicy, RevertMode, Secret,
    SteppedSleeper, link,
};

const TOKEN: &str = "ghs_stub_installation_token_1234";
const HEAD: &str = "6dcb09b5b57875f334f61aebed695e2e4193db5e";
const BASE: &str = "e5bd3914e2e596debea16f433f57875b5b90bcd6";
const PARENT: &str = "7638417db6d59f3c431d3e1f261cc637155684cd";

// ---------------------------------------------------------------------------------------------
// The check helper.

#[track_caller]
fn check<T: Debug + PartialEq>(what: &str, actual: T, expected: T) {
    assert_eq!(actual, expected, "{what}");
}

// ---------------------------------------------------------------------------------------------
// The stub: every request is recorded and answered by a script.

#[derive(Debug, Clone)]
struct Hit {
    method: String,
    path: String,
    query: String,
    headers: HeaderMap,
    body: String,
    base: String,
    /// How many requests came before this one.
    index: usize,
}

impl Hit {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }

    /// `METHOD /path?query` as the script sees it.
    fn line(&self) -> String {
        if self.query.is_empty() {
            format!("{} {}", self.method, self.path)
        } else {
            format!("{} {}?{}", self.method, self.path, self.query)
        }
    }
}

struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
    /// How long the stub waits before answering.
    delay: Duration,
}

impl Reply {
    fn json(status: u16, value: Value) -> Self {
        Self {
            status,
            headers: vec![(
                "content-type".to_owned(),
                "application/json; charset=utf-8".to_owned(),
            )],
            body: value.to_string(),
            delay: Duration::ZERO,
        }
    }

    fn message(status: u16, message: &str) -> Self {
        Self::json(
            status,
            json!({ "message": message, "documentation_url": "https://docs.github.com/rest" }),
        )
    }

    fn empty(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: String::new(),
            delay: Duration::ZERO,
        }
    }

    fn after(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    fn with(mut self, name: &str, value: impl Into<String>) -> Self {
        self.headers.push((name.to_owned(), value.into()));
        self
    }
}

type Script = dyn Fn(&Hit) -> Reply + Send + Sync;

struct StubState {
    script: Box<Script>,
    hits: Mutex<Vec<Hit>>,
    base: String,
}

struct Stub {
    state: Arc<StubState>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Stub {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn answer(
    State(state): State<Arc<StubState>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response<Body> {
    let hit = {
        let mut hits = state.hits.lock().unwrap_or_else(PoisonError::into_inner);
        let hit = Hit {
            method: method.to_string(),
            path: uri.path().to_owned(),
            query: uri.query().unwrap_or("").to_owned(),
            headers,
            body: String::from_utf8_lossy(&body).into_owned(),
            base: state.base.clone(),
            index: hits.len(),
        };
        hits.push(hit.clone());
        hit
    };
    let reply = (state.script)(&hit);
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    let mut builder = Response::builder().status(reply.status);
    let has = |name: &str| {
        reply
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(name))
    };
    if !has("x-ratelimit-remaining") {
        let remaining = 5000_usize.saturating_sub(hit.index + 1);
        builder = builder.header("x-ratelimit-remaining", remaining.to_string());
    }
    builder = builder
        .header("x-ratelimit-limit", "5000")
        .header("x-ratelimit-resource", "core");
    if !has("x-ratelimit-reset") {
        builder = builder.header("x-ratelimit-reset", "4102444800");
    }
    for (name, value) in &reply.headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    builder
        .body(Body::from(reply.body))
        .unwrap_or_else(|_| Response::new(Body::empty()))
}

impl Stub {
    async fn start(script: impl Fn(&Hit) -> Reply + Send + Sync + 'static) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a loopback port");
        let address = listener.local_addr().expect("local address");
        let state = Arc::new(StubState {
            script: Box::new(script),
            hits: Mutex::new(Vec::new()),
            base: format!("http://{address}"),
        });
        let router = Router::new()
            .fallback(answer)
            .with_state(Arc::clone(&state));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Self { state, task }
    }

    fn base(&self) -> &str {
        &self.state.base
    }

    fn hits(&self) -> Vec<Hit> {
        self.state
            .hits
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn lines(&self) -> Vec<String> {
        self.hits().iter().map(Hit::line).collect()
    }

    fn config(&self, retry: RetryPolicy) -> RestConfig {
        let mut config = RestConfig::new(self.base(), Credentials::Token(Secret::new(TOKEN)));
        config.retry = retry;
        config.timeout = Duration::from_secs(5);
        config.revert = RevertMode::LoopbackExtension;
        // Back-off, `Retry-After` and pacing waits take no wall-clock time.
        config.sleeper = Arc::new(SteppedSleeper::new());
        config
    }

    fn client(&self) -> RestGitHub {
        self.client_with(RetryPolicy::fast())
    }

    fn client_with(&self, retry: RetryPolicy) -> RestGitHub {
        RestGitHub::new(self.config(retry)).expect("a valid stub configuration")
    }

    /// A client whose waits go through a stepped clock, returned beside it: it never waits
    /// on the real clock, and each wait is recorded.
    fn stepped(&self, config: RestConfig) -> (RestGitHub, Arc<SteppedSleeper>) {
        let sleeper = Arc::new(SteppedSleeper::new());
        let mut config = config;
        config.sleeper = sleeper.clone();
        let client = RestGitHub::new(config).expect("a valid stub configuration");
        (client, sleeper)
    }
}

fn repo() -> RepoName {
    RepoName::parse("octo-org/hello-world").expect("valid repository name")
}

fn sha(text: &str) -> CommitSha {
    CommitSha::parse(text).expect("valid sha")
}

fn login(text: &str) -> Login {
    Login::parse(text).expect("valid login")
}

fn at(text: &str) -> Option<Timestamp> {
    Some(Timestamp::parse(text).expect("valid timestamp"))
}

fn user(name: &str, id: u64) -> Value {
    json!({
        "login": name,
        "id": id,
        "node_id": "MDQ6VXNlcjE=",
        "avatar_url": format!("https://github.com/images/error/{name}_happy.gif"),
        "url": format!("https://api.github.com/users/{name}"),
        "html_url": format!("https://github.com/{name}"),
        "type": "User",
        "site_admin": false
    })
}

/// A pull request shaped like GitHub's documented example.
fn pull_json(number: u64, state: &str) -> Value {
    json!({
        "url": format!("https://api.github.com/repos/octo-org/hello-world/pulls/{number}"),
        "id": 1,
        "node_id": "MDExOlB1bGxSZXF1ZXN0MQ==",
        "html_url": format!("https://github.com/octo-org/hello-world/pull/{number}"),
        "number": number,
        "state": state,
        "locked": false,
        "title": "Amazing new feature",
        "user": user("octocat", 1),
        "body": "Please pull these awesome changes in!",
        "labels": [{
            "id": 208045946,
            "node_id": "MDU6TGFiZWwyMDgwNDU5NDY=",
            "url": "https://api.github.com/repos/octo-org/hello-world/labels/bug",
            "name": "bug",
            "description": "Something isn't working",
            "color": "f29513",
            "default": true
        }],
        "created_at": "2011-01-26T19:01:12Z",
        "updated_at": "2011-01-26T19:01:12Z",
        "closed_at": null,
        "merged_at": null,
        "merge_commit_sha": "e5bd3914e2e596debea16f433f57875b5b90bcd6",
        "assignee": null,
        "draft": false,
        "head": {
            "label": "octocat:new-topic",
            "ref": "new-topic",
            "sha": HEAD,
            "user": user("octocat", 1),
            "repo": { "id": 1296269, "name": "hello-world", "full_name": "octo-org/hello-world" }
        },
        "base": {
            "label": "octo-org:main",
            "ref": "main",
            "sha": BASE,
            "user": user("octo-org", 2),
            "repo": null
        },
        "author_association": "OWNER",
        "auto_merge": null
    })
}

fn expected_pull(number: u64) -> PullRequest {
    PullRequest {
        repo: repo(),
        number: PrNumber::new(number),
        title: "Amazing new feature".to_owned(),
        body: "Please pull these awesome changes in!".to_owned(),
        head_sha: sha(HEAD),
        head_ref: "new-topic".to_owned(),
        head_repo: Some(repo()),
        base_sha: sha(BASE),
        base_ref: "main".to_owned(),
        state: PrState::Open,
        merged: false,
        merge_commit: None,
        labels: vec!["bug".to_owned()],
        author: login("octocat"),
        created_at: at("2011-01-26T19:01:12Z"),
    }
}

const MESSAGE: &str = "Fix all the bugs\n\nThe parser now accepts empty input.\n\nSigned-off-by: Mona Octocat <mona@example.com>";

/// A commit shaped like GitHub's documented example.
fn commit_json(sha: &str, message: &str) -> Value {
    json!({
        "url": format!("https://api.github.com/repos/octo-org/hello-world/commits/{sha}"),
        "sha": sha,
        "node_id": "MDY6Q29tbWl0NmRjYjA5YjViNTc4NzVmMzM0ZjYxYWViZWQ2OTVlMmU0MTkzZGI1ZQ==",
        "html_url": format!("https://github.com/octo-org/hello-world/commit/{sha}"),
        "commit": {
            "url": format!("https://api.github.com/repos/octo-org/hello-world/git/commits/{sha}"),
            "author": { "name": "Monalisa Octocat", "email": "support@github.com", "date": "2011-04-14T16:00:49Z" },
            "committer": { "name": "GitHub", "email": "noreply@github.com", "date": "2011-04-15T08:30:00Z" },
            "message": message,
            "tree": { "url": "https://api.github.com/repos/octo-org/hello-world/tree/6dcb", "sha": "6dcb09b5b57875f334f61aebed695e2e4193db5e" },
            "comment_count": 0,
            "verification": { "verified": false, "reason": "unsigned", "signature": null, "payload": null }
        },
        "author": user("octocat", 1),
        "committer": { "login": "web-flow", "id": 19864447, "type": "User" },
        "parents": [{ "url": "https://api.github.com/repos/octo-org/hello-world/commits/7638", "sha": PARENT }]
    })
}

fn expected_commit(text: &str, message: &str) -> CommitContext {
    let mut context = CommitContext::from_message(sha(text), message);
    context.author_login = Some(login("octocat"));
    context.committer_login = Some(login("web-flow"));
    context.parents = vec![sha(PARENT)];
    context.committed_at = at("2011-04-15T08:30:00Z");
    context
}

/// A 40-hex SHA made from a number.
fn numbered_sha(n: usize) -> String {
    format!("{n:040x}")
}

// ---------------------------------------------------------------------------------------------
// Link header.

#[track_caller]
fn check_next(header: &str, expected: Option<&str>) {
    check(header, link::next_url(header), expected);
}

#[test]
fn link_next_among_several() {
    check_next(
        r#"<https://api.github.com/repositories/1300192/issues?page=2>; rel="prev", <https://api.github.com/repositories/1300192/issues?page=4>; rel="next", <https://api.github.com/repositories/1300192/issues?page=515>; rel="last""#,
        Some("https://api.github.com/repositories/1300192/issues?page=4"),
    );
}

#[test]
fn link_without_next() {
    check_next(
        r#"<https://api.github.com/x?page=1>; rel="first", <https://api.github.com/x?page=2>; rel="prev""#,
        None,
    );
}

#[test]
fn link_unquoted_and_multiple_rels() {
    check_next(
        "<https://h/a?labels=a,b&page=2>; rel=next",
        Some("https://h/a?labels=a,b&page=2"),
    );
    check_next(
        r#"<https://h/b?page=3>; title="x"; rel="last next""#,
        Some("https://h/b?page=3"),
    );
}

#[test]
fn link_empty_or_garbage() {
    check_next("", None);
    check_next("rel=\"next\"", None);
    check_next("<https://h/unclosed; rel=\"next\"", None);
}

// ---------------------------------------------------------------------------------------------
// Model conversion.

#[tokio::test]
async fn pull_converts_from_github_json() {
    let stub = Stub::start(|hit| match hit.path.as_str() {
        "/repos/octo-org/hello-world/pulls/1347" => Reply::json(200, pull_json(1347, "open")),
        _ => Reply::message(404, "Not Found"),
    })
    .await;
    let pull = stub.client().pull(&repo(), PrNumber::new(1347)).await;
    check("pull", pull, Ok(expected_pull(1347)));
}

/// A pull request by a deleted account (`"user": null`) is still read, by GitHub's `ghost`,
/// whom nothing trusts.
#[tokio::test]
async fn a_pull_by_a_deleted_account_is_the_ghost() {
    let stub = Stub::start(|_| {
        let mut pull = pull_json(7, "open");
        pull["user"] = Value::Null;
        Reply::json(200, pull)
    })
    .await;
    let pull = stub.client().pull(&repo(), PrNumber::new(7)).await;
    check(
        "author",
        pull.map(|p| p.author),
        Ok(mp_core::ids::Login::ghost()),
    );
}

#[tokio::test]
async fn merged_comes_from_merged_or_merged_at() {
    let stub = Stub::start(|hit| {
        let mut pull = pull_json(1, "closed");
        match hit.path.as_str() {
            "/repos/octo-org/hello-world/pulls/1" => {
                pull["merged_at"] = json!("2011-01-26T19:01:12Z");
            }
            _ => {
                pull["merged_at"] = json!("2011-01-26T19:01:12Z");
                pull["merged"] = json!(false);
            }
        }
        Reply::json(200, pull)
    })
    .await;
    let client = stub.client();
    let from_merged_at = client
        .pull(&repo(), PrNumber::new(1))
        .await
        .map(|p| p.merged);
    let from_merged = client
        .pull(&repo(), PrNumber::new(2))
        .await
        .map(|p| p.merged);
    check(
        "merged",
        (from_merged_at, from_merged),
        (Ok(true), Ok(false)),
    );
}

#[tokio::test]
async fn commits_convert_from_github_json() {
    let stub = Stub::start(|hit| {
        Reply::json(
            200,
            json!([commit_json(HEAD, MESSAGE), commit_json(BASE, "One line")]),
        )
        .with("x-seen", hit.line())
    })
    .await;
    let commits = stub.client().pull_commits(&repo(), PrNumber::new(7)).await;
    check(
        "commits",
        commits,
        Ok(vec![
            expected_commit(HEAD, MESSAGE),
            expected_commit(BASE, "One line"),
        ]),
    );
    check(
        "request",
        stub.lines(),
        vec!["GET /repos/octo-org/hello-world/pulls/7/commits?per_page=100".to_owned()],
    );
}

#[tokio::test]
async fn unlinked_commit_author_is_none() {
    let stub = Stub::start(|_| {
        let mut commit = commit_json(HEAD, "Subject");
        commit["author"] = Value::Null;
        commit["committer"] = json!({});
        Reply::json(200, commit)
    })
    .await;
    let mut expected = expected_commit(HEAD, "Subject");
    expected.author_login = None;
    expected.committer_login = None;
    check(
        "commit",
        stub.client().commit(&repo(), &sha(HEAD)).await,
        Ok(expected),
    );
}

#[tokio::test]
async fn files_map_statuses() {
    let stub = Stub::start(|_| {
        Reply::json(
            200,
            json!([
                { "sha": "bbcd538c8e72b8c175046e27cc8f907076331401", "filename": "file1.txt", "status": "added", "additions": 103, "deletions": 21, "changes": 124, "blob_url": "https://github.com/x", "raw_url": "https://github.com/y", "contents_url": "https://api.github.com/z", "patch": "@@ -132,7 +132,7 @@" },
                { "filename": "src/new.rs", "status": "renamed", "additions": 0, "deletions": 0, "changes": 0, "previous_filename": "src/old.rs" },
                { "filename": "gone.md", "status": "removed", "additions": 0, "deletions": 9, "changes": 9 },
                { "filename": "copy.txt", "status": "copied", "additions": 1, "deletions": 0, "changes": 1 },
                { "filename": "edit.txt", "status": "changed", "additions": 2, "deletions": 2, "changes": 4 }
            ]),
        )
    })
    .await;
    let change = |path: &str, status, additions, deletions, previous: Option<&str>| FileChange {
        path: path.to_owned(),
        status,
        additions,
        deletions,
        previous_filename: previous.map(str::to_owned),
    };
    check(
        "files",
        stub.client().pull_files(&repo(), PrNumber::new(7)).await,
        Ok(vec![
            change("file1.txt", FileStatus::Added, 103, 21, None),
            change("src/new.rs", FileStatus::Renamed, 0, 0, Some("src/old.rs")),
            change("gone.md", FileStatus::Removed, 0, 9, None),
            change("copy.txt", FileStatus::Modified, 1, 0, None),
            change("edit.txt", FileStatus::Modified, 2, 2, None),
        ]),
    );
}

/// The envelope is unwrapped and the runs come back in creation (id) order, whatever the
/// listing order: C2's latest run falls back on it.
#[tokio::test]
async fn check_runs_unwrap_the_envelope() {
    let stub = Stub::start(|_| {
        Reply::json(
            200,
            json!({
                "total_count": 2,
                "check_runs": [
                    {
                        "id": 4, "head_sha": HEAD, "node_id": "MDg6Q2hlY2tSdW40",
                        "external_id": "", "url": "https://api.github.com/repos/github/hello-world/check-runs/4",
                        "details_url": "https://example.com", "status": "completed", "conclusion": "success",
                        "started_at": "2018-05-04T01:14:52Z", "completed_at": "2018-05-04T01:14:52Z",
                        "output": { "title": "Mighty Readme report", "summary": "There are 0 failures.", "text": "", "annotations_count": 2 },
                        "name": "test",
                        "check_suite": { "id": 5 },
                        "app": { "id": 1, "slug": "octoapp", "node_id": "MDExOkludGVncmF0aW9uMQ==", "name": "Octocat App" },
                        "pull_requests": []
                    },
                    {
                        "id": 3, "head_sha": HEAD, "status": "queued", "conclusion": null,
                        "started_at": null, "completed_at": null,
                        "output": { "title": null, "summary": null },
                        "name": "lint", "app": null
                    }
                ]
            }),
        )
    })
    .await;
    let runs = stub.client().check_runs(&repo(), &sha(HEAD)).await;
    check(
        "check runs",
        runs,
        Ok(vec![
            CheckRun {
                id: Some(3),
                name: "lint".to_owned(),
                status: CheckStatus::Queued,
                conclusion: None,
                started_at: None,
                completed_at: None,
                app_slug: None,
                output_summary: None,
            },
            CheckRun {
                id: Some(4),
                name: "test".to_owned(),
                status: CheckStatus::Completed,
                conclusion: Some(CheckConclusion::Success),
                started_at: at("2018-05-04T01:14:52Z"),
                completed_at: at("2018-05-04T01:14:52Z"),
                app_slug: Some("octoapp".to_owned()),
                output_summary: Some("There are 0 failures.".to_owned()),
            },
        ]),
    );
    check(
        "query",
        stub.hits().first().map(|h| h.query.clone()),
        Some("filter=all&per_page=100".to_owned()),
    );
}

#[tokio::test]
async fn timeline_keeps_label_events_only() {
    let stub = Stub::start(|_| {
        Reply::json(
            200,
            json!([
                { "id": 1, "node_id": "x", "event": "labeled", "actor": user("octocat", 1), "created_at": "2024-03-01T10:00:00Z", "label": { "name": "approved", "color": "0e8a16" } },
                { "id": 2, "event": "commented", "actor": user("hubot", 3), "created_at": "2024-03-01T10:05:00Z", "body": "looks good", "user": user("hubot", 3) },
                { "sha": HEAD, "event": "committed", "message": "x", "author": { "name": "a", "email": "b", "date": "2024-03-01T10:06:00Z" } },
                { "id": 3, "event": "unlabeled", "actor": null, "created_at": "2024-03-01T11:00:00Z", "label": { "name": "approved", "color": "0e8a16" } }
            ]),
        )
    })
    .await;
    check(
        "label events",
        stub.client().label_events(&repo(), PrNumber::new(7)).await,
        Ok(vec![
            LabelEvent {
                action: LabelAction::Labeled,
                label: "approved".to_owned(),
                actor: Some(login("octocat")),
                at: at("2024-03-01T10:00:00Z"),
            },
            LabelEvent {
                action: LabelAction::Unlabeled,
                label: "approved".to_owned(),
                actor: None,
                at: at("2024-03-01T11:00:00Z"),
            },
        ]),
    );
}

#[tokio::test]
async fn comments_and_reactions_convert() {
    let stub = Stub::start(|hit| {
        if hit.path.ends_with("/comments") {
            Reply::json(
                200,
                json!([{
                    "id": 1, "node_id": "MDEyOklzc3VlQ29tbWVudDE=",
                    "url": "https://api.github.com/repos/octo-org/hello-world/issues/comments/1",
                    "html_url": "https://github.com/octo-org/hello-world/issues/1347#issuecomment-1",
                    "body": "Me too", "user": user("octocat", 1),
                    "created_at": "2011-04-14T16:00:49Z", "updated_at": "2011-04-14T16:00:49Z",
                    "author_association": "COLLABORATOR"
                }, { "id": 2, "body": null, "user": null, "created_at": "garbage" }]),
            )
        } else {
            Reply::json(
                200,
                json!([
                    { "id": 1, "node_id": "MDg6UmVhY3Rpb24x", "user": user("octocat", 1), "content": "+1", "created_at": "2016-05-20T20:09:31Z" },
                    { "id": 2, "user": user("hubot", 3), "content": "-1", "created_at": "2016-05-20T20:10:31Z" },
                    { "id": 4, "user": null, "content": "+1", "created_at": "2016-05-20T20:11:31Z" },
                    { "id": 3, "user": user("hubot", 3), "content": "heart", "created_at": null }
                ]),
            )
        }
    })
    .await;
    let client = stub.client();
    check(
        "comments",
        client.comments(&repo(), PrNumber::new(1347)).await,
        Ok(vec![
            Comment {
                id: CommentId::new(1),
                author: Some(login("octocat")),
                body: "Me too".to_owned(),
                created_at: at("2011-04-14T16:00:49Z"),
                updated_at: at("2011-04-14T16:00:49Z"),
            },
            Comment {
                id: CommentId::new(2),
                author: None,
                body: String::new(),
                created_at: None,
                updated_at: None,
            },
        ]),
    );
    check(
        "reactions",
        client.reactions(&repo(), PrNumber::new(1347)).await,
        Ok(vec![
            Reaction {
                kind: ReactionKind::ThumbsUp,
                user: login("octocat"),
                created_at: at("2016-05-20T20:09:31Z"),
            },
            Reaction {
                kind: ReactionKind::ThumbsDown,
                user: login("hubot"),
                created_at: at("2016-05-20T20:10:31Z"),
            },
            Reaction {
                kind: ReactionKind::Other("heart".to_owned()),
                user: login("hubot"),
                created_at: None,
            },
        ]),
    );
}

/// GitHub's description lets an issue's `labels` hold plain names as well as label objects
/// (`oneOf: [string, object]`, and the object's `name` is optional): every form reads, and
/// an object without a name is no label.
#[tokio::test]
async fn issue_labels_read_as_names_objects_or_plain_strings() {
    let stub = Stub::start(|_| {
        Reply::json(
            200,
            json!([
                { "id": 1, "number": 5, "title": "Which way", "body": "text", "state": "open",
                  "labels": ["mp:decision", { "name": "p1", "color": null }, { "id": 7 }],
                  "user": user("mp-gate[bot]", 9), "created_at": "2024-01-01T00:00:00Z" }
            ]),
        )
    })
    .await;
    let query = IssueQuery {
        state: None,
        labels: Vec::new(),
    };
    let issues = stub.client().issues(&repo(), &query).await;
    check(
        "labels",
        issues.map(|list| list.into_iter().map(|i| i.labels).collect::<Vec<_>>()),
        Ok(vec![vec!["mp:decision".to_owned(), "p1".to_owned()]]),
    );
}

#[tokio::test]
async fn issues_mark_pull_requests_and_send_the_query() {
    let stub = Stub::start(|_| {
        Reply::json(
            200,
            json!([
                { "id": 1, "number": 12, "title": "Drift found", "body": null, "state": "open",
                  "labels": [{ "name": "mp:incident" }], "user": user("mp-gate[bot]", 9),
                  "created_at": "2024-01-01T00:00:00Z", "comments": 0 },
                { "id": 2, "number": 11, "title": "A pull", "body": "text", "state": "closed",
                  "labels": [], "user": user("octocat", 1), "created_at": "2023-12-31T00:00:00Z",
                  "pull_request": { "url": "https://api.github.com/repos/octo-org/hello-world/pulls/11", "merged_at": null } }
            ]),
        )
    })
    .await;
    let query = IssueQuery {
        state: None,
        labels: vec!["mp:incident".to_owned(), "p0".to_owned()],
    };
    let issues = stub.client().issues(&repo(), &query).await;
    check(
        "issues",
        issues,
        Ok(vec![
            Issue {
                repo: repo(),
                number: PrNumber::new(12),
                title: "Drift found".to_owned(),
                body: String::new(),
                state: IssueState::Open,
                labels: vec!["mp:incident".to_owned()],
                author: Some(login("mp-gate[bot]")),
                created_at: at("2024-01-01T00:00:00Z"),
                is_pull_request: false,
            },
            Issue {
                repo: repo(),
                number: PrNumber::new(11),
                title: "A pull".to_owned(),
                body: "text".to_owned(),
                state: IssueState::Closed,
                labels: Vec::new(),
                author: Some(login("octocat")),
                created_at: at("2023-12-31T00:00:00Z"),
                is_pull_request: true,
            },
        ]),
    );
    check(
        "query",
        stub.lines(),
        vec!["GET /repos/octo-org/hello-world/issues?state=all&labels=mp%3Aincident%2Cp0&per_page=100".to_owned()],
    );
}

#[tokio::test]
async fn undecodable_body_is_malformed_without_retry() {
    let stub = Stub::start(|_| Reply::json(200, json!({ "number": "not a pull" }))).await;
    let result = stub.client().pull(&repo(), PrNumber::new(1)).await;
    check(
        "malformed",
        matches!(result, Err(GitHubError::Malformed { .. })),
        true,
    );
    check("requests", stub.hits().len(), 1);
}

// ---------------------------------------------------------------------------------------------
// Pagination and the commit cap.

/// Serves `total` items of `item` in pages of `per_page`, linked with `rel="next"`.
fn paged(hit: &Hit, total: usize, per_page: usize, item: impl Fn(usize) -> Value) -> Reply {
    let page: usize = hit
        .query
        .split('&')
        .find_map(|pair| pair.strip_prefix("page="))
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    let start = (page - 1) * per_page;
    let end = (start + per_page).min(total);
    let items: Vec<Value> = (start..end).map(item).collect();
    let mut reply = Reply::json(200, Value::Array(items));
    let last = total.div_ceil(per_page);
    if page < last {
        let url = |n: usize| format!("{}{}?per_page=100&page={n}", hit.base, hit.path);
        reply = reply.with(
            "link",
            format!(
                r#"<{}>; rel="next", <{}>; rel="last""#,
                url(page + 1),
                url(last)
            ),
        );
    }
    reply
}

/// The activity log of `main`, newest first: entry `i` moves the branch from SHA `i + 1`
/// to SHA `i` (so the newest tip is SHA 0).
fn activity_entry(i: usize) -> Value {
    json!({
        "id": i, "node_id": format!("A_{i}"),
        "before": numbered_sha(i + 1), "after": numbered_sha(i),
        "ref": "refs/heads/main", "timestamp": "2026-03-10T10:00:00Z",
        "activity_type": "push",
        "actor": { "login": "octocat", "id": 1, "type": "User" },
    })
}

#[tokio::test]
async fn the_activity_log_is_read_back_only_as_far_as_the_watermarks() {
    let stub = Stub::start(|hit| paged(hit, 6, 2, activity_entry)).await;
    let client = stub.client();
    let tip = |n: usize| CommitSha::parse(&numbered_sha(n)).expect("a SHA");
    // The watermark is on page 2: pages 1 and 2 are read, not page 3.
    let read = client
        .branch_updates_until(&repo(), "main", &[tip(3)])
        .await
        .map(|updates| updates.len());
    check("entries", read, Ok(4));
    check("requests", stub.hits().len(), 2);
    // Two watermarks: read until both show.
    let read = client
        .branch_updates_until(&repo(), "main", &[tip(0), tip(5)])
        .await
        .map(|updates| updates.len());
    check("entries", read, Ok(6));
    // A watermark the log never shows, and the plain read: every page.
    let read = client
        .branch_updates_until(&repo(), "main", &[tip(40)])
        .await
        .map(|updates| updates.len());
    check("entries", read, Ok(6));
    let read = client
        .head_ref_updates(&repo(), "main")
        .await
        .map(|updates| updates.len());
    check("entries", read, Ok(6));
    check("requests", stub.hits().len(), 2 + 3 + 3 + 3);
}

#[tokio::test]
async fn pagination_follows_next_over_three_pages() {
    let stub = Stub::start(|hit| {
        paged(hit, 5, 2, |i| {
            json!({ "filename": format!("f{i}.txt"), "status": "modified", "additions": i, "deletions": 0 })
        })
    })
    .await;
    let files = stub.client().pull_files(&repo(), PrNumber::new(3)).await;
    let paths: Result<Vec<String>, _> = files.map(|f| f.into_iter().map(|f| f.path).collect());
    check(
        "paths",
        paths,
        Ok((0..5).map(|i| format!("f{i}.txt")).collect()),
    );
    check(
        "requests",
        stub.lines(),
        vec![
            "GET /repos/octo-org/hello-world/pulls/3/files?per_page=100".to_owned(),
            "GET /repos/octo-org/hello-world/pulls/3/files?per_page=100&page=2".to_owned(),
            "GET /repos/octo-org/hello-world/pulls/3/files?per_page=100&page=3".to_owned(),
        ],
    );
}

#[tokio::test]
async fn next_link_to_another_host_is_refused() {
    let stub = Stub::start(|_| {
        Reply::json(200, json!([])).with(
            "link",
            r#"<https://elsewhere.example/x?page=2>; rel="next""#,
        )
    })
    .await;
    let result = stub.client().pull_files(&repo(), PrNumber::new(3)).await;
    check(
        "refused",
        matches!(result, Err(GitHubError::Malformed { .. })),
        true,
    );
    check("requests", stub.hits().len(), 1);
}

#[tokio::test]
async fn two_hundred_fifty_commits_are_truncated() {
    let stub =
        Stub::start(|hit| paged(hit, 250, 100, |i| commit_json(&numbered_sha(i + 1), "c"))).await;
    let result = stub.client().pull_commits(&repo(), PrNumber::new(9)).await;
    check(
        "truncated",
        result.map(|c| c.len()),
        Err(GitHubError::Truncated {
            what: "octo-org/hello-world#9 commits".to_owned(),
            limit: 250,
        }),
    );
}

#[tokio::test]
async fn two_hundred_forty_nine_commits_are_read() {
    let stub =
        Stub::start(|hit| paged(hit, 249, 100, |i| commit_json(&numbered_sha(i + 1), "c"))).await;
    let result = stub.client().pull_commits(&repo(), PrNumber::new(9)).await;
    check("read", result.map(|c| c.len()), Ok(249));
}

#[tokio::test]
async fn branch_commits_stop_at_the_limit() {
    let stub =
        Stub::start(|hit| paged(hit, 300, 100, |i| commit_json(&numbered_sha(i + 1), "c"))).await;
    let result = stub.client().branch_commits(&repo(), "main", 150).await;
    check("read", result.map(|c| c.len()), Ok(150));
    check("pages", stub.hits().len(), 2);
    check(
        "query",
        stub.hits().first().map(|h| h.query.clone()),
        Some("sha=main&per_page=100".to_owned()),
    );
}

// ---------------------------------------------------------------------------------------------
// Writes.

fn merge_request(message: Option<&str>) -> MergeRequest {
    MergeRequest {
        head_sha: sha(HEAD),
        method: MergeMethod::Squash,
        commit_message: message.map(str::to_owned),
    }
}

#[tokio::test]
async fn merge_sends_pinned_squash_with_the_message_as_body() {
    let stub = Stub::start(|_| {
        Reply::json(
            200,
            json!({ "sha": BASE, "merged": true, "message": "Pull Request successfully merged" }),
        )
    })
    .await;
    let message = "Agent-Tool: claude-code\nTask-Ref: Issue#12";
    let merged = stub
        .client()
        .merge_pull(&repo(), PrNumber::new(7), &merge_request(Some(message)))
        .await;
    check("merge sha", merged, Ok(sha(BASE)));
    let hit = stub.hits().first().cloned();
    check(
        "request",
        hit.map(|h| (h.line(), h.json())),
        Some((
            "PUT /repos/octo-org/hello-world/pulls/7/merge".to_owned(),
            json!({
                "sha": HEAD,
                "merge_method": "squash",
                "commit_message": "Agent-Tool: claude-code\nTask-Ref: Issue#12"
            }),
        )),
    );
}

#[tokio::test]
async fn merge_405_is_not_mergeable_and_409_head_moved() {
    let stub = Stub::start(|hit| match hit.path.as_str() {
        "/repos/octo-org/hello-world/pulls/1/merge" => {
            Reply::message(405, "Pull Request is not mergeable")
        }
        _ => Reply::message(
            409,
            "Head branch was modified. Review and try the merge again.",
        ),
    })
    .await;
    let client = stub.client();
    let refused = client
        .merge_pull(&repo(), PrNumber::new(1), &merge_request(None))
        .await;
    let moved = client
        .merge_pull(&repo(), PrNumber::new(2), &merge_request(None))
        .await;
    check(
        "405 / 409",
        (refused, moved),
        (
            Err(GitHubError::NotMergeable {
                pr: "octo-org/hello-world#1".to_owned(),
                message: "Pull Request is not mergeable".to_owned(),
            }),
            Err(GitHubError::HeadMoved {
                pr: "octo-org/hello-world#2".to_owned(),
                expected: sha(HEAD),
            }),
        ),
    );
    check("one request each", stub.hits().len(), 2);
}

#[tokio::test]
async fn update_branch_202_and_422() {
    let stub = Stub::start(|hit| match hit.path.as_str() {
        "/repos/octo-org/hello-world/pulls/1/update-branch" => Reply::json(
            202,
            json!({ "message": "Updating pull request branch.", "url": "https://github.com/repos/octo-org/hello-world/pulls/1" }),
        ),
        _ => Reply::message(422, "expected head sha didn't match current head ref"),
    })
    .await;
    let client = stub.client();
    let accepted = client
        .update_branch(&repo(), PrNumber::new(1), &sha(HEAD))
        .await;
    let refused = client
        .update_branch(&repo(), PrNumber::new(2), &sha(HEAD))
        .await;
    check(
        "outcomes",
        (accepted, refused),
        (
            Ok(UpdateBranchOutcome::Accepted),
            Ok(UpdateBranchOutcome::Refused {
                message: "expected head sha didn't match current head ref".to_owned(),
            }),
        ),
    );
    check(
        "body",
        stub.hits().first().map(Hit::json),
        Some(json!({ "expected_head_sha": HEAD })),
    );
}

#[tokio::test]
async fn remove_absent_label_is_ok_and_name_is_encoded() {
    let stub = Stub::start(|_| Reply::message(404, "Label does not exist")).await;
    let result = stub
        .client()
        .remove_label(&repo(), PrNumber::new(4), "needs review/p0")
        .await;
    check("result", result, Ok(()));
    check(
        "path",
        stub.lines(),
        vec!["DELETE /repos/octo-org/hello-world/issues/4/labels/needs%20review%2Fp0".to_owned()],
    );
}

#[tokio::test]
async fn create_comment_returns_the_stored_comment() {
    let stub = Stub::start(|hit| {
        Reply::json(
            201,
            json!({ "id": 88, "body": hit.json()["body"], "user": user("mp-gate[bot]", 9),
                    "created_at": "2024-05-01T12:00:00Z", "updated_at": "2024-05-01T12:00:00Z",
                    "author_association": "NONE" }),
        )
    })
    .await;
    let comment = stub
        .client()
        .create_comment(&repo(), PrNumber::new(5), "hello")
        .await;
    check(
        "comment",
        comment,
        Ok(Comment {
            id: CommentId::new(88),
            author: Some(login("mp-gate[bot]")),
            body: "hello".to_owned(),
            created_at: at("2024-05-01T12:00:00Z"),
            updated_at: at("2024-05-01T12:00:00Z"),
        }),
    );
}

#[tokio::test]
async fn put_file_sends_base64_and_maps_conflicts() {
    let stub = Stub::start(|hit| {
        if hit.json()["sha"].is_null() {
            return Reply::message(422, "Invalid request.\n\n\"sha\" wasn't supplied.");
        }
        if hit.json()["sha"] == "0000000000000000000000000000000000000000" {
            return Reply::message(409, "bot-state/x.json does not match 0000000000000000000000000000000000000000");
        }
        if hit.json()["message"] == "too large" {
            return Reply::message(422, "content is too large");
        }
        Reply::json(
            200,
            json!({ "content": { "name": "x.json", "path": "bot-state/x.json", "sha": "95b966ae1c166bd92f8ae7d1c313e738c731dfc3" },
                    "commit": { "sha": "7638417db6d59f3c431d3e1f261cc637155684cd" } }),
        )
    })
    .await;
    let client = stub.client();
    let mut write = FileWrite {
        branch: "bot-state".to_owned(),
        path: "bot-state/x.json".to_owned(),
        text: "{\"a\":1}\n".to_owned(),
        expected_blob_sha: Some("3d21ec53a331a6f037a91c368710b99387d012c1".to_owned()),
        message: "state: update".to_owned(),
    };
    let written = client.put_file(&repo(), &write).await;
    write.expected_blob_sha = Some("0".repeat(40));
    let stale = client.put_file(&repo(), &write).await;
    write.expected_blob_sha = None;
    let conflict = client.put_file(&repo(), &write).await;
    // A 422 that is not about the blob is permanent: not a conflict to retry.
    write.expected_blob_sha = Some("3d21ec53a331a6f037a91c368710b99387d012c1".to_owned());
    write.message = "too large".to_owned();
    let permanent = client.put_file(&repo(), &write).await;
    let is_conflict = |r: Result<String, GitHubError>| {
        r.map_err(|e| (matches!(e, GitHubError::Conflict { .. }), e.to_string()))
    };
    check(
        "results",
        (
            written,
            is_conflict(stale).map_err(|e| e.0),
            is_conflict(conflict).map_err(|e| e.0),
            is_conflict(permanent),
        ),
        (
            Ok("95b966ae1c166bd92f8ae7d1c313e738c731dfc3".to_owned()),
            Err(true),
            Err(true),
            Err((
                false,
                "PUT /repos/{o}/{r}/contents/{path} answered HTTP 422: content is too large"
                    .to_owned(),
            )),
        ),
    );
    check(
        "request",
        stub.hits().first().map(|h| (h.line(), h.json())),
        Some((
            "PUT /repos/octo-org/hello-world/contents/bot-state/x.json".to_owned(),
            json!({ "message": "state: update", "content": "eyJhIjoxfQo=", "branch": "bot-state",
                    "sha": "3d21ec53a331a6f037a91c368710b99387d012c1" }),
        )),
    );
}

#[tokio::test]
async fn file_decodes_wrapped_base64_and_404_is_none() {
    let stub = Stub::start(|hit| {
        if hit.path.ends_with("missing.md") {
            return Reply::message(404, "Not Found");
        }
        Reply::json(
            200,
            json!({ "type": "file", "encoding": "base64", "size": 21, "name": "README.md",
                    "path": "docs/README.md", "sha": "3d21ec53a331a6f037a91c368710b99387d012c1",
                    "content": "IyBIZWxsbwoKV29ybGQgb2YgdGV4dC4K\n", "url": "https://api.github.com/x" }),
        )
    })
    .await;
    let client = stub.client();
    let found = client.file(&repo(), "docs/README.md", "main").await;
    let missing = client.file(&repo(), "docs/missing.md", "main").await;
    check(
        "files",
        (found, missing),
        (
            Ok(Some(FileContent {
                text: "# Hello\n\nWorld of text.\n".to_owned(),
                blob_sha: "3d21ec53a331a6f037a91c368710b99387d012c1".to_owned(),
            })),
            Ok(None),
        ),
    );
    check(
        "query",
        stub.lines().first().cloned(),
        Some("GET /repos/octo-org/hello-world/contents/docs/README.md?ref=main".to_owned()),
    );
}

#[tokio::test]
async fn create_branch_and_pull_422_exists_is_conflict() {
    let stub = Stub::start(|hit| match hit.path.as_str() {
        "/repos/octo-org/hello-world/git/refs" => Reply::message(422, "Reference already exists"),
        _ => Reply::json(
            422,
            json!({ "message": "Validation Failed",
                    "errors": [{ "resource": "PullRequest", "code": "custom", "message": "A pull request already exists for octo-org:revert-1." }],
                    "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request" }),
        ),
    })
    .await;
    let client = stub.client();
    let branch = client.create_branch(&repo(), "revert-1", &sha(HEAD)).await;
    let pull = client
        .create_pull(
            &repo(),
            &mp_core::port::NewPull {
                title: "Revert".to_owned(),
                body: String::new(),
                head: "revert-1".to_owned(),
                base: "main".to_owned(),
            },
        )
        .await;
    let conflicts = (
        matches!(branch, Err(GitHubError::Conflict { .. })),
        matches!(pull, Err(GitHubError::Conflict { .. })),
    );
    check("conflicts", conflicts, (true, true));
}

#[tokio::test]
async fn commit_pulls_read_merged_by_of_merged_ones() {
    let stub = Stub::start(|hit| match hit.path.as_str() {
        "/repos/octo-org/hello-world/commits/6dcb09b5b57875f334f61aebed695e2e4193db5e/pulls" => {
            let mut merged = pull_json(8, "closed");
            merged["merged_at"] = json!("2024-01-01T00:00:00Z");
            merged["merge_commit_sha"] = json!(HEAD);
            Reply::json(200, json!([merged, pull_json(3, "open")]))
        }
        "/repos/octo-org/hello-world/pulls/8" => {
            let mut full = pull_json(8, "closed");
            full["merged"] = json!(true);
            full["merged_by"] = user("octocat", 1);
            full["merge_commit_sha"] = json!(HEAD);
            Reply::json(200, full)
        }
        _ => Reply::message(404, "Not Found"),
    })
    .await;
    let pulls = stub.client().commit_pulls(&repo(), &sha(HEAD)).await;
    check(
        "pulls",
        pulls,
        Ok(vec![
            CommitPull {
                number: PrNumber::new(3),
                merged_by: None,
                merge_commit_sha: None,
            },
            CommitPull {
                number: PrNumber::new(8),
                merged_by: Some(login("octocat")),
                merge_commit_sha: Some(sha(HEAD)),
            },
        ]),
    );
}

#[tokio::test]
async fn loopback_revert_posts_the_extension() {
    let stub = Stub::start(|hit| match hit.json()["branch"].as_str() {
        Some("taken") => Reply::message(409, "branch taken already exists"),
        _ => Reply::json(201, json!({ "sha": BASE })),
    })
    .await;
    let client = stub.client();
    let pushed = client
        .push_revert(&repo(), &sha(HEAD), "revert-x", "Revert x")
        .await;
    let taken = client
        .push_revert(&repo(), &sha(HEAD), "taken", "Revert x")
        .await;
    check(
        "results",
        (
            pushed,
            taken.map_err(|e| matches!(e, GitHubError::Conflict { .. })),
        ),
        (Ok(sha(BASE)), Err(true)),
    );
    check(
        "request",
        stub.hits().first().map(|h| (h.line(), h.json())),
        Some((
            "POST /repos/octo-org/hello-world/_loopback/revert".to_owned(),
            json!({ "sha": HEAD, "branch": "revert-x", "message": "Revert x" }),
        )),
    );
}

#[tokio::test]
async fn git_revert_failure_is_counted_as_a_push() {
    let stub = Stub::start(|_| Reply::message(404, "Not Found")).await;
    let dir = tempfile::tempdir().expect("temporary directory");
    let mut config = stub.config(RetryPolicy::fast());
    config.revert = RevertMode::Git {
        remote_template: format!("file://{}/{{repo}}.git", dir.path().display()),
    };
    let client = RestGitHub::new(config).expect("valid configuration");
    let result = client
        .push_revert(&repo(), &sha(HEAD), "revert-x", "Revert x")
        .await;
    let push = client.stats().route("git push {o}/{r}");
    check(
        "failed push",
        (result.is_err(), push.requests, push.failures, push.spent),
        (true, 1, 1, 0),
    );
    check("no REST call", stub.hits().len(), 0);
}

// ---------------------------------------------------------------------------------------------
// Conditional requests and the cache.

#[tokio::test]
async fn not_modified_reuses_the_body_and_spends_nothing() {
    let stub = Stub::start(|hit| {
        if hit.header("if-none-match") == Some("W/\"abc123\"") {
            return Reply::empty(304)
                .with("etag", "W/\"abc123\"")
                .with("x-ratelimit-remaining", "4321");
        }
        Reply::json(200, pull_json(7, "open"))
            .with("etag", "W/\"abc123\"")
            .with("x-ratelimit-remaining", "4322")
    })
    .await;
    let client = stub.client();
    let first = client.pull(&repo(), PrNumber::new(7)).await;
    let second = client.pull(&repo(), PrNumber::new(7)).await;
    check(
        "same value",
        (first, second),
        (Ok(expected_pull(7)), Ok(expected_pull(7))),
    );
    let stats = client.stats().route("GET /repos/{o}/{r}/pulls/{n}");
    check(
        "stats",
        (
            stats.requests,
            stats.not_modified,
            client.stats().rate_limited_requests(),
        ),
        (2, 1, 1),
    );
    check(
        "remaining from the 304",
        client.rate_limit_remaining(),
        Some(4321),
    );
}

#[tokio::test]
async fn not_modified_pages_keep_their_links() {
    let stub = Stub::start(|hit| {
        let etag = format!("W/\"{}\"", hit.query);
        if hit.header("if-none-match") == Some(etag.as_str()) {
            return Reply::empty(304);
        }
        paged(
            hit,
            3,
            2,
            |i| json!({ "filename": format!("f{i}"), "status": "added" }),
        )
        .with("etag", etag)
    })
    .await;
    let client = stub.client();
    let first = client
        .pull_files(&repo(), PrNumber::new(2))
        .await
        .map(|f| f.len());
    let second = client
        .pull_files(&repo(), PrNumber::new(2))
        .await
        .map(|f| f.len());
    check("lengths", (first, second), (Ok(3), Ok(3)));
    check("304s", client.stats().total_not_modified(), 2);
}

#[tokio::test]
async fn cache_survives_save_and_load() {
    let stub = Stub::start(|hit| {
        if hit.header("if-none-match") == Some("W/\"e1\"") {
            return Reply::empty(304);
        }
        Reply::json(200, pull_json(7, "open")).with("etag", "W/\"e1\"")
    })
    .await;
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("etags.json");
    let first = stub.client();
    let _ = first.pull(&repo(), PrNumber::new(7)).await;
    check(
        "saved",
        first
            .cache_snapshot()
            .save(&path)
            .map_err(|e| e.to_string()),
        Ok(()),
    );
    let (loaded, warning) = EtagCache::load(&path);
    check("loaded", (loaded.len(), warning), (1, None));
    let second = stub.client().with_cache(loaded);
    let again = second.pull(&repo(), PrNumber::new(7)).await;
    check("from cache", again, Ok(expected_pull(7)));
    check(
        "304 on the new client",
        second.stats().total_not_modified(),
        1,
    );
}

#[test]
fn cache_saves_only_used_entries() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("etags.json");
    let text = json!({
        "version": 1,
        "entries": {
            "http://h/a": { "etag": "W/\"1\"", "body": "[]" },
            "http://h/b": { "etag": "W/\"2\"", "body": "{}", "link": "<http://h/b?page=2>; rel=\"next\"" }
        }
    });
    check(
        "seeded",
        std::fs::write(&path, text.to_string()).map_err(|e| e.to_string()),
        Ok(()),
    );
    let (mut cache, warning) = EtagCache::load(&path);
    check("loaded", (cache.len(), warning), (2, None));
    let reused = cache.reuse("http://h/b").map(|e| e.link);
    check(
        "link kept",
        reused,
        Some(Some("<http://h/b?page=2>; rel=\"next\"".to_owned())),
    );
    check(
        "saved",
        cache.save(&path).map_err(|e| e.to_string()),
        Ok(()),
    );
    let (reloaded, _) = EtagCache::load(&path);
    check(
        "only b",
        (
            reloaded.len(),
            reloaded.etag("http://h/b").map(str::to_owned),
        ),
        (1, Some("W/\"2\"".to_owned())),
    );
    let leftovers = std::fs::read_dir(dir.path())
        .map(|d| d.count())
        .unwrap_or(0);
    check("no temporary file left", leftovers, 1);
}

#[test]
fn corrupt_or_missing_cache_starts_empty() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let missing = EtagCache::load(&dir.path().join("absent.json"));
    check("missing", (missing.0.len(), missing.1), (0, None));
    let path = dir.path().join("corrupt.json");
    check(
        "seeded",
        std::fs::write(&path, "{\"version\": 1, \"entr").map_err(|e| e.to_string()),
        Ok(()),
    );
    let (cache, warning) = EtagCache::load(&path);
    check(
        "corrupt",
        (
            cache.len(),
            warning.is_some_and(|w| w.contains("corrupt.json")),
        ),
        (0, true),
    );
    let old = dir.path().join("old.json");
    check(
        "seeded",
        std::fs::write(&old, "{\"version\": 0, \"entries\": {}}").map_err(|e| e.to_string()),
        Ok(()),
    );
    let (_, warning) = EtagCache::load(&old);
    check(
        "version warning",
        warning.is_some_and(|w| w.contains("version 0")),
        true,
    );
}

// ---------------------------------------------------------------------------------------------
// Retries, limits and the budget.

#[tokio::test]
async fn read_retries_502_then_succeeds() {
    let stub = Stub::start(|hit| {
        if hit.index < 2 {
            return Reply::message(502, "Server Error");
        }
        Reply::json(
            200,
            json!({ "name": "main", "commit": { "sha": HEAD }, "protected": true }),
        )
    })
    .await;
    let client = stub.client();
    let head = client.branch_head(&repo(), "main").await;
    check("head", head, Ok(sha(HEAD)));
    let stats = client.stats().route("GET /repos/{o}/{r}/branches/{branch}");
    check(
        "stats",
        (stats.requests, stats.retries, stats.failures),
        (3, 2, 0),
    );
}

#[tokio::test]
async fn read_gives_up_after_max_retries() {
    let stub = Stub::start(|_| Reply::message(503, "Service Unavailable")).await;
    let result = stub.client().branch_head(&repo(), "main").await;
    check(
        "unavailable",
        result,
        Err(GitHubError::Unavailable {
            route: "GET /repos/{o}/{r}/branches/{branch}".to_owned(),
            message: "HTTP 503: Service Unavailable after 3 retries".to_owned(),
        }),
    );
    check("requests", stub.hits().len(), 4);
}

#[tokio::test]
async fn no_retry_on_404_or_422() {
    let stub = Stub::start(|hit| match hit.method.as_str() {
        "GET" => Reply::message(404, "Not Found"),
        _ => Reply::message(422, "Validation Failed"),
    })
    .await;
    let client = stub.client();
    let missing = client.pull(&repo(), PrNumber::new(404)).await;
    let invalid = client
        .create_issue(
            &repo(),
            &mp_core::port::NewIssue {
                title: String::new(),
                body: String::new(),
                labels: Vec::new(),
            },
        )
        .await;
    check(
        "errors",
        (missing, invalid),
        (
            Err(GitHubError::NotFound {
                what: "pull request octo-org/hello-world#404".to_owned(),
            }),
            Err(GitHubError::Status {
                route: "POST /repos/{o}/{r}/issues".to_owned(),
                status: 422,
                message: "Validation Failed".to_owned(),
            }),
        ),
    );
    check("requests", stub.hits().len(), 2);
    check("failures", client.stats().total_failures(), 2);
}

#[tokio::test]
async fn secondary_limit_retry_after_is_honoured() {
    let stub = Stub::start(|hit| {
        if hit.index == 0 {
            return Reply::message(429, "You have exceeded a secondary rate limit")
                .with("retry-after", "1");
        }
        Reply::json(200, pull_json(7, "open"))
    })
    .await;
    let policy = RetryPolicy {
        max_wait: Duration::from_secs(5),
        ..RetryPolicy::fast()
    };
    let (client, sleeper) = stub.stepped(stub.config(policy));
    let pull = client.pull(&repo(), PrNumber::new(7)).await;
    check(
        "pull and waits",
        (pull, sleeper.waits()),
        (Ok(expected_pull(7)), vec![Duration::from_secs(1)]),
    );
    check("retries", client.stats().total_retries(), 1);
}

/// The back-off of the default policy (1 s, then 2 s) is waited on the client's sleeper,
/// not on the real clock.
#[tokio::test]
async fn back_off_waits_go_through_the_sleeper() {
    let stub = Stub::start(|hit| {
        if hit.index < 2 {
            return Reply::message(502, "Server Error");
        }
        Reply::json(200, json!({ "name": "main", "commit": { "sha": HEAD } }))
    })
    .await;
    let (client, sleeper) = stub.stepped(stub.config(RetryPolicy::default()));
    let head = client.branch_head(&repo(), "main").await;
    check(
        "head and waits",
        (head, sleeper.waits()),
        (
            Ok(sha(HEAD)),
            vec![Duration::from_secs(1), Duration::from_secs(2)],
        ),
    );
}

/// Pacing reads the sleeper's time: at 60 points a minute the bucket holds 3 points and
/// refills 0.9 a second, so the 4th read waits 1/0.9 s, on the sleeper.
#[tokio::test]
async fn pacing_waits_on_the_sleepers_clock() {
    let stub =
        Stub::start(|_| Reply::json(200, json!({ "name": "main", "commit": { "sha": HEAD } })))
            .await;
    let mut config = stub.config(RetryPolicy::fast());
    config.points_per_minute = Some(60);
    let (client, sleeper) = stub.stepped(config);
    for _ in 0..4 {
        check(
            "head",
            client.branch_head(&repo(), "main").await,
            Ok(sha(HEAD)),
        );
    }
    check(
        "waits",
        sleeper.waits(),
        vec![Duration::from_secs_f64(1.0 / 0.9)],
    );
    check("paced", client.stats().total_paced(), 1);
}

#[tokio::test]
async fn long_retry_after_gives_up_throttled() {
    let stub = Stub::start(|_| {
        Reply::message(403, "You have exceeded a secondary rate limit").with("retry-after", "120")
    })
    .await;
    let result = stub.client().pull(&repo(), PrNumber::new(7)).await;
    check(
        "throttled",
        result,
        Err(GitHubError::Throttled {
            retry_after_secs: 120,
        }),
    );
    check("requests", stub.hits().len(), 1);
}

#[tokio::test]
async fn persistent_secondary_limit_gives_up_after_retries() {
    let stub =
        Stub::start(|_| Reply::message(429, "You have exceeded a secondary rate limit")).await;
    let result = stub.client().pull(&repo(), PrNumber::new(7)).await;
    check(
        "throttled",
        result.map_err(|e| matches!(e, GitHubError::Throttled { .. })),
        Err(true),
    );
    check("requests", stub.hits().len(), 4);
}

#[tokio::test]
async fn primary_exhaustion_is_rate_limited() {
    let stub = Stub::start(|_| {
        Reply::message(403, "API rate limit exceeded for installation ID 1.")
            .with("x-ratelimit-remaining", "0")
            .with("x-ratelimit-reset", "4102444800")
    })
    .await;
    let client = stub.client();
    let result = client.pull(&repo(), PrNumber::new(7)).await;
    check(
        "rate limited",
        result,
        Err(GitHubError::RateLimited { remaining: 0 }),
    );
    check("remaining", client.rate_limit_remaining(), Some(0));
    check("requests", stub.hits().len(), 1);
    // Until the reset, every further call fails the same way without being sent: an
    // exhausted limit is not probed again, reads and writes alike.
    let again = client.pull(&repo(), PrNumber::new(8)).await;
    let branch = client.branch_head(&repo(), "main").await;
    check(
        "after exhaustion",
        (again, branch),
        (
            Err(GitHubError::RateLimited { remaining: 0 }),
            Err(GitHubError::RateLimited { remaining: 0 }),
        ),
    );
    check("requests after exhaustion", stub.hits().len(), 1);
}

#[tokio::test]
async fn bare_403_is_returned_as_is() {
    let stub = Stub::start(|_| Reply::message(403, "Resource not accessible by integration")).await;
    let result = stub.client().pull(&repo(), PrNumber::new(7)).await;
    check(
        "status",
        result,
        Err(GitHubError::Status {
            route: "GET /repos/{o}/{r}/pulls/{n}".to_owned(),
            status: 403,
            message: "Resource not accessible by integration".to_owned(),
        }),
    );
    check("requests", stub.hits().len(), 1);
}

/// GitHub names the permission sets a route accepts in `X-Accepted-GitHub-Permissions`
/// (sent to Apps and fine-grained tokens); a refusal keeps it, so the tick can name what
/// is missing.
#[tokio::test]
async fn a_403_keeps_the_accepted_permissions() {
    let stub = Stub::start(|_| {
        Reply::message(403, "Resource not accessible by integration").with(
            "x-accepted-github-permissions",
            "issues=write; pull_requests=write",
        )
    })
    .await;
    let result = stub
        .client()
        .create_comment(&repo(), PrNumber::new(7), "hello")
        .await;
    check(
        "status",
        result.map(|_| ()),
        Err(GitHubError::Status {
            route: "POST /repos/{o}/{r}/issues/{n}/comments".to_owned(),
            status: 403,
            message: "Resource not accessible by integration (accepted permissions: issues=write; pull_requests=write)".to_owned(),
        }),
    );
    check("requests", stub.hits().len(), 1);
}

/// GitHub's secondary limit as it often really comes: a bare 403 with calls left in the
/// primary window and no `Retry-After`. It is a limit, not a refusal: the client waits at
/// least a minute before asking again, which a tick's wait budget turns into `Throttled`.
#[tokio::test]
async fn a_bare_secondary_limit_403_is_throttling_not_a_refusal() {
    let stub = Stub::start(|_| {
        Reply::message(
            403,
            "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
        )
    })
    .await;
    let result = stub.client().pull(&repo(), PrNumber::new(7)).await;
    check(
        "throttled",
        result,
        Err(GitHubError::Throttled {
            retry_after_secs: 60,
        }),
    );
    check("requests", stub.hits().len(), 1);
}

/// Under the shipped policy a bare secondary-limit 403 is waited out, a minute at least as
/// GitHub asks, and the wait is told: one line per wait, naming the route, the repository
/// and the seconds, which the tick prints as a warning.
#[tokio::test]
async fn a_secondary_limit_wait_is_told() {
    let stub = Stub::start(|hit| {
        if hit.index == 0 {
            return Reply::message(
                403,
                "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
            );
        }
        Reply::json(200, pull_json(7, "open"))
    })
    .await;
    let (client, sleeper) = stub.stepped(stub.config(RetryPolicy::default()));
    check(
        "no wait yet",
        client.rate_limit_waits(),
        Vec::<String>::new(),
    );
    let pull = client.pull(&repo(), PrNumber::new(7)).await;
    check(
        "pull and waits",
        (pull, sleeper.waits()),
        (Ok(expected_pull(7)), vec![Duration::from_secs(60)]),
    );
    check(
        "told",
        client.rate_limit_waits(),
        vec![format!(
            "GitHub's secondary rate limit on `GET /repos/{{o}}/{{r}}/pulls/{{n}}` for {} (HTTP 403): waited 60 s before retry 1 of 3",
            repo()
        )],
    );
}

#[tokio::test]
async fn mutation_is_not_retried_after_502() {
    let stub = Stub::start(|_| Reply::message(502, "Bad Gateway")).await;
    let result = stub
        .client()
        .create_comment(&repo(), PrNumber::new(5), "only once")
        .await;
    check(
        "unavailable",
        result.map_err(|e| matches!(e, GitHubError::Unavailable { .. })),
        Err(true),
    );
    check("requests", stub.hits().len(), 1);
}

#[tokio::test]
async fn read_retries_after_a_timeout() {
    let stub = Stub::start(|hit| {
        let reply = Reply::json(200, json!({ "name": "main", "commit": { "sha": HEAD } }));
        if hit.index == 0 {
            return reply.after(Duration::from_secs(2));
        }
        reply
    })
    .await;
    let mut config = stub.config(RetryPolicy::fast());
    config.timeout = Duration::from_millis(300);
    let client = RestGitHub::new(config).expect("valid configuration");
    let head = client.branch_head(&repo(), "main").await;
    check("head", head, Ok(sha(HEAD)));
    check("requests", stub.hits().len(), 2);
}

#[tokio::test]
async fn mutation_is_not_retried_after_a_timeout() {
    let stub = Stub::start(|_| {
        Reply::json(201, json!({ "id": 1, "body": "x" })).after(Duration::from_secs(2))
    })
    .await;
    let mut config = stub.config(RetryPolicy::fast());
    config.timeout = Duration::from_millis(300);
    let client = RestGitHub::new(config).expect("valid configuration");
    let result = client
        .create_comment(&repo(), PrNumber::new(5), "once")
        .await;
    let timed_out = match &result {
        Err(GitHubError::Unavailable { message, .. }) => message.starts_with("timed out"),
        _ => false,
    };
    check("timed out", timed_out, true);
    check("requests", stub.hits().len(), 1);
}

#[tokio::test]
async fn mutation_is_retried_after_a_secondary_limit() {
    let stub = Stub::start(|hit| {
        if hit.index == 0 {
            return Reply::message(403, "You have exceeded a secondary rate limit")
                .with("retry-after", "0");
        }
        Reply::json(200, json!([{ "id": 1, "name": "bug", "color": "f29513" }]))
    })
    .await;
    let result = stub
        .client()
        .add_labels(&repo(), PrNumber::new(5), &["bug".to_owned()])
        .await;
    check("added", result, Ok(()));
    check("requests", stub.hits().len(), 2);
}

#[tokio::test]
async fn rate_limit_remaining_follows_the_last_answer() {
    let stub = Stub::start(|hit| {
        Reply::json(200, json!({ "name": "main", "commit": { "sha": HEAD } }))
            .with("x-ratelimit-remaining", (4000 - hit.index).to_string())
    })
    .await;
    let client = stub.client();
    check("unknown at first", client.rate_limit_remaining(), None);
    let _ = client.branch_head(&repo(), "main").await;
    let _ = client.branch_head(&repo(), "dev").await;
    check(
        "last seen",
        (client.rate_limit_remaining(), client.rate_limit_reset()),
        (Some(3999), Some(4_102_444_800)),
    );
}

// ---------------------------------------------------------------------------------------------
// Headers, configuration and secrets.

#[tokio::test]
async fn requests_carry_the_api_headers() {
    let stub = Stub::start(|_| Reply::json(200, pull_json(7, "open"))).await;
    let _ = stub.client().pull(&repo(), PrNumber::new(7)).await;
    let hit = stub.hits().first().cloned();
    let headers = hit.map(|h| {
        (
            h.header("authorization").map(str::to_owned),
            h.header("accept").map(str::to_owned),
            h.header("x-github-api-version").map(str::to_owned),
            h.header("user-agent")
                .is_some_and(|ua| ua.starts_with("mp-gate/")),
        )
    });
    check(
        "headers",
        headers,
        Some((
            Some(format!("Bearer {TOKEN}")),
            Some("application/vnd.github+json".to_owned()),
            Some("2022-11-28".to_owned()),
            true,
        )),
    );
}

#[tokio::test]
async fn no_token_in_debug_or_errors() {
    let stub = Stub::start(|_| Reply::message(500, "boom")).await;
    let client = stub.client();
    let error = client.create_comment(&repo(), PrNumber::new(1), "x").await;
    let text = format!(
        "{:?} {:?} {:?}",
        client,
        stub.config(RetryPolicy::fast()),
        error
    );
    check("token absent", text.contains(TOKEN), false);
}

#[tokio::test]
async fn bot_login_is_read_once() {
    let stub = Stub::start(|hit| match hit.path.as_str() {
        "/user" => Reply::json(200, user("mp-gate-bot", 42)),
        _ => Reply::message(404, "Not Found"),
    })
    .await;
    let client = stub.client();
    let first = client.bot_login().await;
    let second = client.bot_login().await;
    check(
        "logins",
        (first, second),
        (Ok(login("mp-gate-bot")), Ok(login("mp-gate-bot"))),
    );
    check("requests", stub.lines(), vec!["GET /user".to_owned()]);
}

/// GitHub does not serve `GET /user` to an installation token (Actions' `GITHUB_TOKEN`):
/// with env.yml's App slug the bot is `<slug>[bot]` without asking; without it the error
/// says what to set. A personal token still asks `GET /user`.
#[tokio::test]
async fn an_installation_token_is_the_configured_app() {
    let stub = Stub::start(|hit| match hit.path.as_str() {
        "/user" => Reply::message(403, "Resource not accessible by integration"),
        _ => Reply::message(404, "Not Found"),
    })
    .await;
    let mut config = stub.config(RetryPolicy::fast());
    config.token_app_slug = Some("github-actions".to_owned());
    let client = RestGitHub::new(config).expect("a valid configuration");
    check(
        "login",
        client.bot_login().await,
        Ok(login("github-actions[bot]")),
    );
    check("no request", stub.lines(), Vec::<String>::new());

    let error = stub.client().bot_login().await.map_err(|e| e.to_string());
    let said = error.as_ref().err().cloned().unwrap_or_default();
    check(
        "names the fix",
        said.contains("Resource not accessible by integration") && said.contains("bot_app_slug"),
        true,
    );

    let personal = Stub::start(|hit| match hit.path.as_str() {
        "/user" => Reply::json(200, user("jane-doe", 7)),
        _ => Reply::message(404, "Not Found"),
    })
    .await;
    let mut config = RestConfig::new(
        personal.base(),
        Credentials::Token(Secret::new("ghp_personal_token")),
    );
    config.token_app_slug = Some("github-actions".to_owned());
    let client = RestGitHub::new(config).expect("a valid configuration");
    check("personal", client.bot_login().await, Ok(login("jane-doe")));
    check("asked", personal.lines(), vec!["GET /user".to_owned()]);
}

#[test]
fn revert_mode_follows_the_api_host() {
    let remote = |url: &str| match RevertMode::git_for(url) {
        RevertMode::Git { remote_template } => remote_template,
        RevertMode::LoopbackExtension => String::new(),
    };
    check(
        "remotes",
        (
            remote("https://api.github.com"),
            remote("https://ghe.example.com/api/v3"),
            remote("http://ghe.local:8080/api/v3/"),
        ),
        (
            "https://github.com/{repo}.git".to_owned(),
            "https://ghe.example.com/{repo}.git".to_owned(),
            "http://ghe.local:8080/{repo}.git".to_owned(),
        ),
    );
}

#[test]
fn bad_api_url_is_refused() {
    let config = RestConfig::new("ftp://example.com", Credentials::Token(Secret::new(TOKEN)));
    check(
        "error",
        RestGitHub::new(config)
            .map(|_| ())
            .map_err(|e| e.to_string()),
        Err("invalid api url \"ftp://example.com\": expected an http or https url".to_owned()),
    );
}

#[tokio::test]
async fn ghes_paths_keep_the_api_prefix() {
    let stub =
        Stub::start(|_| Reply::json(200, json!({ "name": "main", "commit": { "sha": HEAD } })))
            .await;
    let mut config = stub.config(RetryPolicy::fast());
    config.api_url = format!("{}/api/v3/", stub.base());
    let client = RestGitHub::new(config).expect("valid configuration");
    let _ = client.branch_head(&repo(), "release/1.x").await;
    check(
        "path",
        stub.lines(),
        vec!["GET /api/v3/repos/octo-org/hello-world/branches/release/1.x".to_owned()],
    );
}

#[test]
fn a_job_names_its_check_run_by_the_last_segment_of_check_run_url() {
    use super::model::check_run_id_of;
    assert_eq!(
        check_run_id_of("https://api.github.com/repos/github/hello-world/check-runs/4"),
        Some(4)
    );
    assert_eq!(
        check_run_id_of("https://ghe.example/api/v3/repos/o/r/check-runs/399444496/"),
        Some(399_444_496)
    );
    // A URL that names no check run names nothing: the read fails rather than guess.
    assert_eq!(
        check_run_id_of("https://api.github.com/repos/o/r/check-suites/4"),
        None
    );
    assert_eq!(
        check_run_id_of("https://api.github.com/repos/o/r/check-runs/x"),
        None
    );
    assert_eq!(check_run_id_of(""), None);
}

/// The queue's Git writes: the request each sends, and GitHub's answers mapped as the port
/// documents (a 422 not-a-fast-forward is a conflict, a 422 for a missing reference or
/// object is not found, 204 is nothing merged, 409 a conflict, 404 not found).
#[tokio::test]
async fn ref_updates_and_merges_map_githubs_answers() {
    let stub = Stub::start(|hit| {
        let body = hit.json();
        match (hit.method.as_str(), hit.path.as_str()) {
            ("PATCH", "/repos/octo-org/hello-world/git/refs/heads/mp-queue/main") => {
                match body["sha"].as_str() {
                    Some(HEAD) => Reply::json(
                        200,
                        json!({ "ref": "refs/heads/mp-queue/main", "object": { "sha": HEAD } }),
                    ),
                    Some(BASE) => Reply::message(422, "Update is not a fast forward"),
                    _ => Reply::message(422, "Object does not exist"),
                }
            }
            ("PATCH", _) => Reply::message(422, "Reference does not exist"),
            ("POST", "/repos/octo-org/hello-world/merges") => match body["head"].as_str() {
                Some(HEAD) => Reply::json(201, json!({ "sha": PARENT, "commit": {} })),
                Some(BASE) => Reply::empty(204),
                Some(PARENT) => Reply::message(409, "Merge conflict"),
                _ => Reply::message(404, "Head does not exist"),
            },
            _ => Reply::message(404, "Not Found"),
        }
    })
    .await;
    let client = stub.client();
    let staging = "mp-queue/main";
    let kind = |answer: Result<(), GitHubError>| match answer {
        Ok(()) => "ok".to_owned(),
        Err(GitHubError::Conflict { message, .. }) => format!("conflict: {message}"),
        Err(GitHubError::NotFound { what }) => format!("not found: {what}"),
        Err(other) => format!("other: {other}"),
    };
    let updates = vec![
        kind(
            client
                .update_branch_ref(&repo(), staging, &sha(HEAD), false)
                .await,
        ),
        kind(
            client
                .update_branch_ref(&repo(), staging, &sha(BASE), false)
                .await,
        ),
        kind(
            client
                .update_branch_ref(&repo(), staging, &sha(PARENT), true)
                .await,
        ),
        kind(
            client
                .update_branch_ref(&repo(), "gone", &sha(HEAD), true)
                .await,
        ),
    ];
    check(
        "updates",
        updates,
        vec![
            "ok".to_owned(),
            "conflict: Update is not a fast forward".to_owned(),
            format!("not found: commit {PARENT} in octo-org/hello-world"),
            "not found: branch gone of octo-org/hello-world".to_owned(),
        ],
    );
    let merge = |head: &'static str| {
        let client = &client;
        async move {
            match client
                .merge_into_branch(&repo(), staging, &sha(head), "Merge #1")
                .await
            {
                Ok(merged) => format!("{merged:?}"),
                Err(GitHubError::Conflict { message, .. }) => format!("conflict: {message}"),
                Err(GitHubError::NotFound { .. }) => "not found".to_owned(),
                Err(other) => format!("other: {other}"),
            }
        }
    };
    let merges = vec![
        merge(HEAD).await,
        merge(BASE).await,
        merge(PARENT).await,
        merge("0000000000000000000000000000000000000000").await,
    ];
    check(
        "merges",
        merges,
        vec![
            format!("Some(CommitSha({PARENT:?}))"),
            "None".to_owned(),
            "conflict: Merge conflict".to_owned(),
            "not found".to_owned(),
        ],
    );
    let sent: Vec<Value> = stub
        .hits()
        .iter()
        .filter(|h| h.method == "POST")
        .map(Hit::json)
        .take(1)
        .collect();
    check(
        "the merge request",
        sent,
        vec![json!({ "base": staging, "head": HEAD, "commit_message": "Merge #1" })],
    );
    let first = stub.hits().first().map(Hit::json);
    check(
        "the ref update",
        first,
        Some(json!({ "sha": HEAD, "force": false })),
    );
}
