//! Simulated CI (the world's `ci:`): brings the named check runs of every open pull
//! request's head, of every merge commit a pull request made, of every tip pushed to
//! a merge queue's staging branch (`mp-queue/<branch>`, `mp_core::queue::staging_branch`;
//! not the assembly branch `mp-queue-build/<branch>`) and of every live merge group of
//! GitHub's merge queue (`gh-readonly-queue/...`, CI on `merge_group`) up to the world's
//! clock.
//!
//! A merge group's runs start when the group was made and fail when a pull request the
//! group brings (every entry ahead of its own, and its own: none of them was on the
//! branch when the group was made) changes a file matching a `fails` pattern.
//!
//! A staging tip's runs start at the push and fail when a pull request whose head the tip
//! reaches, and the gated branch's head at the push did not, changes a file matching a
//! `fails` pattern. A commit has one set of runs whatever claims it: when the gated branch
//! is fast-forwarded to a tested tip, the pull requests that merged keep the tip's runs.
//!
//! A head's runs start when the head appeared — the activity-log push that made it the
//! head, else the commit's date, else now — and complete `minutes` later, `success` unless
//! a changed file of the pull request matches a `fails` pattern. A run that the world
//! already lists for the check and App is kept and only completed when it is due; a
//! completed run is never touched, so a run somebody completed or re-ran stands.

use std::collections::BTreeMap;

use globset::{Glob, GlobSet, GlobSetBuilder};
use mp_core::context::{CheckConclusion, CheckRun, CheckStatus, PrState};
use mp_core::ids::{CommitSha, Timestamp};
use mp_core::queue::staging_branch;

use crate::world::{CiSimulation, Pull, Repo, World};

/// Brings every open pull request's simulated runs up to `world.now`.
pub(super) fn advance(world: &mut World) {
    let Some(ci) = world.ci.clone() else {
        return;
    };
    let fails = fail_patterns(&ci);
    let now = world.stamp();
    for repo in &mut world.repos {
        advance_repo(repo, &ci, &fails, now);
    }
}

/// The `fails` patterns as one set; the loader already refused a pattern that does not
/// compile, so one that still fails here is left out.
fn fail_patterns(ci: &CiSimulation) -> GlobSet {
    let mut builder = GlobSetBuilder::new();
    for pattern in &ci.fails {
        if let Ok(glob) = Glob::new(pattern) {
            builder.add(glob);
        }
    }
    builder.build().unwrap_or_else(|_| GlobSet::empty())
}

/// Brings `repo`'s simulated runs up to `now` (nothing without `ci:`).
pub(super) fn advance_repo_of(repo: &mut Repo, ci: Option<&CiSimulation>, now: Timestamp) {
    if let Some(ci) = ci {
        advance_repo(repo, ci, &fail_patterns(ci), now);
    }
}

