//! What every request of the loopback server goes through around its handler: the
//! Authorization check, request counting, fault rules, the primary rate limit, ETags and
//! conditional requests.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::header::{
    AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, ETAG, IF_NONE_MATCH, RETRY_AFTER,
};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use sha1::{Digest, Sha1};

use super::conn::ConnectionSwitch;
use super::fault::Fault;
use super::state::Shared;
use super::webhook;
use mp_core::ids::Timestamp;

/// The GraphQL endpoint's route template.
const GRAPHQL_TEMPLATE: &str = "POST /graphql";

/// The routes made with the App's JWT (their own budget) or not REST at all: they do not
/// spend the installation's primary limit, as in the in-memory port.
const FREE_ROUTES: [&str; 5] = [
    "GET /app",
    "POST /app/installations/{id}/access_tokens",
    "POST /repos/{o}/{r}/_loopback/revert",
    // A person's label: not the bot's call at all.
    "POST /repos/{o}/{r}/_loopback/label",
    // Another App's calls (CI publishing its runs) spend that App's budget, not mp's.
    "POST /_loopback/apps/{slug}/token",
];

/// The check-run writes: free for another App's token (CI publishing its runs spends that
/// App's budget), spent from mp's limit when the bot publishes its own (decisions/0084).
const CHECK_RUN_ROUTES: [&str; 2] = [
    "POST /repos/{o}/{r}/check-runs",
    "PATCH /repos/{o}/{r}/check-runs/{id}",
];

/// Whether the request carries `Authorization: Bearer <t>` or `token <t>`.
fn authenticated(headers: &HeaderMap) -> bool {
    let Some(value) = headers.get(AUTHORIZATION).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let Some((scheme, token)) = value.trim().split_once(' ') else {
        return false;
    };
    let known = scheme.eq_ignore_ascii_case("bearer") || scheme.eq_ignore_ascii_case("token");
    known && !token.trim().is_empty()
}

/// What the middleware of one route knows: the shared state and the route's path template
/// (`None` for the fallback).
#[derive(Debug, Clone)]
pub(super) struct RouteLayer {
    /// The shared state.
    pub(super) shared: Arc<Shared>,
    /// The route's path as registered, e.g. `/repos/{o}/{r}/contents/{*path}`.
    pub(super) path: Option<&'static str>,
}

/// The method and route template of a request, e.g. `GET /repos/{o}/{r}/pulls/{n}`; the
/// concrete path when no route matched.
fn template(path: Option<&str>, request: &Request) -> String {
    let method = request.method();
    match path {
        Some(path) => format!("{method} {}", path.replace("{*", "{")),
        None => format!("{method} {}", request.uri().path()),
    }
}

/// Whether `If-None-Match` names `etag` (a list, a strong or weak form, or `*`).
fn etag_matches(if_none_match: &str, etag: &str) -> bool {
    let bare = etag.trim_start_matches("W/");
    if_none_match.split(',').map(str::trim).any(|candidate| {
        candidate == "*" || candidate == etag || candidate.trim_start_matches("W/") == bare
    })
}

fn retry_after(response: &mut Response, seconds: Option<u64>) {
    if let Some(value) = seconds.and_then(|s| HeaderValue::from_str(&s.to_string()).ok()) {
        response.headers_mut().insert(RETRY_AFTER, value);
    }
}

