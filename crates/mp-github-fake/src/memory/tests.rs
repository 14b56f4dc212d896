//! Tests for the in-memory GitHub: answers, mutations, the action log and call counts.

use std::fmt::Debug;

use mp_core::context::{CommentId, LabelAction};
use mp_core::ids::{CommitSha, PrNumber, RepoName};
use mp_core::port::{
    GitHub, GitHubError, IssueQuery, IssueState, MergeMethod, MergeRequest, NewIssue,
};

use super::MemoryGitHub;
use crate::world::{World, commit_sha, parse_world};

const WORLD: &str = r##"
now: 2026-03-01T12:00:00Z
bot: mp-gate
repos:
  - name: acme/app
    commits:
      - {id: m1, message: init, author: alice, committer: alice, date: 2026-02-01T00:00:00Z}
      - id: f1
        message: "feat: one\n\nAgent-Tool: claude-code\n"
        parents: [m1]
        author: agent-1
        committer: agent-1
        date: 2026-02-02T00:00:00Z
      - {id: f2, message: "feat: two", parents: [f1], author: agent-1, committer: agent-1}
      - {id: m2, message: other, parents: [m1], author: alice, committer: alice}
      - {id: g1, message: conflicting, parents: [m1], author: bob}
      - {id: z1, message: stale, parents: [m1], author: bob}
    branches: {main: m2, feature/x: f2, feature/y: g1, feature/z: z1}
    files: {README.md: "hello\n", docs/old.md: "old\n", junk.txt: "junk\n"}
    pulls:
      - number: 6
        title: Abandoned
        author: bob
        head: feature/z
        state: closed
      - number: 7
        title: Add x
        author: agent-1
        head: feature/x
        labels: [ready-to-merge]
        events: [{labeled: ready-to-merge, by: alice, at: 2026-02-05T00:00:00Z}]
        files:
          - {path: src/x.rs, status: added, additions: 1, content: "fn x() {}\n"}
          - {path: docs/new.md, status: renamed, previous_filename: docs/old.md}
          - {path: junk.txt, status: removed, deletions: 1}
        checks: [{name: test, app: github-actions}]
        comments: [{author: alice, body: ship it, at: 2026-02-05T01:00:00Z}]
      - number: 8
        title: Conflicted
        author: bob
        head: feature/y
        base_commit: m1
        mergeable: false
        comments_unreadable: true
      - number: 9
        title: Stale base
        author: bob
        head: feature/z
        base_commit: m1
    issues:
      - number: 3
        title: Decision pending
        labels: [decision:pending-owner]
        comments: [{author: alice, body: /approve A}]
        reactions: [{content: "+1", by: alice}]
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

fn merge(head: &str, message: Option<&str>) -> MergeRequest {
    MergeRequest {
        head_sha: sha(head),
        method: MergeMethod::Squash,
        commit_message: message.map(str::to_owned),
    }
}

