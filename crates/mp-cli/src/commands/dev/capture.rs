//! `mp dev capture`: a real repository recorded into a world file through the port's reads,
//! so "what would mp do" can be replayed offline with `mp tick --world` and `mp explain
//! --world` (docs/decisions/0072).
//!
//! [`capture`] reads only: every call it makes is a read of [`GitHubHistory`], and the
//! command wraps the client in a dry run besides. It records, per repository: the default
//! branch, its head and its newest [`HISTORY`] commits with their check runs and GitHub's
//! activity log; the newest open pull requests with their commits, files, check runs on
//! the head, labels, label timeline, comments, reactions and head-branch activity; GitHub's
//! record of every label a thread carries; the files the drift check and the break-glass
//! audit read (the canonical paths and `docs/decisions/*.md`). In the governance and inbox
//! repositories it records the open issues with their timelines, comments and reactions,
//! and the `bot-state` branch's files. Commits outside what it records are cut off: a
//! parent it did not read is left out, so the world's history starts there.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::Args;
use serde_json::json;

use mp_core::context::{CommitContext, PrState, RefUpdate};
use mp_core::ids::{CommitSha, Login, RepoName, Timestamp};
use mp_core::port::{GitHubError, GitHubHistory, IssueQuery, IssueState, PullRequest};
use mp_core::state::BOT_STATE_BRANCH;
use mp_github_fake::world::{Commit, IssueRecord, Pull, PullFile, Repo, RepoLabel, World};
use mp_tick::DryRun;

use crate::Exit;
use crate::cli::{ApiUrl, Format};
use crate::commands::config_validate::read_config_dir;
use crate::live::{live_credentials, live_rest_config, load_live_config, rest_client};

