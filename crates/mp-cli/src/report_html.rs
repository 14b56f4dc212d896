//! The static HTML report of `mp report` (docs/report.md): reads an audit log (JSON Lines:
//! classification records, `skill_call` and `tick` records), folds it into one timeline of
//! ticks, and renders a self-contained page (inline CSS, inline JavaScript drawing inline
//! SVG charts; no network). Every string from the log reaches the page escaped: as HTML
//! text in the summary, as JSON (with `<`, `>` and `&` escaped) in the data block, and as
//! DOM text nodes in the charts.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::agents::AgentsView;

mod agents_page;

/// The quadrants, in stacking order.
pub const QUADRANTS: [&str; 4] = ["A", "B", "C", "D"];

/// At most this many malformed lines are listed on the page (all are counted).
const MAX_LISTED_PROBLEMS: usize = 20;

/// One tick of the timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct Tick {
    /// When it ran (RFC 3339, as logged).
    pub ts: String,
    /// The same instant, for ordering and ages.
    pub at: jiff::Timestamp,
    /// Classified pull requests per quadrant (A..D).
    pub quadrants: [u64; 4],
    /// Per-repository counters (`merged`, `blocked`, `inbox`, `incidents`, ...), when the
    /// tick record is there.
    pub repos: BTreeMap<String, BTreeMap<String, u64>>,
    /// Open decision-inbox items at the end of the tick: (key, pull request, issue, state).
    pub inbox: Vec<InboxItem>,
    /// API calls of the tick, when the tick record is there.
    pub api_calls: Option<u64>,
    /// Whether the tick was a dry run.
    pub dry_run: bool,
    /// Whether the tick record is there (`false`: only classification records were found).
    pub has_record: bool,
}

/// One open decision-inbox item of a tick.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboxItem {
    /// The pull request, when known.
    pub pr: Option<String>,
    /// The inbox issue, when known.
    pub issue: Option<String>,
    /// `routed` (the pull-request path sent it there) or the poll's resolution code.
    pub state: String,
}

impl InboxItem {
    fn key(&self) -> String {
        self.pr
            .clone()
            .or_else(|| self.issue.clone())
            .unwrap_or_default()
    }
}

/// The audit log folded into ticks, with what could not be read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Log {
    /// The ticks, oldest first.
    pub ticks: Vec<Tick>,
    /// Classification records read.
    pub classifications: u64,
    /// `skill_call` records read.
    pub skill_calls: u64,
    /// `pr` records seen (the Agents page reads them through [`crate::agents::view`]).
    pub pr_records: u64,
    /// Lines skipped, with their 1-based number and why.
    pub malformed: Vec<(usize, String)>,
}

/// Classification records waiting for their tick record, by instant.
type Pending = BTreeMap<String, (jiff::Timestamp, [u64; 4])>;

fn quadrant_index(q: &str) -> Option<usize> {
    QUADRANTS.iter().position(|x| *x == q)
}

fn partial_tick(ts: String, at: jiff::Timestamp, quadrants: [u64; 4]) -> Tick {
    Tick {
        ts,
        at,
        quadrants,
        repos: BTreeMap::new(),
        inbox: Vec::new(),
        api_calls: None,
        dry_run: false,
        has_record: false,
    }
}

/// Reads the audit log text. Never fails: a line that is not a JSON object with a valid
/// `ts` is skipped and listed in [`Log::malformed`]; blank lines and records of other
/// kinds are ignored. (`mp report` streams the file through a [`Parser`].)
#[cfg(test)]
pub fn parse(text: &str) -> Log {
    let mut parser = Parser::default();
    for line in text.lines() {
        parser.feed(line);
    }
    parser.finish()
}

/// The audit log read one line at a time (`mp report` streams the file through it, so a
/// log of a million records is never held whole): what `parse` does (in tests), in steps.
#[derive(Debug, Default)]
pub struct Parser {
    log: Log,
    pending: Pending,
    lines: usize,
}

