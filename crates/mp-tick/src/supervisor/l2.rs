//! The L2 layer: post-merge re-validation of the new commits on `main`, the 24-hour stall
//! rule and the incidents with parent-aware recovery instructions (bot.md §12).

use mp_core::branch::IncidentLabel;
use mp_core::branch::l2::{revalidation_incident_body, stalled_incident_body};
use mp_core::branch::{
    L2Verdict, NoCiPolicy, RecoveryInstructions, StallStatus, l2_stall, revalidate,
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
        for Landed { update, commits } in landed {
            for commit in commits {
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
                self.report.metrics.l2_commits += 1;
                let verdict = within_report_grace(
                    revalidate(&runs, &required, Some(&publisher), no_ci),
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
    let only_missing = failures
        .iter()
        .all(|f| matches!(f, mp_core::branch::l2::L2Finding::Missing { .. }));
    let young = pushed_at.is_some_and(|at| now.seconds_since(at) < i64::from(timeout_minutes) * 60);
    if only_missing && young {
        L2Verdict::Infra {
            reasons: failures.clone(),
        }
    } else {
        verdict
    }
}
