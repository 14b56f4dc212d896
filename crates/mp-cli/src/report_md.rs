//! The markdown summary of one tick (`mp tick --report md`): per repository what merged,
//! what is blocked and why, what went to the decision inbox, and what the supervisor
//! found; then the inbox, the API budget and the warnings. Made for a CI job summary
//! (`$GITHUB_STEP_SUMMARY`), read by people.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

/// The actions of the per-repository table, in column order.
const ACTIONS: [&str; 7] = [
    "merged",
    "observe",
    "race-rebased",
    "waiting",
    "blocked",
    "inbox",
    "skipped",
];

/// Renders the summary from the tick's JSON document (`run_json`).
pub fn render(doc: &Value) -> String {
    let mut out = String::new();
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let shard = doc["shard"]
        .as_str()
        .map(|shard| format!(", shard {shard}"))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "## mp tick at {} ({} mode{shard})\n",
        text(&doc["now"]),
        text(&doc["merge_mode"])
    );
    let mut repos: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for outcome in doc["outcomes"].as_array().into_iter().flatten() {
        let pr = text(&outcome["pr"]);
        let repo = pr.split('#').next().unwrap_or_default().to_owned();
        repos.entry(repo).or_default().push(outcome);
    }
    let supervisor: BTreeMap<String, Vec<String>> = doc["supervisor"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            let events = s["events"]
                .as_array()
                .into_iter()
                .flatten()
                .map(text)
                .collect();
            (text(&s["repo"]), events)
        })
        .collect();
    for repo in supervisor.keys() {
        repos.entry(repo.clone()).or_default();
    }
    if repos.is_empty() {
        let _ = writeln!(out, "No open pull requests and no supervised repository.\n");
    } else {
        let _ = writeln!(out, "| repository | {} |", ACTIONS.join(" | "));
        let _ = writeln!(out, "|---|{}", "---:|".repeat(ACTIONS.len()));
        for (repo, outcomes) in &repos {
            let counts: Vec<String> = ACTIONS
                .iter()
                .map(|action| {
                    outcomes
                        .iter()
                        .filter(|o| o["action"] == *action)
                        .count()
                        .to_string()
                })
                .collect();
            let _ = writeln!(out, "| `{repo}` | {} |", counts.join(" | "));
        }
        let _ = writeln!(out);
    }
    for (repo, outcomes) in &repos {
        let _ = writeln!(out, "### `{repo}`\n");
        for outcome in outcomes {
            let pr = text(&outcome["pr"]);
            let number = pr.rsplit('#').next().unwrap_or_default();
            let action = text(&outcome["action"]);
            let quadrant = outcome["quadrant"]
                .as_str()
                .map(|q| format!(" (Quadrant {q})"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "- **#{number} {action}**{quadrant}: {}",
                escape(&text(&outcome["detail"]))
            );
            for line in outcome["blocking"].as_array().into_iter().flatten() {
                let _ = writeln!(out, "  - {}", escape(&text(line)));
            }
        }
        let events = supervisor.get(repo).map(Vec::as_slice).unwrap_or_default();
        if !events.is_empty() {
            let _ = writeln!(out, "- supervisor:");
            for event in events {
                let _ = writeln!(out, "  - {}", escape(event));
            }
        }
        let _ = writeln!(out);
    }
    let inbox: Vec<String> = doc["inbox"]
        .as_array()
        .into_iter()
        .flatten()
        .map(text)
        .collect();
    if !inbox.is_empty() {
        let _ = writeln!(out, "### Decision inbox\n");
        for line in inbox {
            let _ = writeln!(out, "- {}", escape(&line));
        }
        let _ = writeln!(out);
    }
    if let Some(drift) = doc["drift"].as_str() {
        let _ = writeln!(out, "### Drift\n\n{}\n", escape(drift));
    }
    let _ = writeln!(out, "### Budget\n");
    let calls: u64 = doc["calls"]
        .as_object()
        .into_iter()
        .flat_map(|c| c.values())
        .filter_map(Value::as_u64)
        .sum();
    match doc.get("http") {
        Some(http) => {
            let _ = writeln!(
                out,
                "{} requests, {} answered 304 (free), {} retries; rate limit left: {}{}\n",
                http["requests"],
                http["not_modified"],
                http["retries"],
                http["rate_limit_remaining"],
                graphql_left(http)
            );
        }
        None => {
            let _ = writeln!(out, "{calls} API calls\n");
        }
    }
    let warnings: Vec<String> = doc["warnings"]
        .as_array()
        .into_iter()
        .flatten()
        .map(text)
        .collect();
    if !warnings.is_empty() {
        let _ = writeln!(out, "### Warnings\n");
        for warning in warnings {
            let _ = writeln!(out, "- {}", escape(&warning));
        }
        let _ = writeln!(out);
    }
    out
}

/// GitHub Actions workflow commands for the tick (`mp tick --annotations`): a `warning`
/// per blocked pull request (its blocking reasons in the message), a `notice` per pull
/// request routed to the decision inbox and per supervisor finding, and a `warning` per
/// tick warning. Actions turns each line into an annotation on the run page.
pub fn annotations(doc: &Value) -> String {
    let mut out = String::new();
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    for outcome in doc["outcomes"].as_array().into_iter().flatten() {
        let pr = text(&outcome["pr"]);
        let detail = text(&outcome["detail"]);
        match outcome["action"].as_str() {
            Some("blocked") => {
                // The blocking reasons, one per line; the detail line only when there are
                // none (it repeats the first reasons otherwise).
                let lines: Vec<String> = outcome["blocking"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(text)
                    .collect();
                let message = if lines.is_empty() {
                    detail
                } else {
                    lines.join("\n")
                };
                command(&mut out, "warning", &format!("mp: {pr} blocked"), &message);
            }
            Some("inbox") => {
                command(
                    &mut out,
                    "notice",
                    &format!("mp: {pr} awaits the owner"),
                    &detail,
                );
            }
            _ => {}
        }
    }
    for supervisor in doc["supervisor"].as_array().into_iter().flatten() {
        let repo = text(&supervisor["repo"]);
        for event in supervisor["events"].as_array().into_iter().flatten() {
            command(&mut out, "notice", &format!("mp: {repo}"), &text(event));
        }
    }
    for warning in doc["warnings"].as_array().into_iter().flatten() {
        command(&mut out, "warning", "mp", &text(warning));
    }
    out
}

/// Appends one workflow command, escaped as the runner expects: `%`, CR and LF in the
/// message; also `:` and `,` in the title property.
fn command(out: &mut String, level: &str, title: &str, message: &str) {
    let data = |s: &str| {
        s.replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A")
    };
    let property = |s: &str| data(s).replace(':', "%3A").replace(',', "%2C");
    let _ = writeln!(
        out,
        "::{level} title={}::{}",
        property(title),
        data(message)
    );
}

/// Keeps a line from opening markdown or HTML it did not mean to (tables, tags).
fn escape(line: &str) -> String {
    line.replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// `, GraphQL points left N` when the tick read over GraphQL, else nothing.
pub(crate) fn graphql_left(http: &Value) -> String {
    http["graphql_remaining"]
        .as_u64()
        .map(|left| format!(", GraphQL points left {left}"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
