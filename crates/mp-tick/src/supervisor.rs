//! The branch supervisor (bot.md §11-§13): what landed on the default branch since the
//! last tick, per supervised repository (audit-only ones included), goes through the L5
//! hooks and L2 post-merge re-validation, and every finding becomes one deduplicated
//! incident issue in the governance repository.
//!
//! What landed, who landed it and when come from GitHub's activity log of the branch, never
//! from the commits' own metadata (decisions/0044). Per repository and tick:
//!
//! 1. A layer without a watermark bootstraps at the current head and scans nothing older
//!    (metric `bootstrapped`).
//! 2. The branch's activity log is read once. A layer's new updates are the ones logged
//!    since the branch was last at its watermark, chained by their tips
//!    ([`mp_core::branch::updates_since`]). A watermark the log never shows (history
//!    rewritten past it, a log that does not reach back, a watermark mp did not write)
//!    moves to the head and one `decision:watermark-lost` incident says so. A log that does
//!    not lead to the head yet makes the layer wait, with a warning.
//! 3. Each update's commits are read with `compare` from the tip before it: every commit
//!    the update brought, second parents and back-dated commits included. Updates are
//!    taken while they fit [`COMMITS_PER_LAYER`] commits (always at least one); the rest
//!    wait for the next tick. A watermark is always a tip the branch had.
//! 4. L5 ([`Layer::L5`]): the break-glass audit (pusher allowlisted, an ADR naming the full
//!    SHA within the deadline counted from the push; earlier break-glass commits still
//!    inside their deadline are audited again), unauthorized push (landed by anyone but
//!    mp or an allowlisted person, or by GitHub's merge queue with a pull request the owner
//!    did not approve at the head it merged: `queue_landing`) and the hallucination guard (unless `skills.yml`
//!    disables it), then the user branch hooks (`decision:skill-hook-incident`; a hook that
//!    fails is a warning and raises nothing). Incidents of one label roll up into one issue
//!    per scan.
//! 5. L2 ([`Layer::L2`]): each commit's check runs are re-validated. Passed or a real
//!    failure settles the commit; unsettled (infra) records the first-seen time and stops
//!    the layer until a later tick, and after 24 hours opens `decision:l2-stalled` and
//!    force-settles. A real failure opens `decision:post-merge-revalidation` with
//!    parent-aware recovery instructions and, with `auto_revert_pr`, a revert pull request
//!    when the commit is proven to have at most one parent. The watermark moves once every
//!    commit of an update is settled.
//!
//! Incidents are deduplicated against issues with the same label in any state (a closed
//! incident stays closed), but only against issues mp's identity opened with the hidden
//! marker of `branch::incident` (and its MAC when a key is set). At most
//! [`ISSUES_PER_TICK`] new issues open per tick across all repositories; an incident held
//! back by the cap holds its layer's watermark, so the next tick finds it again.
//!
//! A primary rate limit ends the scan and asks the tick to end early; a secondary rate
//! limit skips the rest of this repository; other GitHub errors are warnings, and the
//! affected layer waits for the next tick where skipping would lose something.

mod incidents;
mod l2;
mod l5;
mod queue_landing;
mod revert;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fmt;

pub use revert::{
    REVERT_BRANCH_PREFIX, RevertStage, revert_branch, revert_message, revert_pull, with_note,
};

use mp_core::approval::ReceiptKey;
use mp_core::branch::{IncidentAuthority, IncidentLabel, Since, updates_since};
use mp_core::config::Config;
use mp_core::context::{CommitContext, RefUpdate};
use mp_core::ids::{CommitSha, Login, RepoName, Timestamp};
use mp_core::port::{Comparison, GitHubError, GitHubHistory, Issue};
use mp_core::skill::SkillSet;
use mp_core::state::{Layer, Watermarks};

use super::DefaultBranches;

/// At most this many new commits are processed per repository, layer and tick.
pub const COMMITS_PER_LAYER: usize = 100;
/// At most this many new incident issues are opened per tick, across all repositories.
pub const ISSUES_PER_TICK: usize = 30;
/// At most this many commits of one update of the branch are listed (`compare`, 10 pages
/// of 100); an update that brought more is scanned as far as listed, with a warning.
pub const COMPARE_CAP: usize = 1000;
/// Where the governance repository keeps its ADRs.
pub const DECISIONS_DIR: &str = "docs/decisions/";

