//! The world: a plain data model of the GitHub state the bot reads, and its YAML file
//! format (documented for users in `docs/fixtures.md`).
//!
//! [`load_world`] reads a world file (and its configuration directory, if it names one);
//! [`parse_world`] parses text. Both resolve commit ids to SHAs, apply every default and
//! check every cross-reference, so a [`World`] is always consistent. Tests may also build a
//! [`World`] in code: every field is public, and [`commit_sha`] gives the SHA a commit id
//! resolves to.

pub mod drain;
mod error;
mod file;
mod queue;
mod removal;
mod resolve;
pub mod synthetic;
mod write;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::Path;

use mp_core::approval::ReceiptKey;
use mp_core::context::{
    CheckRun, Comment, CommitContext, FileChange, LabelEvent, PrState, Reaction, RefUpdate,
    RefUpdateKind,
};
use mp_core::ids::{CommitSha, Login, ParseIdError, PrNumber, RepoName, Timestamp};
use mp_core::port::IssueState;
use mp_core::state::BOT_STATE_BRANCH;
use sha1::{Digest, Sha1};

pub use error::LoadWorldError;
pub use queue::{
    DEFAULT_ENTRIES_TO_BUILD, DEFAULT_ENTRIES_TO_MERGE, EnqueueRefused, GroupEnd,
    MERGE_GROUP_PREFIX, MERGE_QUEUE_APP, MERGE_QUEUE_MERGE, MergeGroup, MergeGroupEvent,
    QueueRecord, STALE_HEAD_MESSAGE, merge_group_branch,
};
pub use removal::QueueRemovalRecord;
pub use synthetic::synthetic_world;
pub use write::world_to_yaml;

/// Reads a world file and the configuration directory it names, if any (relative to the
/// world file's directory).
///
/// # Errors
/// [`LoadWorldError::Read`] when the file cannot be read; [`LoadWorldError::Invalid`],
/// naming the line and column, for any problem in its content or its configuration
/// directory.
pub fn load_world(path: &Path) -> Result<World, LoadWorldError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|err| LoadWorldError::Read {
        file: file.clone(),
        message: err.to_string(),
    })?;
    let base = path.parent().unwrap_or_else(|| Path::new(""));
    parse_world(&file, &text, Some(base))
}

/// Parses a world from text. `file` names the text in errors; `config_base` is the
/// directory a `config.dir` is relative to (`None` refuses `config.dir`).
///
/// # Errors
/// [`LoadWorldError::Invalid`], naming the line and column, for any problem in the text or
/// in the configuration directory it names.
pub fn parse_world(
    file: &str,
    text: &str,
    config_base: Option<&Path>,
) -> Result<World, LoadWorldError> {
    let raw = file::parse(file, text)?;
    resolve::resolve(file, config_base, raw)
}

/// The SHA a commit id stands for in `repo`: an id of 40 or 64 hex digits is the SHA itself
/// (lower-cased); any other id gets `hex(sha1("mp-world\0" + repo + "\0" + id))`, where
/// `repo` is the lower-case `owner/name`.
pub fn commit_sha(repo: &RepoName, id: &str) -> CommitSha {
    if let Ok(sha) = CommitSha::parse(id) {
        return sha;
    }
    let mut hasher = Sha1::new();
    hasher.update(b"mp-world\0");
    hasher.update(repo.as_str().as_bytes());
    hasher.update(b"\0");
    hasher.update(id.as_bytes());
    let digest = hex::encode(hasher.finalize());
    CommitSha::parse(&digest).expect("a SHA-1 digest is 40 hex digits")
}

/// Everything the bot can read from GitHub, plus the inputs a tick needs besides GitHub
/// (configuration texts, receipt key, clock).
#[derive(Debug, Clone, PartialEq)]
pub struct World {
    /// The tick's clock: the time every read and write happens at.
    pub now: Timestamp,
    /// The GitHub App's slug; the bot's login is `<slug>[bot]`.
    pub bot_slug: String,
    /// Configuration texts by file name (e.g. `owner.yml`), for the configuration loader.
    pub config: BTreeMap<String, String>,
    /// The key that signs approval receipts, if the scenario sets one.
    pub receipt_key: Option<ReceiptKey>,
    /// The key `receipt_key` replaced and the end of its rotation window, if the scenario
    /// rotates (`receipt_key_previous: {key, until}`).
    pub previous_receipt_key: Option<mp_core::approval::PreviousReceiptKey>,
    /// Calls left in the primary rate-limit window; `None` means unlimited and unknown.
    pub rate_limit_remaining: Option<u32>,
    /// The repositories, in file order.
    pub repos: Vec<Repo>,
    /// Simulated CI: named checks completed on every new head of an open pull request.
    pub ci: Option<CiSimulation>,
    /// The permissions of the App's installations (`contents` -> `write`, ...); `None`
    /// grants [`APP_PERMISSIONS`], what mp needs.
    pub app_permissions: Option<BTreeMap<String, String>>,
}

