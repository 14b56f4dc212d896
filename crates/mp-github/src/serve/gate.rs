//! What every request of the loopback server goes through around its handler: the
//! Authorization check, request counting, fault rules, the primary rate limit, ETags and
//! conditional requests.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::header::{
    AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, ETAG, HeaderName, IF_NONE_MATCH, RETRY_AFTER,
};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use sha1::{Digest, Sha1};

use super::RouteCount;
use super::conn::ConnectionSwitch;
use super::fault::{Fault, FaultRule, FaultScript};
use super::webhook::Webhooks;
use crate::memory::MemoryGitHub;
use mp_core::ids::Timestamp;

/// Where GitHub's error bodies point.
pub(super) const DOCUMENTATION_URL: &str = "https://docs.github.com/rest";

/// The primary limit when the world does not set one.
pub(super) const DEFAULT_LIMIT: u32 = 5000;

/// The routes made with the App's JWT (their own budget) or not REST at all: they do not
/// spend the installation's primary limit, as in the in-memory port.
/// The GraphQL endpoint's route template.
const GRAPHQL_TEMPLATE: &str = "POST /graphql";

const FREE_ROUTES: [&str; 7] = [
    "GET /app",
    "POST /app/installations/{id}/access_tokens",
    "POST /repos/{o}/{r}/_loopback/revert",
    // A person's label: not the bot's call at all.
    "POST /repos/{o}/{r}/_loopback/label",
    // Another App's calls (CI publishing its runs) spend that App's budget, not mp's.
    "POST /_loopback/apps/{slug}/token",
    "POST /repos/{o}/{r}/check-runs",
    "PATCH /repos/{o}/{r}/check-runs/{id}",
];

/// State shared by the gate and the handlers.
#[derive(Debug)]
pub(super) struct Shared {
    /// The world, behind the GitHub port.
    pub(super) memory: Arc<MemoryGitHub>,
    /// `http://127.0.0.1:<port>`.
    pub(super) base_url: String,
    /// Whether the world's clock follows the system clock (`ServerClock::Real`).
    real_clock: bool,
    /// The webhook deliveries, when the server has a target.
    pub(super) webhooks: Option<Webhooks>,
    state: Mutex<GateState>,
}

#[derive(Debug)]
struct GateState {
    requests: BTreeMap<String, RouteCount>,
    limit: u32,
    remaining: u32,
    /// Epoch seconds the window resets at.
    reset: i64,
    rules: Vec<ArmedRule>,
    fired: Vec<String>,
    unauthenticated: u64,
    /// GraphQL's own points left (`POST /graphql` spends these, not the REST calls).
    graphql_remaining: u32,
    tokens_issued: u64,
    /// Installation tokens this server issued, and the App slug each belongs to.
    app_tokens: BTreeMap<String, String>,
}

#[derive(Debug)]
struct ArmedRule {
    rule: FaultRule,
    seen: u64,
    fired: bool,
}

fn arm(faults: FaultScript) -> Vec<ArmedRule> {
    faults
        .rules
        .into_iter()
        .map(|rule| ArmedRule {
            rule,
            seen: 0,
            fired: false,
        })
        .collect()
}