/// What the supervisor keeps across the repositories of one tick: the bot user, the issue
/// budget, the incident issues already listed, and the ADRs once read.
#[derive(Debug, Clone)]
pub struct SupervisorRun {
    bot: Login,
    issues_left: usize,
    issues: BTreeMap<IncidentLabel, Vec<Issue>>,
    adrs: Option<Vec<(String, String)>>,
    skills: SkillSet,
    branches: DefaultBranches,
    receipt_key: Option<ReceiptKey>,
    comparisons: BTreeMap<(CommitSha, CommitSha), Comparison>,
}

impl SupervisorRun {
    /// A fresh tick for the bot user `bot`, with [`ISSUES_PER_TICK`] issues to spend.
    pub fn new(bot: Login) -> Self {
        Self {
            bot,
            issues_left: ISSUES_PER_TICK,
            issues: BTreeMap::new(),
            adrs: None,
            skills: SkillSet::default(),
            branches: DefaultBranches::default(),
            receipt_key: None,
            comparisons: BTreeMap::new(),
        }
    }

    /// The same run signing the incidents it opens with `key` and counting only incidents
    /// that carry its MAC (see [`IncidentAuthority`]).
    #[must_use]
    pub fn with_receipt_key(mut self, key: Option<ReceiptKey>) -> Self {
        self.receipt_key = key;
        self
    }

    /// The same run supervising each repository's gated branch (`main` when unknown).
    #[must_use]
    pub fn with_default_branches(mut self, branches: DefaultBranches) -> Self {
        self.branches = branches;
        self
    }

    /// The same run with the user branch hooks of `skills` in the L5 pass.
    #[must_use]
    pub fn with_skills(mut self, skills: SkillSet) -> Self {
        self.skills = skills;
        self
    }

    /// The same run with `issues` new issues left to open this tick.
    #[must_use]
    pub fn with_issue_budget(mut self, issues: usize) -> Self {
        self.issues_left = issues;
        self
    }

    /// The bot user.
    pub fn bot(&self) -> &Login {
        &self.bot
    }

    /// New issues that may still be opened this tick.
    pub fn issues_left(&self) -> usize {
        self.issues_left
    }

    /// Spends one new issue of the per-tick budget; false when none is left. Other
    /// issue-opening steps of the tick (e.g. the drift check) share this budget.
    pub fn take_issue_slot(&mut self) -> bool {
        if self.issues_left == 0 {
            return false;
        }
        self.issues_left -= 1;
        true
    }

    fn refund_issue_slot(&mut self) {
        self.issues_left += 1;
    }
}

/// The branch supervisor's counters (bot.md §18); per repository, and summed per tick.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SupervisorMetrics {
    /// L5 incident issues opened (break-glass, unauthorized push, hallucination, and
    /// watermark-lost).
    pub l5_incidents: u32,
    /// L2 incident issues opened (post-merge re-validation, stalled).
    pub l2_incidents: u32,
    /// New incidents held back by the per-tick issue cap.
    pub issues_deferred: u32,
    /// Repositories whose watermarks were bootstrapped at the `main` head.
    pub bootstrapped: u32,
    /// Automatic revert pull requests opened.
    pub auto_revert_prs: u32,
    /// Commits that went through the L5 hooks.
    pub l5_commits: u32,
    /// Commits that were re-validated by L2.
    pub l2_commits: u32,
    /// New updates of the branch (pushes, merges) left for a later tick by the per-layer
    /// commit cap; their commits are not listed until then, so they are counted per update.
    pub commits_deferred: u32,
    /// User branch-hook calls that failed (each also a warning).
    pub skill_failures: u32,
}

impl SupervisorMetrics {
    /// Adds `other` to these counters.
    pub fn add(&mut self, other: &Self) {
        self.l5_incidents += other.l5_incidents;
        self.l2_incidents += other.l2_incidents;
        self.issues_deferred += other.issues_deferred;
        self.bootstrapped += other.bootstrapped;
        self.auto_revert_prs += other.auto_revert_prs;
        self.l5_commits += other.l5_commits;
        self.l2_commits += other.l2_commits;
        self.commits_deferred += other.commits_deferred;
        self.skill_failures += other.skill_failures;
    }
}

