//! `cargo xtask bench drain`: how a burst of ready pull requests from several agents drains
//! into `main` with no human action, on a simulated clock, in today's mode (each pull
//! request brought up to date and merged on its own), in queue mode (batches built on
//! `mp-queue/main` and fast-forwarded; docs/queue.md) and in GitHub-queue mode (mp enqueues
//! in the fake's GitHub merge queue, which tests merge groups and lands them; decisions/0083).
//!
//! Each run builds mp-github-fake's drain world (one repository, `agents × per-agent` ready pull
//! requests on independent files, CI simulated by the world's `ci:`), then ticks the real
//! tick over the in-memory GitHub every `every` simulated minutes until every pull request
//! is merged or named as failing, or the tick budget runs out. Nothing but mp's writes and
//! the simulated CI changes the world between ticks: there is no human action to count.
//!
//! Reported per run: merged of the good pull requests, ticks and simulated minutes until
//! the last merge, CI runs (`World::ci_runs`: on pull-request heads, and on the staging
//! commits or `main`'s merge commits), comments and issues written, branch updates, API
//! calls (calls to the GitHub port), the failing pull requests with what failed, and the
//! proof that `main` only holds tested trees. In today's mode every merge is checked: the
//! squash commit's parent is the base the pull request was last brought up to, the merged
//! head descends from it, and the head's required check completed green before the merge.
//! In queue mode every move of `main` is checked: a non-forced push by mp to exactly a
//! commit mp staged, whose required check completed green before the move
//! (`mp_github_fake::world::drain::untested_moves`). In GitHub-queue mode every move of
//! `main` is checked: a landing by the merge queue whose every new first-parent commit is
//! a merge group's head on which each required check passed before the move
//! (`untested_group_moves`). A run whose proof fails fails the benchmark.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::time::Instant;

use anyhow::{Context as _, bail};
use mp_core::config::{self, ConfigFiles};
use mp_core::context::{CheckConclusion, CheckStatus, PrState};
use mp_core::ids::{CommitSha, RepoName, Timestamp};
use mp_core::port::{AuditError, AuditLog, AuditRecord, Write};
use mp_github_fake::MemoryGitHub;
use mp_github_fake::world::GroupEnd;
use mp_github_fake::world::drain::{
    DRAIN_REPO, DrainSpec, drain_world, spread, untested_group_moves, untested_moves,
};
use mp_github_fake::world::{Repo, World};
use mp_tick::{self as tick, PrAction, TickOptions};

struct NoAudit;

#[async_trait::async_trait]
impl AuditLog for NoAudit {
    async fn append(&self, _record: &AuditRecord) -> Result<(), AuditError> {
        Ok(())
    }
}

/// One drain run's settings.
#[derive(Debug, Clone)]
pub struct Run {
    /// The world's shape, and whether it is in queue mode.
    pub spec: DrainSpec,
    /// Minutes between ticks.
    pub every: u32,
    /// Ticks at most.
    pub max_ticks: u32,
}

/// What one drain run came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drain {
    /// Pull requests in the world.
    pub pulls: usize,
    /// Pull requests whose change passes CI.
    pub good: usize,
    /// Pull requests merged.
    pub merged: usize,
    /// Ticks until the last merge (1 = the first tick).
    pub ticks: u32,
    /// Simulated minutes from the first tick to the last merge.
    pub minutes: i64,
    /// Distinct instants at which CI runs started on pull-request heads.
    pub ci_rounds: usize,
    /// Every simulated CI run (`World::ci_runs`).
    pub ci_runs: usize,
    /// Of those, the runs on pull-request heads.
    pub ci_runs_heads: usize,
    /// Comments the bot created.
    pub comments_created: usize,
    /// Comments the bot edited.
    pub comments_edited: usize,
    /// Issues the bot opened.
    pub issues: usize,
    /// Branch updates the bot asked for.
    pub updates: usize,
    /// Calls to the GitHub port.
    pub api_calls: u64,
    /// The calls by route, most first.
    pub calls_by_route: Vec<(String, u64)>,
    /// Each pull request not merged, `#N: what failed` (the ejection comment's lines in
    /// queue mode, else the last blocked outcome).
    pub failing: Vec<String>,
    /// What the proof checked: merges (today's mode) or moves of `main` (queue mode).
    pub proven: usize,
    /// Merges or moves of `main` not proven to land a tested tree, with why.
    pub unproven: Vec<String>,
}