impl Shared {
    /// `remaining` calls left of `limit`, resetting at `reset` (epoch seconds).
    pub(super) fn new(
        memory: Arc<MemoryGitHub>,
        base_url: String,
        faults: FaultScript,
        (limit, remaining, reset): (u32, u32, i64),
        real_clock: bool,
        webhooks: Option<Webhooks>,
    ) -> Self {
        Self {
            memory,
            base_url,
            real_clock,
            webhooks,
            state: Mutex::new(GateState {
                requests: BTreeMap::new(),
                limit,
                remaining,
                reset,
                rules: arm(faults),
                fired: Vec::new(),
                unauthenticated: 0,
                graphql_remaining: super::graphql::GRAPHQL_LIMIT,
                tokens_issued: 0,
                app_tokens: BTreeMap::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, GateState> {
        // Counters stay meaningful after a panic elsewhere.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn requests(&self) -> BTreeMap<String, RouteCount> {
        self.lock().requests.clone()
    }

    pub(super) fn remaining(&self) -> u32 {
        self.lock().remaining
    }

    pub(super) fn set_faults(&self, faults: FaultScript) {
        self.lock().rules = arm(faults);
    }

    pub(super) fn fired_faults(&self) -> Vec<String> {
        self.lock().fired.clone()
    }

    pub(super) fn unauthenticated(&self) -> u64 {
        self.lock().unauthenticated
    }

    /// A new installation token of the App `slug` (`ghs_loopback_<n>`, numbered from 1).
    pub(super) fn issue_token(&self, slug: &str) -> String {
        let mut state = self.lock();
        state.tokens_issued += 1;
        let token = format!("ghs_loopback_{}", state.tokens_issued);
        state.app_tokens.insert(token.clone(), slug.to_owned());
        token
    }

    /// The App whose installation token authenticates the request, if any: only tokens
    /// this server issued belong to an App (a personal token or an unknown one does not).
    pub(super) fn token_app(&self, headers: &HeaderMap) -> Option<String> {
        let value = headers.get(AUTHORIZATION)?.to_str().ok()?;
        let (_, token) = value.trim().split_once(' ')?;
        self.lock().app_tokens.get(token.trim()).cloned()
    }

    fn record(&self, template: &str, authenticated: bool) {
        let mut state = self.lock();
        state
            .requests
            .entry(template.to_owned())
            .or_default()
            .requests += 1;
        if !authenticated {
            state.unauthenticated += 1;
        }
    }

    fn record_not_modified(&self, template: &str) {
        let mut state = self.lock();
        state
            .requests
            .entry(template.to_owned())
            .or_default()
            .not_modified += 1;
    }

    /// Counts the request against every rule it matches and returns the fault of the first
    /// rule that fires on it.
    fn fault_for(&self, template: &str) -> Option<Fault> {
        let mut state = self.lock();
        let mut chosen: Option<FaultRule> = None;
        for armed in &mut state.rules {
            if !armed.rule.matches(template) {
                continue;
            }
            armed.seen += 1;
            let due = armed.rule.call == 0 || (armed.rule.call == armed.seen && !armed.fired);
            if chosen.is_none() && due {
                armed.fired = true;
                chosen = Some(armed.rule.clone());
            }
        }
        let rule = chosen?;
        state.fired.push(rule.to_string());
        Some(rule.fault)
    }

    /// GraphQL's points left and the window's reset (epoch seconds).
    pub(super) fn graphql_budget(&self) -> (u32, i64) {
        let state = self.lock();
        (state.graphql_remaining, state.reset)
    }

    /// Spends `cost` GraphQL points; `None` (nothing spent) when fewer are left.
    pub(super) fn spend_graphql(&self, cost: u32) -> Option<u32> {
        let mut state = self.lock();
        state.graphql_remaining = state.graphql_remaining.checked_sub(cost)?;
        Some(state.graphql_remaining)
    }

    /// Spends one call; `false` (nothing spent) when none is left.
    fn spend(&self) -> bool {
        let mut state = self.lock();
        if state.remaining == 0 {
            return false;
        }
        state.remaining -= 1;
        true
    }

    fn exhaust(&self) {
        self.lock().remaining = 0;
    }

    /// Writes the `X-RateLimit-*` headers.
    fn rate_headers(&self, headers: &mut HeaderMap) {
        let (limit, remaining, reset) = {
            let state = self.lock();
            (state.limit, state.remaining, state.reset)
        };
        let used = limit.saturating_sub(remaining);
        let pairs: [(&str, String); 5] = [
            ("x-ratelimit-limit", limit.to_string()),
            ("x-ratelimit-remaining", remaining.to_string()),
            ("x-ratelimit-used", used.to_string()),
            ("x-ratelimit-reset", reset.to_string()),
            ("x-ratelimit-resource", "core".to_owned()),
        ];
        for (name, value) in pairs {
            if let Ok(value) = HeaderValue::from_str(&value) {
                headers.insert(HeaderName::from_static(name), value);
            }
        }
    }

    /// A JSON error answer with the rate-limit headers.
    fn error(&self, status: StatusCode, message: &str) -> Response {
        let body = json!({ "message": message, "documentation_url": DOCUMENTATION_URL });
        let mut response = (status, axum::Json(body)).into_response();
        self.rate_headers(response.headers_mut());
        response
    }

    /// Primary exhaustion: 403 with remaining 0.
    fn exhausted(&self) -> Response {
        self.error(
            StatusCode::FORBIDDEN,
            "API rate limit exceeded for installation ID 1. If you reach out to GitHub Support for help, please include the request ID",
        )
    }
}

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

/// What the gate of one route knows: the shared state and the route's path template
/// (`None` for the fallback).
#[derive(Debug, Clone)]
pub(super) struct Gated {
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
pub(super) async fn gate(State(gated): State<Gated>, request: Request, next: Next) -> Response {
    let Gated { shared, path } = gated;
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
    let spends = !FREE_ROUTES.contains(&template.as_str()) && !graphql;
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
    let response = next.run(request).await;
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
                    tokio::time::sleep(Duration::from_millis(*millis)).await;
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
            tokio::time::sleep(Duration::from_millis(millis)).await;
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
