//! Every golden scenario through both adapters: the in-memory port, and the REST client
//! against the loopback server over the same world. The writes, the outcomes and the audit
//! records must be identical.

use crate::harness::{
    Scenario, client_for, memory_tick, runtime, scenario_worlds, serve, tick_over,
};
use mp_github::FaultScript;

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
/// request that the REST run's `outcomes` contradict: `merged` must merge, `not-merged`
/// must not.
fn unmet_expectations(
    world: &std::path::Path,
    outcomes: &Result<Vec<(String, String, String)>, String>,
) -> Vec<String> {
    let Some(text) = world
        .parent()
        .and_then(|dir| std::fs::read_to_string(dir.join("expect")).ok())
    else {
        return Vec::new();
    };
    let outcomes = match outcomes {
        Ok(outcomes) => outcomes,
        Err(error) => return vec![format!("the REST tick failed: {error}")],
    };
    let mut unmet = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let mut words = line.split_whitespace();
        let (pr, verdict) = (
            words.next().unwrap_or_default(),
            words.next().unwrap_or_default(),
        );
        let action = outcomes
            .iter()
            .find(|(p, _, _)| p == pr)
            .map(|(_, action, _)| action.as_str());
        let holds = match verdict {
            "merged" => action == Some("merged"),
            "not-merged" => action.is_some_and(|a| a != "merged"),
            _ => false,
        };
        if !holds {
            unmet.push(format!("expected `{line}`, the REST tick did {action:?}"));
        }
    }
    unmet
}

/// The differences between the two runs of one scenario, empty when they agree.
async fn compare(scenario: &Scenario, world: &std::path::Path) -> Vec<String> {
    let (memory, memory_github) = memory_tick(scenario).await;
    let server = serve(scenario, FaultScript::default()).await;
    let client = client_for(&server);
    let rest = tick_over(&client, scenario).await;
    let mut problems = Vec::new();
    let memory_actions = memory_github.actions();
    let rest_actions = server.memory().actions();
    if memory_actions != rest_actions {
        problems.push(format!(
            "writes differ\n    memory: {memory_actions:#?}\n    rest:   {rest_actions:#?}"
        ));
    }
    problems.extend(unmet_expectations(world, &rest.outcomes()));
    let (memory_outcomes, rest_outcomes) =
        (normalised(memory.outcomes()), normalised(rest.outcomes()));
    if memory_outcomes != rest_outcomes {
        problems.push(format!(
            "outcomes differ\n    memory: {memory_outcomes:?}\n    rest:   {rest_outcomes:?}"
        ));
    }
    if memory.audit != rest.audit {
        problems.push(format!(
            "audit records differ\n    memory: {:?}\n    rest:   {:?}",
            memory.audit, rest.audit
        ));
    }
    if server.saw_unauthenticated() {
        problems.push("a request reached the server without Authorization".to_owned());
    }
    server.shutdown().await;
    problems
}

#[test]
fn every_scenario_gives_the_same_writes_through_rest_as_in_memory() {
    let runtime = runtime();
    let mut failures = Vec::new();
    let worlds = scenario_worlds();
    for (name, path) in &worlds {
        let scenario = Scenario::load(name, path);
        let problems = runtime.block_on(compare(&scenario, path));
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
}

#[test]
fn a_second_tick_is_answered_from_the_etag_cache() {
    // The demo-sized scenario `mode-merge` twice over one server: the second tick's reads
    // of unchanged resources come back 304 and do not spend the rate limit.
    let runtime = runtime();
    let (name, path) = scenario_worlds()
        .into_iter()
        .find(|(name, _)| name == "mode-observe")
        .expect("the mode-observe scenario exists");
    let scenario = Scenario::load(&name, &path);
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
        let warm_requests = warm.total_requests() - cold.total_requests();
        assert_eq!(
            u64::from(spent),
            warm_requests - not_modified,
            "only non-304 answers spend the limit"
        );
        server.shutdown().await;
    });
}
