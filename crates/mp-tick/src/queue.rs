//! The merge queue's driver (decisions/0056): once per tick for each repository in queue
//! mode, after its pull requests are evaluated, it loads the queue's state from
//! `bot-state`, observes the current build on GitHub, lets [`QueueState::step`] decide, does
//! what the step says and stores the state again.
//!
//! What it observes of a build is evidence only when mp made it: the staging branch must
//! point at the commit mp assembled, GitHub's activity log must show mp's identity as the
//! last to move it, and its required checks are judged by the rules L2 applies to every
//! commit of the default branch (the expected App, the bound workflow file). A build is
//! assembled on `mp-queue-build/<branch>` one merge commit per pull request, each merging
//! the approved head SHA; every merge commit's parents are read back, so a commit someone
//! else pushed to the assembly branch can never ride into a build. Landing is a
//! non-forced update of the default branch to the tested commit: GitHub refuses anything
//! but a fast-forward.

mod state_file;

use mp_core::branch::{NoCiPolicy, WorkflowBinding, revalidate_bound};
use mp_core::config::Config;
use mp_core::ids::{CommitSha, Login, PrNumber, RepoName, Timestamp};
use mp_core::inbox::audit_issue;
use mp_core::port::{FileWrite, GitHubError, GitHubHistory};
use mp_core::queue::{
    Build, BuildObservation, Candidate, Entry, Observation, Ordered, QueueSettings, Step,
    assembly_branch, build_verdict, order, staging_branch,
};
use mp_core::state::BOT_STATE_BRANCH;
use mp_core::trailers::identity_block;

use super::report::{PrAction, PrOutcome, QueuedPrs, one_line};

use state_file::Ejected;
pub(crate) use state_file::Stored;

/// The most steps one repository's queue takes in one tick: each step that does not end
/// the tick's work ends a build, so this bounds the work of a tick without ever cutting a
/// step in half.
const MAX_STEPS: usize = 64;

/// What the driver did in one repository, one line per step.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueueReport {
    /// The repository.
    pub repo: String,
    /// Each step taken, `<code>: <what>`.
    pub steps: Vec<String>,
}

/// Where one pull request stands in its repository's merge queue, in the words of the
/// tick's outcome (`mp explain` shows it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueStanding {
    /// Stable code: `queue_position`, `queue_agent_cap` or `queue_ejected`.
    pub code: &'static str,
    /// The line the tick's outcome says.
    pub detail: String,
    /// The 1-based position and the queue's length, when queued.
    pub position: Option<(usize, usize)>,
    /// The running build that holds it: its number and staging commit.
    pub build: Option<(u64, CommitSha)>,
}

/// Where `pr` (at `head`) stands in `repo`'s merge queue, read-only: `candidates` are the
/// queue candidates of the repository's open pull requests as the tick makes them
/// ([`mp_core::queue::candidate`] of each whose route is to merge); the queue's state file
/// says which entries were ejected and which build runs. `Ok(None)` when the repository is
/// not in queue mode, or `pr` is neither a candidate nor ejected at `head`.
///
/// # Errors
/// The reason, when the state file cannot be read (the tick stops the queue then).
pub async fn queue_standing(
    github: &dyn GitHubHistory,
    config: &Config,
    repo: &RepoName,
    pr: PrNumber,
    head: &CommitSha,
    candidates: Vec<Candidate>,
) -> Result<Option<QueueStanding>, String> {
    let merge = config.projects().merge_settings(repo);
    if !merge.is_queue() {
        return Ok(None);
    }
    let ordered = order(candidates, merge.max_queued_per_agent());
    let path = state_file::path(repo);
    let governance = config.projects().governance_repo();
    let stored = match github.file(governance, &path, BOT_STATE_BRANCH).await {
        // No file, or no `bot-state` branch yet (the first tick creates it): no build ran.
        Ok(None) | Err(GitHubError::NotFound { .. }) => Stored::new(merge.queue_settings()),
        Ok(Some(file)) => state_file::parse(&file.text, merge.queue_settings())
            .map_err(|reason| format!("the queue's state cannot be read: {reason}"))?,
        Err(error) => return Err(format!("the queue's state cannot be read: {error}")),
    };
    let is_ejected = |c: &Candidate| {
        stored
            .ejected
            .iter()
            .any(|e| e.pr == c.pr && e.head == c.head)
    };
    if let Some(ejected) = stored.ejected.iter().find(|e| {
        e.pr == pr && &e.head == head && ordered.queue.iter().any(|c| c.pr == pr && &c.head == head)
    }) {
        return Ok(Some(QueueStanding {
            code: "queue_ejected",
            detail: ejected_detail(ejected),
            position: None,
            build: None,
        }));
    }
    let queue: Vec<&Candidate> = ordered.queue.iter().filter(|c| !is_ejected(c)).collect();
    if let Some(at) = queue.iter().position(|c| c.pr == pr && &c.head == head) {
        let (position, total) = (at + 1, queue.len());
        let mut detail = format!("queued at position {position} of {total} (queue_position)");
        let build = match (&stored.state.build, &stored.staging) {
            (Some(build), Some((tip, _)))
                if build.entries.iter().any(|e| e.pr == pr && &e.head == head) =>
            {
                detail.push_str(&format!(
                    ", in build {} at staging commit {}",
                    build.id,
                    tip.short()
                ));
                Some((build.id, tip.clone()))
            }
            _ => None,
        };
        return Ok(Some(QueueStanding {
            code: "queue_position",
            detail,
            position: Some((position, total)),
            build,
        }));
    }
    Ok(ordered
        .held
        .iter()
        .find(|h| h.candidate.pr == pr && &h.candidate.head == head)
        .map(|held| QueueStanding {
            code: held.reason.code(),
            detail: format!(
                "held out of the merge queue ({}): {}",
                held.reason.code(),
                held.reason
            ),
            position: None,
            build: None,
        }))
}

