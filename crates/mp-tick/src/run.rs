//! One whole tick (bot.md §1): durable state, the L4 burn-in clock, the pull-request path,
//! the branch supervisor per repository, and the governance work, with the state saved
//! after every repository and once more on every way out.
//!
//! Order and failure policy:
//!
//! 1. Load the watermarks from the `bot-state` branch (creating it on the first run). A
//!    corrupt or unreadable state ends the tick here, before any write (fail closed).
//! 2. Poll the decision inbox (bot.md §10.2): an owner's approval is applied before the
//!    pull-request path, so it merges this very tick; a rejection restarts the L4 burn-in
//!    advisory window.
//! 3. The burn-in clock (opt-in `l4_burn_in_days`) decides the L4 registry severity for
//!    the pull-request path, unless the caller set [`TickOptions::registry_severity`];
//!    its file is fail-safe (a bad clock restarts it).
//! 4. The pull-request path over every gated repository.
//! 5. The branch supervisor over every supervised repository (audit-only ones included;
//!    [`TickOptions::repos`] limits it too), saving the watermarks after each. Before each
//!    repository, remaining calls under [`RATE_LIMIT_RESERVE`] end the loop early; a
//!    primary rate limit during a scan does too, a secondary one only skips that
//!    repository.
//! 6. The drift check (bot.md §15), sharing the tick's new-issue budget.
//! 7. The final save, on every path that got past step 1, errors included.
//!
//! Between steps 1 and 2 the tick takes the lease (`lease`), and after step 7 gives it
//! back: a second tick started meanwhile stops with [`TickError::Lease`] before writing.
//! With a [lease clock](TickOptions::with_lease_clock) the tick renews it every third of
//! its duration at the steps' boundaries and before each repository of step 5; a lease
//! found lost there ([`LeaseError::Lost`]) ends the tick before its next write, the final
//! save included.
//!
//! A sharded tick ([`TickOptions::shard`]) does steps 3-5 for its own repositories and
//! inbox issues only, runs the drift check only in shard 0, and saves the watermarks by
//! merging its entries into the file (`StateStore::save_shard`); docs/decisions/0021.

use serde_json::Value;

use mp_core::branch::IncidentAuthority;
use mp_core::config::Config;
use mp_core::gate::ConditionId;
use mp_core::gate::burn_in::{BurnInStatus, burn_in};
use mp_core::ids::{Login, RepoName, Timestamp};
use mp_core::port::{AuditLog, GitHubError, GitHubHistory};
use mp_core::state::Watermarks;

use super::drift_check::{DriftIncident, DriftReport, check_drift};
use super::inbox_poll::{InboxReport, poll_inbox};
use super::keeper::{Fenced, Keeper};
use super::lease::{Lease, LeaseError};
use super::progress::TickPhase;
use super::queue::{Driver, QueueReport};
use super::report::QueuedPrs;
use super::report::{PrOutcome, TickMetrics};
use super::state_store::{SHARD_SAVE_ATTEMPTS, SaveOutcome, StateGuard, StateStore};
use super::supervisor::{
    SupervisorMetrics, SupervisorReport, SupervisorRun, SupervisorStop, run_branch_supervisor,
};
use super::{Shard, TickError, TickOptions, run_pr_path_as};

#[cfg(test)]
mod tests;

/// Below this many remaining calls in the primary rate-limit window, the tick saves and
/// ends early, keeping headroom to always reach the save.
pub const RATE_LIMIT_RESERVE: u32 = 200;

/// What the governance-repository work did: the decision inbox poll (before the
/// pull-request path, so an approval merges the same tick) and the drift check (after the
/// repositories).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct GovernanceReport {
    /// The decision inbox poll, when it ran.
    pub inbox: Option<InboxReport>,
    /// The drift check, when it ran.
    pub drift: Option<DriftReport>,
    /// Whether a Quadrant-D rejection restarted the L4 burn-in clock this tick.
    pub burn_in_reset: bool,
    /// Things an operator should know, one line each.
    pub warnings: Vec<String>,
}

