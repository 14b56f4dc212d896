//! `github-queue` mode: mp's verdict as a required check of GitHub's merge queue
//! (decisions/0084). After a repository's pull requests are judged, mp lists the merge
//! groups GitHub's queue is testing on the gated branch and publishes its check
//! ([`GATE_CHECK`]) on each group's head it has not judged yet: `success` only when the gate
//! passes every pull request the group holds (the entries ahead of the group's own, and
//! its own), each at the head the owner's approval binds.

use mp_core::config::RepoMergeMode;
use mp_core::context::CheckConclusion;
use mp_core::github_queue::{
    GATE_CHECK, GitHubQueueOutcome, GroupMember, judge_group, merge_group_pull,
};
use mp_core::ids::{PrNumber, RepoName};
use mp_core::port::{GitHubError, MergeGroupRef, NewCheckRun, QueueEntry};

use super::Runner;
use crate::MergeMode;
use crate::report::PrAction;

impl Runner<'_> {
    /// Publishes mp's check on every merge group of `repo`'s gated branch that does not
    /// carry it yet, when the repository is in `github-queue` mode and mp writes. A group
    /// whose members were not all judged in this pass, or that holds changes of an entry
    /// mp removed from the queue in this pass (GitHub rebuilds it), is left for a later
    /// pass: the queue waits for a required check that has not reported.
    pub(crate) async fn judge_merge_groups(&mut self, repo: &RepoName) {
        if self.setup.options().merge_mode == MergeMode::Observe
            || self.setup.gate_policy(repo).merge_mode != RepoMergeMode::GitHubQueue
        {
            return;
        }
        let branch = self.setup.options.gated_branch(repo).to_owned();
        let groups = match self.github.merge_groups(repo, &branch).await {
            Ok(groups) => groups,
            Err(error) => {
                self.group_warning(repo, "cannot list the merge groups", &error);
                return;
            }
        };
        if groups.is_empty() {
            return;
        }
        // Read again: mp's own enqueues and dequeues of this pass changed the queue.
        let entries = match self.github.merge_queue(repo, &branch).await {
            Ok(Some(entries)) => entries,
            Ok(None) => return,
            Err(error) => {
                self.group_warning(repo, "cannot read GitHub's merge queue", &error);
                return;
            }
        };
        for group in groups {
            if let Err(error) = self.judge_group(repo, &branch, &group, &entries).await {
                self.group_warning(
                    repo,
                    &format!("cannot publish '{GATE_CHECK}' on {}", group.branch),
                    &error,
                );
            }
        }
    }

    async fn judge_group(
        &mut self,
        repo: &RepoName,
        branch: &str,
        group: &MergeGroupRef,
        entries: &[QueueEntry],
    ) -> Result<(), GitHubError> {
        let Some(number) = merge_group_pull(&group.branch, branch) else {
            return Ok(());
        };
        // A group of a pull request no longer queued is being destroyed.
        let Some(own) = entries.iter().find(|e| e.number == number) else {
            return Ok(());
        };
        if self.left_ahead_of(repo, number) {
            return Ok(());
        }
        let runs = self.github.check_runs(repo, &group.head).await?;
        let bot = self.setup.bot.as_str();
        let slug = bot.strip_suffix("[bot]").unwrap_or(bot);
        if runs
            .iter()
            .any(|run| run.name == GATE_CHECK && run.app_slug.as_deref() == Some(slug))
        {
            return Ok(());
        }
        let mut ahead: Vec<&QueueEntry> = entries
            .iter()
            .filter(|e| e.position <= own.position)
            .collect();
        ahead.sort_by_key(|e| e.position);
        let members: Vec<GroupMember> =
            ahead.iter().map(|entry| self.member(repo, entry)).collect();
        let Some(verdict) = judge_group(&members) else {
            return Ok(());
        };
        let run = NewCheckRun {
            name: GATE_CHECK.to_owned(),
            head_sha: group.head.clone(),
            conclusion: if verdict.passes {
                CheckConclusion::Success
            } else {
                CheckConclusion::Failure
            },
            title: verdict.title.clone(),
            summary: verdict.summary.clone(),
        };
        self.github.create_check_run(repo, &run).await?;
        let step = GitHubQueueOutcome::GroupChecked {
            group: group.branch.clone(),
            head: group.head.clone(),
            passes: verdict.passes,
            title: verdict.title,
        };
        if verdict.passes {
            self.report.metrics.group_checks_passed += 1;
        } else {
            self.report.metrics.group_checks_failed += 1;
        }
        let reference = format!("{repo}#{number}");
        if let Some(outcome) = self
            .report
            .outcomes
            .iter_mut()
            .rev()
            .find(|o| o.pr == reference)
        {
            outcome.github_queue.push(step);
        } else {
            self.report.warnings.push(format!("{reference}: {step}"));
        }
        Ok(())
    }

    /// The gate's verdict, in this pass, on the pull request of a queue entry.
    fn member(&self, repo: &RepoName, entry: &QueueEntry) -> GroupMember {
        let reference = format!("{repo}#{}", entry.number);
        let Some(outcome) = self
            .report
            .outcomes
            .iter()
            .rev()
            .find(|o| o.pr == reference)
        else {
            return GroupMember::Unjudged {
                number: entry.number,
            };
        };
        let passed = matches!(outcome.action, PrAction::Enqueued | PrAction::Queued);
        if passed && outcome.head_sha.as_ref() == Some(&entry.head) {
            return GroupMember::Passes {
                number: entry.number,
                head: entry.head.clone(),
            };
        }
        if passed {
            return GroupMember::Refused {
                number: entry.number,
                why: format!(
                    "the entry's head {} is not the head {} the gate judged",
                    entry.head.short(),
                    outcome
                        .head_sha
                        .as_ref()
                        .map_or_else(|| "unknown".to_owned(), |h| h.short().to_owned())
                ),
            };
        }
        // Skipped before the gate ran, or after it passed: not judged. Skipped after it
        // refused (its dequeue failed, say): refused.
        let blocking = outcome
            .gate
            .as_ref()
            .filter(|gate| !gate.passed())
            .map(mp_core::gate::GateReport::blocking_summary);
        match (&outcome.action, blocking) {
            (PrAction::Skipped, None) => GroupMember::Unjudged {
                number: entry.number,
            },
            (_, Some(why)) => GroupMember::Refused {
                number: entry.number,
                why,
            },
            _ => GroupMember::Refused {
                number: entry.number,
                why: format!("{}: {}", outcome.action, outcome.detail),
            },
        }
    }

    /// Whether mp removed, in this pass, an entry that was ahead of `number` in the queue:
    /// the group of `number` still holds its changes until GitHub rebuilds it.
    fn left_ahead_of(&self, repo: &RepoName, number: PrNumber) -> bool {
        let Some(left) = self.github_dequeued.get(repo) else {
            return false;
        };
        let Some(own) = self
            .github_queue_first_read
            .get(repo)
            .and_then(|entries| entries.iter().find(|e| e.number == number))
        else {
            // Not in the queue mp first read: enqueued in this pass, behind everything.
            return !left.is_empty();
        };
        left.iter().any(|(_, position)| *position < own.position)
    }

    fn group_warning(&mut self, repo: &RepoName, what: &str, error: &GitHubError) {
        if let Some(refusal) = crate::permission_refusal(error) {
            self.report.operator_error(format!("{repo}: {refusal}"));
        }
        self.report
            .warnings
            .push(format!("{repo}: {what}: {error}"));
    }
}
