//! Every GraphQL query mp sends (the `.graphql` files under `src/rest/graphql/`) validated
//! against GitHub's published GraphQL schema (`@octokit/graphql-schema`, pinned; `cargo
//! xtask graphql` extracts it, `cargo xtask test` runs that first). A missing schema fails
//! the tests and names the command; they never skip.
//!
//! [`response::response_problems`] checks an answer's `data` against an operation's
//! selection set, for tests that hand the REST client GraphQL answers.

#[path = "graphql_schema/response.rs"]
mod response;
#[path = "graphql_schema/schema.rs"]
mod schema;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use response::response_problems;
use schema::{DUPLICATE_FIELDS, github, validate};

/// Where mp's queries live.
fn query_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/rest/graphql")
}

/// Every `.graphql` file under `dir`, sorted.
fn graphql_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let entries = std::fs::read_dir(dir).unwrap_or_else(|err| panic!("{}: {err}", dir.display()));
    for entry in entries {
        let path = entry
            .unwrap_or_else(|err| panic!("{}: {err}", dir.display()))
            .path();
        if path.is_dir() {
            files.extend(graphql_files(&path));
        } else if path.extension().is_some_and(|e| e == "graphql") {
            files.push(path);
        }
    }
    files.sort();
    files
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

#[test]
fn every_query_mp_sends_validates_against_githubs_schema() {
    let schema = &github().schema;
    let files = graphql_files(&query_dir());
    assert!(
        !files.is_empty(),
        "no .graphql file under {}",
        query_dir().display()
    );
    let failures: Vec<String> = files
        .iter()
        .filter_map(|file| validate(schema, &read(file), &file.display().to_string()).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_query_with_an_unknown_field_is_rejected() {
    let broken = r#"
        query Broken {
          repository(owner: "o", name: "r") {
            pullRequests(first: 1) { nodes { notAField } }
          }
        }"#;
    let errors = validate(&github().schema, broken, "broken.graphql")
        .expect_err("a query selecting PullRequest.notAField validates");
    assert!(errors.contains("notAField"), "{errors}");
}

/// Each erratum still corrects something: a schema that fixed it fails here, so the entry
/// is dropped rather than kept hiding nothing.
#[test]
fn every_erratum_still_applies() {
    let dropped = &github().dropped;
    for (type_name, field) in DUPLICATE_FIELDS {
        assert!(
            dropped.iter().any(|(t, f)| t == type_name && f == field),
            "{type_name}.{field} is no longer defined twice in the schema: drop the erratum"
        );
    }
}

// --- response_problems --------------------------------------------------------------------

const OPEN_PULLS: &str = include_str!("../src/rest/graphql/open_pulls.graphql");
const LABEL: &str = include_str!("../src/rest/graphql/label.graphql");

/// Problems of `data` as the answer to `MpLabel`.
fn label_problems(data: &Value) -> Vec<String> {
    let github = github();
    let document = validate(&github.schema, LABEL, "label.graphql")
        .unwrap_or_else(|errors| panic!("{errors}"));
    response_problems(&github.schema, &document, "MpLabel", data)
}

#[test]
fn the_label_answers_the_loopback_server_gives_fit_the_schema() {
    // As the fake GitHub's `loopback/graphql.rs` renders them: a label with GitHub's times, and `null` for a
    // name the repository has no label for.
    let rate = json!({ "cost": 1, "remaining": 4999, "resetAt": "2026-03-10T13:00:00Z" });
    let found = json!({
        "rateLimit": rate,
        "repository": { "label": {
            "name": "ready-to-merge",
            "createdAt": "2026-03-01T09:00:00Z",
            "updatedAt": "2026-03-10T10:30:00Z",
        } },
    });
    assert_eq!(label_problems(&found), Vec::<String>::new());
    let missing = json!({ "rateLimit": rate, "repository": { "label": null } });
    assert_eq!(label_problems(&missing), Vec::<String>::new());
    // A time where the schema has one: a number is not a DateTime.
    let broken = json!({
        "rateLimit": rate,
        "repository": { "label": { "name": "x", "createdAt": 7, "updatedAt": null } },
    });
    assert!(!label_problems(&broken).is_empty());
}

/// Problems of `data` as the answer to `MpOpenPulls`.
fn open_pulls_problems(data: &Value) -> Vec<String> {
    let github = github();
    let document = validate(&github.schema, OPEN_PULLS, "open_pulls.graphql")
        .unwrap_or_else(|errors| panic!("{errors}"));
    response_problems(&github.schema, &document, "MpOpenPulls", data)
}

/// A hand-written answer to `MpOpenPulls`: one pull request with one of each part.
fn open_pulls_answer() -> Value {
    let user = |login: &str| json!({ "__typename": "User", "login": login });
    let signature = json!({ "email": "ada@example.com", "user": { "login": "ada" } });
    let commits = json!({
        "totalCount": 1,
        "nodes": [{
            "commit": {
                "oid": "a".repeat(40),
                "message": "Add a thing",
                "committedDate": "2026-01-01T00:00:00Z",
                "author": signature,
                "committer": { "email": "noreply@github.com", "user": null },
                "parents": { "totalCount": 1, "nodes": [{ "oid": "b".repeat(40) }] }
            }
        }]
    });
    let files = json!({
        "totalCount": 1,
        "nodes": [{ "path": "src/lib.rs", "changeType": "MODIFIED", "additions": 3, "deletions": 1 }]
    });
    let timeline = json!({
        "totalCount": 2,
        "nodes": [
            {
                "__typename": "LabeledEvent",
                "createdAt": "2026-01-01T00:01:00Z",
                "actor": user("ada"),
                "label": { "name": "mp:ready" }
            },
            {
                "__typename": "UnlabeledEvent",
                "createdAt": "2026-01-01T00:02:00Z",
                "actor": { "__typename": "Bot", "login": "mp-bot" },
                "label": { "name": "mp:waiting" }
            }
        ]
    });
    let comments = json!({
        "totalCount": 1,
        "nodes": [{
            "databaseId": 1001,
            "author": user("grace"),
            "body": "LGTM",
            "createdAt": "2026-01-01T00:03:00Z",
            "updatedAt": "2026-01-01T00:03:00Z"
        }]
    });
    let check_runs = json!({
        "totalCount": 1,
        "nodes": [{
            "databaseId": 2002,
            "name": "test",
            "status": "COMPLETED",
            "conclusion": "SUCCESS",
            "startedAt": "2026-01-01T00:04:00Z",
            "completedAt": "2026-01-01T00:05:00Z",
            "summary": null
        }]
    });
    let head_commit = json!({
        "nodes": [{
            "commit": {
                "oid": "a".repeat(40),
                "checkSuites": {
                    "totalCount": 1,
                    "nodes": [{ "app": { "slug": "github-actions" }, "checkRuns": check_runs }]
                }
            }
        }]
    });
    let pull = json!({
        "number": 7,
        "title": "Add a thing",
        "body": "",
        "createdAt": "2026-01-01T00:00:00Z",
        "author": user("ada"),
        "headRefName": "feature",
        "headRefOid": "a".repeat(40),
        "headRepository": { "nameWithOwner": "acme/widgets" },
        "baseRefName": "main",
        "baseRefOid": "b".repeat(40),
        "labels": { "totalCount": 1, "nodes": [{
            "name": "mp:ready",
            "createdAt": "2025-12-01T00:00:00Z",
            "updatedAt": "2025-12-01T00:00:00Z"
        }] },
        "commits": commits,
        "files": files,
        "timelineItems": timeline,
        "comments": comments,
        "headCommit": head_commit
    });
    json!({
        "rateLimit": { "cost": 1, "remaining": 4999, "resetAt": "2026-01-01T01:00:00Z" },
        "repository": {
            "defaultBranchRef": { "name": "main", "target": { "oid": "c".repeat(40) } },
            "pullRequests": {
                "pageInfo": { "hasNextPage": false, "endCursor": "Y3Vyc29yOnYyOpHOAAAAAQ==" },
                "nodes": [pull]
            }
        }
    })
}

/// The problems of the answer changed by `change`.
fn problems_after(change: impl FnOnce(&mut Value)) -> Vec<String> {
    let mut data = open_pulls_answer();
    change(&mut data);
    open_pulls_problems(&data)
}

/// The answer's value at a JSON pointer under `/repository/pullRequests/nodes/0`.
fn pull<'a>(data: &'a mut Value, pointer: &str) -> &'a mut Value {
    let full = format!("/repository/pullRequests/nodes/0{pointer}");
    data.pointer_mut(&full)
        .unwrap_or_else(|| panic!("no {full} in the answer"))
}

