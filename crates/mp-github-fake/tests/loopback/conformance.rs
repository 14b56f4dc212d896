//! The loopback server against GitHub's published REST description (decisions/0029): every
//! route the REST client uses, answered over the demo world and every scenario world, and
//! the writes with valid bodies, validates against the response schema of its operation and
//! status in `@octokit/openapi` (pinned; `cargo xtask openapi` extracts it).
//!
//! The worlds are served as they are. A time a world leaves unknown is `null` in the
//! server's answers (so the REST client reads the `None` the in-memory adapter gives), which
//! GitHub never sends: a world that leaves the time of an issue, comment, reaction, label
//! event, push or commit unknown fails here.

mod openapi;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use mp_core::ids::RepoName;
use mp_github_fake::{FaultScript, LoopbackServer, World};
use reqwest::Method;
use serde_json::{Value, json};

use crate::harness::{Scenario, client_for, runtime, scenario_worlds, tick_over};
use crate::queue_git;
use openapi::{Description, description};

/// The token of plain requests: a personal token, so `GET /user` answers.
const USER_TOKEN: &str = "ghp_conformance";

/// The App that publishes check runs in the write walk.
const CI_APP: &str = "github-actions";

/// At most this many items of a listing are requested (one page).
const PAGE: &str = "per_page=100";

/// Operations (method and the description's path) that must have validated at least one
/// success: the client's routes and the check-run routes a CI script uses.
const OPERATIONS: &[&str] = &[
    "GET /app",
    "GET /user",
    "POST /app/installations/{installation_id}/access_tokens",
    "GET /app/installations",
    "GET /repos/{owner}/{repo}",
    "GET /repos/{owner}/{repo}/installation",
    "GET /repos/{owner}/{repo}/labels",
    "GET /repos/{owner}/{repo}/rules/branches/{branch}",
    "GET /repos/{owner}/{repo}/environments",
    "GET /repos/{owner}/{repo}/environments/{environment_name}/deployment-branch-policies",
    "POST /repos/{owner}/{repo}/labels",
    "PATCH /repos/{owner}/{repo}/labels/{name}",
    "GET /repos/{owner}/{repo}/pulls",
    "POST /repos/{owner}/{repo}/pulls",
    "GET /repos/{owner}/{repo}/pulls/{pull_number}",
    "GET /repos/{owner}/{repo}/pulls/{pull_number}/commits",
    "GET /repos/{owner}/{repo}/pulls/{pull_number}/files",
    "PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge",
    "PUT /repos/{owner}/{repo}/pulls/{pull_number}/update-branch",
    "GET /repos/{owner}/{repo}/commits",
    "GET /repos/{owner}/{repo}/commits/{ref}",
    "GET /repos/{owner}/{repo}/commits/{ref}/check-runs",
    "GET /repos/{owner}/{repo}/actions/runs",
    "GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs",
    "GET /repos/{owner}/{repo}/commits/{commit_sha}/pulls",
    "POST /repos/{owner}/{repo}/check-runs",
    "GET /repos/{owner}/{repo}/check-runs/{check_run_id}",
    "PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}",
    "GET /repos/{owner}/{repo}/branches/{branch}",
    "GET /repos/{owner}/{repo}/issues",
    "POST /repos/{owner}/{repo}/issues",
    "PATCH /repos/{owner}/{repo}/issues/{issue_number}",
    "GET /repos/{owner}/{repo}/issues/{issue_number}/comments",
    "POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
    "PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}",
    "GET /repos/{owner}/{repo}/issues/{issue_number}/labels",
    "POST /repos/{owner}/{repo}/issues/{issue_number}/labels",
    "DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}",
    "GET /repos/{owner}/{repo}/issues/{issue_number}/reactions",
    "GET /repos/{owner}/{repo}/issues/{issue_number}/timeline",
    "GET /repos/{owner}/{repo}/activity",
    "GET /repos/{owner}/{repo}/compare/{basehead}",
    "GET /repos/{owner}/{repo}/contents/{path}",
    "PUT /repos/{owner}/{repo}/contents/{path}",
    "GET /repos/{owner}/{repo}/git/trees/{tree_sha}",
    "GET /repos/{owner}/{repo}/git/ref/{ref}",
    "GET /repos/{owner}/{repo}/git/matching-refs/{ref}",
    "POST /repos/{owner}/{repo}/git/refs",
];

/// Refusals the write walk provokes, each of which must validate against GitHub's
/// description of that status.
const REFUSALS: &[(&str, u16)] = &[
    ("GET /repos/{owner}/{repo}/pulls/{pull_number}", 404),
    ("PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge", 409),
    ("PUT /repos/{owner}/{repo}/contents/{path}", 422),
    ("POST /repos/{owner}/{repo}/git/refs", 422),
    (
        "DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}",
        404,
    ),
    ("GET /user", 403),
    ("POST /repos/{owner}/{repo}/labels", 422),
];

