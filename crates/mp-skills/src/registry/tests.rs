//! Tests of the registry: built-in listing, user-skill loading and the skills.yml policy.

use std::path::Path;

use mp_core::config::{self, ConfigFiles, SkillsPolicy};
use mp_core::skill::Validator;

use super::*;
use crate::test_support::{commit, pr};

const PASS: &str = include_str!("../sandbox/testdata/pass_validator.wat");
const VOTE_D: &str = include_str!("../sandbox/testdata/vote_d.wat");
const NETWORK: &str = include_str!("../sandbox/testdata/network_import.wat");
const CONTRACT: &str =
    include_str!("../../../../examples/skills/no_todos_in_prod/no_todos_in_prod.md");
const EXAMPLE: &str =
    include_str!("../../../../examples/skills/no_todos_in_prod/no_todos_in_prod.wat");

/// The policy of a configuration whose `skills.yml` is `skills_yml`.
fn policy(skills_yml: &str) -> SkillsPolicy {
    let files = ConfigFiles::new()
        .with("owner.yml", "github_login: jane-doe\n")
        .with(
            "projects.yml",
            "governance_repo: jane-doe/governance\nsupervised_repos:\n  - jane-doe/webapp\n",
        )
        .with("env.yml", "bot_app_slug: jane-merge-gate\n")
        .with("skills.yml", skills_yml);
    let report = config::load(&files);
    let problems: Vec<String> = report.problems.iter().map(|p| p.message.clone()).collect();
    report
        .config
        .unwrap_or_else(|| panic!("test configuration is valid: {problems:?}"))
        .skills()
        .clone()
}

/// Writes `files` (path relative to the skills folder, text) into a temporary skills
/// folder, loads the registry under `skills_yml`, and compares one line per user skill,
/// per built-in that the policy changed, and per warning (paths shown relative).
#[track_caller]
fn check(files: &[(&str, &str)], skills_yml: &str, expected: &[&str]) {
    let dir = tempfile::tempdir().expect("temporary folder");
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().expect("has a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write fixture");
    }
    let registry = Registry::load(Some(dir.path()), &policy(skills_yml), Limits::default());
    let mut lines = Vec::new();
    for entry in registry.entries() {
        let default_severity = BUILT_INS
            .iter()
            .find(|b| b.name == entry.name)
            .and_then(|b| b.severity);
        let changed = entry.state != SkillState::Active || entry.severity != default_severity;
        if matches!(entry.origin, Origin::User { .. }) || changed {
            let severity = entry.severity.map_or(String::new(), |s| format!(" {s}"));
            lines.push(format!(
                "{} {} {}{severity}",
                entry.name,
                entry.kind,
                entry.state.as_str()
            ));
        }
    }
    let root = format!("{}/", dir.path().display());
    lines.extend(
        registry
            .warnings()
            .iter()
            .map(|w| w.to_string().replace(&root, "")),
    );
    assert_eq!(lines, expected);
}

#[test]
fn no_user_skills_lists_only_built_ins() {
    check(&[], "", &[]);
    let registry = Registry::load(None, &SkillsPolicy::default(), Limits::default());
    assert_eq!(registry.entries().len(), BUILT_INS.len());
    assert!(
        registry
            .entry("hook_unauthorized_push")
            .is_some_and(|e| e.required)
    );
}

#[test]
fn user_skills_of_each_kind_load() {
    check(
        &[
            ("validators/passes.wat", PASS),
            ("validators/passes.md", CONTRACT),
            ("classifier/deploy_is_d.wat", VOTE_D),
            ("classifier/deploy_is_d.md", CONTRACT),
        ],
        "",
        &[
            "passes validator active P0",
            "deploy_is_d classifier_rule active",
        ],
    );
}

#[test]
fn policy_disables_overrides_and_allowlists() {
    check(
        &[
            ("validators/passes.wat", PASS),
            ("validators/passes.md", CONTRACT),
            ("validators/other.wat", PASS),
            ("validators/other.md", CONTRACT),
        ],
        "enabled: [passes, ghost]\ndisabled: [hook_hallucination_guard]\nseverity_overrides:\n  passes: P2\n  validator_agent_registry: P0\n",
        &[
            "validator_agent_registry validator active P0",
            "hook_hallucination_guard branch_hook disabled",
            "other validator not_enabled P0",
            "passes validator active P2",
            "skill_not_found: skill ghost: listed in skills.yml `enabled` but no such user skill exists",
        ],
    );
}

#[test]
fn load_failures_are_soft_warnings() {
    check(
        &[
            ("validators/fetcher.wat", NETWORK),
            ("validators/fetcher.md", CONTRACT),
            ("validators/undocumented.wat", PASS),
            ("validators/thin.wat", PASS),
            (
                "validators/thin.md",
                "# thin\n\n## Purpose\n\nnothing else\n",
            ),
            ("validators/validator_ci_green.wat", PASS),
            ("validators/passes.wat", PASS),
            ("validators/passes.md", CONTRACT),
        ],
        "",
        &[
            "passes validator active P0",
            "skill_load_failed: skill fetcher (validators/fetcher.wat): skill_imports_network: imports network access `wasi_snapshot_preview1.sock_send`",
            "skill_load_failed: skill thin (validators/thin.wat): contract validators/thin.md is incomplete: missing section `## When to call`; missing section `## When not to call`; missing section `## Input contract`; missing section `## Output contract`; missing section `## Permissions`; missing section `## Execution method`; missing section `## Failure classes`; missing section `## Completion criteria`; missing section `## Verification method`",
            "skill_load_failed: skill undocumented (validators/undocumented.wat): no readable contract document validators/undocumented.md (No such file or directory (os error 2))",
            "skill_load_failed: skill validator_ci_green (validators/validator_ci_green.wat): `validator_ci_green` is the name of a built-in skill",
        ],
    );
}

