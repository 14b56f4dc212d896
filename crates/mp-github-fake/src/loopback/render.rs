//! GitHub's JSON shapes for the world's values: users, labels, pull requests, issues,
//! commits, files, check runs, comments, reactions and timeline events.
//!
//! Ids GitHub would assign and the world does not keep are derived from the item's name,
//! so the same item always gets the same id.

use mp_core::context::{
    CheckConclusion, CheckRun, CheckStatus, Comment, LabelAction, LabelEvent, PrState, Reaction,
    ReactionKind, RefUpdate,
};
use mp_core::ids::{CommitSha, Login, PrNumber, RepoName, Timestamp};
use mp_core::port::{Issue, IssueState};
use serde_json::{Value, json};
use sha1::{Digest, Sha1};

use super::boilerplate;
use crate::world::{Commit, IssueRecord, Pull, PullFile, Repo, WORKFLOW_EVENT, WorkflowRun};

pub(super) use crate::world::{check_run_id, stable_id};

fn node_id(prefix: &str, id: u64) -> String {
    format!("{prefix}_loopback{id}")
}

/// A time as GitHub writes it, or `null` when the world does not know it.
pub(super) fn time(at: Option<Timestamp>) -> Value {
    at.map_or(Value::Null, |at| Value::String(at.to_string()))
}

/// A user object.
pub(super) fn user(base: &str, login: &str) -> Value {
    let id = stable_id("user", login);
    let kind = if login.ends_with("[bot]") {
        "Bot"
    } else {
        "User"
    };
    let mut value = json!({
        "login": login,
        "id": id,
        "node_id": node_id("U", id),
        "type": kind,
        "site_admin": false,
        "url": boilerplate::user_url(base, login),
        "html_url": boilerplate::user_html_url(login),
    });
    boilerplate::add_missing(&mut value, boilerplate::user(base, login, id));
    value
}

/// A user object, or `null`.
pub(super) fn user_or_null(base: &str, login: Option<&Login>) -> Value {
    login.map_or(Value::Null, |login| user(base, login.as_str()))
}

/// A label object.
pub(super) fn label(base: &str, repo: &RepoName, name: &str) -> Value {
    let id = stable_id("label", &format!("{repo}:{name}"));
    json!({
        "id": id,
        "node_id": node_id("LA", id),
        "url": format!("{base}/repos/{repo}/labels/{name}"),
        "name": name,
        "color": "ededed",
        "default": false,
        // No description: GitHub's pull request listing describes a string here.
        "description": "",
    })
}

fn labels(base: &str, repo: &RepoName, names: &[String]) -> Value {
    Value::Array(names.iter().map(|n| label(base, repo, n)).collect())
}

/// A repository object.
pub(super) fn repository(base: &str, repo: &RepoName, default_branch: &str) -> Value {
    let id = stable_id("repo", repo.as_str());
    let mut value = json!({
        "id": id,
        "node_id": node_id("R", id),
        "name": repo.name(),
        "full_name": repo.as_str(),
        "private": false,
        "owner": user(base, repo.owner()),
        "url": format!("{base}/repos/{repo}"),
        "html_url": format!("https://github.com/{repo}"),
        "default_branch": default_branch,
    });
    boilerplate::add_missing(&mut value, boilerplate::repository(base, repo));
    value
}

fn branch_end(
    base: &str,
    (repo, default_branch): (&RepoName, &str),
    git_ref: &str,
    sha: &CommitSha,
) -> Value {
    json!({
        "label": format!("{}:{git_ref}", repo.owner()),
        "ref": git_ref,
        "sha": sha.as_str(),
        "user": user(base, repo.owner()),
        "repo": repository(base, repo, default_branch),
    })
}

/// When a merged pull request was merged: the time the world gives, else its merge
/// commit's date, else the world's clock.
fn merged_at(repo: &Repo, pull: &Pull, now: Timestamp) -> Option<Timestamp> {
    if !pull.merged {
        return None;
    }
    if pull.merged_at.is_some() {
        return pull.merged_at;
    }
    let date = pull
        .merge_commit
        .as_ref()
        .and_then(|sha| repo.commit(sha))
        .and_then(|c| c.date);
    Some(date.unwrap_or(now))
}

