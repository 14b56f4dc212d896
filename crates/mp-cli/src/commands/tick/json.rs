//! The JSON of `mp tick`: a run as one document (what the golden scenarios snapshot and
//! the markdown report reads), its writes, the REST client's totals, and the summary of a
//! sequence of ticks.

use std::collections::BTreeMap;

use mp_core::gate::ConditionResult;
use mp_core::github_queue::GitHubQueueOutcome;
use mp_core::port::Write;
use mp_github::rest::RestGitHub;
use mp_tick::PrOutcome;
use serde_json::{Value, json};

use super::{TickRun, all_warnings};

/// One JSON object per gate result: the condition, its code, its outcome and its line.
pub fn result_json(result: &ConditionResult) -> Value {
    json!({
        "condition": result.id.code(),
        "code": result.code(),
        "severity": result.severity.as_str(),
        "outcome": format!("{:?}", result.outcome).to_lowercase(),
        "line": result.to_string(),
    })
}

fn outcome_json(outcome: &PrOutcome) -> Value {
    let blocking: Vec<String> = outcome
        .gate
        .iter()
        .flat_map(|gate| gate.blocking().map(ToString::to_string))
        .collect();
    let warnings: Vec<String> = outcome
        .gate
        .iter()
        .flat_map(|gate| gate.warnings().map(ToString::to_string))
        .collect();
    let mut json = json!({
        "pr": outcome.pr,
        "action": outcome.action.as_str(),
        "detail": outcome.detail,
        "quadrant": outcome.quadrant.map(|q| q.as_str()),
        "blocking": blocking,
        "warnings": warnings,
    });
    // `github-queue` mode only: what mp did in GitHub's merge queue, each step whole.
    if !outcome.github_queue.is_empty() {
        json["github_queue"] = github_queue_json(&outcome.github_queue);
    }
    json
}

/// GitHub merge queue steps as `[{"code", "line"}]` (decisions/0078).
fn github_queue_json(steps: &[GitHubQueueOutcome]) -> Value {
    steps
        .iter()
        .map(|step| json!({"code": step.code(), "line": step.to_string()}))
        .collect()
}

/// The writes of a tick: lines for people and JSON objects for machines.
pub(super) type Writes = (Vec<String>, Vec<Value>);

/// How a tick's writes are told: all three over the port's one write vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Told {
    /// Planned by a dry run: the planned line, `"planned": true`.
    Planned,
    /// Done against GitHub: the done line.
    Done,
    /// Done against a world: the action log's JSON (GitHub's answers included) and line.
    Logged,
}

/// The writes, told as `told`.
pub(super) fn render_writes(writes: &[Write], told: Told) -> Writes {
    let lines = writes
        .iter()
        .map(|w| match told {
            Told::Planned => w.planned_line(),
            Told::Done => w.done_line(),
            Told::Logged => w.log_line(),
        })
        .collect();
    let json = writes
        .iter()
        .map(|w| match told {
            Told::Planned => json!({"action": w.code(), "planned": true, "line": w.planned_line()}),
            Told::Done => json!({"action": w.code(), "line": w.done_line()}),
            Told::Logged => serde_json::to_value(w).unwrap_or(Value::Null),
        })
        .collect();
    (lines, json)
}

/// The REST client's totals: requests, 304 answers, retries, failures, the rate limit and
/// the GraphQL points left as GitHub last reported them (`null` when not reported), and why
/// a GraphQL read fell back to REST and each wait a rate limit imposed, one line each.
pub(super) fn http_json(client: &RestGitHub) -> Value {
    use mp_core::port::GitHub as _;
    let stats = client.stats();
    json!({
        "requests": stats.total_requests(),
        "not_modified": stats.total_not_modified(),
        "rate_limited_requests": stats.rate_limited_requests(),
        "retries": stats.total_retries(),
        "failures": stats.total_failures(),
        "rate_limit_remaining": client.rate_limit_remaining(),
        "graphql_remaining": client.graphql_remaining(),
        "graphql_fallbacks": client.graphql_fallbacks(),
        "rate_limit_waits": client.rate_limit_waits(),
    })
}

