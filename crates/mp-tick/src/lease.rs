//! The tick lease: one file on the governance repository's `bot-state` branch,
//! `bot-state/lease.json`, that keeps two ticks from acting at once (a cron tick and a
//! manual one, or two cron jobs), which would duplicate receipts, diagnostics and inbox
//! issues (docs/decisions/0028).
//!
//! * A tick takes the lease after loading its state and before anything else writes, and
//!   gives it back after its final save. The file maps a scope to its holder: `all` for a
//!   whole tick, `I/N` for a shard, each with the instant it expires.
//! * An unexpired entry of another tick blocks a whole tick; it blocks a shard when it is
//!   the whole tick's, the same shard's, or a shard of another count (the repositories
//!   overlap). Shards of one count run side by side, as docs/decisions/0021 allows.
//! * Every write is pinned to the blob last read: two ticks taking the lease at the same
//!   moment cannot both succeed; the loser reads the file again and finds it held.
//! * An entry expires on its own ([`LEASE_SECONDS`] after it was taken), so a tick killed
//!   half-way blocks the next ones only until then.
//! * A write that fails transiently is tried again after reading the file (an applied
//!   write whose answer was lost shows as this tick's own entry). A lease that still cannot
//!   be given back is a warning: it expires.
//! * An entry whose `until` is unreadable or lies further ahead than [`LEASE_SECONDS`]
//!   was not written by mp and holds no one out.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use mp_core::ids::{RepoName, Timestamp};
use mp_core::port::{FileWrite, GitHubError, GitHubHistory};
use mp_core::state::BOT_STATE_BRANCH;

use super::Shard;

/// Where the lease lives on the `bot-state` branch.
pub const LEASE_PATH: &str = "bot-state/lease.json";

/// How long a lease lasts when its tick does not give it back (killed, crashed): longer
/// than any tick should run, short enough that a crash costs a few cron runs.
pub const LEASE_SECONDS: i64 = 30 * 60;

/// How many times taking or giving back the lease re-reads the file after another tick
/// changed it in between.
const ATTEMPTS: u32 = 4;

const TAKE_MESSAGE: &str = "chore(bot-state): take the tick lease";
const RELEASE_MESSAGE: &str = "chore(bot-state): give back the tick lease";
const RENEW_MESSAGE: &str = "chore(bot-state): renew the tick lease";

/// One holder of the lease.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaseEntry {
    /// Who holds it, e.g. `host:pid`.
    pub holder: String,
    /// When it was taken.
    pub since: String,
    /// When it expires.
    pub until: String,
}

/// The lease file: scope (`all` or `I/N`) to holder.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct LeaseFile {
    #[serde(default)]
    leases: BTreeMap<String, LeaseEntry>,
}

/// Why the lease could not be taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LeaseError {
    /// Another tick holds it.
    #[error("another tick holds the lease ({scope}, {holder}) until {until}")]
    Held {
        /// The scope it holds (`all` or `I/N`).
        scope: String,
        /// Who holds it.
        holder: String,
        /// When it expires.
        until: String,
    },
    /// The lease file cannot be read or written, or is not a lease file.
    #[error("cannot take the tick lease ({path}): {reason}")]
    Unavailable {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
}

/// The lease this tick holds, to give back at the end.
#[derive(Debug, Clone)]
pub struct Lease {
    repo: RepoName,
    scope: String,
    holder: String,
    /// The file as this tick wrote it, and its blob: giving back starts from them, and
    /// reads again only when another tick wrote in between.
    written: Option<(LeaseFile, String)>,
}

/// The scope key of a tick: `all`, or the shard as `I/N`.
fn scope_of(shard: Option<Shard>) -> String {
    shard.map_or_else(|| "all".to_owned(), |s| s.to_string())
}

/// Whether an entry held under `theirs` keeps a tick of scope `ours` out.
fn overlaps(ours: &str, theirs: &str) -> bool {
    if ours == "all" || theirs == "all" || ours == theirs {
        return true;
    }
    // Two shards: only shards of one count split the repositories between them.
    let count = |scope: &str| scope.split_once('/').map(|(_, n)| n.to_owned());
    count(ours) != count(theirs)
}

