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
    /// `GET /repos/{o}/{r}/issues/{n}/timeline`.
    ListTimeline,
    /// `GET /repos/{o}/{r}/issues/{n}/comments`.
    ListComments,
    /// `GET /repos/{o}/{r}/issues/{n}/reactions`.
    ListReactions,
    /// `GET /repos/{o}/{r}/branches/{branch}`.
    GetBranch,
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
            Self::ListTimeline => "GET /repos/{o}/{r}/issues/{n}/timeline",
            Self::ListComments => "GET /repos/{o}/{r}/issues/{n}/comments",
            Self::ListReactions => "GET /repos/{o}/{r}/issues/{n}/reactions",
            Self::GetBranch => "GET /repos/{o}/{r}/branches/{branch}",
            Self::ListIssues => "GET /repos/{o}/{r}/issues",
            Self::CreateComment => "POST /repos/{o}/{r}/issues/{n}/comments",
            Self::UpdateComment => "PATCH /repos/{o}/{r}/issues/comments/{id}",
            Self::AddLabels => "POST /repos/{o}/{r}/issues/{n}/labels",
            Self::RemoveLabel => "DELETE /repos/{o}/{r}/issues/{n}/labels/{label}",
            Self::CreateIssue => "POST /repos/{o}/{r}/issues",
            Self::UpdateIssue => "PATCH /repos/{o}/{r}/issues/{n}",
            Self::MergePull => "PUT /repos/{o}/{r}/pulls/{n}/merge",
            Self::UpdateBranch => "PUT /repos/{o}/{r}/pulls/{n}/update-branch",
        }
    }

    /// Whether a call spends the installation's primary rate limit (`GET /app` is made
    /// with the App's JWT, which has its own budget).
    pub fn spends_rate_limit(self) -> bool {
        self != Self::GetApp
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.route())
    }
}
