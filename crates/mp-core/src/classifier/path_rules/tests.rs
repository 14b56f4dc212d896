//! Tests for the path rule: the shipped default against the reference prefixes, custom
//! globs, and compile errors.

use proptest::prelude::*;

use super::*;
use crate::classifier::test_support::{added, modified, removed, renamed};

fn shipped() -> PathRules {
    PathRules::default()
}

fn custom(always_d: &[&str], append_only: &[&str], critical: &[&str]) -> PathRules {
    let list = |items: &[&str]| items.iter().map(|s| (*s).to_owned()).collect();
    let spec = PathRulesSpec {
        always_d: list(always_d),
        append_only: list(append_only),
        critical: list(critical),
    };
    PathRules::compile(&spec).expect("test globs compile")
}

#[track_caller]
fn check(rules: &PathRules, files: &[FileChange], quadrant: Quadrant, reasoning: &str) {
    let vote = rules.evaluate(files).vote();
    assert_eq!(vote.rule, RuleId::PathDefault);
    assert_eq!(
        (vote.quadrant, vote.reasoning.as_str()),
        (quadrant, reasoning),
        "files: {files:?}"
    );
}

const ORDINARY: &str = "1 file changed, none critical, protected or removed";
const APPEND: &str = "is append-only: only adding files is allowed";

#[test]
fn shipped_default_reproduces_the_reference_prefixes() {
    use Quadrant::{A, B, C, D};
    let table: Vec<(FileChange, Quadrant, String)> = vec![
        (modified("README.md"), A, ORDINARY.into()),
        (modified("docs/guide/x.md"), A, ORDINARY.into()),
        (modified("tests/x"), A, ORDINARY.into()),
        (modified("pyproject.toml"), A, ORDINARY.into()),
        (modified("examples/demo.py"), A, ORDINARY.into()),
        (
            modified("src/a.rs"),
            B,
            "src/a.rs is critical and nothing is removed".into(),
        ),
        (
            added("src/deep/new/mod.rs"),
            B,
            "src/deep/new/mod.rs is critical and nothing is removed".into(),
        ),
        (
            removed("src/a.rs"),
            D,
            "src/a.rs is critical and src/a.rs is removed".into(),
        ),
        (
            removed("README.md"),
            C,
            "README.md is removed and nothing critical is changed".into(),
        ),
        (
            modified(".github/workflows/ci.yml"),
            D,
            ".github/workflows/ci.yml is always D".into(),
        ),
        (
            added(".github/scripts/release.sh"),
            D,
            ".github/scripts/release.sh is always D".into(),
        ),
        (
            modified(".github/actions/setup/action.yml"),
            D,
            ".github/actions/setup/action.yml is always D".into(),
        ),
        (modified(".github/ISSUE_TEMPLATE/x.md"), A, ORDINARY.into()),
        (modified(".github/CODEOWNERS"), A, ORDINARY.into()),
        (
            modified("config/x.yml"),
            D,
            "config/x.yml is always D".into(),
        ),
        (
            modified("config/a/b/c.yml"),
            D,
            "config/a/b/c.yml is always D".into(),
        ),
        (
            renamed("config/a", "other/a"),
            D,
            "other/a (renamed from config/a) is always D".into(),
        ),
        (
            renamed("other/a", "config/a"),
            D,
            "config/a (renamed from other/a) is always D".into(),
        ),
        (
            modified("governance/REVERSIBILITY_RUBRIC.md"),
            D,
            "governance/REVERSIBILITY_RUBRIC.md is always D".into(),
        ),
        (
            modified("docs/concepts/four-quadrants.md"),
            D,
            "docs/concepts/four-quadrants.md is always D".into(),
        ),
        (modified("bot-state/x"), D, "bot-state/x is always D".into()),
        (
            modified("schemas/x.json"),
            D,
            "schemas/x.json is always D".into(),
        ),
        (added("docs/decisions/0001.md"), A, ORDINARY.into()),
        (
            modified("docs/decisions/0001.md"),
            D,
            format!("docs/decisions/0001.md (modified) {APPEND}"),
        ),
        (
            removed("docs/meetings/2026-01-05.md"),
            D,
            format!("docs/meetings/2026-01-05.md (removed) {APPEND}"),
        ),
        (
            renamed("docs/decisions/0001.md", "archive/0001.md"),
            D,
            format!("archive/0001.md (renamed from docs/decisions/0001.md) {APPEND}"),
        ),
        (
            renamed("drafts/0002.md", "docs/decisions/0002.md"),
            D,
            format!("docs/decisions/0002.md (renamed from drafts/0002.md) {APPEND}"),
        ),
        (
            renamed("src/a.rs", "lib/a.rs"),
            B,
            "lib/a.rs (renamed from src/a.rs) is critical and nothing is removed".into(),
        ),
        (modified("configs/x"), A, ORDINARY.into()),
        (modified("config"), A, ORDINARY.into()),
        (modified("src"), A, ORDINARY.into()),
        (modified("a/src/b.rs"), A, ORDINARY.into()),
        (modified("docs/decisionsx/1.md"), A, ORDINARY.into()),
        (modified("Config/x.yml"), A, ORDINARY.into()),
    ];
    let rules = shipped();
    for (file, quadrant, reasoning) in table {
        check(&rules, &[file], quadrant, &reasoning);
    }
}

