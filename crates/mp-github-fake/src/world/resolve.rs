//! From the file as written to a consistent [`World`]: commit ids become SHAs, defaults are
//! applied, every reference is checked, and comment ids are allocated.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use mp_core::approval::ReceiptKey;
use mp_core::context::{
    CheckConclusion, CheckRun, CheckStatus, Comment, CommentId, FileChange, FileStatus,
    LabelAction, LabelEvent, PrState, Reaction, ReactionKind, RefUpdate, RefUpdateKind,
};
use mp_core::ids::{CommitSha, Login, PrNumber, RepoName};
use mp_core::port::IssueState;
use serde_saphyr::Spanned;

/// The rule types of GitHub's branch rulesets (the REST description's `repository-rule`).
const RULE_TYPES: &[&str] = &[
    "creation",
    "update",
    "deletion",
    "required_linear_history",
    "merge_queue",
    "required_deployments",
    "required_signatures",
    "pull_request",
    "required_status_checks",
    "non_fast_forward",
    "commit_message_pattern",
    "commit_author_email_pattern",
    "committer_email_pattern",
    "branch_name_pattern",
    "workflows",
    "code_scanning",
    "file_path_restriction",
    "max_file_path_length",
    "file_extension_restriction",
    "max_file_size",
];

/// The App that publishes the check runs of GitHub Actions' jobs.
const ACTIONS_APP: &str = "github-actions";

use super::file::{
    RawCheck, RawCheckStatus, RawCi, RawComment, RawCommit, RawConfig, RawEnvironmentBranches,
    RawEvent, RawFile, RawFileStatus, RawIssue, RawLabel, RawMergeQueue, RawPull, RawPush,
    RawReaction, RawRepo, RawState, RawWorld,
};
use super::{
    CiSimulation, Commit, Environment, EnvironmentBranches, IssueRecord, LoadWorldError,
    MergeQueueSettings, Pull, PullFile, Repo, World, commit_sha,
};

type Result<T> = std::result::Result<T, LoadWorldError>;

/// Where errors point.
#[derive(Clone, Copy)]
struct Cx<'a> {
    file: &'a str,
}

impl Cx<'_> {
    fn at<T>(self, node: &Spanned<T>, message: impl Into<String>) -> LoadWorldError {
        LoadWorldError::at(self.file, node, message)
    }
}

pub(super) fn resolve(file: &str, config_base: Option<&Path>, raw: RawWorld) -> Result<World> {
    let cx = Cx { file };
    if let Err(err) = Login::for_app(&raw.bot.value) {
        return Err(cx.at(&raw.bot, format!("invalid app slug: {err}")));
    }
    let config = match raw.config {
        Some(config) => resolve_config(cx, config_base, config)?,
        None => BTreeMap::new(),
    };
    let receipt_key = match raw.receipt_key {
        Some(key) => Some(
            ReceiptKey::new(key.value.as_bytes())
                .ok_or_else(|| cx.at(&key, "`receipt_key` is empty; omit it for no key"))?,
        ),
        None => None,
    };
    let previous_receipt_key = match raw.receipt_key_previous {
        Some(previous) => {
            if receipt_key.is_none() {
                return Err(cx.at(
                    &previous,
                    "`receipt_key_previous` needs `receipt_key`: a rotation replaces one key with another",
                ));
            }
            let key = ReceiptKey::new(previous.value.key.as_bytes())
                .ok_or_else(|| cx.at(&previous, "`receipt_key_previous.key` is empty"))?;
            Some(mp_core::approval::PreviousReceiptKey {
                key,
                until: previous.value.until.0,
            })
        }
        None => None,
    };
    let mut world = World {
        now: raw.now.0,
        bot_slug: raw.bot.value,
        config,
        receipt_key,
        previous_receipt_key,
        rate_limit_remaining: raw.rate_limit.map(|r| r.remaining),
        repos: Vec::new(),
        ci: raw.ci.map(|ci| resolve_ci(cx, ci)).transpose()?,
        app_permissions: match raw.app_permissions {
            Some(permissions) => Some(resolve_permissions(cx, permissions)?),
            None => None,
        },
    };
    let mut comment_ids = 0;
    for raw_repo in raw.repos {
        let name = &raw_repo.value.name;
        if world.repo(&name.value.0).is_some() {
            return Err(cx.at(
                name,
                format!("repository `{}` is listed twice", name.value.0),
            ));
        }
        let repo = resolve_repo(cx, raw_repo.value, &mut comment_ids)?;
        world.repos.push(repo);
    }
    Ok(world)
}

/// Checks the App's permissions: each level is `read`, `write` or `admin`.
fn resolve_permissions(
    cx: Cx<'_>,
    raw: Spanned<BTreeMap<String, String>>,
) -> Result<BTreeMap<String, String>> {
    for (name, level) in &raw.value {
        if !matches!(level.as_str(), "read" | "write" | "admin") {
            return Err(cx.at(
                &raw,
                format!("`app_permissions.{name}` is `{level}`; use read, write or admin"),
            ));
        }
    }
    Ok(raw.value)
}

