//! GitHub's merge queue landing its entries (decisions/0078): whenever the clock moves, the
//! front entry of each branch's queue lands once its head has been queued for the
//! simulated CI's `minutes` (the time the queue's own build would take) and every check of
//! `ci:` is green on the head; then the next, and so on. No `ci:`: nothing is required, and
//! an entry lands at the first clock move after it was enqueued.
//!
//! Landing makes one commit on the branch (a merge commit of the base's head and the pull
//! request's head for the `MERGE` method, one parent otherwise), moves the branch with
//! GitHub's activity type `merge_queue_merge` by the merge queue's App, and marks the pull
//! request merged by its enqueuer. Merge groups and `gh-readonly-queue/...` branches are
//! not simulated.

use mp_core::context::{CheckConclusion, CheckStatus, RefUpdateKind};
use mp_core::ids::{Login, Timestamp};

use super::{apply_files, fresh_commit_id, squash_message};
use crate::world::{CiSimulation, Commit, Repo, World};

/// GitHub's activity type of a branch moved by its merge queue.
pub const MERGE_QUEUE_MERGE: &str = "merge_queue_merge";

/// The App whose login the fake's merge queue moves branches as.
pub const MERGE_QUEUE_APP: &str = "github-merge-queue";

/// Drops stale entries, then lands what is due in every repository.
pub(super) fn advance(world: &mut World) {
    let now = world.stamp();
    let ci = world.ci.clone();
    for repo in &mut world.repos {
        repo.prune_queues();
        land(repo, ci.as_ref(), now);
    }
}

/// Drops entries whose pull request moved on or closed, in every repository (any call).
pub(super) fn prune(world: &mut World) {
    for repo in &mut world.repos {
        if !repo.queue_entries.is_empty() {
            repo.prune_queues();
        }
    }
}

fn green(repo: &Repo, ci: Option<&CiSimulation>, head: &mp_core::ids::CommitSha) -> bool {
    let Some(ci) = ci else {
        return true;
    };
    let Some(commit) = repo.commit(head) else {
        return false;
    };
    ci.checks.iter().all(|name| {
        commit.checks.iter().any(|run| {
            &run.name == name
                && run.app_slug.as_deref() == Some(ci.app.as_str())
                && run.status == CheckStatus::Completed
                && run.conclusion == Some(CheckConclusion::Success)
        })
    })
}

fn land(repo: &mut Repo, ci: Option<&CiSimulation>, now: Timestamp) {
    let Ok(app) = Login::for_app(MERGE_QUEUE_APP) else {
        return;
    };
    let build = i64::from(ci.map_or(0, |ci| ci.minutes)) * 60;
    let branches: Vec<String> = repo.queue_entries.keys().cloned().collect();
    for branch in branches {
        while let Some(front) = repo
            .queue_entries
            .get(&branch)
            .and_then(|q| q.first())
            .cloned()
        {
            let due = front.enqueued_at.unix_seconds() + build;
            let ready = if build == 0 {
                now > front.enqueued_at
            } else {
                now.unix_seconds() >= due
            };
            if !ready || !green(repo, ci, &front.head) {
                break;
            }
            let Some(pull) = repo.pull(front.number).cloned() else {
                repo.dequeue(front.number);
                continue;
            };
            let Some(base_head) = repo.branch_head(&branch).cloned() else {
                break;
            };
            let method = repo
                .merge_queues
                .get(&branch)
                .map_or("MERGE", |settings| settings.merge_method.as_str());
            let (message, parents) = if method == "MERGE" {
                (
                    format!(
                        "Merge pull request #{} from {}\n\n{}",
                        pull.number, pull.head_ref, pull.title
                    ),
                    vec![base_head, pull.head_sha.clone()],
                )
            } else {
                (squash_message(repo, &pull, None), vec![base_head])
            };
            let (id, sha) =
                fresh_commit_id(repo, &format!("merge queue landing of #{}", pull.number));
            repo.commits.push(Commit {
                check_workflows: Default::default(),
                id,
                sha: sha.clone(),
                message,
                parents,
                author: Some(pull.author.clone()),
                committer: Some(app.clone()),
                date: Some(now),
                checks: Vec::new(),
            });
            repo.dequeue(front.number);
            repo.move_branch(
                &branch,
                Some(sha.clone()),
                RefUpdateKind::Other(MERGE_QUEUE_MERGE.to_owned()),
                app.clone(),
                now,
            );
            apply_files(repo, &branch, &pull.files);
            if let Some(pull) = repo.pull_mut(front.number) {
                pull.merged = true;
                pull.state = mp_core::context::PrState::Closed;
                pull.merged_by = Some(front.enqueuer.clone());
                pull.merge_commit = Some(sha);
                pull.merged_at = Some(now);
            }
        }
    }
}
