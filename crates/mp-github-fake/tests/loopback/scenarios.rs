//! Every golden scenario through both adapters: the in-memory port, and the REST client
//! against the loopback server over the same world, reading pull requests over REST and
//! over GraphQL. The writes, the outcomes and the audit records must be identical.

use crate::harness::{
    PATIENT_TIMEOUT, Scenario, TickResult, client_for, client_reading, client_timed, merges,
    runtime, scenario_worlds, serve, tick_at, tick_over,
};
use mp_core::port::Write;
use mp_github::rest::ReadPath;
use mp_github_fake::{FaultScript, MemoryGitHub};
use mp_tick::ReadConcurrency;

/// An outcome detail with the words of a failed call cut after its route: how a failure
/// reads differs by adapter (an HTTP status after retries, an in-memory fault hook), what
/// failed and what the tick did about it must not.
fn normalised(outcomes: Result<Vec<(String, String, String)>, String>) -> Vec<String> {
    match outcomes {
        Err(error) => vec![format!("failed closed: {error}")],
        Ok(outcomes) => outcomes
            .into_iter()
            .map(|(pr, action, detail)| {
                let detail = match detail.find(" /repos/{o}/{r}/") {
                    Some(at) => {
                        let route_end = detail[at + 1..]
                            .find(": ")
                            .map_or(detail.len(), |end| at + 1 + end);
                        detail[..route_end].to_owned()
                    }
                    None => detail,
                };
                format!("{pr} {action}: {detail}")
            })
            .collect(),
    }
}

/// What the scenario's `expect` file (see the mp-cli scenario harness) says of each pull
/// request that the REST run's ticks contradict: `merged` must merge in some tick,
/// `not-merged` must never merge and still have an outcome in the last tick.
fn unmet_expectations(
    world: &std::path::Path,
    ticks: &[TickResult],
    actions: &[Write],
) -> Vec<String> {
    let Some(text) = world
        .parent()
        .and_then(|dir| std::fs::read_to_string(dir.join("expect")).ok())
    else {
        return Vec::new();
    };
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let mut unmet = Vec::new();
    for line in lines.iter().filter(|l| l.starts_with("incident ")) {
        let mut parts = line.splitn(3, ' ').skip(1);
        let (label, words) = (
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default(),
        );
        let opened = actions.iter().any(|action| match action {
            Write::CreateIssue { issue, .. } => {
                issue.labels.iter().any(|l| l == label)
                    && !words.is_empty()
                    && (issue.title.contains(words) || issue.body.contains(words))
            }
            _ => false,
        });
        if !opened {
            unmet.push(format!(
                "expected `{line}`: no such issue was opened over REST"
            ));
        }
    }
    for label in lines.iter().filter_map(|l| l.strip_prefix("no-incident ")) {
        let label = label.trim();
        let opened = actions.iter().any(|action| {
            matches!(action, Write::CreateIssue { issue, .. } if issue.labels.iter().any(|l| l == label))
        });
        if opened {
            unmet.push(format!(
                "expected no `{label}` issue, one was opened over REST"
            ));
        }
    }
    // A scenario that fails closed: the last tick's error must say why; no pull request
    // is asked about.
    if let Some(why) = lines.iter().find_map(|l| l.strip_prefix("fails-closed ")) {
        match ticks.last().map(TickResult::outcomes) {
            Some(Err(error)) if error.contains(why.trim()) => {}
            other => unmet.push(format!(
                "expected the REST tick to fail closed saying {why:?}, it gave {other:?}"
            )),
        }
        return unmet;
    }
    let mut all = Vec::new();
    for tick in ticks {
        match tick.outcomes() {
            Ok(outcomes) => all.push(outcomes),
            Err(error) => return vec![format!("a REST tick failed: {error}")],
        }
    }
    for line in &lines {
        let mut words = line.split_whitespace();
        let (pr, verdict) = (
            words.next().unwrap_or_default(),
            words.next().unwrap_or_default(),
        );
        if pr == "incident" || pr == "no-incident" {
            continue;
        }
        let merged = all
            .iter()
            .flatten()
            .any(|(p, action, _)| p == pr && action == "merged");
        let last = all
            .last()
            .and_then(|outcomes| outcomes.iter().find(|(p, _, _)| p == pr))
            .map(|(_, action, _)| action.as_str());
        let holds = match verdict {
            "merged" => merged,
            "not-merged" => !merged && last.is_some(),
            _ => false,
        };
        if !holds {
            unmet.push(format!(
                "expected `{line}`, the REST ticks merged it: {merged}, last did {last:?}"
            ));
        }
    }
    unmet
}