/// Checks the simulated CI: at least one check, each named once, an App slug, a positive
/// duration and patterns that compile.
fn resolve_ci(cx: Cx<'_>, raw: Spanned<RawCi>) -> Result<CiSimulation> {
    let ci = &raw.value;
    if ci.checks.is_empty() {
        return Err(cx.at(&raw, "`ci.checks` names no check; name at least one"));
    }
    let mut checks: Vec<String> = Vec::new();
    for check in &ci.checks {
        if check.value.trim().is_empty() {
            return Err(cx.at(check, "a check name is empty"));
        }
        if checks.contains(&check.value) {
            return Err(cx.at(check, format!("check `{}` is listed twice", check.value)));
        }
        checks.push(check.value.clone());
    }
    if ci.app.value.trim().is_empty() {
        return Err(cx.at(
            &ci.app,
            "`ci.app` is empty; name the App that publishes the runs",
        ));
    }
    if ci.minutes == 0 {
        return Err(cx.at(&raw, "`ci.minutes` is 0; CI takes at least a minute"));
    }
    let mut fails = Vec::new();
    for pattern in &ci.fails {
        globset::Glob::new(&pattern.value)
            .map_err(|err| cx.at(pattern, format!("`{}` is not a glob: {err}", pattern.value)))?;
        fails.push(pattern.value.clone());
    }
    Ok(CiSimulation {
        checks,
        app: ci.app.value.clone(),
        minutes: ci.minutes,
        fails,
    })
}

/// Reads `config.dir` (every regular, non-hidden file, not recursively) and lays
/// `config.files` over it.
fn resolve_config(
    cx: Cx<'_>,
    base: Option<&Path>,
    raw: RawConfig,
) -> Result<BTreeMap<String, String>> {
    let mut texts = BTreeMap::new();
    if let Some(dir) = &raw.dir {
        let Some(base) = base else {
            return Err(cx.at(
                dir,
                "`config.dir` needs a world file on disk; use `config.files`",
            ));
        };
        let path = base.join(&dir.value);
        let shown = path.display();
        let entries = std::fs::read_dir(&path)
            .map_err(|err| cx.at(dir, format!("cannot read config dir `{shown}`: {err}")))?;
        for entry in entries {
            let entry = entry
                .map_err(|err| cx.at(dir, format!("cannot read config dir `{shown}`: {err}")))?;
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            let file_path = entry.path();
            if name == SKILLS_DIR && file_path.is_dir() {
                // The user skills, as `mp tick --config DIR` loads `DIR/skills/`: keyed
                // `skills/<path>` as `config.files` would name them.
                read_skills(&file_path, SKILLS_DIR, &mut texts)
                    .map_err(|err| cx.at(dir, format!("cannot read `{shown}/skills`: {err}")))?;
                continue;
            }
            if name.starts_with('.') || !file_path.is_file() {
                continue;
            }
            let text = std::fs::read_to_string(&file_path).map_err(|err| {
                cx.at(
                    dir,
                    format!("cannot read config file `{}`: {err}", file_path.display()),
                )
            })?;
            texts.insert(name, text);
        }
    }
    texts.extend(raw.files);
    Ok(texts)
}

/// The subdirectory of `config.dir` that holds user skills.
const SKILLS_DIR: &str = "skills";

/// Every regular, non-hidden file under `path`, keyed `<prefix>/<relative path>` with `/`
/// between the parts, in name order.
fn read_skills(
    path: &Path,
    prefix: &str,
    texts: &mut BTreeMap<String, String>,
) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(path)?.collect::<std::io::Result<_>>()?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        if name.starts_with('.') {
            continue;
        }
        let key = format!("{prefix}/{name}");
        let kind = entry.file_type()?;
        if kind.is_dir() {
            read_skills(&entry.path(), &key, texts)?;
        } else if kind.is_file() {
            texts.insert(key, std::fs::read_to_string(entry.path())?);
        }
    }
    Ok(())
}

/// Finds a referenced commit: by id first, then by full SHA.
fn find<'c>(commits: &'c [Commit], reference: &str) -> Option<&'c Commit> {
    commits.iter().find(|c| c.id == reference).or_else(|| {
        let lower = reference.to_ascii_lowercase();
        commits.iter().find(|c| c.sha.as_str() == lower)
    })
}

fn resolve_ref(cx: Cx<'_>, repo: &Repo, reference: &Spanned<String>) -> Result<CommitSha> {
    find(&repo.commits, &reference.value)
        .map(|c| c.sha.clone())
        .ok_or_else(|| unknown_commit(cx, &repo.name, reference))
}

fn unknown_commit(cx: Cx<'_>, repo: &RepoName, reference: &Spanned<String>) -> LoadWorldError {
    cx.at(
        reference,
        format!(
            "unknown commit `{}` in {repo}; list it under `commits`",
            reference.value
        ),
    )
}

/// Records a pull-request or issue number, refusing 0 and duplicates.
fn claim_number(
    cx: Cx<'_>,
    repo: &RepoName,
    numbers: &mut BTreeMap<u64, u64>,
    number: &Spanned<u64>,
) -> Result<PrNumber> {
    if number.value == 0 {
        return Err(cx.at(number, "numbers start at 1"));
    }
    if let Some(line) = numbers.insert(number.value, number.referenced.line()) {
        return Err(cx.at(
            number,
            format!(
                "number {} is used twice in {repo} (first at line {line}); issues and pull requests share one number space",
                number.value
            ),
        ));
    }
    Ok(PrNumber::new(number.value))
}

/// The most commits one `chain` entry may stand for.
const MAX_CHAIN: u32 = 10_000;

/// The parents a commit entry lists, each listed before it.
fn resolve_parents(
    cx: Cx<'_>,
    repo: &Repo,
    all_ids: &BTreeSet<&str>,
    commit: &RawCommit,
) -> Result<Vec<CommitSha>> {
    let id = &commit.id;
    let mut parents = Vec::new();
    for parent in &commit.parents {
        match find(&repo.commits, &parent.value) {
            Some(found) => parents.push(found.sha.clone()),
            None if all_ids.contains(parent.value.as_str()) => {
                return Err(cx.at(
                    parent,
                    format!(
                        "parent `{}` of commit `{}` must be listed before it",
                        parent.value, id.value
                    ),
                ));
            }
            None => return Err(unknown_commit(cx, &repo.name, parent)),
        }
    }
    Ok(parents)
}

