//! The build state machine: one build at a time per repository, batched, bisected on red.

use std::fmt;

use crate::branch::l2::{L2Finding, L2Verdict};
use crate::ids::{CommitSha, Login, PrNumber};

use super::order::Candidate;

/// How a repository's queue builds (`repo_overrides.<repo>.merge`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueSettings {
    /// The most entries one build tests (`batch_max`, default 16, decisions/0059). The build size adapts:
    /// it halves on a red build and grows by one on a green one, up to this (a red build
    /// says more culprits may follow; a run of green builds says they have passed).
    pub batch_max: u32,
    /// How many times a build whose checks failed like infrastructure (cancelled, zero
    /// duration) is rebuilt as it was before it counts as red (`infra_retries`, default 1).
    pub infra_retries: u32,
}

impl Default for QueueSettings {
    fn default() -> Self {
        Self {
            batch_max: crate::config::projects::DEFAULT_BATCH_MAX,
            infra_retries: crate::config::projects::DEFAULT_INFRA_RETRIES,
        }
    }
}

/// One pull request in a build: the head that was merged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The pull request.
    pub pr: PrNumber,
    /// The head merged into the build.
    pub head: CommitSha,
}

impl From<&Candidate> for Entry {
    fn from(candidate: &Candidate) -> Self {
        Self {
            pr: candidate.pr,
            head: candidate.head.clone(),
        }
    }
}

/// A build: the default branch's head `base` with `entries` merged onto it in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Build {
    /// Numbers builds of the repository, from 1.
    pub id: u64,
    /// The default branch's head the build starts from.
    pub base: CommitSha,
    /// The pull requests merged onto `base`, in order.
    pub entries: Vec<Entry>,
    /// How many times this set of entries has been rebuilt after an infrastructure failure.
    pub attempt: u32,
}

impl Build {
    /// Whether `pr` is one of the build's entries.
    pub fn holds(&self, pr: PrNumber) -> bool {
        self.entries.iter().any(|e| e.pr == pr)
    }

    fn numbers(&self) -> String {
        let numbers: Vec<String> = self.entries.iter().map(|e| format!("#{}", e.pr)).collect();
        numbers.join(", ")
    }
}

impl fmt::Display for Build {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "build {} of {} on {}",
            self.id,
            self.numbers(),
            self.base.short()
        )
    }
}

/// What the required checks on a build's staging commit say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildVerdict {
    /// Not all reported yet.
    Pending,
    /// Every required check passed, from the expected App (and workflow, when bound).
    Green,
    /// A required check failed (or never reported within the timeout).
    Red {
        /// What failed, one line each.
        failing: Vec<String>,
    },
    /// Only infrastructure failures: cancelled, zero duration, skipped.
    Infra {
        /// Why, one line each.
        reasons: Vec<String>,
    },
}

/// Reads a build's verdict from the L2 verdict of its staging commit
/// ([`crate::branch::revalidate_bound`], the rules L2 applies to every commit on the
/// default branch). `young` is whether the staging commit was pushed less than
/// `check_report_timeout_minutes` ago: a missing check is then still to come, and so is
/// one only another App has reported (it is not counted, and does not turn the build red).
pub fn build_verdict(verdict: &L2Verdict, young: bool) -> BuildVerdict {
    let lines = |findings: &[L2Finding]| findings.iter().map(ToString::to_string).collect();
    match verdict {
        L2Verdict::Passed => BuildVerdict::Green,
        L2Verdict::Infra { reasons } => {
            if reasons
                .iter()
                .any(|r| matches!(r, L2Finding::NotCompleted { .. } | L2Finding::NoRuns))
            {
                BuildVerdict::Pending
            } else {
                BuildVerdict::Infra {
                    reasons: lines(reasons),
                }
            }
        }
        L2Verdict::Real { failures } => {
            // A check that only another App (or another workflow) has reported on is one
            // the expected App has not reported yet: anyone can publish a run of any name on
            // the staging commit, and such a run must neither land nor break a build.
            let only_missing = failures.iter().all(|f| {
                f.is_not_yet_reported() || matches!(f, L2Finding::UntrustedPublisher { .. })
            });
            if only_missing && young {
                BuildVerdict::Pending
            } else {
                BuildVerdict::Red {
                    failing: lines(failures),
                }
            }
        }
    }
}

/// What GitHub shows of the current build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildObservation {
    /// The staging branch is mp's push of this build; its checks say this.
    Checks(BuildVerdict),
    /// Someone other than mp's identity pushed the staging branch after mp (GitHub's
    /// activity log): its checks test something else.
    PushedByOther {
        /// Who pushed (`None`: GitHub does not say).
        by: Option<Login>,
    },
    /// The staging branch does not point at the build's commit, or is gone.
    Missing,
}

