//! Tests for the drift check over a small in-memory GitHub: trees, files, issues and the
//! writes it records.

use std::collections::BTreeMap;
use std::pin::pin;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use super::*;
use mp_core::branch::drift::blob_sha;
use mp_core::config::{self, ConfigFiles};
use mp_core::context::LabelRecord;
use mp_core::context::{
    CheckRun, Comment, CommentId, CommitContext, FileChange, LabelEvent, Reaction, RefUpdate,
};
use mp_core::ids::{CommitSha, Login};
use mp_core::port::{
    CommitPull, FileContent, FileWrite, GitHub, Issue, MergeRequest, NewPull, PullRequest, Tree,
    TreeEntry, UpdateBranchOutcome,
};

const GOV: &str = "acme/governance";
const MIRROR: &str = r#"{
  "schema_version": 1,
  "canonical_paths": ["AGENTS.md", "docs/policy.md", ".github/pull_request_template.md"],
  "exceptions": {"web": [".github/pull_request_template.md"]}
}"#;

fn repo(name: &str) -> RepoName {
    RepoName::parse(name).expect("test repository is valid")
}

fn now() -> Timestamp {
    Timestamp::parse("2026-03-01T12:00:00Z").expect("valid time")
}

/// Runs a future that never waits (the fake answers at once).
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..1_000 {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
    panic!("a test future kept waiting; the fake never waits")
}

/// Owner `alice`, governance `acme/governance`, supervised: the governance repository,
/// `acme/api`, `acme/web` and `other/lib` (another owner), with `mirror` as
/// `mirror_paths.json` when given.
fn config(mirror: Option<&str>) -> Config {
    let mut files = ConfigFiles::new()
        .with(config::OWNER_FILE, "github_login: alice\n")
        .with(
            config::PROJECTS_FILE,
            "governance_repo: acme/governance\nsupervised_repos: [acme/governance, acme/api, acme/web, other/lib]\n",
        )
        .with(config::ENV_FILE, "bot_app_slug: mp-gate\n");
    if let Some(mirror) = mirror {
        files.insert(config::MIRROR_PATHS_FILE, mirror);
    }
    let report = config::load(&files);
    report
        .config
        .unwrap_or_else(|| panic!("test config loads: {:?}", report.problems))
}

/// How a repository answers the tree read, when not with its full listing.
#[derive(Debug, Clone)]
enum TreeMode {
    Truncated,
    /// 404 for the tree; contents are still served.
    Missing,
    /// Every read of this repository fails with this error.
    Fails(GitHubError),
}

#[derive(Debug, Default)]
struct Hub {
    files: BTreeMap<RepoName, BTreeMap<String, String>>,
    modes: BTreeMap<RepoName, TreeMode>,
    issues: Vec<Issue>,
    remaining: Option<u32>,
    log: Vec<String>,
}

/// A minimal GitHub: repositories with files at `main`, governance issues, a rate limit
/// spent one unit per call, and a log of every call and write.
#[derive(Debug, Default)]
struct Fake(Mutex<Hub>);

impl Fake {
    fn with_files(self, name: &str, files: &[(&str, &str)]) -> Self {
        self.hub().files.insert(
            repo(name),
            files
                .iter()
                .map(|(path, text)| ((*path).to_owned(), (*text).to_owned()))
                .collect(),
        );
        self
    }

    fn with_mode(self, name: &str, mode: TreeMode) -> Self {
        self.hub().modes.insert(repo(name), mode);
        self
    }

    fn with_issue(self, number: u64, state: IssueState, title: &str, body: &str) -> Self {
        self.with_issue_by(&bot(), number, state, title, body)
    }

    fn with_issue_by(
        self,
        author: &Login,
        number: u64,
        state: IssueState,
        title: &str,
        body: &str,
    ) -> Self {
        self.hub().issues.push(Issue {
            repo: repo(GOV),
            number: PrNumber::new(number),
            title: title.to_owned(),
            body: body.to_owned(),
            state,
            labels: vec!["decision:mirror-drift-incident".to_owned()],
            author: Some(author.clone()),
            created_at: None,
            is_pull_request: false,
        });
        self
    }

