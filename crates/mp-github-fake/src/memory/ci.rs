//! Simulated CI (the world's `ci:`): brings the named check runs of every open pull
//! request's head, and of every merge commit a pull request made, up to the world's clock.
//!
//! A head's runs start when the head appeared — the activity-log push that made it the
//! head, else the commit's date, else now — and complete `minutes` later, `success` unless
//! a changed file of the pull request matches a `fails` pattern. A run that the world
//! already lists for the check and App is kept and only completed when it is due; a
//! completed run is never touched, so a run somebody completed or re-ran stands.

use globset::{Glob, GlobSet, GlobSetBuilder};
use mp_core::context::{CheckConclusion, CheckRun, CheckStatus, PrState};
use mp_core::ids::Timestamp;

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

fn advance_repo(repo: &mut Repo, ci: &CiSimulation, fails: &GlobSet, now: Timestamp) {
    let red = |pull: &Pull| {
        pull.files
            .iter()
            .any(|file| fails.is_match(&file.change.path))
    };
    let position = |sha: &mp_core::ids::CommitSha| repo.commits.iter().position(|c| &c.sha == sha);
    // Open pull requests' heads (CI on `pull_request`) ...
    let heads = repo
        .pulls
        .iter()
        .filter(|pull| pull.state == PrState::Open && pull.head_repo.is_none())
        .filter_map(|pull| {
            let appeared = appeared_at(repo, pull).unwrap_or(now);
            Some((position(&pull.head_sha)?, appeared, red(pull)))
        });
    // ... and the commits merges made on the base branch (CI on `push`).
    let merges = repo
        .pulls
        .iter()
        .filter(|pull| pull.merged)
        .filter_map(|pull| {
            let sha = pull.merge_commit.as_ref()?;
            let at = repo.commit(sha).and_then(|c| c.date).unwrap_or(now);
            Some((position(sha)?, at, red(pull)))
        });
    let due: Vec<(usize, Timestamp, bool)> = heads.chain(merges).collect();
    let minutes = i64::from(ci.minutes);
    for (commit, appeared, red) in due {
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
