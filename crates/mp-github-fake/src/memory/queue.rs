//! GitHub's merge queue testing merge groups and landing them (decisions/0078, 0083).
//! Whenever the clock moves, in every repository and for each branch's queue:
//!
//! 1. Entries whose pull request closed or whose head moved leave the queue
//!    ([`Repo::prune_queues`]).
//! 2. **Groups are made.** The first `max_entries_to_build` entries (GitHub's default of
//!    5 when the setting is 0) each get a merge group: a commit by the queue's App made on
//!    the head of the group ahead (the branch's head for the first) — for `MERGE` a merge
//!    commit of it and the entry's head, "Merge pull request #N from `<head branch>`"; for
//!    `SQUASH` and `REBASE` one parent and the squash message — on a new branch
//!    `gh-readonly-queue/<branch>/pr-<N>-<base sha>`, created by the queue's App
//!    (`branch_creation`: what GitHub records for it is not published). Groups made on a
//!    head the branch has left are made again. Each creation is logged as GitHub's
//!    `checks_requested`; an entry with a group shows as `AWAITING_CHECKS`.
//! 3. **Groups are judged** against the required checks (the queue's `required_checks`,
//!    else `ci:`'s checks by its App; nothing without either), each completed on the
//!    group's head. The longest run of passing groups from the front (at most
//!    `max_entries_to_merge`, 5 when 0) lands at once (`ALLGREEN`: every entry's own
//!    group must pass): the branch fast-forwards to the last one's head (activity type
//!    `merge_queue_merge` by the queue's App), each entry's pull request is merged by its
//!    enqueuer with its own group's commit as merge commit, and each group's branch is
//!    deleted (`destroyed`, `merged`). Then a front group with a required check
//!    completed with anything but `success`, or not completed within
//!    `check_response_timeout_minutes` of the group's creation, takes its entry out of
//!    the queue: its group ends `dequeued`, those behind `invalidated`, and they are made
//!    again on the new chain. A failing group behind a front group still running waits:
//!    its failure may be the front's.
//!
//! With `HEADGREEN` ("only merge non-failing pull requests" off), a passing group lands
//! with every group ahead of it within `max_entries_to_merge`, failed ones included, and
//! a failed front group leaves only when no group behind it within that limit may still
//! pass.
//!
//! Fewer passing groups than `min_entries_to_merge` wait for more, at most
//! `min_entries_to_merge_wait_minutes` from the time the front group passed.
//!
//! Steps 2 and 3 repeat until nothing changes, so a queue without required checks (and
//! the default minimum of 1) lands every entry at the first clock move after it was
//! enqueued.

use mp_core::context::{CheckConclusion, CheckStatus, RefUpdateKind};
use mp_core::ids::{CommitSha, Login, PrNumber, Timestamp};

use super::{apply_files, fresh_commit_id, squash_message};
use crate::world::{
    CiSimulation, Commit, DEFAULT_ENTRIES_TO_BUILD, DEFAULT_ENTRIES_TO_MERGE, GroupEnd, MergeGroup,
    MergeGroupEvent, MergeQueueSettings, Repo, RequiredCheck, World, merge_group_branch,
};
pub use crate::world::{MERGE_QUEUE_APP, MERGE_QUEUE_MERGE};

#[cfg(test)]
mod tests;

/// Drops stale entries, then makes, judges and lands merge groups in every repository.
pub(super) fn advance(world: &mut World) {
    let now = world.stamp();
    let ci = world.ci.clone();
    let Ok(app) = Login::for_app(MERGE_QUEUE_APP) else {
        return;
    };
    for index in 0..world.repos.len() {
        let repo = &mut world.repos[index];
        repo.prune_queues(now);
        if repo.queue_entries.is_empty() && repo.merge_groups.is_empty() {
            continue;
        }
        // Each pass lands or removes at least one entry, or changes nothing; a queue holds
        // finitely many entries.
        loop {
            let repo = &mut world.repos[index];
            let made = make_groups(repo, &app, now);
            if made {
                // The simulated CI starts (and, with `minutes: 0`, ends) on the new heads.
                super::ci::advance_repo_of(repo, ci.as_ref(), now);
            }
            if !judge(repo, ci.as_ref(), &app, now) && !made {
                break;
            }
        }
        world.repos[index].sync_entry_states();
    }
}

/// Drops entries whose pull request moved on or closed, in every repository (any call).
pub(super) fn prune(world: &mut World) {
    let now = world.stamp();
    for repo in &mut world.repos {
        if !repo.queue_entries.is_empty() {
            repo.prune_queues(now);
        }
    }
}

/// Where a group's required checks stand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// Every required check completed `success`, the last at this time (the group's
    /// creation when nothing is required).
    Passed(Timestamp),
    /// Some are still to report, within the timeout.
    Waiting,
    /// One completed otherwise, or did not complete in time.
    Failed,
}

