//! Tests for loading user skills from a world's configuration entries.

use super::*;

const EXAMPLE_WAT: &str =
    include_str!("../../../../examples/skills/no_todos_in_prod/no_todos_in_prod.wat");
const EXAMPLE_MD: &str =
    include_str!("../../../../examples/skills/no_todos_in_prod/no_todos_in_prod.md");

fn config() -> Config {
    let files: mp_core::config::ConfigFiles = [
        ("owner.yml", "github_login: alice\n"),
        (
            "projects.yml",
            "governance_repo: acme/governance\nsupervised_repos: [acme/app]\n",
        ),
        (
            "env.yml",
            "bot_app_slug: mp-gate\nrequired_checks: [test]\n",
        ),
    ]
    .into_iter()
    .map(|(n, t)| (n.to_owned(), t.to_owned()))
    .collect();
    mp_core::config::load(&files)
        .config
        .expect("the test configuration is valid")
}

/// Loads the world entries `files` and compares the skill names, the counters and the
/// warnings (or the error) with `expected`.
#[track_caller]
fn check(files: &[(&str, &str)], expected: &[&str]) {
    let files: BTreeMap<String, String> = files
        .iter()
        .map(|(n, t)| ((*n).to_owned(), (*t).to_owned()))
        .collect();
    let lines: Vec<String> = match from_world(&config(), &files, &SkillCalls::default()) {
        Ok(set) => {
            let mut lines = vec![format!(
                "{:?} loaded={} failed={}",
                set.names(),
                set.loaded,
                set.load_failed
            )];
            lines.extend(set.load_warnings.iter().map(|w| format!("! {w}")));
            lines
        }
        Err(error) => vec![format!("error: {error}")],
    };
    assert_eq!(lines, expected);
}

#[test]
fn a_world_without_skill_entries_loads_no_skill() {
    check(&[], &["[] loaded=0 failed=0"]);
}

#[test]
fn the_example_validator_loads_from_world_entries() {
    check(
        &[
            ("skills/validators/no_todos_in_prod.wat", EXAMPLE_WAT),
            ("skills/validators/no_todos_in_prod.md", EXAMPLE_MD),
        ],
        &["[\"no_todos_in_prod\"] loaded=1 failed=0"],
    );
}

#[test]
fn a_skill_without_its_contract_fails_to_load_with_a_relative_path() {
    check(
        &[("skills/validators/no_todos_in_prod.wat", EXAMPLE_WAT)],
        &[
            "[] loaded=0 failed=1",
            "! skill_load_failed: skill no_todos_in_prod (skills/validators/no_todos_in_prod.wat): no readable contract document skills/validators/no_todos_in_prod.md (No such file or directory (os error 2))",
        ],
    );
}

#[test]
fn an_entry_climbing_out_of_the_directory_is_refused() {
    check(
        &[("skills/../escape.wat", EXAMPLE_WAT)],
        &[
            "error: world config entry `skills/../escape.wat` is not a plain relative path (no `..`, no empty part)",
        ],
    );
}

#[test]
fn every_required_built_in_is_listed_and_a_missing_one_is_named() {
    let registry = Registry::load(None, config().skills(), Limits::default());
    let listed = registry.built_in_names();
    assert_eq!(missing_built_in(&listed), None);
    let without_c2: Vec<&str> = listed
        .iter()
        .copied()
        .filter(|n| *n != "validator_ci_green")
        .collect();
    let missing = missing_built_in(&without_c2).expect("C2 is missing");
    assert_eq!(missing.name, "validator_ci_green");
    let err: anyhow::Error = missing.into();
    assert!(err.downcast_ref::<BuiltInLoadFailed>().is_some());
}