    fn with_remaining(self, remaining: u32) -> Self {
        self.hub().remaining = Some(remaining);
        self
    }

    fn hub(&self) -> MutexGuard<'_, Hub> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Logs a call, spends the rate limit and fails as the repository's mode says.
    fn call(&self, repo: &RepoName, line: String) -> Result<MutexGuard<'_, Hub>, GitHubError> {
        let mut hub = self.hub();
        hub.log.push(line);
        if let Some(remaining) = hub.remaining.as_mut() {
            *remaining = remaining.saturating_sub(1);
        }
        if let Some(TreeMode::Fails(error)) = hub.modes.get(repo) {
            return Err(error.clone());
        }
        if !hub.files.contains_key(repo) {
            return Err(not_found(repo));
        }
        Ok(hub)
    }
}

fn not_found(repo: &RepoName) -> GitHubError {
    GitHubError::NotFound {
        what: format!("repository {repo}"),
    }
}

fn unmodelled() -> GitHubError {
    GitHubError::Unavailable {
        route: "fake".to_owned(),
        message: "not modelled".to_owned(),
    }
}

#[async_trait::async_trait]
impl GitHub for Fake {
    async fn bot_login(&self) -> Result<Login, GitHubError> {
        Login::for_app("mp-gate").map_err(|_| unmodelled())
    }
    fn rate_limit_remaining(&self) -> Option<u32> {
        self.hub().remaining
    }
    async fn open_pulls(&self, _: &RepoName) -> Result<Vec<PullRequest>, GitHubError> {
        Err(unmodelled())
    }
    async fn pull(&self, _: &RepoName, _: PrNumber) -> Result<PullRequest, GitHubError> {
        Err(unmodelled())
    }
    async fn pull_commits(
        &self,
        _: &RepoName,
        _: PrNumber,
    ) -> Result<Vec<CommitContext>, GitHubError> {
        Err(unmodelled())
    }
    async fn pull_files(&self, _: &RepoName, _: PrNumber) -> Result<Vec<FileChange>, GitHubError> {
        Err(unmodelled())
    }
    async fn check_runs(&self, _: &RepoName, _: &CommitSha) -> Result<Vec<CheckRun>, GitHubError> {
        Err(unmodelled())
    }
    async fn label_events(
        &self,
        _: &RepoName,
        _: PrNumber,
    ) -> Result<Vec<LabelEvent>, GitHubError> {
        Err(unmodelled())
    }
    async fn head_ref_updates(&self, _: &RepoName, _: &str) -> Result<Vec<RefUpdate>, GitHubError> {
        Err(unmodelled())
    }
    async fn label_records(
        &self,
        _: &RepoName,
        _: &[String],
    ) -> Result<Vec<LabelRecord>, GitHubError> {
        Err(unmodelled())
    }
    async fn comments(&self, _: &RepoName, _: PrNumber) -> Result<Vec<Comment>, GitHubError> {
        Err(unmodelled())
    }
    async fn reactions(&self, _: &RepoName, _: PrNumber) -> Result<Vec<Reaction>, GitHubError> {
        Err(unmodelled())
    }
    async fn branch_head(&self, _: &RepoName, _: &str) -> Result<CommitSha, GitHubError> {
        Err(unmodelled())
    }
    async fn issues(&self, repo: &RepoName, query: &IssueQuery) -> Result<Vec<Issue>, GitHubError> {
        let hub = self.call(
            repo,
            format!(
                "issues {repo} state={:?} labels={}",
                query.state,
                query.labels.join(",")
            ),
        )?;
        Ok(hub
            .issues
            .iter()
            .filter(|i| query.state.is_none_or(|s| s == i.state))
            .filter(|i| query.labels.iter().all(|l| i.labels.contains(l)))
            .cloned()
            .collect())
    }
    async fn create_comment(
        &self,
        _: &RepoName,
        _: PrNumber,
        _: &str,
    ) -> Result<Comment, GitHubError> {
        Err(unmodelled())
    }
    async fn update_comment(&self, _: &RepoName, _: CommentId, _: &str) -> Result<(), GitHubError> {
        Err(unmodelled())
    }
    async fn add_labels(&self, _: &RepoName, _: PrNumber, _: &[String]) -> Result<(), GitHubError> {
        Err(unmodelled())
    }
    async fn remove_label(&self, _: &RepoName, _: PrNumber, _: &str) -> Result<(), GitHubError> {
        Err(unmodelled())
    }
    async fn create_issue(&self, repo: &RepoName, issue: &NewIssue) -> Result<Issue, GitHubError> {
        let mut hub = self.call(repo, format!("create_issue {repo}"))?;
        let number =
            PrNumber::new(hub.issues.iter().map(|i| i.number.get()).max().unwrap_or(0) + 1);
        let created = Issue {
            repo: repo.clone(),
            number,
            title: issue.title.clone(),
            body: issue.body.clone(),
            state: IssueState::Open,
            labels: issue.labels.clone(),
            author: Some(bot()),
            created_at: None,
            is_pull_request: false,
        };
        hub.issues.push(created.clone());
        hub.log.push(format!(
            "  -> #{number} {} [{}]\n{}",
            issue.title,
            issue.labels.join(", "),
            issue.body
        ));
        Ok(created)
    }
    async fn close_issue(&self, _: &RepoName, _: PrNumber) -> Result<(), GitHubError> {
        Err(unmodelled())
    }
    async fn merge_pull(
        &self,
        _: &RepoName,
        _: PrNumber,
        _: &MergeRequest,
    ) -> Result<CommitSha, GitHubError> {
        Err(unmodelled())
    }
    async fn update_branch(
        &self,
        _: &RepoName,
        _: PrNumber,
        _: &CommitSha,
    ) -> Result<UpdateBranchOutcome, GitHubError> {
        Err(unmodelled())
    }
}

