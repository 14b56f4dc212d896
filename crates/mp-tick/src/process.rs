//! The acting half of the pull-request path (bot.md §6.5): audit record, receipts,
//! diagnostic, decision inbox, race guard, observe or merge, and the B/C audit issue.

use std::collections::BTreeMap;

use mp_core::approval::{render_receipt, unchanged_since};
use mp_core::classifier::Verdict;
use mp_core::config::RepoMergeMode;
use mp_core::context::{LabelEvent, LabelRecords, PrContext};
use mp_core::gate::GateReport;
use mp_core::gate::diagnostic::{
    BLOCKED_HEADER, DIAGNOSTIC_PREFIX, latest_diagnostic, render_diagnostic, should_post,
};
use mp_core::github_queue::{
    GitHubQueueOutcome, GitHubQueueStep, dequeue_reason, held_after_removal,
};
use mp_core::ids::{CommitSha, PrNumber, RepoName, Timestamp};
use mp_core::port::{
    AuditLog, GitHub, GitHubError, Issue, IssueQuery, IssueState, MergeMethod, MergeRequest,
    PullRequest, QueueEntry, UpdateBranchOutcome,
};
use mp_core::queue::{Candidate, candidate, order};
use mp_core::trailers::identity_block;

use super::evaluate::{PrEvaluation, Route, assess_pr};
use super::inbox::{
    PENDING_OWNER, audit_issue, inbox_issue, labelled_at, labelled_by_bot, pending_candidates,
    signature_comment,
};
use super::inbox_poll::INTEGRITY_FAILED;
use super::prefetch::PullData;
use super::report::{PrAction, PrOutcome, TickReport, one_line};
use super::skills::failure_warning;
use super::{MergeMode, TickSetup};

mod merge_groups;

/// The skip detail when a pull request's comments cannot be read (bot.md §5.1).
pub const RECEIPTS_UNAVAILABLE: &str = "approval receipts unavailable";

/// Whether the tick goes on after a pull request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Next pull request.
    Continue,
    /// A secondary rate limit: GitHub asks for a pause, so mp stops calling it for this
    /// tick (every repository is the same installation's budget).
    Throttled,
    /// The primary rate limit: stop the pull-request path.
    EndTick,
}

impl Flow {
    fn after(error: &GitHubError) -> Self {
        match error {
            GitHubError::RateLimited { .. } => Self::EndTick,
            GitHubError::Throttled { .. } => Self::Throttled,
            _ => Self::Continue,
        }
    }
}

/// A pull request given up for this tick, with what was known when it stopped.
struct Skip {
    detail: String,
    flow: Flow,
    /// The operator's line when a missing permission caused the skip.
    refused: Option<String>,
    verdict: Option<Verdict>,
    gate: Option<GateReport>,
}

impl Skip {
    fn new(detail: String) -> Self {
        Self {
            detail,
            flow: Flow::Continue,
            refused: None,
            verdict: None,
            gate: None,
        }
    }

    fn github(what: &str, error: &GitHubError) -> Self {
        Self {
            flow: Flow::after(error),
            refused: super::permission_refusal(error),
            ..Self::new(format!("{what}: {error}"))
        }
    }

    fn of(mut self, evaluation: &PrEvaluation) -> Self {
        self.verdict = Some(evaluation.verdict.clone());
        self.gate = Some(evaluation.gate.clone());
        self
    }
}

/// Runs the pull-request path over one tick's pull requests, collecting the report.
pub(crate) struct Runner<'a> {
    github: &'a dyn GitHub,
    audit: &'a dyn AuditLog,
    pub(crate) setup: &'a TickSetup<'a>,
    now: Timestamp,
    /// `main` head per repository, read once when the repository's first pull request is
    /// evaluated and replaced by what the tick learns: its own squash merge, or a head the
    /// race guard re-read. C4 compares with this value; the race guard re-reads `main`
    /// before every merge, so a move by anyone else is caught there (decisions/0004).
    main_heads: BTreeMap<RepoName, CommitSha>,
    /// The prefetched read of `main` that failed, per repository: the next pull request
    /// reports it, and the one after reads again.
    main_errors: BTreeMap<RepoName, GitHubError>,
    /// The open decision-inbox issues, listed once per tick when the first Quadrant-D pull
    /// request needs them; issues opened during the tick are added, so a second pull
    /// request never gets a duplicate and the inbox is not listed again per pull request.
    pending_inbox: Option<Vec<Issue>>,
    /// GitHub's record of the inbox's `decision:pending-owner` label, read when a pending
    /// question is first checked (decisions/0048).
    pending_record: Option<LabelRecords>,
    /// Queue mode: the candidates of each repository, in processing order, until
    /// [`Runner::order_queue`] orders them.
    queued: BTreeMap<RepoName, Vec<Candidate>>,
    /// `github-queue` mode: the rule types of each repository's gated branch, read when its
    /// first pull request passes the gate.
    branch_rules: BTreeMap<RepoName, Vec<String>>,
    /// `github-queue` mode: the entries of each repository's merge queue (`None`: no
    /// queue), read when first needed.
    github_queues: BTreeMap<RepoName, Option<Vec<QueueEntry>>>,
    /// `github-queue` mode: what became of the current pull request in GitHub's merge
    /// queue, moved into its outcome when it is recorded.
    github_queue_steps: Vec<GitHubQueueOutcome>,
    /// `github-queue` mode: each repository's merge queue as first read in this pass,
    /// before mp's own enqueues and dequeues.
    github_queue_first_read: BTreeMap<RepoName, Vec<QueueEntry>>,
    /// `github-queue` mode: the entries mp removed from each repository's queue in this
    /// pass, with their positions in the queue as first read.
    github_dequeued: BTreeMap<RepoName, Vec<(PrNumber, u32)>>,
    pub(crate) report: TickReport,
}

