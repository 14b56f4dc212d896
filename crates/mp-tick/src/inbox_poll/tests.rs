//! Tests for the inbox poll over the in-memory GitHub: a tick of the pull-request path
//! opens the question for the Quadrant-D pull request `acme/app#1` as
//! `acme/governance#100`, the owner answers, and each case compares the poll's ordered
//! writes (the in-memory GitHub's action log) and outcomes (then, where it matters, the
//! next run of the pull-request path).

use std::sync::{Mutex, PoisonError};

use super::*;
use crate::run_pr_path;
use crate::testkit::{BOT, OWNER, TRAILERS, at, block_on, config, config_with, login, now, repo};
use mp_core::approval::{APPROVED_A, ReceiptKey};
use mp_core::config::{Config, PROJECTS_FILE};
use mp_core::context::{Reaction, ReactionKind, RefUpdate, RefUpdateKind};
use mp_core::ids::{CommitSha, PrNumber};
use mp_core::port::Write;
use mp_core::port::{AuditError, AuditLog, AuditRecord};
use mp_github_fake::world::commit_sha as world_sha;
use mp_github_fake::{Endpoint, Failure, MemoryGitHub};

const ASKED: &str =
    "open issue acme/governance#100: Decision pending — PR acme/app#1 [decision:pending-owner]";
const AUDIT_1_D: &str = "audit acme/app#1 @ a100000: D (6 votes)";
const ISSUE: &str = "acme/governance#100 (acme/app#1)";
const LATER: &str = "2026-03-01T12:10:00Z";
/// Write lines are cut to this many characters.
const CUT: usize = 100;
/// The head of `acme/app#1`, and the head it moves to in one test.
const HEAD: &str = "a100000000000000000000000000000000000000";
const MOVED: &str = "b100000000000000000000000000000000000000";

/// How to poll: the configuration, the options, the availability text and the time.
struct Poll {
    config: Config,
    options: TickOptions,
    availability: Option<String>,
    now: Timestamp,
}

impl Poll {
    fn new() -> Self {
        Self::with_config(config())
    }

    fn with_config(config: Config) -> Self {
        Self {
            options: TickOptions::from_config(&config),
            config,
            availability: None,
            now: now(),
        }
    }

    fn keyed() -> Self {
        let mut poll = Self::new();
        let key = ReceiptKey::new(b"inbox-key".to_vec()).expect("non-empty key");
        poll.options = poll.options.with_receipt_key(key);
        poll
    }

    /// The lifecycle on, reading an availability file.
    fn with_lifecycle() -> Self {
        Self::with_config(config_with(&[(
            PROJECTS_FILE,
            "governance_repo: acme/governance\nsupervised_repos: [acme/app, acme/old]\naudit_only_repos: [acme/old]\ndecision_inbox:\n  lifecycle:\n    enabled: true\n    availability:\n      path: AVAILABILITY.md\n",
        )]))
    }

    fn at(mut self, when: &str) -> Self {
        self.now = at(when);
        self
    }
}

fn inbox() -> RepoName {
    repo("acme/governance")
}

fn app() -> RepoName {
    repo("acme/app")
}

fn sha(id: &str) -> CommitSha {
    CommitSha::parse(id).expect("a full SHA")
}

/// The audit log of these tests: one line per record.
#[derive(Debug, Default)]
struct Audit(Mutex<Vec<String>>);

#[async_trait::async_trait]
impl AuditLog for Audit {
    async fn append(&self, record: &AuditRecord) -> Result<(), AuditError> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(format!(
                "audit {} @ {}: {} ({} votes)",
                record.pr,
                record.head_sha.short(),
                record.quadrant,
                record.votes.len()
            ));
        Ok(())
    }
}

/// The in-memory GitHub, the audit log, and how many of GitHub's writes were taken.
struct World {
    github: MemoryGitHub,
    audit: Audit,
    taken: Mutex<usize>,
}