#[async_trait::async_trait]
impl GitHubHistory for Fake {
    async fn commit(&self, _: &RepoName, _: &CommitSha) -> Result<CommitContext, GitHubError> {
        Err(unmodelled())
    }
    async fn branch_commits(
        &self,
        _: &RepoName,
        _: &str,
        _: usize,
    ) -> Result<Vec<CommitContext>, GitHubError> {
        Err(unmodelled())
    }
    async fn file(
        &self,
        repo: &RepoName,
        path: &str,
        git_ref: &str,
    ) -> Result<Option<FileContent>, GitHubError> {
        let hub = self.call(repo, format!("file {repo} {path}@{git_ref}"))?;
        let files = hub.files.get(repo).ok_or_else(|| not_found(repo))?;
        Ok(files.get(path).map(|text| FileContent {
            text: text.clone(),
            blob_sha: blob_sha(text.as_bytes()),
        }))
    }
    async fn put_file(&self, _: &RepoName, _: &FileWrite) -> Result<String, GitHubError> {
        Err(unmodelled())
    }
    async fn tree(&self, repo: &RepoName, git_ref: &str) -> Result<Tree, GitHubError> {
        let hub = self.call(repo, format!("tree {repo}@{git_ref}"))?;
        let files = hub.files.get(repo).ok_or_else(|| not_found(repo))?;
        let entries = files
            .iter()
            .map(|(path, text)| TreeEntry {
                path: path.clone(),
                blob_sha: blob_sha(text.as_bytes()),
            })
            .collect();
        match hub.modes.get(repo) {
            Some(TreeMode::Missing) => Err(GitHubError::NotFound {
                what: format!("tree {git_ref} of {repo}"),
            }),
            Some(TreeMode::Truncated) => Ok(Tree {
                entries: Vec::new(),
                truncated: true,
            }),
            _ => Ok(Tree {
                entries,
                truncated: false,
            }),
        }
    }
    async fn create_branch(&self, _: &RepoName, _: &str, _: &CommitSha) -> Result<(), GitHubError> {
        Err(unmodelled())
    }
    async fn update_branch_ref(
        &self,
        _: &RepoName,
        _: &str,
        _: &CommitSha,
        _: bool,
    ) -> Result<(), GitHubError> {
        Err(unmodelled())
    }
    async fn merge_into_branch(
        &self,
        _: &RepoName,
        _: &str,
        _: &CommitSha,
        _: &str,
    ) -> Result<Option<CommitSha>, GitHubError> {
        Err(unmodelled())
    }
    async fn compare(
        &self,
        _: &RepoName,
        _: &CommitSha,
        _: &CommitSha,
        _: usize,
    ) -> Result<mp_core::port::Comparison, GitHubError> {
        Err(unmodelled())
    }
    async fn commit_pulls(
        &self,
        _: &RepoName,
        _: &CommitSha,
    ) -> Result<Vec<CommitPull>, GitHubError> {
        Err(unmodelled())
    }
    async fn update_issue_body(
        &self,
        _: &RepoName,
        _: PrNumber,
        _: &str,
    ) -> Result<(), GitHubError> {
        Err(unmodelled())
    }
    async fn create_pull(&self, _: &RepoName, _: &NewPull) -> Result<PrNumber, GitHubError> {
        Err(unmodelled())
    }
    async fn push_revert(
        &self,
        _: &RepoName,
        _: &CommitSha,
        _: &str,
        _: &str,
    ) -> Result<CommitSha, GitHubError> {
        Err(unmodelled())
    }
}