/// Arguments of `mp dev capture`.
#[derive(Debug, Args)]
pub struct CaptureArgs {
    /// The configuration directory of the deployment (as `mp tick --config`); its files
    /// are embedded in the world. Credentials come from the environment, as for `mp tick`.
    #[arg(long, value_name = "DIR")]
    pub config: PathBuf,
    #[command(flatten)]
    pub api: ApiUrl,
    /// The supervised repositories to record (default: every one `projects.yml` names).
    /// The governance and inbox repositories are always recorded; a supervised repository
    /// left out is unknown to the replay, which reports it (exit 1).
    #[arg(value_name = "OWNER/REPO")]
    pub repos: Vec<String>,
    /// How many open pull requests to record per repository, the newest.
    #[arg(long, value_name = "N", default_value_t = 30,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub prs: u32,
    /// The world file to write (docs/fixtures.md).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Replace --out when it exists.
    #[arg(long)]
    pub force: bool,
    /// Output format of the summary.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Runs `mp dev capture`: checks what it can before reading, reads through a dry run of
/// the REST client, writes the world under a temporary name beside `--out` and renames it
/// into place.
///
/// # Errors
/// `--out` exists without `--force`, the configuration is missing or invalid, no
/// credentials, a repository that is unknown or not supervised, a failed read, a failed
/// write (exit 2, or 5 without configuration); nothing is written then.
pub fn run(args: &CaptureArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    if args.out.exists() && !args.force {
        bail!(
            "{} exists: give --force to replace it, or another --out; nothing was written",
            args.out.display()
        );
    }
    let (config, _warnings) = load_live_config(&args.config)?;
    let projects = config.projects();
    let repos = if args.repos.is_empty() {
        projects.supervised_repos().to_vec()
    } else {
        let mut repos = Vec::new();
        for text in &args.repos {
            let repo = RepoName::parse(text)
                .with_context(|| format!("{text:?} is not OWNER/REPO; nothing was written"))?;
            if !projects.is_supervised(&repo) {
                bail!(
                    "{repo} is not in projects.yml supervised_repos, so a tick would not look at it: add it there first; nothing was written"
                );
            }
            if !repos.contains(&repo) {
                repos.push(repo);
            }
        }
        repos
    };
    let workflow_bound = repos
        .iter()
        .filter(|repo| !config.effective_required_check_workflows(repo).is_empty())
        .cloned()
        .collect();
    let canonical_paths = config
        .mirror_paths()
        .map(|m| m.canonical_paths().to_vec())
        .unwrap_or_default();
    let credentials = live_credentials()?;
    let now = Timestamp::from_unix_seconds(jiff::Timestamp::now().as_second())
        .context("reading the system clock")?;
    let plan = Plan {
        repos,
        governance: projects.governance_repo().clone(),
        inbox: projects.inbox_repository().clone(),
        prs: usize::try_from(args.prs).unwrap_or(usize::MAX),
        canonical_paths,
        workflow_bound,
        bot_slug: config.env().bot_app_slug().to_owned(),
        now,
    };
    let client = rest_client(live_rest_config(&args.api.url, &config, credentials), None)?;
    // Read-only twice over: capture only reads, and a dry run only plans writes.
    let read_only = DryRun::with_history(&client).at(now);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let (mut world, summary) = runtime
        .block_on(capture(&read_only, &plan))
        .map_err(|error| match error {
            GitHubError::NotFound { what } => anyhow::anyhow!(
                "{what}: no such repository or branch, or the credentials cannot see it; nothing was written"
            ),
            other => anyhow::anyhow!("{other}; nothing was written"),
        })?;
    let skills = args.config.join("skills");
    let mut notes = summary.notes.clone();
    if skills.is_dir() {
        notes.push(format!(
            "the user skills in {} are not embedded: the replay runs without them",
            skills.display()
        ));
    }
    let files = read_config_dir(&args.config)?;
    world.config = files
        .names()
        .filter_map(|name| Some((name.to_owned(), files.get(name)?.to_owned())))
        .collect();
    let text = mp_github_fake::world::world_to_yaml(&world, None);
    // What is written must read back as a world.
    mp_github_fake::world::parse_world(&args.out.display().to_string(), &text, None)
        .context("the captured world does not read back; nothing was written")?;
    write_atomically(&args.out, &text)?;
    match args.format {
        Format::Text => {
            writeln!(out, "captured into {}:", args.out.display())?;
            for repo in &summary.repos {
                writeln!(
                    out,
                    "  {}: {} of {} open pull requests, {} open issues, {} commits, {} check runs, {} comments, {} label events, {} files",
                    repo.repo,
                    repo.pulls,
                    repo.open_pulls,
                    repo.issues,
                    repo.commits,
                    repo.check_runs,
                    repo.comments,
                    repo.label_events,
                    repo.files
                )?;
            }
            for note in &notes {
                writeln!(out, "note: {note}")?;
            }
            writeln!(
                out,
                "replay: mp tick --world {} --dry-run",
                args.out.display()
            )?;
        }
        Format::Json => {
            let repos: Vec<_> = summary
                .repos
                .iter()
                .map(|r| {
                    json!({
                        "repo": r.repo,
                        "pulls": r.pulls,
                        "open_pulls": r.open_pulls,
                        "issues": r.issues,
                        "commits": r.commits,
                        "check_runs": r.check_runs,
                        "comments": r.comments,
                        "label_events": r.label_events,
                        "files": r.files,
                    })
                })
                .collect();
            crate::output::json(
                out,
                &json!({
                    "out": args.out.display().to_string(),
                    "now": now.to_string(),
                    "repos": repos,
                    "notes": notes,
                }),
            )?;
        }
    }
    Ok(Exit::Ok)
}

/// Writes `text` to `path` under a temporary name in the same directory, then renames it
/// into place: a reader sees the old file or the whole new one, never half of it.
fn write_atomically(path: &Path, text: &str) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .with_context(|| format!("{} names no file", path.display()))?;
    let temporary = dir.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let written = std::fs::File::create(&temporary)
        .and_then(|mut file| {
            file.write_all(text.as_bytes())?;
            file.sync_all()
        })
        .and_then(|()| std::fs::rename(&temporary, path));
    if let Err(error) = written {
        // The temporary file may not exist; there is nothing else to clean up.
        let _ = std::fs::remove_file(&temporary);
        return Err(error)
            .with_context(|| format!("writing {}; nothing was written", path.display()));
    }
    Ok(())
}

/// How many commits of each default branch are recorded, newest first.
pub const HISTORY: usize = 20;

/// The directory of the governance repository's decision records, which the break-glass
/// audit reads.
const DECISIONS_DIR: &str = "docs/decisions/";

