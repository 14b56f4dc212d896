//! `mp explain --world FILE OWNER/REPO#N` and `mp explain --config DIR OWNER/REPO#N`: every
//! gate condition and classifier vote for one pull request, over a world file or live over
//! GitHub's API, without writing anything; in a repository in queue mode, also where it
//! stands in the merge queue, in the words of the tick's outcome.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, anyhow};
use clap::Args;
use mp_core::config::RepoMergeMode;
use mp_core::gate::Outcome;
use mp_core::port::GitHubHistory;
use mp_core::route::Route;
use mp_core::{PrNumber, RepoName};
use mp_github_fake::MemoryGitHub;
use mp_tick::DryRun;
use mp_tick::{self as tick, MergeMode, QueueStanding, TickOptions, TickSetup};
use serde_json::json;

use crate::Exit;
use crate::cli::Format;
use crate::commands::tick::result_json;
use crate::live::{
    live_credentials, live_options, live_rest_config, load_live_config, rest_client,
};
use crate::skills_load::SkillCalls;
use crate::world;

/// Arguments of `mp explain`.
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("source").required(true).args(["world", "config"]))]
pub struct ExplainArgs {
    /// The world file (see docs/fixtures.md).
    #[arg(long, value_name = "FILE")]
    pub world: Option<PathBuf>,
    /// The configuration directory of a deployment: read the pull request live through
    /// GitHub's API (credentials and MP_RECEIPT_KEY from the environment, as `mp tick
    /// --config`). Read-only: every write the evaluation would make is only planned.
    #[arg(long, value_name = "DIR")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub api: crate::cli::ApiUrl,
    /// The pull request, as OWNER/REPO#N.
    #[arg(value_name = "OWNER/REPO#N")]
    pub pr: String,
    /// Evaluate at this instant (RFC 3339) instead of the world's `now` (or, with --config,
    /// the clock's).
    #[arg(long, value_name = "TIME")]
    pub now: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

fn parse_pr(text: &str) -> anyhow::Result<(RepoName, PrNumber)> {
    let (repo, number) = text
        .rsplit_once('#')
        .ok_or_else(|| anyhow!("expected OWNER/REPO#N, got {text:?}"))?;
    let repo = RepoName::parse(repo)?;
    let number: u64 = number
        .parse()
        .with_context(|| format!("invalid pull request number {number:?}"))?;
    Ok((repo, PrNumber::new(number)))
}

fn mark(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Pass => "pass",
        Outcome::Fail => "FAIL",
        Outcome::Advisory => "warn",
    }
}

/// What `mp explain` says of one pull request.
struct Explained {
    evaluation: tick::PrEvaluation,
    /// In a repository in queue mode: where it stands (`Ok(None)`: not in the queue), or
    /// why that cannot be said. `None` in a direct repository.
    queue: Option<Result<Option<QueueStanding>, String>>,
}

/// The evaluation over a world file, with the options it ran with.
fn over_world(
    path: &std::path::Path,
    args: &ExplainArgs,
    repo: &RepoName,
    number: PrNumber,
) -> anyhow::Result<(Explained, TickOptions)> {
    let (loaded, now) = world::load(path, args.now.as_deref())?;
    let mut options = TickOptions::from_config(&loaded.config);
    if let Some(key) = loaded.world.receipt_key.clone() {
        options = options.with_receipt_key(key);
    }
    if let Some(previous) = loaded.world.previous_receipt_key.clone() {
        options = options.with_previous_receipt_key(previous);
    }
    options = options.with_skills(crate::skills_load::from_world(
        &loaded.config,
        &loaded.world.config,
        &crate::skills_load::SkillCalls::default(),
    )?);
    let github = MemoryGitHub::new(loaded.world);
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    let evaluation = runtime.block_on(evaluate(
        &github,
        &loaded.config,
        &options,
        repo,
        number,
        now,
    ))?;
    Ok((evaluation, options))
}

