//! The tick's records of the audit log, appended at the end of every `mp tick --audit-log
//! FILE` after its classification records and skill calls: one `{"record": "pr"}` line per
//! pull request into a gated branch (what happened to it, why, and the agent behind it) and
//! one `incident` or `revert` line per one the branch supervisor opened (`mp agents` reads
//! these, decisions/0076, 0080; built by [`mp_tick::audit_records`], as `mp serve` does),
//! then one `{"record": "tick"}` summary. `mp
//! report` draws its timeline from the summaries (docs/report.md).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use anyhow::Context;
use mp_tick::audit_records::lines;
use mp_tick::{FullTickReport, PrAction};
use serde_json::{Value, json};

/// The per-repository counters of the record, in output order.
const REPO_COUNTERS: [&str; 8] = [
    "merged",
    "observe",
    "waiting",
    "blocked",
    "inbox",
    "race_rebased",
    "skipped",
    "incidents",
];

/// The tick record for `report`, from the tick's JSON document `doc` (`run_json`): its
/// instant, mode, metrics, quadrant mix, per-repository counts, open inbox items and API
/// calls.
pub fn record(report: &FullTickReport, doc: &Value, dry_run: bool) -> Value {
    let mut quadrants: BTreeMap<&str, u64> = ["A", "B", "C", "D"].map(|q| (q, 0)).into();
    let mut repos: BTreeMap<String, BTreeMap<&'static str, u64>> = BTreeMap::new();
    let mut inbox: BTreeMap<String, Value> = BTreeMap::new();
    for outcome in &report.outcomes {
        if let Some(quadrant) = outcome.quadrant {
            *quadrants.entry(quadrant.as_str()).or_default() += 1;
        }
        let name = outcome.pr.split('#').next().unwrap_or_default();
        let counter = match outcome.action {
            PrAction::Merged { .. } => "merged",
            PrAction::Observe => "observe",
            PrAction::Blocked => "blocked",
            PrAction::Inbox => "inbox",
            PrAction::RaceRebased => "race_rebased",
            // Not gated: the base is another branch.
            PrAction::Ignored => continue,
            PrAction::Waiting => "waiting",
            PrAction::Enqueued => "enqueued",
            _ => "skipped",
        };
        *repo(&mut repos, name).entry(counter).or_default() += 1;
        if matches!(outcome.action, PrAction::Inbox) {
            inbox.insert(
                outcome.pr.clone(),
                json!({"pr": outcome.pr, "issue": null, "state": "routed"}),
            );
        }
    }
    for supervised in &report.supervisor {
        let incidents = supervised.metrics.l2_incidents + supervised.metrics.l5_incidents;
        *repo(&mut repos, supervised.repo.as_str())
            .entry("incidents")
            .or_default() += u64::from(incidents);
    }
    let polled = report.governance.inbox.iter().flat_map(|i| &i.outcomes);
    for outcome in polled.filter(|o| o.resolution.leaves_open()) {
        let key = outcome.pr.clone().unwrap_or_else(|| outcome.issue.clone());
        inbox.insert(
            key,
            json!({"pr": outcome.pr, "issue": outcome.issue, "state": outcome.resolution.code()}),
        );
    }
    let api_calls: u64 = doc["calls"]
        .as_object()
        .into_iter()
        .flat_map(|calls| calls.values())
        .filter_map(Value::as_u64)
        .sum();
    let repos: Vec<Value> = repos
        .into_iter()
        .map(|(name, counts)| {
            let mut entry = json!({"repo": name});
            for (counter, count) in counts {
                entry[counter] = Value::from(count);
            }
            entry
        })
        .collect();
    json!({
        "ts": doc["now"],
        "record": "tick",
        "merge_mode": doc["merge_mode"],
        "dry_run": dry_run,
        "metrics": doc["metrics"],
        "quadrants": quadrants,
        "repos": repos,
        "inbox": inbox.into_values().collect::<Vec<_>>(),
        "api_calls": api_calls,
        "http": doc.get("http").cloned().unwrap_or(Value::Null),
        "warnings": doc["warnings"].as_array().map_or(0, Vec::len),
    })
}

/// The counters of `name`, all zero when first seen.
fn repo<'a>(
    repos: &'a mut BTreeMap<String, BTreeMap<&'static str, u64>>,
    name: &str,
) -> &'a mut BTreeMap<&'static str, u64> {
    repos
        .entry(name.to_owned())
        .or_insert_with(|| REPO_COUNTERS.map(|c| (c, 0)).into())
}

/// Appends the tick's `pr` records and its summary to the audit log at `path`, in one
/// write.
///
/// # Errors
/// When the file cannot be opened or written.
pub fn append(
    path: &Path,
    report: &FullTickReport,
    doc: &Value,
    dry_run: bool,
) -> anyhow::Result<()> {
    let mut line = String::new();
    let ts = doc["now"].as_str().unwrap_or_default();
    for record in lines(&report.outcomes, &report.supervisor, ts, dry_run) {
        line.push_str(&record);
        line.push('\n');
    }
    line.push_str(&record(report, doc, dry_run).to_string());
    line.push('\n');
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut file| file.write_all(line.as_bytes()))
        .with_context(|| format!("appending the tick record to {}", path.display()))
}
