//! The work queue: deliveries fold into per-repository lanes, so a burst of events on one
//! pull request costs one evaluation, and no two workers ever act on one repository.
//!
//! * A lane holds what its repository waits for: pull requests by number and by head, the
//!   ready ones after the gated branch moved, and the instant of the oldest event folded in
//!   (for the event-to-decision histogram). Lanes start oldest first.
//! * A lane is taken whole by one worker; events arriving while it runs start a new lane
//!   that waits until that worker is done.
//! * Branch supervision (after a push to a gated branch) is not urgent and shares one
//!   state file: the repositories waiting for it are taken together, by one job that loads
//!   and saves the watermarks once, when no lane is waiting for a free repository; the
//!   repositories it holds take no lane meanwhile.
//! * A resync is global: once asked for, no new job starts; it runs when the jobs in hand
//!   finish, and everything waiting folds into it.

use mp_core::ids::{CommitSha, PrNumber, RepoName};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use tokio::time::Instant;

use crate::route::Work;

/// The waiting work of one repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lane {
    /// Pull requests by number.
    pub numbers: BTreeSet<PrNumber>,
    /// Pull requests by head.
    pub heads: BTreeSet<CommitSha>,
    /// Evaluate the ready pull requests (those with an approval label).
    pub ready_pulls: bool,
    /// When the oldest event folded in arrived.
    pub since: Instant,
    /// How many events folded in.
    pub events: u64,
}

impl Lane {
    fn new(since: Instant) -> Self {
        Self {
            numbers: BTreeSet::new(),
            heads: BTreeSet::new(),
            ready_pulls: false,
            since,
            events: 0,
        }
    }
}

/// What a worker is handed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Job {
    /// One repository's lane.
    Lane(RepoName, Lane),
    /// The branch supervisor of these repositories, under one load and save of the
    /// watermarks; `since` is the oldest push folded in.
    Supervise(BTreeSet<RepoName>, Instant),
    /// The whole tick; `since` is the oldest request for it.
    Resync {
        /// When it was first asked for.
        since: Instant,
    },
}

/// The queue. Not synchronised: the service keeps it behind a mutex.
#[derive(Debug, Default)]
pub struct Queue {
    lanes: BTreeMap<RepoName, Lane>,
    /// Repositories whose gated branch moved, with the oldest push.
    supervise: BTreeMap<RepoName, Instant>,
    /// Repositories whose lane a worker holds.
    running: BTreeSet<RepoName>,
    /// Repositories the supervision job in hand holds.
    supervising: Option<BTreeSet<RepoName>>,
    resync: Option<Instant>,
    resync_running: bool,
}

impl Queue {
    /// Folds `work` in, received at `at`.
    pub fn push(&mut self, work: Work, at: Instant) {
        fn lane(queue: &mut Queue, repo: RepoName, at: Instant) -> &mut Lane {
            let lane = queue.lanes.entry(repo).or_insert_with(|| Lane::new(at));
            lane.events += 1;
            lane
        }
        match work {
            Work::Pulls {
                repo,
                numbers,
                heads,
            } => {
                let lane = lane(self, repo, at);
                lane.numbers.extend(numbers);
                lane.heads.extend(heads);
            }
            Work::BranchMoved { repo, gated } => {
                self.supervise.entry(repo.clone()).or_insert(at);
                if gated {
                    lane(self, repo, at).ready_pulls = true;
                }
            }
            Work::Resync => {
                self.resync.get_or_insert(at);
            }
        }
    }

    /// Jobs waiting: lanes, a supervision batch, a resync.
    pub fn depth(&self) -> usize {
        self.lanes.len()
            + usize::from(!self.supervise.is_empty())
            + usize::from(self.resync.is_some())
    }

    /// How many jobs workers hold.
    pub fn running_jobs(&self) -> usize {
        self.running.len()
            + usize::from(self.supervising.is_some())
            + usize::from(self.resync_running)
    }

    /// Whether a worker is busy.
    pub fn busy(&self) -> bool {
        self.running_jobs() > 0
    }

    fn held(&self, repo: &RepoName) -> bool {
        self.running.contains(repo)
            || self
                .supervising
                .as_ref()
                .is_some_and(|held| held.contains(repo))
    }

