//! Our webhook payload models against GitHub's own material (decisions/0033): every example
//! delivery of `@octokit/webhooks-examples` for an event mp reads parses, and what the models
//! extract is what the delivery says; every field the models read is declared in the
//! event's schemas of `@octokit/openapi-webhooks`, for every action, with a type and a
//! nullability the model accepts. And the parser under GitHub's examples mutated (truncated,
//! values of another type, huge numbers, deep nesting, odd Unicode): a model or an error,
//! never a panic nor a recursion past serde_json's limit.
//!
//! `cargo xtask webhooks` fetches both files (`cargo xtask test` runs it first). Without
//! them the tests fail and name that command; they never skip.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::LazyLock;

use mp_serve::payload::{
    CheckRun, CheckRunEvent, CheckSuite, CheckSuiteEvent, Event, GitSide,
    InstallationRepositoriesEvent, InstalledRepository, Issue, IssueEvent, KNOWN_EVENTS, Label,
    MergeGroup, MergeGroupEvent, PullRef, PullRequest, PullRequestEvent, PushEvent, Repository,
    StatusEvent, User,
};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// The environment variable `cargo xtask test` sets to the examples' path.
const EXAMPLES_ENV: &str = "MP_GITHUB_WEBHOOK_EXAMPLES";

/// Where `cargo xtask webhooks` extracts the examples, from the workspace root.
const EXAMPLES_DEFAULT: &str = "target/webhooks/examples.api.github.com.json";

/// The environment variable `cargo xtask test` sets to the schemas' path.
const SCHEMA_ENV: &str = "MP_GITHUB_WEBHOOK_SCHEMA";

/// Where `cargo xtask webhooks` extracts the schemas, from the workspace root.
const SCHEMA_DEFAULT: &str = "target/webhooks/openapi-webhooks.api.github.com.json";

/// The fewest example deliveries each event must have (the pinned package has exactly
/// these), so the examples test cannot pass on an empty or truncated file.
const MIN_EXAMPLES: [(&str, usize); 10] = [
    ("ping", 4),
    ("pull_request", 29),
    ("check_run", 9),
    ("check_suite", 9),
    ("status", 4),
    ("issues", 29),
    ("issue_comment", 9),
    ("push", 7),
    ("installation_repositories", 3),
    ("merge_group", 2),
];

/// The fewest schemas (one per action) each event must have in the pinned description.
const MIN_SCHEMAS: [(&str, usize); 10] = [
    ("ping", 1),
    ("pull_request", 21),
    ("check_run", 4),
    ("check_suite", 3),
    ("status", 1),
    ("issues", 18),
    ("issue_comment", 3),
    ("push", 1),
    ("installation_repositories", 2),
    ("merge_group", 2),
];

/// Known differences between a model and a schema, each with why it is accepted: the
/// webhook (schema key), the field's JSON pointer, and the reason. The schema test fails
/// when one of them no longer occurs, so the list cannot go stale.
const ACCEPTED: &[(&str, &str, &str)] = &[(
    "installation-repositories-added",
    "/repositories_removed/*/full_name",
    "the schema of an `added` delivery does not require `full_name` of a removed \
     repository; GitHub sends `repositories_removed: []` there (every example does, see \
     `an_added_installation_removes_nothing`), and `removed` requires it",
)];

// ---------------------------------------------------------------------------------------
// The two files.

fn path(env: &str, default: &str) -> PathBuf {
    std::env::var_os(env).map_or_else(
        || {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../..")
                .join(default)
        },
        PathBuf::from,
    )
}

fn load(env: &str, default: &str, what: &str) -> Result<Value, String> {
    let path = path(env, default);
    let text = std::fs::read(&path).map_err(|err| {
        format!(
            "GitHub's {what} are missing at {} ({err}): run `cargo xtask webhooks` \
             (`cargo xtask test` runs it first), or set {env} to the file",
            path.display()
        )
    })?;
    serde_json::from_slice(&text).map_err(|err| format!("{}: not JSON: {err}", path.display()))
}

/// `@octokit/webhooks-examples`' `api.github.com/index.json`: one entry per event.
fn examples() -> &'static [Value] {
    static LOADED: LazyLock<Result<Value, String>> = LazyLock::new(|| {
        load(
            EXAMPLES_ENV,
            EXAMPLES_DEFAULT,
            "webhook examples (api.github.com/index.json of the npm package \
             @octokit/webhooks-examples)",
        )
    });
    match &*LOADED {
        Ok(Value::Array(events)) => events,
        Ok(_) => panic!("the webhook examples are not a list of events"),
        Err(why) => panic!("{why}"),
    }
}

/// `@octokit/openapi-webhooks`' `generated/api.github.com.json`.
fn schema() -> &'static Value {
    static LOADED: LazyLock<Result<Value, String>> = LazyLock::new(|| {
        load(
            SCHEMA_ENV,
            SCHEMA_DEFAULT,
            "webhook schemas (generated/api.github.com.json of the npm package \
             @octokit/openapi-webhooks)",
        )
    });
    match &*LOADED {
        Ok(description) => description,
        Err(why) => panic!("{why}"),
    }
}

