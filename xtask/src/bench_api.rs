//! `cargo xtask bench api [--repos N] [--prs M] [--seed S] [--delay-ms D]`: REST calls per
//! tick on the standard world (6 repositories x 5 open pull requests, idle `main`), through
//! the REST client against the loopback GitHub server, split by endpoint, and the wall time
//! of each tick for each way of reading.
//!
//! Four ticks run in a row, each with a new client that inherits the previous one's ETag
//! cache (as cron ticks sharing `--http-cache` do): `cold` (empty cache), then three more
//! over the same world, which settles as the bot's own writes stop. A request answered
//! `304 Not Modified` does not spend the primary rate limit; the table shows requests and,
//! in brackets, how many of them spent the limit.
//!
//! Each way of reading (serial REST, REST with the default reads in flight, and the default:
//! GraphQL with reads in flight) runs on a fresh server over the same world; `--delay-ms`
//! adds that much to every answer (the loopback `delay` fault), standing in for GitHub's
//! latency, so the wall times say what parallel and batched reads save. The GraphQL row also
//! gives the GraphQL points each tick spent (a budget of its own, 5,000 an hour).
//!
//! `--live` runs ticks as `mp tick` runs them in production instead: the client paced at
//! GitHub's points budget and reading over GraphQL, the server and the tick on the system
//! clock, the tick's three-minute lease renewed by that clock and its pull-request path's
//! three-minute time budget (decisions/0071). Ticks follow one another until one leaves no
//! repository for the next (at most `--ticks K`, default 8); each row gives the tick's
//! wall time, requests, points, what it did and what it left.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use mp_core::config::{self, ConfigFiles};
use mp_core::port::{AuditError, AuditLog, AuditRecord};
use mp_github::rest::{
    Credentials, EtagCache, ReadPath, RestConfig, RestGitHub, RevertMode, Secret,
};
use mp_github_fake::world::synthetic_world;
use mp_github_fake::{Fault, FaultRule, FaultScript, LoopbackServer, ServerClock, World};
use mp_tick::lease::{LEASE_SECONDS, LeaseTerms};
use mp_tick::{self as tick, ReadConcurrency, TickOptions};

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

/// The benchmark's options.
struct Options {
    repos: usize,
    prs: usize,
    seed: u64,
    delay_ms: u64,
    /// `--live`: ticks as shipped, until one leaves nothing for the next.
    live: bool,
    /// `--ticks K`: at most this many live ticks.
    max_ticks: usize,
}

/// How long `mp tick`'s pull-request path runs before it leaves the repositories not yet
/// started for the next tick (mp-cli's `TICK_PR_PATH_BUDGET`, decisions/0071).
const LIVE_PR_PATH_BUDGET: Duration = Duration::from_secs(180);

/// One way of reading: its name, the reads in flight and where pull requests are read.
const MODES: &[(&str, usize, ReadPath)] = &[
    ("serial REST", 1, ReadPath::Rest),
    ("parallel REST", 8, ReadPath::Rest),
    ("parallel GraphQL", 8, ReadPath::Graphql),
];

/// One tick's requests, GraphQL points and wall time.
struct Tick {
    name: &'static str,
    counts: Counts,
    graphql_points: u32,
    wall: Duration,
}

fn parse(args: &[&str]) -> anyhow::Result<Options> {
    let (mut repos, mut prs, mut seed, mut delay_ms) = (STANDARD_REPOS, STANDARD_PRS, 1, 0);
    let (mut live, mut max_ticks) = (false, 8);
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        if *flag == "--live" {
            live = true;
            continue;
        }
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
            "--delay-ms" => delay_ms = number,
            "--ticks" => max_ticks = usize::try_from(number)?,
            other => {
                bail!(
                    "unknown option {other:?}; expected --repos, --prs, --seed, --delay-ms, --live or --ticks"
                )
            }
        }
    }
    Ok(Options {
        repos,
        prs,
        seed,
        delay_ms,
        live,
        max_ticks,
    })
}