fn resolve_repo(cx: Cx<'_>, raw: RawRepo, comment_ids: &mut u64) -> Result<Repo> {
    let mut repo = Repo::new(raw.name.value.0);
    let all_ids: BTreeSet<&str> = raw
        .commits
        .iter()
        .map(|c| c.value.id.value.as_str())
        .collect();

    for spanned in &raw.commits {
        let commit = &spanned.value;
        let id = &commit.id;
        if id.value.is_empty() {
            return Err(cx.at(id, "a commit id must not be empty"));
        }
        let chain = match &commit.chain {
            None => 1,
            Some(n) if (1..=MAX_CHAIN).contains(&n.value) => n.value,
            Some(n) => {
                return Err(cx.at(n, format!("`chain` must be between 1 and {MAX_CHAIN}")));
            }
        };
        // The entry's ancestors in the chain, oldest first: `<id>~(chain-1)` … `<id>~1`.
        let mut previous: Option<CommitSha> = None;
        for back in (1..chain).rev() {
            let ancestor = format!("{}~{back}", id.value);
            if repo.commits.iter().any(|c| c.id == ancestor) {
                return Err(cx.at(id, format!("commit id `{ancestor}` is used twice")));
            }
            let sha = commit_sha(&repo.name, &ancestor);
            let parents = match previous.take() {
                Some(parent) => vec![parent],
                None => resolve_parents(cx, &repo, &all_ids, commit)?,
            };
            repo.commits.push(Commit {
                id: ancestor,
                sha: sha.clone(),
                message: commit.message.clone(),
                parents,
                author: commit.author.as_ref().map(|l| l.0.clone()),
                committer: commit.committer.as_ref().map(|l| l.0.clone()),
                date: commit.date.map(|t| t.0),
                checks: Vec::new(),
                check_workflows: BTreeMap::new(),
            });
            previous = Some(sha);
        }
        if repo.commits.iter().any(|c| c.id == id.value) {
            return Err(cx.at(id, format!("commit id `{}` is used twice", id.value)));
        }
        let sha = commit_sha(&repo.name, &id.value);
        if let Some(other) = repo.commits.iter().find(|c| c.sha == sha) {
            return Err(cx.at(
                id,
                format!(
                    "commit `{}` has the same SHA as commit `{}`",
                    id.value, other.id
                ),
            ));
        }
        let parents = match previous {
            Some(parent) => vec![parent],
            None => resolve_parents(cx, &repo, &all_ids, commit)?,
        };
        let mut checks = Vec::new();
        let mut check_workflows = BTreeMap::new();
        for check in &commit.checks {
            let (run, workflow) = resolve_check(cx, check)?;
            if let Some(workflow) = workflow {
                check_workflows.insert(checks.len(), workflow);
            }
            checks.push(run);
        }
        repo.commits.push(Commit {
            id: id.value.clone(),
            sha,
            message: commit.message.clone(),
            parents,
            author: commit.author.as_ref().map(|l| l.0.clone()),
            committer: commit.committer.as_ref().map(|l| l.0.clone()),
            date: commit.date.map(|t| t.0),
            checks,
            check_workflows,
        });
    }

    for (branch, target) in &raw.branches.0 {
        if branch.value.is_empty() {
            return Err(cx.at(branch, "a branch name must not be empty"));
        }
        let sha = resolve_ref(cx, &repo, target)?;
        repo.branches.insert(branch.value.clone(), sha);
    }
    repo.files = raw.files;
    repo.tree_truncated = raw.tree_truncated;
    repo.app_installed = raw.app_installed;
    let mut renames = Vec::new();
    for label in raw.labels {
        let (name, color, description, created_at, updated_at, renamed_from) = match &label.value {
            RawLabel::Name(name) => (name.clone(), None, None, None, None, None),
            RawLabel::Full {
                name,
                color,
                description,
                created_at,
                updated_at,
                renamed_from,
            } => (
                name.clone(),
                color.clone(),
                description.clone(),
                created_at.as_ref().map(|t| t.0),
                updated_at.as_ref().map(|t| t.0),
                renamed_from.clone(),
            ),
        };
        if name.trim().is_empty() {
            return Err(cx.at(&label, "a label name is empty"));
        }
        if let (Some(created), Some(updated)) = (created_at, updated_at)
            && updated < created
        {
            return Err(cx.at(
                &label,
                format!("label `{name}` is updated before it is created"),
            ));
        }
        // A renamed label is defined under its old name, which the threads use, and
        // renamed once they are read (`Repo::rename_label`).
        let name = match renamed_from {
            Some(from) => {
                let Some(at) = updated_at else {
                    return Err(cx.at(
                        &label,
                        format!("label `{name}` has `renamed_from` but no `updated_at` (the time of the rename)"),
                    ));
                };
                let refused = cx.at(
                    &label,
                    format!("label `{from}` cannot be renamed `{name}`: no pull request or issue carries `{from}` and it is not defined, or another label is named `{name}`"),
                );
                renames.push((refused, from.clone(), name, at));
                from
            }
            None => name,
        };
        let renamed = label_renamed(&label.value);
        if repo
            .labels
            .iter()
            .any(|l| l.name.eq_ignore_ascii_case(&name))
        {
            return Err(cx.at(&label, format!("label `{name}` is listed twice")));
        }
        let color = color.unwrap_or_else(|| "ededed".to_owned());
        if color.len() != 6 || !color.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(cx.at(
                &label,
                format!("label colour `{color}` is not six hex digits"),
            ));
        }
        repo.labels.push(super::RepoLabel {
            name,
            color,
            description,
            created_at,
            // Before its rename the label was never edited; the rename edits it.
            updated_at: if renamed { None } else { updated_at },
        });
    }
    if let Some(default) = &raw.default_branch {
        if !repo.branches.contains_key(&default.value) {
            return Err(cx.at(
                default,
                format!("default branch `{}` is not in `branches`", default.value),
            ));
        }
        repo.default_branch = default.value.clone();
    }
    for (branch, files) in raw.branch_files.0 {
        if branch.value == repo.default_branch {
            return Err(cx.at(
                &branch,
                format!(
                    "files at the default branch `{}` go under `files`",
                    branch.value
                ),
            ));
        }
        if !repo.branches.contains_key(&branch.value) {
            return Err(cx.at(
                &branch,
                format!("branch `{}` is not in `branches`", branch.value),
            ));
        }
        repo.branch_files.insert(branch.value, files);
    }

    let mut numbers: BTreeMap<u64, u64> = BTreeMap::new();
    let mut pull_numbers = Vec::new();
    for pull in &raw.pulls {
        pull_numbers.push(claim_number(
            cx,
            &repo.name,
            &mut numbers,
            &pull.value.number,
        )?);
    }
    let mut issue_numbers = Vec::new();
    for issue in &raw.issues {
        issue_numbers.push(claim_number(
            cx,
            &repo.name,
            &mut numbers,
            &issue.value.number,
        )?);
    }

    for (spanned, number) in raw.pulls.into_iter().zip(pull_numbers) {
        let pull = resolve_pull(cx, &mut repo, spanned, number, comment_ids)?;
        repo.pulls.push(pull);
    }
    for (spanned, number) in raw.issues.into_iter().zip(issue_numbers) {
        let issue = resolve_issue(cx, spanned.value, number, comment_ids)?;
        repo.issues.push(issue);
    }
    for (branch, entries) in &raw.activity.0 {
        if repo
            .pulls
            .iter()
            .any(|p| p.head_ref == branch.value && p.head_repo.is_none())
        {
            return Err(cx.at(
                branch,
                format!(
                    "`{}` is a pull request's head branch: its activity is the pull request's `pushes`",
                    branch.value
                ),
            ));
        }
        let updates = resolve_activity(cx, &repo, branch, entries)?;
        repo.activity.insert(branch.value.clone(), updates);
    }
    for environment in &raw.environments {
        let branches = match environment.branches.as_ref() {
            None => EnvironmentBranches::Any,
            Some(spanned) => match &spanned.value {
                RawEnvironmentBranches::Keyword(word) if word == "any" => EnvironmentBranches::Any,
                RawEnvironmentBranches::Keyword(word) if word == "protected" => {
                    EnvironmentBranches::Protected
                }
                RawEnvironmentBranches::Keyword(word) => {
                    return Err(cx.at(
                        spanned,
                        format!(
                            "`branches: {word}`: expected `any`, `protected` or a list of patterns"
                        ),
                    ));
                }
                RawEnvironmentBranches::Patterns(patterns) => {
                    EnvironmentBranches::Selected(patterns.clone())
                }
            },
        };
        if repo
            .environments
            .iter()
            .any(|e| e.name.eq_ignore_ascii_case(&environment.name.value))
        {
            return Err(cx.at(
                &environment.name,
                format!("environment `{}` is listed twice", environment.name.value),
            ));
        }
        repo.environments.push(Environment {
            name: environment.name.value.clone(),
            reviewers: environment.reviewers.clone(),
            branches,
        });
    }
    for (branch, rules) in &raw.branch_rules.0 {
        let mut types = Vec::new();
        for rule in rules {
            if !RULE_TYPES.contains(&rule.value.as_str()) {
                return Err(cx.at(
                    rule,
                    format!(
                        "unknown rule type `{}` (one of: {})",
                        rule.value,
                        RULE_TYPES.join(", ")
                    ),
                ));
            }
            types.push(rule.value.clone());
        }
        repo.branch_rules.insert(branch.value.clone(), types);
    }
    for (branch, raw_queue) in &raw.merge_queues.0 {
        let queue = merge_queue(cx, raw_queue)?;
        let rules = repo.branch_rules.entry(branch.value.clone()).or_default();
        if !rules.iter().any(|r| r == "merge_queue") {
            rules.push("merge_queue".to_owned());
        }
        repo.merge_queues.insert(branch.value.clone(), queue);
        let mut entries = Vec::new();
        for spanned in &raw_queue.entries {
            let entry = &spanned.value;
            let number = PrNumber::new(entry.pull.value);
            let Some(pull) = repo.pull(number) else {
                return Err(cx.at(
                    &entry.pull,
                    format!("no pull request #{number} in the repository"),
                ));
            };
            if pull.base_ref != branch.value {
                return Err(cx.at(
                    &entry.pull,
                    format!(
                        "#{number} is based on `{}`, not `{}`",
                        pull.base_ref, branch.value
                    ),
                ));
            }
            if entries
                .iter()
                .any(|e: &crate::world::QueueRecord| e.number == number)
            {
                return Err(cx.at(&entry.pull, format!("#{number} is queued twice")));
            }
            let head = match &entry.head {
                Some(head) => resolve_ref(cx, &repo, head)?,
                None => pull.head_sha.clone(),
            };
            let state = match &entry.state {
                None => mp_core::port::QueueEntryState::Queued,
                Some(state) => mp_core::port::QueueEntryState::from_graphql(&state.value)
                    .ok_or_else(|| {
                        cx.at(
                            state,
                            format!(
                                "unknown state `{}` (one of: QUEUED, AWAITING_CHECKS, MERGEABLE, UNMERGEABLE, LOCKED)",
                                state.value
                            ),
                        )
                    })?,
            };
            entries.push(crate::world::QueueRecord {
                number,
                head,
                enqueued_at: entry.at.0,
                enqueuer: entry.by.0.clone(),
                jump: entry.jump,
                state,
            });
        }
        if !entries.is_empty() {
            repo.queue_entries.insert(branch.value.clone(), entries);
        }
        let mut groups = Vec::new();
        for spanned in &raw_queue.groups {
            let raw = &spanned.value;
            groups.push(merge_group(
                cx,
                &repo,
                &branch.value,
                &raw.pull,
                &raw.base,
                &raw.head,
                &raw.entries,
                raw.made.0,
            )?);
        }
        let queued = repo.queue_entries.get(&branch.value).map_or(0, Vec::len);
        if let Some(extra) = raw_queue.groups.get(queued) {
            return Err(cx.at(extra, "more merge groups than queue entries".to_owned()));
        }
        if !groups.is_empty() {
            repo.merge_groups.insert(branch.value.clone(), groups);
        }
    }
    for spanned in &raw.merge_group_log {
        let event = &spanned.value;
        let destroyed = match &event.destroyed {
            None => None,
            Some(word) => Some(crate::world::GroupEnd::parse(&word.value).ok_or_else(|| {
                cx.at(
                    word,
                    format!(
                        "unknown reason `{}` (one of: merged, invalidated, dequeued)",
                        word.value
                    ),
                )
            })?),
        };
        let group = merge_group(
            cx,
            &repo,
            &event.branch.value,
            &event.pull,
            &event.base,
            &event.head,
            &event.entries,
            event.made.0,
        )?;
        repo.merge_group_log.push(crate::world::MergeGroupEvent {
            base_ref: event.branch.value.clone(),
            group,
            destroyed,
            at: event.at.0,
        });
    }
    for (refused, from, to, at) in renames {
        if !repo.rename_label(&from, &to, at) {
            return Err(refused);
        }
    }
    Ok(repo)
}

