//! The agents view of an audit log (decisions/0076): the `pr` records the tick appends,
//! folded per pull request and then per agent (by tool, model, session, machine or
//! author). Pure: it reads lines given to it and returns figures; `mp agents` reads the
//! file and prints them.
//!
//! * A pull request belongs to the agent its newest record names.
//! * Merged: a record says `merged`. Closed: never merged, and a later tick recorded other
//!   pull requests of its repository without it (the tick lists open pull requests only).
//! * Approval to merge: from the approval label's last application before the merge, by
//!   GitHub's timeline, to the tick that merged it.
//! * Blocks: per condition, the tick evaluations it blocked and the pull requests it ever
//!   blocked.
//! * Records of dry runs are left out: a dry run merges nothing.

use std::collections::{BTreeMap, HashMap};

use mp_core::agent::{AgentKey, UNDECLARED};
use serde::Deserialize;
use serde_json::{Value, json};

/// One `pr` record, as much of it as the view needs.
#[derive(Debug, Deserialize)]
struct PrRecord {
    ts: String,
    pr: String,
    action: String,
    #[serde(default)]
    blocked_by: Vec<String>,
    #[serde(default)]
    agent: Option<BTreeMap<String, Option<String>>>,
    #[serde(default)]
    approved_at: Option<String>,
    #[serde(default)]
    dry_run: bool,
}

/// What the log says of one pull request.
#[derive(Debug, Default)]
struct Track {
    /// The group of its newest record.
    group: String,
    last_seen: i64,
    merged_at: Option<i64>,
    /// The approval time the merging record carried (else the newest one seen).
    approved_at: Option<i64>,
    blocks: BTreeMap<String, u64>,
}

/// The figures of one agent.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct AgentFigures {
    /// The agent's value for the grouping key ([`UNDECLARED`] when none).
    pub agent: String,
    /// Pull requests seen.
    pub prs: u64,
    /// Pull requests merged.
    pub merged: u64,
    /// Pull requests closed without a merge.
    pub closed: u64,
    /// Pull requests still open at their repository's last tick.
    pub open: u64,
    /// Merged over ended (merged + closed); `None` when none ended.
    pub merge_rate: Option<f64>,
    /// Seconds from approval to merge: how many merges had both times, median and p90.
    pub approval_to_merge: Durations,
    /// Per condition code, the tick evaluations it blocked.
    pub blocks: BTreeMap<String, u64>,
    /// Per condition code, the pull requests it ever blocked.
    pub blocked_prs: BTreeMap<String, u64>,
}

/// A distribution of durations in seconds.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Durations {
    /// How many durations.
    pub count: u64,
    /// The median, when any.
    pub median_s: Option<i64>,
    /// The 90th percentile (nearest rank), when any.
    pub p90_s: Option<i64>,
    /// Every duration, sorted (for the report's distribution).
    #[serde(skip)]
    pub all: Vec<i64>,
}

impl Durations {
    fn of(mut all: Vec<i64>) -> Self {
        all.sort_unstable();
        let rank = |p: f64| {
            if all.is_empty() {
                return None;
            }
            let index = ((p * all.len() as f64).ceil() as usize).clamp(1, all.len()) - 1;
            Some(all[index])
        };
        Self {
            count: all.len() as u64,
            median_s: rank(0.5),
            p90_s: rank(0.9),
            all,
        }
    }
}

/// The view: figures per agent, busiest first, and what was read.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentsView {
    /// The grouping key.
    pub by: AgentKey,
    /// Per agent.
    pub agents: Vec<AgentFigures>,
    /// `pr` records read (after `since`, dry runs left out).
    pub records: u64,
    /// Lines that were not JSON or lacked what a `pr` record needs: (line, problem), the
    /// first few.
    pub malformed: Vec<(usize, String)>,
    /// How many lines were malformed in all.
    pub malformed_count: u64,
}

/// How many malformed lines are kept to be shown.
const MALFORMED_SHOWN: usize = 5;