/// Runs the benchmark and prints the table.
pub fn run(args: &[&str]) -> anyhow::Result<()> {
    let options = parse(args)?;
    let world = synthetic_world(options.repos, options.prs, options.seed);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    if options.live {
        let ticks = runtime.block_on(live_ticks(world, &options))?;
        #[allow(clippy::print_stdout)]
        {
            print!("{}", render_live(&options, &ticks));
            let names = [
                "1st", "2nd", "3rd", "4th", "5th", "6th", "7th", "8th", "9th", "10th",
            ];
            let by_endpoint: Vec<Tick> = ticks
                .iter()
                .zip(names.iter().chain(std::iter::repeat(&"later")))
                .map(|(tick, name)| Tick {
                    name,
                    counts: tick.counts.clone(),
                    graphql_points: tick.graphql_points,
                    wall: tick.wall,
                })
                .collect();
            print!("\n{}", render(&options, "live ticks", &by_endpoint));
        }
        return Ok(());
    }
    let mut modes = Vec::new();
    for &(name, reads, path) in MODES {
        let concurrency =
            ReadConcurrency::new(reads).context("a mode's reads in flight are out of range")?;
        let ticks = runtime.block_on(four_ticks(
            world.clone(),
            concurrency,
            path,
            options.delay_ms,
        ))?;
        modes.push((name, ticks));
    }
    let mut table = String::new();
    for (name, ticks) in modes.iter().skip(1) {
        table.push_str(&render(&options, name, ticks));
        table.push('\n');
    }
    table.push_str(&render_wall(&options, &modes));
    #[allow(clippy::print_stdout)]
    {
        print!("{table}");
    }
    Ok(())
}

async fn four_ticks(
    world: World,
    concurrency: ReadConcurrency,
    path: ReadPath,
    delay_ms: u64,
) -> anyhow::Result<Vec<Tick>> {
    let files: ConfigFiles = world
        .config
        .iter()
        .map(|(n, t)| (n.clone(), t.clone()))
        .collect();
    let config = config::load(&files)
        .config
        .context("the synthetic configuration is invalid")?;
    let mut options = TickOptions::from_config(&config).with_read_concurrency(concurrency);
    if let Some(key) = world.receipt_key.clone() {
        options = options.with_receipt_key(key);
    }
    let now = world.now;
    let server = LoopbackServer::start(world, delay_faults(delay_ms)).await?;
    let mut cache = EtagCache::default();
    let mut before = counts(&server);
    let mut ticks = Vec::new();
    for name in ["cold", "2nd", "3rd", "4th"] {
        let mut rest = RestConfig::new(
            server.base_url(),
            Credentials::Token(Secret::new("bench-token")),
        );
        rest.revert = RevertMode::LoopbackExtension;
        // Latency only: the points-per-minute floor is computed from the counts instead.
        rest.points_per_minute = None;
        rest.reads = path;
        let graphql_before = server.graphql_remaining();
        let client = RestGitHub::new(rest)?.with_cache(cache);
        let started = Instant::now();
        tick::run_tick(&client, &NoAudit, &config, &options, now)
            .await
            .map_err(|e| anyhow::anyhow!("the {name} tick failed: {e}"))?;
        let wall = started.elapsed();
        cache = client.cache_snapshot();
        let after = counts(&server);
        ticks.push(Tick {
            name,
            counts: difference(&before, &after),
            graphql_points: graphql_before.saturating_sub(server.graphql_remaining()),
            wall,
        });
        before = after;
    }
    server.shutdown().await;
    Ok(ticks)
}

/// One live tick: what the server counted, how long it took and what the tick reported.
struct LiveTick {
    counts: Counts,
    graphql_points: u32,
    wall: Duration,
    /// The tick's own report, or why it failed.
    report: Result<tick::FullTickReport, String>,
}

impl LiveTick {
    /// What the tick left for the next one: the repositories its pull-request path did not
    /// start, from its warning.
    fn left(&self) -> Option<&str> {
        let report = self.report.as_ref().ok()?;
        report
            .warnings
            .iter()
            .find_map(|w| w.split_once("repositories left for the next tick: "))
            .map(|(_, left)| left)
    }
}

/// The system clock in whole seconds, as `mp tick` reads it.
struct SystemClock;

impl mp_core::port::Clock for SystemClock {
    fn now(&self) -> mp_core::ids::Timestamp {
        system_now()
    }
}

fn system_now() -> mp_core::ids::Timestamp {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(0));
    mp_core::ids::Timestamp::from_unix_seconds(seconds)
        .unwrap_or_else(|_| unreachable!("the system clock is within Timestamp's range"))
}