/// Why a pull request into `base` is not gated, when the repository gates `gated`.
fn ignored_detail(base: &str, gated: &str) -> String {
    format!(
        "ignored: base is {base}, not {gated} (mp gates and merges only pull requests into {gated})"
    )
}

impl<'a> Runner<'a> {
    pub(crate) fn new(
        github: &'a dyn GitHub,
        audit: &'a dyn AuditLog,
        setup: &'a TickSetup<'a>,
        now: Timestamp,
    ) -> Self {
        Self {
            github,
            audit,
            setup,
            now,
            main_heads: BTreeMap::new(),
            main_errors: BTreeMap::new(),
            pending_inbox: None,
            pending_record: None,
            queued: BTreeMap::new(),
            branch_rules: BTreeMap::new(),
            github_queues: BTreeMap::new(),
            github_queue_steps: Vec::new(),
            github_queue_first_read: BTreeMap::new(),
            github_dequeued: BTreeMap::new(),
            report: TickReport::default(),
        }
    }

    /// What the prefetch read of the gated branch's head of `repo`.
    pub(crate) fn learn_main_head(
        &mut self,
        repo: &RepoName,
        head: Result<CommitSha, GitHubError>,
    ) {
        match head {
            Ok(head) => {
                self.main_heads.entry(repo.clone()).or_insert(head);
            }
            Err(error) => {
                self.main_errors.insert(repo.clone(), error);
            }
        }
    }

    /// Processes one pull request over its prefetched reads (`None` for a pull request
    /// not into the gated branch), records its outcome and says whether to go on.
    pub(crate) async fn process_pr(&mut self, pull: &PullRequest, reads: Option<PullData>) -> Flow {
        let reference = format!("{}#{}", pull.repo, pull.number);
        // Who is behind it, when it was approved, its head's check runs and what it
        // reverts, read before `decide` takes the reads (an outcome carrying only those).
        let who = reads
            .as_ref()
            .and_then(|r| r.context.as_ref().ok())
            .map(|ctx| PrOutcome::new("", PrAction::Skipped, "").with_agent(ctx));
        let (mut outcome, flow) = match self.decide(pull, reads).await {
            Ok(outcome) => (outcome, Flow::Continue),
            Err(skip) => {
                if let Some(refused) = &skip.refused {
                    self.report
                        .operator_error(format!("{}: {refused}", pull.repo));
                }
                (
                    PrOutcome::new(reference, PrAction::Skipped, &skip.detail)
                        .with_verdict(skip.verdict.as_ref())
                        .with_gate(skip.gate.as_ref()),
                    skip.flow,
                )
            }
        };
        outcome.opened_at = pull.created_at;
        outcome.github_queue = std::mem::take(&mut self.github_queue_steps);
        outcome.head_sha = Some(pull.head_sha.clone());
        if let Some(who) = who {
            outcome.agent = who.agent;
            outcome.approved_at = who.approved_at;
            outcome.head_sha = who.head_sha;
            outcome.check_runs = who.check_runs;
            outcome.reverts = who.reverts;
        }
        self.report.metrics.count(&outcome.action);
        self.report.outcomes.push(outcome);
        flow
    }