/// What to capture.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The repositories whose pull requests are recorded.
    pub repos: Vec<RepoName>,
    /// The governance repository (issues, `bot-state`, decision records).
    pub governance: RepoName,
    /// The decision inbox's repository (open issues).
    pub inbox: RepoName,
    /// How many open pull requests per repository, the newest.
    pub prs: usize,
    /// The canonical paths of the drift check, recorded where they exist.
    pub canonical_paths: Vec<String>,
    /// The repositories whose required checks are bound to a workflow file
    /// (`required_check_workflows`): the workflow jobs on their heads are read, as the
    /// tick reads them.
    pub workflow_bound: BTreeSet<RepoName>,
    /// The App's slug, the world's `bot`.
    pub bot_slug: String,
    /// The world's clock.
    pub now: Timestamp,
}

/// What was captured, per repository.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RepoSummary {
    /// The repository.
    pub repo: String,
    /// Open pull requests recorded.
    pub pulls: usize,
    /// Open pull requests GitHub listed (the newest `--prs` of them are recorded).
    pub open_pulls: usize,
    /// Open issues recorded.
    pub issues: usize,
    /// Commits recorded.
    pub commits: usize,
    /// Check runs recorded.
    pub check_runs: usize,
    /// Comments recorded (pull requests and issues).
    pub comments: usize,
    /// Label events recorded (pull requests and issues).
    pub label_events: usize,
    /// Files recorded (default branch and `bot-state`).
    pub files: usize,
}

/// What [`capture`] read, and what it left out with the reason.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Per repository, in world order.
    pub repos: Vec<RepoSummary>,
    /// What could not be recorded, one line each (a pull request left out, a record
    /// GitHub would not give).
    pub notes: Vec<String>,
}

/// Reads everything `plan` names through `github` and returns it as a world.
///
/// # Errors
/// A read that fails for a reason other than a missing item: the repository does not
/// exist or is not visible (`NotFound` on the repository), the rate limit, the network.
pub async fn capture(
    github: &dyn GitHubHistory,
    plan: &Plan,
) -> Result<(World, Summary), GitHubError> {
    let mut world = World::new(plan.now, plan.bot_slug.clone());
    let mut summary = Summary::default();
    let mut order: Vec<RepoName> = plan.repos.clone();
    for extra in [&plan.governance, &plan.inbox] {
        if !order.contains(extra) {
            order.push(extra.clone());
        }
    }
    for name in order {
        let mut builder = RepoCapture::new(github, name.clone());
        builder.default_branch().await?;
        if plan.repos.contains(&name) {
            let workflows = plan.workflow_bound.contains(&name);
            builder
                .pulls(plan.prs, workflows, &mut summary.notes)
                .await?;
        }
        if name == plan.governance || name == plan.inbox {
            builder.open_issues().await?;
        }
        if name == plan.governance {
            builder.bot_state().await?;
        }
        builder
            .default_files(&plan.canonical_paths, name == plan.governance)
            .await?;
        builder.labels(&mut summary.notes).await?;
        let (repo, repo_summary) = builder.finish();
        summary.repos.push(repo_summary);
        world.repos.push(repo);
    }
    Ok((world, summary))
}

/// One repository being recorded.
struct RepoCapture<'a> {
    github: &'a dyn GitHubHistory,
    repo: Repo,
    /// Every commit read, by SHA.
    commits: BTreeMap<CommitSha, Commit>,
    /// The SHAs in the order they were read.
    read_order: Vec<CommitSha>,
    summary: RepoSummary,
}

/// A commit as the world keeps it, from what the port read.
fn world_commit(context: &CommitContext) -> Commit {
    Commit {
        id: context.sha.as_str().to_owned(),
        sha: context.sha.clone(),
        message: context.message(),
        parents: context.parents.clone(),
        author: context.author_login.clone(),
        committer: context.committer_login.clone(),
        date: context.committed_at,
        checks: Vec::new(),
        check_workflows: BTreeMap::new(),
    }
}

