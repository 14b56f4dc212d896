//! `mp tick` and `mp explain` on world files: the demo, a dry run, and failing closed.

use predicates::prelude::*;

use crate::{mp, workspace_root};

fn demo() -> std::path::PathBuf {
    workspace_root().join("fixtures/worlds/demo.yaml")
}

#[test]
fn the_demo_tick_shows_every_kind_of_outcome() {
    mp().args(["tick", "--world"])
        .arg(demo())
        .assert()
        .success()
        .stdout(
            predicate::str::contains("merged")
                .and(predicate::str::contains("race-rebased"))
                .and(predicate::str::contains("approved by alice"))
                .and(predicate::str::contains("decision:break-glass-unaudited"))
                .and(predicate::str::contains("decision:post-merge-revalidation"))
                .and(predicate::str::contains("decision:mirror-drift-incident")),
        );
}

#[test]
fn a_dry_run_performs_no_write_and_lists_the_planned_ones() {
    let assert = mp()
        .args(["tick", "--dry-run", "--format", "json", "--world"])
        .arg(demo())
        .assert()
        .success();
    let doc: serde_json::Value = serde_json::from_slice(&assert.get_output().stdout).expect("json");
    let writes = doc["writes"].as_array().expect("writes");
    assert!(!writes.is_empty());
    assert!(writes.iter().all(|w| w["planned"] == true), "{writes:?}");
}

/// `mp tick --format json` over a world: the exit code, the write actions in order and
/// the outcomes (a tick that fails closed prints its reason on stderr instead).
fn tick_json(
    world: &std::path::Path,
    extra: &[&str],
) -> (Option<i32>, Vec<String>, serde_json::Value) {
    let output = mp()
        .args(["tick", "--format", "json", "--world"])
        .arg(world)
        .args(extra)
        .output()
        .expect("mp runs");
    let code = output.status.code();
    if code != Some(0) {
        // Why it failed, without what it says of its writes: a real run lists the ones it
        // made before it stopped, a dry run made none (its planned writes are compared
        // where the tick prints them).
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let why = [
            "; nothing was written",
            "; this dry run wrote nothing",
            " write(s) were made before it failed",
        ]
        .iter()
        .filter_map(|tail| stderr.find(tail))
        .min()
        .map_or(stderr.as_str(), |at| &stderr[..at]);
        let why = why
            .rsplit_once("; ")
            .filter(|(_, n)| n.parse::<u32>().is_ok())
            .map_or(why, |(head, _)| head);
        return (code, Vec::new(), serde_json::Value::String(why.to_owned()));
    }
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("json from {}", world.display()));
    // One tick prints one document; several print `ticks`.
    let runs = doc["ticks"]
        .as_array()
        .cloned()
        .unwrap_or_else(|| vec![doc]);
    let mut actions = Vec::new();
    let mut outcomes = Vec::new();
    for run in runs {
        for write in run["writes"].as_array().expect("writes") {
            let planned = write["planned"] == true;
            assert_eq!(planned, extra.contains(&"--dry-run"), "{write}");
            actions.push(write["action"].as_str().expect("an action").to_owned());
        }
        outcomes.push(run["outcomes"].clone());
    }
    (code, actions, serde_json::Value::Array(outcomes))
}

