//! The history half of the tick test fake: branches with their commits, files per ref,
//! trees, check runs on any commit, the pull requests behind a commit, injected failures,
//! a settable rate-limit budget, and [`GitHubHistory`] for [`Fake`]. Writes go to the same
//! ordered log as the pull-request writes, one line each:
//!
//! ```text
//! branch <repo> <branch> @ <sha7>
//! put <repo>@<branch> <path>: <commit message>
//! edit-issue <repo>#<n>
//! pull <repo>#<n> <head> -> <base>: <title>
//! revert <repo> <sha7> on <branch>: <subject>
//! ref <repo> <branch> <old7> -> <sha7>[ (forced)]
//! merge <repo> <head7> into <branch> as <sha7>: <subject>
//! ```
//!
//! A merge into a branch conflicts only when a test injects the conflict
//! (`fail_history("merge_into_branch", "<repo> <head sha>", ...)`); it keeps the branch's
//! files as they were.
//!
//! A branch's activity log is the one its history implies ([`History::activity`]) unless a
//! test sets one.

use std::collections::{BTreeMap, BTreeSet};

use sha2::{Digest, Sha256};

use mp_core::branch::blob_sha;
use mp_core::context::{
    CheckConclusion, CheckRun, CheckStatus, CommitContext, RefUpdate, RefUpdateKind,
};
use mp_core::ids::{CommitSha, PrNumber, RepoName};
use mp_core::port::{
    CommitPull, Comparison, FileContent, FileWrite, GitHubError, GitHubHistory, NewPull, Tree,
    TreeEntry,
};

use super::testkit::{Fake, at, login, repo};

/// The rate-limit budget the fake reports until a test changes it.
pub(crate) const DEFAULT_RATE_LIMIT: u32 = 4321;

/// The history state of the fake world. Reach it with [`Fake::history`].
#[derive(Debug, Clone)]
pub(crate) struct History {
    /// Commits per `(repository, branch)`, newest first (as `GET /commits` lists them).
    pub(crate) branches: BTreeMap<(RepoName, String), Vec<CommitContext>>,
    /// File texts per `(repository, ref)`, by path; a ref is a branch name or a full SHA.
    pub(crate) files: BTreeMap<(RepoName, String), BTreeMap<String, String>>,
    /// `(repository, ref)` whose tree listings are cut short.
    pub(crate) truncated_trees: BTreeSet<(RepoName, String)>,
    /// Check runs per commit, besides those of pull-request heads.
    pub(crate) checks: BTreeMap<(RepoName, CommitSha), Vec<CheckRun>>,
    /// The pull requests containing a commit.
    pub(crate) commit_pulls: BTreeMap<(RepoName, CommitSha), Vec<CommitPull>>,
    /// Pull requests opened through the port, in order.
    pub(crate) opened_pulls: Vec<(RepoName, PrNumber, NewPull)>,
    /// Activity logs per `(repository, branch)`, oldest first, that replace the one the
    /// branch's history implies ([`History::activity`]).
    pub(crate) activity: BTreeMap<(RepoName, String), Vec<RefUpdate>>,
    /// `(method, subject, error)`: the call fails while the entry stays. The subject is
    /// the repository (`acme/app`) or the repository and the call's object separated by
    /// a space: a branch, path, SHA, issue number or pull-request head.
    pub(crate) failures: Vec<(&'static str, String, GitHubError)>,
    /// What `rate_limit_remaining` answers.
    pub(crate) rate_limit_remaining: Option<u32>,
    /// `(repository, remaining)`: once a history call touches the repository, the
    /// rate-limit answer becomes `remaining`.
    pub(crate) remaining_after: Vec<(RepoName, u32)>,
    next_pull: u64,
}

impl Default for History {
    fn default() -> Self {
        Self {
            branches: BTreeMap::new(),
            files: BTreeMap::new(),
            truncated_trees: BTreeSet::new(),
            checks: BTreeMap::new(),
            commit_pulls: BTreeMap::new(),
            opened_pulls: Vec::new(),
            activity: BTreeMap::new(),
            failures: Vec::new(),
            rate_limit_remaining: Some(DEFAULT_RATE_LIMIT),
            remaining_after: Vec::new(),
            next_pull: 500,
        }
    }
}

impl History {
    /// The injected failure for `method` on `repo` (or `repo` + `object`), if any, and the
    /// rate-limit change a touch of `repo` triggers.
    pub(crate) fn call(
        &mut self,
        method: &str,
        repo: &RepoName,
        object: &str,
    ) -> Result<(), GitHubError> {
        if let Some((_, remaining)) = self.remaining_after.iter().find(|(r, _)| r == repo) {
            self.rate_limit_remaining = Some(*remaining);
        }
        let full = format!("{repo} {object}");
        match self
            .failures
            .iter()
            .find(|(m, subject, _)| *m == method && (*subject == repo.as_str() || *subject == full))
        {
            Some((_, _, error)) => Err(error.clone()),
            None => Ok(()),
        }
    }

