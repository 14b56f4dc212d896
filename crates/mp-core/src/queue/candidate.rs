//! A pull request as a queue candidate: whose work it is, how urgent, since when ready.

use crate::approval::provenance::{Provenance, label_applier};
use crate::context::PrContext;
use crate::ids::{Login, Timestamp};
use crate::inbox::labelled_at;
use crate::labels::READY_TO_MERGE;
use crate::trailers::TrailerKey;

use super::order::{AgentKey, Candidate, Priority};

/// The candidate a pull request that passed the gate in queue mode makes: the agent is
/// its author and its head commit's `Agent-Session`; the priority is
/// [`Priority::High`] only when `priority_label` is on it and the timeline event that
/// established it names an allowlisted person, and GitHub's record of the label shows it
/// unchanged since (a label an agent applies, or renames onto the priority label's name,
/// counts for nothing, as for C1; `pr.label_records` must hold the label's record); ready since the last time `ready-to-merge` was applied, else `now`.
pub fn candidate(
    pr: &PrContext,
    allowlist: &[Login],
    priority_label: &str,
    now: Timestamp,
) -> Candidate {
    let session = pr
        .commits
        .iter()
        .find(|c| c.sha == pr.head_sha)
        .or_else(|| pr.commits.last())
        .and_then(|c| c.trailers.get(TrailerKey::AgentSession.as_str()))
        .map(str::to_owned);
    Candidate {
        pr: pr.number,
        head: pr.head_sha.clone(),
        agent: AgentKey {
            author: pr.author.clone(),
            session,
        },
        priority: priority(pr, allowlist, priority_label),
        ready_since: labelled_at(&pr.label_events, READY_TO_MERGE).unwrap_or(now),
    }
}

/// [`Priority::High`] when `label` is on the pull request and an allowlisted person applied
/// it, as [`label_applier`] establishes for C1 (renamed labels included); anything that
/// cannot be established is no priority: a priority only orders the queue.
fn priority(pr: &PrContext, allowlist: &[Login], label: &str) -> Priority {
    if !pr.labels.iter().any(|l| l == label) {
        return Priority::Normal;
    }
    match label_applier(pr, label) {
        Provenance::Established(applier)
            if applier
                .actor
                .as_ref()
                .is_some_and(|a| allowlist.contains(a)) =>
        {
            Priority::High
        }
        _ => Priority::Normal,
    }
}
