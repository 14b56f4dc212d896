//! `auto-activate-requires-approvals`: a TaskSeed or Acceptance that does not activate by
//! itself names at least one role that must approve its activation.

use super::Doc;
use crate::error::{ContractError, codes};
use crate::kinds::Kind;

const POINTER: &str = "/generationPolicy/requiredActivationApprovals";

pub(crate) fn message() -> String {
    "requiredActivationApprovals is empty while auto_activate is false; name at least one role"
        .to_owned()
}

pub(crate) fn check(doc: &Doc<'_>, out: &mut Vec<ContractError>) {
    if !(doc.is(Kind::TaskSeed) || doc.is(Kind::Acceptance)) {
        return;
    }
    let auto_activate = doc.get::<bool>("/generationPolicy/auto_activate");
    let roles = doc.array(POINTER);
    if auto_activate == Some(false) && roles.is_some_and(Vec::is_empty) {
        out.push(doc.error(POINTER, codes::AUTO_ACTIVATE_REQUIRES_APPROVALS, message()));
    }
}

#[cfg(test)]
mod tests;
