//! Tests of the skill verdict and failure values.

use super::*;

#[track_caller]
fn check(failure: SkillFailure, code: &str, retryable: bool, line: &str) {
    assert_eq!(failure.code(), code);
    assert_eq!(failure.retryable(), retryable);
    assert_eq!(failure.counts_as_pass(), code == "skill_timeout");
    assert_eq!(failure.to_string(), line);
}

#[test]
fn timeout_is_retryable() {
    check(
        SkillFailure::new(
            "no_todos_in_prod",
            FailureStage::Run,
            FailureCause::Timeout {
                fuel: 1_000,
                budget_ms: None,
            },
        ),
        "skill_timeout",
        true,
        "skill no_todos_in_prod failed at run (skill_timeout, retryable): ran out of its budget of 1000 fuel",
    );
}

#[test]
fn network_import_is_fatal() {
    check(
        SkillFailure::new(
            "fetcher",
            FailureStage::Load,
            FailureCause::ImportsNetwork {
                module: "wasi_sockets".into(),
                field: "connect".into(),
            },
        ),
        "skill_imports_network",
        false,
        "skill fetcher failed at load (skill_imports_network, fatal): imports network access `wasi_sockets.connect`",
    );
}

#[test]
fn malformed_verdict_needs_a_user_report() {
    let failure = SkillFailure::new(
        "x",
        FailureStage::Output,
        FailureCause::MalformedVerdict {
            detail: "missing field `passed`".into(),
        },
    );
    assert_eq!(failure.class(), FailureClass::NeedsUserReport);
    check(
        failure,
        "skill_malformed_verdict",
        false,
        "skill x failed at output (skill_malformed_verdict, needs_user_report): answered a malformed verdict: missing field `passed`",
    );
}

#[test]
fn verdict_values_render_one_line() {
    assert_eq!(
        ValidationResult::fail("commit 1a2b3c4 subject contains TODO").to_string(),
        "fail: commit 1a2b3c4 subject contains TODO"
    );
    assert_eq!(ValidationResult::Pass.failure_reason(), None);
    let vote =
        ClassifierVote::new(Quadrant::D, "touches infra").into_vote(RuleId::User("infra".into()));
    assert_eq!(vote.to_string(), "infra voted D: touches infra");
    assert_eq!(
        HookResult::incident("decision:x", "body").to_string(),
        "incident decision:x"
    );
    assert!(!HookResult::none().is_incident());
    assert_eq!(SkillKind::ClassifierRule.folder(), "classifier");
}

/// Every runtime component of the tick (gate condition, classifier rule, branch hook) has
/// exactly one catalog entry of the right kind, and every catalog entry is one of them.
#[test]
fn the_built_in_catalog_lists_exactly_the_components_the_tick_runs() {
    use crate::gate::ConditionId;
    use crate::skill::builtin::{BUILT_IN_SKILLS, HALLUCINATION_GUARD, built_in};

    let conditions = [
        ConditionId::C1,
        ConditionId::C2,
        ConditionId::C3,
        ConditionId::C4,
        ConditionId::C5,
        ConditionId::ClassifierPublisher,
        ConditionId::AgentRegistry,
    ];
    let mut runtime: Vec<(String, SkillKind)> = conditions
        .iter()
        .map(|c| (c.validator_name().to_owned(), SkillKind::Validator))
        .collect();
    runtime.extend(
        RuleId::BUILT_IN
            .iter()
            .map(|r| (r.code().to_owned(), SkillKind::ClassifierRule)),
    );
    runtime.extend(
        [
            "hook_break_glass_audit",
            HALLUCINATION_GUARD,
            "hook_unauthorized_push",
        ]
        .map(|h| (h.to_owned(), SkillKind::BranchHook)),
    );
    for (name, kind) in &runtime {
        let entry = built_in(name).unwrap_or_else(|| panic!("{name} is not in the catalog"));
        assert_eq!(entry.kind, *kind, "{name}");
    }
    let mut catalog: Vec<(String, SkillKind)> = BUILT_IN_SKILLS
        .iter()
        .map(|s| (s.name.to_owned(), s.kind))
        .collect();
    catalog.sort_by(|a, b| a.0.cmp(&b.0));
    runtime.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(catalog, runtime);
    for required in crate::config::skills::REQUIRED_SKILLS {
        assert!(
            built_in(required).is_some_and(|s| s.required()),
            "{required}"
        );
    }
}

#[test]
fn a_disabled_built_in_does_not_run_and_a_required_one_always_does() {
    use crate::skill::builtin::runs;
    let policy = crate::config::SkillsPolicy::default();
    assert!(runs("classifier_empty_pr", &policy));
    assert!(runs("not_in_the_catalog", &policy), "fail safe");
    let policy = policy
        .with_disabled("classifier_empty_pr")
        .with_disabled("validator_ci_green");
    assert!(!runs("classifier_empty_pr", &policy));
    assert!(runs("validator_ci_green", &policy), "required");
    assert!(runs("classifier_path_default", &policy));
}