/// Runs the drain and measures it.
///
/// # Errors
/// When the drain world's configuration does not load or a tick fails closed.
pub fn drain(run: &Run) -> anyhow::Result<Drain> {
    let world = drain_world(&run.spec);
    let files: ConfigFiles = world
        .config
        .iter()
        .map(|(n, t)| (n.clone(), t.clone()))
        .collect();
    let config = config::load(&files)
        .config
        .context("the drain world's configuration is invalid")?;
    let options = TickOptions::from_config(&config);
    let start = world.now;
    let pulls = world.repos[0].pulls.len();
    let good = pulls - run.spec.failing.len();
    let github = MemoryGitHub::new(world);
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    let mut last_merge_tick = 0;
    let mut last_merge_at = start;
    let mut merged_before = 0;
    // The last blocked outcome of each pull request: what today's mode says failed.
    let mut blocked: BTreeMap<String, String> = BTreeMap::new();
    for index in 0..run.max_ticks {
        let now = start.plus_seconds(i64::from(index) * i64::from(run.every) * 60);
        github.set_now(now);
        let report = runtime
            .block_on(tick::run_tick(&github, &NoAudit, &config, &options, now))
            .map_err(|e| anyhow::anyhow!("tick {} failed closed: {e}", index + 1))?;
        for outcome in &report.outcomes {
            if outcome.action == PrAction::Blocked {
                blocked.insert(outcome.pr.clone(), outcome.detail.clone());
            } else {
                blocked.remove(&outcome.pr);
            }
        }
        let (merged, open) = github.read(|w| {
            let pulls = &w.repos[0].pulls;
            (
                pulls.iter().filter(|p| p.merged).count(),
                pulls.iter().filter(|p| p.state == PrState::Open).count(),
            )
        });
        if merged > merged_before {
            merged_before = merged;
            last_merge_tick = index + 1;
            last_merge_at = now;
        }
        // Done when every good pull request merged and each failing one is named; today's
        // mode names them at once, the queue once it has ejected them.
        let named = github.read(|w| failing_named(&w.repos[0], &blocked).len());
        if merged >= good && named >= open {
            break;
        }
    }
    let world = github.world();
    let actions = github.actions();
    let count = |pick: fn(&Write) -> bool| actions.iter().filter(|a| pick(a)).count();
    let repo = &world.repos[0];
    let (ci_rounds, ci_runs_heads) = ci_activity(&world);
    let (proven, unproven) = if run.spec.queue || run.spec.github_queue {
        let name = RepoName::parse(DRAIN_REPO).context("the drain repository's name")?;
        let proof = if run.spec.queue {
            untested_moves(&world, &name, "main", start)
        } else {
            untested_group_moves(&world, &name, "main", start)
        };
        (proof.moves, proof.untested)
    } else {
        let merged = repo.pulls.iter().filter(|p| p.merged).count();
        (merged, unproven_merges(&world))
    };
    Ok(Drain {
        pulls,
        good,
        merged: repo.pulls.iter().filter(|p| p.merged).count(),
        ticks: last_merge_tick,
        minutes: last_merge_at.seconds_since(start) / 60,
        ci_rounds,
        ci_runs: world.ci_runs(),
        ci_runs_heads,
        comments_created: count(|a| matches!(a, Write::CreateComment { .. })),
        comments_edited: count(|a| matches!(a, Write::UpdateComment { .. })),
        issues: count(|a| matches!(a, Write::CreateIssue { .. })),
        updates: count(|a| matches!(a, Write::UpdateBranch { .. })),
        api_calls: github.total_calls(),
        calls_by_route: {
            let mut calls: Vec<(String, u64)> = github.calls().into_iter().collect();
            calls.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            calls
        },
        failing: failing_named(repo, &blocked),
        proven,
        unproven,
    })
}

