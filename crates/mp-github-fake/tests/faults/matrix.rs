//! The fault matrix: every scenario under every fault kind, injected at several points of
//! the tick (early, middle and last request, and the first call of every write route the
//! clean run used). For each run:
//!
//! * no merge that the clean run did not make (a merge needs every fact read this tick);
//! * no watermark moved backwards (unless the clean run reset it too), and no incident lost:
//!   every incident clean ticks open is open after the faulted tick and clean ones;
//! * no comment or issue posted twice, over the faulted tick and the clean ticks after it,
//!   beyond what clean ticks post;
//! * the tick ends, either with a report or failing closed (exit 3), never a panic.
//!
//! Each scenario is one test that takes its clean baseline once and runs its faulted ticks
//! side by side; its row of the matrix (fault -> outcome counts) is written to
//! `target/tmp/fault-matrix/<scenario>.txt`. GraphQL faults hit the pull-request query of
//! the GraphQL read path: the tick falls back to REST or fails closed.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use mp_core::ids::{CommitSha, RepoName};
use mp_core::port::Write;
use mp_core::state::Layer;
use mp_github::rest::ReadPath;
use mp_github_fake::FaultScript;

use crate::harness::{
    CLIENT_TIMEOUT, PATIENT_TIMEOUT, Scenario, client_for, client_timed, is_ancestor, marks,
    merges, runtime, serve, tick_over, watermarks,
};

/// Each fault kind, as fault-script text after the route and call number.
const FAULTS: &[(&str, &str)] = &[
    ("500", "status 500"),
    ("502", "status 502"),
    ("403-secondary", "secondary-403 retry-after 0"),
    ("429", "429"),
    ("429-long", "429 retry-after 3600"),
    ("timeout", "delay 600"),
    ("truncated", "truncate"),
    ("malformed", "malformed"),
    ("dropped", "drop"),
    ("exhausted", "exhaust"),
];

/// Comments and issues by identity, counted.
fn posts(actions: &[Write]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for action in actions {
        let key = match action {
            Write::CreateComment {
                repo, number, body, ..
            } => format!("comment {repo}#{number}: {body}"),
            Write::CreateIssue { repo, issue, .. } => format!("issue {repo}: {}", issue.title),
            Write::CreatePull { .. } => action.log_line(),
            _ => continue,
        };
        *counts.entry(key).or_insert(0) += 1;
    }
    counts
}

/// What the clean run of a scenario did, to judge the faulted runs by.
struct Baseline {
    merges: Vec<(String, u64, String)>,
    /// Pull requests whose gate passed in the clean run but that lost the race to an
    /// earlier merge (`race-rebased`): with that merge failed, merging them is right.
    race_rebased: Vec<String>,
    /// Posts over the clean tick and the clean ticks after it.
    posts: BTreeMap<String, usize>,
    /// Requests of the clean tick.
    requests: u64,
    /// Write routes the clean tick used.
    write_routes: Vec<String>,
    /// Whether the clean tick listed a repository's pull requests (which the GraphQL read
    /// path reads with its query).
    lists_pulls: bool,
    /// The clean tick's final watermarks.
    marks: Vec<Mark>,
    /// The world after the clean tick.
    world: mp_github_fake::World,
}

/// One watermark.
type Mark = (RepoName, Layer, CommitSha);

async fn baseline(scenario: &Scenario) -> Baseline {
    let server = serve(scenario, FaultScript::default()).await;
    let client = client_for(&server);
    let clean = tick_over(&client, scenario).await;
    let race_rebased = clean
        .outcomes()
        .unwrap_or_default()
        .into_iter()
        .filter(|(_, action, _)| action == "race-rebased")
        .map(|(pr, _, _)| pr)
        .collect();
    let actions = server.memory().actions();
    let requests = server.total_requests();
    let routes = server.requests();
    let write_routes = routes
        .keys()
        .filter(|route| !route.starts_with("GET "))
        .cloned()
        .collect();
    let lists_pulls = routes.contains_key("GET /repos/{o}/{r}/pulls");
    let world = server.memory().world();
    let state = watermarks(server.memory(), scenario).await;
    let marks = state.map(|s| marks(&s, &world)).unwrap_or_default();
    let clean_world = world.clone();
    recover(&server, scenario).await;
    let posts = posts(&server.memory().actions());
    server.shutdown().await;
    Baseline {
        merges: merges(&actions),
        race_rebased,
        posts,
        requests,
        write_routes,
        lists_pulls,
        marks,
        world: clean_world,
    }
}

/// The injection points of one fault kind in one scenario.
fn points(base: &Baseline, fault: &str) -> Vec<String> {
    let last = base.requests.max(1);
    let mut calls = vec![1, last.div_ceil(2), last];
    calls.dedup();
    let mut lines: Vec<String> = calls.iter().map(|n| format!("* #{n} {fault}")).collect();
    lines.extend(
        base.write_routes
            .iter()
            .map(|route| format!("{route} #1 {fault}")),
    );
    lines
}

