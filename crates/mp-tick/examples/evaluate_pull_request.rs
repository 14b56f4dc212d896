//! Embedding mp-core and mp-tick: another Rust tool asks the merge gate what it thinks of a pull
//! request, through its own implementation of the GitHub port.
//!
//! The scenario: a platform team runs its own release tool. The tool already keeps a
//! catalog of the organisation's pull requests (filled from its own GitHub Enterprise
//! mirror), so instead of letting mp call GitHub it implements [`GitHub`] over that
//! catalog. It loads the same configuration files the bot reads (here inline YAML texts),
//! and for every open pull request calls [`tick::evaluate_pr`], the read-only half of a
//! tick: every gate condition with its evidence, every classifier vote, and where the gate
//! sends the pull request. Nothing is written: the catalog refuses writes, and
//! `evaluate_pr` makes none.
//!
//! Neither crate has an async runtime, and the catalog answers at once, so a ten-line
//! `block_on` drives the futures. Run it with
//! `cargo run -p mp-tick --example evaluate_pull_request`.
#![allow(
    clippy::print_stdout,
    reason = "an example shows its findings on stdout"
)]

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use mp_core::approval::{ReceiptLabel, render_receipt};
use mp_core::config::{self, Config, ConfigFiles};
use mp_core::context::LabelRecord;
use mp_core::context::{
    CheckConclusion, CheckRun, CheckStatus, Comment, CommentId, CommitContext, FileChange,
    FileStatus, LabelAction, LabelEvent, PrState, Reaction, RefUpdate, RefUpdateKind,
};
use mp_core::gate::Outcome;
use mp_core::ids::{CommitSha, Login, PrNumber, RepoName, Timestamp};
use mp_core::port::{
    GitHub, GitHubError, Issue, IssueQuery, MergeRequest, NewIssue, PullRequest,
    UpdateBranchOutcome,
};
use mp_tick::{self as tick, Route, TickOptions, TickSetup};

type Error = Box<dyn std::error::Error>;

/// The configuration the bot would read from its configuration directory.
const CONFIG: [(&str, &str); 4] = [
    ("owner.yml", "github_login: dana\n"),
    (
        "projects.yml",
        "governance_repo: platform/governance\nsupervised_repos: [platform/payments]\n",
    ),
    (
        "env.yml",
        "bot_app_slug: platform-merge-gate\nrequired_checks: [test]\n",
    ),
    (
        "agent_registry.yml",
        "tools: [claude-code, codex]\nmodels:\n  claude-code: [\"*\"]\n  codex: [\"*\"]\n",
    ),
];

/// The release tool's own record of a pull request: what its mirror stores.
struct CatalogPull {
    number: u64,
    title: &'static str,
    author: &'static str,
    head_sha: &'static str,
    /// The head commit's message (every pull request here is one commit on `main`).
    message: &'static str,
    /// Changed paths with added and deleted lines.
    files: &'static [(&'static str, u64, u64)],
    /// Check name and conclusion on the head commit, all published by GitHub Actions.
    checks: &'static [(&'static str, &'static str)],
    /// Labels with who applied them, in timeline order.
    labels: &'static [(&'static str, &'static str)],
    /// Whether the bot already recorded `ready-to-merge` for the head on an earlier tick.
    receipt: bool,
}

/// The release tool's catalog of one repository.
struct Catalog {
    repo: RepoName,
    bot: Login,
    main_head: CommitSha,
    now: Timestamp,
    pulls: Vec<CatalogPull>,
}

fn catalog() -> Result<Catalog, Error> {
    Ok(Catalog {
        repo: RepoName::parse("platform/payments")?,
        bot: Login::for_app("platform-merge-gate")?,
        main_head: CommitSha::parse("5e1f0c2a9b8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f")?,
        now: Timestamp::parse("2026-03-02T09:00:00Z")?,
        pulls: vec![
            CatalogPull {
                number: 41,
                title: "Add idempotency keys to refunds",
                author: "dana",
                head_sha: "a41a41a41a41a41a41a41a41a41a41a41a41a41a",
                message: "Add idempotency keys to refunds\n\n\
                          Agent-Tool: claude-code\nAgent-Model: claude-opus-4\n\
                          Agent-Session: s_refund-keys\nAgent-Machine: build-7\nTask-Ref: Issue#88\n",
                files: &[("src/refunds.rs", 48, 6), ("docs/refunds.md", 12, 0)],
                checks: &[("test", "success"), ("lint", "success")],
                labels: &[("ready-to-merge", "dana")],
                receipt: true,
            },
            CatalogPull {
                number: 42,
                title: "Deploy payments from release tags only",
                author: "dana",
                head_sha: "b42b42b42b42b42b42b42b42b42b42b42b42b42b",
                message: "Deploy payments from release tags only\n\n\
                          Agent-Tool: codex\nAgent-Model: gpt-5\n\
                          Agent-Session: s_deploy-tags\nAgent-Machine: ci-runner-2\nTask-Ref: Issue#91\n",
                files: &[(".github/workflows/deploy.yml", 3, 1)],
                checks: &[("test", "failure")],
                labels: &[("ready-to-merge", "codex-agent")],
                receipt: false,
            },
        ],
    })
}