    async fn decide(
        &mut self,
        pull: &PullRequest,
        reads: Option<PullData>,
    ) -> Result<PrOutcome, Skip> {
        let github = self.github;
        let (repo, number) = (&pull.repo, pull.number);
        // (0) Only pull requests into the gated branch are gated: a green gate on another
        // base would squash-merge into that branch on the strength of `main`'s checks.
        let gated = self.setup.options.gated_branch(repo);
        if pull.base_ref != gated {
            return Ok(PrOutcome::new(
                format!("{repo}#{number}"),
                PrAction::Ignored,
                ignored_detail(&pull.base_ref, gated),
            ));
        }
        // (1) Context, read before this repository's first write (`prefetch`).
        let Some(reads) = reads else {
            return Err(Skip::new(
                "the pull request's reads were not taken (listed after the reads began)".to_owned(),
            ));
        };
        let pr = reads
            .context
            .map_err(|e| Skip::github("cannot read the pull request", &e))?;
        // (2) Comments, hence receipts: unreadable means unknown receipts, so nothing is
        // decided or written.
        let comments = reads
            .comments
            .map_err(|e| Skip::github(RECEIPTS_UNAVAILABLE, &e))?;
        let main_head = match self.main_heads.get(repo) {
            Some(head) => head.clone(),
            None => {
                if let Some(error) = self.main_errors.remove(repo) {
                    return Err(Skip::github("cannot read the main head", &error));
                }
                let head = github
                    .branch_head(repo, gated)
                    .await
                    .map_err(|e| Skip::github("cannot read the main head", &e))?;
                self.main_heads.insert(repo.clone(), head.clone());
                head
            }
        };
        // (3)-(6) Classify, plan receipts, evaluate the gate.
        let evaluation = assess_pr(self.setup, pr, comments, main_head, self.now);
        for ignored in evaluation.receipts.ignored() {
            if ignored.reason.is_tampering() {
                self.report
                    .warnings
                    .push(format!("{}: {ignored}", evaluation.pr.reference()));
            }
        }
        for failure in &evaluation.skill_failures {
            let context = evaluation.pr.reference();
            self.report
                .warnings
                .push(failure_warning(&context, failure));
            self.report.metrics.skill_failures += 1;
        }

        // (3) One audit record per classification; an unaudited decision is not acted on.
        self.audit
            .append(&evaluation.audit_record(self.now))
            .await
            .map_err(|e| Skip::new(format!("classification not acted on: {e}")).of(&evaluation))?;
        self.report.metrics.classified += 1;

        // (4) Receipts; they already count in the gate report.
        let key = self.setup.options().receipt_key.as_ref();
        for plan in evaluation.receipts_to_write() {
            let body = render_receipt(plan.label, &plan.head, repo, number, key);
            github
                .create_comment(repo, number, &body)
                .await
                .map_err(|e| {
                    Skip::github(&format!("cannot write the '{}' receipt", plan.label), &e)
                        .of(&evaluation)
                })?;
            self.report.metrics.receipts_written += 1;
        }

        let github_queue = evaluation.policy.merge_mode == RepoMergeMode::GitHubQueue;
        let outcome = match evaluation.route() {
            // GitHub's queue would land what the gate refuses: it leaves the queue.
            Route::Blocked if github_queue => match self.blocked(&evaluation).await {
                Ok(done) => {
                    let why = evaluation.blocking_summary();
                    self.github_dequeue_if_queued(&evaluation, Some(why), done)
                        .await
                }
                Err(skip) => Err(skip),
            },
            Route::Inbox if github_queue => match self.inbox(&evaluation).await {
                Ok(done) => {
                    let why = format!(
                        "Quadrant {} waits for the owner's decision",
                        evaluation.verdict.quadrant
                    );
                    self.github_dequeue_if_queued(&evaluation, Some(why), done)
                        .await
                }
                Err(skip) => Err(skip),
            },
            // Only checks still to come fail, on a head the owner approved: an entry at
            // that head may stay (the queue tests its merge group), any other leaves.
            Route::Waiting if github_queue => match self.waiting(&evaluation).await {
                Ok(done) => self.github_dequeue_if_queued(&evaluation, None, done).await,
                Err(skip) => Err(skip),
            },
            Route::Blocked => self.blocked(&evaluation).await,
            Route::Inbox => self.inbox(&evaluation).await,
            Route::Mergeable => self.merge(&evaluation).await,
            // Handled before any read, in step (0); kept for completeness.
            Route::Ignored => Ok((
                PrAction::Ignored,
                ignored_detail(&evaluation.pr.base_ref, &evaluation.gated_branch),
            )),
            Route::Waiting => self.waiting(&evaluation).await,
            Route::Update => {
                let main_head = self.main_heads.get(&evaluation.pr.repo).cloned();
                self.update(&evaluation, main_head).await
            }
        };
        outcome
            .map_err(|skip| skip.of(&evaluation))
            .map(|(action, detail)| {
                PrOutcome::new(evaluation.pr.reference(), action, detail)
                    .with_verdict(Some(&evaluation.verdict))
                    .with_gate(Some(&evaluation.gate))
            })
    }

    /// (6) One diagnostic comment per pull request: updated when the failures change,
    /// left alone when they do not.
    async fn blocked(&mut self, evaluation: &PrEvaluation) -> Result<(PrAction, String), Skip> {
        let detail = evaluation.blocking_summary();
        let Some(body) = render_diagnostic(&evaluation.gate) else {
            return Ok((PrAction::Blocked, detail));
        };
        self.upsert_diagnostic(evaluation, &body).await?;
        Ok((PrAction::Blocked, detail))
    }

    /// Only required checks still to come fail: nothing to do but wait. An earlier
    /// diagnostic is edited to say so; no comment is created (decisions/0026).
    async fn waiting(&mut self, evaluation: &PrEvaluation) -> Result<(PrAction, String), Skip> {
        let pending: Vec<String> = evaluation
            .gate
            .blocking()
            .map(ToString::to_string)
            .collect();
        let body = format!(
            "{DIAGNOSTIC_PREFIX} — waiting for required checks on head {}:\n{}\n\nEvery other condition holds; the bot merges on the first tick after the checks are green.\n",
            evaluation.pr.head_sha.short(),
            pending
                .iter()
                .map(|line| format!("- {line}"))
                .collect::<Vec<_>>()
                .join("\n")
        );
        self.refresh_diagnostic(evaluation, &body).await?;
        let detail = format!(
            "waiting for required checks on head {}: {}",
            evaluation.pr.head_sha.short(),
            pending.join("; ")
        );
        Ok((PrAction::Waiting, detail))
    }

