//! The service's HTTP face and workers over the in-memory GitHub of the demo world: every
//! bad delivery is answered with its status and acts on nothing; good ones queue work that
//! the workers turn into the tick's decisions; a panicking job does not stop the service.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use mp_core::config::{self, ConfigFiles};
use mp_core::port::{AuditError, AuditLog, AuditRecord, FixedClock};
use mp_github_fake::MemoryGitHub;
use mp_tick::TickOptions;
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::{Service, Settings, WebhookSecret};

mod connections;

const SECRET: &str = "webhook-secret";

/// An audit log that panics on the records chosen, counting the others, and keeps the
/// agents' records.
#[derive(Default)]
struct Audit {
    panic_on: Option<usize>,
    seen: AtomicUsize,
    agent_lines: std::sync::Mutex<Vec<String>>,
}

#[async_trait::async_trait]
impl AuditLog for Audit {
    async fn append(&self, _record: &AuditRecord) -> Result<(), AuditError> {
        let index = self.seen.fetch_add(1, Ordering::SeqCst);
        assert!(self.panic_on != Some(index), "an evaluation panics");
        Ok(())
    }

    async fn append_agent_records(&self, lines: &[String]) -> Result<(), AuditError> {
        self.agent_lines
            .lock()
            .expect("not poisoned")
            .extend_from_slice(lines);
        Ok(())
    }
}

fn demo(audit: Arc<Audit>) -> (Service, Arc<MemoryGitHub>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/worlds/demo.yaml");
    let world = mp_github_fake::load_world(&path).expect("the demo world loads");
    let files: ConfigFiles = world
        .config
        .iter()
        .filter(|(name, _)| !name.contains('/'))
        .map(|(n, t)| (n.clone(), t.clone()))
        .collect();
    let config = config::load(&files)
        .config
        .expect("the demo configuration is valid");
    let now = world.now;
    let memory = Arc::new(MemoryGitHub::new(world));
    let options = TickOptions::from_config(&config);
    let secret = WebhookSecret::new(SECRET).expect("a secret");
    let mut settings = Settings::new(config, options, secret);
    settings.max_body_bytes = 1024 * 1024;
    let service = Service::new(memory.clone(), audit, Arc::new(FixedClock(now)), settings);
    (service, memory)
}

struct Delivery<'a> {
    event: &'a str,
    id: &'a str,
    body: Vec<u8>,
    content_type: &'a str,
    signature: Option<String>,
}

impl<'a> Delivery<'a> {
    fn new(event: &'a str, id: &'a str, body: &Value) -> Self {
        let body = serde_json::to_vec(body).expect("JSON");
        let signature = Some(WebhookSecret::new(SECRET).expect("a secret").sign(&body));
        Self {
            event,
            id,
            body,
            content_type: "application/json",
            signature,
        }
    }

    async fn send(self, service: &Service) -> (StatusCode, Value) {
        let mut request = Request::post("/webhook")
            .header("content-type", self.content_type)
            .header("x-github-delivery", self.id);
        if !self.event.is_empty() {
            request = request.header("x-github-event", self.event);
        }
        if let Some(signature) = self.signature {
            request = request.header("x-hub-signature-256", signature);
        }
        let request = request.body(Body::from(self.body)).expect("a request");
        let response = service.router().oneshot(request).await.expect("an answer");
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("a body");
        (
            status,
            serde_json::from_slice(&bytes).expect("a JSON answer"),
        )
    }
}

fn labeled(repo: &str, number: u64) -> Value {
    json!({
        "action": "labeled",
        "number": number,
        "label": {"name": "ready-to-merge"},
        "pull_request": {
            "number": number,
            "head": {"sha": "0".repeat(40), "ref": "feature"},
            "base": {"sha": "1".repeat(40), "ref": "main"},
        },
        "repository": {"full_name": repo, "default_branch": "main"},
        "sender": {"login": "alice"},
    })
}

fn depth(service: &Service) -> usize {
    service.inner.queue.lock().expect("the queue").depth()
}

/// A runtime on tokio's paused test clock: the service's timers (the resync interval, the
/// lease's age, the jobs' latency) move only when the test advances the clock, or when
/// every task is idle and tokio jumps to the next timer; nothing waits on the real clock.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("a runtime")
}

