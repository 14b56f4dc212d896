//! What one tick's pull-request path did: one outcome per pull request, the tick metrics
//! (bot.md §18) and the warnings.

use std::fmt;

use mp_core::agent::AgentIdentity;
use mp_core::classifier::Verdict;
use mp_core::context::PrContext;
use mp_core::gate::GateReport;
use mp_core::github_queue::GitHubQueueOutcome;
use mp_core::ids::{CommitSha, Timestamp};
use mp_core::quadrant::Quadrant;

/// Longest outcome detail, in characters (longer details end with `…`).
pub const MAX_DETAIL_CHARS: usize = 200;

/// What the tick did with one pull request. The names are those of the tick metrics.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PrAction {
    /// Squash-merged onto `main`.
    Merged {
        /// The new commit on `main`.
        sha: CommitSha,
    },
    /// Every condition holds, but merging is off: "would have merged".
    Observe,
    /// Quadrant D waiting for the owner: a decision inbox issue is open (now or before).
    Inbox,
    /// A blocking condition fails: the diagnostic comment names every one.
    Blocked,
    /// `main` moved after the gate ran: the branch was asked to update, no merge this tick.
    RaceRebased,
    /// Not decided this tick (a GitHub read or write failed, the audit log refused the
    /// record, the head moved under the merge); the detail says why.
    Skipped,
    /// Not gated at all: the pull request's base is not the gated branch.
    Ignored,
    /// Every other condition holds; required checks have not reported or completed yet.
    Waiting,
    /// Queue mode: the gate passed (C4 aside) and the pull request is in the merge queue,
    /// or held out of it; the detail says its position or why it is held.
    Queued,
    /// `github-queue` mode: the gate passed (C4 aside) and mp enqueued the approved head in
    /// GitHub's merge queue (decisions/0078); one already queued at that head is `queued`.
    Enqueued,
}

impl PrAction {
    /// The stable name: `merged`, `observe`, `inbox`, `blocked`, `race-rebased`, `skipped`,
    /// `ignored`, `waiting`, `queued`, `enqueued`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Merged { .. } => "merged",
            Self::Observe => "observe",
            Self::Inbox => "inbox",
            Self::Blocked => "blocked",
            Self::RaceRebased => "race-rebased",
            Self::Skipped => "skipped",
            Self::Ignored => "ignored",
            Self::Waiting => "waiting",
            Self::Queued => "queued",
            Self::Enqueued => "enqueued",
        }
    }
}

impl fmt::Display for PrAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the pull-request path leaves the merge queue's driver for each pull request it
/// queued: the context and verdict, for the merge messages and the Quadrant B/C audit
/// issues.
pub(crate) type QueuedPrs = std::collections::BTreeMap<
    (mp_core::ids::RepoName, mp_core::ids::PrNumber),
    (mp_core::context::PrContext, Verdict),
>;

/// The outcome of one pull request in one tick.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PrOutcome {
    /// `owner/repo#N`.
    pub pr: String,
    /// What the tick did.
    pub action: PrAction,
    /// One line saying why (at most [`MAX_DETAIL_CHARS`] characters).
    pub detail: String,
    /// The classifier quadrant, when the pull request got that far.
    pub quadrant: Option<Quadrant>,
    /// The gate report, when the gate ran.
    pub gate: Option<GateReport>,
    /// The classifier verdict, when the pull request was classified.
    pub verdict: Option<Verdict>,
    /// Who is behind the pull request (declared trailers, GitHub's author), when its
    /// commits were read (decisions/0076).
    pub agent: Option<AgentIdentity>,
    /// When the pull request was opened, as GitHub reports it.
    pub opened_at: Option<Timestamp>,
    /// When the approval label was last applied, by GitHub's timeline.
    pub approved_at: Option<Timestamp>,
    /// `github-queue` mode: what mp did with the pull request in GitHub's merge queue
    /// this tick, in order (a dequeue, an enqueue; decisions/0078); empty otherwise.
    pub github_queue: Vec<GitHubQueueOutcome>,
    /// The head commit the tick saw.
    pub head_sha: Option<CommitSha>,
    /// The check runs GitHub lists on that head (every run, re-runs included: the CI runs
    /// spent on it so far), when the tick read them (decisions/0080).
    pub check_runs: Option<u32>,
    /// The commits the pull request's commits say they revert (`This reverts commit
    /// <sha>.`), full SHAs only.
    pub reverts: Vec<CommitSha>,
}