/// The canonical files, as in the governance repository.
const CANONICAL: &[(&str, &str)] = &[
    ("AGENTS.md", "agents\n"),
    ("docs/policy.md", "policy\n"),
    (".github/pull_request_template.md", "template\n"),
    ("README.md", "governance\n"),
];

/// A world where `acme/api` and `acme/web` mirror every canonical file.
fn clean() -> Fake {
    Fake::default()
        .with_files(GOV, CANONICAL)
        .with_files("acme/api", CANONICAL)
        .with_files("acme/web", &CANONICAL[..2])
        .with_files("other/lib", &[])
}

/// `acme/api`'s `AGENTS.md` edited, `acme/web`'s `docs/policy.md` deleted.
fn drifted() -> Fake {
    clean()
        .with_files(
            "acme/api",
            &[
                ("AGENTS.md", "agents, edited\n"),
                ("docs/policy.md", "policy\n"),
                (".github/pull_request_template.md", "template\n"),
            ],
        )
        .with_files("acme/web", &[("AGENTS.md", "agents\n")])
}

/// mp's identity in these tests.
fn bot() -> Login {
    Login::for_app("acme-merge-gate").expect("a valid login")
}

/// The key of [`drifted`]'s findings (sha256 over the sorted finding lines).
const DRIFTED_KEY: &str = "mirror-drift-8a7b27bbf72c";

/// Runs the check and compares, line by line: the report's line, its findings, per-path
/// reads, warnings and metric, then every call the fake saw (writes with their text).
#[track_caller]
fn check(fake: &Fake, mirror: Option<&str>, expected: &str) {
    let authority = IncidentAuthority::new(bot(), repo(GOV));
    let report = block_on(check_drift(fake, &config(mirror), &authority, now()));
    let mut lines = vec![report.to_string()];
    for finding in &report.findings {
        lines.push(format!("{}: {finding}", finding.code()));
    }
    if let Some(incident) = &report.incident {
        lines.push(format!("{}: {incident}", incident.code()));
    }
    for repo in &report.per_path {
        lines.push(format!("per path: {repo}"));
    }
    for warning in &report.warnings {
        lines.push(format!("warning: {warning}"));
    }
    lines.push(format!(
        "drift_incidents={}",
        report.metrics.drift_incidents
    ));
    lines.push("calls:".to_owned());
    lines.extend(fake.hub().log.iter().cloned());
    let expected: Vec<&str> = expected.trim().lines().map(str::trim_start).collect();
    let actual: Vec<String> = lines
        .join("\n")
        .lines()
        .map(|l| l.trim_start().to_owned())
        .collect();
    assert_eq!(actual, expected, "\nactual:\n{}", actual.join("\n"));
    assert_eq!(report.checked_at, now());
    assert_eq!(
        report.calls as usize,
        fake.hub()
            .log
            .iter()
            .filter(|l| !l.starts_with("  ->"))
            .count()
    );
}

