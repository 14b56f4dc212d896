//! The agents view of an audit log (decisions/0076, 0080): the `pr` records the tick
//! appends, folded per pull request and then per agent (by tool, model, session, machine
//! or author), with the supervisor's `incident` and `revert` records attributed to the
//! pull requests that merged the commits they name. Pure: it reads lines given to it and
//! returns figures; `mp agents` reads the file and prints them.
//!
//! * A pull request belongs to the agent its newest record names.
//! * Merged: a record says `merged`. Closed: never merged, and a later tick recorded other
//!   pull requests of its repository without it (the tick lists open pull requests only).
//! * Approval to merge: from the approval label's last application before the merge, by
//!   GitHub's timeline, to the tick that merged it.
//! * Blocks: per condition, the tick evaluations it blocked and the pull requests it ever
//!   blocked.
//! * CI runs: per head the pull request had while mp watched it, the most check runs a
//!   record saw on that head; summed over its heads.
//! * Queue wait: from the first tick that recorded it `queued` (in mp's own merge queue)
//!   to the tick that merged it, when it was queued right before its merge.
//! * Incidents and reverts: an `incident` record names commits of a default branch, a
//!   `revert` record (or a merged pull request's `reverts`) a reverted commit; each counts
//!   against the pull requests whose `merged` record names that commit.
//! * Records of dry runs are left out: a dry run merges nothing.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use mp_core::agent::{AgentKey, UNDECLARED};
use serde::Deserialize;
use serde_json::{Value, json};

/// One record of the log, as much of it as the view needs: `pr`, `incident` or `revert`.
/// Its strings borrow from the line where they can (a line without escapes): a log of a
/// million records is parsed without allocating its text again.
#[derive(Debug, Deserialize)]
struct Record<'a> {
    #[serde(borrow)]
    ts: Cow<'a, str>,
    #[serde(borrow)]
    record: Cow<'a, str>,
    #[serde(default, borrow)]
    pr: Cow<'a, str>,
    #[serde(default, borrow)]
    action: Cow<'a, str>,
    #[serde(default, borrow)]
    blocked_by: Vec<Cow<'a, str>>,
    #[serde(default, borrow)]
    agent: Option<Agent<'a>>,
    #[serde(default, borrow)]
    approved_at: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    head_sha: Option<Cow<'a, str>>,
    #[serde(default)]
    check_runs: Option<u64>,
    #[serde(default, borrow)]
    merged_sha: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    reverts: Vec<Cow<'a, str>>,
    /// `incident` and `revert` records: the repository.
    #[serde(default, borrow)]
    repo: Cow<'a, str>,
    /// `incident` records: the commits named.
    #[serde(default, borrow)]
    shas: Vec<Cow<'a, str>>,
    /// `incident` records: the issue.
    #[serde(default)]
    issue: Option<u64>,
    /// `revert` records: the reverted commit.
    #[serde(default, borrow)]
    sha: Option<Cow<'a, str>>,
    #[serde(default)]
    dry_run: bool,
}

/// A record's `agent`: the declared trailers and the author.
#[derive(Debug, Default, Deserialize)]
struct Agent<'a> {
    #[serde(default, borrow)]
    tool: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    model: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    session: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    machine: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    author: Option<Cow<'a, str>>,
}

impl Agent<'_> {
    fn value(&self, by: AgentKey) -> Option<&str> {
        match by {
            AgentKey::Tool => self.tool.as_deref(),
            AgentKey::Model => self.model.as_deref(),
            AgentKey::Session => self.session.as_deref(),
            AgentKey::Machine => self.machine.as_deref(),
            AgentKey::Author => self.author.as_deref(),
        }
    }
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
    /// Per head seen, the most check runs a record counted on it.
    heads: Vec<(String, u64)>,
    /// The first tick of the run of `queued` records the newest record belongs to.
    queued_since: Option<i64>,
    /// From entering the queue to the merge, when it merged out of the queue.
    queue_wait: Option<i64>,
    /// Incidents and reverts attributed to it.
    incidents: u64,
    reverts: u64,
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
    /// CI runs spent on all its pull requests (merged or not).
    pub ci_runs: u64,
    /// CI runs spent on its merged pull requests.
    pub ci_runs_merged: u64,
    /// All its CI runs over its merges: what one merged pull request cost; `None` when
    /// none merged.
    pub ci_runs_per_merged: Option<f64>,
    /// Seconds from entering mp's merge queue to the merge, over the pull requests merged
    /// out of it.
    pub queue_wait: Durations,
    /// Post-merge incidents attributed to its merged pull requests (each incident once).
    pub incidents: u64,
    /// Reverted commits of its merged pull requests.
    pub reverts: u64,
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
    /// Incidents read (after `since`, dry runs left out, each issue once).
    pub incidents: u64,
    /// Incidents whose commits no merged pull request of the log names.
    pub incidents_unattributed: u64,
    /// Reverted commits read (each once).
    pub reverts: u64,
    /// Reverted commits no merged pull request of the log names.
    pub reverts_unattributed: u64,
    /// Lines that were not JSON or lacked what a record needs: (line, problem), the
    /// first few.
    pub malformed: Vec<(usize, String)>,
    /// How many lines were malformed in all.
    pub malformed_count: u64,
}