/// Clean ticks after the faulted one, until one writes nothing (at most three).
async fn recover(server: &mp_github_fake::LoopbackServer, scenario: &Scenario) {
    // Writes of work: every tick also takes and gives back its lease.
    let work = || {
        server
            .memory()
            .actions()
            .iter()
            .filter(|a| !a.log_line().contains(mp_tick::lease::LEASE_PATH))
            .count()
    };
    for _ in 0..3 {
        let before = work();
        let _ = tick_over(&client_for(server), scenario).await;
        if work() == before {
            break;
        }
    }
}

/// Issues the tick raises again when a first attempt failed: supervisor incidents and
/// decision-inbox questions.
fn is_recoverable_issue(post: &str) -> bool {
    post.strip_prefix("issue ")
        .and_then(|rest| rest.split_once(": "))
        .is_some_and(|(_, title)| title.starts_with('[') || title.starts_with("Decision pending"))
}

/// Why a watermark after a faulted tick is wrong, if it is: a watermark that moved must
/// move forwards (along `main`), unless the clean run also reset it (after a rewrite of
/// `main`). Whether it skipped a commit unscanned shows in the incidents: every incident
/// issue two clean ticks open must also be open after the faulted tick and a clean one.
fn watermark_problem(
    base: &Baseline,
    initial: &[Mark],
    world: &mp_github_fake::World,
    (repo, layer, sha): (&RepoName, Layer, &CommitSha),
) -> Option<String> {
    let before = initial
        .iter()
        .find(|(r, l, _)| r == repo && *l == layer)
        .map(|(_, _, s)| s)?;
    if before == sha || is_ancestor(world, repo, before, sha) {
        return None;
    }
    let clean = base
        .marks
        .iter()
        .find(|(r, l, _)| r == repo && *l == layer)
        .map(|(_, _, s)| s);
    let clean_moved_forward =
        clean.is_none_or(|clean| is_ancestor(&base.world, repo, before, clean));
    clean_moved_forward
        .then(|| format!("{repo} {layer} watermark moved from {before} to {sha}, not forwards"))
}

/// Runs one faulted tick then one clean tick; returns the outcome code, or the broken
/// invariants.
async fn faulted(
    scenario: &Scenario,
    base: &Baseline,
    script: &str,
    reads: ReadPath,
) -> Result<String, String> {
    let faults: FaultScript = script
        .parse()
        .unwrap_or_else(|e| panic!("fault script {script:?}: {e}"));
    let server = serve(scenario, faults).await;
    let initial = watermarks(server.memory(), scenario)
        .await
        .map(|s| marks(&s, &scenario.world))
        .unwrap_or_default();
    // Only a `delay` fault needs the short timeout; every other request of the faulted
    // tick, and the clean ticks after it, wait as long as a busy machine needs.
    let timeout = if script.contains(" delay ") {
        CLIENT_TIMEOUT
    } else {
        PATIENT_TIMEOUT
    };
    let result = tick_over(&client_timed(&server, reads, timeout), scenario).await;
    let fired = !server.fired_faults().is_empty();
    let actions = server.memory().actions();
    let mut broken = Vec::new();
    for merge in merges(&actions) {
        let pr = format!("{}#{}", merge.0, merge.1);
        if !base.merges.contains(&merge) && !base.race_rebased.contains(&pr) {
            broken.push(format!(
                "merged {}#{} at {}, which the clean run did not",
                merge.0, merge.1, merge.2
            ));
        }
    }
    let world = server.memory().world();
    let after = watermarks(server.memory(), scenario)
        .await
        .map(|s| marks(&s, &world))
        .unwrap_or_default();
    for (repo, layer, sha) in &after {
        if let Some(problem) = watermark_problem(base, &initial, &world, (repo, *layer, sha)) {
            broken.push(problem);
        }
    }
    server.set_faults(FaultScript::default());
    recover(&server, scenario).await;
    let after_recovery = posts(&server.memory().actions());
    // With a receipt key, a question whose creation answer was lost cannot be signed (its
    // number never came back), so the next poll flags it and it is asked once more in a
    // fresh, signed issue (decisions/0040): one more post, never more.
    let question_lost =
        scenario.world.receipt_key.is_some() && script.starts_with("POST /repos/{o}/{r}/issues ");
    for (post, count) in &after_recovery {
        let clean = base.posts.get(post).copied().unwrap_or(0);
        let allowed = if question_lost && post.contains(": Decision pending") {
            clean.max(1) + 1
        } else {
            clean.max(1)
        };
        if *count > allowed {
            broken.push(format!("posted {count} times (clean: {clean}): {post}"));
        }
    }
    // Incidents (and inbox questions) must come back; a primary limit exhausted by the
    // fault does not recover inside the test. The passive audit issue after a B/C merge is
    // opened once: when that one write fails the tick warns, and nothing reopens it.
    let recoverable = !script.ends_with("exhaust");
    for post in base
        .posts
        .keys()
        .filter(|p| recoverable && is_recoverable_issue(p))
    {
        if !after_recovery.contains_key(post) {
            broken.push(format!(
                "never opened after the fault and the clean ticks after it: {post}"
            ));
        }
    }
    server.shutdown().await;
    if !broken.is_empty() {
        return Err(broken.join("; "));
    }
    let code = match (&result.report, fired) {
        (_, false) => "not-reached",
        (Ok(_), true) if merges(&actions) == base.merges => "ok",
        (Ok(_), true) => "ok-fewer-merges",
        (Err(_), true) => "failed-closed",
    };
    Ok(code.to_owned())
}