/// Each open pull request that is named as failing, `#N: what failed`: by the comment mp
/// posts when it leaves the merge queue (its lines naming the failing checks), by its
/// last blocked outcome (the gate's reason, e.g. C2 naming the failed check), else by
/// GitHub's merge queue having taken it out (its own merge group destroyed `dequeued`,
/// which in the drain only a failing group does).
fn failing_named(repo: &Repo, blocked: &BTreeMap<String, String>) -> Vec<String> {
    let mut named = Vec::new();
    for pull in repo.pulls.iter().filter(|p| p.state == PrState::Open) {
        let dequeued = repo
            .merge_group_log
            .iter()
            .filter(|event| {
                event.group.number == pull.number && event.destroyed == Some(GroupEnd::Dequeued)
            })
            .count();
        let ejected = pull
            .comments
            .iter()
            .rev()
            .find(|c| c.body.contains("left the merge queue"))
            .map(|c| {
                let lines: Vec<&str> = c
                    .body
                    .lines()
                    .filter_map(|l| l.strip_prefix("- "))
                    .collect();
                lines.join("; ")
            });
        let why = ejected
            .or_else(|| {
                blocked
                    .get(&format!("{}#{}", repo.name, pull.number))
                    .cloned()
            })
            .or_else(|| {
                (dequeued > 0).then(|| {
                    format!(
                        "GitHub's merge queue took it out {dequeued} time(s): its merge group's required checks failed"
                    )
                })
            });
        if let Some(why) = why {
            named.push(format!("#{}: {why}", pull.number));
        }
    }
    named
}

/// Distinct start instants and the number of the simulated check runs on every commit
/// that was a pull request's head.
fn ci_activity(world: &World) -> (usize, usize) {
    let repo = &world.repos[0];
    let heads: BTreeSet<&CommitSha> = repo.pulls.iter().flat_map(|p| &p.commits).collect();
    let runs: Vec<Timestamp> = repo
        .commits
        .iter()
        .filter(|c| heads.contains(&c.sha))
        .flat_map(|c| c.checks.iter().filter_map(|run| run.started_at))
        .collect();
    let rounds: BTreeSet<Timestamp> = runs.iter().copied().collect();
    (rounds.len(), runs.len())
}

/// Every merge whose head was not green against the `main` it merged onto, with the reason.
fn unproven_merges(world: &World) -> Vec<String> {
    let repo = &world.repos[0];
    let mut unproven = Vec::new();
    for pull in repo.pulls.iter().filter(|p| p.merged) {
        let name = format!("#{}", pull.number);
        let Some(squash) = pull.merge_commit.as_ref().and_then(|s| repo.commit(s)) else {
            unproven.push(format!("{name}: no merge commit"));
            continue;
        };
        if squash.parents.first() != Some(&pull.base_sha) {
            unproven.push(format!("{name}: merged onto a main other than its base"));
        }
        if !descends(repo, &pull.head_sha, &pull.base_sha) {
            unproven.push(format!("{name}: the head does not contain its base"));
        }
        let green = repo.commit(&pull.head_sha).is_some_and(|head| {
            head.checks.iter().any(|run| {
                run.name == "test"
                    && run.status == CheckStatus::Completed
                    && run.conclusion == Some(CheckConclusion::Success)
                    && run
                        .completed_at
                        .zip(squash.date)
                        .is_some_and(|(c, m)| c <= m)
            })
        });
        if !green {
            unproven.push(format!(
                "{name}: the head's `test` was not green before the merge"
            ));
        }
    }
    unproven
}

/// Whether `ancestor` is `sha` or one of its ancestors.
fn descends(repo: &Repo, sha: &CommitSha, ancestor: &CommitSha) -> bool {
    let mut stack = vec![sha.clone()];
    let mut seen = BTreeSet::new();
    while let Some(next) = stack.pop() {
        if &next == ancestor {
            return true;
        }
        if seen.insert(next.clone())
            && let Some(commit) = repo.commit(&next)
        {
            stack.extend(commit.parents.iter().cloned());
        }
    }
    false
}

/// The worlds of the benchmark: the issue's 12 (4 agents × 3, all green) and 50 (10 agents
/// × 5, 5 failing, spread over the agents); the 50 twice, once with failing changes that
/// fail on their own heads and once with changes whose own heads passed against the older
/// `main` they branched from and fail only once merged.
fn worlds() -> Vec<(&'static str, DrainSpec)> {
    let fifty = DrainSpec {
        agents: 10,
        per_agent: 5,
        failing: spread(10, 5, 5),
        ..DrainSpec::default()
    };
    vec![
        ("4 agents × 3, all green", DrainSpec::default()),
        ("10 agents × 5, 5 fail CI on their heads", fifty.clone()),
        (
            "10 agents × 5, 5 pass alone, fail merged",
            DrainSpec {
                failing_passes_alone: true,
                ..fifty
            },
        ),
    ]
}

