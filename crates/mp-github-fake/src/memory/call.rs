//! What a test sees of the port calls the in-memory GitHub receives: the ordered log of
//! [`Call`]s (when switched on) and the [`Failure`]s a test injects into their answers.

use std::fmt;

use mp_core::ids::RepoName;
use mp_core::port::GitHubError;

use super::Endpoint;

/// One port call as the in-memory GitHub received it, for a test that asserts which calls
/// a use-case makes and in which order ([`super::MemoryGitHub::log_calls`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The REST route behind the call.
    pub endpoint: Endpoint,
    /// The repository called, if the route names one (`GET /app` does not).
    pub repo: Option<RepoName>,
    /// The values of the route's placeholders after the repository (a number, branch,
    /// path, SHA, label or comment id), in order, then the values of the query parameters
    /// that say what is read (a ref, an issue state, labels).
    pub values: Vec<String>,
    /// The request: the method and the path with every value filled in, then those query
    /// parameters, e.g. `GET /repos/acme/app/contents/README.md?ref=main`. Values are
    /// shown as given, not percent-encoded.
    pub request: String,
}

impl fmt::Display for Call {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.request)
    }
}

/// A failure a test injects into the in-memory GitHub's answers
/// ([`super::MemoryGitHub::fail`]): every later call it matches answers `error` before
/// anything is read or applied, as GitHub answers an error status. The call is still
/// counted, logged and spends the rate limit, as a failed request does on GitHub.
///
/// With [`Failure::answer_lost`] it strikes later: GitHub carries the write out (it is
/// applied and in the action log) and the answer is lost on the way back, so the caller
/// gets `error` for a write that happened.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// The route it applies to; `None`: every route.
    pub endpoint: Option<Endpoint>,
    /// The repository it applies to; `None`: every repository.
    pub repo: Option<RepoName>,
    /// When set, it applies only to calls one of whose [`Call::values`] is this text.
    pub value: Option<String>,
    /// How many matching calls fail before it is spent; `None`: every one.
    pub times: Option<u32>,
    /// The answer.
    pub error: GitHubError,
    /// Whether the answer is lost after the write was applied ([`Failure::answer_lost`])
    /// rather than given before anything happens.
    pub answer_lost: bool,
}

impl Failure {
    /// Every call of `endpoint` fails with `error`.
    pub fn on(endpoint: Endpoint, error: GitHubError) -> Self {
        Self {
            endpoint: Some(endpoint),
            repo: None,
            value: None,
            times: None,
            error,
            answer_lost: false,
        }
    }

    /// Every call, whatever its route, fails with `error` (narrow it with
    /// [`Failure::in_repo`]).
    pub fn on_every_route(error: GitHubError) -> Self {
        Self {
            endpoint: None,
            ..Self::on(Endpoint::GetApp, error)
        }
    }

    /// Only calls on `repo`.
    #[must_use]
    pub fn in_repo(mut self, repo: &RepoName) -> Self {
        self.repo = Some(repo.clone());
        self
    }

    /// Only calls one of whose values is `value`: a pull-request or issue number (`7`), a
    /// branch or ref (`main`), a path, a SHA, a label.
    #[must_use]
    pub fn with_value(mut self, value: impl Into<String>) -> Self {
        self.value = Some(value.into());
        self
    }

    /// Only the next `times` matching calls; later ones answer normally.
    #[must_use]
    pub fn times(mut self, times: u32) -> Self {
        self.times = Some(times);
        self
    }

    /// The write is carried out as GitHub would carry it out (applied, in the action log)
    /// and then `error` answers instead of GitHub's answer: the connection broke after
    /// GitHub did the work. Only a write GitHub carries out loses its answer: a read, and
    /// a write GitHub refuses or that changes nothing (an absent label removed), answer as
    /// usual and do not spend [`Failure::times`].
    #[must_use]
    pub fn answer_lost(mut self) -> Self {
        self.answer_lost = true;
        self
    }

    /// Whether the failure applies to `call`.
    pub fn matches(&self, call: &Call) -> bool {
        self.times != Some(0)
            && self.endpoint.is_none_or(|e| e == call.endpoint)
            && self
                .repo
                .as_ref()
                .is_none_or(|r| call.repo.as_ref() == Some(r))
            && self
                .value
                .as_ref()
                .is_none_or(|v| call.values.iter().any(|c| c == v))
    }
}

/// The call of `endpoint` on `repo` with the placeholder values `path` (in route order)
/// and the query parameters `query`.
pub(super) fn describe(
    endpoint: Endpoint,
    repo: Option<&RepoName>,
    path: &[&dyn fmt::Display],
    query: &[(&str, &dyn fmt::Display)],
) -> Call {
    let route = endpoint.route();
    let mut request = String::with_capacity(route.len() + 32);
    let mut values = path.iter().map(ToString::to_string);
    let mut rest = route;
    let mut repo_shown = false;
    while let Some(open) = rest.find('{') {
        request.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        let name = &rest[open + 1..open + close];
        rest = &rest[open + close + 1..];
        match (name, repo) {
            ("o", Some(repo)) => {
                request.push_str(repo.as_str());
                repo_shown = true;
                // `{o}/{r}` is the repository: skip the `/{r}` that follows.
                rest = rest.strip_prefix("/{r}").unwrap_or(rest);
            }
            _ => match values.next() {
                Some(value) => request.push_str(&value),
                None => {
                    request.push('{');
                    request.push_str(name);
                    request.push('}');
                }
            },
        }
    }
    request.push_str(rest);
    if let (false, Some(repo)) = (repo_shown, repo) {
        request.push(' ');
        request.push_str(repo.as_str());
    }
    for value in values {
        request.push(' ');
        request.push_str(&value);
    }
    let mut all: Vec<String> = path.iter().map(ToString::to_string).collect();
    for (index, (key, value)) in query.iter().enumerate() {
        let value = value.to_string();
        request.push(if index == 0 { '?' } else { '&' });
        request.push_str(key);
        request.push('=');
        request.push_str(&value);
        all.push(value);
    }
    Call {
        endpoint,
        repo: repo.cloned(),
        values: all,
        request,
    }
}
