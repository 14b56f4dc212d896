//! Builders shared by the classifier tests: pull requests, files, commits and check runs.

use crate::context::{
    CheckConclusion, CheckRun, CheckStatus, CommitContext, FileChange, FileStatus, PrContext,
    PrState,
};
use crate::ids::{CommitSha, Login, PrNumber, RepoName};

/// A full SHA made of one repeated byte, e.g. `sha(0xab)` = `abab...ab`.
pub(crate) fn sha(byte: u8) -> CommitSha {
    CommitSha::parse(&format!("{byte:02x}").repeat(20)).expect("40 hex digits")
}

pub(crate) fn repo(name: &str) -> RepoName {
    RepoName::parse(name).expect("valid repository name")
}

pub(crate) fn login(name: &str) -> Login {
    Login::parse(name).expect("valid login")
}

/// An open pull request on `acme/app` changing `files`, with no commits or checks.
pub(crate) fn pr(files: Vec<FileChange>) -> PrContext {
    PrContext {
        workflow_jobs: Vec::new(),
        repo: repo("acme/app"),
        number: PrNumber::new(7),
        title: "change".to_owned(),
        body: String::new(),
        head_sha: sha(0xaa),
        head_ref: "feature".to_owned(),
        base_sha: sha(0xbb),
        base_ref: "main".to_owned(),
        state: PrState::Open,
        merged: false,
        labels: Vec::new(),
        author: login("agent"),
        commits: Vec::new(),
        files,
        check_runs: Vec::new(),
        label_events: Vec::new(),
        head_history: Default::default(),
        base_history: Default::default(),
        label_records: Default::default(),
    }
}

fn change(path: &str, status: FileStatus, previous: Option<&str>) -> FileChange {
    FileChange {
        path: path.to_owned(),
        status,
        additions: 1,
        deletions: 1,
        previous_filename: previous.map(str::to_owned),
    }
}

pub(crate) fn added(path: &str) -> FileChange {
    change(path, FileStatus::Added, None)
}

pub(crate) fn modified(path: &str) -> FileChange {
    change(path, FileStatus::Modified, None)
}

pub(crate) fn removed(path: &str) -> FileChange {
    change(path, FileStatus::Removed, None)
}

pub(crate) fn renamed(from: &str, to: &str) -> FileChange {
    change(to, FileStatus::Renamed, Some(from))
}

/// A commit whose message is `message`, with SHA `sha(byte)`.
pub(crate) fn commit(byte: u8, message: &str) -> CommitContext {
    CommitContext::from_message(sha(byte), message)
}

/// A completed, successful check run.
pub(crate) fn check_run(name: &str, slug: Option<&str>, summary: Option<&str>) -> CheckRun {
    CheckRun {
        id: None,
        name: name.to_owned(),
        status: CheckStatus::Completed,
        conclusion: Some(CheckConclusion::Success),
        started_at: None,
        completed_at: None,
        app_slug: slug.map(str::to_owned),
        output_summary: summary.map(str::to_owned),
    }
}