/// How many malformed lines are kept to be shown.
const MALFORMED_SHOWN: usize = 5;

/// Whether a line may be a record the view reads; anything else is skipped unparsed.
fn wanted(line: &str) -> bool {
    const KEY: &str = "\"record\":\"";
    line.match_indices(KEY).any(|(at, _)| {
        let kind = &line[at + KEY.len()..];
        kind.starts_with("pr\"") || kind.starts_with("incident\"") || kind.starts_with("revert\"")
    })
}

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
    // `repo@sha` of each merge, to the pull requests it merged (a queue build, several).
    let mut merges: HashMap<String, Vec<String>> = HashMap::new();
    // Incidents by `repo#issue`: the `repo@sha` of the commits each names.
    let mut incidents: BTreeMap<String, Vec<String>> = BTreeMap::new();
    // Reverted commits, `repo@sha`.
    let mut reverted: BTreeSet<String> = BTreeSet::new();
    let mut records = 0;
    let mut malformed = Vec::new();
    let mut malformed_count = 0;
    for (index, line) in lines.into_iter().enumerate() {
        let line = line.as_ref();
        if !wanted(line) {
            continue;
        }
        let parsed = serde_json::from_str::<Record<'_>>(line)
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
        match record.record.as_ref() {
            "pr" => {}
            "incident" => {
                if let Some(issue) = record.issue {
                    let key = format!("{}#{issue}", record.repo);
                    let shas = record.shas.iter().map(|s| format!("{}@{s}", record.repo));
                    incidents.entry(key).or_default().extend(shas);
                }
                continue;
            }
            "revert" => {
                if let Some(sha) = &record.sha {
                    reverted.insert(format!("{}@{sha}", record.repo));
                }
                continue;
            }
            _ => continue,
        }
        records += 1;
        let repo = record.pr.split('#').next().unwrap_or_default();
        match repo_last.get_mut(repo) {
            Some(last) => *last = (*last).max(at),
            None => {
                repo_last.insert(repo.to_owned(), at);
            }
        }
        if !tracks.contains_key(record.pr.as_ref()) {
            tracks.insert(record.pr.to_string(), Track::default());
        }
        let Some(track) = tracks.get_mut(record.pr.as_ref()) else {
            continue;
        };
        if at >= track.last_seen {
            track.last_seen = at;
            let group = group_of(record.agent.as_ref(), by);
            if track.group != group {
                track.group = group.to_owned();
            }
        }
        let approved = record.approved_at.as_deref().and_then(epoch);
        if record.action == "merged" {
            if track.merged_at.is_none() {
                track.merged_at = Some(at);
                track.approved_at = approved.or(track.approved_at);
                track.queue_wait = track.queued_since.map(|since| at - since);
                if let Some(sha) = &record.merged_sha {
                    merges
                        .entry(format!("{repo}@{sha}"))
                        .or_default()
                        .push(record.pr.to_string());
                }
                reverted.extend(record.reverts.iter().map(|sha| format!("{repo}@{sha}")));
            }
        } else if track.merged_at.is_none() && approved.is_some() {
            track.approved_at = approved;
        }
        if record.action == "queued" {
            track.queued_since.get_or_insert(at);
        } else if record.action != "merged" {
            track.queued_since = None;
        }
        if let (Some(head), Some(runs)) = (record.head_sha, record.check_runs) {
            match track.heads.iter_mut().find(|(seen, _)| *seen == head) {
                Some((_, most)) => *most = (*most).max(runs),
                None => track.heads.push((head.into_owned(), runs)),
            }
        }
        for code in record.blocked_by {
            match track.blocks.get_mut(code.as_ref()) {
                Some(count) => *count += 1,
                None => {
                    track.blocks.insert(code.into_owned(), 1);
                }
            }
        }
    }
    // Incidents and reverts, to the pull requests that merged the commits they name.
    let mut incidents_unattributed = 0;
    for shas in incidents.values() {
        let mut prs: BTreeSet<&String> = BTreeSet::new();
        for sha in shas {
            prs.extend(merges.get(sha).into_iter().flatten());
        }
        if prs.is_empty() {
            incidents_unattributed += 1;
        }
        for pr in prs {
            if let Some(track) = tracks.get_mut(pr) {
                track.incidents += 1;
            }
        }
    }
    let mut reverts_unattributed = 0;
    for sha in &reverted {
        match merges.get(sha) {
            Some(prs) => {
                for pr in prs {
                    if let Some(track) = tracks.get_mut(pr) {
                        track.reverts += 1;
                    }
                }
            }
            None => reverts_unattributed += 1,
        }
    }
    let mut groups: BTreeMap<String, (AgentFigures, Vec<i64>, Vec<i64>)> = BTreeMap::new();
    for (pr, track) in tracks {
        let repo = pr.split('#').next().unwrap_or_default();
        let (figures, waits, queue_waits) =
            groups.entry(track.group.clone()).or_insert_with(|| {
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
                        ci_runs: 0,
                        ci_runs_merged: 0,
                        ci_runs_per_merged: None,
                        queue_wait: Durations::default(),
                        incidents: 0,
                        reverts: 0,
                    },
                    Vec::new(),
                    Vec::new(),
                )
            });
        figures.prs += 1;
        let ci: u64 = track.heads.iter().map(|(_, runs)| runs).sum();
        figures.ci_runs += ci;
        figures.incidents += track.incidents;
        figures.reverts += track.reverts;
        match track.merged_at {
            Some(merged) => {
                figures.merged += 1;
                figures.ci_runs_merged += ci;
                if let Some(approved) = track.approved_at.filter(|a| *a <= merged) {
                    waits.push(merged - approved);
                }
                queue_waits.extend(track.queue_wait);
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
        .map(|(mut figures, waits, queue_waits)| {
            let ended = figures.merged + figures.closed;
            figures.merge_rate = (ended > 0).then(|| figures.merged as f64 / ended as f64);
            figures.ci_runs_per_merged =
                (figures.merged > 0).then(|| figures.ci_runs as f64 / figures.merged as f64);
            figures.approval_to_merge = Durations::of(waits);
            figures.queue_wait = Durations::of(queue_waits);
            figures
        })
        .collect();
    agents.sort_by(|a, b| b.prs.cmp(&a.prs).then_with(|| a.agent.cmp(&b.agent)));
    AgentsView {
        by,
        agents,
        records,
        incidents: incidents.len() as u64,
        incidents_unattributed,
        reverts: reverted.len() as u64,
        reverts_unattributed,
        malformed,
        malformed_count,
    }
}

/// The group a record's agent falls in.
fn group_of<'a>(agent: Option<&'a Agent<'_>>, by: AgentKey) -> &'a str {
    agent
        .and_then(|fields| fields.value(by))
        .filter(|value| !value.is_empty())
        .unwrap_or(UNDECLARED)
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
            "incidents": self.incidents,
            "incidents_unattributed": self.incidents_unattributed,
            "reverts": self.reverts,
            "reverts_unattributed": self.reverts_unattributed,
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
    fn ci_runs_per_head_queue_waits_incidents_and_reverts() {
        let m1 = "1".repeat(40);
        let m2 = "2".repeat(40);
        let lines = vec![
            // a#1 by alpha: head h1 seen with 2 then 3 runs, head h2 with 4: 7 runs; it waits
            // in the queue from 10:00 and merges at 10:20 as m1.
            record(
                "2026-03-01T09:00:00Z",
                "o/a#1",
                "blocked",
                "alpha",
                r#","head_sha":"h1","check_runs":2"#,
            ),
            record(
                "2026-03-01T09:05:00Z",
                "o/a#1",
                "blocked",
                "alpha",
                r#","head_sha":"h1","check_runs":3"#,
            ),
            record(
                "2026-03-01T10:00:00Z",
                "o/a#1",
                "queued",
                "alpha",
                r#","head_sha":"h2","check_runs":4"#,
            ),
            record(
                "2026-03-01T10:10:00Z",
                "o/a#1",
                "queued",
                "alpha",
                r#","head_sha":"h2","check_runs":4"#,
            ),
            record(
                "2026-03-01T10:20:00Z",
                "o/a#1",
                "merged",
                "alpha",
                &format!(r#","head_sha":"h2","check_runs":4,"merged_sha":"{m1}""#),
            ),
            // a#2 by alpha: 5 runs, never merged.
            record(
                "2026-03-01T09:00:00Z",
                "o/a#2",
                "blocked",
                "alpha",
                r#","head_sha":"h3","check_runs":5"#,
            ),
            // a#3 by beta: merged as m2 with 1 run; it says it reverts m1.
            record(
                "2026-03-01T11:00:00Z",
                "o/a#3",
                "merged",
                "beta",
                &format!(
                    r#","head_sha":"h4","check_runs":1,"merged_sha":"{m2}","reverts":["{m1}"]"#
                ),
            ),
            // Two incidents name m1 (one of them twice, from two ticks), one names an
            // unknown commit; a revert record names m2; a dry run's incident is left out.
            format!(
                r#"{{"ts":"2026-03-01T10:30:00Z","record":"incident","repo":"o/a","label":"decision:post-merge-revalidation","shas":["{m1}"],"issue":7,"dry_run":false}}"#
            ),
            format!(
                r#"{{"ts":"2026-03-01T10:40:00Z","record":"incident","repo":"o/a","label":"decision:hallucination","shas":["{m1}","{}"],"issue":8}}"#,
                "3".repeat(40)
            ),
            format!(
                r#"{{"ts":"2026-03-01T10:40:00Z","record":"incident","repo":"o/a","label":"decision:hallucination","shas":["{}"],"issue":9}}"#,
                "4".repeat(40)
            ),
            format!(
                r#"{{"ts":"2026-03-01T11:30:00Z","record":"revert","repo":"o/a","sha":"{m2}","pull":10,"incident":11}}"#
            ),
            format!(
                r#"{{"ts":"2026-03-01T11:30:00Z","record":"incident","repo":"o/a","label":"decision:l2-stalled","shas":["{m2}"],"issue":12,"dry_run":true}}"#
            ),
        ];
        let view = view_of(&lines, AgentKey::Tool);
        assert_eq!((view.incidents, view.incidents_unattributed), (3, 1));
        assert_eq!((view.reverts, view.reverts_unattributed), (2, 0));
        let alpha = &view.agents[0];
        assert_eq!(alpha.agent, "alpha");
        assert_eq!((alpha.ci_runs, alpha.ci_runs_merged), (12, 7));
        assert_eq!(alpha.ci_runs_per_merged, Some(12.0));
        assert_eq!(alpha.queue_wait.median_s, Some(1200));
        assert_eq!((alpha.incidents, alpha.reverts), (2, 1));
        let beta = &view.agents[1];
        assert_eq!((beta.ci_runs, beta.ci_runs_per_merged), (1, Some(1.0)));
        assert_eq!((beta.incidents, beta.reverts), (0, 1));
        assert_eq!(beta.queue_wait.count, 0);
    }

    #[test]
    fn a_log_of_the_first_format_still_folds() {
        // Lines as mp wrote them before CI runs, merges and incidents were recorded.
        let lines = [
            r#"{"ts":"2026-11-29T12:00:00Z","record":"pr","pr":"acme/webapp#3","action":"blocked","quadrant":"B","blocked_by":["c2_checks_green"],"agent":{"tool":"claude-code","model":"m","session":"s","machine":"box","author":"alice"},"opened_at":"2026-11-28T09:00:00Z","approved_at":null,"dry_run":false}"#,
            r#"{"ts":"2026-11-29T12:05:00Z","record":"pr","pr":"acme/webapp#3","action":"merged","quadrant":"B","blocked_by":[],"agent":{"tool":"claude-code","model":"m","session":"s","machine":"box","author":"alice"},"opened_at":"2026-11-28T09:00:00Z","approved_at":"2026-11-29T12:00:00Z","dry_run":false}"#,
            r#"{"ts":"2026-11-29T12:05:00Z","record":"tick","merge_mode":"merge","dry_run":false,"metrics":{},"quadrants":{},"repos":[],"inbox":[],"api_calls":3,"http":null,"warnings":0}"#,
        ];
        let view = view(lines, AgentKey::Tool, None);
        assert_eq!(view.malformed_count, 0);
        let agent = &view.agents[0];
        assert_eq!((agent.prs, agent.merged, agent.ci_runs), (1, 1, 0));
        assert_eq!(agent.approval_to_merge.median_s, Some(300));
        assert_eq!((agent.incidents, agent.reverts), (0, 0));
    }

    #[test]
    fn percentiles_by_nearest_rank() {
        let d = Durations::of((1..=10).rev().collect());
        assert_eq!((d.count, d.median_s, d.p90_s), (10, Some(5), Some(9)));
        assert_eq!(Durations::of(Vec::new()).median_s, None);
    }
}
