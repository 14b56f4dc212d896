//! The automatic revert pull request of a post-merge re-validation failure (bot.md §13,
//! opt-in `auto_revert_pr`).
//!
//! Only a commit proven to have at most one parent is reverted: its parents are read again
//! from GitHub, and a merge commit or unreadable parents fail closed (the bot never guesses
//! `-m N`). The revert lands on `revert/<sha7>` with the bot's identity trailers and goes
//! through the normal gate as a pull request that the bot never labels `ready-to-merge`.
//! Whatever happens is written into the incident body as a note just before its dedupe
//! marker, once.

use std::fmt;

use mp_core::branch::incident::{IncidentKey, SurfacedIncident, dedupe_marker};
use mp_core::branch::l2::{NotEligibleReason, RevertEligibility, revert_eligibility};
use mp_core::context::CommitContext;
use mp_core::ids::{CommitSha, PrNumber, RepoName};
use mp_core::port::{GitHubError, Issue, NewPull};

use super::{Scan, SupervisorStop};
use crate::MAIN_BRANCH;

/// The prefix of revert branches: `revert/<sha7>`.
pub const REVERT_BRANCH_PREFIX: &str = "revert/";

/// Where an automatic revert stopped, named in the incident's fail-closed note.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RevertStage {
    /// The commit has several parents: choosing the mainline is left to a person.
    MultiParent,
    /// The commit's parents could not be read, so one parent is not proven.
    ParentInspection,
    /// Whether the revert branch exists could not be checked.
    BranchLookup,
    /// The revert does not apply cleanly on `main`.
    RevertConflict,
    /// The revert branch could not be pushed.
    Push,
    /// The pull request could not be opened.
    OpenPull,
}

impl RevertStage {
    /// The stage name: `multi-parent-merge`, `parent-inspection`, `branch-lookup`,
    /// `revert-conflict`, `push`, `open-pull`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MultiParent => "multi-parent-merge",
            Self::ParentInspection => "parent-inspection",
            Self::BranchLookup => "branch-lookup",
            Self::RevertConflict => "revert-conflict",
            Self::Push => "push",
            Self::OpenPull => "open-pull",
        }
    }
}

impl fmt::Display for RevertStage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The revert branch of `sha`: `revert/<sha7>`.
pub fn revert_branch(sha: &CommitSha) -> String {
    format!("{REVERT_BRANCH_PREFIX}{}", sha.short())
}

/// The revert commit's message: git's revert subject and line, then the bot's identity
/// trailers with `Task-Ref: Issue#<incident>`.
pub fn revert_message(commit: &CommitContext, incident: PrNumber) -> String {
    format!(
        "Revert \"{subject}\"\n\n\
         This reverts commit {sha}.\n\n\
         Agent-Tool: github-actions\n\
         Agent-Model: n/a\n\
         Agent-Session: s_bot-revert\n\
         Agent-Machine: bot\n\
         Task-Ref: Issue#{incident}",
        subject = commit.subject,
        sha = commit.sha,
    )
}

/// The revert pull request of `sha`, whose incident is `governance#incident`.
pub fn revert_pull(sha: &CommitSha, governance: &RepoName, incident: PrNumber) -> NewPull {
    NewPull {
        title: format!(
            "Revert bad commit {} (post-merge re-validation)",
            sha.short()
        ),
        body: format!(
            "Reverts `{sha}` on `main`: it failed post-merge re-validation (incident \
             {governance}#{incident}).\n\n\
             Opened automatically because `auto_revert_pr` is on. It goes through the normal \
             merge gate and the bot never labels it `ready-to-merge`; the owner may fast-track \
             it with `decision:auto-revert`."
        ),
        head: revert_branch(sha),
        base: MAIN_BRANCH.to_owned(),
    }
}

/// `body` with `note` inserted just before the dedupe marker of `key` (appended when the
/// marker is missing); `None` when the note is already there.
pub fn with_note(body: &str, note: &str, key: &IncidentKey) -> Option<String> {
    if body.contains(note) {
        return None;
    }
    let marker = dedupe_marker(key);
    Some(match body.rfind(&marker) {
        Some(at) => format!("{}{note}\n\n{}", &body[..at], &body[at..]),
        None => format!("{body}\n\n{note}"),
    })
}

/// Whether a write was refused because its target already exists or does not apply.
fn is_conflict(error: &GitHubError) -> bool {
    matches!(error, GitHubError::Conflict { .. })
}

fn not_created(stage: RevertStage, reason: &str) -> String {
    format!(
        "Auto-revert PR **not** created (stage: `{stage}`). Falling back to incident-only: {reason}"
    )
}

