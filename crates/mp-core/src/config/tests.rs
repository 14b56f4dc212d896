//! Tests for configuration loading: every problem named by file, line and key; defaults; resolution.

use super::*;
use crate::severity::Severity;
use proptest::prelude::*;

const OWNER: &str = "github_login: alice\n";
const PROJECTS: &str = "governance_repo: acme/governance\nsupervised_repos:\n  - acme/app\n";
const ENV: &str = "bot_app_slug: acme-gate\nrequired_checks:\n  - test\n";
/// Marks a file as absent in [`check`].
const ABSENT: &str = "\u{0}absent";

/// The minimal valid set (owner, projects, env) with `overrides` applied.
fn files(overrides: &[(&str, &str)]) -> ConfigFiles {
    let mut texts: BTreeMap<&str, &str> = [
        (OWNER_FILE, OWNER),
        (PROJECTS_FILE, PROJECTS),
        (ENV_FILE, ENV),
    ]
    .into_iter()
    .collect();
    for (name, text) in overrides {
        texts.insert(name, text);
    }
    texts
        .into_iter()
        .filter(|(_, text)| *text != ABSENT)
        .collect()
}

/// Loads the minimal set with `overrides` and asserts the problem lines; returns the config.
#[track_caller]
fn check(overrides: &[(&str, &str)], expected: &[&str]) -> Option<Config> {
    let report = load(&files(overrides));
    let lines: Vec<String> = report.problems.iter().map(ToString::to_string).collect();
    assert_eq!(lines, expected, "overrides: {overrides:#?}");
    assert_eq!(
        report.config.is_some(),
        !report.has_errors(),
        "a config comes back exactly when there is no error"
    );
    report.config
}

fn repo(name: &str) -> RepoName {
    RepoName::parse(name).expect("test repository name")
}

#[test]
fn minimal_set_loads_with_every_default() {
    let config = check(&[], &[]).expect("loads");
    let alice = Login::parse("alice").expect("login");
    assert_eq!(config.allowlist(), std::slice::from_ref(&alice));
    assert!(config.is_allowlisted(&alice));
    let projects = config.projects();
    assert_eq!(projects.governance_repo(), &repo("acme/governance"));
    assert_eq!(projects.bot_repo(), &repo("acme/governance"));
    assert_eq!(projects.inbox_repository(), &repo("acme/governance"));
    assert_eq!(projects.adr_deadline_hours(), 24);
    let lifecycle = projects.lifecycle();
    assert!(!lifecycle.enabled());
    assert_eq!(
        (lifecycle.reminder_hours(), lifecycle.escalate_hours()),
        (72, 168)
    );
    assert!(lifecycle.availability().is_none());
    assert!(projects.is_gated(&repo("acme/app")));
    assert!(!projects.is_gated(&repo("acme/governance")));
    let env = config.env();
    assert_eq!(env.runner_tier(), RunnerTier::ActionsFree);
    assert_eq!(env.classifier_publisher_slug(), "github-actions");
    assert!(!env.allow_no_ci());
    assert!(!env.auto_revert_pr());
    assert_eq!(env.l4_burn_in_days(), 0);
    assert!(!config.merge_enabled(), "observe-only by default");
    assert_eq!(env.check_report_timeout_minutes(), 60);
    assert_eq!(env.expected_check_publisher(), None);
    assert!(config.registry().is_none());
    assert_eq!(config.skills(), &SkillsPolicy::default());
    assert_eq!(config.path_rules(), &PathRulesSpec::default());
    assert!(config.mirror_paths().is_none());
    assert_eq!(
        config.effective_expected_check_publisher(&repo("acme/app")),
        "github-actions"
    );
}

#[test]
fn unknown_key_names_file_line_and_key() {
    check(
        &[(
            OWNER_FILE,
            "github_login: alice\nalowlisted_actors: [bob]\n",
        )],
        &[
            "owner.yml:2:1: error[unknown_field]: unknown field `alowlisted_actors`, did you mean `allowlisted_actors`? (field `alowlisted_actors`)",
        ],
    );
}

#[test]
fn unknown_nested_key_names_its_dotted_path() {
    check(
        &[(
            PROJECTS_FILE,
            "governance_repo: acme/governance\nsupervised_repos: [acme/app]\nrepo_overrides:\n  acme/app:\n    required_checks: [build]\n    merge_method: squash\n",
        )],
        &[
            "projects.yml:6:5: error[unknown_field]: unknown field `merge_method`, expected one of `required_checks`, `expected_check_publisher`, `required_check_workflows`, `default_branch`, `merge` (field `repo_overrides.acme/app.merge_method`)",
        ],
    );
}

#[test]
fn duplicate_key_is_refused() {
    check(
        &[(
            ENV_FILE,
            "bot_app_slug: acme-gate\nallow_no_ci: true\nallow_no_ci: false\n",
        )],
        &["env.yml:3:1: error[duplicate_key]: duplicate key `allow_no_ci` (field `allow_no_ci`)"],
    );
}

#[test]
fn duplicate_key_in_a_nested_map_is_refused() {
    check(
        &[(
            SKILLS_FILE,
            "severity_overrides:\n  no_todos: P2\n  no_todos: P0\n",
        )],
        &[
            "skills.yml:3:3: error[duplicate_key]: duplicate key `no_todos` (field `severity_overrides.no_todos`)",
        ],
    );
}

#[test]
fn wrong_type_is_named() {
    check(
        &[(ENV_FILE, "bot_app_slug: acme-gate\nrequired_checks: test\n")],
        &["env.yml:2:18: error[wrong_type]: expected a list (field `required_checks`)"],
    );
}

#[test]
fn yes_no_booleans_are_refused() {
    check(
        &[(ENV_FILE, "bot_app_slug: acme-gate\nmerge_enabled: yes\n")],
        &[
            "env.yml:2:16: error[wrong_type]: expected `true` or `false` (yes/no/on/off are not booleans here) (field `merge_enabled`)",
        ],
    );
}

