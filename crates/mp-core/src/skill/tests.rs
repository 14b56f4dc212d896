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
            FailureCause::Timeout { fuel: 1_000 },
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