/// A GitHub activity log as a world lists it: oldest first (GitHub's answer is in any
/// order; entries without a time come first). Updates in the same second are put in the
/// order their tips chain: one that leaves the tip another starts from goes before it.
fn oldest_first(mut updates: Vec<RefUpdate>) -> Vec<RefUpdate> {
    updates.sort_by_key(|u| u.at);
    let mut moved = true;
    let mut rounds = 0;
    while moved && rounds <= updates.len() {
        moved = false;
        rounds += 1;
        for i in 1..updates.len() {
            let (earlier, later) = (&updates[i - 1], &updates[i]);
            let chained_backwards = earlier.at == later.at
                && earlier.before.is_some()
                && earlier.before == later.after
                && later.before != earlier.after;
            if chained_backwards {
                updates.swap(i - 1, i);
                moved = true;
            }
        }
    }
    updates
}

impl<'a> RepoCapture<'a> {
    fn new(github: &'a dyn GitHubHistory, name: RepoName) -> Self {
        Self {
            github,
            summary: RepoSummary {
                repo: name.to_string(),
                ..RepoSummary::default()
            },
            repo: Repo::new(name),
            commits: BTreeMap::new(),
            read_order: Vec::new(),
        }
    }

    fn name(&self) -> &RepoName {
        &self.repo.name
    }

    fn keep(&mut self, commit: Commit) {
        if !self.commits.contains_key(&commit.sha) {
            self.read_order.push(commit.sha.clone());
            self.commits.insert(commit.sha.clone(), commit);
        }
    }

    /// Makes sure `sha` is recorded: read with `GET /commits/{sha}` when it is not yet; a
    /// commit GitHub no longer has (a force-pushed tip gone from the repository) is kept
    /// as a stand-in with that SHA, so the activity that names it still reads.
    async fn ensure_commit(&mut self, sha: &CommitSha) -> Result<(), GitHubError> {
        if self.commits.contains_key(sha) {
            return Ok(());
        }
        let commit = match self.github.commit(self.name(), sha).await {
            Ok(context) => world_commit(&context),
            Err(GitHubError::NotFound { .. }) => {
                let mut stand_in = world_commit(&CommitContext::from_message(
                    sha.clone(),
                    "(a commit GitHub no longer has: not captured)",
                ));
                stand_in.parents.clear();
                stand_in
            }
            Err(error) => return Err(error),
        };
        self.keep(commit);
        Ok(())
    }

    /// The default branch, its head, its newest commits with their check runs, and its
    /// activity log as far as it names recorded commits.
    async fn default_branch(&mut self) -> Result<(), GitHubError> {
        let name = self.name().clone();
        let default = self.github.default_branch(&name).await?;
        let head = self.github.branch_head(&name, &default).await?;
        for context in self
            .github
            .branch_commits(&name, &default, HISTORY)
            .await?
            .into_iter()
            .rev()
        {
            let mut commit = world_commit(&context);
            commit.checks = self.github.check_runs(&name, &commit.sha).await?;
            self.keep(commit);
        }
        self.ensure_commit(&head).await?;
        self.repo.branches.insert(default.clone(), head.clone());
        self.repo.default_branch.clone_from(&default);
        let updates = match self.github.head_ref_updates(&name, &default).await {
            Ok(updates) => updates,
            // An older GitHub Enterprise Server keeps no activity log.
            Err(GitHubError::NotFound { .. }) => Vec::new(),
            Err(error) => return Err(error),
        };
        let kept: Vec<RefUpdate> = oldest_first(updates)
            .into_iter()
            .filter(|u| {
                u.after
                    .as_ref()
                    .is_some_and(|a| self.commits.contains_key(a))
            })
            .collect();
        if kept.last().and_then(|u| u.after.as_ref()) == Some(&head) {
            self.repo.activity.insert(default, kept);
        }
        Ok(())
    }

