//! `impl GitHubHistory for MemoryGitHub`: commits, branch history, file contents, trees,
//! branches, the pull requests of a commit, issue bodies, new pull requests and pushed
//! reverts, answered from and applied to the world.
//!
//! The world keeps one file snapshot per branch (`files` for `main`, `branch_files` for the
//! others), not one per commit. A commit SHA therefore reads the files of a branch it
//! belongs to: a branch it heads, else a branch whose history holds it (`main` first, then
//! the other branches by name). A known commit on no branch reads as an empty tree.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

use mp_core::branch::drift::blob_sha;
use mp_core::context::{CommitContext, FileChange, FileStatus, PrState, RefUpdate, RefUpdateKind};
use mp_core::ids::{CommitSha, PrNumber, RepoName};
use mp_core::port::{
    CommitPull, Comparison, FileContent, FileWrite, FileWritten, GitHubError, GitHubHistory,
    NewPull, PullOpened, Tree, TreeEntry, Write,
};

use super::{Endpoint, MemoryGitHub, fresh_commit_id, thread_not_found};
use crate::world::{Commit, Pull, PullFile, Repo};

#[cfg(test)]
mod tests;

/// The branch whose files are `Repo::files`.
const MAIN: &str = "main";

/// GitHub's 422 message for a `PUT /contents` over an existing file without its blob `sha`.
pub(crate) const MISSING_SHA_MESSAGE: &str = "Invalid request.\n\n\"sha\" wasn't supplied.";

/// GitHub's 422 message for a ref update that is not a fast-forward and not forced.
pub(crate) const NOT_FAST_FORWARD: &str = "Update is not a fast forward";

/// GitHub's 409 message for `POST /merges` when the merge conflicts.
pub(crate) const MERGE_CONFLICT: &str = "Merge conflict";

/// The files of a branch the world lists no files for.
static NO_FILES: BTreeMap<String, String> = BTreeMap::new();

fn branch_not_found(repo: &RepoName, branch: &str) -> GitHubError {
    GitHubError::NotFound {
        what: format!("branch {branch} of {repo}"),
    }
}

fn commit_not_found(repo: &RepoName, sha: &CommitSha) -> GitHubError {
    GitHubError::NotFound {
        what: format!("commit {sha} in {repo}"),
    }
}

/// GitHub's 422 "Validation Failed" for `endpoint`.
fn invalid(endpoint: Endpoint, message: String) -> GitHubError {
    GitHubError::Status {
        route: endpoint.route().to_owned(),
        status: 422,
        message,
    }
}

/// The files at `branch`: `files` for the default branch, else its `branch_files` (none
/// if unlisted).
pub(crate) fn branch_files<'r>(repo: &'r Repo, branch: &str) -> &'r BTreeMap<String, String> {
    if branch == repo.default_branch {
        &repo.files
    } else {
        repo.branch_files.get(branch).unwrap_or(&NO_FILES)
    }
}

/// The files at `branch`, for changing them.
fn branch_files_mut<'r>(repo: &'r mut Repo, branch: &str) -> &'r mut BTreeMap<String, String> {
    if branch == repo.default_branch {
        &mut repo.files
    } else {
        repo.branch_files.entry(branch.to_owned()).or_default()
    }
}

/// Every commit reachable from `head` through all parents, `head` first, in breadth-first
/// discovery order.
fn reachable<'r>(repo: &'r Repo, head: &CommitSha) -> Vec<&'r Commit> {
    let mut seen = BTreeSet::new();
    let mut queue = VecDeque::from([head.clone()]);
    let mut found = Vec::new();
    while let Some(sha) = queue.pop_front() {
        if !seen.insert(sha.clone()) {
            continue;
        }
        if let Some(commit) = repo.commit(&sha) {
            queue.extend(commit.parents.iter().cloned());
            found.push(commit);
        }
    }
    found
}

