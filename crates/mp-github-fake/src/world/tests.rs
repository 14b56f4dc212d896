//! Tests for the world file format: parsing, defaults, references and errors with lines.

use std::fmt::Display;

use mp_core::context::{CheckRun, LabelAction};
use mp_core::ids::{CommitSha, RepoName};

use super::{LoadWorldError, Repo, World, commit_sha, load_world, parse_world};

fn opt<T: Display>(value: Option<T>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

fn check_run(check: &CheckRun) -> String {
    format!(
        "{} {} {} app {} started {} completed {} summary {}",
        check.name,
        check.status.as_str(),
        opt(check.conclusion.as_ref().map(|c| c.as_str())),
        opt(check.app_slug.as_deref()),
        opt(check.started_at),
        opt(check.completed_at),
        opt(check.output_summary.as_ref().map(|s| format!("{s:?}"))),
    )
}

/// The commit id for a SHA (or its short form when unknown), for readable expectations.
fn id_of(repo: &Repo, sha: &CommitSha) -> String {
    repo.commit(sha)
        .map_or_else(|| sha.short().to_owned(), |c| c.id.clone())
}

/// Every field of the world, one fact per line.
fn render(world: &World) -> String {
    let mut out = String::new();
    let mut line = |text: String| {
        out.push_str(text.trim_end());
        out.push('\n');
    };
    line(format!(
        "now {} bot {} login {} rate_limit {} receipt_key {}",
        world.now,
        world.bot_slug,
        opt(world.bot_login().ok()),
        opt(world.rate_limit_remaining),
        if world.receipt_key.is_some() {
            "set"
        } else {
            "-"
        },
    ));
    for (name, text) in &world.config {
        line(format!("config {name}: {text:?}"));
    }
    for repo in &world.repos {
        let id = |sha: &CommitSha| id_of(repo, sha);
        line(format!("repo {}", repo.name));
        for c in &repo.commits {
            let parents: Vec<String> = c.parents.iter().map(id).collect();
            line(format!(
                "  commit {} {} parents [{}] author {} committer {} date {} message {:?}",
                c.id,
                c.sha.short(),
                parents.join(" "),
                opt(c.author.as_ref()),
                opt(c.committer.as_ref()),
                opt(c.date),
                c.message,
            ));
            for check in &c.checks {
                line(format!("    check {}", check_run(check)));
            }
        }
        for (branch, sha) in &repo.branches {
            line(format!("  branch {branch} -> {}", id(sha)));
        }
        for (path, content) in &repo.files {
            line(format!("  file {path}: {content:?}"));
        }
        for (branch, files) in &repo.branch_files {
            for (path, content) in files {
                line(format!("  file {branch}:{path}: {content:?}"));
            }
        }
        for p in &repo.pulls {
            let commits: Vec<String> = p.commits.iter().map(id).collect();
            line(format!(
                "  pull #{} {:?} by {} {:?} merged {} mergeable {} head {}@{} base {}@{} commits [{}] labels [{}] created {} merged_by {} merge_commit {} comments_unreadable {}",
                p.number,
                p.title,
                p.author,
                p.state,
                p.merged,
                p.mergeable,
                p.head_ref,
                id(&p.head_sha),
                p.base_ref,
                id(&p.base_sha),
                commits.join(" "),
                p.labels.join(", "),
                opt(p.created_at),
                opt(p.merged_by.as_ref()),
                opt(p.merge_commit.as_ref().map(id)),
                p.comments_unreadable,
            ));
            if !p.body.is_empty() {
                line(format!("    body {:?}", p.body));
            }
            thread(&mut line, &p.events, &p.comments, &p.reactions);
            for f in &p.files {
                line(format!(
                    "    file {} {} +{} -{} from {} content {}",
                    f.change.status.as_str(),
                    f.change.path,
                    f.change.additions,
                    f.change.deletions,
                    opt(f.change.previous_filename.as_ref()),
                    opt(f.content.as_ref().map(|c| format!("{c:?}"))),
                ));
            }
        }
        for i in &repo.issues {
            line(format!(
                "  issue #{} {:?} by {} {:?} labels [{}] created {}",
                i.number,
                i.title,
                opt(i.author.as_ref()),
                i.state,
                i.labels.join(", "),
                opt(i.created_at),
            ));
            if !i.body.is_empty() {
                line(format!("    body {:?}", i.body));
            }
            thread(&mut line, &i.events, &i.comments, &i.reactions);
        }
    }
    out
}

fn thread(
    line: &mut impl FnMut(String),
    events: &[mp_core::context::LabelEvent],
    comments: &[mp_core::context::Comment],
    reactions: &[mp_core::context::Reaction],
) {
    for e in events {
        let action = match e.action {
            LabelAction::Labeled => "labeled",
            LabelAction::Unlabeled => "unlabeled",
            LabelAction::BaseChanged => "base_ref_changed",
        };
        line(format!(
            "    {action} {} by {} at {}",
            e.label,
            opt(e.actor.as_ref()),
            opt(e.at)
        ));
    }
    for c in comments {
        line(format!(
            "    comment {} by {} at {}: {:?}",
            c.id.get(),
            opt(c.author.as_ref()),
            opt(c.created_at),
            c.body
        ));
    }
    for r in reactions {
        line(format!(
            "    reaction {:?} by {} at {}",
            r.kind,
            r.user,
            opt(r.created_at)
        ));
    }
}

fn parse(text: &str) -> Result<World, LoadWorldError> {
    parse_world("world.yaml", text, None)
}

/// Renders the world (or the error) and compares it with `expected`, ignoring the
/// indentation common to `expected`'s lines.
#[track_caller]
fn check(result: Result<World, LoadWorldError>, expected: &str) {
    let actual = match result {
        Ok(world) => render(&world),
        Err(err) => format!("error: {err}\n"),
    };
    let expected = dedent(expected);
    assert_eq!(actual, expected, "\nactual:\n{actual}");
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

const FULL: &str = r#"
now: 2026-03-01T12:00:00Z
bot: mp-gate
receipt_key: "s3cret"
rate_limit: {remaining: 500}
config:
  files:
    owner.yml: "github_login: alice\n"
repos:
  - name: Acme/App
    commits:
      - id: m1
        message: "init"
        author: alice
        committer: web-flow
        date: 2026-02-01T00:00:00Z
        checks:
          - {name: test, app: github-actions, started_at: 2026-02-01T00:01:00Z, completed_at: 2026-02-01T00:05:00Z}
      - id: f1
        message: |
          feat: add x

          Agent-Tool: claude-code
        parents: [m1]
        author: agent-1
        date: 2026-02-02T00:00:00+02:00
    branches:
      main: m1
      feature/x: f1
      bot-state: m1
    files:
      README.md: "hello\n"
    branch_files:
      bot-state:
        state.json: "{}"
    pulls:
      - number: 7
        title: Add x
        body: Adds x.
        author: agent-1
        head: feature/x
        labels: [ready-to-merge]
        events:
          - {labeled: ready-to-merge, by: alice, at: 2026-02-03T00:00:00Z}
          - {unlabeled: wip, by: agent-1}
        files:
          - {path: src/x.rs, status: added, additions: 3, content: "fn x() {}\n"}
          - {path: docs/new.md, status: renamed, previous_filename: docs/old.md}
          - {path: junk.txt, status: removed, deletions: 2}
          - {path: README.md, status: copied}
        checks:
          - {name: test, conclusion: failure, app: github-actions, summary: "1 failed"}
          - {name: lint, status: in_progress}
          - {name: classifier-judgment}
        comments:
          - {author: alice, body: "looks good", at: 2026-02-03T01:00:00Z}
          - {body: "from a deleted user"}
        reactions:
          - {content: "+1", by: alice, at: 2026-02-03T02:00:00Z}
          - {content: eyes, by: bob}
        created_at: 2026-02-02T12:00:00Z
      - number: 5
        title: Old
        author: bob
        head: gone
        head_commit: m1
        merged: true
        merged_by: alice
        merge_commit: m1
        mergeable: false
        comments_unreadable: true
    issues:
      - number: 9
        title: Decision pending
        body: "- PR: `acme/app#7`"
        author: mp-gate[bot]
        labels: [decision:pending-owner]
        events: [{labeled: decision:pending-owner, by: "mp-gate[bot]", at: 2026-02-04T00:00:00Z}]
        comments: [{author: alice, body: "/approve A", at: 2026-02-05T00:00:00Z}]
        reactions: [{content: "-1", by: alice}]
        created_at: 2026-02-04T00:00:00Z
      - {number: 10, title: Closed one, state: closed}
"#;

#[test]
fn parses_every_key_of_a_full_world() {
    check(
        parse(FULL),
        r#"
        now 2026-03-01T12:00:00Z bot mp-gate login mp-gate[bot] rate_limit 500 receipt_key set
        config owner.yml: "github_login: alice\n"
        repo acme/app
          commit m1 dbc2e3a parents [] author alice committer web-flow date 2026-02-01T00:00:00Z message "init"
            check test completed success app github-actions started 2026-02-01T00:01:00Z completed 2026-02-01T00:05:00Z summary -
          commit f1 f01150f parents [m1] author agent-1 committer - date 2026-02-01T22:00:00Z message "feat: add x\n\nAgent-Tool: claude-code\n"
            check test completed failure app github-actions started - completed - summary "1 failed"
            check lint in_progress - app - started - completed - summary -
            check classifier-judgment completed success app - started - completed - summary -
          branch bot-state -> m1
          branch feature/x -> f1
          branch main -> m1
          file README.md: "hello\n"
          file bot-state:state.json: "{}"
          pull #7 "Add x" by agent-1 Open merged false mergeable true head feature/x@f1 base main@m1 commits [f1] labels [ready-to-merge] created 2026-02-02T12:00:00Z merged_by - merge_commit - comments_unreadable false
            body "Adds x."
            labeled ready-to-merge by alice at 2026-02-03T00:00:00Z
            unlabeled wip by agent-1 at -
            comment 1 by alice at 2026-02-03T01:00:00Z: "looks good"
            comment 2 by - at -: "from a deleted user"
            reaction ThumbsUp by alice at 2026-02-03T02:00:00Z
            reaction Other("eyes") by bob at -
            file added src/x.rs +3 -0 from - content "fn x() {}\n"
            file renamed docs/new.md +0 -0 from docs/old.md content -
            file removed junk.txt +0 -2 from - content -
            file modified README.md +0 -0 from - content -
          pull #5 "Old" by bob Closed merged true mergeable false head gone@m1 base main@m1 commits [] labels [] created - merged_by alice merge_commit m1 comments_unreadable true
          issue #9 "Decision pending" by mp-gate[bot] Open labels [decision:pending-owner] created 2026-02-04T00:00:00Z
            body "- PR: `acme/app#7`"
            labeled decision:pending-owner by mp-gate[bot] at 2026-02-04T00:00:00Z
            comment 3 by alice at 2026-02-05T00:00:00Z: "/approve A"
            reaction ThumbsDown by alice at -
          issue #10 "Closed one" by - Closed labels [] created -
        "#,
    );
}

#[test]
fn a_typo_in_a_key_names_its_line_and_the_likely_key() {
    check(
        parse(
            "now: 2026-03-01T12:00:00Z\nbot: mp-gate\nrepos:\n  - name: acme/app\n    pulls:\n      - number: 1\n        titel: x\n",
        ),
        "error: world.yaml:7:9: unknown key `titel`, did you mean `title`?",
    );
}

#[test]
fn an_unknown_commit_id_names_its_line() {
    check(
        parse(
            "now: 2026-03-01T12:00:00Z\nbot: mp-gate\nrepos:\n  - name: acme/app\n    commits:\n      - {id: m1, message: init}\n    branches:\n      main: m1\n      feature/x: m9\n",
        ),
        "error: world.yaml:9:18: unknown commit `m9` in acme/app; list it under `commits`",
    );
}

#[test]
fn a_parent_must_be_listed_before_its_child() {
    check(
        parse(
            "now: 2026-03-01T12:00:00Z\nbot: mp-gate\nrepos:\n  - name: acme/app\n    commits:\n      - {id: m1, message: init, parents: [m2]}\n      - {id: m2, message: two}\n",
        ),
        "error: world.yaml:6:43: parent `m2` of commit `m1` must be listed before it",
    );
}

#[test]
fn an_unknown_commit_in_a_pull_names_its_line() {
    check(
        parse(
            "now: 2026-03-01T12:00:00Z\nbot: mp-gate\nrepos:\n  - name: acme/app\n    commits:\n      - {id: m1, message: init}\n    branches: {main: m1, f: m1}\n    pulls:\n      - number: 1\n        title: x\n        author: bob\n        head: f\n        commits: [m1, nope]\n",
        ),
        "error: world.yaml:13:23: unknown commit `nope` in acme/app; list it under `commits`",
    );
}

#[test]
fn a_number_shared_by_a_pull_and_an_issue_is_refused() {
    check(
        parse(
            "now: 2026-03-01T12:00:00Z\nbot: mp-gate\nrepos:\n  - name: acme/app\n    commits: [{id: m1, message: init}]\n    branches: {main: m1}\n    pulls:\n      - {number: 4, title: x, author: bob, head: main}\n    issues:\n      - {number: 4, title: y}\n",
        ),
        "error: world.yaml:10:18: number 4 is used twice in acme/app (first at line 8); issues and pull requests share one number space",
    );
}

#[test]
fn a_duplicate_pull_number_is_refused() {
    check(
        parse(
            "now: 2026-03-01T12:00:00Z\nbot: mp-gate\nrepos:\n  - name: acme/app\n    commits: [{id: m1, message: init}]\n    branches: {main: m1}\n    pulls:\n      - {number: 4, title: x, author: bob, head: main}\n      - {number: 4, title: y, author: bob, head: main}\n",
        ),
        "error: world.yaml:9:18: number 4 is used twice in acme/app (first at line 8); issues and pull requests share one number space",
    );
}

#[test]
fn commit_ids_derive_stable_shas_and_hex_ids_are_shas() {
    let repo = RepoName::parse("acme/app").expect("valid");
    let hex = "ABCDEF0123456789abcdef0123456789ABCDEF01";
    let derived = [
        commit_sha(&repo, "c1").to_string(),
        commit_sha(&repo, hex).to_string(),
    ];
    assert_eq!(
        derived,
        [
            "eea53db0cfeaed0bd4eb6808378c91b596f324c6",
            "abcdef0123456789abcdef0123456789abcdef01"
        ]
    );
    check(
        parse(&format!("now: 2026-03-01T12:00:00Z\nbot: mp-gate\nrepos:\n  - name: acme/app\n    commits:\n      - {{id: c1, message: one}}\n      - {{id: {hex}, message: two, parents: [c1]}}\n    branches: {{main: {hex}}}\n")),
        "
        now 2026-03-01T12:00:00Z bot mp-gate login mp-gate[bot] rate_limit - receipt_key -
        repo acme/app
          commit c1 eea53db parents [] author - committer - date - message \"one\"
          commit ABCDEF0123456789abcdef0123456789ABCDEF01 abcdef0 parents [c1] author - committer - date - message \"two\"
          branch main -> ABCDEF0123456789abcdef0123456789ABCDEF01
        ",
    );
}

#[test]
fn pull_defaults_come_from_branches_and_history() {
    // Main moved on (m1 -> m2) after the branch left m1, so the PR's base is the current
    // main head and its commits are those on the branch only.
    check(
        parse("now: 2026-03-01T12:00:00Z\nbot: mp-gate\nrepos:\n  - name: acme/app\n    commits:\n      - {id: m1, message: init}\n      - {id: f1, message: a, parents: [m1]}\n      - {id: m2, message: two, parents: [m1]}\n      - {id: f2, message: b, parents: [f1]}\n    branches: {main: m2, feature/x: f2}\n    pulls:\n      - {number: 3, title: x, author: bob, head: feature/x}\n      - {number: 4, title: y, author: bob, head: feature/x, base_commit: m1, merged: true}\n"),
        "
        now 2026-03-01T12:00:00Z bot mp-gate login mp-gate[bot] rate_limit - receipt_key -
        repo acme/app
          commit m1 dbc2e3a parents [] author - committer - date - message \"init\"
          commit f1 f01150f parents [m1] author - committer - date - message \"a\"
          commit m2 e23ace6 parents [m1] author - committer - date - message \"two\"
          commit f2 d77b96e parents [f1] author - committer - date - message \"b\"
          branch feature/x -> f2
          branch main -> m2
          pull #3 \"x\" by bob Open merged false mergeable true head feature/x@f2 base main@m2 commits [f1 f2] labels [] created - merged_by - merge_commit - comments_unreadable false
          pull #4 \"y\" by bob Closed merged true mergeable true head feature/x@f2 base main@m1 commits [f1 f2] labels [] created - merged_by - merge_commit - comments_unreadable false
        ",
    );
}

#[test]
fn a_head_commit_must_agree_with_its_branch() {
    check(
        parse(
            "now: 2026-03-01T12:00:00Z\nbot: mp-gate\nrepos:\n  - name: acme/app\n    commits: [{id: m1, message: init}, {id: f1, message: a, parents: [m1]}]\n    branches: {main: m1, f: f1}\n    pulls:\n      - {number: 1, title: x, author: bob, head: f, head_commit: m1}\n",
        ),
        "error: world.yaml:8:66: head_commit `m1` is not the head of branch `f` (f01150f)",
    );
}

#[test]
fn a_missing_base_branch_is_named() {
    check(
        parse(
            "now: 2026-03-01T12:00:00Z\nbot: mp-gate\nrepos:\n  - name: acme/app\n    commits: [{id: m1, message: init}]\n    branches: {f: m1}\n    pulls:\n      - {number: 1, title: x, author: bob, head: f}\n",
        ),
        "error: world.yaml:8:18: base branch `main` is not in `branches`; list it there or give `base_commit`",
    );
}

#[test]
fn bad_values_name_their_line() {
    check(
        parse(
            "now: 2026-03-01T12:00:00Z\nbot: mp-gate\nrepos:\n  - name: acme/app\n    commits:\n      - {id: m1, message: init, date: yesterday}\n",
        ),
        "error: world.yaml:6:39: invalid timestamp \"yesterday\": expected an RFC 3339 date-time",
    );
}

#[test]
fn a_bad_login_names_its_line() {
    check(
        parse(
            "now: 2026-03-01T12:00:00Z\nbot: mp-gate\nrepos:\n  - name: acme/app\n    issues:\n      - number: 1\n        title: x\n        author: not a login\n",
        ),
        "error: world.yaml:8:17: invalid login \"not a login\": expected [A-Za-z0-9][A-Za-z0-9-]{0,38}, optionally with a [bot] suffix",
    );
}

#[test]
fn yes_is_not_a_boolean() {
    check(
        parse(
            "now: 2026-03-01T12:00:00Z\nbot: mp-gate\nrepos:\n  - name: acme/app\n    commits: [{id: m1, message: init}]\n    branches: {main: m1}\n    pulls:\n      - {number: 1, title: x, author: bob, head: main, merged: yes}\n",
        ),
        "error: world.yaml:8:64: expected `true` or `false` (yes/no/on/off are not booleans here)",
    );
}

#[test]
fn an_event_needs_exactly_one_action() {
    check(
        parse(
            "now: 2026-03-01T12:00:00Z\nbot: mp-gate\nrepos:\n  - name: acme/app\n    issues:\n      - number: 1\n        title: x\n        events:\n          - {labeled: a, unlabeled: a}\n",
        ),
        "error: world.yaml:9:13: an event has exactly one of `labeled: <label>`, `unlabeled: <label>` or `base_ref_changed: <previous base>`",
    );
}

#[test]
fn a_merged_pull_is_not_open() {
    check(
        parse(
            "now: 2026-03-01T12:00:00Z\nbot: mp-gate\nrepos:\n  - name: acme/app\n    commits: [{id: m1, message: init}]\n    branches: {main: m1}\n    pulls:\n      - {number: 1, title: x, author: bob, head: main, merged: true, state: open}\n",
        ),
        "error: world.yaml:8:77: a merged pull request is closed; drop `state` or set it to `closed`",
    );
}

#[test]
fn a_running_check_has_no_conclusion() {
    check(
        parse(
            "now: 2026-03-01T12:00:00Z\nbot: mp-gate\nrepos:\n  - name: acme/app\n    commits:\n      - id: m1\n        message: init\n        checks:\n          - {name: test, status: queued, conclusion: success}\n",
        ),
        "error: world.yaml:9:13: check run `test` is not completed, so it has no conclusion",
    );
}

#[test]
fn an_unknown_conclusion_lists_the_known_ones() {
    check(
        parse(
            "now: 2026-03-01T12:00:00Z\nbot: mp-gate\nrepos:\n  - name: acme/app\n    commits:\n      - id: m1\n        message: init\n        checks: [{name: test, conclusion: sucess}]\n",
        ),
        "error: world.yaml:8:43: unknown value `sucess`, expected one of `success`, `failure`, `neutral`, `cancelled`, `skipped`, `timed_out`, `action_required`, `stale`",
    );
}

#[test]
fn a_repo_listed_twice_is_refused() {
    check(
        parse(
            "now: 2026-03-01T12:00:00Z\nbot: mp-gate\nrepos:\n  - name: acme/app\n  - name: ACME/app\n",
        ),
        "error: world.yaml:5:11: repository `acme/app` is listed twice",
    );
}

#[test]
fn missing_required_keys_are_named() {
    check(
        parse("bot: mp-gate\n"),
        "error: world.yaml:1:1: missing field `now`",
    );
}

#[test]
fn a_config_dir_is_read_beside_the_world_and_inline_files_win() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("conf");
    std::fs::create_dir(&config).expect("config dir");
    std::fs::write(config.join("owner.yml"), "github_login: alice\n").expect("owner");
    std::fs::write(config.join("env.yml"), "from: dir\n").expect("env");
    std::fs::write(config.join(".hidden"), "skipped").expect("hidden");
    std::fs::create_dir(config.join("nested")).expect("nested");
    let world = dir.path().join("world.yaml");
    std::fs::write(
        &world,
        "now: 2026-03-01T12:00:00Z\nbot: mp-gate\nconfig:\n  dir: conf\n  files:\n    env.yml: \"from: world\\n\"\n",
    )
    .expect("world");
    check(
        load_world(&world),
        r#"
        now 2026-03-01T12:00:00Z bot mp-gate login mp-gate[bot] rate_limit - receipt_key -
        config env.yml: "from: world\n"
        config owner.yml: "github_login: alice\n"
        "#,
    );
}

#[test]
fn a_config_dirs_skills_folder_is_read_whole_as_skills_entries() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("conf");
    let validators = config.join("skills").join("validators");
    std::fs::create_dir_all(&validators).expect("skills dir");
    std::fs::write(config.join("owner.yml"), "github_login: alice\n").expect("owner");
    std::fs::write(validators.join("no_todos.wat"), "(module)").expect("module");
    std::fs::write(validators.join("no_todos.md"), "# no todos").expect("contract");
    std::fs::write(validators.join(".swp"), "skipped").expect("hidden");
    let world = dir.path().join("world.yaml");
    std::fs::write(
        &world,
        "now: 2026-03-01T12:00:00Z\nbot: mp-gate\nconfig:\n  dir: conf\n",
    )
    .expect("world");
    check(
        load_world(&world),
        r##"
        now 2026-03-01T12:00:00Z bot mp-gate login mp-gate[bot] rate_limit - receipt_key -
        config owner.yml: "github_login: alice\n"
        config skills/validators/no_todos.md: "# no todos"
        config skills/validators/no_todos.wat: "(module)"
        "##,
    );
}

