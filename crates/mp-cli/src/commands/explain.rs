//! `mp explain --world FILE OWNER/REPO#N`: every gate condition and classifier vote for one
//! pull request, without writing anything.

use std::io::Write;

use anyhow::{Context, anyhow};
use mp_core::gate::Outcome;
use mp_core::port::GitHub;
use mp_core::tick::{self, TickOptions, TickSetup};
use mp_core::{PrNumber, RepoName};
use mp_github_fake::MemoryGitHub;
use serde_json::json;

use crate::Exit;
use crate::cli::{ExplainArgs, Format};
use crate::commands::tick::result_json;
use crate::world;

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

pub fn run(args: &ExplainArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let (repo, number) = parse_pr(&args.pr)?;
    let (loaded, now) = world::load(&args.world, args.now.as_deref())?;
    let mut options = TickOptions::from_config(&loaded.config);
    if let Some(key) = loaded.world.receipt_key.clone() {
        options = options.with_receipt_key(key);
    }
    options = options.with_skills(crate::skills_load::from_world(
        &loaded.config,
        &loaded.world.config,
        &crate::skills_load::SkillCalls::default(),
    )?);
    let github = MemoryGitHub::new(loaded.world);
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    let evaluation = runtime.block_on(async {
        let bot = github.bot_login().await?;
        // The gated branch of each repository, as the tick resolves it.
        let (branches, _) = tick::resolve_default_branches(&github, &loaded.config, &options).await;
        let options = options.clone().with_default_branches(branches);
        let setup = TickSetup::new(&loaded.config, &options, bot)?;
        let pull = github.pull(&repo, number).await?;
        let evaluation = tick::evaluate_pr(&github, &setup, &pull, now).await?;
        anyhow::Ok(evaluation)
    })?;
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
            crate::output::json(
                out,
                &json!({
                    "pr": evaluation.pr.reference(),
                    "head_sha": evaluation.pr.head_sha.as_str(),
                    "route": route.code(),
                    "gate": gate,
                    "quadrant": evaluation.verdict.quadrant.as_str(),
                    "votes": votes,
                    "skill_warnings": skill_warnings,
                    "receipts": receipts,
                }),
            )?;
        }
    }
    Ok(Exit::Ok)
}