/// GitHub's `activity_type` of a pull request's merge.
pub const PR_MERGE: &str = "pr_merge";

/// The installation permissions of a world that names none: what mp needs.
pub const APP_PERMISSIONS: &[(&str, &str)] = &[
    ("checks", "read"),
    ("contents", "write"),
    ("issues", "write"),
    ("metadata", "read"),
    ("pull_requests", "write"),
];

/// A label defined in a repository (`GET /repos/{o}/{r}/labels`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoLabel {
    /// The name.
    pub name: String,
    /// Six hex digits without `#`.
    pub color: String,
    /// The description, if any.
    pub description: Option<String>,
    /// When GitHub created it; `None`: before anything in the world
    /// ([`LABELS_CREATED`]).
    pub created_at: Option<Timestamp>,
    /// When it was last edited (renamed, recoloured, re-described); `None`: never, the
    /// creation time.
    pub updated_at: Option<Timestamp>,
}

/// The creation time GitHub's record gives a label the world gives none: the Unix epoch,
/// before anything a world holds.
pub const LABELS_CREATED: i64 = 0;

impl RepoLabel {
    /// A label with the default colour, no description and no recorded times.
    pub fn named(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            color: "ededed".to_owned(),
            description: None,
            created_at: None,
            updated_at: None,
        }
    }

    /// GitHub's record of the label: its creation time and that of its last edit (the
    /// creation time when never edited).
    pub fn record(&self) -> mp_core::context::LabelRecord {
        let created = self.created_at.unwrap_or_else(|| {
            Timestamp::from_unix_seconds(LABELS_CREATED).expect("the epoch is in range")
        });
        mp_core::context::LabelRecord {
            name: self.name.clone(),
            created_at: Some(created),
            updated_at: Some(self.updated_at.unwrap_or(created)),
        }
    }
}

/// Simulated CI (the world file's `ci:`): on every head of an open pull request, each
/// named check starts when the head appears and completes `minutes` later, green unless one
/// of the pull request's changed files matches a `fails` pattern. The in-memory GitHub
/// applies it whenever its clock moves (`MemoryGitHub::set_now`), so a world can run many
/// ticks without a hand-written check run per head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CiSimulation {
    /// The check names, e.g. `[test]`.
    pub checks: Vec<String>,
    /// The slug of the App that publishes the runs (`app.slug`).
    pub app: String,
    /// Minutes from the head's push to the run's completion.
    pub minutes: u32,
    /// Glob patterns (`src/flaky/**`) on changed paths that make the runs fail.
    pub fails: Vec<String>,
}

impl World {
    /// The time GitHub records for a write made now: [`World::now`] to the whole second,
    /// since GitHub's API has no fractions of a second in any time it hands out. Every
    /// write of the in-memory GitHub is stamped with it.
    pub fn stamp(&self) -> Timestamp {
        self.now.whole_second()
    }

    /// How many check runs of the simulated CI (`ci:`) the world holds: runs of its checks
    /// by its App on any commit of any repository, those the world file lists included.
    /// Zero without `ci:`. A drain benchmark reads it as its count of CI runs.
    pub fn ci_runs(&self) -> usize {
        let Some(ci) = &self.ci else {
            return 0;
        };
        self.repos
            .iter()
            .flat_map(|repo| &repo.commits)
            .flat_map(|commit| &commit.checks)
            .filter(|run| {
                run.app_slug.as_deref() == Some(ci.app.as_str()) && ci.checks.contains(&run.name)
            })
            .count()
    }

    /// An empty world at `now` for the App `bot_slug`.
    pub fn new(now: Timestamp, bot_slug: impl Into<String>) -> Self {
        Self {
            now,
            bot_slug: bot_slug.into(),
            config: BTreeMap::new(),
            receipt_key: None,
            previous_receipt_key: None,
            rate_limit_remaining: None,
            repos: Vec::new(),
            ci: None,
            app_permissions: None,
        }
    }