#[test]
fn a_missing_config_dir_is_reported_at_its_key() {
    let dir = tempfile::tempdir().expect("temp dir");
    let world = dir.path().join("world.yaml");
    std::fs::write(
        &world,
        "now: 2026-03-01T12:00:00Z\nbot: mp-gate\nconfig:\n  dir: nowhere\n",
    )
    .expect("world");
    let result = load_world(&world);
    let line = result.as_ref().err().and_then(LoadWorldError::line);
    let message = result.err().map(|e| e.to_string()).unwrap_or_default();
    assert_eq!(line, Some(4), "{message}");
    assert!(message.contains("cannot read config dir"), "{message}");
}

#[test]
fn config_dir_needs_a_file_on_disk() {
    check(
        parse("now: 2026-03-01T12:00:00Z\nbot: mp-gate\nconfig: {dir: conf}\n"),
        "error: world.yaml:3:15: `config.dir` needs a world file on disk; use `config.files`",
    );
}

#[test]
fn an_unreadable_world_file_is_a_read_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("absent.yaml");
    let err = load_world(&path).err();
    assert!(
        matches!(&err, Some(LoadWorldError::Read { file, .. }) if file.ends_with("absent.yaml")),
        "{err:?}"
    );
}

/// The example of `docs/fixtures.md`, which must stay a valid world.
fn documented_example() -> String {
    let doc = include_str!("../../../../docs/fixtures.md");
    let start = doc.find("```yaml\n").map_or(0, |i| i + "```yaml\n".len());
    let end = doc[start..].find("```").map_or(doc.len(), |i| start + i);
    doc[start..end].to_owned()
}