/// The commits reachable from `head` but not from `base`, oldest first (parents before
/// children), as the world computes a pull request's default `commits`.
pub(crate) fn commits_between(repo: &Repo, base: &CommitSha, head: &CommitSha) -> Vec<CommitSha> {
    let from_base: BTreeSet<&CommitSha> = reachable(repo, base).iter().map(|c| &c.sha).collect();
    let from_head: BTreeSet<&CommitSha> = reachable(repo, head).iter().map(|c| &c.sha).collect();
    repo.commits
        .iter()
        .filter(|c| from_head.contains(&c.sha) && !from_base.contains(&c.sha))
        .map(|c| c.sha.clone())
        .collect()
}

/// The branches in lookup order: the default branch first, then the others by name.
fn branches_in_order(repo: &Repo) -> impl Iterator<Item = (&String, &CommitSha)> {
    let main = repo.branches.get_key_value(&repo.default_branch);
    main.into_iter().chain(
        repo.branches
            .iter()
            .filter(|(name, _)| **name != repo.default_branch),
    )
}

/// The files `git_ref` (a branch name or a full commit SHA) reads, per the approximation in
/// the module documentation.
///
/// # Errors
/// [`GitHubError::NotFound`] when `git_ref` is neither a branch nor a known commit.
fn files_at<'r>(
    repo: &'r Repo,
    git_ref: &str,
) -> Result<&'r BTreeMap<String, String>, GitHubError> {
    if repo.branches.contains_key(git_ref) {
        return Ok(branch_files(repo, git_ref));
    }
    let not_found = || GitHubError::NotFound {
        what: format!("ref {git_ref} of {}", repo.name),
    };
    let sha = CommitSha::parse(git_ref).map_err(|_| not_found())?;
    if repo.commit(&sha).is_none() {
        return Err(not_found());
    }
    let headed = branches_in_order(repo).find(|(_, head)| **head == sha);
    let holding = || {
        branches_in_order(repo).find(|(_, head)| reachable(repo, head).iter().any(|c| c.sha == sha))
    };
    Ok(match headed.or_else(holding) {
        Some((branch, _)) => branch_files(repo, branch),
        None => &NO_FILES,
    })
}

/// The changes a branch takes in when it moves from `tip` to `to`: the changed files of
/// every pull request whose head is reachable from `to` and not from `tip`, in pull-request
/// order (the world knows a commit's files only through the pull requests).
fn changes_brought(repo: &Repo, tip: &CommitSha, to: &CommitSha) -> Vec<PullFile> {
    let before: BTreeSet<&CommitSha> = reachable(repo, tip).iter().map(|c| &c.sha).collect();
    let after: BTreeSet<&CommitSha> = reachable(repo, to).iter().map(|c| &c.sha).collect();
    repo.pulls
        .iter()
        .filter(|p| after.contains(&p.head_sha) && !before.contains(&p.head_sha))
        .flat_map(|p| p.files.iter().cloned())
        .collect()
}

/// The files `branch` has after moving from `tip` to `to`: those of a branch headed at
/// `to` whose files the world keeps, else the branch's own with the changes the move
/// brings ([`changes_brought`]) applied.
fn files_after_move(
    repo: &Repo,
    branch: &str,
    tip: &CommitSha,
    to: &CommitSha,
) -> BTreeMap<String, String> {
    let known = branches_in_order(repo).find(|(name, head)| {
        *head == to
            && name.as_str() != branch
            && (**name == repo.default_branch || repo.branch_files.contains_key(name.as_str()))
    });
    if let Some((name, _)) = known {
        return branch_files(repo, name).clone();
    }
    let mut files = branch_files(repo, branch).clone();
    super::apply_changes(&mut files, &changes_brought(repo, tip, to));
    files
}

