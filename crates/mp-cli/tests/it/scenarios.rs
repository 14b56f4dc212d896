//! Golden scenarios: each `fixtures/scenarios/<name>/world.yaml` is one tick of the real
//! `mp` binary, and its JSON report is pinned as a YAML snapshot under `snapshots/`.
//!
//! A scenario whose directory holds a file `exit-code` (e.g. `3` for a tick that fails
//! closed) must exit with that code; its snapshot then pins the exit code, stdout and stderr.
//!
//! A scenario whose directory holds a file `expect` states, one line per pull request,
//! what must come of it, checked before the snapshot: `acme/app#1 merged`, or
//! `acme/app#1 not-merged <words>` where `<words>` must appear in a blocking reason (an
//! attack names why it fails). Two more kinds of line state what the supervisor must do:
//! `incident <label> <words>` (some tick opens an issue with that label whose title or
//! body holds `<words>`), `no-incident <label>` (no tick opens an issue with that label: an
//! agent must not be able to raise one against a sound commit) and `fails-closed <words>`
//! (the tick stops with a non-zero exit and `<words>` in what it printed). The adversarial
//! scenarios (`attack-*`) must have one.
//!
//! A scenario whose directory holds a file `faults` (a loopback fault script, see
//! docs/deploy.md) runs with `--adapter rest --faults <file>`: GitHub's edges that only HTTP
//! can show.
//!
//! Run one scenario alone with `MP_SCENARIO=<name> cargo test -p mp-cli --test it smoke`.
//! Accept changed reports with `INSTA_UPDATE=always`, then read every changed snapshot.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::{mp, workspace_root};

/// The snapshot name shared by the glob test and the single-scenario test, so both compare
/// against the same file (`scenario@<name>__world.yaml.snap`).
const SNAPSHOT: &str = "scenario";

/// Fewer scenarios than this means some went missing.
const MIN_SCENARIOS: usize = 30;

fn scenarios_dir() -> PathBuf {
    workspace_root().join("fixtures/scenarios")
}

/// The scenario's one-line README, checked for shape.
fn readme(dir: &Path) -> String {
    let path = dir.join("README.md");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: cannot read the README: {e}", path.display()));
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines.len() == 1 && !lines[0].trim().is_empty(),
        "{}: a scenario README is exactly one non-empty line, found {} line(s)",
        path.display(),
        lines.len()
    );
    lines[0].trim().to_owned()
}

/// `mp tick --world <world> --format json`: must exit 0 and print one JSON document, or
/// exit with the code in the scenario's `exit-code` file.
fn tick_json(world: &Path) -> Value {
    let ticks = ticks_args(world);
    let mut command = mp();
    command
        .args(["tick", "--world"])
        .arg(world)
        .args(["--format", "json"])
        .args(&ticks);
    // A scenario with a fault script runs through the REST client and the loopback
    // server, which injects the faults.
    if let Some(faults) = world
        .parent()
        .map(|dir| dir.join("faults"))
        .filter(|p| p.is_file())
    {
        command.args(["--adapter", "rest", "--faults"]).arg(faults);
    }
    let output = command.output().expect("the mp binary starts");
    let expected = world
        .parent()
        .map(|dir| dir.join("exit-code"))
        .filter(|path| path.is_file())
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("readable exit-code file");
            text.trim()
                .parse::<i32>()
                .unwrap_or_else(|e| panic!("{}: not an exit code: {e}", path.display()))
        });
    if let Some(code) = expected {
        assert_eq!(
            output.status.code(),
            Some(code),
            "mp tick --world {} exited with {}\nstderr:\n{}",
            world.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        return serde_json::json!({
            "exit_code": code,
            "stdout": String::from_utf8_lossy(&output.stdout),
            "stderr": String::from_utf8_lossy(&output.stderr),
        });
    }
    assert!(
        output.status.success(),
        "mp tick --world {} exited with {}\nstderr:\n{}",
        world.display(),
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "mp tick --world {} printed no JSON document: {e}\nstdout:\n{}",
            world.display(),
            String::from_utf8_lossy(&output.stdout)
        )
    });
    if ticks.is_empty() {
        doc
    } else {
        compact_ticks(&doc)
    }
}

/// The `--ticks N --every D` of a scenario whose directory holds a file `ticks` reading
/// `<N> every <D>` (e.g. `24 every 5m`); none for a one-tick scenario.
fn ticks_args(world: &Path) -> Vec<String> {
    let Some(path) = world
        .parent()
        .map(|dir| dir.join("ticks"))
        .filter(|p| p.is_file())
    else {
        return Vec::new();
    };
    let text = std::fs::read_to_string(&path).expect("readable ticks file");
    let words: Vec<&str> = text.split_whitespace().collect();
    let [count, "every", every] = words.as_slice() else {
        panic!(
            "{}: expected `<N> every <duration>`, found {text:?}",
            path.display()
        );
    };
    vec![
        "--ticks".to_owned(),
        (*count).to_owned(),
        "--every".to_owned(),
        (*every).to_owned(),
    ]
}