fn advance_repo(repo: &mut Repo, ci: &CiSimulation, fails: &GlobSet, now: Timestamp) {
    let red = |pull: &Pull| {
        pull.files
            .iter()
            .any(|file| fails.is_match(&file.change.path))
    };
    let position = |sha: &CommitSha| repo.commits.iter().position(|c| &c.sha == sha);
    // Commit -> when its runs start and whether they fail; the first claim on a commit
    // stands, so a commit CI tested on a staging push keeps those runs when the base
    // branch moves to it.
    let mut due: BTreeMap<usize, (Timestamp, bool)> = BTreeMap::new();
    // Merge groups of GitHub's merge queue (CI on `merge_group`) ...
    for group in repo.merge_groups.values().flatten() {
        let Some(commit) = position(&group.head) else {
            continue;
        };
        let failing = group
            .entries
            .iter()
            .filter_map(|number| repo.pull(*number))
            .any(red);
        due.entry(commit).or_insert((group.created_at, failing));
    }
    // ... pushes to a staging branch (CI on `push` to `mp-queue/**`) ...
    for (tip, at, base) in staging_pushes(repo) {
        let Some(commit) = position(&tip) else {
            continue;
        };
        if settled(&repo.commits[commit].checks, ci) {
            // Tested already: what failed is decided.
            due.entry(commit).or_insert((at, false));
            continue;
        }
        let tested = repo.reachable_from(&tip);
        let landed = head_at(repo, &base, at)
            .map(|head| repo.reachable_from(&head))
            .unwrap_or_default();
        let failing = repo.pulls.iter().any(|pull| {
            tested.contains(&pull.head_sha) && !landed.contains(&pull.head_sha) && red(pull)
        });
        due.entry(commit).or_insert((at, failing));
    }
    // ... open pull requests' heads (CI on `pull_request`) ...
    for pull in repo
        .pulls
        .iter()
        .filter(|pull| pull.state == PrState::Open && pull.head_repo.is_none())
    {
        let appeared = appeared_at(repo, pull).unwrap_or(now);
        if let Some(commit) = position(&pull.head_sha) {
            due.entry(commit).or_insert((appeared, red(pull)));
        }
    }
    // ... and the commits merges made on the base branch (CI on `push`); pull requests a
    // push merged together share their merge commit, red when any of them is.
    let mut merges: BTreeMap<usize, (Timestamp, bool)> = BTreeMap::new();
    for pull in repo.pulls.iter().filter(|pull| pull.merged) {
        let Some(sha) = pull.merge_commit.as_ref() else {
            continue;
        };
        let Some(commit) = position(sha) else {
            continue;
        };
        let at = repo.commit(sha).and_then(|c| c.date).unwrap_or(now);
        let entry = merges.entry(commit).or_insert((at, false));
        entry.1 |= red(pull);
    }
    for (commit, claim) in merges {
        due.entry(commit).or_insert(claim);
    }
    let minutes = i64::from(ci.minutes);
    for (commit, (appeared, red)) in due {
        if appeared > now {
            continue;
        }
        let runs = &mut repo.commits[commit].checks;
        for name in &ci.checks {
            let existing = runs
                .iter()
                .rposition(|run| &run.name == name && run.app_slug.as_deref() == Some(&ci.app));
            let index = match existing {
                Some(index) => index,
                None => {
                    runs.push(CheckRun {
                        id: None,
                        name: name.clone(),
                        status: CheckStatus::InProgress,
                        conclusion: None,
                        started_at: Some(appeared),
                        completed_at: None,
                        app_slug: Some(ci.app.clone()),
                        output_summary: None,
                    });
                    runs.len() - 1
                }
            };
            let run = &mut runs[index];
            if run.status == CheckStatus::Completed {
                continue;
            }
            let started = *run.started_at.get_or_insert(appeared);
            let done = started.plus_seconds(minutes * 60);
            if done <= now {
                run.status = CheckStatus::Completed;
                run.conclusion = Some(if red {
                    CheckConclusion::Failure
                } else {
                    CheckConclusion::Success
                });
                run.completed_at = Some(done);
                run.output_summary = Some(format!(
                    "simulated CI: {}",
                    if red {
                        "a changed file matches a `fails` pattern"
                    } else {
                        "green"
                    }
                ));
            } else if run.status == CheckStatus::Queued {
                run.status = CheckStatus::InProgress;
            }
        }
    }
}

/// When the pull request's head became its head: the last activity-log update to it,
/// else the commit's date.
fn appeared_at(repo: &Repo, pull: &Pull) -> Option<Timestamp> {
    pull.pushes
        .iter()
        .rev()
        .find(|push| push.after.as_ref() == Some(&pull.head_sha))
        .and_then(|push| push.at)
        .or_else(|| repo.commit(&pull.head_sha).and_then(|c| c.date))
}

/// Every move of a staging branch in the activity log that left it at a commit: the tip,
/// when, and the gated branch (`mp-queue/main` gates `main`).
fn staging_pushes(repo: &Repo) -> Vec<(CommitSha, Timestamp, String)> {
    let prefix = staging_branch("");
    repo.activity
        .iter()
        .filter_map(|(branch, log)| {
            let base = branch.strip_prefix(&prefix).filter(|b| !b.is_empty())?;
            Some((base, log))
        })
        .flat_map(|(base, log)| {
            log.iter().filter_map(move |update| {
                Some((update.after.clone()?, update.at?, base.to_owned()))
            })
        })
        .collect()
}

/// The head of `branch` at `at`, by its activity log: the head before the first later
/// move, else its head now.
fn head_at(repo: &Repo, branch: &str, at: Timestamp) -> Option<CommitSha> {
    let later = repo
        .activity
        .get(branch)
        .and_then(|log| log.iter().find(|u| u.at.is_some_and(|t| t > at)));
    match later {
        Some(update) => update.before.clone(),
        None => repo.branch_head(branch).cloned(),
    }
}

/// Whether every simulated check has a completed run on the commit.
fn settled(runs: &[CheckRun], ci: &CiSimulation) -> bool {
    ci.checks.iter().all(|name| {
        runs.iter().any(|run| {
            &run.name == name
                && run.app_slug.as_deref() == Some(&ci.app)
                && run.status == CheckStatus::Completed
        })
    })
}