fn verdict(
    repo: &Repo,
    group: &MergeGroup,
    required: &[RequiredCheck],
    timeout_minutes: u32,
    now: Timestamp,
) -> Verdict {
    let runs = repo
        .commit(&group.head)
        .map(|commit| commit.checks.as_slice())
        .unwrap_or_default();
    let mut waiting = false;
    let mut passed_at = group.created_at;
    for check in required {
        // The last run of the check by its App counts (a re-run replaces the earlier).
        let run = runs
            .iter()
            .rev()
            .find(|run| run.name == check.name && run.app_slug.as_deref() == Some(&check.app));
        match run {
            Some(run) if run.status == CheckStatus::Completed => {
                if run.conclusion != Some(CheckConclusion::Success) {
                    return Verdict::Failed;
                }
                passed_at = passed_at.max(run.completed_at.unwrap_or(passed_at));
            }
            _ => waiting = true,
        }
    }
    if !waiting {
        return Verdict::Passed(passed_at);
    }
    let deadline = group
        .created_at
        .plus_seconds(i64::from(timeout_minutes) * 60);
    if now >= deadline {
        Verdict::Failed
    } else {
        Verdict::Waiting
    }
}

fn settings_of(repo: &Repo, branch: &str) -> MergeQueueSettings {
    repo.merge_queues.get(branch).cloned().unwrap_or_default()
}

fn or_default(value: u32, default: u32) -> usize {
    usize::try_from(if value == 0 { default } else { value }).unwrap_or(usize::MAX)
}

/// Makes the missing merge groups of every queue; whether it made one.
fn make_groups(repo: &mut Repo, app: &Login, now: Timestamp) -> bool {
    let branches: std::collections::BTreeSet<String> = repo
        .queue_entries
        .keys()
        .chain(repo.merge_groups.keys())
        .cloned()
        .collect();
    let mut made = false;
    for branch in branches {
        // Groups made on a head the branch has left are made again (the chain broke).
        let head = repo.branch_head(&branch).cloned();
        if repo
            .merge_groups_of(&branch)
            .first()
            .is_some_and(|front| Some(&front.base) != head.as_ref())
        {
            repo.destroy_groups(&branch, 0, GroupEnd::Invalidated, now);
        }
        let Some(head) = head else {
            continue;
        };
        if !repo.has_merge_queue(&branch) {
            continue;
        }
        let settings = settings_of(repo, &branch);
        let build = or_default(settings.max_entries_to_build, DEFAULT_ENTRIES_TO_BUILD);
        loop {
            let groups = repo.merge_groups_of(&branch);
            let entries = repo
                .queue_entries
                .get(&branch)
                .map_or(&[][..], Vec::as_slice);
            let index = groups.len();
            if index >= build.min(entries.len()) {
                break;
            }
            let base = groups.last().map_or(head.clone(), |g| g.head.clone());
            let mut brought: Vec<PrNumber> = entries[..index].iter().map(|e| e.number).collect();
            let entry = entries[index].clone();
            brought.push(entry.number);
            let Some(group) = make_group(
                repo,
                &branch,
                &settings,
                &entry.head,
                entry.number,
                base,
                brought,
                app,
                now,
            ) else {
                break;
            };
            repo.merge_group_log.push(MergeGroupEvent {
                base_ref: branch.clone(),
                group: group.clone(),
                destroyed: None,
                at: now,
            });
            repo.merge_groups
                .entry(branch.clone())
                .or_default()
                .push(group);
            made = true;
        }
    }
    made
}

/// Makes one group's commit and branch.
#[allow(clippy::too_many_arguments)]
fn make_group(
    repo: &mut Repo,
    branch: &str,
    settings: &MergeQueueSettings,
    entry_head: &CommitSha,
    number: PrNumber,
    base: CommitSha,
    entries: Vec<PrNumber>,
    app: &Login,
    now: Timestamp,
) -> Option<MergeGroup> {
    let pull = repo.pull(number)?.clone();
    let (message, parents) = if settings.merge_method == "MERGE" {
        (
            format!(
                "Merge pull request #{} from {}\n\n{}",
                pull.number, pull.head_ref, pull.title
            ),
            vec![base.clone(), entry_head.clone()],
        )
    } else {
        (squash_message(repo, &pull, None), vec![base.clone()])
    };
    let head_ref = merge_group_branch(branch, number, &base);
    let (id, sha) = fresh_commit_id(repo, &format!("merge group {head_ref}"));
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
    repo.move_branch(
        &head_ref,
        Some(sha.clone()),
        RefUpdateKind::BranchCreation,
        app.clone(),
        now,
    );
    Some(MergeGroup {
        number,
        head_ref,
        base,
        head: sha,
        entries,
        created_at: now,
    })
}

