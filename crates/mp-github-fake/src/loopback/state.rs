//! The loopback server's shared state: the world behind the port, the request counts, the
//! primary and GraphQL rate limits, the armed fault rules and the installation tokens it
//! issued; and the error answers that carry the rate-limit headers. The middleware
//! (`middleware`) and every handler read it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::http::header::{AUTHORIZATION, HeaderName};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::RouteCount;
use super::fault::{Fault, FaultRule, FaultScript};
use super::webhook::Webhooks;
use crate::memory::MemoryGitHub;
use mp_github::rest::{Sleeper, SystemSleeper};

/// Where GitHub's error bodies point.
pub(super) const DOCUMENTATION_URL: &str = "https://docs.github.com/rest";

/// The primary limit when the world does not set one.
pub(super) const DEFAULT_LIMIT: u32 = 5000;

/// State shared by the middleware and the handlers.
#[derive(Debug)]
pub(super) struct Shared {
    /// The world, behind the GitHub port.
    pub(super) memory: Arc<MemoryGitHub>,
    /// `http://127.0.0.1:<port>`.
    pub(super) base_url: String,
    /// Whether the world's clock follows the system clock (`ServerClock::Real`).
    pub(super) real_clock: bool,
    /// The webhook deliveries, when the server has a target.
    pub(super) webhooks: Option<Webhooks>,
    /// The clock a `delay` fault is waited out on: the system's unless a test shares a
    /// [`mp_github::rest::VirtualClock`] with its client.
    pub(super) sleeper: Arc<dyn Sleeper>,
    state: Mutex<Counters>,
}

#[derive(Debug)]
struct Counters {
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
            sleeper: Arc::new(SystemSleeper),
            state: Mutex::new(Counters {
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

    fn lock(&self) -> MutexGuard<'_, Counters> {
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

    pub(super) fn record(&self, template: &str, authenticated: bool) {
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

    pub(super) fn record_not_modified(&self, template: &str) {
        let mut state = self.lock();
        state
            .requests
            .entry(template.to_owned())
            .or_default()
            .not_modified += 1;
    }

    /// Counts the request against every rule it matches and returns the fault of the first
    /// rule that fires on it.
    pub(super) fn fault_for(&self, template: &str) -> Option<Fault> {
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
    pub(super) fn spend(&self) -> bool {
        let mut state = self.lock();
        if state.remaining == 0 {
            return false;
        }
        state.remaining -= 1;
        true
    }

    pub(super) fn exhaust(&self) {
        self.lock().remaining = 0;
    }

    /// Writes the `X-RateLimit-*` headers.
    pub(super) fn rate_headers(&self, headers: &mut HeaderMap) {
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
    pub(super) fn error(&self, status: StatusCode, message: &str) -> Response {
        let body = json!({ "message": message, "documentation_url": DOCUMENTATION_URL });
        let mut response = (status, axum::Json(body)).into_response();
        self.rate_headers(response.headers_mut());
        response
    }

    /// Primary exhaustion: 403 with remaining 0.
    pub(super) fn exhausted(&self) -> Response {
        self.error(
            StatusCode::FORBIDDEN,
            "API rate limit exceeded for installation ID 1. If you reach out to GitHub Support for help, please include the request ID",
        )
    }
}
