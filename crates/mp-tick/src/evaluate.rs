//! The read-only half of the pull-request path: build the context, read the receipts,
//! classify, plan the receipts and evaluate the gate — everything the tick decides before
//! it writes anything, shared with `mp explain`.

use mp_core::approval::{
    AUTO_REVERT, BindPlan, LabelVerification, Receipt, Receipts, TrustRoots, Unverified,
    VerifiedBy, plan_receipts, requires_receipt, verify_label,
};
use mp_core::classifier::{
    AutoRevertLabel, AutoRevertProof, ClassifierFacts, Verdict, classify_with,
};
use mp_core::context::{
    CheckRun, Comment, CommitContext, FileChange, HeadHistory, LabelEvent, LabelRecords, PrContext,
};
use mp_core::gate::{GateInput, GatePolicy, GateReport, evaluate_gate_with};
use mp_core::ids::{CommitSha, RepoName, Timestamp};
use mp_core::port::{AuditRecord, AuditVote, GitHub, GitHubError, PullRequest};
use mp_core::quadrant::Quadrant;
use mp_core::skill::SkillFailure;

pub use mp_core::route::Route;

use super::TickSetup;
use super::skills::{user_results, user_votes};

/// Everything the tick knows about one pull request before it writes anything.
///
/// The receipts the writer would post this tick are already applied to
/// [`PrEvaluation::receipts`] (they count the same tick), so the gate report is the one the
/// tick acts on.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PrEvaluation {
    /// The pull request with its commits, files, check runs and label events.
    pub pr: PrContext,
    /// Its comments, oldest first (receipts and earlier diagnostics among them).
    pub comments: Vec<Comment>,
    /// The receipts as the gate honours them: those read from the comments plus those the
    /// writer binds this tick.
    pub receipts: Receipts,
    /// The receipt writer's decision for each receipt label present, in label order.
    pub receipt_plans: Vec<BindPlan>,
    /// The status of `decision:auto-revert` handed to the classifier.
    pub auto_revert: AutoRevertLabel,
    /// The classifier verdict (votes of disabled rules left out).
    pub verdict: Verdict,
    /// The gated branch's head the gate compared the base with (C4).
    pub main_head: CommitSha,
    /// The branch the repository gates (`main` unless GitHub or `projects.yml` says
    /// otherwise); a pull request into any other base is ignored.
    pub gated_branch: String,
    /// The policy the gate ran with.
    pub policy: GatePolicy,
    /// The gate report (results of disabled validators left out; user validators last).
    pub gate: GateReport,
    /// The user skill calls that failed on this pull request, in call order: each counted
    /// as "pass, no contribution".
    pub skill_failures: Vec<SkillFailure>,
}

impl PrEvaluation {
    /// Where the gate sends the pull request.
    pub fn route(&self) -> Route {
        if self.pr.base_ref != self.gated_branch {
            Route::Ignored
        } else if self.gate.passed() {
            Route::Mergeable
        } else if self.verdict.quadrant == Quadrant::D && self.gate.awaits_owner_only() {
            Route::Inbox
        } else if self.gate.awaits_update_only() {
            Route::Update
        } else if self.gate.awaits_checks_only() {
            Route::Waiting
        } else {
            Route::Blocked
        }
    }

    /// The receipt plans that write a receipt this tick. A carried-over binding is
    /// re-proved from GitHub's activity log on every tick, so its record is written only
    /// when the pull request merges on it: a pull request that waits through several of
    /// mp's updates gets one comment, not one per update (decisions/0026).
    pub fn receipts_to_write(&self) -> impl Iterator<Item = &BindPlan> {
        // In `github-queue` mode nothing merges yet: the route writes nothing
        // (decisions/0074).
        let merging = self.route() == Route::Mergeable
            && self.policy.merge_mode != mp_core::config::RepoMergeMode::GitHubQueue;
        self.receipt_plans
            .iter()
            .filter(move |plan| plan.binds() && (merging || !plan.carries_over()))
    }

    /// The blocking results, one line each, joined with `"; "`.
    pub fn blocking_summary(&self) -> String {
        self.gate.blocking_summary()
    }

