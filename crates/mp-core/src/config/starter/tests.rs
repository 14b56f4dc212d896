//! Tests for the starter configuration: refused values, and rendered files that load as given.

use proptest::prelude::*;

use super::*;
use crate::config::{ConfigFiles, load};
use crate::ids::Login;

fn values(
    owner: &str,
    governance: &str,
    repos: &[&str],
    slug: &str,
    checks: &[&str],
) -> StarterValues {
    StarterValues {
        owner: owner.to_owned(),
        governance: governance.to_owned(),
        repos: repos.iter().map(|r| (*r).to_owned()).collect(),
        app_slug: slug.to_owned(),
        required_checks: checks.iter().map(|c| (*c).to_owned()).collect(),
    }
}

/// Renders `values`, loads the files and asserts there is no error and the values read back.
#[track_caller]
fn check_round_trip(values: &StarterValues) -> crate::config::ConfigReport {
    let starter = StarterConfig::parse(values).expect("valid values");
    let rendered = starter.render();
    let names: Vec<&str> = rendered.iter().map(|(name, _)| *name).collect();
    assert_eq!(names, STARTER_FILES);
    let files: ConfigFiles = rendered.into_iter().collect();
    let report = load(&files);
    let errors: Vec<String> = report.errors().map(ToString::to_string).collect();
    assert!(errors.is_empty(), "{errors:#?}\n{files:#?}");
    let config = report.config.as_ref().expect("a config without errors");
    assert_eq!(
        config.owner().login(),
        &Login::parse(&values.owner).expect("a login")
    );
    assert_eq!(
        config.projects().governance_repo(),
        &RepoName::parse(&values.governance).expect("a repository")
    );
    let supervised: Vec<RepoName> = values
        .repos
        .iter()
        .map(|r| RepoName::parse(r).expect("a repository"))
        .collect();
    assert_eq!(config.projects().supervised_repos(), supervised.as_slice());
    assert_eq!(config.env().bot_app_slug(), values.app_slug);
    assert_eq!(
        config.env().required_checks(),
        values.required_checks.as_slice()
    );
    assert!(!config.merge_enabled(), "a starter configuration observes");
    report
}

#[test]
fn rendered_files_load_and_carry_the_values() {
    let report = check_round_trip(&values(
        "jane-doe",
        "jane-doe/governance",
        &["jane-doe/webapp", "Jane-Doe/API.rs"],
        "jane-merge-gate",
        &["test", "CI / lint (ubuntu-latest)"],
    ));
    assert_eq!(report.warnings().count(), 0, "{:#?}", report.problems);
}

#[test]
fn values_a_yaml_reader_could_misread_stay_text() {
    check_round_trip(&values(
        "1234",
        "1234/5.5",
        &["no/yes", "on/null"],
        "123",
        &[
            "yes",
            "5.5",
            "null",
            "~",
            "a \"quoted\" name",
            "back\\slash",
            "build: linux #1",
            "- dash",
            "[x]",
            "{y}",
            "*star",
            "&anchor",
            "!tag",
            "%percent",
            "@at",
            "'single'",
            "ünïcode ✓",
        ],
    ));
}

#[test]
fn no_required_checks_is_valid_with_the_c2_posture_warning() {
    let report = check_round_trip(&values("jane", "jane/gov", &["jane/app"], "jane-gate", &[]));
    let codes: Vec<&str> = report.warnings().map(|p| p.code).collect();
    assert_eq!(codes, ["c2_posture"]);
}

#[test]
fn merging_starts_off_and_the_file_says_how_to_turn_it_on() {
    let starter = StarterConfig::parse(&values(
        "jane",
        "jane/gov",
        &["jane/app"],
        "jane-gate",
        &["test"],
    ))
    .expect("valid");
    let rendered = starter.render();
    let env = &rendered[2].1;
    assert!(env.contains("\nmerge_enabled: false\n"), "{env}");
    assert!(env.contains("set merge_enabled: true"), "{env}");
}

#[track_caller]
fn refused(values: &StarterValues) -> Vec<String> {
    let problems = StarterConfig::parse(values).expect_err("refused");
    problems
        .iter()
        .map(|p| format!("{}: {p}", p.field().as_str()))
        .collect()
}

#[test]
fn every_refused_value_is_reported() {
    let lines = refused(&values(
        "your-github-login",
        "not-a-repo",
        &["acme/app", "ACME/App", "-acme/x", "acme/..", "OWNER/REPO"],
        "Jane-Gate",
        &["test", "test", " padded", ""],
    ));
    assert_eq!(
        lines,
        [
            "owner: invalid GitHub login `your-github-login`: this is a placeholder from an example; give the real value",
            "governance: invalid repository `not-a-repo`: expected OWNER/REPO, e.g. jane-doe/webapp",
            "repo: invalid repository `ACME/App`: listed twice (repository names are case-insensitive)",
            "repo: invalid repository `-acme/x`: the owner part expected 1-39 letters, digits and single hyphens, not starting or ending with a hyphen",
            "repo: invalid repository `acme/..`: expected OWNER/REPO with a name of 1-100 letters, digits, `.`, `_` and `-`",
            "repo: invalid repository `OWNER/REPO`: this is a placeholder from an example; give the real value",
            "app_slug: invalid GitHub App slug `Jane-Gate`: expected 2-100 lowercase letters, digits and `-`, not starting or ending with `-` (a slug is lowercase, as in the App's URL github.com/apps/SLUG)",
            "required_check: invalid check name `test`: listed twice",
            "required_check: invalid check name ` padded`: a check name neither starts nor ends with a space (it would never match a check run)",
            "required_check: expected 1-255 characters",
        ]
    );
}

#[test]
fn logins_follow_githubs_rules() {
    for good in ["a", "jane-doe", "J4ne", &"x".repeat(39)] {
        assert_eq!(check_owner(good), Ok(()), "{good}");
    }
    for bad in [
        "",
        "-jane",
        "jane-",
        "jane--doe",
        "jane_doe",
        "jane.doe",
        "jane doe",
        "jane[bot]",
        &"x".repeat(40),
        "ghost",
        "GHOST",
        "your-login",
        "LOGIN",
        "username",
    ] {
        assert!(check_owner(bad).is_err(), "{bad:?} accepted");
    }
}

#[test]
fn no_repository_is_refused() {
    let lines = refused(&values("jane", "jane/gov", &[], "jane-gate", &[]));
    assert_eq!(
        lines,
        ["repo: at least one supervised repository is needed"]
    );
}

fn login() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9]{1,10}(-[a-zA-Z0-9]{1,10}){0,2}"
        .prop_filter("not a placeholder", |l| check_owner(l).is_ok())
}

fn repo() -> impl Strategy<Value = String> {
    (login(), "[A-Za-z0-9._-]{1,20}")
        .prop_map(|(owner, name)| format!("{owner}/{name}"))
        .prop_filter("valid", |r| check_repo(StarterField::Repo, r).is_ok())
}

proptest! {
    #[test]
    fn any_accepted_values_render_a_valid_configuration(
        owner in login(),
        governance in repo(),
        repos in proptest::collection::vec(repo(), 1..4),
        slug in "[a-z0-9][a-z0-9-]{0,20}[a-z0-9]",
        checks in proptest::collection::vec("[ -~]{1,30}", 0..4),
    ) {
        let values = StarterValues {
            owner,
            governance,
            repos,
            app_slug: slug,
            required_checks: checks,
        };
        if StarterConfig::parse(&values).is_ok() {
            check_round_trip(&values);
        }
    }
}
