//! GitHub's merge queue of a branch, as the fakes keep it: an ordered list of entries per
//! branch (front first), each a pull request pinned to the head it was enqueued with
//! (decisions/0078), and the merge groups the queue tests them in (decisions/0083).
//!
//! Entries are added (`enqueuePullRequest`, refused on a stale `expectedHeadOid` or where
//! no queue protects the branch) and removed (`dequeuePullRequest`; a push to the pull
//! request's head; its merge or closing; a failed merge group). The first
//! `max_entries_to_build` entries each have a [`MergeGroup`]: a commit made by the queue's
//! App on the group ahead's head (the branch's head for the first), on an ordinary branch
//! `gh-readonly-queue/<branch>/pr-<N>-<base sha>`, holding every entry ahead and its own.
//! Removing an entry destroys its group and every group behind it (GitHub's `merge_group`
//! `destroyed`: `dequeued` for its own, `invalidated` for those behind, `merged` for a
//! group that landed); each group's creation (`checks_requested`) and end is kept in
//! [`Repo::merge_group_log`]. When the groups are made, judged and landed is
//! `memory::queue`'s part.

use mp_core::context::{PrState, RefUpdateKind};
use mp_core::github_queue::protected_by_merge_queue;
use mp_core::ids::{CommitSha, Login, PrNumber, Timestamp};
use mp_core::port::{QueueEntry, QueueEntryState};

use super::{CiSimulation, Repo, RequiredCheck};

/// GitHub's activity type of a branch moved by its merge queue.
pub const MERGE_QUEUE_MERGE: &str = "merge_queue_merge";

/// The App whose login the fake's merge queue makes, moves and deletes branches as.
pub const MERGE_QUEUE_APP: &str = "github-merge-queue";

/// The prefix of every merge group's branch: `gh-readonly-queue/<branch>/`.
pub const MERGE_GROUP_PREFIX: &str = "gh-readonly-queue/";

/// GitHub's build concurrency when a queue's `max_entries_to_build` is 0: the value its
/// settings start a new queue with (5).
pub const DEFAULT_ENTRIES_TO_BUILD: u32 = 5;

/// The most entries landed together when a queue's `max_entries_to_merge` is 0: the value
/// GitHub's settings start a new queue with (5).
pub const DEFAULT_ENTRIES_TO_MERGE: u32 = 5;

/// The branch of the merge group of pull request `number` on `branch`, made on `base`:
/// `gh-readonly-queue/<branch>/pr-<N>-<base>`. The name carries the SHA of the commit the
/// group is made on (the group ahead's head, or the branch's head for the first), as the
/// refs GitHub's queue creates do.
pub fn merge_group_branch(branch: &str, number: PrNumber, base: &CommitSha) -> String {
    format!("{MERGE_GROUP_PREFIX}{branch}/pr-{number}-{base}")
}

/// One merge group: the commit GitHub's queue tests for a queued pull request, made on the
/// group ahead of it, holding every entry ahead and its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeGroup {
    /// The pull request the group was made for (its entry's).
    pub number: PrNumber,
    /// Its branch, without `refs/heads/` ([`merge_group_branch`]).
    pub head_ref: String,
    /// The commit it was made on: the head of the group ahead, or of the queue's branch.
    pub base: CommitSha,
    /// Its commit: what the required checks must pass on, and what the branch moves to.
    pub head: CommitSha,
    /// The pull requests it brings: every entry ahead of its own, then its own.
    pub entries: Vec<PrNumber>,
    /// When it was made: its checks were requested then.
    pub created_at: Timestamp,
}

/// Why a merge group ended, as GitHub's `merge_group` `destroyed` delivery says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupEnd {
    /// It landed: the branch moved to its head, or past it.
    Merged,
    /// An entry ahead of its own left the queue (or the queue was reordered).
    Invalidated,
    /// Its own entry left the queue: dequeued, its head moved or closed, or its checks
    /// failed or timed out.
    Dequeued,
}

impl GroupEnd {
    /// GitHub's word: `merged`, `invalidated` or `dequeued`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Merged => "merged",
            Self::Invalidated => "invalidated",
            Self::Dequeued => "dequeued",
        }
    }

    /// The reason GitHub's word names.
    pub fn parse(word: &str) -> Option<Self> {
        match word {
            "merged" => Some(Self::Merged),
            "invalidated" => Some(Self::Invalidated),
            "dequeued" => Some(Self::Dequeued),
            _ => None,
        }
    }
}

