//! Tests for the L4 registry check.

use std::collections::BTreeMap;

use super::*;
use crate::context::CommitContext;
use crate::gate::testkit::{Pr, commit, good_commit, lines, policy};
use crate::registry::AgentRegistry;
use crate::severity::Severity;

fn registry() -> AgentRegistry {
    let mut models = BTreeMap::new();
    models.insert("claude-code".to_owned(), vec!["*".to_owned()]);
    models.insert("manual".to_owned(), vec!["n/a".to_owned()]);
    AgentRegistry::new(vec!["claude-code".into(), "manual".into()], models)
}

fn with_registry(severity: Severity) -> GatePolicy {
    let mut policy = policy();
    policy.registry = Some(registry());
    policy.registry_severity = severity;
    policy
}

#[track_caller]
fn check(commits: Vec<CommitContext>, policy: &GatePolicy, expected: &[&str]) {
    let pr = Pr::new().commits(commits).build();
    assert_eq!(lines(&evaluate(&pr, policy)), expected);
}

fn declaring(sha: &str, tool: &str, model: &str) -> CommitContext {
    commit(
        sha,
        &format!(
            "x\n\nAgent-Tool: {tool}\nAgent-Model: {model}\nAgent-Session: s_abcd\nAgent-Machine: m\nTask-Ref: none"
        ),
    )
}

#[test]
fn no_registry_is_a_pass() {
    check(
        vec![declaring("1", "cursor", "gpt-5")],
        &policy(),
        &["pass | L4: no agent registry configured"],
    );
}

#[test]
fn registered_pairs_pass() {
    check(
        vec![good_commit("1"), declaring("2", "manual", "n/a")],
        &with_registry(Severity::P2),
        &["pass | L4: declared agent tools and models are registered on 2 commits"],
    );
}

#[test]
fn advisory_mismatches_are_warnings_not_blocks() {
    let policy = with_registry(Severity::P2);
    let pr = Pr::new()
        .commits(vec![
            declaring("1", "cursor", "gpt-5"),
            declaring("2", "manual", "gpt-5"),
        ])
        .build();
    let results = evaluate(&pr, &policy);
    assert_eq!(
        lines(&results),
        [
            "advisory P2 | L4: commit 1000000 declares Agent-Tool 'cursor' / Agent-Model 'gpt-5', not present in the agent registry",
            "advisory P2 | L4: commit 2000000 declares Agent-Tool 'manual' / Agent-Model 'gpt-5', not present in the agent registry",
        ]
    );
    assert!(results.iter().all(|r| r.is_warning() && !r.is_blocking()));
}

#[test]
fn promoted_mismatches_block() {
    check(
        vec![declaring("1", "cursor", "gpt-5")],
        &with_registry(Severity::P0),
        &[
            "fail | L4: commit 1000000 declares Agent-Tool 'cursor' / Agent-Model 'gpt-5', not present in the agent registry",
        ],
    );
}

#[test]
fn a_missing_model_is_checked_as_empty() {
    check(
        vec![commit("1", "x\n\nAgent-Tool: manual\nTask-Ref: none")],
        &with_registry(Severity::P2),
        &[
            "advisory P2 | L4: commit 1000000 declares Agent-Tool 'manual' / Agent-Model '', not present in the agent registry",
        ],
    );
}

#[test]
fn commits_without_a_tool_are_left_to_c5() {
    check(
        vec![
            commit("1", "x\n\nAgent-Tool:\nAgent-Model: gpt-5"),
            commit("2", "no trailers"),
        ],
        &with_registry(Severity::P0),
        &["pass | L4: declared agent tools and models are registered on 2 commits"],
    );
}