/// Worlds whose tick through the REST client shows which routes the client calls: the
/// demo (merges, the inbox, drift, L2, break-glass) and scenarios that create the state
/// branch, rebase, revert and apply the owner's decisions.
const CLIENT_WORLDS: &[&str] = &[
    "state-first-run-creates-bot-state",
    "race-guard-second-pr-rebased",
    "sup-auto-revert-pr",
    "inbox-approve-a-merges",
    "inbox-reject-closes-pr",
    "inbox-lifecycle-reminder",
];

/// A route template with its parameters blanked: `GET /repos/{}/{}/pulls/{}`, so the
/// server's templates and the description's compare.
fn blank(route: &str) -> String {
    let mut out = String::with_capacity(route.len());
    let mut inside = false;
    for c in route.chars() {
        match c {
            '{' => {
                inside = true;
                out.push_str("{}");
            }
            '}' => inside = false,
            _ if inside => {}
            _ => out.push(c),
        }
    }
    out
}

/// Percent-encodes what a path segment cannot hold, keeping `/`.
fn encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// One problem of one answer, grouped by operation, status and message.
#[derive(Debug, Default)]
struct Problems {
    /// `(operation, status, problem)` -> (how often, the first request that showed it).
    seen: BTreeMap<(String, u16, String), (usize, String)>,
    /// Answers that validated.
    valid: usize,
}

