//! The L2 layer: post-merge re-validation of the new commits on `main`, the 24-hour stall
//! rule and the incidents with parent-aware recovery instructions (bot.md §12).

use mp_core::branch::IncidentLabel;
use mp_core::branch::l2::{revalidation_incident_body, stalled_incident_body};
use mp_core::branch::{
    L2Verdict, NoCiPolicy, RecoveryInstructions, StallStatus, WorkflowBinding, l2_stall,
    revalidate_bound,
};
use mp_core::context::CommitContext;
use mp_core::ids::Timestamp;
use mp_core::state::Layer;

use super::incidents::{self, Surfaced};
use super::{Landed, Scan, SupervisorStop};

impl Scan<'_> {
    /// Re-validates the commits of each update, oldest first; the layer stops at the first
    /// commit that is not settled, and the watermark moves past an update once every commit
    /// it brought is settled.
    pub(super) async fn l2(&mut self, landed: &[Landed]) -> Result<(), SupervisorStop> {
        let repo = self.repo;
        let required = self.config.effective_required_checks(repo).to_vec();
        let publisher = self
            .config
            .effective_expected_check_publisher(repo)
            .to_owned();
        let no_ci = NoCiPolicy::from_allow_no_ci(self.config.env().allow_no_ci());
        let workflows = self.config.effective_required_check_workflows(repo).clone();
        let bound = required.iter().any(|name| workflows.contains_key(name));
        // In queue mode mp's own update of the branch is a fast-forward to the staging
        // commit CI tested: that commit is what L2 re-validates, not the pull requests'
        // commits and merge commits it brings, which no CI run was asked to test on their
        // own (decisions/0056).
        let queue_mode = self.config.projects().is_queue_mode(repo);
        let bot = self.run.bot().clone();
        for Landed { update, commits } in landed {
            let tested_tip_only = queue_mode && update.actor.as_ref() == Some(&bot);
            for commit in commits {
                if tested_tip_only && update.after.as_ref() != Some(&commit.sha) {
                    continue;
                }
                let runs = match self.github.check_runs(repo, &commit.sha).await {
                    Ok(runs) => runs,
                    Err(error) => {
                        self.stop_or_warn(
                            &error,
                            &format!(
                                "cannot read the check runs of {}; L2 resumes there next tick",
                                commit.sha.short()
                            ),
                        )?;
                        return Ok(());
                    }
                };
                // GitHub's record of which workflow published each run, read only when a
                // required check is bound to a workflow file (decisions/0047).
                let jobs = if bound {
                    match self.github.workflow_jobs(repo, &commit.sha).await {
                        Ok(jobs) => jobs,
                        Err(error) => {
                            self.stop_or_warn(
                                &error,
                                &format!(
                                    "cannot read the workflow runs of {}; L2 resumes there next tick",
                                    commit.sha.short()
                                ),
                            )?;
                            return Ok(());
                        }
                    }
                } else {
                    Vec::new()
                };
                let binding = bound.then_some(WorkflowBinding {
                    workflows: &workflows,
                    jobs: &jobs,
                    repo,
                    sha: &commit.sha,
                });
                self.report.metrics.l2_commits += 1;
                let verdict = within_report_grace(
                    revalidate_bound(&runs, &required, Some(&publisher), no_ci, binding.as_ref()),
                    update.at,
                    self.config.env().check_report_timeout_minutes(),
                    self.now,
                );
                let settled = match &verdict {
                    L2Verdict::Passed => true,
                    L2Verdict::Real { .. } => self.real_failure(commit, &verdict).await?,
                    L2Verdict::Infra { .. } => {
                        let first_seen = self.state.track_unsettled(repo, &commit.sha, self.now);
                        match l2_stall(first_seen, self.now) {
                            status @ StallStatus::Waiting { .. } => {
                                self.event(format!(
                                    "l2 {}: {verdict}; {status}",
                                    commit.sha.short()
                                ));
                                false
                            }
                            StallStatus::Stalled { .. } => self.stalled(commit, first_seen).await?,
                        }
                    }
                };
                if !settled {
                    return Ok(());
                }
                self.state.settle(repo, &commit.sha);
            }
            if let Some(after) = &update.after {
                self.state.set(repo, Layer::L2, after.clone());
            }
        }
        Ok(())
    }

    /// A real failure: the incident (and the automatic revert when enabled). Returns
    /// whether the commit is settled (false while the incident is deferred).
    async fn real_failure(
        &mut self,
        commit: &CommitContext,
        verdict: &L2Verdict,
    ) -> Result<bool, SupervisorStop> {
        let recovery = RecoveryInstructions::for_commit(&commit.sha, Some(&commit.parents));
        let text = revalidation_incident_body(self.repo, &commit.sha, verdict, &recovery);
        let incident = incidents::single(IncidentLabel::PostMergeRevalidation, &commit.sha, &text);
        let issue = match self.surface(&incident).await? {
            Surfaced::Deferred => return Ok(false),
            Surfaced::Opened(issue) => {
                self.report.metrics.l2_incidents += 1;
                issue
            }
            Surfaced::Existing(issue) => issue,
        };
        if self.config.env().auto_revert_pr() {
            self.auto_revert(commit, &incident, &issue).await?;
        }
        Ok(true)
    }

    /// Unsettled for 24 hours or more: one `decision:l2-stalled` incident, then the commit
    /// is force-settled. Returns false while the incident is deferred.
    async fn stalled(
        &mut self,
        commit: &CommitContext,
        first_seen: Timestamp,
    ) -> Result<bool, SupervisorStop> {
        let recovery = RecoveryInstructions::for_commit(&commit.sha, Some(&commit.parents));
        let text = stalled_incident_body(self.repo, &commit.sha, first_seen, &recovery);
        let incident = incidents::single(IncidentLabel::L2Stalled, &commit.sha, &text);
        match self.surface(&incident).await? {
            Surfaced::Deferred => Ok(false),
            Surfaced::Opened(_) => {
                self.report.metrics.l2_incidents += 1;
                Ok(true)
            }
            Surfaced::Existing(_) => Ok(true),
        }
    }
}

