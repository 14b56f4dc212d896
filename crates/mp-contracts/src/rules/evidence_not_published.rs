//! `evidence-not-published`: an Evidence is `Published` from birth and never changes, so its
//! state is always `Published`.

use super::Doc;
use crate::error::{ContractError, codes};
use crate::kinds::{Kind, State};

pub(crate) fn check(doc: &Doc<'_>, out: &mut Vec<ContractError>) {
    if !doc.is(Kind::Evidence) {
        return;
    }
    match doc.get::<State>("/state") {
        Some(State::Published) | None => {}
        Some(state) => out.push(doc.error(
            "/state",
            codes::EVIDENCE_NOT_PUBLISHED,
            format!("an Evidence is Published from birth, found {state}"),
        )),
    }
}

#[cfg(test)]
mod tests;
