//! Tests for the history half of the in-memory GitHub: commits, branch history, contents,
//! trees, branches, the pull requests of a commit, issue bodies, new pull requests and
//! reverts, with the action log and call counts; and the drift example world end to end.

use std::fmt::Debug;
use std::path::Path;

use mp_core::branch::IncidentAuthority;
use mp_core::config::{self, ConfigFiles};
use mp_core::context::CommitContext;
use mp_core::ids::{CommitSha, Login, PrNumber, RepoName};
use mp_core::port::{
    FileContent, FileWrite, GitHub, GitHubError, GitHubHistory, MergeMethod, MergeRequest, NewPull,
    Tree,
};
use mp_tick::drift_check::check_drift;

use crate::memory::MemoryGitHub;
use crate::world::{World, commit_sha, load_world, parse_world};

const WORLD: &str = r##"
now: 2026-03-01T12:00:00Z
bot: mp-gate
repos:
  - name: acme/app
    commits:
      - {id: m1, message: init, author: alice, committer: alice, date: 2026-02-01T00:00:00Z}
      - {id: p1, message: "feat: add new", parents: [m1], author: agent-1, committer: agent-1, date: 2026-02-02T00:00:00Z}
      - {id: m2, message: "feat: add new (#5)", parents: [m1], author: agent-1, committer: "mp-gate[bot]", date: 2026-02-03T00:00:00Z}
      - {id: s1, message: side, parents: [m1], author: bob, committer: bob, date: 2026-02-04T00:00:00Z}
      - {id: m3, message: "Merge side", parents: [m2, s1], author: bob, committer: bob, date: 2026-02-05T00:00:00Z}
      - {id: x0, message: undated, parents: [m3], author: agent-2}
      - {id: x1, message: feature, parents: [x0], author: agent-2, committer: agent-2, date: 2026-02-06T00:00:00Z}
      - {id: st1, message: state, parents: [m1], author: "mp-gate[bot]", committer: "mp-gate[bot]", date: 2026-02-01T06:00:00Z}
      - {id: o1, message: orphan}
    branches: {main: m3, feature/x: x1, bot-state: st1}
    files: {README.md: "hello\n", src/new.rs: "new\n", docs/b.md: "doc\n"}
    branch_files:
      bot-state: {bot-state/w.json: "{}\n"}
    pulls:
      - number: 5
        title: Add new
        author: agent-1
        head: feature/new
        head_commit: p1
        base_commit: m1
        merged: true
        merged_by: "mp-gate[bot]"
        merge_commit: m2
        files:
          - {path: src/new.rs, status: added, additions: 1, content: "new\n"}
          - {path: docs/b.md, status: renamed, previous_filename: docs/a.md}
          - {path: README.md, status: modified, additions: 1, deletions: 1, content: "hello\n"}
      - number: 6
        title: Feature
        author: agent-2
        head: feature/x
    issues:
      - {number: 2, title: Incident, body: old body}
"##;

fn memory(text: &str) -> MemoryGitHub {
    let world: World = parse_world("world.yaml", text, None).expect("the test world is valid");
    MemoryGitHub::new(world)
}

fn app() -> RepoName {
    RepoName::parse("acme/app").expect("valid")
}

fn n(number: u64) -> PrNumber {
    PrNumber::new(number)
}

fn sha(id: &str) -> CommitSha {
    commit_sha(&app(), id)
}

/// An answer as one line: the value's `Debug` form, or the error's `Display`.
fn show<T: Debug>(answer: Result<T, GitHubError>) -> String {
    match answer {
        Ok(value) => format!("{value:?}"),
        Err(err) => format!("error: {err}"),
    }
}