impl Problems {
    fn add(&mut self, operation: &str, status: u16, problem: &str, request: &str) {
        // Array indices vary between answers; the problem does not.
        let general: String = problem
            .split('/')
            .map(|part| {
                if !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) {
                    "*"
                } else {
                    part
                }
            })
            .collect::<Vec<_>>()
            .join("/");
        // The server's port differs between worlds.
        let general = match general.find("127.0.0.1:") {
            Some(at) => {
                let rest = &general[at + "127.0.0.1:".len()..];
                let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
                format!("{}127.0.0.1:PORT{}", &general[..at], &rest[digits..])
            }
            None => general,
        };
        let entry = self
            .seen
            .entry((operation.to_owned(), status, general))
            .or_insert_with(|| (0, request.to_owned()));
        entry.0 += 1;
    }

    fn report(&self) -> String {
        self.seen
            .iter()
            .map(|((operation, status, problem), (count, first))| {
                format!("{operation} -> {status}: {problem}\n    ({count}x, first: {first})")
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Requests against one server, each answer validated.
struct Checker<'a> {
    description: &'a Description,
    http: reqwest::Client,
    base: String,
    world: String,
    problems: &'a mut Problems,
    /// Operation -> statuses answered and validated.
    validated: &'a mut BTreeMap<String, BTreeSet<u16>>,
}

impl Checker<'_> {
    /// Sends `method url` (with `body`, as `token`), validates the answer against
    /// `operation` (the description's path template) and returns its status and body.
    async fn send(
        &mut self,
        method: Method,
        operation: &str,
        url: &str,
        body: Option<&Value>,
        token: &str,
    ) -> (u16, Value) {
        let mut request = self
            .http
            .request(method.clone(), format!("{}{url}", self.base))
            .bearer_auth(token)
            .header("accept", "application/vnd.github+json");
        if let Some(body) = body {
            request = request.json(body);
        }
        let what = format!("{} {method} {url}", self.world);
        let response = request
            .send()
            .await
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let status = response.status().as_u16();
        let bytes = response
            .bytes()
            .await
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let key = format!("{method} {operation}");
        // A status the description lists without a body: none, or for an error GitHub's
        // `{"message": ...}`, which it sends with every error.
        if self
            .description
            .describes_no_body(method.as_str(), operation, status)
        {
            let value = serde_json::from_slice::<Value>(&bytes).unwrap_or(Value::Null);
            let error_message = status >= 400 && value.get("message").is_some_and(Value::is_string);
            if bytes.is_empty() || error_message {
                self.problems.valid += 1;
                self.validated.entry(key).or_default().insert(status);
            } else {
                self.problems
                    .add(&key, status, "a body where the description has none", &what);
            }
            return (status, value);
        }
        let value = match serde_json::from_slice::<Value>(&bytes) {
            Ok(value) => value,
            Err(err) => {
                self.problems
                    .add(&key, status, &format!("the body is not JSON: {err}"), &what);
                return (status, Value::Null);
            }
        };
        let found = self
            .description
            .problems(method.as_str(), operation, status, &value, 20);
        for problem in &found {
            self.problems.add(&key, status, problem, &what);
        }
        if found.is_empty() {
            self.problems.valid += 1;
            self.validated.entry(key).or_default().insert(status);
        }
        (status, value)
    }

    async fn get(&mut self, operation: &str, url: &str) -> (u16, Value) {
        self.send(Method::GET, operation, url, None, USER_TOKEN)
            .await
    }
}

/// Every read the client makes, over every repository, pull request, issue, commit,
/// branch and file of the world.
async fn walk_reads(checker: &mut Checker<'_>, world: &World) {
    checker.get("/app", "/app").await;
    checker
        .get("/app/installations", &format!("/app/installations?{PAGE}"))
        .await;
    checker.get("/user", "/user").await;
    // An installation token belongs to no user: 403, as GitHub answers it.
    checker
        .send(Method::GET, "/user", "/user", None, "ghs_installation")
        .await;
    checker
        .send(
            Method::POST,
            "/app/installations/{installation_id}/access_tokens",
            "/app/installations/1/access_tokens",
            None,
            USER_TOKEN,
        )
        .await;
    for repo in &world.repos {
        let r = format!("/repos/{}", repo.name);
        checker.get("/repos/{owner}/{repo}", &r).await;
        checker
            .get(
                "/repos/{owner}/{repo}/installation",
                &format!("{r}/installation"),
            )
            .await;
        checker
            .get(
                "/repos/{owner}/{repo}/labels",
                &format!("{r}/labels?{PAGE}"),
            )
            .await;
        for query in ["", "?state=all&per_page=100", "?state=closed&direction=asc"] {
            checker
                .get("/repos/{owner}/{repo}/pulls", &format!("{r}/pulls{query}"))
                .await;
        }
        for query in [
            "",
            "?state=all&per_page=100",
            "?labels=decision:pending-owner",
        ] {
            checker
                .get(
                    "/repos/{owner}/{repo}/issues",
                    &format!("{r}/issues{query}"),
                )
                .await;
        }
        checker
            .get(
                "/repos/{owner}/{repo}/environments",
                &format!("{r}/environments?{PAGE}"),
            )
            .await;
        for environment in &repo.environments {
            let e = encode_path(&environment.name);
            checker
                .get(
                    "/repos/{owner}/{repo}/environments/{environment_name}/deployment-branch-policies",
                    &format!("{r}/environments/{e}/deployment-branch-policies?{PAGE}"),
                )
                .await;
        }
        // The whole repository's log, without `ref` (decisions/0070).
        checker
            .get(
                "/repos/{owner}/{repo}/activity",
                &format!("{r}/activity?{PAGE}"),
            )
            .await;
        for branch in repo.branches.keys() {
            let b = encode_path(branch);
            checker
                .get(
                    "/repos/{owner}/{repo}/branches/{branch}",
                    &format!("{r}/branches/{b}"),
                )
                .await;
            checker
                .get(
                    "/repos/{owner}/{repo}/commits",
                    &format!("{r}/commits?sha={b}&{PAGE}"),
                )
                .await;
            checker
                .get(
                    "/repos/{owner}/{repo}/activity",
                    &format!("{r}/activity?ref=refs/heads/{b}&{PAGE}"),
                )
                .await;
            checker
                .get(
                    "/repos/{owner}/{repo}/rules/branches/{branch}",
                    &format!("{r}/rules/branches/{b}?{PAGE}"),
                )
                .await;
            checker
                .get(
                    "/repos/{owner}/{repo}/git/trees/{tree_sha}",
                    &format!("{r}/git/trees/{b}?recursive=1"),
                )
                .await;
            checker
                .get(
                    "/repos/{owner}/{repo}/git/ref/{ref}",
                    &format!("{r}/git/ref/heads/{b}"),
                )
                .await;
            // The branches under it (the merge queue's groups are listed this way).
            checker
                .get(
                    "/repos/{owner}/{repo}/git/matching-refs/{ref}",
                    &format!("{r}/git/matching-refs/heads/{b}"),
                )
                .await;
        }
        // Directories answer arrays: the root, and each directory of the default branch.
        let directories: BTreeSet<&str> = repo
            .files
            .keys()
            .flat_map(|path| path.match_indices('/').map(|(at, _)| &path[..at]))
            .collect();
        let root = std::iter::once("");
        for directory in root.chain(directories.into_iter().take(10)) {
            checker
                .get(
                    "/repos/{owner}/{repo}/contents/{path}",
                    &format!("{r}/contents/{}", encode_path(directory)),
                )
                .await;
        }
        let files = repo
            .files
            .keys()
            .map(|path| (repo.default_branch.as_str(), path));
        let branch_files = repo
            .branch_files
            .iter()
            .flat_map(|(branch, files)| files.keys().map(move |path| (branch.as_str(), path)));
        for (branch, path) in files.chain(branch_files).take(40) {
            checker
                .get(
                    "/repos/{owner}/{repo}/contents/{path}",
                    &format!(
                        "{r}/contents/{}?ref={}",
                        encode_path(path),
                        encode_path(branch)
                    ),
                )
                .await;
        }
        for commit in repo.commits.iter().take(60) {
            let sha = commit.sha.as_str();
            checker
                .get(
                    "/repos/{owner}/{repo}/commits/{ref}",
                    &format!("{r}/commits/{sha}"),
                )
                .await;
            for filter in ["latest", "all"] {
                checker
                    .get(
                        "/repos/{owner}/{repo}/commits/{ref}/check-runs",
                        &format!("{r}/commits/{sha}/check-runs?filter={filter}&{PAGE}"),
                    )
                    .await;
            }
            checker
                .get(
                    "/repos/{owner}/{repo}/actions/runs",
                    &format!("{r}/actions/runs?head_sha={sha}&{PAGE}"),
                )
                .await;
            for run in commit.workflow_runs(&repo.name) {
                checker
                    .get(
                        "/repos/{owner}/{repo}/actions/runs/{run_id}/jobs",
                        &format!("{r}/actions/runs/{}/jobs?filter=all&{PAGE}", run.id),
                    )
                    .await;
            }
            checker
                .get(
                    "/repos/{owner}/{repo}/commits/{commit_sha}/pulls",
                    &format!("{r}/commits/{sha}/pulls?{PAGE}"),
                )
                .await;
            // What the update from the first parent brought, as the supervisor reads it.
            if let Some(parent) = commit.parents.first() {
                checker
                    .get(
                        "/repos/{owner}/{repo}/compare/{basehead}",
                        &format!("{r}/compare/{parent}...{sha}?per_page=100&page=1"),
                    )
                    .await;
            }
        }

        // A pull request whose comments the world makes unreadable answers 502 on
        // purpose (a simulated outage, which the description does not describe).
        let threads = repo
            .pulls
            .iter()
            .filter(|p| !p.comments_unreadable)
            .map(|p| p.number)
            .chain(repo.issues.iter().map(|i| i.number));
        for number in threads {
            for (operation, tail) in [
                (
                    "/repos/{owner}/{repo}/issues/{issue_number}/comments",
                    "comments",
                ),
                (
                    "/repos/{owner}/{repo}/issues/{issue_number}/labels",
                    "labels",
                ),
                (
                    "/repos/{owner}/{repo}/issues/{issue_number}/reactions",
                    "reactions",
                ),
                (
                    "/repos/{owner}/{repo}/issues/{issue_number}/timeline",
                    "timeline",
                ),
            ] {
                checker
                    .get(operation, &format!("{r}/issues/{number}/{tail}?{PAGE}"))
                    .await;
            }
        }
        for pull in &repo.pulls {
            let n = pull.number;
            checker
                .get(
                    "/repos/{owner}/{repo}/pulls/{pull_number}",
                    &format!("{r}/pulls/{n}"),
                )
                .await;
            checker
                .get(
                    "/repos/{owner}/{repo}/pulls/{pull_number}/commits",
                    &format!("{r}/pulls/{n}/commits?{PAGE}"),
                )
                .await;
            checker
                .get(
                    "/repos/{owner}/{repo}/pulls/{pull_number}/files",
                    &format!("{r}/pulls/{n}/files?{PAGE}"),
                )
                .await;
        }
    }
}

fn webapp() -> RepoName {
    RepoName::parse("acme/webapp").expect("a repository name")
}

/// The writes the client makes (and the check-run writes of a CI App), with valid bodies,
/// on the demo world; a few refusals GitHub describes are checked too.
async fn walk_writes(checker: &mut Checker<'_>) {
    use Method as M;
    let r = "/repos/acme/webapp";
    let post = |url: &str| format!("{r}{url}");
    // A repository label (what `mp doctor --create-labels` writes), then the same again.
    for _ in 0..2 {
        checker
            .send(
                M::POST,
                "/repos/{owner}/{repo}/labels",
                &post("/labels"),
                Some(&json!({
                    "name": "decision:approved-A",
                    "color": "0e8a16",
                    "description": "mp: the owner approved it as quadrant A",
                })),
                USER_TOKEN,
            )
            .await;
    }
    // A label renamed and recoloured, as an agent with write access may (decisions/0048).
    checker
        .send(
            M::POST,
            "/repos/{owner}/{repo}/labels",
            &post("/labels"),
            Some(&json!({ "name": "reviewing", "color": "fbca04" })),
            USER_TOKEN,
        )
        .await;
    checker
        .send(
            M::PATCH,
            "/repos/{owner}/{repo}/labels/{name}",
            &post("/labels/reviewing"),
            Some(&json!({ "new_name": "reviewed", "color": "0e8a16" })),
            USER_TOKEN,
        )
        .await;
    // Comments, labels, issues.
    let (_, created) = checker
        .send(
            M::POST,
            "/repos/{owner}/{repo}/issues/{issue_number}/comments",
            &post("/issues/1/comments"),
            Some(&json!({ "body": "Merge Gate: checked." })),
            USER_TOKEN,
        )
        .await;
    let comment = created.get("id").and_then(Value::as_u64).unwrap_or(0);
    checker
        .send(
            M::PATCH,
            "/repos/{owner}/{repo}/issues/comments/{comment_id}",
            &post(&format!("/issues/comments/{comment}")),
            Some(&json!({ "body": "Merge Gate: checked again." })),
            USER_TOKEN,
        )
        .await;
    checker
        .send(
            M::POST,
            "/repos/{owner}/{repo}/issues/{issue_number}/labels",
            &post("/issues/3/labels"),
            Some(&json!({ "labels": ["needs-work"] })),
            USER_TOKEN,
        )
        .await;
    checker
        .send(
            M::DELETE,
            "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}",
            &post("/issues/3/labels/needs-work"),
            None,
            USER_TOKEN,
        )
        .await;
    checker
        .send(
            M::DELETE,
            "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}",
            &post("/issues/3/labels/never-there"),
            None,
            USER_TOKEN,
        )
        .await;
    let (_, issue) = checker
        .send(
            M::POST,
            "/repos/{owner}/{repo}/issues",
            "/repos/acme/governance/issues",
            Some(&json!({
                "title": "Decision pending — PR acme/webapp#3",
                "body": "Approve or reject.",
                "labels": ["decision:pending-owner"],
            })),
            USER_TOKEN,
        )
        .await;
    let number = issue.get("number").and_then(Value::as_u64).unwrap_or(0);
    for body in [json!({ "body": "Approved." }), json!({ "state": "closed" })] {
        checker
            .send(
                M::PATCH,
                "/repos/{owner}/{repo}/issues/{issue_number}",
                &format!("/repos/acme/governance/issues/{number}"),
                Some(&body),
                USER_TOKEN,
            )
            .await;
    }
    // Pull requests: merge, rebase, create; a pull request that does not exist.
    let merge = "/repos/{owner}/{repo}/pulls/{pull_number}/merge";
    let head = json!({
        "merge_method": "squash",
        "sha": mp_github_fake::world::commit_sha(&webapp(), "readme-fix").as_str(),
        "commit_title": "Fix the install command in the README (#1)",
    });
    checker
        .send(
            M::PUT,
            merge,
            &post("/pulls/1/merge"),
            Some(&head),
            USER_TOKEN,
        )
        .await;
    checker
        .send(
            M::PUT,
            "/repos/{owner}/{repo}/pulls/{pull_number}/update-branch",
            &post("/pulls/2/update-branch"),
            Some(&json!({})),
            USER_TOKEN,
        )
        .await;
    checker
        .get(
            "/repos/{owner}/{repo}/pulls/{pull_number}",
            &post("/pulls/999"),
        )
        .await;
    // The head moved since `sha`: 409.
    let stale = json!({
        "merge_method": "squash",
        "sha": mp_github_fake::world::commit_sha(&webapp(), "m1").as_str(),
    });
    checker
        .send(
            M::PUT,
            merge,
            &post("/pulls/3/merge"),
            Some(&stale),
            USER_TOKEN,
        )
        .await;
    // Files, refs, a new pull request on a new branch.
    let contents = "/repos/{owner}/{repo}/contents/{path}";
    let text = |s: &str| {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(s)
    };
    let (_, put) = checker
        .send(
            M::PUT,
            contents,
            "/repos/acme/governance/contents/bot-state/conformance.json",
            Some(&json!({
                "message": "chore(bot-state): conformance",
                "content": text("{}\n"),
                "branch": "bot-state",
            })),
            USER_TOKEN,
        )
        .await;
    let blob = put
        .pointer("/content/sha")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    checker
        .send(
            M::PUT,
            contents,
            "/repos/acme/governance/contents/bot-state/conformance.json",
            Some(&json!({
                "message": "chore(bot-state): conformance again",
                "content": text("{\"n\": 2}\n"),
                "branch": "bot-state",
                "sha": blob,
            })),
            USER_TOKEN,
        )
        .await;
    // Replacing a file without its blob's `sha`: 422.
    checker
        .send(
            M::PUT,
            contents,
            "/repos/acme/governance/contents/bot-state/conformance.json",
            Some(&json!({
                "message": "chore(bot-state): conformance, blind",
                "content": text("{}\n"),
                "branch": "bot-state",
            })),
            USER_TOKEN,
        )
        .await;
    let parser = mp_github_fake::world::commit_sha(&webapp(), "parser");
    // The second creation of the same branch: 422.
    for _ in 0..2 {
        checker
            .send(
                M::POST,
                "/repos/{owner}/{repo}/git/refs",
                &post("/git/refs"),
                Some(&json!({ "ref": "refs/heads/revert-parser", "sha": parser.as_str() })),
                USER_TOKEN,
            )
            .await;
    }
    checker
        .send(
            M::POST,
            "/repos/{owner}/{repo}/pulls",
            &post("/pulls"),
            Some(&json!({
                "title": "Revert the parser change",
                "body": "Reverts it.",
                "head": "acme:revert-parser",
                "base": "main",
            })),
            USER_TOKEN,
        )
        .await;
    // Check runs, as a CI App: a loopback token, then create, read and complete a run.
    let token = checker
        .http
        .post(format!("{}/_loopback/apps/{CI_APP}/token", checker.base))
        .bearer_auth(USER_TOKEN)
        .send()
        .await
        .expect("a token answer")
        .json::<Value>()
        .await
        .expect("a token body");
    let token = token
        .get("token")
        .and_then(Value::as_str)
        .expect("an App token")
        .to_owned();
    let (_, run) = checker
        .send(
            M::POST,
            "/repos/{owner}/{repo}/check-runs",
            &post("/check-runs"),
            Some(&json!({ "name": "test", "head_sha": parser.as_str(), "status": "in_progress" })),
            &token,
        )
        .await;
    let id = run.get("id").and_then(Value::as_u64).unwrap_or(0);
    let one = "/repos/{owner}/{repo}/check-runs/{check_run_id}";
    checker
        .send(
            M::GET,
            one,
            &post(&format!("/check-runs/{id}")),
            None,
            &token,
        )
        .await;
    checker
        .send(
            M::PATCH,
            one,
            &post(&format!("/check-runs/{id}")),
            Some(&json!({ "conclusion": "success", "output": { "title": "test", "summary": "All green." } })),
            &token,
        )
        .await;
    // mp's own check, completed at once, as the port's `create_check_run` sends it.
    checker
        .send(
            M::POST,
            "/repos/{owner}/{repo}/check-runs",
            &post("/check-runs"),
            Some(&json!({
                "name": "mp-gate", "head_sha": parser.as_str(), "status": "completed",
                "conclusion": "failure",
                "output": { "title": "the gate refuses #1", "summary": "- #1: refused" },
            })),
            USER_TOKEN,
        )
        .await;
}

/// Walks a server over `world`, validating every answer.
async fn serve_and_walk(
    description: &Description,
    name: &str,
    world: World,
    writes: bool,
    problems: &mut Problems,
    validated: &mut BTreeMap<String, BTreeSet<u16>>,
) {
    let server = LoopbackServer::start(world.clone(), FaultScript::default())
        .await
        .expect("the loopback server starts");
    let mut checker = Checker {
        description,
        http: reqwest::Client::new(),
        base: server.base_url(),
        world: name.to_owned(),
        problems,
        validated,
    };
    walk_reads(&mut checker, &world).await;
    if writes {
        walk_writes(&mut checker).await;
        // The world after the writes: the new pull request, issue, comment and run.
        let after = server.memory().read(Clone::clone);
        walk_reads(&mut checker, &after).await;
    }
    server.shutdown().await;
}

fn demo_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/worlds/demo.yaml")
}