/// Whether a label entry renames a label (`renamed_from`).
fn label_renamed(label: &RawLabel) -> bool {
    matches!(
        label,
        RawLabel::Full {
            renamed_from: Some(_),
            ..
        }
    )
}

fn resolve_pull(
    cx: Cx<'_>,
    repo: &mut Repo,
    spanned: Spanned<RawPull>,
    number: PrNumber,
    comment_ids: &mut u64,
) -> Result<Pull> {
    let raw = spanned.value;
    let head_ref = raw.head.value.clone();
    if head_ref.is_empty() {
        return Err(cx.at(&raw.head, "a branch name must not be empty"));
    }
    let branch_head = repo.branches.get(&head_ref).cloned();
    let head_sha = match (&raw.head_commit, branch_head) {
        (Some(explicit), branch_head) => {
            let sha = resolve_ref(cx, repo, explicit)?;
            if let Some(branch_head) = branch_head
                && branch_head != sha
            {
                return Err(cx.at(
                    explicit,
                    format!(
                        "head_commit `{}` is not the head of branch `{head_ref}` ({})",
                        explicit.value,
                        branch_head.short()
                    ),
                ));
            }
            sha
        }
        (None, Some(branch_head)) => branch_head,
        (None, None) => {
            return Err(cx.at(
                &raw.head,
                format!(
                    "branch `{head_ref}` is not in `branches`; list it there or give `head_commit`"
                ),
            ));
        }
    };
    let base_ref = raw
        .base
        .as_ref()
        .map_or_else(|| repo.default_branch.clone(), |b| b.value.clone());
    let base_sha = match (&raw.base_commit, repo.branches.get(&base_ref)) {
        (Some(explicit), _) => resolve_ref(cx, repo, explicit)?,
        (None, Some(sha)) => sha.clone(),
        (None, None) => {
            let message = format!(
                "base branch `{base_ref}` is not in `branches`; list it there or give `base_commit`"
            );
            return Err(match &raw.base {
                Some(base) => cx.at(base, message),
                None => cx.at(&raw.number, message),
            });
        }
    };
    let commits = match &raw.commits {
        Some(list) => list
            .iter()
            .map(|reference| resolve_ref(cx, repo, reference))
            .collect::<Result<Vec<_>>>()?,
        None => commits_between(&repo.commits, &base_sha, &head_sha),
    };

    let checks = raw
        .checks
        .iter()
        .map(|check| resolve_check(cx, check))
        .collect::<Result<Vec<_>>>()?;
    if let Some(head) = repo.commits.iter_mut().find(|c| c.sha == head_sha) {
        for (run, workflow) in checks {
            if let Some(workflow) = workflow {
                head.check_workflows.insert(head.checks.len(), workflow);
            }
            head.checks.push(run);
        }
    }

    let merged = raw.merged;
    let state = match &raw.state {
        Some(state) if merged && state.value == RawState::Open => {
            return Err(cx.at(
                state,
                "a merged pull request is closed; drop `state` or set it to `closed`",
            ));
        }
        Some(state) => pr_state(state.value),
        None if merged => PrState::Closed,
        None => PrState::Open,
    };
    if !merged {
        if let Some(by) = &raw.merged_by {
            return Err(cx.at(by, "`merged_by` needs `merged: true`"));
        }
        if let Some(commit) = &raw.merge_commit {
            return Err(cx.at(commit, "`merge_commit` needs `merged: true`"));
        }
        if let Some(at) = &raw.merged_at {
            return Err(cx.at(at, "`merged_at` needs `merged: true`"));
        }
    }
    let merge_commit = match &raw.merge_commit {
        Some(reference) => Some(resolve_ref(cx, repo, reference)?),
        None => None,
    };
    let head_repo = match &raw.head_repo {
        Some(name) => {
            Some(RepoName::parse(&name.value).map_err(|e| cx.at(name, format!("head_repo: {e}")))?)
        }
        None => None,
    };
    let author = raw.author.map_or_else(Login::ghost, |a| a.0);
    let pushes = match &raw.pushes {
        Some(pushes) => resolve_pushes(cx, repo, pushes, &head_sha)?,
        None => pushes_from_commits(repo, &commits, &author),
    };

    Ok(Pull {
        number,
        title: raw.title,
        body: raw.body,
        author,
        head_ref,
        head_sha,
        base_ref,
        base_sha,
        commits,
        labels: resolve_labels(cx, &raw.labels)?,
        events: resolve_events(cx, &raw.events)?,
        files: raw
            .files
            .iter()
            .map(|file| resolve_file(cx, file))
            .chain((1..=raw.generated_files).map(|i| Ok(generated_file(i))))
            .collect::<Result<Vec<_>>>()?,
        comments: resolve_comments(raw.comments, comment_ids),
        reactions: resolve_reactions(raw.reactions),
        state,
        merged,
        mergeable: raw.mergeable,
        merged_by: raw.merged_by.map(|by| by.value.0),
        merge_commit,
        merged_at: raw.merged_at.map(|t| t.value.0),
        created_at: raw.created_at.map(|t| t.0),
        comments_unreadable: raw.comments_unreadable,
        head_repo,
        pushes,
    })
}