#[test]
fn unquoted_number_is_not_text() {
    check(
        &[(
            AGENT_REGISTRY_FILE,
            "tools: [codex]\nmodels:\n  codex:\n    - 5.5\n",
        )],
        &[
            "agent_registry.yml:4:7: error[wrong_type]: the value `5.5` must be quoted to be read as text (field `models.codex`)",
        ],
    );
}

#[test]
fn merge_keys_are_refused() {
    check(
        &[(
            SKILLS_FILE,
            "base: &base\n  x: P2\nseverity_overrides:\n  <<: *base\n",
        )],
        &[
            "skills.yml:1:1: error[unknown_field]: unknown field `base`, expected one of `enabled`, `disabled`, `severity_overrides`, `limits` (field `base`)",
        ],
    );
    check(
        &[(SKILLS_FILE, "severity_overrides:\n  <<: {x: P2}\n")],
        &[
            "skills.yml:2:3: error[unsupported_yaml]: YAML merge keys (`<<`) are not allowed; write the keys out (field `severity_overrides.<<`)",
        ],
    );
}

#[test]
fn bad_glob_is_reported_with_its_line() {
    check(
        &[(
            CLASSIFIER_RULES_FILE,
            "always_d:\n  - config/**\n  - \"src/[oops\"\n  - /abs/**\n",
        )],
        &[
            "classifier_rules.yml:3:5: error[bad_pattern]: bad glob `src/[oops`: unclosed character class; missing ']' (field `always_d[1]`)",
            "classifier_rules.yml:4:5: error[bad_pattern]: bad glob `/abs/**`: the pattern starts with `/` and can never match; paths are relative to the repository root (field `always_d[2]`)",
        ],
    );
}

#[test]
fn classifier_lists_left_out_keep_the_default_and_empty_lists_turn_off() {
    let config = check(
        &[(
            CLASSIFIER_RULES_FILE,
            "critical: []\nappend_only:\n  - adr/**\n",
        )],
        &[],
    )
    .expect("loads");
    let rules = config.path_rules();
    assert_eq!(rules.always_d, PathRulesSpec::default().always_d);
    assert_eq!(rules.append_only, ["adr/**"]);
    assert!(rules.critical.is_empty());
}

#[test]
fn bad_login_is_named() {
    check(
        &[(
            OWNER_FILE,
            "github_login: -alice\nallowlisted_actors:\n  - alice\n  - Bob\n  - bob\n",
        )],
        &[
            "owner.yml:1:15: error[invalid_value]: invalid GitHub login `-alice`: expected letters, digits and `-`, starting with a letter or digit, at most 39 characters (field `github_login`)",
            "owner.yml:5:5: error[invalid_value]: login `bob` is listed twice (first at line 4) (field `allowlisted_actors[2]`)",
        ],
    );
}

#[test]
fn the_ghost_of_deleted_accounts_is_never_trusted() {
    check(
        &[(
            OWNER_FILE,
            "github_login: alice\nallowlisted_actors: [alice, Ghost]\n",
        )],
        &[
            "owner.yml:2:29: error[invalid_value]: `ghost` is GitHub's placeholder for deleted accounts and can never be trusted (field `allowlisted_actors[1]`)",
        ],
    );
}

#[test]
fn explicit_allowlist_replaces_the_default() {
    let config = check(
        &[(
            OWNER_FILE,
            "github_login: alice\nallowlisted_actors: [carol, dave]\ndisplay_name: Alice\n",
        )],
        &[
            "owner.yml:2:21: warning[owner_not_allowlisted]: allowlisted_actors does not list the owner `alice`, so the owner's labels, votes and pushes are not trusted; add `alice` to the list, or remove the key to trust only the owner (field `allowlisted_actors`)",
        ],
    )
    .expect("loads");
    let names: Vec<&str> = config.allowlist().iter().map(Login::as_str).collect();
    assert_eq!(names, ["carol", "dave"]);
    assert_eq!(config.owner().display_name(), Some("Alice"));
    check(
        &[(OWNER_FILE, "github_login: alice\nallowlisted_actors: []\n")],
        &[
            "owner.yml:2:21: error[invalid_value]: allowlisted_actors is empty; list at least one login or remove the key to trust only github_login (field `allowlisted_actors`)",
        ],
    );
}

#[test]
fn bad_repo_names_and_duplicates_are_named() {
    check(
        &[(
            PROJECTS_FILE,
            "governance_repo: acme\nsupervised_repos:\n  - acme/app\n  - Acme/App\n  - acme/a b\n",
        )],
        &[
            "projects.yml:1:18: error[invalid_value]: invalid repository `acme`: expected owner/name (field `governance_repo`)",
            "projects.yml:4:5: error[invalid_value]: repository `acme/app` is listed twice (first at line 3) (field `supervised_repos[1]`)",
            "projects.yml:5:5: error[invalid_value]: invalid repository `acme/a b`: expected owner/name (field `supervised_repos[2]`)",
        ],
    );
}

#[test]
fn bad_app_slug_and_unknown_runner_tier_are_named() {
    check(
        &[(
            ENV_FILE,
            "bot_app_slug: Acme_Gate\nrunner_tier: laptop\nrequired_checks: [test, test]\ncheck_report_timeout_minutes: 0\n",
        )],
        &[
            "env.yml:1:15: error[invalid_value]: invalid GitHub App slug `Acme_Gate`: expected 2-100 lowercase letters, digits and `-`, not starting or ending with `-` (field `bot_app_slug`)",
            "env.yml:2:14: error[invalid_value]: unknown runner_tier `laptop`, expected `actions-free`, `self-hosted` or `paid-cloud` (field `runner_tier`)",
            "env.yml:3:25: error[invalid_value]: required check `test` is listed twice (first at line 3) (field `required_checks[1]`)",
            "env.yml:4:31: error[invalid_value]: check_report_timeout_minutes must be at least 1 (field `check_report_timeout_minutes`)",
        ],
    );
}