    /// The newest `limit` open pull requests and what the tick reads of each.
    async fn pulls(
        &mut self,
        limit: usize,
        workflows: bool,
        notes: &mut Vec<String>,
    ) -> Result<(), GitHubError> {
        let name = self.name().clone();
        let listed = self.github.open_pulls_with_reads(&name).await?;
        self.summary.open_pulls = listed.len();
        let skip = listed.len().saturating_sub(limit);
        for listed in listed.into_iter().skip(skip) {
            let pull = listed.pull;
            let reads = listed.reads;
            let number = pull.number;
            let reference = format!("{name}#{number}");
            let commits = match reads.commits {
                Some(commits) => commits,
                None => match self.github.pull_commits(&name, number).await {
                    Ok(commits) => commits,
                    Err(error @ GitHubError::Truncated { .. }) => {
                        notes.push(format!("{reference} left out: {error}"));
                        continue;
                    }
                    Err(error) => return Err(error),
                },
            };
            let files = match reads.files {
                Some(files) => files,
                None => match self.github.pull_files(&name, number).await {
                    Ok(files) => files,
                    Err(error @ GitHubError::Truncated { .. }) => {
                        notes.push(format!("{reference} left out: {error}"));
                        continue;
                    }
                    Err(error) => return Err(error),
                },
            };
            let checks = match reads.check_runs {
                Some(checks) => checks,
                None => self.github.check_runs(&name, &pull.head_sha).await?,
            };
            let events = match reads.label_events {
                Some(events) => events,
                None => self.github.label_events(&name, number).await?,
            };
            let mut comments_unreadable = false;
            let comments = match reads.comments {
                Some(comments) => comments,
                None => match self.github.comments(&name, number).await {
                    Ok(comments) => comments,
                    // Recorded as the world's fault hook: the tick skips such a pull
                    // request, live and offline alike.
                    Err(error @ GitHubError::Unavailable { .. }) => {
                        notes.push(format!(
                            "{reference}: the comments cannot be read ({error}); recorded as unreadable"
                        ));
                        comments_unreadable = true;
                        Vec::new()
                    }
                    Err(error) => return Err(error),
                },
            };
            let reactions = self.github.reactions(&name, number).await?;
            let fork = pull.head_repo.as_ref() != Some(&name);
            let pushes = if fork {
                Vec::new()
            } else {
                match self.github.head_ref_updates(&name, &pull.head_ref).await {
                    Ok(updates) => oldest_first(updates),
                    Err(GitHubError::NotFound { .. }) => Vec::new(),
                    Err(error) => return Err(error),
                }
            };
            if !fork
                && let Some(other) = self.repo.branches.get(&pull.head_ref)
                && *other != pull.head_sha
            {
                notes.push(format!(
                    "{reference} left out: its head branch {} is also another branch's name in the capture",
                    pull.head_ref
                ));
                continue;
            }
            for context in &commits {
                self.keep(world_commit(context));
            }
            self.ensure_commit(&pull.head_sha).await?;
            self.ensure_commit(&pull.base_sha).await?;
            if !self.repo.branches.contains_key(&pull.base_ref) {
                let base_head = self.github.branch_head(&name, &pull.base_ref).await?;
                self.ensure_commit(&base_head).await?;
                self.repo.branches.insert(pull.base_ref.clone(), base_head);
            }
            let pushes: Vec<RefUpdate> = match pushes.last().and_then(|u| u.after.as_ref()) {
                Some(last) if *last == pull.head_sha => pushes,
                None => pushes,
                // A log that does not end at the head cannot be replayed as GitHub's.
                Some(_) => {
                    notes.push(format!(
                        "{reference}: the head branch's activity log does not end at the head; recorded as empty"
                    ));
                    Vec::new()
                }
            };
            let jobs = if workflows {
                match self.github.workflow_jobs(&name, &pull.head_sha).await {
                    Ok(jobs) => jobs,
                    Err(GitHubError::NotFound { .. }) => Vec::new(),
                    Err(error) => return Err(error),
                }
            } else {
                Vec::new()
            };
            for after in pushes.iter().filter_map(|u| u.after.clone()) {
                self.ensure_commit(&after).await?;
            }
            if let Some(head) = self.commits.get_mut(&pull.head_sha) {
                head.check_workflows = check_workflows(&name, &checks, &jobs);
                if head.check_workflows.len() < jobs.len() {
                    notes.push(format!(
                        "{reference}: a workflow job whose check run is not a github-actions run on the head is left out"
                    ));
                }
                head.checks = checks;
            }
            if !fork {
                self.repo
                    .branches
                    .insert(pull.head_ref.clone(), pull.head_sha.clone());
            }
            self.summary.pulls += 1;
            self.summary.comments += comments.len();
            self.summary.label_events += events.len();
            let mut recorded = world_pull(
                pull,
                commits.iter().map(|c| c.sha.clone()).collect(),
                files,
                events,
                comments,
                reactions,
                pushes,
                fork,
            );
            recorded.comments_unreadable = comments_unreadable;
            self.repo.pulls.push(recorded);
        }
        Ok(())
    }