#[test]
fn the_documented_example_is_a_valid_world() {
    check(
        parse(&documented_example()),
        r##"
        now 2026-03-02T09:00:00Z bot jane-merge-gate login jane-merge-gate[bot] rate_limit 5000 receipt_key set
        config env.yml: "bot_app_slug: jane-merge-gate\nrequired_checks: [test]\nmerge_enabled: true\n"
        config owner.yml: "github_login: jane-doe\n"
        config projects.yml: "governance_repo: jane-doe/governance\nsupervised_repos: [jane-doe/webapp, jane-doe/governance]\n"
        repo jane-doe/webapp
          commit m1 2dbb283 parents [] author jane-doe committer jane-doe date 2026-02-01T10:00:00Z message "Initial commit"
            check test completed success app github-actions started - completed - summary -
          commit f1 2ba0b5c parents [m1] author jane-doe committer jane-doe date 2026-03-01T18:00:00Z message "Add the health endpoint\n\nAgent-Tool: claude-code\nAgent-Model: claude-opus-4\nAgent-Session: s_health-01\nAgent-Machine: laptop\nTask-Ref: Issue#12\n"
            check test completed success app github-actions started 2026-03-01T18:06:00Z completed 2026-03-01T18:09:00Z summary -
          branch agent/health -> f1
          branch main -> m1
          file README.md: "# webapp\n"
          pull #14 "Add the health endpoint" by jane-doe Open merged false mergeable true head agent/health@f1 base main@m1 commits [f1] labels [ready-to-merge] created 2026-03-01T18:05:00Z merged_by - merge_commit - comments_unreadable false
            labeled ready-to-merge by jane-doe at 2026-03-02T08:00:00Z
            file added src/health.rs +12 -0 from - content "pub fn health() {}\n"
        repo jane-doe/governance
          commit g1 4274270 parents [] author jane-doe committer jane-doe date - message "Doctrine"
          branch bot-state -> g1
          branch main -> g1
          file docs/decisions/0001-start.md: "# Start\n"
          file bot-state:bot-state/branch_supervisor_watermarks.json: "{}\n"
          issue #3 "Decision pending — PR jane-doe/webapp#9" by - Open labels [decision:pending-owner] created -
            reaction ThumbsUp by jane-doe at 2026-03-02T07:00:00Z
        "##,
    );
}

