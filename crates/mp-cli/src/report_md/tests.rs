//! Tests for the markdown summary, over a hand-made tick document.

use serde_json::json;

use super::render;

#[track_caller]
fn check(doc: &serde_json::Value, expected: &str) {
    assert_eq!(render(doc), expected);
}

#[test]
fn outcomes_are_grouped_per_repository_with_blocking_reasons_and_the_budget() {
    let doc = json!({
        "now": "2026-03-10T12:00:00Z",
        "merge_mode": "merge",
        "outcomes": [
            {"pr": "acme/app#1", "action": "merged", "quadrant": "A", "detail": "merged as Quadrant A", "blocking": []},
            {"pr": "acme/app#2", "action": "blocked", "quadrant": "B", "detail": "2 blocking", "blocking": ["C2: check `test` failed", "C5: a | pipe <b>"]},
            {"pr": "acme/infra#7", "action": "inbox", "quadrant": "D", "detail": "asked the owner", "blocking": []},
        ],
        "supervisor": [{"repo": "acme/app", "events": ["l5 abc1234: opened acme/gov#3"]}],
        "inbox": ["acme/gov#2 (acme/app#9) approved"],
        "drift": null,
        "calls": {"GET /x": 3},
        "http": {"requests": 40, "not_modified": 12, "retries": 1, "rate_limit_remaining": 4900,
                 "graphql_remaining": 4958},
        "warnings": ["MP_RECEIPT_KEY is not set"],
    });
    check(
        &doc,
        "## mp tick at 2026-03-10T12:00:00Z (merge mode)\n\n\
         | repository | merged | observe | race-rebased | waiting | blocked | inbox | skipped |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|\n\
         | `acme/app` | 1 | 0 | 0 | 0 | 1 | 0 | 0 |\n\
         | `acme/infra` | 0 | 0 | 0 | 0 | 0 | 1 | 0 |\n\n\
         ### `acme/app`\n\n\
         - **#1 merged** (Quadrant A): merged as Quadrant A\n\
         - **#2 blocked** (Quadrant B): 2 blocking\n\
         \x20 - C2: check `test` failed\n\
         \x20 - C5: a \\| pipe &lt;b&gt;\n\
         - supervisor:\n\
         \x20 - l5 abc1234: opened acme/gov#3\n\n\
         ### `acme/infra`\n\n\
         - **#7 inbox** (Quadrant D): asked the owner\n\n\
         ### Decision inbox\n\n\
         - acme/gov#2 (acme/app#9) approved\n\n\
         ### Budget\n\n\
         40 requests, 12 answered 304 (free), 1 retries; rate limit left: 4900, GraphQL points left 4958\n\n\
         ### Warnings\n\n\
         - MP_RECEIPT_KEY is not set\n\n",
    );
}

#[test]
fn a_quiet_tick_says_so_and_counts_calls_without_http() {
    let doc = json!({
        "now": "2026-03-10T12:00:00Z",
        "merge_mode": "observe",
        "outcomes": [],
        "supervisor": [],
        "inbox": [],
        "drift": null,
        "calls": {"GET /a": 2, "GET /b": 5},
        "warnings": [],
    });
    check(
        &doc,
        "## mp tick at 2026-03-10T12:00:00Z (observe mode)\n\n\
         No open pull requests and no supervised repository.\n\n\
         ### Budget\n\n\
         7 API calls\n\n",
    );
}

#[test]
fn annotations_name_blocked_and_routed_pull_requests_escaped_for_the_runner() {
    let doc = json!({
        "outcomes": [
            {"pr": "acme/app#1", "action": "merged", "detail": "merged", "blocking": []},
            {"pr": "acme/app#2", "action": "blocked", "detail": "2 blocking", "blocking": ["C2: check `test` failed", "C5: 100% wrong, really"]},
            {"pr": "acme/infra#7", "action": "inbox", "detail": "asked the owner in acme/gov#4", "blocking": []},
        ],
        "supervisor": [{"repo": "acme/app", "events": ["l5 abc1234: opened acme/gov#3"]}],
        "warnings": ["MP_RECEIPT_KEY is not set"],
    });
    assert_eq!(
        super::annotations(&doc),
        "::warning title=mp%3A acme/app#2 blocked::C2: check `test` failed%0AC5: 100%25 wrong, really\n\
         ::notice title=mp%3A acme/infra#7 awaits the owner::asked the owner in acme/gov#4\n\
         ::notice title=mp%3A acme/app::l5 abc1234: opened acme/gov#3\n\
         ::warning title=mp::MP_RECEIPT_KEY is not set\n"
    );
    assert_eq!(super::annotations(&json!({})), "");
}