    /// The permissions of the App's installations: the world's, else [`APP_PERMISSIONS`].
    pub fn installation_permissions(&self) -> BTreeMap<String, String> {
        self.app_permissions.clone().unwrap_or_else(|| {
            APP_PERMISSIONS
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        })
    }

    /// The bot's login, `<slug>[bot]`.
    ///
    /// # Errors
    /// [`ParseIdError`] when the slug does not make a valid login.
    pub fn bot_login(&self) -> Result<Login, ParseIdError> {
        Login::for_app(&self.bot_slug)
    }

    /// The repository named `name`.
    pub fn repo(&self, name: &RepoName) -> Option<&Repo> {
        self.repos.iter().find(|r| &r.name == name)
    }

    /// The repository named `name`, for changing it.
    pub fn repo_mut(&mut self, name: &RepoName) -> Option<&mut Repo> {
        self.repos.iter_mut().find(|r| &r.name == name)
    }
}

/// One repository: its commits, branches, files, pull requests and issues.
#[derive(Debug, Clone, PartialEq)]
pub struct Repo {
    /// `owner/name`.
    pub name: RepoName,
    /// Every commit, parents before children (file order, then commits made by mutations).
    pub commits: Vec<Commit>,
    /// Branch name to head commit.
    pub branches: BTreeMap<String, CommitSha>,
    /// Files at the default branch: path to content.
    pub files: BTreeMap<String, String>,
    /// Files at other branches (e.g. `bot-state`): branch to path to content.
    pub branch_files: BTreeMap<String, BTreeMap<String, String>>,
    /// Pull requests, in file order.
    pub pulls: Vec<Pull>,
    /// Issues (not pull requests), in file order then creation order.
    pub issues: Vec<IssueRecord>,
    /// Fault hook: recursive tree listings come back cut short (`truncated: true`).
    pub tree_truncated: bool,
    /// The repository's default branch (`GET /repos/{o}/{r}`), `main` unless the world
    /// names another; `files` are its files.
    pub default_branch: String,
    /// Whether the App is installed on it (`GET /repos/{o}/{r}/installation` answers 404
    /// when not); true unless the world says `app_installed: false`.
    pub app_installed: bool,
    /// The labels defined in it besides those its threads carry (which GitHub creates when
    /// they are applied), in file order then creation order.
    pub labels: Vec<RepoLabel>,
    /// GitHub's activity log (`GET /activity?ref=`) of branches that are not the head
    /// branch of one of its pull requests (those keep theirs in [`Pull::pushes`]), oldest
    /// first: who moved the branch, when, from which tip to which. It holds the logs the
    /// world file lists; the in-memory GitHub gives every other branch the one its history
    /// implies ([`Repo::fill_activity`]) and appends an entry for every write that moves a
    /// branch.
    pub activity: BTreeMap<String, Vec<RefUpdate>>,
    /// The rules of the repository's active rulesets that apply to each branch, by GitHub's
    /// rule type (`deletion`, `non_fast_forward`, `update`, `pull_request`, ...): what
    /// `GET /repos/{o}/{r}/rules/branches/{branch}` lists. A branch not named has none.
    pub branch_rules: BTreeMap<String, Vec<String>>,
    /// The parameters of the `merge_queue` rule of each branch behind GitHub's merge queue
    /// (each such branch also lists `merge_queue` in [`Repo::branch_rules`]); a branch with
    /// the rule and no entry here has [`MergeQueueSettings::default`].
    pub merge_queues: BTreeMap<String, MergeQueueSettings>,
    /// The entries of each branch's merge queue, front first (the world file's
    /// `merge_queues.<branch>.entries`; decisions/0078). A branch not named has none.
    pub queue_entries: BTreeMap<String, Vec<QueueRecord>>,
    /// Every removal of a pull request from a merge queue without merging, in order
    /// (decisions/0085); not part of a world file.
    pub queue_removals: Vec<QueueRemovalRecord>,
    /// The merge groups of each branch's queue, front first: group `i` is the group of
    /// entry `i` of [`Repo::queue_entries`], at most `max_entries_to_build` of them
    /// (decisions/0083). Each group's branch and commit are ordinary ones of the
    /// repository.
    pub merge_groups: BTreeMap<String, Vec<MergeGroup>>,
    /// Every merge group made and ended, oldest first: what GitHub delivers as
    /// `merge_group` `checks_requested` and `destroyed`.
    pub merge_group_log: Vec<MergeGroupEvent>,
    /// The deployment environments (`GET /repos/{o}/{r}/environments`).
    pub environments: Vec<Environment>,
}

