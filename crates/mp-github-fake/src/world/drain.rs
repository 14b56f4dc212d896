//! The drain world: one busy repository where several agents each have several pull
//! requests ready at once, and CI is simulated (`ci:`), so a run of many ticks shows
//! whether every ready pull request reaches `main` with no human action.
//!
//! Every pull request adds its own file (`src/agent<a>/change<k>.rs`), so none conflicts
//! with another; each carries the identity trailers, was pushed an hour before the clock,
//! labelled `ready-to-merge` by the owner half an hour later, and is green on its head
//! against the current `main`. The check `test` takes `ci_minutes` per head, published by
//! GitHub Actions. Pull requests listed in `failing` (by their place, from 0) change a
//! path under `src/flaky/` instead, which the simulated CI fails ([`spread`] picks places
//! spread over the agents). With `queue`, the repository is in queue mode
//! (`repo_overrides.drain/app.merge.mode: queue`), and [`untested_moves`] proves that the
//! default branch only ever moved to a staging commit whose checks passed. With
//! `github_queue`, `main` is behind GitHub's merge queue (a ruleset with `merge_queue`,
//! GitHub's default settings, `merge.mode: github-queue`), whose required checks are
//! `test` by GitHub Actions and, with `mp_gate_check`, `mp-gate` by the drain's App; and
//! [`untested_group_moves`] proves that `main` only ever moved to merge groups' heads whose
//! required checks passed.

use mp_core::approval::READY_TO_MERGE;
use mp_core::context::{
    CheckConclusion, CheckRun, CheckStatus, FileChange, FileStatus, LabelAction, LabelEvent,
    RefUpdate, RefUpdateKind,
};
use mp_core::ids::{Login, PrNumber, RepoName, Timestamp};
use mp_core::queue::staging_branch;

use super::{
    CiSimulation, Commit, MERGE_QUEUE_APP, MERGE_QUEUE_MERGE, MergeQueueSettings, Pull, PullFile,
    Repo, RequiredCheck, World, commit_sha,
};

/// The App slug of the drain world.
pub const DRAIN_BOT: &str = "drain-merge-gate";
/// The owner, the only allowlisted human.
pub const DRAIN_OWNER: &str = "drain-owner";
/// The gated repository.
pub const DRAIN_REPO: &str = "drain/app";
/// The governance repository.
pub const DRAIN_GOVERNANCE: &str = "drain/governance";
/// The name of mp's own check on merge groups, which the GitHub-queue drain can require.
pub const MP_GATE_CHECK: &str = "mp-gate";
/// The clock of the drain world.
pub const DRAIN_NOW: &str = "2026-06-01T12:00:00Z";

/// The shape of a drain world.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrainSpec {
    /// Agents, each with its own login (`agent-1`, ...).
    pub agents: usize,
    /// Ready pull requests per agent.
    pub per_agent: usize,
    /// Minutes the `test` check takes on each head.
    pub ci_minutes: u32,
    /// The places (from 0, agent by agent) of pull requests whose CI fails.
    pub failing: Vec<usize>,
    /// Whether a failing pull request's own head passed `test` when the agent pushed it
    /// (against the older `main` it branched from), so that its change fails only once
    /// merged onto today's `main`: the case only a test of the merged tree catches. Without
    /// it, a failing pull request's head fails on its own.
    pub failing_passes_alone: bool,
    /// Whether the repository lands through the merge queue (`merge.mode: queue`).
    pub queue: bool,
    /// The queue's `batch_max`, when not the default.
    pub batch_max: Option<u32>,
    /// Whether `main` lands through GitHub's merge queue (`merge.mode: github-queue`).
    pub github_queue: bool,
    /// With `github_queue`, whether the queue also requires [`MP_GATE_CHECK`] by the
    /// drain's App on each merge group's head (mp must post it, or every group times out).
    pub mp_gate_check: bool,
}

impl DrainSpec {
    /// How many pull requests the world has.
    pub fn pulls(&self) -> usize {
        self.agents * self.per_agent
    }
}

/// `count` places of failing pull requests for `agents × per_agent`, spread over the
/// agents and over each agent's pull requests: the `i`-th is pull request `i mod per_agent`
/// of the agent in the middle of the `i`-th of `count` equal slices of the agents (so 5 of
/// 10 agents × 5 are agent 2's first, agent 4's second, ..., agent 10's fifth). At most
/// one per agent while `count ≤ agents`.
pub fn spread(agents: usize, per_agent: usize, count: usize) -> Vec<usize> {
    let total = agents * per_agent;
    let count = count.min(total);
    let mut places: Vec<usize> = Vec::with_capacity(count);
    for i in 0..count {
        let agent = (2 * i + 1) * agents / (2 * count);
        let mut place = agent * per_agent + i % per_agent;
        // Past one per agent, the next free place after it.
        while places.contains(&place) {
            place = (place + 1) % total;
        }
        places.push(place);
    }
    places.sort_unstable();
    places
}

