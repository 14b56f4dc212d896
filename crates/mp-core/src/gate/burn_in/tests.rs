//! Tests for the L4 burn-in clock.

use super::*;
use crate::gate::testkit::{NOW, at, now};

/// `<severity> <status code>[ write(start[, promoted])][ just_promoted]`.
#[track_caller]
fn check(days: u32, stored: StoredBurnIn, severity_override: Option<Severity>, expected: &str) {
    let outcome = burn_in(days, &stored, severity_override, now());
    let mut got = format!("{} {}", outcome.severity, outcome.status.code());
    if let Some(write) = outcome.write {
        got.push_str(&format!(" write({}", write.advisory_started_at));
        if let Some(promoted) = write.promoted_at {
            got.push_str(&format!(", {promoted}"));
        }
        got.push(')');
    }
    if outcome.just_promoted {
        got.push_str(" just_promoted");
    }
    assert_eq!(got, expected);
}

fn started(start: &str, promoted: Option<&str>) -> StoredBurnIn {
    StoredBurnIn::Parsed(BurnInState {
        advisory_started_at: at(start),
        promoted_at: promoted.map(at),
    })
}

#[test]
fn zero_days_is_off() {
    check(0, StoredBurnIn::Missing, None, "P2 burn_in_off");
    check(
        0,
        started("2020-01-01T00:00:00Z", None),
        None,
        "P2 burn_in_off",
    );
}

#[test]
fn an_override_wins_in_either_direction_and_writes_nothing() {
    check(
        60,
        StoredBurnIn::Missing,
        Some(Severity::P0),
        "P0 burn_in_overridden",
    );
    check(
        60,
        started("2020-01-01T00:00:00Z", None),
        Some(Severity::P3),
        "P3 burn_in_overridden",
    );
}

#[test]
fn a_missing_state_starts_the_clock_now() {
    check(
        60,
        StoredBurnIn::Missing,
        None,
        &format!("P2 burn_in_started write({NOW})"),
    );
}

#[test]
fn a_corrupt_state_restarts_the_clock_fail_safe() {
    check(
        60,
        StoredBurnIn::from_json(Some("{not json")),
        None,
        &format!("P2 burn_in_restarted write({NOW})"),
    );
}

#[test]
fn within_the_window_l4_stays_advisory() {
    check(
        60,
        started("2025-12-31T12:00:01Z", None),
        None,
        "P2 burn_in_advisory",
    );
}

#[test]
fn the_first_crossing_promotes_and_records_it() {
    check(
        60,
        started("2025-12-31T12:00:00Z", None),
        None,
        &format!("P0 burn_in_promoted write(2025-12-31T12:00:00Z, {NOW}) just_promoted"),
    );
}

#[test]
fn a_recorded_promotion_stays_blocking_without_writes() {
    check(
        60,
        started("2025-01-01T00:00:00Z", Some("2025-03-02T00:00:00Z")),
        None,
        "P0 burn_in_promoted",
    );
}

#[test]
fn status_lines_explain_the_severity() {
    let outcome = burn_in(60, &started("2025-12-31T12:00:01Z", None), None, now());
    assert_eq!(
        outcome.status.to_string(),
        "L4 is advisory until 2026-03-01T12:00:01Z"
    );
}

mod state_file {
    use super::*;

    /// `expected` is `ok` for a state that round-trips, else the start of the corrupt reason.
    #[track_caller]
    fn check(text: &str, expected: &str) {
        match StoredBurnIn::from_json(Some(text)) {
            StoredBurnIn::Parsed(state) => {
                assert_eq!(expected, "ok", "parsed {state:?}");
                let again = StoredBurnIn::from_json(Some(&state.to_json()));
                assert_eq!(again, StoredBurnIn::Parsed(state));
            }
            StoredBurnIn::Corrupt { reason } => {
                assert!(
                    reason.starts_with(expected),
                    "{reason:?} does not start with {expected:?}"
                );
            }
            StoredBurnIn::Missing => assert_eq!(expected, "<missing>", "text is never missing"),
        }
    }

    #[test]
    fn valid_states_round_trip() {
        check(r#"{"advisory_started_at": "2026-01-01T00:00:00Z"}"#, "ok");
        check(
            r#"{"advisory_started_at": "2026-01-01T00:00:00Z", "promoted_at": "2026-03-02T00:00:00Z"}"#,
            "ok",
        );
        check(
            r#"{"advisory_started_at": "2026-01-01T00:00:00Z", "promoted_at": null}"#,
            "ok",
        );
    }

    #[test]
    fn invalid_states_are_corrupt() {
        check("", "not a burn-in state");
        check("[]", "not a burn-in state");
        check("{}", "not a burn-in state");
        check(
            r#"{"advisory_started_at": 1767323045}"#,
            "not a burn-in state",
        );
        check(r#"{"advisory_started_at": "soon"}"#, "advisory_started_at:");
        check(
            r#"{"advisory_started_at": "2026-01-01T00:00:00Z", "promoted_at": "later"}"#,
            "promoted_at:",
        );
    }

    #[test]
    fn the_written_form_is_stable() {
        let state = BurnInState {
            advisory_started_at: at("2026-01-01T00:00:00Z"),
            promoted_at: None,
        };
        assert_eq!(
            state.to_json(),
            "{\n  \"advisory_started_at\": \"2026-01-01T00:00:00Z\"\n}\n"
        );
        assert_eq!(StoredBurnIn::from_json(None), StoredBurnIn::Missing);
    }
}