/// An answer as one line: the value's `Debug` form, or the error's `Display`.
fn show<T: Debug>(answer: Result<T, GitHubError>) -> String {
    match answer {
        Ok(value) => format!("{value:?}"),
        Err(err) => format!("error: {err}"),
    }
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

#[tokio::test(flavor = "current_thread")]
async fn reads_answer_from_the_world() {
    let gh = memory(WORLD);
    let answers = vec![
        show(gh.bot_login().await.map(|l| l.to_string())),
        show(gh.open_pulls(&app()).await.map(|pulls| {
            pulls
                .iter()
                .map(|p| {
                    format!(
                        "#{} {}@{} base {}",
                        p.number,
                        p.head_ref,
                        p.head_sha.short(),
                        p.base_sha.short()
                    )
                })
                .collect::<Vec<_>>()
        })),
        show(gh.pull_commits(&app(), n(7)).await.map(|commits| {
            commits
                .iter()
                .map(|c| {
                    format!(
                        "{} {:?} by {:?}/{:?} parents {} at {:?} tool {:?}",
                        c.sha.short(),
                        c.subject,
                        c.author_login.as_ref().map(|l| l.as_str()),
                        c.committer_login.as_ref().map(|l| l.as_str()),
                        c.parents
                            .iter()
                            .map(|p| p.short())
                            .collect::<Vec<_>>()
                            .join(","),
                        c.committed_at.map(|t| t.to_string()),
                        c.trailers.get("Agent-Tool"),
                    )
                })
                .collect::<Vec<_>>()
        })),
        show(gh.pull_files(&app(), n(7)).await.map(|files| {
            files
                .iter()
                .map(|f| format!("{} {}", f.status.as_str(), f.path))
                .collect::<Vec<_>>()
        })),
        show(gh.check_runs(&app(), &sha("f2")).await.map(|runs| {
            runs.iter()
                .map(|r| format!("{} {:?} {:?}", r.name, r.conclusion, r.app_slug))
                .collect::<Vec<_>>()
        })),
        show(
            gh.label_events(&app(), n(7))
                .await
                .map(|events| events.len()),
        ),
        show(gh.comments(&app(), n(3)).await.map(|comments| {
            comments
                .iter()
                .map(|c| format!("{} {}", c.id.get(), c.body))
                .collect::<Vec<_>>()
        })),
        show(gh.reactions(&app(), n(3)).await.map(|r| r.len())),
        show(gh.branch_head(&app(), "main").await.map(|s| s.to_string())),
        show(gh.branch_head(&app(), "nope").await),
        show(gh.pull(&app(), n(3)).await),
        show(gh.check_runs(&app(), &sha("nope")).await),
        show(
            gh.open_pulls(&RepoName::parse("acme/other").expect("valid"))
                .await,
        ),
    ];
    check(
        &gh,
        &answers,
        r##"
        "mp-gate[bot]"
        ["#7 feature/x@f2 base m2", "#8 feature/y@g1 base m1", "#9 feature/z@z1 base m1"]
        ["f1 \"feat: one\" by Some(\"agent-1\")/Some(\"agent-1\") parents m1 at Some(\"2026-02-02T00:00:00Z\") tool Some(\"claude-code\")", "f2 \"feat: two\" by Some(\"agent-1\")/Some(\"agent-1\") parents f1 at None tool None"]
        ["added src/x.rs", "renamed docs/new.md", "removed junk.txt"]
        ["test Some(Success) Some(\"github-actions\")"]
        1
        ["2 /approve A"]
        1
        "m2"
        error: branch nope of acme/app not found
        error: pull request acme/app#3 not found
        error: commit 95754c86a579928b2e9f7b55a974a8ce2644bf19 in acme/app not found
        error: repository acme/other not found
        actions:
        calls:
          1 GET /app
          2 GET /repos/{o}/{r}/branches/{branch}
          2 GET /repos/{o}/{r}/commits/{sha}/check-runs
          1 GET /repos/{o}/{r}/issues/{n}/comments
          1 GET /repos/{o}/{r}/issues/{n}/reactions
          1 GET /repos/{o}/{r}/issues/{n}/timeline
          2 GET /repos/{o}/{r}/pulls
          1 GET /repos/{o}/{r}/pulls/{n}
          1 GET /repos/{o}/{r}/pulls/{n}/commits
          1 GET /repos/{o}/{r}/pulls/{n}/files
        "##,
    );
}

#[tokio::test(flavor = "current_thread")]
async fn merge_moves_main_marks_merged_and_applies_files() {
    let gh = memory(WORLD);
    let identity = "Agent-Tool: claude-code\nTask-Ref: none";
    let merged = gh
        .merge_pull(&app(), n(7), &merge("f2", Some(identity)))
        .await;
    let world = gh.world();
    let repo = world.repo(&app()).expect("repo");
    let pull = repo.pull(n(7)).expect("pull");
    let squash = repo.commits.last().expect("squash commit");
    let answers = vec![
        show(merged.map(|s| s.to_string())),
        show(gh.branch_head(&app(), "main").await.map(|s| s.to_string())),
        format!(
            "pull {:?} merged {} by {:?} merge_commit {:?}",
            pull.state,
            pull.merged,
            pull.merged_by.as_ref().map(|l| l.as_str()),
            pull.merge_commit.as_ref().map(|s| s.to_string()),
        ),
        format!(
            "squash parents {:?} author {:?} committer {:?} date {:?} message {:?}",
            squash
                .parents
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>(),
            squash.author.as_ref().map(|l| l.as_str()),
            squash.committer.as_ref().map(|l| l.as_str()),
            squash.date.map(|t| t.to_string()),
            squash.message,
        ),
        format!("main files {:?}", repo.files),
        show(
            gh.open_pulls(&app())
                .await
                .map(|p| p.iter().map(|p| p.number.get()).collect::<Vec<_>>()),
        ),
    ];
    check(
        &gh,
        &answers,
        r##"
        "squash merge of #7"
        "squash merge of #7"
        pull Closed merged true by Some("mp-gate[bot]") merge_commit Some("squash merge of #7")
        squash parents ["m2"] author Some("agent-1") committer Some("mp-gate[bot]") date Some("2026-03-01T12:00:00Z") message "Add x (#7)\n\nAgent-Tool: claude-code\nTask-Ref: none"
        main files {"README.md": "hello\n", "docs/new.md": "old\n", "src/x.rs": "fn x() {}\n"}
        [8, 9]
        actions:
          merge acme/app#7: head f2 -> base squash merge of #7
        calls:
          1 GET /repos/{o}/{r}/branches/{branch}
          1 GET /repos/{o}/{r}/pulls
          1 PUT /repos/{o}/{r}/pulls/{n}/merge
        "##,
    );
}

#[tokio::test(flavor = "current_thread")]
async fn merge_without_a_message_lists_the_commits_like_github() {
    let gh = memory(WORLD);
    let merged = gh.merge_pull(&app(), n(7), &merge("f2", None)).await;
    let message = gh
        .world()
        .repo(&app())
        .and_then(|r| r.commits.last().map(|c| c.message.clone()));
    check(
        &gh,
        &[show(merged.map(|_| message))],
        r##"
        Some("Add x (#7)\n\n* feat: one\n\nAgent-Tool: claude-code\n\n* feat: two")
        actions:
          merge acme/app#7: head f2 -> base squash merge of #7
        calls:
          1 PUT /repos/{o}/{r}/pulls/{n}/merge
        "##,
    );
}

#[tokio::test(flavor = "current_thread")]
async fn merge_refuses_a_moved_head_with_409() {
    let gh = memory(WORLD);
    let answers = vec![
        show(gh.merge_pull(&app(), n(7), &merge("f1", None)).await),
        show(gh.branch_head(&app(), "main").await.map(|s| s.to_string())),
    ];
    check(
        &gh,
        &answers,
        r##"
        error: head of acme/app#7 moved: merge precondition f1 no longer holds
        "m2"
        actions:
        calls:
          1 GET /repos/{o}/{r}/branches/{branch}
          1 PUT /repos/{o}/{r}/pulls/{n}/merge
        "##,
    );
}

#[tokio::test(flavor = "current_thread")]
async fn merge_refuses_unmergeable_and_closed_pulls_with_405() {
    let gh = memory(WORLD);
    let answers = vec![
        show(gh.merge_pull(&app(), n(8), &merge("g1", None)).await),
        show(gh.merge_pull(&app(), n(6), &merge("z1", None)).await),
        show(gh.merge_pull(&app(), n(3), &merge("z1", None)).await),
    ];
    check(
        &gh,
        &answers,
        r##"
        error: acme/app#8 is not mergeable: pull request is not mergeable
        error: acme/app#6 is not mergeable: pull request is closed
        error: pull request acme/app#3 not found
        actions:
        calls:
          3 PUT /repos/{o}/{r}/pulls/{n}/merge
        "##,
    );
}

#[tokio::test(flavor = "current_thread")]
async fn update_branch_moves_the_head_and_the_base() {
    let gh = memory(WORLD);
    let mut answers = vec![show(gh.update_branch(&app(), n(9), &sha("z1")).await)];
    let pull = gh.pull(&app(), n(9)).await;
    answers.push(show(pull.clone().map(|p| {
        format!("head {}@{} base {}", p.head_ref, p.head_sha, p.base_sha)
    })));
    answers.push(show(
        gh.branch_head(&app(), "feature/z")
            .await
            .map(|s| s.to_string()),
    ));
    answers.push(show(gh.pull_commits(&app(), n(9)).await.map(|commits| {
        commits
            .iter()
            .map(|c| {
                format!(
                    "{} parents {:?} subject {:?}",
                    c.sha,
                    c.parents.iter().map(|p| p.to_string()).collect::<Vec<_>>(),
                    c.subject
                )
            })
            .collect::<Vec<_>>()
    })));
    answers.push(show(
        gh.check_runs(&app(), &pull.map(|p| p.head_sha).unwrap_or(sha("z1")))
            .await
            .map(|r| r.len()),
    ));
    // The old head is no longer the head; the new one is already up to date.
    answers.push(show(gh.update_branch(&app(), n(9), &sha("z1")).await));
    let new_head = gh
        .world()
        .repo(&app())
        .and_then(|r| r.pull(n(9)).map(|p| p.head_sha.clone()));
    answers.push(show(
        gh.update_branch(&app(), n(9), &new_head.unwrap_or(sha("z1")))
            .await,
    ));
    answers.push(show(gh.update_branch(&app(), n(8), &sha("g1")).await));
    answers.push(show(gh.update_branch(&app(), n(6), &sha("z1")).await));
    check(
        &gh,
        &answers,
        r##"
        Accepted
        "head feature/z@update branch of #9 base m2"
        "update branch of #9"
        ["z1 parents [\"m1\"] subject \"stale\"", "update branch of #9 parents [\"z1\", \"m2\"] subject \"Merge branch 'main' into feature/z\""]
        0
        Refused { message: "expected head sha didn't match current head ref" }
        Refused { message: "already up to date" }
        Refused { message: "merge conflict between base and head" }
        Refused { message: "pull request is closed" }
        actions:
          update branch acme/app#9: head update branch of #9 on base m2
        calls:
          1 GET /repos/{o}/{r}/branches/{branch}
          1 GET /repos/{o}/{r}/commits/{sha}/check-runs
          1 GET /repos/{o}/{r}/pulls/{n}
          1 GET /repos/{o}/{r}/pulls/{n}/commits
          5 PUT /repos/{o}/{r}/pulls/{n}/update-branch
        "##,
    );
}

#[tokio::test(flavor = "current_thread")]
async fn labels_change_and_leave_timeline_events_by_the_bot() {
    let gh = memory(WORLD);
    let labels = [
        "ready-to-merge".to_owned(),
        "decision:approved-A".to_owned(),
    ];
    let mut answers = vec![
        show(gh.add_labels(&app(), n(7), &labels).await),
        show(gh.remove_label(&app(), n(7), "ready-to-merge").await),
        show(gh.remove_label(&app(), n(7), "absent").await),
        show(
            gh.add_labels(&app(), n(3), &["decision:stale-approval".to_owned()])
                .await,
        ),
        show(gh.add_labels(&app(), n(99), &labels).await),
    ];
    answers.push(show(gh.pull(&app(), n(7)).await.map(|p| p.labels)));
    answers.push(show(gh.label_events(&app(), n(7)).await.map(|events| {
        events
            .iter()
            .map(|e| {
                let action = match e.action {
                    LabelAction::Labeled => "+",
                    LabelAction::Unlabeled => "-",
                    LabelAction::BaseChanged => "base",
                };
                format!(
                    "{action}{} by {} at {}",
                    e.label,
                    e.actor.as_ref().map_or("-", |a| a.as_str()),
                    e.at.map_or_else(|| "-".to_owned(), |t| t.to_string())
                )
            })
            .collect::<Vec<_>>()
    })));
    check(
        &gh,
        &answers,
        r##"
        ()
        ()
        ()
        ()
        error: issue acme/app#99 not found
        ["decision:approved-A"]
        ["+ready-to-merge by alice at 2026-02-05T00:00:00Z", "+decision:approved-A by mp-gate[bot] at 2026-03-01T12:00:00Z", "-ready-to-merge by mp-gate[bot] at 2026-03-01T12:00:00Z"]
        actions:
          add labels acme/app#7: ready-to-merge, decision:approved-A
          remove label acme/app#7: ready-to-merge
          add labels acme/app#3: decision:stale-approval
        calls:
          2 DELETE /repos/{o}/{r}/issues/{n}/labels/{label}
          1 GET /repos/{o}/{r}/issues/{n}/timeline
          1 GET /repos/{o}/{r}/pulls/{n}
          3 POST /repos/{o}/{r}/issues/{n}/labels
        "##,
    );
}

#[tokio::test(flavor = "current_thread")]
async fn new_issues_are_numbered_after_every_pull_and_issue() {
    let gh = memory(WORLD);
    let issue = |title: &str| NewIssue {
        title: title.to_owned(),
        body: "body".to_owned(),
        labels: vec!["decision:pending-owner".to_owned()],
    };
    let mut answers = vec![
        show(
            gh.create_issue(&app(), &issue("Decision pending — PR acme/app#7"))
                .await
                .map(|i| i.number.get()),
        ),
        show(
            gh.create_issue(&app(), &issue("second"))
                .await
                .map(|i| i.number.get()),
        ),
        show(gh.create_issue(&app(), &issue(" ")).await),
        show(gh.close_issue(&app(), n(10)).await),
    ];
    let query = |state| IssueQuery {
        state,
        labels: vec!["decision:pending-owner".to_owned()],
    };
    for state in [Some(IssueState::Open), None] {
        answers.push(show(gh.issues(&app(), &query(state)).await.map(|issues| {
            issues
                .iter()
                .map(|i| {
                    format!(
                        "#{} {:?} pr={} by {:?}",
                        i.number,
                        i.state,
                        i.is_pull_request,
                        i.author.as_ref().map(|a| a.as_str())
                    )
                })
                .collect::<Vec<_>>()
        })));
    }
    let pulls = IssueQuery {
        state: Some(IssueState::Closed),
        labels: Vec::new(),
    };
    answers.push(show(gh.issues(&app(), &pulls).await.map(|issues| {
        issues
            .iter()
            .map(|i| format!("#{} pr={}", i.number, i.is_pull_request))
            .collect::<Vec<_>>()
    })));
    check(
        &gh,
        &answers,
        r##"
        10
        11
        error: POST /repos/{o}/{r}/issues answered HTTP 422: an issue needs a title
        ()
        ["#11 Open pr=false by Some(\"mp-gate[bot]\")", "#3 Open pr=false by None"]
        ["#11 Open pr=false by Some(\"mp-gate[bot]\")", "#10 Closed pr=false by Some(\"mp-gate[bot]\")", "#3 Open pr=false by None"]
        ["#10 pr=false", "#6 pr=true"]
        actions:
          open issue acme/app#10: Decision pending — PR acme/app#7 [decision:pending-owner]
          open issue acme/app#11: second [decision:pending-owner]
          close acme/app#10
        calls:
          3 GET /repos/{o}/{r}/issues
          1 PATCH /repos/{o}/{r}/issues/{n}
          3 POST /repos/{o}/{r}/issues
        "##,
    );
}

#[tokio::test(flavor = "current_thread")]
async fn comments_get_fresh_ids_and_can_be_edited() {
    let gh = memory(WORLD);
    let answers = vec![
        show(
            gh.create_comment(&app(), n(7), "Merge Gate L1 — merge blocked:")
                .await
                .map(|c| {
                    format!(
                        "{} by {:?} at {:?}",
                        c.id.get(),
                        c.author.map(|a| a.to_string()),
                        c.created_at.map(|t| t.to_string())
                    )
                }),
        ),
        show(
            gh.update_comment(&app(), CommentId::new(2), "/approve B")
                .await,
        ),
        show(gh.update_comment(&app(), CommentId::new(99), "x").await),
        show(gh.comments(&app(), n(7)).await.map(|c| {
            c.iter()
                .map(|c| format!("{} {}", c.id.get(), c.body))
                .collect::<Vec<_>>()
        })),
        show(gh.comments(&app(), n(3)).await.map(|c| {
            c.iter()
                .map(|c| format!("{} {}", c.id.get(), c.body))
                .collect::<Vec<_>>()
        })),
        show(gh.comments(&app(), n(8)).await),
    ];
    check(
        &gh,
        &answers,
        r##"
        "3 by Some(\"mp-gate[bot]\") at Some(\"2026-03-01T12:00:00Z\")"
        ()
        error: comment 99 in acme/app not found
        ["1 ship it", "3 Merge Gate L1 — merge blocked:"]
        ["2 /approve B"]
        error: GET /repos/{o}/{r}/issues/{n}/comments: comments of acme/app#8 cannot be read (comments_unreadable)
        actions:
          comment acme/app#7 (id 3): Merge Gate L1 — merge blocked:
          update comment 2 on acme/app#3: /approve B
        calls:
          3 GET /repos/{o}/{r}/issues/{n}/comments
          2 PATCH /repos/{o}/{r}/issues/comments/{id}
          1 POST /repos/{o}/{r}/issues/{n}/comments
        "##,
    );
}

#[tokio::test(flavor = "current_thread")]
async fn every_call_is_counted_and_the_rate_limit_runs_out() {
    let gh = memory(&WORLD.replace(
        "bot: mp-gate\n",
        "bot: mp-gate\nrate_limit: {remaining: 2}\n",
    ));
    let mut answers = vec![show(Ok::<_, GitHubError>(gh.rate_limit_remaining()))];
    answers.push(show(gh.open_pulls(&app()).await.map(|p| p.len())));
    answers.push(show(gh.bot_login().await.map(|l| l.to_string())));
    answers.push(show(gh.pull(&app(), n(99)).await.map(|p| p.number)));
    answers.push(show(Ok::<_, GitHubError>(gh.rate_limit_remaining())));
    answers.push(show(gh.open_pulls(&app()).await.map(|p| p.len())));
    answers.push(show(gh.bot_login().await.map(|l| l.to_string())));
    answers.push(format!("total {}", gh.total_calls()));
    check(
        &gh,
        &answers,
        r##"
        Some(2)
        3
        "mp-gate[bot]"
        error: pull request acme/app#99 not found
        Some(0)
        error: rate limit exhausted: 0 calls left
        "mp-gate[bot]"
        total 5
        actions:
        calls:
          2 GET /app
          2 GET /repos/{o}/{r}/pulls
          1 GET /repos/{o}/{r}/pulls/{n}
        "##,
    );
}

#[tokio::test(flavor = "current_thread")]
async fn the_action_log_keeps_order_and_serializes_with_snake_case_tags() {
    let gh = memory(WORLD);
    let steps = vec![
        show(
            gh.create_comment(&app(), n(9), "hello")
                .await
                .map(|c| c.id.get()),
        ),
        show(gh.update_branch(&app(), n(9), &sha("z1")).await),
        show(gh.add_labels(&app(), n(7), &["a".to_owned()]).await),
        show(
            gh.merge_pull(&app(), n(7), &merge("f2", Some("Task-Ref: none")))
                .await
                .map(|_| ()),
        ),
        show(gh.close_issue(&app(), n(3)).await),
    ];
    let json = serde_json::to_string(&gh.actions()).expect("actions serialize");
    let mut answers = steps;
    answers.extend(json.split("},{").map(str::to_owned));
    check(
        &gh,
        &answers,
        r##"
        3
        Accepted
        ()
        ()
        ()
        [{"action":"create_comment","repo":"acme/app","number":9,"comment_id":3,"body":"hello"
        "action":"update_branch","repo":"acme/app","number":9,"head_sha":"update branch of #9","base_sha":"m2"
        "action":"add_labels","repo":"acme/app","number":7,"labels":["a"]
        "action":"merge_pull","repo":"acme/app","number":7,"head_sha":"f2","merge_sha":"squash merge of #7","message":"Add x (#7)\n\nTask-Ref: none"
        "action":"close_issue","repo":"acme/app","number":3}]
        actions:
          comment acme/app#9 (id 3): hello
          update branch acme/app#9: head update branch of #9 on base m2
          add labels acme/app#7: a
          merge acme/app#7: head f2 -> base squash merge of #7
          close acme/app#3
        calls:
          1 PATCH /repos/{o}/{r}/issues/{n}
          1 POST /repos/{o}/{r}/issues/{n}/comments
          1 POST /repos/{o}/{r}/issues/{n}/labels
          1 PUT /repos/{o}/{r}/pulls/{n}/merge
          1 PUT /repos/{o}/{r}/pulls/{n}/update-branch
        "##,
    );
}

/// A world with simulated CI: pull request 1 changes `src/a.rs` (green), 2 changes
/// `src/flaky/b.rs` (red), 3 is behind `main` and gets updated.
const CI_WORLD: &str = r##"
now: 2026-03-01T12:05:00Z
bot: mp-gate
ci: {checks: [test], app: github-actions, minutes: 10, fails: ["src/flaky/**"]}
repos:
  - name: acme/app
    commits:
      - {id: m1, message: init, date: 2026-02-01T00:00:00Z}
      - {id: m2, message: next, parents: [m1], date: 2026-02-02T00:00:00Z}
      - {id: a1, message: a, parents: [m2], date: 2026-03-01T12:00:00Z}
      - {id: b1, message: b, parents: [m2], date: 2026-03-01T12:00:00Z}
      - {id: c1, message: c, parents: [m1], date: 2026-03-01T11:00:00Z,
         checks: [{name: test, app: github-actions, started_at: 2026-03-01T11:00:00Z, completed_at: 2026-03-01T11:03:00Z}]}
    branches: {main: m2, a: a1, b: b1, c: c1}
    pulls:
      - {number: 1, title: A, author: agent-1, head: a, files: [{path: src/a.rs}]}
      - {number: 2, title: B, author: agent-2, head: b, files: [{path: src/flaky/b.rs}]}
      - {number: 3, title: C, author: agent-3, head: c, base_commit: m1, files: [{path: src/c.rs}]}
"##;

fn runs_of(gh: &MemoryGitHub, id: &str) -> Vec<String> {
    gh.read(|w| {
        let commit = w.repos[0].commit(&sha(id)).map(|c| c.checks.clone());
        commit
            .unwrap_or_default()
            .iter()
            .map(|run| {
                format!(
                    "{} {} {} {}..{}",
                    run.name,
                    run.status.as_str(),
                    run.conclusion.as_ref().map_or("-", |c| c.as_str()),
                    run.started_at.map_or("-".to_owned(), |t| t.to_string()),
                    run.completed_at.map_or("-".to_owned(), |t| t.to_string()),
                )
            })
            .collect()
    })
}

#[tokio::test]
async fn simulated_ci_runs_on_every_new_head_and_completes_on_time() {
    let gh = memory(CI_WORLD);
    // Started at the push (the commit's date here), not finished at 12:05.
    assert_eq!(
        runs_of(&gh, "a1"),
        ["test in_progress - 2026-03-01T12:00:00Z..-"]
    );
    // A head the world already lists a completed run for is left alone.
    assert_eq!(
        runs_of(&gh, "c1"),
        ["test completed success 2026-03-01T11:00:00Z..2026-03-01T11:03:00Z"]
    );
    gh.set_now(mp_core::Timestamp::parse("2026-03-01T12:10:00Z").expect("a time"));
    assert_eq!(
        runs_of(&gh, "a1"),
        ["test completed success 2026-03-01T12:00:00Z..2026-03-01T12:10:00Z"]
    );
    assert_eq!(
        runs_of(&gh, "b1"),
        ["test completed failure 2026-03-01T12:00:00Z..2026-03-01T12:10:00Z"]
    );

    // The bot's update makes a new head: its run starts at once and is seen by the next read.
    let outcome = gh.update_branch(&app(), n(3), &sha("c1")).await;
    assert!(matches!(
        outcome,
        Ok(mp_core::port::UpdateBranchOutcome::Accepted)
    ));
    let head = gh.read(|w| w.repos[0].pulls[2].head_sha.clone());
    let runs = gh
        .check_runs(&app(), &head)
        .await
        .expect("the new head is known");
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].status.as_str(), "in_progress");
    assert_eq!(runs[0].app_slug.as_deref(), Some("github-actions"));
    gh.set_now(mp_core::Timestamp::parse("2026-03-01T12:19:59Z").expect("a time"));
    let runs = gh.check_runs(&app(), &head).await.expect("known");
    assert_eq!(
        runs[0].status.as_str(),
        "in_progress",
        "10 minutes are not over"
    );
    gh.set_now(mp_core::Timestamp::parse("2026-03-01T12:20:00Z").expect("a time"));
    let runs = gh.check_runs(&app(), &head).await.expect("known");
    assert_eq!(runs[0].status.as_str(), "completed");
}

