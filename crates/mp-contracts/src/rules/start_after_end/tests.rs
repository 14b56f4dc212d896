//! Tests for start-after-end.

use serde_json::{Value, json};

use crate::testkit::*;
use crate::validate_document;

#[track_caller]
fn check(start: &str, end: &str, expected: &[&str]) {
    let doc: Value = with(
        with(evidence(), "/startTime", json!(start)),
        "/endTime",
        json!(end),
    );
    assert_eq!(lines(&validate_document(&doc)), expected);
}

#[test]
fn start_before_end_passes() {
    check("2026-05-11T08:10:00Z", "2026-05-11T08:28:00Z", &[]);
}

#[test]
fn equal_times_pass() {
    check("2026-05-11T08:10:00Z", "2026-05-11T08:10:00Z", &[]);
}

#[test]
fn offsets_count() {
    // 10:00 at +09:00 is 01:00 UTC, before 02:00 UTC, though its text sorts after it.
    check("2026-05-11T10:00:00+09:00", "2026-05-11T02:00:00Z", &[]);
}

#[test]
fn start_after_end_fails() {
    check(
        "2026-05-11T08:28:00.5Z",
        "2026-05-11T08:28:00Z",
        &[
            "document 0 /startTime: start-after-end: startTime 2026-05-11T08:28:00.5Z is after endTime 2026-05-11T08:28:00Z",
        ],
    );
}

#[test]
fn a_malformed_time_is_only_a_format_error() {
    check(
        "2026-05-11T08:28:00",
        "2026-05-11T08:00:00Z",
        &[
            "document 0 /startTime: format: `2026-05-11T08:28:00` is not an RFC 3339 date-time with an offset: the offset is missing",
        ],
    );
}