impl PrOutcome {
    /// An outcome without verdict or gate report; the detail is cut to one line of at most
    /// [`MAX_DETAIL_CHARS`] characters.
    pub fn new(pr: impl Into<String>, action: PrAction, detail: impl AsRef<str>) -> Self {
        Self {
            pr: pr.into(),
            action,
            detail: one_line(detail.as_ref()),
            quadrant: None,
            gate: None,
            verdict: None,
            agent: None,
            opened_at: None,
            approved_at: None,
            github_queue: Vec::new(),
            head_sha: None,
            check_runs: None,
            reverts: Vec::new(),
        }
    }

    /// The same outcome, carrying who is behind the pull request, when the approval label
    /// was last applied, its head, the check runs on it and the commits it reverts, from
    /// its context.
    #[must_use]
    pub fn with_agent(mut self, ctx: &PrContext) -> Self {
        self.agent = Some(AgentIdentity::of(ctx));
        self.approved_at = mp_core::agent::approved_at(ctx);
        self.head_sha = Some(ctx.head_sha.clone());
        self.check_runs = Some(u32::try_from(ctx.check_runs.len()).unwrap_or(u32::MAX));
        self.reverts = mp_core::agent::reverted_commits(ctx);
        self
    }

    /// The same outcome, carrying the verdict (and its quadrant).
    #[must_use]
    pub fn with_verdict(mut self, verdict: Option<&Verdict>) -> Self {
        self.quadrant = verdict.map(|v| v.quadrant);
        self.verdict = verdict.cloned();
        self
    }

    /// The same outcome, carrying the gate report.
    #[must_use]
    pub fn with_gate(mut self, gate: Option<&GateReport>) -> Self {
        self.gate = gate.cloned();
        self
    }
}

impl fmt::Display for PrOutcome {
    /// `acme/app#7 blocked: C1: label 'ready-to-merge' not set on PR #7`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.pr, self.action, self.detail)
    }
}

