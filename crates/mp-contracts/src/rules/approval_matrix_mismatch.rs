//! `approval-matrix-mismatch`: a PublishGate's `requiredApprovals` is exactly the approval
//! matrix row of its `riskLevel` (compared as sets).

use std::collections::BTreeSet;

use super::{Doc, bracket};
use crate::error::{ContractError, codes};
use crate::kinds::{ApproverRole, Kind, RiskLevel};
use crate::policy::approval_matrix;

pub(crate) fn check(doc: &Doc<'_>, out: &mut Vec<ContractError>) {
    if !doc.is(Kind::PublishGate) {
        return;
    }
    let (Some(risk), Some(required)) = (
        doc.get::<RiskLevel>("/riskLevel"),
        doc.get::<Vec<ApproverRole>>("/requiredApprovals"),
    ) else {
        return;
    };
    let expected: BTreeSet<ApproverRole> = approval_matrix(risk).iter().copied().collect();
    let found: BTreeSet<ApproverRole> = required.iter().copied().collect();
    if expected != found {
        out.push(doc.error(
            "/requiredApprovals",
            codes::APPROVAL_MATRIX_MISMATCH,
            format!(
                "riskLevel {risk} requires {}, found {}",
                bracket(&expected),
                bracket(&required)
            ),
        ));
    }
}

#[cfg(test)]
mod tests;
