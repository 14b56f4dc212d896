//! Who goes next: priority, then one entry per agent in turn, then age.

use std::collections::BTreeMap;
use std::fmt;

use crate::ids::{CommitSha, Login, PrNumber, Timestamp};

/// Whose work an entry is, for fairness: the pull request's author and the
/// `Agent-Session` trailer of its head (agents that share one account are told apart by
/// their sessions).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AgentKey {
    /// The pull request's author.
    pub author: Login,
    /// The head commit's `Agent-Session`, when it has one.
    pub session: Option<String>,
}

impl fmt::Display for AgentKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.session {
            Some(session) => write!(f, "{} ({session})", self.author),
            None => write!(f, "{}", self.author),
        }
    }
}

/// How urgent an entry is. Only the owner (or an allowlisted person) can raise it, by the
/// queue's priority label: a label an agent applies is no priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Priority {
    /// The default.
    #[default]
    Normal,
    /// The owner applied the priority label.
    High,
}

/// A pull request that may enter the queue: approved for its head, C1, C3 and C5 passed,
/// not waiting for the owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The pull request.
    pub pr: PrNumber,
    /// The approved head: the commit the build merges.
    pub head: CommitSha,
    /// Whose work it is.
    pub agent: AgentKey,
    /// How urgent.
    pub priority: Priority,
    /// Since when it has been ready (the approval's time): older goes first.
    pub ready_since: Timestamp,
}

/// Why a candidate is not in the queue this tick.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeldReason {
    /// Its agent already has `cap` entries queued ahead of it.
    AgentCap {
        /// The cap (`max_queued_per_agent`).
        cap: u32,
    },
}

impl HeldReason {
    /// Stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::AgentCap { .. } => "queue_agent_cap",
        }
    }
}

impl fmt::Display for HeldReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::AgentCap { cap } => write!(
                f,
                "its agent already has {cap} pull request(s) in the queue (max_queued_per_agent)"
            ),
        }
    }
}

/// A candidate held out of the queue, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    /// The candidate.
    pub candidate: Candidate,
    /// Why it waits outside the queue.
    pub reason: HeldReason,
}

/// The queue in order, and the candidates held out of it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Ordered {
    /// The entries, first to build first.
    pub queue: Vec<Candidate>,
    /// The candidates over their agent's cap.
    pub held: Vec<Held>,
}

impl Ordered {
    /// The 1-based position of `pr` in the queue, if queued.
    pub fn position(&self, pr: PrNumber) -> Option<usize> {
        self.queue.iter().position(|c| c.pr == pr).map(|at| at + 1)
    }
}

/// Puts `candidates` in queue order: [`Priority::High`] before [`Priority::Normal`]; within
/// a priority, one entry per agent in turn, the agents ordered by their oldest entry and
/// each agent's entries by age (then number); with `max_queued_per_agent`, an agent's
/// entries beyond the cap (counted in that order) are held. Deterministic for any input
/// order.
pub fn order(mut candidates: Vec<Candidate>, max_queued_per_agent: Option<u32>) -> Ordered {
    candidates.sort_by(|a, b| {
        b.priority
            .cmp(&a.priority)
            .then(a.ready_since.cmp(&b.ready_since))
            .then(a.pr.cmp(&b.pr))
    });
    let mut out = Ordered::default();
    let mut counted: BTreeMap<AgentKey, u32> = BTreeMap::new();
    let mut admitted = Vec::with_capacity(candidates.len());
    for candidate in candidates {
        let count = counted.entry(candidate.agent.clone()).or_default();
        match max_queued_per_agent {
            Some(cap) if *count >= cap => out.held.push(Held {
                candidate,
                reason: HeldReason::AgentCap { cap },
            }),
            _ => {
                *count += 1;
                admitted.push(candidate);
            }
        }
    }
    for priority in [Priority::High, Priority::Normal] {
        // Each agent's entries of this priority, agents in order of their oldest entry.
        let mut agents: Vec<(AgentKey, Vec<Candidate>)> = Vec::new();
        for candidate in admitted.iter().filter(|c| c.priority == priority) {
            match agents
                .iter_mut()
                .find(|(agent, _)| *agent == candidate.agent)
            {
                Some((_, entries)) => entries.push(candidate.clone()),
                None => agents.push((candidate.agent.clone(), vec![candidate.clone()])),
            }
        }
        let rounds = agents.iter().map(|(_, e)| e.len()).max().unwrap_or(0);
        for round in 0..rounds {
            for (_, entries) in &agents {
                if let Some(entry) = entries.get(round) {
                    out.queue.push(entry.clone());
                }
            }
        }
    }
    out
}