fn unavailable(reason: impl Into<String>) -> LeaseError {
    LeaseError::Unavailable {
        path: LEASE_PATH.to_owned(),
        reason: reason.into(),
    }
}

/// Whether `entry` no longer holds anyone out at `now`: it has expired, its `until` is
/// unreadable, or it claims to last longer than any lease mp takes (a hand-written entry
/// must not lock the bot out for good).
fn expired(entry: &LeaseEntry, now: Timestamp) -> bool {
    let longest = now.plus_seconds(LEASE_SECONDS);
    Timestamp::parse(&entry.until)
        .ok()
        .is_none_or(|until| until <= now || until > longest)
}

/// Reads the lease file: its entries and blob (`None`: no file).
async fn read(
    github: &dyn GitHubHistory,
    repo: &RepoName,
) -> Result<(LeaseFile, Option<String>), LeaseError> {
    match github.file(repo, LEASE_PATH, BOT_STATE_BRANCH).await {
        Ok(Some(file)) => {
            let parsed: LeaseFile = serde_json::from_str(&file.text).map_err(|e| {
                unavailable(format!(
                    "not a lease file ({e}); remove it by hand, no tick holds a broken lease"
                ))
            })?;
            Ok((parsed, Some(file.blob_sha)))
        }
        Ok(None) | Err(GitHubError::NotFound { .. }) => Ok((LeaseFile::default(), None)),
        Err(error) => Err(unavailable(error.to_string())),
    }
}

fn text_of(file: &LeaseFile) -> String {
    let mut text = serde_json::to_string_pretty(file).unwrap_or_else(|_| "{}".to_owned());
    text.push('\n');
    text
}

impl Lease {
    /// Takes the lease of `shard` (the whole tick when `None`) for `holder` at `now`, on the
    /// governance repository `repo`.
    ///
    /// # Errors
    /// [`LeaseError::Held`] when another tick holds an overlapping lease;
    /// [`LeaseError::Unavailable`] when the file cannot be read, parsed or written. Nothing
    /// is written in either case.
    pub async fn take(
        github: &dyn GitHubHistory,
        repo: &RepoName,
        shard: Option<Shard>,
        holder: &str,
        now: Timestamp,
    ) -> Result<Self, LeaseError> {
        let scope = scope_of(shard);
        for _ in 0..ATTEMPTS {
            let (mut file, blob) = read(github, repo).await?;
            file.leases.retain(|_, entry| !expired(entry, now));
            // Our own entry: an earlier attempt was applied though its answer was lost.
            let ours = file
                .leases
                .get(&scope)
                .is_some_and(|entry| entry.holder == holder && entry.since == now.to_string());
            if ours {
                return Ok(Self {
                    repo: repo.clone(),
                    scope,
                    holder: holder.to_owned(),
                    written: None,
                });
            }
            if let Some((theirs, entry)) = file
                .leases
                .iter()
                .find(|(theirs, _)| overlaps(&scope, theirs))
            {
                return Err(LeaseError::Held {
                    scope: theirs.clone(),
                    holder: entry.holder.clone(),
                    until: entry.until.clone(),
                });
            }
            file.leases.insert(
                scope.clone(),
                LeaseEntry {
                    holder: holder.to_owned(),
                    since: now.to_string(),
                    until: now.plus_seconds(LEASE_SECONDS).to_string(),
                },
            );
            let write = FileWrite {
                branch: BOT_STATE_BRANCH.to_owned(),
                path: LEASE_PATH.to_owned(),
                text: text_of(&file),
                expected_blob_sha: blob.clone(),
                message: TAKE_MESSAGE.to_owned(),
            };
            match github.put_file(repo, &write).await {
                Ok(blob) => {
                    return Ok(Self {
                        repo: repo.clone(),
                        scope,
                        holder: holder.to_owned(),
                        written: Some((file, blob)),
                    });
                }
                // Another tick wrote the file in between, or the write may not have
                // been applied: read it again.
                Err(GitHubError::Conflict { .. }) => {}
                Err(error) if error.is_transient() => {}
                Err(error) => return Err(unavailable(error.to_string())),
            }
        }
        Err(unavailable(format!(
            "the file changed, or the write failed, on every one of {ATTEMPTS} attempts"
        )))
    }