/// The changes from `base` to `head`, path by path, with the new content.
fn diff_files(base: &BTreeMap<String, String>, head: &BTreeMap<String, String>) -> Vec<PullFile> {
    let paths: BTreeSet<&String> = base.keys().chain(head.keys()).collect();
    paths
        .into_iter()
        .filter_map(|path| {
            let (old, new) = (base.get(path), head.get(path));
            let status = match (old, new) {
                (None, Some(_)) => FileStatus::Added,
                (Some(_), None) => FileStatus::Removed,
                (Some(old), Some(new)) if old != new => FileStatus::Modified,
                _ => return None,
            };
            let (additions, deletions) = line_changes(
                old.map_or("", String::as_str),
                new.map_or("", String::as_str),
            );
            Some(PullFile {
                change: FileChange {
                    path: path.clone(),
                    status,
                    additions,
                    deletions,
                    previous_filename: None,
                },
                content: new.cloned(),
            })
        })
        .collect()
}

/// Lines of `new` not matched in `old`, and lines of `old` not matched in `new` (a line
/// count, not a true diff).
fn line_changes(old: &str, new: &str) -> (u64, u64) {
    let mut unmatched: BTreeMap<&str, i64> = BTreeMap::new();
    for line in old.lines() {
        *unmatched.entry(line).or_default() -= 1;
    }
    for line in new.lines() {
        *unmatched.entry(line).or_default() += 1;
    }
    let added = unmatched
        .values()
        .filter(|n| **n > 0)
        .map(|n| n.unsigned_abs());
    let deleted = unmatched
        .values()
        .filter(|n| **n < 0)
        .map(|n| n.unsigned_abs());
    (added.sum(), deleted.sum())
}

/// Undoes a merged pull request's changes on `files` where the world knows how: an added
/// file is removed, a renamed file moves back. The content before a modification or a
/// removal is not in the world, so those files stay as they are.
///
/// # Errors
/// A message when the revert does not apply: the file changed or went away since.
fn undo_files(files: &mut BTreeMap<String, String>, changes: &[PullFile]) -> Result<(), String> {
    for file in changes {
        let path = &file.change.path;
        let changed_since = |current: &String| file.content.as_ref().is_some_and(|c| c != current);
        match file.change.status {
            FileStatus::Added => match files.get(path) {
                Some(current) if changed_since(current) => {
                    return Err(format!("{path} changed after it was added"));
                }
                _ => {
                    files.remove(path);
                }
            },
            FileStatus::Renamed => {
                let Some(previous) = &file.change.previous_filename else {
                    continue;
                };
                if files.contains_key(previous) {
                    return Err(format!("{previous} exists again"));
                }
                match files.remove(path) {
                    Some(current) if changed_since(&current) => {
                        return Err(format!("{path} changed after it was renamed"));
                    }
                    Some(current) => {
                        files.insert(previous.clone(), current);
                    }
                    None => return Err(format!("{path} no longer exists")),
                }
            }
            FileStatus::Modified | FileStatus::Removed => {}
        }
    }
    Ok(())
}

#[async_trait::async_trait]
impl GitHubHistory for MemoryGitHub {
    async fn commit(&self, repo: &RepoName, sha: &CommitSha) -> Result<CommitContext, GitHubError> {
        let state = self.call_on(Endpoint::GetCommit, repo, &[sha])?;
        let found = state.repo(repo)?;
        found
            .commit(sha)
            .map(Commit::context)
            .ok_or_else(|| commit_not_found(repo, sha))
    }

    async fn branch_commits(
        &self,
        repo: &RepoName,
        branch: &str,
        limit: usize,
    ) -> Result<Vec<CommitContext>, GitHubError> {
        let state = self.call(Endpoint::ListCommits, Some(repo), &[], &[("sha", &branch)])?;
        let found = state.repo(repo)?;
        let head = found
            .branch_head(branch)
            .ok_or_else(|| branch_not_found(repo, branch))?;
        let mut commits: Vec<(usize, &Commit)> =
            reachable(found, head).into_iter().enumerate().collect();
        // Newest committer date first (undated commits last), then discovery order.
        commits.sort_by_key(|(index, commit)| (Reverse(commit.date), *index));
        Ok(commits
            .into_iter()
            .take(limit)
            .map(|(_, commit)| commit.context())
            .collect())
    }

