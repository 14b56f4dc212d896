//! The GraphQL read path (decisions/0035): a repository's open pull requests with their
//! commits, files, label events, comments, head check runs and the records of their labels,
//! and the repository's default branch with its head, one query per page of pull requests
//! (`graphql/open_pulls.graphql`), mapped to exactly what the REST reads answer
//! (decisions/0075). The default branches of all repositories come in one more query
//! ([`default_branches_query`]).
//!
//! A part that does not fit (a connection cut at its `first`, a renamed or copied file,
//! whose previous path GraphQL does not give, a commit with more parents than asked for, a
//! head commit other than the listed head, a part GitHub answered `null` with an error) is
//! left `None`, and the tick reads it over REST for that pull request alone. A query that
//! fails as a whole (GraphQL's own rate limit, an error without data, an answer that does
//! not decode) falls back to the REST listing for the repository; only the limits shared
//! with REST (a secondary limit, the primary REST limit) end the read, and a repository
//! GitHub does not know (`repository: null` with `NOT_FOUND`) is `NotFound`, as the REST
//! listing's 404 would be.

use mp_core::context::{
    CheckConclusion, CheckRun, CheckStatus, Comment, CommentId, CommitContext, FileChange,
    FileStatus, LabelAction, LabelEvent, LabelRecord, PrState,
};
use mp_core::ids::{CommitSha, Login, PrNumber, RepoName, Timestamp};
use mp_core::port::{GitHubError, ListedPull, PullReads, PullRequest};
use serde::Deserialize;
use serde_json::json;

use super::RestGitHub;
use super::transport::Request;

/// The query, validated against GitHub's published schema by `tests/graphql_schema.rs`.
pub const OPEN_PULLS_QUERY: &str = include_str!("graphql/open_pulls.graphql");

/// GitHub's record of one label (`graphql/label.graphql`), read in both read paths: REST's
/// label object has no times (decisions/0048).
pub const LABEL_QUERY: &str = include_str!("graphql/label.graphql");

/// The default branches of `count` repositories in one query, `MpDefaultBranches`: each
/// repository under the alias `r{i}` with the variables `o{i}` (owner) and `n{i}` (name).
/// GitHub's `Repository.defaultBranchRef.name` is REST's `default_branch`
/// (decisions/0075).
#[must_use]
pub fn default_branches_query(count: usize) -> String {
    let mut variables = Vec::with_capacity(count);
    let mut fields = String::new();
    for i in 0..count {
        variables.push(format!("$o{i}: String!, $n{i}: String!"));
        fields.push_str(&format!(
            "  r{i}: repository(owner: $o{i}, name: $n{i}) {{\n    defaultBranchRef {{\n      name\n    }}\n  }}\n"
        ));
    }
    format!(
        "query MpDefaultBranches({}) {{\n  rateLimit {{\n    cost\n    remaining\n    resetAt\n  }}\n{fields}}}\n",
        variables.join(", ")
    )
}

/// Repositories per [`default_branches_query`]: GitHub limits a query's nodes, and a query
/// of this many costs one point.
pub const DEFAULT_BRANCHES_PER_QUERY: usize = 50;

/// The route the query is counted under.
pub const GRAPHQL_ROUTE: &str = "POST /graphql";

/// Pull requests on the first page: most repositories have fewer open, and GitHub charges
/// a page by its `first`, not by what it holds.
pub const FIRST_PAGE: u32 = 10;
/// Pull requests on each later page.
pub const LATER_PAGES: u32 = 25;

/// GraphQL points the path leaves unspent: below this many, the tick reads over REST.
pub const GRAPHQL_RESERVE: u32 = 200;

/// Where the REST client reads a repository's pull requests from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ReadPath {
    /// One REST call per part of each pull request.
    #[default]
    Rest,
    /// One GraphQL query per page of pull requests; REST for what does not fit.
    Graphql,
}