/// The merge queue's builds: merges on the assembly branch run nothing; each push of the
/// staging branch runs the checks on its tip, red when a pull request it brings onto
/// `main` changes a failing path; fast-forwarding `main` to a tested tip merges its pull
/// requests and runs nothing again.
#[tokio::test(flavor = "current_thread")]
async fn simulated_ci_runs_on_staging_pushes_once_per_tip() {
    use mp_core::port::GitHubHistory;
    use mp_core::queue::{assembly_branch, staging_branch};

    let gh = memory(CI_WORLD);
    let at = |time: &str| mp_core::Timestamp::parse(time).expect("a time");
    gh.set_now(at("2026-03-01T12:10:00Z"));
    let (build, staging) = (assembly_branch("main"), staging_branch("main"));
    gh.create_branch(&app(), &build, &sha("m2"))
        .await
        .expect("the assembly branch");
    let first = gh
        .merge_into_branch(&app(), &build, &sha("a1"), "Merge #1")
        .await
        .expect("merged")
        .expect("a merge commit");
    let second = gh
        .merge_into_branch(&app(), &build, &sha("b1"), "Merge #2")
        .await
        .expect("merged")
        .expect("a merge commit");
    assert_eq!(first, sha("merge into mp-queue-build/main"));
    assert_eq!(second, sha("merge into mp-queue-build/main (2)"));
    assert_eq!(gh.read(World::ci_runs), 3, "the three heads' runs");
    gh.create_branch(&app(), &staging, &second)
        .await
        .expect("the staging branch");
    // Back to the first merge alone: a rewrite of the staging branch, another push.
    gh.update_branch_ref(&app(), &staging, &first, true)
        .await
        .expect("moved");
    gh.set_now(at("2026-03-01T12:19:59Z"));
    let runs = |id: &str| runs_of(&gh, id);
    assert_eq!(
        runs("merge into mp-queue-build/main (2)"),
        ["test in_progress - 2026-03-01T12:10:00Z..-"]
    );
    gh.set_now(at("2026-03-01T12:20:00Z"));
    assert_eq!(
        runs("merge into mp-queue-build/main (2)"),
        ["test completed failure 2026-03-01T12:10:00Z..2026-03-01T12:20:00Z"],
        "#2 changes src/flaky/b.rs"
    );
    assert_eq!(
        runs("merge into mp-queue-build/main"),
        ["test completed success 2026-03-01T12:10:00Z..2026-03-01T12:20:00Z"]
    );
    assert_eq!(gh.read(World::ci_runs), 5, "one run per staging tip");
    gh.update_branch_ref(&app(), "main", &first, false)
        .await
        .expect("a fast-forward");
    gh.set_now(at("2026-03-01T12:40:00Z"));
    let pull = gh.pull(&app(), n(1)).await.expect("#1");
    assert!(
        pull.merged && pull.merge_commit == Some(first.clone()),
        "{pull:?}"
    );
    assert_eq!(
        runs("merge into mp-queue-build/main"),
        ["test completed success 2026-03-01T12:10:00Z..2026-03-01T12:20:00Z"],
        "the tested tip keeps its runs"
    );
    assert_eq!(gh.read(World::ci_runs), 5, "landing ran nothing");
}