    fn branch(&self, repo: &RepoName, branch: &str) -> Option<&Vec<CommitContext>> {
        self.branches.get(&(repo.clone(), branch.to_owned()))
    }

    fn find_commit(&self, repo: &RepoName, sha: &CommitSha) -> Option<&CommitContext> {
        self.branches
            .iter()
            .filter(|((r, _), _)| r == repo)
            .flat_map(|(_, commits)| commits)
            .find(|c| c.sha == *sha)
    }

    /// Whether `git_ref` names a branch, a known commit or a ref with files.
    fn knows_ref(&self, repo: &RepoName, git_ref: &str) -> bool {
        let key = (repo.clone(), git_ref.to_owned());
        self.branches.contains_key(&key)
            || self.files.contains_key(&key)
            || CommitSha::parse(git_ref).is_ok_and(|sha| self.find_commit(repo, &sha).is_some())
    }

    /// The injected failure of an activity-log read of `branch`, if any.
    pub(crate) fn call_activity(
        &mut self,
        repo: &RepoName,
        branch: &str,
    ) -> Result<(), GitHubError> {
        self.call("activity", repo, branch)
    }

    /// The activity log of a branch, newest first as GitHub lists it: the one a test set,
    /// else its history's, oldest commit first: the root creates the branch; a commit a
    /// merged pull request made is a `pr_merge` by whoever merged it; any other a `push` by
    /// its committer at its date. `None` when the fake has no such branch.
    pub(crate) fn activity(&self, repo: &RepoName, branch: &str) -> Option<Vec<RefUpdate>> {
        if let Some(set) = self.activity.get(&(repo.clone(), branch.to_owned())) {
            return Some(set.iter().rev().cloned().collect());
        }
        let commits = self.branch(repo, branch)?;
        let mut before: Option<CommitSha> = None;
        let mut log: Vec<RefUpdate> = commits
            .iter()
            .rev()
            .map(|commit| {
                let merged_by = self
                    .commit_pulls
                    .get(&(repo.clone(), commit.sha.clone()))
                    .and_then(|pulls| {
                        pulls
                            .iter()
                            .find(|p| p.merge_commit_sha.as_ref() == Some(&commit.sha))
                    })
                    .and_then(|p| p.merged_by.clone());
                let (kind, actor) = match (&before, merged_by) {
                    (None, _) => (
                        RefUpdateKind::BranchCreation,
                        commit.committer_login.clone(),
                    ),
                    (Some(_), Some(merger)) => {
                        (RefUpdateKind::Other("pr_merge".to_owned()), Some(merger))
                    }
                    (Some(_), None) => (RefUpdateKind::Push, commit.committer_login.clone()),
                };
                RefUpdate {
                    kind,
                    before: before.replace(commit.sha.clone()),
                    after: Some(commit.sha.clone()),
                    at: commit.committed_at,
                    actor,
                }
            })
            .collect();
        log.reverse();
        Some(log)
    }

    /// The commits reachable from `sha` (itself included), parents before children.
    fn ancestry(&self, repo: &RepoName, sha: &CommitSha) -> Vec<CommitContext> {
        let mut seen: BTreeSet<CommitSha> = BTreeSet::new();
        let mut out = Vec::new();
        let mut stack: Vec<(CommitSha, bool)> = vec![(sha.clone(), false)];
        while let Some((next, expanded)) = stack.pop() {
            if expanded {
                if let Some(commit) = self.find_commit(repo, &next) {
                    out.push(commit.clone());
                }
                continue;
            }
            if !seen.insert(next.clone()) {
                continue;
            }
            stack.push((next.clone(), true));
            if let Some(commit) = self.find_commit(repo, &next) {
                for parent in commit.parents.iter().rev() {
                    stack.push((parent.clone(), false));
                }
            }
        }
        out
    }