/// When a pull request was opened: the world's time, else its head commit's date, else
/// [`boilerplate::CREATED_AT`]. GitHub always sends one, and the core never reads it (an
/// issue's creation time, which the inbox lifecycle reads, stays `null` when unknown).
pub(super) fn pull_created_at(repo: &Repo, pull: &Pull) -> Option<Timestamp> {
    pull.created_at
        .or_else(|| repo.commit(&pull.head_sha).and_then(|c| c.date))
        .or_else(|| Timestamp::parse(boilerplate::CREATED_AT).ok())
}

fn state_name(state: PrState) -> &'static str {
    match state {
        PrState::Open => "open",
        PrState::Closed => "closed",
    }
}

/// A pull request; `full` adds what only `GET /pulls/{n}` sends (`merged`, `mergeable`,
/// `merged_by`, counts).
pub(super) fn pull(base: &str, repo: &Repo, pull: &Pull, now: Timestamp, full: bool) -> Value {
    let name = &repo.name;
    let id = stable_id("pull", &format!("{name}#{}", pull.number));
    let merged_at = merged_at(repo, pull, now);
    let closed_at = match pull.state {
        PrState::Open => None,
        PrState::Closed => Some(merged_at.unwrap_or(now)),
    };
    let number = pull.number;
    let mut value = json!({
        "url": format!("{base}/repos/{name}/pulls/{number}"),
        "id": id,
        "node_id": node_id("PR", id),
        "html_url": format!("https://github.com/{name}/pull/{number}"),
        "issue_url": format!("{base}/repos/{name}/issues/{number}"),
        "number": number.get(),
        "state": state_name(pull.state),
        "locked": false,
        "title": pull.title,
        // A deleted account is GitHub's `ghost` user (`Login::ghost`); the description
        // has no `null` here.
        "user": user(base, pull.author.as_str()),
        "body": body_or_null(&pull.body),
        "labels": labels(base, name, &pull.labels),
        "created_at": time(pull_created_at(repo, pull)),
        "updated_at": time(pull_created_at(repo, pull)),
        "closed_at": time(closed_at),
        "merged_at": time(merged_at),
        "merge_commit_sha": pull.merge_commit.as_ref().map(CommitSha::as_str),
        "draft": false,
        // A fork's default branch is not in the world: `main`.
        "head": branch_end(
            base,
            pull.head_repo.as_ref().map_or((name, repo.default_branch.as_str()), |fork| (fork, "main")),
            &pull.head_ref,
            &pull.head_sha
        ),
        "base": branch_end(base, (name, &repo.default_branch), &pull.base_ref, &pull.base_sha),
        "author_association": "CONTRIBUTOR",
    });
    boilerplate::add_missing(
        &mut value,
        boilerplate::pull(base, name, number.get(), pull.head_sha.as_str()),
    );
    if full {
        boilerplate::add_missing(&mut value, boilerplate::full_pull());
    }
    if full && let Value::Object(map) = &mut value {
        let additions: u64 = pull.files.iter().map(|f| f.change.additions).sum();
        let deletions: u64 = pull.files.iter().map(|f| f.change.deletions).sum();
        let extra = json!({
            "merged": pull.merged,
            "mergeable": pull.mergeable,
            "mergeable_state": if pull.mergeable { "clean" } else { "dirty" },
            "merged_by": user_or_null(base, pull.merged_by.as_ref()),
            "comments": pull.comments.len(),
            "review_comments": 0,
            "commits": pull.commits.len(),
            "additions": additions,
            "deletions": deletions,
            "changed_files": pull.files.len(),
        });
        if let Value::Object(extra) = extra {
            map.extend(extra);
        }
    }
    value
}

fn body_or_null(body: &str) -> Value {
    if body.is_empty() {
        Value::Null
    } else {
        Value::String(body.to_owned())
    }
}

