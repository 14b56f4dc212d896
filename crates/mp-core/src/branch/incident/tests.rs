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
    assert!(issue_mentions_key(
        "[decision:watermark-lost] eeeeeee",
        "",
        &key
    ));
    assert!(issue_mentions_key("renamed", &body, &key));
    assert!(!issue_mentions_key("other", "nothing", &key));
    assert_eq!(
        incident_title(IncidentLabel::L2Stalled, &key),
        "[decision:l2-stalled] eeeeeee"
    );
}

fn login(name: &str) -> Login {
    Login::parse(name).expect("valid login")
}

fn issue(author: Option<&str>, title: &str, body: &str) -> Issue {
    Issue {
        repo: RepoName::parse("acme/governance").expect("valid repo"),
        number: crate::ids::PrNumber::new(7),
        title: title.to_owned(),
        body: body.to_owned(),
        state: crate::port::IssueState::Closed,
        labels: vec![IncidentLabel::UnauthorizedPush.as_str().to_owned()],
        author: author.map(login),
        created_at: None,
        is_pull_request: false,
    }
}

/// The standing of an issue towards the unauthorized-push incident of `eeeeeee`, as the
/// code of its look-alike reason, `ours` or `unrelated`.
#[track_caller]
fn standing(authority: &IncidentAuthority, issue: &Issue) -> String {
    let key = IncidentKey::single(&sha('e'));
    match authority.standing(issue, IncidentLabel::UnauthorizedPush, &key) {
        Standing::Ours => "ours".to_owned(),
        Standing::Unrelated => "unrelated".to_owned(),
        Standing::LookAlike(why) => format!("{}: {why}", why.code()),
    }
}

#[test]
fn only_an_issue_mp_opened_with_the_marker_stands_for_an_incident() {
    let governance = RepoName::parse("acme/governance").expect("valid repo");
    let authority = IncidentAuthority::new(login("mp-gate[bot]"), governance);
    let key = IncidentKey::single(&sha('e'));
    let marked = authority.sign(
        &body_with_marker("text", &key),
        IncidentLabel::UnauthorizedPush,
        &key,
    );
    assert_eq!(marked, "text\n\n<!-- merge-gate:dedupe:eeeeeee -->");
    let title = "[decision:unauthorized-push] eeeeeee";
    let cases = [
        (issue(Some("mp-gate[bot]"), title, &marked), "ours"),
        (
            issue(Some("mallory"), title, &marked),
            "incident_lookalike_not_opened_by_mp: opened by mallory, not by mp",
        ),
        (
            issue(None, title, &marked),
            "incident_lookalike_not_opened_by_mp: GitHub names no author, so it is not mp's",
        ),
        (
            issue(Some("mp-gate[bot]"), title, "no marker, only the title"),
            "incident_lookalike_marker_missing: opened by mp but without this incident's marker",
        ),
        (issue(Some("mp-gate[bot]"), "other", "nothing"), "unrelated"),
    ];
    for (issue, expected) in &cases {
        assert_eq!(standing(&authority, issue), *expected, "{issue:?}");
    }
    let mut pull = issue(Some("mp-gate[bot]"), title, &marked);
    pull.is_pull_request = true;
    assert_eq!(standing(&authority, &pull), "unrelated");
}

#[test]
fn with_a_key_an_incident_counts_only_with_its_mac() {
    let governance = RepoName::parse("acme/governance").expect("valid repo");
    let secret = ReceiptKey::new(b"k1".to_vec());
    let authority = IncidentAuthority::new(login("github-actions[bot]"), governance.clone())
        .with_key(secret.clone());
    let key = IncidentKey::single(&sha('e'));
    let label = IncidentLabel::UnauthorizedPush;
    let signed = authority.sign(&body_with_marker("text", &key), label, &key);
    assert!(
        signed
            .starts_with("text\n\n<!-- merge-gate:dedupe:eeeeeee -->\n<!-- merge-gate:dedupe-mac:")
    );
    let title = "[decision:unauthorized-push] eeeeeee";
    let mac = "incident_lookalike_mac_invalid: opened by mp's identity but without a valid MAC under MP_RECEIPT_KEY";
    // Signed under another key, for another label, or in another repository: not ours.
    let other_key = IncidentAuthority::new(login("github-actions[bot]"), governance.clone())
        .with_key(ReceiptKey::new(b"k2".to_vec()));
    let other_repo = IncidentAuthority::new(
        login("github-actions[bot]"),
        RepoName::parse("acme/other").expect("valid repo"),
    )
    .with_key(secret.clone());
    let cases = [
        (signed.clone(), "ours"),
        (body_with_marker("text", &key), mac),
        (
            other_key.sign(&body_with_marker("text", &key), label, &key),
            mac,
        ),
        (
            authority.sign(
                &body_with_marker("text", &key),
                IncidentLabel::L2Stalled,
                &key,
            ),
            mac,
        ),
        (
            other_repo.sign(&body_with_marker("text", &key), label, &key),
            mac,
        ),
    ];
    for (body, expected) in &cases {
        let found = issue(Some("github-actions[bot]"), title, body);
        assert_eq!(standing(&authority, &found), *expected, "{body}");
    }
}
