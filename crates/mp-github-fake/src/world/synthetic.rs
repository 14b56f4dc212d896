//! A synthetic world for benchmarks and load tests: `repos` application repositories with
//! `prs_per_repo` open pull requests each, plus a governance repository, built directly as a
//! [`World`] and deterministic for a given seed.
//!
//! Every pull request is made to exercise one [`SyntheticKind`], in a fixed mix that looks
//! like a busy organisation on an ordinary day: most are clean Quadrant A or B changes with
//! green checks, approved by the owner's `ready-to-merge` label (usually already bound by a
//! receipt, sometimes waiting for the tick to write one); a quarter are blocked by C1, C2,
//! C4 or C5; a few are Quadrant D and go to the decision inbox (some already pending there).
//! The kind is spelled in the head branch, `synthetic/<kind>/<n>`, so a tick's outcomes can
//! be checked against [`SyntheticKind::route`].
//!
//! The configuration merges (`merge_enabled: true`), requires the `test` check from GitHub
//! Actions, registers the agents that author the commits, and signs receipts with
//! [`SYNTHETIC_RECEIPT_KEY`].

use std::collections::BTreeMap;

use mp_core::approval::{READY_TO_MERGE, ReceiptKey, ReceiptLabel, render_receipt};
use mp_core::context::{
    CheckConclusion, CheckRun, CheckStatus, Comment, CommentId, FileChange, FileStatus,
    LabelAction, LabelEvent, PrState, RefUpdate, RefUpdateKind,
};
use mp_core::ids::{CommitSha, Login, PrNumber, RepoName, Timestamp};
use mp_core::inbox::{PENDING_OWNER, inbox_title};
use mp_core::port::IssueState;
use mp_core::route::Route;

use super::{Commit, IssueRecord, Pull, PullFile, Repo, World, commit_sha};

/// The App slug of the synthetic world.
pub const SYNTHETIC_BOT: &str = "synth-merge-gate";
/// The owner, the only allowlisted human.
pub const SYNTHETIC_OWNER: &str = "synth-owner";
/// An agent account that sometimes applies `ready-to-merge` itself (C1 refuses it).
pub const SYNTHETIC_AGENT: &str = "synth-agent";
/// The governance repository (decision inbox), not gated.
pub const SYNTHETIC_GOVERNANCE: &str = "synth/governance";
/// The text of the receipt key (write it with the world: `world_to_yaml(&w, Some(..))`).
pub const SYNTHETIC_RECEIPT_KEY: &str = "synthetic-benchmark-receipt-key";
/// The clock of the synthetic world.
pub const SYNTHETIC_NOW: &str = "2026-06-01T12:00:00Z";

/// What one synthetic pull request is made to exercise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum SyntheticKind {
    /// Quadrant A (documentation), owner-labelled, receipt already written: mergeable.
    DocsReceipted,
    /// Quadrant A, owner-labelled, no receipt yet: the tick writes one, then mergeable.
    DocsLabelled,
    /// Quadrant B (`src/**`), owner-labelled, receipt already written: mergeable.
    SourceReceipted,
    /// Quadrant B, owner-labelled, no receipt yet: mergeable once the receipt is written.
    SourceLabelled,
    /// C2: the required `test` check failed.
    ChecksFailing,
    /// C2: the required `test` check is still running.
    ChecksPending,
    /// C5: the last commit has no `Task-Ref` trailer.
    TrailersMissing,
    /// C1: no `ready-to-merge` label.
    Unlabelled,
    /// C1: `ready-to-merge` applied by an agent account, not the owner.
    LabelledByAgent,
    /// C4: based on an older `main`.
    StaleBase,
    /// Quadrant D (a workflow change), otherwise green: a decision inbox issue is opened.
    Irreversible,
    /// Quadrant D with its decision inbox issue already pending.
    IrreversiblePending,
}

impl SyntheticKind {
    /// Every kind with its share of pull requests, in per mille.
    pub const MIX: [(Self, u32); 12] = [
        (Self::DocsReceipted, 400),
        (Self::DocsLabelled, 80),
        (Self::SourceReceipted, 170),
        (Self::SourceLabelled, 50),
        (Self::ChecksFailing, 70),
        (Self::ChecksPending, 20),
        (Self::TrailersMissing, 50),
        (Self::Unlabelled, 60),
        (Self::LabelledByAgent, 20),
        (Self::StaleBase, 30),
        (Self::Irreversible, 30),
        (Self::IrreversiblePending, 20),
    ];