#[test]
fn without_mirror_paths_nothing_is_read() {
    check(
        &drifted(),
        None,
        "
        drift: 0 finding(s) in 0 adopter(s); 0 call(s)
        drift_incidents=0
        calls:
        ",
    );
}

#[test]
fn clean_adopters_need_one_tree_each_and_no_issue() {
    check(
        &clean(),
        Some(MIRROR),
        "
        drift: 0 finding(s) in 2 adopter(s); 3 call(s)
        drift_incidents=0
        calls:
        tree acme/governance@main
        tree acme/api@main
        tree acme/web@main
        ",
    );
}

#[test]
fn a_mismatch_and_a_missing_file_open_one_incident() {
    check(
        &drifted(),
        Some(MIRROR),
        "
        drift: 2 finding(s) in 2 adopter(s); opened acme/governance#1 (key mirror-drift-8a7b27bbf72c); 5 call(s)
        drift_differs: acme/api: AGENTS.md differs from canonical (canonical 4a33ff62f00f, adopter c2444f305d6a)
        drift_missing: acme/web: docs/policy.md is missing (canonical b26ebd4a61b1)
        drift_incident_opened: opened acme/governance#1
        drift_incidents=1
        calls:
        tree acme/governance@main
        tree acme/api@main
        tree acme/web@main
        issues acme/governance state=None labels=decision:mirror-drift-incident
        create_issue acme/governance
        -> #1 [decision:mirror-drift-incident] mirror-drift-8a7b27bbf72c [decision:mirror-drift-incident]
        **Canonical files drifted.**

        ### acme/api
        Differs:
        - `AGENTS.md` (canonical 4a33ff62f00f, adopter c2444f305d6a)

        ### acme/web
        Missing:
        - `docs/policy.md`

        Copy the canonical files to the adopters (or list deliberate differences as exceptions in `mirror_paths.json`). The bot only reports drift; it never fixes it.

        <!-- merge-gate:dedupe:mirror-drift-8a7b27bbf72c -->
        ",
    );
}

#[test]
fn a_closed_issue_with_the_marker_keeps_the_drift_reported() {
    let marker = format!("Fixed by hand.\n\n<!-- merge-gate:dedupe:{DRIFTED_KEY} -->");
    check(
        &drifted()
            .with_issue(4, IssueState::Closed, "Drift", &marker)
            .with_issue(9, IssueState::Open, "[decision:mirror-drift-incident] mirror-drift-000000000000", ""),
        Some(MIRROR),
        "
        drift: 2 finding(s) in 2 adopter(s); already reported in acme/governance#4 (closed) (key mirror-drift-8a7b27bbf72c); 4 call(s)
        drift_differs: acme/api: AGENTS.md differs from canonical (canonical 4a33ff62f00f, adopter c2444f305d6a)
        drift_missing: acme/web: docs/policy.md is missing (canonical b26ebd4a61b1)
        drift_incident_known: already reported in acme/governance#4 (closed)
        drift_incidents=0
        calls:
        tree acme/governance@main
        tree acme/api@main
        tree acme/web@main
        issues acme/governance state=None labels=decision:mirror-drift-incident
        ",
    );
}