    /// The open issues (not pull requests) with their timelines, comments and reactions.
    async fn open_issues(&mut self) -> Result<(), GitHubError> {
        let name = self.name().clone();
        let query = IssueQuery {
            state: Some(IssueState::Open),
            labels: Vec::new(),
        };
        for issue in self.github.issues(&name, &query).await? {
            if issue.is_pull_request || self.repo.issue(issue.number).is_some() {
                continue;
            }
            let events = self.github.label_events(&name, issue.number).await?;
            let comments = self.github.comments(&name, issue.number).await?;
            let reactions = self.github.reactions(&name, issue.number).await?;
            self.summary.issues += 1;
            self.summary.comments += comments.len();
            self.summary.label_events += events.len();
            self.repo.issues.push(IssueRecord {
                number: issue.number,
                title: issue.title,
                body: issue.body,
                author: issue.author,
                state: issue.state,
                labels: issue.labels,
                events,
                comments,
                reactions,
                created_at: issue.created_at,
            });
        }
        Ok(())
    }

    /// The `bot-state` branch's head and the files mp keeps under `bot-state/`.
    async fn bot_state(&mut self) -> Result<(), GitHubError> {
        let name = self.name().clone();
        let head = match self.github.branch_head(&name, BOT_STATE_BRANCH).await {
            Ok(head) => head,
            Err(GitHubError::NotFound { .. }) => return Ok(()),
            Err(error) => return Err(error),
        };
        self.ensure_commit(&head).await?;
        self.repo.branches.insert(BOT_STATE_BRANCH.to_owned(), head);
        let tree = self.github.tree(&name, BOT_STATE_BRANCH).await?;
        let mut files = BTreeMap::new();
        for entry in tree
            .entries
            .iter()
            .filter(|e| e.path.starts_with("bot-state/"))
        {
            if let Some(file) = self
                .github
                .file(&name, &entry.path, BOT_STATE_BRANCH)
                .await?
            {
                files.insert(entry.path.clone(), file.text);
            }
        }
        if self.repo.default_branch == BOT_STATE_BRANCH {
            self.summary.files += files.len();
            self.repo.files.extend(files);
        } else if !files.is_empty() {
            self.summary.files += files.len();
            self.repo
                .branch_files
                .insert(BOT_STATE_BRANCH.to_owned(), files);
        }
        Ok(())
    }

    /// The default branch's files the tick reads: the canonical paths of the drift check
    /// and, in the governance repository, the decision records.
    async fn default_files(
        &mut self,
        canonical: &[String],
        governance: bool,
    ) -> Result<(), GitHubError> {
        let name = self.name().clone();
        let branch = self.repo.default_branch.clone();
        let tree = self.github.tree(&name, &branch).await?;
        let wanted = |path: &str| {
            canonical.iter().any(|c| c == path)
                || (governance
                    && path
                        .strip_prefix(DECISIONS_DIR)
                        .is_some_and(|rest| !rest.contains('/') && rest.ends_with(".md")))
        };
        for entry in tree.entries.iter().filter(|e| wanted(&e.path)) {
            if let Some(file) = self.github.file(&name, &entry.path, &branch).await? {
                self.summary.files += 1;
                self.repo.files.insert(entry.path.clone(), file.text);
            }
        }
        Ok(())
    }