    /// Points `branch` at the last of `ancestry` (its commits, parents before children)
    /// and logs the move by the bot in the branch's activity, a push or a force push.
    fn move_branch(
        &mut self,
        repo: &RepoName,
        branch: &str,
        ancestry: Vec<CommitContext>,
        fast_forward: bool,
    ) {
        let key = (repo.clone(), branch.to_owned());
        let before = self
            .branch(repo, branch)
            .and_then(|commits| commits.first())
            .map(|c| c.sha.clone());
        let mut log: Vec<RefUpdate> = match self.activity.get(&key) {
            Some(set) => set.clone(),
            None => self
                .activity(repo, branch)
                .unwrap_or_default()
                .into_iter()
                .rev()
                .collect(),
        };
        let after = ancestry.last().map(|c| c.sha.clone());
        log.push(RefUpdate {
            kind: if fast_forward {
                RefUpdateKind::Push
            } else {
                RefUpdateKind::ForcePush
            },
            before,
            after,
            at: None,
            actor: Some(login(super::testkit::BOT)),
        });
        self.activity.insert(key.clone(), log);
        self.branches
            .insert(key, ancestry.into_iter().rev().collect());
    }

    fn ref_not_found(repo: &RepoName, git_ref: &str) -> GitHubError {
        GitHubError::NotFound {
            what: format!("{repo} ref {git_ref}"),
        }
    }