/// The outcome line of an entry that failed alone.
fn ejected_detail(ejected: &Ejected) -> String {
    one_line(&format!(
        "left the merge queue (queue_ejected): head {} failed alone in {}: {}",
        ejected.head.short(),
        ejected.build,
        ejected.failing.join("; ")
    ))
}

/// Everything the driver needs from the tick.
pub(crate) struct Driver<'a> {
    pub(crate) github: &'a dyn GitHubHistory,
    pub(crate) config: &'a Config,
    pub(crate) bot: &'a Login,
    pub(crate) gated_branch: &'a str,
    pub(crate) queued: &'a QueuedPrs,
    pub(crate) now: Timestamp,
}

/// What one repository's run changed in the tick's report.
#[derive(Debug, Default)]
pub(crate) struct DriveOutcome {
    pub(crate) report: QueueReport,
    pub(crate) warnings: Vec<String>,
    /// Outcome replacements: `owner/repo#N` → the new outcome.
    pub(crate) outcomes: Vec<PrOutcome>,
    /// Notes appended to the outcome of each pull request in the running build:
    /// `owner/repo#N` → the note.
    pub(crate) building: Vec<(String, String)>,
    /// Why builds ended this tick without landing, one line each.
    pub(crate) ended: Vec<String>,
    pub(crate) audit_issues_opened: u32,
    pub(crate) comments_posted: u32,
    pub(crate) state_written: bool,
}