#[test]
fn every_bad_delivery_is_answered_with_its_status_and_acts_on_nothing() {
    runtime().block_on(async {
        let (service, memory) = demo(Arc::default());
        let good = labeled("acme/webapp", 1);
        let cases: Vec<(&str, Delivery<'_>, StatusCode, &str, &str)> = vec![
            (
                "malformed JSON",
                {
                    let mut d = Delivery::new("pull_request", "m1", &good);
                    d.body = b"{\"action\": \"labeled\", ".to_vec();
                    d.signature = Some(WebhookSecret::new(SECRET).expect("s").sign(&d.body));
                    d
                },
                StatusCode::BAD_REQUEST,
                "rejected",
                "not a pull_request payload",
            ),
            (
                "a JSON value of the wrong shape",
                Delivery::new("pull_request", "m2", &json!({"action": 1})),
                StatusCode::BAD_REQUEST,
                "rejected",
                "not a pull_request payload",
            ),
            (
                "wrong content type",
                {
                    let mut d = Delivery::new("pull_request", "c1", &good);
                    d.content_type = "application/x-www-form-urlencoded";
                    d
                },
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "rejected",
                "application/json",
            ),
            (
                "a signature for another body",
                {
                    let mut d = Delivery::new("pull_request", "s1", &good);
                    d.signature = Some(WebhookSecret::new(SECRET).expect("s").sign(b"{}"));
                    d
                },
                StatusCode::UNAUTHORIZED,
                "rejected",
                "does not match",
            ),
            (
                "a signature under another secret",
                {
                    let mut d = Delivery::new("pull_request", "s2", &good);
                    d.signature = Some(WebhookSecret::new("guess").expect("s").sign(&d.body));
                    d
                },
                StatusCode::UNAUTHORIZED,
                "rejected",
                "does not match",
            ),
            (
                "no signature",
                {
                    let mut d = Delivery::new("pull_request", "s3", &good);
                    d.signature = None;
                    d
                },
                StatusCode::UNAUTHORIZED,
                "rejected",
                "no X-Hub-Signature-256",
            ),
            (
                "a repository not in the configuration",
                Delivery::new("pull_request", "r1", &labeled("evil/elsewhere", 1)),
                StatusCode::ACCEPTED,
                "ignored",
                "not a supervised repository",
            ),
            (
                "an event mp does not act on",
                Delivery::new("fork", "e1", &json!({})),
                StatusCode::ACCEPTED,
                "ignored",
                "not one mp acts on",
            ),
            (
                "no event header",
                Delivery::new("", "e2", &good),
                StatusCode::BAD_REQUEST,
                "rejected",
                "X-GitHub-Event",
            ),
            (
                "a 10 MB body",
                {
                    let mut d = Delivery::new("pull_request", "b1", &good);
                    d.body = vec![b' '; 10 * 1024 * 1024];
                    d.signature = Some(WebhookSecret::new(SECRET).expect("s").sign(&d.body));
                    d
                },
                StatusCode::PAYLOAD_TOO_LARGE,
                "rejected",
                "length limit",
            ),
        ];
        for (name, delivery, status, verdict, reason) in cases {
            let (got, answer) = delivery.send(&service).await;
            assert_eq!(got, status, "{name}: {answer}");
            assert_eq!(answer["verdict"], verdict, "{name}: {answer}");
            let text = answer["reason"].as_str().unwrap_or_default();
            assert!(text.contains(reason), "{name}: {text}");
            assert_eq!(depth(&service), 0, "{name}: nothing queued");
        }
        assert!(memory.actions().is_empty(), "nothing written");
        let metrics = service.metrics_text();
        assert!(
            metrics.contains(
                "mp_serve_webhook_deliveries_total{event=\"pull_request\",verdict=\"rejected\"} 7"
            ),
            "{metrics}"
        );
        assert!(
            metrics.contains(
                "mp_serve_webhook_deliveries_total{event=\"other\",verdict=\"ignored\"} 1"
            ),
            "{metrics}"
        );
    });
}

#[test]
fn a_replayed_delivery_is_answered_but_queued_once() {
    runtime().block_on(async {
        let (service, _) = demo(Arc::default());
        let body = labeled("acme/webapp", 1);
        let (status, answer) = Delivery::new("pull_request", "d-1", &body)
            .send(&service)
            .await;
        assert_eq!(
            (status, answer["verdict"].clone()),
            (StatusCode::ACCEPTED, json!("queued"))
        );
        assert_eq!(answer["reason"], "evaluate acme/webapp#1");
        let (status, answer) = Delivery::new("pull_request", "d-1", &body)
            .send(&service)
            .await;
        assert_eq!(
            (status, answer["verdict"].clone()),
            (StatusCode::OK, json!("duplicate"))
        );
        let queue = service.inner.queue.lock().expect("the queue");
        assert_eq!(queue.depth(), 1);
    });
}

#[test]
fn a_replay_without_a_delivery_id_or_under_a_new_one_is_a_duplicate_by_its_bodys_hash() {
    runtime().block_on(async {
        let (service, _) = demo(Arc::default());
        let body = labeled("acme/webapp", 1);
        let (status, answer) = Delivery::new("pull_request", "", &body)
            .send(&service)
            .await;
        assert_eq!(
            (status, answer["verdict"].clone()),
            (StatusCode::ACCEPTED, json!("queued"))
        );
        // The same signed bytes again, without an id: a redelivery.
        let (status, answer) = Delivery::new("pull_request", "", &body)
            .send(&service)
            .await;
        assert_eq!(
            (status, answer["verdict"].clone()),
            (StatusCode::OK, json!("duplicate"))
        );
        assert!(
            answer["reason"]
                .as_str()
                .is_some_and(|r| r.starts_with("a delivery with this body (sha256 ")),
            "{answer}"
        );
        // The id is not signed: the same bytes under a fresh id are a replay too.
        let (status, answer) = Delivery::new("pull_request", "fresh-id", &body)
            .send(&service)
            .await;
        assert_eq!(
            (status, answer["verdict"].clone()),
            (StatusCode::OK, json!("duplicate"))
        );
        // Another body without an id is new work.
        let (status, answer) = Delivery::new("pull_request", "", &labeled("acme/webapp", 2))
            .send(&service)
            .await;
        assert_eq!(
            (status, answer["verdict"].clone()),
            (StatusCode::ACCEPTED, json!("queued"))
        );
        assert_eq!(depth(&service), 1, "one lane for acme/webapp");
    });
}

