//! The decision inbox poll of one tick (bot.md §10.2-§10.3): read the owner's verdict on
//! every open `decision:pending-owner` issue and apply it to its pull request, then the
//! optional notify-only lifecycle.
//!
//! For each open pending issue of the inbox repository (pull requests excluded), by
//! number:
//!
//! 1. the issue must be the bot's own, the bot must have applied its
//!    `decision:pending-owner` label (its timeline says who did), and its body must name
//!    the pull request and the head the question is about; the pull request must be in a
//!    gated repository;
//! 2. with a receipt key, a signature comment of the bot must verify over the inbox
//!    repository, the issue number and the body's pull request, head and nonce;
//!    otherwise one comment and `decision:inbox-integrity-failed`, never honoured (the
//!    pull-request path then asks again in a fresh issue);
//! 3. a pull request that merged or closed meanwhile closes the issue, with a comment;
//! 4. the owner's verdict is the latest 👍/👎 or `/approve A|B|C`, `/reject` of an
//!    allowlisted actor ([`parse_signals`]); none means nothing to do;
//! 5. a verdict made at or before the owner revoked an approval of the question's head
//!    (removed `decision:approved-A`/`-B` from the pull request) is void: revocation is
//!    final for that head ([`latest_revocation`]), even if the question is reopened;
//! 6. a head that moved away from the recorded one gets one comment and
//!    `decision:stale-approval` on the issue and nothing is applied; a head back on the
//!    recorded SHA applies normally;
//! 7. approve A/B: the approval label and a receipt bound to the recorded head go on the
//!    pull request, and the issue is closed; reject: the pull request gets a comment and
//!    is closed, the issue is closed, and the rejection is reported (the caller restarts
//!    the L4 burn-in window); `/approve C`: `decision:deferred` on the pull request and one
//!    comment on the issue, which stays open.
//!
//! Errors on one issue are counted across ticks by the poison guard
//! (docs/decisions/0005): at three consecutive failed ticks the issue gets
//! `decision:inbox-error`. A rate limit ends the poll.
//!
//! A sharded tick ([`TickOptions::shard`]) polls only the issues whose pull request is in
//! one of its repositories; the issues that name none go to shard 0.
//!
//! Order in the tick: poll the inbox **before** the pull-request path. An approval then
//! merges in the same tick, because the path reads the bot-applied label and the receipt
//! it just wrote; polled after it, the approval merges one tick later. A rejected pull
//! request is closed before the path lists the open ones.
//!
//! What the poller decides from what it read is pure and lives in mp-core
//! ([`mp_core::inbox`]). Nothing here performs I/O of its own: the reads and writes go
//! through the [`GitHub`] port, the time is `now`, and the availability file's text is read
//! by the caller.

use mp_core::inbox::{commands, lifecycle, notes, question, report, revocation, signals};

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

pub use commands::plain_lines;
pub use lifecycle::{
    AvailabilityFile, LIFECYCLE_MARKER, LifecycleAction, OUTING_MARKER, Outing, OwnerState,
    inbox_lifecycle, parse_availability,
};
pub use notes::{FAILURES_MARKER, NOTE_MARKER};
pub use question::{
    HeadCheck, InboxQuestion, Integrity, IntegrityFailure, UnreadableQuestion, check_head,
    check_integrity,
};
pub use report::{InboxMetrics, InboxOutcome, InboxReport, InboxResolution, Rejection};
pub use revocation::{Revocation, latest_revocation};
pub use signals::{
    OwnerChoice, OwnerVerdict, SignalSource, comment_choice, edited_commands, parse_signals,
    reaction_choice,
};

use mp_core::approval::{ReceiptLabel, Receipts, render_receipt, unchanged_since};
use mp_core::config::Config;
use mp_core::context::{Comment, CommentId, LabelAction, LabelRecords, PrState};
use mp_core::ids::{Login, PrNumber, RepoName, Timestamp};
use mp_core::port::{GitHub, GitHubError, Issue, IssueQuery, IssueState, PullRequest};

use super::inbox::{PENDING_OWNER, SignedQuestion, labelled_at, labelled_by_bot, last_labelled_by};
use super::{Shard, TickOptions};
use notes::{
    DEFERRED_NOTE, INTEGRITY_NOTE, PR_CLOSED_NOTE, STALE_NOTE, deferred_comment, failure_count,
    failures_comment, has_note, integrity_comment, pr_closed_comment, recovered_comment,
    rejected_comment, rejected_note, stale_comment,
};