impl PartialEq for GovernanceReport {
    /// Compares what the tick decided: the counters and warnings.
    fn eq(&self, other: &Self) -> bool {
        self.inbox.as_ref().map(|i| i.metrics.to_json())
            == other.inbox.as_ref().map(|i| i.metrics.to_json())
            && self.drift.as_ref().map(ToString::to_string)
                == other.drift.as_ref().map(ToString::to_string)
            && self.burn_in_reset == other.burn_in_reset
            && self.warnings == other.warnings
    }
}

/// Everything one tick did.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct FullTickReport {
    /// One outcome per pull request, in processing order.
    pub outcomes: Vec<PrOutcome>,
    /// The pull-request path counters; `rate_limited` is also set when the supervisor
    /// loop ended early, and `rate_limit_remaining` is read at the very end.
    pub metrics: TickMetrics,
    /// The branch supervisor counters, summed over the repositories.
    pub supervisor_metrics: SupervisorMetrics,
    /// Commits L2 still tracks as unsettled after the tick (`l2_unsettled`).
    pub l2_unsettled: usize,
    /// 1 when the burn-in clock promoted L4 to blocking on this tick (`l4_promoted`).
    pub l4_promoted: u32,
    /// Why the tick ended before scanning every repository, if it did.
    pub ended_early_reason: Option<String>,
    /// One report per repository the supervisor looked at, in `projects.yml` order.
    pub supervisor: Vec<SupervisorReport>,
    /// The burn-in clock's status, when the clock is active.
    pub burn_in: Option<BurnInStatus>,
    /// How many times the watermarks file was written.
    pub state_writes: u32,
    /// The decision inbox and drift check.
    pub governance: GovernanceReport,
    /// Things an operator should know, one line each (the pull-request path's, the
    /// state's, and every repository's).
    pub warnings: Vec<String>,
    /// What only the operator can fix (see [`super::TickReport::operator_errors`]); `mp tick`
    /// ends with exit 1 when there is any.
    pub operator_errors: Vec<String>,
    /// The shard this tick ran, when it was sharded.
    pub shard: Option<Shard>,
    /// What the merge queue's driver did, per repository in queue mode.
    pub queue: Vec<QueueReport>,
}

impl FullTickReport {
    /// The `tick complete` metrics object: the pull-request path's keys plus
    /// `l5_incidents`, `l2_incidents`, `l2_unsettled`, `issues_deferred`, `bootstrapped`,
    /// `auto_revert_prs`, `l4_promoted` and `ended_early_reason`.
    pub fn metrics_json(&self) -> Value {
        let mut json = self.metrics.to_json();
        let m = &self.supervisor_metrics;
        if let Value::Object(map) = &mut json {
            let extra = [
                ("l5_incidents", Value::from(m.l5_incidents)),
                ("l2_incidents", Value::from(m.l2_incidents)),
                ("l2_unsettled", Value::from(self.l2_unsettled)),
                ("issues_deferred", Value::from(m.issues_deferred)),
                ("bootstrapped", Value::from(m.bootstrapped)),
                ("auto_revert_prs", Value::from(m.auto_revert_prs)),
                ("l4_promoted", Value::from(self.l4_promoted)),
                (
                    "ended_early_reason",
                    self.ended_early_reason
                        .clone()
                        .map_or(Value::Null, Value::from),
                ),
            ];
            for (key, value) in extra {
                map.insert(key.to_owned(), value);
            }
            if let Some(inbox) = &self.governance.inbox
                && let Value::Object(inbox) = inbox.metrics.to_json()
            {
                map.extend(inbox);
            }
            let drift = self
                .governance
                .drift
                .as_ref()
                .map_or(0, |d| d.metrics.drift_incidents);
            map.insert("drift_incidents".to_owned(), Value::from(drift));
        }
        json
    }

    fn end_early(&mut self, reason: String) {
        self.metrics.rate_limited = true;
        self.warnings.push(reason.clone());
        self.ended_early_reason = Some(reason);
    }
}

