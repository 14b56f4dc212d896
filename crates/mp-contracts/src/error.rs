//! `ContractError`: one problem in one document, with its pointer and stable code.

use std::fmt;

/// One problem found in a contract document.
///
/// Validation reports every problem of every document; an empty list means valid.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ContractError {
    /// Index of the document in the validated slice (0 for [`crate::validate_document`]).
    pub document: usize,
    /// RFC 6901 JSON pointer to the offending value (`""` is the whole document). For a
    /// missing property it points where the property should be (`/approvalDeadline`).
    pub pointer: String,
    /// The stable, machine-readable rule code (see [`codes`]).
    pub code: &'static str,
    /// One line for people: lower-case start, no final period, names the offending value.
    pub message: String,
}

impl ContractError {
    /// An error of `document` at `pointer`.
    pub fn new(
        document: usize,
        pointer: impl Into<String>,
        code: &'static str,
        message: impl Into<String>,
    ) -> Self {
        Self {
            document,
            pointer: pointer.into(),
            code,
            message: message.into(),
        }
    }
}

impl fmt::Display for ContractError {
    /// `document 2 /startTime: start-after-end: startTime … is after endTime …`; the whole
    /// document is shown as `(root)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = if self.pointer.is_empty() {
            "(root)"
        } else {
            &self.pointer
        };
        write!(
            f,
            "document {} {}: {}: {}",
            self.document, pointer, self.code, self.message
        )
    }
}

impl std::error::Error for ContractError {}

/// Appends one RFC 6901 reference token to `pointer` (`~` and `/` escaped).
pub(crate) fn push_token(pointer: &str, token: &str) -> String {
    let mut out = String::with_capacity(pointer.len() + token.len() + 1);
    out.push_str(pointer);
    out.push('/');
    for c in token.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
    out
}

/// The stable rule codes. Schema-level codes name the JSON Schema keyword that failed;
/// semantic codes name an application rule (see `docs/contracts.md`).
pub mod codes {
    /// A required property is missing (the pointer names it).
    pub const REQUIRED: &str = "required";
    /// A top-level property no schema of the kind declares.
    pub const UNEVALUATED_PROPERTY: &str = "unevaluated-property";
    /// A property a closed nested object does not declare.
    pub const ADDITIONAL_PROPERTY: &str = "additional-property";
    /// A string does not match its pattern (ids and references).
    pub const PATTERN: &str = "pattern";
    /// A value outside its closed list.
    pub const ENUM: &str = "enum";
    /// A value other than the one allowed (`schemaVersion`, `kind`).
    pub const CONST: &str = "const";
    /// A value of the wrong JSON type.
    pub const TYPE: &str = "type";
    /// A number below its minimum (`version` < 1).
    pub const MINIMUM: &str = "minimum";
    /// An array with too few items.
    pub const MIN_ITEMS: &str = "min-items";
    /// An array with a repeated item.
    pub const UNIQUE_ITEMS: &str = "unique-items";
    /// A string that is too short (empty text, short commit).
    pub const MIN_LENGTH: &str = "min-length";
    /// A string that is not an RFC 3339 date-time with an offset.
    pub const FORMAT: &str = "format";
    /// A schema failure no other code describes (not expected with the bundled schemas).
    pub const SCHEMA: &str = "schema";
    /// `auto_activate` is false and `requiredActivationApprovals` is empty.
    pub const AUTO_ACTIVATE_REQUIRES_APPROVALS: &str = "auto-activate-requires-approvals";
    /// A gate with required approvals has no `approvalDeadline`.
    pub const DEADLINE_REQUIRED: &str = "deadline-required";
    /// A gate with no required approvals is `pending` or `expired`.
    pub const FINAL_DECISION_REQUIRED: &str = "final-decision-required";
    /// An approved gate lacks an approval from a required role.
    pub const REQUIRED_APPROVAL_MISSING: &str = "required-approval-missing";
    /// An Evidence starts after it ends.
    pub const START_AFTER_END: &str = "start-after-end";
    /// An Evidence recorded or exported with a commit that is not a full digest (40 or 64
    /// hex digits): an abbreviated or non-hex `baseCommit` / `headCommit`.
    pub const COMMIT_NOT_FULL_DIGEST: &str = "commit-not-full-digest";
    /// An Evidence that is not `Published`.
    pub const EVIDENCE_NOT_PUBLISHED: &str = "evidence-not-published";
    /// An Evidence lacks the approvals snapshot a manual review or human approval calls for.
    pub const APPROVALS_SNAPSHOT_REQUIRED: &str = "approvals-snapshot-required";
    /// `requiredApprovals` differs from the approval matrix row of `riskLevel`.
    pub const APPROVAL_MATRIX_MISMATCH: &str = "approval-matrix-mismatch";
    /// A `Published` gate whose `finalDecision` is not `approved`.
    pub const PUBLISHED_GATE_NOT_FINAL: &str = "published-gate-not-final";
    /// A generation policy looser than the one its capabilities call for.
    pub const GENERATION_POLICY_TOO_PERMISSIVE: &str = "generation-policy-too-permissive";
    /// A TaskSeed's capability snapshot differs from its intent's capabilities.
    pub const CAPABILITIES_SNAPSHOT_MISMATCH: &str = "capabilities-snapshot-mismatch";
    /// A gate's `riskLevel` is below what its TaskSeed's capabilities imply.
    pub const RISK_BELOW_CAPABILITY_FLOOR: &str = "risk-below-capability-floor";
    /// A gate for an Acceptance whose status is not `passed`.
    pub const GATE_FOR_UNPASSED_ACCEPTANCE: &str = "gate-for-unpassed-acceptance";
    /// A reference to a contract that is not in the set.
    pub const DANGLING_REFERENCE: &str = "dangling-reference";
    /// An approvals snapshot that differs from the gate's human approvals.
    pub const APPROVALS_SNAPSHOT_MISMATCH: &str = "approvals-snapshot-mismatch";
    /// The same id and version twice in one set.
    pub const DUPLICATE_CONTRACT: &str = "duplicate-contract";
    /// A state change the kind's state machine has no row for.
    pub const ILLEGAL_TRANSITION: &str = "illegal-transition";
    /// Any Evidence state change but Published to Archived.
    pub const EVIDENCE_IMMUTABLE: &str = "evidence-immutable";
    /// Draft to Active without approvals covering every required activation role.
    pub const ACTIVATION_APPROVAL_MISSING: &str = "activation-approval-missing";
    /// Active to Published while the deciding gate is not `approved`.
    pub const GATE_NOT_APPROVED: &str = "gate-not-approved";
    /// Published to Superseded by a successor whose version is not greater.
    pub const VERSION_NOT_GREATER: &str = "version-not-greater";
    /// A freeze, resume, revocation or archival without a reason.
    pub const REASON_REQUIRED: &str = "reason-required";
    /// A changed document whose `id` differs from its earlier version's.
    pub const ID_CHANGED: &str = "id-changed";
    /// A changed document whose `kind` differs from its earlier version's.
    pub const KIND_CHANGED: &str = "kind-changed";
    /// A changed document whose version is below its earlier version's.
    pub const VERSION_LOWERED: &str = "version-lowered";
    /// A changed document that kept its earlier version's number.
    pub const VERSION_NOT_RAISED: &str = "version-not-raised";
    /// A Superseded or Revoked contract moved to a state other than Archived.
    pub const TERMINAL_STATE_LEFT: &str = "terminal-state-left";
    /// An Archived contract that changed.
    pub const ARCHIVED_CHANGED: &str = "archived-changed";
    /// An Evidence document that changed in any field.
    pub const EVIDENCE_CHANGED: &str = "evidence-changed";
    /// A new document in a state its kind cannot start in.
    pub const INITIAL_STATE_INVALID: &str = "initial-state-invalid";
    /// A contract document that was deleted instead of archived.
    pub const CONTRACT_DELETED: &str = "contract-deleted";

