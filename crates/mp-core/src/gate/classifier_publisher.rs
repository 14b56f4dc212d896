//! The classifier-publisher gate: every `classifier-judgment` check run must come from the
//! canonical publisher app. A forged judgment blocks the pull request; no judgment passes.

use std::fmt;

use super::{
    CLASSIFIER_JUDGMENT, CORE_SEVERITY, ConditionId, ConditionResult, GatePolicy, MISSING_APP,
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
                    PublisherEvidence::PublisherMismatch {
                        check: CLASSIFIER_JUDGMENT.to_owned(),
                        expected: expected.to_owned(),
                        seen: seen.map(str::to_owned),
                    },
                )
            })
            .collect();
    }
    let evidence = if judgments.is_empty() {
        PublisherEvidence::NoJudgment
    } else {
        PublisherEvidence::JudgmentsCanonical {
            runs: judgments.len(),
        }
    };
    vec![ConditionResult::pass(id, CORE_SEVERITY, evidence)]
}

/// What the publisher gate rests on: the `classifier-judgment` runs and who published them.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PublisherEvidence {
    /// The publisher gate holds: there is no `classifier-judgment` run.
    NoJudgment,
    /// The publisher gate holds: every `classifier-judgment` run comes from the canonical app.
    JudgmentsCanonical {
        /// How many runs were inspected.
        runs: usize,
    },
    /// A `classifier-judgment` run was published by another app (or none).
    PublisherMismatch {
        /// The check-run name.
        check: String,
        /// The canonical publisher slug.
        expected: String,
        /// The slug that published it, if any.
        seen: Option<String>,
    },
}

impl PublisherEvidence {
    /// Stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::NoJudgment => "no_judgment",
            Self::JudgmentsCanonical { .. } => "judgments_canonical",
            Self::PublisherMismatch { .. } => "publisher_mismatch",
        }
    }
}

impl fmt::Display for PublisherEvidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoJudgment => write!(f, "no '{CLASSIFIER_JUDGMENT}' check run"),
            Self::JudgmentsCanonical { runs } => write!(
                f,
                "all {runs} '{CLASSIFIER_JUDGMENT}' check runs come from the canonical publisher"
            ),
            Self::PublisherMismatch {
                check,
                expected,
                seen,
            } => write!(
                f,
                "check run '{check}' was published by '{}', not the canonical publisher '{expected}'",
                seen.as_deref().unwrap_or(MISSING_APP)
            ),
        }
    }
}

#[cfg(test)]
mod tests;
