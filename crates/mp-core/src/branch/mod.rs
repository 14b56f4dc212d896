//! The branch supervisor's pure verdicts: what happens after a commit lands on `main`.
//!
//! * [`l2`]: post-merge re-validation of a merged commit's check runs, the 24-hour stall
//!   rule, parent-aware recovery instructions and auto-revert eligibility.
//! * [`break_glass`]: the L5 audit of `[break-glass-*]` commits (allowlisted pusher, ADR
//!   naming the full SHA within the deadline counted from the push).
//! * [`unauthorized_push`]: writes to the default branch that bypassed the gate, judged by
//!   who landed them in GitHub's activity log.
//! * [`landing`]: the updates of a branch since a known tip, from GitHub's activity log.
//! * [`hallucination`]: file paths quoted in a commit body that do not exist.
//! * [`drift`]: canonical files compared across repositories by git blob SHA.
//! * [`incident`]: incident labels, dedupe keys, titles, the hidden body marker and rollup.
//!
//! Every function takes the facts it needs (check runs, commit contexts, file texts, path
//! lookups, trees, `now`) as arguments and returns a value with a stable `code()`, its
//! evidence and a one-line `Display`. Fetching those facts is the caller's job.

pub mod break_glass;
pub mod drift;
pub mod hallucination;
pub mod incident;
pub mod l2;
pub mod landing;
pub mod unauthorized_push;

pub use break_glass::{
    BreakGlassPolicy, BreakGlassVerdict, audit_adr, audit_break_glass, find_adr,
};
pub use drift::{DriftFinding, DriftKind, RepoTree, blob_sha, compare_trees, drift_dedupe_key};
pub use hallucination::{HallucinationVerdict, PathLookup, candidate_paths, hallucination_verdict};
pub use incident::{
    CommitIncident, IncidentAuthority, IncidentKey, IncidentLabel, LookAlike, Standing,
    SurfacedIncident, find_dedupe_key, roll_up,
};
pub use l2::{
    L2Finding, L2Verdict, NoCiPolicy, RecoveryInstructions, RevertEligibility, StallStatus,
    WorkflowBinding, l2_stall, revalidate, revalidate_bound, revert_eligibility,
};
pub use landing::{Behind, Since, updates_since};
pub use unauthorized_push::{
    MERGE_QUEUE_MERGE, PushVerdict, QueueLanded, QueueLanding, check_push, check_queue_push,
    is_queue_landing,
};