#[test]
fn a_dry_run_over_a_world_plans_exactly_the_writes_the_tick_makes() {
    let mut worlds = vec![demo(), workspace_root().join("fixtures/worlds/drift.yaml")];
    let scenarios = workspace_root().join("fixtures/scenarios");
    let mut names: Vec<_> = std::fs::read_dir(&scenarios)
        .expect("scenarios")
        .filter_map(|e| e.ok().map(|e| e.path().join("world.yaml")))
        .filter(|p| p.is_file())
        .collect();
    names.sort();
    worlds.extend(names);
    // Each world's four runs are separate processes: four worlds at a time.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let differences = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                while let Some(world) =
                    worlds.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                {
                    for adapter in ["memory", "rest"] {
                        let real = tick_json(world, &["--adapter", adapter]);
                        let dry = tick_json(world, &["--adapter", adapter, "--dry-run"]);
                        if dry != real {
                            differences.lock().expect("no panic holds it").push(format!(
                                "{} over {adapter}:\n  dry run: {dry:?}\n  tick:    {real:?}",
                                world.display()
                            ));
                        }
                    }
                }
            });
        }
    });
    let differences = differences.into_inner().expect("no panic holds it");
    assert!(differences.is_empty(), "{}", differences.join("\n"));
    // Three ticks: later ticks plan on what the earlier ones did, not on the world file.
    let real = tick_json(&demo(), &["--ticks", "3"]);
    let dry = tick_json(&demo(), &["--ticks", "3", "--dry-run"]);
    assert_eq!(dry, real);
    assert!(real.1.iter().filter(|a| *a == "merge_pull").count() >= 2);
}

#[test]
fn a_corrupt_state_file_fails_closed_with_exit_3_and_writes_nothing() {
    let text = std::fs::read_to_string(demo()).expect("demo");
    let start = text
        .find("        bot-state/branch_supervisor_watermarks.json: |")
        .expect("state file");
    let end = start
        + text[start..]
            .find("    issues:")
            .expect("issues after the state");
    let broken = format!(
        "{}        bot-state/branch_supervisor_watermarks.json: \"{{not json\"\n{}",
        &text[..start],
        &text[end..]
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let world = dir.path().join("world.yaml");
    std::fs::write(&world, broken).expect("write");
    let audit = dir.path().join("audit.jsonl");
    mp().args(["tick", "--world"])
        .arg(&world)
        .arg("--audit-log")
        .arg(&audit)
        .assert()
        .code(3)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains("fail"));
    assert!(
        !audit.exists(),
        "nothing may be written when the state is corrupt"
    );
}

#[test]
fn explain_names_every_failed_condition_and_vote() {
    mp().args(["explain", "--world"])
        .arg(demo())
        .arg("acme/webapp#4")
        .assert()
        .success()
        .stdout(
            predicate::str::contains("FAIL C1")
                .and(predicate::str::contains("pass C2"))
                .and(predicate::str::contains("classifier_path_default voted A")),
        );
}

#[test]
fn explain_lists_the_receipts_the_tick_would_write_first_in_text_and_json() {
    let text = mp()
        .args(["explain", "--world"])
        .arg(demo())
        .arg("acme/webapp#1")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(text).expect("utf-8");
    let listed: Vec<&str> = text
        .split("receipts the tick would write first:\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no receipts in\n{text}"))
        .lines()
        .map(str::trim)
        .collect();
    let json = mp()
        .args(["explain", "--format", "json", "--world"])
        .arg(demo())
        .arg("acme/webapp#1")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let doc: serde_json::Value = serde_json::from_slice(&json).expect("json");
    let receipts = doc["receipts"].as_array().expect("receipts");
    assert_eq!(receipts.len(), 1, "{doc}");
    assert_eq!(receipts[0]["label"], "ready-to-merge");
    assert_eq!(receipts[0]["decision"], "first_bind");
    assert_eq!(receipts[0]["head_sha"], doc["head_sha"]);
    let lines: Vec<&str> = receipts.iter().filter_map(|r| r["line"].as_str()).collect();
    assert_eq!(lines, listed);
}

