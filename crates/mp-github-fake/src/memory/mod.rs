//! `MemoryGitHub`: the GitHub port answered from a [`World`] held in memory.
//!
//! Reads answer from the world; writes change it the way GitHub would (a merge moves the
//! base branch and closes the pull request; update-branch moves the head and the base; labels
//! leave timeline events) and append one [`Write`] (with GitHub's answer) to an ordered log. Every port call is
//! counted under its [`Endpoint`] route, whether it succeeds or not; pages are not
//! simulated, so one method call is one call. When the world sets a rate limit, each call
//! that [`Endpoint::spends_rate_limit`] spends one unit, and a call made with none left
//! fails with [`GitHubError::RateLimited`]. The history half of the port (`GitHubHistory`)
//! is in the `history` module.
//!
//! For tests, it also keeps an ordered log of the calls themselves, reads included, once
//! [`MemoryGitHub::log_calls`] switches it on, and answers the [`Failure`]s a test injects
//! with [`MemoryGitHub::fail`] instead of the world's answer (or, for a lost answer, after
//! the write was applied).

mod call;
mod ci;
pub(crate) mod history;
mod index;
pub mod queue;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fmt::{self, Display};
use std::sync::{Mutex, MutexGuard, PoisonError};

use mp_core::context::{
    CheckRun, Comment, CommentId, CommitContext, FileChange, FileStatus, LabelAction, LabelEvent,
    LabelRecord, PrState, Reaction, RefUpdate, RefUpdateKind, WorkflowJob,
};
use mp_core::ids::{CommitSha, Login, PrNumber, RepoName, Timestamp};
use mp_core::port::{
    ACTIVITY_PAGE, BranchUpdated, GitHub, GitHubError, Issue, IssueQuery, IssueState,
    MergeGroupRef, MergeRequest, Merged, NewCheckRun, NewIssue, PullRequest, QueueEntry,
    RepoActivity, UpdateBranchOutcome, Write,
};

use crate::world::{
    Commit, IssueRecord, PR_MERGE, Pull, Repo, WORKFLOW_EVENT, World, check_run_id, commit_sha,
};
use mp_github::PULL_COMMITS_CAP;

pub use call::{Call, Failure};
pub use mp_github::Endpoint;

/// The permissions of which one lets a token comment on issues and pull requests.
const COMMENT_PERMISSIONS: [&str; 2] = ["issues", "pull_requests"];

use index::{RepoIndex, WorldIndex};

/// The GitHub port over an in-memory [`World`], with an action log and call counts.
#[derive(Debug)]
pub struct MemoryGitHub {
    state: Mutex<State>,
}

/// Someone else's change a test schedules right after one of the bot's writes
/// ([`MemoryGitHub::after_write`]).
struct Interleaved {
    when: Box<dyn Fn(&Write) -> bool + Send>,
    then: Box<dyn FnOnce(&mut World) + Send>,
}

impl fmt::Debug for Interleaved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Interleaved")
    }
}

#[derive(Debug)]
struct State {
    world: World,
    /// Lookup tables over `world`, so reads do not scan it.
    index: WorldIndex,
    actions: Vec<Write>,
    calls: BTreeMap<Endpoint, u64>,
    /// Whether `call_log` records the calls (off unless a test asks: a long run of the
    /// benchmarks would only pay for it).
    log_calls: bool,
    call_log: Vec<Call>,
    /// The failures a test injected, in the order given; the first that matches answers.
    failures: Vec<Failure>,
    /// The call being answered, while a failure is injected: a write carried out loses
    /// its answer when a [`Failure::answer_lost`] matches it ([`State::applied`]).
    answering: Option<Call>,
    /// Drops of the rate limit a test scheduled: at the first call of the route on the
    /// repository, the calls left become the number.
    rate_limit_drops: Vec<(Endpoint, RepoName, u32)>,
    /// Changes scheduled after a write; each runs once, after the first write it matches.
    interleaved: Vec<Interleaved>,
    next_comment_id: u64,
}

impl MemoryGitHub {
    /// Serves `world`. New comments get ids after the largest id in the world.
    pub fn new(world: World) -> Self {
        let largest = world
            .repos
            .iter()
            .flat_map(|repo| {
                let pulls = repo.pulls.iter().flat_map(|p| &p.comments);
                let issues = repo.issues.iter().flat_map(|i| &i.comments);
                pulls.chain(issues)
            })
            .map(|c| c.id.get())
            .max()
            .unwrap_or(0);
        let mut world = world;
        let bot = world.bot_login().ok();
        for repo in &mut world.repos {
            repo.fill_activity(bot.as_ref());
        }
        ci::advance(&mut world);
        Self {
            state: Mutex::new(State {
                world,
                index: WorldIndex::default(),
                actions: Vec::new(),
                calls: BTreeMap::new(),
                log_calls: false,
                call_log: Vec::new(),
                failures: Vec::new(),
                answering: None,
                rate_limit_drops: Vec::new(),
                interleaved: Vec::new(),
                next_comment_id: largest + 1,
            }),
        }
    }

    /// Moves the world's clock to `now` (later writes happen then) and brings the simulated
    /// CI (`ci:`) up to it. A clock moved backwards is taken as given.
    pub fn set_now(&self, now: Timestamp) {
        let mut state = self.lock();
        state.world.now = now;
        ci::advance(&mut state.world);
        queue::advance(&mut state.world);
    }