    /// The base is behind `main` and only checks still to come fail besides: ask GitHub to
    /// update the branch. A refusal (a conflict) blocks, with the reason on the pull request.
    async fn update(
        &mut self,
        evaluation: &PrEvaluation,
        main_head: Option<CommitSha>,
    ) -> Result<(PrAction, String), Skip> {
        let pr = &evaluation.pr;
        let main = main_head.map_or_else(|| "main".to_owned(), |h| h.short().to_owned());
        let update = self
            .github
            .update_branch(&pr.repo, pr.number, &pr.head_sha)
            .await
            .map_err(|e| Skip::github("cannot update the branch", &e))?;
        match update {
            UpdateBranchOutcome::Accepted => {
                let body = format!(
                    "{DIAGNOSTIC_PREFIX} — updating: base {} is behind main {main}; the bot asked GitHub to merge main into the branch. The approval carries over to that update; the bot merges once the required checks are green on it.\n",
                    pr.base_sha.short()
                );
                self.refresh_diagnostic(evaluation, &body).await?;
                let detail = format!(
                    "base {} is behind main {main}: branch update requested; merges once the checks are green on the updated head",
                    pr.base_sha.short()
                );
                Ok((PrAction::RaceRebased, detail))
            }
            UpdateBranchOutcome::Refused { message } => {
                self.update_refused(evaluation, &message).await
            }
        }
    }

    /// GitHub would not update the branch (a conflict, usually): blocked, and the one
    /// diagnostic comment says so.
    async fn update_refused(
        &mut self,
        evaluation: &PrEvaluation,
        message: &str,
    ) -> Result<(PrAction, String), Skip> {
        let body = format!(
            "{BLOCKED_HEADER}\n- GitHub refused to bring the branch up to date with main: {message}. Every other gate condition holds; merge main into the branch (resolving the conflict), then re-apply `ready-to-merge`.\n"
        );
        self.upsert_diagnostic(evaluation, &body).await?;
        Ok((
            PrAction::Blocked,
            format!("GitHub refused to update the branch: {message}"),
        ))
    }

    /// Edits the bot's latest diagnostic to `body` when there is one saying something
    /// else; never creates a comment.
    async fn refresh_diagnostic(
        &mut self,
        evaluation: &PrEvaluation,
        body: &str,
    ) -> Result<(), Skip> {
        let pr = &evaluation.pr;
        let Some(previous) = latest_diagnostic(&evaluation.comments, self.setup.bot()) else {
            return Ok(());
        };
        if should_post(Some(previous.body.as_str()), body) {
            self.github
                .update_comment(&pr.repo, previous.id, body)
                .await
                .map_err(|e| Skip::github("cannot update the diagnostic", &e))?;
            self.report.metrics.comments_posted += 1;
        }
        Ok(())
    }

    /// Posts `body` as the one diagnostic comment: left alone when the bot's latest
    /// diagnostic already says it, edited in place when it says something else, created
    /// otherwise.
    async fn upsert_diagnostic(
        &mut self,
        evaluation: &PrEvaluation,
        body: &str,
    ) -> Result<(), Skip> {
        let pr = &evaluation.pr;
        let previous = latest_diagnostic(&evaluation.comments, self.setup.bot());
        if should_post(previous.map(|c| c.body.as_str()), body) {
            let written = match previous {
                Some(previous) => {
                    self.github
                        .update_comment(&pr.repo, previous.id, body)
                        .await
                }
                None => self
                    .github
                    .create_comment(&pr.repo, pr.number, body)
                    .await
                    .map(drop),
            };
            written.map_err(|e| Skip::github("cannot post the diagnostic", &e))?;
            self.report.metrics.comments_posted += 1;
        }
        Ok(())
    }

    /// Whether GitHub's record of the inbox's `decision:pending-owner` shows it unchanged
    /// since the last `labeled` event of it in `events` (the record is read once a tick).
    async fn pending_label_unchanged(
        &mut self,
        inbox: &RepoName,
        events: &[LabelEvent],
    ) -> Result<bool, Skip> {
        if self.pending_record.is_none() {
            let record = match self
                .github
                .label_records(inbox, &[PENDING_OWNER.to_owned()])
                .await
            {
                Ok(records) => LabelRecords::Read(records),
                Err(GitHubError::NotFound { what }) => LabelRecords::Unavailable {
                    reason: format!("{what} not found"),
                },
                Err(e) => return Err(Skip::github("cannot read the decision inbox's label", &e)),
            };
            self.pending_record = Some(record);
        }
        let record = self
            .pending_record
            .as_ref()
            .unwrap_or(&LabelRecords::NotRead);
        Ok(unchanged_since(record, PENDING_OWNER, labelled_at(events, PENDING_OWNER)).is_ok())
    }

