//! Tests for the event envelope and JSON lines.

use serde_json::json;

use super::*;

fn event(event_type: EventType) -> Event {
    let id = ContractId::parse("TS-101").expect("constant id");
    let time = DateTime::parse("2026-05-11T08:05:10Z").expect("constant time");
    let mut e = Event::new(
        "evt-1",
        "/mp/orchestrator",
        event_type,
        (&id, Version::FIRST),
        time,
        json!({"id": "TS-101"}),
    );
    e.idempotencykey = Some("IC-101:1:TaskSeed".to_owned());
    e
}

#[track_caller]
fn check(event: &Event, expected: &str) {
    assert_eq!(event.to_json_line(), expected);
}

#[test]
fn the_envelope_uses_lowercase_cloudevents_attributes() {
    check(
        &event(EventType::TaskSeedCreated),
        r#"{"specversion":"1.0","id":"evt-1","source":"/mp/orchestrator","type":"taskseed.created.v1","subject":"TS-101","time":"2026-05-11T08:05:10Z","datacontenttype":"application/json","contractid":"TS-101","contractversion":"1","idempotencykey":"IC-101:1:TaskSeed","data":{"id":"TS-101"}}"#,
    );
}

#[test]
fn the_seven_normative_names_are_the_protocol_list() {
    let names: Vec<&str> = EventType::NORMATIVE.iter().map(|t| t.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "intent.created.v1",
            "taskseed.created.v1",
            "taskseed.execution.completed.v1",
            "acceptance.created.v1",
            "publishgate.created.v1",
            "publishgate.decision.recorded.v1",
            "evidence.created.v1",
        ]
    );
}

#[test]
fn serde_names_match_as_str() {
    let mut all = EventType::NORMATIVE.to_vec();
    all.push(EventType::ContractFrozen);
    let mismatched: Vec<String> = all
        .iter()
        .filter(|t| json!(t) != json!(t.as_str()))
        .map(|t| t.to_string())
        .collect();
    assert_eq!(mismatched, Vec::<String>::new());
}

#[test]
fn json_lines_round_trip() {
    let events = vec![
        event(EventType::IntentCreated),
        event(EventType::EvidenceCreated),
    ];
    let text = to_json_lines(&events);
    assert_eq!(text.lines().count(), 2);
    assert_eq!(from_json_lines(&text).ok(), Some(events));
}

#[test]
fn a_bad_line_is_named() {
    let text = format!(
        "{}\n\nnot json\n",
        event(EventType::IntentCreated).to_json_line()
    );
    assert_eq!(from_json_lines(&text).map_err(|(line, _)| line), Err(3));
}