/// The parameters of a `merge_queue` ruleset rule, as GitHub's REST description names
/// them (`repository-rule`, `merge_queue`; GraphQL's `MergeQueueParameters`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeQueueSettings {
    /// Minutes a required check may take to report before it counts as failed (1..360).
    pub check_response_timeout_minutes: u32,
    /// `ALLGREEN` (every entry's merge commit must pass) or `HEADGREEN` (only the group's
    /// head must).
    pub grouping_strategy: String,
    /// How many queued pull requests request checks at the same time (0..100).
    pub max_entries_to_build: u32,
    /// The most pull requests merged together in a group (0..100).
    pub max_entries_to_merge: u32,
    /// `MERGE`, `SQUASH` or `REBASE`.
    pub merge_method: String,
    /// The fewest pull requests merged together in a group (0..100).
    pub min_entries_to_merge: u32,
    /// Minutes to wait for the minimum group size before merging a smaller group (0..360).
    pub min_entries_to_merge_wait_minutes: u32,
    /// The status checks the branch's rules require, each pinned to the App that must
    /// report it (a ruleset's `required_status_checks` with their `integration_id`): what
    /// must pass on a merge group's head before it lands. `None`: the world's simulated
    /// CI's checks (`ci:`) by its App, or nothing without `ci:`.
    pub required_checks: Option<Vec<RequiredCheck>>,
}

/// A status check a merge queue requires on a group's head, and the App that must report
/// it (world file: `{name: test, app: github-actions}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequiredCheck {
    /// The check's name.
    pub name: String,
    /// The slug of the App whose run counts.
    pub app: String,
}

impl Default for MergeQueueSettings {
    /// The values GitHub's settings page starts a new queue with: 60 minutes, `ALLGREEN`,
    /// 5 built, 1 to 5 merged, 5 minutes' wait, merge commits.
    fn default() -> Self {
        Self {
            check_response_timeout_minutes: 60,
            grouping_strategy: "ALLGREEN".to_owned(),
            max_entries_to_build: 5,
            max_entries_to_merge: 5,
            merge_method: "MERGE".to_owned(),
            min_entries_to_merge: 1,
            min_entries_to_merge_wait_minutes: 5,
            required_checks: None,
        }
    }
}

/// A deployment environment of a repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Environment {
    /// The name.
    pub name: String,
    /// The logins its `required_reviewers` rule names (empty: no such rule).
    pub reviewers: Vec<String>,
    /// Which branches may run a job that names it.
    pub branches: EnvironmentBranches,
}

/// An environment's `deployment_branch_policy`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvironmentBranches {
    /// No policy (`null`): every branch.
    Any,
    /// `protected_branches: true`.
    Protected,
    /// `custom_branch_policies: true` with these name patterns; a pattern starting with
    /// `tag:` is a tag policy.
    Selected(Vec<String>),
}

impl Repo {
    /// An empty repository.
    pub fn new(name: RepoName) -> Self {
        Self {
            name,
            commits: Vec::new(),
            branches: BTreeMap::new(),
            files: BTreeMap::new(),
            branch_files: BTreeMap::new(),
            pulls: Vec::new(),
            issues: Vec::new(),
            tree_truncated: false,
            default_branch: "main".to_owned(),
            app_installed: true,
            labels: Vec::new(),
            activity: BTreeMap::new(),
            branch_rules: BTreeMap::new(),
            merge_queues: BTreeMap::new(),
            queue_entries: BTreeMap::new(),
            queue_removals: Vec::new(),
            merge_groups: BTreeMap::new(),
            merge_group_log: Vec::new(),
            environments: Vec::new(),
        }
    }

