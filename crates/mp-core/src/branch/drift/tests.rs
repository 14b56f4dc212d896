//! Tests for blob SHAs, tree comparison and the drift dedupe key.

use super::*;

fn repo(text: &str) -> RepoName {
    RepoName::parse(text).expect("valid repo")
}

fn tree(entries: &[(&str, char)]) -> BTreeMap<String, String> {
    entries
        .iter()
        .map(|(path, c)| ((*path).to_owned(), c.to_string().repeat(40)))
        .collect()
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

/// Compares `acme/app` with the governance repo `acme/gov` and checks each finding's
/// code and display line.
#[track_caller]
fn check(
    canonical: &[(&str, char)],
    adopter: &[(&str, char)],
    paths: &[&str],
    exceptions: &[&str],
    expected: &[&str],
) {
    let (gov, app) = (repo("acme/gov"), repo("acme/app"));
    let (canonical, adopter) = (tree(canonical), tree(adopter));
    let findings = compare_trees(
        RepoTree {
            repo: &gov,
            blobs: &canonical,
        },
        RepoTree {
            repo: &app,
            blobs: &adopter,
        },
        &strings(paths),
        &strings(exceptions),
    );
    let got: Vec<String> = findings
        .iter()
        .map(|f| format!("{}: {f}", f.code()))
        .collect();
    assert_eq!(got, expected);
}

#[test]
fn blob_sha_matches_git_hash_object() {
    // Values printed by `git hash-object --stdin`.
    assert_eq!(
        blob_sha(b"hello\n"),
        "ce013625030ba8dba906f756967f9e9ca394464a"
    );
    assert_eq!(blob_sha(b""), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
    assert_eq!(blob_sha(b"x"), "c1b0730e0133447badcfd47fd144e254807b06e1");
}

#[test]
fn identical_trees_have_no_drift() {
    check(&[("a.md", '1')], &[("a.md", '1')], &["a.md"], &[], &[]);
}

#[test]
fn every_kind_of_drift_is_found() {
    check(
        &[("a.md", '1'), ("b.md", '3'), ("d.md", '4'), ("e.md", '5')],
        &[("a.md", '2'), ("d.md", '4'), ("e.md", '6')],
        &["a.md", "b.md", "c.md", "d.md", "e.md", "a.md"],
        &["e.md"],
        &[
            "drift_differs: acme/app: a.md differs from canonical (canonical 111111111111, adopter 222222222222)",
            "drift_missing: acme/app: b.md is missing (canonical 333333333333)",
            "drift_canonical_missing: acme/gov: canonical path c.md does not exist in the governance repo",
        ],
    );
}

#[test]
fn dedupe_key_hashes_sorted_finding_lines() {
    let (gov, app) = (repo("acme/gov"), repo("acme/app"));
    let canonical = tree(&[("a.md", '1'), ("b.md", '3')]);
    let adopter = tree(&[("a.md", '2')]);
    let mut findings = compare_trees(
        RepoTree {
            repo: &gov,
            blobs: &canonical,
        },
        RepoTree {
            repo: &app,
            blobs: &adopter,
        },
        &strings(&["c.md", "b.md", "a.md"]),
        &[],
    );
    assert_eq!(
        findings
            .iter()
            .map(DriftFinding::key_line)
            .collect::<Vec<_>>(),
        [
            "acme/gov|c.md|canonical_missing|None|None".to_owned(),
            format!("acme/app|b.md|missing|{}|None", "3".repeat(40)),
            format!(
                "acme/app|a.md|differs|{}|{}",
                "1".repeat(40),
                "2".repeat(40)
            ),
        ]
    );
    // sha256 of the three sorted lines joined by "\n", computed with `sha256sum`.
    assert_eq!(
        drift_dedupe_key(&findings).as_str(),
        "mirror-drift-dd9c66f977c7"
    );
    findings.reverse();
    assert_eq!(
        drift_dedupe_key(&findings).as_str(),
        "mirror-drift-dd9c66f977c7"
    );
    let body = drift_incident_body(&findings);
    assert!(body.contains("### acme/app\nDiffers:\n- `a.md` (canonical 111111111111, adopter 222222222222)\nMissing:\n- `b.md`\n"));
    assert!(body.contains("### acme/gov\nCanonical config bug"));
    assert!(body.find("### acme/app") < body.find("### acme/gov"));
}