    /// Extends the lease to [`LEASE_SECONDS`] from `now`, for a holder that runs longer
    /// than one tick (`mp serve` renews it well before it expires).
    ///
    /// # Errors
    /// [`LeaseError::Held`] when the lease expired and another tick took it (the caller
    /// must stop writing); [`LeaseError::Unavailable`] when the file cannot be read or
    /// written. A failed renewal leaves the lease as it was: it still expires on time.
    pub async fn renew(
        &mut self,
        github: &dyn GitHubHistory,
        now: Timestamp,
    ) -> Result<(), LeaseError> {
        for _ in 0..ATTEMPTS {
            let (mut file, blob) = match self.written.take() {
                Some((file, blob)) => (file, Some(blob)),
                None => read(github, &self.repo).await?,
            };
            let Some(entry) = file.leases.get_mut(&self.scope) else {
                // Expired and given back by someone else: take it afresh if no one holds it.
                *self = Self::take(github, &self.repo, self.shard_of_scope(), &self.holder, now)
                    .await?;
                return Ok(());
            };
            if entry.holder != self.holder {
                return Err(LeaseError::Held {
                    scope: self.scope.clone(),
                    holder: entry.holder.clone(),
                    until: entry.until.clone(),
                });
            }
            entry.until = now.plus_seconds(LEASE_SECONDS).to_string();
            let write = FileWrite {
                branch: BOT_STATE_BRANCH.to_owned(),
                path: LEASE_PATH.to_owned(),
                text: text_of(&file),
                expected_blob_sha: blob,
                message: RENEW_MESSAGE.to_owned(),
            };
            match github.put_file(&self.repo, &write).await {
                Ok(blob) => {
                    self.written = Some((file, blob));
                    return Ok(());
                }
                Err(GitHubError::Conflict { .. }) => {}
                Err(error) if error.is_transient() => {}
                Err(error) => return Err(unavailable(error.to_string())),
            }
        }
        Err(unavailable(format!(
            "the file changed, or the write failed, on every one of {ATTEMPTS} attempts"
        )))
    }

    /// The shard this lease's scope names (`None` for `all`).
    fn shard_of_scope(&self) -> Option<Shard> {
        self.scope.parse().ok()
    }

    /// Gives the lease back: removes this tick's entry (and expired ones).
    ///
    /// # Errors
    /// The warning to report when the lease could not be given back (it then expires on
    /// its own).
    pub async fn release(
        mut self,
        github: &dyn GitHubHistory,
        now: Timestamp,
    ) -> Result<(), String> {
        let fail = |why: String| {
            format!(
                "the tick lease ({}) was not given back ({why}); it expires on its own",
                self.scope
            )
        };
        for _ in 0..ATTEMPTS {
            let (mut file, blob) = match self.written.take() {
                Some((file, blob)) => (file, Some(blob)),
                None => read(github, &self.repo)
                    .await
                    .map_err(|e| fail(e.to_string()))?,
            };
            match file.leases.get(&self.scope) {
                Some(entry) if entry.holder == self.holder => {}
                // Taken over after it expired: nothing of ours to give back.
                _ => return Ok(()),
            }
            file.leases.remove(&self.scope);
            file.leases.retain(|_, entry| !expired(entry, now));
            let write = FileWrite {
                branch: BOT_STATE_BRANCH.to_owned(),
                path: LEASE_PATH.to_owned(),
                text: text_of(&file),
                expected_blob_sha: blob,
                message: RELEASE_MESSAGE.to_owned(),
            };
            match github.put_file(&self.repo, &write).await {
                Ok(_) => return Ok(()),
                // Another tick wrote the file in between, or the write may not have
                // been applied: read it again.
                Err(GitHubError::Conflict { .. }) => {}
                Err(error) if error.is_transient() => {}
                Err(error) => return Err(fail(error.to_string())),
            }
        }
        Err(fail(format!(
            "the file changed, or the write failed, on every one of {ATTEMPTS} attempts"
        )))
    }
}
