//! `mp agents` over the audit log real ticks wrote: the figures agree with what the ticks
//! reported, per agent.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::{mp, workspace_root};

/// Runs `mp tick --world W --audit-log LOG --format json` and returns its document.
fn tick(world: &std::path::Path, log: &std::path::Path) -> Value {
    let assert = mp()
        .args(["tick", "--format", "json", "--world"])
        .arg(world)
        .arg("--audit-log")
        .arg(log)
        .assert()
        .success();
    serde_json::from_slice(&assert.get_output().stdout).expect("one JSON document")
}

fn agents(log: &std::path::Path, by: &str) -> Value {
    let assert = mp()
        .args(["agents", "--format", "json", "--by", by, "--audit-log"])
        .arg(log)
        .assert()
        .success();
    serde_json::from_slice(&assert.get_output().stdout).expect("one JSON document")
}

#[test]
fn per_agent_figures_agree_with_the_ticks_outcomes() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let log = dir.path().join("audit.jsonl");
    let world = workspace_root().join("fixtures/worlds/demo.yaml");
    let doc = tick(&world, &log);
    let outcomes: Vec<&Value> = doc["outcomes"]
        .as_array()
        .expect("outcomes")
        .iter()
        .filter(|o| o["action"] != "ignored")
        .collect();
    // What the tick reported, per author: pull requests and merges.
    let mut expected: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let text = std::fs::read_to_string(&log).expect("the log");
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON lines"))
        .filter(|r: &Value| r["record"] == "pr")
        .collect();
    assert_eq!(records.len(), outcomes.len(), "one pr record per outcome");
    for (record, outcome) in records.iter().zip(&outcomes) {
        assert_eq!(record["pr"], outcome["pr"]);
        assert_eq!(record["action"], outcome["action"]);
        let author = record["agent"]["author"]
            .as_str()
            .expect("an author")
            .to_owned();
        let entry = expected.entry(author).or_default();
        entry.0 += 1;
        entry.1 += u64::from(outcome["action"] == "merged");
    }
    let merged = outcomes.iter().filter(|o| o["action"] == "merged").count();
    assert!(merged > 0, "the demo merges something");
    let view = agents(&log, "author");
    let got: BTreeMap<String, (u64, u64)> = view["agents"]
        .as_array()
        .expect("agents")
        .iter()
        .map(|a| {
            (
                a["agent"].as_str().expect("a name").to_owned(),
                (
                    a["prs"].as_u64().expect("prs"),
                    a["merged"].as_u64().expect("merged"),
                ),
            )
        })
        .collect();
    assert_eq!(got, expected);
    // By tool, the pull requests add up to the same total.
    let by_tool = agents(&log, "tool");
    let total: u64 = by_tool["agents"]
        .as_array()
        .expect("agents")
        .iter()
        .map(|a| a["prs"].as_u64().expect("prs"))
        .sum();
    assert_eq!(total, outcomes.len() as u64);
    // The gate's blocks are counted per condition, each code a condition's stable code.
    let blocked: u64 = outcomes
        .iter()
        .filter(|o| {
            o["blocking"].as_array().is_some_and(|b| {
                b.iter()
                    .any(|l| l.as_str().is_some_and(|l| l.starts_with("C4")))
            })
        })
        .count() as u64;
    let c4: u64 = by_tool["agents"]
        .as_array()
        .expect("agents")
        .iter()
        .filter_map(|a| a["blocks"]["c4_base_is_main"].as_u64())
        .sum();
    assert!(blocked > 0, "the demo has pull requests behind main");
    assert_eq!(c4, blocked);
}

/// A world with known CI runs and a post-merge incident (fixtures/worlds/agents.yaml), three
/// ticks half an hour apart: the figures are exactly what the world says.
#[test]
fn ci_runs_and_an_incident_from_real_ticks() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let log = dir.path().join("audit.jsonl");
    let world = workspace_root().join("fixtures/worlds/agents.yaml");
    mp().args(["tick", "--ticks", "3", "--every", "30m", "--world"])
        .arg(&world)
        .arg("--audit-log")
        .arg(&log)
        .assert()
        .success();
    let view = agents(&log, "tool");
    assert_eq!(view["incidents"], 1);
    assert_eq!(view["incidents_unattributed"], 0);
    let by_name: BTreeMap<&str, &Value> = view["agents"]
        .as_array()
        .expect("agents")
        .iter()
        .map(|a| (a["agent"].as_str().expect("a name"), a))
        .collect();
    // alpha: merged at the first tick with its head's two runs (the listed `deploy`, the
    // simulated `test`); its squash commit never gets `deploy`, so L2 opens an incident
    // an hour later.
    let alpha = by_name["alpha"];
    assert_eq!(alpha["merged"], 1);
    assert_eq!(alpha["ci_runs"], 2);
    assert_eq!(alpha["ci_runs_merged"], 2);
    assert_eq!(alpha["ci_runs_per_merged"], 2.0);
    assert_eq!(alpha["incidents"], 1);
    assert_eq!(alpha["reverts"], 0);
    // The existing fields keep their names.
    assert_eq!(alpha["approval_to_merge"]["median_s"], 1800);
    // beta: blocked three ticks on C1, C2 and C4 with one run on its one head.
    let beta = by_name["beta"];
    assert_eq!(
        (&beta["merged"], &beta["ci_runs"], &beta["incidents"]),
        (&Value::from(0), &Value::from(1), &Value::from(0))
    );
    assert_eq!(beta["ci_runs_per_merged"], Value::Null);
    assert_eq!(beta["blocks"]["c1_ready_to_merge"], 3);
    assert_eq!(beta["blocked_prs"]["c1_ready_to_merge"], 1);
    let text = mp()
        .args(["agents", "--audit-log"])
        .arg(&log)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&text.get_output().stdout).into_owned();
    let alpha_line = text
        .lines()
        .find(|l| l.starts_with("alpha "))
        .expect("a line for alpha");
    let columns: Vec<&str> = alpha_line.split_whitespace().collect();
    assert_eq!(columns[columns.len() - 3..], ["2.0", "1", "0"], "{text}");
}

#[test]
fn a_bad_since_or_a_missing_log_exits_2() {
    mp().args(["agents", "--audit-log", "/nonexistent/log.jsonl"])
        .assert()
        .code(2);
    let dir = tempfile::tempdir().expect("a temp dir");
    let log = dir.path().join("audit.jsonl");
    std::fs::write(&log, "").expect("write");
    mp().args(["agents", "--since", "yesterday", "--audit-log"])
        .arg(&log)
        .assert()
        .code(2);
    mp().args(["agents", "--audit-log"])
        .arg(&log)
        .assert()
        .success()
        .stdout(predicates::str::contains("no pull-request records"));
}
