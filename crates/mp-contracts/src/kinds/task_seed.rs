//! TaskSeed: an executable unit of work generated from an IntentContract.

use serde::{Deserialize, Serialize};

use super::{ApprovalRole, Capability, GenerationPolicy, IntentId, OwnerRole};

/// The fields of a TaskSeed beyond the common ones.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TaskSeed {
    /// `intentId`: the IntentContract this seed was generated from.
    pub intent_id: IntentId,
    /// `description`.
    pub description: String,
    /// `ownerRole`: who executes it.
    pub owner_role: OwnerRole,
    /// `executionPlan`: ordered steps, at least one.
    pub execution_plan: Vec<String>,
    /// `requestedCapabilitiesSnapshot`: a copy of the intent's `requestedCapabilities`.
    pub requested_capabilities_snapshot: Vec<Capability>,
    /// `generationPolicy`, derived from the snapshot (see [`crate::policy`]).
    pub generation_policy: GenerationPolicy<ApprovalRole>,
}