    /// The audit record of this classification, taken at `now`.
    pub fn audit_record(&self, now: Timestamp) -> AuditRecord {
        AuditRecord {
            at: now,
            pr: self.pr.reference(),
            head_sha: self.pr.head_sha.clone(),
            quadrant: self.verdict.quadrant,
            votes: self
                .verdict
                .votes
                .iter()
                .map(|vote| AuditVote {
                    rule: vote.rule.code().to_owned(),
                    quadrant: vote.quadrant,
                    reasoning: vote.reasoning.clone(),
                })
                .collect(),
        }
    }
}

/// Reads the context of a listed pull request: its commits, files, the check runs of its
/// head and its label timeline (bot.md §6.5 step 1), and — only when an approval label
/// (`ready-to-merge`, `decision:approved-A/B`, `decision:auto-revert`) is on it — GitHub's
/// record of its head branch, the evidence of which head such a label was applied to, and
/// GitHub's record of those labels, the evidence that none was renamed since.
///
/// # Errors
/// The first [`GitHubError`] of those reads.
pub async fn fetch_context(
    github: &dyn GitHub,
    pull: &PullRequest,
) -> Result<PrContext, GitHubError> {
    let (repo, number) = (&pull.repo, pull.number);
    let commits = github.pull_commits(repo, number).await?;
    let files = github.pull_files(repo, number).await?;
    let check_runs = github.check_runs(repo, &pull.head_sha).await?;
    let label_events = github.label_events(repo, number).await?;
    let head_history = head_history(github, pull).await?;
    let records = label_records(github, pull).await?;
    let mut pr = context_of(pull, commits, files, check_runs, label_events, head_history);
    pr.label_records = records;
    pr.base_history =
        base_history(github, &pull.repo, &pull.base_ref, &merged_parents(&pr)).await?;
    Ok(pr)
}

/// Whether `policy` binds a required check to a workflow file: the tick then reads the
/// jobs of the workflow runs on each head (decisions/0047).
pub(crate) fn binds_workflows(policy: &GatePolicy) -> bool {
    policy
        .required_checks
        .iter()
        .any(|name| policy.required_check_workflows.contains_key(name))
}

/// The jobs of the workflow runs on `pr`'s head, into its context.
///
/// # Errors
/// The read's [`GitHubError`]; [`GitHubError::NotFound`] (an adapter or server without
/// workflow runs) leaves the jobs empty, and every bound check then fails closed.
pub(crate) async fn read_workflow_jobs(
    github: &dyn GitHub,
    pr: &mut PrContext,
) -> Result<(), GitHubError> {
    match github.workflow_jobs(&pr.repo, &pr.head_sha).await {
        Ok(jobs) => pr.workflow_jobs = jobs,
        Err(GitHubError::NotFound { .. }) => pr.workflow_jobs = Vec::new(),
        Err(err) => return Err(err),
    }
    Ok(())
}

/// The second parents of the merges that pushes of the head branch left as its tip (GitHub's
/// activity log): the commits the base branch's log must show for such a merge to carry a
/// label over ([`merged_from_base`](mp_core::approval::merged_from_base)). Empty when the
/// head history was not read or no push left a merge.
pub(crate) fn merged_parents(pr: &PrContext) -> Vec<CommitSha> {
    let HeadHistory::Read(updates) = &pr.head_history else {
        return Vec::new();
    };
    let mut parents: Vec<CommitSha> = updates
        .iter()
        .filter_map(|update| update.after.as_ref())
        .filter_map(|after| pr.commits.iter().find(|commit| commit.sha == *after))
        .filter(|commit| commit.parents.len() == 2)
        .map(|commit| commit.parents[1].clone())
        .collect();
    parents.sort();
    parents.dedup();
    parents
}

/// The base branch's update history, read back as far as `parents` (none: not read). A
/// base branch whose log GitHub does not have is `Unavailable`, and no label carries over
/// a merge on it.
pub(crate) async fn base_history(
    github: &dyn GitHub,
    repo: &RepoName,
    base_ref: &str,
    parents: &[CommitSha],
) -> Result<HeadHistory, GitHubError> {
    if parents.is_empty() {
        return Ok(HeadHistory::NotRead);
    }
    match github.branch_updates_until(repo, base_ref, parents).await {
        Ok(updates) => Ok(HeadHistory::Read(updates)),
        Err(GitHubError::NotFound { what }) => Ok(HeadHistory::Unavailable {
            reason: format!("{what} not found"),
        }),
        Err(err) => Err(err),
    }
}

