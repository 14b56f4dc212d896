//! Writing a [`World`] back as a world file (`docs/fixtures.md`), so that generated or
//! mutated worlds can be saved and replayed with `mp tick --world`.
//!
//! Every string is written double-quoted (or, for multi-line text that needs no escape, as
//! a literal block), so no value is ever read back as a number or a boolean. Commits are
//! referenced by their id when the id stands for their SHA, else by the SHA itself, and a
//! pull request's commits, head and base commits are always written out, so nothing depends
//! on the loader's defaults. Reading the text back with [`parse_world`](super::parse_world)
//! gives the same world, with two limits of the format: times are written to the second,
//! and values the format has no spelling for (a check conclusion or reaction GitHub may add
//! later) are written verbatim and refused when read.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use mp_core::context::{
    CheckRun, CheckStatus, Comment, LabelAction, LabelEvent, PrState, Reaction, ReactionKind,
    RefUpdate,
};
use mp_core::ids::{CommitSha, Timestamp};
use mp_core::port::IssueState;

use super::{Commit, IssueRecord, Pull, PullFile, Repo, World, commit_sha};

/// The world as world-file text (a rotation's previous key is not written). `receipt_key` is the key's text to write under
/// `receipt_key` (a [`ReceiptKey`](mp_core::approval::ReceiptKey) never shows its bytes);
/// `None` writes no key.
pub fn world_to_yaml(world: &World, receipt_key: Option<&str>) -> String {
    let World {
        now,
        bot_slug,
        config,
        receipt_key: _,
        previous_receipt_key: _,
        rate_limit_remaining,
        repos,
        ci,
        app_permissions,
    } = world;
    let mut out = Writer::default();
    out.line(0, &format!("now: {}", time(*now)));
    out.line(0, &format!("bot: {}", quoted(bot_slug)));
    if let Some(key) = receipt_key {
        out.line(0, &format!("receipt_key: {}", quoted(key)));
    }
    if let Some(remaining) = rate_limit_remaining {
        out.line(0, &format!("rate_limit: {{remaining: {remaining}}}"));
    }
    if !config.is_empty() {
        out.line(0, "config:");
        out.line(1, "files:");
        for (name, text) in config {
            out.text(2, &quoted(name), text);
        }
    }
    if let Some(ci) = ci {
        let list = |items: &[String]| {
            let quoted: Vec<String> = items.iter().map(|i| quoted(i)).collect();
            format!("[{}]", quoted.join(", "))
        };
        out.line(0, "ci:");
        out.line(1, &format!("checks: {}", list(&ci.checks)));
        out.line(1, &format!("app: {}", quoted(&ci.app)));
        out.line(1, &format!("minutes: {}", ci.minutes));
        if !ci.fails.is_empty() {
            out.line(1, &format!("fails: {}", list(&ci.fails)));
        }
    }
    if let Some(permissions) = app_permissions {
        let pairs: Vec<String> = permissions
            .iter()
            .map(|(k, v)| format!("{}: {}", quoted(k), quoted(v)))
            .collect();
        out.line(0, &format!("app_permissions: {{{}}}", pairs.join(", ")));
    }
    if !repos.is_empty() {
        out.line(0, "repos:");
        for repo in repos {
            write_repo(&mut out, repo);
        }
    }
    out.text
}

/// Indented lines, two spaces per level.
#[derive(Default)]
struct Writer {
    text: String,
}

impl Writer {
    fn line(&mut self, level: usize, line: &str) {
        for _ in 0..level {
            self.text.push_str("  ");
        }
        self.text.push_str(line);
        self.text.push('\n');
    }

    /// `key: value` for free text: a literal block when the text allows one, else quoted.
    fn text(&mut self, level: usize, key: &str, value: &str) {
        self.text_at(level, level + 1, key, value);
    }

    /// [`Writer::text`] with the block's lines at `block_level`.
    fn text_at(&mut self, level: usize, block_level: usize, key: &str, value: &str) {
        match block_style(value) {
            Some(indicator) => {
                self.line(level, &format!("{key}: {indicator}"));
                for line in value.lines() {
                    if line.is_empty() {
                        self.text.push('\n');
                    } else {
                        self.line(block_level, line);
                    }
                }
            }
            None => self.line(level, &format!("{key}: {}", quoted(value))),
        }
    }

