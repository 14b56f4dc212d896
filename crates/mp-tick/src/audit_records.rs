//! The agents' records of the audit log (decisions/0076, 0080): one `pr` record per pull
//! request into a gated branch a tick or a service job decided on, and one `incident` or
//! `revert` record per incident issue or revert pull request the branch supervisor opened.
//! `mp tick --audit-log` and `mp serve --audit-log` both write them through these
//! functions; `mp agents` folds them (docs/report.md, "The pull-request records").

use std::collections::BTreeSet;

use mp_core::agent::AgentKey;
use serde_json::{Value, json};

use crate::report::{PrAction, PrOutcome};
use crate::supervisor::SupervisorReport;

/// One `pr` record per outcome of a pull request into a gated branch, at the instant `ts`
/// (RFC 3339): the action, the quadrant, the conditions that blocked it (stable codes;
/// `inbox` when it went to the decision inbox), the agent behind it, its times, its head
/// and the check runs on it, the commit it merged as and the commits it reverts.
pub fn pr_records(outcomes: &[PrOutcome], ts: &str, dry_run: bool) -> Vec<Value> {
    outcomes
        .iter()
        .filter(|o| !matches!(o.action, PrAction::Ignored))
        .map(|outcome| pr_record(outcome, ts, dry_run))
        .collect()
}

/// Every record of `outcomes` and `supervisors` at `ts`, one JSON line each (no newline):
/// the `pr` records, then the `incident` and `revert` records.
pub fn lines(
    outcomes: &[PrOutcome],
    supervisors: &[SupervisorReport],
    ts: &str,
    dry_run: bool,
) -> Vec<String> {
    pr_records(outcomes, ts, dry_run)
        .into_iter()
        .chain(supervisor_records(supervisors, ts, dry_run))
        .map(|record| record.to_string())
        .collect()
}

/// The stable codes of the conditions that blocked `outcome`, each once, and `inbox` when
/// it went to the decision inbox: the `pr` record's `blocked_by`, and the condition label
/// of `mp serve`'s per-agent counter.
pub fn blocked_by(outcome: &PrOutcome) -> Vec<String> {
    let mut blocked_by: Vec<String> = outcome
        .gate
        .iter()
        .flat_map(|gate| gate.blocking().map(|r| r.id.code().to_owned()))
        .collect();
    // A condition can block with several results (one per failing check, say): once here.
    let mut seen = BTreeSet::new();
    blocked_by.retain(|code| seen.insert(code.clone()));
    if matches!(outcome.action, PrAction::Inbox) {
        blocked_by.push("inbox".to_owned());
    }
    blocked_by
}

fn pr_record(outcome: &PrOutcome, ts: &str, dry_run: bool) -> Value {
    let blocked_by = blocked_by(outcome);
    let agent = outcome.agent.as_ref().map(|agent| {
        let fields = AgentKey::ALL
            .into_iter()
            .map(|key| (key.as_str().to_owned(), json!(agent.declared(key))));
        Value::Object(fields.collect())
    });
    let mut record = json!({
        "ts": ts,
        "record": "pr",
        "pr": outcome.pr,
        "action": outcome.action.as_str(),
        "quadrant": outcome.quadrant.map(|q| q.as_str()),
        "blocked_by": blocked_by,
        "agent": agent,
        "opened_at": outcome.opened_at.map(|t| t.to_string()),
        "approved_at": outcome.approved_at.map(|t| t.to_string()),
        "head_sha": outcome.head_sha.as_ref().map(|s| s.as_str()),
        "check_runs": outcome.check_runs,
        "dry_run": dry_run,
    });
    if let PrAction::Merged { sha } = &outcome.action {
        record["merged_sha"] = json!(sha.as_str());
    }
    if !outcome.reverts.is_empty() {
        record["reverts"] = json!(
            outcome
                .reverts
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
        );
    }
    // `github-queue` mode: each enqueue, dequeue or refusal, with its reason (decisions/0078).
    if !outcome.github_queue.is_empty() {
        record["github_queue"] = outcome
            .github_queue
            .iter()
            .map(|step| json!({"code": step.code(), "line": step.to_string()}))
            .collect();
    }
    record
}

/// One `incident` record per incident issue and one `revert` record per revert pull
/// request the branch supervisor opened, at the instant `ts`: the repository, the commits
/// of its default branch each names, and the issue or pull request.
pub fn supervisor_records(reports: &[SupervisorReport], ts: &str, dry_run: bool) -> Vec<Value> {
    let mut records = Vec::new();
    for report in reports {
        let repo = report.repo.as_str();
        for incident in &report.incidents {
            records.push(json!({
                "ts": ts,
                "record": "incident",
                "repo": repo,
                "label": incident.label.as_str(),
                "shas": incident.shas.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
                "issue": incident.issue.get(),
                "dry_run": dry_run,
            }));
        }
        for revert in &report.reverts {
            records.push(json!({
                "ts": ts,
                "record": "revert",
                "repo": repo,
                "sha": revert.sha.as_str(),
                "pull": revert.pull.get(),
                "incident": revert.incident.get(),
                "dry_run": dry_run,
            }));
        }
    }
    records
}