impl Parser {
    /// Reads the next line of the log.
    pub fn feed(&mut self, line: &str) {
        self.lines += 1;
        if line.trim().is_empty() {
            return;
        }
        if let Err(problem) = parse_line(line, &mut self.log, &mut self.pending) {
            self.log.malformed.push((self.lines, problem));
        }
    }

    /// The log read so far, its classification records without a tick record as ticks of
    /// their own.
    pub fn finish(self) -> Log {
        let mut log = self.log;
        for (ts, (at, quadrants)) in self.pending {
            log.ticks.push(partial_tick(ts, at, quadrants));
        }
        log.ticks.sort_by_key(|t| t.at);
        log
    }
}

fn parse_line(line: &str, log: &mut Log, pending: &mut Pending) -> Result<(), String> {
    let value: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    let Some(object) = value.as_object() else {
        return Err("not a JSON object".to_owned());
    };
    let ts = object
        .get("ts")
        .and_then(Value::as_str)
        .ok_or("no `ts` string")?;
    let at: jiff::Timestamp = ts
        .parse()
        .map_err(|e| format!("`ts` {ts:?} is not an RFC 3339 instant: {e}"))?;
    match object.get("record").and_then(Value::as_str) {
        Some("tick") => {
            let mut tick = tick_record(&value, ts, at)?;
            if tick.quadrants == [0; 4]
                && let Some((_, counted)) = pending.get(ts)
            {
                tick.quadrants = *counted;
            }
            pending.remove(ts);
            // Classification records of earlier instants never got their tick record.
            for (ts, (at, quadrants)) in std::mem::take(pending) {
                log.ticks.push(partial_tick(ts, at, quadrants));
            }
            log.ticks.push(tick);
        }
        Some("skill_call") => log.skill_calls += 1,
        Some("pr") => log.pr_records += 1,
        Some(_) => {}
        None => {
            let quadrant = object
                .get("quadrant")
                .and_then(Value::as_str)
                .and_then(quadrant_index)
                .ok_or("classification record without a quadrant A..D")?;
            log.classifications += 1;
            pending.entry(ts.to_owned()).or_insert((at, [0; 4])).1[quadrant] += 1;
        }
    }
    Ok(())
}

fn tick_record(value: &Value, ts: &str, at: jiff::Timestamp) -> Result<Tick, String> {
    let mut quadrants = [0; 4];
    for (i, q) in QUADRANTS.iter().enumerate() {
        quadrants[i] = value["quadrants"][q].as_u64().unwrap_or(0);
    }
    let mut repos = BTreeMap::new();
    for entry in value["repos"].as_array().into_iter().flatten() {
        let name = entry["repo"]
            .as_str()
            .ok_or("tick record: a repository without a name")?;
        let counts = entry
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| Some((k.clone(), v.as_u64()?)))
            .collect();
        repos.insert(name.to_owned(), counts);
    }
    let text = |v: &Value| v.as_str().map(str::to_owned);
    let inbox = value["inbox"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|item| InboxItem {
            pr: text(&item["pr"]),
            issue: text(&item["issue"]),
            state: text(&item["state"]).unwrap_or_default(),
        })
        .collect();
    Ok(Tick {
        ts: ts.to_owned(),
        at,
        quadrants,
        repos,
        inbox,
        api_calls: value["api_calls"].as_u64(),
        dry_run: value["dry_run"].as_bool().unwrap_or(false),
        has_record: true,
    })
}

/// An open inbox item with its age at the last tick.
#[derive(Debug, Clone, PartialEq)]
pub struct AgedItem {
    /// The item as the last tick record lists it.
    pub item: InboxItem,
    /// The first tick of the unbroken run of ticks that listed it.
    pub since: String,
    /// Hours from `since` to the last tick.
    pub age_hours: f64,
}