    /// The next job a free worker may start, if any: the resync once nothing runs; else
    /// the oldest lane whose repository no worker holds; else the waiting supervision of
    /// the repositories no worker holds (none while a resync waits or runs).
    pub fn take_next(&mut self) -> Option<Job> {
        if self.resync_running {
            return None;
        }
        if let Some(since) = self.resync {
            if self.busy() {
                return None;
            }
            self.resync = None;
            self.resync_running = true;
            // The resync visits every pull request and branch: what waits folds into it.
            self.lanes.clear();
            self.supervise.clear();
            return Some(Job::Resync { since });
        }
        let oldest = self
            .lanes
            .iter()
            .filter(|(repo, _)| !self.held(repo))
            .min_by_key(|(_, lane)| lane.since)
            .map(|(repo, _)| repo.clone());
        if let Some(repo) = oldest {
            let lane = self.lanes.remove(&repo)?;
            self.running.insert(repo.clone());
            return Some(Job::Lane(repo, lane));
        }
        if self.supervising.is_some() {
            return None;
        }
        let free: BTreeSet<RepoName> = self
            .supervise
            .keys()
            .filter(|repo| !self.held(repo))
            .cloned()
            .collect();
        let since = free
            .iter()
            .filter_map(|repo| self.supervise.get(repo))
            .min()
            .copied()?;
        for repo in &free {
            self.supervise.remove(repo);
        }
        self.supervising = Some(free.clone());
        Some(Job::Supervise(free, since))
    }

    /// A worker finished `job` (or it panicked): what it held is free again.
    pub fn done(&mut self, job: &Job) {
        match job {
            Job::Lane(repo, _) => {
                self.running.remove(repo);
            }
            Job::Supervise(..) => self.supervising = None,
            Job::Resync { .. } => self.resync_running = false,
        }
    }
}

/// The deliveries seen lately, by `X-GitHub-Delivery`: a redelivery (GitHub's "Redeliver"
/// button, or a replay) is answered but not acted on twice.
#[derive(Debug)]
pub struct SeenDeliveries {
    order: VecDeque<String>,
    set: BTreeSet<String>,
    capacity: usize,
}

impl SeenDeliveries {
    /// Remembers up to `capacity` deliveries.
    pub fn new(capacity: usize) -> Self {
        Self {
            order: VecDeque::new(),
            set: BTreeSet::new(),
            capacity: capacity.max(1),
        }
    }