/// The run as one JSON document (also what the golden scenarios snapshot).
pub fn run_json(run: &TickRun) -> Value {
    let audit: Vec<Value> = run
        .audit
        .iter()
        .map(|line| serde_json::from_str(line).unwrap_or(Value::Null))
        .collect();
    let warnings = all_warnings(run);
    let governance = &run.report.governance;
    let inbox: Vec<String> = governance
        .inbox
        .iter()
        .flat_map(|i| i.outcomes.iter().map(ToString::to_string))
        .collect();
    let supervisor: Vec<Value> = run
        .report
        .supervisor
        .iter()
        .map(|s| json!({"repo": s.repo.as_str(), "events": s.events}))
        .collect();
    let mut doc = json!({
        "now": run.now,
        "merge_mode": run.merge_mode,
        "outcomes": run.report.outcomes.iter().map(outcome_json).collect::<Vec<_>>(),
        "inbox": inbox,
        "supervisor": supervisor,
        "drift": governance.drift.as_ref().map(ToString::to_string),
        "writes": run.writes_json,
        "metrics": run.report.metrics_json(),
        "audit": audit,
        "calls": run.calls,
        "warnings": warnings,
    });
    if let Some(http) = &run.http {
        doc["http"] = http.clone();
    }
    // Queue mode only: what the merge queue's driver did, per repository.
    if !run.report.queue.is_empty() {
        doc["queue"] = run
            .report
            .queue
            .iter()
            .map(|q| json!({"repo": q.repo, "steps": q.steps}))
            .collect();
    }
    if let Some(shard) = run.report.shard {
        doc["shard"] = Value::from(shard.to_string());
    }
    if !run.report.operator_errors.is_empty() {
        doc["operator_errors"] = json!(run.report.operator_errors);
    }
    doc
}

/// What a sequence of ticks came to: when each pull request merged, what the others
/// ended as, and the totals of writes and calls.
pub(super) fn summary_json(docs: &[Value]) -> Value {
    let mut merged = Vec::new();
    let mut last: BTreeMap<String, Value> = BTreeMap::new();
    let (mut writes, mut calls) = (0_usize, 0_u64);
    let mut by_action: BTreeMap<String, u64> = BTreeMap::new();
    for (index, doc) in docs.iter().enumerate() {
        for outcome in doc["outcomes"].as_array().into_iter().flatten() {
            let pr = outcome["pr"].as_str().unwrap_or_default().to_owned();
            if outcome["action"] == "merged" {
                merged.push(json!({"pr": pr, "tick": index + 1, "at": doc["now"]}));
            }
            last.insert(pr, outcome.clone());
        }
        for write in doc["writes"].as_array().into_iter().flatten() {
            writes += 1;
            let action = write["action"].as_str().unwrap_or("other").to_owned();
            *by_action.entry(action).or_default() += 1;
        }
        calls += doc["calls"]
            .as_object()
            .map_or(0, |c| c.values().filter_map(Value::as_u64).sum());
    }
    let merged_prs: Vec<&str> = merged.iter().filter_map(|m| m["pr"].as_str()).collect();
    let open: Vec<Value> = last
        .iter()
        .filter(|(pr, _)| !merged_prs.contains(&pr.as_str()))
        .map(|(pr, o)| json!({"pr": pr, "action": o["action"], "detail": o["detail"]}))
        .collect();
    let first = docs.first().map_or(Value::Null, |d| d["now"].clone());
    let final_at = docs.last().map_or(Value::Null, |d| d["now"].clone());
    json!({
        "ticks": docs.len(),
        "from": first,
        "to": final_at,
        "merged": merged,
        "not_merged": open,
        "writes": writes,
        "writes_by_action": by_action,
        "api_calls": calls,
    })
}