impl Scan<'_> {
    /// Opens (or finds) the revert pull request of a failed commit and notes the result in
    /// its incident.
    pub(super) async fn auto_revert(
        &mut self,
        commit: &CommitContext,
        incident: &SurfacedIncident,
        issue: &Issue,
    ) -> Result<(), SupervisorStop> {
        let note = self.revert(commit, issue.number).await?;
        self.event(format!("auto-revert {}: {note}", commit.sha.short()));
        match with_note(&issue.body, &note, &incident.key) {
            Some(body) => self.update_body(incident.label, issue, &body).await,
            None => Ok(()),
        }
    }

    /// The revert itself; returns the note for the incident.
    async fn revert(
        &mut self,
        commit: &CommitContext,
        incident: PrNumber,
    ) -> Result<String, SupervisorStop> {
        let (repo, sha) = (self.repo, &commit.sha);
        let read = self.github.commit(repo, sha).await;
        if let Err(error) = &read
            && let Some(stop) = SupervisorStop::for_error(error)
        {
            return Err(stop);
        }
        let parents = read.as_ref().ok().map(|c| c.parents.as_slice());
        let eligibility = revert_eligibility(parents);
        match (&eligibility, &read) {
            (RevertEligibility::NotEligible(NotEligibleReason::MultiParent { .. }), _) => {
                return Ok(not_created(
                    RevertStage::MultiParent,
                    &eligibility.to_string(),
                ));
            }
            (RevertEligibility::NotEligible(_), Err(error)) => {
                return Ok(not_created(
                    RevertStage::ParentInspection,
                    &format!("{eligibility} ({error}); follow the recovery instructions above"),
                ));
            }
            (RevertEligibility::NotEligible(_), Ok(_)) => {
                return Ok(not_created(
                    RevertStage::ParentInspection,
                    &eligibility.to_string(),
                ));
            }
            (RevertEligibility::Eligible { .. }, _) => {}
        }

        // The revert is made on `main` (the git adapter fetches it); another gated branch
        // is left to a human for now.
        let gated = self.run.branches.of(repo);
        if gated != MAIN_BRANCH {
            return Ok(not_created(
                RevertStage::Push,
                &format!(
                    "auto-revert supports `{MAIN_BRANCH}` only and this repository gates `{gated}`; revert by hand following the recovery instructions above"
                ),
            ));
        }
        let branch = revert_branch(sha);
        let existed = match self.github.branch_commits(repo, &branch, 1).await {
            Ok(_) => true,
            Err(GitHubError::NotFound { .. }) => false,
            Err(error) => {
                return match SupervisorStop::for_error(&error) {
                    Some(stop) => Err(stop),
                    None => Ok(not_created(RevertStage::BranchLookup, &error.to_string())),
                };
            }
        };
        if !existed {
            let message = revert_message(commit, incident);
            if let Err(error) = self.github.push_revert(repo, sha, &branch, &message).await {
                if let Some(stop) = SupervisorStop::for_error(&error) {
                    return Err(stop);
                }
                let stage = if is_conflict(&error) {
                    RevertStage::RevertConflict
                } else {
                    RevertStage::Push
                };
                return Ok(not_created(
                    stage,
                    &format!("{error}; revert by hand following the recovery instructions above"),
                ));
            }
        }
        let governance = self.governance().clone();
        let pull = revert_pull(sha, &governance, incident);
        match self.github.create_pull(repo, &pull).await {
            Ok(number) => {
                self.report.metrics.auto_revert_prs += 1;
                self.report.reverts.push(super::RevertNote {
                    sha: sha.clone(),
                    pull: number,
                    incident,
                });
                let from = if existed {
                    "the existing branch"
                } else {
                    "branch"
                };
                Ok(format!(
                    "**Auto-revert:** opened {repo}#{number} from {from} `{branch}` to revert `{short}`. \
                     It goes through the normal gate and is never labelled `ready-to-merge`; the owner \
                     may fast-track it with `decision:auto-revert`.",
                    short = sha.short(),
                ))
            }
            Err(error) if existed && is_conflict(&error) => {
                // Name the open pull request (GitHub links `owner/repo#N` in the issue).
                let open = self.github.open_pulls(repo).await.ok().and_then(|pulls| {
                    pulls.into_iter().find(|p| {
                        p.head_ref == branch && p.head_repo.as_ref().is_none_or(|r| r == repo)
                    })
                });
                Ok(match open {
                    Some(open) => format!(
                        "**Auto-revert:** branch `{branch}` already has an open pull request, \
                         {repo}#{}; nothing new was opened.",
                        open.number
                    ),
                    None => format!(
                        "**Auto-revert:** branch `{branch}` already has an open pull request in {repo}; \
                         nothing new was opened."
                    ),
                })
            }
            Err(error) => match SupervisorStop::for_error(&error) {
                Some(stop) => Err(stop),
                None => Ok(not_created(
                    RevertStage::OpenPull,
                    &format!(
                        "branch `{branch}` was pushed, but the pull request could not be opened \
                         ({error}); open it manually from that branch"
                    ),
                )),
            },
        }
    }
}