/// The evaluation live over GitHub's API, read-only: the client is wrapped in a dry run,
/// so a write the evaluation would make is only planned.
fn live(
    dir: &std::path::Path,
    args: &ExplainArgs,
    repo: &RepoName,
    number: PrNumber,
) -> anyhow::Result<(Explained, TickOptions)> {
    let (config, _warnings) = load_live_config(dir)?;
    let credentials = live_credentials()?;
    let options = live_options(&config, dir, None, &SkillCalls::default())?;
    let now = match &args.now {
        Some(text) => mp_core::Timestamp::parse(text)
            .with_context(|| format!("--now {text:?} is not an RFC 3339 time"))?,
        None => mp_core::Timestamp::from_unix_seconds(jiff::Timestamp::now().as_second())
            .context("reading the system clock")?,
    };
    let client = rest_client(live_rest_config(&args.api.url, &config, credentials), None)?;
    let read_only = DryRun::with_history(&client).at(now);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let evaluation =
        runtime.block_on(evaluate(&read_only, &config, &options, repo, number, now))?;
    Ok((evaluation, options))
}

/// The queue candidate `e` makes, as the tick makes it (the priority label's record read
/// when the label is on it): only a pull request whose route is to merge.
async fn queue_candidate(
    github: &dyn GitHubHistory,
    e: &tick::PrEvaluation,
    label: &str,
    now: mp_core::Timestamp,
) -> Option<mp_core::queue::Candidate> {
    if e.route() != Route::Mergeable || e.policy.merge_mode != RepoMergeMode::Queue {
        return None;
    }
    let read = tick::with_priority_record(github, &e.pr, label).await;
    Some(mp_core::queue::candidate(
        read.as_ref().unwrap_or(&e.pr),
        &e.policy.allowlist,
        label,
        now,
    ))
}

/// Evaluates `repo#number` over `github` as the tick would: the gated branch resolved, the
/// bot's identity read, then the pull request's gate, classifier and receipts; in a
/// repository in queue mode (merging enabled), every open pull request of the repository
/// is evaluated too, to order the queue as the tick does, and the queue's state is read.
async fn evaluate(
    github: &dyn GitHubHistory,
    config: &mp_core::config::Config,
    options: &TickOptions,
    repo: &RepoName,
    number: PrNumber,
    now: mp_core::Timestamp,
) -> anyhow::Result<Explained> {
    let bot = github.bot_login().await?;
    // The gated branch of each repository, as the tick resolves it.
    let (branches, _) = tick::resolve_default_branches(github, config, options).await;
    let (options, _) = options.clone().at(now)?;
    let options = options.with_default_branches(branches);
    let setup = TickSetup::new(config, &options, bot)?;
    let pull = github.pull(repo, number).await?;
    let evaluation = tick::evaluate_pr(github, &setup, &pull, now).await?;
    let merge = config.projects().merge_settings(repo);
    if evaluation.policy.merge_mode != RepoMergeMode::Queue
        || options.merge_mode == MergeMode::Observe
    {
        return Ok(Explained {
            evaluation,
            queue: None,
        });
    }
    // The queue's candidates, as the tick makes them: every open pull request whose route
    // is to merge (one that cannot be read is left out, as the tick skips it).
    let label = merge.priority_label();
    let mut candidates: Vec<_> = queue_candidate(github, &evaluation, label, now)
        .await
        .into_iter()
        .collect();
    for other in github.open_pulls(repo).await? {
        if other.number == number {
            continue;
        }
        if let Ok(other) = tick::evaluate_pr(github, &setup, &other, now).await {
            candidates.extend(queue_candidate(github, &other, label, now).await);
        }
    }
    let standing = tick::queue_standing(
        github,
        config,
        repo,
        number,
        &evaluation.pr.head_sha,
        candidates,
    )
    .await;
    Ok(Explained {
        evaluation,
        queue: Some(standing),
    })
}