/// `mp explain` in a repository in queue mode says where the pull request stands in the
/// merge queue, in the tick's words: its position and the queue's length, the agent cap
/// that holds it out, the running build (with its staging commit) that holds it, and the
/// build it failed alone in; the same in JSON under `queue`. A repository in direct mode
/// has no `queue` member.
#[test]
fn explain_shows_the_merge_queue_position_and_the_build_in_text_and_json() {
    let scenario = |name: &str| {
        crate::workspace_root()
            .join("fixtures/scenarios")
            .join(name)
            .join("world.yaml")
    };
    let text = |world: &std::path::Path, pr: &str| -> String {
        let out = mp()
            .args(["explain", "--world"])
            .arg(world)
            .arg(pr)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let out = String::from_utf8(out).expect("utf-8");
        out.lines()
            .find_map(|l| l.strip_prefix("merge queue: "))
            .unwrap_or_else(|| panic!("no merge queue line in\n{out}"))
            .to_owned()
    };
    let json = |world: &std::path::Path, pr: &str| -> serde_json::Value {
        let out = mp()
            .args(["explain", "--format", "json", "--world"])
            .arg(world)
            .arg(pr)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        serde_json::from_slice(&out).expect("one JSON document")
    };

    // No build yet: the owner's priority first, then agents in turn, the cap holds one out.
    let ordered = scenario("queue-candidates-ordered");
    assert_eq!(
        text(&ordered, "q/app#3"),
        "queued at position 1 of 2 (queue_position)"
    );
    assert_eq!(
        text(&ordered, "q/app#1"),
        "queued at position 2 of 2 (queue_position)"
    );
    assert_eq!(
        text(&ordered, "q/app#2"),
        "held out of the merge queue (queue_agent_cap): its agent already has 1 pull request(s) in the queue (max_queued_per_agent)"
    );
    let held = json(&ordered, "q/app#2");
    assert_eq!(held["queue"]["code"], "queue_agent_cap", "{held}");
    assert_eq!(held["queue"]["position"], serde_json::Value::Null, "{held}");

    // A build runs (the queue's state file names it): the position and the build.
    let building = scenario("attack-queue-check-from-other-app");
    assert_eq!(
        text(&building, "q/app#1"),
        "queued at position 1 of 2 (queue_position), in build 1 at staging commit 325bb49"
    );
    let doc = json(&building, "q/app#2");
    assert_eq!(doc["queue"]["code"], "queue_position", "{doc}");
    assert_eq!(
        doc["queue"]["detail"],
        "queued at position 2 of 2 (queue_position), in build 1 at staging commit 325bb49",
        "{doc}"
    );
    assert_eq!(
        (
            doc["queue"]["position"].as_u64(),
            doc["queue"]["of"].as_u64()
        ),
        (Some(2), Some(2)),
        "{doc}"
    );
    assert_eq!(doc["queue"]["build"]["id"], 1, "{doc}");
    assert!(
        doc["queue"]["build"]["staging_commit"]
            .as_str()
            .is_some_and(|sha| sha.starts_with("325bb49")),
        "{doc}"
    );

    // #2 failed alone in that build (the state file says so): it left the queue, with the
    // build and the failing check, and no longer counts in #1's position.
    let dir = tempfile::tempdir().expect("a temp dir");
    let ejected = dir.path().join("world.yaml");
    let world = std::fs::read_to_string(&building).expect("the world reads");
    let replaced = world.replace(
        "\"ejected\": []",
        "\"ejected\": [{\"pr\": 2, \"head\": \"e2dc76d3f5c5ae361390f8600cebc65ff541e7b2\", \"build\": \"build 1 of #1, #2 on b995a6c\", \"failing\": [\"check 'test' failed with conclusion failure\"]}]",
    );
    assert_ne!(
        replaced, world,
        "the state file lists no ejected entry to replace"
    );
    std::fs::write(&ejected, replaced).expect("the world writes");
    assert_eq!(
        text(&ejected, "q/app#2"),
        "left the merge queue (queue_ejected): head e2dc76d failed alone in build 1 of #1, #2 on b995a6c: check 'test' failed with conclusion failure"
    );
    assert_eq!(json(&ejected, "q/app#2")["queue"]["code"], "queue_ejected");
    assert_eq!(
        text(&ejected, "q/app#1"),
        "queued at position 1 of 1 (queue_position), in build 1 at staging commit 325bb49"
    );

    // A repository in direct mode: no queue in the answer.
    let direct = json(&demo(), "acme/webapp#1");
    assert!(direct.get("queue").is_none(), "{direct}");
}