#[test]
fn an_issue_an_agent_opened_with_the_marker_does_not_silence_the_drift() {
    let marker = format!("Known, ignore.\n\n<!-- merge-gate:dedupe:{DRIFTED_KEY} -->");
    let mallory = Login::parse("mallory").expect("a valid login");
    let fake = drifted().with_issue_by(&mallory, 4, IssueState::Closed, "Drift", &marker);
    let report = block_on(check_drift(
        &fake,
        &config(Some(MIRROR)),
        &IncidentAuthority::new(bot(), repo(GOV)),
        now(),
    ));
    assert_eq!(report.metrics.drift_incidents, 1, "{report}");
    assert_eq!(
        report.warnings,
        [format!(
            "decision:mirror-drift-incident {DRIFTED_KEY}: acme/governance#4 looks like this incident but does not count: opened by mallory, not by mp (incident_lookalike_not_opened_by_mp)"
        )]
    );
}

#[test]
fn truncated_and_missing_trees_fall_back_to_one_read_per_path() {
    check(
        &drifted()
            .with_mode(GOV, TreeMode::Missing)
            .with_mode("acme/api", TreeMode::Truncated)
            .with_issue(4, IssueState::Open, "Drift", &format!("<!-- merge-gate:dedupe:{DRIFTED_KEY} -->")),
        Some(MIRROR),
        "
        drift: 2 finding(s) in 2 adopter(s); already reported in acme/governance#4 (open) (key mirror-drift-8a7b27bbf72c); 10 call(s)
        drift_differs: acme/api: AGENTS.md differs from canonical (canonical 4a33ff62f00f, adopter c2444f305d6a)
        drift_missing: acme/web: docs/policy.md is missing (canonical b26ebd4a61b1)
        drift_incident_known: already reported in acme/governance#4 (open)
        per path: acme/governance
        per path: acme/api
        drift_incidents=0
        calls:
        tree acme/governance@main
        file acme/governance AGENTS.md@main
        file acme/governance docs/policy.md@main
        file acme/governance .github/pull_request_template.md@main
        tree acme/api@main
        file acme/api AGENTS.md@main
        file acme/api docs/policy.md@main
        file acme/api .github/pull_request_template.md@main
        tree acme/web@main
        issues acme/governance state=None labels=decision:mirror-drift-incident
        ",
    );
}

#[test]
fn a_canonical_path_absent_in_governance_counts_once_per_adopter() {
    check(
        &clean().with_files(GOV, &CANONICAL[1..]).with_issue(
            2,
            IssueState::Open,
            "[decision:mirror-drift-incident] mirror-drift-159ae3af8a90",
            "<!-- merge-gate:dedupe:mirror-drift-159ae3af8a90 -->",
        ),
        Some(MIRROR),
        "
        drift: 2 finding(s) in 2 adopter(s); already reported in acme/governance#2 (open) (key mirror-drift-159ae3af8a90); 4 call(s)
        drift_canonical_missing: acme/governance: canonical path AGENTS.md does not exist in the governance repo
        drift_canonical_missing: acme/governance: canonical path AGENTS.md does not exist in the governance repo
        drift_incident_known: already reported in acme/governance#2 (open)
        drift_incidents=0
        calls:
        tree acme/governance@main
        tree acme/api@main
        tree acme/web@main
        issues acme/governance state=None labels=decision:mirror-drift-incident
        ",
    );
}

