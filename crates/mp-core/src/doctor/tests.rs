//! Tests of the doctor's decisions, each over a configuration and the facts read.

use std::collections::{BTreeMap, BTreeSet};

use super::*;
use crate::config::{ConfigFiles, load};

fn config_with(env: &str, projects: &str) -> Config {
    let mut files = ConfigFiles::new();
    files.insert("owner.yml", "github_login: alice\n");
    files.insert("projects.yml", projects);
    files.insert("env.yml", env);
    let report = load(&files);
    let errors: Vec<String> = report.errors().map(ToString::to_string).collect();
    report
        .config
        .unwrap_or_else(|| panic!("the test configuration loads: {errors:?}"))
}

fn config() -> Config {
    config_with(
        "bot_app_slug: gate\nrequired_checks: [test]\nmerge_enabled: true\n",
        "governance_repo: org/gov\nsupervised_repos: [org/app, org/gov]\n",
    )
}

fn repo(text: &str) -> RepoName {
    RepoName::parse(text).expect("a repository name")
}

fn permissions(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn all_granted() -> BTreeMap<String, String> {
    permissions(&[
        ("contents", "write"),
        ("pull_requests", "write"),
        ("issues", "write"),
        ("checks", "read"),
        ("metadata", "read"),
    ])
}

#[test]
fn a_configuration_with_problems_fails_listing_them() {
    let check = config_check(&["env.yml:1: bad".to_owned()], 0, "'/etc/my mp'");
    assert_eq!(check.status, Status::Fail);
    assert!(check.detail.contains("env.yml:1: bad"));
    assert_eq!(
        check.fix.as_deref(),
        Some(
            "fix each problem listed (mp config validate --config '/etc/my mp' shows them with their line)"
        )
    );
    assert_eq!(config_check(&[], 2, "conf").status, Status::Ok);
}

#[test]
fn values_left_from_the_examples_fail_and_own_values_pass() {
    let copied = config_with(
        "bot_app_slug: jane-merge-gate\n",
        "governance_repo: jane-doe/governance\nsupervised_repos: [jane-doe/webapp]\n",
    );
    let check = placeholder_check(&copied);
    assert_eq!(check.status, Status::Fail);
    for value in ["jane-doe/governance", "jane-doe/webapp", "jane-merge-gate"] {
        assert!(check.detail.contains(value), "{value} in {}", check.detail);
    }
    assert_eq!(placeholder_check(&config()).status, Status::Ok);
    assert!(is_placeholder("your-github-login"));
    assert!(is_placeholder("ACME"));
    assert!(!is_placeholder("acme-corp"));
}

/// Every login, account and App slug of the shipped examples counts as a placeholder.
#[test]
fn every_value_of_the_examples_is_a_placeholder() {
    let examples = [
        (
            include_str!("../../../../examples/solo-developer/owner.yml"),
            include_str!("../../../../examples/solo-developer/projects.yml"),
            include_str!("../../../../examples/solo-developer/env.yml"),
        ),
        (
            include_str!("../../../../examples/small-team/owner.yml"),
            include_str!("../../../../examples/small-team/projects.yml"),
            include_str!("../../../../examples/small-team/env.yml"),
        ),
    ];
    for (owner, projects, env) in examples {
        let mut files = ConfigFiles::new();
        files.insert("owner.yml", owner);
        files.insert("projects.yml", projects);
        files.insert("env.yml", env);
        let config = load(&files).config.expect("an example loads");
        let mut values: Vec<String> = vec![
            config.owner().login().as_str().to_owned(),
            config.env().bot_app_slug().to_owned(),
        ];
        values.extend(
            config
                .owner()
                .allowlist()
                .iter()
                .map(|l| l.as_str().to_owned()),
        );
        values.extend(repositories(&config).iter().map(|r| r.owner().to_owned()));
        for value in values {
            assert!(is_placeholder(&value), "{value} is not a placeholder");
        }
        assert_eq!(placeholder_check(&config).status, Status::Fail);
    }
    let workflow = include_str!("../../../../examples/workflows/mp-tick.yml");
    assert!(workflow.contains("your-org/mp"));
    assert!(is_placeholder("your-org"));
}

#[test]
fn an_app_whose_slug_differs_from_env_fails_naming_both() {
    let config = config();
    let check = credentials_check(&config, &Credentials::App(Ok("other".to_owned())));
    assert_eq!(check.status, Status::Fail);
    assert!(check.detail.contains("other") && check.detail.contains("gate"));
    assert_eq!(
        credentials_check(&config, &Credentials::App(Ok("gate".to_owned()))).status,
        Status::Ok
    );
    let token = credentials_check(&config, &Credentials::Token(Ok("alice".to_owned())));
    assert!(token.detail.contains("token") && token.status == Status::Ok);
    let broken = credentials_check(&config, &Credentials::Token(Err("401".to_owned())));
    assert_eq!(broken.status, Status::Fail);
}

#[test]
fn a_missing_or_weaker_permission_is_named() {
    let mut granted = all_granted();
    assert!(missing_permissions(&granted).is_empty());
    granted.insert("contents".to_owned(), "read".to_owned());
    granted.remove("issues");
    assert_eq!(
        missing_permissions(&granted),
        ["Contents: write (has read)", "Issues: write (not granted)"]
    );
    let check = access_check(&config(), &repo("org/app"), &Access::Installation(granted));
    assert_eq!(check.status, Status::Fail);
    assert!(check.detail.contains("Contents: write (has read)"));
    // A higher level than needed is enough.
    let admin = permissions(&[
        ("contents", "admin"),
        ("pull_requests", "write"),
        ("issues", "write"),
        ("checks", "write"),
        ("metadata", "read"),
    ]);
    assert!(missing_permissions(&admin).is_empty());
}

#[test]
fn github_queue_mode_needs_checks_and_merge_queues_write() {
    let granted = all_granted();
    assert_eq!(
        missing_permissions_github_queue(&granted),
        [
            "Checks: write (has read)",
            "Merge queues: write (not granted)"
        ]
    );
    let mut enough = granted.clone();
    enough.insert("checks".to_owned(), "write".to_owned());
    enough.insert("merge_queues".to_owned(), "write".to_owned());
    assert!(missing_permissions_github_queue(&enough).is_empty());
    // The repository's mode decides which list applies.
    let queued = config_with(
        "bot_app_slug: gate\nrequired_checks: [test]\nmerge_enabled: true\n",
        "governance_repo: org/gov\nsupervised_repos: [org/app, org/lib, org/gov]\nrepo_overrides:\n  org/app:\n    merge:\n      mode: github-queue\n",
    );
    let app = access_check(
        &queued,
        &repo("org/app"),
        &Access::Installation(granted.clone()),
    );
    assert_eq!(app.status, Status::Fail);
    assert!(app.detail.contains("Merge queues: write"), "{}", app.detail);
    let lib = access_check(&queued, &repo("org/lib"), &Access::Installation(granted));
    assert_eq!(lib.status, Status::Ok, "{}", lib.detail);
}

#[test]
fn a_repository_without_the_installation_fails_with_the_install_link() {
    let check = access_check(&config(), &repo("org/app"), &Access::NotInstalled);
    assert_eq!(check.status, Status::Fail);
    assert!(
        check
            .fix
            .as_deref()
            .is_some_and(|f| f.contains("apps/gate"))
    );
    assert!(!Access::NotInstalled.reachable());
    assert!(Access::Readable.reachable());
}

#[test]
fn the_default_branch_comes_from_the_override_first() {
    let config = config_with(
        "bot_app_slug: gate\n",
        "governance_repo: org/gov\nsupervised_repos: [org/app]\nrepo_overrides:\n  org/app:\n    default_branch: trunk\n",
    );
    let app = repo("org/app");
    let from_github = Ok("main".to_owned());
    assert_eq!(gated_branch(&config, &app, Some(&from_github)), "trunk");
    let check = default_branch_check(&config, &app, None);
    assert_eq!(check.status, Status::Ok);
    assert!(check.detail.contains("trunk") && check.detail.contains("repo_overrides"));
    let gov = repo("org/gov");
    let failed = Err("HTTP 500".to_owned());
    assert_eq!(gated_branch(&config, &gov, Some(&failed)), "main");
    assert_eq!(
        default_branch_check(&config, &gov, Some(&failed)).status,
        Status::Fail
    );
    let develop = Ok("develop".to_owned());
    assert!(
        default_branch_check(&config, &gov, Some(&develop))
            .detail
            .contains("develop")
    );
}

#[test]
fn a_missing_bot_state_branch_passes_only_when_the_first_tick_can_create_it() {
    let config = config();
    assert_eq!(
        bot_state_check(&config, &Ok(true), ContentsWrite::Missing).status,
        Status::Ok
    );
    assert_eq!(
        bot_state_check(&config, &Ok(false), ContentsWrite::Granted).status,
        Status::Ok
    );
    assert_eq!(
        bot_state_check(&config, &Ok(false), ContentsWrite::Unknown).status,
        Status::Warn
    );
    assert_eq!(
        bot_state_check(&config, &Ok(false), ContentsWrite::Missing).status,
        Status::Fail
    );
}

#[test]
fn labels_are_wanted_where_mp_writes_them() {
    let config = config_with(
        "bot_app_slug: gate\n",
        "governance_repo: org/gov\nsupervised_repos: [org/app]\ndecision_inbox:\n  repository: org/inbox\n",
    );
    let names = |repo_name: &str| -> Vec<&str> {
        labels_for(&config, &repo(repo_name))
            .iter()
            .map(|s| s.name)
            .collect()
    };
    assert!(names("org/app").contains(&"ready-to-merge"));
    assert!(!names("org/app").contains(&"decision:pending-owner"));
    assert!(names("org/inbox").contains(&"decision:pending-owner"));
    assert!(names("org/gov").contains(&"decision:post-merge-revalidation"));
    assert!(!names("org/gov").contains(&"ready-to-merge"));
    assert_eq!(
        repositories(&config),
        [repo("org/gov"), repo("org/app"), repo("org/inbox")]
    );
    for spec in PULL_REQUEST_LABELS.iter().chain(INBOX_LABELS) {
        assert!(spec.description.len() <= 100, "{}", spec.name);
        assert!(spec.color.len() == 6 && spec.color.chars().all(|c| c.is_ascii_hexdigit()));
    }
}

#[test]
fn missing_labels_fail_with_the_create_fix_as_doctor_was_run() {
    let config = config();
    let app = repo("org/app");
    let run = "mp doctor --config conf";
    let mut existing: Vec<String> = labels_for(&config, &app)
        .iter()
        .map(|s| s.name.to_owned())
        .collect();
    assert_eq!(
        labels_check(&config, &app, &Ok(existing.clone()), run).status,
        Status::Ok
    );
    existing.retain(|l| l != "ready-to-merge");
    let check = labels_check(&config, &app, &Ok(existing), run);
    assert_eq!(check.status, Status::Fail);
    assert!(check.detail.contains("ready-to-merge"));
    assert_eq!(
        check.fix.as_deref(),
        Some("mp doctor --config conf --create-labels (creates them)")
    );
}

#[test]
fn a_label_in_another_case_fails_as_the_gate_would_and_is_renamed() {
    // GitHub keeps one label per name without case; C1 reads `ready-to-merge` exactly, so
    // `Ready-To-Merge` would never open the gate.
    let config = config();
    let app = repo("org/app");
    let existing: Vec<String> = labels_for(&config, &app)
        .iter()
        .map(|s| {
            if s.name == "ready-to-merge" {
                "Ready-To-Merge".to_owned()
            } else {
                s.name.to_owned()
            }
        })
        .collect();
    assert!(missing_labels(&config, &app, &existing).is_empty());
    let miscased = miscased_labels(&config, &app, &existing);
    assert_eq!(miscased.len(), 1);
    assert_eq!(miscased[0].0.name, "ready-to-merge");
    assert_eq!(miscased[0].1, "Ready-To-Merge");
    let check = labels_check(&config, &app, &Ok(existing), "mp doctor --config conf");
    assert_eq!(check.status, Status::Fail);
    assert_eq!(
        check.detail,
        "org/app spells 1 label(s) in another case, which mp does not read: `Ready-To-Merge` (mp reads `ready-to-merge`)"
    );
    assert!(
        check.fix.as_deref().is_some_and(
            |fix| fix.starts_with("mp doctor --config conf --create-labels (renames them;")
        ),
        "{:?}",
        check.fix
    );
}

#[test]
fn a_required_check_never_seen_or_from_another_app_is_a_warning() {
    let config = config();
    let app = repo("org/app");
    let mut seen = SeenChecks {
        commits: 5,
        apps: BTreeMap::new(),
    };
    let never = required_checks_check(&config, &app, &Ok(seen.clone()));
    assert_eq!(never.status, Status::Warn);
    assert!(never.detail.contains("test never seen"));
    seen.apps
        .insert("test".to_owned(), BTreeSet::from(["buildkite".to_owned()]));
    let foreign = required_checks_check(&config, &app, &Ok(seen.clone()));
    assert_eq!(foreign.status, Status::Warn);
    assert!(foreign.detail.contains("not published by github-actions"));
    seen.apps.insert(
        "test".to_owned(),
        BTreeSet::from(["github-actions".to_owned()]),
    );
    let fine = required_checks_check(&config, &app, &Ok(seen));
    assert_eq!(fine.status, Status::Ok);
    assert!(fine.detail.contains("test by github-actions"));
}

#[test]
fn merging_without_a_receipt_key_fails_and_observing_without_one_warns() {
    assert_eq!(receipt_key_check(&config(), false).status, Status::Fail);
    assert_eq!(receipt_key_check(&config(), true).status, Status::Ok);
    let observe = config_with("bot_app_slug: gate\n", "governance_repo: org/gov\n");
    // A day-one requirement: what is written before the key arrives is asked again.
    let early = receipt_key_check(&observe, false);
    assert_eq!(early.status, Status::Warn);
    assert!(early.detail.contains("asked again"), "{}", early.detail);
    assert_eq!(receipt_key_check(&observe, true).status, Status::Ok);
}

#[test]
fn a_workflow_running_mp_without_concurrency_is_a_warning() {
    let config = config();
    let example = include_str!("../../../../examples/workflows/mp-tick.yml");
    assert!(runs_mp(example) && has_concurrency(example));
    let guarded = Ok(vec![("mp.yml".to_owned(), example.to_owned())]);
    assert_eq!(workflow_check(&config, &guarded).status, Status::Ok);
    let bare = "on: {schedule: [{cron: '*/5 * * * *'}]}\njobs:\n  t:\n    steps:\n      - run: mp tick --config config\n";
    let unguarded = Ok(vec![("t.yml".to_owned(), bare.to_owned())]);
    let check = workflow_check(&config, &unguarded);
    assert_eq!(check.status, Status::Warn);
    assert!(check.detail.contains("t.yml"));
    let none = Ok(vec![("ci.yml".to_owned(), "jobs: {}\n".to_owned())]);
    assert_eq!(workflow_check(&config, &none).status, Status::Warn);
    assert!(!runs_mp("# mp tick in a comment\n"));
    assert!(runs_mp("      - uses: \"acme/mp@v1\"  # the gate\n"));
    assert!(!runs_mp(
        "      - uses: actions/checkout@v4\n      - uses: ./\n"
    ));
}

#[test]
fn the_checks_come_in_order_and_skip_unreachable_repositories() {
    let config = config();
    let facts = Facts {
        credentials: Credentials::App(Ok("gate".to_owned())),
        repos: vec![
            RepoFacts {
                repo: repo("org/gov"),
                access: Access::Installation(all_granted()),
                default_branch: Some(Ok("main".to_owned())),
                labels: Some(Ok(Vec::new())),
                checks: Some(Ok(SeenChecks::default())),
                rules: Some(Ok(vec!["deletion".to_owned()])),
            },
            RepoFacts {
                repo: repo("org/app"),
                access: Access::NotInstalled,
                default_branch: None,
                labels: None,
                checks: None,
                rules: None,
            },
        ],
        bot_state: Some(Ok(false)),
        state_load: None,
        bot_state_rules: Some(Err("HTTP 403".to_owned())),
        receipt_key_set: true,
        workflows: Some(Ok(Vec::new())),
        environments: None,
        doctor_command: "mp doctor --config conf".to_owned(),
    };
    let checks = checks(&config, &facts);
    let names: Vec<&str> = checks.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "placeholders",
            "credentials",
            "installation:org/gov",
            "installation:org/app",
            "default_branch:org/gov",
            "bot_state",
            "bot_state_rules",
            "labels:org/gov",
            "required_checks:org/gov",
            "branch_rules:org/gov",
            "check_provenance:org/gov",
            "receipt_key",
            "workflow_concurrency",
        ]
    );
    assert!(!all_ok(&checks));
    // Contents write on the governance repository: the first tick creates bot-state.
    assert_eq!(checks[5].status, Status::Ok);
}

