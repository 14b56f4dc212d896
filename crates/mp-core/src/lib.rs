//! The mp governance domain: context types, identity trailers, the L1 gate (C1-C5),
//! label provenance and approval receipts, the four-quadrant classifier, the L2/L5 branch
//! verdicts, the decision-inbox and shard models, and the strict configuration model.
//!
//! Every decision here is a pure function of values passed in and returns a value that
//! carries its reason (a stable code, the evidence, and a one-line `Display`).
//!
//! Architecture invariant: mp-core performs no I/O. It reads no files, environment, clock
//! or network and starts no process; it depends on no adapter crate (no HTTP client, async
//! runtime, WebAssembly runtime or CLI parser). Adapters reach it through values and ports.
//!
//! Architecture invariant: mp-core drives no port. It declares the [`port`] traits and their
//! value types and never calls them; the use-cases that do (the tick, the inbox poller, the
//! branch supervisor, the drift check, the dry run) live in `mp-tick`. `cargo xtask tidy`
//! checks that no `async fn` or `.await` appears outside the trait declarations.
#![warn(missing_docs)]

pub mod agent;
pub mod approval;
pub mod branch;
pub mod classifier;
pub mod config;
pub mod context;
pub mod doctor;
pub mod gate;
pub mod github_queue;
pub mod ids;
pub mod inbox;
pub mod labels;
pub mod port;
pub mod quadrant;
pub mod queue;
pub mod registry;
pub mod route;
pub mod severity;
pub mod shard;
pub mod skill;
pub mod state;
pub mod trailers;

pub use classifier::{RuleId, Verdict, Vote};
pub use context::{
    CheckConclusion, CheckRun, CheckStatus, Comment, CommentId, CommitContext, FileChange,
    FileStatus, LabelAction, LabelEvent, PrContext, PrState, Reaction, ReactionKind,
};
pub use gate::{GatePolicy, GateReport, evaluate_gate};
pub use ids::{CommitSha, Login, ParseIdError, PrNumber, RepoName, Timestamp};
pub use quadrant::Quadrant;
pub use registry::AgentRegistry;
pub use severity::Severity;
pub use trailers::{TrailerKey, Trailers};