/// What the driver sees this tick.
#[derive(Debug, Clone, Copy)]
pub struct Observation<'a> {
    /// The default branch's head.
    pub main_head: &'a CommitSha,
    /// The queue in order ([`super::order`]): who may be built, with their approved heads.
    pub queue: &'a [Candidate],
    /// What GitHub shows of the current build (ignored when there is none).
    pub build: Option<&'a BuildObservation>,
}

/// Why a build no longer stands for what it claims, and is thrown away.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Discard {
    /// An entry left the queue: closed, its head moved, its approval no longer binds, or
    /// it now waits for the owner.
    EntryLeft {
        /// The pull request.
        pr: PrNumber,
    },
    /// The default branch no longer points at the build's base: something landed outside
    /// the queue (or the branch was force-pushed), so the build tests a stale base.
    MainMoved {
        /// The default branch's head now.
        now: CommitSha,
    },
    /// Someone other than mp pushed the staging branch.
    StagingPushedByOther {
        /// Who, if GitHub says.
        by: Option<Login>,
    },
    /// The staging branch does not point at the build.
    StagingMissing,
}

impl Discard {
    /// Stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::EntryLeft { .. } => "queue_entry_left",
            Self::MainMoved { .. } => "queue_base_moved",
            Self::StagingPushedByOther { .. } => "queue_staging_pushed_by_other",
            Self::StagingMissing => "queue_staging_missing",
        }
    }
}

impl fmt::Display for Discard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::EntryLeft { pr } => write!(
                f,
                "#{pr} left the queue (closed, a new head, or its approval no longer binds)"
            ),
            Self::MainMoved { now } => write!(
                f,
                "the default branch moved to {} outside the queue",
                now.short()
            ),
            Self::StagingPushedByOther { by } => match by {
                Some(by) => write!(
                    f,
                    "{by} pushed the staging branch: its checks prove nothing about the build"
                ),
                None => f.write_str(
                    "someone GitHub does not name pushed the staging branch: its checks prove nothing about the build",
                ),
            },
            Self::StagingMissing => f.write_str("the staging branch does not point at the build"),
        }
    }
}

/// The next thing the driver does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Nothing is queued.
    Idle,
    /// Build this: merge each entry's head onto `base` in order, point the staging branch
    /// at the result, and let CI run.
    Start(Build),
    /// The build's checks have not all reported.
    Wait(Build),
    /// Fast-forward the default branch to the build's staging commit: every entry lands.
    Land(Build),
    /// Throw the build away (and build again next step).
    Discard {
        /// The build.
        build: Build,
        /// Why.
        why: Discard,
    },
    /// The build is red and held more than one entry: they are built again, `next` at a
    /// time, to find which failed (bisection).
    Split {
        /// The red build.
        build: Build,
        /// What failed, one line each.
        failing: Vec<String>,
        /// How many entries the next build takes.
        next: u32,
    },
    /// Remove a pull request from the queue: it failed alone.
    Eject {
        /// The pull request.
        entry: Entry,
        /// The build that proved it.
        build: Build,
        /// What failed, one line each.
        failing: Vec<String>,
    },
}

impl Step {
    /// Stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Idle => "queue_idle",
            Self::Start(_) => "queue_build_started",
            Self::Wait(_) => "queue_build_pending",
            Self::Land(_) => "queue_landed",
            Self::Discard { why, .. } => why.code(),
            Self::Split { .. } => "queue_build_red",
            Self::Eject { .. } => "queue_ejected",
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Idle => f.write_str("the queue is empty"),
            Self::Start(build) => write!(f, "start {build}"),
            Self::Wait(build) => write!(f, "{build}: waiting for its checks"),
            Self::Land(build) => write!(f, "{build} is green: land it"),
            Self::Discard { build, why } => write!(f, "{build} discarded: {why}"),
            Self::Split {
                build,
                failing,
                next,
            } => write!(
                f,
                "{build} is red ({}): its entries are built again, {next} at a time",
                failing.join("; ")
            ),
            Self::Eject {
                entry,
                build,
                failing,
            } => write!(
                f,
                "#{} leaves the queue: alone in {build} it failed: {}",
                entry.pr,
                failing.join("; ")
            ),
        }
    }
}

/// A repository's queue between ticks: the build CI is testing, the build size, and the
/// entries of a red build still to be cleared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueState {
    /// How many entries the next build takes (1..=`batch_max`).
    pub window: u32,
    /// The id the next build gets.
    pub next_id: u64,
    /// The build CI is testing, if any.
    pub build: Option<Build>,
    /// The entries of a red build not yet cleared, in order: they are built (in halves)
    /// before anything else, until each has landed or been ejected.
    pub suspects: Vec<Entry>,
}