/// Why a repository's scan stopped before its end.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SupervisorStop {
    /// The primary rate limit: the tick should save and end.
    RateLimited {
        /// The error.
        message: String,
    },
    /// A secondary rate limit: the rest of this repository waits for the next tick.
    Throttled {
        /// The error.
        message: String,
    },
}

impl SupervisorStop {
    /// Stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::RateLimited { .. } => "rate_limited",
            Self::Throttled { .. } => "throttled",
        }
    }

    /// The stop a GitHub error calls for, if any.
    pub fn for_error(error: &GitHubError) -> Option<Self> {
        match error {
            GitHubError::RateLimited { .. } => Some(Self::RateLimited {
                message: error.to_string(),
            }),
            GitHubError::Throttled { .. } => Some(Self::Throttled {
                message: error.to_string(),
            }),
            _ => None,
        }
    }
}

impl fmt::Display for SupervisorStop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::RateLimited { message } => {
                write!(f, "{message}; the tick ends early")
            }
            Self::Throttled { message } => {
                write!(f, "{message}; the repository waits for the next tick")
            }
        }
    }
}

/// What the supervisor did for one repository.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SupervisorReport {
    /// The repository.
    pub repo: RepoName,
    /// The counters.
    pub metrics: SupervisorMetrics,
    /// What happened, one line each, in order: bootstraps, incidents opened, found again
    /// or deferred, alarms dropped, unsettled commits, revert notes.
    pub events: Vec<String>,
    /// Things an operator should know, one line each.
    pub warnings: Vec<String>,
    /// Set when the scan stopped early.
    pub stopped: Option<SupervisorStop>,
    /// The incident issues opened this tick, with the commits each names (the audit log's
    /// `incident` records, decisions/0080).
    pub incidents: Vec<IncidentNote>,
    /// The revert pull requests opened this tick (the audit log's `revert` records).
    pub reverts: Vec<RevertNote>,
}

/// An incident issue the supervisor opened: its label, the commits of the default branch
/// it names, and the issue in the governance repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IncidentNote {
    /// The incident's label, e.g. `decision:post-merge-revalidation`.
    pub label: IncidentLabel,
    /// The commits it is about.
    pub shas: Vec<CommitSha>,
    /// The issue in the governance repository.
    pub issue: mp_core::ids::PrNumber,
}

/// A revert pull request the supervisor opened for a commit of the default branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevertNote {
    /// The commit it reverts.
    pub sha: CommitSha,
    /// The revert pull request, in the supervised repository.
    pub pull: mp_core::ids::PrNumber,
    /// The incident issue it answers.
    pub incident: mp_core::ids::PrNumber,
}

impl SupervisorReport {
    /// An empty report of `repo`: nothing done yet.
    pub fn new(repo: &RepoName) -> Self {
        Self {
            repo: repo.clone(),
            metrics: SupervisorMetrics::default(),
            events: Vec::new(),
            warnings: Vec::new(),
            stopped: None,
            incidents: Vec::new(),
            reverts: Vec::new(),
        }
    }
}

/// Runs the branch supervisor over one repository at `now`, moving its watermarks in
/// `state` (the caller saves them). `run` carries the per-tick budget and caches across
/// the repositories of the tick.
pub async fn run_branch_supervisor(
    github: &dyn GitHubHistory,
    config: &Config,
    state: &mut Watermarks,
    repo: &RepoName,
    run: &mut SupervisorRun,
    now: Timestamp,
) -> SupervisorReport {
    let mut scan = Scan {
        github,
        config,
        state,
        repo,
        run,
        now,
        report: SupervisorReport::new(repo),
        queue_audits: Vec::new(),
    };
    if let Err(stop) = scan.run().await {
        scan.warn(format!("scan stopped: {stop}"));
        scan.report.stopped = Some(stop);
    }
    scan.report
}