#[test]
fn no_files_abstain() {
    check(&shipped(), &[], Quadrant::A, "no file changes");
}

#[test]
fn critical_and_removal_in_different_files_is_d() {
    check(
        &shipped(),
        &[modified("src/a.rs"), removed("README.md")],
        Quadrant::D,
        "src/a.rs is critical and README.md is removed",
    );
}

#[test]
fn always_d_wins_over_critical_and_names_both_kinds_of_hit() {
    check(
        &shipped(),
        &[
            modified("src/a.rs"),
            modified("config/x.yml"),
            modified("docs/decisions/0001.md"),
        ],
        Quadrant::D,
        &format!("config/x.yml is always D; docs/decisions/0001.md (modified) {APPEND}"),
    );
}

#[test]
fn long_lists_are_cut_after_three_files() {
    check(
        &shipped(),
        &[
            modified("config/a"),
            modified("config/b"),
            modified("config/c"),
            modified("config/d"),
            modified("config/e"),
        ],
        Quadrant::D,
        "config/a, config/b, config/c and 2 more are always D",
    );
}

#[test]
fn several_ordinary_files_are_counted() {
    check(
        &shipped(),
        &[modified("README.md"), added("docs/guide/new.md")],
        Quadrant::A,
        "2 files changed, none critical, protected or removed",
    );
}

#[test]
fn single_star_never_crosses_a_slash() {
    let rules = custom(&["docs/*.md"], &[], &[]);
    check(
        &rules,
        &[modified("docs/a.md")],
        Quadrant::D,
        "docs/a.md is always D",
    );
    check(&rules, &[modified("docs/sub/a.md")], Quadrant::A, ORDINARY);
}

#[test]
fn double_star_spans_directories_anywhere() {
    let rules = custom(&["**/secrets/**"], &[], &["**/*.sql"]);
    check(
        &rules,
        &[modified("a/b/secrets/key.pem")],
        Quadrant::D,
        "a/b/secrets/key.pem is always D",
    );
    check(
        &rules,
        &[modified("db/migrations/001.sql")],
        Quadrant::B,
        "db/migrations/001.sql is critical and nothing is removed",
    );
}

#[test]
fn empty_lists_leave_only_the_removal_axis() {
    let rules = custom(&[], &[], &[]);
    check(&rules, &[modified("config/x.yml")], Quadrant::A, ORDINARY);
    check(
        &rules,
        &[removed("config/x.yml")],
        Quadrant::C,
        "config/x.yml is removed and nothing critical is changed",
    );
}

#[test]
fn the_first_matching_pattern_is_reported() {
    let rules = custom(&["config/**", "**/*.yml"], &[], &[]);
    let hit = rules.first_match(PathList::AlwaysD, "config/x.yml");
    assert_eq!(hit, Some("config/**"));
    let hit = rules.first_match(PathList::AlwaysD, "deploy/x.yml");
    assert_eq!(hit, Some("**/*.yml"));
    assert_eq!(rules.first_match(PathList::Critical, "deploy/x.yml"), None);
}

#[track_caller]
fn check_error(always_d: &[&str], critical: &[&str], expected: &str) {
    let list = |items: &[&str]| items.iter().map(|s| (*s).to_owned()).collect();
    let spec = PathRulesSpec {
        always_d: list(always_d),
        append_only: Vec::new(),
        critical: list(critical),
    };
    let error = PathRules::compile(&spec).expect_err("the spec has a bad pattern");
    assert_eq!(error.to_string(), expected);
}

