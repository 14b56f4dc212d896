//! Tests of the loopback server, through a plain HTTP client against a running server.

use std::fmt::Write as _;
use std::time::Duration;

use mp_core::ids::{PrNumber, RepoName};
use mp_core::port::{GitHub, GitHubHistory};
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

use super::{Fault, FaultRule, FaultScript, LoopbackServer, RouteCount};
use crate::memory::MemoryGitHub;
use crate::world::{World, commit_sha, parse_world};

const REPO: &str = "jane-doe/webapp";
const GOV: &str = "jane-doe/governance";

/// A world with two repositories: pull request 14 (one commit, checks, two comments, a
/// reaction), pull request 20 (260 commits, 120 comments), an unmergeable pull request 21,
/// pull request 22 whose comments cannot be read, and an issue.
fn world_text(rate_limit: Option<u32>) -> String {
    let mut text = String::from("now: 2026-03-02T09:00:00Z\nbot: jane-merge-gate\n");
    if let Some(remaining) = rate_limit {
        let _ = writeln!(text, "rate_limit: {{remaining: {remaining}}}");
    }
    text.push_str(
        r##"repos:
  - name: jane-doe/webapp
    commits:
      - {id: m1, message: "Initial commit", author: jane-doe, committer: jane-doe, date: 2026-02-01T10:00:00Z}
      - id: f1
        message: |
          Add the health endpoint

          Agent-Tool: claude-code
          Task-Ref: Issue#12
        parents: [m1]
        author: jane-doe
        committer: jane-doe
        date: 2026-03-01T18:00:00Z
      - {id: x1, message: "Conflicting change", parents: [m1], author: jane-doe}
      - {id: u1, message: "Unreadable", parents: [m1], author: jane-doe}
"##,
    );
    for i in 1..=260 {
        let parent = if i == 1 {
            "m1".to_owned()
        } else {
            format!("c{}", i - 1)
        };
        let _ = writeln!(
            text,
            "      - {{id: c{i}, message: \"Step {i}\", parents: [{parent}], author: jane-doe}}"
        );
    }
    text.push_str(
        r##"    branches: {main: m1, agent/health: f1, agent/long: c260, agent/conflict: x1, agent/unreadable: u1}
    files:
      README.md: "# webapp\n"
      src/lib.rs: "pub mod health;\n"
    pulls:
      - number: 14
        title: Add the health endpoint
        author: jane-doe
        head: agent/health
        created_at: 2026-03-01T18:05:00Z
        labels: [ready-to-merge]
        events:
          - {labeled: ready-to-merge, by: jane-doe, at: 2026-03-02T08:00:00Z}
        files:
          - {path: src/health.rs, status: added, additions: 12, content: "pub fn health() {}\n"}
          - {path: docs/new.md, status: renamed, previous_filename: docs/old.md}
        checks:
          - {name: test, app: github-actions, started_at: 2026-03-01T18:06:00Z, completed_at: 2026-03-01T18:09:00Z}
        comments:
          - {author: jane-doe, body: "first", at: 2026-03-02T08:10:00Z}
          - {author: jane-doe, body: "second", at: 2026-03-02T08:20:00Z}
        reactions: [{content: "+1", by: jane-doe, at: 2026-03-02T07:00:00Z}]
      - number: 20
        title: A long pull request
        author: jane-doe
        head: agent/long
        created_at: 2026-03-01T19:00:00Z
        comments:
"##,
    );
    for i in 1..=120 {
        let _ = writeln!(text, "          - {{author: jane-doe, body: \"note {i}\"}}");
    }
    text.push_str(
        r##"      - number: 21
        title: Conflicting
        author: jane-doe
        head: agent/conflict
        mergeable: false
      - number: 22
        title: Unreadable comments
        author: jane-doe
        head: agent/unreadable
        comments_unreadable: true
    issues:
      - number: 30
        title: Decision pending
        author: jane-doe
        labels: [decision:pending-owner]
  - name: jane-doe/governance
    commits:
      - {id: g1, message: "Doctrine", author: jane-doe, committer: jane-doe}
    branches: {main: g1, bot-state: g1}
    files:
      docs/decisions/0001-start.md: "# Start\n"
    branch_files:
      bot-state:
        bot-state/state.json: "{}\n"
"##,
    );
    text
}

fn world(rate_limit: Option<u32>) -> World {
    parse_world("test.yaml", &world_text(rate_limit), None).expect("the test world is valid")
}

fn repo(name: &str) -> RepoName {
    RepoName::parse(name).expect("valid repository name")
}

fn sha_of(name: &str, id: &str) -> String {
    commit_sha(&repo(name), id).to_string()
}

fn script(text: &str) -> FaultScript {
    text.parse().expect("the fault script is valid")
}

async fn serve(faults: &str) -> LoopbackServer {
    serve_world(world(None), faults).await
}

async fn serve_world(world: World, faults: &str) -> LoopbackServer {
    LoopbackServer::start(world, script(faults))
        .await
        .expect("the loopback server starts")
}

/// One answer, read completely.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: HeaderMap,
    text: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or(Value::Null)
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

async fn send(builder: reqwest::RequestBuilder) -> Answer {
    let response = builder
        .header("Authorization", "Bearer ghs_test")
        .send()
        .await
        .expect("the server answers");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.expect("the body is complete");
    Answer {
        status,
        headers,
        text,
    }
}

async fn get(server: &LoopbackServer, path: &str) -> Answer {
    let url = format!("{}{path}", server.base_url());
    send(reqwest::Client::new().get(url)).await
}

async fn call(server: &LoopbackServer, method: reqwest::Method, path: &str, body: Value) -> Answer {
    let url = format!("{}{path}", server.base_url());
    send(reqwest::Client::new().request(method, url).json(&body)).await
}

/// Asserts the status and, for each JSON pointer, the value found there.
#[track_caller]
fn check(answer: &Answer, status: u16, expected: &[(&str, Value)]) {
    assert_eq!(answer.status, status, "status of {answer:?}");
    let json = answer.json();
    for (pointer, value) in expected {
        assert_eq!(
            json.pointer(pointer),
            Some(value),
            "{pointer} in {}",
            answer.text
        );
    }
}

#[tokio::test]
async fn app_user_and_installation_name_the_bot_and_owner() {
    let server = serve("").await;
    check(
        &get(&server, "/app").await,
        200,
        &[
            ("/slug", json!("jane-merge-gate")),
            ("/name", json!("jane-merge-gate")),
        ],
    );
    // An installation token has no user, as on GitHub; a personal token does.
    check(
        &get(&server, "/user").await,
        403,
        &[("/message", json!("Resource not accessible by integration"))],
    );
    let url = format!("{}/user", server.base_url());
    check(
        &send_as(reqwest::Client::new().get(url), "ghp_personal").await,
        200,
        &[
            ("/login", json!("jane-merge-gate[bot]")),
            ("/type", json!("Bot")),
        ],
    );
    check(
        &get(&server, "/repos/jane-doe/webapp/installation").await,
        200,
        &[("/id", json!(1)), ("/account/login", json!("jane-doe"))],
    );
    let token = call(
        &server,
        reqwest::Method::POST,
        "/app/installations/1/access_tokens",
        json!({}),
    )
    .await;
    check(
        &token,
        201,
        &[
            ("/token", json!("ghs_loopback_1")),
            ("/expires_at", json!("2026-03-02T10:00:00Z")),
        ],
    );
    let again = call(
        &server,
        reqwest::Method::POST,
        "/app/installations/1/access_tokens",
        json!({}),
    )
    .await;
    check(&again, 201, &[("/token", json!("ghs_loopback_2"))]);
    server.shutdown().await;
}

