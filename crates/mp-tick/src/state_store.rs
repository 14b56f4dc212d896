//! Loading and saving the durable state on the governance repository's `bot-state` branch
//! through the GitHub port (bot.md §16).
//!
//! * Load: no `bot-state` branch means a first run: the branch is created from the
//!   governance `main` head and an empty watermarks file is written at once, so that "the
//!   branch exists" always implies "the file exists". A branch without the file, a file
//!   that cannot be read, and a corrupt file all fail the tick closed, before any write.
//! * Load also checks who wrote the branch, from GitHub's activity log of it
//!   (`state::writers`): an update by anyone but mp or an allowlisted person (a deletion
//!   included, so a deleted branch is never taken for a first run) fails the tick closed;
//!   the only write is the `decision:state-tampered` incident naming the writer.
//! * Save: one `PUT /contents` with the blob the file had when last read or written, and
//!   none at all when the text is byte-identical to it. A stale precondition (another
//!   writer got there first) or a secondary rate limit is a warning: the cached blob is
//!   dropped, the next save re-reads it, and the tick goes on. Any other error fails the
//!   tick.
//! * A sharded save ([`StateStore::save_shard`]) merges instead: the entries of the
//!   shard's own repositories go over the file as last read or written, pinned to its blob;
//!   when another shard got there first, the file is read again and merged again, up to
//!   [`SHARD_SAVE_ATTEMPTS`] times, and then the save is skipped with a warning as above.
//!   Each shard's entries survive the others' saves (docs/decisions/0021).
//! * The burn-in clock file lives on the same branch; it is read and written best-effort
//!   (fail-safe, see `state`).

use mp_core::branch::incident::{body_with_marker, incident_title};
use mp_core::branch::{IncidentAuthority, IncidentKey, IncidentLabel, Standing};
use mp_core::gate::burn_in::{BurnInState, StoredBurnIn};
use mp_core::ids::{CommitSha, Login, PrNumber, RepoName};
use mp_core::port::{FileWrite, GitHubError, GitHubHistory, IssueQuery, NewIssue};
use mp_core::state::{
    BOT_STATE_BRANCH, BURN_IN_COMMIT_MESSAGE, BURN_IN_STATE_PATH, StateWriters, Steered,
    WATERMARKS_COMMIT_MESSAGE, WATERMARKS_PATH, Watermarks, burn_in_text, check_state_writers,
    restored_text, stored_burn_in,
};

use super::{Shard, TickError};

#[cfg(test)]
mod tests;

/// How many times a sharded save writes (reading the file again and merging again after
/// each stale blob) before it gives up until the next save.
pub const SHARD_SAVE_ATTEMPTS: u32 = 4;

/// What a save did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SaveOutcome {
    /// The text is byte-identical to the stored file: nothing written.
    Unchanged,
    /// The file was written.
    Written,
    /// The write was refused for a reason that does not fail the tick (a stale blob, a
    /// secondary rate limit); the next save tries again.
    Skipped {
        /// The warning for the tick report.
        warning: String,
    },
}

/// The watermarks file as last read or written, and the burn-in file's blob.
#[derive(Debug, Clone)]
pub struct StateStore {
    repo: RepoName,
    /// The stored file's blob (`None`: no file).
    blob: Option<String>,
    /// The stored file's text (`None`: no file).
    stored_text: Option<String>,
    /// An earlier write was refused: re-read the file before the next one.
    stale: bool,
    created_at: Option<CommitSha>,
    burn_in_blob: Option<String>,
    notes: Vec<String>,
}

/// Who may write the state, and who signs its incidents: mp's identity (through its
/// [`IncidentAuthority`]) and the allowlisted people, whose write is a restore by hand.
#[derive(Debug, Clone)]
pub struct StateGuard {
    authority: IncidentAuthority,
    allowlist: Vec<Login>,
}

impl StateGuard {
    /// The state may be written by `authority`'s identity and by `allowlist`.
    pub fn new(authority: IncidentAuthority, allowlist: Vec<Login>) -> Self {
        Self {
            authority,
            allowlist,
        }
    }
}