    /// The stable name used in head branches.
    pub fn code(self) -> &'static str {
        match self {
            Self::DocsReceipted => "docs-receipted",
            Self::DocsLabelled => "docs-labelled",
            Self::SourceReceipted => "source-receipted",
            Self::SourceLabelled => "source-labelled",
            Self::ChecksFailing => "checks-failing",
            Self::ChecksPending => "checks-pending",
            Self::TrailersMissing => "trailers-missing",
            Self::Unlabelled => "unlabelled",
            Self::LabelledByAgent => "labelled-by-agent",
            Self::StaleBase => "stale-base",
            Self::Irreversible => "irreversible",
            Self::IrreversiblePending => "irreversible-pending",
        }
    }

    /// The kind spelled in a head branch `synthetic/<kind>/<n>`.
    pub fn of_branch(head_ref: &str) -> Option<Self> {
        let code = head_ref.strip_prefix("synthetic/")?.split('/').next()?;
        Self::MIX
            .iter()
            .map(|(kind, _)| *kind)
            .find(|kind| kind.code() == code)
    }

    /// Where the gate sends a pull request of this kind on the first tick.
    pub fn route(self) -> Route {
        match self {
            Self::DocsReceipted
            | Self::DocsLabelled
            | Self::SourceReceipted
            | Self::SourceLabelled => Route::Mergeable,
            Self::Irreversible | Self::IrreversiblePending => Route::Inbox,
            Self::ChecksPending => Route::Waiting,
            Self::StaleBase => Route::Update,
            Self::ChecksFailing
            | Self::TrailersMissing
            | Self::Unlabelled
            | Self::LabelledByAgent => Route::Blocked,
        }
    }

    /// The kind at `point` in `[0, 1000)` of the mix.
    fn at(point: u32) -> Self {
        let mut upper = 0;
        for (kind, share) in Self::MIX {
            upper += share;
            if point < upper {
                return kind;
            }
        }
        Self::DocsReceipted
    }

    fn is_docs(self) -> bool {
        matches!(self, Self::DocsReceipted | Self::DocsLabelled)
    }

    fn is_source(self) -> bool {
        matches!(self, Self::SourceReceipted | Self::SourceLabelled)
    }

    fn is_irreversible(self) -> bool {
        matches!(self, Self::Irreversible | Self::IrreversiblePending)
    }

    /// Whether the owner's label is bound by a receipt the bot wrote on an earlier tick.
    fn receipted(self) -> bool {
        !matches!(
            self,
            Self::DocsLabelled | Self::SourceLabelled | Self::Unlabelled | Self::LabelledByAgent
        )
    }
}

/// SplitMix64: a small, well-mixed, seedable generator (no dependency, stable output).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// True with probability `per_mille / 1000`.
    fn chance(&mut self, per_mille: u64) -> bool {
        self.below(1000) < per_mille
    }
}

fn login(text: &str) -> Login {
    Login::parse(text).expect("the synthetic logins are valid")
}

fn repo_name(text: &str) -> RepoName {
    RepoName::parse(text).expect("the synthetic repository names are valid")
}

/// The name of the `index`-th application repository.
pub fn synthetic_repo_name(index: usize) -> RepoName {
    repo_name(&format!("synth/app-{index:03}"))
}

fn now() -> Timestamp {
    Timestamp::parse(SYNTHETIC_NOW).expect("the synthetic clock is a valid time")
}

/// The receipt key the synthetic world signs with.
pub fn synthetic_receipt_key() -> ReceiptKey {
    ReceiptKey::new(SYNTHETIC_RECEIPT_KEY).expect("the synthetic receipt key is not empty")
}

/// Builds the synthetic world: `repos` application repositories (`synth/app-000`, ...) with
/// `prs_per_repo` open pull requests each, and `synth/governance`. The same arguments
/// always give the same world; the seed varies which pull request gets which kind and
/// their sizes, not the mix.
pub fn synthetic_world(repos: usize, prs_per_repo: usize, seed: u64) -> World {
    let mut world = World::new(now(), SYNTHETIC_BOT);
    world.receipt_key = Some(synthetic_receipt_key());
    world.config = config_files(repos);
    let mut builder = Builder {
        rng: Rng(seed),
        // A Weyl sequence over the mix: even coverage of every kind even in small worlds.
        point: Rng(seed ^ 0x5eed).next(),
        now: world.now,
        owner: login(SYNTHETIC_OWNER),
        agent: login(SYNTHETIC_AGENT),
        bot: Login::for_app(SYNTHETIC_BOT).expect("the synthetic App slug is valid"),
        key: synthetic_receipt_key(),
        next_comment_id: 0,
        pending: Vec::new(),
    };
    for index in 0..repos {
        let repo = builder.app_repo(synthetic_repo_name(index), prs_per_repo);
        world.repos.push(repo);
    }
    let governance = builder.governance_repo();
    world.repos.push(governance);
    world
}