    /// Adds pull request `number` to its base branch's merge queue as `login` (an agent or
    /// a person with write access), pinned to its current head: not a bot action, so
    /// nothing is logged or counted.
    ///
    /// # Errors
    /// [`GitHubError::NotFound`] for an unknown repository; [`GitHubError::NotMergeable`]
    /// when the queue refuses it.
    pub fn enqueue_as(
        &self,
        login: &Login,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<QueueEntry, GitHubError> {
        let mut state = self.lock();
        let at = state.world.stamp();
        let found = state.repo_mut(repo)?;
        found
            .enqueue(number, None, login.clone(), at, false)
            .map_err(|refused| enqueue_error(repo, number, None, refused))
    }

    /// Pushes a new commit (`id`, one parent: the current head) to pull request `number`'s
    /// head branch as `login`, as an author does; a queued pull request leaves the queue
    /// (decisions/0078). Not a bot action. Returns the new head.
    ///
    /// # Errors
    /// [`GitHubError::NotFound`] for an unknown repository or pull request.
    pub fn push_to_head(
        &self,
        login: &Login,
        repo: &RepoName,
        number: PrNumber,
        id: &str,
    ) -> Result<CommitSha, GitHubError> {
        let mut state = self.lock();
        let at = state.world.stamp();
        let found = state.repo_mut(repo)?;
        let pull = pull_of(found, number)?.clone();
        let (id, sha) = fresh_commit_id(found, id);
        found.commits.push(Commit {
            check_workflows: Default::default(),
            id,
            sha: sha.clone(),
            message: format!("Push to #{number}"),
            parents: vec![pull.head_sha.clone()],
            author: Some(login.clone()),
            committer: Some(login.clone()),
            date: Some(at),
            checks: Vec::new(),
        });
        found.move_branch(
            &pull.head_ref,
            Some(sha.clone()),
            RefUpdateKind::Push,
            login.clone(),
            at,
        );
        if let Some(pull) = found.pull_mut(number) {
            pull.head_sha = sha.clone();
            pull.commits.push(sha.clone());
        }
        found.prune_queues(at);
        ci::advance(&mut state.world);
        Ok(sha)
    }

    /// Publishes a check run on commit `sha` of `repo`, as a CI App does (not a bot
    /// action: nothing is logged or counted). Returns its position among the commit's runs.
    ///
    /// # Errors
    /// [`GitHubError::NotFound`] for an unknown repository or commit.
    pub fn add_check_run(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
        run: CheckRun,
    ) -> Result<usize, GitHubError> {
        let mut run = run;
        whole_seconds(&mut run);
        self.edit_commit(repo, sha, |commit| {
            commit.checks.push(run);
            commit.checks.len() - 1
        })
    }

    /// Changes run `index` of commit `sha` of `repo` (a CI App completing its run).
    ///
    /// # Errors
    /// [`GitHubError::NotFound`] for an unknown repository, commit or run.
    pub fn edit_check_run<R>(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
        index: usize,
        edit: impl FnOnce(&mut CheckRun) -> R,
    ) -> Result<R, GitHubError> {
        self.edit_commit(repo, sha, |commit| {
            commit.checks.get_mut(index).map(|run| {
                let result = edit(run);
                whole_seconds(run);
                result
            })
        })?
        .ok_or_else(|| GitHubError::NotFound {
            what: format!("check run {index} of {sha} in {repo}"),
        })
    }

    /// A person applies `label` to issue or pull request `number` of `repo` at the world's
    /// clock, as on github.com: the label joins the current labels and a `labeled` timeline
    /// event by `actor` is recorded, as a world file's `events` records a human's label (not
    /// a bot action: nothing is logged or counted). A label already present changes
    /// nothing, as on GitHub. Returns whether the label was applied.
    ///
    /// # Errors
    /// [`GitHubError::NotFound`] for an unknown repository or number.
    pub fn apply_label_as(
        &self,
        repo: &RepoName,
        number: PrNumber,
        label: &str,
        actor: &Login,
    ) -> Result<bool, GitHubError> {
        let mut state = self.lock();
        let now = state.world.stamp();
        let thread = thread_mut(state.repo_mut(repo)?, number)?;
        if thread.labels().iter().any(|l| l == label) {
            return Ok(false);
        }
        thread.labels_mut().push(label.to_owned());
        thread.events_mut().push(LabelEvent {
            action: LabelAction::Labeled,
            label: label.to_owned(),
            actor: Some(actor.clone()),
            at: Some(now),
        });
        Ok(true)
    }

    /// A person comments `body` on issue or pull request `number` of `repo` at `at`, as on
    /// github.com (not a bot action: nothing is logged or counted). The comment gets the
    /// next comment id, as the bot's own comments do.
    ///
    /// # Errors
    /// [`GitHubError::NotFound`] for an unknown repository or number.
    pub fn comment_as(
        &self,
        repo: &RepoName,
        number: PrNumber,
        author: &Login,
        body: &str,
        at: Timestamp,
    ) -> Result<Comment, GitHubError> {
        let mut state = self.lock();
        let comment = Comment {
            id: CommentId::new(state.next_comment_id),
            author: Some(author.clone()),
            body: body.to_owned(),
            created_at: Some(at.whole_second()),
            updated_at: Some(at.whole_second()),
        };
        thread_mut(state.repo_mut(repo)?, number)?
            .comments_mut()
            .push(comment.clone());
        state.next_comment_id += 1;
        Ok(comment)
    }

    /// Changes the world as someone other than the bot would (a push, a reaction, a
    /// person closing a pull request): nothing is logged or counted. `edit` should leave
    /// the world consistent, as [`crate::world::parse_world`] would check it.
    pub fn edit_world<R>(&self, edit: impl FnOnce(&mut World) -> R) -> R {
        edit(&mut self.lock().world)
    }

    /// Defines a label in `repo` (`POST /repos/{o}/{r}/labels` on the loopback server);
    /// `false` when the repository already has a label of that name (compared without
    /// case, as GitHub does). Not a port call: it spends nothing and logs no action.
    ///
    /// # Errors
    /// [`GitHubError::NotFound`] for an unknown repository.
    pub fn create_repo_label(
        &self,
        repo: &RepoName,
        mut label: crate::world::RepoLabel,
    ) -> Result<bool, GitHubError> {
        let mut state = self.lock();
        let now = state.world.now;
        label.created_at.get_or_insert(now);
        let found = state.repo_mut(repo)?;
        if found
            .all_labels()
            .iter()
            .any(|l| l.name.eq_ignore_ascii_case(&label.name))
        {
            return Ok(false);
        }
        found.labels.push(label);
        Ok(true)
    }

    /// Renames a label of `repo` at the world's clock (`PATCH /repos/{o}/{r}/labels/{name}`
    /// with `new_name` on the loopback server), as [`crate::world::Repo::rename_label`]
    /// describes: every thread carrying it, and its earlier timeline events, show the new
    /// name, and GitHub's record of the label shows it edited now. `false` when there is no
    /// label `from` or another label is named `to`. Not a port call: it spends nothing and
    /// logs no action.
    ///
    /// # Errors
    /// [`GitHubError::NotFound`] for an unknown repository.
    pub fn rename_label(&self, repo: &RepoName, from: &str, to: &str) -> Result<bool, GitHubError> {
        let mut state = self.lock();
        let now = state.world.now;
        Ok(state.repo_mut(repo)?.rename_label(from, to, now))
    }

    /// Edits a label of `repo` at the world's clock (`PATCH /repos/{o}/{r}/labels/{name}` on
    /// the loopback server), as [`crate::world::Repo::edit_label`] describes; `None` when
    /// there is no such label or the new name is taken. Not a port call: it spends nothing
    /// and logs no action.
    ///
    /// # Errors
    /// [`GitHubError::NotFound`] for an unknown repository.
    pub fn edit_repo_label(
        &self,
        repo: &RepoName,
        name: &str,
        new_name: Option<&str>,
        color: Option<String>,
        description: Option<String>,
    ) -> Result<Option<crate::world::RepoLabel>, GitHubError> {
        let mut state = self.lock();
        let now = state.world.now;
        Ok(state
            .repo_mut(repo)?
            .edit_label(name, new_name, color, description, now))
    }

    fn edit_commit<R>(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
        edit: impl FnOnce(&mut Commit) -> R,
    ) -> Result<R, GitHubError> {
        let mut state = self.lock();
        let found = state.repo_mut(repo)?;
        let commit = found
            .commits
            .iter_mut()
            .find(|c| &c.sha == sha)
            .ok_or_else(|| GitHubError::NotFound {
                what: format!("commit {sha} in {repo}"),
            })?;
        Ok(edit(commit))
    }

    /// The world's clock.
    pub fn now(&self) -> Timestamp {
        self.lock().world.now
    }

    /// The time GitHub records for a write made now ([`World::stamp`]): the world's clock
    /// to the whole second.
    pub fn stamp(&self) -> Timestamp {
        self.lock().world.stamp()
    }

    /// Every commit of pull request `number`, oldest first, past the cap GitHub lists
    /// ([`GitHub::pull_commits`] answers `Truncated` there): what the loopback server pages
    /// and cuts at the cap itself. Counted as one `GET /pulls/{n}/commits`.
    ///
    /// # Errors
    /// [`GitHubError::NotFound`] for an unknown repository or pull request.
    pub fn all_pull_commits(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<CommitContext>, GitHubError> {
        let mut state = self.call_on(Endpoint::ListPullCommits, repo, &[&number])?;
        let (found, index) = state.indexed_repo(repo)?;
        let pull = index
            .pull(found, number)
            .map(|position| &found.pulls[position])
            .ok_or_else(|| pull_not_found(repo, number))?;
        pull.commits
            .iter()
            .map(|sha| {
                index
                    .commit(found, sha)
                    .map(|position| found.commits[position].context())
                    .ok_or_else(|| GitHubError::Malformed {
                        route: Endpoint::ListPullCommits.route().to_owned(),
                        message: format!(
                            "commit {sha} of {} is not in the world",
                            reference(repo, number)
                        ),
                    })
            })
            .collect()
    }

    /// The accepted mutations so far, in order.
    pub fn actions(&self) -> Vec<Write> {
        self.lock().actions.clone()
    }

    /// Calls so far by endpoint route (e.g. `GET /repos/{o}/{r}/pulls`), failed ones included.
    pub fn calls(&self) -> BTreeMap<String, u64> {
        // Several endpoints share a route (every GraphQL document is `POST /graphql`):
        // their counts add up.
        let mut calls = BTreeMap::new();
        for (endpoint, count) in &self.lock().calls {
            *calls.entry(endpoint.route().to_owned()).or_default() += *count;
        }
        calls
    }

    /// All calls so far.
    pub fn total_calls(&self) -> u64 {
        self.lock().calls.values().sum()
    }

    /// Starts logging every port call, reads included, in the order received
    /// ([`MemoryGitHub::call_log`]). Off until asked, so long runs do not pay for it.
    pub fn log_calls(&self) {
        self.lock().log_calls = true;
    }

    /// The calls logged since [`MemoryGitHub::log_calls`], in order, failed ones included.
    pub fn call_log(&self) -> Vec<Call> {
        self.lock().call_log.clone()
    }

    /// The calls logged since the last take (or since [`MemoryGitHub::log_calls`]); the
    /// log starts over empty. The call counts are kept.
    pub fn take_call_log(&self) -> Vec<Call> {
        std::mem::take(&mut self.lock().call_log)
    }

    /// Makes the later calls `failure` matches answer its error: before anything is read
    /// or applied, counted and spending the rate limit as a failed request does. The
    /// first injected failure that matches a call answers it. A [`Failure::answer_lost`]
    /// answers after the write instead: the write is applied and logged, then its answer
    /// is lost.
    pub fn fail(&self, failure: Failure) {
        self.lock().failures.push(failure);
    }

    /// Right after the first later write of the bot that `when` matches is applied, `then`
    /// changes the world as someone else would ([`MemoryGitHub::edit_world`]): an agent
    /// pushing to a branch between two of the bot's writes, a race a test cannot stage
    /// from outside a tick. Runs once.
    pub fn after_write(
        &self,
        when: impl Fn(&Write) -> bool + Send + 'static,
        then: impl FnOnce(&mut World) + Send + 'static,
    ) {
        self.lock().interleaved.push(Interleaved {
            when: Box::new(when),
            then: Box::new(then),
        });
    }

    /// Removes every injected failure: later calls answer from the world again.
    pub fn heal(&self) {
        self.lock().failures.clear();
    }

    /// At the first later call of `endpoint` on `repo`, the primary rate limit drops to
    /// `remaining` calls (before that call spends its own): other clients of the same
    /// installation spent the rest, since GitHub's primary limit is per installation, not
    /// per client.
    pub fn drop_rate_limit_at(&self, endpoint: Endpoint, repo: &RepoName, remaining: u32) {
        self.lock()
            .rate_limit_drops
            .push((endpoint, repo.clone(), remaining));
    }

    /// A copy of the world as it is now, mutations applied.
    pub fn world(&self) -> World {
        self.lock().world.clone()
    }

    /// Reads the world as it is now, without copying it.
    pub fn read<R>(&self, f: impl FnOnce(&World) -> R) -> R {
        f(&self.lock().world)
    }

    /// The world as it is now, mutations applied.
    pub fn into_world(self) -> World {
        self.state
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner)
            .world
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere cannot leave the state half-changed in a way that matters to a
        // test double, so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts a call of `endpoint` on `repo` with the route's placeholder values `path`,
    /// logs it when asked, spends the rate limit, answers an injected failure that matches
    /// it, and hands out the state.
    fn call(
        &self,
        endpoint: Endpoint,
        repo: Option<&RepoName>,
        path: &[&dyn Display],
        query: &[(&str, &dyn Display)],
    ) -> Result<MutexGuard<'_, State>, GitHubError> {
        let mut state = self.lock();
        *state.calls.entry(endpoint).or_default() += 1;
        let mut failed = None;
        state.answering = None;
        if state.log_calls || !state.failures.is_empty() {
            let call = call::describe(endpoint, repo, path, query);
            if let Some(failure) = state
                .failures
                .iter_mut()
                .find(|f| !f.answer_lost && f.matches(&call))
            {
                if let Some(times) = failure.times.as_mut() {
                    *times -= 1;
                }
                failed = Some(failure.error.clone());
            }
            if state.failures.iter().any(|f| f.answer_lost) {
                state.answering = Some(call.clone());
            }
            if state.log_calls {
                state.call_log.push(call);
            }
        }
        if let Some(repo) = repo
            && let Some(position) = state
                .rate_limit_drops
                .iter()
                .position(|(e, r, _)| *e == endpoint && r == repo)
        {
            let (_, _, remaining) = state.rate_limit_drops.remove(position);
            state.world.rate_limit_remaining = Some(remaining);
        }
        // Runs started by a write of this tick (a new head) show at once, as on GitHub.
        ci::advance(&mut state.world);
        // A queued pull request whose head moved is out of the queue at once.
        queue::prune(&mut state.world);
        if endpoint.spends_rate_limit()
            && let Some(remaining) = state.world.rate_limit_remaining.as_mut()
        {
            if *remaining == 0 {
                return Err(GitHubError::RateLimited { remaining: 0 });
            }
            *remaining -= 1;
        }
        match failed {
            Some(error) => Err(error),
            None => Ok(state),
        }
    }

    /// [`MemoryGitHub::call`] on `repo` without query parameters.
    fn call_on(
        &self,
        endpoint: Endpoint,
        repo: &RepoName,
        path: &[&dyn Display],
    ) -> Result<MutexGuard<'_, State>, GitHubError> {
        self.call(endpoint, Some(repo), path, &[])
    }
}

