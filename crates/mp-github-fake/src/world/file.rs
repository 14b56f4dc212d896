//! The world file as written: strict serde structures with source locations, before ids
//! are resolved and defaults applied.

use std::collections::BTreeMap;

use mp_core::config::yaml::{SpannedMap, strict_options};
use mp_core::ids::{Login, RepoName, Timestamp};
use serde::Deserialize;
use serde_saphyr::Spanned;

use super::LoadWorldError;

/// Parses the text strictly: only `true`/`false` are booleans, untyped scalars are never
/// read as text (`1` must be quoted to be a string), merge keys, tags and duplicate keys
/// are refused, and unknown keys are errors.
///
/// The parser's node and event budget grows with the text (a benchmark world of 10,000
/// pull requests has millions of nodes), so it still bounds what aliases can expand to.
pub(super) fn parse(file: &str, text: &str) -> Result<RawWorld, LoadWorldError> {
    let mut options = strict_options();
    let mut budget = options.budget.unwrap_or_default();
    budget.max_nodes = budget.max_nodes.max(text.len());
    budget.max_events = budget.max_events.max(text.len());
    options.budget = Some(budget);
    serde_saphyr::from_str_with_options(text, options)
        .map_err(|err| LoadWorldError::from_yaml(file, &err))
}

/// A login, checked while parsing (so a bad one is reported at its line).
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "String")]
pub(super) struct LoginText(pub(super) Login);

impl TryFrom<String> for LoginText {
    type Error = String;
    fn try_from(text: String) -> Result<Self, String> {
        Login::parse(&text).map(Self).map_err(|e| e.to_string())
    }
}

/// A timestamp, checked while parsing, to the whole second: GitHub's API has no fractions
/// of a second, so a world never holds one.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(try_from = "String")]
pub(super) struct TimeText(pub(super) Timestamp);

impl TryFrom<String> for TimeText {
    type Error = String;
    fn try_from(text: String) -> Result<Self, String> {
        Timestamp::parse(&text)
            .map(|at| Self(at.whole_second()))
            .map_err(|e| e.to_string())
    }
}

/// A repository name, checked while parsing.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "String")]
pub(super) struct RepoText(pub(super) RepoName);

impl TryFrom<String> for RepoText {
    type Error = String;
    fn try_from(text: String) -> Result<Self, String> {
        RepoName::parse(&text).map(Self).map_err(|e| e.to_string())
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawWorld {
    pub(super) now: TimeText,
    pub(super) bot: Spanned<String>,
    #[serde(default)]
    pub(super) config: Option<RawConfig>,
    #[serde(default)]
    pub(super) receipt_key: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) receipt_key_previous: Option<Spanned<RawPreviousKey>>,
    #[serde(default)]
    pub(super) rate_limit: Option<RawRateLimit>,
    #[serde(default)]
    pub(super) repos: Vec<Spanned<RawRepo>>,
    #[serde(default)]
    pub(super) ci: Option<Spanned<RawCi>>,
    #[serde(default)]
    pub(super) app_permissions: Option<Spanned<BTreeMap<String, String>>>,
}

/// The receipt key a rotation replaced and the end of its window.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPreviousKey {
    pub(super) key: String,
    pub(super) until: TimeText,
}

