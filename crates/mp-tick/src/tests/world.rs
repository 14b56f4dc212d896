//! The world of the pull-request path's tests and the tick over it: pull requests built
//! like a world file's entries ([`clean`] and its changes), served by the in-memory
//! GitHub behind the [`Held`] port, with an audit log whose records fall between
//! GitHub's writes.

use std::sync::atomic::AtomicUsize;
use std::sync::{Mutex, PoisonError};

use super::held::Held;
use crate::testkit::{BOT, OWNER, TRAILERS, block_on, now, repo, sha, write_line};
use crate::{TickError, TickOptions, TickReport, run_pr_path};
use mp_core::approval::{APPROVED_A, READY_TO_MERGE};
use mp_core::config::Config;
use mp_core::context::FileStatus;
use mp_core::ids::{CommitSha, PrNumber};
use mp_core::port::{AuditError, AuditLog, AuditRecord, Write};
use mp_github_fake::world::{Pull, World};
use mp_github_fake::{Failure, MemoryGitHub};

/// The rate-limit budget of the world until a test sets another.
pub(super) const BUDGET: u32 = 4321;

/// One pull request of the test world, as the world file writes it.
#[derive(Debug, Clone)]
pub(super) struct Pr {
    repo: String,
    number: u64,
    /// The changed file and its status as the world file names it.
    file: (String, &'static str),
    /// The head commit's check runs (world YAML entries).
    checks: Vec<String>,
    /// `(label, actor, when)`, each a current label with its `labeled` event.
    labels: Vec<(String, String, String)>,
    /// The head commit's committer date.
    committed: String,
}

/// `acme/app#n`, Quadrant A and green: head `a<n>…` on `main` (`f…`), one commit with
/// good trailers committed and pushed (branch created) at 10:00, `README.md` modified,
/// `test` green from GitHub Actions, `ready-to-merge` applied by the owner at 11:00 (no
/// receipt yet).
pub(super) fn clean(n: u64) -> Pr {
    Pr {
        repo: "acme/app".to_owned(),
        number: n,
        file: ("README.md".to_owned(), "modified"),
        checks: Vec::new(),
        labels: Vec::new(),
        committed: "2026-03-01T10:00:00Z".to_owned(),
    }
    .check("test", "success")
    .applied(READY_TO_MERGE, OWNER, "2026-03-01T11:00:00Z")
}

impl Pr {
    /// Moves the pull request to another repository.
    pub(super) fn in_repo(mut self, name: &str) -> Self {
        self.repo = name.to_owned();
        self
    }

    /// Replaces the changed files with one file.
    pub(super) fn file(mut self, path: &str, status: FileStatus) -> Self {
        let status = match status {
            FileStatus::Added => "added",
            FileStatus::Modified => "modified",
            FileStatus::Removed => "removed",
            FileStatus::Renamed => "renamed",
        };
        self.file = (path.to_owned(), status);
        self
    }

    /// Replaces the check runs with one run of `name` from GitHub Actions; `state` is a
    /// conclusion or `in_progress`; `none` leaves no run at all.
    pub(super) fn check(mut self, name: &str, state: &str) -> Self {
        self.checks = match state {
            "none" => Vec::new(),
            "in_progress" => vec![format!(
                "{{name: {name}, app: github-actions, status: in_progress}}"
            )],
            conclusion => vec![format!(
                "{{name: {name}, app: github-actions, conclusion: {conclusion}}}"
            )],
        };
        self
    }

    /// Puts `label` on the pull request with a `labeled` event by `actor` at `when`.
    pub(super) fn applied(mut self, label: &str, actor: &str, when: &str) -> Self {
        self.labels
            .push((label.to_owned(), actor.to_owned(), when.to_owned()));
        self
    }

    /// Takes `ready-to-merge` off (label and event).
    pub(super) fn not_ready(mut self) -> Self {
        self.labels.retain(|(label, _, _)| label != READY_TO_MERGE);
        self
    }

    /// The owner's `decision:approved-A` at 11:00.
    pub(super) fn approved_a(self) -> Self {
        self.applied(APPROVED_A, OWNER, "2026-03-01T11:00:00Z")
    }

    /// Sets the head commit's committer date.
    pub(super) fn committed(mut self, when: &str) -> Self {
        self.committed = when.to_owned();
        self
    }

