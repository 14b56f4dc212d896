//! Test builders shared by the approval and gate tests: pull requests, commits, check
//! runs, label events, comments and a standard policy.

use crate::approval::{Receipt, ReceiptLabel, render_receipt};
use crate::context::{
    CheckConclusion, CheckRun, CheckStatus, Comment, CommentId, CommitContext, HeadHistory,
    LabelAction, LabelEvent, LabelRecord, LabelRecords, PrContext, PrState, RefUpdate,
    RefUpdateKind, WorkflowJob,
};
use crate::gate::{ConditionResult, GatePolicy, Outcome};
use crate::ids::{CommitSha, Login, PrNumber, RepoName, Timestamp};

/// The allowlisted owner.
pub(crate) const OWNER: &str = "alice";
/// The bot user.
pub(crate) const BOT: &str = "mp-gate[bot]";
/// The evaluation time of every test.
pub(crate) const NOW: &str = "2026-03-01T12:00:00Z";
/// The committer date of [`good_commit`] commits.
pub(crate) const COMMITTED: &str = "2026-03-01T10:00:00Z";
/// A trailer block that satisfies C5 and a registry with `claude-code`.
pub(crate) const GOOD_TRAILERS: &str = "Agent-Tool: claude-code\nAgent-Model: claude-opus-4.7\nAgent-Session: s_abc-123\nAgent-Machine: laptop\nTask-Ref: Issue#12";

/// A full SHA starting with `prefix` (hex), padded with zeros.
pub(crate) fn sha(prefix: &str) -> CommitSha {
    CommitSha::parse(&format!("{prefix:0<40}")).expect("test sha is hex")
}

pub(crate) fn login(name: &str) -> Login {
    Login::parse(name).expect("test login is valid")
}

pub(crate) fn at(text: &str) -> Timestamp {
    Timestamp::parse(text).expect("test timestamp is valid")
}

pub(crate) fn now() -> Timestamp {
    at(NOW)
}

pub(crate) fn repo() -> RepoName {
    RepoName::parse("acme/widget").expect("valid repo")
}

/// A commit with `message`, committed at [`COMMITTED`].
pub(crate) fn commit(sha_prefix: &str, message: &str) -> CommitContext {
    let mut commit = CommitContext::from_message(sha(sha_prefix), message);
    commit.committed_at = Some(at(COMMITTED));
    commit
}

/// A commit with well-formed identity trailers.
pub(crate) fn good_commit(sha_prefix: &str) -> CommitContext {
    commit(sha_prefix, &format!("feat: change\n\n{GOOD_TRAILERS}"))
}

/// The standard policy: allowlist `alice`, the bot, defaults otherwise.
pub(crate) fn policy() -> GatePolicy {
    GatePolicy {
        allowlist: vec![login(OWNER)],
        bot: Some(login(BOT)),
        ..GatePolicy::default()
    }
}

/// A check run: `state` is `queued`, `in_progress`, `completed` (no conclusion) or a
/// conclusion such as `success` (completed with it).
pub(crate) fn run(name: &str, state: &str, slug: Option<&str>) -> CheckRun {
    let (status, conclusion) = match state {
        "queued" | "in_progress" | "completed" => (CheckStatus::from_github(state), None),
        conclusion => (
            CheckStatus::Completed,
            Some(CheckConclusion::from_github(conclusion)),
        ),
    };
    CheckRun {
        id: None,
        name: name.to_owned(),
        status,
        conclusion,
        started_at: None,
        completed_at: None,
        app_slug: slug.map(str::to_owned),
        output_summary: None,
    }
}

pub(crate) fn comment(id: u64, author: &str, body: &str, created: &str) -> Comment {
    Comment {
        id: CommentId::new(id),
        author: Some(login(author)),
        body: body.to_owned(),
        created_at: Timestamp::parse(created).ok(),
        updated_at: Timestamp::parse(created).ok(),
    }
}

