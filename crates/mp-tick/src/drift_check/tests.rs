//! Tests for the drift check over the in-memory GitHub: trees, files, issues, the calls
//! it makes in order and the writes it records.

use std::collections::BTreeMap;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use super::*;
use mp_core::config::{self, ConfigFiles};
use mp_core::ids::Login;
use mp_github_fake::{Endpoint, Failure, MemoryGitHub, parse_world};

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

/// Runs a future that never waits (the in-memory GitHub answers at once).
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..1_000 {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
    panic!("a test future kept waiting; the in-memory GitHub never waits")
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

/// A world to build: repositories with files at `main`, governance issues, a rate limit.
/// [`Spec::github`] serves it with the call log on.
#[derive(Debug, Clone, Default)]
struct Spec {
    /// The files at `main` of each repository; a repository not listed does not exist
    /// (every read of it answers 404, as GitHub does).
    files: BTreeMap<String, Vec<(String, String)>>,
    /// Repositories whose recursive tree listings GitHub cuts short.
    truncated: Vec<String>,
    /// The governance repository's issues, as world YAML entries.
    issues: Vec<String>,
    remaining: Option<u32>,
}

impl Spec {
    fn with_files(mut self, name: &str, files: &[(&str, &str)]) -> Self {
        let files = files
            .iter()
            .map(|(path, text)| ((*path).to_owned(), (*text).to_owned()))
            .collect();
        self.files.insert(name.to_owned(), files);
        self
    }

    fn without(mut self, name: &str) -> Self {
        self.files.remove(name);
        self
    }

    fn truncated(mut self, name: &str) -> Self {
        self.truncated.push(name.to_owned());
        self
    }

    fn with_issue(self, number: u64, state: IssueState, title: &str, body: &str) -> Self {
        self.with_issue_by(&bot(), number, state, title, body)
    }

    fn with_issue_by(
        mut self,
        author: &Login,
        number: u64,
        state: IssueState,
        title: &str,
        body: &str,
    ) -> Self {
        let state = match state {
            IssueState::Open => "open",
            IssueState::Closed => "closed",
        };
        self.issues.push(format!(
            "{{number: {number}, title: {title:?}, body: {body:?}, author: {author:?}, state: {state}, labels: [decision:mirror-drift-incident]}}",
            author = author.as_str(),
        ));
        self
    }

    fn with_remaining(mut self, remaining: u32) -> Self {
        self.remaining = Some(remaining);
        self
    }

    /// The in-memory GitHub over this world, logging its calls.
    fn github(&self) -> MemoryGitHub {
        let mut text = String::from("now: 2026-03-01T12:00:00Z\nbot: acme-merge-gate\n");
        if let Some(remaining) = self.remaining {
            text.push_str(&format!("rate_limit: {{remaining: {remaining}}}\n"));
        }
        text.push_str("repos:\n");
        for (name, files) in &self.files {
            text.push_str(&format!(
                "  - name: {name}\n    commits: [{{id: m1, message: init}}]\n    branches: {{main: m1}}\n    files: {{"
            ));
            let files: Vec<String> = files
                .iter()
                .map(|(path, body)| format!("{path:?}: {body:?}"))
                .collect();
            text.push_str(&files.join(", "));
            text.push_str("}\n");
            if self.truncated.contains(name) {
                text.push_str("    tree_truncated: true\n");
            }
            if name == GOV && !self.issues.is_empty() {
                text.push_str(&format!("    issues: [{}]\n", self.issues.join(", ")));
            }
        }
        let world = parse_world("drift.yaml", &text, None)
            .unwrap_or_else(|err| panic!("the test world parses: {err}\n{text}"));
        let github = MemoryGitHub::new(world);
        github.log_calls();
        github
    }
}

/// Every call on `name` fails with `error`.
fn failing(github: MemoryGitHub, name: &str, error: GitHubError) -> MemoryGitHub {
    github.fail(Failure::on_every_route(error).in_repo(&repo(name)));
    github
}

/// The canonical files, as in the governance repository.
const CANONICAL: &[(&str, &str)] = &[
    ("AGENTS.md", "agents\n"),
    ("docs/policy.md", "policy\n"),
    (".github/pull_request_template.md", "template\n"),
    ("README.md", "governance\n"),
];

/// A world where `acme/api` and `acme/web` mirror every canonical file.
fn clean() -> Spec {
    Spec::default()
        .with_files(GOV, CANONICAL)
        .with_files("acme/api", CANONICAL)
        .with_files("acme/web", &CANONICAL[..2])
        .with_files("other/lib", &[])
}

/// `acme/api`'s `AGENTS.md` edited, `acme/web`'s `docs/policy.md` deleted.
fn drifted() -> Spec {
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
/// reads, warnings and metric, then every call GitHub saw, in order, then every write
/// (an issue with its body).
#[track_caller]
fn check(github: &MemoryGitHub, mirror: Option<&str>, expected: &str) {
    let authority = IncidentAuthority::new(bot(), repo(GOV));
    let report = block_on(check_drift(github, &config(mirror), &authority, now()));
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
    lines.extend(github.call_log().iter().map(ToString::to_string));
    lines.push("writes:".to_owned());
    for action in github.actions() {
        lines.push(action.log_line());
        if let mp_core::port::Write::CreateIssue { issue, .. } = &action {
            lines.push(issue.body.clone());
        }
    }
    let expected: Vec<&str> = expected.trim().lines().map(str::trim_start).collect();
    let actual: Vec<String> = lines
        .join("\n")
        .lines()
        .map(|l| l.trim_start().to_owned())
        .collect();
    assert_eq!(actual, expected, "\nactual:\n{}", actual.join("\n"));
    assert_eq!(report.checked_at, now());
    assert_eq!(u64::from(report.calls), github.total_calls());
}

#[test]
fn without_mirror_paths_nothing_is_read() {
    check(
        &drifted().github(),
        None,
        "
        drift: 0 finding(s) in 0 adopter(s); 0 call(s)
        drift_incidents=0
        calls:
        writes:
        ",
    );
}

#[test]
fn clean_adopters_need_one_tree_each_and_no_issue() {
    check(
        &clean().github(),
        Some(MIRROR),
        "
        drift: 0 finding(s) in 2 adopter(s); 3 call(s)
        drift_incidents=0
        calls:
        GET /repos/acme/governance/git/trees/main
        GET /repos/acme/api/git/trees/main
        GET /repos/acme/web/git/trees/main
        writes:
        ",
    );
}

#[test]
fn a_mismatch_and_a_missing_file_open_one_incident() {
    check(
        &drifted().github(),
        Some(MIRROR),
        "
        drift: 2 finding(s) in 2 adopter(s); opened acme/governance#1 (key mirror-drift-8a7b27bbf72c); 5 call(s)
        drift_differs: acme/api: AGENTS.md differs from canonical (canonical 4a33ff62f00f, adopter c2444f305d6a)
        drift_missing: acme/web: docs/policy.md is missing (canonical b26ebd4a61b1)
        drift_incident_opened: opened acme/governance#1
        drift_incidents=1
        calls:
        GET /repos/acme/governance/git/trees/main
        GET /repos/acme/api/git/trees/main
        GET /repos/acme/web/git/trees/main
        GET /repos/acme/governance/issues?state=all&labels=decision:mirror-drift-incident
        POST /repos/acme/governance/issues
        writes:
        open issue acme/governance#1: [decision:mirror-drift-incident] mirror-drift-8a7b27bbf72c [decision:mirror-drift-incident]
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
            .with_issue(9, IssueState::Open, "[decision:mirror-drift-incident] mirror-drift-000000000000", "")
            .github(),
        Some(MIRROR),
        "
        drift: 2 finding(s) in 2 adopter(s); already reported in acme/governance#4 (closed) (key mirror-drift-8a7b27bbf72c); 4 call(s)
        drift_differs: acme/api: AGENTS.md differs from canonical (canonical 4a33ff62f00f, adopter c2444f305d6a)
        drift_missing: acme/web: docs/policy.md is missing (canonical b26ebd4a61b1)
        drift_incident_known: already reported in acme/governance#4 (closed)
        drift_incidents=0
        calls:
        GET /repos/acme/governance/git/trees/main
        GET /repos/acme/api/git/trees/main
        GET /repos/acme/web/git/trees/main
        GET /repos/acme/governance/issues?state=all&labels=decision:mirror-drift-incident
        writes:
        ",
    );
}

#[test]
fn an_issue_an_agent_opened_with_the_marker_does_not_silence_the_drift() {
    let marker = format!("Known, ignore.\n\n<!-- merge-gate:dedupe:{DRIFTED_KEY} -->");
    let mallory = Login::parse("mallory").expect("a valid login");
    let github = drifted()
        .with_issue_by(&mallory, 4, IssueState::Closed, "Drift", &marker)
        .github();
    let report = block_on(check_drift(
        &github,
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
    let github = drifted()
        .truncated("acme/api")
        .with_issue(
            4,
            IssueState::Open,
            "Drift",
            &format!("<!-- merge-gate:dedupe:{DRIFTED_KEY} -->"),
        )
        .github();
    // The governance tree is not found (404); its contents still are.
    github.fail(
        Failure::on(
            Endpoint::GetTree,
            GitHubError::NotFound {
                what: format!("tree main of {GOV}"),
            },
        )
        .in_repo(&repo(GOV)),
    );
    check(
        &github,
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
        GET /repos/acme/governance/git/trees/main
        GET /repos/acme/governance/contents/AGENTS.md?ref=main
        GET /repos/acme/governance/contents/docs/policy.md?ref=main
        GET /repos/acme/governance/contents/.github/pull_request_template.md?ref=main
        GET /repos/acme/api/git/trees/main
        GET /repos/acme/api/contents/AGENTS.md?ref=main
        GET /repos/acme/api/contents/docs/policy.md?ref=main
        GET /repos/acme/api/contents/.github/pull_request_template.md?ref=main
        GET /repos/acme/web/git/trees/main
        GET /repos/acme/governance/issues?state=all&labels=decision:mirror-drift-incident
        writes:
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
        ).github(),
        Some(MIRROR),
        "
        drift: 2 finding(s) in 2 adopter(s); already reported in acme/governance#2 (open) (key mirror-drift-159ae3af8a90); 4 call(s)
        drift_canonical_missing: acme/governance: canonical path AGENTS.md does not exist in the governance repo
        drift_canonical_missing: acme/governance: canonical path AGENTS.md does not exist in the governance repo
        drift_incident_known: already reported in acme/governance#2 (open)
        drift_incidents=0
        calls:
        GET /repos/acme/governance/git/trees/main
        GET /repos/acme/api/git/trees/main
        GET /repos/acme/web/git/trees/main
        GET /repos/acme/governance/issues?state=all&labels=decision:mirror-drift-incident
        writes:
        ",
    );
}

#[test]
fn the_reserve_stops_the_adopter_loop() {
    check(
        &drifted().with_remaining(201).github(),
        Some(MIRROR),
        "
        drift: 1 finding(s) in 1 adopter(s); opened acme/governance#1 (key mirror-drift-961ab40d9695); stopped at the rate-limit reserve (199 calls left); 4 call(s)
        drift_differs: acme/api: AGENTS.md differs from canonical (canonical 4a33ff62f00f, adopter c2444f305d6a)
        drift_incident_opened: opened acme/governance#1
        warning: rate-limit reserve reached (199 calls left, reserve 200); not checked: acme/web
        drift_incidents=1
        calls:
        GET /repos/acme/governance/git/trees/main
        GET /repos/acme/api/git/trees/main
        GET /repos/acme/governance/issues?state=all&labels=decision:mirror-drift-incident
        POST /repos/acme/governance/issues
        writes:
        open issue acme/governance#1: [decision:mirror-drift-incident] mirror-drift-961ab40d9695 [decision:mirror-drift-incident]
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
        &drifted().with_remaining(199).github(),
        Some(MIRROR),
        "
        drift: 0 finding(s) in 0 adopter(s); stopped at the rate-limit reserve (199 calls left); 0 call(s)
        warning: rate-limit reserve reached (199 calls left, reserve 200); not checked: acme/api, acme/web
        drift_incidents=0
        calls:
        writes:
        ",
    );
}

#[test]
fn an_unreadable_adopter_is_skipped() {
    check(
        // GitHub does not know `acme/web`: every read of it answers 404.
        &drifted().without("acme/web").github(),
        Some(MIRROR),
        "
        drift: 1 finding(s) in 1 adopter(s); opened acme/governance#1 (key mirror-drift-961ab40d9695); 6 call(s)
        drift_differs: acme/api: AGENTS.md differs from canonical (canonical 4a33ff62f00f, adopter c2444f305d6a)
        drift_incident_opened: opened acme/governance#1
        warning: acme/web: skipped, cannot read its files: repository acme/web not found
        drift_incidents=1
        calls:
        GET /repos/acme/governance/git/trees/main
        GET /repos/acme/api/git/trees/main
        GET /repos/acme/web/git/trees/main
        GET /repos/acme/web/contents/AGENTS.md?ref=main
        GET /repos/acme/governance/issues?state=all&labels=decision:mirror-drift-incident
        POST /repos/acme/governance/issues
        writes:
        open issue acme/governance#1: [decision:mirror-drift-incident] mirror-drift-961ab40d9695 [decision:mirror-drift-incident]
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
        &failing(
            drifted().github(),
            "acme/web",
            GitHubError::Unavailable {
                route: "GET /repos/{o}/{r}/git/trees/{ref}".to_owned(),
                message: "502".to_owned(),
            },
        ),
        Some(MIRROR),
        "
        drift: 1 finding(s) in 1 adopter(s); gave up: acme/web: GET /repos/{o}/{r}/git/trees/{ref}: 502; 3 call(s)
        drift_differs: acme/api: AGENTS.md differs from canonical (canonical 4a33ff62f00f, adopter c2444f305d6a)
        drift_incidents=0
        calls:
        GET /repos/acme/governance/git/trees/main
        GET /repos/acme/api/git/trees/main
        GET /repos/acme/web/git/trees/main
        writes:
        ",
    );
}

#[test]
fn an_unreadable_governance_repo_gives_up() {
    check(
        &failing(drifted().github(), GOV, GitHubError::RateLimited { remaining: 0 }),
        Some(MIRROR),
        "
        drift: 0 finding(s) in 0 adopter(s); gave up: cannot read the canonical files of acme/governance: rate limit exhausted: 0 calls left; 1 call(s)
        drift_incidents=0
        calls:
        GET /repos/acme/governance/git/trees/main
        writes:
        ",
    );
}