/// Every example delivery of the events mp reads: event, action (if any), body.
fn deliveries() -> Vec<(&'static str, Option<&'static str>, &'static Value)> {
    let mut out = Vec::new();
    for entry in examples() {
        let Some(name) = entry.get("name").and_then(Value::as_str) else {
            continue;
        };
        let Some(event) = KNOWN_EVENTS.iter().find(|e| **e == name) else {
            continue;
        };
        for body in entry
            .get("examples")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            out.push((*event, body.get("action").and_then(Value::as_str), body));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// What the models read, as JSON in the delivery's shape.

/// What a parsed delivery holds, in the shape of the delivery: `null` where the model has
/// nothing (`None`). `None` for `ping`, whose model reads nothing.
///
/// Every model struct is destructured without `..`, so a field added to a model does not
/// compile until it is projected here (and then listed in [`fields`]).
fn project(event: &Event) -> Option<Value> {
    fn repository(repository: &Repository) -> Value {
        let Repository {
            full_name,
            default_branch,
        } = repository;
        json!({ "full_name": full_name, "default_branch": default_branch })
    }
    fn side(side: &GitSide) -> Value {
        let GitSide { sha, branch } = side;
        json!({ "sha": sha, "ref": branch })
    }
    fn label(label: &Label) -> Value {
        let Label { name } = label;
        json!({ "name": name })
    }
    fn pulls(pulls: &[PullRef]) -> Value {
        pulls
            .iter()
            .map(|PullRef { number }| json!({ "number": number }))
            .collect()
    }
    fn issue_event(event: &IssueEvent) -> Value {
        let IssueEvent {
            action,
            issue,
            repository: repo,
        } = event;
        let Issue {
            number,
            labels,
            pull_request,
        } = issue;
        json!({
            "action": action,
            "issue": {
                "number": number,
                "labels": labels.iter().map(label).collect::<Vec<_>>(),
                "pull_request": pull_request,
            },
            "repository": repository(repo),
        })
    }
    fn installed(repositories: &[InstalledRepository]) -> Value {
        repositories
            .iter()
            .map(|InstalledRepository { full_name }| json!({ "full_name": full_name }))
            .collect()
    }
    Some(match event {
        Event::Ping => return None,
        Event::PullRequest(event) => {
            let PullRequestEvent {
                action,
                pull_request,
                repository: repo,
                sender,
                label: added,
            } = &**event;
            let PullRequest { number, head, base } = pull_request;
            json!({
                "action": action,
                "pull_request": { "number": number, "head": side(head), "base": side(base) },
                "repository": repository(repo),
                "sender": sender.as_ref().map(|User { login }| json!({ "login": login })),
                "label": added.as_ref().map(label),
            })
        }
        Event::CheckRun(event) => {
            let CheckRunEvent {
                action,
                check_run,
                repository: repo,
            } = &**event;
            let CheckRun {
                head_sha,
                name,
                status,
                pull_requests,
            } = check_run;
            json!({
                "action": action,
                "check_run": {
                    "head_sha": head_sha,
                    "name": name,
                    "status": status,
                    "pull_requests": pulls(pull_requests),
                },
                "repository": repository(repo),
            })
        }
        Event::CheckSuite(event) => {
            let CheckSuiteEvent {
                action,
                check_suite,
                repository: repo,
            } = &**event;
            let CheckSuite {
                head_sha,
                pull_requests,
            } = check_suite;
            json!({
                "action": action,
                "check_suite": { "head_sha": head_sha, "pull_requests": pulls(pull_requests) },
                "repository": repository(repo),
            })
        }
        Event::Status(event) => {
            let StatusEvent {
                sha,
                state,
                repository: repo,
            } = &**event;
            json!({ "sha": sha, "state": state, "repository": repository(repo) })
        }
        Event::Issues(event) | Event::IssueComment(event) => issue_event(event),
        Event::Push(event) => {
            let PushEvent {
                git_ref,
                before,
                after,
                deleted,
                repository: repo,
            } = &**event;
            json!({
                "ref": git_ref,
                "before": before,
                "after": after,
                "deleted": deleted,
                "repository": repository(repo),
            })
        }
        Event::InstallationRepositories(event) => {
            let InstallationRepositoriesEvent {
                action,
                repositories_added,
                repositories_removed,
            } = &**event;
            json!({
                "action": action,
                "repositories_added": installed(repositories_added),
                "repositories_removed": installed(repositories_removed),
            })
        }
        Event::MergeGroup(event) => {
            let MergeGroupEvent {
                action,
                merge_group,
                repository: repo,
                reason: _,
            } = &**event;
            let MergeGroup {
                head_sha,
                head_ref,
                base_ref,
            } = merge_group;
            json!({
                "action": action,
                "merge_group": { "head_sha": head_sha, "head_ref": head_ref, "base_ref": base_ref },
                "repository": repo.as_ref().map(repository),
            })
        }
        other => panic!("no projection for {other:?}: add one"),
    })
}

/// Where `model` (a projection) and `raw` (the delivery) disagree, as `<pointer>: <what>`;
/// the pointer shapes (array indices as `*`) of the values the model holds go to `seen`.
///
/// serde's defaults are honoured: an empty list may stand for an absent one and `false`
/// for an absent flag (`#[serde(default)]`); `null` in the model (`None`) matches an
/// absent or `null` field. A model's list never holds `null`, so GitHub's `null` entries
/// are left out before lists are compared (the models either drop them or fail to parse).
fn compare(
    model: &Value,
    raw: Option<&Value>,
    at: &str,
    shape: &str,
    seen: &mut BTreeSet<String>,
    problems: &mut Vec<String>,
) {
    if !model.is_null() && !shape.is_empty() {
        seen.insert(shape.to_owned());
    }
    match (model, raw) {
        (Value::Null, None | Some(Value::Null)) => {}
        (Value::Null, Some(sent)) => {
            problems.push(format!("{at}: the model has nothing, GitHub sent {sent}"));
        }
        (Value::Object(fields), Some(Value::Object(sent))) => {
            for (key, value) in fields {
                let escaped = key.replace('~', "~0").replace('/', "~1");
                compare(
                    value,
                    sent.get(key),
                    &format!("{at}/{escaped}"),
                    &format!("{shape}/{escaped}"),
                    seen,
                    problems,
                );
            }
        }
        (Value::Array(items), Some(Value::Array(sent)))
            if items.len() == sent.iter().filter(|v| !v.is_null()).count() =>
        {
            let sent = sent.iter().enumerate().filter(|(_, v)| !v.is_null());
            for (item, (i, sent)) in items.iter().zip(sent) {
                compare(
                    item,
                    Some(sent),
                    &format!("{at}/{i}"),
                    &format!("{shape}/*"),
                    seen,
                    problems,
                );
            }
        }
        (Value::Array(items), None) if items.is_empty() => {}
        (Value::Bool(false), None) => {}
        (model, Some(sent)) if model == sent => {}
        (model, sent) => problems.push(format!(
            "{at}: the model has {model}, GitHub sent {}",
            sent.map_or_else(|| "nothing".to_owned(), Value::to_string)
        )),
    }
}

// ---------------------------------------------------------------------------------------
// What the models declare about the fields they read.

/// How a model takes a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Presence {
    /// A plain field: it must be there and not `null`.
    Required,
    /// `#[serde(default)]` on a non-`Option`: it may be absent, never `null`.
    Defaulted,
    /// An `Option`: absent and `null` are both fine.
    Optional,
}

/// The JSON type a model's field takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    String,
    Integer,
    Boolean,
    Array,
    Object,
    /// `serde_json::Value`: anything.
    Any,
}

