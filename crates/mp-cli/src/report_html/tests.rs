//! Unit tests of the audit-log reader and the page: ticks, ages, malformed lines, escaping.

use super::*;

/// Parses `lines` and checks what the log folds into: (tick instants with their quadrant
/// counts, malformed line numbers, inbox ages in hours).
#[track_caller]
fn check(lines: &[&str], ticks: &[(&str, [u64; 4])], malformed: &[usize], ages: &[f64]) {
    let log = parse(&lines.join("\n"));
    let got: Vec<(&str, [u64; 4])> = log
        .ticks
        .iter()
        .map(|t| (t.ts.as_str(), t.quadrants))
        .collect();
    assert_eq!(got, ticks);
    let lines: Vec<usize> = log.malformed.iter().map(|(line, _)| *line).collect();
    assert_eq!(lines, malformed);
    let got: Vec<f64> = inbox_ages(&log).iter().map(|a| a.age_hours).collect();
    assert_eq!(got, ages);
}

const T1: &str = r#"{"ts":"2026-11-29T12:00:00Z","record":"tick","quadrants":{"A":2,"B":0,"C":0,"D":1},"repos":[],"inbox":[{"pr":"acme/infra#7","issue":null,"state":"routed"}],"api_calls":80}"#;
const T2: &str = r#"{"ts":"2026-11-29T15:30:00Z","record":"tick","quadrants":{"A":1,"B":0,"C":0,"D":1},"repos":[],"inbox":[{"pr":"acme/infra#7","issue":"acme/governance#2","state":"no_verdict"},{"pr":"acme/infra#9","issue":null,"state":"routed"}],"api_calls":60}"#;
const CLASSIFIED_D: &str =
    r#"{"ts":"2026-11-29T10:00:00Z","pr":"acme/infra#7","quadrant":"D","votes":[]}"#;

#[test]
fn tick_records_make_the_timeline_and_age_the_inbox_items() {
    check(
        &[T2, T1],
        &[
            ("2026-11-29T12:00:00Z", [2, 0, 0, 1]),
            ("2026-11-29T15:30:00Z", [1, 0, 0, 1]),
        ],
        &[],
        &[3.5, 0.0],
    );
}

#[test]
fn classification_records_without_a_tick_record_make_a_partial_tick() {
    check(
        &[CLASSIFIED_D, CLASSIFIED_D, T1],
        &[
            ("2026-11-29T10:00:00Z", [0, 0, 0, 2]),
            ("2026-11-29T12:00:00Z", [2, 0, 0, 1]),
        ],
        &[],
        &[0.0],
    );
}

#[test]
fn malformed_lines_are_skipped_and_counted() {
    check(
        &[
            "{not json",
            "",
            "[1,2]",
            r#"{"ts":"yesterday","record":"tick"}"#,
            r#"{"ts":"2026-11-29T10:00:00Z","pr":"acme/app#1","quadrant":"E"}"#,
            T1,
        ],
        &[("2026-11-29T12:00:00Z", [2, 0, 0, 1])],
        &[1, 3, 4, 5],
        &[0.0],
    );
}

#[test]
fn an_empty_log_renders_a_page_saying_there_is_no_data() {
    let page = render(&parse(""), "mp report");
    assert!(page.contains("id=\"no-data\""), "{page}");
    assert!(!page.contains("chart-quadrants"), "{page}");
}

#[test]
fn strings_from_the_log_are_escaped_in_the_page() {
    let line = r#"{"ts":"2026-11-29T12:00:00Z","record":"tick","repos":[{"repo":"</script><img src=x onerror=alert(1)>","merged":1}],"inbox":[],"api_calls":1}"#;
    let page = render(
        &parse(&format!("{line}\n{{bad <b>line</b>")),
        "<i>title</i>",
    );
    assert!(!page.contains("<img"), "{page}");
    assert!(!page.contains("<b>"), "{page}");
    assert!(!page.contains("<i>title"), "{page}");
    assert!(page.contains("&lt;i&gt;title&lt;/i&gt;"), "{page}");
    assert_eq!(page.matches("</script>").count(), 2, "{page}");
}