/// The items open at the last tick record, aged from the first tick of the unbroken run of
/// tick records that listed them (ticks without a record do not break a run).
pub fn inbox_ages(log: &Log) -> Vec<AgedItem> {
    let mut first_seen: BTreeMap<String, (String, jiff::Timestamp)> = BTreeMap::new();
    let mut last: Option<&Tick> = None;
    for tick in log.ticks.iter().filter(|t| t.has_record) {
        first_seen = tick
            .inbox
            .iter()
            .map(|item| {
                let key = item.key();
                let seen = first_seen
                    .remove(&key)
                    .unwrap_or_else(|| (tick.ts.clone(), tick.at));
                (key, seen)
            })
            .collect();
        last = Some(tick);
    }
    let Some(last) = last else {
        return Vec::new();
    };
    last.inbox
        .iter()
        .map(|item| {
            let (since, at) = first_seen
                .get(&item.key())
                .cloned()
                .unwrap_or_else(|| (last.ts.clone(), last.at));
            let seconds = last.at.as_second() - at.as_second();
            #[allow(clippy::cast_precision_loss)]
            let age_hours = seconds as f64 / 3600.0;
            AgedItem {
                item: item.clone(),
                since,
                age_hours,
            }
        })
        .collect()
}

/// Per-repository totals over every tick record: (repository, merged, blocked).
pub fn repo_totals(log: &Log) -> Vec<(String, u64, u64)> {
    let mut totals: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for tick in &log.ticks {
        for (repo, counts) in &tick.repos {
            let entry = totals.entry(repo).or_default();
            entry.0 += counts.get("merged").copied().unwrap_or(0);
            entry.1 += counts.get("blocked").copied().unwrap_or(0);
        }
    }
    totals
        .into_iter()
        .map(|(repo, (merged, blocked))| (repo.to_owned(), merged, blocked))
        .collect()
}

/// The data the page's script draws, and what `mp report --format json` prints.
pub fn data_json(log: &Log, title: &str) -> Value {
    let ticks: Vec<Value> = log
        .ticks
        .iter()
        .map(|t| {
            let quadrants: BTreeMap<&str, u64> = QUADRANTS
                .iter()
                .copied()
                .zip(t.quadrants.iter().copied())
                .collect();
            json!({
                "ts": t.ts,
                "quadrants": quadrants,
                "api_calls": t.api_calls,
                "dry_run": t.dry_run,
                "record": t.has_record,
            })
        })
        .collect();
    let repos: Vec<Value> = repo_totals(log)
        .into_iter()
        .map(|(repo, merged, blocked)| json!({"repo": repo, "merged": merged, "blocked": blocked}))
        .collect();
    let inbox: Vec<Value> = inbox_ages(log)
        .into_iter()
        .map(|a| {
            json!({
                "pr": a.item.pr,
                "issue": a.item.issue,
                "state": a.item.state,
                "since": a.since,
                "age_hours": a.age_hours,
            })
        })
        .collect();
    json!({
        "title": title,
        "ticks": ticks,
        "repos": repos,
        "inbox": inbox,
        "classifications": log.classifications,
        "skill_calls": log.skill_calls,
        "malformed_lines": log.malformed.len(),
    })
}

/// Escapes text for HTML element content and attribute values.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// JSON that is safe inside a `<script>` element: no `<`, `>` or `&` left to close it.
pub(crate) fn script_json(value: &Value) -> String {
    value
        .to_string()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// The whole page: the overview, and the Agents page drawn from `agents` (the fold of
/// `mp agents` over the same log).
pub fn render(log: &Log, agents: &AgentsView, title: &str) -> String {
    let mut out = String::new();
    let title = escape_html(title);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>\n{}</style>\n</head>\n<body>\n<h1>{title}</h1>\n\
         <nav id=\"pages\"><a href=\"#overview\">Overview</a> <a href=\"#agents\">Agents</a></nav>\n",
        include_str!("report_html/page.css")
    );
    // The Agents page comes first so that, when it is the target, CSS can hide the
    // overview after it (no script needed to switch pages).
    agents_page::render(log, agents, &mut out);
    out.push_str("<section id=\"overview\" class=\"page\">\n");
    if log.ticks.is_empty() {
        out.push_str(
            "<p id=\"no-data\" class=\"empty\">No data: the audit log holds no tick and no \
             classification record yet. Run <code>mp tick --audit-log FILE</code> first.</p>\n",
        );
    }
    summary_table(log, &mut out);
    problems(log, &mut out);
    if !log.ticks.is_empty() {
        out.push_str(CHARTS);
        let _ = write!(
            out,
            "<script type=\"application/json\" id=\"report-data\">{}</script>\n<script>\n{}</script>\n",
            script_json(&data_json(log, "")),
            include_str!("report_html/page.js")
        );
    }
    out.push_str("</section>\n</body>\n</html>\n");
    out
}