/// The route templates the REST client calls in ticks over [`CLIENT_WORLDS`] and the demo.
async fn client_routes() -> BTreeSet<String> {
    let mut worlds: Vec<(String, std::path::PathBuf)> = scenario_worlds()
        .into_iter()
        .filter(|(name, _)| CLIENT_WORLDS.contains(&name.as_str()))
        .collect();
    assert_eq!(
        worlds.len(),
        CLIENT_WORLDS.len(),
        "a client world is missing"
    );
    worlds.push(("demo".to_owned(), demo_path()));
    let mut routes = BTreeSet::new();
    for (name, path) in worlds {
        let scenario = Scenario::load(&name, &path);
        let server = LoopbackServer::start(scenario.world.clone(), FaultScript::default())
            .await
            .expect("the loopback server starts");
        let client = client_for(&server);
        let _ = tick_over(&client, &scenario).await;
        routes.extend(
            server
                .requests()
                .into_keys()
                .filter(|route| !route.contains("/_loopback/")),
        );
        server.shutdown().await;
    }
    routes
}

#[test]
fn every_route_the_client_uses_answers_as_github_describes() {
    let description = description();
    let runtime = runtime();
    let mut problems = Problems::default();
    let mut validated: BTreeMap<String, BTreeSet<u16>> = BTreeMap::new();
    let demo = mp_github_fake::load_world(&demo_path()).expect("the demo world loads");
    let client_routes = runtime.block_on(async {
        serve_and_walk(
            description,
            "demo",
            demo,
            true,
            &mut problems,
            &mut validated,
        )
        .await;
        for (name, path) in scenario_worlds() {
            let world = mp_github_fake::load_world(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
            serve_and_walk(
                description,
                &name,
                world,
                false,
                &mut problems,
                &mut validated,
            )
            .await;
        }
        client_routes().await
    });
    assert!(
        problems.seen.is_empty(),
        "answers of the loopback server that break @octokit/openapi {}:\n{}",
        description.version,
        problems.report()
    );
    let succeeded: BTreeSet<String> = validated
        .iter()
        .filter(|(_, statuses)| statuses.iter().any(|s| (200..300).contains(s)))
        .map(|(operation, _)| operation.clone())
        .collect();
    let missing: Vec<&&str> = OPERATIONS
        .iter()
        .filter(|op| !succeeded.contains(**op))
        .collect();
    assert!(
        missing.is_empty(),
        "operations without a validated success: {missing:?}"
    );
    let unrefused: Vec<&(&str, u16)> = REFUSALS
        .iter()
        .filter(|(op, status)| !validated.get(*op).is_some_and(|s| s.contains(status)))
        .collect();
    assert!(
        unrefused.is_empty(),
        "refusals that did not come or did not validate: {unrefused:?}"
    );
    // Every repository, pull request, issue, commit, branch and file of ~115 worlds.
    assert!(
        problems.valid > 5_000,
        "only {} answers validated",
        problems.valid
    );
    let covered: BTreeSet<String> = succeeded.iter().map(|op| blank(op)).collect();
    // `POST /graphql` is no REST operation: its queries and answers are checked against
    // GitHub's published GraphQL schema (tests/graphql_schema.rs).
    let unchecked: Vec<&String> = client_routes
        .iter()
        .filter(|route| route.as_str() != "POST /graphql")
        .filter(|route| !covered.contains(&blank(route)))
        .collect();
    assert!(
        unchecked.is_empty(),
        "the REST client calls routes this test does not validate: {unchecked:?}"
    );
}

/// The validator rejects what GitHub's description forbids: a broken answer fails.
#[test]
fn a_broken_answer_is_rejected() {
    let description = description();
    let runtime = runtime();
    let pull = runtime.block_on(async {
        let world = mp_github_fake::load_world(&demo_path()).expect("the demo world loads");
        let server = LoopbackServer::start(world, FaultScript::default())
            .await
            .expect("the loopback server starts");
        let answer = reqwest::Client::new()
            .get(format!("{}/repos/acme/webapp/pulls/1", server.base_url()))
            .bearer_auth(USER_TOKEN)
            .send()
            .await
            .expect("an answer")
            .json::<Value>()
            .await
            .expect("a JSON body");
        server.shutdown().await;
        answer
    });
    let operation = "/repos/{owner}/{repo}/pulls/{pull_number}";
    let check = |value: &Value| description.problems("GET", operation, 200, value, 5);
    assert_eq!(
        check(&pull),
        Vec::<String>::new(),
        "the answer itself validates"
    );
    let broken = |edit: &dyn Fn(&mut serde_json::Map<String, Value>)| {
        let mut value = pull.clone();
        if let Value::Object(map) = &mut value {
            edit(map);
        }
        check(&value)
    };
    let without_number = broken(&|m| {
        m.remove("number");
    });
    assert!(
        without_number
            .iter()
            .any(|p| p.contains("\"number\" is a required property")),
        "{without_number:?}"
    );
    let number_as_text = broken(&|m| {
        m.insert("number".to_owned(), json!("1"));
    });
    assert!(!number_as_text.is_empty(), "a number sent as text passes");
    // `nullable` is translated: `body` may be null, `title` may not.
    assert!(
        broken(&|m| {
            m.insert("body".to_owned(), Value::Null);
        })
        .is_empty()
    );
    assert!(
        !broken(&|m| {
            m.insert("title".to_owned(), Value::Null);
        })
        .is_empty()
    );
    let bad_time = broken(&|m| {
        m.insert("created_at".to_owned(), json!("yesterday"));
    });
    assert!(!bad_time.is_empty(), "a time that is not RFC 3339 passes");
}

/// Each erratum still corrects something: a description that fixed it fails here, so the
/// correction is dropped rather than kept hiding nothing.
#[test]
fn every_erratum_still_applies() {
    let description = description();
    for (method, path, pointer, from, _) in openapi::ERRATA {
        let schema = description
            .response_schema(method, path, 200)
            .unwrap_or_else(|why| panic!("{why}"));
        assert!(
            schema.pointer(pointer).and_then(|s| s.get(from)).is_some(),
            "{method} {path}: {pointer} has no `{from}` in @octokit/openapi {}: drop the erratum",
            description.version
        );
    }
}

#[test]
fn nullable_becomes_a_null_type() {
    use openapi::translate;
    assert_eq!(
        translate(&json!({ "type": "string", "nullable": true, "enum": ["a"] })),
        json!({ "type": ["string", "null"], "enum": ["a", null] })
    );
    assert_eq!(
        translate(&json!({ "nullable": true, "allOf": [{ "type": "object" }] })),
        json!({ "anyOf": [{ "type": "null" }, { "allOf": [{ "type": "object" }] }] })
    );
    // A property called `nullable` is a property, not the keyword.
    assert_eq!(
        translate(
            &json!({ "properties": { "nullable": { "type": "boolean", "nullable": true } } })
        ),
        json!({ "properties": { "nullable": { "type": ["boolean", "null"] } } })
    );
}

/// The merge queue's Git data routes (`PATCH /git/refs/{ref}`, `POST /merges`) over a small
/// world with a conflicting pull request: every status GitHub describes for them that the
/// queue meets (200 and 422; 201, 204, 404 and 409) answers as described.
#[test]
fn the_queue_git_routes_answer_as_github_describes() {
    use Method as M;
    let description = description();
    let mut problems = Problems::default();
    let mut validated: BTreeMap<String, BTreeSet<u16>> = BTreeMap::new();
    runtime().block_on(async {
        let server = LoopbackServer::start(queue_git::world(), FaultScript::default())
            .await
            .expect("the loopback server starts");
        let mut checker = Checker {
            description,
            http: reqwest::Client::new(),
            base: server.base_url(),
            world: "queue".to_owned(),
            problems: &mut problems,
            validated: &mut validated,
        };
        let r = "/repos/acme/app";
        let sha = |id: &str| queue_git::sha(id).to_string();
        checker
            .send(
                M::POST,
                "/repos/{owner}/{repo}/git/refs",
                &format!("{r}/git/refs"),
                Some(&json!({ "ref": "refs/heads/mp-queue/main", "sha": sha("b0") })),
                USER_TOKEN,
            )
            .await;
        let merges = "/repos/{owner}/{repo}/merges";
        let url = format!("{r}/merges");
        let (_, merge) = checker
            .send(
                M::POST,
                merges,
                &url,
                Some(&json!({ "base": "mp-queue/main", "head": sha("a1"), "commit_message": "Merge #1" })),
                USER_TOKEN,
            )
            .await;
        let tip = merge.get("sha").and_then(Value::as_str).unwrap_or("").to_owned();
        for body in [
            // Nothing to merge: 204.
            json!({ "base": "mp-queue/main", "head": sha("a1") }),
            // A conflict: 409.
            json!({ "base": "mp-queue/main", "head": sha("c1") }),
            // No such base: 404.
            json!({ "base": "nope", "head": sha("a1") }),
        ] {
            checker.send(M::POST, merges, &url, Some(&body), USER_TOKEN).await;
        }
        let refs = "/repos/{owner}/{repo}/git/refs/{ref}";
        let main = format!("{r}/git/refs/heads/main");
        for body in [
            json!({ "sha": tip, "force": false }),
            // Not a fast-forward: 422.
            json!({ "sha": sha("c1") }),
        ] {
            checker.send(M::PATCH, refs, &main, Some(&body), USER_TOKEN).await;
        }
        // No such branch: 422.
        checker
            .send(
                M::PATCH,
                refs,
                &format!("{r}/git/refs/heads/nope"),
                Some(&json!({ "sha": sha("c1") })),
                USER_TOKEN,
            )
            .await;
        server.shutdown().await;
    });
    assert!(
        problems.seen.is_empty(),
        "answers of the loopback server that break @octokit/openapi {}:\n{}",
        description.version,
        problems.report()
    );
    let statuses = |operation: &str| validated.get(operation).cloned().unwrap_or_default();
    assert_eq!(
        statuses("POST /repos/{owner}/{repo}/merges"),
        BTreeSet::from([201, 204, 404, 409])
    );
    assert_eq!(
        statuses("PATCH /repos/{owner}/{repo}/git/refs/{ref}"),
        BTreeSet::from([200, 422])
    );
}