/// The context of a listed pull request from its reads.
pub(crate) fn context_of(
    pull: &PullRequest,
    commits: Vec<CommitContext>,
    files: Vec<FileChange>,
    check_runs: Vec<CheckRun>,
    label_events: Vec<LabelEvent>,
    head_history: HeadHistory,
) -> PrContext {
    PrContext {
        workflow_jobs: Vec::new(),
        repo: pull.repo.clone(),
        number: pull.number,
        title: pull.title.clone(),
        body: pull.body.clone(),
        head_sha: pull.head_sha.clone(),
        head_ref: pull.head_ref.clone(),
        base_sha: pull.base_sha.clone(),
        base_ref: pull.base_ref.clone(),
        state: pull.state,
        merged: pull.merged,
        labels: pull.labels.clone(),
        author: pull.author.clone(),
        commits,
        files,
        check_runs,
        label_events,
        head_history,
        base_history: HeadHistory::NotRead,
        label_records: LabelRecords::NotRead,
    }
}

/// Whether `label` is an approval label: bound to a head, verified through its applier.
fn is_approval(label: &String) -> bool {
    requires_receipt(label) || label == AUTO_REVERT
}

/// The approval labels on `pull`, whose records [`GitHub::label_records`] reads.
pub(crate) fn approval_labels(pull: &PullRequest) -> Vec<String> {
    let mut names: Vec<String> = pull
        .labels
        .iter()
        .filter(|l| is_approval(l))
        .cloned()
        .collect();
    names.sort();
    names.dedup();
    names
}

/// GitHub's record of the approval labels on `pull` (when it was created and last edited),
/// read only when one is present (decisions/0048). GitHub answering that it has none to
/// give leaves them `Unavailable`, and no approval label is honoured.
pub(crate) async fn label_records(
    github: &dyn GitHub,
    pull: &PullRequest,
) -> Result<LabelRecords, GitHubError> {
    let names = approval_labels(pull);
    if names.is_empty() {
        return Ok(LabelRecords::NotRead);
    }
    match github.label_records(&pull.repo, &names).await {
        Ok(records) => Ok(LabelRecords::Read(records)),
        Err(GitHubError::NotFound { what }) => Ok(LabelRecords::Unavailable {
            reason: format!("{what} not found"),
        }),
        Err(err) => Err(err),
    }
}

/// The head history of `pull` when it needs no read: no label bound to a head is on it
/// (`NotRead`), or its head branch is not in the repository (`Unavailable`). `None` when the
/// activity log must be read.
pub(crate) fn head_history_unread(pull: &PullRequest) -> Option<HeadHistory> {
    if !pull.labels.iter().any(is_approval) {
        return Some(HeadHistory::NotRead);
    }
    match &pull.head_repo {
        Some(head_repo) if *head_repo == pull.repo => None,
        Some(head_repo) => Some(HeadHistory::Unavailable {
            reason: format!("the head branch is in the fork {head_repo}"),
        }),
        None => Some(HeadHistory::Unavailable {
            reason: "the head repository is unknown (deleted fork)".to_owned(),
        }),
    }
}

/// The head branch's update history when the pull request carries a label that is bound
/// to a head; a head branch in another repository (a fork) is never read: mp proves
/// nothing about a repository it does not supervise.
pub(crate) async fn head_history(
    github: &dyn GitHub,
    pull: &PullRequest,
) -> Result<HeadHistory, GitHubError> {
    if let Some(history) = head_history_unread(pull) {
        return Ok(history);
    }
    match github.head_ref_updates(&pull.repo, &pull.head_ref).await {
        Ok(updates) => Ok(HeadHistory::Read(updates)),
        Err(GitHubError::NotFound { what }) => Ok(HeadHistory::Unavailable {
            reason: format!("{what} not found"),
        }),
        Err(err) => Err(err),
    }
}

