//! Test helpers for the tick: a configuration, times, logins, SHAs, commits and check
//! runs, a `block_on` for futures that never wait, and the last private fake (`Fake`, a
//! small GitHub and audit log that records every write as one log line), which only the
//! pull-request path's tests in `tests.rs` still use; every other test runs over
//! `mp_github_fake::MemoryGitHub`.

use std::collections::BTreeMap;
use std::pin::pin;
use std::sync::{Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

use mp_core::approval::{APPROVED_A, READY_TO_MERGE};
use mp_core::config::{self, Config, ConfigFiles};
use mp_core::context::{
    CheckConclusion, CheckRun, CheckStatus, Comment, CommentId, CommitContext, FileChange,
    FileStatus, LabelAction, LabelEvent, LabelRecord, PrState, Reaction, RefUpdate, RefUpdateKind,
};
use mp_core::ids::{CommitSha, Login, PrNumber, RepoName, Timestamp};
use mp_core::port::{
    AuditError, AuditLog, AuditRecord, GitHub, GitHubError, Issue, IssueQuery, IssueState,
    MergeRequest, NewIssue, PullRequest, UpdateBranchOutcome,
};

pub(crate) const NOW: &str = "2026-03-01T12:00:00Z";
pub(crate) const OWNER: &str = "alice";
pub(crate) const BOT: &str = "mp-gate[bot]";
/// The rate-limit budget the fake reports until a test changes it.
pub(crate) const DEFAULT_RATE_LIMIT: u32 = 4321;
pub(crate) const TRAILERS: &str = "Agent-Tool: claude-code\nAgent-Model: claude-opus-4.7\nAgent-Session: s_abc-123\nAgent-Machine: laptop\nTask-Ref: Issue#12";

/// Runs a future that never waits (the fakes answer at once).
pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..1_000 {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
    panic!("a test future kept waiting; the fakes never wait")
}

pub(crate) fn at(text: &str) -> Timestamp {
    Timestamp::parse(text).expect("test timestamp is valid")
}

pub(crate) fn now() -> Timestamp {
    at(NOW)
}

/// A write as the supervisor and whole-tick tests read it: an issue as
/// `issue <repo>#<n> [<labels>]: <title>`, any other write as the action log shows it.
pub(crate) fn write_line(write: &mp_core::port::Write) -> String {
    match write {
        mp_core::port::Write::CreateIssue {
            repo,
            issue,
            answer,
        } => format!(
            "issue {repo}#{} [{}]: {}",
            answer.map_or(0, PrNumber::get),
            issue.labels.join(", "),
            issue.title
        ),
        other => other.log_line(),
    }
}

/// A full SHA starting with `prefix`, padded with zeros.
pub(crate) fn sha(prefix: &str) -> CommitSha {
    CommitSha::parse(&format!("{prefix:0<40}")).expect("test sha is hex")
}

pub(crate) fn login(name: &str) -> Login {
    Login::parse(name).expect("test login is valid")
}

pub(crate) fn repo(name: &str) -> RepoName {
    RepoName::parse(name).expect("test repository is valid")
}

/// The `main` head every pull request is based on by default.
pub(crate) fn main_head() -> CommitSha {
    sha("f")
}

/// Owner `alice`; `acme/app` gated, `acme/old` audit-only; required check `test`; merging on.
pub(crate) fn config() -> Config {
    config_with(&[])
}

/// [`config`] with some files added or replaced.
pub(crate) fn config_with(replaced: &[(&str, &str)]) -> Config {
    let mut files = ConfigFiles::new()
        .with(config::OWNER_FILE, "github_login: alice\n")
        .with(
            config::PROJECTS_FILE,
            "governance_repo: acme/governance\nsupervised_repos: [acme/app, acme/old]\naudit_only_repos: [acme/old]\n",
        )
        .with(
            config::ENV_FILE,
            "bot_app_slug: mp-gate\nrequired_checks: [test]\nmerge_enabled: true\n",
        );
    for (name, text) in replaced {
        files.insert(*name, *text);
    }
    let report = config::load(&files);
    report
        .config
        .unwrap_or_else(|| panic!("test config loads: {:?}", report.problems))
}

/// One pull request of the fake world with everything the tick reads about it.
#[derive(Debug, Clone)]
pub(crate) struct FakePr {
    pub(crate) pull: PullRequest,
    pub(crate) commits: Vec<CommitContext>,
    pub(crate) files: Vec<FileChange>,
    pub(crate) checks: Vec<CheckRun>,
    pub(crate) events: Vec<LabelEvent>,
    /// The head branch's activity log.
    pub(crate) pushes: Vec<RefUpdate>,
}

/// `acme/app#n`, Quadrant A and green: head `a<n>…` on base `main`, one commit with good
/// trailers committed at 10:00 and pushed (branch created) at 10:00, `README.md`
/// modified, `test` green from GitHub Actions, `ready-to-merge` applied by the owner at
/// 11:00 (no receipt yet).
pub(crate) fn clean(n: u64) -> FakePr {
    let head = sha(&format!("a{n}"));
    let mut commit =
        CommitContext::from_message(head.clone(), &format!("docs: change {n}\n\n{TRAILERS}"));
    commit.committed_at = Some(at("2026-03-01T10:00:00Z"));
    FakePr {
        pull: PullRequest {
            repo: repo("acme/app"),
            number: PrNumber::new(n),
            title: format!("docs: change {n}"),
            body: String::new(),
            head_sha: head,
            head_ref: format!("change-{n}"),
            head_repo: Some(repo("acme/app")),
            base_sha: main_head(),
            base_ref: "main".to_owned(),
            state: PrState::Open,
            merged: false,
            merge_commit: None,
            labels: Vec::new(),
            author: login("agent-bob"),
            created_at: Some(at("2026-03-01T09:00:00Z")),
        },
        commits: vec![commit],
        files: Vec::new(),
        checks: Vec::new(),
        events: Vec::new(),
        pushes: vec![RefUpdate {
            kind: RefUpdateKind::BranchCreation,
            before: None,
            after: Some(sha(&format!("a{n}"))),
            at: Some(at("2026-03-01T10:00:00Z")),
            actor: Some(login("agent-bob")),
        }],
    }
    .file("README.md", FileStatus::Modified)
    .check("test", "success")
    .applied(READY_TO_MERGE, OWNER, "2026-03-01T11:00:00Z")
}

impl FakePr {
    /// Moves the pull request to another repository.
    pub(crate) fn in_repo(mut self, name: &str) -> Self {
        self.pull.repo = repo(name);
        self
    }

    /// Replaces the changed files with one file.
    pub(crate) fn file(mut self, path: &str, status: FileStatus) -> Self {
        self.files = vec![FileChange {
            path: path.to_owned(),
            status,
            additions: 1,
            deletions: 0,
            previous_filename: None,
        }];
        self
    }

    /// Replaces the check runs with one run of `name` from GitHub Actions; `state` is a
    /// conclusion or `in_progress`; `none` leaves no run at all.
    pub(crate) fn check(mut self, name: &str, state: &str) -> Self {
        self.checks.clear();
        let (status, conclusion) = match state {
            "none" => return self,
            "in_progress" => (CheckStatus::InProgress, None),
            conclusion => (
                CheckStatus::Completed,
                Some(CheckConclusion::from_github(conclusion)),
            ),
        };
        self.checks.push(CheckRun {
            id: None,
            name: name.to_owned(),
            status,
            conclusion,
            started_at: None,
            completed_at: None,
            app_slug: Some("github-actions".to_owned()),
            output_summary: None,
        });
        self
    }

    /// Puts `label` on the pull request with a `labeled` event by `actor` at `when`.
    pub(crate) fn applied(mut self, label: &str, actor: &str, when: &str) -> Self {
        self.pull.labels.push(label.to_owned());
        self.events.push(LabelEvent {
            action: LabelAction::Labeled,
            label: label.to_owned(),
            actor: Some(login(actor)),
            at: Some(at(when)),
        });
        self
    }

    /// Takes `ready-to-merge` off (label and events).
    pub(crate) fn not_ready(mut self) -> Self {
        self.pull.labels.retain(|l| l != READY_TO_MERGE);
        self.events.retain(|e| e.label != READY_TO_MERGE);
        self
    }

    /// The owner's `decision:approved-A` at 11:00.
    pub(crate) fn approved_a(self) -> Self {
        self.applied(APPROVED_A, OWNER, "2026-03-01T11:00:00Z")
    }

    /// Sets the head commit's committer date.
    pub(crate) fn committed(mut self, when: &str) -> Self {
        for commit in &mut self.commits {
            commit.committed_at = Some(at(when));
        }
        self
    }
}

/// The fake world's state. Tests reach it through [`Fake::with`].
#[derive(Debug, Clone)]
pub(crate) struct State {
    /// `None`: `bot_login` fails.
    pub(crate) bot: Option<Login>,
    /// Successive answers for the `main` head of `acme/app`; the last one repeats.
    pub(crate) main: Vec<CommitSha>,
    pub(crate) pulls: Vec<FakePr>,
    pub(crate) comments: BTreeMap<(RepoName, u64), Vec<Comment>>,
    pub(crate) issues: Vec<Issue>,
    /// `(method, PR number, error)`: that call fails for that pull request.
    pub(crate) failures: Vec<(&'static str, u64, GitHubError)>,
    /// When set, the audit log refuses records with this message.
    pub(crate) audit_error: Option<String>,
    /// Every merge request received.
    pub(crate) merges: Vec<MergeRequest>,
    /// Every write and audit record, one line each, in order.
    pub(crate) log: Vec<String>,
    next_comment: u64,
    next_issue: u64,
    /// What `rate_limit_remaining` answers.
    pub(crate) rate_limit_remaining: Option<u32>,
    /// When set, each read of a pull request's parts and of `main` waits once before it
    /// answers, so reads in flight overlap; `in_flight` and `max_in_flight` count them.
    pub(crate) yielding: bool,
    pub(crate) in_flight: usize,
    pub(crate) max_in_flight: usize,
    /// Reads of a pull request's parts and of `main` that reached the fake.
    pub(crate) reads: usize,
    /// When set, each such read spends one call of `rate_limit_remaining`.
    pub(crate) spending: bool,
    /// When set, each listing of a repository's open pull requests is logged too.
    pub(crate) logging_lists: bool,
    /// GitHub's records of labels; a label not listed was created long ago and never
    /// edited.
    pub(crate) label_records: Vec<LabelRecord>,
}

/// A future that is pending once, then ready.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

/// A small in-memory GitHub and audit log.
#[derive(Debug)]
pub(crate) struct Fake(Mutex<State>);

fn first_line(body: &str) -> &str {
    body.lines().next().unwrap_or_default()
}

impl Fake {
    pub(crate) fn new(pulls: Vec<FakePr>) -> Self {
        Self(Mutex::new(State {
            bot: Some(login(BOT)),
            main: vec![main_head()],
            pulls,
            comments: BTreeMap::new(),
            issues: Vec::new(),
            failures: Vec::new(),
            audit_error: None,
            merges: Vec::new(),
            log: Vec::new(),
            next_comment: 1000,
            next_issue: 100,
            rate_limit_remaining: Some(DEFAULT_RATE_LIMIT),
            yielding: false,
            in_flight: 0,
            max_in_flight: 0,
            reads: 0,
            spending: false,
            logging_lists: false,
            label_records: Vec::new(),
        }))
    }

    /// A fake in the same state, with its own log from here on.
    pub(crate) fn copy(&self) -> Self {
        Self(Mutex::new(self.with(|s| s.clone())))
    }

    /// One read of a pull request's parts or of `main` reaching the fake: counted, and
    /// held in flight across one wait when [`State::yielding`] is set.
    async fn read_in_flight(&self) {
        let yielding = self.with(|s| {
            s.reads += 1;
            if s.spending
                && let Some(remaining) = &mut s.rate_limit_remaining
            {
                *remaining = remaining.saturating_sub(1);
            }
            if s.yielding {
                s.in_flight += 1;
                s.max_in_flight = s.max_in_flight.max(s.in_flight);
            }
            s.yielding
        });
        if yielding {
            YieldOnce(false).await;
            self.with(|s| s.in_flight -= 1);
        }
    }

    /// Runs `f` on the state.
    pub(crate) fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        f(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// The lines logged since the last call.
    pub(crate) fn take_log(&self) -> Vec<String> {
        self.with(|s| std::mem::take(&mut s.log))
    }

    /// Makes `method` fail with `error` for pull request `number`.
    pub(crate) fn fail(&self, method: &'static str, number: u64, error: GitHubError) {
        self.with(|s| s.failures.push((method, number, error)));
    }
}

impl State {
    fn failure(&self, method: &str, number: u64) -> Result<(), GitHubError> {
        match self
            .failures
            .iter()
            .find(|(m, n, _)| *m == method && *n == number)
        {
            Some((_, _, error)) => Err(error.clone()),
            None => Ok(()),
        }
    }

    fn pr(&self, repo: &RepoName, number: PrNumber) -> Result<&FakePr, GitHubError> {
        self.pulls
            .iter()
            .find(|p| p.pull.repo == *repo && p.pull.number == number)
            .ok_or_else(|| GitHubError::NotFound {
                what: format!("{repo}#{number}"),
            })
    }

    fn read<T>(
        &self,
        method: &str,
        repo: &RepoName,
        number: PrNumber,
        f: impl FnOnce(&FakePr) -> T,
    ) -> Result<T, GitHubError> {
        self.failure(method, number.get())?;
        self.pr(repo, number).map(f)
    }
}

#[async_trait::async_trait]
impl GitHub for Fake {
    async fn bot_login(&self) -> Result<Login, GitHubError> {
        self.with(|s| {
            s.bot.clone().ok_or_else(|| GitHubError::Unavailable {
                route: "GET /app".to_owned(),
                message: "bad credentials".to_owned(),
            })
        })
    }

    fn rate_limit_remaining(&self) -> Option<u32> {
        self.with(|s| s.rate_limit_remaining)
    }

    async fn open_pulls(&self, repo: &RepoName) -> Result<Vec<PullRequest>, GitHubError> {
        self.with(|s| {
            if s.logging_lists {
                s.log.push(format!("list {repo}"));
            }
            Ok(s.pulls
                .iter()
                .filter(|p| p.pull.repo == *repo && p.pull.state == PrState::Open)
                .map(|p| p.pull.clone())
                .collect())
        })
    }

    async fn pull(&self, repo: &RepoName, number: PrNumber) -> Result<PullRequest, GitHubError> {
        self.with(|s| s.read("pull", repo, number, |p| p.pull.clone()))
    }

    async fn pull_commits(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<CommitContext>, GitHubError> {
        self.read_in_flight().await;
        self.with(|s| s.read("pull_commits", repo, number, |p| p.commits.clone()))
    }

    async fn pull_files(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<FileChange>, GitHubError> {
        self.read_in_flight().await;
        self.with(|s| s.read("pull_files", repo, number, |p| p.files.clone()))
    }

    async fn check_runs(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
    ) -> Result<Vec<CheckRun>, GitHubError> {
        self.read_in_flight().await;
        self.with(|s| {
            Ok(s.pulls
                .iter()
                .filter(|p| p.pull.repo == *repo && p.pull.head_sha == *sha)
                .flat_map(|p| p.checks.clone())
                .collect())
        })
    }

    async fn label_events(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<LabelEvent>, GitHubError> {
        self.read_in_flight().await;
        self.with(|s| {
            if let Some(issue) = s
                .issues
                .iter()
                .find(|i| i.repo == *repo && i.number == number)
            {
                s.failure("label_events", number.get())?;
                // As GitHub records the labels set when an issue is opened: each one
                // `labeled` by its author.
                return Ok(issue
                    .labels
                    .iter()
                    .map(|label| LabelEvent {
                        action: LabelAction::Labeled,
                        label: label.clone(),
                        actor: issue.author.clone(),
                        at: issue.created_at,
                    })
                    .collect());
            }
            s.read("label_events", repo, number, |p| p.events.clone())
        })
    }

    async fn label_records(
        &self,
        _repo: &RepoName,
        names: &[String],
    ) -> Result<Vec<LabelRecord>, GitHubError> {
        let long_ago = Timestamp::parse("2020-01-01T00:00:00Z").expect("a valid time");
        self.read_in_flight().await;
        self.with(|s| {
            Ok(names
                .iter()
                .map(|name| {
                    s.label_records
                        .iter()
                        .find(|r| r.name == *name)
                        .cloned()
                        .unwrap_or_else(|| LabelRecord::created(name, long_ago))
                })
                .collect())
        })
    }

    async fn head_ref_updates(
        &self,
        repo: &RepoName,
        head_ref: &str,
    ) -> Result<Vec<RefUpdate>, GitHubError> {
        self.read_in_flight().await;
        self.with(|s| {
            let pr = s
                .pulls
                .iter()
                .find(|p| p.pull.repo == *repo && p.pull.head_ref == head_ref);
            let Some(pr) = pr else {
                return Err(GitHubError::NotFound {
                    what: format!("{repo} activity of {head_ref}"),
                });
            };
            s.failure("head_ref_updates", pr.pull.number.get())?;
            Ok(pr.pushes.clone())
        })
    }

    async fn comments(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<Comment>, GitHubError> {
        self.read_in_flight().await;
        self.with(|s| {
            s.failure("comments", number.get())?;
            Ok(s.comments
                .get(&(repo.clone(), number.get()))
                .cloned()
                .unwrap_or_default())
        })
    }

    async fn reactions(
        &self,
        _repo: &RepoName,
        _number: PrNumber,
    ) -> Result<Vec<Reaction>, GitHubError> {
        Ok(Vec::new())
    }

    async fn branch_head(&self, _repo: &RepoName, _branch: &str) -> Result<CommitSha, GitHubError> {
        self.read_in_flight().await;
        self.with(|s| {
            let head = s
                .main
                .first()
                .cloned()
                .ok_or_else(|| GitHubError::NotFound {
                    what: "main".to_owned(),
                })?;
            if s.main.len() > 1 {
                s.main.remove(0);
            }
            Ok(head)
        })
    }

    async fn issues(&self, repo: &RepoName, query: &IssueQuery) -> Result<Vec<Issue>, GitHubError> {
        self.with(|s| {
            Ok(s.issues
                .iter()
                .filter(|i| i.repo == *repo)
                .filter(|i| query.state.is_none_or(|state| i.state == state))
                .filter(|i| query.labels.iter().all(|l| i.labels.contains(l)))
                .cloned()
                .collect())
        })
    }

    async fn create_comment(
        &self,
        repo: &RepoName,
        number: PrNumber,
        body: &str,
    ) -> Result<Comment, GitHubError> {
        self.with(|s| {
            s.failure("create_comment", number.get())?;
            s.next_comment += 1;
            let comment = Comment {
                id: CommentId::new(s.next_comment),
                author: s.bot.clone(),
                body: body.to_owned(),
                created_at: Some(now()),
                updated_at: Some(now()),
            };
            s.log
                .push(format!("comment {repo}#{number}: {}", first_line(body)));
            s.comments
                .entry((repo.clone(), number.get()))
                .or_default()
                .push(comment.clone());
            Ok(comment)
        })
    }

    async fn update_comment(
        &self,
        _repo: &RepoName,
        id: CommentId,
        body: &str,
    ) -> Result<(), GitHubError> {
        self.with(|s| {
            let comment = s
                .comments
                .values_mut()
                .flatten()
                .find(|c| c.id == id)
                .ok_or_else(|| GitHubError::NotFound {
                    what: format!("comment {}", id.get()),
                })?;
            comment.body = body.to_owned();
            s.log
                .push(format!("update-comment {}: {}", id.get(), first_line(body)));
            Ok(())
        })
    }

    async fn add_labels(
        &self,
        repo: &RepoName,
        number: PrNumber,
        labels: &[String],
    ) -> Result<(), GitHubError> {
        self.with(|s| {
            s.log
                .push(format!("label {repo}#{number}: {}", labels.join(", ")))
        });
        Ok(())
    }

    async fn remove_label(
        &self,
        repo: &RepoName,
        number: PrNumber,
        label: &str,
    ) -> Result<(), GitHubError> {
        self.with(|s| s.log.push(format!("unlabel {repo}#{number}: {label}")));
        Ok(())
    }

    async fn create_issue(&self, repo: &RepoName, issue: &NewIssue) -> Result<Issue, GitHubError> {
        self.with(|s| {
            s.next_issue += 1;
            let created = Issue {
                repo: repo.clone(),
                number: PrNumber::new(s.next_issue - 1),
                title: issue.title.clone(),
                body: issue.body.clone(),
                state: IssueState::Open,
                labels: issue.labels.clone(),
                author: s.bot.clone(),
                created_at: Some(now()),
                is_pull_request: false,
            };
            s.log.push(format!(
                "issue {repo}#{} [{}]: {}",
                created.number,
                issue.labels.join(", "),
                issue.title
            ));
            s.issues.push(created.clone());
            Ok(created)
        })
    }

    async fn close_issue(&self, repo: &RepoName, number: PrNumber) -> Result<(), GitHubError> {
        self.with(|s| {
            s.failure("close_issue", number.get())?;
            s.log.push(format!("close {repo}#{number}"));
            Ok(())
        })
    }

    async fn merge_pull(
        &self,
        repo: &RepoName,
        number: PrNumber,
        request: &MergeRequest,
    ) -> Result<CommitSha, GitHubError> {
        self.with(|s| {
            s.failure("merge_pull", number.get())?;
            let index = s
                .pulls
                .iter()
                .position(|p| p.pull.repo == *repo && p.pull.number == number)
                .ok_or_else(|| GitHubError::NotFound {
                    what: format!("{repo}#{number}"),
                })?;
            if s.pulls[index].pull.head_sha != request.head_sha {
                return Err(GitHubError::HeadMoved {
                    pr: format!("{repo}#{number}"),
                    expected: request.head_sha.clone(),
                });
            }
            let merged = sha(&format!("c{number}"));
            s.main = vec![merged.clone()];
            let pull = &mut s.pulls[index].pull;
            pull.state = PrState::Closed;
            pull.merged = true;
            pull.merge_commit = Some(merged.clone());
            let lines = request
                .commit_message
                .as_deref()
                .map_or(0, |m| m.lines().count());
            s.log.push(format!(
                "merge {repo}#{number} @ {} (squash, {lines} identity lines)",
                request.head_sha.short()
            ));
            s.merges.push(request.clone());
            // `merge_pull_lost`: the merge is applied and its answer lost.
            s.failure("merge_pull_lost", number.get())?;
            Ok(merged)
        })
    }

    async fn update_branch(
        &self,
        repo: &RepoName,
        number: PrNumber,
        expected_head: &CommitSha,
    ) -> Result<UpdateBranchOutcome, GitHubError> {
        self.with(|s| {
            s.log.push(format!(
                "update-branch {repo}#{number} @ {}",
                expected_head.short()
            ));
            Ok(UpdateBranchOutcome::Accepted)
        })
    }
}

#[async_trait::async_trait]
impl AuditLog for Fake {
    async fn append(&self, record: &AuditRecord) -> Result<(), AuditError> {
        self.with(|s| {
            if let Some(message) = &s.audit_error {
                return Err(AuditError(message.clone()));
            }
            s.log.push(format!(
                "audit {} @ {}: {} ({} votes)",
                record.pr,
                record.head_sha.short(),
                record.quadrant,
                record.votes.len()
            ));
            Ok(())
        })
    }
}

/// A commit on `main` with SHA `prefix` (zero-padded) and `message`, committed at 10:00 on
/// the test day by `committer` (`None`: no linked account); no parents unless set.
pub(crate) fn commit_by(prefix: &str, message: &str, committer: Option<&str>) -> CommitContext {
    let mut commit = CommitContext::from_message(sha(prefix), message);
    commit.committer_login = committer.map(login);
    commit.author_login = committer.map(login);
    commit.committed_at = Some(at("2026-03-01T10:00:00Z"));
    commit
}

/// A commit the bot squash-merged (the normal, gated way onto `main`).
pub(crate) fn merged(prefix: &str, message: &str) -> CommitContext {
    commit_by(prefix, message, Some(BOT))
}

/// One check run named `name` from GitHub Actions: `state` is a conclusion,
/// `in_progress`, or `zero:<conclusion>` for a run that started and completed at once.
pub(crate) fn check_run(name: &str, state: &str) -> CheckRun {
    let (status, conclusion, zero) = match state {
        "in_progress" => (CheckStatus::InProgress, None, false),
        other => match other.strip_prefix("zero:") {
            Some(conclusion) => (
                CheckStatus::Completed,
                Some(CheckConclusion::from_github(conclusion)),
                true,
            ),
            None => (
                CheckStatus::Completed,
                Some(CheckConclusion::from_github(other)),
                false,
            ),
        },
    };
    let started = at("2026-03-01T10:05:00Z");
    CheckRun {
        id: None,
        name: name.to_owned(),
        status,
        conclusion,
        started_at: Some(started),
        completed_at: Some(if zero {
            started
        } else {
            at("2026-03-01T10:09:00Z")
        }),
        app_slug: Some("github-actions".to_owned()),
        output_summary: None,
    }
}
