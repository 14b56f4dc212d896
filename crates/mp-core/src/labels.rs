//! Every GitHub label mp reads or writes on pull requests and inbox issues, in one place:
//! the gate, the inbox, the classifier and `mp doctor` take their names from here. The
//! supervisor's incident labels are [`IncidentLabel`](crate::branch::incident::IncidentLabel).

/// The label an allowlisted human applies to ask for a merge (C1). Receipt-bound and
/// re-bindable to a new head.
pub const READY_TO_MERGE: &str = "ready-to-merge";
/// The owner's approval of a Quadrant-D pull request as option A. Receipt-bound.
pub const APPROVED_A: &str = "decision:approved-A";
/// The owner's approval of a Quadrant-D pull request as option B. Receipt-bound.
pub const APPROVED_B: &str = "decision:approved-B";
/// A legacy label that is *not* an approval: it never opens C3.
pub const APPROVED_C: &str = "decision:approved-C";
/// The owner's fast-track for a revert pull request (classifier votes C when verified).
/// Not receipt-bound: it is verified by the head branch's history.
pub const AUTO_REVERT: &str = "decision:auto-revert";

/// The label of an open decision inbox question.
pub const PENDING_OWNER: &str = "decision:pending-owner";
/// The label of the audit issue after a Quadrant B merge.
pub const AUTO_APPROVED_CRITICAL_REVERSIBLE: &str = "decision:auto-approved-critical-reversible";
/// The label of the audit issue after a Quadrant C merge.
pub const AUTO_APPROVED_IRREVERSIBLE_NON_CRITICAL: &str =
    "decision:auto-approved-irreversible-non-critical";

/// The label on a pull request the owner deferred with `/approve C`; it never merges on
/// that account.
pub const DEFERRED: &str = "decision:deferred";
/// The one-time label on an inbox issue whose pull request's head moved.
pub const STALE_APPROVAL: &str = "decision:stale-approval";
/// The label on an inbox issue whose body failed its integrity check.
pub const INTEGRITY_FAILED: &str = "decision:inbox-integrity-failed";
/// The label on an inbox issue that failed the inbox poll's threshold of ticks in a row.
pub const INBOX_ERROR: &str = "decision:inbox-error";