/// One repository's scan.
struct Scan<'a> {
    github: &'a dyn GitHubHistory,
    config: &'a Config,
    state: &'a mut Watermarks,
    repo: &'a RepoName,
    run: &'a mut SupervisorRun,
    now: Timestamp,
    report: SupervisorReport,
    /// The Quadrant B/C audit issues of the pull requests GitHub's merge queue landed in
    /// the update being read back, opened once the update is read whole.
    queue_audits: Vec<mp_core::port::NewIssue>,
}

impl Scan<'_> {
    fn warn(&mut self, line: String) {
        self.report.warnings.push(format!("{}: {line}", self.repo));
    }

    fn event(&mut self, line: String) {
        self.report.events.push(line);
    }

    /// A rate-limit error stops the scan; any other becomes a warning about `what`.
    fn stop_or_warn(&mut self, error: &GitHubError, what: &str) -> Result<(), SupervisorStop> {
        match SupervisorStop::for_error(error) {
            Some(stop) => Err(stop),
            None => {
                self.warn(format!("{what}: {error}"));
                Ok(())
            }
        }
    }

    fn governance(&self) -> &RepoName {
        self.config.projects().governance_repo()
    }

    /// Who may have written an incident that counts: mp's identity (and its MAC).
    fn authority(&self) -> IncidentAuthority {
        IncidentAuthority::new(self.run.bot.clone(), self.governance().clone())
            .with_key(self.run.receipt_key.clone())
    }

    async fn run(&mut self) -> Result<(), SupervisorStop> {
        let repo = self.repo;
        let branch = self.run.branches.of(repo).to_owned();
        let missing: Vec<Layer> = Layer::ALL
            .into_iter()
            .filter(|layer| self.state.get(repo, *layer).is_none())
            .collect();
        let head = match self.github.branch_commits(repo, &branch, 1).await {
            Ok(commits) => match commits.into_iter().next() {
                Some(head) => head.sha,
                None => {
                    self.warn(format!("{branch} has no commits; nothing to scan"));
                    return Ok(());
                }
            },
            Err(error) => {
                self.stop_or_warn(
                    &error,
                    &format!("cannot list {branch}; the repository waits for the next tick"),
                )?;
                return Ok(());
            }
        };
        if !missing.is_empty() {
            for layer in &missing {
                self.state.set(repo, *layer, head.clone());
            }
            self.report.metrics.bootstrapped += 1;
            let names: Vec<&str> = missing.iter().map(|l| l.as_str()).collect();
            self.event(format!(
                "bootstrapped {} at {}; nothing older is scanned",
                names.join(", "),
                head.short()
            ));
        }
        let scanned: Vec<Layer> = Layer::ALL
            .into_iter()
            .filter(|layer| !missing.contains(layer))
            .collect();
        if scanned.is_empty() {
            return Ok(());
        }
        let marks: Vec<CommitSha> = scanned
            .iter()
            .filter_map(|layer| self.state.get(repo, *layer).cloned())
            .collect();
        let log = match self
            .github
            .branch_updates_until(repo, &branch, &marks)
            .await
        {
            Ok(log) => log,
            Err(error) => {
                self.stop_or_warn(
                    &error,
                    &format!(
                        "cannot read GitHub's activity log of {branch}, the only evidence of who pushed what; the scan waits for the next tick"
                    ),
                )?;
                return Ok(());
            }
        };
        let mut plans: BTreeMap<Layer, Vec<RefUpdate>> = BTreeMap::new();
        let mut lost = Vec::new();
        for layer in scanned {
            let Some(mark) = self.state.get(repo, layer).cloned() else {
                continue;
            };
            match updates_since(&log, &mark, &head) {
                Since::Updates(updates) => {
                    plans.insert(layer, updates);
                }
                Since::NotInLog => lost.push(layer),
                Since::Behind(behind) => self.warn(format!(
                    "{layer} waits: {behind}; nothing is concluded until the log leads to the head"
                )),
            }
        }
        if !lost.is_empty() {
            self.watermark_lost(&lost, &head).await?;
        }
        if let Some(updates) = plans.get(&Layer::L5) {
            let landed = self.landed(updates).await?;
            self.l5(&landed).await?;
        }
        if let Some(updates) = plans.get(&Layer::L2) {
            let landed = self.landed(updates).await?;
            self.l2(&landed).await?;
        }
        Ok(())
    }

    /// The commits each update brought, read with `compare` from the tip before it, for
    /// as many updates as fit [`COMMITS_PER_LAYER`] (always at least one); the rest wait
    /// for the next tick. An update whose commits cannot be read stops the list there.
    async fn landed(&mut self, updates: &[RefUpdate]) -> Result<Vec<Landed>, SupervisorStop> {
        let repo = self.repo;
        let mut landed: Vec<Landed> = Vec::new();
        let mut count = 0;
        let mut last_tip: Option<CommitSha> = None;
        for (index, update) in updates.iter().enumerate() {
            if count >= COMMITS_PER_LAYER {
                let waiting = updates.len() - index;
                self.report.metrics.commits_deferred += u32::try_from(waiting).unwrap_or(u32::MAX);
                break;
            }
            if let Some(before) = &update.before {
                last_tip = Some(before.clone());
            }
            let Some(after) = update.after.clone() else {
                landed.push(Landed {
                    update: update.clone(),
                    commits: Vec::new(),
                });
                continue;
            };
            let Some(base) = last_tip.clone() else {
                landed.push(Landed {
                    update: update.clone(),
                    commits: Vec::new(),
                });
                last_tip = Some(after);
                continue;
            };
            let key = (base.clone(), after.clone());
            let comparison = match self.run.comparisons.get(&key) {
                Some(found) => found.clone(),
                None => match self.github.compare(repo, &base, &after, COMPARE_CAP).await {
                    Ok(found) => {
                        self.run.comparisons.insert(key, found.clone());
                        found
                    }
                    Err(error) => {
                        self.stop_or_warn(
                            &error,
                            &format!(
                                "cannot list the commits {} brought ({}..{}); the scan resumes there next tick",
                                update.kind.as_github(),
                                base.short(),
                                after.short()
                            ),
                        )?;
                        break;
                    }
                },
            };
            if comparison.total > comparison.commits.len() {
                self.warn(format!(
                    "the {} to {} brought {} commits; only the {} GitHub listed are scanned: review the rest by hand",
                    update.kind.as_github(),
                    after.short(),
                    comparison.total,
                    comparison.commits.len()
                ));
            }
            count += comparison.commits.len();
            landed.push(Landed {
                update: update.clone(),
                commits: comparison.commits,
            });
            last_tip = Some(after);
        }
        Ok(landed)
    }

    /// Watermarks not in GitHub's activity log of the branch any more: one incident keyed
    /// to the head, then the watermarks move to the head (held while the incident is
    /// deferred).
    async fn watermark_lost(
        &mut self,
        lost: &[Layer],
        head: &CommitSha,
    ) -> Result<(), SupervisorStop> {
        let repo = self.repo;
        let branch = self.run.branches.of(repo).to_owned();
        let lines: Vec<String> = lost
            .iter()
            .map(|layer| {
                let mark = self
                    .state
                    .get(repo, *layer)
                    .map_or_else(|| "none".to_owned(), ToString::to_string);
                format!("- `{}`: `{mark}`", layer.key(repo))
            })
            .collect();
        let text = format!(
            "GitHub's activity log of `{branch}` in `{repo}` never shows the branch at the scan \
             watermarks below: either `{branch}` was rewritten (force-push) past them, the log \
             does not reach back that far, or the watermarks were not written by mp.\n\n{lines}\n\n\
             The scans restart from the current head `{head}`. The commits in between were \
             not audited or re-validated: review them by hand.",
            lines = lines.join("\n"),
        );
        let incident = incidents::single(IncidentLabel::WatermarkLost, head, &text);
        match self.surface(&incident).await? {
            incidents::Surfaced::Deferred => return Ok(()),
            incidents::Surfaced::Opened(_) => self.report.metrics.l5_incidents += 1,
            incidents::Surfaced::Existing(_) => {}
        }
        for layer in lost {
            self.state.set(repo, *layer, head.clone());
            if *layer == Layer::L2 {
                self.state.forget_unsettled(repo);
            }
        }
        Ok(())
    }
}

/// One update of the branch and the commits it brought, oldest first.
#[derive(Debug, Clone)]
struct Landed {
    update: RefUpdate,
    commits: Vec<CommitContext>,
}
