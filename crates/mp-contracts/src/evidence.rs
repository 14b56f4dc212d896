//! Evidence production: RFC 8785 canonical JSON, `sha256:<hex>` hashes, building an
//! Evidence from one execution, and its export as an in-toto Statement v1 with an SLSA
//! Provenance v1 predicate (decisions/0017).
//!
//! Commits are digests: an Evidence is built, and exported, only with full commit ids (40
//! hex digits for SHA-1, 64 for SHA-256). The documents' schema accepts any reference of
//! seven characters or more, so a stored document with an abbreviated commit stays valid,
//! but it is never exported as a digest.
//!
//! | field | hash of |
//! |---|---|
//! | `inputHash` | the canonical JSON of the normalised input (`{}` when none) |
//! | `outputHash` | the canonical JSON of the output (`{}` when none) |
//! | `model.parametersHash` | the canonical JSON of the inference parameters (`{}` when none) |
//! | `diffHash` | the bytes of the diff from base to head; no diff is [`EMPTY_DIFF_HASH`] |
//! | `environment.lockfileHash` | the lockfile bytes; no lockfile is [`MISSING_LOCKFILE_HASH`] |

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::error::{ContractError, codes};
use crate::kinds::{
    Approval, ApproverRole, Body, Common, Contract, ContractId, DateTime, Environment, Evidence,
    MergeResult, Model, PolicyVerdict, SchemaVersion, StaleStatus, State, TaskSeedId,
    UNCONTAINERIZED, Version,
};

/// The `sha256:` hash of zero bytes: the `diffHash` when `baseCommit == headCommit`.
pub const EMPTY_DIFF_HASH: &str =
    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// The `sha256:` hash of the text `missing-lockfile`: the `lockfileHash` without a lockfile.
pub const MISSING_LOCKFILE_HASH: &str =
    "sha256:0bb0897373ab982545e1afd6a9de41f4e003aa7ed86808ef89b14a6e00c46c00";

/// The in-toto Statement `_type`.
pub const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";

/// The SLSA Provenance v1 `predicateType`.
pub const PROVENANCE_TYPE: &str = "https://slsa.dev/provenance/v1";

/// The `buildType` of our provenance: one execution of a TaskSeed.
pub const BUILD_TYPE: &str = "urn:mp:contracts:taskseed-execution:v1";

/// The RFC 8785 (JCS) canonical form of a JSON value: keys sorted by UTF-16 code units,
/// no insignificant whitespace, ECMAScript number formatting.
pub fn canonical_json(value: &Value) -> String {
    // A `Value` always serialises: its numbers are finite and its keys are strings.
    serde_jcs::to_string(value).unwrap_or_default()
}

/// `sha256:<64 lowercase hex>` of some bytes.
pub fn sha256(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for byte in digest {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
    out
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// The hash of a value's canonical JSON.
pub fn hash_json(value: &Value) -> String {
    sha256(canonical_json(value).as_bytes())
}

/// The hash of a whole contract document (its canonical JSON).
pub fn contract_digest(contract: &Contract) -> String {
    hash_json(&serde_json::to_value(contract).unwrap_or(Value::Null))
}

/// A full git commit id: 40 hexadecimal digits (SHA-1) or 64 (SHA-256), kept lowercase.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CommitDigest(String);

impl CommitDigest {
    /// Reads a full commit id, in either letter case.
    ///
    /// # Errors
    /// [`CommitDigestError::Abbreviated`] for fewer than 40 hex digits,
    /// [`CommitDigestError::NotCommitId`] for anything else that is not 40 or 64 hex digits.
    pub fn parse(text: &str) -> Result<Self, CommitDigestError> {
        let hex = !text.is_empty() && text.bytes().all(|b| b.is_ascii_hexdigit());
        let shown = || text.chars().take(80).collect::<String>();
        match text.len() {
            40 | 64 if hex => Ok(Self(text.to_ascii_lowercase())),
            n if hex && n < 40 => Err(CommitDigestError::Abbreviated(shown())),
            _ => Err(CommitDigestError::NotCommitId(shown())),
        }
    }

    /// The lowercase hex digits.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for CommitDigest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why a text is not a full commit id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CommitDigestError {
    /// Hex digits, but fewer than a full id: an abbreviation git may resolve.
    #[error(
        "`{0}` is an abbreviated commit: a digest is the full commit id, 40 hex digits (SHA-1) or 64 (SHA-256)"
    )]
    Abbreviated(String),
    /// Not 40 or 64 hex digits.
    #[error("`{0}` is not a commit id: a digest is 40 hex digits (SHA-1) or 64 (SHA-256)")]
    NotCommitId(String),
}

