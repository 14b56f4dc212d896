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
/// exactly one built-in of the right kind, and every built-in is one of them.
#[test]
fn the_built_in_catalog_lists_exactly_the_components_the_tick_runs() {
    use crate::gate::ConditionId;
    use crate::skill::builtin::{BUILT_IN_SKILLS, BuiltIn, built_in};

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
            "hook_hallucination_guard",
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
    let mut listed: Vec<BuiltIn> = BUILT_IN_SKILLS.iter().map(|s| s.id).collect();
    listed.sort();
    assert_eq!(
        listed,
        BuiltIn::ALL,
        "the catalog lists every built-in once"
    );
    for condition in &conditions {
        let built_in = condition.built_in().expect("a built-in condition");
        assert_eq!(built_in.condition().as_ref(), Some(condition));
    }
    for rule in &RuleId::BUILT_IN {
        let built_in = rule.built_in().expect("a built-in rule");
        assert_eq!(built_in.rule().as_ref(), Some(rule));
    }
}

/// The name lists of `config::skills` are the built-ins' properties, and the names read
/// back to the built-in.
#[test]
fn the_skill_lists_are_derived_from_the_built_ins() {
    use crate::config::skills::{CORE_L1_VALIDATORS, DISABLEABLE_BUILTINS, REQUIRED_SKILLS};
    use crate::skill::builtin::BuiltIn;
    assert_eq!(
        REQUIRED_SKILLS,
        [
            "validator_ready_to_merge",
            "validator_ci_green",
            "validator_owner_approval",
            "validator_base_up_to_date",
            "validator_trailers",
            "validator_classifier_publisher",
            "classifier_bot_self_repo",
            "hook_break_glass_audit",
            "hook_unauthorized_push",
        ]
    );
    assert_eq!(CORE_L1_VALIDATORS, REQUIRED_SKILLS[..6]);
    assert_eq!(
        DISABLEABLE_BUILTINS,
        [
            "validator_agent_registry",
            "classifier_path_default",
            "classifier_empty_pr",
            "classifier_auto_revert",
            "classifier_published_verdict",
            "classifier_malformed_session",
            "hook_hallucination_guard",
        ]
    );
    for built_in in BuiltIn::ALL {
        assert_eq!(BuiltIn::from_name(built_in.name()), Some(built_in));
        assert_eq!(
            REQUIRED_SKILLS.contains(&built_in.name()),
            built_in.required()
        );
        assert_ne!(
            REQUIRED_SKILLS.contains(&built_in.name()),
            DISABLEABLE_BUILTINS.contains(&built_in.name())
        );
    }
    assert_eq!(BuiltIn::from_name("my_user_skill"), None);
}

/// The set of enabled built-ins keeps the required ones whatever is taken out of it.
#[test]
fn the_enabled_set_keeps_the_required_built_ins() {
    use crate::skill::builtin::{BuiltIn, EnabledBuiltIns};
    let all = EnabledBuiltIns::default();
    assert_eq!(all, EnabledBuiltIns::ALL);
    assert_eq!(all.iter().collect::<Vec<_>>(), BuiltIn::ALL);
    let fewer = BuiltIn::ALL.into_iter().fold(all, EnabledBuiltIns::without);
    let kept: Vec<BuiltIn> = fewer.iter().collect();
    let required: Vec<BuiltIn> = BuiltIn::ALL.into_iter().filter(|b| b.required()).collect();
    assert_eq!(kept, required);
    assert!(!fewer.contains(BuiltIn::EmptyPr));
    assert!(fewer.contains(BuiltIn::CiGreen));
}

#[test]
fn a_disabled_built_in_does_not_run_and_a_required_one_always_does() {
    let policy = crate::config::SkillsPolicy::default();
    assert!(policy.built_ins().contains(BuiltIn::EmptyPr));
    assert!(policy.built_ins().contains(BuiltIn::HallucinationGuard));
    let policy = policy
        .with_disabled("classifier_empty_pr")
        .with_disabled("hook_hallucination_guard")
        .with_disabled("validator_ci_green");
    let runs = policy.built_ins();
    assert!(!runs.contains(BuiltIn::EmptyPr));
    assert!(!runs.contains(BuiltIn::HallucinationGuard));
    assert!(runs.contains(BuiltIn::CiGreen), "required");
    assert!(runs.contains(BuiltIn::PathDefault));
}