/// A many-tick run as its snapshot shows it: per tick the instant, each outcome's action
/// and detail, and the writes by kind and pull request; then the summary. Each write's
/// full text is pinned by the one-tick scenarios.
fn compact_ticks(doc: &Value) -> Value {
    let ticks: Vec<Value> = doc["ticks"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|tick| {
            let outcomes: Vec<String> = tick["outcomes"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|o| {
                    format!(
                        "{} {}: {}",
                        o["pr"].as_str().unwrap_or_default(),
                        o["action"].as_str().unwrap_or_default(),
                        o["detail"].as_str().unwrap_or_default()
                    )
                })
                .collect();
            let writes: Vec<String> = tick["writes"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|w| {
                    let target = w["number"]
                        .as_u64()
                        .map(|n| format!(" #{n}"))
                        .or_else(|| w["branch"].as_str().map(|b| format!(" {b}")))
                        .unwrap_or_default();
                    format!("{}{target}", w["action"].as_str().unwrap_or_default())
                })
                .collect();
            serde_json::json!({
                "now": tick["now"],
                "outcomes": outcomes,
                "writes": writes,
                "warnings": tick["warnings"],
            })
        })
        .collect();
    // What the expectations read: every outcome of the last tick, and the merged ones.
    let last = doc["ticks"]
        .as_array()
        .and_then(|t| t.last())
        .map_or(Value::Null, |t| t["outcomes"].clone());
    serde_json::json!({
        "ticks": ticks,
        "summary": doc["summary"],
        "failed": doc["failed"],
        "last_outcomes": last,
    })
}

/// Ticks one scenario and compares the report with its snapshot; the README becomes the
/// snapshot's description.
#[track_caller]
fn check(world: &Path) {
    let dir = world
        .parent()
        .expect("a world file lives in its scenario directory");
    let description = readme(dir);
    let report = tick_json(world);
    // A scenario that exits non-zero pins stdout as text; when that text is the JSON
    // report (a tick that ran and ended with exit 1), its outcomes are checked too. A tick
    // that failed closed prints only why (`failed`), checked with stderr.
    match report["stdout"]
        .as_str()
        .and_then(|stdout| serde_json::from_str::<Value>(stdout).ok())
        .filter(|printed| printed.get("failed").is_none())
    {
        Some(printed) => check_expectations(dir, &printed),
        None => check_expectations(dir, &report),
    }
    insta::with_settings!({
        description => description,
        omit_expression => true,
        prepend_module_to_snapshot => false,
    }, {
        insta::assert_yaml_snapshot!(SNAPSHOT, report);
    });
}

/// Checks the scenario's `expect` file, if any, against the tick report.
#[track_caller]
fn check_expectations(dir: &Path, report: &Value) {
    let path = dir.join("expect");
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
    let Ok(text) = std::fs::read_to_string(&path) else {
        assert!(
            !name.as_deref().is_some_and(|n| n.starts_with("attack-")),
            "{}: an attack scenario needs an `expect` file saying it does not merge and why",
            dir.display()
        );
        return;
    };
    // A many-tick run: a pull request merged in any tick counts as merged; the others
    // are judged by their outcome in the last tick.
    let merged_in_some_tick: Vec<String> = report["summary"]["merged"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["pr"].as_str().map(str::to_owned))
        .collect();
    let mut outcomes = report["outcomes"].as_array().cloned().unwrap_or_default();
    if let Some(last) = report["last_outcomes"].as_array() {
        outcomes.clone_from(last);
        for pr in &merged_in_some_tick {
            outcomes.push(serde_json::json!({"pr": pr, "action": "merged"}));
        }
    }
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let mut words = line.splitn(3, ' ');
        let (pr, verdict, why) = (
            words.next().unwrap_or_default(),
            words.next().unwrap_or_default(),
            words.next().unwrap_or_default(),
        );
        if pr == "incident" {
            check_incident(&path, report, verdict, why);
            continue;
        }
        if pr == "no-incident" {
            assert!(
                opened_issues(report, verdict).is_empty(),
                "{}: a `{verdict}` issue was opened: {:?}",
                path.display(),
                opened_issues(report, verdict)
            );
            continue;
        }
        if pr == "fails-closed" {
            let why = line.trim_start_matches("fails-closed").trim();
            let printed = format!(
                "{}{}",
                report["stdout"].as_str().unwrap_or_default(),
                report["stderr"].as_str().unwrap_or_default()
            );
            assert!(
                report["exit_code"].as_i64().is_some_and(|code| code != 0),
                "{}: the tick should fail closed: {report}",
                path.display()
            );
            assert!(
                !why.is_empty() && printed.contains(why),
                "{}: the tick failed closed, but does not say {why:?}: {printed}",
                path.display()
            );
            continue;
        }
        let outcome = outcomes
            .iter()
            .find(|o| o["pr"] == pr)
            .unwrap_or_else(|| panic!("{}: no outcome for {pr}", path.display()));
        let action = outcome["action"].as_str().unwrap_or_default();
        match verdict {
            "merged" => assert_eq!(
                action,
                "merged",
                "{}: {pr} should merge: {outcome}",
                path.display()
            ),
            "not-merged" => {
                assert_ne!(action, "merged", "{}: {pr} merged", path.display());
                assert!(
                    !why.is_empty(),
                    "{}: `not-merged` needs a reason",
                    path.display()
                );
                let reasons: Vec<&str> = outcome["blocking"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .chain(outcome["detail"].as_str())
                    .collect();
                assert!(
                    reasons.iter().any(|r| r.contains(why)),
                    "{}: {pr} is not merged, but no reason says {why:?}: {reasons:?}",
                    path.display()
                );
            }
            other => panic!("{}: unknown expectation {other:?}", path.display()),
        }
    }
}

