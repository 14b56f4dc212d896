//! Evidence: the immutable, reproducible record of one execution of a TaskSeed.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{Approval, ApproverRole, DateTime, TaskSeedId};

/// The literal `containerImageDigest` of an execution that used no container.
pub const UNCONTAINERIZED: &str = "uncontainerized";

/// The fields of an Evidence beyond the common ones.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Evidence {
    /// `taskSeedId`: the TaskSeed that was executed.
    pub task_seed_id: TaskSeedId,
    /// `baseCommit`: at least seven characters (no hex check).
    pub base_commit: String,
    /// `headCommit`: may equal `baseCommit`.
    pub head_commit: String,
    /// `inputHash`: hash of the normalised input.
    pub input_hash: String,
    /// `outputHash`: hash of the output.
    pub output_hash: String,
    /// `model`.
    pub model: Model,
    /// `tools`: at least one.
    pub tools: Vec<String>,
    /// `environment`.
    pub environment: Environment,
    /// `staleStatus`.
    pub stale_status: StaleStatus,
    /// `mergeResult`.
    pub merge_result: MergeResult,
    /// `startTime`: not after `endTime`.
    pub start_time: DateTime,
    /// `endTime`.
    pub end_time: DateTime,
    /// `actor`: who ran it.
    pub actor: String,
    /// `policyVerdict`.
    pub policy_verdict: PolicyVerdict,
    /// `diffHash`: hash of the diff from base to head.
    pub diff_hash: String,
    /// `approvalsSnapshot`: the human approvals of the gate, when a human decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approvals_snapshot: Option<Vec<Approval<ApproverRole>>>,
}

/// `Evidence.model`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Model {
    /// `name`.
    pub name: String,
    /// `version`.
    pub version: String,
    /// `parametersHash`: hash of the inference parameters.
    pub parameters_hash: String,
}

/// `Evidence.environment`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Environment {
    /// `os`.
    pub os: String,
    /// `runtime`.
    pub runtime: String,
    /// `containerImageDigest`, or [`UNCONTAINERIZED`].
    pub container_image_digest: String,
    /// `lockfileHash`.
    pub lockfile_hash: String,
}

/// `Evidence.staleStatus`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StaleStatus {
    /// `classification`.
    pub classification: StaleClassification,
    /// `evaluatedAt`.
    pub evaluated_at: DateTime,
    /// `reason` (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `Evidence.staleStatus.classification`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StaleClassification {
    /// `fresh`.
    Fresh,
    /// `soft_stale`: more than 10 minutes since the last fetch.
    SoftStale,
    /// `hard_stale`: more than 60 minutes, or a dependency or commit changed.
    HardStale,
}

/// `Evidence.mergeResult`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MergeResult {
    /// `status`.
    pub status: MergeStatus,
    /// `mergedAt` (optional; nothing ties it to `merged`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_at: Option<DateTime>,
    /// `strategy` (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
    /// `reason` (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `Evidence.mergeResult.status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MergeStatus {
    /// `not_applicable`.
    NotApplicable,
    /// `not_attempted`.
    NotAttempted,
    /// `merged`.
    Merged,
    /// `manual_resolution_required`.
    ManualResolutionRequired,
}

/// `Evidence.policyVerdict`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PolicyVerdict {
    /// `approved`.
    Approved,
    /// `rejected`.
    Rejected,
    /// `manual_review_required`: an approvals snapshot is then required.
    ManualReviewRequired,
}

impl fmt::Display for PolicyVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PolicyVerdict::Approved => "approved",
            PolicyVerdict::Rejected => "rejected",
            PolicyVerdict::ManualReviewRequired => "manual_review_required",
        })
    }
}