impl World {
    /// `acme/app#1`, Quadrant D (it changes `config/policy.yml`) and green: head `a1…` on
    /// `main`, one commit with good trailers committed and pushed (branch created) at
    /// 10:00, `test` green from GitHub Actions, `ready-to-merge` applied by the owner at
    /// 11:00, and `events` (world YAML entries) after that. The governance repository's
    /// next number is 100.
    fn new(labels: &str, events: &str) -> Self {
        let main = "f000000000000000000000000000000000000000";
        let message = format!("docs: change 1\n\n{TRAILERS}").replace('\n', "\\n");
        let text = format!(
            "now: 2026-03-01T12:00:00Z
bot: mp-gate
repos:
  - name: acme/app
    commits:
      - {{id: {main}, message: \"chore: base\", committer: alice, date: 2026-03-01T08:00:00Z}}
      - id: {HEAD}
        message: \"{message}\"
        parents: [{main}]
        date: 2026-03-01T10:00:00Z
        checks:
          - {{name: test, app: github-actions}}
      - id: {MOVED}
        message: \"docs: change 1, again\"
        parents: [{HEAD}]
        date: 2026-03-01T12:01:00Z
        checks:
          - {{name: test, app: github-actions}}
    branches: {{main: {main}, change-1: {HEAD}}}
    pulls:
      - number: 1
        title: \"docs: change 1\"
        author: agent-bob
        head: change-1
        commits: [{HEAD}]
        labels: [ready-to-merge{labels}]
        events:
          - {{labeled: ready-to-merge, by: alice, at: 2026-03-01T11:00:00Z}}{events}
        files:
          - {{path: config/policy.yml, status: modified, additions: 1}}
        pushes:
          - {{type: branch_creation, to: {HEAD}, by: agent-bob, at: 2026-03-01T10:00:00Z}}
        created_at: 2026-03-01T09:00:00Z
  - name: acme/governance
    commits:
      - {{id: g1, message: init}}
    branches: {{main: g1}}
    issues:
      - {{number: 99, title: an earlier issue, state: closed}}
"
        );
        let world = mp_github_fake::parse_world("inbox.yaml", &text, None)
            .unwrap_or_else(|err| panic!("the test world parses: {err}"));
        Self {
            github: MemoryGitHub::new(world),
            audit: Audit::default(),
            taken: Mutex::new(0),
        }
    }

    /// The writes GitHub accepted since the last take, as the action log shows them.
    fn take_writes(&self) -> Vec<Write> {
        let actions = self.github.actions();
        let mut taken = self.taken.lock().unwrap_or_else(PoisonError::into_inner);
        let new = actions[*taken..].to_vec();
        *taken = actions.len();
        new
    }

    /// `who` reacts `content` (`+1`, `-1`, ...) on `repo#number` at `when`.
    fn react(&self, repo: &RepoName, number: u64, content: &str, who: &str, when: &str) {
        self.github.edit_world(|world| {
            let found = world.repo_mut(repo).expect("a repository of the world");
            let reaction = Reaction {
                kind: ReactionKind::from_github(content),
                user: login(who),
                created_at: Some(at(when)),
            };
            let number = PrNumber::new(number);
            match found.issue_mut(number) {
                Some(issue) => issue.reactions.push(reaction),
                None => found
                    .pull_mut(number)
                    .expect("an issue or pull request of the world")
                    .reactions
                    .push(reaction),
            }
        });
    }

    /// `who` comments `body` on `repo#number` at `when`.
    fn comment(&self, repo: &RepoName, number: u64, who: &str, body: &str, when: &str) {
        self.github
            .comment_as(repo, PrNumber::new(number), &login(who), body, at(when))
            .expect("the thread exists");
    }

    /// `agent-bob` pushes `to` onto `acme/app#1`'s branch at `when` (`force_push` when it
    /// is not a descendant of the head).
    fn push(&self, to: &str, kind: RefUpdateKind, when: &str) {
        self.github.edit_world(|world| {
            let found = world.repo_mut(&app()).expect("acme/app");
            found.branches.insert("change-1".to_owned(), sha(to));
            let pull = found.pull_mut(PrNumber::new(1)).expect("acme/app#1");
            pull.pushes.push(RefUpdate {
                kind,
                before: Some(pull.head_sha.clone()),
                after: Some(sha(to)),
                at: Some(at(when)),
                actor: Some(login("agent-bob")),
            });
            pull.head_sha = sha(to);
            if !pull.commits.contains(&sha(to)) {
                pull.commits.push(sha(to));
            }
        });
    }

    /// The governance issue `number`.
    fn issue<R>(
        &self,
        number: u64,
        read: impl FnOnce(&mp_github_fake::world::IssueRecord) -> R,
    ) -> R {
        self.github.read(|world| {
            let found = world.repo(&inbox()).expect("acme/governance");
            read(
                found
                    .issue(PrNumber::new(number))
                    .expect("the issue exists"),
            )
        })
    }
}

/// The one write line of an action: as the action log shows it, cut to [`CUT`]
/// characters; a merge also checks that the squash commit keeps the identity trailers.
fn write_line(action: &Write) -> String {
    if let Write::MergePull {
        answer: Some(merged),
        ..
    } = action
    {
        let message = &merged.message;
        assert!(
            message.ends_with(TRAILERS),
            "identity trailers kept: {message}"
        );
    }
    action.log_line().chars().take(CUT).collect()
}

/// The squash merge of `acme/app#1` as the action log shows it.
fn merged_1() -> String {
    let squash = world_sha(&app(), "squash merge of #1");
    format!("merge acme/app#1: head a100000 -> base {}", squash.short())
}

/// A world where a tick of the pull-request path (with `poll`'s configuration and
/// options) has asked about the Quadrant-D pull request `acme/app#1`.
fn asked(poll: &Poll, world: World) -> World {
    let log = tick(&world, poll);
    assert!(log.iter().any(|l| l == ASKED), "{log:?}");
    world.github.log_calls();
    world
}

fn quadrant_d() -> World {
    World::new("", "")
}

/// Runs the pull-request path; returns its audit records and writes, then its outcomes.
fn tick(world: &World, poll: &Poll) -> Vec<String> {
    let report = block_on(run_pr_path(
        &world.github,
        &world.audit,
        &poll.config,
        &poll.options,
        now(),
    ))
    .expect("the tick runs");
    let mut lines: Vec<String> =
        std::mem::take(&mut *world.audit.0.lock().unwrap_or_else(PoisonError::into_inner));
    lines.extend(world.take_writes().iter().map(write_line));
    lines.extend(report.outcomes.iter().map(|o| format!("=> {o}")));
    lines
}

/// Polls the inbox and compares the writes (cut to [`CUT`] characters) and then the
/// outcomes (`=> ...`) with `expected`.
#[track_caller]
fn check(world: &World, poll: &Poll, expected: &[impl AsRef<str>]) -> InboxReport {
    let report = block_on(poll_inbox(
        &world.github,
        &poll.config,
        &poll.options,
        &login(BOT),
        poll.availability.as_deref(),
        poll.now,
    ));
    let mut lines: Vec<String> = world.take_writes().iter().map(write_line).collect();
    lines.extend(report.outcomes.iter().map(|o| format!("=> {o}")));
    let expected: Vec<&str> = expected.iter().map(AsRef::as_ref).collect();
    assert_eq!(lines, expected);
    report
}

/// The tick that recovers and resolves the question in one go (the owner approved while it
/// was failing) resets the count too: reopened later, the question does not start one
/// failure short of `decision:inbox-error`.
#[test]
fn a_recovering_tick_that_closes_the_question_resets_the_count() {
    let poll = Poll::new();
    let world = asked(&poll, quadrant_d());
    let missing = GitHubError::NotFound {
        what: "acme/app#1".to_owned(),
    };
    world.github.fail(
        Failure::on(Endpoint::GetPull, missing)
            .in_repo(&app())
            .with_value("1"),
    );
    check(
        &world,
        &poll,
        &[
            "comment acme/governance#100 (id 2): The bot failed to process this inbox question on 1 consecutive t",
            &format!("=> {ISSUE} failed: failed (1 consecutive): acme/app#1 not found"),
        ],
    );
    check(
        &world,
        &poll,
        &[
            "update comment 2 on acme/governance#100: The bot failed to process this inbox question on 2 consecut",
            &format!("=> {ISSUE} failed: failed (2 consecutive): acme/app#1 not found"),
        ],
    );
    world.github.heal();
    world.react(&inbox(), 100, "+1", OWNER, LATER);
    let [label, receipt, close, outcome] = approved_a_lines(3);
    check(
        &world,
        &poll,
        &[
            label.as_str(),
            &receipt,
            &close,
            "update comment 2 on acme/governance#100: The bot processed this inbox question again after 2 failed ",
            &outcome,
        ],
    );
}

/// The writes and outcome of an approval of option A; the receipt is comment `receipt`.
fn approved_a_lines(receipt: u64) -> [String; 4] {
    [
        "add labels acme/app#1: decision:approved-A".to_owned(),
        format!("comment acme/app#1 (id {receipt}): Merge Gate: recorded `decision:approved-A` for head `a100000`; this recei"),
        "close acme/governance#100".to_owned(),
        "=> acme/governance#100 (acme/app#1) approved: approved by alice: 'decision:approved-A' and its receipt bound to head a100000".to_owned(),
    ]
}

#[test]
fn a_thumbs_up_approves_option_a_and_the_pull_request_merges_the_same_tick() {
    let poll = Poll::new();
    let world = asked(&poll, quadrant_d());
    world.react(&inbox(), 100, "+1", OWNER, LATER);
    let report = check(&world, &poll, &approved_a_lines(2));
    assert_eq!(report.metrics.inbox_resolved, 1);
    assert_eq!(
        tick(&world, &poll),
        [
            AUDIT_1_D,
            &merged_1(),
            &format!(
                "=> acme/app#1 merged: merged as Quadrant D: squash commit {} pinned to head a100000",
                world_sha(&app(), "squash merge of #1").short()
            ),
        ]
    );
    check(&world, &poll, &[] as &[&str]);
}

#[test]
fn approve_b_with_a_key_writes_a_signed_receipt_the_gate_honours() {
    let poll = Poll::keyed();
    let world = asked(&poll, quadrant_d());
    world.comment(&inbox(), 100, OWNER, "Looks right.\n/approve b\n", LATER);
    check(
        &world,
        &poll,
        &[
            "add labels acme/app#1: decision:approved-B",
            "comment acme/app#1 (id 4): Merge Gate: recorded `decision:approved-B` for head `a100000`; this recei",
            "close acme/governance#100",
            "=> acme/governance#100 (acme/app#1) approved: approved by alice: 'decision:approved-B' and its receipt bound to head a100000",
        ],
    );
    let receipt = world.github.read(|w| {
        let pull = w.repo(&app()).and_then(|r| r.pull(PrNumber::new(1)));
        pull.and_then(|p| p.comments.last())
            .map(|c| c.body.clone())
            .unwrap_or_default()
    });
    assert!(receipt.contains("<!-- merge-gate-mac: "), "{receipt}");
    assert_eq!(tick(&world, &poll)[1], merged_1());
}

#[test]
fn an_approval_label_put_there_by_someone_else_is_reestablished_by_the_bot() {
    let poll = Poll::new();
    let pr = World::new(
        &format!(", {APPROVED_A}"),
        &format!(
            "\n          - {{labeled: {APPROVED_A}, by: agent-bob, at: 2026-03-01T11:30:00Z}}"
        ),
    );
    let world = asked(&poll, pr);
    world.comment(&inbox(), 100, OWNER, "/approve A", LATER);
    let [label, receipt, close, outcome] = approved_a_lines(3);
    check(
        &world,
        &poll,
        &[
            "remove label acme/app#1: decision:approved-A",
            &label,
            &receipt,
            &close,
            &outcome,
        ],
    );
    assert_eq!(tick(&world, &poll)[1], merged_1());
}

#[test]
fn a_reject_closes_the_pull_request_and_the_issue_and_is_reported_for_the_burn_in_reset() {
    let poll = Poll::new();
    let world = asked(&poll, quadrant_d());
    world.comment(&inbox(), 100, OWNER, "/reject", LATER);
    let report = check(
        &world,
        &poll,
        &[
            "comment acme/app#1 (id 3): Closed per Decision Inbox `/reject`: alice turned this pull request down ",
            "close acme/app#1",
            "close acme/governance#100",
            "=> acme/governance#100 (acme/app#1) rejected: rejected by alice: pull request and issue closed",
        ],
    );
    assert_eq!(
        report.rejections,
        [Rejection {
            repo: app(),
            number: PrNumber::new(1),
            issue: PrNumber::new(100),
            actor: login(OWNER),
            at: Some(at(LATER)),
        }]
    );
    assert!(report.resets_burn_in());
    assert_eq!(
        tick(&world, &poll),
        Vec::<String>::new(),
        "no open pull request left"
    );
}

#[test]
fn a_reject_retried_after_the_close_failed_comments_once() {
    let poll = Poll::new();
    let world = asked(&poll, quadrant_d());
    world.comment(&inbox(), 100, OWNER, "/reject", LATER);
    world.github.fail(
        Failure::on(
            Endpoint::UpdateIssue,
            GitHubError::Unavailable {
                route: "PATCH /repos/{o}/{r}/issues/{n}".to_owned(),
                message: "HTTP 502".to_owned(),
            },
        )
        .in_repo(&app())
        .with_value("1"),
    );
    let first = block_on(poll_inbox(
        &world.github,
        &poll.config,
        &poll.options,
        &login(BOT),
        None,
        poll.now,
    ));
    let written: Vec<String> = world.take_writes().iter().map(write_line).collect();
    assert_eq!(
        written.len(),
        1,
        "only the comment went through: {written:?}"
    );
    assert!(written[0].starts_with("comment acme/app#1 (id 3): Closed per Decision Inbox"));
    assert_eq!(first.metrics.inbox_rejected, 0, "{:?}", first.outcomes);
    world.github.heal();
    check(
        &world,
        &poll,
        &[
            "close acme/app#1",
            "close acme/governance#100",
            "=> acme/governance#100 (acme/app#1) rejected: rejected by alice: pull request and issue closed",
        ],
    );
}

#[test]
fn the_latest_signal_wins_and_a_later_thumbs_down_rejects() {
    let poll = Poll::new();
    let world = asked(&poll, quadrant_d());
    world.react(&inbox(), 100, "+1", OWNER, "2026-03-01T12:05:00Z");
    world.comment(&inbox(), 100, OWNER, "/approve C", "2026-03-01T12:06:00Z");
    world.react(&inbox(), 100, "-1", OWNER, "2026-03-01T12:07:00Z");
    let report = check(
        &world,
        &poll,
        &[
            "comment acme/app#1 (id 3): Closed per Decision Inbox `/reject`: alice turned this pull request down ",
            "close acme/app#1",
            "close acme/governance#100",
            "=> acme/governance#100 (acme/app#1) rejected: rejected by alice: pull request and issue closed",
        ],
    );
    assert_eq!(report.metrics.inbox_rejected, 1);
}

#[test]
fn at_the_same_time_a_comment_beats_a_reaction() {
    let poll = Poll::new();
    let world = asked(&poll, quadrant_d());
    world.react(&inbox(), 100, "-1", OWNER, LATER);
    world.comment(&inbox(), 100, OWNER, "/approve A", LATER);
    check(&world, &poll, &approved_a_lines(3));
}

#[test]
fn signals_of_actors_outside_the_allowlist_are_ignored() {
    let poll = Poll::new();
    let world = asked(&poll, quadrant_d());
    world.react(&inbox(), 100, "+1", "mallory", LATER);
    world.comment(&inbox(), 100, "mallory", "/reject", LATER);
    world.comment(&inbox(), 100, "agent-bob", "/approve A", LATER);
    let report = check(
        &world,
        &poll,
        &[&format!("=> {ISSUE} no_verdict: no owner decision yet")],
    );
    assert!(report.rejections.is_empty());
}

#[test]
fn approve_c_defers_once_and_never_merges() {
    let poll = Poll::new();
    let world = asked(&poll, quadrant_d());
    world.comment(&inbox(), 100, OWNER, "/approve C", LATER);
    let report = check(
        &world,
        &poll,
        &[
            "add labels acme/app#1: decision:deferred",
            "comment acme/governance#100 (id 3): Deferred per `/approve C` from alice: `acme/app#1` now carries `",
            &format!(
                "=> {ISSUE} deferred: deferred by alice: 'decision:deferred' on the pull request, issue left open"
            ),
        ],
    );
    assert_eq!(report.metrics.inbox_deferred, 1);
    check(
        &world,
        &poll,
        &[&format!(
            "=> {ISSUE} already_deferred: deferred earlier: nothing new to write"
        )],
    );
    assert_eq!(
        tick(&world, &poll),
        [
            AUDIT_1_D,
            "=> acme/app#1 inbox: Quadrant D awaits the owner: decision inbox issue acme/governance#100 is already pending",
        ]
    );
}

#[test]
fn a_moved_head_is_flagged_once_and_the_verdict_applies_when_the_head_returns() {
    let poll = Poll::new();
    let world = asked(&poll, quadrant_d());
    world.react(&inbox(), 100, "+1", OWNER, LATER);
    world.push(MOVED, RefUpdateKind::Push, "2026-03-01T12:01:00Z");
    let report = check(
        &world,
        &poll,
        &[
            "comment acme/governance#100 (id 2): ⚠️ The head of `acme/app#1` changed since this question was open",
            "add labels acme/governance#100: decision:stale-approval",
            &format!(
                "=> {ISSUE} stale_head: head moved a100000 -> b100000: no decision applied, issue marked 'decision:stale-approval'"
            ),
        ],
    );
    assert_eq!(report.metrics.inbox_stale, 1);
    check(
        &world,
        &poll,
        &[&format!(
            "=> {ISSUE} still_stale: head moved a100000 -> b100000: no decision applied (marked stale earlier)"
        )],
    );
    world.push(HEAD, RefUpdateKind::ForcePush, "2026-03-01T12:02:00Z");
    check(&world, &poll, &approved_a_lines(3));
}

#[test]
fn with_a_key_a_body_that_does_not_verify_is_flagged_once_and_never_honoured() {
    let poll = Poll::keyed();
    let world = asked(&poll, quadrant_d());
    world.react(&inbox(), 100, "+1", OWNER, LATER);
    // Point the question at another head: the MAC no longer matches.
    world.github.edit_world(|w| {
        let issue = w
            .repo_mut(&inbox())
            .and_then(|r| r.issue_mut(PrNumber::new(100)))
            .expect("the question");
        issue.body = issue.body.replace(HEAD, MOVED);
    });
    world.push(MOVED, RefUpdateKind::Push, "2026-03-01T12:01:00Z");
    let report = check(
        &world,
        &poll,
        &[
            "comment acme/governance#100 (id 3): ⚠️ This inbox question failed its integrity check: the bot's sig",
            "add labels acme/governance#100: decision:inbox-integrity-failed",
            &format!(
                "=> {ISSUE} integrity_failed: integrity check failed (the bot's signature does not match this issue and the pull request, head and nonce the body records): issue marked 'decision:inbox-integrity-failed'"
            ),
        ],
    );
    assert_eq!(report.metrics.inbox_integrity_failed, 1);
    check(
        &world,
        &poll,
        &[&format!(
            "=> {ISSUE} still_integrity_failed: integrity check failed (the bot's signature does not match this issue and the pull request, head and nonce the body records): no decision applied (marked earlier)"
        )],
    );
}

#[test]
fn with_a_key_an_unsigned_body_is_not_honoured() {
    let world = asked(&Poll::new(), quadrant_d());
    world.react(&inbox(), 100, "+1", OWNER, LATER);
    check(
        &world,
        &Poll::keyed(),
        &[
            "comment acme/governance#100 (id 2): ⚠️ This inbox question failed its integrity check: the issue has",
            "add labels acme/governance#100: decision:inbox-integrity-failed",
            &format!(
                "=> {ISSUE} integrity_failed: integrity check failed (the issue has no signature comment of the bot): issue marked 'decision:inbox-integrity-failed'"
            ),
        ],
    );
}

#[test]
fn the_issue_is_closed_when_its_pull_request_merged_or_closed() {
    let poll = Poll::new();
    let world = asked(&poll, quadrant_d());
    close_1(&world, true);
    let report = check(
        &world,
        &poll,
        &[
            "comment acme/governance#100 (id 2): `acme/app#1` was merged, so there is nothing left to decide here",
            "close acme/governance#100",
            &format!("=> {ISSUE} pr_closed: pull request merged: inbox issue closed"),
        ],
    );
    assert_eq!(report.metrics.inbox_resolved, 1);

    let world = asked(&poll, quadrant_d());
    close_1(&world, false);
    check(
        &world,
        &poll,
        &[
            "comment acme/governance#100 (id 2): `acme/app#1` was closed without merging, so there is nothing lef",
            "close acme/governance#100",
            &format!(
                "=> {ISSUE} pr_closed: pull request closed without merging: inbox issue closed"
            ),
        ],
    );
}

#[test]
fn the_poison_guard_counts_failed_ticks_on_the_issue_and_labels_the_third() {
    let poll = Poll::new();
    let world = asked(&poll, quadrant_d());
    let missing = GitHubError::NotFound {
        what: "acme/app#1".to_owned(),
    };
    world.github.fail(
        Failure::on(Endpoint::GetPull, missing)
            .in_repo(&app())
            .with_value("1"),
    );
    check(
        &world,
        &poll,
        &[
            "comment acme/governance#100 (id 2): The bot failed to process this inbox question on 1 consecutive t",
            &format!("=> {ISSUE} failed: failed (1 consecutive): acme/app#1 not found"),
        ],
    );
    check(
        &world,
        &poll,
        &[
            "update comment 2 on acme/governance#100: The bot failed to process this inbox question on 2 consecut",
            &format!("=> {ISSUE} failed: failed (2 consecutive): acme/app#1 not found"),
        ],
    );
    let report = check(
        &world,
        &poll,
        &[
            "update comment 2 on acme/governance#100: The bot failed to process this inbox question on 3 consecut",
            "add labels acme/governance#100: decision:inbox-error",
            &format!("=> {ISSUE} failed: failed (3 consecutive): acme/app#1 not found"),
        ],
    );
    assert_eq!(report.metrics.inbox_errors, 1);
    let body = world.issue(100, |i| i.comments[0].body.clone());
    assert!(body.contains("failed to process") && body.contains("`decision:inbox-error`"));
    // Fixed: the counter is reset and the label taken off.
    world.github.heal();
    check(
        &world,
        &poll,
        &[
            "update comment 2 on acme/governance#100: The bot processed this inbox question again after 3 failed ",
            "remove label acme/governance#100: decision:inbox-error",
            &format!("=> {ISSUE} no_verdict: no owner decision yet"),
        ],
    );
    check(
        &world,
        &poll,
        &[&format!("=> {ISSUE} no_verdict: no owner decision yet")],
    );
}

#[test]
fn transient_errors_are_not_counted_and_a_rate_limit_ends_the_poll() {
    let poll = Poll::new();
    let world = asked(&poll, quadrant_d());
    world.github.fail(
        Failure::on(
            Endpoint::GetPull,
            GitHubError::Unavailable {
                route: "GET /pulls/1".to_owned(),
                message: "connection reset".to_owned(),
            },
        )
        .in_repo(&app())
        .with_value("1"),
    );
    check(
        &world,
        &poll,
        &[&format!(
            "=> {ISSUE} failed: failed (not counted): GET /pulls/1: connection reset"
        )],
    );
    world.github.heal();
    world.github.fail(
        Failure::on(Endpoint::GetPull, GitHubError::RateLimited { remaining: 0 })
            .in_repo(&app())
            .with_value("1"),
    );
    let report = check(
        &world,
        &poll,
        &[&format!(
            "=> {ISSUE} failed: failed (not counted): rate limit exhausted: 0 calls left"
        )],
    );
    assert!(report.metrics.rate_limited);
    assert_eq!(
        report.warnings,
        [
            "decision inbox poll ended early (rate limit exhausted: 0 calls left); 0 issue(s) and the lifecycle wait for the next tick"
        ]
    );
}

#[test]
fn foreign_unreadable_and_ungated_issues_are_ignored() {
    let poll = Poll::new();
    let world = asked(&poll, quadrant_d());
    world.react(&inbox(), 100, "+1", OWNER, LATER);
    // Three more issues like the question, without its comments: one the owner opened
    // (and labelled), one with an unreadable body, one about a repository not gated.
    world.github.edit_world(|w| {
        let governance = w.repo_mut(&inbox()).expect("acme/governance");
        let mut asked = governance
            .issue(PrNumber::new(100))
            .expect("the question")
            .clone();
        asked.comments.clear();
        let mut foreign = asked.clone();
        foreign.number = PrNumber::new(96);
        foreign.author = Some(login(OWNER));
        for event in &mut foreign.events {
            event.actor = Some(login(OWNER));
        }
        let mut unreadable = asked.clone();
        unreadable.number = PrNumber::new(97);
        unreadable.body = "PR: `acme/app#1` and nothing else".to_owned();
        let mut ungated = asked.clone();
        ungated.number = PrNumber::new(98);
        ungated.body = asked.body.replace("acme/app#1", "acme/old#1");
        governance.issues.extend([foreign, unreadable, ungated]);
    });
    let [label, receipt, close, outcome] = approved_a_lines(2);
    check(
        &world,
        &poll,
        &[
            label.as_str(),
            &receipt,
            &close,
            "=> acme/governance#96 not_opened_by_bot: opened by alice, not the bot: ignored",
            "=> acme/governance#97 unreadable_question: unreadable question: no well-formed head marker in the body",
            "=> acme/governance#98 (acme/old#1) not_gated: acme/old is not gated this tick: ignored",
            &outcome,
        ],
    );
}

#[test]
fn a_disabled_lifecycle_makes_no_call_and_an_enabled_one_reminds_and_escalates_once() {
    let ten_days_later = "2026-03-11T12:00:00Z";
    let poll = Poll::new().at(ten_days_later);
    let world = asked(&poll, quadrant_d());
    // The label record: the bot's `decision:pending-owner` is the label it applied.
    let polling = [
        Endpoint::ListIssues,
        Endpoint::ListTimeline,
        Endpoint::GraphqlLabel,
        Endpoint::ListComments,
        Endpoint::GetPull,
        Endpoint::ListReactions,
    ];
    check(
        &world,
        &poll,
        &[&format!("=> {ISSUE} no_verdict: no owner decision yet")],
    );
    assert_eq!(take_calls(&world), polling);

    let poll = Poll::with_lifecycle().at(ten_days_later);
    let report = check(
        &world,
        &poll,
        &[
            "comment acme/governance#100 (id 2): [REMINDER_72H] This decision has been waiting for 72 hours, not ",
            "comment acme/governance#100 (id 3): [ESCALATION_168H] This decision is still open after 168 hours, n",
            &format!("=> {ISSUE} no_verdict: no owner decision yet"),
        ],
    );
    assert_eq!(
        take_calls(&world),
        [&polling[..], &[Endpoint::CreateComment; 2]].concat()
    );
    assert_eq!(report.metrics.inbox_lifecycle_comments, 2);
    assert_eq!(
        report.warnings,
        [
            "availability file acme/governance:AVAILABILITY.md@main was not read; the lifecycle treats the owner as available"
        ]
    );
    check(
        &world,
        &poll,
        &[&format!("=> {ISSUE} no_verdict: no owner decision yet")],
    );
}

#[test]
fn a_completed_outing_pauses_the_clock_and_the_return_digest_is_posted_once() {
    let mut poll = Poll::with_lifecycle().at("2026-03-05T12:00:00Z");
    poll.availability = Some(
        "[OWNER_AVAILABILITY] 2026-03-02T00:00:00Z - 2026-03-04T00:00:00Z outing\nnot a date\n"
            .to_owned(),
    );
    let world = asked(&poll, quadrant_d());
    // Open 96 h, away 48 h: 48 h of waiting, no reminder yet.
    let report = check(
        &world,
        &poll,
        &[
            "comment acme/governance#100 (id 2): [RETURN_DIGEST] Welcome back. This decision waited for you; the ",
            &format!("=> {ISSUE} no_verdict: no owner decision yet"),
        ],
    );
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    check(
        &world,
        &poll,
        &[&format!("=> {ISSUE} no_verdict: no owner decision yet")],
    );
    // During the next outing nothing is written, however long the wait.
    let mut away = poll.at("2026-03-20T12:00:00Z");
    away.availability = Some(
        "[OWNER_AVAILABILITY] 2026-03-19T00:00:00Z - 2026-03-25T00:00:00Z outing\n".to_owned(),
    );
    check(
        &world,
        &away,
        &[&format!("=> {ISSUE} no_verdict: no owner decision yet")],
    );
}

#[test]
fn the_metrics_name_the_inbox_counters() {
    let poll = Poll::new();
    let world = asked(&poll, quadrant_d());
    world.comment(&inbox(), 100, OWNER, "/reject", LATER);
    let report = block_on(poll_inbox(
        &world.github,
        &poll.config,
        &poll.options,
        &login(BOT),
        None,
        poll.now,
    ));
    assert_eq!(
        report.metrics.to_json(),
        serde_json::json!({
            "inbox_resolved": 0, "inbox_stale": 0, "inbox_deferred": 0, "inbox_rejected": 1,
            "inbox_errors": 0, "inbox_integrity_failed": 0, "inbox_lifecycle_comments": 0,
        })
    );
}

#[test]
fn a_signature_holds_only_for_the_issue_it_was_written_on() {
    let poll = Poll::keyed();
    let world = asked(&poll, quadrant_d());
    let (body, comments) = world.issue(100, |i| (i.body.clone(), i.comments.clone()));
    let question = InboxQuestion::read(&body).expect("a readable question");
    let key = poll.options.receipt_key.clone();
    let bot = login(BOT);
    let on = |issue: u64| {
        check_integrity(
            &question,
            &inbox(),
            PrNumber::new(issue),
            &comments,
            &bot,
            key.as_ref(),
        )
    };
    assert_eq!(on(100), Integrity::Verified);
    assert_eq!(
        on(101),
        Integrity::Failed(IntegrityFailure::MacMismatch),
        "the same body and signature, pasted into another issue"
    );
}

/// An agent renamed another label (an audit issue's) `decision:pending-owner` after the
/// bot applied it: the bot's event names the label as it is now, so GitHub's record of the
/// label decides. Edited after the bot's event: not a question, the owner's thumbs-up
/// approves nothing, and nothing is written.
#[test]
fn a_pending_label_edited_after_the_bot_applied_it_makes_no_question() {
    let poll = Poll::new();
    let world = asked(&poll, quadrant_d());
    world.github.edit_world(|w| {
        let governance = w.repo_mut(&inbox()).expect("acme/governance");
        let mut label = mp_github_fake::RepoLabel::named(PENDING_OWNER);
        label.created_at = Some(at("2020-01-01T00:00:00Z"));
        label.updated_at = Some(at("2030-01-01T00:00:00Z"));
        governance.labels.push(label);
    });
    world.react(&inbox(), 100, "+1", OWNER, LATER);
    let report = block_on(poll_inbox(
        &world.github,
        &poll.config,
        &poll.options,
        &login(BOT),
        poll.availability.as_deref(),
        poll.now,
    ));
    assert!(world.take_writes().is_empty(), "nothing is written");
    let outcomes: Vec<String> = report.outcomes.iter().map(ToString::to_string).collect();
    assert_eq!(outcomes.len(), 1, "{outcomes:?}");
    assert!(
        outcomes[0].starts_with("acme/governance#100 pending_label_changed: "),
        "{outcomes:?}"
    );
    assert!(outcomes[0].contains("renamed"), "{outcomes:?}");
    assert_eq!(report.metrics.inbox_resolved, 0);
}

/// `acme/app#1` closed by a person, merged or not.
fn close_1(world: &World, merged: bool) {
    world.github.edit_world(|w| {
        let found = w.repo_mut(&app()).expect("acme/app");
        let pull = found.pull_mut(PrNumber::new(1)).expect("acme/app#1");
        pull.state = mp_core::context::PrState::Closed;
        pull.merged = merged;
        if merged {
            pull.merged_by = Some(login(OWNER));
        }
    });
}

/// The routes of the calls made since the last take.
fn take_calls(world: &World) -> Vec<Endpoint> {
    world
        .github
        .take_call_log()
        .iter()
        .map(|call| call.endpoint)
        .collect()
}

/// A clock frozen at NOW until the in-memory GitHub was asked for the reactions on the
/// inbox question, then `jump` seconds later: a tick that froze (or was stopped) inside the
/// inbox step, after the step's renewal of its lease.
struct FreezesInTheInbox {
    github: std::sync::Arc<MemoryGitHub>,
    jump: i64,
}

impl mp_core::port::Clock for FreezesInTheInbox {
    fn now(&self) -> Timestamp {
        let asked = self
            .github
            .call_log()
            .iter()
            .any(|call| call.endpoint == Endpoint::ListReactions);
        now().plus_seconds(if asked { self.jump } else { 0 })
    }
}

/// The inbox's writes go through the lease's fence one by one (decisions/0077): the
/// owner's 👍 is read, then the clock passes the renew deadline (two thirds of the
/// three-minute lease) inside the step: the approval label, its receipt and the close
/// are refused before GitHub is called, and the tick stops. With the clock frozen the
/// same tick applies the approval.
#[test]
fn the_inbox_writes_nothing_past_the_renew_deadline_inside_its_step() {
    let run = |jump: i64| {
        let poll = Poll::new();
        let world = asked(&poll, quadrant_d());
        world.react(&inbox(), 100, "+1", OWNER, LATER);
        let World { github, audit, .. } = world;
        let github = std::sync::Arc::new(github);
        github.take_call_log();
        let before = github.actions().len();
        let clock = FreezesInTheInbox {
            github: github.clone(),
            jump,
        };
        let options = poll
            .options
            .clone()
            .with_lease_clock(std::sync::Arc::new(clock));
        let result = block_on(crate::run_tick(
            github.as_ref(),
            &audit,
            &poll.config,
            &options,
            poll.now,
        ));
        let writes: Vec<String> = github.actions()[before..]
            .iter()
            .map(Write::log_line)
            .collect();
        let label_calls = github
            .call_log()
            .iter()
            .filter(|call| call.endpoint == Endpoint::AddLabels)
            .count();
        (
            result.map(drop).map_err(|e| e.to_string()),
            writes,
            label_calls,
        )
    };
    let approved = |writes: &[String]| {
        writes
            .iter()
            .any(|w| w == "add labels acme/app#1: decision:approved-A")
    };
    let (result, writes, label_calls) = run(0);
    result.expect("the tick runs");
    assert!(approved(&writes), "{writes:#?}");
    assert!(label_calls >= 1);
    let (result, writes, label_calls) = run(130);
    let error = result.expect_err("the lease is lost");
    assert!(
        error.starts_with("the tick lease (all) was lost: not renewed within the renew deadline"),
        "{error}"
    );
    assert!(!approved(&writes), "{writes:#?}");
    assert_eq!(label_calls, 0, "{writes:#?}");
    assert!(
        writes
            .iter()
            .all(|w| !w.starts_with("close ") && !w.starts_with("comment acme/app#1")),
        "{writes:#?}"
    );
}