/// `text` on one line, cut to [`MAX_DETAIL_CHARS`] characters (the last one `…` when cut).
pub(crate) fn one_line(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    if flat.chars().count() <= MAX_DETAIL_CHARS {
        return flat;
    }
    let mut cut: String = flat.chars().take(MAX_DETAIL_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// The counters of the pull-request path (bot.md §18). The branch-supervisor counters
/// (`l2_incidents`, `l5_incidents`, `drift_incidents`, `bootstrapped`, ...) and the inbox
/// polling counters arrive with those use-cases.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TickMetrics {
    /// Pull requests merged.
    pub merged: u32,
    /// Pull requests that would have merged in observe mode.
    pub observe: u32,
    /// Pull requests routed to the decision inbox (issue opened now or already pending).
    pub inbox: u32,
    /// Pull requests blocked by the gate.
    pub blocked: u32,
    /// Pull requests whose branch was updated by the race guard.
    pub race_rebased: u32,
    /// Pull requests skipped this tick.
    pub skipped: u32,
    /// Open pull requests not gated because their base is not the gated branch.
    pub ignored: u32,
    /// Pull requests waiting only for their required checks.
    pub waiting: u32,
    /// Queue mode: pull requests in the merge queue (or held out of it) after the tick.
    pub queued: u32,
    /// `github-queue` mode: pull requests mp enqueued in GitHub's merge queue.
    pub enqueued: u32,
    /// `github-queue` mode: merge groups on whose head mp published a passing check.
    pub group_checks_passed: u32,
    /// `github-queue` mode: merge groups on whose head mp published a failing check.
    pub group_checks_failed: u32,
    /// Pull requests classified (one audit record each).
    pub classified: u32,
    /// Receipt comments written.
    pub receipts_written: u32,
    /// Diagnostic comments created or updated.
    pub comments_posted: u32,
    /// Decision inbox issues opened.
    pub inbox_opened: u32,
    /// Quadrant B/C audit issues opened after a merge.
    pub audit_issues_opened: u32,
    /// Whether the primary rate limit ended the pull-request path early.
    pub rate_limited: bool,
    /// Calls left in the primary rate-limit window at the end, when the adapter knows.
    pub rate_limit_remaining: Option<u32>,
    /// GraphQL points left in that API's own window at the end, when the adapter read over
    /// GraphQL and GitHub reported them.
    pub graphql_remaining: Option<u32>,
    /// User skills the adapter loaded for this tick.
    pub skills_loaded: u32,
    /// User skills that failed to load (each one is also a warning).
    pub skill_load_failed: u32,
    /// User skill calls that failed this tick (timeout, trap, malformed verdict, ...);
    /// each counted as "pass, no contribution" and reported as a warning.
    pub skill_failures: u32,
}

impl TickMetrics {
    /// Counts one outcome's action.
    pub fn count(&mut self, action: &PrAction) {
        let counter = match action {
            PrAction::Merged { .. } => &mut self.merged,
            PrAction::Observe => &mut self.observe,
            PrAction::Inbox => &mut self.inbox,
            PrAction::Blocked => &mut self.blocked,
            PrAction::RaceRebased => &mut self.race_rebased,
            PrAction::Skipped => &mut self.skipped,
            PrAction::Ignored => &mut self.ignored,
            PrAction::Waiting => &mut self.waiting,
            PrAction::Queued => &mut self.queued,
            PrAction::Enqueued => &mut self.enqueued,
        };
        *counter += 1;
    }

    /// The metrics as the `tick complete` JSON object, with the reference's key names
    /// (`race-rebased` keeps its dash); `queued` only when a repository is in queue mode
    /// and something was queued, `enqueued` only when something was enqueued in GitHub's
    /// merge queue.
    pub fn to_json(&self) -> serde_json::Value {
        let mut json = self.direct_json();
        if let serde_json::Value::Object(map) = &mut json {
            if self.queued > 0 {
                map.insert("queued".to_owned(), self.queued.into());
            }
            if self.enqueued > 0 {
                map.insert("enqueued".to_owned(), self.enqueued.into());
            }
            if self.group_checks_passed + self.group_checks_failed > 0 {
                map.insert(
                    "group_checks_passed".to_owned(),
                    self.group_checks_passed.into(),
                );
                map.insert(
                    "group_checks_failed".to_owned(),
                    self.group_checks_failed.into(),
                );
            }
        }
        json
    }

    fn direct_json(&self) -> serde_json::Value {
        serde_json::json!({
            "merged": self.merged,
            "observe": self.observe,
            "inbox": self.inbox,
            "blocked": self.blocked,
            "race-rebased": self.race_rebased,
            "skipped": self.skipped,
            "ignored": self.ignored,
            "waiting": self.waiting,
            "classified": self.classified,
            "receipts_written": self.receipts_written,
            "comments_posted": self.comments_posted,
            "inbox_opened": self.inbox_opened,
            "audit_issues_opened": self.audit_issues_opened,
            "rate_limited": self.rate_limited,
            "rate_limit_remaining": self.rate_limit_remaining,
            "graphql_remaining": self.graphql_remaining,
            "skills_loaded": self.skills_loaded,
            "skill_load_failed": self.skill_load_failed,
            "skill_failures": self.skill_failures,
        })
    }
}

/// Everything one run of the pull-request path did.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct TickReport {
    /// One outcome per pull request looked at, in processing order (repositories in
    /// `projects.yml` order, pull requests oldest first).
    pub outcomes: Vec<PrOutcome>,
    /// The counters.
    pub metrics: TickMetrics,
    /// Things an operator should know that concern no single pull request, one line each.
    pub warnings: Vec<String>,
    /// What only the operator can fix, one line each, each said once: a supervised
    /// repository GitHub does not know, a call refused for a missing permission. The tick
    /// goes on with the rest, and `mp tick` then ends with exit 1.
    pub operator_errors: Vec<String>,
    /// Queue mode: each repository's merge queue in order, as the tick's pull requests
    /// made it (the driver builds from it).
    pub queues: std::collections::BTreeMap<mp_core::ids::RepoName, mp_core::queue::Ordered>,
    /// Queue mode: the context and verdict of each queued pull request, for the driver.
    pub(crate) queued_prs: QueuedPrs,
}

impl TickReport {
    /// Records `line` in [`TickReport::operator_errors`] unless it is already there.
    pub(crate) fn operator_error(&mut self, line: String) {
        if !self.operator_errors.contains(&line) {
            self.operator_errors.push(line);
        }
    }
}