const PR: &str = "data.repository.pullRequests.nodes[0]";

#[test]
fn a_well_formed_answer_has_no_problems() {
    assert_eq!(
        open_pulls_problems(&open_pulls_answer()),
        Vec::<String>::new()
    );
}

#[test]
fn null_is_accepted_where_the_schema_allows_it() {
    let problems = problems_after(|data| {
        // Label: times GitHub does not give; Ref: an empty repository's, or a dangling one.
        *pull(data, "/labels/nodes/0/createdAt") = Value::Null;
        data["repository"]["defaultBranchRef"]["target"] = Value::Null;
        *pull(data, "/author") = Value::Null; // Actor: a deleted account
        *pull(data, "/headRepository") = Value::Null; // Repository: a deleted fork
        data["repository"] = Value::Null; // Repository: not found
    });
    assert_eq!(problems, Vec::<String>::new());
}

#[test]
fn a_missing_field_is_a_problem() {
    let problems = problems_after(|data| {
        pull(data, "").as_object_mut().map(|pr| pr.remove("number"));
    });
    assert_eq!(problems, [format!("{PR}.number: missing")]);
}

#[test]
fn a_key_nobody_selected_is_a_problem() {
    let problems = problems_after(|data| {
        pull(data, "")["mergeable"] = json!("MERGEABLE");
    });
    assert_eq!(problems, [format!("{PR}.mergeable: not selected")]);
}