/// The runs: each world in today's mode, in queue mode (`batch_max` when given, else
/// the default) and in GitHub-queue mode (GitHub's default settings; `mp-gate` required
/// on merge groups when `mp_gate`), CI 10 minutes, a tick every 5.
fn runs(
    skip_direct_large: bool,
    batch_max: Option<u32>,
    mp_gate: bool,
) -> Vec<(&'static str, &'static str, Run)> {
    let mut runs = Vec::new();
    for (name, spec) in worlds() {
        for queue in [false, true] {
            if !queue && skip_direct_large && spec.pulls() > 12 {
                continue;
            }
            let run = Run {
                spec: DrainSpec {
                    queue,
                    ..spec.clone()
                },
                every: 5,
                max_ticks: 400,
            };
            let run = Run {
                spec: DrainSpec {
                    batch_max: batch_max.filter(|_| queue),
                    ..run.spec
                },
                ..run
            };
            runs.push((name, if queue { "queue" } else { "direct" }, run));
        }
        runs.push((
            name,
            "github-queue",
            Run {
                spec: DrainSpec {
                    github_queue: true,
                    mp_gate_check: mp_gate,
                    ..spec.clone()
                },
                every: 5,
                max_ticks: 400,
            },
        ));
    }
    runs
}

const USAGE: &str = "bench drain [--skip-direct-50] [--batch-max N] [--mp-gate]: --skip-direct-50 leaves out today's mode on the 50-pull-request worlds; --batch-max sets the queue's batch_max (default: the configuration's default); --mp-gate makes GitHub's merge queue also require mp's `mp-gate` check on merge groups";