/// The configuration texts: every application repository supervised, merging on.
fn config_files(repos: usize) -> BTreeMap<String, String> {
    let mut projects = format!("governance_repo: {SYNTHETIC_GOVERNANCE}\nsupervised_repos:\n");
    for index in 0..repos {
        projects.push_str(&format!("  - {}\n", synthetic_repo_name(index)));
    }
    let texts = [
        ("owner.yml", format!("github_login: {SYNTHETIC_OWNER}\n")),
        ("projects.yml", projects),
        (
            "env.yml",
            format!(
                "bot_app_slug: {SYNTHETIC_BOT}\nrequired_checks: [test]\nmerge_enabled: true\n"
            ),
        ),
        (
            "agent_registry.yml",
            "tools: [claude-code, codex, manual]\nmodels:\n  claude-code: [\"*\"]\n  codex: [\"*\"]\n  manual: [n/a]\n"
                .to_owned(),
        ),
    ];
    texts
        .into_iter()
        .map(|(name, text)| (name.to_owned(), text))
        .collect()
}

struct Builder {
    rng: Rng,
    point: u64,
    now: Timestamp,
    owner: Login,
    agent: Login,
    bot: Login,
    key: ReceiptKey,
    next_comment_id: u64,
    /// Pull requests whose decision inbox issue is already open: (repository, number, head).
    pending: Vec<(RepoName, PrNumber, CommitSha)>,
}

/// The agents that author commits: tool, model, machine.
const AGENTS: [(&str, &str, &str); 3] = [
    ("claude-code", "claude-opus-4", "dev-laptop"),
    ("codex", "gpt-5", "ci-runner-2"),
    ("claude-code", "claude-sonnet-4", "ci-runner-7"),
];

/// Topics for titles and paths.
const TOPICS: [&str; 8] = [
    "parser", "retry", "cache", "auth", "billing", "search", "export", "metrics",
];

impl Builder {
    fn kind(&mut self) -> SyntheticKind {
        self.point = self.point.wrapping_add(0x9e37_79b9_7f4a_7c15);
        // The point's fraction of 2^64, scaled to [0, 1000).
        let point = (u128::from(self.point) * 1000) >> 64;
        SyntheticKind::at(u32::try_from(point).unwrap_or(0))
    }

    fn comment(&mut self, author: &Login, body: String, at: Timestamp) -> Comment {
        self.next_comment_id += 1;
        Comment {
            id: CommentId::new(self.next_comment_id),
            author: Some(author.clone()),
            body,
            created_at: Some(at),
            updated_at: Some(at),
        }
    }

    fn app_repo(&mut self, name: RepoName, pulls: usize) -> Repo {
        let mut repo = Repo::new(name);
        let github_actions = |at: Timestamp| vec![green("test", at), green("lint", at)];
        let mut parent: Option<CommitSha> = None;
        let mut main_history = Vec::new();
        for (index, subject) in ["Initial import", "Add the CI workflow", "Release 1.0"]
            .into_iter()
            .enumerate()
        {
            let date = self.now.plus_hours(-24 * (30 - 10 * index as i64));
            let id = format!("main-{}", index + 1);
            let sha = commit_sha(&repo.name, &id);
            repo.commits.push(Commit {
                check_workflows: Default::default(),
                id,
                sha: sha.clone(),
                message: subject.to_owned(),
                parents: parent.iter().cloned().collect(),
                author: Some(self.owner.clone()),
                committer: Some(self.owner.clone()),
                date: Some(date),
                checks: github_actions(date),
            });
            main_history.push(sha.clone());
            parent = Some(sha);
        }
        let main = main_history[2].clone();
        let older_main = main_history[1].clone();
        repo.branches.insert("main".to_owned(), main.clone());
        for (path, content) in [
            ("README.md", "# app\n"),
            ("src/lib.rs", "pub fn run() {}\n"),
            (".github/workflows/ci.yml", "on: [pull_request]\n"),
        ] {
            repo.files.insert(path.to_owned(), content.to_owned());
        }
        for index in 0..pulls {
            let number = PrNumber::new(index as u64 + 1);
            let kind = self.kind();
            let base = if kind == SyntheticKind::StaleBase {
                older_main.clone()
            } else {
                main.clone()
            };
            let pull = self.pull(&mut repo, number, kind, base);
            repo.pulls.push(pull);
        }
        repo
    }