/// A required check that has not reported yet on a commit pushed less than
/// `check_report_timeout_minutes` ago is waited for, not a failure: CI starts after the
/// push, so a commit merged a moment ago has no runs yet (decisions/0006). The push time is
/// GitHub's (the activity log), never the commit's date, which whoever made it wrote.
/// After the timeout the missing check is a real failure, as bot.md §12 says.
fn within_report_grace(
    verdict: L2Verdict,
    pushed_at: Option<Timestamp>,
    timeout_minutes: u32,
    now: Timestamp,
) -> L2Verdict {
    let L2Verdict::Real { failures } = &verdict else {
        return verdict;
    };
    // A bound check whose workflow has not reported yet is missing too, whatever else
    // published a run of that name (decisions/0047).
    let only_missing = failures
        .iter()
        .all(mp_core::branch::l2::L2Finding::is_not_yet_reported);
    let young = pushed_at.is_some_and(|at| now.seconds_since(at) < i64::from(timeout_minutes) * 60);
    if only_missing && young {
        L2Verdict::Infra {
            reasons: failures.clone(),
        }
    } else {
        verdict
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mp_core::branch::l2::L2Finding;

    fn ts(text: &str) -> Timestamp {
        Timestamp::parse(text).expect("valid timestamp")
    }

    #[test]
    fn a_young_commit_waits_for_its_bound_workflow_as_for_a_missing_check() {
        let not_from_workflow = L2Verdict::Real {
            failures: vec![L2Finding::NotFromWorkflow {
                name: "test".to_owned(),
                workflow: ".github/workflows/ci.yml".to_owned(),
                seen: vec!["<no workflow job>".to_owned()],
            }],
        };
        let pushed = Some(ts("2026-03-10T09:00:00Z"));
        let young = within_report_grace(
            not_from_workflow.clone(),
            pushed,
            60,
            ts("2026-03-10T09:30:00Z"),
        );
        assert_eq!(young.code(), "l2_unsettled");
        let old = within_report_grace(not_from_workflow, pushed, 60, ts("2026-03-10T10:00:00Z"));
        assert_eq!(old.code(), "l2_real_failure");
        let failed = L2Verdict::Real {
            failures: vec![L2Finding::Failed {
                name: "test".to_owned(),
                conclusion: None,
            }],
        };
        let young_failure = within_report_grace(failed, pushed, 60, ts("2026-03-10T09:30:00Z"));
        assert_eq!(young_failure.code(), "l2_real_failure");
    }
}
