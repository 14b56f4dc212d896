//! The L5 layer: break-glass audit, unauthorized push, hallucination guard and the user
//! branch hooks over the new commits on `main`, with one rollup issue per label and scan
//! (bot.md §11.2-§11.5).

use crate::branch::break_glass::is_break_glass;
use crate::branch::{
    BreakGlassPolicy, BreakGlassVerdict, CommitIncident, MergeActorLookup, PathLookup,
    audit_break_glass, candidate_paths, check_push, hallucination_verdict, roll_up, suppression,
};
use crate::context::CommitContext;
use crate::ids::CommitSha;
use crate::port::{CommitPull, GitHubError};
use crate::skill::builtin;
use crate::state::Layer;

use super::super::skills::{failure_warning, hook_incidents};
use super::incidents::Surfaced;
use super::{DECISIONS_DIR, HALLUCINATION_GUARD, Scan, SupervisorStop, capped};

/// The merge actor of `sha` among the pull requests that contain it: the one whose merge
/// produced the commit, else the first merged one that names its merger.
fn merge_actor(pulls: &[CommitPull], sha: &CommitSha) -> MergeActorLookup {
    let exact = pulls
        .iter()
        .find(|p| p.merge_commit_sha.as_ref() == Some(sha));
    let chosen = exact.or_else(|| pulls.iter().find(|p| p.merged_by.is_some()));
    match chosen.and_then(|p| p.merged_by.clone()) {
        Some(login) => MergeActorLookup::Found(login),
        None => MergeActorLookup::NotFound,
    }
}

/// Whether `path` is an ADR directly under [`DECISIONS_DIR`].
fn is_adr(path: &str) -> bool {
    path.strip_prefix(DECISIONS_DIR)
        .is_some_and(|name| !name.contains('/') && name.ends_with(".md"))
}

impl Scan<'_> {
    pub(super) async fn l5(&mut self, new: &[CommitContext]) -> Result<(), SupervisorStop> {
        let (batch, waiting) = capped(new);
        self.report.metrics.commits_deferred += waiting;
        let mut found: Vec<CommitIncident> = Vec::new();
        // Break-glass commits whose incident settles their pending record once filed.
        let mut pending_done: Vec<CommitSha> = Vec::new();

        for (sha, _) in self.state.pending_break_glass(self.repo) {
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
            match self.break_glass(&commit).await? {
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
        for commit in batch {
            if is_break_glass(&commit.subject) {
                let Some(verdict) = self.break_glass(commit).await? else {
                    // The ADRs cannot be read: this commit and the rest wait.
                    break;
                };
                if let BreakGlassVerdict::Pending { deadline, .. } = &verdict {
                    self.event(format!(
                        "break-glass {}: no ADR yet; audited again until {deadline}",
                        commit.sha.short()
                    ));
                    self.state
                        .track_break_glass(self.repo, &commit.sha, self.now);
                }
                found.extend(break_glass_incident(&verdict));
            }
            found.extend(self.unauthorized_push(commit).await?);
            if builtin::runs(HALLUCINATION_GUARD, self.config.skills()) {
                found.extend(self.hallucination(commit).await?);
            }
            found.extend(self.user_hooks(commit));
            last = Some(commit.sha.clone());
            self.report.metrics.l5_commits += 1;
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

    /// The break-glass audit of one commit; `None` when the ADRs it needs cannot be read.
    async fn break_glass(
        &mut self,
        commit: &CommitContext,
    ) -> Result<Option<BreakGlassVerdict>, SupervisorStop> {
        let policy =
            BreakGlassPolicy::new(self.run.bot().clone(), self.config.allowlist().to_vec())
                .with_adr_deadline_hours(self.config.projects().adr_deadline_hours());
        // Without ADRs first: the bot's own commits and unauthorized committers need none.
        let verdict = audit_break_glass(commit, &policy, &[], self.now);
        if !matches!(
            verdict,
            BreakGlassVerdict::Pending { .. } | BreakGlassVerdict::Unaudited { .. }
        ) {
            return Ok(Some(verdict));
        }
        let Some(adrs) = self.adrs().await? else {
            return Ok(None);
        };
        Ok(Some(audit_break_glass(commit, &policy, &adrs, self.now)))
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

    /// The unauthorized-push incident of one commit, unless an allowlisted person really
    /// merged it.
    async fn unauthorized_push(
        &mut self,
        commit: &CommitContext,
    ) -> Result<Option<CommitIncident>, SupervisorStop> {
        let allowlist = self.config.allowlist();
        let bot = self.run.bot().clone();
        let verdict = check_push(commit, &bot, allowlist);
        let Some(label) = verdict.incident() else {
            return Ok(None);
        };
        let lookup = if allowlist.is_empty() {
            MergeActorLookup::NotFound
        } else {
            match self.github.commit_pulls(self.repo, &commit.sha).await {
                Ok(pulls) => merge_actor(&pulls, &commit.sha),
                Err(error) => match super::SupervisorStop::for_error(&error) {
                    Some(stop) => return Err(stop),
                    None => MergeActorLookup::Failed(error.to_string()),
                },
            }
        };
        let decision = suppression(&lookup, allowlist);
        if !decision.keeps() {
            self.event(format!("{label} {}: {decision}", commit.sha.short()));
            return Ok(None);
        }
        let body = verdict.incident_body(&bot, allowlist).unwrap_or_default();
        Ok(Some(CommitIncident {
            label,
            sha: commit.sha.clone(),
            body: format!("{body}\n\nMerge actor check: {decision}."),
        }))
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