#[tokio::test]
async fn pull_requests_have_github_shapes() {
    let server = serve("").await;
    let f1 = sha_of(REPO, "f1");
    let m1 = sha_of(REPO, "m1");
    let single = get(&server, "/repos/jane-doe/webapp/pulls/14").await;
    check(
        &single,
        200,
        &[
            ("/number", json!(14)),
            ("/state", json!("open")),
            ("/title", json!("Add the health endpoint")),
            ("/body", Value::Null),
            ("/user/login", json!("jane-doe")),
            ("/labels/0/name", json!("ready-to-merge")),
            ("/head/ref", json!("agent/health")),
            ("/head/sha", json!(f1)),
            ("/base/ref", json!("main")),
            ("/base/sha", json!(m1)),
            ("/created_at", json!("2026-03-01T18:05:00Z")),
            ("/merged", json!(false)),
            ("/merged_at", Value::Null),
            ("/mergeable", json!(true)),
            ("/merged_by", Value::Null),
            ("/commits", json!(1)),
            ("/merge_commit_sha", Value::Null),
        ],
    );
    let list = get(
        &server,
        "/repos/jane-doe/webapp/pulls?state=open&sort=created&direction=asc&per_page=100",
    )
    .await;
    check(
        &list,
        200,
        &[
            ("/0/number", json!(14)),
            ("/1/number", json!(20)),
            ("/3/number", json!(22)),
        ],
    );
    let first = list.json().pointer("/0").cloned().unwrap_or(Value::Null);
    assert!(
        first.get("merged").is_none(),
        "list items have no `merged`: {first}"
    );
    assert!(
        first.get("merged_by").is_none(),
        "list items have no `merged_by`: {first}"
    );
    check(
        &get(&server, "/repos/jane-doe/webapp/pulls/99").await,
        404,
        &[("/message", json!("Not Found"))],
    );
    server.shutdown().await;
}

#[tokio::test]
async fn commits_carry_full_messages_and_parents() {
    let server = serve("").await;
    let f1 = sha_of(REPO, "f1");
    let m1 = sha_of(REPO, "m1");
    let message = "Add the health endpoint\n\nAgent-Tool: claude-code\nTask-Ref: Issue#12\n";
    let expected = [
        ("/0/sha", json!(f1)),
        ("/0/commit/message", json!(message)),
        ("/0/commit/committer/date", json!("2026-03-01T18:00:00Z")),
        ("/0/author/login", json!("jane-doe")),
        ("/0/parents/0/sha", json!(m1)),
    ];
    check(
        &get(
            &server,
            "/repos/jane-doe/webapp/pulls/14/commits?per_page=100",
        )
        .await,
        200,
        &expected,
    );
    let single = get(&server, &format!("/repos/jane-doe/webapp/commits/{f1}")).await;
    check(
        &single,
        200,
        &[("/sha", json!(f1)), ("/commit/message", json!(message))],
    );
    let history = get(
        &server,
        "/repos/jane-doe/webapp/commits?sha=agent/health&per_page=100",
    )
    .await;
    check(
        &history,
        200,
        &[("/0/sha", json!(f1)), ("/1/sha", json!(m1))],
    );
    check(
        &get(&server, "/repos/jane-doe/webapp/commits?sha=nope").await,
        404,
        &[],
    );
    server.shutdown().await;
}

#[tokio::test]
async fn files_checks_timeline_comments_reactions_have_github_shapes() {
    let server = serve("").await;
    let f1 = sha_of(REPO, "f1");
    check(
        &get(
            &server,
            "/repos/jane-doe/webapp/pulls/14/files?per_page=100",
        )
        .await,
        200,
        &[
            ("/0/filename", json!("src/health.rs")),
            ("/0/status", json!("added")),
            ("/0/additions", json!(12)),
            ("/0/changes", json!(12)),
            ("/1/status", json!("renamed")),
            ("/1/previous_filename", json!("docs/old.md")),
        ],
    );
    check(
        &get(
            &server,
            &format!("/repos/jane-doe/webapp/commits/{f1}/check-runs?filter=all&per_page=100"),
        )
        .await,
        200,
        &[
            ("/total_count", json!(1)),
            ("/check_runs/0/name", json!("test")),
            ("/check_runs/0/head_sha", json!(f1)),
            ("/check_runs/0/status", json!("completed")),
            ("/check_runs/0/conclusion", json!("success")),
            ("/check_runs/0/app/slug", json!("github-actions")),
            ("/check_runs/0/completed_at", json!("2026-03-01T18:09:00Z")),
        ],
    );
    check(
        &get(
            &server,
            "/repos/jane-doe/webapp/issues/14/timeline?per_page=100",
        )
        .await,
        200,
        &[
            ("/0/event", json!("labeled")),
            ("/0/actor/login", json!("jane-doe")),
            ("/0/label/name", json!("ready-to-merge")),
            ("/0/created_at", json!("2026-03-02T08:00:00Z")),
        ],
    );
    check(
        &get(
            &server,
            "/repos/jane-doe/webapp/issues/14/comments?per_page=100",
        )
        .await,
        200,
        &[
            ("/0/id", json!(1)),
            ("/0/body", json!("first")),
            ("/0/user/login", json!("jane-doe")),
            ("/1/created_at", json!("2026-03-02T08:20:00Z")),
        ],
    );
    check(
        &get(
            &server,
            "/repos/jane-doe/webapp/issues/14/reactions?per_page=100",
        )
        .await,
        200,
        &[
            ("/0/content", json!("+1")),
            ("/0/user/login", json!("jane-doe")),
        ],
    );
    server.shutdown().await;
}

#[tokio::test]
async fn branches_issues_contents_and_trees_have_github_shapes() {
    let server = serve("").await;
    let m1 = sha_of(REPO, "m1");
    check(
        &get(&server, "/repos/jane-doe/webapp/branches/agent/health").await,
        200,
        &[
            ("/name", json!("agent/health")),
            ("/commit/sha", json!(sha_of(REPO, "f1"))),
        ],
    );
    check(
        &get(&server, "/repos/jane-doe/webapp/branches/gone").await,
        404,
        &[("/message", json!("Branch not found"))],
    );
    let issues = get(
        &server,
        "/repos/jane-doe/webapp/issues?state=open&labels=decision:pending-owner&per_page=100",
    )
    .await;
    check(
        &issues,
        200,
        &[("/0/number", json!(30)), ("/0/state", json!("open"))],
    );
    assert_eq!(
        issues.json().as_array().map(Vec::len),
        Some(1),
        "{}",
        issues.text
    );
    let all = get(
        &server,
        "/repos/jane-doe/webapp/issues?state=all&per_page=100",
    )
    .await;
    let pulls = all.json().as_array().map_or(0, |items| {
        items
            .iter()
            .filter(|i| i.get("pull_request").is_some())
            .count()
    });
    assert_eq!(pulls, 4, "{}", all.text);
    // "# webapp\n" in base64, wrapped with a final newline.
    check(
        &get(
            &server,
            "/repos/jane-doe/webapp/contents/README.md?ref=main",
        )
        .await,
        200,
        &[
            ("/type", json!("file")),
            ("/encoding", json!("base64")),
            ("/content", json!("IyB3ZWJhcHAK\n")),
            (
                "/sha",
                json!(mp_core::branch::drift::blob_sha(b"# webapp\n")),
            ),
            ("/path", json!("README.md")),
        ],
    );
    check(
        &get(&server, "/repos/jane-doe/webapp/contents/missing.md").await,
        404,
        &[],
    );
    let tree = get(&server, "/repos/jane-doe/webapp/git/trees/main?recursive=1").await;
    check(
        &tree,
        200,
        &[
            ("/sha", json!(m1)),
            ("/truncated", json!(false)),
            ("/tree/0/path", json!("README.md")),
            ("/tree/0/type", json!("blob")),
            ("/tree/1/path", json!("src")),
            ("/tree/1/type", json!("tree")),
            ("/tree/2/path", json!("src/lib.rs")),
        ],
    );
    server.shutdown().await;
}

