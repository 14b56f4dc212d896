//! The JSON a skill receives: a read-only rendering of the pull-request or commit context.
//!
//! The shape is part of the ABI (`docs/skills-abi.md`); fields are only ever added.

use mp_core::context::{CommitContext, LabelAction, PrContext, PrState};
use serde_json::{Value, json};

/// `{"pr": {...}}`: the input of validators and classifier rules.
pub fn pr_json(pr: &PrContext) -> Value {
    json!({ "pr": pr_value(pr) })
}

/// `{"commit": {...}}`: the input of branch hooks.
pub fn commit_json(commit: &CommitContext) -> Value {
    json!({ "commit": commit_value(commit) })
}

fn pr_value(pr: &PrContext) -> Value {
    json!({
        "repo": pr.repo.as_str(),
        "number": pr.number.get(),
        "title": pr.title,
        "body": pr.body,
        "head_sha": pr.head_sha.as_str(),
        "head_ref": pr.head_ref,
        "base_sha": pr.base_sha.as_str(),
        "base_ref": pr.base_ref,
        "state": match pr.state {
            PrState::Open => "open",
            PrState::Closed => "closed",
        },
        "merged": pr.merged,
        "labels": pr.labels,
        "author": pr.author.as_str(),
        "commits": pr.commits.iter().map(commit_value).collect::<Vec<_>>(),
        "files": pr.files.iter().map(|f| json!({
            "path": f.path,
            "status": f.status.as_str(),
            "additions": f.additions,
            "deletions": f.deletions,
            "previous_filename": f.previous_filename,
        })).collect::<Vec<_>>(),
        "check_runs": pr.check_runs.iter().map(|c| json!({
            "name": c.name,
            "status": c.status.as_str(),
            "conclusion": c.conclusion.as_ref().map(|c| c.as_str()),
            "started_at": c.started_at.map(|t| t.to_string()),
            "completed_at": c.completed_at.map(|t| t.to_string()),
            "app_slug": c.app_slug,
            "output_summary": c.output_summary,
        })).collect::<Vec<_>>(),
        // Base changes are timeline events of the pull request, not label events: a skill
        // sees only labels added and removed.
        "label_events": pr.label_events.iter().filter_map(|e| Some(json!({
            "action": match e.action {
                LabelAction::Labeled => "labeled",
                LabelAction::Unlabeled => "unlabeled",
                LabelAction::BaseChanged => return None,
            },
            "label": e.label,
            "actor": e.actor.as_ref().map(|a| a.as_str()),
            "at": e.at.map(|t| t.to_string()),
        }))).collect::<Vec<_>>(),
    })
}

fn commit_value(commit: &CommitContext) -> Value {
    json!({
        "sha": commit.sha.as_str(),
        "subject": commit.subject,
        "body": commit.body,
        "trailers": commit
            .trailers
            .iter()
            .map(|(k, v)| json!([k, v]))
            .collect::<Vec<_>>(),
        "author_login": commit.author_login.as_ref().map(|l| l.as_str()),
        "committer_login": commit.committer_login.as_ref().map(|l| l.as_str()),
        "parents": commit.parents.iter().map(|p| p.as_str()).collect::<Vec<_>>(),
        "committed_at": commit.committed_at.map(|t| t.to_string()),
    })
}
