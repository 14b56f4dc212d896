//! GitHub's merge queue of a branch, as the fakes keep it: an ordered list of entries per
//! branch (front first), each a pull request pinned to the head it was enqueued with
//! (decisions/0078).
//!
//! What the fakes model, and what they do not yet: entries are added
//! (`enqueuePullRequest`, refused on a stale `expectedHeadOid` or where no queue protects
//! the branch), removed (`dequeuePullRequest`; a push to the pull request's head; its
//! merge or closing), and landed one by one from the front once the world's required
//! checks (`ci:`) are green on the entry's head. Merge groups, `gh-readonly-queue/...`
//! branches, `merge_group` events, grouping and build concurrency are not simulated.

use mp_core::context::PrState;
use mp_core::github_queue::protected_by_merge_queue;
use mp_core::ids::{CommitSha, Login, PrNumber, Timestamp};
use mp_core::port::{QueueEntry, QueueEntryState};

use super::Repo;

/// One pull request in the merge queue of a branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueRecord {
    /// The pull request.
    pub number: PrNumber,
    /// The head it was enqueued with: what the queue lands.
    pub head: CommitSha,
    /// When it was enqueued.
    pub enqueued_at: Timestamp,
    /// Who enqueued it.
    pub enqueuer: Login,
    /// Whether it was added at the front (`jump: true`).
    pub jump: bool,
    /// Its state.
    pub state: QueueEntryState,
}

/// Why the queue refused to add a pull request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnqueueRefused {
    /// The pull request's head is not the expected one; nothing was enqueued.
    HeadMoved,
    /// Anything else, with the words the fake answers.
    Refused(String),
}

/// The words GitHub's merge queue refuses a stale `expectedHeadOid` with, as the fakes give
/// them (decisions/0078: GitHub's exact words are not published).
pub const STALE_HEAD_MESSAGE: &str = "The expected head OID does not match the pull request's head";

impl Repo {
    /// Whether a merge queue protects `branch` (its rules list `merge_queue`).
    pub fn has_merge_queue(&self, branch: &str) -> bool {
        self.branch_rules
            .get(branch)
            .is_some_and(|rules| protected_by_merge_queue(rules))
    }

    /// The entries of `branch`'s merge queue as GitHub shows them, front first, positions
    /// from 1; `None` when no merge queue protects the branch.
    pub fn merge_queue_view(&self, branch: &str) -> Option<Vec<QueueEntry>> {
        if !self.has_merge_queue(branch) {
            return None;
        }
        let records = self
            .queue_entries
            .get(branch)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        Some(
            records
                .iter()
                .zip(1u32..)
                .map(|(record, position)| QueueEntry {
                    number: record.number,
                    head: record.head.clone(),
                    position,
                    state: record.state,
                    enqueued_at: Some(record.enqueued_at),
                    enqueuer: Some(record.enqueuer.clone()),
                })
                .collect(),
        )
    }

    /// The entry of pull request `number` in its base branch's queue, if it is queued.
    pub fn queue_entry_of(&self, number: PrNumber) -> Option<QueueEntry> {
        let pull = self.pull(number)?;
        self.merge_queue_view(&pull.base_ref)?
            .into_iter()
            .find(|entry| entry.number == number)
    }

    /// Adds pull request `number` to its base branch's merge queue, as `enqueuer` at `at`,
    /// pinned to `expected_head` (its current head when `None`); at the front when `jump`.
    ///
    /// # Errors
    /// [`EnqueueRefused::HeadMoved`] for a stale `expected_head`;
    /// [`EnqueueRefused::Refused`] for a pull request that is not open, is not mergeable,
    /// is already queued, or whose base branch has no merge queue.
    pub fn enqueue(
        &mut self,
        number: PrNumber,
        expected_head: Option<&CommitSha>,
        enqueuer: Login,
        at: Timestamp,
        jump: bool,
    ) -> Result<QueueEntry, EnqueueRefused> {
        let refused = |words: &str| Err(EnqueueRefused::Refused(words.to_owned()));
        let Some(pull) = self.pull(number) else {
            return refused("Could not resolve to a PullRequest");
        };
        if pull.state != PrState::Open || pull.merged {
            return refused("Pull request is closed");
        }
        if !self.has_merge_queue(&pull.base_ref) {
            return refused("Merge queue is not enabled for the base branch of this pull request");
        }
        if expected_head.is_some_and(|head| head != &pull.head_sha) {
            return Err(EnqueueRefused::HeadMoved);
        }
        if !pull.mergeable {
            return refused("Pull request is not mergeable");
        }
        let base = pull.base_ref.clone();
        let head = pull.head_sha.clone();
        let queue = self.queue_entries.entry(base.clone()).or_default();
        if queue.iter().any(|record| record.number == number) {
            return refused("Pull request is already in the merge queue");
        }
        let record = QueueRecord {
            number,
            head,
            enqueued_at: at,
            enqueuer,
            jump,
            state: QueueEntryState::Queued,
        };
        if jump {
            queue.insert(0, record);
        } else {
            queue.push(record);
        }
        Ok(self
            .queue_entry_of(number)
            .expect("the entry was just added"))
    }

    /// Removes pull request `number` from every merge queue it is in; whether it was in one.
    pub fn dequeue(&mut self, number: PrNumber) -> bool {
        let mut removed = false;
        for queue in self.queue_entries.values_mut() {
            let before = queue.len();
            queue.retain(|record| record.number != number);
            removed |= queue.len() != before;
        }
        self.queue_entries.retain(|_, queue| !queue.is_empty());
        removed
    }

    /// Drops the entries whose pull request is closed or merged, or whose head moved
    /// since it was enqueued (a push to a queued pull request's head removes it:
    /// decisions/0078).
    pub fn prune_queues(&mut self) {
        let stale: Vec<PrNumber> = self
            .queue_entries
            .values()
            .flatten()
            .filter(|record| {
                self.pull(record.number).is_none_or(|pull| {
                    pull.state != PrState::Open || pull.merged || pull.head_sha != record.head
                })
            })
            .map(|record| record.number)
            .collect();
        for number in stale {
            self.dequeue(number);
        }
    }
}