impl Kind {
    fn json_type(self) -> Option<&'static str> {
        match self {
            Self::String => Some("string"),
            Self::Integer => Some("integer"),
            Self::Boolean => Some("boolean"),
            Self::Array => Some("array"),
            Self::Object => Some("object"),
            Self::Any => None,
        }
    }
}

/// One field a model reads: its JSON pointer in the delivery (`*` for every element of a
/// list), how the model takes it, and its type.
type Field = (&'static str, Presence, Kind);

/// The fields the model of `event` reads, parents before children. `ping` reads none.
fn fields(event: &str) -> Vec<Field> {
    use Kind::{Any, Array, Boolean, Integer, Object, String};
    use Presence::{Defaulted, Optional, Required};
    let repository: [Field; 3] = [
        ("/repository", Required, Object),
        ("/repository/full_name", Required, String),
        ("/repository/default_branch", Optional, String),
    ];
    let own: Vec<Field> = match event {
        "pull_request" => vec![
            ("/action", Required, String),
            ("/pull_request", Required, Object),
            ("/pull_request/number", Required, Integer),
            ("/pull_request/head", Required, Object),
            ("/pull_request/head/sha", Required, String),
            ("/pull_request/head/ref", Required, String),
            ("/pull_request/base", Required, Object),
            ("/pull_request/base/sha", Required, String),
            ("/pull_request/base/ref", Required, String),
            ("/sender", Optional, Object),
            ("/sender/login", Required, String),
            ("/label", Optional, Object),
            ("/label/name", Required, String),
        ],
        "check_run" => vec![
            ("/action", Required, String),
            ("/check_run", Required, Object),
            ("/check_run/head_sha", Required, String),
            ("/check_run/name", Required, String),
            ("/check_run/status", Required, String),
            ("/check_run/pull_requests", Defaulted, Array),
            ("/check_run/pull_requests/*", Required, Object),
            ("/check_run/pull_requests/*/number", Required, Integer),
        ],
        "check_suite" => vec![
            ("/action", Required, String),
            ("/check_suite", Required, Object),
            ("/check_suite/head_sha", Required, String),
            ("/check_suite/pull_requests", Defaulted, Array),
            ("/check_suite/pull_requests/*", Required, Object),
            ("/check_suite/pull_requests/*/number", Required, Integer),
        ],
        "status" => vec![("/sha", Required, String), ("/state", Required, String)],
        "issues" | "issue_comment" => vec![
            ("/action", Required, String),
            ("/issue", Required, Object),
            ("/issue/number", Required, Integer),
            ("/issue/labels", Defaulted, Array),
            // `null` entries are dropped (some `issues` schemas allow them).
            ("/issue/labels/*", Optional, Object),
            ("/issue/labels/*/name", Required, String),
            ("/issue/pull_request", Optional, Any),
        ],
        "push" => vec![
            ("/ref", Required, String),
            ("/before", Required, String),
            ("/after", Required, String),
            ("/deleted", Defaulted, Boolean),
        ],
        "installation_repositories" => {
            return vec![
                ("/action", Required, String),
                ("/repositories_added", Defaulted, Array),
                ("/repositories_added/*", Required, Object),
                ("/repositories_added/*/full_name", Required, String),
                ("/repositories_removed", Defaulted, Array),
                ("/repositories_removed/*", Required, Object),
                ("/repositories_removed/*/full_name", Required, String),
            ];
        }
        "merge_group" => {
            return vec![
                ("/action", Required, String),
                ("/merge_group", Required, Object),
                ("/merge_group/head_sha", Required, String),
                ("/merge_group/head_ref", Required, String),
                ("/merge_group/base_ref", Required, String),
                ("/repository", Optional, Object),
                ("/repository/full_name", Required, String),
                ("/repository/default_branch", Optional, String),
            ];
        }
        _ => return Vec::new(),
    };
    own.into_iter().chain(repository).collect()
}

/// The pointer of a field's parent; `""` for a top-level field.
fn parent(pointer: &str) -> &str {
    pointer.rsplit_once('/').map_or("", |(parent, _)| parent)
}

// ---------------------------------------------------------------------------------------
// Reading the webhook schemas (OpenAPI 3.1: JSON Schema 2020-12 with `$ref`s into
// `components/schemas`).

/// One way a schema can be satisfied: schema objects that all apply (an `allOf`).
type Alternative<'a> = Vec<&'a Map<String, Value>>;

/// What a schema says about one field across the alternatives of its parent.
#[derive(Debug)]
struct Facts {
    /// Alternatives of the parent that are objects (or arrays, for `*`).
    of: usize,
    /// Of those, the ones that declare the field.
    declared_in: usize,
    /// Of those, the ones that require it.
    required_in: usize,
    /// Whether some alternative of the field allows `null`.
    nullable: bool,
    /// The JSON types the field's alternatives allow (`any` for an untyped one).
    types: BTreeSet<String>,
}

struct Schemas<'a> {
    components: &'a Map<String, Value>,
}

