//! GitHub's record of a pull request leaving its merge queue without merging
//! (`RemovedFromMergeQueueEvent` in the pull request's timeline): who removed it, at which
//! head, why. The fakes keep one per removal, in order (decisions/0085); they live only in
//! the running world (a world file starts with none).

use mp_core::ids::{CommitSha, Login, PrNumber, Timestamp};

use super::Repo;

/// One removal of a pull request from a merge queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueRemovalRecord {
    /// The pull request.
    pub number: PrNumber,
    /// The head it was queued at (`beforeCommit`).
    pub head: CommitSha,
    /// Who removed it: a person, an App's bot, or the merge queue's App.
    pub actor: Login,
    /// Why, in the fake's words (`reason`).
    pub reason: String,
    /// When.
    pub at: Timestamp,
}

impl Repo {
    /// Records that `number`, queued at `head`, left the queue, removed by `actor`.
    pub fn record_queue_removal(
        &mut self,
        number: PrNumber,
        head: CommitSha,
        actor: Login,
        reason: impl Into<String>,
        at: Timestamp,
    ) {
        self.queue_removals.push(QueueRemovalRecord {
            number,
            head,
            actor,
            reason: reason.into(),
            at,
        });
    }

    /// The last removal of `number` from a merge queue, if any.
    pub fn last_queue_removal(&self, number: PrNumber) -> Option<&QueueRemovalRecord> {
        self.queue_removals
            .iter()
            .rev()
            .find(|r| r.number == number)
    }
}