fn resolve_issue(
    cx: Cx<'_>,
    raw: RawIssue,
    number: PrNumber,
    comment_ids: &mut u64,
) -> Result<IssueRecord> {
    Ok(IssueRecord {
        number,
        title: raw.title,
        body: raw.body,
        author: raw.author.map(|a| a.0),
        state: match raw.state {
            Some(RawState::Closed) => IssueState::Closed,
            Some(RawState::Open) | None => IssueState::Open,
        },
        labels: resolve_labels(cx, &raw.labels)?,
        events: resolve_events(cx, &raw.events)?,
        comments: resolve_comments(raw.comments, comment_ids),
        reactions: resolve_reactions(raw.reactions),
        created_at: raw.created_at.map(|t| t.0),
    })
}

fn pr_state(state: RawState) -> PrState {
    match state {
        RawState::Open => PrState::Open,
        RawState::Closed => PrState::Closed,
    }
}

/// The commits reachable from `head` but not from `base`, oldest first (the order of
/// `commits`, which lists parents before children). GitHub lists a pull request's
/// commits the same way.
fn commits_between(commits: &[Commit], base: &CommitSha, head: &CommitSha) -> Vec<CommitSha> {
    let from_base = ancestors(commits, base);
    let from_head = ancestors(commits, head);
    commits
        .iter()
        .filter(|c| from_head.contains(&c.sha) && !from_base.contains(&c.sha))
        .map(|c| c.sha.clone())
        .collect()
}

