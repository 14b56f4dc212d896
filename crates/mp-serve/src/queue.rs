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
//! * A resync is cut in two (docs/decisions/0066). Its global part (the watermarks, the
//!   decision inbox, the burn-in clock, the drift check) is one short job that runs alone:
//!   once asked for, no new job starts until the jobs in hand finish and it has run. Its
//!   repository part is one job per repository ([`Job::ResyncRepo`]), planned when the
//!   global part ends, which takes the repository like a lane: the webhooks' lanes go
//!   first, so an event waits for at most the repository jobs in hand, and the resync
//!   jobs leave one worker free for them. A resync is complete when every repository's
//!   job has finished; a resync asked for meanwhile starts after it.
//! * Supervision batches are at most [`SUPERVISE_BATCH`] repositories, so a resync that
//!   queues every repository's supervision never holds them all at once.

use mp_core::ids::{CommitSha, PrNumber, RepoName};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use tokio::time::Instant;

use crate::route::Work;

/// The most repositories one supervision job takes.
pub const SUPERVISE_BATCH: usize = 8;

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
    /// The global part of a resync; `since` is the oldest request for it.
    Resync {
        /// When it was first asked for.
        since: Instant,
    },
    /// One repository's part of the resync in progress: every open pull request and the
    /// merge queue; its branch supervision is queued when it ends.
    ResyncRepo(RepoName),
}