/// After this many updates of `bot-state` were checked in one load, the newest checked tip
/// is kept in the state (one more save) so that the next load reads less of the log.
pub const CHECKED_REFRESH: usize = 50;

fn unavailable(reason: impl Into<String>) -> TickError {
    TickError::StateUnavailable {
        path: WATERMARKS_PATH.to_owned(),
        reason: reason.into(),
    }
}

/// The reason text for a GitHub error while loading, with the permission hint on 403.
fn load_reason(what: &str, repo: &RepoName, error: &GitHubError) -> String {
    match error {
        GitHubError::Status { status: 403, .. } => {
            format!("{what}: {error}; the App needs `contents: write` on {repo} to keep its state")
        }
        _ => format!("{what}: {error}"),
    }
}

impl StateStore {
    /// Loads the watermarks of the governance repository `repo`, creating the `bot-state`
    /// branch from `base_branch` (and an empty state file) on the first run.
    ///
    /// # Errors
    /// [`TickError::StateSteered`] when GitHub's activity log shows someone other than mp
    /// or an allowlisted person wrote or deleted the branch (the one write is the incident
    /// that says so); [`TickError::StateCorrupt`] when the file is not a valid state;
    /// [`TickError::StateUnavailable`] when the branch exists without the file, or the
    /// file, the branch or `main` cannot be read, or the branch cannot be created. Nothing
    /// is written in either case, except on the first-run path (the branch and the empty
    /// file), which only runs when no state exists at all.
    pub async fn load(
        github: &dyn GitHubHistory,
        repo: &RepoName,
        base_branch: &str,
        guard: &StateGuard,
    ) -> Result<(Self, Watermarks), TickError> {
        let mut store = Self {
            repo: repo.clone(),
            blob: None,
            stored_text: None,
            stale: false,
            created_at: None,
            burn_in_blob: None,
            notes: Vec::new(),
        };
        match github.file(repo, WATERMARKS_PATH, BOT_STATE_BRANCH).await {
            Ok(Some(file)) => {
                let mut state = Self::parse(&file.text)?;
                store.blob = Some(file.blob_sha);
                store.stored_text = Some(file.text);
                store.check_writers(github, guard, &mut state, true).await?;
                return Ok((store, state));
            }
            Ok(None) => {
                // The ref resolved, so the branch should exist; make sure before failing
                // closed, since a missing branch is the harmless first run.
                match github.branch_commits(repo, BOT_STATE_BRANCH, 1).await {
                    Ok(_) => {
                        return Err(unavailable(format!(
                            "the {BOT_STATE_BRANCH} branch of {repo} exists but has no state file; \
                             the owner restores it by hand (docs/state.md, \"Recovering the state\")"
                        )));
                    }
                    Err(GitHubError::NotFound { .. }) => {}
                    Err(error) => {
                        return Err(unavailable(load_reason(
                            "cannot check the bot-state branch",
                            repo,
                            &error,
                        )));
                    }
                }
            }
            Err(GitHubError::NotFound { .. }) => {}
            Err(error) => {
                return Err(unavailable(load_reason(
                    "cannot read the state file",
                    repo,
                    &error,
                )));
            }
        }
        // No branch: a first run, unless GitHub's log shows the branch lived before and
        // someone other than mp or the owner deleted it.
        let mut past = Watermarks::new();
        store.check_writers(github, guard, &mut past, false).await?;
        let state = store.first_run(github, base_branch).await?;
        Ok((store, state))
    }