/// The `commit-not-full-digest` errors of a base and a head commit, at their pointers.
fn commit_errors(base: &str, head: &str) -> Vec<ContractError> {
    [("/baseCommit", base), ("/headCommit", head)]
        .into_iter()
        .filter_map(|(pointer, text)| {
            let error = CommitDigest::parse(text).err()?;
            Some(ContractError::new(
                0,
                pointer,
                codes::COMMIT_NOT_FULL_DIGEST,
                error.to_string(),
            ))
        })
        .collect()
}

/// What one execution produced and ran with: the raw material of an Evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecutionRecord {
    /// The TaskSeed that ran.
    pub task_seed_id: TaskSeedId,
    /// The commit the run started from: a full commit id (see [`CommitDigest`]).
    pub base_commit: String,
    /// The commit it produced (equal to `base_commit` when nothing changed): a full id.
    pub head_commit: String,
    /// The normalised input (`None` hashes as `{}`).
    pub input: Option<Value>,
    /// The output (`None` hashes as `{}`).
    pub output: Option<Value>,
    /// The model name.
    pub model_name: String,
    /// The model version (`unknown` when not known).
    pub model_version: String,
    /// The inference parameters (`None` hashes as `{}`).
    pub parameters: Option<Value>,
    /// The tools used, at least one.
    pub tools: Vec<String>,
    /// The operating system.
    pub os: String,
    /// The runtime.
    pub runtime: String,
    /// The container image digest; `None` records [`UNCONTAINERIZED`].
    pub container_image_digest: Option<String>,
    /// The lockfile bytes; `None` records [`MISSING_LOCKFILE_HASH`].
    pub lockfile: Option<Vec<u8>>,
    /// The diff from base to head; empty records [`EMPTY_DIFF_HASH`].
    pub diff: Vec<u8>,
    /// The staleness evaluation.
    pub stale_status: StaleStatus,
    /// The automatic merge result.
    pub merge_result: MergeResult,
    /// When the run started.
    pub start_time: DateTime,
    /// When it ended.
    pub end_time: DateTime,
    /// Who ran it.
    pub actor: String,
    /// The policy verdict.
    pub policy_verdict: PolicyVerdict,
    /// The human approvals of the gate, when a human decided.
    pub approvals_snapshot: Option<Vec<Approval<ApproverRole>>>,
}

/// Builds the Evidence of one execution: `Published` from birth, version 1, hashes computed
/// from the record, commits lowercased, and validated like any document.
///
/// # Errors
/// `commit-not-full-digest` for a base or head commit that is not a full commit id, then
/// every problem [`crate::validate_document`] finds (e.g. `start-after-end`).
pub fn build_evidence(
    id: ContractId,
    record: &ExecutionRecord,
    created_at: DateTime,
) -> Result<Contract, Vec<ContractError>> {
    let mut errors = commit_errors(&record.base_commit, &record.head_commit);
    let empty = json!({});
    let body = Evidence {
        task_seed_id: record.task_seed_id.clone(),
        base_commit: record.base_commit.to_ascii_lowercase(),
        head_commit: record.head_commit.to_ascii_lowercase(),
        input_hash: hash_json(record.input.as_ref().unwrap_or(&empty)),
        output_hash: hash_json(record.output.as_ref().unwrap_or(&empty)),
        model: Model {
            name: record.model_name.clone(),
            version: record.model_version.clone(),
            parameters_hash: hash_json(record.parameters.as_ref().unwrap_or(&empty)),
        },
        tools: record.tools.clone(),
        environment: Environment {
            os: record.os.clone(),
            runtime: record.runtime.clone(),
            container_image_digest: record
                .container_image_digest
                .clone()
                .unwrap_or_else(|| UNCONTAINERIZED.to_owned()),
            lockfile_hash: record
                .lockfile
                .as_deref()
                .map_or_else(|| MISSING_LOCKFILE_HASH.to_owned(), sha256),
        },
        stale_status: record.stale_status.clone(),
        merge_result: record.merge_result.clone(),
        start_time: record.start_time.clone(),
        end_time: record.end_time.clone(),
        actor: record.actor.clone(),
        policy_verdict: record.policy_verdict,
        diff_hash: sha256(&record.diff),
        approvals_snapshot: record.approvals_snapshot.clone(),
    };
    let contract = Contract::new(
        Common {
            schema_version: SchemaVersion::V1_0_0,
            id,
            state: State::Published,
            version: Version::FIRST,
            created_at: created_at.clone(),
            updated_at: created_at,
        },
        body,
    );
    let json = serde_json::to_value(&contract).unwrap_or(Value::Null);
    errors.extend(crate::validate_document(&json));
    if errors.is_empty() {
        Ok(contract)
    } else {
        Err(errors)
    }
}