#[test]
fn simulated_ci_is_checked_when_loaded() {
    for (ci, message) in [
        ("{checks: [], app: ci, minutes: 1}", "names no check"),
        ("{checks: [t, t], app: ci, minutes: 1}", "listed twice"),
        ("{checks: [t], app: ci, minutes: 0}", "`ci.minutes` is 0"),
        (
            "{checks: [t], app: ci, minutes: 1, fails: [\"a[\"]}",
            "is not a glob",
        ),
        ("{checks: [t], minutes: 1}", "app"),
    ] {
        let text = format!("now: 2026-03-01T12:00:00Z\nbot: mp-gate\nci: {ci}\n");
        let error = parse_world("world.yaml", &text, None)
            .map(|_| ())
            .expect_err(ci)
            .to_string();
        assert!(error.contains(message), "{ci}: {error}");
    }
}

/// GitHub's API has whole seconds only: a write made at a clock with a fraction of a
/// second is recorded at the whole second, in every time the world keeps (label events,
/// comments, issues, the squash commit, the activity log, check runs).
#[tokio::test(flavor = "current_thread")]
async fn writes_at_a_fractional_clock_are_recorded_at_the_whole_second() {
    use mp_core::context::{CheckRun, CheckStatus};
    use mp_core::ids::{Login, Timestamp};

    let gh = memory(WORLD);
    let fractional = Timestamp::parse("2026-03-01T12:00:05.750Z").expect("valid");
    let whole = Timestamp::parse("2026-03-01T12:00:05Z").expect("valid");
    // The world's debug form shows a fraction: the check below can see one.
    assert!(format!("{fractional:?}").contains(".75"), "{fractional:?}");
    gh.set_now(fractional);
    assert_eq!(gh.stamp(), whole);

    let label = |name: &str| vec![name.to_owned()];
    gh.add_labels(&app(), n(7), &label("decision:pending-owner"))
        .await
        .expect("labelled");
    gh.remove_label(&app(), n(7), "decision:pending-owner")
        .await
        .expect("unlabelled");
    let alice = Login::parse("alice").expect("valid");
    gh.apply_label_as(&app(), n(7), "reviewed", &alice)
        .expect("labelled by a person");
    let comment = gh
        .create_comment(&app(), n(7), "Merge Gate: checked")
        .await
        .expect("commented");
    assert_eq!(comment.created_at, Some(whole));
    gh.update_comment(&app(), comment.id, "Merge Gate: checked again")
        .await
        .expect("edited");
    let issue = gh
        .create_issue(
            &app(),
            &NewIssue {
                title: "Decision pending".to_owned(),
                body: "body".to_owned(),
                labels: label("decision:pending-owner"),
            },
        )
        .await
        .expect("opened");
    gh.update_branch(&app(), n(9), &sha("z1"))
        .await
        .expect("updated");
    gh.merge_pull(&app(), n(7), &merge("f2", Some("Agent-Tool: claude-code")))
        .await
        .expect("merged");
    gh.add_check_run(
        &app(),
        &sha("f2"),
        CheckRun {
            id: None,
            name: "lint".to_owned(),
            status: CheckStatus::Completed,
            conclusion: None,
            started_at: Some(fractional),
            completed_at: Some(fractional.plus_seconds(1)),
            app_slug: Some("github-actions".to_owned()),
            output_summary: None,
        },
    )
    .expect("published");

    let events = gh.label_events(&app(), n(7)).await.expect("timeline");
    let written: Vec<_> = events.iter().filter(|e| e.at == Some(whole)).collect();
    assert_eq!(written.len(), 3, "{events:?}");
    assert_eq!(issue.created_at, Some(whole));
    // The clock keeps its fraction; nothing GitHub hands out does.
    let world = format!("{:?}", gh.world().repos);
    assert!(
        !world.contains("12:00:05.75") && !world.contains("12:00:06.75"),
        "a fraction of a second was kept:\n{world}"
    );
    // Each write above stamped at least one time, at the whole second.
    assert!(
        world.matches("2026-03-01T12:00:05Z").count() >= 8,
        "{world}"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn the_call_log_lists_every_call_in_order_once_asked() {
    use mp_core::port::GitHubHistory as _;
    let gh = memory(WORLD);
    drop(gh.open_pulls(&app()).await);
    assert!(gh.call_log().is_empty(), "no log until asked");
    gh.log_calls();
    drop(gh.bot_login().await);
    drop(gh.pull(&app(), n(7)).await);
    drop(gh.comments(&app(), n(8)).await);
    let query = IssueQuery {
        state: None,
        labels: vec!["decision:pending-owner".to_owned()],
    };
    drop(gh.issues(&app(), &query).await);
    drop(gh.file(&app(), "README.md", "main").await);
    drop(gh.tree(&app(), "main").await);
    drop(gh.compare(&app(), &sha("m1"), &sha("m2"), 10).await);
    drop(gh.remove_label(&app(), n(7), "ready-to-merge").await);
    drop(gh.pull(&app(), n(99)).await);
    let log: Vec<String> = gh.call_log().iter().map(ToString::to_string).collect();
    let (m1, m2) = (sha("m1"), sha("m2"));
    assert_eq!(
        log,
        [
            "GET /app".to_owned(),
            "GET /repos/acme/app/pulls/7".to_owned(),
            "GET /repos/acme/app/issues/8/comments".to_owned(),
            "GET /repos/acme/app/issues?state=all&labels=decision:pending-owner".to_owned(),
            "GET /repos/acme/app/contents/README.md?ref=main".to_owned(),
            "GET /repos/acme/app/git/trees/main".to_owned(),
            format!("GET /repos/acme/app/compare/{m1}...{m2}"),
            "DELETE /repos/acme/app/issues/7/labels/ready-to-merge".to_owned(),
            "GET /repos/acme/app/pulls/99".to_owned(),
        ],
        "the failed read of #99 is logged too"
    );
    let removal = &gh.call_log()[7];
    assert_eq!(removal.repo, Some(app()));
    assert_eq!(removal.values, ["7", "ready-to-merge"]);
    assert_eq!(gh.take_call_log().len(), 9);
    assert!(gh.call_log().is_empty(), "a take starts the log over");
    assert_eq!(gh.total_calls(), 10, "the counts are kept");
}

#[tokio::test(flavor = "current_thread")]
async fn an_injected_failure_answers_the_calls_it_matches_until_healed() {
    use super::Failure;
    use crate::memory::Endpoint;
    let gh = memory(&WORLD.replace(
        "bot: mp-gate\n",
        "bot: mp-gate\nrate_limit: {remaining: 100}\n",
    ));
    let outage = || GitHubError::Unavailable {
        route: Endpoint::ListComments.route().to_owned(),
        message: "502".to_owned(),
    };
    gh.fail(Failure::on(Endpoint::ListComments, outage()).with_value("7"));
    gh.fail(
        Failure::on(
            Endpoint::AddLabels,
            GitHubError::Throttled {
                retry_after_secs: 60,
            },
        )
        .times(1),
    );
    let other = RepoName::parse("acme/other").expect("valid");
    gh.fail(
        Failure::on_every_route(GitHubError::NotFound {
            what: "repository acme/other".to_owned(),
        })
        .in_repo(&other),
    );
    let label = ["a".to_owned()];
    let answers = vec![
        show(gh.comments(&app(), n(7)).await.map(|c| c.len())),
        show(gh.comments(&app(), n(9)).await.map(|c| c.len())),
        show(gh.add_labels(&app(), n(9), &label).await),
        show(gh.add_labels(&app(), n(9), &label).await),
        show(gh.open_pulls(&other).await.map(|p| p.len())),
        show(Ok::<_, GitHubError>(gh.rate_limit_remaining())),
    ];
    gh.heal();
    let mut answers = answers;
    answers.push(show(gh.comments(&app(), n(7)).await.map(|c| c.len())));
    check(
        &gh,
        &answers,
        r##"
        error: GET /repos/{o}/{r}/issues/{n}/comments: 502
        0
        error: secondary rate limit; retry after 60 s
        ()
        error: repository acme/other not found
        Some(95)
        1
        actions:
          add labels acme/app#9: a
        calls:
          3 GET /repos/{o}/{r}/issues/{n}/comments
          1 GET /repos/{o}/{r}/pulls
          2 POST /repos/{o}/{r}/issues/{n}/labels
        "##,
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_lost_answer_comes_after_the_write_was_carried_out() {
    use super::Failure;
    use crate::memory::Endpoint;
    let gh = memory(WORLD);
    let lost = || GitHubError::Unavailable {
        route: Endpoint::MergePull.route().to_owned(),
        message: "connection closed before the answer".to_owned(),
    };
    gh.fail(
        Failure::on(Endpoint::MergePull, lost())
            .in_repo(&app())
            .answer_lost()
            .times(1),
    );
    gh.fail(
        Failure::on(
            Endpoint::RemoveLabel,
            GitHubError::Unavailable {
                route: Endpoint::RemoveLabel.route().to_owned(),
                message: "reset".to_owned(),
            },
        )
        .answer_lost(),
    );
    gh.fail(
        Failure::on(
            Endpoint::ListComments,
            GitHubError::Unavailable {
                route: Endpoint::ListComments.route().to_owned(),
                message: "reset".to_owned(),
            },
        )
        .answer_lost(),
    );
    let answers = vec![
        // Refused by GitHub (405): nothing carried out, the refusal answers and the
        // failure is not spent.
        show(gh.merge_pull(&app(), n(8), &merge("g1", None)).await),
        // Carried out: merged, logged, and the answer lost.
        show(gh.merge_pull(&app(), n(7), &merge("f2", None)).await),
        show(gh.pull(&app(), n(7)).await.map(|p| (p.merged, p.state))),
        // Spent after one loss: the next merge answers GitHub's refusal.
        show(gh.merge_pull(&app(), n(7), &merge("f2", None)).await),
        // A label that is absent changes nothing: GitHub's answer comes back.
        show(gh.remove_label(&app(), n(9), "nope").await),
        show(gh.remove_label(&app(), n(7), "ready-to-merge").await),
        // A read changes nothing: it answers as usual.
        show(gh.comments(&app(), n(9)).await.map(|c| c.len())),
    ];
    check(
        &gh,
        &answers,
        r##"
        error: acme/app#8 is not mergeable: pull request is not mergeable
        error: PUT /repos/{o}/{r}/pulls/{n}/merge: connection closed before the answer
        (true, Closed)
        error: acme/app#7 is not mergeable: pull request is closed
        ()
        error: DELETE /repos/{o}/{r}/issues/{n}/labels/{label}: reset
        0
        actions:
          merge acme/app#7: head f2 -> base squash merge of #7
          remove label acme/app#7: ready-to-merge
        calls:
          2 DELETE /repos/{o}/{r}/issues/{n}/labels/{label}
          1 GET /repos/{o}/{r}/issues/{n}/comments
          1 GET /repos/{o}/{r}/pulls/{n}
          3 PUT /repos/{o}/{r}/pulls/{n}/merge
        "##,
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_persons_comment_and_edit_are_neither_logged_nor_counted() {
    let gh = memory(WORLD);
    let alice = mp_core::ids::Login::parse("alice").expect("valid");
    let at = mp_core::ids::Timestamp::parse("2026-03-01T12:05:00.5Z").expect("valid");
    let theirs = gh
        .comment_as(&app(), n(3), &alice, "/approve A", at)
        .expect("issue 3 exists");
    assert_eq!(
        show(gh.comment_as(&app(), n(42), &alice, "lost", at)),
        "error: issue acme/app#42 not found"
    );
    let closed = gh.edit_world(|world| {
        let pull = world
            .repo_mut(&app())
            .and_then(|r| r.pull_mut(n(9)))
            .expect("pull 9 exists");
        pull.state = mp_core::context::PrState::Closed;
        pull.number
    });
    let ours = gh
        .create_comment(&app(), n(3), "noted")
        .await
        .expect("the bot comments");
    let comments = gh.comments(&app(), n(3)).await.expect("listed");
    let open = gh.open_pulls(&app()).await.expect("listed");
    let answers = vec![
        format!(
            "theirs {} by {:?} at {:?}",
            theirs.id.get(),
            theirs.author,
            theirs.created_at
        ),
        format!("ours {}", ours.id.get()),
        format!(
            "listed {:?}",
            comments.iter().map(|c| c.id.get()).collect::<Vec<_>>()
        ),
        format!(
            "closed #{closed}; open {:?}",
            open.iter().map(|p| p.number.get()).collect::<Vec<_>>()
        ),
    ];
    check(
        &gh,
        &answers,
        r##"
        theirs 3 by Some(Login("alice")) at Some(Timestamp(2026-03-01T12:05:00Z))
        ours 4
        listed [2, 3, 4]
        closed #9; open [7, 8]
        actions:
          comment acme/app#3 (id 4): noted
        calls:
          1 GET /repos/{o}/{r}/issues/{n}/comments
          1 GET /repos/{o}/{r}/pulls
          1 POST /repos/{o}/{r}/issues/{n}/comments
        "##,
    );
}

#[tokio::test(flavor = "current_thread")]
async fn the_rate_limit_drops_at_the_first_matching_call() {
    use crate::memory::Endpoint;
    let gh = memory(&WORLD.replace(
        "bot: mp-gate\n",
        "bot: mp-gate\nrate_limit: {remaining: 100}\n",
    ));
    gh.drop_rate_limit_at(Endpoint::GetPull, &app(), 10);
    drop(gh.open_pulls(&app()).await);
    let before = gh.rate_limit_remaining();
    drop(gh.pull(&app(), n(7)).await);
    let dropped = gh.rate_limit_remaining();
    drop(gh.pull(&app(), n(7)).await);
    assert_eq!(
        (before, dropped, gh.rate_limit_remaining()),
        (Some(99), Some(9), Some(8)),
        "once, then spent as usual"
    );
}
