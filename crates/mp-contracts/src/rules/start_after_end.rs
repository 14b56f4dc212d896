//! `start-after-end`: an Evidence's `startTime` is not after its `endTime` (compared as
//! instants, so offsets count; equal times are fine).

use super::Doc;
use crate::error::{ContractError, codes};
use crate::kinds::{DateTime, Kind};

pub(crate) fn check(doc: &Doc<'_>, out: &mut Vec<ContractError>) {
    if !doc.is(Kind::Evidence) {
        return;
    }
    let (Some(start), Some(end)) = (
        doc.get::<DateTime>("/startTime"),
        doc.get::<DateTime>("/endTime"),
    ) else {
        return;
    };
    if start > end {
        out.push(doc.error(
            "/startTime",
            codes::START_AFTER_END,
            format!("startTime {start} is after endTime {end}"),
        ));
    }
}

#[cfg(test)]
mod tests;