/// The drain scenario's world file is exactly what `drain_world` writes for the default
/// spec; `MP_REGENERATE=1` rewrites it.
#[test]
fn the_drain_scenario_is_the_generated_drain_world() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/scenarios/drain-four-agents/world.yaml");
    let world = super::drain::drain_world(&super::drain::DrainSpec::default());
    let text = super::world_to_yaml(&world, None);
    if std::env::var_os("MP_REGENERATE").is_some() {
        std::fs::write(&path, &text).expect("the fixture is writable");
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == text,
        "{} is not the generated drain world; regenerate it with MP_REGENERATE=1 cargo test -p mp-github-fake drain_scenario",
        path.display()
    );
    let parsed = super::parse_world("world.yaml", &on_disk, None).expect("the fixture loads");
    assert_eq!(
        parsed, world,
        "the fixture reads back as the generated world"
    );
}

#[test]
fn app_permissions_installation_and_labels_are_read_and_checked() {
    let world = parse(
        "now: 2026-03-01T12:00:00Z\nbot: mp-gate\napp_permissions: {contents: read}\nrepos:\n  - name: o/r\n    app_installed: false\n    labels: [bug, {name: x, color: 00ff00, description: d}]\n",
    )
    .expect("a valid world");
    assert_eq!(
        world.installation_permissions(),
        [("contents".to_owned(), "read".to_owned())].into()
    );
    let repo = &world.repos[0];
    assert!(!repo.app_installed);
    let labels: Vec<(&str, &str)> = repo
        .labels
        .iter()
        .map(|l| (l.name.as_str(), l.color.as_str()))
        .collect();
    assert_eq!(labels, [("bug", "ededed"), ("x", "00ff00")]);
    // Without the keys: what mp needs, installed, no labels.
    let plain = parse("now: 2026-03-01T12:00:00Z\nbot: mp-gate\nrepos:\n  - name: o/r\n")
        .expect("a valid world");
    assert_eq!(
        plain
            .installation_permissions()
            .get("issues")
            .map(String::as_str),
        Some("write")
    );
    assert!(plain.repos[0].app_installed && plain.repos[0].labels.is_empty());
    for (text, wanted) in [
        (
            "app_permissions: {contents: all}\n",
            "use read, write or admin",
        ),
        (
            "repos:\n  - name: o/r\n    labels: [a, A]\n",
            "listed twice",
        ),
        (
            "repos:\n  - name: o/r\n    labels: [{name: a, color: red}]\n",
            "six hex digits",
        ),
    ] {
        let message = parse(&format!("now: 2026-03-01T12:00:00Z\nbot: mp-gate\n{text}"))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(message.contains(wanted), "{text}: {message}");
    }
}

