//! The GitHub REST endpoints behind the port's methods, named by their route templates.

use std::fmt;

/// One GitHub REST endpoint the port uses. Its [`Endpoint::route`] is the key of the call
/// counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Endpoint {
    /// `GET /app` (App JWT).
    GetApp,
    /// `GET /repos/{o}/{r}/pulls`.
    ListPulls,
    /// `GET /repos/{o}/{r}/pulls/{n}`.
    GetPull,
    /// `GET /repos/{o}/{r}/pulls/{n}/commits`.
    ListPullCommits,
    /// `GET /repos/{o}/{r}/pulls/{n}/files`.
    ListPullFiles,
    /// `GET /repos/{o}/{r}/commits/{sha}/check-runs`.
    ListCheckRuns,
    /// `GET /repos/{o}/{r}/actions/runs` (`?head_sha=`).
    ListWorkflowRuns,
    /// `GET /repos/{o}/{r}/actions/runs/{run_id}/jobs` (`?filter=all`).
    ListWorkflowRunJobs,
    /// `GET /repos/{o}/{r}/issues/{n}/timeline`.
    ListTimeline,
    /// `GET /repos/{o}/{r}/activity` (`?ref=`).
    ListActivity,
    /// `GET /repos/{o}/{r}/issues/{n}/comments`.
    ListComments,
    /// `GET /repos/{o}/{r}/issues/{n}/reactions`.
    ListReactions,
    /// `GET /repos/{o}/{r}/branches/{branch}`.
    GetBranch,
    /// `GET /repos/{o}/{r}` (the repository, for its `default_branch`).
    GetRepo,
    /// `GET /repos/{o}/{r}/rules/branches/{branch}` (the active rules that apply to a
    /// branch).
    ListBranchRules,
    /// `GET /repos/{o}/{r}/issues`.
    ListIssues,
    /// `POST /repos/{o}/{r}/issues/{n}/comments`.
    CreateComment,
    /// `PATCH /repos/{o}/{r}/issues/comments/{id}`.
    UpdateComment,
    /// `POST /repos/{o}/{r}/issues/{n}/labels`.
    AddLabels,
    /// `DELETE /repos/{o}/{r}/issues/{n}/labels/{label}`.
    RemoveLabel,
    /// `POST /repos/{o}/{r}/issues`.
    CreateIssue,
    /// `PATCH /repos/{o}/{r}/issues/{n}`.
    UpdateIssue,
    /// `PUT /repos/{o}/{r}/pulls/{n}/merge`.
    MergePull,
    /// `PUT /repos/{o}/{r}/pulls/{n}/update-branch`.
    UpdateBranch,
    /// `GET /repos/{o}/{r}/commits/{sha}`.
    GetCommit,
    /// `GET /repos/{o}/{r}/commits` (`?sha=<branch>`).
    ListCommits,
    /// `GET /repos/{o}/{r}/contents/{path}` (`?ref=`).
    GetContents,
    /// `PUT /repos/{o}/{r}/contents/{path}`.
    PutContents,
    /// `GET /repos/{o}/{r}/git/trees/{ref}` (`?recursive=1`).
    GetTree,
    /// `POST /repos/{o}/{r}/git/refs`.
    CreateRef,
    /// `PATCH /repos/{o}/{r}/git/refs/{ref}` (`heads/<branch>`, with `sha` and `force`).
    UpdateRef,
    /// `POST /repos/{o}/{r}/merges` (a commit merged into a branch).
    MergeBranch,
    /// `GET /repos/{o}/{r}/commits/{sha}/pulls`.
    ListCommitPulls,
    /// `GET /repos/{o}/{r}/compare/{basehead}` (`base...head`).
    Compare,
    /// `POST /repos/{o}/{r}/pulls`.
    CreatePull,
    /// `git push` of a revert commit to `https://github.com/{o}/{r}.git` (git's smart
    /// HTTP protocol, not the REST API).
    GitPush,
    /// `GET /repos/{o}/{r}/git/matching-refs/{ref}` (the merge queue's group branches).
    ListMatchingRefs,
    /// `POST /repos/{o}/{r}/check-runs`.
    CreateCheckRun,
    /// `POST /graphql` with the label query (`repository { label(name:) }`): GitHub's
    /// record of one label. GraphQL has its own budget, so it spends nothing of the REST
    /// limit.
    GraphqlLabel,
    /// `POST /graphql` with the merge queue query (`repository { mergeQueue(branch:) }`).
    GraphqlMergeQueue,
    /// `POST /graphql` with a pull request's queue entry (`pullRequest { isInMergeQueue
    /// mergeQueueEntry }`).
    GraphqlQueueEntry,
    /// `POST /graphql` with a pull request's last removal from its merge queue
    /// (`timelineItems(itemTypes: [REMOVED_FROM_MERGE_QUEUE_EVENT])`).
    GraphqlQueueRemoval,
    /// `POST /graphql` with the `enqueuePullRequest` mutation.
    GraphqlEnqueue,
    /// `POST /graphql` with the `dequeuePullRequest` mutation.
    GraphqlDequeue,
}