    /// What the load found worth telling the operator (a restore by the owner, a log that
    /// cannot be read), one line each.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Checks who wrote `bot-state` since the tip `state` says was checked last
    /// ([`check_state_writers`]); moves that tip after [`CHECKED_REFRESH`] updates.
    async fn check_writers(
        &mut self,
        github: &dyn GitHubHistory,
        guard: &StateGuard,
        state: &mut Watermarks,
        branch_exists: bool,
    ) -> Result<(), TickError> {
        let until: Vec<CommitSha> = state.checked_through().cloned().into_iter().collect();
        let log = match github
            .branch_updates_until(&self.repo, BOT_STATE_BRANCH, &until)
            .await
        {
            Ok(log) => log,
            // No log for a branch that does not exist: nothing ever wrote it.
            Err(GitHubError::NotFound { .. }) if !branch_exists => return Ok(()),
            Err(GitHubError::NotFound { .. }) => {
                self.notes.push(format!(
                    "GitHub has no activity log for {BOT_STATE_BRANCH} of {} (an older GitHub Enterprise Server?): who wrote the state cannot be checked; protect the branch with a ruleset only mp may bypass",
                    self.repo
                ));
                return Ok(());
            }
            Err(error) => {
                return Err(unavailable(load_reason(
                    "cannot read the activity log of the bot-state branch to check who wrote it",
                    &self.repo,
                    &error,
                )));
            }
        };
        let bot = guard.authority.bot();
        match check_state_writers(&log, state.checked_through(), bot, &guard.allowlist) {
            StateWriters::Trusted {
                newest,
                checked,
                restored_by,
            } => {
                // A restore is accepted once: the checked tip moves past it (one save).
                let restored = restored_by.is_some();
                if let Some(update) = restored_by {
                    self.notes.push(restored_text(&update));
                }
                if (restored || checked >= CHECKED_REFRESH)
                    && let Some(tip) = newest
                {
                    state.set_checked_through(tip);
                }
                Ok(())
            }
            StateWriters::Steered(steered) => Err(self.steered(github, guard, &steered).await),
        }
    }

    /// Opens (or finds) the `decision:state-tampered` incident naming the writer, and the
    /// error that fails the tick closed.
    async fn steered(
        &self,
        github: &dyn GitHubHistory,
        guard: &StateGuard,
        steered: &Steered,
    ) -> TickError {
        let label = IncidentLabel::StateTampered;
        let incident = match steered.key_sha() {
            None => "no incident: the update names no commit".to_owned(),
            Some(sha) => {
                let key = IncidentKey::single(sha);
                let text = format!(
                    "**mp stopped: the state on `{BOT_STATE_BRANCH}` cannot be trusted.**\n\n\
                     {steered}.\n\n\
                     Only mp's identity writes `{BOT_STATE_BRANCH}`. A watermark moved, an entry \
                     removed or a pending record deleted by anyone else would hide commits from \
                     the supervisor, so every tick stops before it writes anything until the \
                     state is restored.\n\n\
                     To restore it, an allowlisted person pushes to `{BOT_STATE_BRANCH}` the \
                     state they trust (for example the last commit mp wrote before this update, \
                     `git push --force origin <sha>:refs/heads/{BOT_STATE_BRANCH}`), after \
                     reviewing what the writer changed. mp accepts a state an allowlisted person \
                     wrote. Then protect the branch with a ruleset only mp's App may bypass \
                     (docs/deploy.md)."
                );
                let body = guard
                    .authority
                    .sign(&body_with_marker(&text, &key), label, &key);
                let query = IssueQuery {
                    state: None,
                    labels: vec![label.as_str().to_owned()],
                };
                match github.issues(&self.repo, &query).await {
                    Err(error) => format!("the incident could not be checked: {error}"),
                    Ok(issues) => match issues.iter().find(|issue| {
                        guard.authority.standing(issue, label, &key) == Standing::Ours
                    }) {
                        Some(found) => {
                            format!("already reported as {}#{}", self.repo, found.number)
                        }
                        None => {
                            let new = NewIssue {
                                title: incident_title(label, &key),
                                body,
                                labels: vec![label.as_str().to_owned()],
                            };
                            match github.create_issue(&self.repo, &new).await {
                                // A dry run plans the issue and answers number 0, which
                                // GitHub never gives: nothing was reported.
                                Ok(issue) if issue.number == PrNumber::new(0) => format!(
                                    "to be reported in {} (planned by this dry run, not opened)",
                                    self.repo
                                ),
                                Ok(issue) => format!("reported as {}#{}", self.repo, issue.number),
                                Err(error) => format!("the incident could not be opened: {error}"),
                            }
                        }
                    },
                }
            }
        };
        TickError::StateSteered {
            what: steered.to_string(),
            code: steered.code(),
            incident,
        }
    }

