//! Tests of the world writer: what it writes, and that every world reads back unchanged.

use std::path::Path;

use mp_core::approval::ReceiptKey;
use mp_core::context::{
    CheckConclusion, CheckRun, CheckStatus, Comment, CommentId, FileChange, FileStatus,
    LabelAction, LabelEvent, PrState, Reaction, ReactionKind, RefUpdate, RefUpdateKind,
};
use mp_core::ids::{CommitSha, Login, PrNumber, RepoName, Timestamp};
use mp_core::port::IssueState;

use super::super::synthetic::SYNTHETIC_RECEIPT_KEY;
use super::super::{
    Commit, IssueRecord, Pull, PullFile, Repo, World, commit_sha, load_world, parse_world,
    synthetic_world,
};
use super::world_to_yaml;

/// Writes `world`, checks the text when `expected` is given, and reads it back: the world
/// must come back equal.
#[track_caller]
fn check(world: &World, key: Option<&str>, expected: Option<&str>) {
    let text = world_to_yaml(world, key);
    if let Some(expected) = expected {
        assert_eq!(text, expected);
    }
    let back = match parse_world("written.yaml", &text, None) {
        Ok(back) => back,
        Err(err) => panic!("the written world does not load: {err}\n{text}"),
    };
    assert_eq!(back, *world, "the world changed on the way back:\n{text}");
}

fn at(text: &str) -> Timestamp {
    Timestamp::parse(text).expect("valid time")
}

fn login(text: &str) -> Login {
    Login::parse(text).expect("valid login")
}

fn repo_name(text: &str) -> RepoName {
    RepoName::parse(text).expect("valid repository")
}

fn commit(repo: &RepoName, id: &str, message: &str, parents: &[&CommitSha]) -> Commit {
    Commit {
        check_workflows: Default::default(),
        id: id.to_owned(),
        sha: commit_sha(repo, id),
        message: message.to_owned(),
        parents: parents.iter().map(|p| (*p).clone()).collect(),
        author: None,
        committer: None,
        date: None,
        checks: Vec::new(),
    }
}

fn pull(number: u64, head_ref: &str, head: &CommitSha, base: &CommitSha) -> Pull {
    Pull {
        number: PrNumber::new(number),
        title: format!("Pull {number}"),
        body: String::new(),
        author: login("alice"),
        head_ref: head_ref.to_owned(),
        head_sha: head.clone(),
        base_ref: "main".to_owned(),
        base_sha: base.clone(),
        commits: vec![head.clone()],
        labels: Vec::new(),
        events: Vec::new(),
        files: Vec::new(),
        comments: Vec::new(),
        reactions: Vec::new(),
        state: PrState::Open,
        merged: false,
        mergeable: true,
        merged_by: None,
        merge_commit: None,
        merged_at: None,
        created_at: None,
        comments_unreadable: false,
        head_repo: None,
        pushes: Vec::new(),
    }
}