#[test]
fn the_label_settle_window_is_read_and_bounded() {
    let config = check(
        &[(
            ENV_FILE,
            "bot_app_slug: acme-gate\nallow_no_ci: true\nlabel_settle_seconds: 300\n",
        )],
        &[],
    )
    .expect("loads");
    assert_eq!(
        config.env().label_settle(),
        crate::approval::SettleWindow::from_seconds(300)
    );
    let config = check(
        &[(ENV_FILE, "bot_app_slug: acme-gate\nallow_no_ci: true\n")],
        &[],
    )
    .expect("loads");
    assert_eq!(
        config.env().label_settle(),
        crate::approval::SettleWindow::DEFAULT
    );
    check(
        &[(
            ENV_FILE,
            "bot_app_slug: acme-gate\nallow_no_ci: true\nlabel_settle_seconds: 3601\n",
        )],
        &[
            "env.yml:3:23: error[invalid_value]: label_settle_seconds must be at most 3600, found 3601 (field `label_settle_seconds`)",
        ],
    );
}

#[test]
fn env_values_are_read() {
    let config = check(
        &[(
            ENV_FILE,
            "bot_app_slug: acme-gate\nrunner_tier: self-hosted\nclassifier_publisher_slug: acme-classifier\nallow_no_ci: true\nexpected_check_publisher: buildkite\nauto_revert_pr: true\nl4_burn_in_days: 60\nmerge_enabled: true\ncheck_report_timeout_minutes: 15\n",
        )],
        &[],
    )
    .expect("loads");
    let env = config.env();
    assert_eq!(env.runner_tier(), RunnerTier::SelfHosted);
    assert_eq!(env.classifier_publisher_slug(), "acme-classifier");
    assert!(env.allow_no_ci() && env.auto_revert_pr() && env.merge_enabled());
    assert_eq!(env.l4_burn_in_days(), 60);
    assert_eq!(env.check_report_timeout_minutes(), 15);
    assert_eq!(
        config.effective_expected_check_publisher(&repo("acme/app")),
        "buildkite"
    );
    assert!(
        config
            .effective_required_checks(&repo("acme/app"))
            .is_empty()
    );
}

#[test]
fn disabling_a_required_validator_is_refused() {
    check(
        &[(
            SKILLS_FILE,
            "disabled:\n  - hook_hallucination_guard\n  - validator_trailers\n",
        )],
        &[
            "skills.yml:3:5: error[cannot_disable_required_validator]: `validator_trailers` always runs and cannot be disabled; to make a user skill advisory, use severity_overrides (field `disabled[1]`)",
        ],
    );
    let config = check(
        &[(SKILLS_FILE, "disabled: [hook_hallucination_guard]\n")],
        &[],
    )
    .expect("loads");
    assert!(config.skills().is_disabled("hook_hallucination_guard"));
    assert!(!config.skills().is_disabled("validator_trailers"));
}

#[test]
fn lowering_a_core_validator_is_ignored_with_a_warning() {
    let config = check(
        &[(
            SKILLS_FILE,
            "severity_overrides:\n  validator_ci_green: P2\n  validator_trailers: P1\n  validator_agent_registry: P0\n",
        )],
        &["skills.yml:2:23: warning[severity_not_lowered]: `validator_ci_green` is a core L1 validator and stays blocking; the override to P2 is ignored (field `severity_overrides.validator_ci_green`)"],
    )
    .expect("a warning does not block");
    let skills = config.skills();
    assert_eq!(skills.severity_override("validator_ci_green"), None);
    assert_eq!(
        skills.severity_override("validator_trailers"),
        Some(Severity::P1)
    );
    assert_eq!(
        skills.severity_override("validator_agent_registry"),
        Some(Severity::P0)
    );
}

#[test]
fn unknown_severity_is_an_error() {
    check(
        &[(SKILLS_FILE, "severity_overrides:\n  no_todos: high\n")],
        &[
            "skills.yml:2:13: error[invalid_value]: unknown severity `high` for `no_todos`, expected P0, P1, P2 or P3 (field `severity_overrides.no_todos`)",
        ],
    );
}

#[test]
fn user_skill_allowlist_applies_to_user_skills() {
    let config = check(&[(SKILLS_FILE, "enabled: [no_todos]\n")], &[]).expect("loads");
    assert!(config.skills().user_skill_enabled("no_todos"));
    assert!(!config.skills().user_skill_enabled("other"));
    let config = check(&[(SKILLS_FILE, "# nothing yet\n")], &[]).expect("loads");
    assert!(config.skills().user_skill_enabled("other"));
}

#[test]
fn effective_required_checks_resolve_override_then_env() {
    let config = check(
        &[(
            PROJECTS_FILE,
            "governance_repo: acme/governance\nsupervised_repos: [acme/app, acme/web, acme/docs]\nrepo_overrides:\n  acme/web:\n    required_checks: [lint, e2e]\n    expected_check_publisher: buildkite\n  acme/docs:\n    required_checks: []\n",
        )],
        &["projects.yml:2:40: warning[c2_posture]: C2 posture: gated repository `acme/docs` names no required checks and allow_no_ci is false, so any green check run from the expected publisher passes C2; list the checks in required_checks (field `supervised_repos[2]`)"],
    )
    .expect("loads");
    assert_eq!(
        config.effective_required_checks(&repo("acme/app")),
        ["test"]
    );
    assert_eq!(
        config.effective_required_checks(&repo("acme/web")),
        ["lint", "e2e"]
    );
    assert!(
        config
            .effective_required_checks(&repo("acme/docs"))
            .is_empty(),
        "an explicit [] means no named checks despite the global list"
    );
    assert_eq!(
        config.effective_expected_check_publisher(&repo("acme/web")),
        "buildkite"
    );
    assert_eq!(
        config.effective_expected_check_publisher(&repo("acme/app")),
        "github-actions"
    );
}