/// The chart containers; the script fills each `<svg>` and sets `data-drawn` to the number
/// of marks it drew.
const CHARTS: &str = "\
<section><h2>Quadrant mix per tick</h2>
<p class=\"legend\"><span class=\"sw qA\"></span>A <span class=\"sw qB\"></span>B \
<span class=\"sw qC\"></span>C <span class=\"sw qD\"></span>D</p>
<svg id=\"chart-quadrants\" data-series=\"4\" width=\"1000\" height=\"280\" role=\"img\" \
aria-label=\"classified pull requests per quadrant, per tick\"></svg></section>
<section><h2>Merges and blocks per repository (summed over ticks)</h2>
<p class=\"legend\"><span class=\"sw merged\"></span>merged <span class=\"sw blocked\"></span>blocked</p>
<svg id=\"chart-repos\" data-series=\"2\" width=\"1000\" height=\"280\" role=\"img\" \
aria-label=\"merged and blocked outcomes per repository\"></svg></section>
<section><h2>Open decision-inbox items: age at the last tick</h2>
<svg id=\"chart-inbox\" data-series=\"1\" width=\"1000\" height=\"200\" role=\"img\" \
aria-label=\"age of each open decision-inbox item, in hours\"></svg></section>
<section><h2>API calls per tick</h2>
<svg id=\"chart-api\" data-series=\"1\" width=\"1000\" height=\"240\" role=\"img\" \
aria-label=\"API calls per tick\"></svg></section>
<noscript><p>The charts need JavaScript; the summary above does not.</p></noscript>
";

fn summary_table(log: &Log, out: &mut String) {
    let first = log.ticks.first().map_or("-", |t| t.ts.as_str());
    let last = log.ticks.last().map_or("-", |t| t.ts.as_str());
    let (merged, blocked) = repo_totals(log)
        .iter()
        .fold((0, 0), |(m, b), (_, rm, rb)| (m + rm, b + rb));
    let calls: u64 = log.ticks.iter().filter_map(|t| t.api_calls).sum();
    let rows = [
        ("ticks", log.ticks.len().to_string()),
        ("first tick", first.to_owned()),
        ("last tick", last.to_owned()),
        (
            "dry-run ticks",
            log.ticks.iter().filter(|t| t.dry_run).count().to_string(),
        ),
        ("classified pull requests", log.classifications.to_string()),
        ("merged (summed over ticks)", merged.to_string()),
        ("blocked (summed over ticks)", blocked.to_string()),
        (
            "open decision-inbox items",
            inbox_ages(log).len().to_string(),
        ),
        ("API calls", calls.to_string()),
        ("user-skill calls", log.skill_calls.to_string()),
        ("malformed lines skipped", log.malformed.len().to_string()),
    ];
    out.push_str("<table id=\"summary\">\n");
    for (name, value) in rows {
        let _ = writeln!(
            out,
            "<tr><th>{name}</th><td>{}</td></tr>",
            escape_html(&value)
        );
    }
    out.push_str("</table>\n");
}

fn problems(log: &Log, out: &mut String) {
    if log.malformed.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<section id=\"warnings\"><h2>Warnings</h2>\n<p>{} malformed line(s) skipped:</p>\n<ul>",
        log.malformed.len()
    );
    for (line, problem) in log.malformed.iter().take(MAX_LISTED_PROBLEMS) {
        let _ = writeln!(out, "<li>line {line}: {}</li>", escape_html(problem));
    }
    if log.malformed.len() > MAX_LISTED_PROBLEMS {
        let _ = writeln!(
            out,
            "<li>and {} more</li>",
            log.malformed.len() - MAX_LISTED_PROBLEMS
        );
    }
    out.push_str("</ul></section>\n");
}

#[cfg(test)]
mod tests;