/// A world that uses every key of the format, with text that needs escaping.
fn everything() -> World {
    let name = repo_name("acme/app");
    let mut world = World::new(at("2026-03-02T09:00:00Z"), "acme-gate");
    world.receipt_key = ReceiptKey::new("k3y");
    world.rate_limit_remaining = Some(42);
    world.app_permissions = Some(
        [
            ("contents".to_owned(), "read".to_owned()),
            ("metadata".to_owned(), "read".to_owned()),
        ]
        .into(),
    );
    world.ci = Some(crate::world::CiSimulation {
        checks: vec!["test".to_owned(), "lint: \"strict\"".to_owned()],
        app: "github-actions".to_owned(),
        minutes: 10,
        fails: vec!["src/flaky/**".to_owned()],
    });
    world.config.insert(
        "owner.yml".to_owned(),
        "github_login: alice\n# a comment\n".to_owned(),
    );
    world
        .config
        .insert("env.yml".to_owned(), "  leading: spaces\n".to_owned());
    let mut repo = Repo::new(name.clone());
    let m1 = commit(&name, "m1", "Initial import", &[]);
    let mut f1 = commit(
        &name,
        "f1",
        "Add \"quotes\", a \\ and a tab\t\n\nAgent-Tool: codex\n",
        &[&m1.sha],
    );
    f1.author = Some(login("alice"));
    f1.committer = Some(login("web-flow"));
    f1.date = Some(at("2026-03-01T18:00:00Z"));
    f1.checks = vec![
        CheckRun {
            id: None,
            name: "test".to_owned(),
            status: CheckStatus::Completed,
            conclusion: Some(CheckConclusion::TimedOut),
            started_at: Some(at("2026-03-01T18:01:00Z")),
            completed_at: Some(at("2026-03-01T18:02:00Z")),
            app_slug: Some("github-actions".to_owned()),
            output_summary: Some("line one\nline two".to_owned()),
        },
        CheckRun {
            id: None,
            name: "lint".to_owned(),
            status: CheckStatus::Queued,
            conclusion: None,
            started_at: None,
            completed_at: None,
            app_slug: None,
            output_summary: None,
        },
    ];
    // A commit whose id is its own SHA, and a message with characters to escape.
    let raw = commit(
        &name,
        "0123456789abcdef0123456789abcdef01234567",
        "raw",
        &[],
    );
    let odd = commit(&name, "odd", "odd\u{7}one\u{2028}", &[&raw.sha]);
    let (m1_sha, f1_sha, odd_sha) = (m1.sha.clone(), f1.sha.clone(), odd.sha.clone());
    repo.commits = vec![m1, f1, raw, odd];
    repo.branches.insert("main".to_owned(), m1_sha.clone());
    repo.branches
        .insert("feature/x: y".to_owned(), f1_sha.clone());
    repo.branches.insert("bot-state".to_owned(), m1_sha.clone());
    repo.files
        .insert("README.md".to_owned(), "# app\n\n  indented\n".to_owned());
    repo.files.insert("empty".to_owned(), String::new());
    repo.files
        .insert("blank-lines-at-end".to_owned(), "a\nb\n\n".to_owned());
    repo.branch_files.insert(
        "bot-state".to_owned(),
        [("state.json".to_owned(), "{}\n".to_owned())].into(),
    );
    repo.tree_truncated = true;
    repo.app_installed = false;
    repo.labels = vec![
        crate::world::RepoLabel {
            name: "bug: yes".to_owned(),
            color: "d73a4a".to_owned(),
            description: Some("Something \"is\" wrong".to_owned()),
            created_at: Some(Timestamp::parse("2026-01-01T00:00:00Z").expect("a time")),
            updated_at: Some(Timestamp::parse("2026-02-01T00:00:00Z").expect("a time")),
        },
        crate::world::RepoLabel {
            name: "plain".to_owned(),
            color: "ededed".to_owned(),
            description: None,
            created_at: None,
            updated_at: None,
        },
    ];

    let mut open = pull(7, "feature/x: y", &f1_sha, &m1_sha);
    open.body = "Fixes #3.\n\n- [ ] a box\n".to_owned();
    open.labels = vec!["ready-to-merge".to_owned(), "yes".to_owned()];
    open.events = vec![
        LabelEvent {
            action: LabelAction::Labeled,
            label: "ready-to-merge".to_owned(),
            actor: Some(login("alice")),
            at: Some(at("2026-03-02T08:00:00Z")),
        },
        LabelEvent {
            action: LabelAction::Unlabeled,
            label: "true".to_owned(),
            actor: None,
            at: None,
        },
    ];
    open.files = vec![
        PullFile {
            change: FileChange {
                path: "src/new.rs".to_owned(),
                status: FileStatus::Renamed,
                additions: 3,
                deletions: 1,
                previous_filename: Some("src/old.rs".to_owned()),
            },
            content: Some("fn main() {}\n".to_owned()),
        },
        PullFile {
            change: FileChange {
                path: "gone.txt".to_owned(),
                status: FileStatus::Removed,
                additions: 0,
                deletions: 0,
                previous_filename: None,
            },
            content: None,
        },
    ];
    open.comments = vec![
        Comment {
            id: CommentId::new(1),
            author: Some(login("acme-gate[bot]")),
            body: "Merge Gate: recorded\n<!-- marker: x -->\n".to_owned(),
            created_at: Some(at("2026-03-02T08:05:00Z")),
            updated_at: Some(at("2026-03-02T08:05:00Z")),
        },
        Comment {
            id: CommentId::new(2),
            author: None,
            body: "from a deleted user\nsecond line".to_owned(),
            created_at: None,
            updated_at: None,
        },
    ];
    open.reactions = vec![
        Reaction {
            kind: ReactionKind::ThumbsUp,
            user: login("alice"),
            created_at: Some(at("2026-03-02T08:06:00Z")),
        },
        Reaction {
            kind: ReactionKind::Other("rocket".to_owned()),
            user: login("bob"),
            created_at: None,
        },
    ];
    open.created_at = Some(at("2026-03-01T18:05:00Z"));
    open.comments[0].updated_at = Some(at("2026-03-02T08:30:00Z"));
    open.pushes = vec![
        RefUpdate {
            kind: RefUpdateKind::BranchCreation,
            before: None,
            after: Some(m1_sha.clone()),
            at: Some(at("2026-03-01T17:00:00Z")),
            actor: Some(login("alice")),
        },
        RefUpdate {
            kind: RefUpdateKind::ForcePush,
            before: Some(m1_sha.clone()),
            after: Some(f1_sha.clone()),
            at: None,
            actor: None,
        },
    ];
    open.mergeable = false;
    open.comments_unreadable = true;

    let mut merged = pull(8, "gone-branch", &odd_sha, &m1_sha);
    merged.commits = Vec::new();
    merged.state = PrState::Closed;
    merged.merged = true;
    merged.merged_by = Some(login("acme-gate[bot]"));
    merged.merge_commit = Some(m1_sha.clone());
    let mut closed = pull(9, "feature/x: y", &f1_sha, &m1_sha);
    closed.state = PrState::Closed;
    repo.pulls = vec![open, merged, closed];

    repo.issues = vec![IssueRecord {
        number: PrNumber::new(3),
        title: "Decision pending — PR acme/app#7".to_owned(),
        body: "- PR: `acme/app#7`\n".to_owned(),
        author: None,
        state: IssueState::Closed,
        labels: vec!["decision:pending-owner".to_owned()],
        events: Vec::new(),
        comments: vec![Comment {
            id: CommentId::new(3),
            author: Some(login("alice")),
            body: "/approve A".to_owned(),
            created_at: None,
            updated_at: None,
        }],
        reactions: vec![Reaction {
            kind: ReactionKind::ThumbsDown,
            user: login("alice"),
            created_at: None,
        }],
        created_at: Some(at("2026-03-02T07:00:00Z")),
    }];
    world.repos.push(repo);
    world.repos.push(Repo::new(repo_name("acme/empty")));
    world
}