/// Folds the lines of an audit log into the agents view: records at or after `since`
/// (epoch seconds) only, grouped by `by`.
pub fn view(
    lines: impl IntoIterator<Item = impl AsRef<str>>,
    by: AgentKey,
    since: Option<i64>,
) -> AgentsView {
    let mut tracks: HashMap<String, Track> = HashMap::new();
    // Per repository, the latest tick instant that recorded any of its pull requests.
    let mut repo_last: HashMap<String, i64> = HashMap::new();
    let mut records = 0;
    let mut malformed = Vec::new();
    let mut malformed_count = 0;
    for (index, line) in lines.into_iter().enumerate() {
        let line = line.as_ref();
        // Only `pr` records matter here; anything else is skipped unread.
        if !line.contains("\"record\":\"pr\"") {
            continue;
        }
        let parsed = serde_json::from_str::<PrRecord>(line)
            .map_err(|e| e.to_string())
            .and_then(|record| {
                let at = epoch(&record.ts)
                    .ok_or_else(|| format!("`ts` {:?} is not an RFC 3339 instant", record.ts))?;
                Ok((record, at))
            });
        let (record, at) = match parsed {
            Ok(parsed) => parsed,
            Err(problem) => {
                malformed_count += 1;
                if malformed.len() < MALFORMED_SHOWN {
                    malformed.push((index + 1, problem));
                }
                continue;
            }
        };
        if record.dry_run || since.is_some_and(|since| at < since) {
            continue;
        }
        records += 1;
        let repo = record.pr.split('#').next().unwrap_or_default().to_owned();
        let last = repo_last.entry(repo).or_insert(at);
        *last = (*last).max(at);
        let track = tracks.entry(record.pr.clone()).or_default();
        if at >= track.last_seen {
            track.last_seen = at;
            track.group = group_of(record.agent.as_ref(), by);
        }
        let approved = record.approved_at.as_deref().and_then(epoch);
        if record.action == "merged" {
            if track.merged_at.is_none() {
                track.merged_at = Some(at);
                track.approved_at = approved.or(track.approved_at);
            }
        } else if track.merged_at.is_none() && approved.is_some() {
            track.approved_at = approved;
        }
        for code in record.blocked_by {
            *track.blocks.entry(code).or_default() += 1;
        }
    }
    let mut groups: BTreeMap<String, (AgentFigures, Vec<i64>)> = BTreeMap::new();
    for (pr, track) in tracks {
        let repo = pr.split('#').next().unwrap_or_default();
        let (figures, waits) = groups.entry(track.group.clone()).or_insert_with(|| {
            (
                AgentFigures {
                    agent: track.group.clone(),
                    prs: 0,
                    merged: 0,
                    closed: 0,
                    open: 0,
                    merge_rate: None,
                    approval_to_merge: Durations::default(),
                    blocks: BTreeMap::new(),
                    blocked_prs: BTreeMap::new(),
                },
                Vec::new(),
            )
        });
        figures.prs += 1;
        match track.merged_at {
            Some(merged) => {
                figures.merged += 1;
                if let Some(approved) = track.approved_at.filter(|a| *a <= merged) {
                    waits.push(merged - approved);
                }
            }
            None if repo_last
                .get(repo)
                .is_some_and(|last| *last > track.last_seen) =>
            {
                figures.closed += 1;
            }
            None => figures.open += 1,
        }
        for (code, ticks) in track.blocks {
            *figures.blocks.entry(code.clone()).or_default() += ticks;
            *figures.blocked_prs.entry(code).or_default() += 1;
        }
    }
    let mut agents: Vec<AgentFigures> = groups
        .into_values()
        .map(|(mut figures, waits)| {
            let ended = figures.merged + figures.closed;
            figures.merge_rate = (ended > 0).then(|| figures.merged as f64 / ended as f64);
            figures.approval_to_merge = Durations::of(waits);
            figures
        })
        .collect();
    agents.sort_by(|a, b| b.prs.cmp(&a.prs).then_with(|| a.agent.cmp(&b.agent)));
    AgentsView {
        by,
        agents,
        records,
        malformed,
        malformed_count,
    }
}

/// The group a record's agent falls in.
fn group_of(agent: Option<&BTreeMap<String, Option<String>>>, by: AgentKey) -> String {
    agent
        .and_then(|fields| fields.get(by.as_str()).cloned().flatten())
        .filter(|value| !value.is_empty())
        .unwrap_or_else(|| UNDECLARED.to_owned())
}

/// Epoch seconds of an RFC 3339 instant.
fn epoch(text: &str) -> Option<i64> {
    text.parse::<jiff::Timestamp>().ok().map(|t| t.as_second())
}