#[test]
fn c2_posture_warns_only_for_gated_repos_without_checks() {
    check(
        &[
            (
                PROJECTS_FILE,
                "governance_repo: acme/governance\nsupervised_repos:\n  - acme/app\n  - acme/infra\naudit_only_repos: [acme/infra]\n",
            ),
            (ENV_FILE, "bot_app_slug: acme-gate\n"),
        ],
        &[
            "projects.yml:3:5: warning[c2_posture]: C2 posture: gated repository `acme/app` names no required checks and allow_no_ci is false, so any green check run from the expected publisher passes C2; list the checks in required_checks (field `supervised_repos[0]`)",
        ],
    );
    check(
        &[(ENV_FILE, "bot_app_slug: acme-gate\nallow_no_ci: true\n")],
        &[],
    );
}

#[test]
fn project_sections_resolve_and_warn() {
    let config = check(
        &[(
            PROJECTS_FILE,
            "governance_repo: acme/governance
supervised_repos: [acme/app]
bot_repo: acme/merge-bot
audit_only_repos: [acme/old]
decision_inbox:
  repository: acme/decisions
  thresholds:
    nudge_days: 3
  lifecycle:
    enabled: true
    reminder_hours: 24
    availability:
      path: OWNER.md
break_glass:
  adr_deadline_hours: 48
repo_overrides:
  acme/other:
    required_checks: [build]
",
        )],
        &[
            "projects.yml:4:20: warning[unsupervised_repo]: audit-only repository `acme/old` is not in supervised_repos, so it is never scanned (field `audit_only_repos[0]`)",
            "projects.yml:8:5: warning[ignored_field]: decision_inbox.thresholds is a legacy setting and is ignored; use decision_inbox.lifecycle (field `decision_inbox.thresholds`)",
            "projects.yml:17:3: warning[unsupervised_repo]: repo_overrides names `acme/other`, which is not in supervised_repos, so the override has no effect (field `repo_overrides.acme/other`)",
        ],
    )
    .expect("warnings do not block");
    let projects = config.projects();
    assert_eq!(projects.bot_repo(), &repo("acme/merge-bot"));
    assert_eq!(projects.inbox_repository(), &repo("acme/decisions"));
    assert_eq!(projects.adr_deadline_hours(), 48);
    let lifecycle = projects.lifecycle();
    assert!(lifecycle.enabled());
    assert_eq!(
        (lifecycle.reminder_hours(), lifecycle.escalate_hours()),
        (24, 168)
    );
    let availability = lifecycle.availability().expect("configured");
    assert_eq!(availability.repository(), &repo("acme/governance"));
    assert_eq!(availability.path(), "OWNER.md");
    assert_eq!(availability.git_ref(), "main");
    assert_eq!(availability.line_prefix(), "[OWNER_AVAILABILITY]");
}

#[test]
fn lifecycle_hours_must_be_ordered() {
    check(
        &[(
            PROJECTS_FILE,
            "governance_repo: acme/governance\nsupervised_repos: [acme/app]\ndecision_inbox:\n  lifecycle:\n    reminder_hours: 100\n    escalate_hours: 50\n",
        )],
        &[
            "projects.yml:6:21: error[invalid_value]: escalate_hours (50) must be greater than reminder_hours (100) (field `decision_inbox.lifecycle.escalate_hours`)",
        ],
    );
}

#[test]
fn missing_nested_key_names_its_path() {
    check(
        &[(
            PROJECTS_FILE,
            "governance_repo: acme/governance\ndecision_inbox:\n  lifecycle:\n    availability: {ref: main}\n",
        )],
        &[
            "projects.yml:4:20: error[missing_field]: missing required field `path` (field `decision_inbox.lifecycle.availability.path`)",
        ],
    );
}

#[test]
fn missing_required_file_is_named() {
    check(
        &[(ENV_FILE, ABSENT)],
        &["env.yml: error[missing_file]: required file `env.yml` is missing"],
    );
}

#[test]
fn empty_required_file_reports_the_missing_key() {
    check(
        &[(OWNER_FILE, "# owner of this deployment\n")],
        &[
            "owner.yml: error[missing_field]: missing required field `github_login` (the file is empty) (field `github_login`)",
        ],
    );
}

#[test]
fn every_file_is_checked_even_when_others_fail() {
    check(
        &[
            (OWNER_FILE, "github_login: [alice]\n"),
            (PROJECTS_FILE, ABSENT),
            (ENV_FILE, "bot_app_slug: acme-gate\nallow_no_ci: on\n"),
            (AGENT_REGISTRY_FILE, "tools: [Codex]\n"),
            ("owner.yaml", "github_login: alice\n"),
        ],
        &[
            "owner.yml:1:15: error[wrong_type]: expected text (field `github_login`)",
            "projects.yml: error[missing_file]: required file `projects.yml` is missing",
            "env.yml:2:14: error[wrong_type]: expected `true` or `false` (yes/no/on/off are not booleans here) (field `allow_no_ci`)",
            "agent_registry.yml:1:9: error[invalid_value]: invalid tool name `Codex`: expected a lowercase letter then up to 49 lowercase letters, digits or `-` (field `tools[0]`)",
            "owner.yaml: warning[unknown_file]: `owner.yaml` is not a configuration file and is not read; did you mean `owner.yml`?",
        ],
    );
}

#[test]
fn registry_models_must_name_registered_tools() {
    check(
        &[(
            AGENT_REGISTRY_FILE,
            "tools: [claude-code, manual]\nmodels:\n  claude-cod: [\"*\"]\n  manual: []\nmachines: [laptop]\n",
        )],
        &[
            "agent_registry.yml:3:3: error[invalid_value]: models names tool `claude-cod`, which is not in tools (field `models.claude-cod`)",
            "agent_registry.yml:4:11: error[invalid_value]: the model list of `manual` is empty; use [\"*\"] to allow any model (field `models.manual`)",
            "agent_registry.yml:5:11: warning[ignored_field]: machines is a legacy setting and is ignored; Agent-Machine is never checked (field `machines`)",
        ],
    );
}