pub use mp_core::labels::{DEFERRED, INBOX_ERROR, INTEGRITY_FAILED, STALE_APPROVAL};
/// Consecutive failed ticks after which an inbox issue is labelled [`INBOX_ERROR`].
pub const POISON_THRESHOLD: u32 = 3;

/// Polls the decision inbox at `now` and applies the owner's verdicts, then runs the
/// lifecycle when `decision_inbox.lifecycle.enabled` is set (no lifecycle call at all
/// otherwise).
///
/// `bot` is the bot user (only its issues and marker comments count); `availability` is
/// the text of the lifecycle's availability file when the caller could read it. Never
/// fails: a listing error is a warning, an error on one issue is that issue's outcome.
pub async fn poll_inbox(
    github: &dyn GitHub,
    config: &Config,
    options: &TickOptions,
    bot: &Login,
    availability: Option<&str>,
    now: Timestamp,
) -> InboxReport {
    let mut poller = Poller {
        github,
        config,
        options,
        bot,
        inbox: config.projects().inbox_repository(),
        report: InboxReport::default(),
        pending_record: None,
    };
    let query = IssueQuery {
        state: Some(IssueState::Open),
        labels: vec![PENDING_OWNER.to_owned()],
    };
    let mut issues = match github.issues(poller.inbox, &query).await {
        Ok(issues) => issues,
        Err(error) => {
            poller.halt(&error);
            let inbox = poller.inbox;
            poller
                .report
                .warnings
                .push(format!("{inbox}: cannot list the decision inbox: {error}"));
            return poller.report;
        }
    };
    issues.retain(|issue| {
        issue.state == IssueState::Open && !issue.is_pull_request && has_label(issue, PENDING_OWNER)
    });
    if let Some(shard) = options.shard {
        issues.retain(|issue| handled_by(shard, issue, bot));
    }
    issues.sort_by_key(|issue| issue.number);

    let mut open = Vec::new();
    let mut comments_by_issue = BTreeMap::new();
    for (index, issue) in issues.iter().enumerate() {
        let visit = poller.visit(issue).await;
        if let (true, Some(comments)) = (visit.resolution.leaves_open(), visit.comments) {
            open.push(issue.clone());
            comments_by_issue.insert(issue.number, comments);
        }
        poller.report.metrics.count(&visit.resolution);
        poller.report.outcomes.push(InboxOutcome::new(
            format!("{}#{}", issue.repo, issue.number),
            visit.pr,
            visit.resolution,
        ));
        if let Some(error) = visit.halt {
            let left = issues.len() - index - 1;
            poller.halt(&error);
            poller.report.warnings.push(format!(
                "decision inbox poll ended early ({error}); {left} issue(s) and the lifecycle wait for the next tick"
            ));
            return poller.report;
        }
    }
    poller
        .lifecycle(&open, &comments_by_issue, availability, now)
        .await;
    poller.report
}

/// Whether `shard` handles the inbox issue `issue`: the shard owning the repository of the
/// pull request its body names; an issue that is not the bot's, or whose body names no pull
/// request, goes to shard 0 (which then reports it, as an unsharded tick does).
fn handled_by(shard: Shard, issue: &Issue, bot: &Login) -> bool {
    let named = (issue.author.as_ref() == Some(bot))
        .then(|| InboxQuestion::read(&issue.body).ok())
        .flatten();
    match named {
        Some(question) => shard.owns(&question.repo),
        None => shard.is_first(),
    }
}

fn has_label(issue: &Issue, label: &str) -> bool {
    issue.labels.iter().any(|l| l == label)
}

/// Whether an error ends the poll: the primary or a secondary rate limit.
fn halts(error: &GitHubError) -> bool {
    matches!(
        error,
        GitHubError::RateLimited { .. } | GitHubError::Throttled { .. }
    )
}

/// What happened to one issue.
struct Visit {
    pr: Option<String>,
    resolution: InboxResolution,
    /// The issue's comments, when they were read.
    comments: Option<Vec<Comment>>,
    /// The rate-limit error that ends the poll.
    halt: Option<GitHubError>,
}

impl Visit {
    fn new(pr: Option<String>, resolution: InboxResolution) -> Self {
        Self {
            pr,
            resolution,
            comments: None,
            halt: None,
        }
    }