/// Every tick of the scenario over `github`, moving the world's clock with `set_now`.
async fn ticks_over(
    github: &dyn mp_core::port::GitHubHistory,
    memory: &MemoryGitHub,
    scenario: &Scenario,
) -> Vec<TickResult> {
    let mut results = Vec::new();
    for &at in &scenario.instants {
        memory.set_now(at);
        let result = tick_at(github, scenario, at).await;
        let failed = result.report.is_err();
        results.push(result);
        if failed {
            break;
        }
    }
    results
}

/// Every tick's outcomes, normalised, each prefixed with its tick number.
fn all_outcomes(ticks: &[TickResult]) -> Vec<String> {
    ticks
        .iter()
        .enumerate()
        .flat_map(|(i, tick)| {
            normalised(tick.outcomes())
                .into_iter()
                .map(move |line| format!("tick {}: {line}", i + 1))
        })
        .collect()
}

/// The differences between the runs of one scenario, empty when they agree: the in-memory
/// world read one call at a time (the serial tick); the REST client against the loopback
/// server with the configured reads in flight (decisions/0034); and the same client
/// reading pull requests over GraphQL (decisions/0035).
async fn compare(
    scenario: &Scenario,
    world: &std::path::Path,
    tally: &mut GraphqlTally,
) -> Vec<String> {
    let serial = Scenario {
        world: scenario.world.clone(),
        config: scenario.config.clone(),
        options: scenario
            .options
            .clone()
            .with_read_concurrency(ReadConcurrency::SERIAL),
        instants: scenario.instants.clone(),
    };
    let memory_github = MemoryGitHub::new(scenario.world.clone());
    let memory = ticks_over(&memory_github, &memory_github, &serial).await;
    let memory_actions = memory_github.actions();
    let mut problems = Vec::new();
    for reads in [ReadPath::Rest, ReadPath::Graphql] {
        let server = serve(scenario, FaultScript::default()).await;
        let client = client_reading(&server, reads);
        let rest = ticks_over(&client, server.memory(), scenario).await;
        let rest_actions = server.memory().actions();
        if memory_actions != rest_actions {
            problems.push(format!(
                "{reads:?} reads: writes differ\n    memory: {memory_actions:#?}\n    rest:   {rest_actions:#?}"
            ));
        }
        if reads == ReadPath::Rest {
            problems.extend(unmet_expectations(world, &rest, &rest_actions));
        }
        let (memory_outcomes, rest_outcomes) = (all_outcomes(&memory), all_outcomes(&rest));
        if memory_outcomes != rest_outcomes {
            problems.push(format!(
                "{reads:?} reads: outcomes differ\n    memory: {memory_outcomes:?}\n    rest:   {rest_outcomes:?}"
            ));
        }
        let audit = |ticks: &[TickResult]| -> Vec<String> {
            ticks.iter().flat_map(|t| t.audit.clone()).collect()
        };
        if audit(&memory) != audit(&rest) {
            problems.push(format!(
                "{reads:?} reads: audit records differ\n    memory: {:?}\n    rest:   {:?}",
                audit(&memory),
                audit(&rest)
            ));
        }
        if reads == ReadPath::Graphql {
            let requests = server.requests();
            let count = |route: &str| requests.get(route).map_or(0, |c| c.requests);
            tally.queries += count("POST /graphql");
            if count("GET /repos/{o}/{r}/pulls/{n}/commits")
                + count("GET /repos/{o}/{r}/pulls/{n}/files")
                > 0
            {
                let name = world
                    .parent()
                    .and_then(|dir| dir.file_name())
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                tally.rest_parts_in.push(name);
            }
            let fallbacks = client.graphql_fallbacks();
            if !fallbacks.is_empty() {
                problems.push(format!("GraphQL fell back to REST: {fallbacks:?}"));
            }
        }
        if server.saw_unauthenticated() {
            problems.push("a request reached the server without Authorization".to_owned());
        }
        server.shutdown().await;
    }
    problems
}

/// What the GraphQL runs sent, over every scenario.
#[derive(Default)]
struct GraphqlTally {
    queries: u64,
    /// The scenarios whose GraphQL run read commits or files over REST (parts that did not
    /// fit the query).
    rest_parts_in: Vec<String>,
}