/// An issue as the issues API lists it (pull requests carry a `pull_request` key).
pub(super) fn issue(base: &str, issue: &Issue, comments: usize) -> Value {
    let name = &issue.repo;
    let number = issue.number;
    let id = stable_id("issue", &format!("{name}#{number}"));
    let state = match issue.state {
        IssueState::Open => "open",
        IssueState::Closed => "closed",
    };
    let mut value = json!({
        "url": format!("{base}/repos/{name}/issues/{number}"),
        "id": id,
        "node_id": node_id("I", id),
        "html_url": format!("https://github.com/{name}/issues/{number}"),
        "number": number.get(),
        "title": issue.title,
        "user": user_or_null(base, issue.author.as_ref()),
        "labels": labels(base, name, &issue.labels),
        "state": state,
        "locked": false,
        "comments": comments,
        "created_at": time(issue.created_at),
        "updated_at": time(issue.created_at),
        "closed_at": Value::Null,
        "body": body_or_null(&issue.body),
        "author_association": "NONE",
    });
    boilerplate::add_missing(&mut value, boilerplate::issue(base, name, number.get()));
    if issue.is_pull_request
        && let Value::Object(map) = &mut value
    {
        map.insert(
            "pull_request".to_owned(),
            json!({
                "url": format!("{base}/repos/{name}/pulls/{number}"),
                "html_url": format!("https://github.com/{name}/pull/{number}"),
                "diff_url": format!("https://github.com/{name}/pull/{number}.diff"),
                "patch_url": format!("https://github.com/{name}/pull/{number}.patch"),
            }),
        );
    }
    value
}

/// The issue or pull request numbered `number` as the issues API shows it, with its
/// comment count.
pub(super) fn thread_issue(repo: &Repo, number: PrNumber) -> Option<(Issue, usize)> {
    if let Some(pull) = repo.pull(number) {
        let state = match pull.state {
            PrState::Open => IssueState::Open,
            PrState::Closed => IssueState::Closed,
        };
        let issue = Issue {
            repo: repo.name.clone(),
            number,
            title: pull.title.clone(),
            body: pull.body.clone(),
            state,
            labels: pull.labels.clone(),
            author: Some(pull.author.clone()),
            created_at: pull_created_at(repo, pull),
            is_pull_request: true,
        };
        return Some((issue, pull.comments.len()));
    }
    let record: &IssueRecord = repo.issue(number)?;
    let issue = Issue {
        repo: repo.name.clone(),
        number,
        title: record.title.clone(),
        body: record.body.clone(),
        state: record.state,
        labels: record.labels.clone(),
        author: record.author.clone(),
        created_at: record.created_at,
        is_pull_request: false,
    };
    Some((issue, record.comments.len()))
}

/// Current labels of the issue or pull request numbered `number`.
pub(super) fn thread_labels(repo: &Repo, number: PrNumber) -> Option<Vec<String>> {
    repo.pull(number)
        .map(|p| p.labels.clone())
        .or_else(|| repo.issue(number).map(|i| i.labels.clone()))
}

fn git_person(login: Option<&Login>, date: Option<Timestamp>) -> Value {
    let (name, email) = match login {
        Some(login) => {
            let name = login.as_str().to_owned();
            let email = format!("{}@users.noreply.github.com", login.as_str());
            (name, email)
        }
        None => ("unknown".to_owned(), "unknown@example.invalid".to_owned()),
    };
    json!({ "name": name, "email": email, "date": time(date) })
}

/// The SHA given to commit `sha`'s tree (the world keeps no trees).
pub(super) fn tree_sha(sha: &str) -> String {
    hex::encode(Sha1::digest(format!("tree of {sha}").as_bytes()))
}