/// One entry of [`Repo::merge_group_log`]: a merge group made (`destroyed: None`, GitHub's
/// `checks_requested`) or ended (`destroyed`, with why).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeGroupEvent {
    /// The branch the group would land on (`base_ref` without `refs/heads/`).
    pub base_ref: String,
    /// The group, as it was made.
    pub group: MergeGroup,
    /// `None` when it was made; why it ended otherwise.
    pub destroyed: Option<GroupEnd>,
    /// When.
    pub at: Timestamp,
}

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
            // A jump breaks the chain: every group is made again behind the new front.
            self.destroy_groups(&base, 0, GroupEnd::Invalidated, at);
        } else {
            queue.push(record);
        }
        Ok(self
            .queue_entry_of(number)
            .expect("the entry was just added"))
    }

    /// Removes pull request `number` from every merge queue it is in at `at`, destroying its
    /// merge group (`dequeued`) and every group behind it (`invalidated`); whether it was
    /// in one.
    pub fn dequeue(&mut self, number: PrNumber, at: Timestamp) -> bool {
        let found: Vec<(String, usize)> = self
            .queue_entries
            .iter()
            .filter_map(|(branch, queue)| {
                let position = queue.iter().position(|record| record.number == number)?;
                Some((branch.clone(), position))
            })
            .collect();
        for (branch, position) in &found {
            self.destroy_groups(branch, *position, GroupEnd::Dequeued, at);
            if let Some(queue) = self.queue_entries.get_mut(branch) {
                queue.remove(*position);
            }
        }
        self.queue_entries.retain(|_, queue| !queue.is_empty());
        !found.is_empty()
    }

    /// The checks a merge group's head must pass before it lands on `branch`: the queue's
    /// `required_checks`, else the simulated CI's checks by its App, else none.
    pub fn group_required_checks(
        &self,
        branch: &str,
        ci: Option<&CiSimulation>,
    ) -> Vec<RequiredCheck> {
        if let Some(required) = self
            .merge_queues
            .get(branch)
            .and_then(|settings| settings.required_checks.clone())
        {
            return required;
        }
        ci.map(|ci| {
            ci.checks
                .iter()
                .map(|name| RequiredCheck {
                    name: name.clone(),
                    app: ci.app.clone(),
                })
                .collect()
        })
        .unwrap_or_default()
    }

    /// The merge groups of `branch`'s queue, front first (group `i` is entry `i`'s).
    pub fn merge_groups_of(&self, branch: &str) -> &[MergeGroup] {
        self.merge_groups.get(branch).map_or(&[], Vec::as_slice)
    }

    /// Brings the entries' states in line with their groups, as GitHub shows them: an entry
    /// with a merge group is `AWAITING_CHECKS`, one without is `QUEUED`. Other states (a
    /// world's `UNMERGEABLE`, `LOCKED`, `MERGEABLE`) are left as they are.
    pub fn sync_entry_states(&mut self) {
        for (branch, queue) in &mut self.queue_entries {
            let built = self.merge_groups.get(branch).map_or(0, Vec::len);
            for (index, record) in queue.iter_mut().enumerate() {
                record.state = match record.state {
                    QueueEntryState::Queued if index < built => QueueEntryState::AwaitingChecks,
                    QueueEntryState::AwaitingChecks if index >= built => QueueEntryState::Queued,
                    other => other,
                };
            }
        }
    }

    /// Destroys the merge groups of `branch` from position `from` on at `at`: the first
    /// for `first`, those behind it as `invalidated`. Each group's branch is deleted by
    /// the queue's App and its end logged.
    pub fn destroy_groups(&mut self, branch: &str, from: usize, first: GroupEnd, at: Timestamp) {
        let Some(groups) = self.merge_groups.get_mut(branch) else {
            return;
        };
        if from >= groups.len() {
            return;
        }
        let ended: Vec<MergeGroup> = groups.drain(from..).collect();
        if groups.is_empty() {
            self.merge_groups.remove(branch);
        }
        for (index, group) in ended.into_iter().enumerate() {
            let why = if index == 0 {
                first
            } else {
                GroupEnd::Invalidated
            };
            self.end_group(branch, group, why, at);
        }
        self.sync_entry_states();
    }

    /// Deletes `group`'s branch as the queue's App and logs its end.
    pub(crate) fn end_group(
        &mut self,
        branch: &str,
        group: MergeGroup,
        why: GroupEnd,
        at: Timestamp,
    ) {
        if let Ok(app) = Login::for_app(MERGE_QUEUE_APP)
            && self.branches.contains_key(&group.head_ref)
        {
            self.move_branch(
                &group.head_ref,
                None,
                RefUpdateKind::BranchDeletion,
                app,
                at,
            );
        }
        self.merge_group_log.push(MergeGroupEvent {
            base_ref: branch.to_owned(),
            group,
            destroyed: Some(why),
            at,
        });
    }

    /// Drops the entries whose pull request is closed or merged, or whose head moved
    /// since it was enqueued (a push to a queued pull request's head removes it:
    /// decisions/0078).
    pub fn prune_queues(&mut self, at: Timestamp) {
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
            self.dequeue(number, at);
        }
    }
}