impl Default for DrainSpec {
    /// The drain: 4 agents × 3 pull requests, CI taking 10 minutes, all green.
    fn default() -> Self {
        Self {
            agents: 4,
            per_agent: 3,
            ci_minutes: 10,
            failing: Vec::new(),
            failing_passes_alone: false,
            queue: false,
            batch_max: None,
            github_queue: false,
            mp_gate_check: false,
        }
    }
}

fn login(text: &str) -> Login {
    Login::parse(text).expect("the drain logins are valid")
}

fn repo_name(text: &str) -> RepoName {
    RepoName::parse(text).expect("the drain repository names are valid")
}

/// The drain world of `spec`.
pub fn drain_world(spec: &DrainSpec) -> World {
    let now = Timestamp::parse(DRAIN_NOW).expect("the drain clock is a valid time");
    let mut world = World::new(now, DRAIN_BOT);
    world.ci = Some(CiSimulation {
        checks: vec!["test".to_owned()],
        app: "github-actions".to_owned(),
        minutes: spec.ci_minutes,
        fails: vec!["src/flaky/**".to_owned()],
    });
    let agents: Vec<String> = (1..=spec.agents).map(|a| format!("agent-{a}")).collect();
    let mut projects =
        format!("governance_repo: {DRAIN_GOVERNANCE}\nsupervised_repos: [{DRAIN_REPO}]\n");
    if spec.queue {
        projects.push_str(&format!(
            "repo_overrides:\n  {DRAIN_REPO}:\n    merge:\n      mode: queue\n"
        ));
        if let Some(batch_max) = spec.batch_max {
            projects.push_str(&format!("      batch_max: {batch_max}\n"));
        }
    } else if spec.github_queue {
        projects.push_str(&format!(
            "repo_overrides:\n  {DRAIN_REPO}:\n    merge:\n      mode: github-queue\n"
        ));
    }
    let texts = [
        ("owner.yml", format!("github_login: {DRAIN_OWNER}\n")),
        ("projects.yml", projects),
        (
            "env.yml",
            format!("bot_app_slug: {DRAIN_BOT}\nrequired_checks: [test]\nmerge_enabled: true\n"),
        ),
        (
            "agent_registry.yml",
            "tools: [claude-code]\nmodels:\n  claude-code: [\"*\"]\n".to_owned(),
        ),
    ];
    world.config = texts
        .into_iter()
        .map(|(name, text)| (name.to_owned(), text))
        .collect();

    let owner = login(DRAIN_OWNER);
    let mut repo = Repo::new(repo_name(DRAIN_REPO));
    let main = commit_sha(&repo.name, "main-1");
    let started = now.plus_hours(-24 * 7);
    repo.commits.push(Commit {
        check_workflows: Default::default(),
        id: "main-1".to_owned(),
        sha: main.clone(),
        message: "Initial import".to_owned(),
        parents: Vec::new(),
        author: Some(owner.clone()),
        committer: Some(owner.clone()),
        date: Some(started),
        checks: Vec::new(),
    });
    repo.branches.insert("main".to_owned(), main.clone());
    repo.files
        .insert("src/lib.rs".to_owned(), "pub fn run() {}\n".to_owned());
    if spec.github_queue {
        repo.branch_rules.insert(
            "main".to_owned(),
            [
                "deletion",
                "merge_queue",
                "non_fast_forward",
                "pull_request",
            ]
            .map(str::to_owned)
            .to_vec(),
        );
        let mut required = vec![RequiredCheck {
            name: "test".to_owned(),
            app: "github-actions".to_owned(),
        }];
        if spec.mp_gate_check {
            required.push(RequiredCheck {
                name: MP_GATE_CHECK.to_owned(),
                app: DRAIN_BOT.to_owned(),
            });
        }
        repo.merge_queues.insert(
            "main".to_owned(),
            MergeQueueSettings {
                required_checks: Some(required),
                ..MergeQueueSettings::default()
            },
        );
    }

    let pushed = now.plus_seconds(-3600);
    let labelled = now.plus_seconds(-1800);
    let mut place = 0;
    for (a, agent) in agents.iter().enumerate() {
        let author = login(agent);
        for k in 1..=spec.per_agent {
            let number = PrNumber::new(place as u64 + 1);
            let fails = spec.failing.contains(&place);
            place += 1;
            let id = format!("agent{}-change{k}", a + 1);
            let sha = commit_sha(&repo.name, &id);
            let path = if fails {
                format!("src/flaky/agent{}_change{k}.rs", a + 1)
            } else {
                format!("src/agent{}/change{k}.rs", a + 1)
            };
            let title = format!("Agent {} change {k}", a + 1);
            repo.commits.push(Commit {
                check_workflows: Default::default(),
                id: id.clone(),
                sha: sha.clone(),
                message: format!(
                    "{title}\n\nAgent-Tool: claude-code\nAgent-Model: claude-opus-4\nAgent-Session: s_drain-{}-{k}\nAgent-Machine: runner-{}\nTask-Ref: Issue#{}\n",
                    a + 1,
                    a + 1,
                    100 + number.get()
                ),
                parents: vec![main.clone()],
                author: Some(author.clone()),
                committer: Some(author.clone()),
                date: Some(pushed),
                checks: if fails && spec.failing_passes_alone {
                    vec![passed_alone(pushed, spec.ci_minutes)]
                } else {
                    Vec::new()
                },
            });
            let head_ref = format!("{agent}/change-{k}");
            repo.branches.insert(head_ref.clone(), sha.clone());
            repo.pulls.push(Pull {
                number,
                title,
                body: String::new(),
                author: author.clone(),
                head_ref,
                head_sha: sha.clone(),
                base_ref: "main".to_owned(),
                base_sha: main.clone(),
                commits: vec![sha.clone()],
                labels: vec![READY_TO_MERGE.to_owned()],
                events: vec![LabelEvent {
                    action: LabelAction::Labeled,
                    label: READY_TO_MERGE.to_owned(),
                    actor: Some(owner.clone()),
                    at: Some(labelled),
                }],
                files: vec![PullFile {
                    change: FileChange {
                        path: path.clone(),
                        status: FileStatus::Added,
                        additions: 1,
                        deletions: 0,
                        previous_filename: None,
                    },
                    content: Some(format!("pub fn change_{}_{k}() {{}}\n", a + 1)),
                }],
                comments: Vec::new(),
                reactions: Vec::new(),
                state: mp_core::context::PrState::Open,
                merged: false,
                mergeable: true,
                merged_by: None,
                merge_commit: None,
                merged_at: None,
                created_at: Some(pushed),
                comments_unreadable: false,
                head_repo: None,
                pushes: vec![RefUpdate {
                    kind: RefUpdateKind::BranchCreation,
                    before: None,
                    after: Some(sha),
                    at: Some(pushed),
                    actor: Some(author.clone()),
                }],
            });
        }
    }
    world.repos.push(repo);

    let mut governance = Repo::new(repo_name(DRAIN_GOVERNANCE));
    let g1 = commit_sha(&governance.name, "g1");
    governance.commits.push(Commit {
        check_workflows: Default::default(),
        id: "g1".to_owned(),
        sha: g1.clone(),
        message: "Doctrine".to_owned(),
        parents: Vec::new(),
        author: Some(owner.clone()),
        committer: Some(owner),
        date: Some(started),
        checks: Vec::new(),
    });
    governance.branches.insert("main".to_owned(), g1);
    governance.files.insert(
        "docs/decisions/0001-start.md".to_owned(),
        "# Start\n".to_owned(),
    );
    world.repos.push(governance);
    world
}