impl AgentsView {
    /// The view as one JSON document.
    pub fn to_json(&self) -> Value {
        json!({
            "by": self.by.as_str(),
            "records": self.records,
            "malformed": self.malformed_count,
            "agents": self.agents,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(ts: &str, pr: &str, action: &str, tool: &str, extra: &str) -> String {
        format!(
            r#"{{"ts":"{ts}","record":"pr","pr":"{pr}","action":"{action}","agent":{{"tool":"{tool}","model":"m","session":null,"machine":"box","author":"bot-{tool}"}}{extra}}}"#
        )
    }

    fn view_of(lines: &[String], by: AgentKey) -> AgentsView {
        view(lines, by, None)
    }

    #[test]
    fn merged_closed_open_blocks_and_waits_per_agent() {
        let c1 = r#","blocked_by":["c1_ready_to_merge"]"#;
        let c2 = r#","blocked_by":["c2_checks_green"],"approved_at":"2026-03-01T10:00:00Z""#;
        let lines = vec![
            // a#1 by alpha: blocked twice on C1, once on C2, then merged 30 min after approval.
            record("2026-03-01T09:00:00Z", "o/a#1", "blocked", "alpha", c1),
            record("2026-03-01T09:05:00Z", "o/a#1", "blocked", "alpha", c1),
            record("2026-03-01T10:05:00Z", "o/a#1", "blocked", "alpha", c2),
            record(
                "2026-03-01T10:30:00Z",
                "o/a#1",
                "merged",
                "alpha",
                r#","approved_at":"2026-03-01T10:00:00Z""#,
            ),
            // a#2 by alpha: seen once, then its repository ticks without it: closed.
            record("2026-03-01T09:00:00Z", "o/a#2", "waiting", "alpha", ""),
            // b#3 by beta: still open at its repository's last tick.
            record(
                "2026-03-01T09:00:00Z",
                "o/b#3",
                "inbox",
                "beta",
                r#","blocked_by":["inbox"]"#,
            ),
            r#"{"ts":"2026-03-01T09:00:00Z","record":"tick","repos":[]}"#.to_owned(),
            "not json at all, \"record\":\"pr\"".to_owned(),
        ];
        let view = view_of(&lines, AgentKey::Tool);
        assert_eq!(view.records, 6);
        assert_eq!(view.malformed_count, 1);
        assert_eq!(view.malformed[0].0, 8);
        let alpha = &view.agents[0];
        assert_eq!(
            (
                alpha.agent.as_str(),
                alpha.prs,
                alpha.merged,
                alpha.closed,
                alpha.open
            ),
            ("alpha", 2, 1, 1, 0)
        );
        assert_eq!(alpha.merge_rate, Some(0.5));
        assert_eq!(alpha.approval_to_merge.median_s, Some(1800));
        assert_eq!(
            alpha.blocks,
            BTreeMap::from([
                ("c1_ready_to_merge".to_owned(), 2),
                ("c2_checks_green".to_owned(), 1)
            ])
        );
        assert_eq!(alpha.blocked_prs["c1_ready_to_merge"], 1);
        let beta = &view.agents[1];
        assert_eq!((beta.prs, beta.merged, beta.open), (1, 0, 1));
        assert_eq!(beta.merge_rate, None);
        assert_eq!(beta.blocks["inbox"], 1);
    }

    #[test]
    fn grouping_keys_since_and_dry_runs() {
        let lines = vec![
            record("2026-03-01T09:00:00Z", "o/a#1", "merged", "alpha", ""),
            record("2026-03-02T09:00:00Z", "o/a#2", "merged", "beta", ""),
            record(
                "2026-03-02T09:00:00Z",
                "o/a#3",
                "merged",
                "beta",
                r#","dry_run":true"#,
            ),
            r#"{"ts":"2026-03-02T09:00:00Z","record":"pr","pr":"o/a#4","action":"blocked"}"#
                .to_owned(),
        ];
        let by_machine = view_of(&lines, AgentKey::Machine);
        let names: Vec<(&str, u64)> = by_machine
            .agents
            .iter()
            .map(|a| (a.agent.as_str(), a.prs))
            .collect();
        assert_eq!(names, [("box", 2), (UNDECLARED, 1)]);
        let since = epoch("2026-03-02T00:00:00Z");
        let recent = view(&lines, AgentKey::Author, since);
        let names: Vec<&str> = recent.agents.iter().map(|a| a.agent.as_str()).collect();
        assert_eq!(names, ["(undeclared)", "bot-beta"]);
    }

    #[test]
    fn percentiles_by_nearest_rank() {
        let d = Durations::of((1..=10).rev().collect());
        assert_eq!((d.count, d.median_s, d.p90_s), (10, Some(5), Some(9)));
        assert_eq!(Durations::of(Vec::new()).median_s, None);
    }
}