    /// `key: [a, b]`, omitted when empty.
    fn list(&mut self, level: usize, key: &str, items: &[String]) {
        if !items.is_empty() {
            self.line(level, &format!("{key}: [{}]", items.join(", ")));
        }
    }
}

/// The literal-block indicator for `text` (`|` keeps its one final newline, `|-` has
/// none), or `None` when only a quoted scalar writes it exactly.
fn block_style(text: &str) -> Option<&'static str> {
    let multi_line = text.trim_end_matches('\n').contains('\n');
    let starts_plainly = !text.starts_with([' ', '\n']);
    let printable = text.chars().all(|c| c == '\n' || !needs_escape(c));
    let no_blank_spaces = text.lines().all(|l| l.is_empty() || !l.trim().is_empty());
    if !(multi_line && starts_plainly && printable && no_blank_spaces) {
        return None;
    }
    if text.ends_with("\n\n") {
        None
    } else if text.ends_with('\n') {
        Some("|")
    } else {
        Some("|-")
    }
}

/// Whether a character must be escaped in a double-quoted YAML scalar (and so rules out a
/// literal block): control characters, C1 controls, line and paragraph separators, BOM.
fn needs_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}')
}

/// A double-quoted YAML scalar.
fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if needs_escape(c) => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn time(at: Timestamp) -> String {
    quoted(&at.to_string())
}

fn quoted_all<'a>(items: impl IntoIterator<Item = &'a String>) -> Vec<String> {
    items.into_iter().map(|item| quoted(item)).collect()
}

/// How commits of one repository are referenced: by id when the id stands for the SHA.
struct CommitNames<'a> {
    by_sha: BTreeMap<&'a CommitSha, String>,
}

impl<'a> CommitNames<'a> {
    fn new(repo: &'a Repo) -> Self {
        let by_sha = repo
            .commits
            .iter()
            .map(|c| (&c.sha, quoted(commit_id(repo, c))))
            .collect();
        Self { by_sha }
    }

    /// The reference to `sha`: its commit's id, or the SHA (which the loader refuses if no
    /// listed commit has it, as it should).
    fn name(&self, sha: &CommitSha) -> String {
        self.by_sha
            .get(sha)
            .cloned()
            .unwrap_or_else(|| quoted(sha.as_str()))
    }

    fn names<'s>(&self, shas: impl IntoIterator<Item = &'s CommitSha>) -> Vec<String> {
        shas.into_iter().map(|sha| self.name(sha)).collect()
    }
}

/// The id to write for a commit: its own id when that id stands for its SHA, else the SHA.
fn commit_id<'a>(repo: &Repo, commit: &'a Commit) -> &'a str {
    if commit_sha(&repo.name, &commit.id) == commit.sha {
        &commit.id
    } else {
        commit.sha.as_str()
    }
}

/// A merge group's fields in the world file: `pull: 7, base: ..., head: ..., entries:
/// [...], made: ...`.
fn group_fields(names: &CommitNames<'_>, group: &crate::world::MergeGroup) -> String {
    let entries: Vec<String> = group.entries.iter().map(ToString::to_string).collect();
    format!(
        "pull: {}, base: {}, head: {}, entries: [{}], made: {}",
        group.number,
        names.name(&group.base),
        names.name(&group.head),
        entries.join(", "),
        quoted(&group.created_at.to_string())
    )
}