#[test]
fn required_checks_not_bound_to_a_workflow_are_forgeable() {
    let app = repo("org/app");
    let granted = Access::Installation(all_granted());
    let unbound = check_provenance_check(&config(), &app, &granted).expect("a check");
    assert_eq!(unbound.status, Status::Warn);
    assert!(
        unbound
            .detail
            .contains("C2 is forgeable by agents in org/app: test not bound to a workflow file"),
        "{}",
        unbound.detail
    );
    let bound = config_with(
        "bot_app_slug: gate\nrequired_checks: [test]\nrequired_check_workflows:\n  test: .github/workflows/ci.yml\n",
        "governance_repo: org/gov\nsupervised_repos: [org/app]\n",
    );
    // Bound, but the App cannot read workflow runs: every bound check would fail closed.
    let blind = check_provenance_check(&bound, &app, &granted).expect("a check");
    assert_eq!(blind.status, Status::Fail);
    assert!(blind.detail.contains("Actions: none"), "{}", blind.detail);
    let mut with_actions = all_granted();
    with_actions.insert("actions".to_owned(), "read".to_owned());
    let fine =
        check_provenance_check(&bound, &app, &Access::Installation(with_actions)).expect("a check");
    assert_eq!(fine.status, Status::Ok);
    assert_eq!(fine.detail, "org/app: test from .github/workflows/ci.yml");
    // Another publisher than GitHub Actions: nothing to say here.
    let other = config_with(
        "bot_app_slug: gate\nrequired_checks: [test]\nexpected_check_publisher: buildkite\n",
        "governance_repo: org/gov\nsupervised_repos: [org/app]\n",
    );
    assert_eq!(check_provenance_check(&other, &app, &granted), None);
}

