//! The published-verdict rule (`classifier_published_verdict`): the quadrant published in a
//! `classifier-judgment` check run by the canonical publisher App.
//!
//! Only runs named exactly `classifier-judgment` whose App slug equals the configured
//! publisher slug count; runs by anyone else are ignored, so a forged judgment can neither
//! raise nor lower the verdict. The quadrant is the first `Quadrant: X` line of a run's
//! output summary; several canonical runs give their maximum. Without a canonical,
//! parseable run the rule abstains (votes A with a reasoning starting `abstain:`).

use std::fmt;
use std::sync::LazyLock;

use regex::Regex;

use super::{RuleId, Vote};
use crate::context::CheckRun;
use crate::quadrant::Quadrant;

/// The name of the check run carrying a published verdict.
pub const CLASSIFIER_JUDGMENT_CHECK: &str = "classifier-judgment";

static QUADRANT_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?im)^\s*Quadrant:\s*([ABCD])\b").expect("valid quadrant-line regex")
});

/// Reads the quadrant of the first `Quadrant: X` line of a summary (key and letter are
/// case-insensitive, the letter is upper-cased; leading whitespace is allowed and the
/// letter must end a word).
pub fn parse_quadrant(summary: &str) -> Option<Quadrant> {
    let letter = QUADRANT_LINE.captures(summary)?.get(1)?.as_str();
    letter.to_ascii_uppercase().parse().ok()
}

/// What the published-verdict rule found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PublishedVerdict {
    /// A canonical run publishes a quadrant (the maximum when there are several).
    Published {
        /// The published quadrant.
        quadrant: Quadrant,
        /// The trusted publisher's App slug.
        publisher: String,
        /// Canonical `classifier-judgment` runs on the head.
        canonical_runs: usize,
        /// Of those, the runs whose summary had a `Quadrant: X` line.
        parsed_runs: usize,
    },
    /// No publisher slug is configured, so no run is trusted (abstain).
    NoPublisher,
    /// No `classifier-judgment` run by the publisher (abstain).
    NoCanonicalRun {
        /// The trusted publisher's App slug.
        publisher: String,
        /// `classifier-judgment` runs by other publishers, ignored.
        foreign_runs: usize,
    },
    /// Canonical runs exist but none has a `Quadrant: X` line (abstain).
    Unparseable {
        /// The trusted publisher's App slug.
        publisher: String,
        /// Canonical `classifier-judgment` runs on the head.
        canonical_runs: usize,
    },
}

impl PublishedVerdict {
    /// Stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Published { .. } => "published_verdict",
            Self::NoPublisher => "published_verdict_no_publisher",
            Self::NoCanonicalRun { .. } => "published_verdict_absent",
            Self::Unparseable { .. } => "published_verdict_unparseable",
        }
    }

    /// The quadrant this finding votes for: the published one, or A when abstaining.
    pub fn quadrant(&self) -> Quadrant {
        match self {
            Self::Published { quadrant, .. } => *quadrant,
            Self::NoPublisher | Self::NoCanonicalRun { .. } | Self::Unparseable { .. } => {
                Quadrant::A
            }
        }
    }

    /// Whether the rule abstains (no canonical, parseable judgment).
    pub fn abstains(&self) -> bool {
        !matches!(self, Self::Published { .. })
    }

    /// The `classifier_published_verdict` vote.
    pub fn vote(&self) -> Vote {
        Vote::new(RuleId::PublishedVerdict, self.quadrant(), self.to_string())
    }
}

impl fmt::Display for PublishedVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Published {
                quadrant,
                publisher,
                canonical_runs,
                parsed_runs,
            } => {
                write!(
                    f,
                    "{CLASSIFIER_JUDGMENT_CHECK} by {publisher} publishes Quadrant {quadrant}"
                )?;
                if *canonical_runs > 1 {
                    write!(
                        f,
                        " (maximum of {parsed_runs} parseable of {canonical_runs} runs)"
                    )?;
                }
                Ok(())
            }
            Self::NoPublisher => f.write_str("abstain: no classifier publisher is configured"),
            Self::NoCanonicalRun {
                publisher,
                foreign_runs,
            } => {
                write!(
                    f,
                    "abstain: no {CLASSIFIER_JUDGMENT_CHECK} check run by {publisher}"
                )?;
                if *foreign_runs > 0 {
                    write!(f, " ({foreign_runs} by other publishers ignored)")?;
                }
                Ok(())
            }
            Self::Unparseable {
                publisher,
                canonical_runs,
            } => write!(
                f,
                "abstain: {canonical_runs} {CLASSIFIER_JUDGMENT_CHECK} run(s) by {publisher} without a 'Quadrant: X' line in the summary"
            ),
        }
    }
}

/// Evaluates the published-verdict rule over the head's check runs. `publisher_slug` is
/// the trusted App slug; `None` or an empty slug trusts nobody.
pub fn evaluate(check_runs: &[CheckRun], publisher_slug: Option<&str>) -> PublishedVerdict {
    let Some(publisher) = publisher_slug.filter(|s| !s.is_empty()) else {
        return PublishedVerdict::NoPublisher;
    };
    let (canonical, foreign): (Vec<&CheckRun>, Vec<&CheckRun>) = check_runs
        .iter()
        .filter(|run| run.name == CLASSIFIER_JUDGMENT_CHECK)
        .partition(|run| run.app_slug.as_deref() == Some(publisher));
    if canonical.is_empty() {
        return PublishedVerdict::NoCanonicalRun {
            publisher: publisher.to_owned(),
            foreign_runs: foreign.len(),
        };
    }
    let parsed: Vec<Quadrant> = canonical
        .iter()
        .filter_map(|run| run.output_summary.as_deref().and_then(parse_quadrant))
        .collect();
    match parsed.iter().max() {
        Some(&quadrant) => PublishedVerdict::Published {
            quadrant,
            publisher: publisher.to_owned(),
            canonical_runs: canonical.len(),
            parsed_runs: parsed.len(),
        },
        None => PublishedVerdict::Unparseable {
            publisher: publisher.to_owned(),
            canonical_runs: canonical.len(),
        },
    }
}

#[cfg(test)]
mod tests;