    /// The activity log a world leaves implicit for `branch`: its first-parent history,
    /// oldest first, each commit one update at the commit's date — the root creates the
    /// branch, a commit that a merged pull request's merge made is a `pr_merge` by whoever
    /// merged it, any other a `push` by its committer. Empty when the branch does not exist.
    pub fn history_activity(&self, branch: &str) -> Vec<RefUpdate> {
        let mut chain = Vec::new();
        let mut next = self.branch_head(branch).cloned();
        while let Some(sha) = next.take() {
            if chain.contains(&sha) {
                break;
            }
            next = self.commit(&sha).and_then(|c| c.parents.first().cloned());
            chain.push(sha);
        }
        chain.reverse();
        let mut before: Option<CommitSha> = None;
        chain
            .into_iter()
            .map(|sha| {
                let commit = self.commit(&sha);
                let merged = self
                    .pulls
                    .iter()
                    .find(|p| p.merged && p.merge_commit.as_ref() == Some(&sha));
                let (kind, actor) = match (&before, merged) {
                    (None, _) => (
                        RefUpdateKind::BranchCreation,
                        commit.and_then(|c| c.committer.clone()),
                    ),
                    (Some(_), Some(pull)) => (
                        RefUpdateKind::Other(PR_MERGE.to_owned()),
                        pull.merged_by
                            .clone()
                            .or_else(|| commit.and_then(|c| c.committer.clone())),
                    ),
                    (Some(_), None) => (
                        RefUpdateKind::Push,
                        commit.and_then(|c| c.committer.clone()),
                    ),
                };
                RefUpdate {
                    kind,
                    before: before.replace(sha.clone()),
                    after: Some(sha),
                    at: commit.and_then(|c| c.date),
                    actor,
                }
            })
            .collect()
    }

    /// Gives every branch without an activity log (and that is no pull request's head
    /// branch) the one its history implies ([`Repo::history_activity`]); the state branch
    /// (`bot-state`) gets one creation by `bot` at its head, since only mp writes it.
    pub fn fill_activity(&mut self, bot: Option<&Login>) {
        let implicit: Vec<String> = self
            .branches
            .keys()
            .filter(|branch| {
                !self.activity.contains_key(*branch)
                    && !self
                        .pulls
                        .iter()
                        .any(|p| &p.head_ref == *branch && p.head_repo.is_none())
            })
            .cloned()
            .collect();
        for branch in implicit {
            let updates = match bot {
                Some(bot) if branch == BOT_STATE_BRANCH => {
                    let head = self.branch_head(&branch).cloned();
                    vec![RefUpdate {
                        kind: RefUpdateKind::BranchCreation,
                        before: None,
                        at: head
                            .as_ref()
                            .and_then(|h| self.commit(h))
                            .and_then(|c| c.date),
                        after: head,
                        actor: Some(bot.clone()),
                    }]
                }
                _ => self.history_activity(&branch),
            };
            self.activity.insert(branch, updates);
        }
    }

    /// Moves `branch` to `to` (`None` deletes it) and records the update in its activity
    /// log, or in the pull request's `pushes` when it is a pull request's head branch.
    /// Every open pull request on `branch` whose head the new tip reaches is merged then,
    /// as GitHub marks it: closed, merged by `actor` at `at`, its merge commit the new tip
    /// (decisions/0058). Returns those pull requests.
    pub fn move_branch(
        &mut self,
        branch: &str,
        to: Option<CommitSha>,
        kind: RefUpdateKind,
        actor: Login,
        at: Timestamp,
    ) -> Vec<PrNumber> {
        let (tip, merger) = (to.clone(), actor.clone());
        let before = match &to {
            Some(sha) => self.branches.insert(branch.to_owned(), sha.clone()),
            None => self.branches.remove(branch),
        };
        let update = RefUpdate {
            kind,
            before,
            after: to,
            at: Some(at),
            actor: Some(actor),
        };
        let heads: Vec<&mut Pull> = self
            .pulls
            .iter_mut()
            .filter(|p| p.head_ref == branch && p.head_repo.is_none())
            .collect();
        if heads.is_empty() {
            self.activity
                .entry(branch.to_owned())
                .or_default()
                .push(update);
        } else {
            for pull in heads {
                pull.pushes.push(update.clone());
            }
        }
        let Some(tip) = tip else {
            return Vec::new();
        };
        self.merge_reachable(branch, &tip, merger, at)
    }

