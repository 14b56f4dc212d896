//! The tick lease: one file on the governance repository's `bot-state` branch,
//! `bot-state/lease.json`, that keeps two ticks from acting at once (a cron tick and a
//! manual one, two cron jobs, two `mp serve` replicas), which would duplicate receipts,
//! diagnostics and inbox issues (docs/decisions/0028, 0065).
//!
//! * A tick takes the lease after loading its state and before anything else writes, and
//!   gives it back after its final save. The file maps a scope to its holder: `all` for a
//!   whole tick, `I/N` for a shard, each with the instant it expires.
//! * A holder has a stable **identity** (e.g. `serve@host`, the same after a restart) and
//!   an **incarnation** (host, process id, start instant: one running process). An
//!   unexpired entry of another identity blocks a whole tick; it blocks a shard when it is
//!   the whole tick's, the same shard's, or a shard of another count (the repositories
//!   overlap). Shards of one count run side by side, as docs/decisions/0021 allows.
//! * An entry of the *same* identity but another incarnation is taken over at once only
//!   when the caller's [`Liveness`] says that incarnation is gone (a restart after kill -9);
//!   otherwise it blocks like any other holder until it expires (two live copies of one
//!   deployment never act at once).
//! * Every write is pinned to the blob last read: two ticks taking the lease at the same
//!   moment cannot both succeed; the loser reads the file again and finds it held.
//! * An entry expires on its own ([`LeaseTerms::seconds`] after it was last renewed), so
//!   a holder killed half-way blocks the next ones only until then. A renewal that finds
//!   the lease expired, or held by anyone else, reports it [lost](LeaseError::Lost): the
//!   holder stops acting.
//! * A write that fails transiently is tried again after reading the file (an applied
//!   write whose answer was lost shows as this incarnation's own entry). A lease that
//!   still cannot be given back is a warning: it expires.
//! * An entry whose `until` is unreadable or lies further ahead than the longest lease mp
//!   takes ([`MAX_LEASE_SECONDS`]) was not written by mp and holds no one out; one within
//!   it holds everyone out, whatever duration the reader itself uses.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use mp_core::ids::{RepoName, Timestamp};
use mp_core::port::{FileWrite, GitHubError, GitHubHistory};
use mp_core::state::BOT_STATE_BRANCH;

use super::Shard;

/// Where the lease lives on the `bot-state` branch.
pub const LEASE_PATH: &str = "bot-state/lease.json";

/// How long a lease lasts unless renewed (docs/decisions/0065): three minutes, renewed
/// every minute. A holder that dies blocks the others for at most this long.
pub const LEASE_SECONDS: i64 = 3 * 60;

/// The shortest lease duration accepted (`MP_LEASE_SECONDS`, meant for tests).
pub const MIN_LEASE_SECONDS: i64 = 2;

/// The longest lease duration accepted: a longer one would make a hand-written entry of
/// that length look like mp's.
pub const MAX_LEASE_SECONDS: i64 = 30 * 60;

/// How many times taking or giving back the lease re-reads the file after another tick
/// changed it in between.
const ATTEMPTS: u32 = 4;

const TAKE_MESSAGE: &str = "chore(bot-state): take the tick lease";
const RELEASE_MESSAGE: &str = "chore(bot-state): give back the tick lease";
const RENEW_MESSAGE: &str = "chore(bot-state): renew the tick lease";

/// The lease's timing, after Kubernetes' leader election: the lease lasts
/// [`seconds`](Self::seconds); its holder renews it every third of that
/// ([`renew_every`](Self::renew_every)) and stops acting when it has not renewed it within
/// two thirds ([`renew_deadline`](Self::renew_deadline)), a third before anyone else may
/// take it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseTerms {
    seconds: i64,
}

impl Default for LeaseTerms {
    fn default() -> Self {
        Self {
            seconds: LEASE_SECONDS,
        }
    }
}

impl LeaseTerms {
    /// Terms with a lease of `seconds`, clamped to
    /// [`MIN_LEASE_SECONDS`]..=[`MAX_LEASE_SECONDS`].
    pub fn new(seconds: i64) -> Self {
        Self {
            seconds: seconds.clamp(MIN_LEASE_SECONDS, MAX_LEASE_SECONDS),
        }
    }

    /// How long a lease lasts unless renewed.
    pub fn seconds(self) -> i64 {
        self.seconds
    }

    /// How often the holder renews it: a third of the duration.
    pub fn renew_every(self) -> std::time::Duration {
        std::time::Duration::from_millis(u64::try_from(self.seconds * 1000 / 3).unwrap_or(1000))
    }

    /// How long after its last renewal the holder stops acting: two thirds of the
    /// duration, so it has stopped a third of a lease before another holder may start.
    pub fn renew_deadline(self) -> std::time::Duration {
        std::time::Duration::from_millis(u64::try_from(self.seconds * 2000 / 3).unwrap_or(1000))
    }
}

