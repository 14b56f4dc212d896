//! Tests for user skills in the tick: each case runs the pull-request path in observe mode
//! over the in-memory GitHub with test skills and compares the outcome, the quadrant, the
//! user validators' gate lines, the skill warnings and the failure counter; the hook cases
//! run the pure L5 step.

use std::sync::Arc;

use super::*;
use crate::testkit::{BOT, TRAILERS, block_on, commit_by, config_with, now};
use crate::{MergeMode, TickOptions, run_pr_path};
use mp_core::approval::UNSIGNED_RECEIPTS_WARNING;
use mp_core::quadrant::Quadrant;
use mp_core::severity::Severity;
use mp_core::skill::{
    BranchHook, ClassifierRule, ClassifierVote, FailureCause, FailureStage, HookResult, Validator,
};

/// A classifier rule that always votes `quadrant`.
struct Votes(&'static str, Quadrant);

impl ClassifierRule for Votes {
    fn name(&self) -> &str {
        self.0
    }
    fn evaluate(&self, _pr: &PrContext) -> Result<ClassifierVote, SkillFailure> {
        Ok(ClassifierVote::new(self.1, format!("always {}", self.1)))
    }
}

/// A validator that fails every pull request touching a file whose path mentions `todo`.
struct NoTodo(&'static str, Severity);

impl Validator for NoTodo {
    fn name(&self) -> &str {
        self.0
    }
    fn severity(&self) -> Severity {
        self.1
    }
    fn check(&self, pr: &PrContext) -> Result<ValidationResult, SkillFailure> {
        Ok(match pr.files.iter().find(|f| f.path.contains("todo")) {
            Some(file) => ValidationResult::fail(format!("{} adds a todo\nsecond line", file.path)),
            None => ValidationResult::Pass,
        })
    }
}

/// A skill whose every call runs out of its budget.
struct Loops(&'static str);

impl Loops {
    fn failure(&self) -> SkillFailure {
        SkillFailure::new(
            self.0,
            FailureStage::Run,
            FailureCause::Timeout {
                fuel: 1_000,
                budget_ms: None,
            },
        )
    }
}

impl Validator for Loops {
    fn name(&self) -> &str {
        self.0
    }
    fn severity(&self) -> Severity {
        Severity::P0
    }
    fn check(&self, _pr: &PrContext) -> Result<ValidationResult, SkillFailure> {
        Err(self.failure())
    }
}

impl BranchHook for Loops {
    fn name(&self) -> &str {
        self.0
    }
    fn on_commit(&self, _commit: &CommitContext) -> Result<HookResult, SkillFailure> {
        Err(self.failure())
    }
}

/// A hook that raises an incident on commits whose subject mentions a secret.
struct SecretHook;

impl BranchHook for SecretHook {
    fn name(&self) -> &str {
        "hook_no_secrets"
    }
    fn on_commit(&self, commit: &CommitContext) -> Result<HookResult, SkillFailure> {
        Ok(if commit.subject.contains("secret") {
            HookResult::incident("decision:secret-pushed", "the subject mentions a secret")
        } else {
            HookResult::none()
        })
    }
}

fn rules(rules: Vec<Arc<dyn ClassifierRule + Send + Sync>>) -> SkillSet {
    SkillSet {
        classifier_rules: rules,
        ..SkillSet::default()
    }
}

fn validators(validators: Vec<Arc<dyn Validator + Send + Sync>>) -> SkillSet {
    SkillSet {
        validators,
        ..SkillSet::default()
    }
}

/// `acme/app#1`, Quadrant A and green unless its one changed file (`path`, with GitHub's
/// `status`) says otherwise: head `a1…` on `main`, one commit with good trailers committed
/// and pushed (branch created) at 10:00, `test` green from GitHub Actions, `ready-to-merge`
/// applied by the owner at 11:00 (no receipt yet). The governance repository's next number
/// is 100.
fn world(path: &str, status: &str) -> mp_github_fake::MemoryGitHub {
    let main = "f000000000000000000000000000000000000000";
    let head = "a100000000000000000000000000000000000000";
    let message = format!("docs: change 1\n\n{TRAILERS}").replace('\n', "\\n");
    let text = format!(
        "now: 2026-03-01T12:00:00Z
bot: mp-gate
repos:
  - name: acme/app
    commits:
      - {{id: {main}, message: \"chore: base\", committer: alice, date: 2026-03-01T08:00:00Z}}
      - id: {head}
        message: \"{message}\"
        parents: [{main}]
        date: 2026-03-01T10:00:00Z
        checks:
          - {{name: test, app: github-actions}}
    branches: {{main: {main}, change-1: {head}}}
    pulls:
      - number: 1
        title: \"docs: change 1\"
        author: agent-bob
        head: change-1
        labels: [ready-to-merge]
        events:
          - {{labeled: ready-to-merge, by: alice, at: 2026-03-01T11:00:00Z}}
        files:
          - {{path: {path}, status: {status}, additions: 1}}
        pushes:
          - {{type: branch_creation, to: {head}, by: agent-bob, at: 2026-03-01T10:00:00Z}}
        created_at: 2026-03-01T09:00:00Z
  - name: acme/governance
    commits:
      - {{id: g1, message: init}}
    branches: {{main: g1}}
    issues:
      - {{number: 99, title: an earlier issue, state: closed}}
"
    );
    let world =
        mp_github_fake::parse_world("skills.yaml", &text, None).expect("the test world parses");
    mp_github_fake::MemoryGitHub::new(world)
}

/// The audit log of these tests: records nothing.
struct NoAudit;

#[async_trait::async_trait]
impl mp_core::port::AuditLog for NoAudit {
    async fn append(
        &self,
        _record: &mp_core::port::AuditRecord,
    ) -> Result<(), mp_core::port::AuditError> {
        Ok(())
    }
}

/// Runs the pull-request path once in observe mode over [`world`] with `skills` (and
/// `skills.yml` when given) and compares the outcome (`=>`), quadrant, user gate lines
/// (`gate`), skill warnings (`!`) and the failure counter with `expected`.
#[track_caller]
fn check(skills: SkillSet, skills_yml: Option<&str>, changed: (&str, &str), expected: &[&str]) {
    let replaced: Vec<(&str, &str)> = skills_yml
        .map(|text| (mp_core::config::SKILLS_FILE, text))
        .into_iter()
        .collect();
    let config = config_with(&replaced);
    let options = TickOptions::from_config(&config)
        .with_merge_mode(MergeMode::Observe)
        .with_skills(skills);
    let github = world(changed.0, changed.1);
    let report =
        block_on(run_pr_path(&github, &NoAudit, &config, &options, now())).expect("the tick runs");
    let mut lines = Vec::new();
    for outcome in &report.outcomes {
        lines.push(format!("=> {outcome}"));
        lines.push(format!(
            "quadrant {}",
            outcome.quadrant.map_or("-".to_owned(), |q| q.to_string())
        ));
        let user = outcome
            .gate
            .iter()
            .flat_map(|g| g.results.iter())
            .filter(|r| matches!(r.id, ConditionId::User(_)));
        for result in user {
            lines.push(format!(
                "gate {:?} {}: {result}",
                result.outcome,
                result.severity.as_str()
            ));
        }
    }
    lines.extend(
        report
            .warnings
            .iter()
            .filter(|w| w.as_str() != UNSIGNED_RECEIPTS_WARNING)
            .map(|w| format!("! {w}")),
    );
    lines.push(format!("skill_failures={}", report.metrics.skill_failures));
    assert_eq!(lines, expected);
}

#[test]
fn a_user_vote_d_raises_a_quadrant_a_pull_request() {
    check(
        rules(vec![Arc::new(Votes("classifier_always_d", Quadrant::D))]),
        None,
        ("README.md", "modified"),
        &[
            "=> acme/app#1 inbox: Quadrant D awaits the owner: opened decision inbox issue acme/governance#100",
            "quadrant D",
            "skill_failures=0",
        ],
    );
}

#[test]
fn a_user_vote_a_does_not_lower_a_quadrant_b_pull_request() {
    check(
        rules(vec![Arc::new(Votes("classifier_always_a", Quadrant::A))]),
        None,
        ("src/lib.rs", "modified"),
        &[
            "=> acme/app#1 observe: observe-only: would have merged as Quadrant B (set merge_enabled: true in env.yml to enable merging)",
            "quadrant B",
            "skill_failures=0",
        ],
    );
}

#[test]
fn a_disabled_user_rule_does_not_vote() {
    check(
        rules(vec![Arc::new(Votes("classifier_always_d", Quadrant::D))]),
        Some("disabled: [classifier_always_d]\n"),
        ("README.md", "modified"),
        &[
            "=> acme/app#1 observe: observe-only: would have merged as Quadrant A (set merge_enabled: true in env.yml to enable merging)",
            "quadrant A",
            "skill_failures=0",
        ],
    );
}

#[test]
fn a_failing_p0_user_validator_blocks_with_its_reason() {
    check(
        validators(vec![Arc::new(NoTodo("validator_no_todo", Severity::P0))]),
        None,
        ("docs/todo.md", "added"),
        &[
            "=> acme/app#1 blocked: validator_no_todo: docs/todo.md adds a todo second line",
            "quadrant A",
            "gate Fail P0: validator_no_todo: docs/todo.md adds a todo second line",
            "skill_failures=0",
        ],
    );
}

#[test]
fn a_passing_user_validator_is_recorded_and_lets_the_pull_request_through() {
    check(
        validators(vec![Arc::new(NoTodo("validator_no_todo", Severity::P0))]),
        None,
        ("README.md", "modified"),
        &[
            "=> acme/app#1 observe: observe-only: would have merged as Quadrant A (set merge_enabled: true in env.yml to enable merging)",
            "quadrant A",
            "gate Pass P0: validator_no_todo: holds",
            "skill_failures=0",
        ],
    );
}

#[test]
fn a_failing_p2_user_validator_only_warns() {
    check(
        validators(vec![Arc::new(NoTodo("validator_no_todo", Severity::P2))]),
        None,
        ("docs/todo.md", "added"),
        &[
            "=> acme/app#1 observe: observe-only: would have merged as Quadrant A (set merge_enabled: true in env.yml to enable merging)",
            "quadrant A",
            "gate Advisory P2: validator_no_todo: docs/todo.md adds a todo second line",
            "skill_failures=0",
        ],
    );
}

#[test]
fn a_severity_override_makes_a_p0_user_validator_record_only() {
    check(
        validators(vec![Arc::new(NoTodo("validator_no_todo", Severity::P0))]),
        Some("severity_overrides:\n  validator_no_todo: P3\n"),
        ("docs/todo.md", "added"),
        &[
            "=> acme/app#1 observe: observe-only: would have merged as Quadrant A (set merge_enabled: true in env.yml to enable merging)",
            "quadrant A",
            "gate Advisory P3: validator_no_todo: docs/todo.md adds a todo second line",
            "skill_failures=0",
        ],
    );
}

#[test]
fn a_skill_failure_is_a_warning_and_does_not_block() {
    check(
        validators(vec![Arc::new(Loops("validator_loops"))]),
        None,
        ("README.md", "modified"),
        &[
            "=> acme/app#1 observe: observe-only: would have merged as Quadrant A (set merge_enabled: true in env.yml to enable merging)",
            "quadrant A",
            "! acme/app#1: skill validator_loops failed at run (skill_timeout, retryable): ran out of its budget of 1000 fuel; counted as pass, no contribution",
            "skill_failures=1",
        ],
    );
}

/// Runs the user hooks of `skills` over a commit with `subject` and compares the incident
/// labels and bodies, then the failures, with `expected`.
#[track_caller]
fn check_hooks(skills: &SkillSet, subject: &str, expected: &[&str]) {
    let commit = commit_by("c1", subject, Some("alice"));
    let mut failures = Vec::new();
    let incidents = hook_incidents(skills, config_with(&[]).skills(), &commit, &mut failures);
    let mut lines: Vec<String> = incidents
        .iter()
        .map(|i| {
            format!(
                "{} {}: {}",
                i.label,
                i.sha.short(),
                i.body.replace('\n', " | ")
            )
        })
        .collect();
    lines.extend(
        failures
            .iter()
            .map(|f| format!("! {}", failure_warning("c1", f))),
    );
    assert_eq!(lines, expected);
}

fn hooks() -> SkillSet {
    SkillSet {
        branch_hooks: vec![Arc::new(SecretHook), Arc::new(Loops("hook_loops"))],
        ..SkillSet::default()
    }
}

#[test]
fn a_user_hook_incident_becomes_a_skill_hook_incident() {
    check_hooks(
        &hooks(),
        "feat: add the secret",
        &[
            "decision:skill-hook-incident c100000: Branch hook `hook_no_secrets` raised `decision:secret-pushed` on commit `c100000000000000000000000000000000000000`. |  | the subject mentions a secret",
            "! c1: skill hook_loops failed at run (skill_timeout, retryable): ran out of its budget of 1000 fuel; counted as pass, no contribution",
        ],
    );
}

#[test]
fn a_quiet_user_hook_raises_nothing() {
    check_hooks(
        &hooks(),
        "feat: nothing to see",
        &[
            "! c1: skill hook_loops failed at run (skill_timeout, retryable): ran out of its budget of 1000 fuel; counted as pass, no contribution",
        ],
    );
}

/// `acme/app`'s `main` after the bot landed `c1…` ("feat: add the secret", `test` green)
/// on `1…`; the governance repository's next number is 100.
fn landed_world() -> mp_github_fake::MemoryGitHub {
    let base = "1000000000000000000000000000000000000000";
    let new = "c100000000000000000000000000000000000000";
    let governance = "9000000000000000000000000000000000000000";
    let text = format!(
        "now: 2026-03-01T12:00:00Z
bot: mp-gate
repos:
  - name: acme/app
    commits:
      - {{id: \"{base}\", message: \"chore: base\", author: \"{BOT}\", committer: \"{BOT}\", date: 2026-03-01T10:00:00Z}}
      - id: \"{new}\"
        message: \"feat: add the secret\"
        parents: [\"{base}\"]
        author: \"{BOT}\"
        committer: \"{BOT}\"
        date: 2026-03-01T10:00:00Z
        checks:
          - {{name: test, app: github-actions}}
    branches: {{main: \"{new}\"}}
  - name: acme/governance
    commits:
      - {{id: \"{governance}\", message: \"docs: governance\", author: \"{BOT}\", committer: \"{BOT}\", date: 2026-03-01T10:00:00Z}}
    branches: {{main: \"{governance}\"}}
    issues:
      - {{number: 99, title: an earlier issue, state: closed}}
"
    );
    let world =
        mp_github_fake::parse_world("landed.yaml", &text, None).expect("the test world parses");
    mp_github_fake::MemoryGitHub::new(world)
}

/// The writes of `github`, one line each: an issue as `issue <repo>#<n> [<labels>]:
/// <title>`, any other write as the in-memory GitHub shows it.
fn writes(github: &mp_github_fake::MemoryGitHub) -> Vec<String> {
    github
        .actions()
        .iter()
        .map(|action| match action {
            mp_core::port::Write::CreateIssue {
                repo,
                issue,
                answer: Some(number),
            } => format!(
                "issue {repo}#{number} [{}]: {}",
                issue.labels.join(", "),
                issue.title
            ),
            other => other.log_line(),
        })
        .collect()
}

#[test]
fn a_user_hook_incident_opens_an_incident_issue_in_the_l5_pass() {
    use crate::supervisor::{SupervisorRun, run_branch_supervisor};
    use crate::testkit::{login, repo, sha};
    use mp_core::state::{Layer, Watermarks};

    let github = landed_world();
    let mut state = Watermarks::new();
    for layer in Layer::ALL {
        state.set(&repo("acme/app"), layer, sha("1"));
    }
    let config = config_with(&[]);
    let mut run = SupervisorRun::new(login(BOT)).with_skills(hooks());
    let report = block_on(run_branch_supervisor(
        &github,
        &config,
        &mut state,
        &repo("acme/app"),
        &mut run,
        now(),
    ));
    let mut lines = writes(&github);
    lines.extend(report.events.iter().map(|e| format!("=> {e}")));
    lines.extend(report.warnings.iter().map(|w| format!("! {w}")));
    lines.push(format!(
        "l5_incidents={} skill_failures={}",
        report.metrics.l5_incidents, report.metrics.skill_failures
    ));
    assert_eq!(
        lines,
        [
            "issue acme/governance#100 [decision:skill-hook-incident]: [decision:skill-hook-incident] c100000",
            "=> decision:skill-hook-incident c100000: opened acme/governance#100",
            "! acme/app: commit c100000: skill hook_loops failed at run (skill_timeout, retryable): ran out of its budget of 1000 fuel; counted as pass, no contribution",
            "l5_incidents=1 skill_failures=1",
        ]
    );
}
