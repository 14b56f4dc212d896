//! The classifier-publisher gate: every `classifier-judgment` check run must come from the
//! canonical publisher app. A forged judgment blocks the pull request; no judgment passes.

use super::{
    CLASSIFIER_JUDGMENT, CORE_SEVERITY, ConditionId, ConditionResult, Evidence, GatePolicy,
};
use crate::context::PrContext;

/// Evaluates the publisher gate against `policy.classifier_publisher_slug`: one failure
/// per distinct offending publisher (a run without an app fails too).
pub fn evaluate(pr: &PrContext, policy: &GatePolicy) -> Vec<ConditionResult> {
    let id = ConditionId::ClassifierPublisher;
    let expected = policy.classifier_publisher_slug.as_str();
    let judgments: Vec<_> = pr
        .check_runs
        .iter()
        .filter(|r| r.name == CLASSIFIER_JUDGMENT)
        .collect();
    let mut offenders: Vec<Option<&str>> = Vec::new();
    for run in &judgments {
        let seen = run.app_slug.as_deref();
        if seen != Some(expected) && !offenders.contains(&seen) {
            offenders.push(seen);
        }
    }
    if !offenders.is_empty() {
        return offenders
            .into_iter()
            .map(|seen| {
                ConditionResult::fail(
                    id.clone(),
                    CORE_SEVERITY,
                    Evidence::PublisherMismatch {
                        check: CLASSIFIER_JUDGMENT.to_owned(),
                        expected: expected.to_owned(),
                        seen: seen.map(str::to_owned),
                    },
                )
            })
            .collect();
    }
    let evidence = if judgments.is_empty() {
        Evidence::NoJudgment
    } else {
        Evidence::JudgmentsCanonical {
            runs: judgments.len(),
        }
    };
    vec![ConditionResult::pass(id, CORE_SEVERITY, evidence)]
}

#[cfg(test)]
mod tests;
