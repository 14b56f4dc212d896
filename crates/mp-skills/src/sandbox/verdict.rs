//! Decoding a skill's answer (JSON) into a verdict value; anything off-shape is
//! `skill_malformed_verdict` with the reason.

use mp_core::quadrant::Quadrant;
use mp_core::skill::{ClassifierVote, FailureCause, HookResult, ValidationResult};
use serde::Deserialize;

/// `{"passed": bool, "failure_reason": string|null}`; a failure needs a non-empty reason.
///
/// # Errors
/// A [`FailureCause::MalformedVerdict`] naming what is wrong.
pub fn parse_validation_result(bytes: &[u8]) -> Result<ValidationResult, FailureCause> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Raw {
        passed: bool,
        #[serde(default)]
        failure_reason: Option<String>,
    }
    let raw: Raw = decode(bytes)?;
    match (raw.passed, raw.failure_reason) {
        (true, _) => Ok(ValidationResult::Pass),
        (false, Some(reason)) if !reason.trim().is_empty() => Ok(ValidationResult::fail(
            reason.lines().next().unwrap_or_default().to_owned(),
        )),
        (false, _) => Err(malformed(
            "`passed` is false but `failure_reason` is missing or empty",
        )),
    }
}

/// `{"quadrant": "A"|"B"|"C"|"D", "reasoning": string}`.
///
/// # Errors
/// A [`FailureCause::MalformedVerdict`] naming what is wrong.
pub fn parse_classifier_vote(bytes: &[u8]) -> Result<ClassifierVote, FailureCause> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Raw {
        quadrant: String,
        reasoning: String,
    }
    let raw: Raw = decode(bytes)?;
    let quadrant: Quadrant = raw.quadrant.parse().map_err(|_| {
        malformed(format!(
            "unknown quadrant `{}`, expected A, B, C or D",
            shorten(&raw.quadrant)
        ))
    })?;
    Ok(ClassifierVote::new(quadrant, raw.reasoning))
}

/// `{"incident_label": string|null, "incident_body": string|null}`; a body without a
/// label is refused.
///
/// # Errors
/// A [`FailureCause::MalformedVerdict`] naming what is wrong.
pub fn parse_hook_result(bytes: &[u8]) -> Result<HookResult, FailureCause> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Raw {
        #[serde(default)]
        incident_label: Option<String>,
        #[serde(default)]
        incident_body: Option<String>,
    }
    let raw: Raw = decode(bytes)?;
    match (raw.incident_label, raw.incident_body) {
        (None, Some(_)) => Err(malformed("`incident_body` without `incident_label`")),
        (Some(label), _) if label.trim().is_empty() => Err(malformed("`incident_label` is empty")),
        (label, body) => Ok(HookResult {
            incident_label: label,
            incident_body: body,
        }),
    }
}

fn decode<T: for<'de> Deserialize<'de>>(bytes: &[u8]) -> Result<T, FailureCause> {
    serde_json::from_slice(bytes).map_err(|e| malformed(e.to_string()))
}

fn malformed(detail: impl Into<String>) -> FailureCause {
    FailureCause::MalformedVerdict {
        detail: detail.into(),
    }
}

fn shorten(text: &str) -> String {
    text.chars().take(40).collect()
}
