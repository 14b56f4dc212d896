//! The contract documents of the built-in skills. Each is composed from the skill's own
//! purpose and call conditions and the sections its kind shares (input and output shapes
//! with their schemas, permissions, execution, failure classes, completion, verification),
//! and passes the same linter as a user skill's document.

use mp_core::skill::{BuiltIn, BuiltInSkill, SkillKind};

/// What is particular to one built-in: purpose, when to call, when not to call.
struct Particular {
    built_in: BuiltIn,
    purpose: &'static str,
    when: &'static str,
    when_not: &'static str,
}

const PARTICULARS: [Particular; 16] = [
    Particular {
        built_in: BuiltIn::ReadyToMerge,
        purpose: "C1: the pull request carries the `ready-to-merge` label, applied by someone allowed to apply it and recorded by a receipt bound to the current head commit.",
        when: "On every open pull request the gate evaluates, every tick.",
        when_not: "Never skipped: it is a required validator and `skills.yml` cannot disable it.",
    },
    Particular {
        built_in: BuiltIn::CiGreen,
        purpose: "C2: every required check of the repository reported success on the head commit, from the expected publisher.",
        when: "On every open pull request the gate evaluates, every tick.",
        when_not: "Never skipped (required). With `allow_no_ci` and no check runs at all it passes by configuration.",
    },
    Particular {
        built_in: BuiltIn::Trailers,
        purpose: "C5: every commit of the pull request carries well-formed identity trailers (Agent-Tool, Agent-Model, Agent-Session, Agent-Machine, Task-Ref).",
        when: "On every open pull request the gate evaluates, every tick.",
        when_not: "Never skipped (required).",
    },
    Particular {
        built_in: BuiltIn::ClassifierPublisher,
        purpose: "The classifier-publisher gate: a `classifier-judgment` check run is trusted only from the configured publisher.",
        when: "On every open pull request the gate evaluates, every tick.",
        when_not: "Never skipped (required).",
    },
    Particular {
        built_in: BuiltIn::BaseUpToDate,
        purpose: "C4: the pull request's base commit is the current head of `main`, so what was tested is what would merge.",
        when: "On every open pull request the gate evaluates, every tick.",
        when_not: "Never skipped (required).",
    },
    Particular {
        built_in: BuiltIn::AgentRegistry,
        purpose: "L4: each commit's declared Agent-Tool and Agent-Model are in the agent registry; advisory (P2) during the burn-in window, blocking after it.",
        when: "On every open pull request the gate evaluates, when an agent registry is configured.",
        when_not: "When `skills.yml` disables it, or no agent registry is configured.",
    },
    Particular {
        built_in: BuiltIn::OwnerApproval,
        purpose: "C3: a change whose quadrant needs the owner (B, C, D) carries the owner's approval for the current head.",
        when: "On every open pull request the gate evaluates, after the classifier has given its quadrant.",
        when_not: "Never skipped (required); a quadrant-A change passes it without an approval.",
    },
    Particular {
        built_in: BuiltIn::PathDefault,
        purpose: "Votes from the changed paths: critical paths are B, removals of protected paths D, anything else A (`classifier_rules.yml`).",
        when: "On every pull request the classifier judges.",
        when_not: "When `skills.yml` disables it.",
    },
    Particular {
        built_in: BuiltIn::BotSelfRepo,
        purpose: "A pull request on the bot's own repository is always D: the bot never merges changes to itself.",
        when: "On every pull request the classifier judges.",
        when_not: "Never skipped (required).",
    },
    Particular {
        built_in: BuiltIn::EmptyPr,
        purpose: "A pull request that changes no file is D: nothing to review usually means something is wrong.",
        when: "On every pull request the classifier judges.",
        when_not: "When `skills.yml` disables it.",
    },
    Particular {
        built_in: BuiltIn::AutoRevert,
        purpose: "A verified `decision:auto-revert` label makes the change C (reversible, owner informed).",
        when: "On every pull request the classifier judges.",
        when_not: "When `skills.yml` disables it.",
    },
    Particular {
        built_in: BuiltIn::PublishedVerdict,
        purpose: "Adopts the quadrant of the canonical `classifier-judgment` check run from the trusted publisher.",
        when: "On every pull request the classifier judges.",
        when_not: "When `skills.yml` disables it; it abstains (votes A) when no trusted publisher is configured.",
    },
    Particular {
        built_in: BuiltIn::MalformedSession,
        purpose: "A present but malformed `Agent-Session` trailer makes the change D.",
        when: "On every pull request the classifier judges.",
        when_not: "When `skills.yml` disables it.",
    },
    Particular {
        built_in: BuiltIn::BreakGlassAudit,
        purpose: "L5: a break-glass commit on `main` needs an ADR within its deadline, else an incident is opened.",
        when: "On every new commit on `main` the branch supervisor scans.",
        when_not: "Never skipped (required).",
    },
    Particular {
        built_in: BuiltIn::HallucinationGuard,
        purpose: "L5: a commit that quotes paths which do not exist at that commit raises an incident.",
        when: "On every new commit on `main` the branch supervisor scans.",
        when_not: "When `skills.yml` disables it.",
    },
    Particular {
        built_in: BuiltIn::UnauthorizedPush,
        purpose: "L5: a commit pushed to `main` without a merged pull request by the bot or an allowed actor raises an incident.",
        when: "On every new commit on `main` the branch supervisor scans.",
        when_not: "Never skipped (required).",
    },
];

const PR_INPUT: &str = r#"The `{"pr": {...}}` document of `docs/skills-abi.md`, built by the host from the pull request and the facts read around it; the built-in also reads the repository's configuration (required checks, owner, agent registry) but never an API client.

