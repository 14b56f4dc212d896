//! The L5 layer: break-glass audit, unauthorized push, hallucination guard and the user
//! branch hooks over the new commits on `main`, with one rollup issue per label and scan
//! (bot.md §11.2-§11.5).

use mp_core::branch::break_glass::break_glass_tag;
use mp_core::branch::{
    BreakGlassPolicy, BreakGlassVerdict, CommitIncident, PathLookup, QueueLanding, audit_adr,
    audit_break_glass, candidate_paths, check_push, check_queue_push, hallucination_verdict,
    is_queue_landing, roll_up,
};
use mp_core::context::{CommitContext, RefUpdate};
use mp_core::ids::{CommitSha, Timestamp};
use mp_core::port::GitHubError;
use mp_core::skill::builtin::BuiltIn;
use mp_core::state::Layer;

use super::super::skills::{failure_warning, hook_incidents};
use super::incidents::Surfaced;
use super::{DECISIONS_DIR, Landed, Scan, SupervisorStop};

/// Whether `path` is an ADR directly under [`DECISIONS_DIR`].
fn is_adr(path: &str) -> bool {
    path.strip_prefix(DECISIONS_DIR)
        .is_some_and(|name| !name.contains('/') && name.ends_with(".md"))
}

impl Scan<'_> {
    pub(super) async fn l5(&mut self, landed: &[Landed]) -> Result<(), SupervisorStop> {
        let mut found: Vec<CommitIncident> = Vec::new();
        // Break-glass commits whose incident settles their pending record once filed.
        let mut pending_done: Vec<CommitSha> = Vec::new();

        for (sha, pushed_at) in self.state.pending_break_glass(self.repo) {
            let commit = match self.github.commit(self.repo, &sha).await {
                Ok(commit) => commit,
                Err(GitHubError::NotFound { .. }) => {
                    self.warn(format!(
                        "break-glass commit {} is gone; no longer waiting for its ADR",
                        sha.short()
                    ));
                    self.state.clear_break_glass(self.repo, &sha);
                    continue;
                }
                Err(error) => {
                    self.stop_or_warn(
                        &error,
                        &format!("cannot re-read break-glass commit {}", sha.short()),
                    )?;
                    continue;
                }
            };
            let Some(tag) = break_glass_tag(&commit.subject).map(str::to_owned) else {
                self.state.clear_break_glass(self.repo, &sha);
                continue;
            };
            match self.break_glass_adr(&sha, &tag, Some(pushed_at)).await? {
                None | Some(BreakGlassVerdict::Pending { .. }) => {}
                Some(verdict) => match break_glass_incident(&verdict) {
                    Some(incident) => {
                        found.push(incident);
                        pending_done.push(sha);
                    }
                    None => self.state.clear_break_glass(self.repo, &sha),
                },
            }
        }

        let mut last: Option<CommitSha> = None;
        'updates: for Landed { update, commits } in landed {
            // GitHub's merge queue landed it: which pull requests, approved at which heads.
            let queue = if is_queue_landing(update) {
                let Some(queue) = self.queue_landing(update, commits).await? else {
                    // GitHub could not be read: this update and the rest wait.
                    break 'updates;
                };
                self.open_queue_audits().await?;
                Some(queue)
            } else {
                None
            };
            for commit in commits {
                if break_glass_tag(&commit.subject).is_some() {
                    let Some(verdict) = self.break_glass(commit, update).await? else {
                        // The ADRs cannot be read: this update and the rest wait.
                        break 'updates;
                    };
                    if let BreakGlassVerdict::Pending { deadline, .. } = &verdict {
                        self.event(format!(
                            "break-glass {}: no ADR yet; audited again until {deadline}",
                            commit.sha.short()
                        ));
                        if let Some(pushed_at) = update.at {
                            self.state
                                .track_break_glass(self.repo, &commit.sha, pushed_at);
                        }
                    }
                    found.extend(break_glass_incident(&verdict));
                }
                found.extend(self.unauthorized_push(commit, update, queue.as_ref()));
                if self
                    .config
                    .skills()
                    .built_ins()
                    .contains(BuiltIn::HallucinationGuard)
                {
                    found.extend(self.hallucination(commit).await?);
                }
                found.extend(self.user_hooks(commit));
                self.report.metrics.l5_commits += 1;
            }
            if let Some(after) = &update.after {
                last = Some(after.clone());
            }
        }

        let mut held = false;
        for incident in roll_up(self.repo, &found) {
            match self.surface(&incident).await? {
                Surfaced::Deferred => {
                    held = true;
                    continue;
                }
                Surfaced::Opened(_) => self.report.metrics.l5_incidents += 1,
                Surfaced::Existing(_) => {}
            }
            for sha in incident
                .shas
                .iter()
                .filter(|sha| pending_done.contains(sha))
            {
                self.state.clear_break_glass(self.repo, sha);
            }
        }
        if !held && let Some(sha) = last {
            self.state.set(self.repo, Layer::L5, sha);
        }
        Ok(())
    }

    /// The incidents the user branch hooks raise on one commit; a hook that fails raises
    /// nothing and becomes a warning.
    fn user_hooks(&mut self, commit: &CommitContext) -> Vec<CommitIncident> {
        let mut failures = Vec::new();
        let incidents = hook_incidents(
            &self.run.skills,
            self.config.skills(),
            commit,
            &mut failures,
        );
        for failure in &failures {
            let context = format!("commit {}", commit.sha.short());
            self.warn(failure_warning(&context, failure));
            self.report.metrics.skill_failures += 1;
        }
        incidents
    }

    fn break_glass_policy(&self) -> BreakGlassPolicy {
        BreakGlassPolicy::new(self.run.bot().clone(), self.config.allowlist().to_vec())
            .with_adr_deadline_hours(self.config.projects().adr_deadline_hours())
    }

    /// The break-glass audit of one commit landed by `update`; `None` when the ADRs it
    /// needs cannot be read.
    async fn break_glass(
        &mut self,
        commit: &CommitContext,
        update: &RefUpdate,
    ) -> Result<Option<BreakGlassVerdict>, SupervisorStop> {
        let policy = self.break_glass_policy();
        // Without ADRs first: mp's own updates and unauthorized pushers need none.
        let verdict = audit_break_glass(commit, update, &policy, &[], self.now);
        if !matches!(
            verdict,
            BreakGlassVerdict::Pending { .. } | BreakGlassVerdict::Unaudited { .. }
        ) {
            return Ok(Some(verdict));
        }
        let Some(adrs) = self.adrs().await? else {
            return Ok(None);
        };
        Ok(Some(audit_break_glass(
            commit, update, &policy, &adrs, self.now,
        )))
    }

    /// The ADR audit of a break-glass commit already found pushed by an allowlisted
    /// person, pushed at `pushed_at`; `None` when the ADRs cannot be read.
    async fn break_glass_adr(
        &mut self,
        sha: &CommitSha,
        tag: &str,
        pushed_at: Option<Timestamp>,
    ) -> Result<Option<BreakGlassVerdict>, SupervisorStop> {
        let policy = self.break_glass_policy();
        let Some(adrs) = self.adrs().await? else {
            return Ok(None);
        };
        Ok(Some(audit_adr(
            sha, tag, pushed_at, &policy, &adrs, self.now,
        )))
    }

    /// The governance repository's `docs/decisions/*.md` as `(path, text)`, read once per
    /// tick; `None` (with a warning) when they cannot be read completely.
    async fn adrs(&mut self) -> Result<Option<Vec<(String, String)>>, SupervisorStop> {
        if let Some(adrs) = &self.run.adrs {
            return Ok(Some(adrs.clone()));
        }
        let governance = self.governance().clone();
        let what = "cannot read the ADRs; break-glass commits wait";
        let branch = self.run.branches.of(&governance).to_owned();
        let tree = match self.github.tree(&governance, &branch).await {
            Ok(tree) => tree,
            Err(error) => {
                self.stop_or_warn(&error, what)?;
                return Ok(None);
            }
        };
        if tree.truncated {
            self.warn(format!("{what}: the tree of {governance} is truncated"));
            return Ok(None);
        }
        let mut adrs = Vec::new();
        for entry in tree.entries.iter().filter(|e| is_adr(&e.path)) {
            match self.github.file(&governance, &entry.path, &branch).await {
                Ok(Some(file)) => adrs.push((entry.path.clone(), file.text)),
                Ok(None) => {}
                Err(error) => {
                    self.stop_or_warn(&error, what)?;
                    return Ok(None);
                }
            }
        }
        self.run.adrs = Some(adrs.clone());
        Ok(Some(adrs))
    }

    /// The unauthorized-push incident of one commit, judged by the update that landed it
    /// and, for an update of GitHub's merge queue, by what it landed (`queue`).
    fn unauthorized_push(
        &mut self,
        commit: &CommitContext,
        update: &RefUpdate,
        queue: Option<&QueueLanding>,
    ) -> Option<CommitIncident> {
        let allowlist = self.config.allowlist();
        let bot = self.run.bot().clone();
        let verdict = match queue {
            Some(queue) => check_queue_push(commit, update, queue, &bot, allowlist),
            None => check_push(commit, update, &bot, allowlist),
        };
        let label = verdict.incident()?;
        Some(CommitIncident {
            label,
            sha: commit.sha.clone(),
            body: verdict.incident_body(&bot, allowlist).unwrap_or_default(),
        })
    }

    /// The hallucination incident of one commit: quoted paths missing at the commit.
    async fn hallucination(
        &mut self,
        commit: &CommitContext,
    ) -> Result<Option<CommitIncident>, SupervisorStop> {
        let paths = candidate_paths(&commit.body);
        let mut lookups = Vec::with_capacity(paths.len());
        for path in paths {
            let lookup = match self
                .github
                .file(self.repo, &path, commit.sha.as_str())
                .await
            {
                Ok(Some(_)) => PathLookup::Exists,
                Ok(None) => PathLookup::Missing,
                Err(error) => match super::SupervisorStop::for_error(&error) {
                    Some(stop) => return Err(stop),
                    None => PathLookup::Error(error.to_string()),
                },
            };
            lookups.push((path, lookup));
        }
        if lookups.is_empty() {
            return Ok(None);
        }
        let verdict = hallucination_verdict(&commit.sha, &lookups);
        Ok(verdict.incident().map(|label| CommitIncident {
            label,
            sha: commit.sha.clone(),
            body: verdict.incident_body().unwrap_or_default(),
        }))
    }
}

/// The incident a break-glass verdict raises, if any.
fn break_glass_incident(verdict: &BreakGlassVerdict) -> Option<CommitIncident> {
    let label = verdict.incident()?;
    let sha = match verdict {
        BreakGlassVerdict::Unauthorized { sha, .. } | BreakGlassVerdict::Unaudited { sha, .. } => {
            sha.clone()
        }
        _ => return None,
    };
    Some(CommitIncident {
        label,
        sha,
        body: verdict.incident_body()?,
    })
}