/// How far the resync in progress, or the last one, got.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResyncProgress {
    /// Repositories whose resync job finished.
    pub read: usize,
    /// Repositories the resync covers.
    pub of: usize,
    /// Resyncs completed so far.
    pub completed: u64,
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
    /// The repositories of the resync in progress whose job has not started, in order.
    resync_repos: VecDeque<RepoName>,
    /// The repositories whose resync job a worker holds.
    resync_held: BTreeSet<RepoName>,
    progress: ResyncProgress,
    /// The resync in progress was abandoned: it does not complete.
    resync_abandoned: bool,
    /// How many resync repository jobs may run at once (0: as many as there are workers).
    background: usize,
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
            Work::MergeGroup { repo, number } => {
                let lane = lane(self, repo, at);
                lane.numbers.insert(number);
                lane.ready_pulls = true;
            }
            Work::Resync => {
                self.resync.get_or_insert(at);
            }
        }
    }

    /// A queue whose resync repository jobs take at most `limit` workers at once (the
    /// service leaves one worker to the webhooks' lanes).
    pub fn with_background_limit(limit: usize) -> Self {
        Self {
            background: limit,
            ..Self::default()
        }
    }

    /// Jobs waiting: lanes, a supervision batch, a resync, the repositories of the resync in
    /// progress.
    pub fn depth(&self) -> usize {
        self.lanes.len()
            + usize::from(!self.supervise.is_empty())
            + usize::from(self.resync.is_some())
            + self.resync_repos.len()
    }

    /// How many jobs workers hold.
    pub fn running_jobs(&self) -> usize {
        self.running.len()
            + usize::from(self.supervising.is_some())
            + usize::from(self.resync_running)
            + self.resync_held.len()
    }

    /// How far the resync in progress (or the last one) got.
    pub fn resync_progress(&self) -> ResyncProgress {
        self.progress
    }

    /// Whether a resync is under way: its global part runs, or repositories of it wait or
    /// run.
    pub fn resync_in_progress(&self) -> bool {
        self.resync_running || !self.resync_repos.is_empty() || !self.resync_held.is_empty()
    }

    /// The global part of a resync ended well: `repos` are its repository jobs, in order.
    /// With none, the resync is complete at once.
    pub fn plan_resync(&mut self, repos: impl IntoIterator<Item = RepoName>) {
        self.resync_repos = repos.into_iter().collect();
        self.resync_abandoned = false;
        self.progress.read = 0;
        self.progress.of = self.resync_repos.len();
        if self.resync_repos.is_empty() {
            self.progress.completed += 1;
        }
    }

    /// When the oldest event waiting for each repository arrived: the lanes not yet taken.
    pub fn waiting_since(&self) -> BTreeMap<RepoName, Instant> {
        self.lanes
            .iter()
            .map(|(repo, lane)| (repo.clone(), lane.since))
            .collect()
    }

    /// Whether a worker is busy.
    pub fn busy(&self) -> bool {
        self.running_jobs() > 0
    }

    fn held(&self, repo: &RepoName) -> bool {
        self.running.contains(repo)
            || self.resync_held.contains(repo)
            || self
                .supervising
                .as_ref()
                .is_some_and(|held| held.contains(repo))
    }

    /// The next job a free worker may start, if any: the global part of a resync once
    /// nothing runs (none starts while it waits or runs); else the oldest lane whose
    /// repository no worker holds; else the next repository of the resync in progress that
    /// no worker holds, within the background limit; else the waiting supervision of at
    /// most [`SUPERVISE_BATCH`] repositories no worker holds.
    pub fn take_next(&mut self) -> Option<Job> {
        if self.resync_running {
            return None;
        }
        if let Some(since) = self.resync
            && !self.resync_in_progress()
        {
            if self.busy() {
                return None;
            }
            self.resync = None;
            self.resync_running = true;
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
        if self.background == 0 || self.resync_held.len() < self.background {
            let next = self.resync_repos.iter().position(|repo| !self.held(repo));
            if let Some(repo) = next.and_then(|at| self.resync_repos.remove(at)) {
                self.resync_held.insert(repo.clone());
                return Some(Job::ResyncRepo(repo));
            }
        }
        if self.supervising.is_some() {
            return None;
        }
        let free: BTreeSet<RepoName> = self
            .supervise
            .keys()
            .filter(|repo| !self.held(repo))
            .take(SUPERVISE_BATCH)
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
            Job::ResyncRepo(repo) => {
                if self.resync_held.remove(repo) && !self.resync_abandoned {
                    self.progress.read += 1;
                    if self.resync_repos.is_empty() && self.resync_held.is_empty() {
                        self.progress.completed += 1;
                    }
                }
            }
        }
    }

    /// Gives the resync in progress up (its repository jobs cannot act: the lease is not
    /// held): the repositories still waiting are dropped, and it does not complete. The
    /// next resync reads them.
    pub fn abandon_resync(&mut self) {
        if self.resync_in_progress() {
            self.resync_repos.clear();
            self.resync_abandoned = true;
        }
    }

    /// Queues the branch supervision of `repo` (its resync job ended).
    pub fn supervise_later(&mut self, repo: RepoName, at: Instant) {
        self.supervise.entry(repo).or_insert(at);
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
    fn a_merge_group_asks_for_its_pull_request_and_the_ready_ones() {
        let mut queue = Queue::default();
        let now = Instant::now();
        queue.push(
            Work::MergeGroup {
                repo: repo("acme/app"),
                number: PrNumber::new(7),
            },
            now,
        );
        let lane = &queue.lanes[&repo("acme/app")];
        assert!(
            lane.ready_pulls,
            "the entries ahead are ready pull requests"
        );
        assert_eq!(
            lane.numbers.iter().copied().collect::<Vec<_>>(),
            [PrNumber::new(7)]
        );
        assert!(queue.supervise.is_empty(), "no branch moved");
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
    fn a_resync_waits_for_the_jobs_in_hand_then_its_repositories_go_between_the_lanes() {
        let mut queue = Queue::with_background_limit(1);
        let now = Instant::now();
        queue.push(pulls("acme/app", &[1]), now);
        let lane = queue.take_next().expect("a lane");
        queue.push(Work::Resync, now);
        queue.push(pulls("acme/lib", &[1]), now);
        assert_eq!(
            queue.take_next(),
            None,
            "the resync's global part waits for the jobs in hand, and holds new ones"
        );
        queue.done(&lane);
        let global = queue.take_next().expect("the resync's global part");
        assert!(matches!(global, Job::Resync { .. }));
        assert_eq!(queue.take_next(), None, "the global part runs alone");
        queue.plan_resync([repo("acme/app"), repo("acme/lib"), repo("acme/web")]);
        queue.done(&global);
        assert_eq!(
            queue.resync_progress(),
            ResyncProgress {
                read: 0,
                of: 3,
                completed: 0
            }
        );
        // The event that arrived before the resync is served first.
        assert!(matches!(queue.take_next(), Some(Job::Lane(r, _)) if r == repo("acme/lib")));
        let first = queue.take_next().expect("a resync job");
        assert_eq!(first, Job::ResyncRepo(repo("acme/app")));
        assert_eq!(
            queue.take_next(),
            None,
            "one resync job at a time under a background limit of one; acme/lib is in hand"
        );
        // An event during the resync starts before the next repository's resync job.
        queue.push(pulls("acme/web", &[7]), now);
        assert!(matches!(queue.take_next(), Some(Job::Lane(r, _)) if r == repo("acme/web")));
        queue.done(&first);
        assert_eq!(queue.resync_progress().read, 1);
        // acme/lib's lane and acme/web's lane are in hand: their resync jobs wait.
        assert_eq!(queue.take_next(), None);
        queue.done(&Job::Lane(repo("acme/lib"), Lane::new(now)));
        let second = queue.take_next().expect("acme/lib's resync job");
        assert_eq!(second, Job::ResyncRepo(repo("acme/lib")));
        // A lane of a repository whose resync job runs waits for it.
        queue.push(pulls("acme/lib", &[2]), now);
        assert_eq!(queue.take_next(), None);
        // A resync asked for meanwhile waits for this one to complete.
        queue.push(Work::Resync, now);
        queue.done(&second);
        assert!(matches!(queue.take_next(), Some(Job::Lane(r, _)) if r == repo("acme/lib")));
        queue.done(&Job::Lane(repo("acme/web"), Lane::new(now)));
        let third = queue.take_next().expect("acme/web's resync job");
        assert_eq!(third, Job::ResyncRepo(repo("acme/web")));
        assert!(queue.resync_in_progress());
        queue.done(&third);
        assert_eq!(
            queue.resync_progress(),
            ResyncProgress {
                read: 3,
                of: 3,
                completed: 1
            }
        );
        assert_eq!(
            queue.take_next(),
            None,
            "the next resync waits for acme/lib's lane"
        );
        queue.done(&Job::Lane(repo("acme/lib"), Lane::new(now)));
        let global = queue.take_next().expect("the next resync");
        assert!(matches!(global, Job::Resync { .. }));
        // Given up (the lease was lost): it does not complete, and what waited is dropped.
        queue.plan_resync([repo("acme/app"), repo("acme/lib")]);
        queue.done(&global);
        let app = queue.take_next().expect("acme/app's resync job");
        queue.abandon_resync();
        assert_eq!(queue.depth(), 0);
        queue.done(&app);
        assert_eq!(queue.resync_progress().completed, 1);
        assert!(!queue.resync_in_progress());
    }

    #[test]
    fn no_repository_is_held_by_two_jobs_whatever_the_order() {
        // Every interleaving of pushes, takes and dones over three repositories keeps the
        // queue's invariant: a repository is in at most one job in hand.
        let names = ["acme/a", "acme/b", "acme/c"];
        let now = Instant::now();
        for seed in 0u64..300 {
            let mut queue = Queue::with_background_limit(2);
            let mut held: Vec<Job> = Vec::new();
            let mut state = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            for _ in 0..60 {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let pick = usize::try_from(state >> 60).unwrap_or(0);
                let name = names[pick % 3];
                match pick % 6 {
                    0 | 1 => queue.push(pulls(name, &[1]), now),
                    2 => queue.push(
                        Work::BranchMoved {
                            repo: repo(name),
                            gated: pick % 2 == 0,
                        },
                        now,
                    ),
                    3 => queue.push(Work::Resync, now),
                    4 if !held.is_empty() => {
                        let job = held.remove(pick % held.len());
                        if matches!(job, Job::Resync { .. }) {
                            queue.plan_resync(names.iter().map(|n| repo(n)));
                        }
                        queue.done(&job);
                    }
                    _ => {
                        if held.len() < 4
                            && let Some(job) = queue.take_next()
                        {
                            held.push(job);
                        }
                    }
                }
                let mut seen = BTreeSet::new();
                for job in &held {
                    let repos: Vec<RepoName> = match job {
                        Job::Lane(r, _) | Job::ResyncRepo(r) => vec![r.clone()],
                        Job::Supervise(rs, _) => rs.iter().cloned().collect(),
                        Job::Resync { .. } => {
                            assert_eq!(held.len(), 1, "the global part runs alone");
                            Vec::new()
                        }
                    };
                    for r in repos {
                        assert!(seen.insert(r.clone()), "{r} held twice (seed {seed})");
                    }
                }
            }
        }
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
