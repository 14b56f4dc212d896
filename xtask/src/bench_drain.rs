//! `cargo xtask bench drain`: how a burst of ready pull requests from several agents drains
//! into `main` with no human action, on a simulated clock.
//!
//! Each run builds mp-github-fake's drain world (one repository, `agents × per-agent` ready pull
//! requests on independent files, CI simulated by the world's `ci:`), then ticks the real
//! tick over the in-memory GitHub every `every` simulated minutes until every pull request
//! is merged or closed, or the tick budget runs out. Nothing but mp's writes and the
//! simulated CI changes the world between ticks: there is no human action to count.
//!
//! Reported per run: ticks and simulated minutes until the last merge, merges per hour,
//! CI rounds (distinct instants at which runs started on pull-request heads) and CI runs,
//! comments and issues written, branch updates, and API calls. Every merge is checked: the
//! squash commit's parent is the base the pull request was last brought up to, the merged
//! head descends from it, and the head's required check completed green before the merge.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use anyhow::{Context as _, bail};
use mp_core::config::{self, ConfigFiles};
use mp_core::context::{CheckConclusion, CheckStatus};
use mp_core::ids::{CommitSha, Timestamp};
use mp_core::port::{AuditError, AuditLog, AuditRecord, Write};
use mp_github_fake::MemoryGitHub;
use mp_github_fake::world::drain::{DrainSpec, drain_world};
use mp_github_fake::world::{Repo, World};
use mp_tick::{self as tick, TickOptions};

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
    /// The world's shape.
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
    /// Pull requests merged.
    pub merged: usize,
    /// Pull requests never merged (their CI fails, by design of the run).
    pub not_merged: usize,
    /// Ticks until the last merge (1 = the first tick).
    pub ticks: u32,
    /// Simulated minutes from the first tick to the last merge.
    pub minutes: i64,
    /// Distinct instants at which CI runs started on pull-request heads.
    pub ci_rounds: usize,
    /// CI runs on pull-request heads.
    pub ci_runs: usize,
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
    /// Merges whose head was not proven green against the `main` it merged onto.
    pub unproven_merges: Vec<String>,
}

impl Drain {
    /// Merges per hour of simulated time (the first merge at minute 0 counts).
    pub fn merges_per_hour(&self) -> f64 {
        if self.minutes == 0 {
            return self.merged as f64;
        }
        self.merged as f64 * 60.0 / self.minutes as f64
    }
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
    let github = MemoryGitHub::new(world);
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    let mut last_merge_tick = 0;
    let mut last_merge_at = start;
    for index in 0..run.max_ticks {
        let now = start.plus_seconds(i64::from(index) * i64::from(run.every) * 60);
        github.set_now(now);
        let before = github.actions().len();
        runtime
            .block_on(tick::run_tick(&github, &NoAudit, &config, &options, now))
            .map_err(|e| anyhow::anyhow!("tick {} failed closed: {e}", index + 1))?;
        let merged_now = github.actions()[before..]
            .iter()
            .any(|a| matches!(a, Write::MergePull { .. }));
        if merged_now {
            last_merge_tick = index + 1;
            last_merge_at = now;
        }
        let open = github.read(|w| {
            w.repos[0]
                .pulls
                .iter()
                .filter(|p| !p.merged && p.state == mp_core::context::PrState::Open)
                .count()
        });
        if open <= run.spec.failing.len() && !merged_now {
            break;
        }
    }
    let world = github.world();
    let actions = github.actions();
    let count = |pick: fn(&Write) -> bool| actions.iter().filter(|a| pick(a)).count();
    let merged = count(|a| matches!(a, Write::MergePull { .. }));
    let (ci_rounds, ci_runs) = ci_activity(&world);
    Ok(Drain {
        pulls,
        merged,
        not_merged: pulls - merged,
        ticks: last_merge_tick,
        minutes: last_merge_at.seconds_since(start) / 60,
        ci_rounds,
        ci_runs,
        comments_created: count(|a| matches!(a, Write::CreateComment { .. })),
        comments_edited: count(|a| matches!(a, Write::UpdateComment { .. })),
        issues: count(|a| matches!(a, Write::CreateIssue { .. })),
        updates: count(|a| matches!(a, Write::UpdateBranch { .. })),
        api_calls: github.total_calls(),
        unproven_merges: unproven_merges(&world),
    })
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

/// The runs of the benchmark: the issue's drain, a slower CI that misses the tick grid,
/// and the drain with two pull requests whose CI fails.
fn runs() -> Vec<(&'static str, Run)> {
    let base = Run {
        spec: DrainSpec::default(),
        every: 5,
        max_ticks: 200,
    };
    let slow = Run {
        spec: DrainSpec {
            ci_minutes: 12,
            ..DrainSpec::default()
        },
        ..base.clone()
    };
    let failing = Run {
        spec: DrainSpec {
            failing: vec![1, 6],
            ..DrainSpec::default()
        },
        ..base.clone()
    };
    let minute = Run {
        every: 1,
        ..base.clone()
    };
    vec![
        ("4 agents × 3, CI 10 min, tick 5 min", base),
        ("same, tick every minute", minute),
        ("same, CI 12 min", slow),
        ("same, 2 of 12 fail CI", failing),
    ]
}

/// Runs every drain and prints the table.
pub fn run(args: &[&str]) -> anyhow::Result<()> {
    if let Some(extra) = args.first() {
        bail!("unexpected argument {extra:?}; `bench drain` takes none");
    }
    let mut table = String::from(
        "| run | merged | ticks | minutes | merges/hour | CI rounds | CI runs | comments (new/edited) | issues | updates | API calls |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for (name, run) in runs() {
        let d = drain(&run)?;
        if !d.unproven_merges.is_empty() {
            bail!("{name}: unproven merges: {:?}", d.unproven_merges);
        }
        let _ = writeln!(
            table,
            "| {name} | {}/{} | {} | {} | {:.1} | {} | {} | {}/{} | {} | {} | {} |",
            d.merged,
            d.pulls,
            d.ticks,
            d.minutes,
            d.merges_per_hour(),
            d.ci_rounds,
            d.ci_runs,
            d.comments_created,
            d.comments_edited,
            d.issues,
            d.updates,
            d.api_calls
        );
    }
    #[allow(clippy::print_stdout)]
    {
        print!("{table}");
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
        assert!(result.unproven_merges.is_empty(), "{result:?}");
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
        assert_eq!((result.merged, result.not_merged), (10, 2), "{result:?}");
        assert!(result.unproven_merges.is_empty(), "{result:?}");
    }
}
