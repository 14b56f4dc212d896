//! The bundled JSON Schemas (draft 2020-12) and the validators built from them.
//!
//! Each kind's schema is `allOf: [common, kind-specific] + unevaluatedProperties: false`,
//! with nested objects closed by `additionalProperties: false`. The files live in
//! `crates/mp-contracts/schemas/` and are compiled into the crate; the common schema is
//! registered under its `$id` in an offline registry, so no `$ref` ever reaches the network
//! or the filesystem. Formats are asserted (`date-time` is RFC 3339 with an offset) and
//! `pattern` follows ECMA-262 (`$` does not match before a trailing newline).
//!
//! A validator per kind is built on first use and kept for the life of the process. The
//! bundled schemas are covered by tests, so a build failure is a defect of this crate.

mod report;

pub(crate) use report::quote_list;

#[cfg(test)]
mod tests;

use std::collections::BTreeSet;
use std::sync::LazyLock;

use jsonschema::{Draft, PatternOptions, Registry, Validator};
use serde_json::Value;

use crate::error::ContractError;
use crate::kinds::Kind;

/// The base schema with the common fields (never used alone to accept a document).
pub const COMMON_SCHEMA: &str = include_str!("../../schemas/common.schema.json");
/// The IntentContract schema.
pub const INTENT_CONTRACT_SCHEMA: &str = include_str!("../../schemas/IntentContract.schema.json");
/// The TaskSeed schema.
pub const TASK_SEED_SCHEMA: &str = include_str!("../../schemas/TaskSeed.schema.json");
/// The Acceptance schema.
pub const ACCEPTANCE_SCHEMA: &str = include_str!("../../schemas/Acceptance.schema.json");
/// The PublishGate schema.
pub const PUBLISH_GATE_SCHEMA: &str = include_str!("../../schemas/PublishGate.schema.json");
/// The Evidence schema.
pub const EVIDENCE_SCHEMA: &str = include_str!("../../schemas/Evidence.schema.json");

/// The `$id` under which the common schema is registered.
pub const COMMON_SCHEMA_ID: &str = "https://agent-protocols/schemas/common.schema.json";

/// The bundled schema text of a kind.
pub fn schema_source(kind: Kind) -> &'static str {
    match kind {
        Kind::IntentContract => INTENT_CONTRACT_SCHEMA,
        Kind::TaskSeed => TASK_SEED_SCHEMA,
        Kind::Acceptance => ACCEPTANCE_SCHEMA,
        Kind::PublishGate => PUBLISH_GATE_SCHEMA,
        Kind::Evidence => EVIDENCE_SCHEMA,
    }
}

/// The `$id` of a kind's schema (`https://agent-protocols/schemas/<Kind>.schema.json`).
pub fn schema_id(kind: Kind) -> String {
    format!(
        "https://agent-protocols/schemas/{}.schema.json",
        kind.as_str()
    )
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).expect("a bundled schema is valid JSON (checked by tests)")
}

static COMMON: LazyLock<Value> = LazyLock::new(|| parse(COMMON_SCHEMA));

static REGISTRY: LazyLock<Registry<'static>> = LazyLock::new(|| {
    Registry::new()
        .add(COMMON_SCHEMA_ID, COMMON.clone())
        .and_then(|builder| builder.prepare())
        .expect("the bundled common schema registers (checked by tests)")
});

fn build(schema: &Value) -> Validator {
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .with_registry(&REGISTRY)
        .offline()
        .should_validate_formats(true)
        .with_pattern_options(PatternOptions::regex())
        .build(schema)
        .expect("a bundled schema compiles (checked by tests)")
}

/// A compiled kind schema and the top-level properties it declares.
pub(crate) struct KindSchema {
    validator: Validator,
    /// Common and kind-specific property names: the keys `unevaluatedProperties` allows.
    known: BTreeSet<String>,
}

fn property_names(schema: &Value) -> impl Iterator<Item = String> + '_ {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|props| props.keys().cloned())
}

fn kind_schema(kind: Kind) -> KindSchema {
    let schema = parse(schema_source(kind));
    let mut known: BTreeSet<String> = property_names(&COMMON).collect();
    for branch in schema
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        known.extend(property_names(branch));
    }
    KindSchema {
        validator: build(&schema),
        known,
    }
}

static INTENT_CONTRACT: LazyLock<KindSchema> = LazyLock::new(|| kind_schema(Kind::IntentContract));
static TASK_SEED: LazyLock<KindSchema> = LazyLock::new(|| kind_schema(Kind::TaskSeed));
static ACCEPTANCE: LazyLock<KindSchema> = LazyLock::new(|| kind_schema(Kind::Acceptance));
static PUBLISH_GATE: LazyLock<KindSchema> = LazyLock::new(|| kind_schema(Kind::PublishGate));
static EVIDENCE: LazyLock<KindSchema> = LazyLock::new(|| kind_schema(Kind::Evidence));
/// The common schema alone, used only to describe a document whose `kind` is unusable.
static COMMON_ONLY: LazyLock<Validator> = LazyLock::new(|| build(&COMMON));

pub(crate) fn for_kind(kind: Kind) -> &'static KindSchema {
    match kind {
        Kind::IntentContract => &INTENT_CONTRACT,
        Kind::TaskSeed => &TASK_SEED,
        Kind::Acceptance => &ACCEPTANCE,
        Kind::PublishGate => &PUBLISH_GATE,
        Kind::Evidence => &EVIDENCE,
    }
}

/// The schema errors of one document, at most one per pointer (the most telling one).
///
/// With a usable `kind`, the document is checked against that kind's schema; otherwise it
/// is described against the common schema (which then reports the `kind` problem).
pub(crate) fn check(document: usize, json: &Value, kind: Option<Kind>) -> Vec<ContractError> {
    match kind {
        Some(kind) => {
            let schema = for_kind(kind);
            if schema.validator.is_valid(json) {
                return Vec::new();
            }
            report::collect(
                document,
                json,
                schema.validator.iter_errors(json),
                Some(&schema.known),
            )
        }
        None => report::collect(document, json, COMMON_ONLY.iter_errors(json), None),
    }
}

/// Builds every validator now instead of on first use (e.g. at start-up, so the first
/// request does not pay for it).
pub fn warm_up() {
    for kind in Kind::ALL {
        let _ = for_kind(kind);
    }
    let _ = &*COMMON_ONLY;
}