/// A commit object with its full message.
pub(super) fn commit(base: &str, repo: &RepoName, commit: &Commit) -> Value {
    let sha = commit.sha.as_str();
    let parents: Vec<Value> = commit
        .parents
        .iter()
        .map(|p| {
            json!({
                "sha": p.as_str(),
                "url": format!("{base}/repos/{repo}/commits/{p}"),
                "html_url": format!("https://github.com/{repo}/commit/{p}"),
            })
        })
        .collect();
    let tree = tree_sha(sha);
    let (comments_url, git_url) = boilerplate::commit(base, repo, sha);
    json!({
        "sha": sha,
        "node_id": node_id("C", stable_id("commit", sha)),
        "url": format!("{base}/repos/{repo}/commits/{sha}"),
        "html_url": format!("https://github.com/{repo}/commit/{sha}"),
        "comments_url": comments_url,
        "commit": {
            "url": git_url,
            "author": git_person(commit.author.as_ref(), commit.date),
            "committer": git_person(commit.committer.as_ref(), commit.date),
            "message": commit.message,
            "tree": { "sha": tree, "url": format!("{base}/repos/{repo}/git/trees/{tree}") },
            "comment_count": 0,
        },
        "author": user_or_null(base, commit.author.as_ref()),
        "committer": user_or_null(base, commit.committer.as_ref()),
        "parents": parents,
    })
}

/// One changed file of a pull request whose head is `head_sha`.
pub(super) fn pull_file(
    base: &str,
    repo: &RepoName,
    head_sha: &CommitSha,
    file: &PullFile,
) -> Value {
    let change = &file.change;
    let sha = file
        .content
        .as_ref()
        .map(|c| mp_core::branch::drift::blob_sha(c.as_bytes()));
    let mut value = json!({
        "sha": sha,
        "filename": change.path,
        "status": change.status.as_str(),
        "additions": change.additions,
        "deletions": change.deletions,
        "changes": change.additions + change.deletions,
        "contents_url": format!(
            "{base}/repos/{repo}/contents/{}?ref={head_sha}",
            boilerplate::url_path(&change.path)
        ),
    });
    boilerplate::add_missing(
        &mut value,
        boilerplate::pull_file(repo, head_sha.as_str(), &change.path),
    );
    if let (Some(previous), Value::Object(map)) = (&change.previous_filename, &mut value) {
        map.insert("previous_filename".to_owned(), json!(previous));
    }
    value
}

/// One check run on `head_sha`; `index` is its position on the commit.
pub(super) fn check_run(
    base: &str,
    repo: &RepoName,
    head_sha: &CommitSha,
    index: usize,
    run: &CheckRun,
) -> Value {
    let id = check_run_id(repo, head_sha, index);
    let app = run
        .app_slug
        .as_ref()
        .map(|slug| boilerplate::app(slug, stable_id("app", slug), user(base, repo.owner())));
    // GitHub keeps one check suite per App and commit.
    let app_slug = run.app_slug.as_deref().unwrap_or_default();
    let suite = stable_id("suite", &format!("{repo}@{head_sha}/{app_slug}"));
    let mut value = json!({
        "id": id,
        "node_id": node_id("CR", id),
        "name": run.name,
        "head_sha": head_sha.as_str(),
        "status": run.status.as_str(),
        "conclusion": run.conclusion.as_ref().map(|c| c.as_str().to_owned()),
        "started_at": time(run.started_at),
        "completed_at": time(run.completed_at),
        "url": format!("{base}/repos/{repo}/check-runs/{id}"),
        "app": app,
        "output": {
            "title": Value::Null,
            "summary": run.output_summary,
            "text": Value::Null,
            "annotations_count": 0,
            "annotations_url": format!("{base}/repos/{repo}/check-runs/{id}/annotations"),
        },
    });
    boilerplate::add_missing(&mut value, boilerplate::check_run(repo, id, suite));
    value
}

/// A comment; `number` is the issue or pull request it is on, when known.
pub(super) fn comment(
    base: &str,
    repo: &RepoName,
    number: Option<PrNumber>,
    comment: &Comment,
) -> Value {
    let id = comment.id.get();
    let issue_url = number.map(|n| format!("{base}/repos/{repo}/issues/{n}"));
    let html_url =
        number.map(|n| format!("https://github.com/{repo}/issues/{n}#issuecomment-{id}"));
    json!({
        "id": id,
        "node_id": node_id("IC", id),
        "url": format!("{base}/repos/{repo}/issues/comments/{id}"),
        "html_url": html_url,
        "issue_url": issue_url,
        "body": comment.body,
        "user": user_or_null(base, comment.author.as_ref()),
        "created_at": time(comment.created_at),
        "updated_at": time(comment.updated_at.or(comment.created_at)),
        "author_association": "NONE",
    })
}