#[test]
fn parse_agent_registry_stands_alone() {
    let registry = parse_agent_registry(
        "agent_registry.yml",
        "tools: [claude-code, manual]\nmodels:\n  manual: [n/a]\n",
    )
    .expect("valid registry");
    assert!(registry.model_allowed("claude-code", "anything"));
    assert!(registry.model_allowed("manual", "n/a"));
    assert!(!registry.model_allowed("manual", "gpt-5"));
    let problems: Vec<String> =
        parse_agent_registry("hooks/registry.yml", "tools: [codex, codex]\n")
            .expect_err("duplicate tool")
            .iter()
            .map(ToString::to_string)
            .collect();
    assert_eq!(
        problems,
        [
            "hooks/registry.yml:1:16: error[invalid_value]: tool `codex` is listed twice (first at line 1) (field `tools[1]`)"
        ]
    );
}

#[test]
fn mirror_paths_are_read_from_json() {
    let config = check(
        &[(
            MIRROR_PATHS_FILE,
            "{\n  \"schema_version\": 1,\n  \"canonical_paths\": [\"AGENTS.md\", \"docs/policy.md\"],\n  \"exceptions\": {\"App\": [\"docs/policy.md\"]}\n}\n",
        )],
        &[],
    )
    .expect("loads");
    let mirror = config.mirror_paths().expect("present");
    assert_eq!(mirror.paths_for("app"), ["AGENTS.md"]);
    assert_eq!(mirror.paths_for("web"), ["AGENTS.md", "docs/policy.md"]);
    check(
        &[(
            MIRROR_PATHS_FILE,
            "{\"schema_version\": 2, \"canonical_paths\": [\"a\", \"../b\"],\n \"exceptions\": {\"acme/app\": [\"a\"], \"web\": [\"c\"]}}",
        )],
        &[
            "mirror_paths.json:1:20: error[invalid_value]: unsupported schema_version 2, expected 1 (field `schema_version`)",
            "mirror_paths.json:1:48: error[invalid_value]: invalid path `../b`: the path has an empty, `.` or `..` segment (field `canonical_paths[1]`)",
            "mirror_paths.json:2:17: error[invalid_value]: invalid repository name `acme/app`; use the repository name without its owner (field `exceptions.acme/app`)",
            "mirror_paths.json:2:44: warning[no_effect]: exception `c` is not a canonical path, so it has no effect (field `exceptions.web[0]`)",
        ],
    );
}

#[test]
fn problem_display_is_one_line_without_unknown_parts() {
    let problem = ConfigProblem::error("env.yml", codes::WRONG_TYPE, "bad\nvalue").at(3, 0);
    assert_eq!(
        problem.to_string(),
        "env.yml:3: error[wrong_type]: bad\\nvalue"
    );
}

#[test]
fn example_config_sets_load_cleanly() {
    let solo: ConfigFiles = [
        (
            OWNER_FILE,
            include_str!("../../../../examples/solo-developer/owner.yml"),
        ),
        (
            PROJECTS_FILE,
            include_str!("../../../../examples/solo-developer/projects.yml"),
        ),
        (
            ENV_FILE,
            include_str!("../../../../examples/solo-developer/env.yml"),
        ),
        (
            AGENT_REGISTRY_FILE,
            include_str!("../../../../examples/solo-developer/agent_registry.yml"),
        ),
        (
            SKILLS_FILE,
            include_str!("../../../../examples/solo-developer/skills.yml"),
        ),
        (
            CLASSIFIER_RULES_FILE,
            include_str!("../../../../examples/solo-developer/classifier_rules.yml"),
        ),
    ]
    .into_iter()
    .collect();
    let team: ConfigFiles = [
        (
            OWNER_FILE,
            include_str!("../../../../examples/small-team/owner.yml"),
        ),
        (
            PROJECTS_FILE,
            include_str!("../../../../examples/small-team/projects.yml"),
        ),
        (
            ENV_FILE,
            include_str!("../../../../examples/small-team/env.yml"),
        ),
        (
            AGENT_REGISTRY_FILE,
            include_str!("../../../../examples/small-team/agent_registry.yml"),
        ),
        (
            SKILLS_FILE,
            include_str!("../../../../examples/small-team/skills.yml"),
        ),
        (
            CLASSIFIER_RULES_FILE,
            include_str!("../../../../examples/small-team/classifier_rules.yml"),
        ),
        (
            MIRROR_PATHS_FILE,
            include_str!("../../../../examples/small-team/mirror_paths.json"),
        ),
    ]
    .into_iter()
    .collect();
    for (name, files) in [("solo-developer", solo), ("small-team", team)] {
        let report = load(&files);
        let lines: Vec<String> = report.problems.iter().map(ToString::to_string).collect();
        assert!(lines.is_empty(), "{name}: {lines:#?}");
        let config = report.config.expect("example loads");
        assert_eq!(
            config.path_rules(),
            &PathRulesSpec::default(),
            "{name}: the example classifier_rules.yml is the shipped default"
        );
        assert!(config.registry().is_some(), "{name}");
    }
}

#[cfg(feature = "schema")]
#[test]
fn committed_schemas_are_current() {
    let committed = [
        include_str!("../../../../schemas/owner.schema.json"),
        include_str!("../../../../schemas/projects.schema.json"),
        include_str!("../../../../schemas/env.schema.json"),
        include_str!("../../../../schemas/agent_registry.schema.json"),
        include_str!("../../../../schemas/skills.schema.json"),
        include_str!("../../../../schemas/classifier_rules.schema.json"),
        include_str!("../../../../schemas/mirror_paths.schema.json"),
    ];
    for ((name, schema), committed) in json_schemas().into_iter().zip(committed) {
        let generated = serde_json::to_string_pretty(&schema).expect("schema serializes") + "\n";
        assert_eq!(
            generated, committed,
            "schemas/{name}.schema.json is stale; run `cargo xtask schemas`"
        );
    }
}