#[test]
fn a_minimal_world_is_written_plainly() {
    let name = repo_name("acme/app");
    let mut world = World::new(at("2026-03-02T09:00:00Z"), "acme-gate");
    world.config.insert(
        "owner.yml".to_owned(),
        "github_login: alice\ndisplay_name: Alice\n".to_owned(),
    );
    let mut repo = Repo::new(name.clone());
    let m1 = commit(&name, "m1", "Initial import", &[]);
    let f1 = commit(&name, "f1", "Add it\n\nTask-Ref: none\n", &[&m1.sha]);
    let pr = pull(1, "feature", &f1.sha, &m1.sha);
    repo.branches.insert("main".to_owned(), m1.sha.clone());
    repo.commits = vec![m1, f1];
    repo.pulls = vec![pr];
    world.repos.push(repo);
    let expected = r#"now: "2026-03-02T09:00:00Z"
bot: "acme-gate"
config:
  files:
    "owner.yml": |
      github_login: alice
      display_name: Alice
repos:
  - name: "acme/app"
    commits:
      - id: "m1"
        message: "Initial import"
      - id: "f1"
        message: |
          Add it

          Task-Ref: none
        parents: ["m1"]
    branches:
      "main": "m1"
    pulls:
      - number: 1
        title: "Pull 1"
        author: "alice"
        head: "feature"
        head_commit: "f1"
        base: "main"
        base_commit: "m1"
        commits: ["f1"]
        pushes: []
"#;
    check(&world, None, Some(expected));
}

#[test]
fn every_key_and_awkward_text_reads_back() {
    check(&everything(), Some("k3y"), None);
}

#[test]
fn the_demo_world_reads_back() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/worlds/demo.yaml");
    let world = load_world(&path).expect("the demo world loads");
    check(&world, None, None);
}

#[test]
fn a_synthetic_world_reads_back() {
    check(
        &synthetic_world(2, 25, 7),
        Some(SYNTHETIC_RECEIPT_KEY),
        None,
    );
}