/// Lands the passing groups at the front of every queue, then removes the entry of a
/// failing front group; whether anything changed.
fn judge(repo: &mut Repo, ci: Option<&CiSimulation>, app: &Login, now: Timestamp) -> bool {
    let branches: Vec<String> = repo.merge_groups.keys().cloned().collect();
    let mut changed = false;
    for branch in branches {
        let settings = settings_of(repo, &branch);
        let required = repo.group_required_checks(&branch, ci);
        let verdicts: Vec<Verdict> = repo
            .merge_groups_of(&branch)
            .iter()
            .map(|group| {
                verdict(
                    repo,
                    group,
                    &required,
                    settings.check_response_timeout_minutes,
                    now,
                )
            })
            .collect();
        let limit = or_default(settings.max_entries_to_merge, DEFAULT_ENTRIES_TO_MERGE);
        let head_green = settings.grouping_strategy == "HEADGREEN";
        let window = &verdicts[..limit.min(verdicts.len())];
        let passed = if head_green {
            // A passing group vouches for every entry it brings, failed ones included.
            window
                .iter()
                .rposition(|v| matches!(v, Verdict::Passed(_)))
                .map_or(0, |last| last + 1)
        } else {
            window
                .iter()
                .take_while(|v| matches!(v, Verdict::Passed(_)))
                .count()
        };
        // Fewer than `min_entries_to_merge` wait for more, at most
        // `min_entries_to_merge_wait_minutes` from the time the front group passed.
        let front_passed = verdicts.first().and_then(|v| match v {
            Verdict::Passed(at) => Some(*at),
            _ => None,
        });
        let minimum = usize::try_from(settings.min_entries_to_merge.max(1)).unwrap_or(1);
        let waited = front_passed.is_some_and(|at| {
            now >= at.plus_seconds(i64::from(settings.min_entries_to_merge_wait_minutes) * 60)
        });
        let passed = if passed >= minimum || waited {
            passed
        } else {
            0
        };
        if passed > 0 {
            land(repo, &branch, passed, app, now);
            changed = true;
        }
        // With HEADGREEN a failed front waits while a group behind it may still pass.
        let behind =
            &verdicts[(passed + 1).min(verdicts.len())..(passed + limit).min(verdicts.len())];
        let hope = head_green && behind.iter().any(|v| *v != Verdict::Failed);
        if verdicts.get(passed) == Some(&Verdict::Failed) && passed < limit && !hope {
            let Some(number) = repo
                .merge_groups_of(&branch)
                .first()
                .map(|group| group.number)
            else {
                continue;
            };
            let queued_at = repo.queue_entry_of(number).map(|entry| entry.head);
            repo.dequeue(number, now);
            // GitHub's record of the removal, which mp reads before enqueueing again
            // (decisions/0085).
            if let Some(head) = queued_at {
                repo.record_queue_removal(
                    number,
                    head,
                    app.clone(),
                    "the merge group's required checks failed or did not report in time",
                    now,
                );
            }
            changed = true;
        }
    }
    changed
}

/// Lands the first `count` groups of `branch` at once: the branch fast-forwards to the last
/// one's head, each entry's pull request is merged with its own group's commit, each group
/// ends `merged`.
fn land(repo: &mut Repo, branch: &str, count: usize, app: &Login, now: Timestamp) {
    let Some(groups) = repo.merge_groups.get_mut(branch) else {
        return;
    };
    let landed: Vec<MergeGroup> = groups.drain(..count).collect();
    if groups.is_empty() {
        repo.merge_groups.remove(branch);
    }
    let Some(last) = landed.last() else {
        return;
    };
    let entries: Vec<_> = repo
        .queue_entries
        .get_mut(branch)
        .map(|queue| queue.drain(..count.min(queue.len())).collect())
        .unwrap_or_default();
    repo.queue_entries.retain(|_, queue| !queue.is_empty());
    repo.move_branch(
        branch,
        Some(last.head.clone()),
        RefUpdateKind::Other(MERGE_QUEUE_MERGE.to_owned()),
        app.clone(),
        now,
    );
    for (group, entry) in landed.into_iter().zip(entries) {
        if let Some(files) = repo.pull(group.number).map(|pull| pull.files.clone()) {
            apply_files(repo, branch, &files);
        }
        if let Some(pull) = repo.pull_mut(group.number) {
            pull.merged = true;
            pull.state = mp_core::context::PrState::Closed;
            pull.merged_by = Some(entry.enqueuer.clone());
            pull.merge_commit = Some(group.head.clone());
            pull.merged_at = Some(now);
        }
        repo.end_group(branch, group, GroupEnd::Merged, now);
    }
}