/// A repository label: a name, or a name with a colour, a description, GitHub's times and
/// the name it had before a rename.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum RawLabel {
    Name(String),
    Full {
        name: String,
        #[serde(default)]
        color: Option<String>,
        #[serde(default)]
        description: Option<String>,
        #[serde(default)]
        created_at: Option<TimeText>,
        #[serde(default)]
        updated_at: Option<TimeText>,
        #[serde(default)]
        renamed_from: Option<String>,
    },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCi {
    pub(super) checks: Vec<Spanned<String>>,
    pub(super) app: Spanned<String>,
    pub(super) minutes: u32,
    #[serde(default)]
    pub(super) fails: Vec<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawConfig {
    #[serde(default)]
    pub(super) dir: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) files: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRateLimit {
    pub(super) remaining: u32,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRepo {
    pub(super) name: Spanned<RepoText>,
    #[serde(default)]
    pub(super) commits: Vec<Spanned<RawCommit>>,
    #[serde(default)]
    pub(super) branches: SpannedMap<Spanned<String>>,
    #[serde(default)]
    pub(super) files: BTreeMap<String, String>,
    #[serde(default)]
    pub(super) branch_files: SpannedMap<BTreeMap<String, String>>,
    #[serde(default)]
    pub(super) pulls: Vec<Spanned<RawPull>>,
    #[serde(default)]
    pub(super) issues: Vec<Spanned<RawIssue>>,
    #[serde(default)]
    pub(super) tree_truncated: bool,
    #[serde(default)]
    pub(super) default_branch: Option<Spanned<String>>,
    #[serde(default = "installed")]
    pub(super) app_installed: bool,
    #[serde(default)]
    pub(super) labels: Vec<Spanned<RawLabel>>,
    #[serde(default)]
    pub(super) activity: SpannedMap<Vec<Spanned<RawPush>>>,
    /// The rules active rulesets apply to each branch, by GitHub's rule type.
    #[serde(default)]
    pub(super) branch_rules: SpannedMap<Vec<Spanned<String>>>,
    /// The parameters of the `merge_queue` rule of each branch behind GitHub's merge queue
    /// (a branch named here has the rule).
    #[serde(default)]
    pub(super) merge_queues: SpannedMap<RawMergeQueue>,
    /// The deployment environments.
    #[serde(default)]
    pub(super) environments: Vec<RawEnvironment>,
    /// Every merge group made and ended, oldest first.
    #[serde(default)]
    pub(super) merge_group_log: Vec<Spanned<RawGroupEvent>>,
}

/// A merge group made (`destroyed` left out) or ended (`destroyed: merged`, ...):
/// `{branch: main, pull: 7, base: main-1, head: g7, entries: [7], made: <time>, at: <time>}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawGroupEvent {
    pub(super) branch: Spanned<String>,
    pub(super) pull: Spanned<u64>,
    pub(super) base: Spanned<String>,
    pub(super) head: Spanned<String>,
    pub(super) entries: Vec<u64>,
    pub(super) made: TimeText,
    pub(super) at: TimeText,
    #[serde(default)]
    pub(super) destroyed: Option<Spanned<String>>,
}

/// A merge group: `{pull: 7, base: main-1, head: g7, entries: [7], made: <time>}`; its
/// branch is `gh-readonly-queue/<branch>/pr-<pull>-<base sha>`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawMergeGroup {
    pub(super) pull: Spanned<u64>,
    pub(super) base: Spanned<String>,
    pub(super) head: Spanned<String>,
    pub(super) entries: Vec<u64>,
    pub(super) made: TimeText,
}

/// A status check a merge queue requires, and the App that must report it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRequiredCheck {
    pub(super) name: String,
    pub(super) app: String,
}

/// The parameters of a branch's `merge_queue` rule, each optional (the fake's defaults,
/// [`crate::world::MergeQueueSettings::default`]), as the REST description names them.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawMergeQueue {
    #[serde(default)]
    pub(super) check_response_timeout_minutes: Option<Spanned<u32>>,
    #[serde(default)]
    pub(super) grouping_strategy: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) max_entries_to_build: Option<Spanned<u32>>,
    #[serde(default)]
    pub(super) max_entries_to_merge: Option<Spanned<u32>>,
    #[serde(default)]
    pub(super) merge_method: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) min_entries_to_merge: Option<Spanned<u32>>,
    #[serde(default)]
    pub(super) min_entries_to_merge_wait_minutes: Option<Spanned<u32>>,
    /// The queue's entries, front first.
    #[serde(default)]
    pub(super) entries: Vec<Spanned<RawQueueEntry>>,
    /// The required status checks of a merge group's head, each with its App; left out:
    /// the simulated CI's.
    #[serde(default)]
    pub(super) required_checks: Option<Vec<RawRequiredCheck>>,
    /// The live merge groups, front first (group `i` is entry `i`'s).
    #[serde(default)]
    pub(super) groups: Vec<Spanned<RawMergeGroup>>,
}

