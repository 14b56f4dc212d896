//! Tests for canonical JSON (RFC 8785's published examples), hashes and evidence export.

use serde_json::json;

use super::*;
use crate::kinds::{MergeStatus, StaleClassification};

#[track_caller]
fn check(input: &str, expected: &str) {
    let value: Value = serde_json::from_str(input).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(canonical_json(&value), expected);
}

#[test]
fn rfc8785_section_3_2_2_example() {
    check(
        r#"{
          "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
          "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
          "literals": [null, true, false]
        }"#,
        "{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,1e+30,4.5,0.002,1e-27],\
         \"string\":\"\u{20ac}$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}",
    );
}

#[test]
fn rfc8785_section_3_2_3_sorts_by_utf16_code_units() {
    check(
        r#"{
          "\u20ac": "Euro Sign",
          "\r": "Carriage Return",
          "\ufb33": "Hebrew Letter Dalet With Dagesh",
          "1": "One",
          "\ud83d\ude00": "Emoji: Grinning Face",
          "\u0080": "Control",
          "\u00f6": "Latin Small Letter O With Diaeresis"
        }"#,
        "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u{80}\":\"Control\",\
         \"\u{f6}\":\"Latin Small Letter O With Diaeresis\",\"\u{20ac}\":\"Euro Sign\",\
         \"\u{1f600}\":\"Emoji: Grinning Face\",\"\u{fb33}\":\"Hebrew Letter Dalet With Dagesh\"}",
    );
}