/// How many faulted ticks of one scenario run at once, each against its own server: a
/// `delay` fault waits out the client's timeout, and the others use the time.
const SIDE_BY_SIDE: usize = 8;

/// Faults on the GraphQL query, as fault-script text after the route: HTTP's on the first
/// query, GraphQL's own on the first and on every query.
const GRAPHQL_FAULTS: &[&str] = &[
    "#1 status 502",
    "#1 secondary-403 retry-after 0",
    "#1 429 retry-after 3600",
    "#1 truncate",
    "#1 malformed",
    "#1 exhaust",
    "#1 graphql-rate-limited",
    "#* graphql-rate-limited",
    "#1 graphql-error",
    "#* graphql-error",
];

/// One faulted tick to run: its fault script, the read path, and the row it is counted in.
struct Run {
    row: String,
    script: String,
    reads: ReadPath,
}

/// Every faulted tick of one scenario: each REST fault kind at its points, read through
/// REST, and each GraphQL fault on the query, read through GraphQL (the tick falls back to
/// REST or fails closed).
fn runs(base: &Baseline) -> Vec<Run> {
    let mut runs = Vec::new();
    for (kind, fault) in FAULTS {
        runs.extend(points(base, fault).into_iter().map(|script| Run {
            row: (*kind).to_owned(),
            script,
            reads: ReadPath::Rest,
        }));
    }
    runs.extend(GRAPHQL_FAULTS.iter().map(|fault| Run {
        row: format!("graphql {fault}"),
        script: format!("POST /graphql {fault}"),
        reads: ReadPath::Graphql,
    }));
    runs
}

/// Every fault over one scenario, its clean baseline taken once: `Err` names each faulted
/// tick that broke an invariant. The scenario's row of the matrix (fault -> outcome counts)
/// is written to `target/tmp/fault-matrix/<scenario>.txt`.
pub(crate) fn scenario(name: &str, path: &std::path::Path) -> Result<(), String> {
    use futures_util::StreamExt as _;
    let runtime = runtime();
    let scenario = Scenario::load(name, path);
    let base = runtime.block_on(baseline(&scenario));
    let runs = runs(&base);
    let total = runs.len();
    let answers: Vec<(Run, Result<String, String>)> = runtime.block_on(
        futures_util::stream::iter(runs)
            .map(|run| {
                let (scenario, base) = (&scenario, &base);
                async move {
                    let result = faulted(scenario, base, &run.script, run.reads).await;
                    (run, result)
                }
            })
            .buffered(SIDE_BY_SIDE)
            .collect(),
    );
    let mut codes: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    let mut failures = Vec::new();
    for (run, result) in answers {
        match result {
            Ok(code) => {
                *codes.entry(run.row).or_default().entry(code).or_insert(0) += 1;
            }
            Err(broken) => failures.push(format!("[{}]: {broken}", run.script)),
        }
    }
    // The GraphQL faults reach the query wherever the clean tick lists pull requests.
    if base.lists_pulls {
        let every_query = "graphql #* graphql-error";
        let reached = codes
            .get(every_query)
            .is_some_and(|row| row.keys().any(|code| code != "not-reached"));
        if !reached {
            failures.push(format!(
                "[POST /graphql #* graphql-error]: the clean tick lists pull requests, but no query met the fault ({:?})",
                codes.get(every_query)
            ));
        }
    }
    let mut table = format!("fault matrix, {name} ({total} faulted ticks):\n");
    for (row, cells) in &codes {
        let cells: Vec<String> = cells.iter().map(|(c, n)| format!("{c} x{n}")).collect();
        let _ = writeln!(table, "  {row:<40} {}", cells.join(", "));
    }
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("fault-matrix");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let file = dir.join(format!("{name}.txt"));
    std::fs::write(&file, &table).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} of {total} faulted ticks broke an invariant:\n{}\n{table}",
            failures.len(),
            failures.join("\n")
        ))
    }
}
