//! `GET /metrics`: the service's counters in the OpenMetrics text format (which Prometheus
//! scrapes natively), through the Prometheus project's own client crate.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use std::collections::BTreeMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::time::Instant;

use mp_core::ids::RepoName;

use crate::queue::Queue;

/// The content type of [`Metrics::render`].
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DeliveryLabels {
    event: String,
    verdict: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct JobLabels {
    job: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RepoLabels {
    repo: String,
}

/// Who a per-agent counter counts: the declared tool and model and GitHub's author, each
/// bounded by [`AgentLabelBounds`].
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct AgentLabels {
    tool: String,
    model: String,
    author: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct AgentConditionLabels {
    tool: String,
    model: String,
    author: String,
    condition: String,
}

/// At most this many distinct declared tools get their own label value (decisions/0081).
pub const MAX_AGENT_TOOLS: usize = 16;
/// At most this many distinct declared models get their own label value.
pub const MAX_AGENT_MODELS: usize = 32;
/// At most this many distinct authors get their own label value.
pub const MAX_AGENT_AUTHORS: usize = 64;
/// At most this many distinct (tool, model, author) label sets; past it a new set is
/// counted as all `other`.
pub const MAX_AGENT_SERIES: usize = 256;
/// The label value of everything past a cap.
pub const OTHER: &str = "other";
/// The label values of an incident whose commits no merge the service saw names.
pub const UNATTRIBUTED: &str = "(unattributed)";
/// How many merges the service remembers (their commit and agent) to attribute later
/// incidents to; the oldest is forgotten first.
pub const REMEMBERED_MERGES: usize = 10_000;

/// The label values the per-agent counters have handed out: the first values seen of each
/// dimension, up to its cap. Hostile agents can declare any tool or model they like; past
/// the caps every new value is `other`, so the series stay bounded.
#[derive(Debug, Default)]
struct AgentLabelBounds {
    tools: std::collections::BTreeSet<String>,
    models: std::collections::BTreeSet<String>,
    authors: std::collections::BTreeSet<String>,
    series: std::collections::HashSet<AgentLabels>,
    /// Merged commits (`repo@sha`) to the labels of their pull request, oldest first.
    merges: std::collections::VecDeque<(String, AgentLabels)>,
}

impl AgentLabelBounds {
    fn labels(&mut self, tool: &str, model: &str, author: &str) -> AgentLabels {
        fn bounded(
            seen: &mut std::collections::BTreeSet<String>,
            cap: usize,
            value: &str,
        ) -> String {
            if seen.contains(value) {
                return value.to_owned();
            }
            if seen.len() < cap {
                seen.insert(value.to_owned());
                return value.to_owned();
            }
            OTHER.to_owned()
        }
        let labels = AgentLabels {
            tool: bounded(&mut self.tools, MAX_AGENT_TOOLS, tool),
            model: bounded(&mut self.models, MAX_AGENT_MODELS, model),
            author: bounded(&mut self.authors, MAX_AGENT_AUTHORS, author),
        };
        if self.series.contains(&labels) {
            return labels;
        }
        if self.series.len() < MAX_AGENT_SERIES {
            self.series.insert(labels.clone());
            return labels;
        }
        AgentLabels {
            tool: OTHER.to_owned(),
            model: OTHER.to_owned(),
            author: OTHER.to_owned(),
        }
    }

    fn remember_merge(&mut self, commit: String, labels: AgentLabels) {
        if self.merges.len() >= REMEMBERED_MERGES {
            self.merges.pop_front();
        }
        self.merges.push_back((commit, labels));
    }

    fn merge_of(&self, commit: &str) -> Vec<AgentLabels> {
        self.merges
            .iter()
            .filter(|(seen, _)| seen == commit)
            .map(|(_, labels)| labels.clone())
            .collect()
    }
}

/// What the adapter reports at any moment: requests sent, those answered 304, and the
/// points left in the REST and GraphQL windows.
pub type ApiSnapshot = (u64, u64, Option<u32>, Option<u32>);

/// Where a scrape reads the values that change between jobs: the adapter's totals, the
/// queue's waiting events and the last completed resync.
#[derive(Default)]
struct Live {
    api: Option<Box<dyn Fn() -> ApiSnapshot + Send + Sync>>,
    queue: Option<Arc<Mutex<Queue>>>,
    /// The repositories mp watches: the lag gauge's only label values.
    watched: Vec<RepoName>,
    /// When the last resync completed: the service's clock, and the Unix time.
    last_resync: Option<(Instant, i64)>,
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live")
            .field("api", &self.api.is_some())
            .field("watched", &self.watched.len())
            .field("last_resync", &self.last_resync)
            .finish_non_exhaustive()
    }
}

/// Every metric of the service.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    deliveries: Family<DeliveryLabels, Counter>,
    evaluations: Family<OutcomeLabels, Counter>,
    jobs: Family<JobLabels, Counter>,
    ticks: Counter,
    panics: Counter,
    queue_depth: Gauge,
    api_requests: Counter,
    api_not_modified: Counter,
    rate_limit_remaining: Gauge,
    graphql_remaining: Gauge,
    event_to_decision: Histogram,
    last_resync: Gauge,
    last_resync_age: Gauge<f64, AtomicU64>,
    lag: Family<RepoLabels, Gauge<f64, AtomicU64>>,
    agent_merged: Family<AgentLabels, Counter>,
    agent_blocked: Family<AgentConditionLabels, Counter>,
    agent_incidents: Family<AgentLabels, Counter>,
    agent_bounds: Mutex<AgentLabelBounds>,
    /// The adapter's last totals, to turn them into counter increments.
    api_seen: std::sync::Mutex<(u64, u64)>,
    live: Mutex<Live>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Registers every metric, all at zero.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("mp_serve");
        let deliveries = Family::<DeliveryLabels, Counter>::default();
        let evaluations = Family::<OutcomeLabels, Counter>::default();
        let jobs = Family::<JobLabels, Counter>::default();
        let ticks = Counter::default();
        let panics = Counter::default();
        let queue_depth = Gauge::default();
        let api_requests = Counter::default();
        let api_not_modified = Counter::default();
        let rate_limit_remaining = Gauge::default();
        let graphql_remaining = Gauge::default();
        // 10 ms to about 82 s.
        let event_to_decision = Histogram::new([
            0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0,
        ]);
        registry.register(
            "webhook_deliveries",
            "Webhook deliveries by event and verdict (queued, recorded, ignored, duplicate, pong, rejected)",
            deliveries.clone(),
        );
        registry.register(
            "evaluations",
            "Pull-request evaluations by outcome (merged, observe, blocked, inbox, skipped, ...)",
            evaluations.clone(),
        );
        registry.register(
            "jobs",
            "Finished jobs by kind (lane, supervise, resync: a resync's global part, resync_repo: one repository's part)",
            jobs.clone(),
        );
        registry.register(
            "ticks",
            "Resyncs completed: every repository read",
            ticks.clone(),
        );
        registry.register(
            "job_panics",
            "Jobs that panicked (the service went on)",
            panics.clone(),
        );
        registry.register(
            "queue_depth",
            "Jobs waiting: repository lanes, a supervision batch, a pending resync and the repositories of the resync in progress",
            queue_depth.clone(),
        );
        registry.register(
            "api_requests",
            "GitHub API requests sent",
            api_requests.clone(),
        );
        registry.register(
            "api_not_modified",
            "GitHub API requests answered 304 Not Modified from the ETag cache",
            api_not_modified.clone(),
        );
        registry.register(
            "rate_limit_remaining",
            "Calls left in GitHub's primary rate-limit window (-1: unknown)",
            rate_limit_remaining.clone(),
        );
        registry.register(
            "graphql_remaining",
            "GraphQL points left in GitHub's GraphQL rate-limit window (-1: unknown)",
            graphql_remaining.clone(),
        );
        let last_resync = Gauge::default();
        let last_resync_age = Gauge::<f64, AtomicU64>::default();
        let lag = Family::<RepoLabels, Gauge<f64, AtomicU64>>::default();
        registry.register(
            "last_resync_timestamp_seconds",
            "When the last resync completed, in Unix seconds (-1: none yet)",
            last_resync.clone(),
        );
        registry.register(
            "last_resync_age_seconds",
            "Seconds since the last resync completed (-1: none yet)",
            last_resync_age.clone(),
        );
        registry.register(
            "event_lag_seconds",
            "Per watched repository: the age of its oldest event waiting for a worker (0: none waits)",
            lag.clone(),
        );
        last_resync.set(-1);
        last_resync_age.set(-1.0);
        registry.register(
            "event_to_decision_seconds",
            "Time from the oldest event a job folded in to the end of its decisions",
            event_to_decision.clone(),
        );
        rate_limit_remaining.set(-1);
        graphql_remaining.set(-1);
        let agent_merged = Family::<AgentLabels, Counter>::default();
        let agent_blocked = Family::<AgentConditionLabels, Counter>::default();
        let agent_incidents = Family::<AgentLabels, Counter>::default();
        registry.register(
            "agent_merged",
            "Pull requests merged, per agent (declared tool and model, author; bounded, past the caps `other`)",
            agent_merged.clone(),
        );
        registry.register(
            "agent_blocked",
            "Evaluations that blocked a pull request, per agent and condition (stable code; `inbox` for the decision inbox)",
            agent_blocked.clone(),
        );
        registry.register(
            "agent_incidents",
            "Post-merge incident issues opened, per agent whose merge they name (`(unattributed)` when none the service saw)",
            agent_incidents.clone(),
        );
        Self {
            registry,
            deliveries,
            evaluations,
            jobs,
            ticks,
            panics,
            queue_depth,
            api_requests,
            api_not_modified,
            rate_limit_remaining,
            graphql_remaining,
            event_to_decision,
            last_resync,
            last_resync_age,
            lag,
            agent_merged,
            agent_blocked,
            agent_incidents,
            agent_bounds: Mutex::new(AgentLabelBounds::default()),
            api_seen: std::sync::Mutex::new((0, 0)),
            live: Mutex::new(Live::default()),
        }
    }

    fn live(&self) -> std::sync::MutexGuard<'_, Live> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Reads the adapter's totals from `api` at every scrape, so the API counters move
    /// with every request, not only when a job ends.
    pub fn read_api_from(&self, api: impl Fn() -> ApiSnapshot + Send + Sync + 'static) {
        self.live().api = Some(Box::new(api));
    }

    /// Reads the waiting events of `queue` at every scrape, for the lag of each of the
    /// `watched` repositories (the only label values, so the cardinality stays bounded).
    pub fn read_queue_from(&self, queue: Arc<Mutex<Queue>>, watched: Vec<RepoName>) {
        let mut live = self.live();
        live.queue = Some(queue);
        live.watched = watched;
    }

    /// A resync completed at `unix_seconds` (the domain's clock).
    pub fn resync_completed(&self, unix_seconds: i64) {
        self.ticks.inc();
        self.live().last_resync = Some((Instant::now(), unix_seconds));
    }

    /// Brings the values read at a scrape up to date.
    fn refresh(&self) {
        let (api, waiting, watched, last) = {
            let live = self.live();
            let waiting = live.queue.as_ref().map_or_else(BTreeMap::new, |queue| {
                queue
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .waiting_since()
            });
            (
                live.api.as_ref().map(|read| read()),
                waiting,
                live.watched.clone(),
                live.last_resync,
            )
        };
        if let Some((requests, not_modified, remaining, graphql)) = api {
            self.api_totals(requests, not_modified, remaining, graphql);
        }
        for repo in &watched {
            let age = waiting
                .get(repo)
                .map_or(0.0, |since| since.elapsed().as_secs_f64());
            self.lag
                .get_or_create(&RepoLabels {
                    repo: repo.to_string(),
                })
                .set(age);
        }
        if let Some((at, unix)) = last {
            self.last_resync.set(unix);
            self.last_resync_age.set(at.elapsed().as_secs_f64());
        }
    }

    /// Counts a delivery.
    pub fn delivery(&self, event: &str, verdict: &str) {
        // Bound the label values: an unknown event name is attacker-chosen text.
        let event = if crate::payload::KNOWN_EVENTS.contains(&event) {
            event
        } else {
            "other"
        };
        self.deliveries
            .get_or_create(&DeliveryLabels {
                event: event.to_owned(),
                verdict: verdict.to_owned(),
            })
            .inc();
    }

    /// Counts one evaluated pull request.
    pub fn evaluation(&self, outcome: &str) {
        self.evaluations
            .get_or_create(&OutcomeLabels {
                outcome: outcome.to_owned(),
            })
            .inc();
    }

    /// Counts the agents' part of a job's decisions, as the audit log's `pr`, `incident`
    /// records say them (decisions/0081): merges and blocks per agent, and each incident
    /// the supervisor opened against the agents whose merges it names.
    pub fn agents(
        &self,
        outcomes: &[mp_tick::PrOutcome],
        supervisors: &[mp_tick::supervisor::SupervisorReport],
    ) {
        use mp_core::agent::{AgentKey, UNDECLARED};
        let mut bounds = self
            .agent_bounds
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for outcome in outcomes {
            if matches!(outcome.action, mp_tick::PrAction::Ignored) {
                continue;
            }
            let value = |key: AgentKey| {
                outcome
                    .agent
                    .as_ref()
                    .map_or(UNDECLARED, |agent| agent.value(key))
                    .to_owned()
            };
            let labels = bounds.labels(
                &value(AgentKey::Tool),
                &value(AgentKey::Model),
                &value(AgentKey::Author),
            );
            if let mp_tick::PrAction::Merged { sha } = &outcome.action {
                self.agent_merged.get_or_create(&labels).inc();
                let repo = outcome.pr.split('#').next().unwrap_or_default();
                bounds.remember_merge(format!("{repo}@{sha}"), labels.clone());
            }
            for condition in mp_tick::audit_records::blocked_by(outcome) {
                self.agent_blocked
                    .get_or_create(&AgentConditionLabels {
                        tool: labels.tool.clone(),
                        model: labels.model.clone(),
                        author: labels.author.clone(),
                        condition,
                    })
                    .inc();
            }
        }
        for report in supervisors {
            for incident in &report.incidents {
                let mut agents: Vec<AgentLabels> = incident
                    .shas
                    .iter()
                    .flat_map(|sha| bounds.merge_of(&format!("{}@{sha}", report.repo)))
                    .collect();
                agents.sort_by(|a, b| {
                    (&a.tool, &a.model, &a.author).cmp(&(&b.tool, &b.model, &b.author))
                });
                agents.dedup();
                if agents.is_empty() {
                    agents.push(AgentLabels {
                        tool: UNATTRIBUTED.to_owned(),
                        model: UNATTRIBUTED.to_owned(),
                        author: UNATTRIBUTED.to_owned(),
                    });
                }
                for labels in agents {
                    self.agent_incidents.get_or_create(&labels).inc();
                }
            }
        }
    }

    /// Counts a finished job and, for a job that folded events in, its event-to-decision
    /// time.
    pub fn job_done(&self, kind: &str, seconds: Option<f64>) {
        self.jobs
            .get_or_create(&JobLabels {
                job: kind.to_owned(),
            })
            .inc();
        if let Some(seconds) = seconds {
            self.event_to_decision.observe(seconds);
        }
    }

    /// Counts a panicked job.
    pub fn panicked(&self) {
        self.panics.inc();
    }

    /// Sets the queue depth.
    pub fn set_queue_depth(&self, depth: usize) {
        self.queue_depth
            .set(i64::try_from(depth).unwrap_or(i64::MAX));
    }

    /// Brings the API counters up to the adapter's totals; `remaining` and `graphql` are
    /// the two budgets' points left as GitHub last reported them.
    pub fn api_totals(
        &self,
        requests: u64,
        not_modified: u64,
        remaining: Option<u32>,
        graphql: Option<u32>,
    ) {
        if let Ok(mut seen) = self.api_seen.lock() {
            self.api_requests.inc_by(requests.saturating_sub(seen.0));
            self.api_not_modified
                .inc_by(not_modified.saturating_sub(seen.1));
            *seen = (seen.0.max(requests), seen.1.max(not_modified));
        }
        self.rate_limit_remaining
            .set(remaining.map_or(-1, i64::from));
        self.graphql_remaining.set(graphql.map_or(-1, i64::from));
    }

    /// The exposition text.
    pub fn render(&self) -> String {
        self.refresh();
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exposition_names_every_metric_and_bounds_event_labels() {
        let metrics = Metrics::new();
        metrics.delivery("pull_request", "queued");
        metrics.delivery("made-up-by-a-sender", "ignored");
        metrics.evaluation("merged");
        metrics.job_done("lane", Some(0.3));
        metrics.api_totals(10, 4, Some(4990), None);
        metrics.api_totals(12, 4, Some(4988), Some(4993));
        let text = metrics.render();
        for line in [
            "mp_serve_webhook_deliveries_total{event=\"pull_request\",verdict=\"queued\"} 1",
            "mp_serve_webhook_deliveries_total{event=\"other\",verdict=\"ignored\"} 1",
            "mp_serve_evaluations_total{outcome=\"merged\"} 1",
            "mp_serve_api_requests_total 12",
            "mp_serve_api_not_modified_total 4",
            "mp_serve_rate_limit_remaining 4988",
            "mp_serve_graphql_remaining 4993",
            "mp_serve_event_to_decision_seconds_bucket{le=\"0.5\"} 1",
            "mp_serve_event_to_decision_seconds_bucket{le=\"0.25\"} 0",
            "mp_serve_queue_depth 0",
            "mp_serve_ticks_total 0",
        ] {
            assert!(text.contains(line), "{line} missing from:\n{text}");
        }
        assert!(text.ends_with("# EOF\n"));
    }

    fn merged(pr: &str, sha: char, tool: &str, model: &str, author: &str) -> mp_tick::PrOutcome {
        let sha = mp_core::ids::CommitSha::parse(&sha.to_string().repeat(40)).expect("a sha");
        let mut outcome = mp_tick::PrOutcome::new(pr, mp_tick::PrAction::Merged { sha }, "merged");
        outcome.agent = Some(mp_core::agent::AgentIdentity {
            tool: Some(tool.to_owned()),
            model: Some(model.to_owned()),
            session: None,
            machine: None,
            author: mp_core::ids::Login::parse(author).expect("a login"),
        });
        outcome
    }

    /// The series of `name` in `text`, and the sum of their values.
    fn series(text: &str, name: &str) -> (usize, u64) {
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with(&format!("{name}{{")))
            .collect();
        let sum = lines
            .iter()
            .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
            .sum();
        (lines.len(), sum)
    }

    #[test]
    fn ten_thousand_declared_models_stay_within_the_bounded_series() {
        let metrics = Metrics::new();
        // One hostile agent declares a new model (and a new author) on every pull request.
        let outcomes: Vec<mp_tick::PrOutcome> = (0..10_000)
            .map(|i| {
                merged(
                    &format!("o/r#{i}"),
                    'a',
                    "hostile",
                    &format!("model-{i}"),
                    &format!("bot-{i}"),
                )
            })
            .collect();
        metrics.agents(&outcomes, &[]);
        let text = metrics.render();
        let (count, sum) = series(&text, "mp_serve_agent_merged_total");
        assert_eq!(sum, 10_000, "every merge is counted");
        // The first 32 models and 64 authors get their own label values, every later one
        // is `other`: 32 + 32 series with one merge each, and one for the rest.
        assert_eq!(count, MAX_AGENT_AUTHORS + 1);
        assert!(text.contains(
            "mp_serve_agent_merged_total{tool=\"hostile\",model=\"other\",author=\"other\"} 9936"
        ));
        assert!(text.contains(
            "mp_serve_agent_merged_total{tool=\"hostile\",model=\"model-0\",author=\"bot-0\"} 1"
        ));
        // Many tools, models and authors at once: never more than the series cap.
        let metrics = Metrics::new();
        let outcomes: Vec<mp_tick::PrOutcome> = (0..10_000)
            .map(|i| {
                merged(
                    &format!("o/r#{i}"),
                    'a',
                    &format!("tool-{}", i % 50),
                    &format!("model-{}", i % 97),
                    &format!("bot-{}", i % 101),
                )
            })
            .collect();
        metrics.agents(&outcomes, &[]);
        let (count, sum) = series(&metrics.render(), "mp_serve_agent_merged_total");
        assert_eq!(sum, 10_000);
        assert!(count <= MAX_AGENT_SERIES + 1, "{count} series");
    }

    #[test]
    fn blocks_by_condition_and_incidents_per_agent() {
        let metrics = Metrics::new();
        let mut blocked = mp_tick::PrOutcome::new("o/r#2", mp_tick::PrAction::Inbox, "inbox");
        blocked.agent = merged("o/r#2", 'b', "beta", "m", "bot-b").agent;
        metrics.agents(&[merged("o/r#1", 'a', "alpha", "m", "bot-a"), blocked], &[]);
        let repo = mp_core::ids::RepoName::parse("o/r").expect("a repo");
        let mut scan = mp_tick::supervisor::SupervisorReport::new(&repo);
        for (issue, sha) in [(7, 'a'), (8, 'c')] {
            scan.incidents.push(mp_tick::IncidentNote {
                label: mp_core::branch::IncidentLabel::PostMergeRevalidation,
                shas: vec![
                    mp_core::ids::CommitSha::parse(&sha.to_string().repeat(40)).expect("a sha"),
                ],
                issue: mp_core::ids::PrNumber::new(issue),
            });
        }
        metrics.agents(&[], &[scan]);
        let text = metrics.render();
        for line in [
            "mp_serve_agent_merged_total{tool=\"alpha\",model=\"m\",author=\"bot-a\"} 1",
            "mp_serve_agent_blocked_total{tool=\"beta\",model=\"m\",author=\"bot-b\",condition=\"inbox\"} 1",
            "mp_serve_agent_incidents_total{tool=\"alpha\",model=\"m\",author=\"bot-a\"} 1",
            "mp_serve_agent_incidents_total{tool=\"(unattributed)\",model=\"(unattributed)\",author=\"(unattributed)\"} 1",
        ] {
            assert!(text.contains(line), "{line} missing from:\n{text}");
        }
    }
}
