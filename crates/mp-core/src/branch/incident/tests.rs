//! Tests for incident labels, dedupe keys, markers and rollup.

use super::*;

fn sha(c: char) -> CommitSha {
    CommitSha::parse(&c.to_string().repeat(40)).expect("valid sha")
}

fn repo() -> RepoName {
    RepoName::parse("Acme/Widget").expect("valid repo")
}

/// Rolls up `(label, sha char)` incidents for `acme/widget` and checks each surfaced
/// incident's title.
#[track_caller]
fn check(raised: &[(IncidentLabel, char)], titles: &[&str]) {
    let incidents: Vec<CommitIncident> = raised
        .iter()
        .map(|(label, c)| CommitIncident {
            label: *label,
            sha: sha(*c),
            body: format!("body of {c}"),
        })
        .collect();
    let surfaced = roll_up(&repo(), &incidents);
    let got: Vec<&str> = surfaced.iter().map(|s| s.title.as_str()).collect();
    assert_eq!(got, titles);
    for incident in &surfaced {
        assert_eq!(
            find_dedupe_key(&incident.body).as_ref(),
            Some(&incident.key)
        );
        assert!(incident.body.ends_with(&dedupe_marker(&incident.key)));
    }
}

#[test]
fn labels_round_trip() {
    for &label in IncidentLabel::ALL {
        assert!(label.as_str().starts_with("decision:"));
        assert_eq!(label.as_str().parse::<IncidentLabel>(), Ok(label));
    }
    assert_eq!(
        IncidentLabel::MirrorDrift.as_str(),
        "decision:mirror-drift-incident"
    );
    assert!("decision:approved-A".parse::<IncidentLabel>().is_err());
}

#[test]
fn single_offender_keeps_sha7() {
    check(
        &[
            (IncidentLabel::UnauthorizedPush, 'a'),
            (IncidentLabel::UnauthorizedPush, 'a'),
        ],
        &["[decision:unauthorized-push] aaaaaaa"],
    );
}

#[test]
fn several_offenders_roll_up_per_label() {
    // sha256("aaaa…\nbbbb…") computed independently with `printf | sha256sum`.
    check(
        &[
            (IncidentLabel::UnauthorizedPush, 'b'),
            (IncidentLabel::HallucinationDetected, 'c'),
            (IncidentLabel::UnauthorizedPush, 'a'),
        ],
        &[
            "[decision:unauthorized-push] rollup-widget-04d25a78e94b",
            "[decision:hallucination-detected] ccccccc",
        ],
    );
}

#[test]
fn rollup_key_ignores_order_and_repeats() {
    let one = IncidentKey::rollup(&repo(), &[sha('a'), sha('b')]);
    let two = IncidentKey::rollup(&repo(), &[sha('b'), sha('a'), sha('b')]);
    assert_eq!(one, two);
    assert_eq!(IncidentKey::for_offenders(&repo(), &[]), None);
    assert_eq!(
        IncidentKey::for_offenders(&repo(), &[sha('f'), sha('f')]).map(|k| k.to_string()),
        Some("fffffff".to_owned())
    );
}

#[test]
fn marker_parser_finds_the_last_marker() {
    let key = IncidentKey::single(&sha('e'));
    let body = body_with_marker("text <!-- merge-gate:dedupe:old --> more", &key);
    assert_eq!(
        body,
        "text <!-- merge-gate:dedupe:old --> more\n\n<!-- merge-gate:dedupe:eeeeeee -->"
    );
    assert_eq!(find_dedupe_key(&body), Some(key.clone()));
    assert_eq!(find_dedupe_key("no marker"), None);
    assert_eq!(find_dedupe_key("<!-- merge-gate:dedupe: -->"), None);
    assert_eq!(find_dedupe_key("<!-- merge-gate:dedupe:abc"), None);
    assert_eq!(IncidentKey::parse("has space"), None);
    assert!(issue_references_key(
        "[decision:watermark-lost] eeeeeee",
        "",
        &key
    ));
    assert!(issue_references_key("renamed", &body, &key));
    assert!(!issue_references_key("other", "nothing", &key));
    assert_eq!(
        incident_title(IncidentLabel::L2Stalled, &key),
        "[decision:l2-stalled] eeeeeee"
    );
}