#[test]
fn the_reserve_stops_the_adopter_loop() {
    check(
        &drifted().with_remaining(201),
        Some(MIRROR),
        "
        drift: 1 finding(s) in 1 adopter(s); opened acme/governance#1 (key mirror-drift-961ab40d9695); stopped at the rate-limit reserve (199 calls left); 4 call(s)
        drift_differs: acme/api: AGENTS.md differs from canonical (canonical 4a33ff62f00f, adopter c2444f305d6a)
        drift_incident_opened: opened acme/governance#1
        warning: rate-limit reserve reached (199 calls left, reserve 200); not checked: acme/web
        drift_incidents=1
        calls:
        tree acme/governance@main
        tree acme/api@main
        issues acme/governance state=None labels=decision:mirror-drift-incident
        create_issue acme/governance
        -> #1 [decision:mirror-drift-incident] mirror-drift-961ab40d9695 [decision:mirror-drift-incident]
        **Canonical files drifted.**

        ### acme/api
        Differs:
        - `AGENTS.md` (canonical 4a33ff62f00f, adopter c2444f305d6a)

        Copy the canonical files to the adopters (or list deliberate differences as exceptions in `mirror_paths.json`). The bot only reports drift; it never fixes it.

        <!-- merge-gate:dedupe:mirror-drift-961ab40d9695 -->
        ",
    );
}

#[test]
fn under_the_reserve_nothing_is_read() {
    check(
        &drifted().with_remaining(199),
        Some(MIRROR),
        "
        drift: 0 finding(s) in 0 adopter(s); stopped at the rate-limit reserve (199 calls left); 0 call(s)
        warning: rate-limit reserve reached (199 calls left, reserve 200); not checked: acme/api, acme/web
        drift_incidents=0
        calls:
        ",
    );
}

#[test]
fn an_unreadable_adopter_is_skipped() {
    check(
        &drifted().with_mode(
            "acme/web",
            TreeMode::Fails(GitHubError::NotFound {
                what: "repository acme/web".to_owned(),
            }),
        ),
        Some(MIRROR),
        "
        drift: 1 finding(s) in 1 adopter(s); opened acme/governance#1 (key mirror-drift-961ab40d9695); 6 call(s)
        drift_differs: acme/api: AGENTS.md differs from canonical (canonical 4a33ff62f00f, adopter c2444f305d6a)
        drift_incident_opened: opened acme/governance#1
        warning: acme/web: skipped, cannot read its files: repository acme/web not found
        drift_incidents=1
        calls:
        tree acme/governance@main
        tree acme/api@main
        tree acme/web@main
        file acme/web AGENTS.md@main
        issues acme/governance state=None labels=decision:mirror-drift-incident
        create_issue acme/governance
        -> #1 [decision:mirror-drift-incident] mirror-drift-961ab40d9695 [decision:mirror-drift-incident]
        **Canonical files drifted.**

        ### acme/api
        Differs:
        - `AGENTS.md` (canonical 4a33ff62f00f, adopter c2444f305d6a)

        Copy the canonical files to the adopters (or list deliberate differences as exceptions in `mirror_paths.json`). The bot only reports drift; it never fixes it.

        <!-- merge-gate:dedupe:mirror-drift-961ab40d9695 -->
        ",
    );
}

#[test]
fn a_transient_error_gives_up_without_an_issue() {
    check(
        &drifted().with_mode(
            "acme/web",
            TreeMode::Fails(GitHubError::Unavailable {
                route: "GET /repos/{o}/{r}/git/trees/{ref}".to_owned(),
                message: "502".to_owned(),
            }),
        ),
        Some(MIRROR),
        "
        drift: 1 finding(s) in 1 adopter(s); gave up: acme/web: GET /repos/{o}/{r}/git/trees/{ref}: 502; 3 call(s)
        drift_differs: acme/api: AGENTS.md differs from canonical (canonical 4a33ff62f00f, adopter c2444f305d6a)
        drift_incidents=0
        calls:
        tree acme/governance@main
        tree acme/api@main
        tree acme/web@main
        ",
    );
}

#[test]
fn an_unreadable_governance_repo_gives_up() {
    check(
        &drifted().with_mode(GOV, TreeMode::Fails(GitHubError::RateLimited { remaining: 0 })),
        Some(MIRROR),
        "
        drift: 0 finding(s) in 0 adopter(s); gave up: cannot read the canonical files of acme/governance: rate limit exhausted: 0 calls left; 1 call(s)
        drift_incidents=0
        calls:
        tree acme/governance@main
        ",
    );
}