impl<'a> Schemas<'a> {
    fn new(description: &'a Value) -> Self {
        let components = description
            .pointer("/components/schemas")
            .and_then(Value::as_object)
            .expect("the webhook description has components/schemas");
        Self { components }
    }

    /// `node` with its `$ref`s followed.
    fn deref(&self, mut node: &'a Value) -> &'a Value {
        for _ in 0..64 {
            let Some(reference) = node.get("$ref").and_then(Value::as_str) else {
                return node;
            };
            let name = reference
                .strip_prefix("#/components/schemas/")
                .unwrap_or_else(|| panic!("unexpected $ref {reference}"));
            node = self
                .components
                .get(name)
                .unwrap_or_else(|| panic!("no schema {name}"));
        }
        panic!("a $ref cycle");
    }

    /// The alternatives of a schema: `allOf` conjoins, `anyOf` and `oneOf` branch.
    fn alternatives(&self, node: &'a Value) -> Vec<Alternative<'a>> {
        match self.deref(node) {
            Value::Bool(true) => vec![Vec::new()],
            Value::Object(object) => {
                let mut out: Vec<Alternative<'a>> = vec![vec![object]];
                if let Some(Value::Array(all)) = object.get("allOf") {
                    for member in all {
                        out = conjoin(&out, &self.alternatives(member));
                    }
                }
                for key in ["anyOf", "oneOf"] {
                    if let Some(Value::Array(branches)) = object.get(key) {
                        let branches: Vec<Alternative<'a>> = branches
                            .iter()
                            .flat_map(|branch| self.alternatives(branch))
                            .collect();
                        out = conjoin(&out, &branches);
                    }
                }
                out
            }
            // `false` and anything else: nothing validates.
            _ => Vec::new(),
        }
    }

    /// What the schema `root` says about the field at `pointer`; `None` when a parent of
    /// the field is declared nowhere (the parent's own check covers it).
    fn facts(&self, root: &'a Value, pointer: &str) -> Option<Facts> {
        let mut current = self.alternatives(root);
        let mut facts = None;
        for segment in pointer.trim_start_matches('/').split('/') {
            if facts.as_ref().is_some_and(|f: &Facts| f.declared_in == 0) {
                return None;
            }
            let segment = segment.replace("~1", "/").replace("~0", "~");
            let mut next = Vec::new();
            let (mut of, mut declared_in, mut required_in) = (0, 0, 0);
            for alternative in current.iter().filter(|a| !is_null_only(a)) {
                let (children, required) = if segment == "*" {
                    if !types(alternative).is_none_or(|t| t.contains("array")) {
                        continue;
                    }
                    let items: Vec<&Value> =
                        alternative.iter().filter_map(|s| s.get("items")).collect();
                    (items, true)
                } else {
                    if !types(alternative).is_none_or(|t| t.contains("object")) {
                        continue;
                    }
                    let children: Vec<&Value> = alternative
                        .iter()
                        .filter_map(|s| s.get("properties")?.get(&segment))
                        .collect();
                    let required = alternative.iter().any(|s| {
                        s.get("required")
                            .and_then(Value::as_array)
                            .is_some_and(|r| r.iter().any(|n| n.as_str() == Some(&segment)))
                    });
                    (children, required)
                };
                of += 1;
                if children.is_empty() {
                    continue;
                }
                declared_in += 1;
                if required {
                    required_in += 1;
                }
                let mut conjoined: Vec<Alternative<'a>> = vec![Vec::new()];
                for child in children {
                    conjoined = conjoin(&conjoined, &self.alternatives(child));
                }
                next.extend(conjoined);
            }
            let mut nullable = false;
            let mut kinds = BTreeSet::new();
            for alternative in &next {
                match types(alternative) {
                    None => {
                        nullable = true;
                        kinds.insert("any".to_owned());
                    }
                    Some(t) => {
                        nullable |= t.contains("null");
                        kinds.extend(t.into_iter().filter(|k| k != "null"));
                    }
                }
            }
            facts = Some(Facts {
                of,
                declared_in,
                required_in,
                nullable,
                types: kinds,
            });
            current = next;
        }
        facts
    }
}

/// Every alternative of `left` with every alternative of `right`.
fn conjoin<'a>(left: &[Alternative<'a>], right: &[Alternative<'a>]) -> Vec<Alternative<'a>> {
    left.iter()
        .flat_map(|l| {
            right
                .iter()
                .map(move |r| l.iter().chain(r).copied().collect())
        })
        .collect()
}

/// The JSON types an alternative allows; `None` when no member constrains the type.
fn types(alternative: &Alternative<'_>) -> Option<BTreeSet<String>> {
    let mut allowed: Option<BTreeSet<String>> = None;
    for schema in alternative {
        let mut these: BTreeSet<String> = match schema.get("type") {
            Some(Value::String(t)) => [t.clone()].into(),
            Some(Value::Array(ts)) => ts
                .iter()
                .filter_map(|t| t.as_str().map(str::to_owned))
                .collect(),
            _ => continue,
        };
        if schema.get("nullable") == Some(&Value::Bool(true)) {
            these.insert("null".to_owned());
        }
        if these.contains("number") {
            these.insert("integer".to_owned());
        }
        allowed = Some(match allowed {
            None => these,
            Some(before) => before.intersection(&these).cloned().collect(),
        });
    }
    allowed
}

fn is_null_only(alternative: &Alternative<'_>) -> bool {
    types(alternative).is_some_and(|t| t.len() == 1 && t.contains("null"))
}

/// What is wrong with a field the model takes as `presence` and `kind`, given the facts.
fn disagreements(presence: Presence, kind: Kind, facts: &Facts) -> Vec<String> {
    let mut out = Vec::new();
    if presence == Presence::Required {
        if facts.declared_in < facts.of {
            out.push(format!(
                "required by the model, declared in {} of {} alternatives",
                facts.declared_in, facts.of
            ));
        } else if facts.required_in < facts.of {
            out.push("required by the model, optional in the schema".to_owned());
        }
    }
    if presence != Presence::Optional && facts.nullable {
        out.push(format!(
            "{presence:?} in the model (null fails to parse), nullable in the schema"
        ));
    }
    if facts.declared_in > 0
        && let Some(expected) = kind.json_type()
    {
        let other: Vec<&String> = facts.types.iter().filter(|t| *t != expected).collect();
        if !other.is_empty() {
            out.push(format!(
                "the model reads {expected}, the schema allows {other:?}"
            ));
        }
    }
    out
}

/// The webhooks (schema key -> schema) of an event, by the description's
/// `x-github.subcategory`.
fn webhooks_of(description: &Value) -> BTreeMap<&str, Vec<(&str, &Value)>> {
    let mut out: BTreeMap<&str, Vec<(&str, &Value)>> = BTreeMap::new();
    let hooks = description
        .get("webhooks")
        .and_then(Value::as_object)
        .expect("the webhook description has webhooks");
    for (key, hook) in hooks {
        let Some(event) = hook
            .pointer("/post/x-github/subcategory")
            .and_then(Value::as_str)
            .and_then(|e| KNOWN_EVENTS.iter().find(|k| **k == e))
        else {
            continue;
        };
        let schema = hook
            .pointer("/post/requestBody/content/application~1json/schema")
            .unwrap_or_else(|| panic!("webhook {key} has no JSON body"));
        out.entry(event).or_default().push((key.as_str(), schema));
    }
    out
}

/// The webhook's key of an event and action: `pull-request-labeled`, `push`.
fn webhook_key(event: &str, action: Option<&str>) -> String {
    let mut key = event.replace('_', "-");
    if let Some(action) = action {
        key.push('-');
        key.push_str(&action.replace('_', "-"));
    }
    key
}

// ---------------------------------------------------------------------------------------
// The tests.

#[test]
fn every_example_parses_and_the_models_read_what_github_sent() {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut seen: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    let mut problems = Vec::new();
    for (event, action, body) in deliveries() {
        *counts.entry(event).or_default() += 1;
        let name = format!("{event} {}", action.unwrap_or("(no action)"));
        let bytes = serde_json::to_vec(body).expect("an example serializes");
        let parsed = match Event::parse(event, &bytes) {
            Ok(parsed) => parsed,
            Err(err) => {
                problems.push(format!("{name}: {err}"));
                continue;
            }
        };
        let Some(model) = project(&parsed) else {
            assert!(
                matches!(parsed, Event::Ping),
                "{name}: parsed as {parsed:?}"
            );
            continue;
        };
        let mut mismatches = Vec::new();
        compare(
            &model,
            Some(body),
            "",
            "",
            seen.entry(event).or_default(),
            &mut mismatches,
        );
        problems.extend(mismatches.into_iter().map(|m| format!("{name}: {m}")));
    }
    assert!(
        problems.is_empty(),
        "GitHub's example deliveries disagree with our models:\n{}",
        problems.join("\n")
    );
    for (event, min) in MIN_EXAMPLES {
        let count = counts.get(event).copied().unwrap_or(0);
        assert!(
            count >= min,
            "{event}: {count} example deliveries, expected at least {min}"
        );
    }
    assert_eq!(
        MIN_EXAMPLES.map(|(e, _)| e),
        KNOWN_EVENTS,
        "every known event has a minimum"
    );
    // The projections and the field table describe the same fields: each field the
    // projection holds is listed, and each listed field held a value in some example.
    for event in KNOWN_EVENTS {
        let listed: BTreeSet<String> = fields(event)
            .iter()
            .map(|(pointer, _, _)| (*pointer).to_owned())
            .collect();
        let anything: Vec<&str> = fields(event)
            .iter()
            .filter(|(_, _, kind)| *kind == Kind::Any)
            .map(|(pointer, _, _)| *pointer)
            .collect();
        // Events read by one model (`issues`, `issue_comment`) share their examples here.
        let held: BTreeSet<String> = KNOWN_EVENTS
            .iter()
            .filter(|other| fields(other) == fields(event))
            .filter_map(|other| seen.get(other))
            .flatten()
            .cloned()
            .collect();
        for shape in &held {
            let under_any = anything
                .iter()
                .any(|a| shape.strip_prefix(a).is_some_and(|r| r.starts_with('/')));
            assert!(
                listed.contains(shape) || under_any,
                "{event}: the model reads {shape}, which `fields` does not list"
            );
        }
        for pointer in &listed {
            assert!(
                held.contains(pointer),
                "{event}: {pointer} is listed but held a value in no example of its model"
            );
        }
    }
}

#[test]
fn every_example_has_a_schema() {
    let description = schema();
    let hooks = description
        .get("webhooks")
        .and_then(Value::as_object)
        .expect("the webhook description has webhooks");
    let mut missing = BTreeSet::new();
    for (event, action, _) in deliveries() {
        let key = webhook_key(event, action);
        if !hooks.contains_key(&key) {
            missing.insert(key);
        }
    }
    assert!(
        missing.is_empty(),
        "examples without a webhook schema: {missing:?}"
    );
}

#[test]
fn the_models_fields_are_declared_in_githubs_webhook_schemas() {
    let description = schema();
    let schemas = Schemas::new(description);
    let by_event = webhooks_of(description);
    let mut problems = Vec::new();
    let mut accepted_seen = BTreeSet::new();
    assert_eq!(
        MIN_SCHEMAS.map(|(e, _)| e),
        KNOWN_EVENTS,
        "every known event has a minimum"
    );
    for (event, min) in MIN_SCHEMAS {
        let hooks = by_event.get(event).map(Vec::as_slice).unwrap_or_default();
        assert!(
            hooks.len() >= min,
            "{event}: {} webhook schemas, expected at least {min}",
            hooks.len()
        );
        let fields = fields(event);
        let mut declared_somewhere: BTreeSet<&str> = BTreeSet::new();
        for (pointer, _, _) in &fields {
            let up = parent(pointer);
            assert!(
                up.is_empty() || fields.iter().any(|(p, _, _)| *p == up),
                "{event}: {pointer}'s parent {up} is not listed"
            );
        }
        for (key, root) in hooks {
            for (pointer, presence, kind) in &fields {
                let Some(facts) = schemas.facts(root, pointer) else {
                    continue;
                };
                if facts.declared_in > 0 {
                    declared_somewhere.insert(pointer);
                }
                for why in disagreements(*presence, *kind, &facts) {
                    if ACCEPTED.iter().any(|(k, p, _)| k == key && p == pointer) {
                        accepted_seen.insert((*key, *pointer));
                        continue;
                    }
                    problems.push(format!("{key} {pointer}: {why}"));
                }
            }
        }
        for (pointer, _, _) in &fields {
            if !declared_somewhere.contains(pointer) {
                problems.push(format!(
                    "{event} {pointer}: declared in none of the event's schemas"
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "our payload models disagree with GitHub's webhook schemas:\n{}",
        problems.join("\n")
    );
    for (key, pointer, why) in ACCEPTED {
        assert!(
            accepted_seen.contains(&(*key, *pointer)),
            "{key} {pointer} is accepted as a known difference ({why}) but agrees now: \
             remove it from ACCEPTED"
        );
    }
}

#[test]
fn an_added_installation_removes_nothing() {
    let mut added = 0;
    for (event, action, body) in deliveries() {
        if event == "installation_repositories" && action == Some("added") {
            added += 1;
            assert_eq!(body.get("repositories_removed"), Some(&json!([])));
        }
    }
    assert!(added > 0, "no example of an added installation");
}

/// A negative check of the comparison: a delivery that says something else than the model
/// read is reported, field by field.
#[test]
fn a_changed_delivery_is_caught() {
    let (_, _, body) = deliveries()
        .into_iter()
        .find(|(event, _, _)| *event == "pull_request")
        .expect("a `pull_request` example");
    let bytes = serde_json::to_vec(body).expect("serializes");
    let model = project(&Event::parse("pull_request", &bytes).expect("parses")).expect("projected");
    let mut changed = body.clone();
    changed["pull_request"]["head"]["sha"] = json!("0000000000000000000000000000000000000000");
    changed["repository"]["full_name"] = json!("someone/else");
    changed["sender"] = Value::Null;
    let (mut seen, mut problems) = (BTreeSet::new(), Vec::new());
    compare(&model, Some(&changed), "", "", &mut seen, &mut problems);
    let at: Vec<&str> = problems
        .iter()
        .filter_map(|p| p.split_once(':').map(|(at, _)| at))
        .collect();
    assert_eq!(
        at,
        ["/pull_request/head/sha", "/repository/full_name", "/sender"],
        "{problems:?}"
    );
}

/// Some `issues` schemas allow `null` among an issue's labels; such a delivery parses, and
/// the labels are the others.
#[test]
fn a_null_label_is_dropped() {
    let (_, _, body) = deliveries()
        .into_iter()
        .find(|(event, action, body)| {
            *event == "issues"
                && *action == Some("labeled")
                && body.pointer("/issue/labels/0/name").is_some()
        })
        .expect("an `issues` `labeled` example with a label");
    let mut body = body.clone();
    let labels = body
        .pointer_mut("/issue/labels")
        .and_then(Value::as_array_mut)
        .expect("labels");
    let names: Vec<Value> = labels.iter().map(|l| l["name"].clone()).collect();
    labels.insert(0, Value::Null);
    labels.push(Value::Null);
    let bytes = serde_json::to_vec(&body).expect("serializes");
    let Ok(Event::Issues(event)) = Event::parse("issues", &bytes) else {
        panic!("an issue with null labels does not parse");
    };
    let parsed: Vec<Value> = event.issue.labels.iter().map(|l| json!(l.name)).collect();
    assert_eq!(parsed, names);
    let mut seen = BTreeSet::new();
    let mut problems = Vec::new();
    let model = project(&Event::Issues(event)).expect("a projection");
    compare(&model, Some(&body), "", "", &mut seen, &mut problems);
    assert!(problems.is_empty(), "{problems:?}");
}

/// A negative check of the schema reading: a field the model requires but a schema makes
/// nullable, optional or of another type is reported.
#[test]
fn the_schema_reading_finds_what_it_should() {
    let description = json!({
        "components": { "schemas": {
            "repo": { "type": "object", "required": ["full_name"],
                      "properties": { "full_name": { "type": "string" } } },
            "loose": { "type": "object",
                       "properties": { "full_name": { "type": ["string", "null"] },
                                       "number": { "type": "string" } } }
        } },
        "webhooks": {}
    });
    let schemas = Schemas::new(&description);
    let strict = json!({ "type": "object", "required": ["repository"],
                         "properties": { "repository": { "$ref": "#/components/schemas/repo" } } });
    let facts = schemas
        .facts(&strict, "/repository/full_name")
        .expect("declared");
    assert!(disagreements(Presence::Required, Kind::String, &facts).is_empty());

    let loose = json!({ "properties": { "repository": {
        "anyOf": [{ "$ref": "#/components/schemas/repo" }, { "$ref": "#/components/schemas/loose" }, { "type": "null" }]
    } } });
    let facts = schemas
        .facts(&loose, "/repository/full_name")
        .expect("declared");
    assert_eq!(
        disagreements(Presence::Required, Kind::String, &facts),
        [
            "required by the model, optional in the schema",
            "Required in the model (null fails to parse), nullable in the schema",
        ]
    );
    assert!(disagreements(Presence::Optional, Kind::String, &facts).is_empty());
    let facts = schemas.facts(&loose, "/repository").expect("declared");
    assert!(facts.nullable && facts.required_in == 0);
    let facts = schemas
        .facts(&loose, "/repository/number")
        .expect("declared");
    assert_eq!(
        disagreements(Presence::Optional, Kind::Integer, &facts),
        ["the model reads integer, the schema allows [\"string\"]"]
    );
    assert!(schemas.facts(&loose, "/label/name").is_none());
}

// ---------------------------------------------------------------------------------------
// The parser under mutated deliveries: GitHub's examples truncated, with values of another
// type, huge numbers, deep nesting and odd Unicode. The body reaching the parser is signed
// and at most `--max-body-bytes`, but a parser that panics or recurses without bound on a
// signed body would still take the service down, so it must answer every body with a model
// or an error.

/// How deep the nesting tests go: far past serde_json's recursion limit (128), so an
/// unbounded recursion would overflow the test thread's stack and crash the binary.
const DEEP: usize = 100_000;

/// Every node of `value` by a path of keys and indexes, in document order.
fn node_paths(value: &Value, at: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    out.push(at.clone());
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                at.push(Step::Key(key.clone()));
                node_paths(child, at, out);
                at.pop();
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                at.push(Step::Index(index));
                node_paths(child, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
}

fn node_mut<'v>(value: &'v mut Value, path: &[Step]) -> &'v mut Value {
    path.iter().fold(value, |node, step| match step {
        Step::Key(key) => &mut node[key.as_str()],
        Step::Index(index) => &mut node[*index],
    })
}

/// One mutation of a delivery's body.
#[derive(Debug, Clone)]
enum Mutation {
    /// Cut the text at this fraction (per mille) of its length.
    Truncate(u16),
    /// Replace the node chosen (by index, modulo the node count) with this value.
    Replace(usize, Value),
    /// Wrap the node chosen in this many arrays (`true`) or objects.
    Nest(usize, usize, bool),
    /// Overwrite this many raw bytes at a position (per mille).
    Bytes(u16, Vec<u8>),
}

fn odd_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        // Numbers no integer type holds, and a float beyond f64: raw JSON text.
        Just(serde_json::from_str::<Value>("18446744073709551616").unwrap_or(Value::Null)),
        Just(serde_json::from_str::<Value>("-9223372036854775809").unwrap_or(Value::Null)),
        Just(serde_json::from_str::<Value>("1e308").unwrap_or(Value::Null)),
        any::<String>().prop_map(Value::String),
        "[\\u{0}-\\u{10FFFF}]{0,40}".prop_map(Value::String),
        Just(json!("\u{0}\u{200B}\u{FEFF}\u{1F600}e\u{301}")),
        Just(json!([])),
        Just(json!({})),
        Just(json!([1, "a", null, {"b": [true]}])),
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (0_u16..1000).prop_map(Mutation::Truncate),
        (any::<usize>(), odd_value()).prop_map(|(at, v)| Mutation::Replace(at, v)),
        (any::<usize>(), 1_usize..300, any::<bool>())
            .prop_map(|(at, depth, arrays)| Mutation::Nest(at, depth, arrays)),
        (0_u16..1000, prop::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(at, bytes)| Mutation::Bytes(at, bytes)),
    ]
}

fn per_mille(len: usize, at: u16) -> usize {
    len * usize::from(at) / 1000
}

/// The body `mutation` makes of `body`.
fn mutate(body: &Value, mutation: &Mutation) -> Vec<u8> {
    let text = serde_json::to_vec(body).expect("JSON");
    let (at, change) = match mutation {
        Mutation::Truncate(at) => return text[..per_mille(text.len(), *at)].to_vec(),
        Mutation::Bytes(at, bytes) => {
            let mut text = text;
            let start = per_mille(text.len(), *at);
            for (offset, byte) in bytes.iter().enumerate() {
                if let Some(slot) = text.get_mut(start + offset) {
                    *slot = *byte;
                }
            }
            return text;
        }
        Mutation::Replace(at, _) | Mutation::Nest(at, _, _) => (*at, mutation),
    };
    let mut paths = Vec::new();
    node_paths(body, &mut Vec::new(), &mut paths);
    let path = &paths[at % paths.len()];
    let mut body = body.clone();
    let node = node_mut(&mut body, path);
    match change {
        Mutation::Replace(_, value) => *node = value.clone(),
        Mutation::Nest(_, depth, arrays) => {
            let mut nested = node.take();
            for _ in 0..*depth {
                nested = if *arrays {
                    Value::Array(vec![nested])
                } else {
                    json!({ "n": nested })
                };
            }
            *node = nested;
        }
        Mutation::Truncate(_) | Mutation::Bytes(..) => {}
    }
    serde_json::to_vec(&body).expect("JSON")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Every mutation of every example is answered with a model or an error, never a
    /// panic; the whole body nested past serde_json's limit is an error.
    #[test]
    fn a_mutated_github_delivery_is_parsed_or_refused_never_a_panic(
        pick in any::<usize>(),
        mutation in mutation(),
    ) {
        let all = deliveries();
        let (event, _, body) = all[pick % all.len()];
        let bytes = mutate(body, &mutation);
        let parsed = Event::parse(event, &bytes);
        // Past 128 levels (the root wrapped, node 0), the body is refused.
        if let Mutation::Nest(0, depth, _) = mutation && depth >= 128 {
            prop_assert!(parsed.is_err(), "{event}: nested {depth} deep");
        }
    }
}

/// A body of `depth` nested arrays (or objects), as raw text: built without recursion.
fn nested_text(depth: usize, arrays: bool) -> String {
    let (open, close) = if arrays { ("[", "]") } else { ("{\"n\":", "}") };
    let mut text = String::with_capacity(depth * (open.len() + close.len()) + 4);
    for _ in 0..depth {
        text.push_str(open);
    }
    text.push('1');
    for _ in 0..depth {
        text.push_str(close);
    }
    text
}

#[test]
fn a_deeply_nested_delivery_is_refused_not_recursed_into() {
    for event in KNOWN_EVENTS {
        // A body of nested arrays: refused (by a model at its first field's type, by
        // `ping`'s plain JSON value at serde_json's recursion limit), never a crash.
        let parsed = Event::parse(event, nested_text(DEEP, true).as_bytes());
        let error = parsed.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            !error.is_empty(),
            "{event}: a body nested {DEEP} deep is refused"
        );
        if event == "ping" {
            assert!(error.contains("recursion limit exceeded"), "{error}");
        }
        // Nested objects under a field no model reads are skipped without recursion
        // (serde_json's `ignore_value` keeps its own stack, bounded by the body's size):
        // no crash, whatever the answer.
        for arrays in [true, false] {
            let skipped = format!(
                "{{\"zzz_unknown\":{},\"action\":\"opened\"}}",
                nested_text(DEEP, arrays)
            );
            let _ = Event::parse(event, skipped.as_bytes());
        }
    }
    // The models are flat (a field they read never holds a free-form value), so only a
    // plain JSON value (`ping`'s) descends into nested objects: refused at the limit.
    let error = Event::parse(
        "ping",
        format!("{{\"hook\":{}}}", nested_text(DEEP, false)).as_bytes(),
    )
    .err()
    .map(|e| e.to_string())
    .unwrap_or_default();
    assert!(error.contains("recursion limit exceeded"), "{error}");
}
