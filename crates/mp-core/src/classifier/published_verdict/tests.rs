//! Tests for the published-verdict rule.

use super::*;
use crate::classifier::test_support::check_run;

const SLUG: &str = "mp-classifier";

fn judgment(slug: Option<&str>, summary: Option<&str>) -> CheckRun {
    check_run(CLASSIFIER_JUDGMENT_CHECK, slug, summary)
}

#[track_caller]
fn check(runs: &[CheckRun], publisher: Option<&str>, expected: &str) {
    let finding = evaluate(runs, publisher);
    let vote = finding.vote();
    assert_eq!(vote.to_string(), expected, "{finding:?}");
    // Abstaining is exactly voting A with an `abstain:` reasoning.
    assert_eq!(finding.abstains(), vote.reasoning.starts_with("abstain:"));
    if finding.abstains() {
        assert_eq!(vote.quadrant, Quadrant::A);
    }
}

#[test]
fn canonical_run_publishes_its_quadrant() {
    check(
        &[judgment(
            Some(SLUG),
            Some("Quadrant: D\nReason: deletes src/x.rs"),
        )],
        Some(SLUG),
        "classifier_published_verdict voted D: classifier-judgment by mp-classifier publishes Quadrant D",
    );
}

#[test]
fn key_and_letter_are_case_insensitive_and_may_be_indented() {
    check(
        &[judgment(
            Some(SLUG),
            Some("Summary\n   quadrant:   b (reversible)"),
        )],
        Some(SLUG),
        "classifier_published_verdict voted B: classifier-judgment by mp-classifier publishes Quadrant B",
    );
}

#[test]
fn several_canonical_runs_give_the_maximum() {
    check(
        &[
            judgment(Some(SLUG), Some("Quadrant: D")),
            judgment(Some(SLUG), Some("Quadrant: A")),
            judgment(Some(SLUG), Some("no marker")),
        ],
        Some(SLUG),
        "classifier_published_verdict voted D: classifier-judgment by mp-classifier publishes Quadrant D (maximum of 2 parseable of 3 runs)",
    );
}

#[test]
fn forged_publisher_is_ignored() {
    check(
        &[
            judgment(Some("github-actions"), Some("Quadrant: D")),
            judgment(None, Some("Quadrant: D")),
        ],
        Some(SLUG),
        "classifier_published_verdict voted A: abstain: no classifier-judgment check run by mp-classifier (2 by other publishers ignored)",
    );
}

#[test]
fn forged_low_verdict_does_not_lower_a_canonical_one() {
    check(
        &[
            judgment(Some("intruder"), Some("Quadrant: A")),
            judgment(Some(SLUG), Some("Quadrant: C")),
        ],
        Some(SLUG),
        "classifier_published_verdict voted C: classifier-judgment by mp-classifier publishes Quadrant C",
    );
}

#[test]
fn other_check_names_are_ignored() {
    check(
        &[
            check_run("classifier-judgment-v2", Some(SLUG), Some("Quadrant: D")),
            check_run("Classifier-Judgment", Some(SLUG), Some("Quadrant: D")),
        ],
        Some(SLUG),
        "classifier_published_verdict voted A: abstain: no classifier-judgment check run by mp-classifier",
    );
}

#[test]
fn no_publisher_configured_abstains() {
    check(
        &[judgment(Some(SLUG), Some("Quadrant: D"))],
        None,
        "classifier_published_verdict voted A: abstain: no classifier publisher is configured",
    );
    check(
        &[judgment(Some(""), Some("Quadrant: D"))],
        Some(""),
        "classifier_published_verdict voted A: abstain: no classifier publisher is configured",
    );
}

#[test]
fn unparseable_summaries_abstain() {
    check(
        &[
            judgment(Some(SLUG), Some("Quadrant: E")),
            judgment(Some(SLUG), Some("Quadrant: Dx")),
            judgment(Some(SLUG), Some("The Quadrant: D is mentioned mid-line")),
            judgment(Some(SLUG), None),
        ],
        Some(SLUG),
        "classifier_published_verdict voted A: abstain: 4 classifier-judgment run(s) by mp-classifier without a 'Quadrant: X' line in the summary",
    );
}

#[test]
fn parse_reads_the_first_marker_line() {
    let cases = [
        ("Quadrant: C\nQuadrant: D", Some(Quadrant::C)),
        ("\tQUADRANT:d", Some(Quadrant::D)),
        ("Quadrant: B.", Some(Quadrant::B)),
        ("Quadrant: A\r\n", Some(Quadrant::A)),
        ("x Quadrant: D", None),
        ("Quadrant D", None),
        ("", None),
    ];
    for (summary, expected) in cases {
        assert_eq!(parse_quadrant(summary), expected, "summary {summary:?}");
    }
}