    fn pull(
        &mut self,
        repo: &mut Repo,
        number: PrNumber,
        kind: SyntheticKind,
        base: CommitSha,
    ) -> Pull {
        let n = number.get();
        let topic = TOPICS[self.rng.below(TOPICS.len() as u64) as usize];
        let (tool, model, machine) = AGENTS[self.rng.below(AGENTS.len() as u64) as usize];
        let title = if kind.is_irreversible() {
            format!("Run the {topic} job on release tags only")
        } else if kind.is_docs() {
            format!("Document the {topic} settings")
        } else {
            format!("Improve the {topic} module")
        };
        // Opened 1 to 72 hours ago; commits before, the label and checks after.
        let opened = self.now.plus_hours(-(1 + self.rng.below(72) as i64));
        let commit_count = match self.rng.below(10) {
            0 => 3,
            1 | 2 => 2,
            _ => 1,
        };
        let mut commits = Vec::new();
        let mut pushes: Vec<RefUpdate> = Vec::new();
        let mut parent = base.clone();
        for step in 0..commit_count {
            let id = format!("pr-{n}-{}", step + 1);
            let sha = commit_sha(&repo.name, &id);
            let last = step + 1 == commit_count;
            let task_ref = if last && kind == SyntheticKind::TrailersMissing {
                String::new()
            } else {
                format!("Task-Ref: Issue#{}\n", 1000 + n)
            };
            let message = format!(
                "{title}{part}\n\nAgent-Tool: {tool}\nAgent-Model: {model}\nAgent-Session: s_{topic}-{n}\nAgent-Machine: {machine}\n{task_ref}",
                part = if commit_count > 1 {
                    format!(" (part {})", step + 1)
                } else {
                    String::new()
                },
            );
            let date = opened.plus_seconds(-600 * (commit_count - step) as i64);
            let checks = if last {
                self.head_checks(kind, opened)
            } else {
                Vec::new()
            };
            repo.commits.push(Commit {
                check_workflows: Default::default(),
                id,
                sha: sha.clone(),
                message,
                parents: vec![parent.clone()],
                author: Some(self.owner.clone()),
                committer: Some(self.owner.clone()),
                date: Some(date),
                checks,
            });
            commits.push(sha.clone());
            pushes.push(RefUpdate {
                kind: if step == 0 {
                    RefUpdateKind::BranchCreation
                } else {
                    RefUpdateKind::Push
                },
                before: (step > 0).then(|| parent.clone()),
                after: Some(sha.clone()),
                at: Some(date),
                actor: Some(self.owner.clone()),
            });
            parent = sha;
        }
        let head = parent;
        let head_ref = format!("synthetic/{}/{n}", kind.code());
        repo.branches.insert(head_ref.clone(), head.clone());

        let labelled_at = opened.plus_seconds(1800);
        let area = if kind.is_docs() {
            "area/docs"
        } else {
            "area/code"
        };
        let mut labels = vec![area.to_owned()];
        let mut events = vec![LabelEvent {
            action: LabelAction::Labeled,
            label: area.to_owned(),
            actor: Some(self.owner.clone()),
            at: Some(opened),
        }];
        if kind != SyntheticKind::Unlabelled {
            let applier = if kind == SyntheticKind::LabelledByAgent {
                self.agent.clone()
            } else {
                self.owner.clone()
            };
            labels.push(READY_TO_MERGE.to_owned());
            events.push(LabelEvent {
                action: LabelAction::Labeled,
                label: READY_TO_MERGE.to_owned(),
                actor: Some(applier),
                at: Some(labelled_at),
            });
        }
        let mut comments = Vec::new();
        if self.rng.chance(300) {
            let owner = self.owner.clone();
            comments.push(self.comment(
                &owner,
                format!("Looks right to me; the {topic} change matches the issue."),
                opened.plus_seconds(900),
            ));
        }
        if kind.receipted() {
            let body = render_receipt(
                ReceiptLabel::ReadyToMerge,
                &head,
                &repo.name,
                number,
                Some(&self.key),
            );
            let bot = self.bot.clone();
            comments.push(self.comment(&bot, body, labelled_at.plus_seconds(300)));
        }
        if kind == SyntheticKind::IrreversiblePending {
            self.pending.push((repo.name.clone(), number, head.clone()));
        }

        Pull {
            number,
            title,
            body: format!(
                "Closes Issue#{}.\n\nGenerated for the tick benchmark.\n",
                1000 + n
            ),
            author: self.owner.clone(),
            head_ref,
            head_sha: head,
            base_ref: "main".to_owned(),
            base_sha: base,
            commits,
            labels,
            events,
            files: self.files(kind, n, topic),
            comments,
            reactions: Vec::new(),
            state: PrState::Open,
            merged: false,
            mergeable: true,
            merged_by: None,
            merge_commit: None,
            merged_at: None,
            created_at: Some(opened),
            comments_unreadable: false,
            head_repo: None,
            pushes,
        }
    }