    async fn file(
        &self,
        repo: &RepoName,
        path: &str,
        git_ref: &str,
    ) -> Result<Option<FileContent>, GitHubError> {
        let state = self.call(
            Endpoint::GetContents,
            Some(repo),
            &[&path],
            &[("ref", &git_ref)],
        )?;
        let found = state.repo(repo)?;
        Ok(files_at(found, git_ref)?.get(path).map(|text| FileContent {
            text: text.clone(),
            blob_sha: blob_sha(text.as_bytes()),
        }))
    }

    async fn put_file(&self, repo: &RepoName, write: &FileWrite) -> Result<String, GitHubError> {
        let mut state = self.call_on(Endpoint::PutContents, repo, &[&write.path])?;
        let bot = state.bot(Endpoint::PutContents)?;
        let now = state.world.stamp();
        let found = state.repo_mut(repo)?;
        let head = found
            .branch_head(&write.branch)
            .cloned()
            .ok_or_else(|| branch_not_found(repo, &write.branch))?;
        let current = branch_files(found, &write.branch)
            .get(&write.path)
            .map(|text| blob_sha(text.as_bytes()));
        // GitHub's answers: a stale `sha` is 409 `<path> does not match <sha>`, a missing
        // one for an existing file 422 `"sha" wasn't supplied`; a `sha` for a file that does
        // not exist is ignored and the file created.
        let refused = match (write.expected_blob_sha.as_deref(), current.as_deref()) {
            (_, None) => None,
            (Some(expected), Some(current)) if expected.eq_ignore_ascii_case(current) => None,
            (None, Some(_)) => Some(MISSING_SHA_MESSAGE.to_owned()),
            (Some(expected), Some(_)) => Some(format!("{} does not match {expected}", write.path)),
        };
        if let Some(message) = refused {
            return Err(GitHubError::Conflict {
                what: format!("{repo} {}", write.path),
                message,
            });
        }
        let (id, sha) =
            fresh_commit_id(found, &format!("write {} on {}", write.path, write.branch));
        found.commits.push(Commit {
            check_workflows: Default::default(),
            id,
            sha: sha.clone(),
            message: write.message.clone(),
            parents: vec![head],
            author: Some(bot.clone()),
            committer: Some(bot.clone()),
            date: Some(now),
            checks: Vec::new(),
        });
        found.move_branch(
            &write.branch,
            Some(sha.clone()),
            RefUpdateKind::Push,
            bot,
            now,
        );
        branch_files_mut(found, &write.branch).insert(write.path.clone(), write.text.clone());
        let blob = blob_sha(write.text.as_bytes());
        state.applied(Write::PutFile {
            repo: repo.clone(),
            write: write.clone(),
            answer: Some(FileWritten {
                blob: blob.clone(),
                commit: sha,
            }),
        })?;
        Ok(blob)
    }

    async fn tree(&self, repo: &RepoName, git_ref: &str) -> Result<Tree, GitHubError> {
        let state = self.call_on(Endpoint::GetTree, repo, &[&git_ref])?;
        let found = state.repo(repo)?;
        let files = files_at(found, git_ref)?;
        if found.tree_truncated {
            // Cut at the start: a caller that trusts the listing sees no file at all.
            return Ok(Tree {
                entries: Vec::new(),
                truncated: true,
            });
        }
        Ok(Tree {
            entries: files
                .iter()
                .map(|(path, text)| TreeEntry {
                    path: path.clone(),
                    blob_sha: blob_sha(text.as_bytes()),
                })
                .collect(),
            truncated: false,
        })
    }

