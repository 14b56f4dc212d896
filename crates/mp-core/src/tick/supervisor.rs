//! The branch supervisor (bot.md §11-§13): what landed on `main` since the last tick, per
//! supervised repository (audit-only ones included), goes through the L5 hooks and L2
//! post-merge re-validation, and every finding becomes one deduplicated incident issue in
//! the governance repository.
//!
//! Per repository and tick:
//!
//! 1. A layer without a watermark bootstraps at the current `main` head and scans nothing
//!    older (metric `bootstrapped`).
//! 2. `main` is listed newest first down to each watermark: one page, then up to
//!    [`WALK_CAP`] commits. A watermark not found there was rewritten away (or is too far
//!    behind): it moves to the head and one `decision:watermark-lost` incident says so.
//! 3. At most [`COMMITS_PER_LAYER`] new commits per layer, oldest first; the rest wait for
//!    the next tick and the watermark stops at the last processed commit.
//! 4. L5 ([`Layer::L5`]): the break-glass audit (including earlier break-glass commits
//!    still inside their ADR deadline), unauthorized push (dropped when an allowlisted
//!    person really merged the commit) and the hallucination guard (unless `skills.yml`
//!    disables it), then the user branch hooks (`decision:skill-hook-incident`; a hook
//!    that fails is a warning and raises nothing). Incidents of one label roll up into one
//!    issue per scan.
//! 5. L2 ([`Layer::L2`]): each commit's check runs are re-validated. Passed or a real
//!    failure settles the commit; unsettled (infra) records the first-seen time and stops
//!    the layer until a later tick, and after 24 hours opens `decision:l2-stalled` and
//!    force-settles. A real failure opens `decision:post-merge-revalidation` with
//!    parent-aware recovery instructions and, with `auto_revert_pr`, a revert pull request
//!    when the commit is proven to have at most one parent.
//!
//! Incidents are deduplicated against issues with the same label in any state (a closed
//! incident stays closed) through the hidden marker of `branch::incident`. At most
//! [`ISSUES_PER_TICK`] new issues open per tick across all repositories; an incident held
//! back by the cap holds its layer's watermark, so the next tick finds it again.
//!
//! A primary rate limit ends the scan and asks the tick to end early; a secondary rate
//! limit skips the rest of this repository; other GitHub errors are warnings, and the
//! affected layer waits for the next tick where skipping would lose something.

mod incidents;
mod l2;
mod l5;
mod revert;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fmt;

pub use revert::{
    REVERT_BRANCH_PREFIX, RevertStage, revert_branch, revert_message, revert_pull, with_note,
};

use crate::approval::ReceiptKey;
use crate::branch::{IncidentAuthority, IncidentLabel};
use crate::config::Config;
use crate::context::CommitContext;
use crate::ids::{Login, RepoName, Timestamp};
use crate::port::{GitHubError, GitHubHistory, Issue};
use crate::skill::SkillSet;
use crate::state::{Layer, Watermarks};

use super::DefaultBranches;

/// At most this many new commits are processed per repository, layer and tick.
pub const COMMITS_PER_LAYER: usize = 100;
/// At most this many new incident issues are opened per tick, across all repositories.
pub const ISSUES_PER_TICK: usize = 30;
/// How far back `main` is walked to find a watermark (10 pages of 100).
pub const WALK_CAP: usize = 1000;
/// The first, cheap walk: one page.
const FIRST_PAGE: usize = 100;
/// The skill name that switches the hallucination guard off in `skills.yml`.
pub const HALLUCINATION_GUARD: &str = "hook_hallucination_guard";
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
    /// New commits left for a later tick by the per-layer commit cap.
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
}