/// `chain: N` stands for N commits in a line: the last keeps the entry's id, the k-th
/// before it is `<id>~k`, the first has the entry's parents, and a pull request on the
/// chain lists them all, oldest first.
#[test]
fn a_chain_entry_stands_for_commits_in_a_line() {
    let world = parse(
        "now: 2026-03-01T12:00:00.900Z\nbot: mp-gate\nrepos:\n  - name: acme/app\n    commits:\n      - {id: m1, message: init}\n      - {id: f, message: \"feat: x\", parents: [m1], chain: 3, date: 2026-03-01T09:00:00.500Z}\n    branches: {main: m1, feature/x: f}\n    pulls:\n      - {number: 1, title: x, head: feature/x}\n",
    )
    .expect("valid world");
    let repo = &world.repos[0];
    let ids: Vec<(String, Vec<String>)> = repo
        .commits
        .iter()
        .map(|c| {
            let parents = c.parents.iter().map(|p| id_of(repo, p)).collect();
            (c.id.clone(), parents)
        })
        .collect();
    let expected: Vec<(String, Vec<String>)> = [
        ("m1", vec![]),
        ("f~2", vec!["m1"]),
        ("f~1", vec!["f~2"]),
        ("f", vec!["f~1"]),
    ]
    .into_iter()
    .map(|(id, parents)| {
        (
            id.to_owned(),
            parents.into_iter().map(str::to_owned).collect(),
        )
    })
    .collect();
    assert_eq!(ids, expected);
    let pull = repo.pull(mp_core::ids::PrNumber::new(1)).expect("pull");
    let listed: Vec<String> = pull.commits.iter().map(|sha| id_of(repo, sha)).collect();
    assert_eq!(listed, ["f~2", "f~1", "f"]);
    // Fractions of a second are dropped when the file is read.
    assert_eq!(world.now.to_string(), "2026-03-01T12:00:00Z");
    assert_eq!(world.now, world.now.whole_second());
    assert!(
        repo.commits
            .iter()
            .all(|c| c.date.is_none_or(|d| d == d.whole_second()))
    );
}

