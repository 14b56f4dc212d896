//! Unit tests of the audit-log reader and the page: ticks, ages, malformed lines, escaping,
//! and the Agents page.

use mp_core::agent::AgentKey;

use super::*;

/// The agents view of `text`, by tool, as `mp report` folds it.
fn agents_of(text: &str) -> AgentsView {
    crate::agents::view(text.lines(), AgentKey::Tool, None)
}

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
    let page = render(&parse(""), &agents_of(""), "mp report");
    assert!(page.contains("id=\"no-data\""), "{page}");
    assert!(!page.contains("chart-quadrants"), "{page}");
}

#[test]
fn strings_from_the_log_are_escaped_in_the_page() {
    let line = r#"{"ts":"2026-11-29T12:00:00Z","record":"tick","repos":[{"repo":"</script><img src=x onerror=alert(1)>","merged":1}],"inbox":[],"api_calls":1}"#;
    let text = format!("{line}\n{{bad <b>line</b>");
    let page = render(&parse(&text), &agents_of(&text), "<i>title</i>");
    assert!(!page.contains("<img"), "{page}");
    assert!(!page.contains("<b>"), "{page}");
    assert!(!page.contains("<i>title"), "{page}");
    assert!(page.contains("&lt;i&gt;title&lt;/i&gt;"), "{page}");
    assert_eq!(page.matches("</script>").count(), 2, "{page}");
}

/// A `pr` record of `tool`'s pull request `pr` at `ts`.
fn pr(ts: &str, pr: &str, action: &str, tool: &str, extra: &str) -> String {
    format!(
        r#"{{"ts":"{ts}","record":"pr","pr":"{pr}","action":"{action}","quadrant":"A","agent":{{"tool":"{tool}","model":"m-{tool}","session":null,"machine":"box","author":"bot-{tool}"}}{extra}}}"#
    )
}

/// Two agents over three ticks: alpha's o/a#1 blocked on C1 and C2, then merged an hour
/// after its approval; alpha's o/a#2 closed; beta's o/b#3 routed to the inbox and open.
fn two_agents() -> String {
    let c1 = r#","blocked_by":["c1_ready_to_merge"]"#;
    let c2 = r#","blocked_by":["c2_checks_green"],"approved_at":"2026-03-01T09:00:00Z""#;
    let tick = |ts: &str| {
        format!(
            r#"{{"ts":"{ts}","record":"tick","quadrants":{{"A":1}},"repos":[],"inbox":[],"api_calls":10}}"#
        )
    };
    [
        pr("2026-03-01T08:00:00Z", "o/a#1", "blocked", "alpha", c1),
        pr("2026-03-01T08:00:00Z", "o/a#2", "waiting", "alpha", ""),
        pr(
            "2026-03-01T08:00:00Z",
            "o/b#3",
            "inbox",
            "beta",
            r#","blocked_by":["inbox"]"#,
        ),
        tick("2026-03-01T08:00:00Z"),
        pr("2026-03-01T09:30:00Z", "o/a#1", "blocked", "alpha", c2),
        pr(
            "2026-03-01T09:30:00Z",
            "o/b#3",
            "inbox",
            "beta",
            r#","blocked_by":["inbox"]"#,
        ),
        tick("2026-03-01T09:30:00Z"),
        pr(
            "2026-03-01T10:00:00Z",
            "o/a#1",
            "merged",
            "alpha",
            r#","approved_at":"2026-03-01T09:00:00Z""#,
        ),
        pr(
            "2026-03-01T10:00:00Z",
            "o/b#3",
            "inbox",
            "beta",
            r#","blocked_by":["inbox"]"#,
        ),
        tick("2026-03-01T10:00:00Z"),
    ]
    .join("\n")
}

/// The Agents page's section of `page`, with the chart script (pinned by the browser test)
/// left out, one line per element.
fn agents_section(page: &str) -> Vec<String> {
    let start = page
        .find("<section id=\"agents\"")
        .expect("the agents section");
    let end = page[start..]
        .find("<section id=\"overview\"")
        .expect("the overview after it")
        + start;
    page[start..end]
        .replace(include_str!("agents.js"), "(agents.js)\n")
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_agents_page_shows_the_figures_of_mp_agents() {
    let text = two_agents();
    let view = agents_of(&text);
    let page = render(&parse(&text), &view, "mp report");
    insta::assert_yaml_snapshot!("agents_page", agents_section(&page));
    // The data block the script draws is the CLI's JSON with the durations added.
    let data = agents_page::data(&view);
    let mut cli = view.to_json();
    assert_eq!(data["agents"][0]["waits"], json!([3600]));
    for agent in data["agents"].as_array().into_iter().flatten() {
        let mut agent = agent.clone();
        agent.as_object_mut().expect("an object").remove("waits");
        let name = agent["agent"].clone();
        let want = cli["agents"]
            .as_array_mut()
            .expect("agents")
            .iter()
            .find(|a| a["agent"] == name)
            .cloned();
        assert_eq!(Some(agent), want);
    }
    // Switching pages needs no script: the overview hides when the Agents page is targeted.
    assert!(page.contains("#agents:target ~ #overview { display: none; }"));
    assert!(page.find("id=\"agents\"") < page.find("id=\"overview\""));
}

#[test]
fn the_agents_page_groups_by_the_key_asked_for() {
    let text = two_agents();
    let view = crate::agents::view(text.lines(), AgentKey::Model, None);
    let page = render(&parse(&text), &view, "mp report");
    assert!(page.contains("<h2>Agents, by model</h2>"), "{page}");
    assert!(page.contains("data-agent=\"m-alpha\""), "{page}");
    assert!(!page.contains("data-agent=\"alpha\""), "{page}");
}

#[test]
fn an_old_log_without_pull_request_records_says_why_the_agents_page_is_empty() {
    let page = render(&parse(T1), &agents_of(T1), "mp report");
    let none = page
        .split("<p id=\"agents-none\"")
        .nth(1)
        .expect("the empty line");
    assert!(none.contains("no pull-request record"), "{none}");
    assert!(none.contains("older mp"), "{none}");
    assert!(!page.contains("chart-agents-multiples"), "{page}");
    // Dry runs only: the page says they are left out.
    let dry = format!(
        "{}\n{T1}",
        pr(
            "2026-11-29T12:00:00Z",
            "o/a#1",
            "merged",
            "alpha",
            r#","dry_run":true"#
        )
    );
    let page = render(&parse(&dry), &agents_of(&dry), "mp report");
    assert!(
        page.contains("1 pull-request record(s) is from a dry run"),
        "{page}"
    );
    // And the overview renders as before.
    assert!(page.contains("chart-quadrants"), "{page}");
}

#[test]
fn agent_names_from_the_log_are_escaped_on_the_agents_page() {
    let text = [
        pr(
            "2026-03-01T08:00:00Z",
            "o/a#1",
            "blocked",
            "</script><img src=x onerror=alert(1)>",
            r#","blocked_by":["<b>c9</b>"]"#,
        ),
        T1.to_owned(),
    ]
    .join("\n");
    let page = render(&parse(&text), &agents_of(&text), "mp report");
    assert!(!page.contains("<img"), "{page}");
    assert!(!page.contains("<b>"), "{page}");
    assert!(
        page.contains("data-agent=\"&lt;/script&gt;&lt;img src=x"),
        "{page}"
    );
    assert_eq!(page.matches("</script>").count(), 4, "{page}");
}