/// `incident <label> <words>`: some tick's writes open an issue with `label` whose title or
/// body holds `words`.
#[track_caller]
fn check_incident(path: &Path, report: &Value, label: &str, words: &str) {
    assert!(
        !label.is_empty() && !words.is_empty(),
        "{}: `incident` needs a label and words",
        path.display()
    );
    if let Some(stderr) = report["stderr"].as_str() {
        // A tick that failed closed prints no report: the writes it made before stopping
        // are listed on stderr (titles only), next to the error that says why.
        assert!(
            stderr.contains(&format!("[{label}]")) && stderr.contains(words),
            "{}: the tick failed closed without a `{label}` issue saying {words:?}: {stderr}",
            path.display()
        );
        return;
    }
    let opened = opened_issues(report, label).iter().any(|write| {
        [&write["title"], &write["body"]]
            .iter()
            .any(|text| text.as_str().is_some_and(|t| t.contains(words)))
    });
    assert!(
        opened,
        "{}: no `{label}` issue saying {words:?} was opened",
        path.display()
    );
}

/// The issues with `label` that some tick's writes open.
fn opened_issues<'a>(report: &'a Value, label: &str) -> Vec<&'a Value> {
    let writes: Vec<&Value> = match report["ticks"].as_array() {
        Some(ticks) => ticks
            .iter()
            .flat_map(|t| t["writes"].as_array().into_iter().flatten())
            .collect(),
        None => report["writes"].as_array().into_iter().flatten().collect(),
    };
    writes
        .into_iter()
        .filter(|write| {
            write["action"] == "create_issue"
                && write["labels"]
                    .as_array()
                    .is_some_and(|labels| labels.iter().any(|l| l == label))
        })
        .collect()
}

#[test]
fn scenarios() {
    insta::glob!("../../../../fixtures", "scenarios/*/world.yaml", |path| {
        check(path);
    });
}

/// One scenario, named by `MP_SCENARIO`, against the same snapshot as [`scenarios`];
/// does nothing when the variable is unset.
#[test]
fn smoke() {
    let Some(name) = std::env::var("MP_SCENARIO")
        .ok()
        .filter(|n| !n.trim().is_empty())
    else {
        return;
    };
    let world = scenarios_dir().join(&name).join("world.yaml");
    assert!(
        world.is_file(),
        "MP_SCENARIO={name}: no {} (scenarios live in fixtures/scenarios/<name>/)",
        world.display()
    );
    insta::with_settings!({
        snapshot_suffix => format!("{name}/world.yaml"),
        input_file => &world,
    }, {
        check(&world);
    });
}

/// Every scenario directory has its world and README, and none went missing.
#[test]
fn every_scenario_directory_is_complete() {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(scenarios_dir()).expect("fixtures/scenarios is readable") {
        let entry = entry.expect("a directory entry is readable");
        let path = entry.path();
        if !path.is_dir() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        assert!(
            path.join("world.yaml").is_file(),
            "scenario {name} has no world.yaml"
        );
        readme(&path);
        names.push(name);
    }
    assert!(
        names.len() >= MIN_SCENARIOS,
        "only {} scenarios: {names:?}",
        names.len()
    );
}