#[test]
fn a_chain_must_hold_at_least_one_commit() {
    check(
        parse(
            "now: 2026-03-01T12:00:00Z\nbot: mp-gate\nrepos:\n  - name: acme/app\n    commits:\n      - {id: m1, message: init, chain: 0}\n",
        ),
        "error: world.yaml:6:40: `chain` must be between 1 and 10000",
    );
}

const RENAMED: &str = "now: 2026-03-10T12:00:00Z\nbot: mp-gate\nrepos:\n  - name: acme/app\n    labels:\n      - {name: ready-to-merge, renamed_from: reviewing, created_at: 2026-03-01T09:00:00Z, updated_at: 2026-03-10T10:30:00Z}\n    issues:\n      - number: 1\n        title: x\n        labels: [reviewing]\n        events: [{labeled: reviewing, by: alice, at: 2026-03-10T10:00:00Z}]\n";

#[test]
fn a_renamed_label_shows_its_new_name_everywhere_and_its_edit_time() {
    let world = parse(RENAMED).expect("the world parses");
    let repo = &world.repos[0];
    let issue = &repo.issues[0];
    assert_eq!(issue.labels, ["ready-to-merge"]);
    // The earlier event names the label as it is now: the case worse for mp.
    assert_eq!(issue.events[0].label, "ready-to-merge");
    let label = repo
        .all_labels()
        .into_iter()
        .find(|l| l.name == "ready-to-merge")
        .expect("the renamed label is defined");
    let record = label.record();
    assert_eq!(
        record.created_at.map(|t| t.to_string()).as_deref(),
        Some("2026-03-01T09:00:00Z")
    );
    assert_eq!(
        record.updated_at.map(|t| t.to_string()).as_deref(),
        Some("2026-03-10T10:30:00Z")
    );
    assert!(!repo.all_labels().iter().any(|l| l.name == "reviewing"));
}