#[test]
fn loaded_user_validator_runs_through_the_registry() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let folder = dir.path().join("validators");
    std::fs::create_dir_all(&folder).expect("mkdir");
    std::fs::write(folder.join("no_todos_in_prod.wat"), EXAMPLE).expect("write");
    std::fs::write(folder.join("no_todos_in_prod.md"), CONTRACT).expect("write");
    let registry = Registry::load(
        Some(Path::new(dir.path())),
        &policy("severity_overrides:\n  no_todos_in_prod: P1\n"),
        Limits::default(),
    );
    let validators: Vec<&dyn Validator> = registry.user_validators().collect();
    assert_eq!(validators.len(), 1);
    assert_eq!(validators[0].severity(), Severity::P1);
    let verdict = validators[0]
        .check(&pr(vec![commit(0x21, "TODO: finish")]))
        .map(|v| v.to_string());
    assert_eq!(
        verdict,
        Ok("fail: a commit subject contains TODO".to_owned())
    );
}

#[test]
fn a_skill_that_answers_outside_its_output_schema_is_a_contract_violation() {
    // The module always answers `{"passed":true,"failure_reason":null}`; this contract
    // says a passing answer has no `failure_reason` key at all.
    let strict = CONTRACT.replacen(
        "\"required\": [\"passed\", \"failure_reason\"]",
        "\"required\": [\"passed\"],\n  \"not\": { \"required\": [\"failure_reason\"] }",
        1,
    );
    assert_ne!(strict, CONTRACT, "the output schema was rewritten");
    let dir = tempfile::tempdir().expect("temporary folder");
    let folder = dir.path().join("validators");
    std::fs::create_dir_all(&folder).expect("mkdir");
    std::fs::write(folder.join("always_passes.wat"), PASS).expect("write module");
    std::fs::write(folder.join("always_passes.md"), &strict).expect("write contract");
    let registry = Registry::load(Some(dir.path()), &policy(""), Limits::default());
    let validators: Vec<&dyn Validator> = registry.user_validators().collect();
    assert_eq!(validators.len(), 1, "{:?}", registry.warnings());
    let failure = validators[0]
        .check(&pr(vec![commit(0x21, "feat: fine")]))
        .expect_err("the answer breaks the contract");
    assert_eq!(failure.code(), "skill_contract_violation");
    assert_eq!(failure.stage.as_str(), "output");
    assert!(
        failure
            .to_string()
            .contains("output does not match its contract schema: at /: "),
        "{failure}"
    );
}

#[test]
fn a_changed_pull_request_is_never_answered_from_the_previous_input() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let folder = dir.path().join("validators");
    std::fs::create_dir_all(&folder).expect("mkdir");
    std::fs::write(folder.join("no_todos_in_prod.wat"), EXAMPLE).expect("write");
    std::fs::write(folder.join("no_todos_in_prod.md"), CONTRACT).expect("write");
    let registry = Registry::load(Some(dir.path()), &policy(""), Limits::default());
    let validators: Vec<&dyn Validator> = registry.user_validators().collect();
    let clean = pr(vec![commit(0x21, "feat: fine")]);
    let mut todo = clean.clone();
    todo.commits[0].subject = "TODO: later".to_owned();
    let verdicts: Vec<String> = [&clean, &todo, &clean, &todo]
        .iter()
        .map(|pr| {
            validators[0]
                .check(pr)
                .map_or_else(|f| f.to_string(), |v| v.to_string())
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            "pass",
            "fail: a commit subject contains TODO",
            "pass",
            "fail: a commit subject contains TODO"
        ]
    );
}

#[test]
fn a_fetched_skill_md_is_read_strictly() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let write = |name: &str, front: &str| {
        let skill = dir.path().join(name);
        std::fs::create_dir_all(&skill).expect("mkdir");
        std::fs::write(
            skill.join("SKILL.md"),
            format!("---\n{front}---\n{CONTRACT}"),
        )
        .expect("SKILL.md");
        std::fs::write(skill.join(format!("{name}.wat")), PASS).expect("module");
        skill
    };
    let cases = [
        (
            "acme-twice",
            "name: acme-twice\nkind: classifier\nkind: validators\n",
        ),
        ("acme-renamed", "name: acme-other\nkind: validators\n"),
        ("acme-good", "name: acme-good\nkind: validators\n"),
    ];
    let dirs: Vec<_> = cases
        .iter()
        .map(|(name, front)| write(name, front))
        .collect();
    let sourced: Vec<SourcedSkill<'_>> = cases
        .iter()
        .zip(&dirs)
        .map(|((name, _), dir)| SourcedSkill {
            source: "acme",
            name,
            dir,
        })
        .collect();
    let registry =
        Registry::load_with_sources(None, &sourced, &SkillsPolicy::default(), Limits::default());
    let root = format!("{}/", dir.path().display());
    let warnings: Vec<String> = registry
        .warnings()
        .iter()
        .map(|w| w.reason.replace(&root, ""))
        .collect();
    assert_eq!(
        warnings,
        [
            "acme-twice/SKILL.md:4: source_duplicate_key: duplicate key `kind` (field `kind`)",
            "acme-renamed/SKILL.md:2: source_skill_name_mismatch: SKILL.md names the skill `acme-other` but its directory is `acme-renamed` (field `name`)",
        ]
    );
    assert!(registry.entry("acme-good").is_some());
    assert!(registry.entry("acme-twice").is_none());
}
