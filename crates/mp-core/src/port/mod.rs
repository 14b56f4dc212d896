//! Ports: the traits through which the tick reaches the outside world. mp-core defines
//! them and never calls them; mp-tick drives them, and adapters (mp-github's REST client,
//! mp-github-fake's in-memory world, an embedder's own client) implement them.
//!
//! Every method documents which [`GitHubError`] an adapter returns, and when. Adapters
//! must not retry inside a method beyond what the method says: the tick decides what an
//! error means (skip the pull request, end the tick early, fail closed).

mod audit;
mod clock;
mod github;
mod history;
mod write;

pub use audit::{AuditError, AuditLog, AuditRecord, AuditVote};
pub use clock::{Clock, FixedClock};
pub use github::{
    ACTIVITY_PAGE, DEFAULT_BRANCH_FALLBACK, GitHub, GitHubError, Issue, IssueQuery, IssueState,
    ListedPull, MergeGroupRef, MergeMethod, MergeRequest, NewCheckRun, NewIssue, PullReads,
    PullRequest, QueueEntry, QueueEntryState, QueueRemoval, RepoActivity, UpdateBranchOutcome,
};
pub use history::{
    CommitPull, Comparison, FileContent, FileWrite, GitHubHistory, NewPull, Tree, TreeEntry,
};
pub use write::{BranchUpdated, FileWritten, Merged, PullOpened, Write};