/// Runs one whole tick at `now` (see the module docs for the order).
///
/// # Errors
/// [`TickError::StateCorrupt`] / [`TickError::StateUnavailable`] when the state cannot be
/// trusted (nothing is written); [`TickError::StateSteered`] when someone other than mp or
/// an allowlisted person wrote it (only its incident is written); [`TickError::BotLogin`] / [`TickError::PathRules`] as for
/// the pull-request path; [`TickError::StateSave`] when saving fails for a reason other
/// than a stale blob or a secondary rate limit. Every error after the load still goes
/// through the final save.
pub async fn run_tick(
    github: &dyn GitHubHistory,
    audit: &dyn AuditLog,
    config: &Config,
    options: &TickOptions,
    now: Timestamp,
) -> Result<FullTickReport, TickError> {
    // Who the bot is comes first: a tick that cannot tell its own receipts fails before
    // it writes anything, the first run's state branch included.
    let bot = github.bot_login().await.map_err(TickError::BotLogin)?;
    let governance = config.projects().governance_repo();
    // Which branch each repository gates (`main` unless GitHub or the configuration says
    // otherwise), read once.
    let (mut options, rotation) = options.clone().at(now)?;
    let mut branch_warnings: Vec<String> = rotation.into_iter().collect();
    if options.default_branches == super::DefaultBranches::default() {
        let (branches, warnings) = super::resolve_default_branches(github, config, &options).await;
        options = options.with_default_branches(branches);
        branch_warnings.extend(warnings);
    }
    let options = &options;
    let guard = StateGuard::new(
        IncidentAuthority::new(bot.clone(), governance.clone())
            .with_key(options.receipt_key.clone()),
        config.allowlist().to_vec(),
    );
    let (mut store, mut state) =
        StateStore::load(github, governance, options.gated_branch(governance), &guard).await?;
    // One tick at a time: a second one stops here, before its first write.
    let lease = if options.lease_held {
        None
    } else {
        Some(
            Lease::take_for(
                github,
                governance,
                options.shard,
                &options.lease_holder,
                options.lease_terms,
                now,
            )
            .await?,
        )
    };
    let mut report = FullTickReport {
        shard: options.shard,
        warnings: branch_warnings,
        ..FullTickReport::default()
    };
    report.warnings.extend(store.notes().iter().cloned());
    if let Some(head) = store.created_branch_at() {
        report.warnings.push(format!(
            "first run: created the bot-state branch of {governance} at {}",
            head.short()
        ));
    }
    let keeper = Keeper::new(
        github,
        lease,
        options.lease_clock.clone(),
        options
            .shard
            .map_or_else(|| "all".to_owned(), |s| s.to_string()),
        now,
    );
    let mut tick = Tick {
        github,
        store: &mut store,
        state: &mut state,
        report: &mut report,
        shard: options.shard,
        keeper: &keeper,
    };
    let mut body = tick.body(audit, config, options, &bot, now).await;
    // The final save: every way out of the body passes here, then the lease goes back.
    // A lease lost on the way stops every write, the final save included.
    if let Some(lost) = keeper.lost()
        && !matches!(body, Err(TickError::Lease(LeaseError::Lost { .. })))
    {
        body = Err(lost.into());
    }
    let lost = matches!(body, Err(TickError::Lease(LeaseError::Lost { .. })));
    let saved = if lost {
        Ok(())
    } else {
        match tick.keep_lease().await {
            Ok(()) => tick.save().await,
            Err(error) => Err(error),
        }
    };
    let released_at = keeper.now();
    if let Some(lease) = keeper.into_lease()
        && !lost
        && let Err(warning) = lease.release(github, released_at).await
    {
        report.warnings.push(warning);
    }
    report.l2_unsettled = match options.shard {
        Some(shard) => state.unsettled_count_of(|repo| shard.owns(repo)),
        None => state.unsettled_count(),
    };
    report.metrics.rate_limit_remaining = github.rate_limit_remaining();
    report.metrics.graphql_remaining = github.graphql_remaining();
    body?;
    saved?;
    Ok(report)
}

/// The tick after the state is loaded.
struct Tick<'a> {
    github: &'a dyn GitHubHistory,
    store: &'a mut StateStore,
    state: &'a mut Watermarks,
    report: &'a mut FullTickReport,
    shard: Option<Shard>,
    keeper: &'a Keeper<'a>,
}