    /// (7) Quadrant D waiting for the owner: one open inbox issue per pull request.
    async fn inbox(&mut self, evaluation: &PrEvaluation) -> Result<(PrAction, String), Skip> {
        let pr = &evaluation.pr;
        let inbox = self.setup.config().projects().inbox_repository();
        let query = IssueQuery {
            state: Some(IssueState::Open),
            labels: vec![PENDING_OWNER.to_owned()],
        };
        if self.pending_inbox.is_none() {
            let listed = self
                .github
                .issues(inbox, &query)
                .await
                .map_err(|e| Skip::github("cannot read the decision inbox", &e))?;
            self.pending_inbox = Some(listed);
        }
        let pending = self.pending_inbox.clone().unwrap_or_default();
        let bot = self.setup.bot();
        let candidates: Vec<PrNumber> = pending_candidates(&pending, &pr.repo, pr.number, bot)
            .map(|issue| issue.number)
            .collect();
        for number in candidates {
            // A question that failed its integrity check is never honoured: ask afresh.
            if pending
                .iter()
                .any(|i| i.number == number && i.labels.iter().any(|l| l == INTEGRITY_FAILED))
            {
                continue;
            }
            // Only an issue the bot also labelled is its question (an agent can label).
            let events = self
                .github
                .label_events(inbox, number)
                .await
                .map_err(|e| Skip::github("cannot read a decision inbox issue's labels", &e))?;
            // ... and the label it applied was not renamed `decision:pending-owner` since.
            if labelled_by_bot(&events, bot) && self.pending_label_unchanged(inbox, &events).await?
            {
                let detail = format!(
                    "Quadrant D awaits the owner: decision inbox issue {inbox}#{number} is already pending"
                );
                return Ok((PrAction::Inbox, detail));
            }
        }
        let issue = inbox_issue(pr, &evaluation.verdict, self.now);
        let opened = self
            .github
            .create_issue(inbox, &issue)
            .await
            .map_err(|e| Skip::github("cannot open the decision inbox issue", &e))?;
        self.report.metrics.inbox_opened += 1;
        // Signed once the issue has its number. Cut short here, the question stays
        // unsigned: the next poll marks it `decision:inbox-integrity-failed` and this path
        // asks again (docs/decisions/0040).
        let key = self.setup.options().receipt_key.as_ref();
        if let Some(signature) = signature_comment(key, inbox, &opened, pr) {
            self.github
                .create_comment(inbox, opened.number, &signature)
                .await
                .map_err(|e| Skip::github("cannot sign the decision inbox issue", &e))?;
        }
        let detail = format!(
            "Quadrant D awaits the owner: opened decision inbox issue {inbox}#{}",
            opened.number
        );
        self.pending_inbox.get_or_insert_default().push(opened);
        Ok((PrAction::Inbox, detail))
    }

    /// Queue mode: the pull request passed the gate (C4 aside) and joins the merge queue;
    /// its position is known once every pull request of the repository is read
    /// ([`Runner::order_queue`]). The driver builds and lands it (`queue`), never this path.
    async fn enqueue(&mut self, evaluation: &PrEvaluation) -> (PrAction, String) {
        let pr = &evaluation.pr;
        let quadrant = evaluation.verdict.quadrant;
        let settings = self.setup.config().projects().merge_settings(&pr.repo);
        let label = settings.priority_label();
        let records = with_priority_record(self.github, pr, label).await;
        let candidate = candidate(
            records.as_ref().unwrap_or(pr),
            &evaluation.policy.allowlist,
            label,
            self.now,
        );
        if self.setup.options().merge_mode == MergeMode::Observe {
            return (
                PrAction::Observe,
                format!(
                    "observe-only: would have joined the merge queue as Quadrant {quadrant} (set merge_enabled: true in env.yml to enable merging)"
                ),
            );
        }
        self.queued
            .entry(pr.repo.clone())
            .or_default()
            .push(candidate);
        self.report.queued_prs.insert(
            (pr.repo.clone(), pr.number),
            (pr.clone(), evaluation.verdict.clone()),
        );
        (
            PrAction::Queued,
            format!("joins the merge queue as Quadrant {quadrant}"),
        )
    }

    /// Puts the queue candidates of `repo` in order once all its pull requests are
    /// processed: each candidate's outcome then says its position, or why it is held out
    /// of the queue (with the reason's code), and the order is kept for the driver.
    pub(crate) fn order_queue(&mut self, repo: &RepoName) {
        let candidates = self.queued.remove(repo).unwrap_or_default();
        let settings = self.setup.config().projects().merge_settings(repo);
        if !settings.is_queue() {
            return;
        }
        let ordered = order(candidates, settings.max_queued_per_agent());
        let total = ordered.queue.len();
        for outcome in &mut self.report.outcomes {
            if outcome.action != PrAction::Queued {
                continue;
            }
            let Some((name, number)) = outcome.pr.rsplit_once('#') else {
                continue;
            };
            if name != repo.as_str() {
                continue;
            }
            let Some(number) = number.parse::<u64>().ok().map(PrNumber::new) else {
                continue;
            };
            let quadrant = outcome
                .quadrant
                .map_or_else(|| "?".to_owned(), |q| q.to_string());
            if let Some(position) = ordered.position(number) {
                outcome.detail = one_line(&format!(
                    "queued at position {position} of {total} as Quadrant {quadrant} (queue_position)"
                ));
            } else if let Some(held) = ordered.held.iter().find(|h| h.candidate.pr == number) {
                outcome.detail = one_line(&format!(
                    "held out of the merge queue ({}): {}",
                    held.reason.code(),
                    held.reason
                ));
            }
        }
        self.report.queues.insert(repo.clone(), ordered);
    }