impl QueueState {
    /// An empty queue whose first build takes up to `settings.batch_max` entries.
    pub fn new(settings: QueueSettings) -> Self {
        Self {
            window: settings.batch_max.max(1),
            next_id: 1,
            build: None,
            suspects: Vec::new(),
        }
    }

    /// Decides the next step and moves the state past it. The driver performs the step and
    /// calls again while it returns [`Step::Land`], [`Step::Discard`], [`Step::Split`] or [`Step::Eject`]
    /// (each ends the current build); [`Step::Start`], [`Step::Wait`] and [`Step::Idle`] end
    /// the tick's work on the queue. A landing must be observed (`main_head` = the build's
    /// staging commit) before the next call.
    pub fn step(&mut self, settings: QueueSettings, seen: Observation<'_>) -> Step {
        let batch_max = settings.batch_max.max(1);
        // Suspects that left the queue are no longer suspects.
        self.suspects
            .retain(|s| seen.queue.iter().any(|c| c.pr == s.pr && c.head == s.head));
        if let Some(build) = self.build.take() {
            if let Some(left) = build
                .entries
                .iter()
                .find(|e| !seen.queue.iter().any(|c| c.pr == e.pr && c.head == e.head))
            {
                let pr = left.pr;
                return Step::Discard {
                    build,
                    why: Discard::EntryLeft { pr },
                };
            }
            if &build.base != seen.main_head {
                return Step::Discard {
                    build,
                    why: Discard::MainMoved {
                        now: seen.main_head.clone(),
                    },
                };
            }
            let verdict = match seen.build {
                None | Some(BuildObservation::Missing) => {
                    return Step::Discard {
                        build,
                        why: Discard::StagingMissing,
                    };
                }
                Some(BuildObservation::PushedByOther { by }) => {
                    return Step::Discard {
                        build,
                        why: Discard::StagingPushedByOther { by: by.clone() },
                    };
                }
                Some(BuildObservation::Checks(verdict)) => verdict,
            };
            return match verdict {
                BuildVerdict::Pending => {
                    self.build = Some(build.clone());
                    Step::Wait(build)
                }
                BuildVerdict::Green => {
                    self.suspects.retain(|s| !build.holds(s.pr));
                    self.window = (self.window + 1).min(batch_max);
                    Step::Land(build)
                }
                BuildVerdict::Infra { .. } if build.attempt < settings.infra_retries => {
                    let retry = Build {
                        id: self.take_id(),
                        attempt: build.attempt + 1,
                        ..build
                    };
                    self.build = Some(retry.clone());
                    Step::Start(retry)
                }
                BuildVerdict::Infra { reasons: failing } | BuildVerdict::Red { failing } => {
                    self.red(build, failing.clone())
                }
            };
        }
        let next = self.next_entries(seen.queue);
        if next.is_empty() {
            return Step::Idle;
        }
        let build = Build {
            id: self.take_id(),
            base: seen.main_head.clone(),
            entries: next,
            attempt: 0,
        };
        self.build = Some(build.clone());
        Step::Start(build)
    }

    /// A red build: alone, its entry is the culprit; else its entries become the suspects
    /// and the next builds take half of them at a time.
    fn red(&mut self, build: Build, failing: Vec<String>) -> Step {
        if let [entry] = build.entries.as_slice() {
            let entry = entry.clone();
            self.suspects.retain(|s| s.pr != entry.pr);
            return Step::Eject {
                entry,
                build,
                failing,
            };
        }
        let size = u32::try_from(build.entries.len()).unwrap_or(u32::MAX);
        self.window = (size / 2).max(1);
        // The build's entries first (they were first in the queue), then any suspects left
        // from before that it did not hold.
        let mut suspects = build.entries.clone();
        suspects.extend(self.suspects.iter().filter(|s| !build.holds(s.pr)).cloned());
        self.suspects = suspects;
        Step::Split {
            build,
            failing,
            next: self.window,
        }
    }

    /// The entries of the next build: the first `window` suspects while there are any,
    /// else the first `window` entries of the queue.
    fn next_entries(&self, queue: &[Candidate]) -> Vec<Entry> {
        let window = usize::try_from(self.window.max(1)).unwrap_or(usize::MAX);
        if self.suspects.is_empty() {
            queue.iter().take(window).map(Entry::from).collect()
        } else {
            self.suspects.iter().take(window).cloned().collect()
        }
    }

    fn take_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }
}