    async fn create_branch(
        &self,
        repo: &RepoName,
        branch: &str,
        sha: &CommitSha,
    ) -> Result<(), GitHubError> {
        let mut state = self.call_on(Endpoint::CreateRef, repo, &[&branch])?;
        let bot = state.bot(Endpoint::CreateRef)?;
        let now = state.world.stamp();
        let found = state.repo_mut(repo)?;
        if branch.is_empty() {
            return Err(invalid(
                Endpoint::CreateRef,
                "a branch needs a name".to_owned(),
            ));
        }
        if found.branches.contains_key(branch) {
            return Err(GitHubError::Conflict {
                what: format!("{repo} refs/heads/{branch}"),
                message: "reference already exists".to_owned(),
            });
        }
        if found.commit(sha).is_none() {
            return Err(invalid(
                Endpoint::CreateRef,
                format!("object {sha} does not exist"),
            ));
        }
        let files = files_at(found, sha.as_str())?.clone();
        found.move_branch(
            branch,
            Some(sha.clone()),
            RefUpdateKind::BranchCreation,
            bot,
            now,
        );
        *branch_files_mut(found, branch) = files;
        state.applied(Write::CreateBranch {
            repo: repo.clone(),
            branch: branch.to_owned(),
            sha: sha.clone(),
        })?;
        Ok(())
    }

    async fn update_branch_ref(
        &self,
        repo: &RepoName,
        branch: &str,
        sha: &CommitSha,
        force: bool,
    ) -> Result<(), GitHubError> {
        let reference = format!("heads/{branch}");
        let mut state = self.call_on(Endpoint::UpdateRef, repo, &[&reference])?;
        let bot = state.bot(Endpoint::UpdateRef)?;
        let now = state.world.stamp();
        let found = state.repo_mut(repo)?;
        // GitHub answers 422 "Reference does not exist" and "Object does not exist"; the
        // port reads both as not found.
        let tip = found
            .branch_head(branch)
            .cloned()
            .ok_or_else(|| branch_not_found(repo, branch))?;
        if found.commit(sha).is_none() {
            return Err(commit_not_found(repo, sha));
        }
        let fast_forward = reachable(found, sha).iter().any(|c| c.sha == tip);
        if !force && !fast_forward {
            return Err(GitHubError::Conflict {
                what: format!("{repo} refs/heads/{branch}"),
                message: NOT_FAST_FORWARD.to_owned(),
            });
        }
        if tip == *sha {
            // Already there: GitHub answers the ref as it is, and nothing moved.
            return Ok(());
        }
        let files = files_after_move(found, branch, &tip, sha);
        let kind = if fast_forward {
            RefUpdateKind::Push
        } else {
            RefUpdateKind::ForcePush
        };
        found.move_branch(branch, Some(sha.clone()), kind, bot, now);
        *branch_files_mut(found, branch) = files;
        state.applied(Write::UpdateBranchRef {
            repo: repo.clone(),
            branch: branch.to_owned(),
            sha: sha.clone(),
            force,
            answer: Some(tip.clone()),
        })?;
        Ok(())
    }

    async fn merge_into_branch(
        &self,
        repo: &RepoName,
        base: &str,
        head: &CommitSha,
        commit_message: &str,
    ) -> Result<Option<CommitSha>, GitHubError> {
        let mut state = self.call_on(Endpoint::MergeBranch, repo, &[])?;
        let bot = state.bot(Endpoint::MergeBranch)?;
        let now = state.world.stamp();
        let found = state.repo_mut(repo)?;
        let tip = found
            .branch_head(base)
            .cloned()
            .ok_or_else(|| branch_not_found(repo, base))?;
        if found.commit(head).is_none() {
            return Err(commit_not_found(repo, head));
        }
        if reachable(found, &tip).iter().any(|c| c.sha == *head) {
            // 204: `head` is in the branch already.
            return Ok(None);
        }
        // The world's conflict model: a pull request with this head that GitHub would not
        // merge (`mergeable: false`) conflicts with any base.
        if found
            .pulls
            .iter()
            .any(|p| p.head_sha == *head && !p.mergeable)
        {
            return Err(GitHubError::Conflict {
                what: format!("{repo} merge of {} into {base}", head.short()),
                message: MERGE_CONFLICT.to_owned(),
            });
        }
        let changes = changes_brought(found, &tip, head);
        let (id, sha) = fresh_commit_id(found, &format!("merge into {base}"));
        found.commits.push(Commit {
            check_workflows: Default::default(),
            id,
            sha: sha.clone(),
            message: commit_message.to_owned(),
            parents: vec![tip, head.clone()],
            author: Some(bot.clone()),
            committer: Some(bot.clone()),
            date: Some(now),
            checks: Vec::new(),
        });
        found.move_branch(base, Some(sha.clone()), RefUpdateKind::Push, bot, now);
        super::apply_changes(branch_files_mut(found, base), &changes);
        state.applied(Write::MergeIntoBranch {
            repo: repo.clone(),
            base: base.to_owned(),
            head: head.clone(),
            message: commit_message.to_owned(),
            answer: Some(sha.clone()),
        })?;
        Ok(Some(sha))
    }