#[derive(Debug, Deserialize)]
struct Answer {
    data: Option<Data>,
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
#[serde(rename_all = "camelCase")]
struct Data {
    rate_limit: Option<RateLimit>,
    repository: Option<Repository>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RateLimit {
    remaining: u32,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Repository {
    default_branch_ref: Option<RefNode>,
    pull_requests: Connection<PullNode>,
}

/// A branch and the object it points at (`null` when the object does not exist).
#[derive(Debug, Deserialize)]
struct RefNode {
    name: String,
    target: Option<Oid>,
}

impl RefNode {
    /// The branch and its head, when both are there.
    fn tip(&self) -> Option<(String, CommitSha)> {
        let head = CommitSha::parse(&self.target.as_ref()?.oid).ok()?;
        Some((self.name.clone(), head))
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Connection<T> {
    #[serde(default)]
    total_count: Option<u64>,
    #[serde(default)]
    page_info: Option<PageInfo>,
    nodes: Option<Vec<Option<T>>>,
}

impl<T> Connection<T> {
    /// Every node, when the connection holds them all and none is `null`.
    fn whole(self) -> Option<Vec<T>> {
        let nodes: Vec<T> = self.nodes?.into_iter().collect::<Option<_>>()?;
        let total = self.total_count?;
        (u64::try_from(nodes.len()).ok()? == total).then_some(nodes)
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PageInfo {
    has_next_page: bool,
    end_cursor: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Actor {
    #[serde(rename = "__typename")]
    typename: String,
    login: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PullNode {
    number: u64,
    title: String,
    body: String,
    created_at: Option<String>,
    author: Option<Actor>,
    head_ref_name: String,
    head_ref_oid: String,
    head_repository: Option<NameWithOwner>,
    base_ref_name: String,
    base_ref_oid: String,
    labels: Option<Connection<LabelNode>>,
    commits: Option<Connection<PullCommit>>,
    files: Option<Connection<FileNode>>,
    timeline_items: Option<Connection<TimelineNode>>,
    comments: Option<Connection<CommentNode>>,
    head_commit: Option<Connection<HeadCommit>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct NameWithOwner {
    name_with_owner: String,
}

#[derive(Debug, Deserialize)]
struct Named {
    name: String,
}

#[derive(Debug, Deserialize)]
struct PullCommit {
    commit: CommitNode,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CommitNode {
    oid: String,
    message: String,
    committed_date: Option<String>,
    author: Option<GitActor>,
    committer: Option<GitActor>,
    parents: Connection<Oid>,
}

#[derive(Debug, Deserialize)]
struct GitActor {
    email: Option<String>,
    user: Option<UserLogin>,
}

#[derive(Debug, Deserialize)]
struct UserLogin {
    login: String,
}

#[derive(Debug, Deserialize)]
struct Oid {
    oid: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileNode {
    path: String,
    change_type: String,
    additions: u64,
    deletions: u64,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TimelineNode {
    #[serde(rename = "__typename")]
    typename: String,
    created_at: Option<String>,
    actor: Option<Actor>,
    label: Option<Named>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CommentNode {
    database_id: Option<u64>,
    author: Option<Actor>,
    body: String,
    created_at: Option<String>,
    updated_at: Option<String>,
}

#[derive(Debug, Deserialize)]
struct HeadCommit {
    commit: HeadCommitNode,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct HeadCommitNode {
    oid: String,
    check_suites: Option<Connection<SuiteNode>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SuiteNode {
    app: Option<AppSlug>,
    check_runs: Option<Connection<RunNode>>,
}

#[derive(Debug, Deserialize)]
struct AppSlug {
    slug: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RunNode {
    database_id: Option<u64>,
    name: String,
    status: String,
    conclusion: Option<String>,
    started_at: Option<String>,
    completed_at: Option<String>,
    summary: Option<String>,
}

fn timestamp(text: Option<&str>) -> Option<Timestamp> {
    text.and_then(|t| Timestamp::parse(t).ok())
}

/// An actor's login as REST spells it: GraphQL names a bot without the `[bot]` suffix
/// REST's `login` carries.
fn actor_login(actor: Option<&Actor>) -> Option<Login> {
    let actor = actor?;
    let login = if actor.typename == "Bot" {
        format!("{}[bot]", actor.login)
    } else {
        actor.login.clone()
    };
    Login::parse(&login).ok()
}

/// The GitHub account of a commit's author or committer as REST's top-level `author` /
/// `committer` gives it. GraphQL links only users (`GitActor.user` is a `User`); a bot's
/// commits carry its no-reply address `<id>+<slug>[bot]@users.noreply.github.com`, from
/// which REST's bot login is read.
fn git_actor_login(actor: Option<&GitActor>) -> Option<Login> {
    let actor = actor?;
    if let Some(user) = &actor.user {
        return Login::parse(&user.login).ok();
    }
    let email = actor.email.as_deref()?;
    let local = email.strip_suffix("@users.noreply.github.com")?;
    let login = local.split_once('+').map_or(local, |(_, login)| login);
    login
        .ends_with("[bot]")
        .then(|| Login::parse(login).ok())
        .flatten()
}

/// GraphQL's enum values in REST's spelling (`IN_PROGRESS` is `in_progress`).
fn rest_word(value: &str) -> String {
    value.to_ascii_lowercase()
}

/// A node's parts that fit, and the listing itself.
fn listed_pull(repo: &RepoName, node: PullNode) -> Result<(ListedPull, bool), String> {
    let sha = |text: &str| CommitSha::parse(text).map_err(|e| e.to_string());
    let head_sha = sha(&node.head_ref_oid)?;
    let labels = node.labels.and_then(Connection::whole);
    let labels_fit = labels.is_some();
    let label_records: Option<Vec<LabelRecord>> = labels.as_ref().map(|labels| {
        labels
            .iter()
            .map(|label| LabelRecord {
                name: label.name.clone(),
                created_at: timestamp(label.created_at.as_deref()),
                updated_at: timestamp(label.updated_at.as_deref()),
            })
            .collect()
    });
    let pull = PullRequest {
        repo: repo.clone(),
        number: PrNumber::new(node.number),
        title: node.title,
        body: node.body,
        head_sha: head_sha.clone(),
        head_ref: node.head_ref_name,
        head_repo: node
            .head_repository
            .and_then(|r| RepoName::parse(&r.name_with_owner).ok()),
        base_sha: sha(&node.base_ref_oid)?,
        base_ref: node.base_ref_name,
        state: PrState::Open,
        merged: false,
        merge_commit: None,
        labels: labels
            .unwrap_or_default()
            .into_iter()
            .map(|l| l.name)
            .collect(),
        // A deleted account comes as `null`: GitHub's ghost, never trusted.
        author: actor_login(node.author.as_ref()).unwrap_or_else(Login::ghost),
        created_at: timestamp(node.created_at.as_deref()),
    };
    let mut reads = PullReads::default();
    reads.commits = node.commits.and_then(commits);
    reads.files = node.files.and_then(files);
    reads.check_runs = node
        .head_commit
        .and_then(|head| check_runs(head, &head_sha));
    reads.label_events = node.timeline_items.and_then(label_events);
    reads.comments = node.comments.and_then(comments);
    reads.label_records = label_records;
    Ok((ListedPull { pull, reads }, labels_fit))
}

fn commits(connection: Connection<PullCommit>) -> Option<Vec<CommitContext>> {
    connection
        .whole()?
        .into_iter()
        .map(|node| {
            let commit = node.commit;
            let sha = CommitSha::parse(&commit.oid).ok()?;
            let parents = commit
                .parents
                .whole()?
                .into_iter()
                .map(|p| CommitSha::parse(&p.oid).ok())
                .collect::<Option<Vec<_>>>()?;
            let mut context = CommitContext::from_message(sha, &commit.message);
            context.author_login = git_actor_login(commit.author.as_ref());
            context.committer_login = git_actor_login(commit.committer.as_ref());
            context.parents = parents;
            context.committed_at = timestamp(commit.committed_date.as_deref());
            Some(context)
        })
        .collect()
}

fn files(connection: Connection<FileNode>) -> Option<Vec<FileChange>> {
    connection
        .whole()?
        .into_iter()
        .map(|file| {
            let status = match file.change_type.as_str() {
                "ADDED" => "added",
                "DELETED" => "removed",
                "MODIFIED" => "modified",
                "CHANGED" => "changed",
                // RENAMED and COPIED: REST names the previous path, GraphQL does not.
                _ => return None,
            };
            Some(FileChange {
                path: file.path,
                status: FileStatus::from_github(status),
                additions: file.additions,
                deletions: file.deletions,
                previous_filename: None,
            })
        })
        .collect()
}

fn label_events(connection: Connection<TimelineNode>) -> Option<Vec<LabelEvent>> {
    connection
        .whole()?
        .into_iter()
        .map(|event| {
            let action = match event.typename.as_str() {
                "LabeledEvent" => LabelAction::Labeled,
                "UnlabeledEvent" => LabelAction::Unlabeled,
                "BaseRefChangedEvent" | "AutomaticBaseChangeSucceededEvent" => {
                    LabelAction::BaseChanged
                }
                _ => return None,
            };
            let label = match action {
                LabelAction::BaseChanged => String::new(),
                LabelAction::Labeled | LabelAction::Unlabeled => event.label?.name,
            };
            Some(LabelEvent {
                action,
                label,
                actor: actor_login(event.actor.as_ref()),
                at: timestamp(event.created_at.as_deref()),
            })
        })
        .collect()
}

fn comments(connection: Connection<CommentNode>) -> Option<Vec<Comment>> {
    connection
        .whole()?
        .into_iter()
        .map(|comment| {
            Some(Comment {
                id: CommentId::new(comment.database_id?),
                author: actor_login(comment.author.as_ref()),
                body: comment.body,
                created_at: timestamp(comment.created_at.as_deref()),
                updated_at: timestamp(comment.updated_at.as_deref()),
            })
        })
        .collect()
}

/// Every check run on the head, in creation order as REST lists them; `None` unless the
/// pull request's last commit is the listed head and every suite and run fit.
fn check_runs(connection: Connection<HeadCommit>, head: &CommitSha) -> Option<Vec<CheckRun>> {
    let mut last = connection.nodes?;
    let commit = last.pop()??.commit;
    if CommitSha::parse(&commit.oid).ok()? != *head {
        return None;
    }
    let mut runs = Vec::new();
    for suite in commit.check_suites?.whole()? {
        let slug = suite.app.map(|a| a.slug);
        for run in suite.check_runs?.whole()? {
            let id = run.database_id?;
            runs.push((
                id,
                CheckRun {
                    id: Some(id),
                    name: run.name,
                    status: CheckStatus::from_github(&rest_word(&run.status)),
                    conclusion: run
                        .conclusion
                        .as_deref()
                        .map(|c| CheckConclusion::from_github(&rest_word(c))),
                    started_at: timestamp(run.started_at.as_deref()),
                    completed_at: timestamp(run.completed_at.as_deref()),
                    app_slug: slug.clone(),
                    output_summary: run.summary,
                },
            ));
        }
    }
    runs.sort_by_key(|(id, _)| *id);
    Some(runs.into_iter().map(|(_, run)| run).collect())
}

#[derive(Debug, Deserialize)]
struct LabelAnswer {
    data: Option<LabelData>,
    #[serde(default)]
    errors: Vec<QueryError>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct LabelData {
    rate_limit: Option<RateLimit>,
    repository: Option<LabelRepository>,
}

#[derive(Debug, Deserialize)]
struct LabelRepository {
    label: Option<LabelNode>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct LabelNode {
    name: String,
    created_at: Option<String>,
    updated_at: Option<String>,
}

/// Why the GraphQL path gave up on a repository.
enum GiveUp {
    /// What REST would answer too (a limit both share, a repository GitHub does not
    /// know): the tick must see it.
    Shared(GitHubError),
    /// Anything else: the REST listing reads the repository instead.
    Fallback(String),
}

impl RestGitHub {
    /// The GraphQL endpoint: `/graphql` at the API root, `/api/graphql` on GitHub
    /// Enterprise Server (whose REST root is `/api/v3`).
    pub(super) fn graphql_url(&self) -> reqwest::Url {
        let root = self.transport.api_url().trim_end_matches('/');
        let url = match root.strip_suffix("/api/v3") {
            Some(host) => format!("{host}/api/graphql"),
            None => format!("{root}/graphql"),
        };
        reqwest::Url::parse(&url).unwrap_or_else(|_| self.transport.url(["graphql"]))
    }

    /// Open pull requests with their reads over GraphQL, falling back to the REST listing
    /// when the query cannot be used (module docs).
    pub(crate) async fn open_pulls_graphql(
        &self,
        repo: &RepoName,
    ) -> Result<Vec<ListedPull>, GitHubError> {
        if self
            .transport
            .graphql_remaining()
            .is_some_and(|left| left < GRAPHQL_RESERVE)
        {
            self.transport.note_fallback(format!(
                "{repo}: GraphQL points under the reserve of {GRAPHQL_RESERVE}; read over REST"
            ));
            return self.rest_listing(repo).await;
        }
        match self.graphql_pages(repo).await {
            Ok(listed) => Ok(listed),
            Err(GiveUp::Shared(error)) => Err(error),
            Err(GiveUp::Fallback(why)) => {
                self.transport.note_fallback(format!(
                    "{repo}: GraphQL read failed ({why}); read over REST"
                ));
                self.rest_listing(repo).await
            }
        }
    }

    /// GitHub's record of each named label, one [`LABEL_QUERY`] per name; a label GitHub
    /// does not know (`label: null`) is left out. A repository GitHub does not know is
    /// [`GitHubError::NotFound`]; a GraphQL rate limit, an answer without data or one that
    /// does not decode is an error the tick skips the pull request on (nothing is assumed).
    pub(crate) async fn label_records_graphql(
        &self,
        repo: &RepoName,
        names: &[String],
    ) -> Result<Vec<LabelRecord>, GitHubError> {
        let failed = |message: String| GitHubError::Unavailable {
            route: GRAPHQL_ROUTE.to_owned(),
            message,
        };
        let mut records = Vec::new();
        for name in names {
            let body = json!({
                "query": LABEL_QUERY,
                "operationName": "MpLabel",
                "variables": { "owner": repo.owner(), "name": repo.name(), "label": name },
            });
            let request = Request::graphql(GRAPHQL_ROUTE, self.graphql_url(), repo, body);
            let answer = self.transport.send(&request).await?;
            if !answer.is_success() {
                return Err(answer.refusal(|| format!("GraphQL label {name} of {repo}")));
            }
            let decoded: LabelAnswer = answer.json()?;
            if let Some(error) = decoded
                .errors
                .iter()
                .find(|e| e.kind.as_deref() == Some("RATE_LIMITED"))
            {
                return Err(failed(format!("RATE_LIMITED: {}", error.message)));
            }
            let Some(data) = decoded.data else {
                let said: Vec<&str> = decoded.errors.iter().map(|e| e.message.as_str()).collect();
                return Err(failed(format!("no data: {}", said.join("; "))));
            };
            if let Some(rate) = &data.rate_limit {
                self.transport.note_graphql_remaining(rate.remaining);
            }
            let Some(repository) = data.repository else {
                return Err(GitHubError::NotFound {
                    what: format!("repository {repo}"),
                });
            };
            if let Some(label) = repository.label {
                records.push(LabelRecord {
                    name: label.name,
                    created_at: timestamp(label.created_at.as_deref()),
                    updated_at: timestamp(label.updated_at.as_deref()),
                });
            }
        }
        Ok(records)
    }

    /// The default branches of `repos`, [`DEFAULT_BRANCHES_PER_QUERY`] to a query. A
    /// repository GitHub answers `null` for (not visible, or no default branch yet: an
    /// empty repository) is left out, and the caller reads it over REST. Under the GraphQL
    /// reserve, nothing is read (an empty answer).
    ///
    /// # Errors
    /// A query that fails, is refused, meets GraphQL's rate limit or does not decode.
    pub(crate) async fn default_branches_graphql(
        &self,
        repos: &[RepoName],
    ) -> Result<std::collections::BTreeMap<RepoName, String>, GitHubError> {
        #[derive(Debug, Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct BranchRepository {
            default_branch_ref: Option<Named>,
        }
        #[derive(Debug, Deserialize)]
        struct BranchAnswer {
            data: Option<serde_json::Map<String, serde_json::Value>>,
            #[serde(default)]
            errors: Vec<QueryError>,
        }
        let failed = |message: String| GitHubError::Unavailable {
            route: GRAPHQL_ROUTE.to_owned(),
            message,
        };
        let mut branches = std::collections::BTreeMap::new();
        for chunk in repos.chunks(DEFAULT_BRANCHES_PER_QUERY) {
            if self
                .transport
                .graphql_remaining()
                .is_some_and(|left| left < GRAPHQL_RESERVE)
            {
                return Ok(branches);
            }
            let Some(first) = chunk.first() else {
                continue;
            };
            let mut variables = serde_json::Map::new();
            for (i, repo) in chunk.iter().enumerate() {
                variables.insert(format!("o{i}"), json!(repo.owner()));
                variables.insert(format!("n{i}"), json!(repo.name()));
            }
            let body = json!({
                "query": default_branches_query(chunk.len()),
                "operationName": "MpDefaultBranches",
                "variables": variables,
            });
            let request = Request::graphql(GRAPHQL_ROUTE, self.graphql_url(), first, body);
            let answer = self.transport.send(&request).await?;
            if !answer.is_success() {
                return Err(answer.refusal(|| "GraphQL default branches".to_owned()));
            }
            let decoded: BranchAnswer = answer.json()?;
            if let Some(error) = decoded
                .errors
                .iter()
                .find(|e| e.kind.as_deref() == Some("RATE_LIMITED"))
            {
                return Err(failed(format!("RATE_LIMITED: {}", error.message)));
            }
            let Some(mut data) = decoded.data else {
                let said: Vec<&str> = decoded.errors.iter().map(|e| e.message.as_str()).collect();
                return Err(failed(format!("no data: {}", said.join("; "))));
            };
            if let Some(rate) = data
                .remove("rateLimit")
                .and_then(|rate| serde_json::from_value::<RateLimit>(rate).ok())
            {
                self.transport.note_graphql_remaining(rate.remaining);
            }
            for (i, repo) in chunk.iter().enumerate() {
                let Some(value) = data.remove(&format!("r{i}")) else {
                    continue;
                };
                let Ok(Some(repository)) =
                    serde_json::from_value::<Option<BranchRepository>>(value)
                else {
                    continue;
                };
                if let Some(branch) = repository.default_branch_ref {
                    branches.insert(repo.clone(), branch.name);
                }
            }
        }
        Ok(branches)
    }

    async fn rest_listing(&self, repo: &RepoName) -> Result<Vec<ListedPull>, GitHubError> {
        use mp_core::port::GitHub as _;
        Ok(self
            .open_pulls(repo)
            .await?
            .into_iter()
            .map(|pull| ListedPull {
                pull,
                reads: PullReads::default(),
            })
            .collect())
    }

    async fn graphql_pages(&self, repo: &RepoName) -> Result<Vec<ListedPull>, GiveUp> {
        use mp_core::port::GitHub as _;
        let mut listed = Vec::new();
        let mut after: Option<String> = None;
        let mut first = FIRST_PAGE;
        loop {
            let body = json!({
                "query": OPEN_PULLS_QUERY,
                "operationName": "MpOpenPulls",
                "variables": {
                    "owner": repo.owner(),
                    "name": repo.name(),
                    "first": first,
                    "after": after,
                },
            });
            let request = Request::graphql(GRAPHQL_ROUTE, self.graphql_url(), repo, body);
            let answer = match self.transport.send(&request).await {
                Ok(answer) => answer,
                // A secondary limit covers REST and GraphQL alike: the tick must stop.
                Err(error @ GitHubError::Throttled { .. }) => return Err(GiveUp::Shared(error)),
                // GraphQL's own primary limit, a lost answer, a failure after retries.
                Err(error) => return Err(GiveUp::Fallback(error.to_string())),
            };
            if !answer.is_success() {
                return Err(GiveUp::Fallback(format!(
                    "HTTP {}: {}",
                    answer.status,
                    answer.message()
                )));
            }
            let decoded: Answer = answer.json().map_err(|e| GiveUp::Fallback(e.to_string()))?;
            if let Some(error) = decoded
                .errors
                .iter()
                .find(|e| e.kind.as_deref() == Some("RATE_LIMITED"))
            {
                return Err(GiveUp::Fallback(format!("RATE_LIMITED: {}", error.message)));
            }
            let Some(data) = decoded.data else {
                let said: Vec<&str> = decoded.errors.iter().map(|e| e.message.as_str()).collect();
                return Err(GiveUp::Fallback(format!("no data: {}", said.join("; "))));
            };
            if let Some(rate) = &data.rate_limit {
                self.transport.note_graphql_remaining(rate.remaining);
            }
            let Some(repository) = data.repository else {
                // GitHub answers a repository it cannot see with `null` and NOT_FOUND: the
                // REST listing would answer 404 too, so the tick hears it without a second
                // call (and names the repository to the operator).
                if decoded
                    .errors
                    .iter()
                    .any(|e| e.kind.as_deref() == Some("NOT_FOUND"))
                {
                    return Err(GiveUp::Shared(GitHubError::NotFound {
                        what: format!("repository {repo}"),
                    }));
                }
                return Err(GiveUp::Fallback("the repository is not visible".to_owned()));
            };
            let tip = repository
                .default_branch_ref
                .as_ref()
                .and_then(RefNode::tip);
            let connection = repository.pull_requests;
            let page_info = connection.page_info;
            for node in connection.nodes.unwrap_or_default() {
                // A pull request GitHub could not resolve (`null` with an error): its
                // listing comes from REST like every part that did not fit.
                let Some(node) = node else {
                    return Err(GiveUp::Fallback("a pull request came back null".to_owned()));
                };
                let (mut item, labels_fit) = listed_pull(repo, node).map_err(GiveUp::Fallback)?;
                item.reads.default_branch.clone_from(&tip);
                if !labels_fit {
                    item.pull = self
                        .pull(repo, item.pull.number)
                        .await
                        .map_err(GiveUp::Shared)?;
                }
                listed.push(item);
            }
            match page_info {
                Some(PageInfo {
                    has_next_page: true,
                    end_cursor: Some(cursor),
                }) => {
                    after = Some(cursor);
                    first = LATER_PAGES;
                }
                _ => return Ok(listed),
            }
        }
    }
}