impl State {
    /// Logs `write`, which GitHub carried out, in the action log; then the error of the
    /// first [`Failure::answer_lost`] that matches the call being answered, if any, answers
    /// instead of GitHub's answer (and that failure is spent once).
    fn applied(&mut self, write: Write) -> Result<(), GitHubError> {
        if let Some(position) = self.interleaved.iter().position(|i| (i.when)(&write)) {
            let interleaved = self.interleaved.remove(position);
            (interleaved.then)(&mut self.world);
        }
        self.actions.push(write);
        let Some(call) = self.answering.take() else {
            return Ok(());
        };
        let Some(failure) = self
            .failures
            .iter_mut()
            .find(|f| f.answer_lost && f.matches(&call))
        else {
            return Ok(());
        };
        if let Some(times) = failure.times.as_mut() {
            *times -= 1;
        }
        Err(failure.error.clone())
    }

    /// Refuses a write the installation's permissions do not allow, as GitHub does: 403
    /// "Resource not accessible by integration" unless one of `any_of` is `write` or
    /// `admin` (the world's `app_permissions`).
    fn may_write(&self, endpoint: Endpoint, any_of: &[&str]) -> Result<(), GitHubError> {
        let granted = self.world.installation_permissions();
        let allowed = any_of.iter().any(|name| {
            granted
                .get(*name)
                .is_some_and(|level| level == "write" || level == "admin")
        });
        if allowed {
            return Ok(());
        }
        Err(GitHubError::Status {
            route: endpoint.route().to_owned(),
            status: 403,
            message: "Resource not accessible by integration".to_owned(),
        })
    }