    /// Merges the open pull requests on `branch` whose heads `tip` reaches (see
    /// [`Repo::move_branch`]).
    fn merge_reachable(
        &mut self,
        branch: &str,
        tip: &CommitSha,
        actor: Login,
        at: Timestamp,
    ) -> Vec<PrNumber> {
        let open_on_branch = |p: &Pull| p.state == PrState::Open && p.base_ref == branch;
        if !self.pulls.iter().any(open_on_branch) {
            return Vec::new();
        }
        let reached = self.reachable_from(tip);
        let mut merged = Vec::new();
        for pull in self.pulls.iter_mut().filter(|p| open_on_branch(p)) {
            if !reached.contains(&pull.head_sha) {
                continue;
            }
            pull.state = PrState::Closed;
            pull.merged = true;
            pull.merged_by = Some(actor.clone());
            pull.merge_commit = Some(tip.clone());
            pull.merged_at = Some(at);
            merged.push(pull.number);
        }
        merged
    }

    /// Every commit `head` reaches through all parents, itself included.
    pub fn reachable_from(&self, head: &CommitSha) -> std::collections::BTreeSet<CommitSha> {
        let by_sha: BTreeMap<&CommitSha, &Commit> =
            self.commits.iter().map(|c| (&c.sha, c)).collect();
        let mut seen = std::collections::BTreeSet::new();
        let mut stack = vec![head.clone()];
        while let Some(sha) = stack.pop() {
            if let Some(commit) = by_sha.get(&sha) {
                stack.extend(commit.parents.iter().cloned());
            }
            seen.insert(sha);
        }
        seen
    }

    /// Every label of the repository: the defined ones, then each other name a pull request
    /// or issue carries or carried (GitHub creates a label when it is first applied).
    pub fn all_labels(&self) -> Vec<RepoLabel> {
        let mut all = self.labels.clone();
        let carried = self
            .pulls
            .iter()
            .flat_map(|p| p.labels.iter().chain(p.events.iter().map(|e| &e.label)))
            .chain(
                self.issues
                    .iter()
                    .flat_map(|i| i.labels.iter().chain(i.events.iter().map(|e| &e.label))),
            );
        for name in carried {
            if !all.iter().any(|l| l.name.eq_ignore_ascii_case(name)) {
                all.push(RepoLabel::named(name));
            }
        }
        all
    }

    /// Edits a label at `at`, as GitHub's `PATCH /repos/{o}/{r}/labels/{name}` does: a new
    /// name ([`Repo::rename_label`]), colour or description, each when given; the label's
    /// last edit is `at` whatever changed. `None` when the repository has no label `name`
    /// (compared without case) or another label is named `new_name`.
    pub fn edit_label(
        &mut self,
        name: &str,
        new_name: Option<&str>,
        color: Option<String>,
        description: Option<String>,
        at: Timestamp,
    ) -> Option<RepoLabel> {
        let current = self
            .all_labels()
            .into_iter()
            .find(|l| l.name.eq_ignore_ascii_case(name))?;
        let mut name = current.name.clone();
        if let Some(to) = new_name
            && to != name
        {
            if !self.rename_label(&name, to, at) {
                return None;
            }
            to.clone_into(&mut name);
        }
        if !self.labels.iter().any(|l| l.name == name) {
            self.labels.push(current);
        }
        let label = self.labels.iter_mut().find(|l| l.name == name)?;
        if let Some(color) = color {
            label.color = color;
        }
        if let Some(description) = description {
            label.description = Some(description);
        }
        label.updated_at = Some(at);
        Some(label.clone())
    }

    /// Renames the label `from` to `to` at `at`, as GitHub's `PATCH /labels/{name}` with
    /// `new_name` does: every pull request and issue carrying it carries the new name, and
    /// the label's last edit is `at`. Its earlier `labeled` / `unlabeled` events show the
    /// new name too: GitHub's GraphQL `LabeledEvent` points at the label itself, and what
    /// REST's timeline shows after a rename is not documented, so the world takes the case
    /// worse for mp (decisions/0048). `false` when the repository has no label `from`
    /// (compared without case), or already has another named `to`.
    pub fn rename_label(&mut self, from: &str, to: &str, at: Timestamp) -> bool {
        let all = self.all_labels();
        let Some(label) = all.iter().find(|l| l.name.eq_ignore_ascii_case(from)) else {
            return false;
        };
        if all
            .iter()
            .any(|l| l.name.eq_ignore_ascii_case(to) && !l.name.eq_ignore_ascii_case(from))
        {
            return false;
        }
        let old = label.name.clone();
        let mut renamed = label.clone();
        renamed.name = to.to_owned();
        renamed.updated_at = Some(at);
        self.labels.retain(|l| l.name != old);
        self.labels.push(renamed);
        let rename = |name: &mut String| {
            if *name == old {
                to.clone_into(name);
            }
        };
        for pull in &mut self.pulls {
            pull.labels.iter_mut().for_each(rename);
            pull.events.iter_mut().for_each(|e| rename(&mut e.label));
        }
        for issue in &mut self.issues {
            issue.labels.iter_mut().for_each(rename);
            issue.events.iter_mut().for_each(|e| rename(&mut e.label));
        }
        true
    }