#[cfg(feature = "schema")]
#[test]
fn the_skills_schema_refuses_disabling_what_the_loader_refuses() {
    use super::skills::{DISABLEABLE_BUILTINS, REQUIRED_SKILLS};
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../../../schemas/skills.schema.json"))
            .expect("the committed schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    let names = REQUIRED_SKILLS
        .iter()
        .map(|n| (*n, true))
        .chain(DISABLEABLE_BUILTINS.iter().map(|n| (*n, false)))
        .chain([("my_user_skill", false)]);
    for (name, required) in names {
        let doc = serde_json::json!({ "disabled": [name] });
        assert_eq!(
            validator.is_valid(&doc),
            !required,
            "the schema and `{name}` disagree"
        );
        let skills = format!("disabled: [{name}]\n");
        let report = load(&files(&[("skills.yml", &skills)]));
        let refused = report
            .errors()
            .any(|p| p.code == codes::CANNOT_DISABLE_REQUIRED_VALIDATOR);
        assert_eq!(refused, required, "the loader and `{name}` disagree");
    }
}

#[test]
fn booleans_are_read_exactly_as_the_configuration_guide_says() {
    // docs/configuration.md: `true` and `false`, also as YAML 1.2 spells them
    // (`True`, `TRUE`, ...) and quoted; nothing else.
    let accepted = ["true", "false", "True", "FALSE", "\"true\"", "'false'"];
    let refused = [
        "yes", "no", "on", "off", "y", "n", "1", "0", "tRue", "~", "\"yes\"",
    ];
    for (spelling, ok) in accepted
        .iter()
        .map(|s| (s, true))
        .chain(refused.iter().map(|s| (s, false)))
    {
        let env = format!("{ENV}merge_enabled: {spelling}\n");
        let report = load(&files(&[(ENV_FILE, &env)]));
        assert_eq!(!report.has_errors(), ok, "merge_enabled: {spelling}");
        if !ok {
            assert!(
                report.errors().all(|p| p.code == codes::WRONG_TYPE),
                "merge_enabled: {spelling}: {:?}",
                report.problems
            );
        }
    }
}

/// Text that looks a little like YAML, to reach deeper into the parser than random bytes.
fn yamlish() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        Just("github_login: ".to_owned()),
        Just("tools:".to_owned()),
        Just("repo_overrides:".to_owned()),
        Just("\n  - ".to_owned()),
        Just("\n".to_owned()),
        Just("  ".to_owned()),
        Just("[".to_owned()),
        Just("]".to_owned()),
        Just("{".to_owned()),
        Just("}".to_owned()),
        Just(": ".to_owned()),
        Just("&a ".to_owned()),
        Just("*a".to_owned()),
        Just("<<: ".to_owned()),
        Just("!tag ".to_owned()),
        Just("\"".to_owned()),
        Just("# c".to_owned()),
        Just("---\n".to_owned()),
        "[a-z/_*\\[\\]-]{0,12}",
        any::<String>(),
    ];
    prop::collection::vec(token, 0..24).prop_map(|tokens| tokens.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn load_never_panics(
        file in prop::sample::select(CONFIG_FILE_NAMES.to_vec()),
        text in prop_oneof![any::<String>(), yamlish()],
    ) {
        let report = load(&files(&[(file, &text)]));
        prop_assert_eq!(report.config.is_some(), !report.has_errors());
        for problem in &report.problems {
            prop_assert!(!problem.to_string().contains('\n'));
        }
    }
}

#[test]
fn skill_limits_default_and_can_be_set() {
    let config = check(&[], &[]).expect("loads");
    assert_eq!(
        config.skills().limits(),
        crate::config::skills::SkillLimits {
            call_budget_ms: 1000,
            memory_mib: 16,
            output_kib: 64
        }
    );
    let config = check(
        &[(
            SKILLS_FILE,
            "limits:\n  call_budget_ms: 250\n  memory_mib: 4\n  output_kib: 8\n",
        )],
        &[],
    )
    .expect("loads");
    assert_eq!(config.skills().limits().call_budget_ms, 250);
    assert_eq!(config.skills().limits().memory_mib, 4);
    assert_eq!(config.skills().limits().output_kib, 8);
}

#[test]
fn skill_limits_out_of_range_are_errors_naming_the_field() {
    check(
        &[(
            SKILLS_FILE,
            "limits:\n  call_budget_ms: 0\n  memory_mib: 2048\n",
        )],
        &[
            "skills.yml:2:19: error[invalid_value]: limits.call_budget_ms is 0, expected 1 to 60000 (field `limits.call_budget_ms`)",
            "skills.yml:3:15: error[invalid_value]: limits.memory_mib is 2048, expected 1 to 1024 (field `limits.memory_mib`)",
        ],
    );
    check(
        &[(SKILLS_FILE, "limits:\n  budget: 5\n")],
        &[
            "skills.yml:2:3: error[unknown_field]: unknown field `budget`, expected one of `call_budget_ms`, `memory_mib`, `output_kib` (field `limits.budget`)",
        ],
    );
}

#[test]
fn a_repository_may_name_its_gated_branch() {
    let text = "governance_repo: acme/governance\nsupervised_repos: [acme/app]\nrepo_overrides:\n  acme/app:\n    default_branch: master\n  acme/governance:\n    default_branch: trunk\n";
    let config = check(&[(PROJECTS_FILE, text)], &[]).expect("valid");
    let branch = |name: &str| {
        config
            .projects()
            .repo_override(&repo(name))
            .and_then(|o| o.default_branch())
            .map(str::to_owned)
    };
    assert_eq!(branch("acme/app").as_deref(), Some("master"));
    assert_eq!(branch("acme/governance").as_deref(), Some("trunk"));
}

