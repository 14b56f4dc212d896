//! `final-decision-required`: a PublishGate with no required approvals is decided when it is
//! created, so its `finalDecision` is `approved` or `rejected`, never `pending` or `expired`.

use serde_json::Value;

use super::Doc;
use crate::error::{ContractError, codes};
use crate::kinds::{FinalDecision, Kind};

pub(crate) fn message(json: &Value) -> String {
    let found = json
        .get("finalDecision")
        .and_then(Value::as_str)
        .unwrap_or("?");
    format!(
        "finalDecision `{found}` needs required approvals; with none it must be approved or rejected"
    )
}

pub(crate) fn check(doc: &Doc<'_>, out: &mut Vec<ContractError>) {
    if !doc.is(Kind::PublishGate) {
        return;
    }
    let none_required = doc
        .json
        .get("requiredApprovals")
        .and_then(Value::as_array)
        .is_some_and(Vec::is_empty);
    let undecided = matches!(
        doc.get::<FinalDecision>("/finalDecision"),
        Some(FinalDecision::Pending | FinalDecision::Expired)
    );
    if none_required && undecided {
        out.push(doc.error(
            "/finalDecision",
            codes::FINAL_DECISION_REQUIRED,
            message(doc.json),
        ));
    }
}

#[cfg(test)]
mod tests;
