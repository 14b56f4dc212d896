//! Tests for the state files: watermark parsing (bootstrap vs corrupt), the deterministic
//! text, the unsettled and break-glass maps, and the fail-safe burn-in read.

use super::*;
use crate::gate::burn_in::BurnInState;
use crate::ids::{CommitSha, RepoName, Timestamp};

const A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

fn repo(name: &str) -> RepoName {
    RepoName::parse(name).expect("test repository is valid")
}

fn sha(text: &str) -> CommitSha {
    CommitSha::parse(text).expect("test sha is valid")
}

fn at(text: &str) -> Timestamp {
    Timestamp::parse(text).expect("test time is valid")
}

/// Parses `input` and compares the rewritten text (or the corruption) with `expected`.
#[track_caller]
fn check(input: &str, expected: &str) {
    let got = match Watermarks::parse(input) {
        Ok(state) => state.to_json(),
        Err(error) => format!("corrupt ({}): {error}", error.code()),
    };
    assert_eq!(got, expected);
}

#[test]
fn an_empty_object_is_a_first_run() {
    check("{}", "{}\n");
    assert!(Watermarks::parse("{}").expect("parses").is_empty());
}

#[test]
fn the_text_is_rewritten_with_sorted_keys_two_space_indent_and_a_trailing_newline() {
    check(
        &format!(
            r#"{{"acme/app:l2":"{B}","Acme/App":"{A}","_l2_unsettled":{{"acme/app:{B}":"2026-03-01T10:00:00Z"}}}}"#
        ),
        &format!(
            "{{\n  \"_l2_unsettled\": {{\n    \"acme/app:{B}\": \"2026-03-01T10:00:00Z\"\n  }},\n  \"acme/app\": \"{A}\",\n  \"acme/app:l2\": \"{B}\"\n}}\n"
        ),
    );
}

#[test]
fn a_missing_null_empty_or_non_string_watermark_means_bootstrap() {
    check(
        r#"{"acme/app": null, "acme/app:l2": "", "acme/old": 42, "acme/new:l2": ["x"]}"#,
        "{}\n",
    );
    let state = Watermarks::parse(r#"{"acme/app": null}"#).expect("parses");
    assert_eq!(state.get(&repo("acme/app"), Layer::L5), None);
}

#[test]
fn unknown_keys_are_kept_verbatim() {
    check(
        r#"{"_future": {"b": 1, "a": [true]}, "not a repo": "x"}"#,
        "{\n  \"_future\": {\n    \"a\": [\n      true\n    ],\n    \"b\": 1\n  },\n  \"not a repo\": \"x\"\n}\n",
    );
}

#[test]
fn text_that_cannot_be_trusted_is_corrupt() {
    check(
        "{\"acme/app\": ",
        "corrupt (state_not_json): not JSON: EOF while parsing a value at line 1 column 13",
    );
    check(
        "[]",
        "corrupt (state_not_an_object): expected a JSON object at the top level, found an array",
    );
    check(
        r#"{"acme/app": "abc1234"}"#,
        "corrupt (state_bad_watermark): watermark \"acme/app\" is not a commit SHA: \"abc1234\"",
    );
    check(
        &format!(r#"{{"Acme/App": "{A}", "acme/app": "{B}"}}"#),
        "corrupt (state_duplicate_key): watermark \"acme/app\" appears twice",
    );
    check(
        r#"{"_l2_unsettled": []}"#,
        "corrupt (state_bad_entry): \"_l2_unsettled\": expected an object, found an array",
    );
    check(
        &format!(r#"{{"_l2_unsettled": {{"acme/app:{A}": "yesterday"}}}}"#),
        &format!(
            "corrupt (state_bad_entry): \"_l2_unsettled.acme/app:{A}\": invalid timestamp \"yesterday\": expected an RFC 3339 date-time"
        ),
    );
    check(
        r#"{"_break_glass_pending": {"acme/app": "2026-03-01T10:00:00Z"}}"#,
        "corrupt (state_bad_entry): \"_break_glass_pending.acme/app\": expected `<owner>/<repo>:<sha>`",
    );
}

#[test]
fn the_unsettled_map_keeps_the_first_seen_time_until_the_commit_settles() {
    let app = repo("acme/app");
    let mut state = Watermarks::new();
    let first = state.track_unsettled(&app, &sha(A), at("2026-03-01T10:00:00Z"));
    let again = state.track_unsettled(&app, &sha(A), at("2026-03-01T11:00:00Z"));
    state.track_unsettled(&repo("acme/old"), &sha(B), at("2026-03-01T11:00:00Z"));
    assert_eq!((first, again), (at("2026-03-01T10:00:00Z"), first));
    assert_eq!(state.unsettled_count(), 2);
    state.settle(&app, &sha(A));
    state.forget_unsettled(&repo("acme/old"));
    assert_eq!(state.to_json(), "{}\n");
}

#[test]
fn pending_break_glass_commits_round_trip_per_repository() {
    let app = repo("acme/app");
    let mut state = Watermarks::new();
    state.track_break_glass(&app, &sha(A), at("2026-03-01T10:00:00Z"));
    state.set(&app, Layer::L5, sha(B));
    let text = state.to_json();
    let back = Watermarks::parse(&text).expect("its own text parses");
    assert_eq!(back, state);
    assert_eq!(
        back.pending_break_glass(&app),
        vec![(sha(A), at("2026-03-01T10:00:00Z"))]
    );
    assert!(back.pending_break_glass(&repo("acme/old")).is_empty());
    state.clear_break_glass(&app, &sha(A));
    assert_eq!(
        state.to_json(),
        format!("{{\n  \"acme/app\": \"{B}\"\n}}\n")
    );
}

#[test]
fn the_burn_in_file_fails_safe() {
    let (stored, warning) = stored_burn_in(Err("HTTP 500".to_owned()));
    assert_eq!(stored, crate::gate::burn_in::StoredBurnIn::Missing);
    assert_eq!(
        warning.as_deref(),
        Some(
            "bot-state/l4_burn_in.json could not be read (HTTP 500); the burn-in clock restarts (fail-safe)"
        )
    );
    let (stored, warning) = stored_burn_in(Ok(Some("{")));
    assert!(
        matches!(stored, crate::gate::burn_in::StoredBurnIn::Corrupt { .. }),
        "{stored:?}"
    );
    assert_eq!(warning, None);
    let state = BurnInState {
        advisory_started_at: at("2026-03-01T10:00:00Z"),
        promoted_at: None,
    };
    assert_eq!(
        stored_burn_in(Ok(Some(&burn_in_text(&state)))).0,
        crate::gate::burn_in::StoredBurnIn::Parsed(state)
    );
}