/// A reaction; `index` is its position on the issue.
pub(super) fn reaction(
    base: &str,
    repo: &RepoName,
    number: PrNumber,
    index: usize,
    reaction: &Reaction,
) -> Value {
    let id = stable_id("reaction", &format!("{repo}#{number}/{index}"));
    let content = match &reaction.kind {
        ReactionKind::ThumbsUp => "+1",
        ReactionKind::ThumbsDown => "-1",
        ReactionKind::Other(other) => other.as_str(),
    };
    json!({
        "id": id,
        "node_id": node_id("REA", id),
        "user": user(base, reaction.user.as_str()),
        "content": content,
        "created_at": time(reaction.created_at),
    })
}

/// One entry of a repository's activity log; `index` is its position in the list.
pub(super) fn activity(
    base: &str,
    repo: &RepoName,
    git_ref: &str,
    index: usize,
    update: &RefUpdate,
) -> Value {
    const ZERO: &str = "0000000000000000000000000000000000000000";
    let id = stable_id("activity", &format!("{repo}/{git_ref}/{index}"));
    json!({
        "id": id,
        "node_id": node_id("RA", id),
        "before": update.before.as_ref().map_or(ZERO, CommitSha::as_str),
        "after": update.after.as_ref().map_or(ZERO, CommitSha::as_str),
        "ref": git_ref,
        "timestamp": time(update.at),
        "activity_type": update.kind.as_github(),
        "actor": user_or_null(base, update.actor.as_ref()),
    })
}

/// A `labeled` / `unlabeled` timeline event, or a `base_ref_changed` one (which names no
/// label); `index` is its position on the timeline.
pub(super) fn label_event(
    base: &str,
    repo: &RepoName,
    number: PrNumber,
    index: usize,
    event: &LabelEvent,
) -> Value {
    let id = stable_id("event", &format!("{repo}#{number}/{index}"));
    let name = match event.action {
        LabelAction::Labeled => "labeled",
        LabelAction::Unlabeled => "unlabeled",
        LabelAction::BaseChanged => "base_ref_changed",
    };
    let mut value = json!({
        "id": id,
        "node_id": node_id("LE", id),
        "url": format!("{base}/repos/{repo}/issues/events/{id}"),
        "actor": user_or_null(base, event.actor.as_ref()),
        "event": name,
        "commit_id": Value::Null,
        "created_at": time(event.at),
    });
    if event.action != LabelAction::BaseChanged {
        value["label"] = json!({ "name": event.label, "color": "ededed" });
    }
    boilerplate::add_missing(&mut value, boilerplate::label_event());
    value
}