    fn bot(&self, endpoint: Endpoint) -> Result<Login, GitHubError> {
        self.world
            .bot_login()
            .map_err(|err| GitHubError::Malformed {
                route: endpoint.route().to_owned(),
                message: err.to_string(),
            })
    }

    fn repo(&self, name: &RepoName) -> Result<&Repo, GitHubError> {
        self.world.repo(name).ok_or_else(|| repo_not_found(name))
    }

    /// The repository named `name`, found through the index, and the index.
    fn indexed_repo(&mut self, name: &RepoName) -> Result<(&Repo, &mut RepoIndex), GitHubError> {
        let position = self
            .index
            .repo(&self.world, name)
            .ok_or_else(|| repo_not_found(name))?;
        let found = &self.world.repos[position];
        Ok((found, self.index.tables(position, found)))
    }

    /// Pull request `number` of `repo`, found through the index.
    fn indexed_pull(&mut self, repo: &RepoName, number: PrNumber) -> Result<&Pull, GitHubError> {
        let (found, index) = self.indexed_repo(repo)?;
        let position = index
            .pull(found, number)
            .ok_or_else(|| pull_not_found(repo, number))?;
        Ok(&found.pulls[position])
    }

    /// The pull request (through the index) or issue numbered `number` in `repo`.
    fn indexed_thread(
        &mut self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<&dyn Thread, GitHubError> {
        let (found, index) = self.indexed_repo(repo)?;
        if let Some(position) = index.pull(found, number) {
            return Ok(&found.pulls[position]);
        }
        match found.issue(number) {
            Some(issue) => Ok(issue),
            None => Err(thread_not_found(repo, number)),
        }
    }

    fn repo_mut(&mut self, name: &RepoName) -> Result<&mut Repo, GitHubError> {
        self.world
            .repo_mut(name)
            .ok_or_else(|| repo_not_found(name))
    }
}

/// The port's error for a refused enqueue.
fn enqueue_error(
    repo: &RepoName,
    number: PrNumber,
    expected: Option<&CommitSha>,
    refused: crate::world::EnqueueRefused,
) -> GitHubError {
    match refused {
        crate::world::EnqueueRefused::HeadMoved => GitHubError::HeadMoved {
            pr: reference(repo, number),
            expected: expected.cloned().unwrap_or_else(|| commit_sha(repo, "")),
        },
        crate::world::EnqueueRefused::Refused(message) => GitHubError::NotMergeable {
            pr: reference(repo, number),
            message,
        },
    }
}

fn repo_not_found(name: &RepoName) -> GitHubError {
    GitHubError::NotFound {
        what: format!("repository {name}"),
    }
}

fn reference(repo: &RepoName, number: PrNumber) -> String {
    format!("{repo}#{number}")
}

fn pull_of(repo: &Repo, number: PrNumber) -> Result<&Pull, GitHubError> {
    repo.pull(number)
        .ok_or_else(|| pull_not_found(&repo.name, number))
}

fn pull_not_found(repo: &RepoName, number: PrNumber) -> GitHubError {
    GitHubError::NotFound {
        what: format!("pull request {}", reference(repo, number)),
    }
}

fn thread_of(repo: &Repo, number: PrNumber) -> Result<&dyn Thread, GitHubError> {
    match (repo.pull(number), repo.issue(number)) {
        (Some(pull), _) => Ok(pull),
        (None, Some(issue)) => Ok(issue),
        (None, None) => Err(thread_not_found(&repo.name, number)),
    }
}

fn thread_mut(repo: &mut Repo, number: PrNumber) -> Result<&mut dyn Thread, GitHubError> {
    let name = repo.name.clone();
    if repo.pull(number).is_some() {
        return repo
            .pull_mut(number)
            .map(|p| p as &mut dyn Thread)
            .ok_or_else(|| thread_not_found(&name, number));
    }
    repo.issue_mut(number)
        .map(|i| i as &mut dyn Thread)
        .ok_or_else(|| thread_not_found(&name, number))
}

fn thread_not_found(repo: &RepoName, number: PrNumber) -> GitHubError {
    GitHubError::NotFound {
        what: format!("issue {}", reference(repo, number)),
    }
}

/// What issues and pull requests share: labels, timeline, comments, reactions, state.
trait Thread {
    fn labels(&self) -> &[String];
    fn labels_mut(&mut self) -> &mut Vec<String>;
    fn events(&self) -> &[LabelEvent];
    fn events_mut(&mut self) -> &mut Vec<LabelEvent>;
    fn comments(&self) -> &[Comment];
    fn comments_mut(&mut self) -> &mut Vec<Comment>;
    fn reactions(&self) -> &[Reaction];
    fn close(&mut self);
}

/// `Thread` for a record type whose fields share the names of the trait's accessors;
/// `$closed` is the closed value of its `state` field.
macro_rules! impl_thread {
    ($record:ty, $closed:expr) => {
        impl Thread for $record {
            fn labels(&self) -> &[String] {
                &self.labels
            }
            fn labels_mut(&mut self) -> &mut Vec<String> {
                &mut self.labels
            }
            fn events(&self) -> &[LabelEvent] {
                &self.events
            }
            fn events_mut(&mut self) -> &mut Vec<LabelEvent> {
                &mut self.events
            }
            fn comments(&self) -> &[Comment] {
                &self.comments
            }
            fn comments_mut(&mut self) -> &mut Vec<Comment> {
                &mut self.comments
            }
            fn reactions(&self) -> &[Reaction] {
                &self.reactions
            }
            fn close(&mut self) {
                self.state = $closed;
            }
        }
    };
}

impl_thread!(Pull, PrState::Closed);
impl_thread!(IssueRecord, IssueState::Closed);

fn pull_request(repo: &RepoName, pull: &Pull) -> PullRequest {
    PullRequest {
        repo: repo.clone(),
        number: pull.number,
        title: pull.title.clone(),
        body: pull.body.clone(),
        head_sha: pull.head_sha.clone(),
        head_ref: pull.head_ref.clone(),
        head_repo: Some(pull.head_repo.clone().unwrap_or_else(|| repo.clone())),
        base_sha: pull.base_sha.clone(),
        base_ref: pull.base_ref.clone(),
        state: pull.state,
        merged: pull.merged,
        merge_commit: pull.merge_commit.clone(),
        labels: pull.labels.clone(),
        author: pull.author.clone(),
        created_at: pull.created_at,
    }
}

fn issue_of(repo: &RepoName, issue: &IssueRecord) -> Issue {
    Issue {
        repo: repo.clone(),
        number: issue.number,
        title: issue.title.clone(),
        body: issue.body.clone(),
        state: issue.state,
        labels: issue.labels.clone(),
        author: issue.author.clone(),
        created_at: issue.created_at,
        is_pull_request: false,
    }
}

/// A pull request's state as the issues API reports it.
fn issue_state(state: PrState) -> IssueState {
    match state {
        PrState::Open => IssueState::Open,
        PrState::Closed => IssueState::Closed,
    }
}

fn issue_of_pull(repo: &RepoName, pull: &Pull) -> Issue {
    Issue {
        repo: repo.clone(),
        number: pull.number,
        title: pull.title.clone(),
        body: pull.body.clone(),
        state: issue_state(pull.state),
        labels: pull.labels.clone(),
        author: Some(pull.author.clone()),
        created_at: pull.created_at,
        is_pull_request: true,
    }
}

/// A commit id not used yet in `repo`, starting from `base`, and its SHA.
fn fresh_commit_id(repo: &Repo, base: &str) -> (String, CommitSha) {
    fresh_commit_id_where(repo, base, |id, sha| {
        repo.commits.iter().any(|c| c.id == id || &c.sha == sha)
    })
}

/// [`fresh_commit_id`] asking the repository's tables instead of scanning its commits.
fn indexed_fresh_commit_id(tables: &RepoIndex, repo: &Repo, base: &str) -> (String, CommitSha) {
    fresh_commit_id_where(repo, base, |id, sha| tables.commit_taken(id, sha))
}

/// The first of `base`, `base (2)`, `base (3)`, ... that `taken` refuses, and its SHA.
fn fresh_commit_id_where(
    repo: &Repo,
    base: &str,
    mut taken: impl FnMut(&str, &CommitSha) -> bool,
) -> (String, CommitSha) {
    let mut attempt = 1_u32;
    loop {
        let id = if attempt == 1 {
            base.to_owned()
        } else {
            format!("{base} ({attempt})")
        };
        let sha = commit_sha(&repo.name, &id);
        if !taken(&id, &sha) {
            return (id, sha);
        }
        attempt += 1;
    }
}

/// The squash commit message: `<title> (#N)`, a blank line, then the given message, or
/// (GitHub's default) each commit's message as a `* ` item.
fn squash_message(repo: &Repo, pull: &Pull, given: Option<&str>) -> String {
    let title = format!("{} (#{})", pull.title, pull.number);
    let body = match given {
        Some(message) => message.trim_end().to_owned(),
        None => pull
            .commits
            .iter()
            .filter_map(|sha| repo.commit(sha))
            .map(|c| format!("* {}", c.message.trim_end()))
            .collect::<Vec<_>>()
            .join("\n\n"),
    };
    if body.is_empty() {
        title
    } else {
        format!("{title}\n\n{body}")
    }
}

/// Applies a merged pull request's file changes to the base branch's files.
fn apply_files(repo: &mut Repo, base_ref: &str, changes: &[crate::world::PullFile]) {
    let files = if base_ref == repo.default_branch {
        &mut repo.files
    } else {
        repo.branch_files.entry(base_ref.to_owned()).or_default()
    };
    apply_changes(files, changes);
}

/// Applies a pull request's `changes` to `files`: removed files go, a renamed one moves,
/// added and modified ones take their new content.
fn apply_changes(files: &mut BTreeMap<String, String>, changes: &[crate::world::PullFile]) {
    for file in changes {
        let path = &file.change.path;
        match file.change.status {
            FileStatus::Removed => {
                files.remove(path);
            }
            FileStatus::Renamed => {
                let old = file
                    .change
                    .previous_filename
                    .as_ref()
                    .and_then(|previous| files.remove(previous));
                let content = file.content.clone().or(old).unwrap_or_default();
                files.insert(path.clone(), content);
            }
            FileStatus::Added | FileStatus::Modified => match &file.content {
                Some(content) => {
                    files.insert(path.clone(), content.clone());
                }
                None => {
                    files.entry(path.clone()).or_default();
                }
            },
        }
    }
}

/// One branch's activity log, oldest first: every pull request on the branch shares it
/// (only the latest one's list is complete, since each lists the updates since it was
/// opened); other branches keep theirs in the repository's `activity`.
fn branch_log(found: &Repo, branch: &str) -> Vec<RefUpdate> {
    let mut updates: Vec<RefUpdate> = found.activity.get(branch).cloned().unwrap_or_default();
    for pull in found
        .pulls
        .iter()
        .filter(|p| p.head_ref == branch && p.head_repo.is_none())
    {
        for update in &pull.pushes {
            if !updates.contains(update) {
                updates.push(update.clone());
            }
        }
    }
    updates
}

/// The whole repository's activity log as GitHub lists it without `ref`: every branch's
/// entries with its full ref, newest first (by GitHub's time; an entry without one last),
/// each branch's own entries keeping their order among equal times.
pub(crate) fn repo_log(found: &Repo) -> Vec<(String, RefUpdate)> {
    let mut branches: Vec<&str> = found.activity.keys().map(String::as_str).collect();
    branches.extend(
        found
            .pulls
            .iter()
            .filter(|p| p.head_repo.is_none())
            .map(|p| p.head_ref.as_str()),
    );
    branches.sort_unstable();
    branches.dedup();
    let mut entries: Vec<(String, RefUpdate)> = Vec::new();
    for branch in branches {
        let mut updates = branch_log(found, branch);
        updates.reverse();
        entries.extend(
            updates
                .into_iter()
                .map(|update| (format!("refs/heads/{branch}"), update)),
        );
    }
    entries.sort_by_key(|(_, update)| std::cmp::Reverse(update.at));
    entries
}

#[async_trait::async_trait]
impl GitHub for MemoryGitHub {
    async fn bot_login(&self) -> Result<Login, GitHubError> {
        let state = self.call(Endpoint::GetApp, None, &[], &[])?;
        state.bot(Endpoint::GetApp)
    }