/// The `test` run a failing pull request's head passed when it was pushed, before
/// today's `main` (see [`DrainSpec::failing_passes_alone`]).
fn passed_alone(pushed: Timestamp, ci_minutes: u32) -> CheckRun {
    CheckRun {
        id: None,
        name: "test".to_owned(),
        status: CheckStatus::Completed,
        conclusion: Some(CheckConclusion::Success),
        started_at: Some(pushed),
        completed_at: Some(pushed.plus_seconds(i64::from(ci_minutes) * 60)),
        app_slug: Some("github-actions".to_owned()),
        output_summary: Some("passed on the main it branched from".to_owned()),
    }
}

/// What [`untested_moves`] checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MovesProof {
    /// The moves of the branch it checked.
    pub moves: usize,
    /// Each move that is not proven, with why.
    pub untested: Vec<String>,
}

/// Checks every move of `branch` in `repo` at or after `since` (GitHub's activity log)
/// against the merge queue's promise: the branch moved, by a non-forced push of the
/// world's App, to exactly a commit that the App had pushed to the staging branch
/// (`mp-queue/<branch>`) before, and on which each of the simulated CI's checks (`ci:`)
/// completed `success`, by the simulated CI's App, before the move. A commit's SHA names
/// its tree, so the branch only ever holds a tree whose required checks passed.
pub fn untested_moves(
    world: &World,
    repo: &RepoName,
    branch: &str,
    since: Timestamp,
) -> MovesProof {
    let mut proof = MovesProof::default();
    let Some(found) = world.repo(repo) else {
        proof.untested.push(format!("{repo}: no such repository"));
        return proof;
    };
    let Some(ci) = &world.ci else {
        proof
            .untested
            .push("the world has no simulated CI to prove against".to_owned());
        return proof;
    };
    let bot = world.bot_login().ok();
    let staged = found
        .activity
        .get(&staging_branch(branch))
        .map(Vec::as_slice)
        .unwrap_or_default();
    let moves = found
        .activity
        .get(branch)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for update in moves.iter().filter(|u| u.at.is_some_and(|at| at >= since)) {
        proof.moves += 1;
        let (Some(to), Some(at)) = (&update.after, update.at) else {
            proof
                .untested
                .push(format!("{branch} was deleted or moved at no recorded time"));
            continue;
        };
        let name = format!("{branch} moved to {} at {at}", to.short());
        if update.kind != RefUpdateKind::Push || update.actor != bot {
            proof.untested.push(format!(
                "{name}: not a fast-forward push by the App ({:?} by {:?})",
                update.kind, update.actor
            ));
            continue;
        }
        let was_staged = staged.iter().any(|s| {
            s.after.as_ref() == Some(to) && s.actor == bot && s.at.is_some_and(|t| t <= at)
        });
        if !was_staged {
            proof
                .untested
                .push(format!("{name}: not a commit the App staged before"));
            continue;
        }
        let runs = found
            .commit(to)
            .map(|c| c.checks.as_slice())
            .unwrap_or_default();
        for check in &ci.checks {
            let green = runs.iter().any(|run| {
                &run.name == check
                    && run.app_slug.as_deref() == Some(ci.app.as_str())
                    && run.status == CheckStatus::Completed
                    && run.conclusion == Some(CheckConclusion::Success)
                    && run.completed_at.is_some_and(|done| done <= at)
            });
            if !green {
                proof.untested.push(format!(
                    "{name}: `{check}` by {} had not passed on it before",
                    ci.app
                ));
            }
        }
    }
    proof
}

