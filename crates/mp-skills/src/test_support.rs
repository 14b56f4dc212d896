//! Context builders shared by the mp-skills tests.

use mp_core::context::{CommitContext, PrContext, PrState};
use mp_core::ids::{CommitSha, Login, PrNumber, RepoName};

/// A full SHA made of one repeated byte.
pub(crate) fn sha(byte: u8) -> CommitSha {
    CommitSha::parse(&format!("{byte:02x}").repeat(20)).expect("40 hex digits")
}

/// A commit with the given message.
pub(crate) fn commit(byte: u8, message: &str) -> CommitContext {
    CommitContext::from_message(sha(byte), message)
}

/// An open pull request on `acme/app` with `commits` and no files or checks.
pub(crate) fn pr(commits: Vec<CommitContext>) -> PrContext {
    PrContext {
        workflow_jobs: Vec::new(),
        repo: RepoName::parse("acme/app").expect("valid repository"),
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
        author: Login::parse("agent").expect("valid login"),
        commits,
        files: Vec::new(),
        check_runs: Vec::new(),
        label_events: Vec::new(),
        head_history: Default::default(),
        base_history: Default::default(),
        label_records: Default::default(),
    }
}