/// One workflow run of the world on `commit` (decisions/0047): its status and conclusion
/// from its jobs' check runs, its times from theirs (the commit's date when they have none),
/// `head_branch` the branch whose tip the commit is, when one is.
pub(super) fn workflow_run(
    base: &str,
    repo: &Repo,
    commit: &Commit,
    run: &WorkflowRun,
    now: Timestamp,
) -> Value {
    let name = &repo.name;
    let id = run.id;
    let api = format!("{base}/repos/{name}/actions/runs/{id}");
    let jobs: Vec<&CheckRun> = run
        .jobs
        .iter()
        .filter_map(|i| commit.checks.get(*i))
        .collect();
    let done = jobs.iter().all(|job| job.status == CheckStatus::Completed);
    let (status, conclusion) = if !done {
        ("in_progress", Value::Null)
    } else if jobs.iter().all(|job| {
        job.conclusion.as_ref().is_some_and(|c| {
            matches!(
                c,
                CheckConclusion::Success | CheckConclusion::Neutral | CheckConclusion::Skipped
            )
        })
    }) {
        ("completed", json!("success"))
    } else {
        ("completed", json!("failure"))
    };
    let created = jobs
        .iter()
        .filter_map(|job| job.started_at)
        .min()
        .or(commit.date)
        .unwrap_or(now);
    let updated = jobs
        .iter()
        .filter_map(|job| job.completed_at.or(job.started_at))
        .max()
        .unwrap_or(created);
    let head_branch = repo
        .branches
        .iter()
        .find(|(_, tip)| **tip == commit.sha)
        .map(|(branch, _)| branch.clone());
    let workflow_id = stable_id("workflow", &format!("{name}/{}", run.path));
    let suite = stable_id(
        "workflow-suite",
        &format!("{name}@{}/{}", commit.sha, run.path),
    );
    let repository = repository(base, name, &repo.default_branch);
    json!({
        "id": id,
        "node_id": node_id("WFR", id),
        "name": run.path.rsplit('/').next().unwrap_or_default(),
        "head_branch": head_branch,
        "head_sha": commit.sha.as_str(),
        "path": run.path,
        "display_title": commit.message.lines().next().unwrap_or_default(),
        "run_number": 1,
        "run_attempt": 1,
        "event": WORKFLOW_EVENT,
        "status": status,
        "conclusion": conclusion,
        "workflow_id": workflow_id,
        "check_suite_id": suite,
        "check_suite_node_id": node_id("CS", suite),
        "url": api,
        "html_url": format!("https://github.com/{name}/actions/runs/{id}"),
        "created_at": time(Some(created)),
        "updated_at": time(Some(updated)),
        "run_started_at": time(Some(created)),
        "jobs_url": format!("{api}/jobs"),
        "logs_url": format!("{api}/logs"),
        "check_suite_url": format!("{base}/repos/{name}/check-suites/{suite}"),
        "artifacts_url": format!("{api}/artifacts"),
        "cancel_url": format!("{api}/cancel"),
        "rerun_url": format!("{api}/rerun"),
        "workflow_url": format!("{base}/repos/{name}/actions/workflows/{workflow_id}"),
        "pull_requests": [],
        "head_commit": Value::Null,
        "repository": repository,
        "head_repository": repository,
    })
}

/// Job `index` of the commit's checks, a job of workflow run `run`: its id is its check
/// run's, and `check_run_url` names that run.
pub(super) fn workflow_job(
    base: &str,
    repo: &RepoName,
    commit: &Commit,
    run: &WorkflowRun,
    index: usize,
    now: Timestamp,
) -> Option<Value> {
    let check = commit.checks.get(index)?;
    let id = check_run_id(repo, &commit.sha, index);
    let started = check.started_at.or(commit.date).unwrap_or(now);
    let conclusion = check.conclusion.as_ref().map(|c| match c {
        CheckConclusion::Stale | CheckConclusion::Other(_) => "cancelled".to_owned(),
        other => other.as_str().to_owned(),
    });
    let conclusion = if check.status == CheckStatus::Completed {
        conclusion
    } else {
        None
    };
    Some(json!({
        "id": id,
        "node_id": node_id("CR", id),
        "run_id": run.id,
        "run_url": format!("{base}/repos/{repo}/actions/runs/{}", run.id),
        "run_attempt": 1,
        "head_sha": commit.sha.as_str(),
        "head_branch": Value::Null,
        "workflow_name": run.path.rsplit('/').next().unwrap_or_default(),
        "name": check.name,
        "url": format!("{base}/repos/{repo}/actions/jobs/{id}"),
        "html_url": format!("https://github.com/{repo}/actions/runs/{}/job/{id}", run.id),
        "status": check.status.as_str(),
        "conclusion": conclusion,
        "created_at": time(Some(started)),
        "started_at": time(Some(started)),
        "completed_at": time(check.completed_at),
        "check_run_url": format!("{base}/repos/{repo}/check-runs/{id}"),
        "labels": ["ubuntu-latest"],
        "runner_id": Value::Null,
        "runner_name": Value::Null,
        "runner_group_id": Value::Null,
        "runner_group_name": Value::Null,
        "steps": [],
    }))
}