#[test]
fn rfc8785_appendix_b_numbers() {
    let cases: [(u64, &str); 23] = [
        (0x0000000000000000, "0"),
        (0x8000000000000000, "0"),
        (0x0000000000000001, "5e-324"),
        (0x8000000000000001, "-5e-324"),
        (0x7fefffffffffffff, "1.7976931348623157e+308"),
        (0xffefffffffffffff, "-1.7976931348623157e+308"),
        (0x4340000000000000, "9007199254740992"),
        (0xc340000000000000, "-9007199254740992"),
        (0x4430000000000000, "295147905179352830000"),
        (0x44b52d02c7e14af5, "9.999999999999997e+22"),
        (0x44b52d02c7e14af6, "1e+23"),
        (0x44b52d02c7e14af7, "1.0000000000000001e+23"),
        (0x444b1ae4d6e2ef4e, "999999999999999700000"),
        (0x444b1ae4d6e2ef4f, "999999999999999900000"),
        (0x444b1ae4d6e2ef50, "1e+21"),
        (0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"),
        (0x3eb0c6f7a0b5ed8d, "0.000001"),
        (0x41b3de4355555553, "333333333.3333332"),
        (0x41b3de4355555554, "333333333.33333325"),
        (0x41b3de4355555555, "333333333.3333333"),
        (0x41b3de4355555556, "333333333.3333334"),
        (0x41b3de4355555557, "333333333.33333343"),
        (0xbecbf647612f3696, "-0.0000033333333333333333"),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .filter_map(|(bits, expected)| {
            let got = canonical_json(&json!(f64::from_bits(*bits)));
            (got != *expected).then(|| format!("{bits:#018x}: {got} != {expected}"))
        })
        .collect();
    assert_eq!(wrong, Vec::<String>::new());
}

#[test]
fn the_empty_diff_hash_is_the_hash_of_no_bytes() {
    assert_eq!(sha256(b""), EMPTY_DIFF_HASH);
}

#[test]
fn the_missing_lockfile_hash_is_the_hash_of_its_text() {
    assert_eq!(sha256(b"missing-lockfile"), MISSING_LOCKFILE_HASH);
}

#[test]
fn key_order_and_spacing_do_not_change_the_hash() {
    let a: Value = serde_json::from_str(r#"{"b": [1, 2.0], "a": {"y": 1, "x": "é"}}"#)
        .unwrap_or_else(|e| panic!("{e}"));
    let b: Value = serde_json::from_str(r#"{"a":{"x":"\u00e9","y":1.0},"b":[1.0,2]}"#)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (hash_json(&a), canonical_json(&a)),
        (
            hash_json(&b),
            r#"{"a":{"x":"é","y":1},"b":[1,2]}"#.to_owned()
        )
    );
}

fn time(text: &str) -> DateTime {
    DateTime::parse(text).unwrap_or_else(|e| panic!("{e}"))
}

/// A full SHA-1 commit digest.
const BASE: &str = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678";

fn record() -> ExecutionRecord {
    ExecutionRecord {
        task_seed_id: TaskSeedId::parse("TS-101").unwrap_or_else(|e| panic!("{e}")),
        base_commit: BASE.to_owned(),
        head_commit: BASE.to_owned(),
        input: Some(json!({"prompt": "fix the test", "files": ["a.rs"]})),
        output: None,
        model_name: "model-x".to_owned(),
        model_version: "unknown".to_owned(),
        parameters: None,
        tools: vec!["StructuredLogger".to_owned()],
        os: "linux".to_owned(),
        runtime: "rust 1.95".to_owned(),
        container_image_digest: None,
        lockfile: None,
        diff: Vec::new(),
        stale_status: StaleStatus {
            classification: StaleClassification::Fresh,
            evaluated_at: time("2026-05-11T08:10:00Z"),
            reason: None,
        },
        merge_result: MergeResult {
            status: MergeStatus::NotApplicable,
            merged_at: None,
            strategy: None,
            reason: None,
        },
        start_time: time("2026-05-11T08:10:00Z"),
        end_time: time("2026-05-11T08:28:00Z"),
        actor: "dev-agent-1".to_owned(),
        policy_verdict: PolicyVerdict::Approved,
        approvals_snapshot: None,
    }
}

fn build(record: &ExecutionRecord) -> Result<Contract, Vec<&'static str>> {
    build_evidence(
        ContractId::parse("EV-101").unwrap_or_else(|e| panic!("{e}")),
        record,
        time("2026-05-11T08:28:05Z"),
    )
    .map_err(|errors| errors.iter().map(|e| e.code).collect())
}

#[test]
fn evidence_is_published_uncontainerized_with_default_hashes() {
    let contract = build(&record()).unwrap_or_else(|e| panic!("{e:?}"));
    let ev = contract
        .as_evidence()
        .unwrap_or_else(|| panic!("an evidence"));
    assert_eq!(
        (
            contract.common.state,
            ev.environment.container_image_digest.as_str(),
            ev.diff_hash.as_str(),
            ev.output_hash.clone(),
            ev.environment.lockfile_hash.as_str(),
            ev.input_hash.clone(),
        ),
        (
            State::Published,
            "uncontainerized",
            EMPTY_DIFF_HASH,
            sha256(b"{}"),
            MISSING_LOCKFILE_HASH,
            sha256(br#"{"files":["a.rs"],"prompt":"fix the test"}"#),
        )
    );
}

#[test]
fn evidence_hashes_are_reproducible() {
    let a = build(&record()).map(|c| contract_digest(&c));
    let b = build(&record()).map(|c| contract_digest(&c));
    let mut changed = record();
    changed.diff = b"--- a\n+++ b\n".to_vec();
    let c = build(&changed).map(|c| contract_digest(&c));
    assert_eq!((a.is_ok(), a == b, a == c), (true, true, false));
}

#[test]
fn evidence_that_ends_before_it_starts_is_refused() {
    let mut bad = record();
    bad.end_time = time("2026-05-11T08:00:00Z");
    assert_eq!(build(&bad).err(), Some(vec!["start-after-end"]));
}

#[test]
fn evidence_is_built_from_full_commit_digests_only() {
    let mut short = record();
    short.base_commit = "a1b2c3d".to_owned();
    short.head_commit = "a1b2c3d".to_owned();
    let mut not_hex = record();
    not_hex.head_commit = "g".repeat(40);
    let mut sha256 = record();
    sha256.base_commit = "ab".repeat(32);
    sha256.head_commit = "ab".repeat(32);
    let mut upper = record();
    upper.base_commit = BASE.to_uppercase();
    upper.head_commit = BASE.to_uppercase();
    let base_of =
        |r: &ExecutionRecord| build(r).map(|c| c.as_evidence().map(|e| e.base_commit.clone()));
    assert_eq!(
        (
            build(&short).err(),
            build(&not_hex).err(),
            base_of(&sha256),
            base_of(&upper),
        ),
        (
            Some(vec!["commit-not-full-digest", "commit-not-full-digest"]),
            Some(vec!["commit-not-full-digest"]),
            Ok(Some("ab".repeat(32))),
            Ok(Some(BASE.to_owned())),
        )
    );
}

#[test]
fn a_commit_digest_is_forty_or_sixty_four_hex_digits() {
    let check = |text: &str| CommitDigest::parse(text).map(|d| d.as_str().to_owned());
    assert_eq!(check(BASE), Ok(BASE.to_owned()));
    assert_eq!(check(&"AB".repeat(32)), Ok("ab".repeat(32)));
    for (text, message) in [
        (
            "a1b2c3d",
            "`a1b2c3d` is an abbreviated commit: a digest is the full commit id, 40 hex digits (SHA-1) or 64 (SHA-256)",
        ),
        (
            "e4f5g6h",
            "`e4f5g6h` is not a commit id: a digest is 40 hex digits (SHA-1) or 64 (SHA-256)",
        ),
        (
            &"a".repeat(41),
            "`aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa` is not a commit id: a digest is 40 hex digits (SHA-1) or 64 (SHA-256)",
        ),
        (
            "",
            "`` is not a commit id: a digest is 40 hex digits (SHA-1) or 64 (SHA-256)",
        ),
    ] {
        assert_eq!(
            check(text).map_err(|e| e.to_string()),
            Err(message.to_owned())
        );
    }
}

#[test]
fn in_toto_export_refuses_an_abbreviated_commit() {
    let stored =
        crate::parse_document(&crate::testkit::evidence()).unwrap_or_else(|e| panic!("{e:?}"));
    let refused = to_in_toto(&stored)
        .map(|_| ())
        .map_err(|e| (e.code(), e.to_string()));
    assert_eq!(
        refused,
        Err((
            "commit-not-full-digest",
            "EV-101: baseCommit `a1b2c3d` is an abbreviated commit: a digest is the full commit id, 40 hex digits (SHA-1) or 64 (SHA-256); headCommit `e4f5a6b` is an abbreviated commit: a digest is the full commit id, 40 hex digits (SHA-1) or 64 (SHA-256)".to_owned()
        ))
    );
}

#[test]
fn in_toto_statement_carries_the_provenance() {
    let contract = build(&record()).unwrap_or_else(|e| panic!("{e:?}"));
    let statement = to_in_toto(&contract).unwrap_or_else(|e| panic!("{e}"));
    let hex = |h: &str| h.trim_start_matches("sha256:").to_owned();
    assert_eq!(
        (
            &statement["_type"],
            &statement["predicateType"],
            &statement["subject"][1]["digest"]["sha256"],
            &statement["predicate"]["buildDefinition"]["buildType"],
            &statement["predicate"]["runDetails"]["metadata"]["invocationId"],
            &statement["predicate"]["runDetails"]["byproducts"][0]["digest"]["sha256"],
            &statement["predicate"]["buildDefinition"]["resolvedDependencies"][0]["digest"],
        ),
        (
            &json!("https://in-toto.io/Statement/v1"),
            &json!("https://slsa.dev/provenance/v1"),
            &json!(hex(EMPTY_DIFF_HASH)),
            &json!(BUILD_TYPE),
            &json!("EV-101"),
            &json!(hex(&contract_digest(&contract))),
            &json!({ "gitCommit": BASE }),
        )
    );
}

#[test]
fn only_an_evidence_exports() {
    let intent =
        crate::parse_document(&crate::testkit::intent()).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(
        to_in_toto(&intent).map_err(|e| (e.code(), e.to_string())),
        Err((
            "wrong_kind",
            "IC-101 is not an Evidence: its kind is IntentContract".to_owned()
        ))
    );
}