#[test]
fn every_scenario_gives_the_same_writes_through_rest_as_in_memory() {
    let runtime = runtime();
    let mut failures = Vec::new();
    let worlds = scenario_worlds();
    let mut tally = GraphqlTally::default();
    for (name, path) in &worlds {
        let scenario = Scenario::load(name, path);
        let problems = runtime.block_on(compare(&scenario, path, &mut tally));
        if !problems.is_empty() {
            failures.push(format!("{name}:\n  {}", problems.join("\n  ")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} scenarios differ between the adapters:\n{}",
        failures.len(),
        worlds.len(),
        failures.join("\n")
    );
    // The GraphQL runs really read over GraphQL: one query per repository and tick, and
    // per-part REST reads only where a part did not fit.
    assert!(
        tally.queries >= 100,
        "only {} GraphQL queries",
        tally.queries
    );
    // A pull request past GitHub's commit cap and one past its file cap (more commits or
    // files than the query asks for), and a renamed file (GraphQL gives no previous path)
    // are read over REST, and so is the pull request a landing of GitHub's merge queue
    // merged, which the supervisor reads back as `mp explain` does (decisions/0078);
    // nothing else is.
    assert_eq!(
        tally.rest_parts_in,
        [
            "attack-github-queue-group-holds-quadrant-d",
            "attack-github-queue-landed-unapproved",
            "attack-pull-request-over-250-commits",
            "classify-path-rename-out-of-config-d",
            "github-pr-past-the-file-cap",
            "github-queue-landing-approved",
            "github-queue-landing-squash"
        ]
    );
}

#[test]
fn a_second_tick_is_answered_from_the_etag_cache() {
    // The demo-sized scenario `mode-merge` twice over one server: the second tick's reads
    // of unchanged resources come back 304 and do not spend the rate limit. The label
    // queries (`POST /graphql`, decisions/0048) spend GraphQL's own budget, not REST's.
    let runtime = runtime();
    let scenario = scenario_named("mode-observe");
    runtime.block_on(async {
        let server = serve(&scenario, FaultScript::default()).await;
        let client = client_for(&server);
        let _ = tick_over(&client, &scenario).await;
        let cold = client.stats();
        let spent_before = server.rate_limit_remaining();
        let _ = tick_over(&client, &scenario).await;
        let warm = client.stats();
        let spent = spent_before - server.rate_limit_remaining();
        let not_modified = warm.total_not_modified() - cold.total_not_modified();
        assert!(
            not_modified > 0,
            "the second tick got no 304 answers: {warm:?}"
        );
        let graphql = warm.route("POST /graphql").requests - cold.route("POST /graphql").requests;
        let warm_requests = warm.total_requests() - cold.total_requests() - graphql;
        assert_eq!(
            u64::from(spent),
            warm_requests - not_modified,
            "only non-304 answers spend the limit"
        );
        server.shutdown().await;
    });
}

/// GitHub lists at most 3,000 files of a pull request, silently. A pull request with more
/// is never classified on the partial list: through both adapters it is Quadrant D and goes
/// to the owner's decision inbox instead of merging.
#[test]
fn a_pull_request_past_github_s_file_cap_goes_to_the_owner() {
    let runtime = runtime();
    let mut scenario = scenario_named("c1-pass");
    let pull = &mut scenario.world.repos[0].pulls[0];
    for i in 0..3001 {
        pull.files.push(mp_github_fake::world::PullFile {
            change: mp_core::context::FileChange {
                path: format!("docs/pages/page-{i}.md"),
                status: mp_core::context::FileStatus::Added,
                additions: 1,
                deletions: 0,
                previous_filename: None,
            },
            content: None,
        });
    }
    runtime.block_on(async {
        let memory_github = MemoryGitHub::new(scenario.world.clone());
        let memory = tick_at(&memory_github, &scenario, scenario.world.now).await;
        let server = serve(&scenario, FaultScript::default()).await;
        let client = client_for(&server);
        let rest = tick_at(&client, &scenario, scenario.world.now).await;
        server.shutdown().await;
        for (adapter, result) in [("memory", memory), ("rest", rest)] {
            let report = result.report.expect("the tick runs");
            let outcome = &report.outcomes[0];
            assert_eq!(
                (outcome.action.as_str(), outcome.quadrant),
                ("inbox", Some(mp_core::quadrant::Quadrant::D)),
                "{adapter}: {outcome}"
            );
        }
    });
}

/// Two ticks started at once against one GitHub (a cron run and a manual one): one takes
/// the lease and acts, the other stops before writing anything, so nothing is posted or
/// merged twice. Each runs on its own task through its own REST client, as two processes
/// would.
#[test]
fn two_ticks_at_once_act_once() {
    let runtime = runtime();
    let scenario = scenario_named("many-two-ready-prs-both-merge");
    // The writes of work (each tick also takes and gives back its lease), as text.
    let work = |server: &mp_github_fake::LoopbackServer| -> Vec<String> {
        server
            .memory()
            .actions()
            .iter()
            .map(Write::log_line)
            .filter(|a| !a.contains(mp_tick::lease::LEASE_PATH))
            .collect()
    };
    runtime.block_on(async {
        let alone = serve(&scenario, FaultScript::default()).await;
        tick_over(&client_for(&alone), &scenario)
            .await
            .report
            .expect("a tick alone runs");
        let one_tick = work(&alone);
        alone.shutdown().await;

        // The first listing of pull requests (made after its tick took the lease) stalls,
        // so the ticks overlap however the runtime schedules them: on the system clock,
        // since the stall must last while the other tick starts.
        let stall: FaultScript = "GET /repos/{o}/{r}/pulls #1 delay 200"
            .parse()
            .expect("a fault script");
        let server = mp_github_fake::LoopbackServer::start(scenario.world.clone(), stall)
            .await
            .expect("the loopback server starts");
        let ticks = ["cron", "manual"].map(|holder| {
            let client = client_for(&server);
            let mut scenario = scenario_named("many-two-ready-prs-both-merge");
            scenario.options = scenario.options.clone().with_lease_holder(holder);
            tokio::spawn(async move { tick_over(&client, &scenario).await.report })
        });
        let mut acted = 0;
        let mut held = Vec::new();
        for tick in ticks {
            match tick.await.expect("the tick task ends") {
                Ok(_) => acted += 1,
                Err(error) => held.push(error),
            }
        }
        let both = work(&server);
        let merged = merges(&server.memory().actions());
        server.shutdown().await;
        assert_eq!(acted, 1, "exactly one tick acts; the other said {held:?}");
        assert!(
            held.iter()
                .all(|e| e.starts_with("another tick holds the lease (all, ")),
            "{held:?}"
        );
        assert_eq!(merged.len(), 1, "{merged:?}");
        assert_eq!(
            both, one_tick,
            "two ticks at once write what one tick writes"
        );
    });
}

#[test]
fn a_label_renamed_over_rest_shows_its_new_name_and_its_edit_in_both_adapters() {
    // The agent renames `reviewing` with `PATCH /repos/{o}/{r}/labels/{name}`: the pull
    // request's timeline then names `ready-to-merge` (the case worse for mp), and GitHub's
    // record of the label, read by the REST client over GraphQL as by the in-memory port,
    // shows it edited at the clock's time (decisions/0048).
    use mp_core::context::LabelAction;
    use mp_core::ids::{PrNumber, RepoName};
    use mp_core::port::GitHub as _;
    let runtime = runtime();
    let scenario = scenario_named("c1-pass");
    runtime.block_on(async {
        let server = serve(&scenario, FaultScript::default()).await;
        let client = client_for(&server);
        let repo = RepoName::parse("acme/app").expect("a repository name");
        let names = ["ready-to-merge".to_owned(), "no-such-label".to_owned()];
        let before = client
            .label_records(&repo, &names)
            .await
            .expect("the records read");
        assert_eq!(before.len(), 1, "{before:?}");
        rename_ready_to_merge(&server).await;
        let after = client
            .label_records(&repo, &["merge-me".to_owned()])
            .await
            .expect("the records read");
        assert_eq!(after.len(), 1, "{after:?}");
        assert_eq!(after[0].name, "merge-me");
        assert_eq!(after[0].updated_at, Some(scenario.world.now));
        assert!(after[0].created_at < after[0].updated_at);
        let events = client
            .label_events(&repo, PrNumber::new(1))
            .await
            .expect("the timeline reads");
        assert!(
            events
                .iter()
                .any(|e| e.action == LabelAction::Labeled && e.label == "merge-me"),
            "{events:?}"
        );
        let memory = MemoryGitHub::new(scenario.world.clone());
        assert!(
            memory
                .rename_label(&repo, "ready-to-merge", "merge-me")
                .expect("the repository exists")
        );
        assert_eq!(
            memory
                .label_records(&repo, &["merge-me".to_owned()])
                .await
                .expect("the records read"),
            after
        );
        server.shutdown().await;
    });
}

#[test]
fn the_listing_carries_the_same_label_records_and_default_branch_as_the_reads_by_name() {
    // Over GraphQL the listing brings GitHub's record of every label on a pull request and
    // the default branch with its head (decisions/0075): the same facts `MpLabel`,
    // `GET /repos/{o}/{r}` and `GET /branches/{b}` answer, before and after an agent
    // renames a label, and the default branches read together equal those read one by one.
    use mp_core::ids::RepoName;
    use mp_core::port::GitHub as _;
    let runtime = runtime();
    let scenario = scenario_named("c1-pass");
    runtime.block_on(async {
        let server = serve(&scenario, FaultScript::default()).await;
        let client = client_reading(&server, ReadPath::Graphql);
        let repo = RepoName::parse("acme/app").expect("a repository name");
        let same_facts = |when: &'static str| {
            let (client, repo) = (&client, &repo);
            async move {
                let listed = client
                    .open_pulls_with_reads(repo)
                    .await
                    .expect("the listing reads");
                assert!(!listed.is_empty(), "{when}: nothing listed");
                let branch = client.default_branch(repo).await.expect("the repository");
                let head = client.branch_head(repo, &branch).await.expect("the branch");
                for item in &listed {
                    let records = item
                        .reads
                        .label_records
                        .clone()
                        .unwrap_or_else(|| panic!("{when}: no label records listed"));
                    assert_eq!(records.len(), item.pull.labels.len(), "{when}: {records:?}");
                    let by_name = client
                        .label_records(repo, &item.pull.labels)
                        .await
                        .expect("the records read");
                    assert_eq!(records, by_name, "{when}");
                    assert_eq!(
                        item.reads.default_branch,
                        Some((branch.clone(), head.clone())),
                        "{when}"
                    );
                }
            }
        };
        same_facts("before the rename").await;
        rename_ready_to_merge(&server).await;
        same_facts("after the rename").await;
        let listed = client
            .open_pulls_with_reads(&repo)
            .await
            .expect("the listing reads");
        let edited = listed
            .iter()
            .filter_map(|item| item.reads.label_records.as_ref())
            .flatten()
            .find(|record| record.name == "merge-me")
            .expect("the renamed label is listed");
        assert_eq!(edited.updated_at, Some(scenario.world.now));
        let repos: Vec<RepoName> = scenario
            .world
            .repos
            .iter()
            .map(|r| r.name.clone())
            .collect();
        let together = client
            .default_branches(&repos)
            .await
            .expect("the default branches read");
        assert_eq!(together.len(), repos.len(), "{together:?}");
        for repo in &repos {
            assert_eq!(
                together.get(repo),
                Some(&client.default_branch(repo).await.expect("the repository")),
            );
        }
        server.shutdown().await;
    });
}

/// A `delay` longer than the client's timeout times the request out on the clock the
/// server and its client share (`harness::serve`), without waiting it out: the server's
/// clock moves by the whole delay, the write is applied and its answer lost.
#[test]
fn a_delay_times_the_request_out_on_the_shared_clock() {
    use mp_core::port::GitHub as _;
    let runtime = runtime();
    let scenario = scenario_named("c1-pass");
    runtime.block_on(async {
        let faults: FaultScript = "POST /repos/{o}/{r}/issues/{n}/comments #1 delay 60000"
            .parse()
            .expect("a fault script");
        let server = serve(&scenario, faults).await;
        let client = client_timed(&server, ReadPath::Rest, PATIENT_TIMEOUT);
        let clock = server.sleeper();
        let start = clock.now();
        let repo = mp_core::ids::RepoName::parse("acme/app").expect("a repository name");
        let answer = client
            .create_comment(&repo, mp_core::ids::PrNumber::new(1), "hello")
            .await;
        let error = answer.expect_err("the answer comes after the client's timeout");
        assert!(error.to_string().contains("timed out"), "{error}");
        assert_eq!(
            clock.now() - start,
            std::time::Duration::from_secs(60),
            "the delay passed on the shared clock"
        );
        assert_eq!(server.memory().actions().len(), 1, "the comment was posted");
        server.shutdown().await;
    });
}

/// The scenario of that name under fixtures/scenarios.
fn scenario_named(wanted: &str) -> Scenario {
    let (name, path) = scenario_worlds()
        .into_iter()
        .find(|(name, _)| name == wanted)
        .unwrap_or_else(|| panic!("the {wanted} scenario exists"));
    Scenario::load(&name, &path)
}

/// An agent renames acme/app's `ready-to-merge` label to `merge-me` over REST
/// (`PATCH /repos/{o}/{r}/labels/{name}`); GitHub answers 200.
async fn rename_ready_to_merge(server: &mp_github_fake::LoopbackServer) {
    let renamed = reqwest::Client::new()
        .patch(format!(
            "{}/repos/acme/app/labels/ready-to-merge",
            server.base_url()
        ))
        .bearer_auth("ghp_loopback")
        .json(&serde_json::json!({ "new_name": "merge-me" }))
        .send()
        .await
        .expect("the rename is answered");
    assert_eq!(renamed.status().as_u16(), 200);
}