/// A pull request in a branch's merge queue: `{pull: 7, by: alice, at: <time>}`, pinned to
/// the pull request's head unless `head` names another commit.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawQueueEntry {
    pub(super) pull: Spanned<u64>,
    pub(super) by: LoginText,
    pub(super) at: TimeText,
    #[serde(default)]
    pub(super) head: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) jump: bool,
    /// `QUEUED` (the default), `AWAITING_CHECKS`, `MERGEABLE`, `UNMERGEABLE` or `LOCKED`.
    #[serde(default)]
    pub(super) state: Option<Spanned<String>>,
}

/// A deployment environment: `{name: mp, reviewers: [alice], branches: [main]}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawEnvironment {
    pub(super) name: Spanned<String>,
    /// The people (logins) its `required_reviewers` rule names.
    #[serde(default)]
    pub(super) reviewers: Vec<String>,
    /// Which branches may deploy: `any` (no policy, the default), `protected`, or a list of
    /// name patterns (`main`, `release/*`; `tag:v*` for a tag pattern).
    #[serde(default)]
    pub(super) branches: Option<Spanned<RawEnvironmentBranches>>,
}

/// `any`, `protected`, or a list of patterns.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum RawEnvironmentBranches {
    Keyword(String),
    Patterns(Vec<String>),
}