impl SupervisorReport {
    fn new(repo: &RepoName) -> Self {
        Self {
            repo: repo.clone(),
            metrics: SupervisorMetrics::default(),
            events: Vec::new(),
            warnings: Vec::new(),
            stopped: None,
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
    };
    if let Err(stop) = scan.run().await {
        scan.warn(format!("scan stopped: {stop}"));
        scan.report.stopped = Some(stop);
    }
    scan.report
}

/// The layers' positions in a `main` listing: `Some(i)` is the index of the watermark
/// (so commits `..i` are new), `None` a watermark not found.
type Anchors = BTreeMap<Layer, Option<usize>>;

/// One repository's scan.
struct Scan<'a> {
    github: &'a dyn GitHubHistory,
    config: &'a Config,
    state: &'a mut Watermarks,
    repo: &'a RepoName,
    run: &'a mut SupervisorRun,
    now: Timestamp,
    report: SupervisorReport,
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
        let missing: Vec<Layer> = Layer::ALL
            .into_iter()
            .filter(|layer| self.state.get(repo, *layer).is_none())
            .collect();
        let Some(mut commits) = self.list_main(FIRST_PAGE).await? else {
            return Ok(());
        };
        let Some(head) = commits.first().map(|c| c.sha.clone()) else {
            self.warn("main has no commits; nothing to scan".to_owned());
            return Ok(());
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
        let mut anchors = self.anchors(&commits, &scanned);
        if anchors.values().any(Option::is_none) && commits.len() >= FIRST_PAGE {
            let Some(longer) = self.list_main(WALK_CAP).await? else {
                return Ok(());
            };
            commits = longer;
            anchors = self.anchors(&commits, &scanned);
        }
        let lost: Vec<Layer> = anchors
            .iter()
            .filter(|(_, at)| at.is_none())
            .map(|(layer, _)| *layer)
            .collect();
        if !lost.is_empty()
            && let Some(head) = commits.first().cloned()
        {
            self.watermark_lost(&lost, &head).await?;
        }
        if let Some(Some(at)) = anchors.get(&Layer::L5) {
            let new = oldest_first(&commits[..*at]);
            self.l5(&new).await?;
        }
        if let Some(Some(at)) = anchors.get(&Layer::L2) {
            let new = oldest_first(&commits[..*at]);
            self.l2(&new).await?;
        }
        Ok(())
    }

    /// `main`, newest first, at most `limit` commits; `None` (with a warning) when it
    /// cannot be listed.
    async fn list_main(
        &mut self,
        limit: usize,
    ) -> Result<Option<Vec<CommitContext>>, SupervisorStop> {
        match self
            .github
            .branch_commits(self.repo, self.run.branches.of(self.repo), limit)
            .await
        {
            Ok(commits) => Ok(Some(commits)),
            Err(error) => {
                self.stop_or_warn(
                    &error,
                    "cannot list main; the repository waits for the next tick",
                )?;
                Ok(None)
            }
        }
    }

    fn anchors(&self, commits: &[CommitContext], layers: &[Layer]) -> Anchors {
        layers
            .iter()
            .map(|layer| {
                let at = self
                    .state
                    .get(self.repo, *layer)
                    .and_then(|mark| commits.iter().position(|c| c.sha == *mark));
                (*layer, at)
            })
            .collect()
    }

    /// Watermarks not on `main` any more: one incident keyed to the head, then the
    /// watermarks move to the head (held while the incident is deferred).
    async fn watermark_lost(
        &mut self,
        lost: &[Layer],
        head: &CommitContext,
    ) -> Result<(), SupervisorStop> {
        let repo = self.repo;
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
            "The scan watermarks of `{repo}` below are no longer among the last {WALK_CAP} \
             commits of `main`: either `main` was rewritten (force-push) past them, or the \
             scan fell too far behind.\n\n{lines}\n\n\
             The scans restart from the current head `{head}`. The commits in between were \
             not audited or re-validated: review them by hand.",
            lines = lines.join("\n"),
            head = head.sha,
        );
        let incident = incidents::single(IncidentLabel::WatermarkLost, &head.sha, &text);
        match self.surface(&incident).await? {
            incidents::Surfaced::Deferred => return Ok(()),
            incidents::Surfaced::Opened(_) => self.report.metrics.l5_incidents += 1,
            incidents::Surfaced::Existing(_) => {}
        }
        for layer in lost {
            self.state.set(repo, *layer, head.sha.clone());
            if *layer == Layer::L2 {
                self.state.forget_unsettled(repo);
            }
        }
        Ok(())
    }
}

/// The new commits, oldest first, from a newest-first slice.
fn oldest_first(newest_first: &[CommitContext]) -> Vec<CommitContext> {
    newest_first.iter().rev().cloned().collect()
}

/// The first `COMMITS_PER_LAYER` of `new` and how many wait.
fn capped(new: &[CommitContext]) -> (&[CommitContext], u32) {
    let (batch, rest) = new.split_at(new.len().min(COMMITS_PER_LAYER));
    (batch, u32::try_from(rest.len()).unwrap_or(u32::MAX))
}