impl Tick<'_> {
    /// Renews the tick's own lease when a third of it has passed since the last renewal
    /// (by the lease clock), before the next write ([`Keeper::keep`]).
    ///
    /// # Errors
    /// [`LeaseError::Lost`] when the lease expired or someone else holds it, or when it
    /// could not be renewed within the renew deadline: the tick writes nothing more.
    async fn keep_lease(&mut self) -> Result<(), TickError> {
        let warning = self.keeper.keep().await?;
        self.report.warnings.extend(warning);
        Ok(())
    }

    async fn save(&mut self) -> Result<(), TickError> {
        // The state too is written only under the lease (decisions/0077).
        self.keeper.may_write()?;
        let outcome = match self.shard {
            Some(shard) => {
                self.store
                    .save_shard(self.github, self.state, shard)
                    .await?
            }
            None => self.store.save(self.github, self.state).await?,
        };
        match outcome {
            SaveOutcome::Written => self.report.state_writes += 1,
            SaveOutcome::Unchanged => {}
            SaveOutcome::Skipped { warning } => self.report.warnings.push(warning),
        }
        Ok(())
    }

    async fn body(
        &mut self,
        audit: &dyn AuditLog,
        config: &Config,
        options: &TickOptions,
        bot: &Login,
        now: Timestamp,
    ) -> Result<(), TickError> {
        let mut options = options.clone();
        // Every write of the steps below is checked against the lease, as the pull-request
        // path's are (decisions/0077): past the renew deadline it is refused without
        // calling GitHub, and the tick stops at its next step.
        let fenced = Fenced::new(self.github, self.keeper);
        let github: &dyn GitHubHistory = &fenced;

        // The decision inbox first: an owner's approval then merges this very tick, and a
        // rejected pull request is already closed when the pull-request path lists them.
        options.progress.phase(TickPhase::Inbox, 0);
        let availability = self.availability(config).await;
        let inbox = poll_inbox(github, config, &options, bot, availability.as_deref(), now).await;
        let reset = inbox.resets_burn_in();
        self.report.warnings.extend(inbox.warnings.iter().cloned());
        self.report.governance.inbox = Some(inbox);

        self.keep_lease().await?;
        self.burn_in(config, &mut options, reset, now).await;

        self.keep_lease().await?;
        let mut pr = run_pr_path_as(
            self.github,
            audit,
            config,
            &options,
            bot.clone(),
            now,
            Some(self.keeper),
        )
        .await?;
        let queues = std::mem::take(&mut pr.queues);
        let queued_prs = std::mem::take(&mut pr.queued_prs);
        self.report.outcomes = pr.outcomes;
        self.report.metrics = pr.metrics;
        self.report.warnings.extend(pr.warnings);
        self.report.operator_errors.extend(pr.operator_errors);
        if let Some(lost) = self.keeper.lost() {
            return Err(lost.into());
        }
        if self.report.metrics.rate_limited {
            self.report.end_early(
                "a rate limit stopped the pull-request path (see the warnings); the branch supervisor waits for the next tick"
                    .to_owned(),
            );
            return Ok(());
        }

        // The merge queue of each repository in queue mode, after its pull requests were
        // evaluated and before the supervisor reads the default branch.
        if options.merge_mode == super::MergeMode::Merge {
            self.keep_lease().await?;
            drive_queues(
                github,
                self.report,
                config,
                &options,
                bot,
                (&queues, &queued_prs),
                now,
            )
            .await;
        }

        let mut run = SupervisorRun::new(bot.clone())
            .with_skills(options.skills.clone())
            .with_default_branches(options.default_branches.clone())
            .with_receipt_key(options.receipt_key.clone());
        let repos: Vec<&RepoName> = config
            .projects()
            .supervised_repos()
            .iter()
            .filter(|repo| options.covers(repo) && !options.global_work_only)
            .collect();
        options.progress.phase(TickPhase::Supervisor, repos.len());
        for (index, repo) in repos.iter().enumerate() {
            self.keep_lease().await?;
            if let Some(remaining) = self.github.rate_limit_remaining()
                && remaining < RATE_LIMIT_RESERVE
            {
                self.report.end_early(format!(
                    "rate-limit reserve reached: {remaining} calls left (reserve {RATE_LIMIT_RESERVE}); repositories left for the next tick: {}",
                    repos.len() - index
                ));
                break;
            }
            let scan = run_branch_supervisor(github, config, self.state, repo, &mut run, now).await;
            self.report.supervisor_metrics.add(&scan.metrics);
            self.report.metrics.skill_failures += scan.metrics.skill_failures;
            self.report.warnings.extend(scan.warnings.iter().cloned());
            let stop = scan.stopped.clone();
            self.report.supervisor.push(scan);
            self.save().await?;
            options
                .progress
                .repository_done(TickPhase::Supervisor, repo);
            if let Some(SupervisorStop::RateLimited { message }) = stop {
                self.report.end_early(format!(
                    "primary rate limit reached while scanning {repo} ({message}); repositories left for the next tick: {}",
                    repos.len() - index - 1
                ));
                break;
            }
        }

        // The drift check goes after the repository loop, also when it ended early (it
        // checks the reserve itself), and shares the tick's issue budget. It belongs to no
        // repository: a sharded tick runs it in shard 0 only.
        if !options.runs_global_work() {
            return Ok(());
        }
        if run.issues_left() == 0 && config.mirror_paths().is_some() {
            self.report.supervisor_metrics.issues_deferred += 1;
            self.report
                .governance
                .warnings
                .push("drift check deferred: the tick's new-issue budget is spent".to_owned());
        } else {
            self.keep_lease().await?;
            options.progress.phase(TickPhase::Drift, 0);
            let authority =
                IncidentAuthority::new(bot.clone(), config.projects().governance_repo().clone())
                    .with_key(options.receipt_key.clone());
            let drift = check_drift(github, config, &authority, now).await;
            if matches!(drift.incident, Some(DriftIncident::Opened { .. })) {
                run.take_issue_slot();
            }
            self.report.warnings.extend(drift.warnings.iter().cloned());
            self.report.governance.drift = Some(drift);
        }
        Ok(())
    }

    /// The owner's availability file for the inbox lifecycle, when one is configured and
    /// the lifecycle is on. Unreadable: `None`, and the lifecycle says so.
    async fn availability(&mut self, config: &Config) -> Option<String> {
        let lifecycle = config.projects().lifecycle();
        let availability = lifecycle.availability().filter(|_| lifecycle.enabled())?;
        match self
            .github
            .file(
                availability.repository(),
                availability.path(),
                availability.git_ref(),
            )
            .await
        {
            Ok(file) => file.map(|f| f.text),
            Err(error) => {
                self.report.warnings.push(format!(
                    "cannot read the availability file {}:{}: {error}",
                    availability.repository(),
                    availability.path()
                ));
                None
            }
        }
    }

    /// The L4 burn-in clock: sets the registry severity for the pull-request path and
    /// writes its file when it changed. Fail-safe throughout: read and write errors are
    /// warnings. In a sharded tick, a write refused because another shard wrote the file
    /// first reads it again and decides again (up to [`SHARD_SAVE_ATTEMPTS`] writes).
    async fn burn_in(
        &mut self,
        config: &Config,
        options: &mut TickOptions,
        reset_by_rejection: bool,
        now: Timestamp,
    ) {
        let days = config.env().l4_burn_in_days();
        let validator = ConditionId::AgentRegistry.validator_name();
        if days == 0 || config.skills().is_disabled(validator) {
            return;
        }
        let overridden = config.skills().severity_override(validator);
        let reset = overridden.is_none() && reset_by_rejection;
        if reset {
            // A Quadrant-D rejection restarts the advisory window: start afresh at `now`.
            self.report.governance.burn_in_reset = true;
            self.report
                .warnings
                .push("a Quadrant-D rejection restarted the L4 burn-in advisory window".to_owned());
        }
        let attempts = if self.shard.is_some() {
            SHARD_SAVE_ATTEMPTS
        } else {
            1
        };
        let mut attempt = 0;
        let outcome = loop {
            attempt += 1;
            let stored = if overridden.is_some() {
                // The override wins and the file is left alone: no need to read it.
                mp_core::gate::burn_in::StoredBurnIn::Missing
            } else if reset {
                if attempt > 1 {
                    // Only the blob matters: the window restarts whatever the file says.
                    self.store.load_burn_in(self.github).await;
                }
                mp_core::gate::burn_in::StoredBurnIn::Missing
            } else {
                let (stored, warning) = self.store.load_burn_in(self.github).await;
                self.report.warnings.extend(warning);
                stored
            };
            let outcome = burn_in(days, &stored, overridden, now);
            let Some(write) = &outcome.write else {
                break outcome;
            };
            let fenced = Fenced::new(self.github, self.keeper);
            match self.store.save_burn_in(&fenced, write).await {
                Ok(()) => break outcome,
                Err(GitHubError::Conflict { .. }) if attempt < attempts => {}
                Err(error) => {
                    self.report.warnings.push(format!(
                        "the burn-in clock could not be saved ({error}); it is written again next tick (fail-safe)"
                    ));
                    break outcome;
                }
            }
        };
        if options.registry_severity.is_none() {
            options.registry_severity = Some(outcome.severity);
        }
        if outcome.just_promoted {
            self.report.l4_promoted += 1;
        }
        self.report.burn_in = Some(outcome.status);
    }
}

