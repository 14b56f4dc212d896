//! The service's HTTP face: `POST /webhook`, `GET /healthz`, `GET /readyz`,
//! `GET /metrics`.
//!
//! `POST /webhook` answers at once (the work is queued) and in this order:
//!
//! | Condition | Status | `verdict` |
//! |---|---|---|
//! | body over the limit | 413 | `rejected` |
//! | `X-Hub-Signature-256` missing, malformed or for another body or secret | 401 | `rejected` |
//! | `Content-Type` not `application/json` | 415 | `rejected` |
//! | no `X-GitHub-Event` | 400 | `rejected` |
//! | a delivery id, or a body (by its SHA-256), seen before (a redelivery or a replay) | 200 | `duplicate` |
//! | an event mp does not act on | 202 | `ignored` |
//! | a body that is not the event's JSON | 400 | `rejected` |
//! | `ping` | 200 | `pong` |
//! | a repository, branch or action with nothing to do | 202 | `ignored` |
//! | work to do | 202 | `queued` |
//!
//! Every answer is a JSON object `{"verdict": ..., "reason": ...}` and one log line.
//! Nothing is read before the signature holds, except the body's length.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::json;
use tokio::time::Instant;

use crate::payload::{Event, ParseError};
use crate::route::{RouteContext, Routed, route};
use crate::service::{Inner, Service};
use crate::signature::SIGNATURE_HEADER;

type Ctx = State<Arc<Inner>>;

pub(crate) fn answer(status: StatusCode, verdict: &str, reason: &str) -> Response {
    (
        status,
        axum::Json(json!({"verdict": verdict, "reason": reason})),
    )
        .into_response()
}

impl Service {
    /// The router to serve (e.g. with `axum::serve`), or to nest in an embedder's own.
    pub fn router(&self) -> Router {
        let limit = self.inner.settings().max_body_bytes;
        Router::new()
            .route("/webhook", post(webhook))
            .route("/healthz", get(healthz))
            .route("/readyz", get(readyz))
            .route("/metrics", get(metrics))
            .layer(DefaultBodyLimit::max(limit))
            .with_state(Arc::clone(&self.inner))
    }
}

async fn healthz() -> Response {
    answer(StatusCode::OK, "alive", "mp serve is running")
}

async fn readyz(State(inner): Ctx) -> Response {
    let readiness = *inner
        .readiness
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let status = if readiness.ready() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (
        status,
        axum::Json(json!({"ready": readiness.ready(), "checks": readiness})),
    )
        .into_response()
}

async fn metrics(State(inner): Ctx) -> Response {
    (
        [(header::CONTENT_TYPE, crate::metrics::CONTENT_TYPE)],
        inner.metrics.render(),
    )
        .into_response()
}

fn header_text<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

async fn webhook(
    State(inner): Ctx,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let received = Instant::now();
    let event = header_text(&headers, "x-github-event")
        .unwrap_or("")
        .to_owned();
    let delivery = header_text(&headers, "x-github-delivery")
        .unwrap_or("")
        .to_owned();
    let (status, verdict, reason, record) =
        decide(&inner, &headers, body, &event, &delivery, received);
    if let Some(mut fields) = record {
        fields.insert("ts".to_owned(), inner.clock.now().to_string().into());
        fields.insert("record".to_owned(), "merge_group".into());
        let line = serde_json::Value::Object(fields).to_string();
        if let Err(error) = inner.audit.append_agent_records(&[line]).await {
            tracing::warn!(%error, delivery, "the merge group's record was not appended to the audit log");
        }
    }
    inner
        .metrics
        .delivery(if event.is_empty() { "other" } else { &event }, verdict);
    if status.is_client_error() {
        tracing::warn!(
            event,
            delivery,
            status = status.as_u16(),
            verdict,
            reason,
            "webhook"
        );
    } else {
        tracing::info!(
            event,
            delivery,
            status = status.as_u16(),
            verdict,
            reason,
            "webhook"
        );
    }
    answer(status, verdict, &reason)
}