    /// `github-queue` mode: the entries of the repository's merge queue, read once per
    /// repository and tick (`None`: no queue on the gated branch).
    async fn github_queue_entries(
        &mut self,
        repo: &RepoName,
    ) -> Result<Option<Vec<QueueEntry>>, Skip> {
        if let Some(entries) = self.github_queues.get(repo) {
            return Ok(entries.clone());
        }
        let branch = self.setup.options.gated_branch(repo).to_owned();
        let entries = self
            .github
            .merge_queue(repo, &branch)
            .await
            .map_err(|e| Skip::github("cannot read GitHub's merge queue", &e))?;
        self.github_queues.insert(repo.clone(), entries.clone());
        if let Some(first) = &entries {
            self.github_queue_first_read
                .insert(repo.clone(), first.clone());
        }
        Ok(entries)
    }

    /// `github-queue` mode, a pull request whose gate does not pass (C4 aside; `blocking`
    /// says why, `None` when only required checks still to come fail): when it is in
    /// GitHub's merge queue, mp dequeues it if the queue would land what the gate refuses:
    /// an agent that enqueued its own pull request, a label removed, an inbox reject, the
    /// classifier sending it to the owner, or an entry at a head other than the one the
    /// gate judged (decisions/0078). The outcome's detail says so first. Observe-only mode
    /// writes nothing.
    async fn github_dequeue_if_queued(
        &mut self,
        evaluation: &PrEvaluation,
        blocking: Option<String>,
        (action, detail): (PrAction, String),
    ) -> Result<(PrAction, String), Skip> {
        let pr = &evaluation.pr;
        if self.setup.options().merge_mode == MergeMode::Observe {
            return Ok((action, detail));
        }
        let Some(entries) = self.github_queue_entries(&pr.repo).await? else {
            return Ok((action, detail));
        };
        let Some(entry) = entries.iter().find(|e| e.number == pr.number).cloned() else {
            return Ok((action, detail));
        };
        let Some(why) = dequeue_reason(&entry.head, &pr.head_sha, blocking.as_deref()) else {
            return Ok((action, detail));
        };
        let step = self.github_dequeue(pr, entry, why.clone()).await?;
        // The step says why first; the route's own detail follows unless it is that why.
        let mut line = format!("{step} ({})", step.code());
        if detail != why {
            line = format!("{line}; {detail}");
        }
        Ok((action, line))
    }

    /// Removes the pull request's `entry` from GitHub's merge queue, saying `why`; the step
    /// joins the pull request's outcome.
    async fn github_dequeue(
        &mut self,
        pr: &PrContext,
        entry: QueueEntry,
        why: String,
    ) -> Result<GitHubQueueOutcome, Skip> {
        self.github
            .dequeue_pull(&pr.repo, pr.number)
            .await
            .map_err(|e| Skip::github("cannot dequeue from GitHub's merge queue", &e))?;
        if let Some(Some(entries)) = self.github_queues.get_mut(&pr.repo) {
            entries.retain(|e| e.number != pr.number);
        }
        self.github_dequeued
            .entry(pr.repo.clone())
            .or_default()
            .push((pr.number, entry.position));
        let step = GitHubQueueOutcome::Dequeued {
            entry_head: entry.head,
            enqueuer: entry.enqueuer,
            why,
        };
        self.github_queue_steps.push(step.clone());
        Ok(step)
    }