/// Checks every move of `branch` in `repo` at or after `since` against GitHub's merge
/// queue's promise (decisions/0083): the branch moved by the queue's App
/// (`merge_queue_merge`), and every commit the move brought onto its first-parent chain
/// is the head of a merge group of `branch` made before the move, on which each required
/// check of the queue (its `required_checks`, else the simulated CI's) completed `success`,
/// by its App, at or before the move. Each group's head is the commit the queue tested, so
/// the branch only ever holds trees whose required checks passed.
pub fn untested_group_moves(
    world: &World,
    repo: &RepoName,
    branch: &str,
    since: Timestamp,
) -> MovesProof {
    let mut proof = MovesProof::default();
    let Some(found) = world.repo(repo) else {
        proof.untested.push(format!("{repo}: no such repository"));
        return proof;
    };
    let required = found.group_required_checks(branch, world.ci.as_ref());
    let queue_app = Login::for_app(MERGE_QUEUE_APP).ok();
    let moves = found
        .activity
        .get(branch)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for update in moves.iter().filter(|u| u.at.is_some_and(|at| at >= since)) {
        proof.moves += 1;
        let (Some(to), Some(at)) = (&update.after, update.at) else {
            proof
                .untested
                .push(format!("{branch} was deleted or moved at no recorded time"));
            continue;
        };
        let name = format!("{branch} moved to {} at {at}", to.short());
        if update.kind != RefUpdateKind::Other(MERGE_QUEUE_MERGE.to_owned())
            || update.actor != queue_app
        {
            proof.untested.push(format!(
                "{name}: not a landing by the merge queue ({:?} by {:?})",
                update.kind, update.actor
            ));
            continue;
        }
        // The commits the move brought: the first-parent chain down to the old head.
        let mut next = Some(to.clone());
        let mut steps = 0;
        while let Some(sha) = next.take() {
            if Some(&sha) == update.before.as_ref() || steps > 1000 {
                break;
            }
            steps += 1;
            let made = found.merge_group_log.iter().any(|event| {
                event.destroyed.is_none()
                    && event.base_ref == branch
                    && event.group.head == sha
                    && event.at <= at
            });
            if !made {
                proof.untested.push(format!(
                    "{name}: {} is not the head of a merge group made before",
                    sha.short()
                ));
                break;
            }
            let runs = found
                .commit(&sha)
                .map(|c| c.checks.as_slice())
                .unwrap_or_default();
            for check in &required {
                let green = runs.iter().any(|run| {
                    run.name == check.name
                        && run.app_slug.as_deref() == Some(check.app.as_str())
                        && run.status == CheckStatus::Completed
                        && run.conclusion == Some(CheckConclusion::Success)
                        && run.completed_at.is_some_and(|done| done <= at)
                });
                if !green {
                    proof.untested.push(format!(
                        "{name}: `{}` by {} had not passed on group head {} before",
                        check.name,
                        check.app,
                        sha.short()
                    ));
                }
            }
            next = found.commit(&sha).and_then(|c| c.parents.first().cloned());
        }
    }
    proof
}