/// A commit as `<sha> "<subject>" by <author>/<committer> parents <p,..> at <date>`.
fn one_commit(commit: &CommitContext) -> String {
    let login = |l: &Option<mp_core::ids::Login>| l.as_ref().map_or("-", |l| l.as_str()).to_owned();
    let parents: Vec<&str> = commit.parents.iter().map(CommitSha::as_str).collect();
    format!(
        "{} {:?} by {}/{} parents {} at {}",
        commit.sha,
        commit.subject,
        login(&commit.author_login),
        login(&commit.committer_login),
        parents.join(","),
        commit
            .committed_at
            .map_or("-".to_owned(), |t| t.to_string())
    )
}

fn shas(commits: Result<Vec<CommitContext>, GitHubError>) -> String {
    show(commits.map(|list| {
        list.iter()
            .map(|c| c.sha.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    }))
}

fn content(file: Result<Option<FileContent>, GitHubError>) -> String {
    show(file.map(|f| f.map(|f| format!("{:?} blob {}", f.text, &f.blob_sha[..7]))))
}

fn listing(tree: Result<Tree, GitHubError>) -> String {
    show(tree.map(|tree| {
        let entries: Vec<String> = tree
            .entries
            .iter()
            .map(|e| format!("{} {}", e.path, &e.blob_sha[..7]))
            .collect();
        format!("[{}] truncated {}", entries.join(", "), tree.truncated)
    }))
}

fn files_at_main(gh: &MemoryGitHub) -> String {
    let world = gh.world();
    let repo = world.repo(&app()).expect("acme/app is in the world");
    format!("main files: {:?}", repo.files)
}

/// Compares the answers, the action log and the call counts with `expected` (common
/// indentation ignored). Every commit SHA of the final world is shown as its id.
#[track_caller]
fn check(gh: &MemoryGitHub, answers: &[String], expected: &str) {
    let mut text = String::new();
    for answer in answers {
        text.push_str(answer);
        text.push('\n');
    }
    text.push_str("actions:\n");
    for action in gh.actions() {
        text.push_str(&format!("  {}\n", action.log_line()));
    }
    text.push_str("calls:\n");
    for (route, count) in gh.calls() {
        text.push_str(&format!("  {count} {route}\n"));
    }
    for repo in &gh.world().repos {
        for commit in &repo.commits {
            text = text.replace(commit.sha.as_str(), &commit.id);
            text = text.replace(commit.sha.short(), &commit.id);
        }
    }
    let expected = dedent(expected);
    assert_eq!(text, expected, "\nactual:\n{text}");
}

fn dedent(text: &str) -> String {
    let lines: Vec<&str> = text.lines().skip_while(|l| l.trim().is_empty()).collect();
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out = String::new();
    for l in lines {
        out.push_str(l.get(indent..).unwrap_or("").trim_end());
        out.push('\n');
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

fn write(branch: &str, path: &str, text: &str, expected: Option<&str>) -> FileWrite {
    FileWrite {
        branch: branch.to_owned(),
        path: path.to_owned(),
        text: text.to_owned(),
        expected_blob_sha: expected.map(str::to_owned),
        message: format!("chore: write {path}"),
    }
}

fn new_pull(head: &str, base: &str) -> NewPull {
    NewPull {
        title: format!("Revert via {head}"),
        body: "Reverts a bad commit.".to_owned(),
        head: head.to_owned(),
        base: base.to_owned(),
    }
}

#[tokio::test(flavor = "current_thread")]
async fn history_contents_trees_and_commit_pulls_answer_from_the_world() {
    let gh = memory(WORLD);
    let unknown = sha("unknown");
    let answers = vec![
        show(gh.commit(&app(), &sha("m2")).await.map(|c| one_commit(&c))),
        show(gh.commit(&app(), &unknown).await),
        shas(gh.branch_commits(&app(), "feature/x", 10).await),
        shas(gh.branch_commits(&app(), "main", 2).await),
        shas(gh.branch_commits(&app(), "nope", 2).await),
        content(gh.file(&app(), "README.md", "main").await),
        content(gh.file(&app(), "README.md", "feature/x").await),
        content(gh.file(&app(), "bot-state/w.json", "bot-state").await),
        content(
            gh.file(&app(), "bot-state/w.json", sha("st1").as_str())
                .await,
        ),
        content(gh.file(&app(), "README.md", sha("m1").as_str()).await),
        content(gh.file(&app(), "README.md", sha("x0").as_str()).await),
        content(gh.file(&app(), "README.md", sha("o1").as_str()).await),
        content(gh.file(&app(), "README.md", unknown.as_str()).await),
        content(gh.file(&app(), "README.md", "nope").await),
        listing(gh.tree(&app(), "main").await),
        listing(gh.tree(&app(), sha("st1").as_str()).await),
        listing(gh.tree(&app(), "nope").await),
        show(gh.commit_pulls(&app(), &sha("m2")).await),
        show(gh.commit_pulls(&app(), &sha("p1")).await),
        show(gh.commit_pulls(&app(), &sha("x0")).await),
        show(gh.commit_pulls(&app(), &sha("o1")).await),
        show(gh.commit_pulls(&app(), &unknown).await),
    ];
    check(
        &gh,
        &answers,
        r##"
        "m2 \"feat: add new (#5)\" by agent-1/mp-gate[bot] parents m1 at 2026-02-03T00:00:00Z"
        error: commit 84cafd3208c8d18f1e25488acae9e27634c588b9 in acme/app not found
        "x1 m3 s1 m2 m1 x0"
        "m3 s1"
        error: branch nope of acme/app not found
        Some("\"hello\\n\" blob ce01362")
        None
        Some("\"{}\\n\" blob 0967ef4")
        Some("\"{}\\n\" blob 0967ef4")
        Some("\"hello\\n\" blob ce01362")
        None
        None
        error: ref 84cafd3208c8d18f1e25488acae9e27634c588b9 of acme/app not found
        error: ref nope of acme/app not found
        "[README.md ce01362, docs/b.md 8e695ec, src/new.rs 3e75765] truncated false"
        "[bot-state/w.json 0967ef4] truncated false"
        error: ref nope of acme/app not found
        [CommitPull { number: PrNumber(5), merged_by: Some(Login("mp-gate[bot]")), merge_commit_sha: Some(CommitSha("m2")) }]
        [CommitPull { number: PrNumber(5), merged_by: Some(Login("mp-gate[bot]")), merge_commit_sha: Some(CommitSha("m2")) }]
        [CommitPull { number: PrNumber(6), merged_by: None, merge_commit_sha: None }]
        []
        error: commit 84cafd3208c8d18f1e25488acae9e27634c588b9 in acme/app not found
        actions:
        calls:
          3 GET /repos/{o}/{r}/commits
          2 GET /repos/{o}/{r}/commits/{sha}
          5 GET /repos/{o}/{r}/commits/{sha}/pulls
          9 GET /repos/{o}/{r}/contents/{path}
          3 GET /repos/{o}/{r}/git/trees/{ref}
        "##,
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_truncated_tree_lists_nothing_but_contents_still_answer() {
    let gh = memory(&WORLD.replace(
        "    branches: {main: m3",
        "    tree_truncated: true\n    branches: {main: m3",
    ));
    let answers = vec![
        listing(gh.tree(&app(), "main").await),
        content(gh.file(&app(), "src/new.rs", "main").await),
    ];
    check(
        &gh,
        &answers,
        r##"
        "[] truncated true"
        Some("\"new\\n\" blob 3e75765")
        actions:
        calls:
          1 GET /repos/{o}/{r}/contents/{path}
          1 GET /repos/{o}/{r}/git/trees/{ref}
        "##,
    );
}

#[tokio::test(flavor = "current_thread")]
async fn put_file_holds_the_blob_precondition_and_commits_on_the_branch() {
    let gh = memory(WORLD);
    let state = "bot-state/w.json";
    let answers = vec![
        show(
            gh.put_file(&app(), &write("bot-state", state, "{\"a\":1}\n", None))
                .await,
        ),
        show(
            gh.put_file(
                &app(),
                &write("bot-state", state, "x\n", Some("0000000000")),
            )
            .await,
        ),
        show(
            gh.put_file(
                &app(),
                &write("main", "docs/new.md", "x\n", Some("0967ef4")),
            )
            .await,
        ),
        show(
            gh.put_file(&app(), &write("nope", "a.md", "x\n", None))
                .await,
        ),
        show(
            gh.put_file(
                &app(),
                &write(
                    "bot-state",
                    state,
                    "{\"a\":1}\n",
                    Some("0967ef424bce6791893e9a57bb952f80fd536e93"),
                ),
            )
            .await,
        ),
        show(
            gh.put_file(&app(), &write("main", "docs/new.md", "x\n", None))
                .await,
        ),
        content(gh.file(&app(), state, "bot-state").await),
        show(
            gh.branch_commits(&app(), "bot-state", 2)
                .await
                .map(|list| list.iter().map(one_commit).collect::<Vec<_>>()),
        ),
        show(gh.branch_head(&app(), "main").await.map(|s| s.to_string())),
        files_at_main(&gh),
    ];
    check(
        &gh,
        &answers,
        r##"
        error: acme/app bot-state/w.json: Invalid request.

        "sha" wasn't supplied.
        error: acme/app bot-state/w.json: bot-state/w.json does not match 0000000000
        "587be6b4c3f93f93c489c0111bba5596147a26cb"
        error: branch nope of acme/app not found
        "0187f3b09d66cef7911083ad49f890f5a6589589"
        error: acme/app docs/new.md: Invalid request.

        "sha" wasn't supplied.
        Some("\"{\\\"a\\\":1}\\n\" blob 0187f3b")
        ["write bot-state/w.json on bot-state \"chore: write bot-state/w.json\" by mp-gate[bot]/mp-gate[bot] parents st1 at 2026-03-01T12:00:00Z", "st1 \"state\" by mp-gate[bot]/mp-gate[bot] parents m1 at 2026-02-01T06:00:00Z"]
        "write docs/new.md on main"
        main files: {"README.md": "hello\n", "docs/b.md": "doc\n", "docs/new.md": "x\n", "src/new.rs": "new\n"}
        actions:
          write acme/app@main docs/new.md (blob 587be6b, commit write docs/new.md on main): chore: write docs/new.md
          write acme/app@bot-state bot-state/w.json (blob 0187f3b, commit write bot-state/w.json on bot-state): chore: write bot-state/w.json
        calls:
          1 GET /repos/{o}/{r}/branches/{branch}
          1 GET /repos/{o}/{r}/commits
          1 GET /repos/{o}/{r}/contents/{path}
          6 PUT /repos/{o}/{r}/contents/{path}
        "##,
    );
}

#[tokio::test(flavor = "current_thread")]
async fn branches_are_created_once_and_issue_bodies_replaced() {
    let gh = memory(WORLD);
    let answers = vec![
        show(gh.create_branch(&app(), "copy", &sha("m1")).await),
        content(gh.file(&app(), "README.md", "copy").await),
        show(gh.create_branch(&app(), "copy", &sha("m3")).await),
        show(gh.create_branch(&app(), "other", &sha("unknown")).await),
        show(gh.update_issue_body(&app(), n(2), "new body").await),
        show(gh.update_issue_body(&app(), n(6), "pull body").await),
        show(gh.update_issue_body(&app(), n(99), "x").await),
        show(gh.pull(&app(), n(6)).await.map(|p| p.body)),
        format!(
            "issue body: {:?}",
            gh.world()
                .repo(&app())
                .and_then(|r| r.issue(n(2)))
                .map(|i| i.body.clone())
        ),
    ];
    check(
        &gh,
        &answers,
        r##"
        ()
        Some("\"hello\\n\" blob ce01362")
        error: acme/app refs/heads/copy: reference already exists
        error: POST /repos/{o}/{r}/git/refs answered HTTP 422: object 84cafd3208c8d18f1e25488acae9e27634c588b9 does not exist
        ()
        ()
        error: issue acme/app#99 not found
        "pull body"
        issue body: Some("new body")
        actions:
          create branch acme/app@copy at m1
          update body of acme/app#2: new body
          update body of acme/app#6: pull body
        calls:
          1 GET /repos/{o}/{r}/contents/{path}
          1 GET /repos/{o}/{r}/pulls/{n}
          3 PATCH /repos/{o}/{r}/issues/{n}
          3 POST /repos/{o}/{r}/git/refs
        "##,
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_revert_branch_undoes_known_changes_and_opens_as_a_pull_request() {
    let gh = memory(WORLD);
    let message = "Revert \"feat: add new\"\n\nThis reverts commit m2.";
    let revert = gh
        .push_revert(&app(), &sha("m2"), "revert/m2", message)
        .await;
    let revert_sha = revert.clone().unwrap_or_else(|_| sha("none"));
    let mut answers = vec![
        show(revert.map(|s| s.to_string())),
        show(gh.commit(&app(), &revert_sha).await.map(|c| one_commit(&c))),
        listing(gh.tree(&app(), "revert/m2").await),
        show(
            gh.push_revert(&app(), &sha("m2"), "revert/m2", message)
                .await,
        ),
        show(
            gh.push_revert(&app(), &sha("m3"), "revert/m3", message)
                .await,
        ),
        show(
            gh.push_revert(&app(), &sha("unknown"), "revert/x", message)
                .await,
        ),
        show(gh.create_pull(&app(), &new_pull("revert/m2", "main")).await),
    ];
    answers.extend([
        show(gh.pull(&app(), n(7)).await.map(|p| {
            format!(
                "#{} by {} {}@{} -> {}@{} labels {:?}",
                p.number, p.author, p.head_ref, p.head_sha, p.base_ref, p.base_sha, p.labels
            )
        })),
        shas(gh.pull_commits(&app(), n(7)).await),
        show(gh.pull_files(&app(), n(7)).await.map(|files| {
            files
                .iter()
                .map(|f| {
                    format!(
                        "{} {} +{} -{}",
                        f.status.as_str(),
                        f.path,
                        f.additions,
                        f.deletions
                    )
                })
                .collect::<Vec<_>>()
        })),
        show(gh.create_pull(&app(), &new_pull("revert/m2", "main")).await),
        show(gh.create_pull(&app(), &new_pull("feature/x", "main")).await),
        show(gh.create_pull(&app(), &new_pull("main", "main")).await),
        show(gh.create_pull(&app(), &new_pull("nope", "main")).await),
        show(
            gh.merge_pull(
                &app(),
                n(7),
                &MergeRequest {
                    head_sha: revert_sha.clone(),
                    method: MergeMethod::Squash,
                    commit_message: None,
                },
            )
            .await
            .map(|_| "merged"),
        ),
        files_at_main(&gh),
    ]);
    check(
        &gh,
        &answers,
        r##"
        "revert of e23ace6"
        "revert of e23ace6 \"Revert \\\"feat: add new\\\"\" by mp-gate[bot]/mp-gate[bot] parents m3 at 2026-03-01T12:00:00Z"
        "[README.md ce01362, docs/a.md 8e695ec] truncated false"
        error: acme/app revert of m2 on revert/m2: branch revert/m2 already exists
        error: acme/app revert of m3 on revert/m3: m3 is a merge commit of 2 parents
        error: commit 84cafd3208c8d18f1e25488acae9e27634c588b9 in acme/app not found
        PrNumber(7)
        "#7 by mp-gate[bot] revert/m2@revert of e23ace6 -> main@m3 labels []"
        "revert of e23ace6"
        ["added docs/a.md +1 -0", "removed docs/b.md +0 -1", "removed src/new.rs +0 -1"]
        error: acme/app revert/m2 -> main: a pull request already exists for revert/m2: #7
        error: acme/app feature/x -> main: a pull request already exists for feature/x: #6
        error: POST /repos/{o}/{r}/pulls answered HTTP 422: no commits between main and main
        error: POST /repos/{o}/{r}/pulls answered HTTP 422: head branch nope does not exist
        "merged"
        main files: {"README.md": "hello\n", "docs/a.md": "doc\n"}
        actions:
          push revert acme/app@revert/m2: revert of e23ace6 reverts m2
          open pull request acme/app#7: Revert via revert/m2 (revert/m2 -> main)
          merge acme/app#7: head revert of e23ace6 -> base squash merge of #7
        calls:
          1 GET /repos/{o}/{r}/commits/{sha}
          1 GET /repos/{o}/{r}/git/trees/{ref}
          1 GET /repos/{o}/{r}/pulls/{n}
          1 GET /repos/{o}/{r}/pulls/{n}/commits
          1 GET /repos/{o}/{r}/pulls/{n}/files
          5 POST /repos/{o}/{r}/pulls
          1 PUT /repos/{o}/{r}/pulls/{n}/merge
          4 git push {o}/{r}
        "##,
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_revert_that_does_not_apply_is_a_conflict_and_pushes_spend_no_rate_limit() {
    let gh = memory(&WORLD.replace(
        "bot: mp-gate\n",
        "bot: mp-gate\nrate_limit: {remaining: 1}\n",
    ));
    let blob = "3e757656cf36eca53338e520d134963a44f793f8";
    let answers = vec![
        show(
            gh.put_file(
                &app(),
                &write("main", "src/new.rs", "changed\n", Some(blob)),
            )
            .await
            .map(|_| "written"),
        ),
        show(
            gh.push_revert(&app(), &sha("m2"), "revert/m2", "Revert")
                .await,
        ),
        show(gh.tree(&app(), "main").await.map(|_| "listed")),
        format!("remaining {:?}", gh.rate_limit_remaining()),
    ];
    check(
        &gh,
        &answers,
        r##"
        "written"
        error: acme/app revert of m2 on revert/m2: src/new.rs changed after it was added
        error: rate limit exhausted: 0 calls left
        remaining Some(0)
        actions:
          write acme/app@main src/new.rs (blob 5ea2ed4, commit write src/new.rs on main): chore: write src/new.rs
        calls:
          1 GET /repos/{o}/{r}/git/trees/{ref}
          1 PUT /repos/{o}/{r}/contents/{path}
          1 git push {o}/{r}
        "##,
    );
}

#[tokio::test(flavor = "current_thread")]
async fn the_drift_world_shows_a_mismatch_and_a_missing_file() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/worlds/drift.yaml");
    let world = load_world(&path).expect("fixtures/worlds/drift.yaml loads");
    let files: ConfigFiles = world.config.clone().into_iter().collect();
    let loaded = config::load(&files);
    let config = loaded.config.unwrap_or_else(|| {
        panic!(
            "the drift world's configuration loads: {:?}",
            loaded.problems
        )
    });
    let now = world.now;
    let bot = Login::for_app(&world.bot_slug).expect("the world's bot slug is a login");
    let authority = IncidentAuthority::new(bot, config.projects().governance_repo().clone());
    let gh = MemoryGitHub::new(world);
    let report = check_drift(&gh, &config, &authority, now).await;
    let mut answers = vec![report.to_string()];
    answers.extend(report.findings.iter().map(|f| format!("{}: {f}", f.code())));
    answers.extend(report.per_path.iter().map(|r| format!("per path: {r}")));
    answers.push(format!("warnings: {:?}", report.warnings));
    check(
        &gh,
        &answers,
        r##"
        drift: 2 finding(s) in 3 adopter(s); opened acme/governance#1 (key mirror-drift-a5a6aca9ffe9); 8 call(s)
        drift_differs: acme/web: AGENTS.md differs from canonical (canonical f3a213868aeb, adopter 908310c936da)
        drift_missing: acme/infra: docs/policy/merge-gate.md is missing (canonical 43d85e8e66e3)
        per path: acme/infra
        warnings: []
        actions:
          open issue acme/governance#1: [decision:mirror-drift-incident] mirror-drift-a5a6aca9ffe9 [decision:mirror-drift-incident]
        calls:
          2 GET /repos/{o}/{r}/contents/{path}
          4 GET /repos/{o}/{r}/git/trees/{ref}
          1 GET /repos/{o}/{r}/issues
          1 POST /repos/{o}/{r}/issues
        "##,
    );
}

/// A base, two agents' heads on it, and a pull request GitHub would not merge.
const QUEUE_WORLD: &str = r##"
now: 2026-03-01T12:00:00Z
bot: mp-gate
repos:
  - name: acme/app
    commits:
      - {id: b0, message: init, author: alice, committer: alice, date: 2026-02-01T00:00:00Z}
      - {id: a1, message: "feat: a", parents: [b0], author: agent-1, committer: agent-1, date: 2026-02-02T00:00:00Z}
      - {id: c1, message: "feat: c", parents: [b0], author: agent-3, committer: agent-3, date: 2026-02-02T00:00:00Z}
    branches: {main: b0, agent/a: a1, agent/c: c1}
    files: {README.md: "hello\n"}
    pulls:
      - number: 1
        title: A
        author: agent-1
        head: agent/a
        files:
          - {path: src/a.rs, status: added, additions: 1, content: "a\n"}
      - number: 3
        title: C
        author: agent-3
        head: agent/c
        mergeable: false
"##;

/// The last activity-log entry of `branch`: kind, actor, before and after.
fn last_move(gh: &MemoryGitHub, branch: &str) -> String {
    gh.read(|world| {
        let repo = world.repo(&app()).expect("acme/app is in the world");
        let update = repo.activity.get(branch).and_then(|log| log.last());
        format!(
            "{branch} moved: {:?}",
            update.map(|u| (
                u.kind.as_github().to_owned(),
                u.actor.as_ref().map(|a| a.to_string()),
                u.before.as_ref().map(|s| s.to_string()),
                u.after.as_ref().map(|s| s.to_string()),
            ))
        )
    })
}

#[tokio::test(flavor = "current_thread")]
async fn a_merge_into_a_branch_makes_a_merge_commit_by_the_bot_or_nothing_or_a_conflict() {
    let gh = memory(QUEUE_WORLD);
    let stage = "mp-queue-build/main";
    let merged = gh.create_branch(&app(), stage, &sha("b0")).await.and(
        gh.merge_into_branch(&app(), stage, &sha("a1"), "Merge #1")
            .await,
    );
    let merge = merged.clone().ok().flatten();
    let answers = vec![
        show(merged),
        show(match &merge {
            Some(merge) => gh.commit(&app(), merge).await.map(|c| one_commit(&c)),
            None => Ok("no merge".to_owned()),
        }),
        content(gh.file(&app(), "src/a.rs", stage).await),
        last_move(&gh, stage),
        // Nothing to merge: the commit is in the branch already (204).
        show(
            gh.merge_into_branch(&app(), stage, &sha("a1"), "again")
                .await,
        ),
        show(
            gh.merge_into_branch(&app(), stage, &sha("b0"), "base")
                .await,
        ),
        // A head GitHub would not merge conflicts (409).
        show(
            gh.merge_into_branch(&app(), stage, &sha("c1"), "Merge #3")
                .await,
        ),
        show(
            gh.merge_into_branch(&app(), stage, &sha("unknown"), "x")
                .await,
        ),
        show(gh.merge_into_branch(&app(), "nope", &sha("a1"), "x").await),
        show(
            gh.branch_head(&app(), stage)
                .await
                .map(|h| Some(h) == merge),
        ),
    ];
    check(
        &gh,
        &answers,
        r##"
        Some(CommitSha("merge into mp-queue-build/main"))
        "merge into mp-queue-build/main \"Merge #1\" by mp-gate[bot]/mp-gate[bot] parents b0,a1 at 2026-03-01T12:00:00Z"
        Some("\"a\\n\" blob 7898192")
        mp-queue-build/main moved: Some(("push", Some("mp-gate[bot]"), Some("b0"), Some("merge into mp-queue-build/main")))
        None
        None
        error: acme/app merge of c1 into mp-queue-build/main: Merge conflict
        error: commit 84cafd3208c8d18f1e25488acae9e27634c588b9 in acme/app not found
        error: branch nope of acme/app not found
        true
        actions:
          create branch acme/app@mp-queue-build/main at b0
          merge a1 into acme/app@mp-queue-build/main as merge into mp-queue-build/main: Merge #1
        calls:
          1 GET /repos/{o}/{r}/branches/{branch}
          1 GET /repos/{o}/{r}/commits/{sha}
          1 GET /repos/{o}/{r}/contents/{path}
          1 POST /repos/{o}/{r}/git/refs
          6 POST /repos/{o}/{r}/merges
        "##,
    );
}

/// A pull request's state, merged flag, who merged it, its merge commit and when.
fn merged_state(gh: &MemoryGitHub, number: u64) -> String {
    gh.read(|world| {
        let pull = world.repo(&app()).and_then(|r| r.pull(n(number)));
        format!(
            "#{number}: {:?}",
            pull.map(|p| (
                p.state,
                p.merged,
                p.merged_by.as_ref().map(|l| l.to_string()),
                p.merge_commit.as_ref().map(|s| s.to_string()),
                p.merged_at.map(|t| t.to_string()),
            ))
        )
    })
}

#[tokio::test(flavor = "current_thread")]
async fn a_ref_update_moves_a_branch_forward_and_rewrites_it_only_when_forced() {
    let gh = memory(QUEUE_WORLD);
    let answers = vec![
        // a1 descends from main's head b0: a fast-forward.
        show(
            gh.update_branch_ref(&app(), "main", &sha("a1"), false)
                .await,
        ),
        last_move(&gh, "main"),
        content(gh.file(&app(), "README.md", "main").await),
        content(gh.file(&app(), "src/a.rs", "main").await),
        // Its head is in main now: #1 is merged by the push, its merge commit main's tip.
        merged_state(&gh, 1),
        merged_state(&gh, 3),
        // c1 does not descend from a1: refused unless forced.
        show(
            gh.update_branch_ref(&app(), "main", &sha("c1"), false)
                .await,
        ),
        show(gh.branch_head(&app(), "main").await),
        show(gh.update_branch_ref(&app(), "main", &sha("c1"), true).await),
        last_move(&gh, "main"),
        // Where it already is: nothing moves.
        show(
            gh.update_branch_ref(&app(), "main", &sha("c1"), false)
                .await,
        ),
        show(
            gh.update_branch_ref(&app(), "nope", &sha("a1"), false)
                .await,
        ),
        show(
            gh.update_branch_ref(&app(), "main", &sha("unknown"), true)
                .await,
        ),
    ];
    check(
        &gh,
        &answers,
        r##"
        ()
        main moved: Some(("push", Some("mp-gate[bot]"), Some("b0"), Some("a1")))
        Some("\"hello\\n\" blob ce01362")
        Some("\"a\\n\" blob 7898192")
        #1: Some((Closed, true, Some("mp-gate[bot]"), Some("a1"), Some("2026-03-01T12:00:00Z")))
        #3: Some((Open, false, None, None, None))
        error: acme/app refs/heads/main: Update is not a fast forward
        CommitSha("a1")
        ()
        main moved: Some(("force_push", Some("mp-gate[bot]"), Some("a1"), Some("c1")))
        ()
        error: branch nope of acme/app not found
        error: commit 84cafd3208c8d18f1e25488acae9e27634c588b9 in acme/app not found
        actions:
          move acme/app@main: b0 -> a1
          move acme/app@main: a1 -> c1 (forced)
        calls:
          1 GET /repos/{o}/{r}/branches/{branch}
          2 GET /repos/{o}/{r}/contents/{path}
          6 PATCH /repos/{o}/{r}/git/refs/{ref}
        "##,
    );
}