#[test]
fn health_readiness_and_metrics_answer_before_and_after_start() {
    runtime().block_on(async {
        let (service, _) = demo(Arc::default());
        let get = |path: &'static str| {
            let router = service.router();
            async move {
                let response = router
                    .oneshot(Request::get(path).body(Body::empty()).expect("a request"))
                    .await
                    .expect("an answer");
                let status = response.status();
                let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
                    .await
                    .expect("a body");
                (status, String::from_utf8_lossy(&bytes).into_owned())
            }
        };
        assert_eq!(get("/healthz").await.0, StatusCode::OK);
        let (status, body) = get("/readyz").await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        assert!(body.contains("\"token\":false"), "{body}");
        service.start().await.expect("the service starts");
        // Started and holding the lease, but not ready before the first resync has read
        // every repository; the answer says so.
        let (status, body) = get("/readyz").await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        assert!(body.contains("\"lease\":true"), "{body}");
        assert!(body.contains("\"resync\":false"), "{body}");
        assert!(
            body.contains("resync: the first resync has not planned"),
            "{body}"
        );
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let worker = {
            let service = service.clone();
            tokio::spawn(async move {
                service
                    .run(async {
                        let _ = stopped.await;
                    })
                    .await;
            })
        };
        wait_until(&service, || service.readiness().ready()).await;
        let (status, body) = get("/readyz").await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(body.contains("\"why\":[]"), "{body}");
        assert!(
            body.contains("\"resync_progress\":\"2/2 repositories\""),
            "{body}"
        );
        let _ = stop.send(());
        worker.await.expect("the workers stop");
        let (status, body) = get("/metrics").await;
        assert_eq!(status, StatusCode::OK);
        assert!(body.contains("mp_serve_queue_depth 0"), "{body}");
    });
}

/// How long, on the test clock, the workers are given to get where a test waits for them.
/// Shorter than the resync period, so a service that never gets there fails the test
/// instead of resyncing; the clock is paused, so it costs no real time.
const PATIENCE: Duration = Duration::from_secs(60);

/// Waits, at most [`PATIENCE`] of the test clock, until `until` holds, looking again each
/// time the service finishes a job.
async fn wait_until(service: &Service, until: impl Fn() -> bool) {
    let mut finished = service.finished_jobs();
    let _ = tokio::time::timeout(PATIENCE, async {
        while !until() {
            if finished.changed().await.is_err() {
                break;
            }
        }
    })
    .await;
}

/// Runs the workers until `until` holds (see [`wait_until`]), then stops them.
async fn run_until(service: &Service, until: impl Fn() -> bool) {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let worker = {
        let service = service.clone();
        tokio::spawn(async move {
            service
                .run(async {
                    let _ = stopped.await;
                })
                .await;
        })
    };
    wait_until(service, until).await;
    let _ = stop.send(());
    worker.await.expect("the workers stop");
}