#[tokio::test]
async fn installations_refs_and_directories_have_github_shapes() {
    let server = serve("").await;
    let installations = get(&server, "/app/installations").await;
    check(
        &installations,
        200,
        &[
            ("/0/id", json!(1)),
            ("/0/account/login", json!("jane-doe")),
            ("/0/app_slug", json!("jane-merge-gate")),
        ],
    );
    assert_eq!(
        installations.json().as_array().map(Vec::len),
        Some(1),
        "one installation per owner: {}",
        installations.text
    );
    // A reference is named without `refs/`, and may hold slashes.
    check(
        &get(&server, "/repos/jane-doe/webapp/git/ref/heads/agent/health").await,
        200,
        &[
            ("/ref", json!("refs/heads/agent/health")),
            ("/object/type", json!("commit")),
            ("/object/sha", json!(sha_of(REPO, "f1"))),
        ],
    );
    for missing in ["heads/gone", "tags/v1", "refs/heads/main", "heads/"] {
        check(
            &get(
                &server,
                &format!("/repos/jane-doe/webapp/git/ref/{missing}"),
            )
            .await,
            404,
            &[("/message", json!("Not Found"))],
        );
    }
    // A directory (the root too) is the array of its entries in git's order.
    let root = get(&server, "/repos/jane-doe/webapp/contents/").await;
    check(
        &root,
        200,
        &[
            ("/0/type", json!("file")),
            ("/0/name", json!("README.md")),
            ("/0/size", json!(9)),
            ("/1/type", json!("dir")),
            ("/1/path", json!("src")),
            ("/1/size", json!(0)),
            ("/1/download_url", Value::Null),
        ],
    );
    assert_eq!(
        root.json().as_array().map(Vec::len),
        Some(2),
        "{}",
        root.text
    );
    let tree = get(&server, "/repos/jane-doe/webapp/git/trees/main").await;
    assert_eq!(
        tree.json().pointer("/tree/1/sha"),
        root.json().pointer("/1/sha"),
        "a directory's SHA is its tree's"
    );
    check(
        &get(&server, "/repos/jane-doe/webapp/contents").await,
        200,
        &[("/1/name", json!("src"))],
    );
    check(
        &get(&server, "/repos/jane-doe/webapp/contents/src/?ref=main").await,
        200,
        &[
            ("/0/type", json!("file")),
            ("/0/path", json!("src/lib.rs")),
            (
                "/0/sha",
                json!(mp_core::branch::drift::blob_sha(b"pub mod health;\n")),
            ),
        ],
    );
    check(
        &get(
            &server,
            "/repos/jane-doe/governance/contents/bot-state?ref=bot-state",
        )
        .await,
        200,
        &[("/0/path", json!("bot-state/state.json"))],
    );
    check(
        &get(&server, "/repos/jane-doe/webapp/contents/sr").await,
        404,
        &[],
    );
    server.shutdown().await;
}

