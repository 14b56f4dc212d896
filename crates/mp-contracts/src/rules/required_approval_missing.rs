//! `required-approval-missing`: an approved PublishGate has an `approved` decision from
//! every role in `requiredApprovals`. Rejections do not count and `admin` stands in for no
//! other role. One error per missing role.

use serde_json::Value;

use super::Doc;
use crate::error::{ContractError, codes};
use crate::kinds::{ApproverRole, FinalDecision, Kind};

pub(crate) fn check(doc: &Doc<'_>, out: &mut Vec<ContractError>) {
    if !doc.is(Kind::PublishGate)
        || doc.get::<FinalDecision>("/finalDecision") != Some(FinalDecision::Approved)
    {
        return;
    }
    let Some(required) = doc.get::<Vec<ApproverRole>>("/requiredApprovals") else {
        return;
    };
    let approvals = doc
        .json
        .get("approvals")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    for role in required {
        let approved = approvals.iter().any(|entry| {
            entry.get("role").and_then(Value::as_str) == Some(role.as_str())
                && entry.get("decision").and_then(Value::as_str) == Some("approved")
        });
        if !approved {
            out.push(doc.error(
                "/approvals",
                codes::REQUIRED_APPROVAL_MISSING,
                format!("finalDecision is approved but required role {role} has not approved"),
            ));
        }
    }
}

#[cfg(test)]
mod tests;
