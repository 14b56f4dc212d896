//! The git side of `push_revert`: the installation token for the push, handed to the git
//! implementation in `git_revert`.

use mp_core::ids::{CommitSha, RepoName};
use mp_core::port::GitHubError;

use super::Secret;
use super::transport::Transport;

/// The token behind the `Authorization` header for `repo` (`Bearer <token>`), for git over
/// HTTPS; `None` when the header is not a bearer token.
pub(crate) async fn installation_token(
    transport: &Transport,
    repo: &RepoName,
) -> Result<Option<Secret>, GitHubError> {
    let header = transport
        .auth()
        .header(transport.http(), transport.api_url(), Some(repo))
        .await?;
    let token = header
        .to_str()
        .ok()
        .and_then(|value| value.strip_prefix("Bearer "))
        .map(Secret::new);
    Ok(token)
}

/// Creates `branch` with one commit reverting `sha` and pushes it to `remote_url`, with
/// git (see [`super::git_revert::push_revert_with_git`]).
pub(crate) async fn push_with_git(
    remote_url: &str,
    token: Option<&Secret>,
    sha: &CommitSha,
    branch: &str,
    message: &str,
) -> Result<CommitSha, GitHubError> {
    super::git_revert::push_revert_with_git(remote_url, token, sha, branch, message).await
}