impl Endpoint {
    /// The method and route template, e.g. `GET /repos/{o}/{r}/pulls`.
    pub fn route(self) -> &'static str {
        match self {
            Self::GetApp => "GET /app",
            Self::ListPulls => "GET /repos/{o}/{r}/pulls",
            Self::GetPull => "GET /repos/{o}/{r}/pulls/{n}",
            Self::ListPullCommits => "GET /repos/{o}/{r}/pulls/{n}/commits",
            Self::ListPullFiles => "GET /repos/{o}/{r}/pulls/{n}/files",
            Self::ListCheckRuns => "GET /repos/{o}/{r}/commits/{sha}/check-runs",
            Self::ListWorkflowRuns => "GET /repos/{o}/{r}/actions/runs",
            Self::ListWorkflowRunJobs => "GET /repos/{o}/{r}/actions/runs/{run_id}/jobs",
            Self::ListTimeline => "GET /repos/{o}/{r}/issues/{n}/timeline",
            Self::ListActivity => "GET /repos/{o}/{r}/activity",
            Self::ListComments => "GET /repos/{o}/{r}/issues/{n}/comments",
            Self::ListReactions => "GET /repos/{o}/{r}/issues/{n}/reactions",
            Self::GetBranch => "GET /repos/{o}/{r}/branches/{branch}",
            Self::GetRepo => "GET /repos/{o}/{r}",
            Self::ListBranchRules => "GET /repos/{o}/{r}/rules/branches/{branch}",
            Self::ListIssues => "GET /repos/{o}/{r}/issues",
            Self::CreateComment => "POST /repos/{o}/{r}/issues/{n}/comments",
            Self::UpdateComment => "PATCH /repos/{o}/{r}/issues/comments/{id}",
            Self::AddLabels => "POST /repos/{o}/{r}/issues/{n}/labels",
            Self::RemoveLabel => "DELETE /repos/{o}/{r}/issues/{n}/labels/{label}",
            Self::CreateIssue => "POST /repos/{o}/{r}/issues",
            Self::UpdateIssue => "PATCH /repos/{o}/{r}/issues/{n}",
            Self::MergePull => "PUT /repos/{o}/{r}/pulls/{n}/merge",
            Self::UpdateBranch => "PUT /repos/{o}/{r}/pulls/{n}/update-branch",
            Self::GetCommit => "GET /repos/{o}/{r}/commits/{sha}",
            Self::ListCommits => "GET /repos/{o}/{r}/commits",
            Self::GetContents => "GET /repos/{o}/{r}/contents/{path}",
            Self::PutContents => "PUT /repos/{o}/{r}/contents/{path}",
            Self::GetTree => "GET /repos/{o}/{r}/git/trees/{ref}",
            Self::CreateRef => "POST /repos/{o}/{r}/git/refs",
            Self::UpdateRef => "PATCH /repos/{o}/{r}/git/refs/{ref}",
            Self::MergeBranch => "POST /repos/{o}/{r}/merges",
            Self::ListCommitPulls => "GET /repos/{o}/{r}/commits/{sha}/pulls",
            Self::Compare => "GET /repos/{o}/{r}/compare/{basehead}",
            Self::CreatePull => "POST /repos/{o}/{r}/pulls",
            Self::GitPush => "git push {o}/{r}",
            Self::ListMatchingRefs => "GET /repos/{o}/{r}/git/matching-refs/{ref}",
            Self::CreateCheckRun => "POST /repos/{o}/{r}/check-runs",
            Self::GraphqlLabel
            | Self::GraphqlMergeQueue
            | Self::GraphqlQueueEntry
            | Self::GraphqlQueueRemoval
            | Self::GraphqlEnqueue
            | Self::GraphqlDequeue => "POST /graphql",
        }
    }

    /// Whether a call spends the installation's primary rate limit (`GET /app` is made
    /// with the App's JWT, which has its own budget; a git push is not a REST call).
    pub fn spends_rate_limit(self) -> bool {
        !matches!(
            self,
            Self::GetApp
                | Self::GitPush
                | Self::GraphqlLabel
                | Self::GraphqlMergeQueue
                | Self::GraphqlQueueEntry
                | Self::GraphqlQueueRemoval
                | Self::GraphqlEnqueue
                | Self::GraphqlDequeue
        )
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.route())
    }
}