    fn rate_limit_remaining(&self) -> Option<u32> {
        self.lock().world.rate_limit_remaining
    }

    async fn open_pulls(&self, repo: &RepoName) -> Result<Vec<PullRequest>, GitHubError> {
        let state = self.call_on(Endpoint::ListPulls, repo, &[])?;
        let found = state.repo(repo)?;
        let mut pulls: Vec<&Pull> = found
            .pulls
            .iter()
            .filter(|p| p.state == PrState::Open)
            .collect();
        pulls.sort_by_key(|p| p.number);
        Ok(pulls.into_iter().map(|p| pull_request(repo, p)).collect())
    }

    async fn pull(&self, repo: &RepoName, number: PrNumber) -> Result<PullRequest, GitHubError> {
        let mut state = self.call_on(Endpoint::GetPull, repo, &[&number])?;
        Ok(pull_request(repo, state.indexed_pull(repo, number)?))
    }

    async fn pull_commits(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<CommitContext>, GitHubError> {
        let commits = self.all_pull_commits(repo, number)?;
        // GitHub lists no more than the cap, so the REST adapter cannot read the rest and
        // answers `Truncated`: this adapter answers the same.
        if commits.len() >= PULL_COMMITS_CAP as usize {
            return Err(GitHubError::Truncated {
                what: format!("{} commits", reference(repo, number)),
                limit: PULL_COMMITS_CAP,
            });
        }
        Ok(commits)
    }

    async fn pull_files(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<FileChange>, GitHubError> {
        let mut state = self.call_on(Endpoint::ListPullFiles, repo, &[&number])?;
        let pull = state.indexed_pull(repo, number)?;
        // GitHub lists at most 3,000 files of a pull request, silently.
        Ok(pull
            .files
            .iter()
            .take(mp_core::classifier::empty_pr::FILE_LISTING_CAP)
            .map(|f| f.change.clone())
            .collect())
    }

    async fn check_runs(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
    ) -> Result<Vec<CheckRun>, GitHubError> {
        let mut state = self.call_on(Endpoint::ListCheckRuns, repo, &[sha])?;
        let (found, index) = state.indexed_repo(repo)?;
        let position = index
            .commit(found, sha)
            .ok_or_else(|| GitHubError::NotFound {
                what: format!("commit {sha} in {repo}"),
            })?;
        let commit = &found.commits[position];
        Ok(commit
            .checks
            .iter()
            .enumerate()
            .map(|(index, run)| CheckRun {
                id: Some(check_run_id(repo, sha, index)),
                ..run.clone()
            })
            .collect())
    }

    async fn workflow_jobs(
        &self,
        repo: &RepoName,
        sha: &CommitSha,
    ) -> Result<Vec<WorkflowJob>, GitHubError> {
        // One listing of the commit's runs, then one listing of each run's jobs, as the
        // REST adapter reads them. An unknown commit has no runs, as on GitHub.
        let runs = {
            let state = self.call(
                Endpoint::ListWorkflowRuns,
                Some(repo),
                &[],
                &[("head_sha", sha)],
            )?;
            let found = state.repo(repo)?;
            found
                .commit(sha)
                .map(|commit| commit.workflow_runs(repo))
                .unwrap_or_default()
        };
        let mut jobs = Vec::new();
        for run in runs {
            drop(self.call_on(Endpoint::ListWorkflowRunJobs, repo, &[&run.id])?);
            jobs.extend(run.jobs.iter().map(|index| WorkflowJob {
                check_run_id: check_run_id(repo, sha, *index),
                run_id: run.id,
                workflow_path: run.path.clone(),
                head_sha: sha.clone(),
                event: WORKFLOW_EVENT.to_owned(),
            }));
        }
        Ok(jobs)
    }

    async fn label_events(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<LabelEvent>, GitHubError> {
        let mut state = self.call_on(Endpoint::ListTimeline, repo, &[&number])?;
        Ok(state.indexed_thread(repo, number)?.events().to_vec())
    }

    async fn label_records(
        &self,
        repo: &RepoName,
        names: &[String],
    ) -> Result<Vec<LabelRecord>, GitHubError> {
        let mut records = Vec::new();
        // One GraphQL query per name, as the REST client sends them.
        for name in names {
            let mut state = self.call_on(Endpoint::GraphqlLabel, repo, &[name])?;
            let found = state.repo_mut(repo)?;
            if let Some(label) = found
                .all_labels()
                .into_iter()
                .find(|l| l.name.eq_ignore_ascii_case(name))
            {
                records.push(label.record());
            }
        }
        Ok(records)
    }

    async fn head_ref_updates(
        &self,
        repo: &RepoName,
        head_ref: &str,
    ) -> Result<Vec<RefUpdate>, GitHubError> {
        let mut state = self.call(
            Endpoint::ListActivity,
            Some(repo),
            &[],
            &[("ref", &head_ref)],
        )?;
        let found = state.repo_mut(repo)?;
        let mut updates = branch_log(found, head_ref);
        updates.reverse(); // GitHub lists the newest first.
        Ok(updates)
    }

    async fn repo_activity(
        &self,
        repo: &RepoName,
        max_pages: usize,
    ) -> Result<RepoActivity, GitHubError> {
        let mut state = self.call(Endpoint::ListActivity, Some(repo), &[], &[])?;
        let found = state.repo_mut(repo)?;
        let mut entries = repo_log(found);
        let limit = max_pages.saturating_mul(ACTIVITY_PAGE);
        let complete = entries.len() <= limit;
        entries.truncate(limit);
        Ok(RepoActivity { entries, complete })
    }

    async fn comments(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<Comment>, GitHubError> {
        let mut state = self.call_on(Endpoint::ListComments, repo, &[&number])?;
        let (found, index) = state.indexed_repo(repo)?;
        let pull = index
            .pull(found, number)
            .map(|position| &found.pulls[position]);
        if pull.is_some_and(|p| p.comments_unreadable) {
            return Err(GitHubError::Unavailable {
                route: Endpoint::ListComments.route().to_owned(),
                message: format!(
                    "comments of {} cannot be read (comments_unreadable)",
                    reference(repo, number)
                ),
            });
        }
        match pull {
            Some(pull) => Ok(pull.comments.clone()),
            None => Ok(thread_of(found, number)?.comments().to_vec()),
        }
    }

    async fn reactions(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Vec<Reaction>, GitHubError> {
        let mut state = self.call_on(Endpoint::ListReactions, repo, &[&number])?;
        Ok(state.indexed_thread(repo, number)?.reactions().to_vec())
    }

    async fn default_branch(&self, repo: &RepoName) -> Result<String, GitHubError> {
        let state = self.call_on(Endpoint::GetRepo, repo, &[])?;
        Ok(state.repo(repo)?.default_branch.clone())
    }

    async fn branch_head(&self, repo: &RepoName, branch: &str) -> Result<CommitSha, GitHubError> {
        let state = self.call_on(Endpoint::GetBranch, repo, &[&branch])?;
        let found = state.repo(repo)?;
        found
            .branch_head(branch)
            .cloned()
            .ok_or_else(|| GitHubError::NotFound {
                what: format!("branch {branch} of {repo}"),
            })
    }

    async fn branch_rules(
        &self,
        repo: &RepoName,
        branch: &str,
    ) -> Result<Vec<String>, GitHubError> {
        let state = self.call_on(Endpoint::ListBranchRules, repo, &[&branch])?;
        let found = state.repo(repo)?;
        // The branch need not exist, as on GitHub.
        let mut rules = found.branch_rules.get(branch).cloned().unwrap_or_default();
        rules.sort();
        rules.dedup();
        Ok(rules)
    }

    async fn merge_queue(
        &self,
        repo: &RepoName,
        branch: &str,
    ) -> Result<Option<Vec<QueueEntry>>, GitHubError> {
        let state = self.call_on(Endpoint::GraphqlMergeQueue, repo, &[&branch])?;
        Ok(state.repo(repo)?.merge_queue_view(branch))
    }

    async fn queue_entry(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Option<QueueEntry>, GitHubError> {
        let state = self.call_on(Endpoint::GraphqlQueueEntry, repo, &[&number])?;
        let found = state.repo(repo)?;
        pull_of(found, number)?;
        Ok(found.queue_entry_of(number))
    }

    async fn enqueue_pull(
        &self,
        repo: &RepoName,
        number: PrNumber,
        expected_head: &CommitSha,
    ) -> Result<QueueEntry, GitHubError> {
        let mut state = self.call_on(Endpoint::GraphqlEnqueue, repo, &[&number])?;
        let bot = state.bot(Endpoint::GraphqlEnqueue)?;
        let at = state.world.stamp();
        let found = state.repo_mut(repo)?;
        pull_of(found, number)?;
        let entry = found
            .enqueue(number, Some(expected_head), bot, at, false)
            .map_err(|refused| enqueue_error(repo, number, Some(expected_head), refused))?;
        state.applied(Write::EnqueuePull {
            repo: repo.clone(),
            number,
            expected_head: expected_head.clone(),
            answer: Some(entry.position),
        })?;
        Ok(entry)
    }

    async fn dequeue_pull(&self, repo: &RepoName, number: PrNumber) -> Result<(), GitHubError> {
        let mut state = self.call_on(Endpoint::GraphqlDequeue, repo, &[&number])?;
        let bot = state.bot(Endpoint::GraphqlDequeue)?;
        let at = state.world.stamp();
        let found = state.repo_mut(repo)?;
        pull_of(found, number)?;
        let queued_at = found.queue_entry_of(number).map(|entry| entry.head);
        if !found.dequeue(number, at) {
            return Err(GitHubError::NotMergeable {
                pr: reference(repo, number),
                message: "Pull request is not in a merge queue".to_owned(),
            });
        }
        if let Some(head) = queued_at {
            found.record_queue_removal(number, head, bot, "dequeued", at);
        }
        state.applied(Write::DequeuePull {
            repo: repo.clone(),
            number,
        })
    }

    async fn last_queue_removal(
        &self,
        repo: &RepoName,
        number: PrNumber,
    ) -> Result<Option<mp_core::port::QueueRemoval>, GitHubError> {
        let state = self.call_on(Endpoint::GraphqlQueueRemoval, repo, &[&number])?;
        let found = state.repo(repo)?;
        pull_of(found, number)?;
        Ok(found
            .last_queue_removal(number)
            .map(|r| mp_core::port::QueueRemoval {
                head: Some(r.head.clone()),
                actor: Some(r.actor.clone()),
                reason: Some(r.reason.clone()),
                at: Some(r.at),
            }))
    }

    async fn merge_groups(
        &self,
        repo: &RepoName,
        base: &str,
    ) -> Result<Vec<MergeGroupRef>, GitHubError> {
        let prefix = mp_core::github_queue::merge_group_prefix(base);
        let state = self.call_on(Endpoint::ListMatchingRefs, repo, &[&prefix])?;
        let found = state.repo(repo)?;
        Ok(found
            .branches
            .range(prefix.clone()..)
            .take_while(|(branch, _)| branch.starts_with(&prefix))
            .map(|(branch, head)| MergeGroupRef {
                branch: branch.clone(),
                head: head.clone(),
            })
            .collect())
    }

    async fn create_check_run(
        &self,
        repo: &RepoName,
        run: &NewCheckRun,
    ) -> Result<(), GitHubError> {
        let mut state = self.call_on(Endpoint::CreateCheckRun, repo, &[&run.head_sha])?;
        let now = state.world.stamp();
        let app = state.world.bot_slug.clone();
        let found = state.repo_mut(repo)?;
        let Some(commit) = found.commits.iter_mut().find(|c| c.sha == run.head_sha) else {
            return Err(GitHubError::NotFound {
                what: format!("commit {} in {repo}", run.head_sha),
            });
        };
        commit.checks.push(CheckRun {
            id: None,
            name: run.name.clone(),
            status: mp_core::context::CheckStatus::Completed,
            conclusion: Some(run.conclusion.clone()),
            started_at: Some(now),
            completed_at: Some(now),
            app_slug: Some(app),
            output_summary: Some(run.summary.clone()),
        });
        state.applied(Write::CreateCheckRun {
            repo: repo.clone(),
            run: run.clone(),
        })
    }

    async fn issues(&self, repo: &RepoName, query: &IssueQuery) -> Result<Vec<Issue>, GitHubError> {
        let listed = match query.state {
            None => "all",
            Some(IssueState::Open) => "open",
            Some(IssueState::Closed) => "closed",
        };
        let labels = query.labels.join(",");
        let mut params: Vec<(&str, &dyn Display)> = vec![("state", &listed)];
        if !labels.is_empty() {
            params.push(("labels", &labels));
        }
        let state = self.call(Endpoint::ListIssues, Some(repo), &[], &params)?;
        let found = state.repo(repo)?;
        // Filter on the records, then copy only what matches.
        let wanted = |state: IssueState, labels: &[String]| {
            query.state.is_none_or(|s| s == state)
                && query.labels.iter().all(|l| labels.contains(l))
        };
        let issues = found
            .issues
            .iter()
            .filter(|i| wanted(i.state, &i.labels))
            .map(|i| issue_of(repo, i));
        let pulls = found
            .pulls
            .iter()
            .filter(|p| wanted(issue_state(p.state), &p.labels))
            .map(|p| issue_of_pull(repo, p));
        let mut matching: Vec<Issue> = issues.chain(pulls).collect();
        // GitHub's default order: newest first.
        matching.sort_by_key(|issue| std::cmp::Reverse(issue.number));
        Ok(matching)
    }

    async fn create_comment(
        &self,
        repo: &RepoName,
        number: PrNumber,
        body: &str,
    ) -> Result<Comment, GitHubError> {
        let mut state = self.call_on(Endpoint::CreateComment, repo, &[&number])?;
        state.may_write(Endpoint::CreateComment, &COMMENT_PERMISSIONS)?;
        let bot = state.bot(Endpoint::CreateComment)?;
        let now = state.world.stamp();
        let id = CommentId::new(state.next_comment_id);
        let comment = Comment {
            id,
            author: Some(bot),
            body: body.to_owned(),
            created_at: Some(now),
            updated_at: Some(now),
        };
        let thread = thread_mut(state.repo_mut(repo)?, number)?;
        thread.comments_mut().push(comment.clone());
        state.next_comment_id += 1;
        state.applied(Write::CreateComment {
            repo: repo.clone(),
            number,
            body: body.to_owned(),
            answer: Some(id),
        })?;
        Ok(comment)
    }

    async fn update_comment(
        &self,
        repo: &RepoName,
        id: CommentId,
        body: &str,
    ) -> Result<(), GitHubError> {
        let mut state = self.call_on(Endpoint::UpdateComment, repo, &[&id.get()])?;
        state.may_write(Endpoint::UpdateComment, &COMMENT_PERMISSIONS)?;
        let now = state.world.stamp();
        let found = state.repo_mut(repo)?;
        let pulls = found.pulls.iter_mut().flat_map(|p| {
            let number = p.number;
            p.comments.iter_mut().map(move |c| (number, c))
        });
        let issues = found.issues.iter_mut().flat_map(|i| {
            let number = i.number;
            i.comments.iter_mut().map(move |c| (number, c))
        });
        let mut pulls_and_issues = pulls.chain(issues);
        let Some((number, comment)) = pulls_and_issues.find(|(_, c)| c.id == id) else {
            return Err(GitHubError::NotFound {
                what: format!("comment {} in {repo}", id.get()),
            });
        };
        comment.body = body.to_owned();
        comment.updated_at = Some(now);
        state.applied(Write::UpdateComment {
            repo: repo.clone(),
            id,
            body: body.to_owned(),
            answer: Some(number),
        })?;
        Ok(())
    }

    async fn add_labels(
        &self,
        repo: &RepoName,
        number: PrNumber,
        labels: &[String],
    ) -> Result<(), GitHubError> {
        let mut state = self.call_on(Endpoint::AddLabels, repo, &[&number])?;
        let bot = state.bot(Endpoint::AddLabels)?;
        let now = state.world.stamp();
        let thread = thread_mut(state.repo_mut(repo)?, number)?;
        for label in labels {
            if thread.labels().contains(label) {
                continue;
            }
            thread.labels_mut().push(label.clone());
            thread.events_mut().push(LabelEvent {
                action: LabelAction::Labeled,
                label: label.clone(),
                actor: Some(bot.clone()),
                at: Some(now),
            });
        }
        state.applied(Write::AddLabels {
            repo: repo.clone(),
            number,
            labels: labels.to_vec(),
        })?;
        Ok(())
    }

    async fn remove_label(
        &self,
        repo: &RepoName,
        number: PrNumber,
        label: &str,
    ) -> Result<(), GitHubError> {
        let mut state = self.call_on(Endpoint::RemoveLabel, repo, &[&number, &label])?;
        let bot = state.bot(Endpoint::RemoveLabel)?;
        let now = state.world.stamp();
        let thread = thread_mut(state.repo_mut(repo)?, number)?;
        let before = thread.labels().len();
        thread.labels_mut().retain(|l| l != label);
        if thread.labels().len() == before {
            // GitHub answers 404 for an absent label; the port reads that as done.
            return Ok(());
        }
        thread.events_mut().push(LabelEvent {
            action: LabelAction::Unlabeled,
            label: label.to_owned(),
            actor: Some(bot),
            at: Some(now),
        });
        state.applied(Write::RemoveLabel {
            repo: repo.clone(),
            number,
            label: label.to_owned(),
        })?;
        Ok(())
    }

    async fn create_issue(&self, repo: &RepoName, issue: &NewIssue) -> Result<Issue, GitHubError> {
        let mut state = self.call_on(Endpoint::CreateIssue, repo, &[])?;
        let bot = state.bot(Endpoint::CreateIssue)?;
        let now = state.world.stamp();
        if issue.title.trim().is_empty() {
            return Err(GitHubError::Status {
                route: Endpoint::CreateIssue.route().to_owned(),
                status: 422,
                message: "an issue needs a title".to_owned(),
            });
        }
        let found = state.repo_mut(repo)?;
        let number = found.next_number();
        let mut labels: Vec<String> = Vec::new();
        for label in &issue.labels {
            if !labels.contains(label) {
                labels.push(label.clone());
            }
        }
        let record = IssueRecord {
            number,
            title: issue.title.clone(),
            body: issue.body.clone(),
            author: Some(bot.clone()),
            state: IssueState::Open,
            events: labels
                .iter()
                .map(|label| LabelEvent {
                    action: LabelAction::Labeled,
                    label: label.clone(),
                    actor: Some(bot.clone()),
                    at: Some(now),
                })
                .collect(),
            labels,
            comments: Vec::new(),
            reactions: Vec::new(),
            created_at: Some(now),
        };
        let created = issue_of(repo, &record);
        found.issues.push(record);
        state.applied(Write::CreateIssue {
            repo: repo.clone(),
            issue: NewIssue {
                labels: created.labels.clone(),
                ..issue.clone()
            },
            answer: Some(number),
        })?;
        Ok(created)
    }

    async fn close_issue(&self, repo: &RepoName, number: PrNumber) -> Result<(), GitHubError> {
        let mut state = self.call_on(Endpoint::UpdateIssue, repo, &[&number])?;
        thread_mut(state.repo_mut(repo)?, number)?.close();
        state.applied(Write::CloseIssue {
            repo: repo.clone(),
            number,
        })?;
        Ok(())
    }

    async fn merge_pull(
        &self,
        repo: &RepoName,
        number: PrNumber,
        request: &MergeRequest,
    ) -> Result<CommitSha, GitHubError> {
        let mut state = self.call_on(Endpoint::MergePull, repo, &[&number])?;
        let bot = state.bot(Endpoint::MergePull)?;
        let now = state.world.stamp();
        let State { world, index, .. } = &mut *state;
        let position = index
            .repo(world, repo)
            .ok_or_else(|| repo_not_found(repo))?;
        let tables = index.tables(position, &world.repos[position]);
        let found = &mut world.repos[position];
        let pull = pull_of(found, number)?;
        let pr = reference(repo, number);
        let refuse = |message: &str| GitHubError::NotMergeable {
            pr: pr.clone(),
            message: message.to_owned(),
        };
        if pull.state != PrState::Open || pull.merged {
            return Err(refuse("pull request is closed"));
        }
        if !pull.mergeable {
            return Err(refuse("pull request is not mergeable"));
        }
        // A branch behind a merge queue refuses direct merges (405, GitHub's words).
        if found
            .branch_rules
            .get(&pull.base_ref)
            .is_some_and(|rules| mp_core::github_queue::protected_by_merge_queue(rules))
        {
            return Err(refuse("Changes must be made through the merge queue"));
        }
        if pull.head_sha != request.head_sha {
            return Err(GitHubError::HeadMoved {
                pr,
                expected: request.head_sha.clone(),
            });
        }
        let Some(base_head) = found.branch_head(&pull.base_ref).cloned() else {
            return Err(refuse("the base branch does not exist"));
        };
        let message = squash_message(found, pull, request.commit_message.as_deref());
        let (id, sha) =
            indexed_fresh_commit_id(tables, found, &format!("squash merge of #{number}"));
        let author = pull.author.clone();
        let base_ref = pull.base_ref.clone();
        let head_sha = pull.head_sha.clone();
        let changes = pull.files.clone();
        found.commits.push(Commit {
            check_workflows: Default::default(),
            id,
            sha: sha.clone(),
            message: message.clone(),
            parents: vec![base_head],
            author: Some(author),
            committer: Some(bot.clone()),
            date: Some(now),
            checks: Vec::new(),
        });
        found.move_branch(
            &base_ref,
            Some(sha.clone()),
            RefUpdateKind::Other(PR_MERGE.to_owned()),
            bot.clone(),
            now,
        );
        apply_files(found, &base_ref, &changes);
        if let Some(pull) = found.pull_mut(number) {
            pull.merged = true;
            pull.state = PrState::Closed;
            pull.merged_by = Some(bot);
            pull.merge_commit = Some(sha.clone());
        }
        state.applied(Write::MergePull {
            repo: repo.clone(),
            number,
            request: MergeRequest {
                head_sha,
                ..request.clone()
            },
            answer: Some(Merged {
                sha: sha.clone(),
                message,
            }),
        })?;
        Ok(sha)
    }

    async fn update_branch(
        &self,
        repo: &RepoName,
        number: PrNumber,
        expected_head: &CommitSha,
    ) -> Result<UpdateBranchOutcome, GitHubError> {
        let mut state = self.call_on(Endpoint::UpdateBranch, repo, &[&number])?;
        let bot = state.bot(Endpoint::UpdateBranch)?;
        let found_bot = Some(bot.clone());
        let now = state.world.stamp();
        let State { world, index, .. } = &mut *state;
        let repo_position = index
            .repo(world, repo)
            .ok_or_else(|| repo_not_found(repo))?;
        let tables = index.tables(repo_position, &world.repos[repo_position]);
        let found = &mut world.repos[repo_position];
        let position = tables
            .pull(found, number)
            .ok_or_else(|| pull_not_found(repo, number))?;
        let pull = &found.pulls[position];
        let refuse = |message: &str| {
            Ok(UpdateBranchOutcome::Refused {
                message: message.to_owned(),
            })
        };
        if pull.state != PrState::Open {
            return refuse("pull request is closed");
        }
        if &pull.head_sha != expected_head {
            return refuse("expected head sha didn't match current head ref");
        }
        let Some(base_head) = found.branch_head(&pull.base_ref).cloned() else {
            return refuse("the base branch does not exist");
        };
        if pull.base_sha == base_head {
            return refuse("already up to date");
        }
        if !pull.mergeable {
            return refuse("merge conflict between base and head");
        }
        let message = format!("Merge branch '{}' into {}", pull.base_ref, pull.head_ref);
        let (id, sha) =
            indexed_fresh_commit_id(tables, found, &format!("update branch of #{number}"));
        let head_ref = pull.head_ref.clone();
        found.commits.push(Commit {
            check_workflows: Default::default(),
            id,
            sha: sha.clone(),
            message,
            parents: vec![pull.head_sha.clone(), base_head.clone()],
            author: Some(bot.clone()),
            committer: Some(bot),
            date: Some(now),
            checks: Vec::new(),
        });
        found.branches.insert(head_ref, sha.clone());
        let pull = &mut found.pulls[position];
        pull.pushes.push(RefUpdate {
            kind: RefUpdateKind::Push,
            before: Some(pull.head_sha.clone()),
            after: Some(sha.clone()),
            at: Some(now),
            actor: found_bot.clone(),
        });
        pull.head_sha = sha.clone();
        pull.commits.push(sha.clone());
        pull.base_sha = base_head.clone();
        state.applied(Write::UpdateBranch {
            repo: repo.clone(),
            number,
            expected_head: expected_head.clone(),
            answer: Some(BranchUpdated {
                head: sha,
                base: base_head,
            }),
        })?;
        Ok(UpdateBranchOutcome::Accepted)
    }
}

/// A check run's times to the whole second, as GitHub keeps them whatever a client sent.
fn whole_seconds(run: &mut CheckRun) {
    run.started_at = run.started_at.map(Timestamp::whole_second);
    run.completed_at = run.completed_at.map(Timestamp::whole_second);
}