#[test]
fn merge_mode_defaults_to_direct_and_queue_takes_its_settings() {
    let text = "governance_repo: acme/governance\nsupervised_repos: [acme/app, acme/lib, acme/web]\nrepo_overrides:\n  acme/app:\n    merge:\n      mode: queue\n      batch_max: 4\n      infra_retries: 0\n      max_queued_per_agent: 2\n      priority_label: urgent\n  acme/lib:\n    merge:\n      mode: queue\n  acme/web:\n    required_checks: [build]\n";
    let config = check(&[(PROJECTS_FILE, text)], &[]).expect("valid");
    let projects = config.projects();
    let app = projects.merge_settings(&repo("acme/app"));
    assert!(app.is_queue());
    assert_eq!(app.batch_max(), 4);
    assert_eq!(app.infra_retries(), 0);
    assert_eq!(app.max_queued_per_agent(), Some(2));
    assert_eq!(app.priority_label(), "urgent");
    let lib = projects.merge_settings(&repo("acme/lib"));
    assert!(lib.is_queue());
    assert_eq!(
        (
            lib.batch_max(),
            lib.infra_retries(),
            lib.max_queued_per_agent()
        ),
        (16, 1, None)
    );
    assert_eq!(lib.priority_label(), "mp:priority");
    for direct in ["acme/web", "acme/governance", "acme/unlisted"] {
        let settings = projects.merge_settings(&repo(direct));
        assert_eq!(settings.mode(), super::RepoMergeMode::Direct);
        assert!(!projects.is_queue_mode(&repo(direct)));
    }
}

#[test]
fn github_queue_mode_is_its_own_mode_and_the_queue_settings_do_nothing_there() {
    let config = check(
        &[(
            PROJECTS_FILE,
            "governance_repo: acme/governance\nsupervised_repos: [acme/app, acme/lib]\nrepo_overrides:\n  acme/app:\n    merge:\n      mode: github-queue\n      batch_max: 4\n  acme/lib:\n    merge:\n      priority_label: urgent\n",
        )],
        &[
            "projects.yml:7:18: warning[no_effect]: `batch_max` applies only to merge mode `queue`; it has no effect in `github-queue` (field `repo_overrides.acme/app.merge.batch_max`)",
            "projects.yml:10:23: warning[no_effect]: `priority_label` applies only to merge mode `queue`; it has no effect in `direct` (field `repo_overrides.acme/lib.merge.priority_label`)",
        ],
    )
    .expect("warnings do not refuse the configuration");
    let projects = config.projects();
    let app = projects.merge_settings(&repo("acme/app"));
    assert_eq!(app.mode(), super::RepoMergeMode::GitHubQueue);
    assert!(app.is_github_queue() && !app.is_queue());
    assert!(!projects.is_queue_mode(&repo("acme/app")));
    assert!(app.mode().tests_on_head());
    assert!(!super::RepoMergeMode::Direct.tests_on_head());
    let policy = config.gate_policy(
        &repo("acme/app"),
        Login::parse("gate").expect("login"),
        None,
    );
    assert_eq!(policy.merge_mode, super::RepoMergeMode::GitHubQueue);
}

#[test]
fn merge_settings_out_of_range_are_errors_at_their_place() {
    check(
        &[(
            PROJECTS_FILE,
            "governance_repo: acme/governance\nsupervised_repos: [acme/app]\nrepo_overrides:\n  acme/app:\n    merge:\n      mode: batched\n      batch_max: 0\n      infra_retries: 11\n      max_queued_per_agent: 0\n      priority_label: \"\"\n      order: fifo\n",
        )],
        &[
            "projects.yml:11:7: error[unknown_field]: unknown field `order`, expected one of `mode`, `batch_max`, `infra_retries`, `max_queued_per_agent`, `priority_label` (field `repo_overrides.acme/app.merge.order`)",
        ],
    );
    check(
        &[(
            PROJECTS_FILE,
            "governance_repo: acme/governance\nsupervised_repos: [acme/app]\nrepo_overrides:\n  acme/app:\n    merge:\n      mode: batched\n      batch_max: 101\n      infra_retries: 11\n      max_queued_per_agent: 0\n      priority_label: \"\"\n",
        )],
        &[
            "projects.yml:6:13: error[invalid_value]: unknown merge mode `batched`, expected `direct`, `queue` or `github-queue` (field `repo_overrides.acme/app.merge.mode`)",
            "projects.yml:7:18: error[invalid_value]: batch_max must be between 1 and 100, found 101 (field `repo_overrides.acme/app.merge.batch_max`)",
            "projects.yml:8:22: error[invalid_value]: infra_retries must be at most 10, found 11 (field `repo_overrides.acme/app.merge.infra_retries`)",
            "projects.yml:9:29: error[invalid_value]: max_queued_per_agent must be at least 1 (leave it out for no cap) (field `repo_overrides.acme/app.merge.max_queued_per_agent`)",
            "projects.yml:10:23: error[invalid_value]: the value is empty, expected 1 to 50 characters (field `repo_overrides.acme/app.merge.priority_label`)",
        ],
    );
}

#[test]
fn a_gated_branch_must_be_a_branch_name_and_not_bot_state() {
    check(
        &[(
            PROJECTS_FILE,
            "governance_repo: acme/governance\nsupervised_repos: [acme/app, acme/lib]\nrepo_overrides:\n  acme/app:\n    default_branch: \"my branch\"\n  acme/lib:\n    default_branch: bot-state\n",
        )],
        &[
            "projects.yml:5:21: error[invalid_value]: `my branch` is not a branch name (field `repo_overrides.acme/app.default_branch`)",
            "projects.yml:7:21: error[invalid_value]: `bot-state` holds mp's own state and cannot be the gated branch (field `repo_overrides.acme/lib.default_branch`)",
        ],
    );
}

#[test]
fn an_allowlist_without_the_owner_is_a_warning_with_the_fix() {
    let config = check(
        &[(
            OWNER_FILE,
            "github_login: alice\nallowlisted_actors:\n  - bob\n",
        )],
        &[
            "owner.yml:3:3: warning[owner_not_allowlisted]: allowlisted_actors does not list the owner `alice`, so the owner's labels, votes and pushes are not trusted; add `alice` to the list, or remove the key to trust only the owner (field `allowlisted_actors`)",
        ],
    )
    .expect("a warning does not refuse the configuration");
    assert!(!config.is_allowlisted(&Login::parse("alice").expect("login")));
    check(
        &[(
            OWNER_FILE,
            "github_login: Alice\nallowlisted_actors: [bob, alice]\n",
        )],
        &[],
    );
}

