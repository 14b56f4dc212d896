//! The "Agents" page of the report (decisions/0082): the figures of `mp agents` — the same
//! fold, [`crate::agents::view`], over the same log — as a table every browser shows and
//! three charts the inline script draws: small multiples per agent, the distribution of
//! the time from approval to merge, and the blocks by condition as stacked bars.
//!
//! Every figure the page shows carries it in a `data-` attribute, so a test reads the
//! page's numbers from the DOM and compares them with `mp agents --format json`.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::{Log, escape_html, script_json};
use crate::agents::{AgentFigures, AgentsView};
use crate::commands::agents::human;

/// The charts draw the busiest agents only (the table lists every one).
pub const CHARTED_AGENTS: usize = 24;

/// The data block the page's script draws: the view as `mp agents --format json` prints
/// it, each agent with its approval-to-merge durations (seconds, sorted) added as `waits`.
pub fn data(view: &AgentsView) -> Value {
    let mut doc = view.to_json();
    if let Some(agents) = doc["agents"].as_array_mut() {
        for (json, figures) in agents.iter_mut().zip(&view.agents) {
            json["waits"] = json!(figures.approval_to_merge.all);
        }
    }
    doc["charted"] = json!(view.agents.len().min(CHARTED_AGENTS));
    doc
}

/// Renders the page's section (hidden until `#agents` is the page's target) into `out`.
pub fn render(log: &Log, view: &AgentsView, out: &mut String) {
    let by = view.by.as_str();
    let _ = writeln!(
        out,
        "<section id=\"agents\" class=\"page\" data-by=\"{by}\" data-agents=\"{}\" data-records=\"{}\">\n\
         <h2>Agents, by {by}</h2>\n\
         <p class=\"note\">From the pull-request records of real ticks (dry runs left out), as \
         <code>mp agents --by {by}</code> prints them; <code>mp report --by KEY</code> groups by \
         tool, model, session, machine or author. The trailers are what the commits declare.</p>",
        view.agents.len(),
        view.records,
    );
    if view.agents.is_empty() {
        let why = if log.pr_records == 0 {
            "the log holds no pull-request record. <code>mp tick --audit-log FILE</code> writes \
             one per pull request it decides on; this log was written by an older mp, or its \
             ticks found no pull request into a gated branch."
                .to_owned()
        } else {
            format!(
                "every one of the log's {} pull-request record(s) is from a dry run or could \
                 not be read, and dry runs are left out (a dry run merges nothing).",
                log.pr_records
            )
        };
        let _ = writeln!(
            out,
            "<p id=\"agents-none\" class=\"empty\">Nothing to show: {why}</p>\n</section>"
        );
        return;
    }
    table(view, out);
    out.push_str(AGENT_CHARTS);
    if view.agents.len() > CHARTED_AGENTS {
        let _ = writeln!(
            out,
            "<p class=\"note\">The charts show the {CHARTED_AGENTS} busiest agents; the table \
             lists all {}.</p>",
            view.agents.len()
        );
    }
    let _ = write!(
        out,
        "<script type=\"application/json\" id=\"agents-data\">{}</script>\n<script>\n{}</script>\n",
        script_json(&data(view)),
        include_str!("agents.js")
    );
    out.push_str("</section>\n");
}

/// One row per agent; each cell's figure is also its `data-` attribute.
fn table(view: &AgentsView, out: &mut String) {
    out.push_str(
        "<table id=\"agents-table\">\n<tr><th>agent</th><th>pull requests</th><th>merged</th>\
         <th>closed</th><th>open</th><th>merge rate</th><th>median approval to merge</th>\
         <th>p90</th><th>CI runs per merged pull request</th><th>incidents</th><th>reverts</th>\
         <th>blocked (tick evaluations, on how many pull requests)</th></tr>\n",
    );
    for agent in &view.agents {
        row(agent, out);
    }
    out.push_str("</table>\n");
}