/// A DigestSet entry for one of our hashes: `{"sha256": hex}` for `sha256:<hex>`, else the
/// value as written under `mpHash`.
fn digest_set(hash: &str) -> Value {
    match hash.strip_prefix("sha256:") {
        Some(hex) => json!({ "sha256": hex }),
        None => json!({ "mpHash": hash }),
    }
}

/// Why an Evidence cannot be exported as an in-toto Statement.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExportInTotoError {
    /// The contract is not an Evidence.
    #[error("{id} is not an Evidence: its kind is {kind}")]
    NotEvidence {
        /// The contract.
        id: ContractId,
        /// Its kind.
        kind: crate::kinds::Kind,
    },
    /// Its base or head commit is not a full commit id: never exported as a digest.
    #[error("{id}: {}", .problems.join("; "))]
    CommitNotFullDigest {
        /// The Evidence.
        id: ContractId,
        /// One line per commit, e.g. ``baseCommit `a1b2c3d` is an abbreviated commit: ...``.
        problems: Vec<String>,
    },
}

impl ExportInTotoError {
    /// `wrong_kind` or `commit-not-full-digest`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::NotEvidence { .. } => "wrong_kind",
            Self::CommitNotFullDigest { .. } => codes::COMMIT_NOT_FULL_DIGEST,
        }
    }
}

/// The Evidence as an in-toto Statement v1 whose predicate is SLSA Provenance v1.
///
/// Subjects are the output and the diff; the inputs, model and environment are the build
/// definition, the base commit (as a `gitCommit` digest) a resolved dependency; the run's
/// actor, times and the Evidence document's digest are run details.
///
/// # Errors
/// [`ExportInTotoError::NotEvidence`] when the contract is not an Evidence,
/// [`ExportInTotoError::CommitNotFullDigest`] when its base or head commit is not a full
/// commit id (a document may hold an abbreviated one; a digest may not).
pub fn to_in_toto(contract: &Contract) -> Result<Value, ExportInTotoError> {
    let Body::Evidence(ev) = &contract.body else {
        return Err(ExportInTotoError::NotEvidence {
            id: contract.common.id.clone(),
            kind: contract.kind(),
        });
    };
    let (base, head) = match (
        CommitDigest::parse(&ev.base_commit),
        CommitDigest::parse(&ev.head_commit),
    ) {
        (Ok(base), Ok(head)) => (base, head),
        (base, head) => {
            let problems = [("baseCommit", base.err()), ("headCommit", head.err())]
                .into_iter()
                .filter_map(|(field, error)| error.map(|e| format!("{field} {e}")))
                .collect();
            return Err(ExportInTotoError::CommitNotFullDigest {
                id: contract.common.id.clone(),
                problems,
            });
        }
    };
    let mut dependencies = vec![json!({
        "uri": format!("git+commit:{base}"),
        "digest": { "gitCommit": base.as_str() },
    })];
    dependencies.push(json!({
        "name": "lockfile",
        "digest": digest_set(&ev.environment.lockfile_hash),
    }));
    if ev.environment.container_image_digest != UNCONTAINERIZED {
        dependencies.push(json!({
            "name": "container-image",
            "digest": digest_set(&ev.environment.container_image_digest),
        }));
    }
    Ok(json!({
        "_type": STATEMENT_TYPE,
        "subject": [
            { "name": "output", "digest": digest_set(&ev.output_hash) },
            { "name": "diff", "digest": digest_set(&ev.diff_hash) },
        ],
        "predicateType": PROVENANCE_TYPE,
        "predicate": {
            "buildDefinition": {
                "buildType": BUILD_TYPE,
                "externalParameters": {
                    "taskSeedId": ev.task_seed_id,
                    "baseCommit": base.as_str(),
                    "headCommit": head.as_str(),
                    "inputHash": ev.input_hash,
                },
                "internalParameters": {
                    "model": ev.model,
                    "tools": ev.tools,
                    "environment": ev.environment,
                    "staleStatus": ev.stale_status,
                    "mergeResult": ev.merge_result,
                    "policyVerdict": ev.policy_verdict,
                },
                "resolvedDependencies": dependencies,
            },
            "runDetails": {
                "builder": { "id": format!("urn:mp:actor:{}", ev.actor) },
                "metadata": {
                    "invocationId": contract.common.id,
                    "startedOn": ev.start_time,
                    "finishedOn": ev.end_time,
                },
                "byproducts": [{
                    "name": format!("{}.json", contract.common.id),
                    "digest": digest_set(&contract_digest(contract)),
                }],
            },
        },
    }))
}

#[cfg(test)]
mod tests;