/// Runs every drain and prints the table; fails when a run's proof fails or a good pull
/// request is left unmerged.
pub fn run(args: &[&str]) -> anyhow::Result<()> {
    let mut skip = false;
    let mut batch_max = None;
    let mut mp_gate = false;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match *arg {
            "--skip-direct-50" => skip = true,
            "--mp-gate" => mp_gate = true,
            "--batch-max" => {
                let value = rest.next().context(USAGE)?;
                batch_max = Some(
                    value
                        .parse::<u32>()
                        .with_context(|| format!("--batch-max {value}: {USAGE}"))?,
                );
            }
            other => bail!("unexpected argument {other:?}; {USAGE}"),
        }
    }
    let mut table = String::from(
        "| world | mode | merged / good | ticks | minutes to last merge | CI runs (heads + builds) | update-branch | comments | API calls | wall |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let mut notes = String::new();
    let mut failed = Vec::new();
    for (world, mode, run) in runs(skip, batch_max, mp_gate) {
        let began = Instant::now();
        let d = drain(&run)?;
        let wall = began.elapsed();
        let _ = writeln!(
            table,
            "| {world} | {mode} | {}/{} | {} | {} | {} ({} + {}) | {} | {} | {} | {:.1} s |",
            d.merged,
            d.good,
            d.ticks,
            d.minutes,
            d.ci_runs,
            d.ci_runs_heads,
            d.ci_runs - d.ci_runs_heads,
            d.updates,
            d.comments_created,
            d.api_calls,
            wall.as_secs_f64()
        );
        let what = if run.spec.queue {
            "moves of main, each to a staging commit mp pushed whose `test` passed before"
        } else if run.spec.github_queue {
            "moves of main, each a merge-queue landing of merge-group heads whose required checks passed before"
        } else {
            "merges, each of a head whose `test` passed on the main it landed on"
        };
        let _ = writeln!(notes, "\n{world}, {mode}:");
        if d.unproven.is_empty() {
            let _ = writeln!(notes, "- proof: {} {what}", d.proven);
        } else {
            failed.push(format!("{world}, {mode}: {}", d.unproven.join("; ")));
            let _ = writeln!(notes, "- proof FAILED: {}", d.unproven.join("; "));
        }
        let top: Vec<String> = d
            .calls_by_route
            .iter()
            .take(6)
            .map(|(route, n)| format!("{n} {route}"))
            .collect();
        let _ = writeln!(notes, "- API calls, most first: {}", top.join(", "));
        for failing in &d.failing {
            let _ = writeln!(notes, "- not merged: {failing}");
        }
        if d.merged < d.good {
            failed.push(format!(
                "{world}, {mode}: {} of {} good pull requests merged",
                d.merged, d.good
            ));
        }
    }
    #[allow(clippy::print_stdout)]
    {
        print!("{table}{notes}");
    }
    if !failed.is_empty() {
        bail!("{}", failed.join("\n"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The issue's drain: every pull request merges with no human action, each on a head
    /// green against the `main` it lands on, in at most one CI round per merge plus one.
    #[test]
    fn the_drain_merges_everything_one_ci_round_per_merge() {
        let result = drain(&Run {
            spec: DrainSpec::default(),
            every: 5,
            max_ticks: 60,
        })
        .expect("the drain runs");
        assert_eq!((result.merged, result.pulls), (12, 12), "{result:?}");
        assert!(result.unproven.is_empty(), "{result:?}");
        assert!(result.ci_rounds <= 13, "{result:?}");
        // One receipt when the owner's label is first seen, one when the merge lands on a
        // carried-over head: never one per update.
        assert_eq!(result.comments_created, 12 + 11, "{result:?}");
    }

    /// A pull request whose CI fails stays out; the others still merge, and no merged head
    /// is unproven.
    #[test]
    fn failing_pull_requests_do_not_hold_the_others_up() {
        let result = drain(&Run {
            spec: DrainSpec {
                failing: vec![1, 6],
                ..DrainSpec::default()
            },
            every: 5,
            max_ticks: 60,
        })
        .expect("the drain runs");
        assert_eq!(
            (result.merged, result.pulls - result.merged),
            (10, 2),
            "{result:?}"
        );
        assert_eq!(result.failing.len(), 2, "{result:?}");
        assert!(result.unproven.is_empty(), "{result:?}");
    }

    /// Queue mode on the issue's 12: everything lands in batches (one build of up to 16),
    /// each move of `main` to a staging commit whose `test` passed first, in far fewer CI
    /// runs and minutes than today's mode.
    #[test]
    fn the_queue_drains_the_twelve_in_batches_of_tested_commits() {
        let result = drain(&Run {
            spec: DrainSpec {
                queue: true,
                ..DrainSpec::default()
            },
            every: 5,
            max_ticks: 60,
        })
        .expect("the drain runs");
        assert_eq!((result.merged, result.pulls), (12, 12), "{result:?}");
        assert!(
            result.unproven.is_empty() && result.proven >= 1,
            "{result:?}"
        );
        assert!(result.minutes <= 20, "{result:?}");
        assert_eq!(result.updates, 0, "{result:?}");
        assert!(result.ci_runs <= 12 + 3, "{result:?}");
    }

    /// GitHub-queue mode on the issue's 12: mp enqueues every approved head, GitHub's
    /// queue tests five merge groups at a time and lands them, and every move of `main` is
    /// a landing of group heads whose `test` passed first; mp updates and merges nothing.
    #[test]
    fn github_s_queue_drains_the_twelve_through_tested_merge_groups() {
        let result = drain(&Run {
            spec: DrainSpec {
                github_queue: true,
                ..DrainSpec::default()
            },
            every: 5,
            max_ticks: 60,
        })
        .expect("the drain runs");
        assert_eq!((result.merged, result.pulls), (12, 12), "{result:?}");
        assert!(
            result.unproven.is_empty() && result.proven >= 3,
            "{result:?}"
        );
        assert_eq!(result.updates, 0, "{result:?}");
        // 12 heads and 12 merge groups, each tested once.
        assert_eq!(result.ci_runs, 24, "{result:?}");
        // The supervisor reads every landing (up to five groups in one move of `main`) as
        // through the gate: no incident, only each Quadrant B pull request's audit issue.
        assert_eq!(result.issues, result.merged, "{result:?}");
        assert!(result.minutes <= 40, "{result:?}");
    }

    /// A failing change leaves GitHub's queue when its merge group fails; the others land.
    #[test]
    fn github_s_queue_takes_out_a_change_that_fails_only_merged() {
        let result = drain(&Run {
            spec: DrainSpec {
                github_queue: true,
                failing: vec![4],
                failing_passes_alone: true,
                ..DrainSpec::default()
            },
            every: 5,
            max_ticks: 60,
        })
        .expect("the drain runs");
        assert_eq!((result.merged, result.good), (11, 11), "{result:?}");
        assert!(result.unproven.is_empty(), "{result:?}");
        assert_eq!(result.failing.len(), 1, "{result:?}");
        assert!(
            result.failing[0].starts_with(
                "#5: Quadrant B: not enqueued again: GitHub's merge queue removed head"
            ),
            "{result:?}"
        );
    }
}