/// Ticks as `mp tick` runs them against GitHub (see the module's `--live`), one after the
/// other over one served world, each with a new client that inherits the previous one's
/// ETag cache, until one leaves no repository for the next or `max_ticks` ran.
async fn live_ticks(world: World, options: &Options) -> anyhow::Result<Vec<LiveTick>> {
    let files: ConfigFiles = world
        .config
        .iter()
        .map(|(n, t)| (n.clone(), t.clone()))
        .collect();
    let config = config::load(&files)
        .config
        .context("the synthetic configuration is invalid")?;
    let mut tick_options = TickOptions::from_config(&config)
        .with_lease_terms(LeaseTerms::new(LEASE_SECONDS))
        .with_lease_clock(std::sync::Arc::new(SystemClock))
        .with_pr_path_budget(LIVE_PR_PATH_BUDGET);
    if let Some(key) = world.receipt_key.clone() {
        tick_options = tick_options.with_receipt_key(key);
    }
    let server = LoopbackServer::bind_with_clock(
        world,
        delay_faults(options.delay_ms),
        std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
        ServerClock::Real,
    )
    .await?;
    let mut cache = EtagCache::default();
    let mut before = counts(&server);
    let mut ticks = Vec::new();
    for _ in 0..options.max_ticks {
        // As `mp tick` builds its client (mp-cli's `live_rest_config`): paced at GitHub's
        // points budget, reads as env.yml says (GraphQL by default).
        let mut rest = RestConfig::new(
            server.base_url(),
            Credentials::Token(Secret::new("bench-token")),
        );
        rest.revert = RevertMode::LoopbackExtension;
        rest.token_app_slug = Some(config.env().bot_app_slug().to_owned());
        rest.reads = match config.env().reads() {
            config::ReadSource::Rest => ReadPath::Rest,
            _ => ReadPath::Graphql,
        };
        let graphql_before = server.graphql_remaining();
        let client = RestGitHub::new(rest)?.with_cache(cache);
        let started = Instant::now();
        let report = tick::run_tick(&client, &NoAudit, &config, &tick_options, system_now())
            .await
            .map_err(|e| e.to_string());
        let wall = started.elapsed();
        cache = client.cache_snapshot();
        let after = counts(&server);
        let tick = LiveTick {
            counts: difference(&before, &after),
            graphql_points: graphql_before.saturating_sub(server.graphql_remaining()),
            wall,
            report,
        };
        before = after;
        let done = tick.report.is_err() || tick.left().is_none();
        #[allow(clippy::print_stderr)]
        {
            eprintln!(
                "tick {}: {:.1} s, {} requests",
                ticks.len() + 1,
                wall.as_secs_f64(),
                totals(&tick.counts).0
            );
        }
        ticks.push(tick);
        if done {
            break;
        }
    }
    server.shutdown().await;
    Ok(ticks)
}

/// A delay of `delay_ms` on every request, or no fault.
fn delay_faults(delay_ms: u64) -> FaultScript {
    if delay_ms == 0 {
        return FaultScript::default();
    }
    FaultScript {
        rules: vec![FaultRule {
            route: "*".to_owned(),
            call: 0,
            fault: Fault::Delay { millis: delay_ms },
        }],
    }
}