#[test]
fn an_alias_is_the_response_key() {
    let problems = problems_after(|data| {
        let pr = pull(data, "").as_object_mut().expect("an object");
        let head = pr.remove("headCommit").expect("headCommit");
        pr.insert("commits_last".to_owned(), head);
    });
    assert_eq!(
        problems,
        [
            format!("{PR}.headCommit: missing"),
            format!("{PR}.commits_last: not selected")
        ]
    );
}

#[test]
fn null_in_a_non_null_field_is_a_problem() {
    let problems = problems_after(|data| *pull(data, "/title") = Value::Null);
    assert_eq!(
        problems,
        [format!("{PR}.title: null, but String! is non-null")]
    );
}

#[test]
fn a_list_field_must_be_a_list() {
    let problems = problems_after(|data| *pull(data, "/labels/nodes") = json!({ "name": "x" }));
    assert_eq!(
        problems,
        [format!(
            "{PR}.labels.nodes: expected a list ([Label]), found an object"
        )]
    );
}

#[test]
fn scalars_have_their_json_kind() {
    let problems = problems_after(|data| {
        *pull(data, "/number") = json!("7");
        *pull(data, "/createdAt") = json!(1_767_225_600);
        data["rateLimit"]["cost"] = json!(1.5);
    });
    assert_eq!(
        problems,
        [
            "data.rateLimit.cost: expected an integer in 32 bits (Int), found 1.5".to_owned(),
            format!("{PR}.number: expected an integer in 32 bits (Int), found \"7\""),
            format!("{PR}.createdAt: expected a string (DateTime), found 1767225600"),
        ]
    );
}

#[test]
fn an_enum_value_must_be_one_of_the_enum() {
    let problems = problems_after(|data| {
        *pull(data, "/files/nodes/0/changeType") = json!("MOVED");
    });
    assert_eq!(
        problems,
        [format!(
            "{PR}.files.nodes[0].changeType: \"MOVED\" is not a value of enum PatchStatus"
        )]
    );
}

