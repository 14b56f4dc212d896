//! Typed contracts: the common fields, the five kinds, and their vocabularies.
//!
//! A [`Contract`] is the [`Common`] fields plus a [`Body`], one variant per kind. It
//! deserializes from and serializes to exactly the JSON the schemas describe: camelCase
//! names (and `auto_activate`), unknown fields refused, optional fields omitted when absent,
//! date-times kept as written, and `version: 1.0` read as 1.
//!
//! Typed parsing checks shape: fields, types, enum values, the id and date-time grammars and
//! the id prefix of the kind. It does not check cardinality (`minItems`, `uniqueItems`,
//! `minLength`) or any semantic rule: use [`crate::parse_document`], which validates first.

mod acceptance;
mod approval;
mod capability;
mod common;
mod datetime;
mod evidence;
mod id;
mod intent_contract;
mod publish_gate;
mod role;
mod task_seed;

#[cfg(test)]
mod tests;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub use acceptance::{Acceptance, AcceptanceStatus};
pub use approval::{Approval, Decision, GenerationPolicy};
pub use capability::Capability;
pub use common::{Common, Kind, SchemaVersion, State, Version, VersionError};
pub use datetime::{DateTime, ParseDateTimeError};
pub use evidence::{
    Environment, Evidence, MergeResult, MergeStatus, Model, PolicyVerdict, StaleClassification,
    StaleStatus, UNCONTAINERIZED,
};
pub use id::{AcceptanceId, ContractId, IntentId, ParseIdError, TaskSeedId};
pub use intent_contract::{IntentContract, Priority};
pub use publish_gate::{FinalDecision, GateAction, PublishGate, RiskLevel};
pub use role::{ApprovalRole, ApproverRole, OwnerRole};
pub use task_seed::TaskSeed;

/// The kind-specific fields of a contract; the variant is the `kind`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Body {
    /// `kind: IntentContract`.
    IntentContract(IntentContract),
    /// `kind: TaskSeed`.
    TaskSeed(TaskSeed),
    /// `kind: Acceptance`.
    Acceptance(Acceptance),
    /// `kind: PublishGate`.
    PublishGate(PublishGate),
    /// `kind: Evidence` (boxed: it is by far the largest body).
    Evidence(Box<Evidence>),
}

impl Body {
    /// The kind of this body.
    pub fn kind(&self) -> Kind {
        match self {
            Body::IntentContract(_) => Kind::IntentContract,
            Body::TaskSeed(_) => Kind::TaskSeed,
            Body::Acceptance(_) => Kind::Acceptance,
            Body::PublishGate(_) => Kind::PublishGate,
            Body::Evidence(_) => Kind::Evidence,
        }
    }
}

impl From<IntentContract> for Body {
    fn from(body: IntentContract) -> Self {
        Body::IntentContract(body)
    }
}

impl From<TaskSeed> for Body {
    fn from(body: TaskSeed) -> Self {
        Body::TaskSeed(body)
    }
}

impl From<Acceptance> for Body {
    fn from(body: Acceptance) -> Self {
        Body::Acceptance(body)
    }
}

impl From<PublishGate> for Body {
    fn from(body: PublishGate) -> Self {
        Body::PublishGate(body)
    }
}

impl From<Evidence> for Body {
    fn from(body: Evidence) -> Self {
        Body::Evidence(Box::new(body))
    }
}

/// One contract document: the common fields and the kind-specific body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contract {
    /// The fields every kind carries.
    pub common: Common,
    /// The kind and its fields.
    pub body: Body,
}

impl Contract {
    /// A contract from its parts.
    pub fn new(common: Common, body: impl Into<Body>) -> Self {
        Self {
            common,
            body: body.into(),
        }
    }

    /// The kind.
    pub fn kind(&self) -> Kind {
        self.body.kind()
    }

    /// The id.
    pub fn id(&self) -> &ContractId {
        &self.common.id
    }

    /// The IntentContract fields, if it is one.
    pub fn as_intent_contract(&self) -> Option<&IntentContract> {
        match &self.body {
            Body::IntentContract(b) => Some(b),
            _ => None,
        }
    }

    /// The TaskSeed fields, if it is one.
    pub fn as_task_seed(&self) -> Option<&TaskSeed> {
        match &self.body {
            Body::TaskSeed(b) => Some(b),
            _ => None,
        }
    }

    /// The Acceptance fields, if it is one.
    pub fn as_acceptance(&self) -> Option<&Acceptance> {
        match &self.body {
            Body::Acceptance(b) => Some(b),
            _ => None,
        }
    }

    /// The PublishGate fields, if it is one.
    pub fn as_publish_gate(&self) -> Option<&PublishGate> {
        match &self.body {
            Body::PublishGate(b) => Some(b),
            _ => None,
        }
    }

    /// The Evidence fields, if it is one.
    pub fn as_evidence(&self) -> Option<&Evidence> {
        match &self.body {
            Body::Evidence(b) => Some(b),
            _ => None,
        }
    }
}

/// The JSON layout: the common fields in schema order, then the body's fields.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WireOut<'a> {
    schema_version: SchemaVersion,
    id: &'a ContractId,
    kind: Kind,
    state: State,
    version: Version,
    created_at: &'a DateTime,
    updated_at: &'a DateTime,
    #[serde(flatten)]
    body: &'a Body,
}

impl Serialize for Contract {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        WireOut {
            schema_version: self.common.schema_version,
            id: &self.common.id,
            kind: self.kind(),
            state: self.common.state,
            version: self.common.version,
            created_at: &self.common.created_at,
            updated_at: &self.common.updated_at,
            body: &self.body,
        }
        .serialize(serializer)
    }
}

#[derive(Deserialize)]
struct WireIn {
    #[serde(flatten)]
    common: Common,
    kind: Kind,
    #[serde(flatten)]
    rest: serde_json::Map<String, serde_json::Value>,
}

impl<'de> Deserialize<'de> for Contract {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let WireIn { common, kind, rest } = WireIn::deserialize(deserializer)?;
        if common.id.kind() != Some(kind) {
            return Err(D::Error::custom(format!(
                "id `{}` does not have the {kind} prefix `{}-`",
                common.id,
                kind.id_prefix()
            )));
        }
        let rest = serde_json::Value::Object(rest);
        let body = match kind {
            Kind::IntentContract => IntentContract::deserialize(rest).map(Body::from),
            Kind::TaskSeed => TaskSeed::deserialize(rest).map(Body::from),
            Kind::Acceptance => Acceptance::deserialize(rest).map(Body::from),
            Kind::PublishGate => PublishGate::deserialize(rest).map(Body::from),
            Kind::Evidence => Evidence::deserialize(rest).map(Body::from),
        }
        .map_err(|e| D::Error::custom(format!("{kind}: {e}")))?;
        Ok(Contract { common, body })
    }
}