/// A fault that answers before the handler runs.
fn answer_early(shared: &Shared, fault: &Fault, spends: bool) -> Response {
    if matches!(fault, Fault::Exhaust) {
        shared.exhaust();
        return shared.exhausted();
    }
    if spends && !shared.spend() {
        return shared.exhausted();
    }
    match fault {
        Fault::Status(code) => {
            let status = StatusCode::from_u16(*code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            shared.error(status, &format!("injected fault: status {code}"))
        }
        Fault::Secondary403 { retry_after: after } => {
            let mut response = shared.error(
                StatusCode::FORBIDDEN,
                "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
            );
            retry_after(&mut response, *after);
            response
        }
        Fault::TooManyRequests { retry_after: after } => {
            let mut response = shared.error(
                StatusCode::TOO_MANY_REQUESTS,
                "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
            );
            retry_after(&mut response, *after);
            response
        }
        Fault::GraphqlRateLimited => {
            let body = json!({
                "data": Value::Null,
                "errors": [{
                    "type": "RATE_LIMITED",
                    "message": "API rate limit exceeded for installation ID 1.",
                }],
            });
            (StatusCode::OK, axum::Json(body)).into_response()
        }
        other => shared.error(
            StatusCode::INTERNAL_SERVER_ERROR,
            &format!("fault `{other}` cannot answer before the handler"),
        ),
    }
}

/// Every connection of the server carries a switch; a request without one is a bug, said
/// so.
fn no_switch(shared: &Shared, fault: &str) -> Response {
    shared.error(
        StatusCode::INTERNAL_SERVER_ERROR,
        &format!("{fault} fault: the connection has no switch"),
    )
}

/// The middleware every request passes through.
pub(super) async fn around_handler(
    State(layer): State<RouteLayer>,
    request: Request,
    next: Next,
) -> Response {
    let RouteLayer { shared, path } = layer;
    // On the system clock, every request sees the world at the present moment: what the
    // handler writes is dated now, tokens expire an hour from now, simulated CI catches up.
    if shared.real_clock
        && let Ok(now) = Timestamp::from_unix_seconds(jiff::Timestamp::now().as_second())
    {
        shared.memory.set_now(now);
    }
    let template = template(path, &request);
    let is_authenticated = authenticated(request.headers());
    shared.record(&template, is_authenticated);
    if !is_authenticated {
        return shared.error(StatusCode::UNAUTHORIZED, "Requires authentication");
    }
    // GraphQL keeps its own budget of points, spent and reported by its handler.
    let graphql = template == GRAPHQL_TEMPLATE;
    let another_app = CHECK_RUN_ROUTES.contains(&template.as_str())
        && shared
            .token_app(request.headers())
            .is_some_and(|app| app != shared.memory.read(|w| w.bot_slug.clone()));
    let spends = !FREE_ROUTES.contains(&template.as_str()) && !graphql && !another_app;
    let fault = shared.fault_for(&template);
    if let Some(fault) = fault.as_ref().filter(|f| f.answers_before_handler()) {
        return answer_early(&shared, fault, spends);
    }
    let is_get = request.method() == Method::GET;
    let if_none_match = request
        .headers()
        .get(IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .filter(|_| is_get);
    // A conditional GET may still end as a free 304; anything else needs a call left.
    if spends && if_none_match.is_none() && shared.remaining() == 0 {
        return shared.exhausted();
    }
    let switch = request
        .extensions()
        .get::<ConnectInfo<ConnectionSwitch>>()
        .map(|info| info.0.clone());
    // The webhooks of what the handler writes come from the action log.
    let before_write = if is_get {
        None
    } else {
        webhook::before_write(&shared).await
    };
    // What GitHub's merge queue did since the last request (the clock moved).
    webhook::merge_groups(&shared);
    let response = next.run(request).await;
    if let Some(before) = before_write {
        webhook::after_write(&shared, before);
    }
    webhook::merge_groups(&shared);
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return shared.error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the answer could not be read",
        );
    };
    if is_get && parts.status.is_success() {
        let etag = format!("W/\"{}\"", hex::encode(Sha1::digest(&bytes)));
        if if_none_match
            .as_deref()
            .is_some_and(|candidates| etag_matches(candidates, &etag))
        {
            shared.record_not_modified(&template);
            let mut response = StatusCode::NOT_MODIFIED.into_response();
            if let Ok(value) = HeaderValue::from_str(&etag) {
                response.headers_mut().insert(ETAG, value);
            }
            shared.rate_headers(response.headers_mut());
            // A 304 has no body to cut short or garble; a delay or a drop still applies.
            match (&fault, &switch) {
                (Some(Fault::Delay { millis }), _) => {
                    shared.sleeper.sleep(Duration::from_millis(*millis)).await;
                }
                (Some(Fault::Drop), Some(switch)) => switch.cut(),
                _ => {}
            }
            return response;
        }
        if let Ok(value) = HeaderValue::from_str(&etag) {
            parts.headers.insert(ETAG, value);
        }
    }
    // A read with no call left answers 403 (nothing was changed); a write that passed the
    // check above was applied, so it is answered even if a concurrent request took the
    // last call meanwhile.
    if spends && !shared.spend() && is_get {
        return shared.exhausted();
    }
    if !graphql {
        shared.rate_headers(&mut parts.headers);
    }
    match fault {
        Some(Fault::Delay { millis }) => {
            shared.sleeper.sleep(Duration::from_millis(millis)).await;
            Response::from_parts(parts, Body::from(bytes))
        }
        Some(Fault::Truncate) => match switch {
            // The full answer goes out with its length; the connection lets half the body
            // through and closes.
            Some(switch) => {
                switch.truncate(bytes.len() / 2);
                Response::from_parts(parts, Body::from(bytes))
            }
            None => no_switch(&shared, "truncate"),
        },
        Some(Fault::Malformed) => {
            parts.headers.remove(CONTENT_LENGTH);
            parts.headers.remove(ETAG);
            parts.headers.insert(
                CONTENT_TYPE,
                HeaderValue::from_static("application/json; charset=utf-8"),
            );
            let text = "<html><body>upstream answered garbage {\"oops\": </body></html>";
            Response::from_parts(parts, Body::from(text))
        }
        Some(Fault::GraphqlError) => {
            parts.headers.remove(CONTENT_LENGTH);
            let body = json!({
                "data": Value::Null,
                "errors": [{
                    "message": "Something went wrong while executing your query. This may be the result of a timeout, or it could be a GitHub bug.",
                }],
            });
            Response::from_parts(parts, Body::from(body.to_string()))
        }
        Some(Fault::Drop) => match switch {
            Some(switch) => {
                switch.cut();
                Response::from_parts(parts, Body::from(bytes))
            }
            None => no_switch(&shared, "drop"),
        },
        _ => Response::from_parts(parts, Body::from(bytes)),
    }
}