    /// GitHub's record of every label a recorded thread carries or carried (when it was
    /// created and last edited, which the gate reads for approval labels).
    async fn labels(&mut self, notes: &mut Vec<String>) -> Result<(), GitHubError> {
        let names: BTreeSet<String> = self
            .repo
            .all_labels()
            .into_iter()
            .map(|label| label.name)
            // A base change is a timeline event with no label.
            .filter(|name| !name.is_empty())
            .collect();
        if names.is_empty() {
            return Ok(());
        }
        let names: Vec<String> = names.into_iter().collect();
        let records = match self.github.label_records(self.name(), &names).await {
            Ok(records) => records,
            Err(GitHubError::NotFound { what }) => {
                notes.push(format!(
                    "{}: GitHub's record of the labels could not be read ({what}): the world dates them before anything, a live tick honours no approval label",
                    self.name()
                ));
                return Ok(());
            }
            Err(error) => return Err(error),
        };
        for record in records {
            let mut label = RepoLabel::named(&record.name);
            label.created_at = record.created_at;
            label.updated_at = record.updated_at;
            self.repo.labels.push(label);
        }
        Ok(())
    }

    /// The repository with its commits in an order the world accepts (parents first, a
    /// parent that was not read left out).
    fn finish(mut self) -> (Repo, RepoSummary) {
        let known: BTreeSet<CommitSha> = self.commits.keys().cloned().collect();
        for commit in self.commits.values_mut() {
            commit.parents.retain(|p| known.contains(p));
        }
        let mut placed: BTreeSet<CommitSha> = BTreeSet::new();
        let mut ordered: Vec<Commit> = Vec::with_capacity(self.commits.len());
        // Depth-first from each commit in read order, parents before children.
        for sha in &self.read_order {
            let mut stack = vec![(sha.clone(), false)];
            while let Some((sha, expanded)) = stack.pop() {
                if placed.contains(&sha) {
                    continue;
                }
                let Some(commit) = self.commits.get(&sha) else {
                    continue;
                };
                if expanded {
                    placed.insert(sha.clone());
                    ordered.push(commit.clone());
                } else {
                    stack.push((sha.clone(), true));
                    for parent in commit.parents.iter().rev() {
                        if !placed.contains(parent) {
                            stack.push((parent.clone(), false));
                        }
                    }
                }
            }
        }
        self.summary.commits = ordered.len();
        self.summary.check_runs = ordered.iter().map(|c| c.checks.len()).sum();
        self.repo.commits = ordered;
        (self.repo, self.summary)
    }
}

/// Which of a head's check runs a GitHub Actions job published, and the job's workflow
/// file, by position among the runs (what a world's check `workflow` says). A world knows
/// only `pull_request` runs of `github-actions` on the head itself; another job is left out.
fn check_workflows(
    repo: &RepoName,
    checks: &[mp_core::context::CheckRun],
    jobs: &[mp_core::context::WorkflowJob],
) -> BTreeMap<usize, String> {
    let mut by_position = BTreeMap::new();
    for job in jobs {
        let Some(file) = job.workflow_file(repo) else {
            continue;
        };
        let position = checks.iter().position(|run| {
            run.id == Some(job.check_run_id) && run.app_slug.as_deref() == Some("github-actions")
        });
        if let Some(position) = position {
            by_position.insert(position, file.to_owned());
        }
    }
    by_position
}

/// A pull request as the world keeps it.
#[allow(clippy::too_many_arguments)]
fn world_pull(
    pull: PullRequest,
    commits: Vec<CommitSha>,
    files: Vec<mp_core::context::FileChange>,
    events: Vec<mp_core::context::LabelEvent>,
    comments: Vec<mp_core::context::Comment>,
    reactions: Vec<mp_core::context::Reaction>,
    pushes: Vec<RefUpdate>,
    fork: bool,
) -> Pull {
    let author: Login = pull.author;
    Pull {
        number: pull.number,
        title: pull.title,
        body: pull.body,
        author,
        head_ref: pull.head_ref,
        head_sha: pull.head_sha,
        base_ref: pull.base_ref,
        base_sha: pull.base_sha,
        commits,
        labels: pull.labels,
        events,
        files: files
            .into_iter()
            .map(|change| PullFile {
                change,
                content: None,
            })
            .collect(),
        comments,
        reactions,
        state: PrState::Open,
        merged: false,
        mergeable: true,
        merged_by: None,
        merge_commit: None,
        merged_at: None,
        created_at: pull.created_at,
        comments_unreadable: false,
        head_repo: if fork { pull.head_repo } else { None },
        pushes,
    }
}

#[cfg(test)]
mod tests;
