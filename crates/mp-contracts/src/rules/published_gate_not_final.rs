//! `published-gate-not-final`: a PublishGate in state `Published` has `finalDecision`
//! `approved`. (That every required role approved is `required-approval-missing`.)

use super::Doc;
use crate::error::{ContractError, codes};
use crate::kinds::{FinalDecision, Kind, State};

pub(crate) fn check(doc: &Doc<'_>, out: &mut Vec<ContractError>) {
    if !doc.is(Kind::PublishGate) || doc.get::<State>("/state") != Some(State::Published) {
        return;
    }
    match doc.get::<FinalDecision>("/finalDecision") {
        Some(FinalDecision::Approved) | None => {}
        Some(decision) => out.push(doc.error(
            "/state",
            codes::PUBLISHED_GATE_NOT_FINAL,
            format!("a Published gate needs finalDecision approved, found {decision}"),
        )),
    }
}

#[cfg(test)]
mod tests;
