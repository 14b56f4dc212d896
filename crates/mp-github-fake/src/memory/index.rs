//! Lookup tables over the world `MemoryGitHub` serves: repositories by name, commits by SHA
//! and id, pull requests by number. Without them every read scans the world, and a tick
//! over thousands of pull requests spends most of its time comparing SHAs.
//!
//! The tables follow the world rather than own it, so code that changes the world directly
//! (appending commits, opening pull requests) needs not know they exist: items appended
//! since the last lookup are entered on the next one, every hit is checked against the world
//! before it is used, and a miss is confirmed by a scan (which rebuilds the tables when it
//! finds what they did not). In a consistent world, where SHAs and numbers are unique, a
//! lookup answers what a scan would. The one question answered from the tables alone is
//! whether a new commit's id or SHA is taken, since commits are only ever appended.

use std::collections::{HashMap, HashSet};

use mp_core::ids::{CommitSha, PrNumber, RepoName};

use crate::world::{Repo, World};

/// The tables of a whole world.
#[derive(Debug, Default)]
pub(super) struct WorldIndex {
    repos: HashMap<RepoName, usize>,
    /// By position in `world.repos`.
    per_repo: Vec<RepoIndex>,
}

/// The tables of one repository; `*_seen` counts the items already entered.
#[derive(Debug, Default)]
pub(super) struct RepoIndex {
    /// The repository these tables were built for.
    name: Option<RepoName>,
    commits_seen: usize,
    commits: HashMap<CommitSha, usize>,
    commit_ids: HashSet<String>,
    pulls_seen: usize,
    pulls: HashMap<PrNumber, usize>,
}

impl WorldIndex {
    /// The position of repository `name` in `world.repos`.
    pub(super) fn repo(&mut self, world: &World, name: &RepoName) -> Option<usize> {
        let hit = self.repos.get(name).copied();
        if let Some(position) = hit
            && world.repos.get(position).is_some_and(|r| &r.name == name)
        {
            return Some(position);
        }
        let position = world.repos.iter().position(|r| &r.name == name)?;
        self.repos = world
            .repos
            .iter()
            .enumerate()
            .rev()
            .map(|(position, repo)| (repo.name.clone(), position))
            .collect();
        Some(position)
    }

    /// The tables of `repo`, found at `position` in `world.repos`, brought up to date.
    pub(super) fn tables(&mut self, position: usize, repo: &Repo) -> &mut RepoIndex {
        if self.per_repo.len() <= position {
            self.per_repo.resize_with(position + 1, RepoIndex::default);
        }
        let tables = &mut self.per_repo[position];
        if tables.name.as_ref() != Some(&repo.name) {
            *tables = RepoIndex {
                name: Some(repo.name.clone()),
                ..RepoIndex::default()
            };
        }
        tables.catch_up(repo);
        tables
    }
}

impl RepoIndex {
    /// Enters the items appended since the last call; starts over when items were removed.
    fn catch_up(&mut self, repo: &Repo) {
        if self.commits_seen > repo.commits.len() || self.pulls_seen > repo.pulls.len() {
            self.rebuild(repo);
            return;
        }
        for (position, commit) in repo.commits.iter().enumerate().skip(self.commits_seen) {
            self.commits.entry(commit.sha.clone()).or_insert(position);
            self.commit_ids.insert(commit.id.clone());
        }
        self.commits_seen = repo.commits.len();
        for (position, pull) in repo.pulls.iter().enumerate().skip(self.pulls_seen) {
            self.pulls.entry(pull.number).or_insert(position);
        }
        self.pulls_seen = repo.pulls.len();
    }

    fn rebuild(&mut self, repo: &Repo) {
        *self = Self {
            name: Some(repo.name.clone()),
            ..Self::default()
        };
        self.catch_up(repo);
    }

    /// The position of the commit with `sha` in `repo.commits`.
    pub(super) fn commit(&mut self, repo: &Repo, sha: &CommitSha) -> Option<usize> {
        if let Some(&position) = self.commits.get(sha)
            && repo.commits.get(position).is_some_and(|c| &c.sha == sha)
        {
            return Some(position);
        }
        let position = repo.commits.iter().position(|c| &c.sha == sha);
        if position.is_some() {
            self.rebuild(repo);
        }
        position
    }

    /// The position of the pull request numbered `number` in `repo.pulls`.
    pub(super) fn pull(&mut self, repo: &Repo, number: PrNumber) -> Option<usize> {
        if let Some(&position) = self.pulls.get(&number)
            && repo.pulls.get(position).is_some_and(|p| p.number == number)
        {
            return Some(position);
        }
        let position = repo.pulls.iter().position(|p| p.number == number);
        if position.is_some() {
            self.rebuild(repo);
        }
        position
    }

    /// Whether a commit of the repository has this id or this SHA.
    pub(super) fn commit_taken(&self, id: &str, sha: &CommitSha) -> bool {
        self.commit_ids.contains(id) || self.commits.contains_key(sha)
    }
}

#[cfg(test)]
mod tests;