fn write_repo(out: &mut Writer, repo: &Repo) {
    let Repo {
        name,
        commits,
        branches,
        files,
        branch_files,
        pulls,
        issues,
        tree_truncated,
        default_branch,
        app_installed,
        labels,
        activity,
        branch_rules,
        merge_queues,
        queue_entries,
        queue_removals: _,
        merge_groups,
        merge_group_log,
        environments,
    } = repo;
    let names = CommitNames::new(repo);
    out.line(1, &format!("- name: {}", quoted(name.as_str())));
    if !commits.is_empty() {
        out.line(2, "commits:");
        for commit in commits {
            write_commit(out, repo, &names, commit);
        }
    }
    if !branches.is_empty() {
        out.line(2, "branches:");
        for (branch, sha) in branches {
            out.line(3, &format!("{}: {}", quoted(branch), names.name(sha)));
        }
    }
    if !files.is_empty() {
        out.line(2, "files:");
        for (path, content) in files {
            out.text(3, &quoted(path), content);
        }
    }
    if !branch_files.is_empty() {
        out.line(2, "branch_files:");
        for (branch, files) in branch_files {
            if files.is_empty() {
                out.line(3, &format!("{}: {{}}", quoted(branch)));
                continue;
            }
            out.line(3, &format!("{}:", quoted(branch)));
            for (path, content) in files {
                out.text(4, &quoted(path), content);
            }
        }
    }
    if *tree_truncated {
        out.line(2, "tree_truncated: true");
    }
    if default_branch != "main" {
        out.line(2, &format!("default_branch: {}", quoted(default_branch)));
    }
    if !*app_installed {
        out.line(2, "app_installed: false");
    }
    if !labels.is_empty() {
        out.line(2, "labels:");
        for label in labels {
            let description = label
                .description
                .as_deref()
                .map(|d| format!(", description: {}", quoted(d)))
                .unwrap_or_default();
            let created = label
                .created_at
                .map(|t| format!(", created_at: {}", time(t)))
                .unwrap_or_default();
            let updated = label
                .updated_at
                .map(|t| format!(", updated_at: {}", time(t)))
                .unwrap_or_default();
            out.line(
                3,
                &format!(
                    "- {{name: {}, color: {}{description}{created}{updated}}}",
                    quoted(&label.name),
                    quoted(&label.color)
                ),
            );
        }
    }
    if !activity.is_empty() {
        out.line(2, "activity:");
        for (branch, updates) in activity {
            if updates.is_empty() {
                out.line(3, &format!("{}: []", quoted(branch)));
                continue;
            }
            out.line(3, &format!("{}:", quoted(branch)));
            for update in updates {
                out.line(4, &format!("- {}", push_map(&names, update)));
            }
        }
    }
    if !branch_rules.is_empty() {
        out.line(2, "branch_rules:");
        for (branch, rules) in branch_rules {
            out.line(3, &format!("{}: [{}]", quoted(branch), rules.join(", ")));
        }
    }
    if !merge_queues.is_empty() {
        out.line(2, "merge_queues:");
        for (branch, queue) in merge_queues {
            let crate::world::MergeQueueSettings {
                check_response_timeout_minutes,
                grouping_strategy,
                max_entries_to_build,
                max_entries_to_merge,
                merge_method,
                min_entries_to_merge,
                min_entries_to_merge_wait_minutes,
                required_checks,
            } = queue;
            let entries: Vec<String> = queue_entries
                .get(branch)
                .into_iter()
                .flatten()
                .map(|entry| {
                    format!(
                        "{{pull: {}, by: {}, at: {}, head: {}, jump: {}, state: {}}}",
                        entry.number,
                        quoted(entry.enqueuer.as_str()),
                        quoted(&entry.enqueued_at.to_string()),
                        names.name(&entry.head),
                        entry.jump,
                        entry.state.as_graphql()
                    )
                })
                .collect();
            let mut entries = if entries.is_empty() {
                String::new()
            } else {
                format!(", entries: [{}]", entries.join(", "))
            };
            if let Some(required) = required_checks {
                let checks: Vec<String> = required
                    .iter()
                    .map(|check| {
                        format!(
                            "{{name: {}, app: {}}}",
                            quoted(&check.name),
                            quoted(&check.app)
                        )
                    })
                    .collect();
                entries.push_str(&format!(", required_checks: [{}]", checks.join(", ")));
            }
            let groups: Vec<String> = merge_groups
                .get(branch)
                .into_iter()
                .flatten()
                .map(|group| format!("{{{}}}", group_fields(&names, group)))
                .collect();
            if !groups.is_empty() {
                entries.push_str(&format!(", groups: [{}]", groups.join(", ")));
            }
            out.line(
                3,
                &format!(
                    "{}: {{check_response_timeout_minutes: {check_response_timeout_minutes}, grouping_strategy: {grouping_strategy}, max_entries_to_build: {max_entries_to_build}, max_entries_to_merge: {max_entries_to_merge}, merge_method: {merge_method}, min_entries_to_merge: {min_entries_to_merge}, min_entries_to_merge_wait_minutes: {min_entries_to_merge_wait_minutes}{entries}}}",
                    quoted(branch)
                ),
            );
        }
    }
    if !merge_group_log.is_empty() {
        out.line(2, "merge_group_log:");
        for event in merge_group_log {
            let destroyed = event
                .destroyed
                .map(|why| format!(", destroyed: {}", why.as_str()))
                .unwrap_or_default();
            out.line(
                3,
                &format!(
                    "- {{branch: {}, {}, at: {}{destroyed}}}",
                    quoted(&event.base_ref),
                    group_fields(&names, &event.group),
                    quoted(&event.at.to_string())
                ),
            );
        }
    }
    if !environments.is_empty() {
        out.line(2, "environments:");
        for environment in environments {
            let reviewers: Vec<String> = environment.reviewers.iter().map(|r| quoted(r)).collect();
            let branches = match &environment.branches {
                crate::world::EnvironmentBranches::Any => "any".to_owned(),
                crate::world::EnvironmentBranches::Protected => "protected".to_owned(),
                crate::world::EnvironmentBranches::Selected(patterns) => format!(
                    "[{}]",
                    patterns
                        .iter()
                        .map(|p| quoted(p))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            out.line(
                3,
                &format!(
                    "- {{name: {}, reviewers: [{}], branches: {branches}}}",
                    quoted(&environment.name),
                    reviewers.join(", ")
                ),
            );
        }
    }
    if !pulls.is_empty() {
        out.line(2, "pulls:");
        for pull in pulls {
            write_pull(out, &names, pull);
        }
    }
    if !issues.is_empty() {
        out.line(2, "issues:");
        for issue in issues {
            write_issue(out, issue);
        }
    }
}

fn write_commit(out: &mut Writer, repo: &Repo, names: &CommitNames<'_>, commit: &Commit) {
    let Commit {
        id: _,
        sha: _,
        message,
        parents,
        author,
        committer,
        date,
        checks,
        check_workflows,
    } = commit;
    out.line(3, &format!("- id: {}", quoted(commit_id(repo, commit))));
    out.text(4, "message", message);
    out.list(4, "parents", &names.names(parents));
    if let Some(author) = author {
        out.line(4, &format!("author: {}", quoted(author.as_str())));
    }
    if let Some(committer) = committer {
        out.line(4, &format!("committer: {}", quoted(committer.as_str())));
    }
    if let Some(date) = date {
        out.line(4, &format!("date: {}", time(*date)));
    }
    if !checks.is_empty() {
        out.line(4, "checks:");
        for (index, check) in checks.iter().enumerate() {
            let workflow = check_workflows.get(&index).map(String::as_str);
            out.line(5, &format!("- {}", check_run(check, workflow)));
        }
    }
}

/// One check run as a flow mapping, with the workflow file whose job published it. Its id
/// is not written: the world gives each run the id of its position.
fn check_run(check: &CheckRun, workflow: Option<&str>) -> String {
    let CheckRun {
        id: _,
        name,
        status,
        conclusion,
        started_at,
        completed_at,
        app_slug,
        output_summary,
    } = check;
    let mut fields = vec![
        format!("name: {}", quoted(name)),
        format!("status: {}", status.as_str()),
    ];
    if *status == CheckStatus::Completed
        && let Some(conclusion) = conclusion
    {
        fields.push(format!("conclusion: {}", quoted(conclusion.as_str())));
    }
    if let Some(app) = app_slug {
        fields.push(format!("app: {}", quoted(app)));
    }
    if let Some(at) = started_at {
        fields.push(format!("started_at: {}", time(*at)));
    }
    if let Some(at) = completed_at {
        fields.push(format!("completed_at: {}", time(*at)));
    }
    if let Some(summary) = output_summary {
        fields.push(format!("summary: {}", quoted(summary)));
    }
    if let Some(workflow) = workflow {
        fields.push(format!("workflow: {}", quoted(workflow)));
    }
    format!("{{{}}}", fields.join(", "))
}

fn write_pull(out: &mut Writer, names: &CommitNames<'_>, pull: &Pull) {
    let Pull {
        number,
        title,
        body,
        author,
        head_ref,
        head_sha,
        base_ref,
        base_sha,
        commits,
        labels,
        events,
        files,
        comments,
        reactions,
        state,
        merged,
        mergeable,
        merged_by,
        merge_commit,
        merged_at,
        created_at,
        comments_unreadable,
        head_repo,
        pushes,
    } = pull;
    out.line(3, &format!("- number: {number}"));
    out.line(4, &format!("title: {}", quoted(title)));
    if !body.is_empty() {
        out.text(4, "body", body);
    }
    if !author.is_ghost() {
        out.line(4, &format!("author: {}", quoted(author.as_str())));
    }
    out.line(4, &format!("head: {}", quoted(head_ref)));
    out.line(4, &format!("head_commit: {}", names.name(head_sha)));
    out.line(4, &format!("base: {}", quoted(base_ref)));
    out.line(4, &format!("base_commit: {}", names.name(base_sha)));
    out.line(
        4,
        &format!("commits: [{}]", names.names(commits).join(", ")),
    );
    write_thread(out, labels, events, comments, reactions);
    if !files.is_empty() {
        out.line(4, "files:");
        for file in files {
            out.line(5, &format!("- {}", pull_file(file)));
        }
    }
    if *merged {
        out.line(4, "merged: true");
    }
    if *state == PrState::Closed && !merged {
        out.line(4, "state: closed");
    }
    if !mergeable {
        out.line(4, "mergeable: false");
    }
    if let Some(by) = merged_by {
        out.line(4, &format!("merged_by: {}", quoted(by.as_str())));
    }
    if let Some(sha) = merge_commit {
        out.line(4, &format!("merge_commit: {}", names.name(sha)));
    }
    if let Some(at) = merged_at {
        out.line(4, &format!("merged_at: {}", time(*at)));
    }
    if let Some(at) = created_at {
        out.line(4, &format!("created_at: {}", time(*at)));
    }
    if *comments_unreadable {
        out.line(4, "comments_unreadable: true");
    }
    if let Some(head_repo) = head_repo {
        out.line(4, &format!("head_repo: {}", quoted(head_repo.as_str())));
    }
    // Always written: a world without `pushes` gets them made up from its commits.
    if pushes.is_empty() {
        out.line(4, "pushes: []");
    } else {
        out.line(4, "pushes:");
        for push in pushes {
            out.line(5, &format!("- {}", push_map(names, push)));
        }
    }
}

/// One head-branch update as a flow mapping.
fn push_map(names: &CommitNames<'_>, push: &RefUpdate) -> String {
    let mut fields = vec![format!("type: {}", push.kind.as_github())];
    if let Some(after) = &push.after {
        fields.push(format!("to: {}", names.name(after)));
    }
    if let Some(by) = &push.actor {
        fields.push(format!("by: {}", quoted(by.as_str())));
    }
    if let Some(at) = push.at {
        fields.push(format!("at: {}", time(at)));
    }
    format!("{{{}}}", fields.join(", "))
}

/// One changed file as a flow mapping.
fn pull_file(file: &PullFile) -> String {
    let change = &file.change;
    let mut fields = vec![
        format!("path: {}", quoted(&change.path)),
        format!("status: {}", change.status.as_str()),
    ];
    if change.additions > 0 {
        fields.push(format!("additions: {}", change.additions));
    }
    if change.deletions > 0 {
        fields.push(format!("deletions: {}", change.deletions));
    }
    if let Some(previous) = &change.previous_filename {
        fields.push(format!("previous_filename: {}", quoted(previous)));
    }
    if let Some(content) = &file.content {
        fields.push(format!("content: {}", quoted(content)));
    }
    format!("{{{}}}", fields.join(", "))
}

/// What pull requests and issues share: labels, timeline events, comments, reactions.
fn write_thread(
    out: &mut Writer,
    labels: &[String],
    events: &[LabelEvent],
    comments: &[Comment],
    reactions: &[Reaction],
) {
    out.list(4, "labels", &quoted_all(labels));
    if !events.is_empty() {
        out.line(4, "events:");
        for event in events {
            out.line(5, &format!("- {}", label_event(event)));
        }
    }
    if !comments.is_empty() {
        out.line(4, "comments:");
        for comment in comments {
            write_comment(out, comment);
        }
    }
    if !reactions.is_empty() {
        out.line(4, "reactions:");
        for reaction in reactions {
            out.line(5, &format!("- {}", reaction_map(reaction)));
        }
    }
}

fn label_event(event: &LabelEvent) -> String {
    let key = match event.action {
        LabelAction::Labeled => "labeled",
        LabelAction::Unlabeled => "unlabeled",
        LabelAction::BaseChanged => "base_ref_changed",
    };
    let mut fields = vec![format!("{key}: {}", quoted(&event.label))];
    if let Some(actor) = &event.actor {
        fields.push(format!("by: {}", quoted(actor.as_str())));
    }
    if let Some(at) = event.at {
        fields.push(format!("at: {}", time(at)));
    }
    format!("{{{}}}", fields.join(", "))
}

/// A comment as a block mapping (bodies are often long and multi-line). Its id is not
/// written: the loader allocates ids in world order.
fn write_comment(out: &mut Writer, comment: &Comment) {
    let Comment {
        id: _,
        author,
        body,
        created_at,
        updated_at,
    } = comment;
    let mut fields = Vec::new();
    if let Some(author) = author {
        fields.push(format!("author: {}", quoted(author.as_str())));
    }
    if let Some(at) = created_at {
        fields.push(format!("at: {}", time(*at)));
    }
    if let Some(edited) = updated_at.filter(|_| comment.is_edited()) {
        fields.push(format!("edited_at: {}", time(edited)));
    }
    if fields.is_empty() {
        // The body opens the entry; its block lines go deeper than the mapping.
        out.text_at(5, 7, "- body", body);
        return;
    }
    for (index, field) in fields.iter().enumerate() {
        if index == 0 {
            out.line(5, &format!("- {field}"));
        } else {
            out.line(6, field);
        }
    }
    out.text(6, "body", body);
}

fn reaction_map(reaction: &Reaction) -> String {
    let content = match &reaction.kind {
        ReactionKind::ThumbsUp => "+1",
        ReactionKind::ThumbsDown => "-1",
        ReactionKind::Other(other) => other.as_str(),
    };
    let mut fields = vec![
        format!("content: {}", quoted(content)),
        format!("by: {}", quoted(reaction.user.as_str())),
    ];
    if let Some(at) = reaction.created_at {
        fields.push(format!("at: {}", time(at)));
    }
    format!("{{{}}}", fields.join(", "))
}

fn write_issue(out: &mut Writer, issue: &IssueRecord) {
    let IssueRecord {
        number,
        title,
        body,
        author,
        state,
        labels,
        events,
        comments,
        reactions,
        created_at,
    } = issue;
    out.line(3, &format!("- number: {number}"));
    out.line(4, &format!("title: {}", quoted(title)));
    if !body.is_empty() {
        out.text(4, "body", body);
    }
    if let Some(author) = author {
        out.line(4, &format!("author: {}", quoted(author.as_str())));
    }
    if *state == IssueState::Closed {
        out.line(4, "state: closed");
    }
    write_thread(out, labels, events, comments, reactions);
    if let Some(at) = created_at {
        out.line(4, &format!("created_at: {}", time(*at)));
    }
}

#[cfg(test)]
mod tests;