/// One running process holding (or trying to hold) a lease: information to tell two
/// processes of one identity apart, never part of the identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Incarnation {
    /// The host it runs on.
    pub host: String,
    /// Its process id on that host.
    pub pid: u32,
    /// When it started (opaque; sub-second, so a restart with the same pid differs).
    pub started: String,
}

impl std::fmt::Display for Incarnation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} pid {} started {}", self.host, self.pid, self.started)
    }
}

/// Whether an incarnation of this holder's own identity is known to be gone: the adapter
/// looks (e.g. same host and no such process); mp-tick only asks.
pub trait Liveness: Send + Sync {
    /// `true` only when `other` is certainly not running any more. When in doubt, `false`:
    /// the caller then waits for the other's lease to expire.
    fn gone(&self, other: &Incarnation) -> bool;
}

/// A [`Liveness`] that never knows: every other incarnation is presumed alive.
#[derive(Debug, Clone, Copy, Default)]
pub struct PresumeAlive;

impl Liveness for PresumeAlive {
    fn gone(&self, _other: &Incarnation) -> bool {
        false
    }
}

/// Who takes a lease: a stable identity, this process's incarnation, and how to tell
/// whether another incarnation of the identity is gone.
#[derive(Clone)]
pub struct LeaseHolder {
    /// The identity, the same across restarts (e.g. `serve@host`).
    pub identity: String,
    /// This process.
    pub incarnation: Incarnation,
    liveness: Arc<dyn Liveness>,
}

impl std::fmt::Debug for LeaseHolder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaseHolder")
            .field("identity", &self.identity)
            .field("incarnation", &self.incarnation)
            .finish_non_exhaustive()
    }
}

impl PartialEq for LeaseHolder {
    fn eq(&self, other: &Self) -> bool {
        self.identity == other.identity && self.incarnation == other.incarnation
    }
}

impl Eq for LeaseHolder {}

impl Default for LeaseHolder {
    fn default() -> Self {
        Self::new("mp tick", Incarnation::default())
    }
}

impl LeaseHolder {
    /// A holder named `identity`, running as `incarnation`, presuming every other
    /// incarnation alive.
    pub fn new(identity: impl Into<String>, incarnation: Incarnation) -> Self {
        Self {
            identity: identity.into(),
            incarnation,
            liveness: Arc::new(PresumeAlive),
        }
    }

    /// This holder telling gone incarnations by `liveness`.
    #[must_use]
    pub fn with_liveness(mut self, liveness: Arc<dyn Liveness>) -> Self {
        self.liveness = liveness;
        self
    }

    /// Whether `entry` is this very process's.
    fn is_this(&self, entry: &LeaseEntry) -> bool {
        entry.holder == self.identity && entry.incarnation.as_ref() == Some(&self.incarnation)
    }

    /// Whether `entry` is of this identity and its incarnation is certainly gone.
    fn is_gone_self(&self, entry: &LeaseEntry) -> bool {
        entry.holder == self.identity
            && entry
                .incarnation
                .as_ref()
                .is_some_and(|other| other != &self.incarnation && self.liveness.gone(other))
    }
}

impl From<&str> for LeaseHolder {
    fn from(identity: &str) -> Self {
        Self::new(identity, Incarnation::default())
    }
}

impl From<String> for LeaseHolder {
    fn from(identity: String) -> Self {
        Self::new(identity, Incarnation::default())
    }
}

/// One holder of the lease.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeaseEntry {
    /// Who holds it: the stable identity, e.g. `serve@host`.
    pub holder: String,
    /// When it was taken.
    pub since: String,
    /// When it expires.
    pub until: String,
    /// The process holding it (absent in files written before identities were stable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incarnation: Option<Incarnation>,
}

/// The lease file: scope (`all` or `I/N`) to holder.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct LeaseFile {
    #[serde(default)]
    leases: BTreeMap<String, LeaseEntry>,
}