#[test]
fn the_app_key_read_as_a_repository_secret_is_a_warning() {
    let example = include_str!("../../../../examples/workflows/mp-tick.yml");
    let from_environment = vec![(
        ".github/workflows/mp-tick.yml".to_owned(),
        example.to_owned(),
    )];
    let check = app_key_check(&Ok(from_environment)).expect("a check");
    assert_eq!(check.status, Status::Ok, "{}", check.detail);
    let bare = example.replace("    environment: mp\n", "");
    assert_ne!(bare, example, "the example names its environment");
    let check = app_key_check(&Ok(vec![(
        ".github/workflows/mp-tick.yml".to_owned(),
        bare,
    )]))
    .expect("a check");
    assert_eq!(check.status, Status::Warn);
    assert!(
        check.detail.contains("without an environment"),
        "{}",
        check.detail
    );
    // No workflow reads the key (mp runs elsewhere): nothing to say.
    assert_eq!(app_key_check(&Ok(Vec::new())), None);
    assert_eq!(app_key_check(&Err("404".to_owned())), None);
}

#[test]
fn a_ruleset_must_apply_every_rule_the_branch_needs() {
    let app = repo("org/app");
    let rules = |types: &[&str]| Ok(types.iter().map(|t| (*t).to_owned()).collect());
    let all = branch_rules_check(
        &app,
        "main",
        Protected::GatedBranch,
        &rules(&[
            "deletion",
            "non_fast_forward",
            "pull_request",
            "required_status_checks",
        ]),
    );
    assert_eq!(all.status, Status::Ok, "{all:?}");
    assert_eq!(all.name, "branch_rules:org/app");
    // A ruleset that only stops deletion leaves force pushes and direct pushes open.
    let partial = branch_rules_check(&app, "main", Protected::GatedBranch, &rules(&["deletion"]));
    assert_eq!(partial.status, Status::Warn);
    assert!(
        partial.detail.contains("non_fast_forward (force pushes")
            && partial.detail.contains("pull_request (direct pushes")
            && !partial.detail.contains("deletion ("),
        "{}",
        partial.detail
    );
    assert!(
        partial
            .fix
            .as_deref()
            .is_some_and(|fix| fix.contains("the owner as the only bypass actor")),
        "{partial:?}"
    );
    // bot-state needs its updates restricted, which the default branch does not.
    let state = branch_rules_check(
        &repo("org/gov"),
        "bot-state",
        Protected::BotState,
        &rules(&["deletion", "non_fast_forward", "pull_request"]),
    );
    assert_eq!(state.status, Status::Warn);
    assert_eq!(state.name, "bot_state_rules");
    assert!(
        state
            .detail
            .contains("update (writes by anyone but mp's App"),
        "{}",
        state.detail
    );
    assert!(
        state
            .fix
            .as_deref()
            .is_some_and(|fix| fix.contains("mp's App as the only bypass actor")),
        "{state:?}"
    );
    // Rules that cannot be read are said so, not taken for none.
    let unread = branch_rules_check(
        &app,
        "main",
        Protected::GatedBranch,
        &Err("HTTP 403".to_owned()),
    );
    assert_eq!(unread.status, Status::Warn);
    assert!(
        unread.detail.contains("cannot be read: HTTP 403"),
        "{}",
        unread.detail
    );
}