    async fn compare(
        &self,
        repo: &RepoName,
        base: &CommitSha,
        head: &CommitSha,
        limit: usize,
    ) -> Result<Comparison, GitHubError> {
        let state = self.call_on(Endpoint::Compare, repo, &[&format_args!("{base}...{head}")])?;
        let found = state.repo(repo)?;
        for sha in [base, head] {
            if found.commit(sha).is_none() {
                return Err(commit_not_found(repo, sha));
            }
        }
        let between = commits_between(found, base, head);
        let fast_forward = reachable(found, head).iter().any(|c| c.sha == *base);
        Ok(Comparison {
            total: between.len(),
            commits: between
                .iter()
                .take(limit)
                .filter_map(|sha| found.commit(sha).map(Commit::context))
                .collect(),
            fast_forward,
        })
    }

    async fn commit_pulls(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
    ) -> Result<Vec<CommitPull>, GitHubError> {
        let state = self.call_on(Endpoint::ListCommitPulls, repo, &[sha])?;
        let found = state.repo(repo)?;
        if found.commit(sha).is_none() {
            return Err(commit_not_found(repo, sha));
        }
        let mut pulls: Vec<&Pull> = found
            .pulls
            .iter()
            .filter(|p| p.merge_commit.as_ref() == Some(sha) || p.commits.contains(sha))
            .collect();
        pulls.sort_by_key(|p| p.number);
        Ok(pulls
            .into_iter()
            .map(|p| CommitPull {
                number: p.number,
                merged_by: p.merged_by.clone(),
                merge_commit_sha: p.merge_commit.clone(),
            })
            .collect())
    }

    async fn update_issue_body(
        &self,
        repo: &RepoName,
        number: PrNumber,
        body: &str,
    ) -> Result<(), GitHubError> {
        let mut state = self.call_on(Endpoint::UpdateIssue, repo, &[&number])?;
        let found = state.repo_mut(repo)?;
        if let Some(pull) = found.pull_mut(number) {
            pull.body = body.to_owned();
        } else if let Some(issue) = found.issue_mut(number) {
            issue.body = body.to_owned();
        } else {
            return Err(thread_not_found(repo, number));
        }
        state.applied(Write::UpdateIssueBody {
            repo: repo.clone(),
            number,
            body: body.to_owned(),
        })?;
        Ok(())
    }