/// One row per live tick.
fn render_live(options: &Options, ticks: &[LiveTick]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Live ticks, {} repositories x {} open pull requests, paced as shipped, {} ms added to every answer\n",
        options.repos, options.prs, options.delay_ms
    );
    let _ = writeln!(
        out,
        "| tick | wall time | requests | of them writes | REST points | GraphQL points | merged | branches updated | receipts | repositories left |"
    );
    let _ = writeln!(out, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (index, tick) in ticks.iter().enumerate() {
        let requests = totals(&tick.counts).0;
        let writes: u64 = tick
            .counts
            .iter()
            .filter(|(route, _)| !route.starts_with("GET ") && route.as_str() != "POST /graphql")
            .map(|(_, (requests, _))| requests)
            .sum();
        let rest_points = points(&tick.counts)
            - tick
                .counts
                .get("POST /graphql")
                .map_or(0, |(requests, _)| *requests);
        let (merged, updated, receipts, left) = match &tick.report {
            Ok(report) => (
                report.metrics.merged.to_string(),
                report.metrics.race_rebased.to_string(),
                report.metrics.receipts_written.to_string(),
                tick.left().unwrap_or("0").to_owned(),
            ),
            Err(error) => (
                "-".to_owned(),
                "-".to_owned(),
                "-".to_owned(),
                format!("failed: {error}"),
            ),
        };
        let _ = writeln!(
            out,
            "| {} | {:.1} s | {requests} | {writes} | {rest_points} | {} | {merged} | {updated} | {receipts} | {left} |",
            index + 1,
            tick.wall.as_secs_f64(),
            tick.graphql_points
        );
    }
    out
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

fn render(options: &Options, mode: &str, ticks: &[Tick]) -> String {
    let (repos, prs) = (options.repos, options.prs);
    let mut routes: Vec<&String> = ticks.iter().flat_map(|t| t.counts.keys()).collect();
    routes.sort();
    routes.dedup();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Calls per tick, {mode}: {repos} repositories x {prs} open pull requests \
         (requests [spending the rate limit])\n"
    );
    let header: Vec<&str> = ticks.iter().map(|t| t.name).collect();
    let _ = writeln!(out, "| endpoint | {} |", header.join(" | "));
    let _ = writeln!(out, "|---|{}", "---:|".repeat(ticks.len()));
    for route in routes {
        let cells: Vec<String> = ticks
            .iter()
            .map(|tick| {
                let (requests, not_modified) = tick.counts.get(route).copied().unwrap_or((0, 0));
                format!("{requests} [{}]", requests - not_modified)
            })
            .collect();
        let _ = writeln!(out, "| `{route}` | {} |", cells.join(" | "));
    }
    let totals: Vec<String> = ticks
        .iter()
        .map(|tick| {
            let (requests, spent) = totals(&tick.counts);
            format!("**{requests} [{spent}]**")
        })
        .collect();
    let _ = writeln!(out, "| **total** | {} |", totals.join(" | "));
    out
}

/// Requests, and those that spent the primary rate limit.
fn totals(counts: &Counts) -> (u64, u64) {
    let requests: u64 = counts.values().map(|(r, _)| r).sum();
    let spent: u64 = counts.values().map(|(r, n)| r - n).sum();
    (requests, spent)
}

/// GitHub's secondary points of a tick: 1 per read (a GraphQL query is one), 5 per write.
fn points(counts: &Counts) -> u64 {
    counts
        .iter()
        .map(|(route, (requests, _))| {
            if route.starts_with("GET ") || route == "POST /graphql" {
                *requests
            } else {
                requests * 5
            }
        })
        .sum()
}

/// The least time GitHub's points-per-minute limit allows a tick of `points` under the
/// client's pacing (45 points at once, then 13.5 a second: 810 a minute, decisions/0034).
fn points_floor(points: u64) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let points = points as f64;
    ((points - 45.0) / 13.5).max(0.0)
}

/// Wall time and requests of every tick, one row per way of reading.
fn render_wall(options: &Options, modes: &[(&str, Vec<Tick>)]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nWall time per tick, {} ms added to every answer: seconds (requests; GraphQL points)\n",
        options.delay_ms
    );
    let Some((_, first)) = modes.first() else {
        return out;
    };
    let header: Vec<&str> = first.iter().map(|t| t.name).collect();
    let _ = writeln!(out, "| reads | {} |", header.join(" | "));
    let _ = writeln!(out, "|---|{}", "---:|".repeat(header.len()));
    for (mode, ticks) in modes {
        let cells: Vec<String> = ticks
            .iter()
            .map(|tick| {
                let requests = totals(&tick.counts).0;
                if tick.graphql_points == 0 {
                    format!("{:.2} ({requests})", tick.wall.as_secs_f64())
                } else {
                    format!(
                        "{:.2} ({requests}; {})",
                        tick.wall.as_secs_f64(),
                        tick.graphql_points
                    )
                }
            })
            .collect();
        let _ = writeln!(out, "| {mode} | {} |", cells.join(" | "));
    }
    for (mode, ticks) in modes {
        let cells: Vec<String> = ticks
            .iter()
            .map(|tick| {
                let points = points(&tick.counts);
                format!("{:.0} s ({points} points)", points_floor(points))
            })
            .collect();
        let _ = writeln!(
            out,
            "| {mode}: GitHub's floor at 900 points a minute, paced to 810 | {} |",
            cells.join(" | ")
        );
    }
    out
}

#[cfg(test)]
mod tests;