#[test]
fn an_over_indented_list_item_is_refused_not_folded_into_text() {
    check(
        &[(
            ENV_FILE,
            "bot_app_slug: acme-gate\nrequired_checks:\n  - test\n    - lint\n",
        )],
        &[
            "env.yml:4:5: error[folded_list_item]: this line is read as the end of the list item on line 3 (`test - lint`), because it is indented more than that item; write each item on its own line at the same indentation (field `required_checks`)",
        ],
    );
    // The lists users mean still load: items at one indentation, nested lists under keys,
    // block scalars whose lines start with `- `, quoted items.
    let config = check(
        &[
            (
                ENV_FILE,
                "bot_app_slug: acme-gate\nrequired_checks:\n  - test\n  - lint\n",
            ),
            (
                OWNER_FILE,
                "github_login: alice\ndisplay_name: >\n  - alice\n    - the owner\n",
            ),
        ],
        &[],
    )
    .expect("loads");
    assert_eq!(config.env().required_checks(), ["test", "lint"]);
    assert_eq!(
        config.owner().display_name(),
        Some("- alice\n  - the owner\n")
    );
}

#[test]
fn skill_names_in_skills_yml_must_exist_with_a_did_you_mean() {
    let with_skills = |text: &str, user: &[&str]| {
        let files = files(&[(SKILLS_FILE, text)]).with_user_skills(user.iter().copied());
        load(&files)
            .problems
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        with_skills("enabled: [no_wip_titel]\n", &["no_wip_title"]),
        [
            "skills.yml:1:11: error[unknown_skill]: no skill is named `no_wip_titel`: did you mean `no_wip_title`? (field `enabled[0]`)"
        ]
    );
    assert_eq!(
        with_skills(
            "disabled:\n  - classifier_empty_prr\nseverity_overrides:\n  no_wip_title: P2\n",
            &[]
        ),
        [
            "skills.yml:2:5: error[unknown_skill]: no skill is named `classifier_empty_prr`: did you mean `classifier_empty_pr`? (field `disabled[0]`)",
            "skills.yml:4:3: error[unknown_skill]: no skill is named `no_wip_title`: the configuration directory has no user skills (skills/<kind>/<name>.wasm) (field `severity_overrides.no_wip_title`)",
        ]
    );
    assert_eq!(
        with_skills("enabled: [validator_ci_green]\n", &[]),
        [
            "skills.yml:1:11: warning[no_effect]: `validator_ci_green` is a built-in skill, which runs whatever `enabled` says (it lists user skills only); remove it from the list (field `enabled[0]`)"
        ]
    );
    let known = "enabled: [no_wip_title]\ndisabled: [hook_hallucination_guard]\nseverity_overrides:\n  no_wip_title: P2\n";
    assert_eq!(with_skills(known, &["no_wip_title"]), Vec::<String>::new());
    // A caller that cannot tell which user skills exist gets no such check.
    check(&[(SKILLS_FILE, "enabled: [no_wip_titel]\n")], &[]);
}

#[test]
fn required_check_workflows_name_workflow_files() {
    let config = check(
        &[(
            ENV_FILE,
            "bot_app_slug: acme-gate\nrequired_checks: [test]\nrequired_check_workflows:\n  test: .github/workflows/ci.yml\n",
        )],
        &[],
    )
    .expect("loads");
    assert_eq!(
        config
            .env()
            .required_check_workflows()
            .get("test")
            .map(String::as_str),
        Some(".github/workflows/ci.yml")
    );
    check(
        &[(
            ENV_FILE,
            "bot_app_slug: acme-gate\nrequired_checks: [test, lint]\nrequired_check_workflows:\n  test: ci.yml\n  lint: .github/workflows/sub/lint.yml\n",
        )],
        &[
            "env.yml:4:9: error[invalid_value]: `ci.yml` is not a workflow file: expected `.github/workflows/<name>.yml` or `.yaml` (field `required_check_workflows.test`)",
            "env.yml:5:9: error[invalid_value]: `.github/workflows/sub/lint.yml` is not a workflow file: expected `.github/workflows/<name>.yml` or `.yaml` (field `required_check_workflows.lint`)",
        ],
    );
}

#[test]
fn a_repository_override_replaces_the_workflow_binding() {
    let config = check(
        &[
            (
                ENV_FILE,
                "bot_app_slug: acme-gate\nrequired_checks: [test]\nrequired_check_workflows:\n  test: .github/workflows/ci.yml\n",
            ),
            (
                PROJECTS_FILE,
                "governance_repo: acme/governance\nsupervised_repos: [acme/app, acme/web, acme/docs]\nrepo_overrides:\n  acme/web:\n    required_check_workflows:\n      test: .github/workflows/web.yaml\n  acme/docs:\n    required_check_workflows: {}\n",
            ),
        ],
        &[],
    )
    .expect("loads");
    let bound = |name: &str| {
        config
            .effective_required_check_workflows(&repo(name))
            .get("test")
            .cloned()
    };
    assert_eq!(
        bound("acme/app").as_deref(),
        Some(".github/workflows/ci.yml")
    );
    assert_eq!(
        bound("acme/web").as_deref(),
        Some(".github/workflows/web.yaml")
    );
    assert_eq!(bound("acme/docs"), None);
    check(
        &[(
            PROJECTS_FILE,
            "governance_repo: acme/governance\nsupervised_repos: [acme/app]\nrepo_overrides:\n  acme/app:\n    required_check_workflows:\n      test: ci.yml\n",
        )],
        &[
            "projects.yml:6:13: error[invalid_value]: `ci.yml` is not a workflow file: expected `.github/workflows/<name>.yml` or `.yaml` (field `repo_overrides.acme/app.required_check_workflows.test`)",
        ],
    );
}
