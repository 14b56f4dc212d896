//! The audit-log port: one JSON line per classification, appended, never rewritten.

use crate::ids::{CommitSha, Timestamp};
use crate::quadrant::Quadrant;

/// One vote as recorded in the audit log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditVote {
    /// The rule's stable id.
    pub rule: String,
    /// The quadrant it voted for.
    pub quadrant: Quadrant,
    /// Its one-line reasoning.
    pub reasoning: String,
}

/// One classification decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRecord {
    /// When the decision was taken.
    pub at: Timestamp,
    /// `owner/repo#N`.
    pub pr: String,
    /// The head SHA that was classified.
    pub head_sha: CommitSha,
    /// The verdict.
    pub quadrant: Quadrant,
    /// Every vote, in rule order.
    pub votes: Vec<AuditVote>,
}

impl AuditRecord {
    /// The record as one compact JSON line (no trailing newline):
    /// `{"ts":..,"pr":..,"head_sha":..,"quadrant":..,"votes":[{"rule","quadrant","reasoning"}]}`.
    pub fn to_json_line(&self) -> String {
        let votes: Vec<serde_json::Value> = self
            .votes
            .iter()
            .map(|v| {
                serde_json::json!({
                    "rule": v.rule,
                    "quadrant": v.quadrant.as_str(),
                    "reasoning": v.reasoning,
                })
            })
            .collect();
        serde_json::json!({
            "ts": self.at.to_string(),
            "pr": self.pr,
            "head_sha": self.head_sha.as_str(),
            "quadrant": self.quadrant.as_str(),
            "votes": votes,
        })
        .to_string()
    }
}

/// Why an audit record could not be appended.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("audit log append failed: {0}")]
pub struct AuditError(pub String);

/// An append-only sink for audit records.
#[async_trait::async_trait]
pub trait AuditLog: Send + Sync {
    /// Appends one record.
    ///
    /// # Errors
    /// [`AuditError`] when the record could not be stored; the tick then stops processing
    /// the pull request (a decision that cannot be audited is not acted on).
    async fn append(&self, record: &AuditRecord) -> Result<(), AuditError>;

    /// Appends the agents' records (`pr`, `incident`, `revert`: decisions/0076, 0080),
    /// one JSON object per line, in one write where the sink can. A sink that keeps only
    /// classification records ignores them, which is the default.
    ///
    /// # Errors
    /// [`AuditError`] when the lines could not be stored. The decisions they record are
    /// already taken: the caller warns and goes on.
    async fn append_agent_records(&self, lines: &[String]) -> Result<(), AuditError> {
        let _ = lines;
        Ok(())
    }
}