/// `start` and every commit reachable from it through parents.
fn ancestors(commits: &[Commit], start: &CommitSha) -> BTreeSet<CommitSha> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![start.clone()];
    while let Some(sha) = stack.pop() {
        if !seen.insert(sha.clone()) {
            continue;
        }
        if let Some(commit) = commits.iter().find(|c| c.sha == sha) {
            stack.extend(commit.parents.iter().cloned());
        }
    }
    seen
}

fn resolve_labels(cx: Cx<'_>, labels: &[Spanned<String>]) -> Result<Vec<String>> {
    let mut names: Vec<String> = Vec::new();
    for label in labels {
        if label.value.is_empty() {
            return Err(cx.at(label, "a label name must not be empty"));
        }
        if names.contains(&label.value) {
            return Err(cx.at(label, format!("label `{}` is listed twice", label.value)));
        }
        names.push(label.value.clone());
    }
    Ok(names)
}

fn resolve_events(cx: Cx<'_>, events: &[Spanned<RawEvent>]) -> Result<Vec<LabelEvent>> {
    events
        .iter()
        .map(|spanned| {
            let event = &spanned.value;
            let (action, label) =
                match (&event.labeled, &event.unlabeled, &event.base_ref_changed) {
                    (Some(label), None, None) => (LabelAction::Labeled, label.clone()),
                    (None, Some(label), None) => (LabelAction::Unlabeled, label.clone()),
                    // GitHub's event names no label; mp keeps none.
                    (None, None, Some(_)) => (LabelAction::BaseChanged, String::new()),
                    _ => {
                        return Err(cx.at(
                            spanned,
                            "an event has exactly one of `labeled: <label>`, `unlabeled: <label>` or `base_ref_changed: <previous base>`",
                        ));
                    }
                };
            Ok(LabelEvent {
                action,
                label,
                actor: event.by.as_ref().map(|by| by.0.clone()),
                at: event.at.map(|t| t.0),
            })
        })
        .collect()
}

/// The head branch's activity log as the world file lists it: each entry moves the branch
/// to `to`; the list must end at the pull request's head.
fn resolve_pushes(
    cx: Cx<'_>,
    repo: &Repo,
    pushes: &[Spanned<RawPush>],
    head: &CommitSha,
) -> Result<Vec<RefUpdate>> {
    let updates = resolve_updates(cx, repo, pushes, false)?;
    if let Some(last) = pushes.last()
        && updates.last().and_then(|u| u.after.as_ref()) != Some(head)
    {
        return Err(cx.at(
            last,
            format!(
                "the last push must leave the pull request's head {}",
                head.short()
            ),
        ));
    }
    Ok(updates)
}