fn row(agent: &AgentFigures, out: &mut String) {
    let name = escape_html(&agent.agent);
    let rate = agent.merge_rate.map(|r| r.to_string()).unwrap_or_default();
    let shown_rate = agent
        .merge_rate
        .map_or_else(|| "-".to_owned(), |r| format!("{:.0}%", r * 100.0));
    let waits = &agent.approval_to_merge;
    let ci = agent
        .ci_runs_per_merged
        .map(|r| r.to_string())
        .unwrap_or_default();
    let shown_ci = agent
        .ci_runs_per_merged
        .map_or_else(|| "-".to_owned(), |r| format!("{r:.1}"));
    let seconds = |s: Option<i64>| s.map(|s| s.to_string()).unwrap_or_default();
    let shown = |s: Option<i64>| s.map_or_else(|| "-".to_owned(), human);
    let _ = write!(
        out,
        "<tr class=\"agent\" data-agent=\"{name}\" data-prs=\"{}\" data-merged=\"{}\" \
         data-closed=\"{}\" data-open=\"{}\" data-merge-rate=\"{rate}\" data-waits=\"{}\" \
         data-median-s=\"{}\" data-p90-s=\"{}\" data-ci-runs=\"{}\" \
         data-ci-runs-per-merged=\"{ci}\" data-incidents=\"{}\" data-reverts=\"{}\">\
         <th>{name}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{shown_rate}</td>\
         <td>{}</td><td>{}</td><td>{shown_ci}</td><td>{}</td><td>{}</td><td class=\"blocks\">",
        agent.prs,
        agent.merged,
        agent.closed,
        agent.open,
        waits.count,
        seconds(waits.median_s),
        seconds(waits.p90_s),
        agent.ci_runs,
        agent.incidents,
        agent.reverts,
        agent.prs,
        agent.merged,
        agent.closed,
        agent.open,
        shown(waits.median_s),
        shown(waits.p90_s),
        agent.incidents,
        agent.reverts,
    );
    let blocks: Vec<String> = agent
        .blocks
        .iter()
        .map(|(code, ticks)| {
            let prs = agent.blocked_prs.get(code).copied().unwrap_or(0);
            let code = escape_html(code);
            format!(
                "<span class=\"block\" data-code=\"{code}\" data-value=\"{ticks}\" \
                 data-prs=\"{prs}\">{code} {ticks} (on {prs})</span>"
            )
        })
        .collect();
    if blocks.is_empty() {
        out.push('-');
    } else {
        out.push_str(&blocks.join(", "));
    }
    out.push_str("</td></tr>\n");
}

/// The chart containers; agents.js fills each `<svg>` and sets `data-drawn` to the number
/// of marks it drew.
const AGENT_CHARTS: &str = "\
<h3>Pull requests per agent</h3>
<p class=\"legend\"><span class=\"sw merged\"></span>merged <span class=\"sw closed\"></span>closed \
<span class=\"sw open\"></span>open (one panel per agent, one scale for all)</p>
<svg id=\"chart-agents-multiples\" width=\"1000\" height=\"160\" role=\"img\" \
aria-label=\"pull requests merged, closed and open, one panel per agent\"></svg>
<h3>Time from approval to merge</h3>
<p class=\"legend\"><span class=\"sw wait\"></span>one merged pull request \
<span class=\"sw median\"></span>median <span class=\"sw p90\"></span>p90 (logarithmic scale)</p>
<svg id=\"chart-agents-wait\" width=\"1000\" height=\"120\" role=\"img\" \
aria-label=\"time from approval to merge of each merged pull request, per agent\"></svg>
<h3>Blocks by condition</h3>
<p class=\"legend\" id=\"agents-blocks-legend\"></p>
<svg id=\"chart-agents-blocks\" width=\"1000\" height=\"120\" role=\"img\" \
aria-label=\"tick evaluations blocked per condition, stacked, per agent\"></svg>
<noscript><p>The charts need JavaScript; the table above does not.</p></noscript>
";