    /// The head commit's check runs: `test` (required) and `lint`, from GitHub Actions.
    fn head_checks(&mut self, kind: SyntheticKind, opened: Timestamp) -> Vec<CheckRun> {
        let started = opened.plus_seconds(60);
        let test = match kind {
            SyntheticKind::ChecksFailing => CheckRun {
                conclusion: Some(CheckConclusion::Failure),
                ..green("test", started)
            },
            SyntheticKind::ChecksPending => CheckRun {
                status: CheckStatus::InProgress,
                conclusion: None,
                completed_at: None,
                ..green("test", started)
            },
            _ => green("test", started),
        };
        vec![test, green("lint", started)]
    }

    /// One to four changed files whose paths give the kind's quadrant.
    fn files(&mut self, kind: SyntheticKind, n: u64, topic: &str) -> Vec<PullFile> {
        let count = 1 + self.rng.below(4);
        let mut files = Vec::new();
        if kind.is_irreversible() {
            files.push(change(
                ".github/workflows/ci.yml",
                FileStatus::Modified,
                3,
                1,
            ));
        }
        for index in 0..count {
            let docs = kind.is_docs() || (!kind.is_source() && index % 2 == 1);
            let additions = 1 + self.rng.below(80);
            let deletions = self.rng.below(20);
            let file = if docs && index == 0 && self.rng.chance(300) {
                change("README.md", FileStatus::Modified, additions, deletions)
            } else if docs {
                change(
                    &format!("docs/guide/{topic}-{n}-{index}.md"),
                    FileStatus::Added,
                    additions,
                    0,
                )
            } else {
                change(
                    &format!("src/{topic}/part_{n}_{index}.rs"),
                    FileStatus::Modified,
                    additions,
                    deletions,
                )
            };
            files.push(file);
        }
        files
    }

    /// The governance repository: its history and the decision inbox issues already open.
    fn governance_repo(&mut self) -> Repo {
        let mut repo = Repo::new(repo_name(SYNTHETIC_GOVERNANCE));
        let sha = commit_sha(&repo.name, "g1");
        repo.commits.push(Commit {
            check_workflows: Default::default(),
            id: "g1".to_owned(),
            sha: sha.clone(),
            message: "Adopt the merge gate".to_owned(),
            parents: Vec::new(),
            author: Some(self.owner.clone()),
            committer: Some(self.owner.clone()),
            date: Some(self.now.plus_hours(-24 * 60)),
            checks: Vec::new(),
        });
        repo.branches.insert("main".to_owned(), sha);
        repo.files.insert(
            "docs/decisions/0001-adopt-the-merge-gate.md".to_owned(),
            "# Adopt the merge gate\n".to_owned(),
        );
        let opened = self.now.plus_hours(-6);
        for (index, (pr_repo, number, head)) in
            std::mem::take(&mut self.pending).into_iter().enumerate()
        {
            let body = format!(
                "**Your decision is needed.** Pull request `{pr_repo}#{number}` is Quadrant D.\n\n- PR: `{pr_repo}#{number}` — head `{}`\n",
                head.short()
            );
            repo.issues.push(IssueRecord {
                number: PrNumber::new(index as u64 + 1),
                title: inbox_title(&pr_repo, number),
                body,
                author: Some(self.bot.clone()),
                state: IssueState::Open,
                labels: vec![PENDING_OWNER.to_owned()],
                events: vec![LabelEvent {
                    action: LabelAction::Labeled,
                    label: PENDING_OWNER.to_owned(),
                    actor: Some(self.bot.clone()),
                    at: Some(opened),
                }],
                comments: Vec::new(),
                reactions: Vec::new(),
                created_at: Some(opened),
            });
        }
        repo
    }
}

/// A completed, successful run from GitHub Actions that took three minutes.
fn green(name: &str, started: Timestamp) -> CheckRun {
    CheckRun {
        id: None,
        name: name.to_owned(),
        status: CheckStatus::Completed,
        conclusion: Some(CheckConclusion::Success),
        started_at: Some(started),
        completed_at: Some(started.plus_seconds(180)),
        app_slug: Some("github-actions".to_owned()),
        output_summary: None,
    }
}

fn change(path: &str, status: FileStatus, additions: u64, deletions: u64) -> PullFile {
    PullFile {
        change: FileChange {
            path: path.to_owned(),
            status,
            additions,
            deletions,
            previous_filename: None,
        },
        content: None,
    }
}

#[cfg(test)]
mod tests;