impl Catalog {
    fn find(&self, repo: &RepoName, number: PrNumber) -> Result<&CatalogPull, GitHubError> {
        self.pulls
            .iter()
            .find(|p| *repo == self.repo && p.number == number.get())
            .ok_or_else(|| GitHubError::NotFound {
                what: format!("pull request {repo}#{number}"),
            })
    }

    fn head(&self, pull: &CatalogPull) -> Result<CommitSha, GitHubError> {
        CommitSha::parse(pull.head_sha).map_err(|err| self.malformed(err.to_string()))
    }

    fn login(&self, text: &str) -> Result<Login, GitHubError> {
        Login::parse(text).map_err(|err| self.malformed(err.to_string()))
    }

    fn malformed(&self, message: String) -> GitHubError {
        GitHubError::Malformed {
            route: "catalog".to_owned(),
            message,
        }
    }

    /// What every write answers: the catalog is a read-only mirror.
    fn read_only(&self, route: &str) -> GitHubError {
        GitHubError::Status {
            route: route.to_owned(),
            status: 405,
            message: "the release catalog is read-only".to_owned(),
        }
    }

    /// An hour before the tool's clock, for the events it recorded.
    fn earlier(&self) -> Timestamp {
        self.now.plus_hours(-1)
    }
}

#[async_trait::async_trait]
impl GitHub for Catalog {
    async fn bot_login(&self) -> Result<Login, GitHubError> {
        Ok(self.bot.clone())
    }

    fn rate_limit_remaining(&self) -> Option<u32> {
        None
    }

    async fn open_pulls(&self, repo: &RepoName) -> Result<Vec<PullRequest>, GitHubError> {
        let mut open = Vec::new();
        for pull in self.pulls.iter().filter(|_| *repo == self.repo) {
            open.push(self.pull(repo, PrNumber::new(pull.number)).await?);
        }
        Ok(open)
    }

    async fn pull(&self, repo: &RepoName, number: PrNumber) -> Result<PullRequest, GitHubError> {
        let pull = self.find(repo, number)?;
        Ok(PullRequest {
            repo: repo.clone(),
            number,
            title: pull.title.to_owned(),
            body: String::new(),
            head_sha: self.head(pull)?,
            head_ref: format!("agent/pr-{number}"),
            head_repo: Some(repo.clone()),
            base_sha: self.main_head.clone(),
            base_ref: "main".to_owned(),
            state: PrState::Open,
            merged: false,
            merge_commit: None,
            labels: pull.labels.iter().map(|(l, _)| (*l).to_owned()).collect(),
            author: self.login(pull.author)?,
            created_at: Some(self.earlier()),
        })
    }