#[tokio::test]
async fn check_runs_list_the_latest_run_of_each_name_and_app_unless_all() {
    let server = serve("").await;
    let head = sha_of(REPO, "f1");
    let minted = call(
        &server,
        reqwest::Method::POST,
        "/_loopback/apps/ci-app/token",
        json!({}),
    )
    .await;
    let ci = minted.json()["token"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    // After github-actions' `test` (success): ci-app's `test` fails, is re-run and passes;
    // ci-app's `lint` runs.
    for run in [
        json!({"name": "test", "head_sha": head, "conclusion": "failure"}),
        json!({"name": "test", "head_sha": head, "conclusion": "success"}),
        json!({"name": "lint", "head_sha": head, "status": "in_progress"}),
    ] {
        let created = call_as(
            &server,
            &ci,
            reqwest::Method::POST,
            "/repos/jane-doe/webapp/check-runs",
            run,
        )
        .await;
        assert_eq!(created.status, 201, "{created:?}");
    }
    let listing = |query: &str| format!("/repos/jane-doe/webapp/commits/{head}/check-runs{query}");
    let latest = get(&server, &listing("")).await;
    check(
        &latest,
        200,
        &[
            ("/total_count", json!(3)),
            ("/check_runs/0/app/slug", json!("github-actions")),
            ("/check_runs/1/app/slug", json!("ci-app")),
            ("/check_runs/1/conclusion", json!("success")),
            ("/check_runs/2/name", json!("lint")),
        ],
    );
    let ci_app = latest.json()["check_runs"][1]["app"]["id"].clone();
    check(
        &get(&server, &listing("?filter=latest")).await,
        200,
        &[("/total_count", json!(3))],
    );
    check(
        &get(&server, &listing("?filter=all")).await,
        200,
        &[
            ("/total_count", json!(4)),
            ("/check_runs/1/conclusion", json!("failure")),
            ("/check_runs/2/conclusion", json!("success")),
        ],
    );
    check(
        &get(&server, &listing("?filter=all&check_name=test")).await,
        200,
        &[("/total_count", json!(3))],
    );
    check(
        &get(&server, &listing("?status=in_progress")).await,
        200,
        &[
            ("/total_count", json!(1)),
            ("/check_runs/0/name", json!("lint")),
        ],
    );
    check(
        &get(&server, &listing(&format!("?filter=all&app_id={ci_app}"))).await,
        200,
        &[("/total_count", json!(3))],
    );
    // Each App's runs sit in that App's suite.
    let all = get(&server, &listing("?filter=all")).await.json();
    let suite = |index: usize| all["check_runs"][index]["check_suite"]["id"].clone();
    assert_ne!(suite(0), suite(1));
    assert_eq!(suite(1), suite(3));
    server.shutdown().await;
}

#[tokio::test]
async fn long_listings_are_paged_with_link_headers() {
    let server = serve("").await;
    let base = server.base_url();
    let first = get(
        &server,
        "/repos/jane-doe/webapp/issues/20/comments?per_page=100",
    )
    .await;
    check(
        &first,
        200,
        &[
            ("/0/body", json!("note 1")),
            ("/99/body", json!("note 100")),
        ],
    );
    let path = "/repos/jane-doe/webapp/issues/20/comments";
    assert_eq!(
        first.header("link"),
        Some(
            format!(
                "<{base}{path}?per_page=100&page=2>; rel=\"next\", <{base}{path}?per_page=100&page=2>; rel=\"last\""
            )
            .as_str()
        )
    );
    let second = get(&server, &format!("{path}?per_page=100&page=2")).await;
    check(&second, 200, &[("/0/body", json!("note 101"))]);
    assert_eq!(second.json().as_array().map(Vec::len), Some(20));
    let link = second.header("link").unwrap_or_default();
    assert!(
        link.contains("rel=\"prev\"") && link.contains("rel=\"first\""),
        "{link}"
    );
    assert!(!link.contains("rel=\"next\""), "{link}");
    // The default page size is 30.
    let default = get(&server, path).await;
    assert_eq!(default.json().as_array().map(Vec::len), Some(30));
    assert!(
        default
            .header("link")
            .unwrap_or_default()
            .contains("page=4>; rel=\"last\"")
    );
    // One page: no Link header.
    let single = get(
        &server,
        "/repos/jane-doe/webapp/issues/14/comments?per_page=100",
    )
    .await;
    assert_eq!(single.header("link"), None);
    server.shutdown().await;
}

#[tokio::test]
async fn pull_commits_stop_at_250() {
    let server = serve("").await;
    let mut seen = Vec::new();
    let mut url = format!(
        "{}/repos/jane-doe/webapp/pulls/20/commits?per_page=100",
        server.base_url()
    );
    loop {
        let answer = send(reqwest::Client::new().get(&url)).await;
        assert_eq!(answer.status, 200, "{}", answer.text);
        let items = answer.json().as_array().cloned().unwrap_or_default();
        seen.extend(
            items
                .iter()
                .filter_map(|c| c["sha"].as_str().map(str::to_owned)),
        );
        let next = answer.header("link").and_then(|link| {
            link.split(", ")
                .find(|part| part.ends_with("rel=\"next\""))
                .and_then(|part| part.split_once('>'))
                .map(|(url, _)| url.trim_start_matches('<').to_owned())
        });
        match next {
            Some(next) => url = next,
            None => break,
        }
    }
    assert_eq!(seen.len(), 250);
    assert_eq!(seen.first(), Some(&sha_of(REPO, "c1")));
    assert_eq!(seen.last(), Some(&sha_of(REPO, "c250")));
    server.shutdown().await;
}

#[tokio::test]
async fn a_matching_etag_answers_304_without_spending() {
    let server = serve("").await;
    let path = "/repos/jane-doe/webapp/pulls/14";
    let first = get(&server, path).await;
    let etag = first.header("etag").unwrap_or_default().to_owned();
    assert!(etag.starts_with("W/\"") && etag.len() == 44, "{etag}");
    let remaining = server.rate_limit_remaining();
    let url = format!("{}{path}", server.base_url());
    let second = send(
        reqwest::Client::new()
            .get(&url)
            .header("If-None-Match", &etag),
    )
    .await;
    assert_eq!(second.status, 304);
    assert_eq!(second.text, "");
    assert_eq!(second.header("etag"), Some(etag.as_str()));
    assert_eq!(
        second.header("x-ratelimit-remaining"),
        Some(remaining.to_string().as_str())
    );
    assert_eq!(server.rate_limit_remaining(), remaining);
    let stale = send(
        reqwest::Client::new()
            .get(&url)
            .header("If-None-Match", "W/\"0000\""),
    )
    .await;
    assert_eq!(stale.status, 200);
    assert_eq!(server.rate_limit_remaining(), remaining - 1);
    assert_eq!(
        server.requests().get("GET /repos/{o}/{r}/pulls/{n}"),
        Some(&RouteCount {
            requests: 3,
            not_modified: 1
        })
    );
    server.shutdown().await;
}

#[tokio::test]
async fn the_primary_limit_is_counted_and_exhausted() {
    let server = serve_world(world(Some(2)), "").await;
    let path = "/repos/jane-doe/webapp/pulls/14";
    let first = get(&server, path).await;
    assert_eq!(first.header("x-ratelimit-limit"), Some("5000"));
    assert_eq!(first.header("x-ratelimit-remaining"), Some("1"));
    assert_eq!(first.header("x-ratelimit-used"), Some("4999"));
    assert_eq!(first.header("x-ratelimit-resource"), Some("core"));
    let reset = (mp_core::ids::Timestamp::parse("2026-03-02T10:00:00Z").expect("valid time"))
        .unix_seconds();
    assert_eq!(
        first.header("x-ratelimit-reset"),
        Some(reset.to_string().as_str())
    );
    // GET /app uses the App's own budget.
    check(&get(&server, "/app").await, 200, &[]);
    check(&get(&server, path).await, 200, &[]);
    let refused = get(&server, path).await;
    assert_eq!(refused.status, 403);
    assert_eq!(refused.header("x-ratelimit-remaining"), Some("0"));
    assert!(
        refused.json()["message"]
            .as_str()
            .unwrap_or("")
            .starts_with("API rate limit exceeded")
    );
    // A refused write changes nothing.
    let comment = call(
        &server,
        reqwest::Method::POST,
        "/repos/jane-doe/webapp/issues/14/comments",
        json!({"body": "x"}),
    )
    .await;
    assert_eq!(comment.status, 403);
    assert_eq!(server.memory().actions(), Vec::new());
    // The world's own limit was moved to the server: the port reports none.
    assert_eq!(GitHub::rate_limit_remaining(server.memory()), None);
    server.shutdown().await;
}

/// A path naming a repository the world does not have is GitHub's 404 `Not Found`, before
/// the body, the query or the path's other parameters are read (decisions/0051); a
/// repository the world has still gets the route's own refusal.
#[tokio::test]
async fn an_unknown_repository_is_not_found_before_anything_else() {
    let server = serve("").await;
    let not_found = [("/message", json!("Not Found"))];
    let unknown = [
        get(&server, "/repos/jane-doe/nothing/activity").await,
        get(&server, "/repos/jane-doe/nothing/branches/main").await,
        get(&server, "/repos/jane-doe/nothing/pulls/notanumber").await,
        get(&server, "/repos/not%20a%20name/webapp/pulls").await,
        call(
            &server,
            reqwest::Method::POST,
            "/repos/jane-doe/nothing/labels",
            json!({}),
        )
        .await,
        call(
            &server,
            reqwest::Method::POST,
            "/repos/jane-doe/nothing/issues/1/comments",
            json!({}),
        )
        .await,
    ];
    for answer in &unknown {
        check(answer, 404, &not_found);
    }
    // A known repository's activity without `ref` is the whole repository's log, as on
    // GitHub (`ref` is optional in its published description).
    check(
        &get(&server, &format!("/repos/{REPO}/activity")).await,
        200,
        &[],
    );
    check(
        &get(&server, &format!("/repos/{REPO}/branches/nothing")).await,
        404,
        &[("/message", json!("Branch not found"))],
    );
    check(
        &call(
            &server,
            reqwest::Method::POST,
            &format!("/repos/{REPO}/labels"),
            json!({}),
        )
        .await,
        422,
        &[],
    );
    server.shutdown().await;
}

#[tokio::test]
async fn requests_without_authorization_get_401() {
    let server = serve("").await;
    let url = format!("{}/repos/jane-doe/webapp/pulls", server.base_url());
    let response = reqwest::Client::new()
        .get(&url)
        .send()
        .await
        .expect("the server answers");
    assert_eq!(response.status().as_u16(), 401);
    let with_basic = reqwest::Client::new()
        .get(&url)
        .header("Authorization", "Basic abc")
        .send()
        .await
        .expect("the server answers");
    assert_eq!(with_basic.status().as_u16(), 401);
    assert!(server.saw_unauthenticated());
    assert_eq!(server.unauthenticated_requests(), 2);
    assert_eq!(server.total_requests(), 2);
    assert_eq!(server.memory().total_calls(), 0, "no handler ran");
    let authorized = serve("").await;
    check(
        &get(&authorized, "/repos/jane-doe/webapp/pulls").await,
        200,
        &[],
    );
    assert!(!authorized.saw_unauthenticated());
    server.shutdown().await;
    authorized.shutdown().await;
}

#[tokio::test]
async fn unreadable_comments_answer_502_every_time() {
    let server = serve("").await;
    for _ in 0..2 {
        check(
            &get(
                &server,
                "/repos/jane-doe/webapp/issues/22/comments?per_page=100",
            )
            .await,
            502,
            &[],
        );
    }
    server.shutdown().await;
}

/// The mutations a tick might make, once through the server and once on the port directly,
/// leave the same action log.
#[tokio::test]
async fn mutations_through_the_server_log_what_the_port_logs() {
    let server = serve("").await;
    let post = reqwest::Method::POST;
    let f1 = sha_of(REPO, "f1");
    check(
        &call(
            &server,
            post.clone(),
            "/repos/jane-doe/webapp/issues/14/comments",
            json!({"body": "hello"}),
        )
        .await,
        201,
        &[
            ("/id", json!(123)),
            ("/body", json!("hello")),
            ("/user/login", json!("jane-merge-gate[bot]")),
        ],
    );
    check(
        &call(
            &server,
            reqwest::Method::PATCH,
            "/repos/jane-doe/webapp/issues/comments/123",
            json!({"body": "edited"}),
        )
        .await,
        200,
        &[("/body", json!("edited"))],
    );
    check(
        &call(
            &server,
            post.clone(),
            "/repos/jane-doe/webapp/issues/14/labels",
            json!({"labels": ["merged-by-gate"]}),
        )
        .await,
        200,
        &[("/1/name", json!("merged-by-gate"))],
    );
    check(
        &call(
            &server,
            reqwest::Method::DELETE,
            "/repos/jane-doe/webapp/issues/14/labels/ready-to-merge",
            json!(null),
        )
        .await,
        200,
        &[("/0/name", json!("merged-by-gate"))],
    );
    check(
        &call(
            &server,
            reqwest::Method::DELETE,
            "/repos/jane-doe/webapp/issues/14/labels/ready-to-merge",
            json!(null),
        )
        .await,
        404,
        &[],
    );
    check(
        &call(
            &server,
            reqwest::Method::PUT,
            "/repos/jane-doe/webapp/pulls/14/merge",
            json!({"sha": sha_of(REPO, "m1"), "merge_method": "squash"}),
        )
        .await,
        409,
        &[],
    );
    check(
        &call(
            &server,
            reqwest::Method::PUT,
            "/repos/jane-doe/webapp/pulls/21/merge",
            json!({"sha": sha_of(REPO, "x1"), "merge_method": "squash"}),
        )
        .await,
        405,
        &[("/message", json!("pull request is not mergeable"))],
    );
    let merged = call(&server, reqwest::Method::PUT, "/repos/jane-doe/webapp/pulls/14/merge", json!({"sha": f1, "merge_method": "squash", "commit_message": "Agent-Tool: claude-code\nTask-Ref: Issue#12"})).await;
    check(&merged, 200, &[("/merged", json!(true))]);
    check(
        &call(
            &server,
            post.clone(),
            "/repos/jane-doe/webapp/issues",
            json!({"title": "Incident", "body": "b", "labels": ["incident"]}),
        )
        .await,
        201,
        &[
            ("/number", json!(31)),
            ("/labels/0/name", json!("incident")),
        ],
    );
    check(
        &call(
            &server,
            reqwest::Method::PATCH,
            "/repos/jane-doe/webapp/issues/31",
            json!({"state": "closed"}),
        )
        .await,
        200,
        &[("/state", json!("closed"))],
    );
    check(
        &call(
            &server,
            post.clone(),
            "/repos/jane-doe/webapp/git/refs",
            json!({"ref": "refs/heads/fix", "sha": sha_of(REPO, "m1")}),
        )
        .await,
        201,
        &[("/ref", json!("refs/heads/fix"))],
    );
    check(
        &call(
            &server,
            post.clone(),
            "/repos/jane-doe/webapp/git/refs",
            json!({"ref": "refs/heads/fix", "sha": sha_of(REPO, "m1")}),
        )
        .await,
        422,
        &[("/message", json!("Reference already exists"))],
    );
    check(
        &call(
            &server,
            post.clone(),
            "/repos/jane-doe/webapp/_loopback/revert",
            json!({"sha": merged.json()["sha"], "branch": "revert-14", "message": "Revert"}),
        )
        .await,
        201,
        &[],
    );
    let pulls = get(
        &server,
        &format!(
            "/repos/jane-doe/webapp/commits/{}/pulls",
            merged.json()["sha"].as_str().unwrap_or("")
        ),
    )
    .await;
    check(
        &pulls,
        200,
        &[("/0/number", json!(14)), ("/0/state", json!("closed"))],
    );
    check(
        &get(&server, "/repos/jane-doe/webapp/pulls/14").await,
        200,
        &[
            ("/merged", json!(true)),
            ("/merged_by/login", json!("jane-merge-gate[bot]")),
        ],
    );

    let direct = MemoryGitHub::new(world(None));
    let (app, n14) = (repo(REPO), PrNumber::new(14));
    direct
        .create_comment(&app, n14, "hello")
        .await
        .expect("comment");
    direct
        .update_comment(&app, mp_core::context::CommentId::new(123), "edited")
        .await
        .expect("edit");
    direct
        .add_labels(&app, n14, &["merged-by-gate".to_owned()])
        .await
        .expect("labels");
    direct
        .remove_label(&app, n14, "ready-to-merge")
        .await
        .expect("label");
    let request = mp_core::port::MergeRequest {
        head_sha: mp_core::ids::CommitSha::parse(&f1).expect("sha"),
        method: mp_core::port::MergeMethod::Squash,
        commit_message: Some("Agent-Tool: claude-code\nTask-Ref: Issue#12".to_owned()),
    };
    let merge = direct.merge_pull(&app, n14, &request).await.expect("merge");
    let issue = mp_core::port::NewIssue {
        title: "Incident".to_owned(),
        body: "b".to_owned(),
        labels: vec!["incident".to_owned()],
    };
    direct.create_issue(&app, &issue).await.expect("issue");
    direct
        .close_issue(&app, PrNumber::new(31))
        .await
        .expect("close");
    direct
        .create_branch(&app, "fix", &commit_sha(&app, "m1"))
        .await
        .expect("branch");
    direct
        .push_revert(&app, &merge, "revert-14", "Revert")
        .await
        .expect("revert");
    assert_eq!(server.memory().actions(), direct.actions());
    server.shutdown().await;
}

#[tokio::test]
async fn file_writes_answer_201_200_409_and_422() {
    let server = serve("").await;
    let path = "/repos/jane-doe/governance/contents/bot-state/new.json";
    let put = |body: Value| call(&server, reqwest::Method::PUT, path, body);
    // "{}\n" and "[]\n" in base64.
    let created = put(json!({"message": "m", "content": "e30K", "branch": "bot-state"})).await;
    let blob = mp_core::branch::drift::blob_sha(b"{}\n");
    check(
        &created,
        201,
        &[
            ("/content/sha", json!(blob)),
            ("/content/path", json!("bot-state/new.json")),
        ],
    );
    check(
        &put(json!({"message": "m", "content": "W10K", "branch": "bot-state"})).await,
        422,
        &[],
    );
    check(
        &put(json!({"message": "m", "content": "W10K", "sha": "0000000", "branch": "bot-state"}))
            .await,
        409,
        &[],
    );
    let updated =
        put(json!({"message": "m", "content": "W10K", "sha": blob, "branch": "bot-state"})).await;
    check(
        &updated,
        200,
        &[(
            "/content/sha",
            json!(mp_core::branch::drift::blob_sha(b"[]\n")),
        )],
    );
    let head = server.memory().read(|w| {
        w.repo(&repo(GOV))
            .and_then(|r| r.branch_head("bot-state"))
            .map(ToString::to_string)
    });
    assert_eq!(updated.json()["commit"]["sha"].as_str(), head.as_deref());
    let read = get(&server, &format!("{path}?ref=bot-state")).await;
    check(&read, 200, &[("/content", json!("W10K\n"))]);
    assert_eq!(server.memory().actions().len(), 2);
    server.shutdown().await;
}

#[tokio::test]
async fn update_branch_answers_202_or_422() {
    let server = serve("").await;
    let path = "/repos/jane-doe/webapp/pulls/14/update-branch";
    let update = |sha: String| {
        call(
            &server,
            reqwest::Method::PUT,
            path,
            json!({"expected_head_sha": sha}),
        )
    };
    check(
        &update(sha_of(REPO, "m1")).await,
        422,
        &[(
            "/message",
            json!("expected head sha didn't match current head ref"),
        )],
    );
    check(
        &update(sha_of(REPO, "f1")).await,
        422,
        &[("/message", json!("already up to date"))],
    );
    server.shutdown().await;
}

// ---- faults ------------------------------------------------------------------------------

#[tokio::test]
async fn status_faults_answer_before_the_handler_once() {
    let server = serve("POST /repos/{o}/{r}/issues/{n}/comments #1 status 500").await;
    let path = "/repos/jane-doe/webapp/issues/14/comments";
    check(
        &call(&server, reqwest::Method::POST, path, json!({"body": "a"})).await,
        500,
        &[],
    );
    assert_eq!(server.memory().actions(), Vec::new(), "nothing applied");
    check(
        &call(&server, reqwest::Method::POST, path, json!({"body": "b"})).await,
        201,
        &[],
    );
    assert_eq!(
        server.fired_faults(),
        vec!["POST /repos/{o}/{r}/issues/{n}/comments #1 status 500"]
    );
    server.shutdown().await;
}

#[tokio::test]
async fn secondary_limits_carry_retry_after() {
    let server = serve(
        "GET /repos/{o}/{r}/pulls/{n} #2 secondary-403 retry-after 7\n* #* 429 retry-after 3",
    )
    .await;
    let path = "/repos/jane-doe/webapp/pulls/14";
    // The `*` rule matches every request, the first rule only its second one.
    let first = get(&server, path).await;
    assert_eq!(
        (first.status, first.header("retry-after")),
        (429, Some("3"))
    );
    let second = get(&server, path).await;
    assert_eq!(
        (second.status, second.header("retry-after")),
        (403, Some("7"))
    );
    assert_ne!(second.header("x-ratelimit-remaining"), Some("0"));
    server.shutdown().await;
}

#[tokio::test]
async fn delay_waits_before_answering_on_the_servers_clock() {
    let clock = std::sync::Arc::new(mp_github::rest::VirtualClock::new());
    let server = LoopbackServer::start_on(world(None), script("* #1 delay 300"), clock.clone())
        .await
        .expect("the loopback server starts");
    check(&get(&server, "/app").await, 200, &[]);
    assert_eq!(
        clock.elapsed(),
        Duration::from_millis(300),
        "the delay was waited"
    );
    check(&get(&server, "/app").await, 200, &[]);
    assert_eq!(clock.elapsed(), Duration::from_millis(300), "only once");
    server.shutdown().await;
}

#[tokio::test]
async fn truncate_breaks_the_body() {
    let server = serve("GET /repos/{o}/{r}/pulls/{n} #1 truncate").await;
    let url = format!("{}/repos/jane-doe/webapp/pulls/14", server.base_url());
    let response = reqwest::Client::new()
        .get(&url)
        .header("Authorization", "token t")
        .send()
        .await
        .expect("the head arrives");
    assert_eq!(response.status().as_u16(), 200);
    assert!(response.bytes().await.is_err(), "the body must end early");
    server.shutdown().await;
}

#[tokio::test]
async fn malformed_replaces_the_body_with_non_json() {
    let server = serve("GET /repos/{o}/{r}/pulls/{n} #1 malformed").await;
    let answer = get(&server, "/repos/jane-doe/webapp/pulls/14").await;
    assert_eq!(answer.status, 200);
    assert!(
        serde_json::from_str::<Value>(&answer.text).is_err(),
        "{}",
        answer.text
    );
    server.shutdown().await;
}

#[tokio::test]
async fn drop_closes_the_connection_after_applying_the_write() {
    let server = serve("POST /repos/{o}/{r}/issues/{n}/comments #1 drop").await;
    let url = format!(
        "{}/repos/jane-doe/webapp/issues/14/comments",
        server.base_url()
    );
    let sent = reqwest::Client::new()
        .post(&url)
        .header("Authorization", "Bearer t")
        .json(&json!({"body": "lost answer"}))
        .send()
        .await;
    assert!(sent.is_err(), "a transport error, not {sent:?}");
    assert_eq!(server.memory().actions().len(), 1, "the comment was posted");
    check(
        &call(
            &server,
            reqwest::Method::POST,
            "/repos/jane-doe/webapp/issues/14/comments",
            json!({"body": "x"}),
        )
        .await,
        201,
        &[],
    );
    server.shutdown().await;
}

#[tokio::test]
async fn exhaust_spends_the_primary_limit() {
    let server = serve("GET /repos/{o}/{r}/pulls #1 exhaust").await;
    let answer = get(&server, "/repos/jane-doe/webapp/pulls").await;
    assert_eq!(answer.status, 403);
    assert_eq!(answer.header("x-ratelimit-remaining"), Some("0"));
    assert_eq!(server.rate_limit_remaining(), 0);
    assert_eq!(
        get(&server, "/repos/jane-doe/webapp/pulls/14").await.status,
        403
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_drop_also_cuts_a_304() {
    let server = serve("").await;
    let path = "/repos/jane-doe/webapp/pulls/14";
    let etag = get(&server, path)
        .await
        .header("etag")
        .unwrap_or_default()
        .to_owned();
    server.set_faults(script("GET /repos/{o}/{r}/pulls/{n} #1 drop"));
    let url = format!("{}{path}", server.base_url());
    let sent = reqwest::Client::new()
        .get(&url)
        .header("Authorization", "Bearer t")
        .header("If-None-Match", &etag)
        .send()
        .await;
    assert!(sent.is_err(), "a transport error, not {sent:?}");
    let again = send(
        reqwest::Client::new()
            .get(&url)
            .header("If-None-Match", &etag),
    )
    .await;
    assert_eq!(again.status, 304);
    server.shutdown().await;
}

#[tokio::test]
async fn set_faults_replaces_the_rules() {
    let server = serve("* #* status 503").await;
    assert_eq!(get(&server, "/app").await.status, 503);
    server.set_faults(FaultScript::none());
    assert_eq!(get(&server, "/app").await.status, 200);
    assert_eq!(server.fired_faults(), vec!["* #* status 503"]);
    server.shutdown().await;
}

// ---- fault scripts -----------------------------------------------------------------------

#[track_caller]
fn check_script(text: &str, expected: Result<Vec<FaultRule>, &str>) {
    let parsed: Result<FaultScript, _> = text.parse();
    match (parsed, expected) {
        (Ok(script), Ok(rules)) => {
            assert_eq!(script.rules, rules);
            let again: FaultScript = script.to_string().parse().expect("the display parses");
            assert_eq!(again, script, "round trip of {script}");
        }
        (Err(err), Err(message)) => assert_eq!(err.to_string(), message),
        (parsed, expected) => panic!("{text:?}: got {parsed:?}, expected {expected:?}"),
    }
}

fn rule(route: &str, call: u64, fault: Fault) -> FaultRule {
    FaultRule {
        route: route.to_owned(),
        call,
        fault,
    }
}

#[test]
fn fault_scripts_round_trip() {
    let text = "# comment\nGET /repos/{o}/{r}/pulls/{n}/comments #1 status 500\n\n* #3 drop\nPUT /repos/{o}/{r}/pulls/{n}/merge #* delay 250\n* #2 secondary-403 retry-after 60\n* #1 secondary-403\n* #4 429 retry-after 2\n* #5 429\n* #6 truncate\n* #7 malformed\n* #8 exhaust";
    check_script(
        text,
        Ok(vec![
            rule(
                "GET /repos/{o}/{r}/pulls/{n}/comments",
                1,
                Fault::Status(500),
            ),
            rule("*", 3, Fault::Drop),
            rule(
                "PUT /repos/{o}/{r}/pulls/{n}/merge",
                0,
                Fault::Delay { millis: 250 },
            ),
            rule(
                "*",
                2,
                Fault::Secondary403 {
                    retry_after: Some(60),
                },
            ),
            rule("*", 1, Fault::Secondary403 { retry_after: None }),
            rule(
                "*",
                4,
                Fault::TooManyRequests {
                    retry_after: Some(2),
                },
            ),
            rule("*", 5, Fault::TooManyRequests { retry_after: None }),
            rule("*", 6, Fault::Truncate),
            rule("*", 7, Fault::Malformed),
            rule("*", 8, Fault::Exhaust),
        ]),
    );
    assert_eq!(
        script("* #3 drop\nGET /app #* status 502").to_string(),
        "* #3 drop\nGET /app #* status 502"
    );
}

#[test]
fn bad_fault_lines_name_the_line_and_the_problem() {
    check_script(
        "* #1 drop\nGET /app #1 explode",
        Err(
            "fault script line 2: unknown fault `explode` (expected status, secondary-403, 429, delay, truncate, malformed, drop, exhaust, graphql-rate-limited or graphql-error): `GET /app #1 explode`",
        ),
    );
    check_script(
        "get /app #1 drop",
        Err(
            "fault script line 1: expected an HTTP method in capitals or `*`, found `get`: `get /app #1 drop`",
        ),
    );
    check_script(
        "* #0 drop",
        Err("fault script line 1: expected `#<n>` with n >= 1 or `#*`, found `#0`: `* #0 drop`"),
    );
    check_script(
        "* #1 status 200",
        Err("fault script line 1: status 200 is not an error status (400-599): `* #1 status 200`"),
    );
    check_script(
        "* #1 delay",
        Err("fault script line 1: expected milliseconds after `delay`: `* #1 delay`"),
    );
    check_script(
        "GET app #1 drop",
        Err(
            "fault script line 1: expected a route template starting with `/`, found `app`: `GET app #1 drop`",
        ),
    );
    check_script(
        "* 1 drop",
        Err("fault script line 1: expected `#<n>` or `#*` after the route, found `1`: `* 1 drop`"),
    );
    check_script(
        "* #1 drop now",
        Err("fault script line 1: `drop` takes no argument, found `now`: `* #1 drop now`"),
    );
}

// ---- check runs published by another App -------------------------------------------------

async fn send_as(builder: reqwest::RequestBuilder, token: &str) -> Answer {
    let response = builder
        .header("Authorization", format!("Bearer {token}"))
        .send()
        .await
        .expect("the server answers");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.expect("the body is complete");
    Answer {
        status,
        headers,
        text,
    }
}

async fn call_as(
    server: &LoopbackServer,
    token: &str,
    method: reqwest::Method,
    path: &str,
    body: Value,
) -> Answer {
    let url = format!("{}{path}", server.base_url());
    send_as(
        reqwest::Client::new().request(method, url).json(&body),
        token,
    )
    .await
}

#[tokio::test]
async fn an_app_publishes_and_completes_check_runs_over_github_routes() {
    let server = serve("").await;
    let runs = "/repos/jane-doe/webapp/check-runs";
    let head = sha_of(REPO, "f1");
    let start = json!({"name": "ci", "head_sha": head, "status": "in_progress"});

    // A token the server did not issue is the bot's installation token, as on every
    // route: its completed run is the bot App's, written through the port.
    let bot_run = json!({
        "name": "mp-gate", "head_sha": head, "status": "completed",
        "conclusion": "failure",
        "output": {"title": "the gate refuses #1", "summary": "- #1: refused"},
    });
    let published = call(&server, reqwest::Method::POST, runs, bot_run).await;
    let bot_slug = server.memory().read(|w| w.bot_slug.clone());
    check(
        &published,
        201,
        &[
            ("/app/slug", json!(bot_slug)),
            ("/conclusion", json!("failure")),
            ("/output/summary", json!("- #1: refused")),
        ],
    );
    assert!(
        server
            .memory()
            .actions()
            .iter()
            .any(|w| w.code() == "create_check_run"),
        "the bot's run is one of its writes"
    );

    let minted = call(
        &server,
        reqwest::Method::POST,
        "/_loopback/apps/ci-app/token",
        json!({}),
    )
    .await;
    check(&minted, 201, &[("/app", json!("ci-app"))]);
    let ci = minted.json()["token"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let created = call_as(&server, &ci, reqwest::Method::POST, runs, start).await;
    check(
        &created,
        201,
        &[
            ("/status", json!("in_progress")),
            ("/conclusion", Value::Null),
            ("/app/slug", json!("ci-app")),
            ("/head_sha", json!(head)),
            ("/started_at", json!("2026-03-02T09:00:00Z")),
        ],
    );
    let id = created.json()["id"].as_u64().unwrap_or_default();
    let run_path = format!("{runs}/{id}");

    // The bot's own installation token is another App's: it may not touch the run.
    let bot = call(
        &server,
        reqwest::Method::POST,
        "/app/installations/1/access_tokens",
        json!({}),
    )
    .await;
    let bot = bot.json()["token"].as_str().unwrap_or_default().to_owned();
    let done = json!({"conclusion": "success"});
    let foreign = call_as(
        &server,
        &bot,
        reqwest::Method::PATCH,
        &run_path,
        done.clone(),
    )
    .await;
    assert_eq!(foreign.status, 403, "{foreign:?}");

    let completed = call_as(&server, &ci, reqwest::Method::PATCH, &run_path, done).await;
    check(
        &completed,
        200,
        &[
            ("/id", json!(id)),
            ("/status", json!("completed")),
            ("/conclusion", json!("success")),
            ("/completed_at", json!("2026-03-02T09:00:00Z")),
        ],
    );
    check(
        &get(&server, &run_path).await,
        200,
        &[("/conclusion", json!("success"))],
    );

    // The bot reads the run through the port as any other.
    let port_runs = server
        .memory()
        .check_runs(
            &repo(REPO),
            &mp_core::ids::CommitSha::parse(&head).expect("a SHA"),
        )
        .await
        .expect("the commit is known");
    let last = port_runs.last().expect("the new run is listed");
    assert_eq!(
        (
            last.name.as_str(),
            last.app_slug.as_deref(),
            last.status.as_str()
        ),
        ("ci", Some("ci-app"), "completed")
    );

    // GitHub's refusals: an unknown commit, `completed` without a conclusion, a bad value.
    for (body, message) in [
        (
            json!({"name": "ci", "head_sha": "0000000000000000000000000000000000000000"}),
            "No commit found for SHA: 0000000000000000000000000000000000000000",
        ),
        (
            json!({"name": "ci", "head_sha": head, "status": "completed"}),
            "Invalid request: `conclusion` is required when the status is `completed`",
        ),
        (
            json!({"name": "ci", "head_sha": head, "conclusion": "great"}),
            "Invalid request: `great` is not a check run conclusion",
        ),
    ] {
        let answer = call_as(&server, &ci, reqwest::Method::POST, runs, body).await;
        check(&answer, 422, &[("/message", json!(message))]);
    }
    server.shutdown().await;
}

/// On the system clock the world moves to the present with each request: an installation
/// token expires an hour from now (a live client keeps it, instead of minting one per
/// request), and what the server writes is dated now.
#[tokio::test]
async fn on_the_system_clock_tokens_and_writes_follow_the_present() {
    let server = LoopbackServer::bind_with_clock(
        world(None),
        FaultScript::default(),
        std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
        crate::ServerClock::Real,
    )
    .await
    .expect("the server binds");
    let before = jiff::Timestamp::now().as_second();
    let token = call(
        &server,
        reqwest::Method::POST,
        "/app/installations/1/access_tokens",
        json!({}),
    )
    .await;
    let expires = token.json()["expires_at"]
        .as_str()
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .map(jiff::Timestamp::as_second)
        .expect("an expiry");
    assert!(
        (before + 3600..=before + 3700).contains(&expires),
        "expires {expires}, an hour after {before}"
    );
    let after = jiff::Timestamp::now().as_second();
    let world_now = server.memory().read(|w| w.now.unix_seconds());
    assert!(
        (before..=after).contains(&world_now),
        "the world's now {world_now} is the present"
    );
    server.shutdown().await;
}

/// The App's permissions, a repository the App is not installed on, and repository labels,
/// as a world file sets them; read and written through the REST client.
#[tokio::test]
async fn installations_permissions_and_labels_follow_the_world() {
    let text = r##"now: 2026-03-02T09:00:00Z
bot: jane-merge-gate
app_permissions: {contents: read, metadata: read}
repos:
  - name: jane-doe/webapp
    commits: [{id: m1, message: "Initial commit", author: jane-doe}]
    branches: {main: m1}
    files:
      .github/workflows/mp.yml: "on: push\n"
      .github/workflows/sub/x.yml: "on: push\n"
    labels:
      - ready-to-merge
      - {name: bug, color: d73a4a, description: Something is wrong}
    pulls:
      - {number: 1, title: A change, author: jane-doe, head: main, labels: [from-a-thread]}
  - name: jane-doe/other
    app_installed: false
    commits: [{id: o1, message: "Initial commit", author: jane-doe}]
    branches: {main: o1}
"##;
    let world = parse_world("test.yaml", text, None).expect("the world is valid");
    let server = serve_world(world, "").await;
    check(
        &get(&server, "/repos/jane-doe/webapp/installation").await,
        200,
        &[
            ("/permissions/contents", json!("read")),
            ("/permissions/metadata", json!("read")),
        ],
    );
    assert_eq!(
        get(&server, "/repos/jane-doe/other/installation")
            .await
            .status,
        404
    );
    check(
        &get(&server, "/app").await,
        200,
        &[("/permissions/contents", json!("read"))],
    );
    check(
        &get(&server, "/repos/jane-doe/webapp/labels").await,
        200,
        &[
            ("/0/name", json!("ready-to-merge")),
            ("/1/color", json!("d73a4a")),
            ("/1/description", json!("Something is wrong")),
            ("/2/name", json!("from-a-thread")),
        ],
    );

    let mut config = mp_github::rest::RestConfig::new(
        server.base_url(),
        mp_github::rest::Credentials::Token(mp_github::rest::Secret::new("ghs_test")),
    );
    config.retry = mp_github::rest::RetryPolicy::fast();
    config.points_per_minute = None;
    let client = mp_github::rest::RestGitHub::new(config).expect("a client");
    let webapp = repo(REPO);
    assert!(!client.is_app());
    assert_eq!(
        client.labels(&webapp).await.expect("labels"),
        ["ready-to-merge", "bug", "from-a-thread"]
    );
    assert!(
        client
            .create_label(&webapp, "decision:approved-A", "0e8a16", "approved")
            .await
            .expect("created")
    );
    // Compared without case, as GitHub does: already there.
    assert!(
        !client
            .create_label(&webapp, "Decision:Approved-A", "0e8a16", "approved")
            .await
            .expect("answered")
    );
    assert!(
        client
            .labels(&webapp)
            .await
            .expect("labels")
            .contains(&"decision:approved-A".to_owned())
    );
    assert!(
        client
            .create_label(&webapp, "x", "not-a-colour", "")
            .await
            .is_err(),
        "a bad colour is refused"
    );
    assert_eq!(
        client
            .directory_files(&webapp, ".github/workflows", "main")
            .await
            .expect("a listing"),
        [".github/workflows/mp.yml"]
    );
    assert!(
        client
            .directory_files(&webapp, "no/such/dir", "main")
            .await
            .expect("a listing")
            .is_empty()
    );
    // A token has no JWT to ask for an installation with.
    assert!(client.installation_permissions(&webapp).await.is_err());
    server.shutdown().await;
}