/// Why the lease could not be taken, or is no longer held.
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
    /// A lease this process held is no longer its own: it expired before it was renewed,
    /// or someone else holds it now. The holder must stop writing.
    #[error("the tick lease ({scope}) was lost: {why}; stopping before the next write")]
    Lost {
        /// The scope it held.
        scope: String,
        /// What the renewal found.
        why: String,
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

/// The lease this tick holds, to renew and give back.
#[derive(Debug, Clone)]
pub struct Lease {
    repo: RepoName,
    scope: String,
    holder: LeaseHolder,
    terms: LeaseTerms,
    /// When it expires, as last written.
    until: Timestamp,
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
/// unreadable, or it claims to last longer than any lease mp takes
/// ([`MAX_LEASE_SECONDS`], or `terms` if longer): a hand-written entry must not lock the
/// bot out for good. The bound is not the reader's own duration: a process configured
/// with a longer lease (`MP_LEASE_SECONDS`, or a tick's default) holds a shorter one out.
fn expired(entry: &LeaseEntry, now: Timestamp, terms: LeaseTerms) -> bool {
    let longest = now.plus_seconds(terms.seconds().max(MAX_LEASE_SECONDS));
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
    /// governance repository `repo`, for the default [`LeaseTerms`].
    ///
    /// # Errors
    /// As [`Lease::take_for`].
    pub async fn take(
        github: &dyn GitHubHistory,
        repo: &RepoName,
        shard: Option<Shard>,
        holder: &LeaseHolder,
        now: Timestamp,
    ) -> Result<Self, LeaseError> {
        Self::take_for(github, repo, shard, holder, LeaseTerms::default(), now).await
    }

    /// Takes the lease of `shard` for `holder` at `now`, lasting as `terms` say.
    ///
    /// # Errors
    /// [`LeaseError::Held`] when another holder (another identity, or another incarnation
    /// of this one not known to be gone) holds an overlapping lease;
    /// [`LeaseError::Unavailable`] when the file cannot be read, parsed or written. Nothing
    /// is written in either case.
    pub async fn take_for(
        github: &dyn GitHubHistory,
        repo: &RepoName,
        shard: Option<Shard>,
        holder: &LeaseHolder,
        terms: LeaseTerms,
        now: Timestamp,
    ) -> Result<Self, LeaseError> {
        let scope = scope_of(shard);
        let until = now.plus_seconds(terms.seconds());
        let lease = |written| Self {
            repo: repo.clone(),
            scope: scope.clone(),
            holder: holder.clone(),
            terms,
            until,
            written,
        };
        for _ in 0..ATTEMPTS {
            let (mut file, blob) = read(github, repo).await?;
            file.leases.retain(|_, entry| !expired(entry, now, terms));
            // Our own entry: an earlier attempt was applied though its answer was lost.
            let ours = file
                .leases
                .get(&scope)
                .is_some_and(|entry| holder.is_this(entry) && entry.since == now.to_string());
            if ours {
                return Ok(lease(None));
            }
            // A dead incarnation of this very identity (a restart) is taken back at once;
            // an entry of this very process (it stopped acting when its renewal failed)
            // is written afresh.
            file.leases
                .retain(|_, entry| !holder.is_gone_self(entry) && !holder.is_this(entry));
            if let Some((theirs, entry)) = file
                .leases
                .iter()
                .find(|(theirs, _)| overlaps(&scope, theirs))
            {
                return Err(LeaseError::Held {
                    scope: theirs.clone(),
                    holder: entry.incarnation.as_ref().map_or_else(
                        || entry.holder.clone(),
                        |inc| format!("{} ({inc})", entry.holder),
                    ),
                    until: entry.until.clone(),
                });
            }
            file.leases.insert(
                scope.clone(),
                LeaseEntry {
                    holder: holder.identity.clone(),
                    since: now.to_string(),
                    until: until.to_string(),
                    incarnation: Some(holder.incarnation.clone()),
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
                Ok(blob) => return Ok(lease(Some((file, blob)))),
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

    /// The terms it was taken for.
    pub fn terms(&self) -> LeaseTerms {
        self.terms
    }

    /// When it expires, as last written.
    pub fn until(&self) -> Timestamp {
        self.until
    }

    /// Extends the lease to [`LeaseTerms::seconds`] from `now`, for a holder that runs
    /// longer than a renewal period.
    ///
    /// # Errors
    /// [`LeaseError::Lost`] when the lease had expired at `now` (even if no one took it:
    /// a holder frozen past its lease may not assume nothing happened meanwhile) or the
    /// file names someone else; the caller must stop writing, and may take it afresh.
    /// [`LeaseError::Unavailable`] when the file cannot be read or written: the lease is
    /// as it was and still expires on time.
    pub async fn renew(
        &mut self,
        github: &dyn GitHubHistory,
        now: Timestamp,
    ) -> Result<(), LeaseError> {
        let scope = self.scope.clone();
        let lost = |why: String| LeaseError::Lost {
            scope: scope.clone(),
            why,
        };
        if self.until <= now {
            return Err(lost(format!(
                "it expired at {} before it was renewed (now {now})",
                self.until
            )));
        }
        for _ in 0..ATTEMPTS {
            let (mut file, blob) = match self.written.take() {
                Some((file, blob)) => (file, Some(blob)),
                None => read(github, &self.repo).await?,
            };
            let Some(entry) = file.leases.get_mut(&self.scope) else {
                return Err(lost("its entry is gone from the lease file".to_owned()));
            };
            if !self.holder.is_this(entry) {
                return Err(lost(format!(
                    "{} holds it until {}",
                    entry.incarnation.as_ref().map_or_else(
                        || entry.holder.clone(),
                        |inc| format!("{} ({inc})", entry.holder)
                    ),
                    entry.until
                )));
            }
            let until = now.plus_seconds(self.terms.seconds());
            entry.until = until.to_string();
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
                    self.until = until;
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
                Some(entry) if self.holder.is_this(entry) => {}
                // Taken over after it expired: nothing of ours to give back.
                _ => return Ok(()),
            }
            file.leases.remove(&self.scope);
            file.leases
                .retain(|_, entry| !expired(entry, now, self.terms));
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

#[cfg(test)]
mod tests;