    /// `github-queue` mode: the pull request passed the gate (C4 aside). GitHub's merge queue
    /// lands this repository: mp enqueues the head the owner's approval is bound to (the
    /// head the gate passed on) with `expectedHeadOid`, so GitHub refuses any other head;
    /// a pull request already queued at that head is left alone, one queued at another
    /// head is dequeued first. It never merges or updates a branch. Where no merge queue
    /// protects the branch, nothing is written (decisions/0074, 0078). The branch's rules
    /// and its queue are read once per repository and tick.
    async fn github_queue(
        &mut self,
        evaluation: &PrEvaluation,
    ) -> Result<(PrAction, String), Skip> {
        let pr = &evaluation.pr;
        let quadrant = evaluation.verdict.quadrant;
        if self.setup.options().merge_mode == MergeMode::Observe {
            return Ok((
                PrAction::Observe,
                format!(
                    "observe-only: would have enqueued in GitHub's merge queue as Quadrant {quadrant} (set merge_enabled: true in env.yml to enable merging)"
                ),
            ));
        }
        let branch = self.setup.options.gated_branch(&pr.repo).to_owned();
        let rules = match self.branch_rules.get(&pr.repo) {
            Some(rules) => rules.clone(),
            None => {
                let rules = self
                    .github
                    .branch_rules(&pr.repo, &branch)
                    .await
                    .map_err(|e| Skip::github("cannot read the rules of the gated branch", &e))?;
                self.branch_rules.insert(pr.repo.clone(), rules.clone());
                rules
            }
        };
        let step = GitHubQueueStep::decide(&rules, &branch, &pr.head_sha);
        let GitHubQueueStep::WouldEnqueue { head, .. } = &step else {
            return Ok((
                PrAction::Blocked,
                format!("Quadrant {quadrant}: {step} ({})", step.code()),
            ));
        };
        let head = head.clone();
        let entries = self
            .github_queue_entries(&pr.repo)
            .await?
            .unwrap_or_default();
        let mut before = String::new();
        if let Some(entry) = entries.iter().find(|e| e.number == pr.number).cloned() {
            match dequeue_reason(&entry.head, &head, None) {
                None => {
                    let outcome = GitHubQueueOutcome::AlreadyQueued {
                        branch,
                        head,
                        position: entry.position,
                    };
                    self.github_queue_steps.push(outcome.clone());
                    return Ok((
                        PrAction::Queued,
                        format!("Quadrant {quadrant}: {outcome} ({})", outcome.code()),
                    ));
                }
                Some(why) => {
                    let step = self.github_dequeue(pr, entry, why).await?;
                    before = format!("{step} ({}); ", step.code());
                }
            }
        }
        // GitHub's queue removed it at this head (a failed group, a timeout): it stays out
        // until the head changes rather than cost a CI run every pass (decisions/0085).
        if before.is_empty() {
            let removal = self
                .github
                .last_queue_removal(&pr.repo, pr.number)
                .await
                .map_err(|e| Skip::github("cannot read the pull request's queue removals", &e))?;
            if let Some(removal) = removal
                && held_after_removal(
                    removal.head.as_ref(),
                    removal.actor.as_ref(),
                    &head,
                    &self.setup.bot,
                )
            {
                // Said once on the pull request, so its author knows why it waits.
                let by = removal
                    .actor
                    .as_ref()
                    .map(|actor| format!(" (by {actor})"))
                    .unwrap_or_default();
                let why = removal
                    .reason
                    .as_deref()
                    .map(|reason| format!(": {reason}"))
                    .unwrap_or_default();
                let body = format!(
                    "Merge Gate L1 — merge blocked:\n\
                     - GitHub's merge queue removed this pull request at head `{}`{by}{why}. \
                     Every gate condition holds, but the bot does not enqueue the same head \
                     again: push a fix (the owner approves the new head), or enqueue it \
                     yourself to try this head once more.\n",
                    head.short()
                );
                self.upsert_diagnostic(evaluation, &body).await?;
                let outcome = GitHubQueueOutcome::HeldAfterRemoval {
                    head,
                    actor: removal.actor,
                    reason: removal.reason,
                };
                let detail = format!("Quadrant {quadrant}: {outcome} ({})", outcome.code());
                self.github_queue_steps.push(outcome);
                return Ok((PrAction::Blocked, detail));
            }
        }
        let outcome = match self.github.enqueue_pull(&pr.repo, pr.number, &head).await {
            Ok(entry) => GitHubQueueOutcome::Enqueued {
                branch,
                head,
                position: entry.position,
            },
            Err(GitHubError::HeadMoved { .. }) => GitHubQueueOutcome::HeadMoved { head },
            Err(GitHubError::NotMergeable { message, .. }) => {
                GitHubQueueOutcome::Refused { message }
            }
            Err(e) => {
                return Err(Skip::github("cannot enqueue in GitHub's merge queue", &e));
            }
        };
        let action = match outcome {
            GitHubQueueOutcome::Enqueued { .. } => PrAction::Enqueued,
            _ => PrAction::Blocked,
        };
        let detail = format!(
            "Quadrant {quadrant}: {before}{outcome} ({})",
            outcome.code()
        );
        self.github_queue_steps.push(outcome);
        Ok((action, detail))
    }