#[test]
fn a_label_without_times_was_created_at_the_epoch_and_never_edited() {
    let world = parse(
        "now: 2026-03-10T12:00:00Z\nbot: mp-gate\nrepos:\n  - name: acme/app\n    labels: [ready-to-merge]\n",
    )
    .expect("the world parses");
    let record = world.repos[0].labels[0].record();
    assert_eq!(record.created_at, record.updated_at);
    assert_eq!(record.created_at.map(|t| t.unix_seconds()), Some(0));
}

#[test]
fn a_rename_needs_its_time_and_a_free_new_name() {
    check(
        parse(&RENAMED.replace(", updated_at: 2026-03-10T10:30:00Z", "")),
        "error: world.yaml:6:9: label `ready-to-merge` has `renamed_from` but no `updated_at` (the time of the rename)",
    );
    check(
        parse(&RENAMED.replace("labels: [reviewing]", "labels: [reviewing, ready-to-merge]")),
        "error: world.yaml:6:9: label `reviewing` cannot be renamed `ready-to-merge`: no pull request or issue carries `reviewing` and it is not defined, or another label is named `ready-to-merge`",
    );
    check(
        parse(&RENAMED.replace(
            "created_at: 2026-03-01T09:00:00Z",
            "created_at: 2026-03-11T09:00:00Z",
        )),
        "error: world.yaml:6:9: label `ready-to-merge` is updated before it is created",
    );
}

#[test]
fn branch_rules_are_github_s_rule_types() {
    let world = parse(
        "now: 2026-03-01T12:00:00Z\nbot: mp-gate\nrepos:\n  - name: acme/app\n    branch_rules:\n      main: [deletion, non_fast_forward, pull_request]\n",
    )
    .expect("valid world");
    assert_eq!(
        world.repos[0].branch_rules.get("main").map(Vec::as_slice),
        Some(
            ["deletion", "non_fast_forward", "pull_request"]
                .map(str::to_owned)
                .as_slice()
        )
    );
    let refused = parse(
        "now: 2026-03-01T12:00:00Z\nbot: mp-gate\nrepos:\n  - name: acme/app\n    branch_rules:\n      main: [no_force_push]\n",
    )
    .expect_err("an unknown rule type");
    assert!(
        refused
            .to_string()
            .contains("unknown rule type `no_force_push`"),
        "{refused}"
    );
}