fn decide(
    inner: &Inner,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
    event: &str,
    delivery: &str,
    received: Instant,
) -> (
    StatusCode,
    &'static str,
    String,
    Option<serde_json::Map<String, serde_json::Value>>,
) {
    let body = match body {
        Ok(body) => body,
        Err(rejection) => {
            return (rejection.status(), "rejected", rejection.body_text(), None);
        }
    };
    let settings = inner.settings();
    if let Err(error) = settings
        .secret
        .verify(header_text(headers, SIGNATURE_HEADER), &body)
    {
        return (
            StatusCode::UNAUTHORIZED,
            "rejected",
            error.to_string(),
            None,
        );
    }
    let json = header_text(headers, "content-type")
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if !json {
        return (
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "rejected",
            "Content-Type must be application/json (set the webhook's content type to application/json)".to_owned(),
            None,
        );
    }
    if event.is_empty() {
        return (
            StatusCode::BAD_REQUEST,
            "rejected",
            "no X-GitHub-Event header".to_owned(),
            None,
        );
    }
    if let Some(reason) = seen_before(inner, delivery, &body) {
        return (StatusCode::OK, "duplicate", reason, None);
    }
    let parsed = match Event::parse(event, &body) {
        Ok(parsed) => parsed,
        Err(error @ ParseError::Unknown(_)) => {
            return (StatusCode::ACCEPTED, "ignored", error.to_string(), None);
        }
        Err(error) => return (StatusCode::BAD_REQUEST, "rejected", error.to_string(), None),
    };
    let branches = inner
        .branches
        .read()
        .map(|b| b.clone())
        .unwrap_or_else(|e| e.into_inner().clone());
    let context = RouteContext {
        config: &settings.config,
        shard: settings.options.shard,
        branches: &branches,
    };
    match route(&parsed, &context) {
        Routed::Pong => (
            StatusCode::OK,
            "pong",
            "webhook configured".to_owned(),
            None,
        ),
        Routed::Ignored(reason) => (StatusCode::ACCEPTED, "ignored", reason, None),
        Routed::Record { fields, reason } => {
            (StatusCode::ACCEPTED, "recorded", reason, Some(fields))
        }
        Routed::Work(work) => {
            let described = work.iter().map(describe).collect::<Vec<_>>().join("; ");
            {
                let mut queue = inner
                    .queue
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                for item in work {
                    queue.push(item, received);
                }
                inner.metrics.set_queue_depth(queue.depth());
            }
            inner.wake.notify_one();
            (StatusCode::ACCEPTED, "queued", described, None)
        }
    }
}

/// Why this delivery was already received, if it was: by its `X-GitHub-Delivery` id, or by
/// the SHA-256 of its signed body. The id is not signed, so a replay of a captured delivery
/// under a new id (or none) is caught by the body's hash; a delivery without an id is
/// deduped by the hash alone.
fn seen_before(inner: &Inner, delivery: &str, body: &[u8]) -> Option<String> {
    use sha2::{Digest, Sha256};
    let hash = hex::encode(Sha256::digest(body));
    let mut seen = inner
        .seen
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let new_id = delivery.is_empty() || seen.first_time(&format!("id:{delivery}"));
    let new_body = seen.first_time(&format!("sha256:{hash}"));
    match (new_id, new_body) {
        (true, true) => None,
        (false, _) => Some(format!(
            "delivery {delivery} was already received; not acted on again"
        )),
        (true, false) => Some(format!(
            "a delivery with this body (sha256 {}) was already received; not acted on again",
            &hash[..16]
        )),
    }
}

fn describe(work: &crate::route::Work) -> String {
    use crate::route::Work;
    match work {
        Work::Pulls {
            repo,
            numbers,
            heads,
        } => {
            let mut parts: Vec<String> = numbers.iter().map(|n| format!("{repo}#{n}")).collect();
            parts.extend(heads.iter().map(|h| format!("{repo}@{}", h.short())));
            format!("evaluate {}", parts.join(", "))
        }
        Work::BranchMoved { repo, .. } => {
            format!("{repo}: gated branch moved; branch supervisor and open pull requests")
        }
        Work::MergeGroup { repo, number } => format!(
            "{repo}#{number}: merge group checks requested; its ready pull requests and mp's check on the groups"
        ),
        Work::Resync => "resync".to_owned(),
        #[allow(unreachable_patterns)]
        _ => "work".to_owned(),
    }
}