    /// (8)-(11) Race guard, observe or merge, and the B/C audit issue.
    async fn merge(&mut self, evaluation: &PrEvaluation) -> Result<(PrAction, String), Skip> {
        let pr = &evaluation.pr;
        let quadrant = evaluation.verdict.quadrant;
        match evaluation.policy.merge_mode {
            RepoMergeMode::Queue => return Ok(self.enqueue(evaluation).await),
            RepoMergeMode::GitHubQueue => return self.github_queue(evaluation).await,
            _ => {}
        }
        // (8) L3: `main` must not have moved since C4 looked.
        let main_now = self
            .github
            .branch_head(&pr.repo, self.setup.options.gated_branch(&pr.repo))
            .await
            .map_err(|e| Skip::github("cannot re-read the main head", &e))?;
        if main_now != pr.base_sha {
            // Later pull requests of this repository compare with the head just read.
            self.main_heads.insert(pr.repo.clone(), main_now.clone());
            let update = self
                .github
                .update_branch(&pr.repo, pr.number, &pr.head_sha)
                .await
                .map_err(|e| Skip::github("main moved; cannot update the branch", &e))?;
            let what = match update {
                UpdateBranchOutcome::Accepted => "branch update requested".to_owned(),
                UpdateBranchOutcome::Refused { message } => {
                    return self.update_refused(evaluation, &message).await;
                }
            };
            let detail = format!(
                "main moved to {} after the gate checked base {}: {what}; no merge this tick",
                main_now.short(),
                pr.base_sha.short()
            );
            return Ok((PrAction::RaceRebased, detail));
        }
        // (9) Observe mode.
        if self.setup.options().merge_mode == MergeMode::Observe {
            let detail = format!(
                "observe-only: would have merged as Quadrant {quadrant} (set merge_enabled: true in env.yml to enable merging)"
            );
            return Ok((PrAction::Observe, detail));
        }
        // (10) Merge pinned to the evaluated head, keeping the agents' identity trailers.
        let request = MergeRequest {
            head_sha: pr.head_sha.clone(),
            method: MergeMethod::Squash,
            commit_message: identity_block(pr.commits.iter().map(|c| &c.trailers)),
        };
        let merged = match self.github.merge_pull(&pr.repo, pr.number, &request).await {
            Ok(sha) => {
                // The squash commit is `main`'s new head: later pull requests of this
                // repository see their base is stale (C4) and are updated, not merged on a
                // stale evaluation, and no receipt is written for a merge that cannot
                // happen this tick (decisions/0004).
                self.main_heads.insert(pr.repo.clone(), sha.clone());
                sha
            }
            Err(GitHubError::NotMergeable { message, .. }) => {
                // Every condition holds but GitHub refuses (conflicts, branch protection):
                // say so on the pull request, once, so its author can act.
                let body = format!(
                    "Merge Gate L1 — merge blocked:\n\
                     - GitHub refused the merge: {message}. Every gate condition holds; \
                     resolve the conflict or the branch protection rule, and the bot \
                     will try again on the next cron tick.\n"
                );
                self.upsert_diagnostic(evaluation, &body).await?;
                return Ok((
                    PrAction::Blocked,
                    format!("GitHub refused the merge: {message}"),
                ));
            }
            Err(e @ GitHubError::HeadMoved { .. }) => {
                return Err(Skip::new(format!("{e}; re-evaluated on the next tick")));
            }
            // The answer was lost or spoilt (timeout, dropped connection, 5xx, unreadable):
            // the merge may have happened. GitHub's own record decides; the request is
            // never sent twice.
            Err(e @ (GitHubError::Unavailable { .. } | GitHubError::Malformed { .. })) => {
                match self.github.pull(&pr.repo, pr.number).await {
                    Ok(now) if now.merged && now.head_sha == pr.head_sha => {
                        match now.merge_commit {
                            Some(sha) => {
                                self.report.warnings.push(format!(
                                    "{}: the answer to the merge was lost ({e}); GitHub shows it merged",
                                    pr.reference()
                                ));
                                sha
                            }
                            None => return Err(Skip::github("merge failed", &e)),
                        }
                    }
                    _ => return Err(Skip::github("merge failed", &e)),
                }
            }
            Err(e) => return Err(Skip::github("merge failed", &e)),
        };
        // (11) Passive audit issue after a B or C merge.
        if let Some(issue) = audit_issue(pr, &evaluation.verdict, &merged, self.now) {
            let inbox = self.setup.config().projects().inbox_repository();
            match self.github.create_issue(inbox, &issue).await {
                Ok(_) => self.report.metrics.audit_issues_opened += 1,
                Err(e) => self.report.warnings.push(format!(
                    "{}: merged, but the Quadrant {quadrant} audit issue could not be opened in {inbox}: {e}",
                    pr.reference()
                )),
            }
        }
        let detail = format!(
            "merged as Quadrant {quadrant}: squash commit {} pinned to head {}",
            merged.short(),
            pr.head_sha.short()
        );
        Ok((PrAction::Merged { sha: merged }, detail))
    }
}

/// `pr` with GitHub's record of the queue's priority label `label` added, when the label is
/// on it and its record was not read with the approval labels: a priority counts only
/// while the record shows the label unchanged since the owner applied it
/// (decisions/0048, 0060). A failed read leaves the record out, so the label is no
/// priority this tick. `None` when nothing needs reading. The tick and `mp explain` both
/// make a pull request's queue candidate over what this returns.
pub async fn with_priority_record(
    github: &dyn GitHub,
    pr: &PrContext,
    label: &str,
) -> Option<PrContext> {
    if !pr.labels.iter().any(|l| l == label) || pr.label_records.get(label).is_some() {
        return None;
    }
    let read = github
        .label_records(&pr.repo, &[label.to_owned()])
        .await
        .ok()?;
    let mut with = pr.clone();
    with.label_records = match with.label_records {
        LabelRecords::Read(mut records) => {
            records.extend(read);
            LabelRecords::Read(records)
        }
        LabelRecords::NotRead | LabelRecords::Unavailable { .. } => LabelRecords::Read(read),
    };
    Some(with)
}