pub fn run(args: &ExplainArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let (repo, number) = parse_pr(&args.pr)?;
    let (explained, options) = match (&args.world, &args.config) {
        (Some(path), _) => over_world(path, args, &repo, number)?,
        (None, Some(dir)) => live(dir, args, &repo, number)?,
        (None, None) => anyhow::bail!("give --world FILE or --config DIR"),
    };
    let Explained { evaluation, queue } = explained;
    let route = evaluation.route();
    match args.format {
        Format::Text => {
            writeln!(
                out,
                "{} at head {}",
                evaluation.pr.reference(),
                evaluation.pr.head_sha.short()
            )?;
            writeln!(out, "route: {}", route.code())?;
            if let Some(queue) = &queue {
                let line = match queue {
                    Ok(Some(standing)) => standing.detail.clone(),
                    Ok(None) => "not in the merge queue".to_owned(),
                    Err(reason) => format!("unknown: {reason}"),
                };
                writeln!(out, "merge queue: {line}")?;
            }
            writeln!(out)?;
            writeln!(out, "gate:")?;
            for result in &evaluation.gate.results {
                writeln!(out, "  {:<4} {result}", mark(result.outcome))?;
            }
            writeln!(out)?;
            writeln!(out, "classifier: Quadrant {}", evaluation.verdict.quadrant)?;
            for vote in &evaluation.verdict.votes {
                writeln!(out, "  {vote}")?;
            }
            if !evaluation.skill_failures.is_empty() || !options.skills.load_warnings.is_empty() {
                writeln!(out)?;
                writeln!(out, "skill warnings:")?;
                for warning in &options.skills.load_warnings {
                    writeln!(out, "  {warning}")?;
                }
                for failure in &evaluation.skill_failures {
                    writeln!(out, "  {failure}; counted as pass, no contribution")?;
                }
            }
            let plans: Vec<_> = evaluation.receipts_to_write().collect();
            if !plans.is_empty() {
                writeln!(out)?;
                writeln!(out, "receipts the tick would write first:")?;
                for plan in plans {
                    writeln!(out, "  {plan}")?;
                }
            }
        }
        Format::Json => {
            let votes: Vec<_> = evaluation
                .verdict
                .votes
                .iter()
                .map(|v| json!({"rule": v.rule.code(), "quadrant": v.quadrant.as_str(), "reasoning": v.reasoning}))
                .collect();
            let gate: Vec<_> = evaluation.gate.results.iter().map(result_json).collect();
            let skill_warnings: Vec<String> = options
                .skills
                .load_warnings
                .iter()
                .cloned()
                .chain(
                    evaluation
                        .skill_failures
                        .iter()
                        .map(|f| format!("{f}; counted as pass, no contribution")),
                )
                .collect();
            let receipts: Vec<_> = evaluation
                .receipts_to_write()
                .map(|plan| {
                    json!({
                        "label": plan.label.as_str(),
                        "head_sha": plan.head.as_str(),
                        "decision": plan.code(),
                        "line": plan.to_string(),
                    })
                })
                .collect();
            let mut doc = json!({
                "pr": evaluation.pr.reference(),
                "head_sha": evaluation.pr.head_sha.as_str(),
                "route": route.code(),
                "gate": gate,
                "quadrant": evaluation.verdict.quadrant.as_str(),
                "votes": votes,
                "skill_warnings": skill_warnings,
                "receipts": receipts,
            });
            if let Some(queue) = &queue {
                doc["queue"] = queue_json(queue);
            }
            crate::output::json(out, &doc)?;
        }
    }
    Ok(Exit::Ok)
}

/// The `queue` member of `mp explain --format json` in a repository in queue mode: the
/// standing's code and line, the position and length when queued, the running build that
/// holds it; `null` when the pull request is not in the queue; `error` when the queue's
/// state cannot be read.
fn queue_json(queue: &Result<Option<QueueStanding>, String>) -> serde_json::Value {
    match queue {
        Ok(None) => serde_json::Value::Null,
        Err(reason) => json!({ "error": reason }),
        Ok(Some(standing)) => json!({
            "code": standing.code,
            "detail": standing.detail,
            "position": standing.position.map(|(position, _)| position),
            "of": standing.position.map(|(_, total)| total),
            "build": standing.build.as_ref().map(|(id, staging)| json!({
                "id": id,
                "staging_commit": staging.as_str(),
            })),
        }),
    }
}