    fn failed(pr: Option<String>, error: GitHubError, consecutive: Option<u32>) -> Self {
        let resolution = InboxResolution::Failed {
            error: error.to_string(),
            consecutive,
        };
        Self {
            halt: halts(&error).then_some(error),
            ..Self::new(pr, resolution)
        }
    }
}

struct Poller<'a> {
    github: &'a dyn GitHub,
    config: &'a Config,
    options: &'a TickOptions,
    bot: &'a Login,
    inbox: &'a RepoName,
    report: InboxReport,
    /// GitHub's record of the inbox's `decision:pending-owner` label, read once per poll
    /// when an issue first needs it (decisions/0048).
    pending_record: Option<LabelRecords>,
}

impl Poller<'_> {
    fn halt(&mut self, error: &GitHubError) {
        if matches!(error, GitHubError::RateLimited { .. }) {
            self.report.metrics.rate_limited = true;
        }
    }

    /// GitHub's record of `decision:pending-owner` in the inbox, read at most once a poll.
    /// GitHub answering that it has none to give leaves it `Unavailable`, and no issue is
    /// a question.
    async fn pending_record(&mut self) -> Result<LabelRecords, GitHubError> {
        if let Some(record) = &self.pending_record {
            return Ok(record.clone());
        }
        let record = match self
            .github
            .label_records(self.inbox, &[PENDING_OWNER.to_owned()])
            .await
        {
            Ok(records) => LabelRecords::Read(records),
            Err(GitHubError::NotFound { what }) => LabelRecords::Unavailable {
                reason: format!("{what} not found"),
            },
            Err(error) => return Err(error),
        };
        self.pending_record = Some(record.clone());
        Ok(record)
    }

    /// Whether the pull requests of `repo` go through the gate this tick.
    fn in_scope(&self, repo: &RepoName) -> bool {
        self.config.projects().is_gated(repo) && self.options.covers(repo)
    }

    /// Steps 1-2, then the rest through [`Poller::decide`] and the poison guard.
    async fn visit(&mut self, issue: &Issue) -> Visit {
        if issue.author.as_ref() != Some(self.bot) {
            let author = issue.author.clone();
            let by = author
                .as_ref()
                .map_or_else(|| "an unknown author".to_owned(), ToString::to_string);
            self.report.warnings.push(format!(
                "{}#{}: a decision:pending-owner issue opened by {by}, not the bot: ignored (it neither asks nor answers a question)",
                self.inbox, issue.number
            ));
            return Visit::new(None, InboxResolution::NotOpenedByBot { author });
        }
        let events = match self.github.label_events(self.inbox, issue.number).await {
            Ok(events) => events,
            Err(error) => return Visit::failed(None, error, None),
        };
        if !labelled_by_bot(&events, self.bot) {
            let labeller = last_labelled_by(&events, PENDING_OWNER).flatten().cloned();
            let by = labeller.as_ref().map_or_else(
                || "someone GitHub does not name".to_owned(),
                ToString::to_string,
            );
            self.report.warnings.push(format!(
                "{}#{}: an issue the bot opened but {by} labelled decision:pending-owner: not a question, ignored (it neither asks nor answers one)",
                self.inbox, issue.number
            ));
            return Visit::new(None, InboxResolution::NotLabelledByBot { labeller });
        }
        // The bot's event names the label as it is now: one renamed into
        // `decision:pending-owner` after the bot applied it (an audit issue's label) makes
        // no question.
        let record = match self.pending_record().await {
            Ok(record) => record,
            Err(error) => return Visit::failed(None, error, None),
        };
        if let Err(why) =
            unchanged_since(&record, PENDING_OWNER, labelled_at(&events, PENDING_OWNER))
        {
            return Visit::new(None, InboxResolution::PendingLabelChanged { why });
        }
        let question = match InboxQuestion::read(&issue.body) {
            Ok(question) => question,
            Err(problem) => return Visit::new(None, InboxResolution::Unreadable { problem }),
        };
        let pr = Some(question.pr_reference());
        if !self.in_scope(&question.repo) {
            let repo = question.repo.clone();
            return Visit::new(pr, InboxResolution::NotGated { repo });
        }
        let comments = match self.github.comments(self.inbox, issue.number).await {
            Ok(comments) => comments,
            Err(error) => return Visit::failed(pr, error, None),
        };
        let key = self.options.receipt_key.as_ref();
        let integrity = check_integrity(
            &question,
            self.inbox,
            issue.number,
            &comments,
            self.bot,
            key,
        );
        if let Integrity::Failed(failure) = integrity {
            if has_label(issue, INTEGRITY_FAILED) {
                return Visit::new(pr, InboxResolution::StillIntegrityFailed { failure });
            }
            return match self.mark_integrity_failed(issue, &comments, failure).await {
                Ok(()) => Visit::new(pr, InboxResolution::IntegrityFailed { failure }),
                Err(error) => Visit::failed(pr, error, None),
            };
        }
        if integrity == Integrity::VerifiedByPreviousKey
            && let Some(key) = key
            && let Some(nonce) = question.nonce.as_deref()
        {
            // A rotation's window is open: sign the question again with the current key,
            // so it still verifies when the window closes.
            let signed = SignedQuestion {
                inbox: self.inbox,
                issue: issue.number,
                repo: &question.repo,
                number: question.number,
                head: &question.head,
                nonce,
            };
            if let Err(error) = self
                .github
                .create_comment(self.inbox, issue.number, &signed.comment(key))
                .await
            {
                return Visit::failed(pr, error, None);
            }
        }
        let counter = failure_count(&comments, self.bot);
        let mut visit = match self.decide(issue, &question, &comments).await {
            Ok(resolution) => {
                // Reset on every success, closing ones included: a question reopened later
                // starts from zero, not one failure short of `decision:inbox-error`.
                self.recover(issue, counter).await;
                Visit::new(pr, resolution)
            }
            Err(error) if error.is_transient() => Visit::failed(pr, error, None),
            Err(error) => {
                let count = self.count_failure(issue, counter, &error).await;
                Visit::failed(pr, error, Some(count))
            }
        };
        visit.comments = Some(comments);
        visit
    }

    /// Step 2's writes: one comment (unless written before) and the label.
    async fn mark_integrity_failed(
        &mut self,
        issue: &Issue,
        comments: &[Comment],
        failure: IntegrityFailure,
    ) -> Result<(), GitHubError> {
        if !has_note(comments, self.bot, INTEGRITY_NOTE) {
            let body = integrity_comment(failure);
            self.github
                .create_comment(self.inbox, issue.number, &body)
                .await?;
        }
        self.github
            .add_labels(self.inbox, issue.number, &[INTEGRITY_FAILED.to_owned()])
            .await
    }

    /// Steps 3-6 for an issue whose body is readable and trusted.
    async fn decide(
        &mut self,
        issue: &Issue,
        question: &InboxQuestion,
        comments: &[Comment],
    ) -> Result<InboxResolution, GitHubError> {
        let github = self.github;
        let pull = github.pull(&question.repo, question.number).await?;
        if pull.state == PrState::Closed {
            if !has_note(comments, self.bot, PR_CLOSED_NOTE) {
                let body = pr_closed_comment(&question.pr_reference(), pull.merged);
                github
                    .create_comment(self.inbox, issue.number, &body)
                    .await?;
            }
            github.close_issue(self.inbox, issue.number).await?;
            return Ok(InboxResolution::PrClosed {
                merged: pull.merged,
            });
        }
        let reactions = github.reactions(self.inbox, issue.number).await?;
        for edited in edited_commands(comments, self.config.allowlist()) {
            let when = edited
                .updated_at
                .map_or_else(|| "an unknown time".to_owned(), |t| t.to_string());
            self.report.warnings.push(format!(
                "{}#{}: comment {} carries an owner command but was edited at {when}: ignored (anyone with write access can edit a comment; post a new one)",
                self.inbox,
                issue.number,
                edited.id.get()
            ));
        }
        let Some(verdict) = parse_signals(comments, &reactions, self.config.allowlist()) else {
            return Ok(InboxResolution::NoVerdict);
        };
        if let HeadCheck::Moved { recorded, current } = check_head(question, &pull.head_sha) {
            if has_label(issue, STALE_APPROVAL) {
                return Ok(InboxResolution::StillStale { recorded, current });
            }
            if !has_note(comments, self.bot, STALE_NOTE) {
                let body = stale_comment(&question.pr_reference(), &recorded, &current);
                github
                    .create_comment(self.inbox, issue.number, &body)
                    .await?;
            }
            github
                .add_labels(self.inbox, issue.number, &[STALE_APPROVAL.to_owned()])
                .await?;
            return Ok(InboxResolution::StaleHead { recorded, current });
        }
        if let Some(revocation) = self.revocation(question).await?
            && revocation.voids(verdict.at)
        {
            return Ok(InboxResolution::RevokedBefore {
                revocation,
                head: question.head.clone(),
            });
        }
        match verdict.choice {
            OwnerChoice::ApproveA => {
                self.approve(issue, question, &pull, ReceiptLabel::ApprovedA, verdict)
                    .await
            }
            OwnerChoice::ApproveB => {
                self.approve(issue, question, &pull, ReceiptLabel::ApprovedB, verdict)
                    .await
            }
            OwnerChoice::Defer => self.defer(issue, question, &pull, comments, verdict).await,
            OwnerChoice::Reject => self.reject(issue, question, verdict).await,
        }
    }

    /// The latest owner revocation of an approval of the question's head on its pull
    /// request, if any: the pull request's comments (the receipts) are read only when its
    /// timeline shows an approval label removed.
    async fn revocation(
        &self,
        question: &InboxQuestion,
    ) -> Result<Option<Revocation>, GitHubError> {
        let (repo, number) = (&question.repo, question.number);
        let events = self.github.label_events(repo, number).await?;
        let removed = events.iter().any(|e| {
            e.action == LabelAction::Unlabeled
                && ReceiptLabel::from_name(&e.label).is_some_and(|l| !l.is_rebindable())
        });
        if !removed {
            return Ok(None);
        }
        let comments = self.github.comments(repo, number).await?;
        Ok(latest_revocation(
            &events,
            &comments,
            &question.head,
            self.config.allowlist(),
            self.bot,
        ))
    }

    /// Approve A/B: the label (established by the bot), a receipt bound to the recorded
    /// head unless one is there already, then the issue is closed.
    async fn approve(
        &mut self,
        issue: &Issue,
        question: &InboxQuestion,
        pull: &PullRequest,
        label: ReceiptLabel,
        verdict: OwnerVerdict,
    ) -> Result<InboxResolution, GitHubError> {
        let github = self.github;
        let (repo, number) = (&question.repo, question.number);
        // A label someone else put there first is re-applied, so the bot is the applier
        // that C3 sees establishing it.
        if pull.labels.iter().any(|l| l == label.as_str()) {
            github.remove_label(repo, number, label.as_str()).await?;
        }
        github
            .add_labels(repo, number, &[label.as_str().to_owned()])
            .await?;
        let key = self.options.receipt_key.as_ref();
        let pr_comments = github.comments(repo, number).await?;
        let receipts = Receipts::parse(&pr_comments, repo, number, Some(self.bot), key);
        if receipts.get(label.as_str()).map(|r| r.head()) != Some(&question.head) {
            let body = render_receipt(label, &question.head, repo, number, key);
            github.create_comment(repo, number, &body).await?;
        }
        github.close_issue(self.inbox, issue.number).await?;
        Ok(InboxResolution::Approved {
            label,
            actor: verdict.actor,
            head: question.head.clone(),
        })
    }

    /// `/approve C`: the label on the pull request and one comment on the issue.
    async fn defer(
        &mut self,
        issue: &Issue,
        question: &InboxQuestion,
        pull: &PullRequest,
        comments: &[Comment],
        verdict: OwnerVerdict,
    ) -> Result<InboxResolution, GitHubError> {
        let mut wrote = false;
        if !pull.labels.iter().any(|l| l == DEFERRED) {
            self.github
                .add_labels(&question.repo, question.number, &[DEFERRED.to_owned()])
                .await?;
            wrote = true;
        }
        if !has_note(comments, self.bot, DEFERRED_NOTE) {
            let body = deferred_comment(&question.pr_reference(), &verdict);
            self.github
                .create_comment(self.inbox, issue.number, &body)
                .await?;
            wrote = true;
        }
        Ok(if wrote {
            InboxResolution::Deferred {
                actor: verdict.actor,
            }
        } else {
            InboxResolution::AlreadyDeferred
        })
    }

    /// Reject: one comment on the pull request, which is closed, then the issue.
    async fn reject(
        &mut self,
        issue: &Issue,
        question: &InboxQuestion,
        verdict: OwnerVerdict,
    ) -> Result<InboxResolution, GitHubError> {
        let github = self.github;
        let (repo, number) = (&question.repo, question.number);
        let issue_ref = format!("{}#{}", self.inbox, issue.number);
        let pr_comments = github.comments(repo, number).await?;
        if !has_note(&pr_comments, self.bot, &rejected_note(&issue_ref)) {
            let body = rejected_comment(&issue_ref, &verdict);
            github.create_comment(repo, number, &body).await?;
        }
        github.close_issue(repo, number).await?;
        github.close_issue(self.inbox, issue.number).await?;
        self.report.rejections.push(Rejection {
            repo: repo.clone(),
            number,
            issue: issue.number,
            actor: verdict.actor.clone(),
            at: verdict.at,
        });
        Ok(InboxResolution::Rejected {
            actor: verdict.actor,
        })
    }

    /// The poison guard: one more consecutive failure on the counter comment, and the
    /// error label at the threshold. Returns the new count.
    async fn count_failure(
        &mut self,
        issue: &Issue,
        counter: Option<(CommentId, u32)>,
        error: &GitHubError,
    ) -> u32 {
        let count = counter.map_or(0, |(_, count)| count).saturating_add(1);
        let body = failures_comment(count, POISON_THRESHOLD, &error.to_string());
        let written = match counter {
            Some((id, _)) => self.github.update_comment(self.inbox, id, &body).await,
            None => self
                .github
                .create_comment(self.inbox, issue.number, &body)
                .await
                .map(drop),
        };
        let labelled = if count >= POISON_THRESHOLD && !has_label(issue, INBOX_ERROR) {
            self.github
                .add_labels(self.inbox, issue.number, &[INBOX_ERROR.to_owned()])
                .await
        } else {
            Ok(())
        };
        if let Err(write_error) = written.and(labelled) {
            self.report.warnings.push(format!(
                "{}#{}: cannot record the failure count {count}: {write_error}",
                self.inbox, issue.number
            ));
        }
        count
    }

    /// After a failure streak, an issue processed again gets its counter reset and loses
    /// the error label.
    async fn recover(&mut self, issue: &Issue, counter: Option<(CommentId, u32)>) {
        let Some((id, previous)) = counter.filter(|(_, count)| *count > 0) else {
            return;
        };
        let body = recovered_comment(previous);
        let mut result = self.github.update_comment(self.inbox, id, &body).await;
        if result.is_ok() && has_label(issue, INBOX_ERROR) {
            result = self
                .github
                .remove_label(self.inbox, issue.number, INBOX_ERROR)
                .await;
        }
        if let Err(error) = result {
            self.report.warnings.push(format!(
                "{}#{}: cannot reset the failure count: {error}",
                self.inbox, issue.number
            ));
        }
    }

    /// The lifecycle over the issues still open whose comments were read.
    async fn lifecycle(
        &mut self,
        open: &[Issue],
        comments_by_issue: &BTreeMap<PrNumber, Vec<Comment>>,
        availability: Option<&str>,
        now: Timestamp,
    ) {
        let settings = self.config.projects().lifecycle();
        if !settings.enabled() {
            return;
        }
        if let Some(file) = settings.availability() {
            let location = format!("{}:{}@{}", file.repository(), file.path(), file.git_ref());
            match availability {
                Some(text) => {
                    let problems = parse_availability(text, file.line_prefix()).problems;
                    self.report.warnings.extend(
                        problems
                            .into_iter()
                            .map(|p| format!("availability file {location}: {p}")),
                    );
                }
                None => self.report.warnings.push(format!(
                    "availability file {location} was not read; the lifecycle treats the owner as available"
                )),
            }
        }
        let actions = inbox_lifecycle(
            open,
            comments_by_issue,
            availability,
            settings,
            self.bot,
            now,
        );
        for action in actions {
            let written = match &action {
                LifecycleAction::UpdateDigest {
                    repo,
                    comment,
                    body,
                    ..
                } => self.github.update_comment(repo, *comment, body).await,
                other => self
                    .github
                    .create_comment(other.repo(), other.issue(), other.body())
                    .await
                    .map(drop),
            };
            match written {
                Ok(()) => {
                    self.report.metrics.inbox_lifecycle_comments += 1;
                    self.report.lifecycle.push(action);
                }
                Err(error) => {
                    self.report.warnings.push(format!(
                        "{}#{}: cannot write the lifecycle comment ({}): {error}",
                        action.repo(),
                        action.issue(),
                        action.code()
                    ));
                    if halts(&error) {
                        self.halt(&error);
                        break;
                    }
                }
            }
        }
    }
}