#[test]
fn environment_names_are_read_in_each_spelling() {
    let text = "jobs:\n  a:\n    environment: mp\n  b:\n    environment: {name: \"release\", url: x}\n  c:\n    environment:\n      url: https://x\n      name: 'prod' # the key\n  d:\n    environment: mp\n  e:\n    # environment: commented\n    environment: ${{ inputs.env }}\n";
    assert_eq!(
        environment_names(text),
        ["mp", "release", "prod", "${{ inputs.env }}"]
    );
    assert!(environment_names("jobs:\n  a:\n    runs-on: x\n").is_empty());
}

#[test]
fn the_key_s_environment_must_admit_only_the_gated_branch() {
    let example = include_str!("../../../../examples/workflows/mp-tick.yml");
    let workflows = Ok(vec![(
        ".github/workflows/mp-tick.yml".to_owned(),
        example.to_owned(),
    )]);
    let env = |branches: DeployBranches, reviewers: usize| DeployEnvironment {
        name: "mp".to_owned(),
        reviewers,
        branches,
    };
    let policy = |name: &str, tag: bool| DeployPolicy {
        name: name.to_owned(),
        tag,
    };
    let run = |environments: Result<Vec<DeployEnvironment>, String>| {
        let checks = environment_checks(&workflows, Some(&environments), "main");
        assert_eq!(checks.len(), 1, "{checks:?}");
        let check = checks.into_iter().next().expect("one check");
        assert_eq!(check.name, "app_key_environment:mp");
        (check.status, check.detail)
    };
    // Only `main`, with a reviewer: fine.
    let (status, detail) = run(Ok(vec![env(
        DeployBranches::Selected(vec![policy("main", false)]),
        1,
    )]));
    assert_eq!(status, Status::Ok, "{detail}");
    assert_eq!(
        detail,
        "environment `mp`: deployments from `main` only; 1 required reviewer(s)"
    );
    // Only `main`, no reviewer: still fine, and the detail says reviewers are recommended.
    let (status, detail) = run(Ok(vec![env(
        DeployBranches::Selected(vec![policy("main", false)]),
        0,
    )]));
    assert_eq!(status, Status::Ok);
    assert!(
        detail.contains("no required reviewers (recommended"),
        "{detail}"
    );
    // Every branch, a pattern, or a tag: an agent's branch can deploy and read the key.
    for (branches, words) in [
        (DeployBranches::Any, "any branch may deploy to it"),
        (
            DeployBranches::Selected(vec![policy("main", false), policy("agent/*", false)]),
            "also admit `agent/*` besides `main`",
        ),
        (
            DeployBranches::Selected(vec![policy("main", false), policy("v*", true)]),
            "also admit tag `v*` besides `main`",
        ),
    ] {
        let (status, detail) = run(Ok(vec![env(branches, 1)]));
        assert_eq!(status, Status::Warn, "{detail}");
        assert!(detail.contains(words), "{detail}");
    }
    // The environment does not exist, or cannot be read.
    let (status, detail) = run(Ok(Vec::new()));
    assert_eq!(status, Status::Warn);
    assert!(detail.contains("no environment `mp` exists"), "{detail}");
    let (status, detail) = run(Err("403".to_owned()));
    assert_eq!(status, Status::Warn);
    assert!(detail.contains("cannot be read: 403"), "{detail}");
    // Not read (no workflow reads the key through an environment): nothing to say.
    assert!(environment_checks(&workflows, None, "main").is_empty());
}