    /// Records `id`; `false` when it was already seen.
    pub fn first_time(&mut self, id: &str) -> bool {
        if self.set.contains(id) {
            return false;
        }
        if self.order.len() == self.capacity
            && let Some(old) = self.order.pop_front()
        {
            self.set.remove(&old);
        }
        self.order.push_back(id.to_owned());
        self.set.insert(id.to_owned());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(name: &str) -> RepoName {
        RepoName::parse(name).expect("a repository")
    }

    fn pulls(name: &str, numbers: &[u64]) -> Work {
        Work::Pulls {
            repo: repo(name),
            numbers: numbers.iter().copied().map(PrNumber::new).collect(),
            heads: Vec::new(),
        }
    }

    #[test]
    fn a_burst_on_one_repository_folds_into_one_job() {
        let mut queue = Queue::default();
        let start = Instant::now();
        for _ in 0..50 {
            queue.push(pulls("acme/app", &[1]), Instant::now());
        }
        queue.push(pulls("acme/app", &[2]), Instant::now());
        assert_eq!(queue.depth(), 1);
        let Some(Job::Lane(name, lane)) = queue.take_next() else {
            panic!("a lane");
        };
        assert_eq!(name, repo("acme/app"));
        assert_eq!(lane.events, 51);
        assert_eq!(lane.numbers.len(), 2);
        assert!(lane.since >= start);
        assert_eq!(queue.take_next(), None);
    }

    #[test]
    fn one_worker_per_repository_and_later_events_wait_for_it() {
        let mut queue = Queue::default();
        let now = Instant::now();
        queue.push(pulls("acme/app", &[1]), now);
        queue.push(pulls("acme/lib", &[1]), now);
        let first = queue.take_next().expect("acme/app");
        queue.push(pulls("acme/app", &[3]), now);
        let second = queue.take_next().expect("acme/lib");
        assert!(matches!(&second, Job::Lane(r, _) if *r == repo("acme/lib")));
        assert_eq!(queue.take_next(), None, "acme/app is in hand");
        queue.done(&first);
        let third = queue.take_next().expect("acme/app again");
        assert!(
            matches!(&third, Job::Lane(r, l) if *r == repo("acme/app") && l.numbers.len() == 1)
        );
    }

    #[test]
    fn a_resync_waits_for_the_lanes_in_hand_and_absorbs_the_waiting_ones() {
        let mut queue = Queue::default();
        let now = Instant::now();
        queue.push(pulls("acme/app", &[1]), now);
        let lane = queue.take_next().expect("a lane");
        queue.push(Work::Resync, now);
        queue.push(pulls("acme/lib", &[1]), now);
        assert_eq!(
            queue.take_next(),
            None,
            "no lane starts once a resync waits"
        );
        queue.done(&lane);
        let resync = queue.take_next().expect("the resync");
        assert!(matches!(resync, Job::Resync { .. }));
        assert_eq!(queue.depth(), 0, "the waiting lane folded into the resync");
        queue.push(pulls("acme/lib", &[2]), now);
        assert_eq!(queue.take_next(), None, "lanes wait for the resync");
        queue.done(&resync);
        assert!(matches!(queue.take_next(), Some(Job::Lane(..))));
    }

    #[test]
    fn a_moved_branch_revisits_the_ready_pull_requests_and_supervises_in_one_batch() {
        let mut queue = Queue::default();
        let at = Instant::now();
        queue.push(
            Work::BranchMoved {
                repo: repo("acme/app"),
                gated: true,
            },
            at,
        );
        queue.push(
            Work::BranchMoved {
                repo: repo("acme/old"),
                gated: false,
            },
            at,
        );
        queue.push(
            Work::BranchMoved {
                repo: repo("acme/lib"),
                gated: true,
            },
            at,
        );
        // The lanes first: acme/app's, then acme/lib's.
        let Some(Job::Lane(first, lane)) = queue.take_next() else {
            panic!("a lane")
        };
        assert_eq!(first, repo("acme/app"));
        assert!(lane.ready_pulls);
        let Some(Job::Lane(second, _)) = queue.take_next() else {
            panic!("a lane")
        };
        assert_eq!(second, repo("acme/lib"));
        // Then one supervision job for the repositories no lane holds.
        let Some(Job::Supervise(held, _)) = queue.take_next() else {
            panic!("a batch")
        };
        assert_eq!(held, [repo("acme/old")].into_iter().collect());
        assert_eq!(queue.running_jobs(), 3);
        // A new lane of a repository the batch holds waits for it.
        queue.push(pulls("acme/old", &[1]), at);
        assert_eq!(queue.take_next(), None);
        queue.done(&Job::Supervise(held, at));
        assert!(matches!(queue.take_next(), Some(Job::Lane(r, _)) if r == repo("acme/old")));
        // The two repositories whose lanes ran are supervised next, together.
        queue.done(&Job::Lane(first, Lane::new(at)));
        queue.done(&Job::Lane(second, Lane::new(at)));
        let Some(Job::Supervise(held, _)) = queue.take_next() else {
            panic!("a batch")
        };
        assert_eq!(
            held,
            [repo("acme/app"), repo("acme/lib")].into_iter().collect()
        );
    }

    #[test]
    fn lanes_start_oldest_first() {
        let mut queue = Queue::default();
        let early = Instant::now();
        let late = early + std::time::Duration::from_millis(5);
        queue.push(pulls("zeta/app", &[1]), early);
        queue.push(pulls("acme/app", &[1]), late);
        assert!(matches!(queue.take_next(), Some(Job::Lane(r, _)) if r == repo("zeta/app")));
    }

    #[test]
    fn a_delivery_is_acted_on_once_within_the_window() {
        let mut seen = SeenDeliveries::new(2);
        assert!(seen.first_time("a"));
        assert!(!seen.first_time("a"));
        assert!(seen.first_time("b"));
        assert!(seen.first_time("c"), "evicts a");
        assert!(seen.first_time("a"), "a fell out of the window");
        assert!(!seen.first_time("c"));
    }
}
