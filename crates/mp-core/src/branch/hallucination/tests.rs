//! Tests for the hallucination guard.

use super::*;

fn sha() -> CommitSha {
    CommitSha::parse(&"d".repeat(40)).expect("valid sha")
}

/// Extracts the candidates of `body`, answers each lookup from `missing` / `failing`
/// (everything else exists), and checks the candidates and the verdict line.
#[track_caller]
fn check(body: &str, missing: &[&str], failing: &[&str], candidates: &[&str], expected: &str) {
    let found = candidate_paths(body);
    assert_eq!(found, candidates, "candidates of {body:?}");
    let lookups: Vec<(String, PathLookup)> = found
        .into_iter()
        .map(|path| {
            let lookup = if missing.contains(&path.as_str()) {
                PathLookup::Missing
            } else if failing.contains(&path.as_str()) {
                PathLookup::Error("HTTP 500".to_owned())
            } else {
                PathLookup::Exists
            };
            (path, lookup)
        })
        .collect();
    let verdict = hallucination_verdict(&sha(), &lookups);
    assert_eq!(format!("{}: {verdict}", verdict.code()), expected);
}

#[test]
fn body_without_paths_is_clean() {
    check(
        "Fix the `parse` function and `x.y`.",
        &[],
        &[],
        &[],
        "references_exist: all 0 referenced path(s) exist",
    );
}

#[test]
fn existing_paths_are_clean() {
    check(
        "See `src/lib.rs` and `docs/guide/setup.md`.",
        &[],
        &[],
        &["src/lib.rs", "docs/guide/setup.md"],
        "references_exist: all 2 referenced path(s) exist",
    );
}

#[test]
fn missing_paths_are_listed_once_in_first_seen_order() {
    check(
        "Touches `src/auth/legacy.py`, `README.md` and again `src/auth/legacy.py`; also `zz/gone.toml`.",
        &["src/auth/legacy.py", "zz/gone.toml"],
        &[],
        &["src/auth/legacy.py", "README.md", "zz/gone.toml"],
        "hallucination_detected: commit ddddddd references missing path(s): src/auth/legacy.py, zz/gone.toml",
    );
}

#[test]
fn lookup_errors_are_skipped() {
    check(
        "Uses `config/app.yaml` and `src/main.rs`.",
        &[],
        &["config/app.yaml"],
        &["config/app.yaml", "src/main.rs"],
        "references_exist: all 1 checked path(s) exist; lookup failed for config/app.yaml",
    );
}

#[test]
fn token_shapes_follow_the_pattern() {
    check(
        "`a.rs` `path with space.md` `x/y.toolong` `ok/file.tar.gz` `.github/ci.yml`",
        &[],
        &[],
        &["ok/file.tar.gz", ".github/ci.yml"],
        "references_exist: all 2 referenced path(s) exist",
    );
}

#[test]
fn incident_body_lists_missing_paths() {
    let verdict = hallucination_verdict(
        &sha(),
        &[
            ("a/b.md".to_owned(), PathLookup::Missing),
            ("a/b.md".to_owned(), PathLookup::Missing),
        ],
    );
    assert_eq!(
        verdict.incident(),
        Some(IncidentLabel::HallucinationDetected)
    );
    let body = verdict.incident_body().expect("detected has a body");
    assert_eq!(body.matches("- `a/b.md`").count(), 1);
}