    fn file_text(&self, repo: &RepoName, git_ref: &str, path: &str) -> Option<&String> {
        self.files
            .get(&(repo.clone(), git_ref.to_owned()))
            .and_then(|files| files.get(path))
    }
}

/// A full SHA derived from `text` (for commits the fake creates).
fn derived_sha(text: &str) -> CommitSha {
    let digest = hex::encode(Sha256::digest(text.as_bytes()));
    CommitSha::parse(&digest[..40]).expect("40 hex digits are a SHA")
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

/// A commit on `main` with SHA `prefix` (zero-padded) and `message`, committed at 10:00 on
/// the test day by `committer` (`None`: no linked account). Parents are filled in by
/// [`Fake::set_branch`] unless set here.
pub(crate) fn commit_by(prefix: &str, message: &str, committer: Option<&str>) -> CommitContext {
    let mut commit = CommitContext::from_message(super::testkit::sha(prefix), message);
    commit.committer_login = committer.map(login);
    commit.author_login = committer.map(login);
    commit.committed_at = Some(at("2026-03-01T10:00:00Z"));
    commit
}

/// A commit the bot squash-merged (the normal, gated way onto `main`).
pub(crate) fn merged(prefix: &str, message: &str) -> CommitContext {
    commit_by(prefix, message, Some(super::testkit::BOT))
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

impl Fake {
    /// Runs `f` on the history state.
    pub(crate) fn history<T>(&self, f: impl FnOnce(&mut History) -> T) -> T {
        self.with(|s| f(&mut s.history))
    }

    /// Sets the commits of `branch` in `name`, given oldest first; a commit without
    /// parents gets the previous one as its parent (the first stays a root).
    pub(crate) fn set_branch(&self, name: &str, branch: &str, oldest_first: Vec<CommitContext>) {
        let mut commits = oldest_first;
        for i in 1..commits.len() {
            if commits[i].parents.is_empty() {
                let parent = commits[i - 1].sha.clone();
                commits[i].parents.push(parent);
            }
        }
        commits.reverse();
        self.history(|h| h.branches.insert((repo(name), branch.to_owned()), commits));
    }

    /// Sets `main` of `name` (commits oldest first, see [`Fake::set_branch`]).
    pub(crate) fn set_main(&self, name: &str, oldest_first: Vec<CommitContext>) {
        self.set_branch(name, "main", oldest_first);
    }

    /// Puts a file at `git_ref` (a branch name or a full SHA) of `name`.
    pub(crate) fn add_file(&self, name: &str, git_ref: &str, path: &str, text: &str) {
        self.history(|h| {
            h.files
                .entry((repo(name), git_ref.to_owned()))
                .or_default()
                .insert(path.to_owned(), text.to_owned())
        });
    }

    /// The text of a file at `git_ref` of `name`, if there is one.
    pub(crate) fn file_text(&self, name: &str, git_ref: &str, path: &str) -> Option<String> {
        self.history(|h| h.file_text(&repo(name), git_ref, path).cloned())
    }

    /// Sets the check runs of a commit.
    pub(crate) fn set_checks(&self, name: &str, sha: &CommitSha, runs: Vec<CheckRun>) {
        self.history(|h| h.checks.insert((repo(name), sha.clone()), runs));
    }

    /// Makes history `method` fail with `error` for `subject` (see [`History::failures`]).
    pub(crate) fn fail_history(&self, method: &'static str, subject: &str, error: GitHubError) {
        self.history(|h| h.failures.push((method, subject.to_owned(), error)));
    }
}

#[async_trait::async_trait]
impl GitHubHistory for Fake {
    async fn commit(&self, repo: &RepoName, sha: &CommitSha) -> Result<CommitContext, GitHubError> {
        self.history(|h| {
            h.call("commit", repo, sha.as_str())?;
            h.find_commit(repo, sha)
                .cloned()
                .ok_or_else(|| GitHubError::NotFound {
                    what: format!("{repo} commit {sha}"),
                })
        })
    }

    async fn branch_commits(
        &self,
        repo: &RepoName,
        branch: &str,
        limit: usize,
    ) -> Result<Vec<CommitContext>, GitHubError> {
        self.history(|h| {
            h.call("branch_commits", repo, branch)?;
            h.branch(repo, branch)
                .map(|commits| commits.iter().take(limit).cloned().collect())
                .ok_or_else(|| GitHubError::NotFound {
                    what: format!("{repo} branch {branch}"),
                })
        })
    }

    async fn file(
        &self,
        repo: &RepoName,
        path: &str,
        git_ref: &str,
    ) -> Result<Option<FileContent>, GitHubError> {
        self.history(|h| {
            h.call("file", repo, path)?;
            if !h.knows_ref(repo, git_ref) {
                return Err(History::ref_not_found(repo, git_ref));
            }
            Ok(h.file_text(repo, git_ref, path).map(|text| FileContent {
                text: text.clone(),
                blob_sha: blob_sha(text.as_bytes()),
            }))
        })
    }

    async fn put_file(&self, repo: &RepoName, write: &FileWrite) -> Result<String, GitHubError> {
        self.with(|s| {
            let h = &mut s.history;
            h.call("put_file", repo, &write.path)?;
            if h.branch(repo, &write.branch).is_none() {
                return Err(GitHubError::NotFound {
                    what: format!("{repo} branch {}", write.branch),
                });
            }
            let current = h
                .file_text(repo, &write.branch, &write.path)
                .map(|text| blob_sha(text.as_bytes()));
            if current != write.expected_blob_sha {
                return Err(GitHubError::Conflict {
                    what: format!("{repo} {}", write.path),
                    message: format!(
                        "{} does not match the current blob",
                        write.expected_blob_sha.as_deref().unwrap_or("no blob")
                    ),
                });
            }
            h.files
                .entry((repo.clone(), write.branch.clone()))
                .or_default()
                .insert(write.path.clone(), write.text.clone());
            s.log.push(format!(
                "put {repo}@{} {}: {}",
                write.branch, write.path, write.message
            ));
            Ok(blob_sha(write.text.as_bytes()))
        })
    }

    async fn tree(&self, repo: &RepoName, git_ref: &str) -> Result<Tree, GitHubError> {
        self.history(|h| {
            h.call("tree", repo, git_ref)?;
            if !h.knows_ref(repo, git_ref) {
                return Err(History::ref_not_found(repo, git_ref));
            }
            let key = (repo.clone(), git_ref.to_owned());
            let entries = h
                .files
                .get(&key)
                .map(|files| {
                    files
                        .iter()
                        .map(|(path, text)| TreeEntry {
                            path: path.clone(),
                            blob_sha: blob_sha(text.as_bytes()),
                        })
                        .collect()
                })
                .unwrap_or_default();
            Ok(Tree {
                entries,
                truncated: h.truncated_trees.contains(&key),
            })
        })
    }

    async fn create_branch(
        &self,
        repo: &RepoName,
        branch: &str,
        sha: &CommitSha,
    ) -> Result<(), GitHubError> {
        self.with(|s| {
            let h = &mut s.history;
            h.call("create_branch", repo, branch)?;
            let key = (repo.clone(), branch.to_owned());
            if h.branches.contains_key(&key) {
                return Err(GitHubError::Conflict {
                    what: format!("{repo} branch {branch}"),
                    message: "Reference already exists".to_owned(),
                });
            }
            // The new branch shares the history from `sha` down, and the files of the
            // branch whose head `sha` is.
            let mut commits = None;
            let mut files = None;
            for ((r, name), list) in &h.branches {
                if r != repo {
                    continue;
                }
                if let Some(at) = list.iter().position(|c| c.sha == *sha) {
                    commits.get_or_insert_with(|| list[at..].to_vec());
                    if at == 0 {
                        files = h.files.get(&(repo.clone(), name.clone())).cloned();
                    }
                }
            }
            let commits =
                commits.unwrap_or_else(|| vec![CommitContext::from_message(sha.clone(), "base")]);
            h.branches.insert(key.clone(), commits);
            // GitHub logs the creation by whoever made it: mp.
            h.activity.insert(
                key.clone(),
                vec![RefUpdate {
                    kind: RefUpdateKind::BranchCreation,
                    before: None,
                    after: Some(sha.clone()),
                    at: None,
                    actor: Some(super::testkit::login(super::testkit::BOT)),
                }],
            );
            if let Some(files) = files {
                h.files.insert(key, files);
            }
            s.log
                .push(format!("branch {repo} {branch} @ {}", sha.short()));
            Ok(())
        })
    }

    async fn update_branch_ref(
        &self,
        repo: &RepoName,
        branch: &str,
        sha: &CommitSha,
        force: bool,
    ) -> Result<(), GitHubError> {
        self.with(|s| {
            let h = &mut s.history;
            h.call("update_branch_ref", repo, branch)?;
            let tip = h
                .branch(repo, branch)
                .and_then(|commits| commits.first())
                .map(|c| c.sha.clone())
                .ok_or_else(|| GitHubError::NotFound {
                    what: format!("{repo} branch {branch}"),
                })?;
            if h.find_commit(repo, sha).is_none() {
                return Err(History::ref_not_found(repo, sha.as_str()));
            }
            let ancestry = h.ancestry(repo, sha);
            let fast_forward = ancestry.iter().any(|c| c.sha == tip);
            if !force && !fast_forward {
                return Err(GitHubError::Conflict {
                    what: format!("{repo} refs/heads/{branch}"),
                    message: "Update is not a fast forward".to_owned(),
                });
            }
            if tip == *sha {
                return Ok(());
            }
            h.move_branch(repo, branch, ancestry, fast_forward);
            s.log.push(format!(
                "ref {repo} {branch} {} -> {}{}",
                tip.short(),
                sha.short(),
                if force { " (forced)" } else { "" }
            ));
            Ok(())
        })
    }

    async fn merge_into_branch(
        &self,
        repo: &RepoName,
        base: &str,
        head: &CommitSha,
        commit_message: &str,
    ) -> Result<Option<CommitSha>, GitHubError> {
        self.with(|s| {
            let h = &mut s.history;
            h.call("merge_into_branch", repo, head.as_str())?;
            let tip = h
                .branch(repo, base)
                .and_then(|commits| commits.first())
                .map(|c| c.sha.clone())
                .ok_or_else(|| GitHubError::NotFound {
                    what: format!("{repo} branch {base}"),
                })?;
            if h.find_commit(repo, head).is_none() {
                return Err(History::ref_not_found(repo, head.as_str()));
            }
            let mut ancestry = h.ancestry(repo, &tip);
            if ancestry.iter().any(|c| c.sha == *head) {
                return Ok(None);
            }
            let sha = derived_sha(&format!("merge {repo} {head} into {base} at {tip}"));
            let mut merge = CommitContext::from_message(sha.clone(), commit_message);
            merge.parents = vec![tip, head.clone()];
            merge.author_login = Some(login(super::testkit::BOT));
            merge.committer_login = Some(login(super::testkit::BOT));
            for commit in h.ancestry(repo, head) {
                if !ancestry.iter().any(|c| c.sha == commit.sha) {
                    ancestry.push(commit);
                }
            }
            ancestry.push(merge);
            h.move_branch(repo, base, ancestry, true);
            s.log.push(format!(
                "merge {repo} {} into {base} as {}: {}",
                head.short(),
                sha.short(),
                first_line(commit_message)
            ));
            Ok(Some(sha))
        })
    }

    async fn compare(
        &self,
        repo: &RepoName,
        base: &CommitSha,
        head: &CommitSha,
        limit: usize,
    ) -> Result<Comparison, GitHubError> {
        self.history(|h| {
            h.call("compare", repo, head.as_str())?;
            for sha in [base, head] {
                if h.find_commit(repo, sha).is_none() {
                    return Err(History::ref_not_found(repo, sha.as_str()));
                }
            }
            let behind: BTreeSet<CommitSha> =
                h.ancestry(repo, base).into_iter().map(|c| c.sha).collect();
            let ahead = h.ancestry(repo, head);
            let fast_forward = ahead.iter().any(|c| c.sha == *base);
            let mut commits: Vec<CommitContext> = ahead
                .into_iter()
                .filter(|c| !behind.contains(&c.sha))
                .collect();
            let total = commits.len();
            commits.truncate(limit);
            Ok(Comparison {
                commits,
                total,
                fast_forward,
            })
        })
    }

    async fn commit_pulls(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
    ) -> Result<Vec<CommitPull>, GitHubError> {
        self.history(|h| {
            h.call("commit_pulls", repo, sha.as_str())?;
            Ok(h.commit_pulls
                .get(&(repo.clone(), sha.clone()))
                .cloned()
                .unwrap_or_default())
        })
    }

    async fn update_issue_body(
        &self,
        repo: &RepoName,
        number: PrNumber,
        body: &str,
    ) -> Result<(), GitHubError> {
        self.with(|s| {
            s.history
                .call("update_issue_body", repo, &number.to_string())?;
            let issue = s
                .issues
                .iter_mut()
                .find(|i| i.repo == *repo && i.number == number)
                .ok_or_else(|| GitHubError::NotFound {
                    what: format!("{repo}#{number}"),
                })?;
            issue.body = body.to_owned();
            s.log.push(format!("edit-issue {repo}#{number}"));
            Ok(())
        })
    }

    async fn create_pull(&self, repo: &RepoName, pull: &NewPull) -> Result<PrNumber, GitHubError> {
        self.with(|s| {
            let h = &mut s.history;
            h.call("create_pull", repo, &pull.head)?;
            if h.opened_pulls
                .iter()
                .any(|(r, _, p)| r == repo && p.head == pull.head)
            {
                return Err(GitHubError::Conflict {
                    what: format!("{repo} pull from {}", pull.head),
                    message: "A pull request already exists".to_owned(),
                });
            }
            if h.branch(repo, &pull.head).is_none() {
                return Err(GitHubError::Status {
                    route: "POST /pulls".to_owned(),
                    status: 422,
                    message: format!("head {} does not exist", pull.head),
                });
            }
            h.next_pull += 1;
            let number = PrNumber::new(h.next_pull - 1);
            h.opened_pulls.push((repo.clone(), number, pull.clone()));
            s.log.push(format!(
                "pull {repo}#{number} {} -> {}: {}",
                pull.head, pull.base, pull.title
            ));
            Ok(number)
        })
    }

    async fn push_revert(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
        branch: &str,
        message: &str,
    ) -> Result<CommitSha, GitHubError> {
        self.with(|s| {
            let h = &mut s.history;
            h.call("push_revert", repo, branch)?;
            let key = (repo.clone(), branch.to_owned());
            if h.branches.contains_key(&key) {
                return Err(GitHubError::Conflict {
                    what: format!("{repo} branch {branch}"),
                    message: "Reference already exists".to_owned(),
                });
            }
            let mut history =
                h.branch(repo, "main")
                    .cloned()
                    .ok_or_else(|| GitHubError::NotFound {
                        what: format!("{repo} branch main"),
                    })?;
            let revert_sha = derived_sha(&format!("revert {repo} {sha} {branch}"));
            let mut revert = CommitContext::from_message(revert_sha.clone(), message);
            revert.parents = history.first().map(|c| c.sha.clone()).into_iter().collect();
            history.insert(0, revert);
            h.branches.insert(key, history);
            s.log.push(format!(
                "revert {repo} {} on {branch}: {}",
                sha.short(),
                first_line(message)
            ));
            Ok(revert_sha)
        })
    }
}