    async fn create_pull(&self, repo: &RepoName, pull: &NewPull) -> Result<PrNumber, GitHubError> {
        let mut state = self.call_on(Endpoint::CreatePull, repo, &[&pull.head])?;
        let bot = state.bot(Endpoint::CreatePull)?;
        let now = state.world.stamp();
        let found = state.repo_mut(repo)?;
        let refuse = |message: String| invalid(Endpoint::CreatePull, message);
        if pull.title.trim().is_empty() {
            return Err(refuse("a pull request needs a title".to_owned()));
        }
        let head_sha = found
            .branch_head(&pull.head)
            .cloned()
            .ok_or_else(|| refuse(format!("head branch {} does not exist", pull.head)))?;
        let base_sha = found
            .branch_head(&pull.base)
            .cloned()
            .ok_or_else(|| refuse(format!("base branch {} does not exist", pull.base)))?;
        let open_already = found.pulls.iter().find(|p| {
            p.state == PrState::Open && p.head_ref == pull.head && p.base_ref == pull.base
        });
        if let Some(open) = open_already {
            return Err(GitHubError::Conflict {
                what: format!("{repo} {} -> {}", pull.head, pull.base),
                message: format!(
                    "a pull request already exists for {}: #{}",
                    pull.head, open.number
                ),
            });
        }
        let commits = commits_between(found, &base_sha, &head_sha);
        if commits.is_empty() {
            return Err(refuse(format!(
                "no commits between {} and {}",
                pull.base, pull.head
            )));
        }
        let has_files =
            pull.head == found.default_branch || found.branch_files.contains_key(&pull.head);
        let files = if has_files {
            diff_files(
                branch_files(found, &pull.base),
                branch_files(found, &pull.head),
            )
        } else {
            Vec::new()
        };
        let number = found.next_number();
        found.pulls.push(Pull {
            number,
            title: pull.title.clone(),
            body: pull.body.clone(),
            author: bot.clone(),
            head_ref: pull.head.clone(),
            head_sha: head_sha.clone(),
            base_ref: pull.base.clone(),
            base_sha,
            commits,
            labels: Vec::new(),
            events: Vec::new(),
            files,
            comments: Vec::new(),
            reactions: Vec::new(),
            state: PrState::Open,
            merged: false,
            mergeable: true,
            merged_by: None,
            merge_commit: None,
            merged_at: None,
            created_at: Some(now),
            comments_unreadable: false,
            head_repo: None,
            pushes: vec![RefUpdate {
                kind: RefUpdateKind::Push,
                before: None,
                after: Some(head_sha.clone()),
                at: Some(now),
                actor: Some(bot.clone()),
            }],
        });
        state.applied(Write::CreatePull {
            repo: repo.clone(),
            pull: pull.clone(),
            answer: Some(PullOpened { number, head_sha }),
        })?;
        Ok(number)
    }

    async fn push_revert(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
        branch: &str,
        message: &str,
    ) -> Result<CommitSha, GitHubError> {
        let mut state = self.call_on(Endpoint::GitPush, repo, &[&branch])?;
        let bot = state.bot(Endpoint::GitPush)?;
        let now = state.world.stamp();
        let found = state.repo_mut(repo)?;
        let conflict = |message: String| GitHubError::Conflict {
            what: format!("{repo} revert of {} on {branch}", sha.short()),
            message,
        };
        if found.branches.contains_key(branch) {
            return Err(conflict(format!("branch {branch} already exists")));
        }
        let reverted = found
            .commit(sha)
            .ok_or_else(|| commit_not_found(repo, sha))?;
        if reverted.parents.len() > 1 {
            return Err(conflict(format!(
                "{} is a merge commit of {} parents",
                sha.short(),
                reverted.parents.len()
            )));
        }
        let main_head = found
            .branch_head(MAIN)
            .cloned()
            .ok_or_else(|| branch_not_found(repo, MAIN))?;
        let mut files = found.files.clone();
        let merged_by_pull = found
            .pulls
            .iter()
            .find(|p| p.merged && p.merge_commit.as_ref() == Some(sha));
        if let Some(pull) = merged_by_pull {
            undo_files(&mut files, &pull.files).map_err(conflict)?;
        }
        let (id, revert_sha) = fresh_commit_id(found, &format!("revert of {}", sha.short()));
        found.commits.push(Commit {
            check_workflows: Default::default(),
            id,
            sha: revert_sha.clone(),
            message: message.to_owned(),
            parents: vec![main_head],
            author: Some(bot.clone()),
            committer: Some(bot.clone()),
            date: Some(now),
            checks: Vec::new(),
        });
        found.move_branch(
            branch,
            Some(revert_sha.clone()),
            RefUpdateKind::BranchCreation,
            bot,
            now,
        );
        found.branch_files.insert(branch.to_owned(), files);
        state.applied(Write::PushRevert {
            repo: repo.clone(),
            sha: sha.clone(),
            branch: branch.to_owned(),
            message: message.to_owned(),
            answer: Some(revert_sha.clone()),
        })?;
        Ok(revert_sha)
    }
}