    /// The commit with this SHA.
    pub fn commit(&self, sha: &CommitSha) -> Option<&Commit> {
        self.commits.iter().find(|c| &c.sha == sha)
    }

    /// The head of a branch.
    pub fn branch_head(&self, branch: &str) -> Option<&CommitSha> {
        self.branches.get(branch)
    }

    /// The pull request with this number.
    pub fn pull(&self, number: PrNumber) -> Option<&Pull> {
        self.pulls.iter().find(|p| p.number == number)
    }

    /// The pull request with this number, for changing it.
    pub fn pull_mut(&mut self, number: PrNumber) -> Option<&mut Pull> {
        self.pulls.iter_mut().find(|p| p.number == number)
    }

    /// The issue (not pull request) with this number.
    pub fn issue(&self, number: PrNumber) -> Option<&IssueRecord> {
        self.issues.iter().find(|i| i.number == number)
    }

    /// The issue (not pull request) with this number, for changing it.
    pub fn issue_mut(&mut self, number: PrNumber) -> Option<&mut IssueRecord> {
        self.issues.iter_mut().find(|i| i.number == number)
    }

    /// The number the next issue gets: one more than the largest issue or pull-request
    /// number (issues and pull requests share one number space).
    pub fn next_number(&self) -> PrNumber {
        let pulls = self.pulls.iter().map(|p| p.number.get());
        let issues = self.issues.iter().map(|i| i.number.get());
        PrNumber::new(pulls.chain(issues).max().unwrap_or(0) + 1)
    }
}

/// A stable numeric id for `key` of kind `kind`, below 2^48 so JSON readers keep it exact.
pub(crate) fn stable_id(kind: &str, key: &str) -> u64 {
    let mut hasher = Sha1::new();
    hasher.update(kind.as_bytes());
    hasher.update(b"\0");
    hasher.update(key.as_bytes());
    let digest = hasher.finalize();
    let mut id = 0_u64;
    for byte in digest.iter().take(6) {
        id = (id << 8) | u64::from(*byte);
    }
    id.max(1)
}

/// The id of run `index` on commit `head_sha`: stable, and growing with the index as
/// GitHub's ids grow with creation (a client may order a commit's runs by id). Below 2^53,
/// as GitHub's ids are, so JavaScript clients read it exactly.
pub(crate) fn check_run_id(repo: &RepoName, head_sha: &CommitSha, index: usize) -> u64 {
    let commit = stable_id("check", &format!("{repo}@{head_sha}")) >> 8;
    commit * 1024 + u64::try_from(index).unwrap_or(1023).min(1023)
}

/// The id of the GitHub Actions workflow run of `path` on commit `head_sha`: stable, below
/// 2^53 as GitHub's ids are.
pub(crate) fn workflow_run_id(repo: &RepoName, head_sha: &CommitSha, path: &str) -> u64 {
    stable_id("workflow-run", &format!("{repo}@{head_sha}/{path}"))
}

/// A GitHub Actions workflow run on a commit, as the world implies it: one per workflow file
/// that [`Commit::check_workflows`] names, started by a `pull_request` event, its jobs the
/// check runs that name the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkflowRun {
    /// Its id (`workflow_run_id`: derived from the repository, the file and the commit).
    pub id: u64,
    /// The workflow file, e.g. `.github/workflows/ci.yml`.
    pub path: String,
    /// The positions of its jobs' check runs among the commit's checks, in order.
    pub jobs: Vec<usize>,
}

/// The event that starts every workflow run of a world.
pub const WORKFLOW_EVENT: &str = "pull_request";