fn installed() -> bool {
    true
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCommit {
    pub(super) id: Spanned<String>,
    pub(super) message: String,
    #[serde(default)]
    pub(super) parents: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) author: Option<LoginText>,
    #[serde(default)]
    pub(super) committer: Option<LoginText>,
    #[serde(default)]
    pub(super) date: Option<TimeText>,
    #[serde(default)]
    pub(super) checks: Vec<Spanned<RawCheck>>,
    /// How many commits in a line the entry stands for (1 when absent).
    #[serde(default)]
    pub(super) chain: Option<Spanned<u32>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum RawCheckStatus {
    Queued,
    InProgress,
    Completed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum RawConclusion {
    Success,
    Failure,
    Neutral,
    Cancelled,
    Skipped,
    TimedOut,
    ActionRequired,
    Stale,
}

impl RawConclusion {
    pub(super) fn as_github(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::Failure => "failure",
            Self::Neutral => "neutral",
            Self::Cancelled => "cancelled",
            Self::Skipped => "skipped",
            Self::TimedOut => "timed_out",
            Self::ActionRequired => "action_required",
            Self::Stale => "stale",
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCheck {
    pub(super) name: String,
    #[serde(default)]
    pub(super) status: Option<RawCheckStatus>,
    #[serde(default)]
    pub(super) conclusion: Option<RawConclusion>,
    #[serde(default)]
    pub(super) app: Option<String>,
    #[serde(default)]
    pub(super) started_at: Option<TimeText>,
    #[serde(default)]
    pub(super) completed_at: Option<TimeText>,
    #[serde(default)]
    pub(super) summary: Option<String>,
    #[serde(default)]
    pub(super) workflow: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum RawState {
    Open,
    Closed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum RawFileStatus {
    Added,
    #[default]
    Modified,
    Removed,
    Renamed,
    Copied,
    Changed,
    Unchanged,
}

impl RawFileStatus {
    pub(super) fn as_github(self) -> &'static str {
        match self {
            Self::Added => "added",
            Self::Modified => "modified",
            Self::Removed => "removed",
            Self::Renamed => "renamed",
            Self::Copied => "copied",
            Self::Changed => "changed",
            Self::Unchanged => "unchanged",
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFile {
    pub(super) path: String,
    #[serde(default)]
    pub(super) status: RawFileStatus,
    #[serde(default)]
    pub(super) additions: u64,
    #[serde(default)]
    pub(super) deletions: u64,
    #[serde(default)]
    pub(super) previous_filename: Option<String>,
    #[serde(default)]
    pub(super) content: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawEvent {
    #[serde(default)]
    pub(super) labeled: Option<String>,
    #[serde(default)]
    pub(super) unlabeled: Option<String>,
    /// A change of the pull request's base; the text (the previous base, or empty) is for
    /// the reader only.
    #[serde(default)]
    pub(super) base_ref_changed: Option<String>,
    #[serde(default)]
    pub(super) by: Option<LoginText>,
    #[serde(default)]
    pub(super) at: Option<TimeText>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawComment {
    #[serde(default)]
    pub(super) author: Option<LoginText>,
    pub(super) body: String,
    #[serde(default)]
    pub(super) at: Option<TimeText>,
    /// When somebody last edited it (GitHub's `updated_at`); absent: never edited.
    #[serde(default)]
    pub(super) edited_at: Option<TimeText>,
}

/// One update of a pull request's head branch in GitHub's activity log.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPush {
    /// The commit the branch points to afterwards (absent for a deletion).
    #[serde(default)]
    pub(super) to: Option<Spanned<String>>,
    /// `push` (default), `force_push`, `branch_creation`, `branch_deletion`, and for a
    /// branch's `activity` also `pr_merge` and `merge_queue_merge`.
    #[serde(default, rename = "type")]
    pub(super) kind: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) by: Option<LoginText>,
    #[serde(default)]
    pub(super) at: Option<TimeText>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub(super) enum RawReactionContent {
    #[serde(rename = "+1")]
    ThumbsUp,
    #[serde(rename = "-1")]
    ThumbsDown,
    #[serde(rename = "laugh")]
    Laugh,
    #[serde(rename = "confused")]
    Confused,
    #[serde(rename = "heart")]
    Heart,
    #[serde(rename = "hooray")]
    Hooray,
    #[serde(rename = "rocket")]
    Rocket,
    #[serde(rename = "eyes")]
    Eyes,
}

impl RawReactionContent {
    pub(super) fn as_github(self) -> &'static str {
        match self {
            Self::ThumbsUp => "+1",
            Self::ThumbsDown => "-1",
            Self::Laugh => "laugh",
            Self::Confused => "confused",
            Self::Heart => "heart",
            Self::Hooray => "hooray",
            Self::Rocket => "rocket",
            Self::Eyes => "eyes",
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawReaction {
    pub(super) content: RawReactionContent,
    pub(super) by: LoginText,
    #[serde(default)]
    pub(super) at: Option<TimeText>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPull {
    pub(super) number: Spanned<u64>,
    pub(super) title: String,
    #[serde(default)]
    pub(super) body: String,
    /// Absent: a deleted account (GitHub sends `"user": null`).
    #[serde(default)]
    pub(super) author: Option<LoginText>,
    pub(super) head: Spanned<String>,
    #[serde(default)]
    pub(super) head_commit: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) base: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) base_commit: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) commits: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    pub(super) labels: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) events: Vec<Spanned<RawEvent>>,
    #[serde(default)]
    pub(super) files: Vec<Spanned<RawFile>>,
    #[serde(default)]
    pub(super) checks: Vec<Spanned<RawCheck>>,
    #[serde(default)]
    pub(super) comments: Vec<RawComment>,
    #[serde(default)]
    pub(super) reactions: Vec<RawReaction>,
    #[serde(default)]
    pub(super) state: Option<Spanned<RawState>>,
    #[serde(default)]
    pub(super) merged: bool,
    #[serde(default = "yes")]
    pub(super) mergeable: bool,
    #[serde(default)]
    pub(super) merged_by: Option<Spanned<LoginText>>,
    #[serde(default)]
    pub(super) merge_commit: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) merged_at: Option<Spanned<TimeText>>,
    #[serde(default)]
    pub(super) created_at: Option<TimeText>,
    #[serde(default)]
    pub(super) comments_unreadable: bool,
    #[serde(default)]
    pub(super) head_repo: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) pushes: Option<Vec<Spanned<RawPush>>>,
    #[serde(default)]
    pub(super) generated_files: u32,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawIssue {
    pub(super) number: Spanned<u64>,
    pub(super) title: String,
    #[serde(default)]
    pub(super) body: String,
    #[serde(default)]
    pub(super) author: Option<LoginText>,
    #[serde(default)]
    pub(super) state: Option<RawState>,
    #[serde(default)]
    pub(super) labels: Vec<Spanned<String>>,
    #[serde(default)]
    pub(super) events: Vec<Spanned<RawEvent>>,
    #[serde(default)]
    pub(super) comments: Vec<RawComment>,
    #[serde(default)]
    pub(super) reactions: Vec<RawReaction>,
    #[serde(default)]
    pub(super) created_at: Option<TimeText>,
}