/// `mp explain` judges a pull request against the branch its repository gates, as the
/// tick does: into `master`, where `master` is the default branch, it is mergeable.
#[test]
fn explain_follows_the_repository_s_default_branch() {
    mp().args(["explain", "--world"])
        .arg(
            crate::workspace_root()
                .join("fixtures/scenarios/github-default-branch-master/world.yaml"),
        )
        .arg("acme/app#1")
        .assert()
        .success()
        .stdout(predicate::str::contains("route: mergeable"));
}

#[test]
fn explain_refuses_a_bad_reference() {
    mp().args(["explain", "--world"])
        .arg(demo())
        .arg("acme/webapp")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("OWNER/REPO#N"));
}

#[test]
fn the_markdown_report_summarises_each_repository_and_appends_to_a_file() {
    let assert = mp()
        .args(["tick", "--report", "md", "--world"])
        .arg(demo())
        .assert()
        .success();
    let md = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert!(md.starts_with("## mp tick at "), "{md}");
    assert!(
        md.contains("| `acme/webapp` | 1 | 0 | 1 | 0 | 3 | 0 | 0 |"),
        "{md}"
    );
    assert!(
        md.contains("- **#3 blocked** (Quadrant B)")
            && md.contains("  - C2: check 'test' did not succeed"),
        "{md}"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let summary = dir.path().join("summary.md");
    for _ in 0..2 {
        mp().args(["tick", "--world"])
            .arg(demo())
            .arg("--report-file")
            .arg(&summary)
            .assert()
            .success()
            .stdout(predicate::str::contains("writes, in order:"));
    }
    let text = std::fs::read_to_string(&summary).expect("the summary file");
    assert_eq!(text.matches("## mp tick at ").count(), 2, "appended twice");
    assert_eq!(text, format!("{md}{md}"));
}

#[test]
fn json_logs_are_one_object_per_line_with_each_phase_and_repository() {
    let demo = crate::workspace_root().join("fixtures/worlds/demo.yaml");
    let output = mp()
        .args(["--log-format", "json", "tick", "--world"])
        .arg(&demo)
        .env_remove("MP_LOG")
        .output()
        .expect("runs");
    assert!(output.status.success(), "{output:?}");
    assert!(
        String::from_utf8_lossy(&output.stdout).starts_with("tick at "),
        "the report stays on stdout"
    );
    let events: Vec<serde_json::Value> = String::from_utf8_lossy(&output.stderr)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}")))
        .collect();
    for event in &events {
        assert!(
            event["timestamp"].is_string()
                && event["level"].is_string()
                && event["target"].is_string()
        );
    }
    let messages: Vec<String> = events
        .iter()
        .filter(|e| e["fields"]["message"] != "tick warning")
        .map(|e| {
            let f = &e["fields"];
            match f["message"].as_str() {
                Some("tick phase") => format!("phase {}", f["phase"].as_str().unwrap_or("?")),
                Some("repository done") => format!(
                    "{} {}",
                    f["phase"].as_str().unwrap_or("?"),
                    f["repo"].as_str().unwrap_or("?")
                ),
                Some(other) => other.to_owned(),
                None => "?".to_owned(),
            }
        })
        .collect();
    assert_eq!(
        messages,
        [
            "phase inbox",
            "phase pull_requests",
            "pull_requests acme/webapp",
            "pull_requests acme/infra",
            "phase supervisor",
            "supervisor acme/webapp",
            "supervisor acme/infra",
            "phase drift",
            "tick finished",
        ]
    );
    let finished = events
        .iter()
        .find(|e| e["fields"]["message"] == "tick finished")
        .expect("a summary event");
    assert!(finished["fields"]["merged"].as_u64().is_some_and(|n| n > 0));
}

#[test]
fn text_logs_are_off_by_default_and_no_bar_is_drawn_off_a_terminal() {
    let demo = crate::workspace_root().join("fixtures/worlds/demo.yaml");
    mp().args(["tick", "--world"])
        .arg(&demo)
        .env_remove("MP_LOG")
        .assert()
        .success()
        .stderr("");
}