#[test]
fn a_merge_queue_declares_the_rule_and_its_parameters_within_github_s_ranges() {
    let world = parse(
        "now: 2026-03-01T12:00:00Z\nbot: mp-gate\nrepos:\n  - name: acme/app\n    branch_rules:\n      main: [deletion]\n    merge_queues:\n      main: {merge_method: SQUASH, max_entries_to_build: 10}\n      release: {}\n",
    )
    .expect("valid world");
    let repo = &world.repos[0];
    assert_eq!(
        repo.branch_rules.get("main").map(Vec::as_slice),
        Some(["deletion", "merge_queue"].map(str::to_owned).as_slice())
    );
    assert_eq!(
        repo.branch_rules.get("release").map(Vec::as_slice),
        Some(["merge_queue"].map(str::to_owned).as_slice())
    );
    let main = repo.merge_queues.get("main").expect("main's queue");
    assert_eq!(
        (main.merge_method.as_str(), main.max_entries_to_build),
        ("SQUASH", 10)
    );
    assert_eq!(
        (
            main.grouping_strategy.as_str(),
            main.check_response_timeout_minutes
        ),
        ("ALLGREEN", 60),
        "the defaults where the world leaves a parameter out"
    );
    // What the world writer writes reads back the same.
    let again = parse(&super::world_to_yaml(&world, None)).expect("the written world parses");
    assert_eq!(again.repos[0].merge_queues, repo.merge_queues);
    assert_eq!(again.repos[0].branch_rules, repo.branch_rules);
    for (bad, says) in [
        (
            "{check_response_timeout_minutes: 0}",
            "check_response_timeout_minutes must be 1 to 360, found 0",
        ),
        (
            "{grouping_strategy: FIFO}",
            "unknown grouping_strategy `FIFO`",
        ),
        (
            "{max_entries_to_merge: 101}",
            "max_entries_to_merge must be 0 to 100",
        ),
    ] {
        let refused = parse(&format!(
            "now: 2026-03-01T12:00:00Z\nbot: mp-gate\nrepos:\n  - name: acme/app\n    merge_queues:\n      main: {bad}\n"
        ))
        .expect_err("out of GitHub's range");
        assert!(refused.to_string().contains(says), "{refused}");
    }
}

#[test]
fn environments_name_their_branches_and_reviewers() {
    let world = parse(
        "now: 2026-03-01T12:00:00Z\nbot: mp-gate\nrepos:\n  - name: acme/gov\n    environments:\n      - {name: mp, reviewers: [alice], branches: [main, 'tag:v*']}\n      - {name: open}\n      - {name: prot, branches: protected}\n",
    )
    .expect("valid world");
    let environments = &world.repos[0].environments;
    assert_eq!(environments.len(), 3);
    assert_eq!(environments[0].reviewers, ["alice"]);
    assert_eq!(
        environments[0].branches,
        crate::world::EnvironmentBranches::Selected(vec!["main".to_owned(), "tag:v*".to_owned()])
    );
    assert_eq!(
        environments[1].branches,
        crate::world::EnvironmentBranches::Any
    );
    assert_eq!(
        environments[2].branches,
        crate::world::EnvironmentBranches::Protected
    );
    let refused = parse(
        "now: 2026-03-01T12:00:00Z\nbot: mp-gate\nrepos:\n  - name: acme/gov\n    environments:\n      - {name: mp, branches: everything}\n",
    )
    .expect_err("an unknown keyword is refused")
    .to_string();
    assert!(
        refused.contains("expected `any`, `protected` or a list of patterns"),
        "{refused}"
    );
}

/// The failing places are spread over the agents and over each agent's pull requests.
#[test]
fn failing_places_are_spread_over_agents() {
    use super::drain::spread;
    assert_eq!(spread(10, 5, 5), [5, 16, 27, 38, 49]);
    assert_eq!(spread(4, 3, 2), [3, 10]);
    assert_eq!(spread(2, 2, 4), [0, 1, 2, 3]);
    assert!(spread(3, 2, 0).is_empty());
}

/// The tested-tree proof fails on a move of `main` that no staging build stands for, and
/// on a staging commit whose check had not passed when `main` moved to it.
#[test]
fn the_tested_tree_proof_names_an_untested_move_of_main() {
    use mp_core::context::{CheckConclusion, CheckStatus, RefUpdateKind};

    use super::drain::{DRAIN_REPO, DrainSpec, drain_world, untested_moves};
    let mut world = drain_world(&DrainSpec {
        queue: true,
        ..DrainSpec::default()
    });
    let start = world.now;
    let bot = world.bot_login().expect("the drain bot's login");
    let name = RepoName::parse(DRAIN_REPO).expect("a valid name");
    let repo = &mut world.repos[0];
    let head = repo.pulls[0].head_sha.clone();
    let at = start.plus_seconds(60);
    repo.move_branch(
        "main",
        Some(head.clone()),
        RefUpdateKind::Push,
        bot.clone(),
        at,
    );
    let proof = untested_moves(&world, &name, "main", start);
    assert_eq!(proof.moves, 1);
    assert_eq!(proof.untested.len(), 1, "{proof:?}");
    assert!(
        proof.untested[0].contains("not a commit the App staged before"),
        "{proof:?}"
    );

    // Staged by the App, but its check completes only after the move.
    let repo = &mut world.repos[0];
    repo.move_branch(
        "mp-queue/main",
        Some(head.clone()),
        RefUpdateKind::BranchCreation,
        bot,
        start,
    );
    let commit = repo
        .commits
        .iter_mut()
        .find(|c| c.sha == head)
        .expect("the head commit");
    commit.checks = vec![CheckRun {
        id: None,
        name: "test".to_owned(),
        status: CheckStatus::Completed,
        conclusion: Some(CheckConclusion::Success),
        started_at: Some(start),
        completed_at: Some(at.plus_seconds(1)),
        app_slug: Some("github-actions".to_owned()),
        output_summary: None,
    }];
    let proof = untested_moves(&world, &name, "main", start);
    assert_eq!(proof.untested.len(), 1, "{proof:?}");
    assert!(
        proof.untested[0].contains("`test` by github-actions had not passed on it before"),
        "{proof:?}"
    );

    // Completed green before the move: proven.
    world.repos[0]
        .commits
        .iter_mut()
        .find(|c| c.sha == head)
        .expect("the head commit")
        .checks[0]
        .completed_at = Some(at);
    let proof = untested_moves(&world, &name, "main", start);
    assert!(proof.untested.is_empty(), "{proof:?}");
}