#[test]
fn a_merge_queue_asks_for_github_queue_mode_and_the_mode_asks_for_a_queue() {
    let app = repo("org/app");
    let rules = |types: &[&str]| Ok(types.iter().map(|t| (*t).to_owned()).collect());
    let queued = rules(&["deletion", "merge_queue", "pull_request"]);
    let plain = rules(&["deletion", "pull_request"]);
    // Direct mode on a queue-protected branch: the fix is the repo_overrides entry.
    let direct = config();
    let check = merge_queue_check(&direct, &app, "main", &queued).expect("a finding");
    assert_eq!(check.name, "merge_queue:org/app");
    assert_eq!(check.status, Status::Warn);
    assert!(
        check.detail.contains("merge.mode is direct") && check.detail.contains("direct merges"),
        "{check:?}"
    );
    assert_eq!(
        check.fix.as_deref(),
        Some(
            "set the mode in projects.yml: repo_overrides: {org/app: {merge: {mode: github-queue}}} (docs/queue.md, \"GitHub's merge queue\")"
        )
    );
    // mp's own queue fast-forwards the branch, which the queue's rule refuses as well.
    let own = config_with(
        "bot_app_slug: gate\nrequired_checks: [test]\nmerge_enabled: true\n",
        "governance_repo: org/gov\nsupervised_repos: [org/app, org/gov]\nrepo_overrides:\n  org/app:\n    merge:\n      mode: queue\n",
    );
    let check = merge_queue_check(&own, &app, "main", &queued).expect("a finding");
    assert_eq!(check.status, Status::Warn);
    assert!(check.detail.contains("fast-forward"), "{check:?}");
    // github-queue mode: fine with a queue, a warning without one.
    let github = config_with(
        "bot_app_slug: gate\nrequired_checks: [test]\nmerge_enabled: true\n",
        "governance_repo: org/gov\nsupervised_repos: [org/app, org/gov]\nrepo_overrides:\n  org/app:\n    merge:\n      mode: github-queue\n",
    );
    let check = merge_queue_check(&github, &app, "main", &queued).expect("a line");
    assert_eq!(check.status, Status::Ok, "{check:?}");
    let check = merge_queue_check(&github, &app, "main", &plain).expect("a finding");
    assert_eq!(check.status, Status::Warn);
    assert!(
        check
            .detail
            .contains("no merge queue protects org/app@main")
            && check
                .fix
                .as_deref()
                .is_some_and(|f| f.contains("merge_queue rule")),
        "{check:?}"
    );
    // Neither a queue nor the mode: nothing to say; unreadable rules: the rules check says it.
    assert_eq!(merge_queue_check(&direct, &app, "main", &plain), None);
    assert_eq!(
        merge_queue_check(&github, &app, "main", &Err("HTTP 500".to_owned())),
        None
    );
}