/// One commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    /// The id the world file gave it (or the mutation that made it).
    pub id: String,
    /// Its SHA (see [`commit_sha`]).
    pub sha: CommitSha,
    /// The full message.
    pub message: String,
    /// Parent SHAs in order.
    pub parents: Vec<CommitSha>,
    /// Author login, when GitHub links one.
    pub author: Option<Login>,
    /// Committer login, when GitHub links one.
    pub committer: Option<Login>,
    /// Committer date.
    pub date: Option<Timestamp>,
    /// Check runs reported on this commit, in order.
    pub checks: Vec<CheckRun>,
    /// The runs of [`Commit::checks`] published by a job of a GitHub Actions workflow run on
    /// this commit: position among the checks → the workflow file (`workflow` in the world
    /// file). A run not listed was published through the Checks API, by no job.
    pub check_workflows: BTreeMap<usize, String>,
}

impl Commit {
    /// The workflow runs on this commit, in the order their files first appear among the
    /// checks (a run listing sorts them by id).
    pub fn workflow_runs(&self, repo: &RepoName) -> Vec<WorkflowRun> {
        let mut runs: Vec<WorkflowRun> = Vec::new();
        for (index, path) in &self.check_workflows {
            match runs.iter_mut().find(|run| run.path == *path) {
                Some(run) => run.jobs.push(*index),
                None => runs.push(WorkflowRun {
                    id: workflow_run_id(repo, &self.sha, path),
                    path: path.clone(),
                    jobs: vec![*index],
                }),
            }
        }
        runs
    }

    /// The commit as the port reports it: parsed message, logins, parents, date.
    pub fn context(&self) -> CommitContext {
        let mut context = CommitContext::from_message(self.sha.clone(), &self.message);
        context.author_login = self.author.clone();
        context.committer_login = self.committer.clone();
        context.parents = self.parents.clone();
        context.committed_at = self.date;
        context
    }
}

/// One pull request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pull {
    /// The number (shared space with issues).
    pub number: PrNumber,
    /// Title.
    pub title: String,
    /// Body (may be empty).
    pub body: String,
    /// Author login.
    pub author: Login,
    /// Head branch name.
    pub head_ref: String,
    /// Head commit.
    pub head_sha: CommitSha,
    /// Base branch name.
    pub base_ref: String,
    /// Base commit as GitHub records it for the pull request.
    pub base_sha: CommitSha,
    /// The pull request's commits, oldest first.
    pub commits: Vec<CommitSha>,
    /// Current labels.
    pub labels: Vec<String>,
    /// `labeled` / `unlabeled` timeline events, in order.
    pub events: Vec<LabelEvent>,
    /// Changed files.
    pub files: Vec<PullFile>,
    /// Comments, oldest first.
    pub comments: Vec<Comment>,
    /// Reactions on the pull request itself.
    pub reactions: Vec<Reaction>,
    /// Open or closed.
    pub state: PrState,
    /// Whether it was merged.
    pub merged: bool,
    /// Whether GitHub would merge it (`false`: merge answers 405, update-branch 422).
    pub mergeable: bool,
    /// Who merged it.
    pub merged_by: Option<Login>,
    /// The commit the merge made on the base branch; for a pull request merged by a push
    /// that made its head reachable from the base, the commit the base moved to.
    pub merge_commit: Option<CommitSha>,
    /// When it was merged, when that is not its merge commit's date (a merge by a push
    /// that made its head reachable is dated by the push).
    pub merged_at: Option<Timestamp>,
    /// Creation time.
    pub created_at: Option<Timestamp>,
    /// Fault hook: reading the comments fails (`Unavailable`).
    pub comments_unreadable: bool,
    /// The repository of the head branch when it is not this one (a fork).
    pub head_repo: Option<RepoName>,
    /// GitHub's activity log of the head branch, oldest first.
    pub pushes: Vec<RefUpdate>,
}

/// One file a pull request changes, and the content merging writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullFile {
    /// The change as GitHub lists it.
    pub change: FileChange,
    /// The content after the change; merging writes it to the base branch's files.
    pub content: Option<String>,
}

/// One issue (not a pull request).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssueRecord {
    /// The number (shared space with pull requests).
    pub number: PrNumber,
    /// Title.
    pub title: String,
    /// Body (may be empty).
    pub body: String,
    /// Author login, when known.
    pub author: Option<Login>,
    /// Open or closed.
    pub state: IssueState,
    /// Current labels.
    pub labels: Vec<String>,
    /// `labeled` / `unlabeled` timeline events, in order.
    pub events: Vec<LabelEvent>,
    /// Comments, oldest first.
    pub comments: Vec<Comment>,
    /// Reactions on the issue itself.
    pub reactions: Vec<Reaction>,
    /// Creation time.
    pub created_at: Option<Timestamp>,
}