    /// Every code, schema-level first.
    pub const ALL: &[&str] = &[
        REQUIRED,
        UNEVALUATED_PROPERTY,
        ADDITIONAL_PROPERTY,
        PATTERN,
        ENUM,
        CONST,
        TYPE,
        MINIMUM,
        MIN_ITEMS,
        UNIQUE_ITEMS,
        MIN_LENGTH,
        FORMAT,
        SCHEMA,
        AUTO_ACTIVATE_REQUIRES_APPROVALS,
        DEADLINE_REQUIRED,
        FINAL_DECISION_REQUIRED,
        REQUIRED_APPROVAL_MISSING,
        START_AFTER_END,
        COMMIT_NOT_FULL_DIGEST,
        EVIDENCE_NOT_PUBLISHED,
        APPROVALS_SNAPSHOT_REQUIRED,
        APPROVAL_MATRIX_MISMATCH,
        PUBLISHED_GATE_NOT_FINAL,
        GENERATION_POLICY_TOO_PERMISSIVE,
        CAPABILITIES_SNAPSHOT_MISMATCH,
        RISK_BELOW_CAPABILITY_FLOOR,
        GATE_FOR_UNPASSED_ACCEPTANCE,
        DANGLING_REFERENCE,
        APPROVALS_SNAPSHOT_MISMATCH,
        DUPLICATE_CONTRACT,
        ILLEGAL_TRANSITION,
        EVIDENCE_IMMUTABLE,
        ACTIVATION_APPROVAL_MISSING,
        GATE_NOT_APPROVED,
        VERSION_NOT_GREATER,
        REASON_REQUIRED,
        ID_CHANGED,
        KIND_CHANGED,
        VERSION_LOWERED,
        VERSION_NOT_RAISED,
        TERMINAL_STATE_LEFT,
        ARCHIVED_CHANGED,
        EVIDENCE_CHANGED,
        INITIAL_STATE_INVALID,
        CONTRACT_DELETED,
    ];
}