/// Runs the merge queue of every repository the pull-request path ordered one for, and
/// folds what it did into the report: a landed pull request's outcome becomes `merged`,
/// an ejected one's `blocked` with the reason.
pub(crate) async fn drive_queues(
    github: &dyn GitHubHistory,
    report: &mut FullTickReport,
    config: &Config,
    options: &TickOptions,
    bot: &Login,
    (queues, queued): (
        &std::collections::BTreeMap<RepoName, mp_core::queue::Ordered>,
        &QueuedPrs,
    ),
    now: Timestamp,
) {
    for (repo, ordered) in queues {
        let driver = Driver {
            github,
            config,
            bot,
            gated_branch: options.gated_branch(repo),
            queued,
            now,
        };
        let done = driver.run(repo, ordered).await;
        for changed in done.outcomes {
            let metrics = &mut report.metrics;
            match report.outcomes.iter_mut().find(|o| o.pr == changed.pr) {
                Some(outcome) => {
                    uncount(metrics, &outcome.action);
                    outcome.action = changed.action;
                    outcome.detail = changed.detail;
                    metrics.count(&outcome.action);
                }
                None => {
                    metrics.count(&changed.action);
                    report.outcomes.push(changed);
                }
            }
        }
        for (pr, note) in done.building {
            if let Some(outcome) = report.outcomes.iter_mut().find(|o| o.pr == pr) {
                outcome.detail = super::report::one_line(&note);
            }
        }
        report.metrics.audit_issues_opened += done.audit_issues_opened;
        report.metrics.comments_posted += done.comments_posted;
        if done.state_written {
            report.state_writes += 1;
        }
        report.warnings.extend(done.warnings);
        report.queue.push(done.report);
    }
}

/// Takes one outcome's action back out of the counters (the driver changed it).
fn uncount(metrics: &mut TickMetrics, action: &super::PrAction) {
    use super::PrAction;
    let counter = match action {
        PrAction::Merged { .. } => &mut metrics.merged,
        PrAction::Observe => &mut metrics.observe,
        PrAction::Inbox => &mut metrics.inbox,
        PrAction::Blocked => &mut metrics.blocked,
        PrAction::RaceRebased => &mut metrics.race_rebased,
        PrAction::Skipped => &mut metrics.skipped,
        PrAction::Ignored => &mut metrics.ignored,
        PrAction::Waiting => &mut metrics.waiting,
        PrAction::Queued => &mut metrics.queued,
        PrAction::Enqueued => &mut metrics.enqueued,
    };
    *counter = counter.saturating_sub(1);
}