#[test]
fn bad_glob_names_list_index_and_pattern() {
    check_error(
        &["config/**"],
        &["src/**", "src/[ab"],
        "classifier path rules: critical[1] \"src/[ab\" is not a valid glob: unclosed character class; missing ']'",
    );
}

#[test]
fn absolute_pattern_is_refused() {
    check_error(
        &["/config/**"],
        &[],
        "classifier path rules: always_d[0] \"/config/**\" is not a valid glob: patterns are relative to the repository root; drop the leading /",
    );
}

#[test]
fn error_accessors_carry_the_offending_values() {
    let spec = PathRulesSpec {
        append_only: vec!["docs/{a,b".to_owned()],
        ..PathRulesSpec::default()
    };
    let error = PathRules::compile(&spec).expect_err("unclosed alternate");
    assert_eq!(
        (error.list(), error.index(), error.pattern()),
        (PathList::AppendOnly, 0, "docs/{a,b")
    );
}

// ---- the shipped globs against a model of the reference's prefix matching ----

const ALWAYS_D_PREFIXES: [&str; 8] = [
    "docs/concepts/",
    "config/",
    "governance/",
    ".github/workflows/",
    ".github/scripts/",
    ".github/actions/",
    "schemas/",
    "bot-state/",
];
const APPEND_ONLY_PREFIXES: [&str; 2] = ["docs/decisions/", "docs/meetings/"];
const CRITICAL_PREFIXES: [&str; 6] = [
    "src/",
    "schemas/",
    "docs/concepts/",
    ".github/workflows/",
    "config/",
    "governance/",
];

/// The reference's prefix rule (§8.2), with previous paths considered for every list.
fn prefix_model(files: &[FileChange]) -> Quadrant {
    let under = |f: &FileChange, prefixes: &[&str]| {
        f.paths()
            .any(|p| prefixes.iter().any(|prefix| p.starts_with(prefix)))
    };
    if files.is_empty() {
        return Quadrant::A;
    }
    let protected = files.iter().any(|f| {
        under(f, &ALWAYS_D_PREFIXES)
            || (f.status != FileStatus::Added && under(f, &APPEND_ONLY_PREFIXES))
    });
    if protected {
        return Quadrant::D;
    }
    let critical = files.iter().any(|f| under(f, &CRITICAL_PREFIXES));
    let irreversible = files.iter().any(|f| f.status == FileStatus::Removed);
    match (critical, irreversible) {
        (true, true) => Quadrant::D,
        (true, false) => Quadrant::B,
        (false, true) => Quadrant::C,
        (false, false) => Quadrant::A,
    }
}

fn path_strategy() -> impl Strategy<Value = String> {
    let segment = prop::sample::select(vec![
        "src",
        "config",
        "configs",
        "docs",
        "concepts",
        "decisions",
        "meetings",
        "guide",
        ".github",
        "workflows",
        "scripts",
        "actions",
        "ISSUE_TEMPLATE",
        "schemas",
        "bot-state",
        "governance",
        "tests",
        "a",
        "README.md",
        "x.yml",
    ]);
    prop::collection::vec(segment, 1..5).prop_map(|segments| segments.join("/"))
}

fn file_strategy() -> impl Strategy<Value = FileChange> {
    let status = prop::sample::select(vec![
        FileStatus::Added,
        FileStatus::Modified,
        FileStatus::Removed,
        FileStatus::Renamed,
    ]);
    (path_strategy(), status, path_strategy()).prop_map(|(path, status, previous)| FileChange {
        path,
        status,
        additions: 0,
        deletions: 0,
        previous_filename: (status == FileStatus::Renamed).then_some(previous),
    })
}

proptest! {
    #[test]
    fn shipped_globs_agree_with_the_reference_prefixes(
        files in prop::collection::vec(file_strategy(), 0..4)
    ) {
        let rules = shipped();
        prop_assert_eq!(rules.evaluate(&files).quadrant(), prefix_model(&files));
    }
}

#[test]
fn a_list_at_the_listing_cap_says_the_rest_was_not_read() {
    let files: Vec<_> = (0..super::super::empty_pr::FILE_LISTING_CAP)
        .map(|i| modified(&format!("docs/page-{i}.md")))
        .collect();
    check(
        &shipped(),
        &files,
        Quadrant::A,
        "3000 files listed, GitHub's cap, none of them critical, protected or removed; the files past the cap were not read",
    );
}