```json
{
  "type": "object",
  "required": ["pr"],
  "properties": {
    "pr": {
      "description": "The pull request as the host passes it: an object with `repo` (owner/name), `number` (integer), `head_sha` (hex), `commits` and `files` arrays, e.g. {\"repo\": \"acme/app\", \"number\": 7, \"head_sha\": \"a1b2c3d\", \"commits\": [], \"files\": []}",
      "type": "object",
      "required": ["repo", "number", "head_sha", "commits", "files"],
      "properties": {
        "repo": { "type": "string" },
        "number": { "type": "integer", "minimum": 1 },
        "head_sha": { "type": "string" },
        "commits": { "type": "array" },
        "files": { "type": "array" }
      },
      "examples": [{ "repo": "acme/app", "number": 7, "head_sha": "a1b2c3d", "commits": [], "files": [] }]
    }
  }
}
```
"#;

const COMMIT_INPUT: &str = r#"The `{"commit": {...}}` document of `docs/skills-abi.md`: one commit on `main`, with its subject, body, trailers, author and parents.

```json
{
  "type": "object",
  "required": ["commit"],
  "properties": {
    "commit": {
      "description": "A commit on main: an object with `sha` (hex), `subject` (string) and `parents` (array of hex), e.g. {\"sha\": \"a1b2c3d\", \"subject\": \"fix: x\", \"parents\": [\"0f0f0f0\"]}",
      "type": "object",
      "required": ["sha", "subject", "parents"],
      "properties": {
        "sha": { "type": "string" },
        "subject": { "type": "string" },
        "parents": { "type": "array", "items": { "type": "string" } }
      },
      "examples": [{ "sha": "a1b2c3d", "subject": "fix: x", "parents": ["0f0f0f0"] }]
    }
  }
}
```
"#;

const VALIDATOR_OUTPUT: &str = r#"Success: `{"passed": true}`. Failure: `{"passed": false, "failure_reason": "one line naming the offending value"}`; the gate lists every failure at once and the skill's severity decides whether it blocks.

```json
{
  "type": "object",
  "required": ["passed"],
  "properties": {
    "passed": { "type": "boolean" },
    "failure_reason": { "type": ["string", "null"] }
  }
}
```
"#;

const RULE_OUTPUT: &str = r#"Success: a vote `{"quadrant": "A"|"B"|"C"|"D", "reasoning": "one line"}`; the verdict is the maximum vote. Failure: none of its own (a built-in that has nothing to say votes A).

```json
{
  "type": "object",
  "required": ["quadrant", "reasoning"],
  "properties": {
    "quadrant": { "enum": ["A", "B", "C", "D"] },
    "reasoning": { "type": "string" }
  }
}
```
"#;

const HOOK_OUTPUT: &str = r#"Success: `{"incident_label": null}` when the commit is fine. Failure of the commit (not of the hook): `{"incident_label": "decision:...", "incident_body": "..."}`, which the supervisor opens as a deduplicated incident.

```json
{
  "type": "object",
  "required": ["incident_label"],
  "properties": {
    "incident_label": { "type": ["string", "null"] },
    "incident_body": { "type": ["string", "null"] }
  }
}
```
"#;

/// The contract document of the built-in `name`, or `None` when there is no such built-in.
pub fn builtin_contract(name: &str) -> Option<String> {
    let built_in = BuiltIn::from_name(name)?;
    let particular = PARTICULARS.iter().find(|p| p.built_in == built_in)?;
    Some(compose(&built_in.skill(), particular))
}

fn compose(skill: &BuiltInSkill, p: &Particular) -> String {
    let (input, output) = match skill.kind {
        SkillKind::Validator => (PR_INPUT, VALIDATOR_OUTPUT),
        SkillKind::ClassifierRule => (PR_INPUT, RULE_OUTPUT),
        SkillKind::BranchHook => (COMMIT_INPUT, HOOK_OUTPUT),
    };
    let severity = skill
        .severity
        .map(|s| format!(" Default severity {s}."))
        .unwrap_or_default();
    format!(
        "# {name}\n\nA built-in {kind} of mp, implemented by `mp_core::{by}`.{severity}\n\n\
         ## Purpose\n\n{purpose}\n\n\
         ## When to call\n\n{when}\n\n\
         ## When not to call\n\n{when_not}\n\n\
         ## Input contract\n\n{input}\n\
         ## Output contract\n\n{output}\n\
         ## Permissions\n\nRead-only: it sees the context values the tick gathered and the \
         configuration; it holds no token and makes no call. No approval is needed to run it: \
         it ships with mp and runs on every tick its kind applies to.\n\n\
         ## Execution method\n\nIn process: native Rust inside the tick (`mp_core::{by}`), \
         run through the built-in catalog `mp_core::skill::builtin`; pure and deterministic.\n\n\
         ## Failure classes\n\n\
         - Fatal: the built-in is missing from the registry; `mp tick` stops with exit 1.\n\
         - Retryable: a fact it needs could not be read (e.g. a GitHub error); the tick fails \
         closed for that pull request or commit and the next tick tries again.\n\
         - Needs user report: a verdict that contradicts the documented rule; report it with \
         the audit record.\n\n\
         ## Completion criteria\n\nIt returned its verdict for the pull request or commit; the \
         verdict is in the audit log and, for validators, in the gate report.\n\n\
         ## Verification method\n\nThe golden scenarios under `fixtures/scenarios/` and the \
         unit tests of `mp_core::{by}`; `mp explain` shows its verdict on a world file.\n",
        name = skill.name,
        kind = skill.kind,
        by = skill.implemented_by,
        purpose = p.purpose,
        when = p.when,
        when_not = p.when_not,
    )
}