    fn head(&self) -> CommitSha {
        sha(&format!("a{}", self.number))
    }

    /// The head commit, as a `commits` entry.
    fn commit_yaml(&self) -> String {
        let message = format!("docs: change {}\n\n{TRAILERS}", self.number).replace('\n', "\\n");
        format!(
            "      - {{id: \"{}\", message: \"{message}\", parents: [\"{}\"], date: {}, checks: [{}]}}\n",
            self.head(),
            main_head(),
            self.committed,
            self.checks.join(", ")
        )
    }

    /// The pull request, as a `pulls` entry.
    fn pull_yaml(&self) -> String {
        let n = self.number;
        let labels: Vec<&str> = self.labels.iter().map(|(l, _, _)| l.as_str()).collect();
        let events: Vec<String> = self
            .labels
            .iter()
            .map(|(label, by, at)| format!("{{labeled: \"{label}\", by: {by}, at: {at}}}"))
            .collect();
        format!(
            "      - number: {n}
        title: \"docs: change {n}\"
        author: agent-bob
        head: change-{n}
        labels: [{labels}]
        events: [{events}]
        files: [{{path: {path}, status: {status}, additions: 1}}]
        pushes: [{{type: branch_creation, to: \"{head}\", by: agent-bob, at: 2026-03-01T10:00:00Z}}]
        created_at: 2026-03-01T09:00:00Z
",
            labels = labels
                .iter()
                .map(|l| format!("\"{l}\""))
                .collect::<Vec<_>>()
                .join(", "),
            events = events.join(", "),
            path = self.file.0,
            status = self.file.1,
            head = self.head(),
        )
    }
}

/// The `main` head every pull request is based on: `f…` in every repository.
fn main_head() -> CommitSha {
    sha("f")
}

/// The world of `pulls`: `acme/app`, `acme/old` and the governance repository, each with
/// `main` at `f…` (committed by the bot on 1 February); the governance repository's next
/// number is 100; `rate_limit` [`BUDGET`]; the App `mp-gate`.
pub(super) fn world_of(pulls: &[Pr]) -> World {
    let mut text = format!(
        "now: {}\nbot: mp-gate\nrate_limit: {{remaining: {BUDGET}}}\nrepos:\n",
        now()
    );
    for name in ["acme/app", "acme/old", "acme/governance"] {
        let mine: Vec<&Pr> = pulls.iter().filter(|p| p.repo == name).collect();
        text.push_str(&format!(
            "  - name: {name}\n    commits:\n      - {{id: \"{}\", message: \"chore: base\", committer: \"{BOT}\", date: 2026-02-01T10:00:00Z}}\n",
            main_head()
        ));
        let mut branches = format!("main: \"{}\"", main_head());
        for pr in &mine {
            text.push_str(&pr.commit_yaml());
            branches.push_str(&format!(", change-{}: \"{}\"", pr.number, pr.head()));
        }
        text.push_str(&format!("    branches: {{{branches}}}\n"));
        if !mine.is_empty() {
            text.push_str("    pulls:\n");
            for pr in &mine {
                text.push_str(&pr.pull_yaml());
            }
        }
        if name == "acme/governance" {
            text.push_str(
                "    issues:\n      - {number: 99, title: an earlier issue, state: closed}\n",
            );
        }
    }
    mp_github_fake::parse_world("tests.yaml", &text, None)
        .unwrap_or_else(|err| panic!("the test world parses: {err}\n{text}"))
}

/// What a [`Tick`] does besides serving its world; a copy of it starts the same.
#[derive(Debug, Clone, Default)]
pub(super) struct Setup {
    /// The failures injected into GitHub's answers, in order.
    pub(super) failures: Vec<Failure>,
    /// When set, the audit log refuses records with this message.
    pub(super) audit_error: Option<String>,
    /// Whether each read the prefetch takes is held in flight across one wait.
    pub(super) holding: bool,
    /// A push another client makes on `main` of `acme/app` once the tick has read it.
    pub(super) push_on_main: Option<CommitSha>,
}

/// The in-memory GitHub behind its [`Held`] port, the audit log of the tick, and how much
/// of both earlier checks took.
#[derive(Debug)]
pub(super) struct Tick {
    pub(super) port: Held,
    setup: Mutex<Setup>,
    /// Each audit record as a line, after the number of GitHub's writes made before it.
    audit: Mutex<Vec<(usize, String)>>,
    /// GitHub's writes and audit records taken so far.
    taken: Mutex<(usize, usize)>,
}

impl Tick {
    pub(super) fn new(pulls: Vec<Pr>) -> Self {
        Self::serving(world_of(&pulls), Setup::default())
    }

    pub(super) fn serving(world: World, setup: Setup) -> Self {
        let github = MemoryGitHub::new(world);
        for failure in &setup.failures {
            github.fail(failure.clone());
        }
        Self {
            port: Held {
                github,
                holding: setup.holding,
                push_on_main: Mutex::new(setup.push_on_main.clone()),
                reads: AtomicUsize::new(0),
                in_flight: AtomicUsize::new(0),
                max_in_flight: AtomicUsize::new(0),
            },
            setup: Mutex::new(setup),
            audit: Mutex::new(Vec::new()),
            taken: Mutex::new((0, 0)),
        }
    }

    pub(super) fn github(&self) -> &MemoryGitHub {
        &self.port.github
    }

    pub(super) fn setup<T>(&self, change: impl FnOnce(&mut Setup) -> T) -> T {
        change(&mut self.setup.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// The same world and setup, with logs of its own from here on.
    pub(super) fn copy(&self) -> Self {
        let mut setup = self.setup(|s| s.clone());
        setup.push_on_main = self
            .port
            .push_on_main
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        Self::serving(self.github().world(), setup)
    }

    /// Someone else pushes `to` on `main` of `acme/app` once the tick has read it.
    pub(super) fn push_on_main_once_read(&self, to: CommitSha) {
        *self
            .port
            .push_on_main
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(to);
    }

    /// Makes the calls `failure` matches fail.
    pub(super) fn fail(&self, failure: Failure) {
        self.setup(|s| s.failures.push(failure.clone()));
        self.github().fail(failure);
    }

    /// The pull-request path once, at [`now`].
    pub(super) fn run(
        &self,
        config: &Config,
        options: &TickOptions,
    ) -> Result<TickReport, TickError> {
        block_on(run_pr_path(&self.port, self, config, options, now()))
    }

    /// GitHub's writes and the audit records since the last take, in order: a write as
    /// [`write_line`] shows it (a merge with its method and how many lines of identity its
    /// message holds), a record as `audit <pr> @ <head>: <quadrant> (<n> votes)`.
    pub(super) fn take_log(&self) -> Vec<String> {
        let actions = self.github().actions();
        let audit = self.audit.lock().unwrap_or_else(PoisonError::into_inner);
        let mut taken = self.taken.lock().unwrap_or_else(PoisonError::into_inner);
        let (first_action, first_record) = *taken;
        let mut records = audit[first_record..].iter().peekable();
        let mut lines = Vec::new();
        for index in first_action..=actions.len() {
            while let Some((_, record)) = records.next_if(|(before, _)| *before <= index) {
                lines.push(record.clone());
            }
            if let Some(action) = actions.get(index) {
                lines.push(line(action));
            }
        }
        *taken = (actions.len(), audit.len());
        lines
    }

    /// Pull request `number` of `name` as GitHub has it now.
    pub(super) fn pull(&self, name: &str, number: u64) -> Pull {
        self.github().read(|world| {
            world
                .repo(&repo(name))
                .and_then(|r| r.pull(PrNumber::new(number)))
                .cloned()
                .expect("a pull request of the world")
        })
    }
}

/// A write as the tests compare it.
fn line(write: &Write) -> String {
    match write {
        Write::MergePull { request, .. } => {
            let lines = request
                .commit_message
                .as_deref()
                .map_or(0, |m| m.lines().count());
            format!(
                "{} ({:?}, {lines} identity lines)",
                write_line(write),
                request.method
            )
        }
        other => write_line(other),
    }
}

#[async_trait::async_trait]
impl AuditLog for Tick {
    async fn append(&self, record: &AuditRecord) -> Result<(), AuditError> {
        if let Some(message) = self.setup(|s| s.audit_error.clone()) {
            return Err(AuditError(message));
        }
        let before = self.github().actions().len();
        self.audit
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((
                before,
                format!(
                    "audit {} @ {}: {} ({} votes)",
                    record.pr,
                    record.head_sha.short(),
                    record.quadrant,
                    record.votes.len()
                ),
            ));
        Ok(())
    }
}