    async fn pull_commits(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<CommitContext>, GitHubError> {
        let pull = self.find(repo, number)?;
        let mut commit = CommitContext::from_message(self.head(pull)?, pull.message);
        commit.author_login = Some(self.login(pull.author)?);
        commit.parents = vec![self.main_head.clone()];
        commit.committed_at = Some(self.earlier());
        Ok(vec![commit])
    }

    async fn pull_files(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<FileChange>, GitHubError> {
        let pull = self.find(repo, number)?;
        Ok(pull
            .files
            .iter()
            .map(|(path, additions, deletions)| FileChange {
                path: (*path).to_owned(),
                status: FileStatus::Modified,
                additions: *additions,
                deletions: *deletions,
                previous_filename: None,
            })
            .collect())
    }

    async fn check_runs(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
    ) -> Result<Vec<CheckRun>, GitHubError> {
        let pull = self
            .pulls
            .iter()
            .find(|p| *repo == self.repo && p.head_sha == sha.as_str())
            .ok_or_else(|| GitHubError::NotFound {
                what: format!("commit {sha} in {repo}"),
            })?;
        Ok(pull
            .checks
            .iter()
            .map(|(name, conclusion)| CheckRun {
                id: None,
                name: (*name).to_owned(),
                status: CheckStatus::Completed,
                conclusion: Some(CheckConclusion::from_github(conclusion)),
                started_at: Some(self.earlier()),
                completed_at: Some(self.earlier().plus_seconds(240)),
                app_slug: Some("github-actions".to_owned()),
                output_summary: None,
            })
            .collect())
    }

    async fn label_events(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<LabelEvent>, GitHubError> {
        let pull = self.find(repo, number)?;
        pull.labels
            .iter()
            .map(|(label, by)| {
                Ok(LabelEvent {
                    action: LabelAction::Labeled,
                    label: (*label).to_owned(),
                    actor: Some(self.login(by)?),
                    at: Some(self.earlier().plus_seconds(600)),
                })
            })
            .collect()
    }

    async fn head_ref_updates(
        &self,
        repo: &RepoName,
        head_ref: &str,
    ) -> Result<Vec<RefUpdate>, GitHubError> {
        // The mirror keeps the push that created each agent branch, with the server's time.
        let pull = self
            .pulls
            .iter()
            .find(|p| *repo == self.repo && format!("agent/pr-{}", p.number) == head_ref)
            .ok_or_else(|| GitHubError::NotFound {
                what: format!("activity of {head_ref} in {repo}"),
            })?;
        Ok(vec![RefUpdate {
            kind: RefUpdateKind::BranchCreation,
            before: None,
            after: Some(self.head(pull)?),
            at: Some(self.earlier()),
            actor: Some(self.login(pull.author)?),
        }])
    }

    async fn label_records(
        &self,
        repo: &RepoName,
        names: &[String],
    ) -> Result<Vec<LabelRecord>, GitHubError> {
        // The mirror's labels were all created before any pull request and never edited.
        let _ = repo;
        Ok(names
            .iter()
            .map(|name| LabelRecord::created(name, self.earlier()))
            .collect())
    }

    async fn comments(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<Comment>, GitHubError> {
        let pull = self.find(repo, number)?;
        if !pull.receipt {
            return Ok(Vec::new());
        }
        // The receipt the bot wrote on an earlier tick, as the mirror stored it.
        let body = render_receipt(
            ReceiptLabel::ReadyToMerge,
            &self.head(pull)?,
            repo,
            number,
            None,
        );
        Ok(vec![Comment {
            id: CommentId::new(number.get() * 100),
            author: Some(self.bot.clone()),
            body,
            created_at: Some(self.earlier().plus_seconds(900)),
            updated_at: Some(self.earlier().plus_seconds(900)),
        }])
    }

    async fn reactions(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<Reaction>, GitHubError> {
        self.find(repo, number)?;
        Ok(Vec::new())
    }

    async fn branch_head(&self, repo: &RepoName, branch: &str) -> Result<CommitSha, GitHubError> {
        if *repo == self.repo && branch == "main" {
            return Ok(self.main_head.clone());
        }
        Err(GitHubError::NotFound {
            what: format!("branch {branch} of {repo}"),
        })
    }

    async fn branch_rules(
        &self,
        _repo: &RepoName,
        _branch: &str,
    ) -> Result<Vec<String>, GitHubError> {
        Ok(Vec::new())
    }

    async fn issues(
        &self,
        _repo: &RepoName,
        _query: &IssueQuery,
    ) -> Result<Vec<Issue>, GitHubError> {
        Ok(Vec::new())
    }

    async fn create_comment(
        &self,
        _repo: &RepoName,
        _number: PrNumber,
        _body: &str,
    ) -> Result<Comment, GitHubError> {
        Err(self.read_only("POST /issues/{n}/comments"))
    }

    async fn update_comment(
        &self,
        _repo: &RepoName,
        _id: CommentId,
        _body: &str,
    ) -> Result<(), GitHubError> {
        Err(self.read_only("PATCH /issues/comments/{id}"))
    }

    async fn add_labels(
        &self,
        _repo: &RepoName,
        _number: PrNumber,
        _labels: &[String],
    ) -> Result<(), GitHubError> {
        Err(self.read_only("POST /issues/{n}/labels"))
    }

    async fn remove_label(
        &self,
        _repo: &RepoName,
        _number: PrNumber,
        _label: &str,
    ) -> Result<(), GitHubError> {
        Err(self.read_only("DELETE /issues/{n}/labels/{label}"))
    }

    async fn create_issue(
        &self,
        _repo: &RepoName,
        _issue: &NewIssue,
    ) -> Result<Issue, GitHubError> {
        Err(self.read_only("POST /issues"))
    }

    async fn close_issue(&self, _repo: &RepoName, _number: PrNumber) -> Result<(), GitHubError> {
        Err(self.read_only("PATCH /issues/{n}"))
    }

    async fn merge_queue(
        &self,
        _repo: &RepoName,
        _branch: &str,
    ) -> Result<Option<Vec<mp_core::port::QueueEntry>>, GitHubError> {
        Ok(None)
    }

    async fn queue_entry(
        &self,
        _repo: &RepoName,
        _number: PrNumber,
    ) -> Result<Option<mp_core::port::QueueEntry>, GitHubError> {
        Ok(None)
    }

    async fn enqueue_pull(
        &self,
        _repo: &RepoName,
        _number: PrNumber,
        _expected_head: &CommitSha,
    ) -> Result<mp_core::port::QueueEntry, GitHubError> {
        Err(self.read_only("POST /graphql (enqueuePullRequest)"))
    }

    async fn dequeue_pull(&self, _repo: &RepoName, _number: PrNumber) -> Result<(), GitHubError> {
        Err(self.read_only("POST /graphql (dequeuePullRequest)"))
    }

    async fn last_queue_removal(
        &self,
        _repo: &RepoName,
        _number: PrNumber,
    ) -> Result<Option<mp_core::port::QueueRemoval>, GitHubError> {
        Ok(None)
    }

    async fn merge_groups(
        &self,
        _repo: &RepoName,
        _base: &str,
    ) -> Result<Vec<mp_core::port::MergeGroupRef>, GitHubError> {
        Ok(Vec::new())
    }

    async fn create_check_run(
        &self,
        _repo: &RepoName,
        _run: &mp_core::port::NewCheckRun,
    ) -> Result<(), GitHubError> {
        Err(self.read_only("POST /check-runs"))
    }

    async fn merge_pull(
        &self,
        _repo: &RepoName,
        _number: PrNumber,
        _request: &MergeRequest,
    ) -> Result<CommitSha, GitHubError> {
        Err(self.read_only("PUT /pulls/{n}/merge"))
    }

    async fn update_branch(
        &self,
        _repo: &RepoName,
        _number: PrNumber,
        _expected_head: &CommitSha,
    ) -> Result<UpdateBranchOutcome, GitHubError> {
        Err(self.read_only("PUT /pulls/{n}/update-branch"))
    }
}

/// Drives a future that never waits, as every catalog call is answered at once. A tool
/// whose port does real I/O would use its own runtime instead.
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut context = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return output;
        }
        std::thread::yield_now();
    }
}

/// Loads the inline configuration the way the bot loads its directory.
fn load_config() -> Result<Config, Error> {
    let files: ConfigFiles = CONFIG.into_iter().collect();
    let report = config::load(&files);
    for warning in report.warnings() {
        println!("config warning: {warning}");
    }
    match report.config {
        Some(config) => Ok(config),
        None => {
            let errors: Vec<String> = report.errors().map(ToString::to_string).collect();
            Err(format!("invalid configuration:\n  {}", errors.join("\n  ")).into())
        }
    }
}

fn main() -> Result<(), Error> {
    let catalog = catalog()?;
    let config = load_config()?;
    let options = TickOptions::from_config(&config);
    let bot = block_on(catalog.bot_login())?;
    let setup = TickSetup::new(&config, &options, bot)?;

    for pull in block_on(catalog.open_pulls(&catalog.repo))? {
        let evaluation = block_on(tick::evaluate_pr(&catalog, &setup, &pull, catalog.now))?;
        println!(
            "{} at head {}: {}",
            evaluation.pr.reference(),
            evaluation.pr.head_sha.short(),
            evaluation.pr.title
        );
        println!("  gate:");
        for result in &evaluation.gate.results {
            let mark = match result.outcome {
                Outcome::Pass => "pass",
                Outcome::Fail => "FAIL",
                Outcome::Advisory => "warn",
            };
            println!("    {mark:<4} {result}");
        }
        println!("  classifier: Quadrant {}", evaluation.verdict.quadrant);
        for vote in &evaluation.verdict.votes {
            println!("    {vote}");
        }
        let decision = match evaluation.route() {
            Route::Mergeable => "mergeable: every condition holds".to_owned(),
            Route::Inbox => {
                "Quadrant D, waiting only for the owner: the gate asks in the decision inbox"
                    .to_owned()
            }
            Route::Blocked => format!("blocked: {}", evaluation.blocking_summary()),
            Route::Ignored => format!("ignored: base is {}", evaluation.pr.base_ref),
            Route::Waiting => "waiting: only required checks still to come".to_owned(),
            Route::Update => {
                "update: the base is behind main; the gate asks GitHub to update the branch"
                    .to_owned()
            }
        };
        println!("  decision: {decision}");
        println!();
    }
    Ok(())
}