    fn parse(text: &str) -> Result<Watermarks, TickError> {
        Watermarks::parse(text).map_err(|error| TickError::StateCorrupt {
            path: WATERMARKS_PATH.to_owned(),
            reason: error.to_string(),
        })
    }

    /// Creates the branch from `main` and writes an empty state. A branch created by a
    /// concurrent tick in between is tolerated: its file is read instead.
    async fn first_run(
        &mut self,
        github: &dyn GitHubHistory,
        base_branch: &str,
    ) -> Result<Watermarks, TickError> {
        let repo = self.repo.clone();
        let head = github.branch_head(&repo, base_branch).await.map_err(|e| {
            unavailable(load_reason(
                &format!(
                    "cannot read {base_branch} to create the bot-state branch; retries next cron"
                ),
                &repo,
                &e,
            ))
        })?;
        match github.create_branch(&repo, BOT_STATE_BRANCH, &head).await {
            Ok(()) => self.created_at = Some(head),
            Err(GitHubError::Conflict { .. }) => {
                // Created concurrently: use its file if it has one already.
                let file = github
                    .file(&repo, WATERMARKS_PATH, BOT_STATE_BRANCH)
                    .await
                    .map_err(|e| {
                        unavailable(load_reason("cannot read the state file", &repo, &e))
                    })?;
                if let Some(file) = file {
                    let state = Self::parse(&file.text)?;
                    self.blob = Some(file.blob_sha);
                    self.stored_text = Some(file.text);
                    return Ok(state);
                }
            }
            Err(error) => {
                return Err(unavailable(load_reason(
                    "cannot create the bot-state branch; retries next cron",
                    &repo,
                    &error,
                )));
            }
        }
        let state = Watermarks::new();
        let text = state.to_json();
        let write = FileWrite {
            branch: BOT_STATE_BRANCH.to_owned(),
            path: WATERMARKS_PATH.to_owned(),
            text: text.clone(),
            expected_blob_sha: None,
            message: WATERMARKS_COMMIT_MESSAGE.to_owned(),
        };
        let blob = github.put_file(&repo, &write).await.map_err(|e| {
            unavailable(load_reason("cannot write the first state file", &repo, &e))
        })?;
        self.blob = Some(blob);
        self.stored_text = Some(text);
        Ok(state)
    }

    /// The `main` head the `bot-state` branch was created at by this load, if it was.
    pub fn created_branch_at(&self) -> Option<&CommitSha> {
        self.created_at.as_ref()
    }

    /// Saves `state` unless the stored file already holds exactly its text.
    ///
    /// # Errors
    /// [`TickError::StateSave`] for any refusal other than a stale blob or a secondary
    /// rate limit (those are [`SaveOutcome::Skipped`]).
    pub async fn save(
        &mut self,
        github: &dyn GitHubHistory,
        state: &Watermarks,
    ) -> Result<SaveOutcome, TickError> {
        let text = state.to_json();
        // An earlier write was refused: learn the blob the file has now.
        if self.stale
            && let Err(error) = self.reload(github).await
        {
            return self.refused(error);
        }
        if self.stored_text.as_deref() == Some(text.as_str()) {
            return Ok(SaveOutcome::Unchanged);
        }
        let write = self.watermarks_write(&text);
        match github.put_file(&self.repo, &write).await {
            Ok(blob) => {
                self.blob = Some(blob);
                self.stored_text = Some(text);
                Ok(SaveOutcome::Written)
            }
            Err(error) => self.refused(error),
        }
    }

    /// Reads the watermarks file again: its text and the blob a write must be pinned to.
    async fn reload(&mut self, github: &dyn GitHubHistory) -> Result<(), GitHubError> {
        let file = github
            .file(&self.repo, WATERMARKS_PATH, BOT_STATE_BRANCH)
            .await?;
        self.blob = file.as_ref().map(|f| f.blob_sha.clone());
        self.stored_text = file.map(|f| f.text);
        self.stale = false;
        Ok(())
    }