/// A receipt for `label` on head `head_prefix`, written at `created`.
pub(crate) fn receipt(label: &str, head_prefix: &str, created: &str) -> Receipt {
    Receipt::new(label, sha(head_prefix)).with_comment(CommentId::new(900), Some(at(created)))
}

/// A bot receipt comment as the bot writes it (unsigned).
pub(crate) fn receipt_comment(
    id: u64,
    label: ReceiptLabel,
    head_prefix: &str,
    created: &str,
) -> Comment {
    let body = render_receipt(label, &sha(head_prefix), &repo(), PrNumber::new(7), None);
    comment(id, BOT, &body, created)
}

/// A head branch created at `head` at [`COMMITTED`].
pub(crate) fn created(head: &CommitSha) -> HeadHistory {
    HeadHistory::Read(vec![RefUpdate {
        kind: RefUpdateKind::BranchCreation,
        before: None,
        after: Some(head.clone()),
        at: Some(at(COMMITTED)),
        actor: Some(login("bob")),
    }])
}

/// A pull request builder. Defaults: `acme/widget#7`, head `a…` with one good commit,
/// base `b…`, no labels, events or check runs; the head branch was created at `a…` at
/// [`COMMITTED`].
pub(crate) struct Pr(PrContext);

impl Pr {
    pub(crate) fn new() -> Self {
        Self(PrContext {
            workflow_jobs: Vec::new(),
            repo: repo(),
            number: PrNumber::new(7),
            title: "feat: change".to_owned(),
            body: String::new(),
            head_sha: sha("a"),
            head_ref: "feature".to_owned(),
            base_sha: sha("b"),
            base_ref: "main".to_owned(),
            state: PrState::Open,
            merged: false,
            labels: Vec::new(),
            author: login("bob"),
            commits: vec![good_commit("a")],
            files: Vec::new(),
            check_runs: Vec::new(),
            label_events: Vec::new(),
            head_history: created(&sha("a")),
            base_history: HeadHistory::NotRead,
            label_records: LabelRecords::Read(Vec::new()),
        })
    }

    /// GitHub's record of `label`: created at `created`, last edited at `updated`. Without
    /// one, [`Pr::build`] records every label the pull request carries as created long
    /// ago and never edited.
    pub(crate) fn label_record(mut self, label: &str, created: &str, updated: &str) -> Self {
        let record = LabelRecord {
            name: label.to_owned(),
            created_at: Timestamp::parse(created).ok(),
            updated_at: Timestamp::parse(updated).ok(),
        };
        if let LabelRecords::Read(records) = &mut self.0.label_records {
            records.retain(|r| r.name != label);
            records.push(record);
        } else {
            self.0.label_records = LabelRecords::Read(vec![record]);
        }
        self
    }

    /// Replaces GitHub's records of the labels (e.g. `NotRead`).
    pub(crate) fn label_records(mut self, records: LabelRecords) -> Self {
        self.0.label_records = records;
        self
    }

    /// Puts a label on the PR (no timeline event).
    pub(crate) fn label(mut self, name: &str) -> Self {
        self.0.labels.push(name.to_owned());
        self
    }

    fn event(mut self, action: LabelAction, label: &str, actor: Option<&str>, when: &str) -> Self {
        self.0.label_events.push(LabelEvent {
            action,
            label: label.to_owned(),
            actor: actor.map(login),
            at: Timestamp::parse(when).ok(),
        });
        self
    }

    /// Puts a label on the PR and records a `labeled` event by `actor` at `when`.
    pub(crate) fn applied(self, label: &str, actor: &str, when: &str) -> Self {
        self.label(label).labeled(label, actor, when)
    }

    /// Records a `labeled` event only; an unparseable `when` gives an event without time.
    pub(crate) fn labeled(self, label: &str, actor: &str, when: &str) -> Self {
        self.event(LabelAction::Labeled, label, Some(actor), when)
    }

    /// Records a `labeled` event without an actor.
    pub(crate) fn labeled_by_nobody(self, label: &str, when: &str) -> Self {
        self.event(LabelAction::Labeled, label, None, when)
    }