/// Evaluates one pull request without writing anything: context, comments and `main` head
/// are read, then [`assess_pr`] decides. `mp explain` shows exactly what the tick would do.
///
/// # Errors
/// The first [`GitHubError`] of the reads.
pub async fn evaluate_pr(
    github: &dyn GitHub,
    setup: &TickSetup<'_>,
    pull: &PullRequest,
    now: Timestamp,
) -> Result<PrEvaluation, GitHubError> {
    let mut pr = fetch_context(github, pull).await?;
    if binds_workflows(&setup.gate_policy(&pull.repo)) {
        read_workflow_jobs(github, &mut pr).await?;
    }
    let comments = github.comments(&pull.repo, pull.number).await?;
    let main_head = github
        .branch_head(&pull.repo, setup.options.gated_branch(&pull.repo))
        .await?;
    Ok(assess_pr(setup, pr, comments, main_head, now))
}

/// The pure decision over values already read (bot.md §6.5 steps 2-6): receipts from the
/// bot's comments, the classifier verdict, the receipt plan applied to the receipts, and
/// the gate report.
///
/// The user skills of [`TickOptions::skills`](super::TickOptions::skills) take part: the
/// votes of user classifier rules join the built-in votes before the maximum is taken (so
/// they can only raise the quadrant), and user validators run after C1-C5 and the built-in
/// checks, their results appended to the gate report. A skill call that fails contributes
/// nothing and is listed in [`PrEvaluation::skill_failures`].
pub fn assess_pr(
    setup: &TickSetup<'_>,
    pr: PrContext,
    comments: Vec<Comment>,
    main_head: CommitSha,
    now: Timestamp,
) -> PrEvaluation {
    let config = setup.config();
    let skills = config.skills();
    let policy = setup.gate_policy(&pr.repo);
    let roots = policy.trust_roots();
    let key = setup.options().receipt_key.as_ref();

    let read = Receipts::parse(&comments, &pr.repo, pr.number, Some(setup.bot()), key);

    let auto_revert = auto_revert_status(&pr, &read, roots);
    let facts = ClassifierFacts {
        bot_repo: config.projects().bot_repo(),
        path_rules: setup.path_rules(),
        publisher_slug: Some(config.env().classifier_publisher_slug()),
        auto_revert: auto_revert.clone(),
    };
    let user_skills = &setup.options().skills;
    let mut skill_failures = Vec::new();
    let votes = user_votes(user_skills, skills, &pr, &mut skill_failures);
    let verdict = classify_with(&pr, &facts, votes, skills.built_ins());

    let receipt_plans = plan_receipts(&pr, &read, roots);
    let mut receipts = read;
    // A receipt signed again keeps its comment: the binding it records is unchanged.
    for plan in receipt_plans
        .iter()
        .filter(|plan| plan.binds() && !plan.resigns())
    {
        receipts.insert(Receipt::new(plan.label.as_str(), plan.head.clone()));
    }

    let mut gate = evaluate_gate_with(
        &GateInput {
            pr: &pr,
            receipts: &receipts,
            main_head: &main_head,
            quadrant: Some(verdict.quadrant),
            policy: &policy,
            now,
        },
        skills.built_ins(),
    );
    gate.extend(user_results(user_skills, skills, &pr, &mut skill_failures));

    let gated_branch = setup.options.gated_branch(&pr.repo).to_owned();
    PrEvaluation {
        gated_branch,
        pr,
        comments,
        receipts,
        receipt_plans,
        auto_revert,
        verdict,
        main_head,
        policy,
        gate,
        skill_failures,
    }
}

/// The `decision:auto-revert` status for the classifier, from the verified-label predicate.
fn auto_revert_status(
    pr: &PrContext,
    receipts: &Receipts,
    roots: TrustRoots<'_>,
) -> AutoRevertLabel {
    match verify_label(pr, AUTO_REVERT, receipts, roots) {
        LabelVerification::Unverified(Unverified::Absent) => AutoRevertLabel::Absent,
        LabelVerification::Unverified(why) => AutoRevertLabel::Unverified {
            reason: why.to_string(),
        },
        LabelVerification::Verified(VerifiedBy::Receipt { applier, head }) => {
            AutoRevertLabel::Verified {
                applier,
                proof: AutoRevertProof::Receipt { head },
            }
        }
        LabelVerification::Verified(VerifiedBy::HeadAtLabel { applier, proof }) => {
            AutoRevertLabel::Verified {
                applier,
                proof: AutoRevertProof::HeadAtLabel(proof),
            }
        }
    }
}
