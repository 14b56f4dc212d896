//! `deadline-required`: a PublishGate that waits for human approvals has an
//! `approvalDeadline`.

use serde_json::Value;

use super::Doc;
use crate::error::{ContractError, codes};
use crate::kinds::Kind;
use crate::schema::quote_list;

pub(crate) fn message(json: &Value) -> String {
    let roles = json
        .get("requiredApprovals")
        .map(quote_list)
        .unwrap_or_default();
    format!("approvalDeadline is required because requiredApprovals names {roles}")
}

pub(crate) fn check(doc: &Doc<'_>, out: &mut Vec<ContractError>) {
    if !doc.is(Kind::PublishGate) {
        return;
    }
    let waits = doc
        .json
        .get("requiredApprovals")
        .and_then(Value::as_array)
        .is_some_and(|roles| !roles.is_empty());
    if waits && doc.json.get("approvalDeadline").is_none() {
        out.push(doc.error(
            "/approvalDeadline",
            codes::DEADLINE_REQUIRED,
            message(doc.json),
        ));
    }
}

#[cfg(test)]
mod tests;