/// A branch's `activity` as the world file lists it: each entry moves the branch to `to`
/// (a `branch_deletion` removes it); the list must end at the branch's head, or with a
/// deletion when the branch is not in `branches`. An empty list is a log GitHub has
/// nothing in.
fn resolve_activity(
    cx: Cx<'_>,
    repo: &Repo,
    branch: &Spanned<String>,
    entries: &[Spanned<RawPush>],
) -> Result<Vec<RefUpdate>> {
    let updates = resolve_updates(cx, repo, entries, true)?;
    if updates.is_empty() {
        // A log GitHub no longer has (or never had): nothing proves who moved the branch.
        return Ok(updates);
    }
    let end = updates.last().and_then(|u| u.after.as_ref());
    let head = repo.branch_head(&branch.value);
    if end != head {
        let message = match head {
            Some(head) => format!(
                "the activity of `{}` must end at its head {}",
                branch.value,
                head.short()
            ),
            None => format!(
                "`{}` is not in `branches`, so its activity must end with a branch_deletion",
                branch.value
            ),
        };
        return Err(match entries.last() {
            Some(last) => cx.at(last, message),
            None => cx.at(branch, message),
        });
    }
    Ok(updates)
}

/// Branch updates in file order, each from the tip the previous one left.
fn resolve_updates(
    cx: Cx<'_>,
    repo: &Repo,
    pushes: &[Spanned<RawPush>],
    merges: bool,
) -> Result<Vec<RefUpdate>> {
    let mut updates: Vec<RefUpdate> = Vec::new();
    let mut tip: Option<CommitSha> = None;
    for spanned in pushes {
        let push = &spanned.value;
        let kind = match &push.kind {
            None => RefUpdateKind::Push,
            Some(kind) => match kind.value.as_str() {
                "push" | "force_push" | "branch_creation" | "branch_deletion" => {
                    RefUpdateKind::from_github(&kind.value)
                }
                "pr_merge" | "merge_queue_merge" if merges => {
                    RefUpdateKind::from_github(&kind.value)
                }
                other => {
                    let expected = if merges {
                        "push, force_push, branch_creation, branch_deletion, pr_merge or merge_queue_merge"
                    } else {
                        "push, force_push, branch_creation or branch_deletion"
                    };
                    return Err(cx.at(
                        kind,
                        format!("unknown push type `{other}`; expected {expected}"),
                    ));
                }
            },
        };
        let after = match (&push.to, &kind) {
            (None, RefUpdateKind::BranchDeletion) => None,
            (Some(to), RefUpdateKind::BranchDeletion) => {
                return Err(cx.at(to, "a branch_deletion has no `to`"));
            }
            (Some(to), _) => Some(resolve_ref(cx, repo, to)?),
            (None, _) => return Err(cx.at(spanned, "a push needs `to: <commit>`")),
        };
        updates.push(RefUpdate {
            kind,
            before: tip.clone(),
            after: after.clone(),
            at: push.at.map(|t| t.0),
            actor: push.by.as_ref().map(|by| by.0.clone()),
        });
        tip = after;
    }
    Ok(updates)
}

/// The activity log a world file leaves implicit: each of the pull request's commits
/// pushed in turn by its author, at the commit's date (the first creates the branch).
/// A scenario about forged dates lists `pushes` itself.
fn pushes_from_commits(repo: &Repo, commits: &[CommitSha], author: &Login) -> Vec<RefUpdate> {
    let mut before = None;
    commits
        .iter()
        .enumerate()
        .map(|(index, sha)| {
            let commit = repo.commits.iter().find(|c| c.sha == *sha);
            let update = RefUpdate {
                kind: if index == 0 {
                    RefUpdateKind::BranchCreation
                } else {
                    RefUpdateKind::Push
                },
                before: before.clone(),
                after: Some(sha.clone()),
                at: commit.and_then(|c| c.date),
                actor: Some(author.clone()),
            };
            before = Some(sha.clone());
            update
        })
        .collect()
}

/// The `i`-th file of a pull request's `generated_files`: an added one-line text file.
fn generated_file(i: u32) -> PullFile {
    PullFile {
        change: FileChange {
            path: format!("generated/file-{i:05}.txt"),
            status: FileStatus::Added,
            additions: 1,
            deletions: 0,
            previous_filename: None,
        },
        content: None,
    }
}

fn resolve_file(cx: Cx<'_>, spanned: &Spanned<RawFile>) -> Result<PullFile> {
    let file = &spanned.value;
    if file.path.is_empty() {
        return Err(cx.at(spanned, "a file path must not be empty"));
    }
    let renamed = file.status == RawFileStatus::Renamed;
    if renamed && file.previous_filename.is_none() {
        return Err(cx.at(
            spanned,
            format!("renamed file `{}` needs `previous_filename`", file.path),
        ));
    }
    if file.content.is_some() && file.status == RawFileStatus::Removed {
        return Err(cx.at(
            spanned,
            format!("removed file `{}` has no content", file.path),
        ));
    }
    Ok(PullFile {
        change: FileChange {
            path: file.path.clone(),
            status: FileStatus::from_github(file.status.as_github()),
            additions: file.additions,
            deletions: file.deletions,
            previous_filename: file.previous_filename.clone(),
        },
        content: file.content.clone(),
    })
}