/// The sum of the values of the series of `name` in the exposition `text`.
fn metric_sum(text: &str, name: &str) -> u64 {
    text.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")) || l.starts_with(&format!("{name} ")))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

/// GitHub's queue ends a group: the delivery is recorded in the audit log, and queues no
/// work.
#[test]
fn a_destroyed_merge_group_is_recorded_in_the_audit_log() {
    runtime().block_on(async {
        let audit = Arc::new(Audit::default());
        let (service, _) = demo(audit.clone());
        let group = format!("refs/heads/gh-readonly-queue/main/pr-3-{}", "e".repeat(40));
        let body = json!({"action": "destroyed", "reason": "merged",
            "repository": {"full_name": "acme/webapp", "default_branch": "main"},
            "merge_group": {"head_sha": "d".repeat(40), "head_ref": group,
                            "base_sha": "e".repeat(40), "base_ref": "refs/heads/main"}});
        let (status, answer) = Delivery::new("merge_group", "mg-1", &body)
            .send(&service)
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{answer}");
        assert_eq!(answer["verdict"], "recorded", "{answer}");
        let lines = audit.agent_lines.lock().expect("not poisoned").clone();
        assert_eq!(lines.len(), 1, "{lines:?}");
        let record: Value = serde_json::from_str(&lines[0]).expect("one JSON record");
        assert_eq!(record["record"], "merge_group");
        assert_eq!(record["reason"], "merged");
        assert_eq!(record["pr"], "acme/webapp#3");
        assert!(record["ts"].is_string(), "{record}");
    });
}

#[test]
fn the_resync_appends_the_agents_records_and_counts_them_per_agent() {
    runtime().block_on(async {
        let audit = Arc::new(Audit::default());
        let (service, _) = demo(audit.clone());
        service.start().await.expect("the service starts");
        run_until(&service, || service.readiness().ready()).await;
        let lines = audit.agent_lines.lock().expect("not poisoned").clone();
        let records: Vec<Value> = lines
            .iter()
            .map(|l| serde_json::from_str(l).expect("one JSON record a line"))
            .collect();
        let prs: Vec<&Value> = records.iter().filter(|r| r["record"] == "pr").collect();
        assert!(!prs.is_empty(), "the resync decided on pull requests");
        for record in &prs {
            assert_eq!(record["dry_run"], false);
            assert!(record["head_sha"].is_string(), "{record}");
            assert!(record["agent"]["author"].is_string(), "{record}");
        }
        // The metrics count what the records say: every merge, every block per condition.
        let text = service.metrics_text();
        let merged = prs.iter().filter(|r| r["action"] == "merged").count() as u64;
        assert!(merged > 0, "the demo merges something");
        assert_eq!(metric_sum(&text, "mp_serve_agent_merged_total"), merged);
        let blocks: u64 = prs
            .iter()
            .map(|r| r["blocked_by"].as_array().map_or(0, Vec::len) as u64)
            .sum();
        assert!(blocks > 0, "the demo blocks something");
        assert_eq!(metric_sum(&text, "mp_serve_agent_blocked_total"), blocks);
        let evaluated = metric_sum(&text, "mp_serve_evaluations_total");
        let ignored = text
            .lines()
            .find(|l| l.starts_with("mp_serve_evaluations_total{outcome=\"ignored\"}"))
            .and_then(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
            .unwrap_or(0);
        assert_eq!(prs.len() as u64, evaluated - ignored);
    });
}

#[test]
fn a_panicking_evaluation_is_counted_and_the_service_goes_on() {
    runtime().block_on(async {
        // The first audit record (the start-up resync's first pull request) panics.
        let audit = Arc::new(Audit {
            panic_on: Some(0),
            ..Audit::default()
        });
        let (service, memory) = demo(audit.clone());
        service.start().await.expect("the service starts");
        let metrics = || service.metrics_text();
        run_until(&service, || {
            metrics().contains("mp_serve_job_panics_total 1")
        })
        .await;
        assert!(
            metrics().contains("mp_serve_job_panics_total 1"),
            "{}",
            metrics()
        );
        // The queue is free again: the next delivery for the same pull requests is worked.
        let seen = audit.seen.load(Ordering::SeqCst);
        let (status, _) = Delivery::new("pull_request", "after", &labeled("acme/webapp", 1))
            .send(&service)
            .await;
        assert_eq!(status, StatusCode::ACCEPTED);
        run_until(&service, || audit.seen.load(Ordering::SeqCst) > seen).await;
        assert!(
            audit.seen.load(Ordering::SeqCst) > seen,
            "acme/webapp#1 evaluated after the panic"
        );
        // The lease was given back when the workers stopped.
        let lease = memory.read(|w| {
            let governance = "acme/governance".parse().expect("a name");
            w.repo(&governance)
                .and_then(|r| r.branch_files.get("bot-state"))
                .and_then(|files| files.get("bot-state/lease.json"))
                .cloned()
        });
        assert_eq!(lease.as_deref(), Some("{\n  \"leases\": {}\n}\n"));
    });
}

mod routing {
    use mp_core::config::{self, ConfigFiles};
    use mp_tick::{DefaultBranches, Shard};
    use serde_json::{Value, json};

    use crate::payload::Event;
    use crate::route::{RouteContext, Routed, Work, route};

    fn config() -> mp_core::config::Config {
        let files: ConfigFiles = [
            ("owner.yml", "github_login: alice\n"),
            (
                "projects.yml",
                "governance_repo: acme/governance\nsupervised_repos: [acme/webapp, acme/infra]\naudit_only_repos: [acme/infra]\n",
            ),
            ("env.yml", "bot_app_slug: acme-merge-gate\nrequired_checks: [test]\n"),
        ]
        .into_iter()
        .map(|(n, t)| (n.to_owned(), t.to_owned()))
        .collect();
        let report = config::load(&files);
        let errors: Vec<String> = report.errors().map(ToString::to_string).collect();
        report.config.unwrap_or_else(|| panic!("{errors:?}"))
    }

    fn routed(event: &str, body: &Value, shard: Option<&str>) -> Routed {
        let config = config();
        let mut branches = DefaultBranches::default();
        branches.set("acme/webapp".parse().expect("a name"), "trunk".to_owned());
        let parsed = Event::parse(event, &serde_json::to_vec(body).expect("JSON")).expect("parses");
        route(
            &parsed,
            &RouteContext {
                config: &config,
                shard: shard.map(|s| Shard::parse(s).expect("a shard")),
                branches: &branches,
            },
        )
    }

    fn ignored(routed: &Routed) -> &str {
        match routed {
            Routed::Ignored(reason) => reason,
            other => panic!("not ignored: {other:?}"),
        }
    }

    fn repo(name: &str) -> Value {
        json!({"full_name": name, "default_branch": "trunk"})
    }

    fn push(name: &str, git_ref: &str, deleted: bool) -> Value {
        json!({"ref": git_ref, "before": "a".repeat(40), "after": "b".repeat(40),
               "deleted": deleted, "repository": repo(name)})
    }

    fn check_run(action: &str) -> Value {
        json!({"action": action, "repository": repo("acme/webapp"),
               "check_run": {"head_sha": "c".repeat(40), "name": "test", "status": "completed",
                             "pull_requests": [{"number": 4}]}})
    }

    fn issue(name: &str, labels: &[&str], pull: bool) -> Value {
        let labels: Vec<Value> = labels.iter().map(|l| json!({"name": l})).collect();
        let mut issue = json!({"number": 9, "labels": labels});
        if pull {
            issue["pull_request"] = json!({"url": "x"});
        }
        json!({"action": "created", "issue": issue, "repository": repo(name)})
    }

    fn merge_group(action: &str, name: &str, base: &str, head_ref: &str) -> Value {
        json!({"action": action, "reason": "dequeued", "repository": repo(name),
               "merge_group": {"head_sha": "d".repeat(40), "head_ref": head_ref,
                               "base_sha": "e".repeat(40), "base_ref": base}})
    }

    #[test]
    fn a_merge_group_s_checks_request_judges_its_pull_request_again() {
        let group =
            "refs/heads/gh-readonly-queue/trunk/pr-104-929f8209d40f77f4abc622a499c93a83babdbe64";
        assert_eq!(
            routed(
                "merge_group",
                &merge_group("checks_requested", "acme/webapp", "refs/heads/trunk", group),
                None
            ),
            Routed::Work(vec![Work::MergeGroup {
                repo: "acme/webapp".parse().expect("a name"),
                number: mp_core::ids::PrNumber::new(104),
            }])
        );
        // A destroyed group changes no verdict (judging it again would enqueue a pull
        // request whose group just failed): it is recorded.
        match routed(
            "merge_group",
            &merge_group("destroyed", "acme/webapp", "refs/heads/trunk", group),
            None,
        ) {
            Routed::Record { fields, reason } => {
                assert_eq!(
                    reason,
                    format!(
                        "merge_group destroyed (dequeued) of {group} in acme/webapp: recorded; no verdict changes"
                    )
                );
                assert_eq!(
                    Value::Object(fields),
                    json!({"action": "destroyed", "reason": "dequeued", "repo": "acme/webapp",
                           "pr": "acme/webapp#104", "head_ref": group, "head_sha": "d".repeat(40)})
                );
            }
            other => panic!("not recorded: {other:?}"),
        }
        // Another action is ignored.
        assert_eq!(
            ignored(&routed(
                "merge_group",
                &merge_group("rerequested", "acme/webapp", "refs/heads/trunk", group),
                None
            )),
            format!("merge_group rerequested of {group} in acme/webapp changes no verdict")
        );
        assert_eq!(
            ignored(&routed(
                "merge_group",
                &merge_group("checks_requested", "acme/webapp", "refs/heads/main", group),
                None
            )),
            "merge_group into refs/heads/main, not the gated branch trunk of acme/webapp"
        );
        assert_eq!(
            ignored(&routed(
                "merge_group",
                &merge_group(
                    "checks_requested",
                    "acme/webapp",
                    "refs/heads/trunk",
                    "refs/heads/odd"
                ),
                None
            )),
            "merge_group refs/heads/odd names no pull request"
        );
        assert_eq!(
            ignored(&routed(
                "merge_group",
                &merge_group("checks_requested", "acme/infra", "refs/heads/main", group),
                None
            )),
            "acme/infra is audit-only: its pull requests are not gated"
        );
    }

    #[test]
    fn a_push_to_the_gated_branch_supervises_and_other_pushes_are_ignored() {
        assert_eq!(
            routed(
                "push",
                &push("acme/webapp", "refs/heads/trunk", false),
                None
            ),
            Routed::Work(vec![Work::BranchMoved {
                repo: "acme/webapp".parse().expect("a name"),
                gated: true
            }])
        );
        assert_eq!(
            routed("push", &push("acme/infra", "refs/heads/main", false), None),
            Routed::Work(vec![Work::BranchMoved {
                repo: "acme/infra".parse().expect("a name"),
                gated: false
            }]),
            "an audit-only repository is supervised, its pull requests are not gated"
        );
        let main = routed("push", &push("acme/webapp", "refs/heads/main", false), None);
        assert_eq!(
            ignored(&main),
            "push to main, not the gated branch trunk of acme/webapp"
        );
        let tag = routed("push", &push("acme/webapp", "refs/tags/v1", false), None);
        assert_eq!(ignored(&tag), "push to refs/tags/v1 is not a branch");
        let gone = routed("push", &push("acme/webapp", "refs/heads/trunk", true), None);
        assert_eq!(ignored(&gone), "push deleted trunk of acme/webapp");
    }

    #[test]
    fn a_completed_check_names_its_head_and_pull_requests() {
        match routed("check_run", &check_run("completed"), None) {
            Routed::Work(work) => match &work[..] {
                [Work::Pulls { numbers, heads, .. }] => {
                    assert_eq!(numbers.len(), 1);
                    assert_eq!(heads[0].as_str(), "c".repeat(40));
                }
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
        let created = routed("check_run", &check_run("created"), None);
        assert_eq!(ignored(&created), "check_run created changes no verdict");
    }

    #[test]
    fn only_pending_inbox_issues_of_the_governance_repository_ask_for_a_resync() {
        let pending = issue("acme/governance", &["decision:pending-owner"], false);
        assert_eq!(
            routed("issue_comment", &pending, None),
            Routed::Work(vec![Work::Resync])
        );
        let plain = issue("acme/governance", &["bug"], false);
        assert!(
            ignored(&routed("issue_comment", &plain, None))
                .contains("not a decision:pending-owner")
        );
        let elsewhere = issue("acme/webapp", &["decision:pending-owner"], false);
        assert!(
            ignored(&routed("issues", &elsewhere, None)).contains("not the governance repository")
        );
        let pull = issue("acme/governance", &["decision:pending-owner"], true);
        assert!(ignored(&routed("issue_comment", &pull, None)).contains("a pull request"));
    }

    #[test]
    fn audit_only_unknown_and_other_shards_repositories_are_ignored_with_the_reason() {
        let pr = |name: &str, action: &str| {
            json!({"action": action, "repository": repo(name), "sender": null,
                   "pull_request": {"number": 1, "head": {"sha": "d".repeat(40), "ref": "f"},
                                    "base": {"sha": "e".repeat(40), "ref": "trunk"}}})
        };
        assert!(
            ignored(&routed("pull_request", &pr("acme/infra", "labeled"), None))
                .contains("audit-only")
        );
        assert!(
            ignored(&routed("pull_request", &pr("evil/fork", "labeled"), None))
                .contains("not a supervised repository")
        );
        assert_eq!(
            ignored(&routed("pull_request", &pr("acme/webapp", "closed"), None)),
            "pull_request closed needs no evaluation"
        );
        let owner = Shard::parse("0/2").expect("a shard");
        let other = if owner.owns(&"acme/webapp".parse().expect("a name")) {
            "1/2"
        } else {
            "0/2"
        };
        assert!(
            ignored(&routed(
                "pull_request",
                &pr("acme/webapp", "labeled"),
                Some(other)
            ))
            .contains("another shard")
        );
        assert!(matches!(
            routed(
                "pull_request",
                &pr("acme/webapp", "labeled"),
                Some(if other == "1/2" { "0/2" } else { "1/2" })
            ),
            Routed::Work(_)
        ));
    }
}

/// The value of one metric line, or 0 when it is absent.
fn metric(service: &Service, line_start: &str) -> f64 {
    service
        .metrics_text()
        .lines()
        .find(|l| l.starts_with(line_start))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
}

#[test]
fn attack_a_webhook_claiming_the_owner_labelled_does_not_merge_an_agent_labelled_pull_request() {
    // acme/webapp#4 carries `ready-to-merge` applied by codex-agent. A delivery (GitHub's
    // own, for the agent's label; or any payload at all) naming alice as the sender is only
    // a hint: the evaluation reads who applied the label from GitHub, and blocks.
    runtime().block_on(async {
        let (service, memory) = demo(Arc::default());
        service.start().await.expect("the service starts");
        let merged_4 = || {
            memory.actions().iter().any(|a| {
                matches!(a, mp_core::port::Write::MergePull { repo, number, .. }
                    if repo.as_str() == "acme/webapp" && number.get() == 4)
            })
        };
        run_until(&service, || metric(&service, "mp_serve_ticks_total") >= 1.0).await;
        let mut lying = labeled("acme/webapp", 4);
        lying["sender"] = json!({"login": "alice"});
        let (status, answer) = Delivery::new("pull_request", "lie-1", &lying)
            .send(&service)
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{answer}");
        run_until(&service, || {
            metric(&service, "mp_serve_jobs_total{job=\"lane\"}") >= 1.0
        })
        .await;
        assert_eq!(metric(&service, "mp_serve_jobs_total{job=\"lane\"}"), 1.0);
        assert!(!merged_4(), "not merged: the label is the agent's");
        assert!(
            metric(&service, "mp_serve_evaluations_total{outcome=\"blocked\"}") >= 1.0,
            "{}",
            service.metrics_text()
        );
    });
}

/// The commits that renewed the tick lease so far.
fn renewals(memory: &MemoryGitHub) -> usize {
    memory
        .actions()
        .iter()
        .filter(|a| {
            matches!(a, mp_core::port::Write::PutFile { write, .. }
                if write.path == "bot-state/lease.json" && write.message.contains("renew"))
        })
        .count()
}

#[test]
fn the_resync_repeats_every_period_and_the_lease_is_renewed_on_the_services_clock() {
    runtime().block_on(async {
        let (service, memory) = demo(Arc::default());
        service.start().await.expect("the service starts");
        let ticks = || metric(&service, "mp_serve_ticks_total");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let worker = {
            let service = service.clone();
            tokio::spawn(async move {
                service
                    .run(async {
                        let _ = stopped.await;
                    })
                    .await;
            })
        };
        wait_until(&service, || ticks() >= 1.0).await;
        assert_eq!(ticks(), 1.0, "the resync at start");
        assert_eq!(renewals(&memory), 0, "a lease just taken is not renewed");
        // The default resync period is ten minutes; the lease is renewed every minute.
        assert_eq!(
            mp_tick::lease::LeaseTerms::default().renew_every(),
            Duration::from_secs(60)
        );
        // Just short of the period no job starts, however long the test really took.
        let mut finished = service.finished_jobs();
        finished.mark_unchanged();
        for _ in 0..9 {
            tokio::time::advance(Duration::from_secs(60)).await;
            tokio::task::yield_now().await;
        }
        assert_eq!(renewals(&memory), 9, "renewed every minute while idle");
        tokio::time::advance(Duration::from_secs(59)).await;
        let early = tokio::time::timeout(Duration::from_millis(500), finished.changed()).await;
        assert!(early.is_err(), "no job before the period");
        assert_eq!(ticks(), 1.0, "no resync before the period");
        tokio::time::advance(Duration::from_secs(1)).await;
        wait_until(&service, || ticks() >= 2.0).await;
        assert_eq!(ticks(), 2.0, "the resync after one period");
        assert_eq!(
            renewals(&memory),
            10,
            "the lease renewed every minute, busy or idle"
        );
        let _ = stop.send(());
        worker.await.expect("the workers stop");
    });
}

/// The lease between services over one GitHub: restarts, standbys and frozen holders, on
/// tokio's paused clock (docs/decisions/0065).
mod lease {
    use std::sync::Arc;
    use std::time::Duration;

    use mp_core::config::{self, ConfigFiles};
    use mp_core::ids::Timestamp;
    use mp_core::port::{Clock, GitHubError};
    use mp_github_fake::{Endpoint, Failure, MemoryGitHub};
    use mp_tick::TickOptions;
    use mp_tick::lease::{Incarnation, LeaseHolder, Liveness};
    use tokio::time::Instant;

    use super::{Audit, Delivery, SECRET, labeled, runtime};
    use crate::{Service, Settings, WebhookSecret};

    /// The world's instant plus the time tokio's (paused) clock has moved since the start.
    struct TokioClock {
        base: Timestamp,
        start: Instant,
    }

    impl Clock for TokioClock {
        fn now(&self) -> Timestamp {
            let elapsed = i64::try_from(self.start.elapsed().as_secs()).unwrap_or(i64::MAX);
            self.base.plus_seconds(elapsed)
        }
    }

    /// Says the incarnations with these pids are gone.
    struct Dead(Vec<u32>);

    impl Liveness for Dead {
        fn gone(&self, other: &Incarnation) -> bool {
            self.0.contains(&other.pid)
        }
    }

    struct World {
        memory: Arc<MemoryGitHub>,
        config: mp_core::config::Config,
        clock: Arc<TokioClock>,
    }

    fn world() -> World {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/worlds/demo.yaml");
        let world = mp_github_fake::load_world(&path).expect("the demo world loads");
        let files: ConfigFiles = world
            .config
            .iter()
            .filter(|(name, _)| !name.contains('/'))
            .map(|(n, t)| (n.clone(), t.clone()))
            .collect();
        let config = config::load(&files).config.expect("valid");
        let clock = Arc::new(TokioClock {
            base: world.now,
            start: Instant::now(),
        });
        World {
            memory: Arc::new(MemoryGitHub::new(world)),
            config,
            clock,
        }
    }

    /// A service named `identity`, running as `pid`, that knows `dead` pids are gone.
    fn service(world: &World, identity: &str, pid: u32, dead: &[u32]) -> (Service, Arc<Audit>) {
        let holder = LeaseHolder::new(
            identity,
            Incarnation {
                host: "h1".to_owned(),
                pid,
                started: format!("start-{pid}"),
            },
        )
        .with_liveness(Arc::new(Dead(dead.to_vec())));
        let options = TickOptions::from_config(&world.config).with_lease_holder(holder);
        let secret = WebhookSecret::new(SECRET).expect("a secret");
        let settings = Settings::new(world.config.clone(), options, secret);
        let audit = Arc::new(Audit::default());
        let service = Service::new(
            world.memory.clone(),
            audit.clone(),
            world.clock.clone(),
            settings,
        );
        (service, audit)
    }

    /// Starts `service`'s workers; they run until the answer is dropped or sent.
    fn running(service: &Service) -> tokio::sync::oneshot::Sender<()> {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let service = service.clone();
        tokio::spawn(async move {
            service
                .run(async {
                    let _ = stopped.await;
                })
                .await;
        });
        stop
    }

    /// Lets `time` pass on the paused clock while the workers run.
    async fn pass(time: Duration) {
        tokio::time::sleep(time).await;
    }

    #[test]
    fn a_restart_of_the_same_identity_takes_its_lease_back_at_once() {
        runtime().block_on(async {
            let world = world();
            let (first, _) = service(&world, "serve@h1", 100, &[]);
            first.start().await.expect("starts");
            assert!(first.readiness().lease);
            // kill -9: the first never gives the lease back. The restart is pid 200.
            drop(first);
            let (restarted, _) = service(&world, "serve@h1", 200, &[100]);
            restarted.start().await.expect("starts");
            assert!(
                restarted.readiness().lease,
                "the lease at once, not after it expired"
            );
        });
    }

    #[test]
    fn a_second_live_copy_waits_and_a_standby_takes_over_within_one_lease_of_a_death() {
        runtime().block_on(async {
            let world = world();
            let (active, _) = service(&world, "serve@h1", 100, &[]);
            active.start().await.expect("starts");
            // Same identity, the first alive: it waits, as any other holder.
            let (copy, _) = service(&world, "serve@h1", 101, &[]);
            copy.start().await.expect("starts");
            assert!(
                !copy.readiness().lease,
                "two live copies never both hold it"
            );
            let (standby, _) = service(&world, "serve@h2", 7, &[]);
            standby.start().await.expect("starts");
            assert!(!standby.readiness().lease);
            // The active one dies (never renews again); the standby keeps trying every
            // minute and holds it once the lease has expired: three minutes.
            drop(active);
            let _workers = running(&standby);
            pass(Duration::from_secs(179)).await;
            assert!(!standby.readiness().lease, "not before the lease expired");
            pass(Duration::from_secs(61)).await;
            assert!(
                standby.readiness().ready(),
                "within one lease duration (plus one retry)"
            );
        });
    }

    #[test]
    fn a_frozen_holder_that_wakes_after_a_takeover_does_not_act() {
        runtime().block_on(async {
            let world = world();
            let (frozen, frozen_audit) = service(&world, "serve@h1", 100, &[]);
            frozen.start().await.expect("starts");
            // SIGSTOP: the holder's workers do not run for four minutes; the standby takes
            // the lease once it expires.
            tokio::time::advance(Duration::from_secs(240)).await;
            let (standby, _) = service(&world, "serve@h2", 7, &[]);
            standby.start().await.expect("starts");
            assert!(standby.readiness().lease);
            // SIGCONT: a delivery reaches the frozen one; it finds the lease lost and
            // evaluates nothing.
            let (status, _) =
                Delivery::new("pull_request", "after-freeze", &labeled("acme/webapp", 1))
                    .send(&frozen)
                    .await;
            assert_eq!(status, axum::http::StatusCode::ACCEPTED);
            let _workers = running(&frozen);
            pass(Duration::from_secs(1)).await;
            assert_eq!(
                frozen_audit.seen.load(std::sync::atomic::Ordering::SeqCst),
                0,
                "nothing evaluated by the frozen holder"
            );
            assert!(!frozen.readiness().lease, "and it says so");
        });
    }

    #[test]
    fn a_lease_not_renewed_by_the_renew_deadline_stops_the_service() {
        runtime().block_on(async {
            let world = world();
            let (service, _) = service(&world, "serve@h1", 100, &[]);
            service.start().await.expect("starts");
            world.memory.fail(Failure::on(
                Endpoint::PutContents,
                GitHubError::Unavailable {
                    route: "PUT /repos/{o}/{r}/contents/{path}".to_owned(),
                    message: "502".to_owned(),
                },
            ));
            let _workers = running(&service);
            // The renewal at one minute fails: still within the deadline, still ready.
            pass(Duration::from_secs(61)).await;
            assert!(service.readiness().lease, "one missed renewal is tolerated");
            // At two minutes the renew deadline has passed: not ready, acting on nothing.
            pass(Duration::from_secs(60)).await;
            assert!(!service.readiness().lease, "past the renew deadline");
            // GitHub back: the service takes the lease again (its own entry, this process).
            world.memory.heal();
            pass(Duration::from_secs(60)).await;
            assert!(service.readiness().ready());
        });
    }
}

/// A resync under load: one repository's resync job is held (its first audit record
/// waits until the test lets it go), as a slow GitHub would hold it, on tokio's paused
/// clock (docs/decisions/0066).
mod resync {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    use axum::http::StatusCode;
    use mp_core::port::{AuditError, AuditLog, AuditRecord, FixedClock};
    use mp_github_fake::MemoryGitHub;
    use tokio::sync::Notify;

    use super::{Delivery, PATIENCE, labeled, metric, runtime, wait_until};
    use crate::{ApiCounters, Service};

    /// Holds the first record of `repo`'s pull requests until released.
    struct HeldAudit {
        repo: &'static str,
        held: AtomicBool,
        reached: Notify,
        release: Notify,
        records: std::sync::Mutex<Vec<String>>,
    }

    #[async_trait::async_trait]
    impl AuditLog for HeldAudit {
        async fn append(&self, record: &AuditRecord) -> Result<(), AuditError> {
            if record.pr.starts_with(self.repo) && !self.held.swap(true, Ordering::SeqCst) {
                self.reached.notify_one();
                self.release.notified().await;
            }
            self.records
                .lock()
                .expect("the records")
                .push(record.pr.clone());
            Ok(())
        }
    }

    /// The in-memory GitHub's call count, as the REST client reports its requests.
    struct Calls(Arc<MemoryGitHub>);

    impl ApiCounters for Calls {
        fn totals(&self) -> (u64, u64) {
            (self.0.total_calls(), 0)
        }
    }

    #[test]
    fn events_are_served_while_a_resync_is_held_and_readiness_waits_for_every_repository() {
        runtime().block_on(async {
            let audit = Arc::new(HeldAudit {
                repo: "acme/webapp#",
                held: AtomicBool::new(false),
                reached: Notify::new(),
                release: Notify::new(),
                records: std::sync::Mutex::default(),
            });
            let (demo, memory) = super::demo(Arc::default());
            let mut settings = crate::Settings::clone(&demo.inner.settings());
            settings.workers = 2;
            let now = memory.now();
            let service = Service::new(
                memory.clone(),
                audit.clone(),
                Arc::new(FixedClock(now)),
                settings,
            )
            .with_api_counters(Arc::new(Calls(memory.clone())));
            service.start().await.expect("the service starts");
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            let worker = {
                let service = service.clone();
                tokio::spawn(async move {
                    service
                        .run(async {
                            let _ = stopped.await;
                        })
                        .await;
                })
            };
            // The start-up resync reaches acme/webapp's first pull request and is held.
            tokio::time::timeout(PATIENCE, audit.reached.notified())
                .await
                .expect("the resync reaches acme/webapp");
            let readiness = service.readiness();
            assert!(readiness.lease && !readiness.ready(), "{readiness:?}");
            assert_eq!(readiness.why(), ["resync: 0/2 repositories"]);
            // The API counter is read at the scrape, not when a job ends.
            assert_eq!(
                metric(&service, "mp_serve_api_requests_total"),
                memory.total_calls() as f64,
                "the requests of the held job are counted while it runs"
            );
            assert_eq!(metric(&service, "mp_serve_ticks_total"), 0.0);

            // An event on acme/infra is served meanwhile, on the worker the resync leaves.
            let (status, _) = Delivery::new("pull_request", "infra-7", &labeled("acme/infra", 7))
                .send(&service)
                .await;
            assert_eq!(status, StatusCode::ACCEPTED);
            wait_until(&service, || {
                metric(&service, "mp_serve_jobs_total{job=\"lane\"}") >= 1.0
            })
            .await;
            assert_eq!(metric(&service, "mp_serve_jobs_total{job=\"lane\"}"), 1.0);
            assert!(
                audit
                    .records
                    .lock()
                    .expect("the records")
                    .iter()
                    .any(|pr| pr == "acme/infra#7"),
                "acme/infra#7 evaluated during the resync"
            );
            assert_eq!(
                metric(&service, "mp_serve_ticks_total"),
                0.0,
                "still resyncing"
            );

            // An event on the held repository waits for it, and its lag shows.
            let (status, _) = Delivery::new("pull_request", "webapp-1", &labeled("acme/webapp", 1))
                .send(&service)
                .await;
            assert_eq!(status, StatusCode::ACCEPTED);
            tokio::time::advance(Duration::from_secs(3)).await;
            assert!(
                metric(&service, "mp_serve_event_lag_seconds{repo=\"acme/webapp\"}") >= 3.0,
                "{}",
                service.metrics_text()
            );
            assert_eq!(
                metric(&service, "mp_serve_event_lag_seconds{repo=\"acme/infra\"}"),
                0.0
            );
            assert_eq!(
                metric(&service, "mp_serve_last_resync_timestamp_seconds"),
                -1.0
            );

            // Let it go: the resync completes, the service is ready, the waiting lane runs.
            audit.release.notify_one();
            wait_until(&service, || {
                service.readiness().ready()
                    && metric(&service, "mp_serve_jobs_total{job=\"lane\"}") >= 2.0
            })
            .await;
            assert!(service.readiness().ready(), "{:?}", service.readiness());
            assert_eq!(metric(&service, "mp_serve_ticks_total"), 1.0);
            assert_eq!(
                metric(&service, "mp_serve_last_resync_timestamp_seconds"),
                now.unix_seconds() as f64
            );
            assert!(metric(&service, "mp_serve_last_resync_age_seconds") >= 0.0);
            assert_eq!(
                metric(&service, "mp_serve_event_lag_seconds{repo=\"acme/webapp\"}"),
                0.0
            );
            let _ = stop.send(());
            worker.await.expect("the workers stop");
        });
    }
}
