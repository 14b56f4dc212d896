//! `cargo xtask bench api [--repos N] [--prs M] [--seed S]`: REST calls per tick on the
//! standard world (6 repositories x 5 open pull requests, idle `main`), through the REST
//! client against the loopback GitHub server, split by endpoint.
//!
//! Four ticks run in a row, each with a new client that inherits the previous one's ETag
//! cache (as cron ticks sharing `--http-cache` do): `cold` (empty cache), then three more
//! over the same world, which settles as the bot's own writes stop. A request answered
//! `304 Not Modified` does not spend the primary rate limit; the table shows requests and,
//! in brackets, how many of them spent the limit.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use anyhow::{Context as _, bail};
use mp_core::config::{self, ConfigFiles};
use mp_core::port::{AuditError, AuditLog, AuditRecord};
use mp_core::tick::{self, TickOptions};
use mp_github::rest::{Credentials, EtagCache, RestConfig, RestGitHub, RevertMode, Secret};
use mp_github::world::synthetic_world;
use mp_github::{FaultScript, LoopbackServer, World};

/// The standard world of the API budget (bot.md's reference figures use it).
const STANDARD_REPOS: usize = 6;
const STANDARD_PRS: usize = 5;

struct NoAudit;

#[async_trait::async_trait]
impl AuditLog for NoAudit {
    async fn append(&self, _record: &AuditRecord) -> Result<(), AuditError> {
        Ok(())
    }
}

/// Requests and 304 answers per route, for one tick.
type Counts = BTreeMap<String, (u64, u64)>;

fn parse(args: &[&str]) -> anyhow::Result<(usize, usize, u64)> {
    let (mut repos, mut prs, mut seed) = (STANDARD_REPOS, STANDARD_PRS, 1);
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let Some(value) = rest.next() else {
            bail!("{flag} needs a value");
        };
        let number: u64 = value
            .parse()
            .with_context(|| format!("{flag} expects a whole number, got {value:?}"))?;
        match *flag {
            "--repos" => repos = usize::try_from(number)?,
            "--prs" => prs = usize::try_from(number)?,
            "--seed" => seed = number,
            other => bail!("unknown option {other:?}; expected --repos, --prs or --seed"),
        }
    }
    Ok((repos, prs, seed))
}

/// Runs the benchmark and prints the table.
pub fn run(args: &[&str]) -> anyhow::Result<()> {
    let (repos, prs, seed) = parse(args)?;
    let world = synthetic_world(repos, prs, seed);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let ticks = runtime.block_on(three_ticks(world))?;
    let table = render(repos, prs, &ticks);
    #[allow(clippy::print_stdout)]
    {
        print!("{table}");
    }
    Ok(())
}

async fn three_ticks(world: World) -> anyhow::Result<Vec<(&'static str, Counts)>> {
    let files: ConfigFiles = world
        .config
        .iter()
        .map(|(n, t)| (n.clone(), t.clone()))
        .collect();
    let config = config::load(&files)
        .config
        .context("the synthetic configuration is invalid")?;
    let mut options = TickOptions::from_config(&config);
    if let Some(key) = world.receipt_key.clone() {
        options = options.with_receipt_key(key);
    }
    let now = world.now;
    let server = LoopbackServer::start(world, FaultScript::default()).await?;
    let mut cache = EtagCache::default();
    let mut before = counts(&server);
    let mut ticks = Vec::new();
    for name in ["cold", "2nd", "3rd", "4th"] {
        let mut rest = RestConfig::new(
            server.base_url(),
            Credentials::Token(Secret::new("bench-token")),
        );
        rest.revert = RevertMode::LoopbackExtension;
        let client = RestGitHub::new(rest)?.with_cache(cache);
        tick::run_tick(&client, &NoAudit, &config, &options, now)
            .await
            .map_err(|e| anyhow::anyhow!("the {name} tick failed: {e}"))?;
        cache = client.cache_snapshot();
        let after = counts(&server);
        ticks.push((name, difference(&before, &after)));
        before = after;
    }
    server.shutdown().await;
    Ok(ticks)
}

fn counts(server: &LoopbackServer) -> Counts {
    server
        .requests()
        .into_iter()
        .map(|(route, count)| (route, (count.requests, count.not_modified)))
        .collect()
}

fn difference(before: &Counts, after: &Counts) -> Counts {
    after
        .iter()
        .map(|(route, (requests, not_modified))| {
            let (r0, n0) = before.get(route).copied().unwrap_or((0, 0));
            (route.clone(), (requests - r0, not_modified - n0))
        })
        .filter(|(_, (requests, _))| *requests > 0)
        .collect()
}

fn render(repos: usize, prs: usize, ticks: &[(&str, Counts)]) -> String {
    let mut routes: Vec<&String> = ticks.iter().flat_map(|(_, c)| c.keys()).collect();
    routes.sort();
    routes.dedup();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "REST calls per tick: {repos} repositories x {prs} open pull requests \
         (requests [spending the rate limit])\n"
    );
    let header: Vec<&str> = ticks.iter().map(|(name, _)| *name).collect();
    let _ = writeln!(out, "| endpoint | {} |", header.join(" | "));
    let _ = writeln!(out, "|---|{}", "---:|".repeat(ticks.len()));
    for route in routes {
        let cells: Vec<String> = ticks
            .iter()
            .map(|(_, counts)| {
                let (requests, not_modified) = counts.get(route).copied().unwrap_or((0, 0));
                format!("{requests} [{}]", requests - not_modified)
            })
            .collect();
        let _ = writeln!(out, "| `{route}` | {} |", cells.join(" | "));
    }
    let totals: Vec<String> = ticks
        .iter()
        .map(|(_, counts)| {
            let requests: u64 = counts.values().map(|(r, _)| r).sum();
            let spent: u64 = counts.values().map(|(r, n)| r - n).sum();
            format!("**{requests} [{spent}]**")
        })
        .collect();
    let _ = writeln!(out, "| **total** | {} |", totals.join(" | "));
    out
}