impl Driver<'_> {
    /// Runs `repo`'s queue for this tick over the order the pull-request path made.
    pub(crate) async fn run(&self, repo: &RepoName, ordered: &Ordered) -> DriveOutcome {
        let mut out = DriveOutcome {
            report: QueueReport {
                repo: repo.to_string(),
                steps: Vec::new(),
            },
            ..DriveOutcome::default()
        };
        let settings = self.config.projects().merge_settings(repo).queue_settings();
        let path = state_file::path(repo);
        let (mut stored, blob) = match self.load(repo, &path, settings).await {
            Ok(loaded) => loaded,
            Err(reason) => {
                out.warnings.push(format!(
                    "{repo}: the merge queue stops for this tick, failing closed: {reason} ({path} on {BOT_STATE_BRANCH}; the owner repairs or deletes it)"
                ));
                return out;
            }
        };
        let before = state_file::render(&stored);
        // Ejected entries stay out until their head changes.
        stored.ejected.retain(|e| {
            ordered
                .queue
                .iter()
                .any(|c| c.pr == e.pr && c.head == e.head)
        });
        let mut queue: Vec<Candidate> = ordered
            .queue
            .iter()
            .filter(|c| {
                !stored
                    .ejected
                    .iter()
                    .any(|e| e.pr == c.pr && e.head == c.head)
            })
            .cloned()
            .collect();
        for ejected in &stored.ejected {
            out.outcomes.push(self.ejected_outcome(repo, ejected));
        }
        if let Err(warning) = self
            .steps(repo, settings, &mut stored, &mut queue, &mut out)
            .await
        {
            out.warnings.push(warning);
        }
        if let (Some(build), Some((tip, _))) = (&stored.state.build, &stored.staging) {
            let total = queue.len();
            for entry in &build.entries {
                let position = queue
                    .iter()
                    .position(|c| c.pr == entry.pr)
                    .map_or(0, |at| at + 1);
                let mut note = format!(
                    "queued at position {position} of {total} (queue_position), in build {} at staging commit {}: waiting for its checks",
                    build.id,
                    tip.short()
                );
                if !out.ended.is_empty() {
                    note = format!("{}; now {note}", out.ended.join("; "));
                }
                out.building.push((format!("{repo}#{}", entry.pr), note));
            }
        }
        // The entries waiting outside the running build say their place in the queue as
        // it stands after this tick's steps (ejected and landed entries out), counted as
        // the build's entries count theirs and as `mp explain` says it.
        let total = queue.len();
        for (at, waiting) in queue.iter().enumerate() {
            if stored
                .state
                .build
                .as_ref()
                .is_some_and(|build| build.holds(waiting.pr))
            {
                continue;
            }
            let quadrant = self
                .queued
                .get(&(repo.clone(), waiting.pr))
                .map_or_else(|| "?".to_owned(), |(_, v)| v.quadrant.to_string());
            out.building.push((
                format!("{repo}#{}", waiting.pr),
                format!(
                    "queued at position {} of {total} as Quadrant {quadrant} (queue_position)",
                    at + 1
                ),
            ));
        }
        let after = state_file::render(&stored);
        if after != before || blob.is_none() && stored.state.build.is_some() {
            match self.save(repo, &path, after, blob).await {
                Ok(()) => out.state_written = true,
                Err(error) => out.warnings.push(format!(
                    "{repo}: cannot save the merge queue's state ({path}): {error}; the next tick observes the build again"
                )),
            }
        }
        out
    }

    async fn load(
        &self,
        repo: &RepoName,
        path: &str,
        settings: QueueSettings,
    ) -> Result<(Stored, Option<String>), String> {
        let governance = self.config.projects().governance_repo();
        let _ = repo;
        match self.github.file(governance, path, BOT_STATE_BRANCH).await {
            Ok(None) => Ok((Stored::new(settings), None)),
            Ok(Some(file)) => state_file::parse(&file.text, settings)
                .map(|stored| (stored, Some(file.blob_sha)))
                .map_err(|reason| format!("the queue's state cannot be read: {reason}")),
            Err(error) => Err(format!("the queue's state cannot be read: {error}")),
        }
    }

    async fn save(
        &self,
        repo: &RepoName,
        path: &str,
        text: String,
        blob: Option<String>,
    ) -> Result<(), GitHubError> {
        let governance = self.config.projects().governance_repo();
        let write = FileWrite {
            branch: BOT_STATE_BRANCH.to_owned(),
            path: path.to_owned(),
            text,
            expected_blob_sha: blob,
            message: format!("mp: merge queue state of {repo}"),
        };
        self.github.put_file(governance, &write).await.map(drop)
    }

    /// Observe, step, perform, until a step ends the tick's work on the queue.
    async fn steps(
        &self,
        repo: &RepoName,
        settings: QueueSettings,
        stored: &mut Stored,
        queue: &mut Vec<Candidate>,
        out: &mut DriveOutcome,
    ) -> Result<(), String> {
        let gated = self.gated_branch;
        let mut main_head = self
            .github
            .branch_head(repo, gated)
            .await
            .map_err(|e| format!("{repo}: the merge queue cannot read {gated}'s head: {e}"))?;
        let mut observed = match (&stored.state.build, &stored.staging) {
            (Some(_), Some((tip, pushed_at))) => Some(self.observe(repo, tip, *pushed_at).await?),
            (Some(_), None) => Some(BuildObservation::Missing),
            (None, _) => None,
        };
        for _ in 0..MAX_STEPS {
            let step = stored.state.step(
                settings,
                Observation {
                    main_head: &main_head,
                    queue: queue.as_slice(),
                    build: observed.as_ref(),
                },
            );
            observed = None;
            out.report.steps.push(format!("{}: {step}", step.code()));
            match step {
                Step::Idle | Step::Wait(_) => return Ok(()),
                Step::Start(build) => {
                    match self.assemble(repo, &build, out).await? {
                        Assembled::Staged(tip) => {
                            stored.staging = Some((tip, self.now));
                            return Ok(());
                        }
                        Assembled::Conflict { entry, message } => {
                            // The entry leaves; the build is thrown away and the next step
                            // builds without it.
                            stored.state.build = None;
                            stored.staging = None;
                            queue.retain(|c| c.pr != entry.pr);
                            stored.state.suspects.retain(|s| s.pr != entry.pr);
                            let failing = vec![format!(
                                "merging head {} onto the build conflicts: {message}",
                                entry.head.short()
                            )];
                            self.eject(repo, &entry, &build, failing, stored, out).await;
                        }
                    }
                }
                Step::Land(build) => {
                    let Some((tip, _)) = stored.staging.take() else {
                        continue;
                    };
                    match self
                        .github
                        .update_branch_ref(repo, gated, &tip, false)
                        .await
                    {
                        Ok(()) => {
                            // Landed: its entries are on the default branch, out of the queue.
                            queue.retain(|c| !build.holds(c.pr));
                            self.landed(repo, &build, &tip, out).await;
                            main_head = tip;
                        }
                        Err(GitHubError::Conflict { message, .. }) => {
                            // Not a fast-forward: the default branch moved. Rebuild.
                            out.report.steps.push(format!(
                                "queue_base_moved: {gated} is not an ancestor of the tested commit {} ({message}): {build} is rebuilt",
                                tip.short()
                            ));
                            main_head =
                                self.github.branch_head(repo, gated).await.map_err(|e| {
                                    format!(
                                        "{repo}: the merge queue cannot read {gated}'s head: {e}"
                                    )
                                })?;
                        }
                        Err(error) => {
                            return Err(format!(
                                "{repo}: the merge queue could not fast-forward {gated} to {}: {error}; the build is rebuilt next tick",
                                tip.short()
                            ));
                        }
                    }
                }
                Step::Discard { build, why } => {
                    stored.staging = None;
                    out.ended
                        .push(format!("{build} discarded: {why} ({})", why.code()));
                }
                Step::Split { build, failing, .. } => {
                    stored.staging = None;
                    out.ended.push(format!(
                        "{build} was red ({}): its pull requests are built again in smaller groups to find the one that fails (queue_build_red)",
                        failing.join("; ")
                    ));
                }
                Step::Eject {
                    entry,
                    build,
                    failing,
                } => {
                    stored.staging = None;
                    queue.retain(|c| c.pr != entry.pr);
                    self.eject(repo, &entry, &build, failing, stored, out).await;
                }
            }
        }
        Ok(())
    }

    /// What GitHub shows of the build whose staging commit mp pushed at `pushed_at`.
    async fn observe(
        &self,
        repo: &RepoName,
        tip: &CommitSha,
        pushed_at: Timestamp,
    ) -> Result<BuildObservation, String> {
        let staging = staging_branch(self.gated_branch);
        let head = match self.github.branch_head(repo, &staging).await {
            Ok(head) => head,
            Err(GitHubError::NotFound { .. }) => return Ok(BuildObservation::Missing),
            Err(e) => return Err(format!("{repo}: cannot read {staging}: {e}")),
        };
        if head != *tip {
            return Ok(BuildObservation::Missing);
        }
        // Who moved the staging branch last: only mp's own push makes its checks evidence.
        let updates = match self
            .github
            .branch_updates_until(repo, &staging, std::slice::from_ref(tip))
            .await
        {
            Ok(updates) => updates,
            Err(GitHubError::NotFound { .. }) => Vec::new(),
            Err(e) => return Err(format!("{repo}: cannot read {staging}'s activity: {e}")),
        };
        let last = updates.iter().max_by_key(|u| u.at);
        match last {
            Some(update)
                if update.actor.as_ref() == Some(self.bot)
                    && update.after.as_ref() == Some(tip) => {}
            Some(update) => {
                return Ok(BuildObservation::PushedByOther {
                    by: update.actor.clone().filter(|a| a != self.bot),
                });
            }
            None => return Ok(BuildObservation::PushedByOther { by: None }),
        }
        let config = self.config;
        let required = config.effective_required_checks(repo).to_vec();
        let publisher = config.effective_expected_check_publisher(repo).to_owned();
        let workflows = config.effective_required_check_workflows(repo).clone();
        let no_ci = NoCiPolicy::from_allow_no_ci(config.env().allow_no_ci());
        let runs = self
            .github
            .check_runs(repo, tip)
            .await
            .map_err(|e| format!("{repo}: cannot read the checks of {}: {e}", tip.short()))?;
        let bound = required.iter().any(|name| workflows.contains_key(name));
        let jobs = if bound {
            match self.github.workflow_jobs(repo, tip).await {
                Ok(jobs) => jobs,
                Err(GitHubError::NotFound { .. }) => Vec::new(),
                Err(e) => {
                    return Err(format!(
                        "{repo}: cannot read the workflow runs of {}: {e}",
                        tip.short()
                    ));
                }
            }
        } else {
            Vec::new()
        };
        let binding = bound.then_some(WorkflowBinding {
            workflows: &workflows,
            jobs: &jobs,
            repo,
            sha: tip,
        });
        let verdict = revalidate_bound(&runs, &required, Some(&publisher), no_ci, binding.as_ref());
        let timeout = i64::from(config.env().check_report_timeout_minutes()) * 60;
        let young = self.now.seconds_since(pushed_at) < timeout;
        Ok(BuildObservation::Checks(build_verdict(&verdict, young)))
    }

    /// Assembles `build` on the assembly branch and points the staging branch at it.
    async fn assemble(
        &self,
        repo: &RepoName,
        build: &Build,
        out: &mut DriveOutcome,
    ) -> Result<Assembled, String> {
        let assembly = assembly_branch(self.gated_branch);
        let staging = staging_branch(self.gated_branch);
        self.point(repo, &assembly, &build.base)
            .await
            .map_err(|e| format!("{repo}: cannot start {build} on {assembly}: {e}"))?;
        let mut tip = build.base.clone();
        for entry in &build.entries {
            let message = self.merge_message(repo, entry, build);
            match self
                .github
                .merge_into_branch(repo, &assembly, &entry.head, &message)
                .await
            {
                Ok(Some(merge)) => {
                    // The merge commit must have mp's tip and the approved head as its
                    // parents: anything else on the assembly branch is not the build.
                    let commit = self.github.commit(repo, &merge).await.map_err(|e| {
                        format!("{repo}: cannot read back the merge of #{}: {e}", entry.pr)
                    })?;
                    if commit.parents != [tip.clone(), entry.head.clone()] {
                        return Err(format!(
                            "{repo}: the merge of #{} on {assembly} is not of {} and {} (someone moved {assembly}): {build} is assembled again next tick",
                            entry.pr,
                            tip.short(),
                            entry.head.short()
                        ));
                    }
                    tip = merge;
                }
                // Already contained: nothing to merge.
                Ok(None) => {}
                Err(GitHubError::Conflict { message, .. }) => {
                    return Ok(Assembled::Conflict {
                        entry: entry.clone(),
                        message,
                    });
                }
                Err(e) => {
                    return Err(format!(
                        "{repo}: cannot merge #{} into {assembly}: {e}; {build} is assembled again next tick",
                        entry.pr
                    ));
                }
            }
        }
        self.point(repo, &staging, &tip)
            .await
            .map_err(|e| format!("{repo}: cannot point {staging} at {}: {e}", tip.short()))?;
        out.report.steps.push(format!(
            "queue_staged: {staging} at {} for {build}",
            tip.short()
        ));
        Ok(Assembled::Staged(tip))
    }

    /// Points `branch` at `sha`, creating it when it does not exist.
    async fn point(
        &self,
        repo: &RepoName,
        branch: &str,
        sha: &CommitSha,
    ) -> Result<(), GitHubError> {
        match self.github.update_branch_ref(repo, branch, sha, true).await {
            Err(GitHubError::NotFound { .. }) => self.github.create_branch(repo, branch, sha).await,
            other => other,
        }
    }

    /// The merge commit's message: the pull request, the build, and the identity block of
    /// its commits (the agents' trailers stay on the default branch).
    fn merge_message(&self, repo: &RepoName, entry: &Entry, build: &Build) -> String {
        let identity = self
            .queued
            .get(&(repo.clone(), entry.pr))
            .and_then(|(pr, _)| identity_block(pr.commits.iter().map(|c| &c.trailers)))
            .unwrap_or_default();
        let mut message = format!(
            "Merge #{} ({}) in merge queue build {}",
            entry.pr,
            entry.head.short(),
            build.id
        );
        if !identity.trim().is_empty() {
            message.push_str("\n\n");
            message.push_str(identity.trim_start());
        }
        message
    }

    /// After the fast-forward: each entry's outcome is `merged`, and a Quadrant B or C
    /// entry gets its passive audit issue, as after a direct merge.
    async fn landed(
        &self,
        repo: &RepoName,
        build: &Build,
        tip: &CommitSha,
        out: &mut DriveOutcome,
    ) {
        let inbox = self.config.projects().inbox_repository();
        for entry in &build.entries {
            let reference = format!("{repo}#{}", entry.pr);
            let queued = self.queued.get(&(repo.clone(), entry.pr));
            if let Some((pr, verdict)) = queued
                && let Some(mut issue) = audit_issue(pr, verdict, tip, self.now)
            {
                issue.body = issue
                    .body
                    .replace("(squash)", "(the merge queue's tested commit)");
                match self.github.create_issue(inbox, &issue).await {
                    Ok(_) => out.audit_issues_opened += 1,
                    Err(e) => out.warnings.push(format!(
                        "{reference}: landed, but the Quadrant {} audit issue could not be opened in {inbox}: {e}",
                        verdict.quadrant
                    )),
                }
            }
            let mut outcome = PrOutcome::new(
                reference,
                PrAction::Merged { sha: tip.clone() },
                format!(
                    "landed by the merge queue: {} fast-forwarded to {}, the commit whose required checks passed ({build}), head {}",
                    self.gated_branch,
                    tip.short(),
                    entry.head.short()
                ),
            );
            if let Some((pr, verdict)) = queued {
                outcome = outcome.with_verdict(Some(verdict)).with_agent(pr);
            }
            out.outcomes.push(outcome);
        }
    }

    /// An entry failed alone (or conflicts): it leaves the queue until its head changes,
    /// and one comment on the pull request names the failing checks and the build.
    async fn eject(
        &self,
        repo: &RepoName,
        entry: &Entry,
        build: &Build,
        failing: Vec<String>,
        stored: &mut Stored,
        out: &mut DriveOutcome,
    ) {
        let ejected = Ejected {
            pr: entry.pr,
            head: entry.head.clone(),
            build: build.to_string(),
            failing,
        };
        let body = format!(
            "Merge Gate L1 — left the merge queue: head {} failed in {}:\n{}\n\nThe other pull requests go on without it. Push a fix (a new head re-enters the queue once the gate passes again).\n",
            entry.head.short(),
            ejected.build,
            ejected
                .failing
                .iter()
                .map(|line| format!("- {line}"))
                .collect::<Vec<_>>()
                .join("\n")
        );
        match self.github.create_comment(repo, entry.pr, &body).await {
            Ok(_) => out.comments_posted += 1,
            Err(e) => out.warnings.push(format!(
                "{repo}#{}: left the merge queue, but the comment saying why could not be posted: {e}",
                entry.pr
            )),
        }
        out.outcomes.push(self.ejected_outcome(repo, &ejected));
        stored.ejected.retain(|e| e.pr != entry.pr);
        stored.ejected.push(ejected);
    }

    fn ejected_outcome(&self, repo: &RepoName, ejected: &Ejected) -> PrOutcome {
        let queued = self.queued.get(&(repo.clone(), ejected.pr));
        PrOutcome::new(
            format!("{repo}#{}", ejected.pr),
            PrAction::Blocked,
            ejected_detail(ejected),
        )
        .with_verdict(queued.map(|(_, v)| v))
    }
}

/// How assembling a build ended.
enum Assembled {
    /// The staging branch points at this commit; CI runs on it.
    Staged(CommitSha),
    /// Merging this entry conflicts with the build before it.
    Conflict { entry: Entry, message: String },
}

#[cfg(test)]
mod tests;