/// A check run of the world file, with the workflow file whose job published it (`workflow`).
fn resolve_check(cx: Cx<'_>, spanned: &Spanned<RawCheck>) -> Result<(CheckRun, Option<String>)> {
    let check = &spanned.value;
    if check.name.is_empty() {
        return Err(cx.at(spanned, "a check run needs a non-empty `name`"));
    }
    if let Some(workflow) = &check.workflow {
        if workflow.is_empty() {
            return Err(cx.at(
                spanned,
                "`workflow` must not be empty; omit it for no workflow",
            ));
        }
        if check.app.as_deref() != Some(ACTIONS_APP) {
            return Err(cx.at(
                spanned,
                format!(
                    "check run `{}` names a `workflow`, so its `app` must be `{ACTIONS_APP}`: only GitHub Actions runs workflows",
                    check.name
                ),
            ));
        }
    }
    if check.app.as_deref() == Some("") {
        return Err(cx.at(spanned, "`app` must not be empty; omit it for no app"));
    }
    let status = check.status.unwrap_or(RawCheckStatus::Completed);
    let conclusion = match (status, check.conclusion) {
        (RawCheckStatus::Completed, None) => Some(CheckConclusion::Success),
        (RawCheckStatus::Completed, Some(c)) => Some(CheckConclusion::from_github(c.as_github())),
        (_, None) => None,
        (_, Some(_)) => {
            return Err(cx.at(
                spanned,
                format!(
                    "check run `{}` is not completed, so it has no conclusion",
                    check.name
                ),
            ));
        }
    };
    Ok((
        CheckRun {
            id: None,
            name: check.name.clone(),
            status: match status {
                RawCheckStatus::Queued => CheckStatus::Queued,
                RawCheckStatus::InProgress => CheckStatus::InProgress,
                RawCheckStatus::Completed => CheckStatus::Completed,
            },
            conclusion,
            started_at: check.started_at.map(|t| t.0),
            completed_at: check.completed_at.map(|t| t.0),
            app_slug: check.app.clone(),
            output_summary: check.summary.clone(),
        },
        check.workflow.clone(),
    ))
}

fn resolve_comments(comments: Vec<RawComment>, comment_ids: &mut u64) -> Vec<Comment> {
    comments
        .into_iter()
        .map(|comment| {
            *comment_ids += 1;
            Comment {
                id: CommentId::new(*comment_ids),
                author: comment.author.map(|a| a.0),
                body: comment.body,
                created_at: comment.at.map(|t| t.0),
                updated_at: comment.edited_at.or(comment.at).map(|t| t.0),
            }
        })
        .collect()
}

fn resolve_reactions(reactions: Vec<RawReaction>) -> Vec<Reaction> {
    reactions
        .into_iter()
        .map(|reaction| Reaction {
            kind: ReactionKind::from_github(reaction.content.as_github()),
            user: reaction.by.0,
            created_at: reaction.at.map(|t| t.0),
        })
        .collect()
}

/// A merge group of `branch`'s queue, its commits resolved.
#[allow(clippy::too_many_arguments)]
fn merge_group(
    cx: Cx<'_>,
    repo: &Repo,
    branch: &str,
    pull: &Spanned<u64>,
    base: &Spanned<String>,
    head: &Spanned<String>,
    entries: &[u64],
    made: mp_core::ids::Timestamp,
) -> Result<crate::world::MergeGroup> {
    let number = PrNumber::new(pull.value);
    if repo.pull(number).is_none() {
        return Err(cx.at(pull, format!("no pull request #{number} in the repository")));
    }
    let base = resolve_ref(cx, repo, base)?;
    let head = resolve_ref(cx, repo, head)?;
    Ok(crate::world::MergeGroup {
        number,
        head_ref: crate::world::merge_group_branch(branch, number, &base),
        base,
        head,
        entries: entries.iter().copied().map(PrNumber::new).collect(),
        created_at: made,
    })
}

/// A branch's `merge_queue` parameters, each within the range GitHub's REST description
/// gives it; the fake's default where the world leaves one out.
fn merge_queue(cx: Cx<'_>, raw: &RawMergeQueue) -> Result<MergeQueueSettings> {
    let mut queue = MergeQueueSettings {
        required_checks: raw.required_checks.as_ref().map(|checks| {
            checks
                .iter()
                .map(|check| crate::world::RequiredCheck {
                    name: check.name.clone(),
                    app: check.app.clone(),
                })
                .collect()
        }),
        ..MergeQueueSettings::default()
    };
    let number = |value: &Option<Spanned<u32>>,
                  name: &str,
                  min: u32,
                  max: u32,
                  into: &mut u32|
     -> Result<()> {
        if let Some(value) = value {
            if !(min..=max).contains(&value.value) {
                return Err(cx.at(
                    value,
                    format!("{name} must be {min} to {max}, found {}", value.value),
                ));
            }
            *into = value.value;
        }
        Ok(())
    };
    number(
        &raw.check_response_timeout_minutes,
        "check_response_timeout_minutes",
        1,
        360,
        &mut queue.check_response_timeout_minutes,
    )?;
    number(
        &raw.max_entries_to_build,
        "max_entries_to_build",
        0,
        100,
        &mut queue.max_entries_to_build,
    )?;
    number(
        &raw.max_entries_to_merge,
        "max_entries_to_merge",
        0,
        100,
        &mut queue.max_entries_to_merge,
    )?;
    number(
        &raw.min_entries_to_merge,
        "min_entries_to_merge",
        0,
        100,
        &mut queue.min_entries_to_merge,
    )?;
    number(
        &raw.min_entries_to_merge_wait_minutes,
        "min_entries_to_merge_wait_minutes",
        0,
        360,
        &mut queue.min_entries_to_merge_wait_minutes,
    )?;
    let word = |value: &Option<Spanned<String>>,
                name: &str,
                allowed: &[&str],
                into: &mut String|
     -> Result<()> {
        if let Some(value) = value {
            if !allowed.contains(&value.value.as_str()) {
                return Err(cx.at(
                    value,
                    format!(
                        "unknown {name} `{}` (one of: {})",
                        value.value,
                        allowed.join(", ")
                    ),
                ));
            }
            value.value.clone_into(into);
        }
        Ok(())
    };
    word(
        &raw.grouping_strategy,
        "grouping_strategy",
        &["ALLGREEN", "HEADGREEN"],
        &mut queue.grouping_strategy,
    )?;
    word(
        &raw.merge_method,
        "merge_method",
        &["MERGE", "SQUASH", "REBASE"],
        &mut queue.merge_method,
    )?;
    Ok(queue)
}