#[test]
fn typename_chooses_the_fragments_of_a_union() {
    // A ClosedEvent is a timeline item, but neither fragment applies to it: the fields of
    // a labeled event are not selected for it.
    let problems = problems_after(|data| {
        *pull(data, "/timelineItems/nodes/0/__typename") = json!("ClosedEvent");
    });
    let item = format!("{PR}.timelineItems.nodes[0]");
    assert_eq!(
        problems,
        [
            format!("{item}.actor: not selected"),
            format!("{item}.createdAt: not selected"),
            format!("{item}.label: not selected"),
        ]
    );
    // And the bare ClosedEvent is a well-formed item.
    let problems = problems_after(|data| {
        *pull(data, "/timelineItems/nodes/0") = json!({ "__typename": "ClosedEvent" });
    });
    assert_eq!(problems, Vec::<String>::new());
}

#[test]
fn typename_must_name_a_possible_type() {
    let problems = problems_after(|data| {
        *pull(data, "/timelineItems/nodes/0/__typename") = json!("Label");
        *pull(data, "/author/__typename") = json!("Repository");
    });
    assert_eq!(
        problems,
        [
            format!("{PR}.author.__typename: \"Repository\" is not an object type of Actor"),
            format!(
                "{PR}.timelineItems.nodes[0].__typename: \"Label\" is not an object type of \
                 PullRequestTimelineItems"
            ),
        ]
    );
}

#[test]
fn without_typename_the_fragments_cannot_be_chosen() {
    let problems = problems_after(|data| {
        pull(data, "/timelineItems/nodes/0")
            .as_object_mut()
            .map(|item| item.remove("__typename"));
    });
    let item = format!("{PR}.timelineItems.nodes[0]");
    assert_eq!(
        problems,
        [
            format!(
                "{item}: no `__typename` in the answer, so the fragments on \
                 PullRequestTimelineItems cannot be chosen"
            ),
            format!("{item}.__typename: missing"),
        ]
    );
}

/// The default branches query, as the client builds it for one, two and fifty
/// repositories, validates; an answer as the loopback server renders it fits it
/// (decisions/0075).
#[test]
fn the_default_branches_query_validates_and_its_answers_fit() {
    use mp_github::rest::graphql::{DEFAULT_BRANCHES_PER_QUERY, default_branches_query};
    let github = github();
    for count in [1, 2, DEFAULT_BRANCHES_PER_QUERY] {
        validate(
            &github.schema,
            &default_branches_query(count),
            &format!("MpDefaultBranches({count})"),
        )
        .unwrap_or_else(|errors| panic!("{errors}"));
    }
    let document = validate(&github.schema, &default_branches_query(2), "two")
        .unwrap_or_else(|errors| panic!("{errors}"));
    let rate = json!({ "cost": 1, "remaining": 4999, "resetAt": "2026-03-10T13:00:00Z" });
    let answer = json!({
        "rateLimit": rate,
        "r0": { "defaultBranchRef": { "name": "trunk" } },
        "r1": null,
    });
    assert_eq!(
        response_problems(&github.schema, &document, "MpDefaultBranches", &answer),
        Vec::<String>::new()
    );
    let empty = json!({ "rateLimit": rate, "r0": { "defaultBranchRef": null }, "r1": null });
    assert_eq!(
        response_problems(&github.schema, &document, "MpDefaultBranches", &empty),
        Vec::<String>::new()
    );
    let broken =
        json!({ "rateLimit": rate, "r0": { "defaultBranchRef": { "name": 3 } }, "r1": null });
    assert!(!response_problems(&github.schema, &document, "MpDefaultBranches", &broken).is_empty());
}

#[test]
fn an_unknown_operation_is_a_problem() {
    let github = github();
    let document = validate(&github.schema, OPEN_PULLS, "open_pulls.graphql")
        .unwrap_or_else(|errors| panic!("{errors}"));
    let problems = response_problems(&github.schema, &document, "NoSuchQuery", &json!({}));
    assert_eq!(
        problems,
        ["data: the document has no operation NoSuchQuery"]
    );
}

// --- GitHub's merge queue (decisions/0078) ---------------------------------------------------

/// Problems of `data` as the answer to `operation` of the document `text`.
fn queue_problems(text: &str, file: &str, operation: &str, data: &Value) -> Vec<String> {
    let github = github();
    let document = validate(&github.schema, text, file).unwrap_or_else(|errors| panic!("{errors}"));
    response_problems(&github.schema, &document, operation, data)
}

