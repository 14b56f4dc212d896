//! Tests of the registry's user skills as a `SkillSet`: each call goes to the skill by
//! name and is recorded with a digest of its exact input.

use mp_core::config::SkillsPolicy;

use super::*;
use crate::sandbox::Limits;
use crate::test_support::{commit, pr};

const CONTRACT: &str =
    include_str!("../../../../examples/skills/no_todos_in_prod/no_todos_in_prod.md");
const EXAMPLE: &str =
    include_str!("../../../../examples/skills/no_todos_in_prod/no_todos_in_prod.wat");

/// The example validator as the one user skill of a registry, made a set.
fn example_set(calls: &SkillCalls) -> (SkillSet, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temporary folder");
    let folder = dir.path().join("validators");
    std::fs::create_dir_all(&folder).expect("mkdir");
    std::fs::write(folder.join("no_todos_in_prod.wat"), EXAMPLE).expect("write");
    std::fs::write(folder.join("no_todos_in_prod.md"), CONTRACT).expect("write");
    let registry = Registry::load(
        Some(dir.path()),
        &SkillsPolicy::default(),
        Limits::default(),
    );
    (user_skills(registry, calls, ToString::to_string), dir)
}

#[test]
fn every_call_is_recorded_with_the_digest_of_its_input() {
    let calls = SkillCalls::default();
    let (set, _dir) = example_set(&calls);
    assert_eq!(
        (
            set.validators.len(),
            set.classifier_rules.len(),
            set.branch_hooks.len()
        ),
        (1, 0, 0)
    );
    assert_eq!((set.loaded, set.load_failed), (1, 0));
    let validator = &set.validators[0];
    assert_eq!(validator.name(), "no_todos_in_prod");
    let todo = pr(vec![commit(0x21, "TODO: finish")]);
    let fine = pr(vec![commit(0x21, "feat: fine")]);
    let verdicts: Vec<String> = [&todo, &fine, &todo]
        .iter()
        .map(|pr| {
            validator
                .check(pr)
                .map_or_else(|f| f.to_string(), |v| v.to_string())
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            "fail: a commit subject contains TODO",
            "pass",
            "fail: a commit subject contains TODO"
        ]
    );
    let recorded = calls.take();
    let seen: Vec<(&str, &str, &str, &str)> = recorded
        .iter()
        .map(|c| {
            (
                c.skill.as_str(),
                c.kind,
                c.subject.as_str(),
                c.verdict.as_str(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (
                "no_todos_in_prod",
                "validator",
                "acme/app#7",
                "fail: a commit subject contains TODO"
            ),
            ("no_todos_in_prod", "validator", "acme/app#7", "pass"),
            (
                "no_todos_in_prod",
                "validator",
                "acme/app#7",
                "fail: a commit subject contains TODO"
            ),
        ]
    );
    let digests: Vec<&str> = recorded.iter().map(|c| c.input_sha256.as_str()).collect();
    assert!(digests.iter().all(|d| d.len() == 64), "{digests:?}");
    assert_eq!(digests[0], digests[2], "one input, one digest");
    assert_ne!(digests[0], digests[1], "another input, another digest");
    assert!(calls.take().is_empty(), "taken calls are gone");
}

#[test]
fn a_call_is_one_audit_line() {
    let calls = SkillCalls::default();
    let (set, _dir) = example_set(&calls);
    let _ = set.validators[0].check(&pr(vec![commit(0x21, "feat: fine")]));
    let at = mp_core::Timestamp::from_unix_seconds(0).expect("the epoch");
    let line: serde_json::Value =
        serde_json::from_str(&calls.take()[0].to_json_line(at)).expect("JSON");
    assert_eq!(line["record"], "skill_call");
    assert_eq!(line["ts"], "1970-01-01T00:00:00Z");
    assert_eq!(line["skill"], "no_todos_in_prod");
    assert_eq!(line["verdict"], "pass");
}