    /// Records an `unlabeled` event.
    pub(crate) fn unlabeled(self, label: &str, actor: &str, when: &str) -> Self {
        self.event(LabelAction::Unlabeled, label, Some(actor), when)
    }

    /// Sets the head SHA and makes the commits a single good commit with that SHA; the
    /// head branch's history is its creation at that head at [`COMMITTED`].
    pub(crate) fn head(mut self, prefix: &str) -> Self {
        self.0.head_sha = sha(prefix);
        self.0.commits = vec![good_commit(prefix)];
        self.0.head_history = created(&sha(prefix));
        self
    }

    /// Records a push of `prefix` at `when` in the head branch's history and makes it the
    /// head (the commits are left as they are).
    pub(crate) fn pushed(mut self, prefix: &str, when: &str) -> Self {
        let before = Some(self.0.head_sha.clone());
        self.0.head_sha = sha(prefix);
        if let HeadHistory::Read(updates) = &mut self.0.head_history {
            updates.push(RefUpdate {
                kind: RefUpdateKind::Push,
                before,
                after: Some(sha(prefix)),
                at: Timestamp::parse(when).ok(),
                actor: Some(login("bob")),
            });
        }
        self
    }

    /// Replaces the head branch's history.
    pub(crate) fn history(mut self, history: HeadHistory) -> Self {
        self.0.head_history = history;
        self
    }

    /// Replaces the base branch's history.
    pub(crate) fn base_history(mut self, history: HeadHistory) -> Self {
        self.0.base_history = history;
        self
    }

    pub(crate) fn base(mut self, prefix: &str) -> Self {
        self.0.base_sha = sha(prefix);
        self
    }

    /// Replaces the commits (the head SHA is left as is).
    pub(crate) fn commits(mut self, commits: Vec<CommitContext>) -> Self {
        self.0.commits = commits;
        self
    }

    /// Sets the committer date of every commit (`None` when unparseable).
    pub(crate) fn committed(mut self, when: &str) -> Self {
        for commit in &mut self.0.commits {
            commit.committed_at = Timestamp::parse(when).ok();
        }
        self
    }

    pub(crate) fn check(mut self, name: &str, state: &str, slug: Option<&str>) -> Self {
        self.0.check_runs.push(run(name, state, slug));
        self
    }

    /// A run with id `id`; `workflow`: the workflow file of the job that published it, on
    /// the head commit (`"<file> on <sha prefix>"` for a run on another commit).
    pub(crate) fn job(mut self, id: u64, name: &str, state: &str, workflow: Option<&str>) -> Self {
        self.0.check_runs.push(CheckRun {
            id: Some(id),
            ..run(name, state, Some("github-actions"))
        });
        if let Some(workflow) = workflow {
            let (path, head_sha) = match workflow.split_once(" on ") {
                Some((path, prefix)) => (path, sha(prefix)),
                None => (workflow, self.0.head_sha.clone()),
            };
            self.0.workflow_jobs.push(WorkflowJob {
                check_run_id: id,
                run_id: 1000 + id,
                workflow_path: path.to_owned(),
                head_sha,
                event: "pull_request".to_owned(),
            });
        }
        self
    }

    pub(crate) fn build(mut self) -> PrContext {
        if let LabelRecords::Read(records) = &mut self.0.label_records {
            let long_ago = at("2020-01-01T00:00:00Z");
            for label in &self.0.labels {
                if !records.iter().any(|r| r.name == *label) {
                    records.push(LabelRecord::created(label, long_ago));
                }
            }
        }
        self.0
    }
}

/// One line per result: `pass | <line>`, `fail | <line>` or `advisory P2 | <line>`.
pub(crate) fn lines<'a>(results: impl IntoIterator<Item = &'a ConditionResult>) -> Vec<String> {
    results
        .into_iter()
        .map(|result| match result.outcome {
            Outcome::Pass => format!("pass | {result}"),
            Outcome::Fail => format!("fail | {result}"),
            Outcome::Advisory => format!("advisory {} | {result}", result.severity),
        })
        .collect()
}