#[test]
fn the_merge_queue_answers_the_loopback_server_gives_fit_the_schema() {
    // As the fake GitHub's `loopback/graphql_queue.rs` renders them.
    let rate = json!({ "cost": 1, "remaining": 4999, "resetAt": "2026-03-10T13:00:00Z" });
    let entry = json!({
        "position": 1,
        "state": "QUEUED",
        "enqueuedAt": "2026-03-10T12:00:00Z",
        "enqueuer": { "__typename": "Bot", "login": "mp-gate" },
        "headCommit": { "oid": "a".repeat(40) },
    });
    let mut listed = entry.clone();
    listed["pullRequest"] = json!({ "number": 7 });
    let queue = json!({
        "rateLimit": rate,
        "repository": { "mergeQueue": {
            "configuration": { "mergeMethod": "MERGE", "mergingStrategy": "ALLGREEN" },
            "entries": { "totalCount": 1, "nodes": [listed] },
        } },
    });
    let text = include_str!("../src/rest/graphql/merge_queue.graphql");
    assert_eq!(
        queue_problems(text, "merge_queue.graphql", "MpMergeQueue", &queue),
        Vec::<String>::new()
    );
    let none = json!({ "rateLimit": rate, "repository": { "mergeQueue": null } });
    assert_eq!(
        queue_problems(text, "merge_queue.graphql", "MpMergeQueue", &none),
        Vec::<String>::new()
    );

    let pull = json!({
        "rateLimit": rate,
        "repository": { "pullRequest": {
            "id": "PR_acme/app#7",
            "headRefOid": "a".repeat(40),
            "isInMergeQueue": true,
            "mergeQueueEntry": entry,
        } },
    });
    let text = include_str!("../src/rest/graphql/queue_entry.graphql");
    assert_eq!(
        queue_problems(text, "queue_entry.graphql", "MpQueueEntry", &pull),
        Vec::<String>::new()
    );

    let removal = json!({
        "rateLimit": rate,
        "repository": { "pullRequest": { "timelineItems": { "nodes": [{
            "__typename": "RemovedFromMergeQueueEvent",
            "createdAt": "2026-03-10T12:30:00Z",
            "reason": "failed checks",
            "actor": { "__typename": "Bot", "login": "github-merge-queue" },
            "beforeCommit": { "oid": "a".repeat(40) },
        }] } } },
    });
    let text = include_str!("../src/rest/graphql/queue_removal.graphql");
    assert_eq!(
        queue_problems(text, "queue_removal.graphql", "MpQueueRemoval", &removal),
        Vec::<String>::new()
    );
    let never = json!({
        "rateLimit": rate,
        "repository": { "pullRequest": { "timelineItems": { "nodes": [] } } },
    });
    assert_eq!(
        queue_problems(text, "queue_removal.graphql", "MpQueueRemoval", &never),
        Vec::<String>::new()
    );

    let enqueued = json!({ "enqueuePullRequest": { "mergeQueueEntry": entry } });
    let text = include_str!("../src/rest/graphql/enqueue.graphql");
    assert_eq!(
        queue_problems(text, "enqueue.graphql", "MpEnqueue", &enqueued),
        Vec::<String>::new()
    );
    let refused = json!({ "enqueuePullRequest": null });
    assert_eq!(
        queue_problems(text, "enqueue.graphql", "MpEnqueue", &refused),
        Vec::<String>::new()
    );
    // A state GitHub does not have is refused.
    let mut broken = enqueued.clone();
    broken["enqueuePullRequest"]["mergeQueueEntry"]["state"] = json!("WAITING");
    assert!(!queue_problems(text, "enqueue.graphql", "MpEnqueue", &broken).is_empty());

    let dequeued = json!({ "dequeuePullRequest": { "clientMutationId": null } });
    let text = include_str!("../src/rest/graphql/dequeue.graphql");
    assert_eq!(
        queue_problems(text, "dequeue.graphql", "MpDequeue", &dequeued),
        Vec::<String>::new()
    );
}