    /// The write of the watermarks file with `text`, pinned to the blob last read.
    fn watermarks_write(&self, text: &str) -> FileWrite {
        FileWrite {
            branch: BOT_STATE_BRANCH.to_owned(),
            path: WATERMARKS_PATH.to_owned(),
            text: text.to_owned(),
            expected_blob_sha: self.blob.clone(),
            message: WATERMARKS_COMMIT_MESSAGE.to_owned(),
        }
    }

    /// Saves the entries of `shard`'s repositories in `state` over the file as it is now
    /// (see the module docs), unless that changes nothing.
    ///
    /// # Errors
    /// [`TickError::StateCorrupt`] when the file, read again, is not a valid state;
    /// [`TickError::StateSave`] as for [`StateStore::save`].
    pub async fn save_shard(
        &mut self,
        github: &dyn GitHubHistory,
        state: &Watermarks,
        shard: Shard,
    ) -> Result<SaveOutcome, TickError> {
        let mut last_error = None;
        for _ in 0..SHARD_SAVE_ATTEMPTS {
            if self.stale
                && let Err(error) = self.reload(github).await
            {
                return self.refused(error);
            }
            let base = match &self.stored_text {
                Some(text) => Self::parse(text)?,
                None => Watermarks::new(),
            };
            let text = state.merged_into(&base, |repo| shard.owns(repo)).to_json();
            if self.stored_text.as_deref() == Some(text.as_str()) {
                return Ok(SaveOutcome::Unchanged);
            }
            let write = self.watermarks_write(&text);
            match github.put_file(&self.repo, &write).await {
                Ok(blob) => {
                    self.blob = Some(blob);
                    self.stored_text = Some(text);
                    return Ok(SaveOutcome::Written);
                }
                Err(error @ GitHubError::Conflict { .. }) => {
                    // Another shard saved first: read its file and merge again.
                    self.stale = true;
                    last_error = Some(error);
                }
                Err(error) => return self.refused(error),
            }
        }
        match last_error {
            Some(error) => self.refused(error),
            None => Ok(SaveOutcome::Unchanged),
        }
    }

    fn refused(&mut self, error: GitHubError) -> Result<SaveOutcome, TickError> {
        match error {
            GitHubError::Conflict { .. } | GitHubError::Throttled { .. } => {
                self.blob = None;
                self.stored_text = None;
                self.stale = true;
                Ok(SaveOutcome::Skipped {
                    warning: format!(
                        "{WATERMARKS_PATH} not saved ({error}); the blob is re-read on the next save"
                    ),
                })
            }
            error => Err(TickError::StateSave {
                path: WATERMARKS_PATH.to_owned(),
                error,
            }),
        }
    }

    /// Reads the burn-in clock file, fail-safe: a read error restarts the clock (the
    /// second value is then a warning).
    pub async fn load_burn_in(
        &mut self,
        github: &dyn GitHubHistory,
    ) -> (StoredBurnIn, Option<String>) {
        let read = github
            .file(&self.repo, BURN_IN_STATE_PATH, BOT_STATE_BRANCH)
            .await;
        self.burn_in_blob = read
            .as_ref()
            .ok()
            .and_then(|file| file.as_ref().map(|f| f.blob_sha.clone()));
        match &read {
            Ok(file) => stored_burn_in(Ok(file.as_ref().map(|f| f.text.as_str()))),
            Err(error) => stored_burn_in(Err(error.to_string())),
        }
    }

    /// Writes the burn-in clock file.
    ///
    /// # Errors
    /// The GitHub error; callers only warn about it (the clock is fail-safe).
    pub async fn save_burn_in(
        &mut self,
        github: &dyn GitHubHistory,
        state: &BurnInState,
    ) -> Result<(), GitHubError> {
        let write = FileWrite {
            branch: BOT_STATE_BRANCH.to_owned(),
            path: BURN_IN_STATE_PATH.to_owned(),
            text: burn_in_text(state),
            expected_blob_sha: self.burn_in_blob.clone(),
            message: BURN_IN_COMMIT_MESSAGE.to_owned(),
        };
        let blob = github.put_file(&self.repo, &write).await?;
        self.burn_in_blob = Some(blob);
        Ok(())
    }
}
