//! Test helpers for the tick: a configuration, times, logins, SHAs, commits and check
//! runs, a `block_on` for futures that never wait, and the line of a write the tests
//! compare. Every test runs over `mp_github_fake::MemoryGitHub`; none keeps a GitHub of
//! its own.

use std::pin::pin;
use std::task::{Context, Poll, Waker};

use mp_core::config::{self, Config, ConfigFiles};
use mp_core::context::{CheckConclusion, CheckRun, CheckStatus, CommitContext};
use mp_core::ids::{CommitSha, Login, PrNumber, RepoName, Timestamp};

pub(crate) const NOW: &str = "2026-03-01T12:00:00Z";
pub(crate) const OWNER: &str = "alice";
pub(crate) const BOT: &str = "mp-gate[bot]";
pub(crate) const TRAILERS: &str = "Agent-Tool: claude-code\nAgent-Model: claude-opus-4.7\nAgent-Session: s_abc-123\nAgent-Machine: laptop\nTask-Ref: Issue#12";

/// Runs a future that never waits for anything outside it (the in-memory GitHub answers
/// at once; a test port may yield, and is polled again at once).
pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..1_000 {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
    panic!("a test future kept waiting; the in-memory GitHub never waits")
}

pub(crate) fn at(text: &str) -> Timestamp {
    Timestamp::parse(text).expect("test timestamp is valid")
}

pub(crate) fn now() -> Timestamp {
    at(NOW)
}

/// A write as the supervisor and whole-tick tests read it: an issue as
/// `issue <repo>#<n> [<labels>]: <title>`, any other write as the action log shows it.
pub(crate) fn write_line(write: &mp_core::port::Write) -> String {
    match write {
        mp_core::port::Write::CreateIssue {
            repo,
            issue,
            answer,
        } => format!(
            "issue {repo}#{} [{}]: {}",
            answer.map_or(0, PrNumber::get),
            issue.labels.join(", "),
            issue.title
        ),
        other => other.log_line(),
    }
}

/// A full SHA starting with `prefix`, padded with zeros.
pub(crate) fn sha(prefix: &str) -> CommitSha {
    CommitSha::parse(&format!("{prefix:0<40}")).expect("test sha is hex")
}

pub(crate) fn login(name: &str) -> Login {
    Login::parse(name).expect("test login is valid")
}

pub(crate) fn repo(name: &str) -> RepoName {
    RepoName::parse(name).expect("test repository is valid")
}

/// Owner `alice`; `acme/app` gated, `acme/old` audit-only; required check `test`; merging on.
pub(crate) fn config() -> Config {
    config_with(&[])
}

/// [`config`] with some files added or replaced.
pub(crate) fn config_with(replaced: &[(&str, &str)]) -> Config {
    let mut files = ConfigFiles::new()
        .with(config::OWNER_FILE, "github_login: alice\n")
        .with(
            config::PROJECTS_FILE,
            "governance_repo: acme/governance\nsupervised_repos: [acme/app, acme/old]\naudit_only_repos: [acme/old]\n",
        )
        .with(
            config::ENV_FILE,
            "bot_app_slug: mp-gate\nrequired_checks: [test]\nmerge_enabled: true\n",
        );
    for (name, text) in replaced {
        files.insert(*name, *text);
    }
    let report = config::load(&files);
    report
        .config
        .unwrap_or_else(|| panic!("test config loads: {:?}", report.problems))
}

/// A commit on `main` with SHA `prefix` (zero-padded) and `message`, committed at 10:00 on
/// the test day by `committer` (`None`: no linked account); no parents unless set.
pub(crate) fn commit_by(prefix: &str, message: &str, committer: Option<&str>) -> CommitContext {
    let mut commit = CommitContext::from_message(sha(prefix), message);
    commit.committer_login = committer.map(login);
    commit.author_login = committer.map(login);
    commit.committed_at = Some(at("2026-03-01T10:00:00Z"));
    commit
}

/// A commit the bot squash-merged (the normal, gated way onto `main`).
pub(crate) fn merged(prefix: &str, message: &str) -> CommitContext {
    commit_by(prefix, message, Some(BOT))
}

/// One check run named `name` from GitHub Actions: `state` is a conclusion,
/// `in_progress`, or `zero:<conclusion>` for a run that started and completed at once.
pub(crate) fn check_run(name: &str, state: &str) -> CheckRun {
    let (status, conclusion, zero) = match state {
        "in_progress" => (CheckStatus::InProgress, None, false),
        other => match other.strip_prefix("zero:") {
            Some(conclusion) => (
                CheckStatus::Completed,
                Some(CheckConclusion::from_github(conclusion)),
                true,
            ),
            None => (
                CheckStatus::Completed,
                Some(CheckConclusion::from_github(other)),
                false,
            ),
        },
    };
    let started = at("2026-03-01T10:05:00Z");
    CheckRun {
        id: None,
        name: name.to_owned(),
        status,
        conclusion,
        started_at: Some(started),
        completed_at: Some(if zero {
            started
        } else {
            at("2026-03-01T10:09:00Z")
        }),
        app_slug: Some("github-actions".to_owned()),
        output_summary: None,
    }
}
