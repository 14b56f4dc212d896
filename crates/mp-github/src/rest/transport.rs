//! The HTTP exchange under the REST adapter: headers, conditional requests, rate-limit
//! bookkeeping, bounded retries and the serial lane for writes.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::pace::{Pacer, READ_POINTS, WRITE_POINTS};
use std::time::Duration;

use mp_core::ids::RepoName;
use mp_core::port::GitHubError;
use reqwest::header::{self, HeaderMap, HeaderValue};
use reqwest::{Method, Url};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::cache::{CacheEntry, EtagCache};
use super::link;
use super::stats::RestStats;
use super::{Authenticator, RestError, RetryPolicy, Sleeper};

/// The least wait after a secondary rate limit without `Retry-After` (GitHub's advice).
const SECONDARY_MIN_WAIT: Duration = Duration::from_secs(60);

/// Statuses a read retries: timeouts and server-side failures.
const TRANSIENT: [u16; 5] = [408, 500, 502, 503, 504];

/// The most pages one listing follows; a server that keeps sending `next` links beyond
/// this is answering something the client cannot trust.
const MAX_PAGES: usize = 1_000;

/// The longest error message kept from an answer body.
const MAX_MESSAGE: usize = 300;

/// One request: the route template names it in stats and errors.
#[derive(Debug)]
pub(crate) struct Request<'a> {
    pub(crate) method: Method,
    pub(crate) route: &'static str,
    pub(crate) url: Url,
    pub(crate) repo: Option<&'a RepoName>,
    pub(crate) body: Option<serde_json::Value>,
    /// A GraphQL query: a POST that reads (retried, never serialised with the writes,
    /// never cached), counted against GraphQL's own budget.
    pub(crate) query: bool,
}

impl<'a> Request<'a> {
    /// A GET of `url`.
    pub(crate) fn get(route: &'static str, url: Url, repo: &'a RepoName) -> Self {
        Self {
            method: Method::GET,
            route,
            url,
            repo: Some(repo),
            body: None,
            query: false,
        }
    }

    /// A GraphQL mutation (`POST /graphql`) with its JSON body: a write, so neither retried
    /// nor cached, and serialised with the other writes.
    pub(crate) fn graphql_mutation(
        route: &'static str,
        url: Url,
        repo: &'a RepoName,
        body: serde_json::Value,
    ) -> Self {
        Self {
            method: Method::POST,
            route,
            url,
            repo: Some(repo),
            body: Some(body),
            query: false,
        }
    }

    /// A GraphQL query (`POST /graphql`) with its JSON body.
    pub(crate) fn graphql(
        route: &'static str,
        url: Url,
        repo: &'a RepoName,
        body: serde_json::Value,
    ) -> Self {
        Self {
            method: Method::POST,
            route,
            url,
            repo: Some(repo),
            body: Some(body),
            query: true,
        }
    }

    /// A write (`method` is not GET) with a JSON body.
    pub(crate) fn write(
        method: Method,
        route: &'static str,
        url: Url,
        repo: &'a RepoName,
        body: Option<serde_json::Value>,
    ) -> Self {
        Self {
            method,
            route,
            url,
            repo: Some(repo),
            body,
            query: false,
        }
    }

    /// Whether the request changes nothing: a GET or a GraphQL query.
    fn is_read(&self) -> bool {
        self.method == Method::GET || self.query
    }

    /// Whether an answer may be cached and asked for again with `If-None-Match`.
    fn is_cacheable(&self) -> bool {
        self.method == Method::GET
    }
}

/// A final answer: its status, body (from the cache for a 304) and `Link` header.
#[derive(Debug, Clone)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) body: Vec<u8>,
    pub(crate) link: Option<String>,
    route: &'static str,
    /// GitHub's `X-Accepted-GitHub-Permissions` header: the permission sets the route
    /// accepts, `;`-separated (sent to Apps and fine-grained tokens).
    accepted_permissions: Option<String>,
}

impl Answer {
    /// Whether the status is 2xx (a 304 is served as the cached 200).
    pub(crate) fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The body decoded as `T`; a body that does not decode is [`GitHubError::Malformed`].
    pub(crate) fn json<T: DeserializeOwned>(&self) -> Result<T, GitHubError> {
        serde_json::from_slice(&self.body).map_err(|err| GitHubError::Malformed {
            route: self.route.to_owned(),
            message: format!("HTTP {}: {err}", self.status),
        })
    }

    /// GitHub's error message: `message`, with the `errors[].message` details appended.
    pub(crate) fn message(&self) -> String {
        #[derive(Deserialize)]
        struct Detail {
            #[serde(default)]
            message: Option<String>,
        }
        #[derive(Deserialize)]
        struct ErrorBody {
            #[serde(default)]
            message: Option<String>,
            #[serde(default)]
            errors: Vec<Detail>,
        }
        let text = match serde_json::from_slice::<ErrorBody>(&self.body) {
            Ok(body) => {
                let mut parts: Vec<String> = body.message.into_iter().collect();
                parts.extend(body.errors.into_iter().filter_map(|d| d.message));
                parts.join(": ")
            }
            Err(_) => String::from_utf8_lossy(&self.body).trim().to_owned(),
        };
        if text.is_empty() {
            return format!("HTTP {}", self.status);
        }
        text.chars().take(MAX_MESSAGE).collect()
    }

    /// The refusal this answer stands for: 404/410 is [`GitHubError::NotFound`] of
    /// `what`, anything else [`GitHubError::Status`].
    pub(crate) fn refusal(&self, what: impl FnOnce() -> String) -> GitHubError {
        match self.status {
            404 | 410 => GitHubError::NotFound { what: what() },
            status => GitHubError::Status {
                route: self.route.to_owned(),
                status,
                message: match (status, &self.accepted_permissions) {
                    (403, Some(sets)) => {
                        format!("{} (accepted permissions: {sets})", self.message())
                    }
                    _ => self.message(),
                },
            },
        }
    }
}

/// What one exchange produced, before the retry decision.
enum Exchange {
    /// A whole answer.
    Answered(Received),
    /// No usable answer: connection, timeout or body-read failure.
    Lost(String),
}

struct Received {
    status: u16,
    body: Vec<u8>,
    link: Option<String>,
    etag: Option<String>,
    retry_after: Option<u64>,
    remaining: Option<u32>,
    reset: Option<u64>,
    accepted_permissions: Option<String>,
}

/// What to do after an exchange.
enum Step {
    Done(Result<Answer, GitHubError>),
    Retry(Duration),
}

/// What the rate-limit headers say is left: the lowest `remaining` of the newest window
/// seen. Answers to concurrent requests arrive in any order, so the last one to arrive
/// is not the last one GitHub counted.
#[derive(Debug, Default, Clone, Copy)]
struct Budget {
    remaining: Option<u32>,
    reset: Option<u64>,
}

impl Budget {
    /// Takes in one answer's `remaining` and `reset`: a later window replaces what is
    /// known, an earlier one is stale and ignored, the same window (or an answer without
    /// a reset) can only lower what is left.
    fn observe(&mut self, remaining: Option<u32>, reset: Option<u64>) {
        match (reset, self.reset) {
            (Some(new), Some(known)) if new < known => return,
            (Some(new), Some(known)) if new > known => {
                self.reset = Some(new);
                self.remaining = remaining.or(self.remaining);
                return;
            }
            (Some(new), None) => self.reset = Some(new),
            _ => {}
        }
        if let Some(new) = remaining {
            self.remaining = Some(self.remaining.map_or(new, |known| known.min(new)));
        }
    }
}

/// Which of GitHub's budgets an answer reported: `x-ratelimit-resource` names it.
fn is_graphql_resource(resource: Option<&str>, request: &Request<'_>) -> bool {
    resource.map_or(request.query, |r| r == "graphql")
}

/// The HTTP side of [`super::RestGitHub`].
pub(crate) struct Transport {
    http: reqwest::Client,
    api_url: String,
    base: Url,
    auth: Authenticator,
    retry: RetryPolicy,
    cache: Mutex<EtagCache>,
    stats: Mutex<RestStats>,
    budget: Mutex<Budget>,
    /// GraphQL's own points budget, as its answers report it.
    graphql_budget: Mutex<Budget>,
    /// Why the GraphQL path fell back to REST, one line per repository and time.
    fallbacks: Mutex<Vec<String>>,
    /// Every wait a rate limit imposed before a retry, one line each (what the tick reports).
    limit_waits: Mutex<Vec<String>>,
    /// Held across each write so writes never overlap (GitHub's advice against secondary
    /// limits).
    writes: tokio::sync::Mutex<()>,
    /// GitHub's points-per-minute secondary limit, kept under; `None` paces nothing.
    pacer: Option<Pacer>,
    /// How the transport waits, and the time its pacing reads.
    sleeper: Arc<dyn Sleeper>,
    /// The timeout of one request, also raced on the sleeper's clock.
    timeout: Duration,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Counters and cache entries stay usable after a panic elsewhere.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Transport {
    pub(crate) fn new(
        api_url: &str,
        auth: Authenticator,
        timeout: Duration,
        retry: RetryPolicy,
        user_agent: &str,
        points_per_minute: Option<u32>,
        sleeper: Arc<dyn Sleeper>,
    ) -> Result<Self, RestError> {
        let invalid = |reason: &str| RestError::InvalidApiUrl {
            url: api_url.to_owned(),
            reason: reason.to_owned(),
        };
        let base = Url::parse(api_url).map_err(|err| invalid(&err.to_string()))?;
        if !matches!(base.scheme(), "http" | "https") {
            return Err(invalid("expected an http or https url"));
        }
        if base.cannot_be_a_base() || base.host_str().is_none() {
            return Err(invalid("expected an absolute url with a host"));
        }
        if base.query().is_some() || base.fragment().is_some() {
            return Err(invalid("expected no query or fragment"));
        }
        let agent = HeaderValue::from_str(user_agent)
            .map_err(|_| RestError::InvalidUserAgent(user_agent.to_owned()))?;
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT,
            HeaderValue::from_static("application/vnd.github+json"),
        );
        headers.insert(
            "X-GitHub-Api-Version",
            HeaderValue::from_static("2022-11-28"),
        );
        let mut builder = reqwest::Client::builder()
            .timeout(timeout)
            .user_agent(agent)
            .default_headers(headers);
        if base.scheme() == "http" {
            // A plain-HTTP API (a server on this machine) needs no TLS roots: loading the
            // platform's certificate store costs more than a whole tick against it.
            builder = builder.tls_certs_only(std::iter::empty());
        }
        let http = builder
            .build()
            .map_err(|err| RestError::Client(err.to_string()))?;
        Ok(Self {
            http,
            api_url: api_url.trim_end_matches('/').to_owned(),
            base,
            auth,
            retry,
            cache: Mutex::new(EtagCache::default()),
            stats: Mutex::new(RestStats::default()),
            budget: Mutex::new(Budget::default()),
            graphql_budget: Mutex::new(Budget::default()),
            fallbacks: Mutex::new(Vec::new()),
            limit_waits: Mutex::new(Vec::new()),
            writes: tokio::sync::Mutex::new(()),
            pacer: points_per_minute.map(|points| Pacer::new(points, sleeper.now())),
            sleeper,
            timeout,
        })
    }

    pub(crate) fn api_url(&self) -> &str {
        &self.api_url
    }

    pub(crate) fn http(&self) -> &reqwest::Client {
        &self.http
    }

    pub(crate) fn auth(&self) -> &Authenticator {
        &self.auth
    }

    pub(crate) fn replace_cache(&self, cache: EtagCache) {
        *lock(&self.cache) = cache;
    }

    pub(crate) fn cache_snapshot(&self) -> EtagCache {
        lock(&self.cache).clone()
    }

    pub(crate) fn stats(&self) -> RestStats {
        lock(&self.stats).clone()
    }

    pub(crate) fn rate_limit_remaining(&self) -> Option<u32> {
        lock(&self.budget).remaining
    }

    /// GraphQL points left as a query's `rateLimit { remaining }` reported them.
    pub(crate) fn note_graphql_remaining(&self, remaining: u32) {
        lock(&self.graphql_budget).observe(Some(remaining), None);
    }

    /// Records why the GraphQL path fell back to REST.
    pub(crate) fn note_fallback(&self, why: String) {
        lock(&self.fallbacks).push(why);
    }

    /// Every fallback recorded so far.
    pub(crate) fn fallbacks(&self) -> Vec<String> {
        lock(&self.fallbacks).clone()
    }

    /// Every wait a rate limit imposed so far, one line each.
    pub(crate) fn limit_waits(&self) -> Vec<String> {
        lock(&self.limit_waits).clone()
    }

    /// GraphQL points left in its window, as last reported.
    pub(crate) fn graphql_remaining(&self) -> Option<u32> {
        lock(&self.graphql_budget).remaining
    }

    pub(crate) fn rate_limit_reset(&self) -> Option<u64> {
        lock(&self.budget).reset
    }

    /// Waits for the write lane: writes made outside [`Transport::send`] (the git push)
    /// hold it too.
    pub(crate) async fn write_lane(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.writes.lock().await
    }

    /// Counts one call made outside the REST API (it spends nothing of the limit).
    pub(crate) fn record_external(&self, route: &str, succeeded: bool) {
        let mut stats = lock(&self.stats);
        let entry = stats.entry(route);
        entry.requests += 1;
        if !succeeded {
            entry.failures += 1;
        }
    }

    /// `<api>/<segments...>`, each segment percent-encoded on its own.
    pub(crate) fn url<I, S>(&self, segments: I) -> Url
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(segments);
        }
        url
    }

    /// `<api>/repos/<owner>/<name>/<segments...>`.
    pub(crate) fn repo_url(&self, repo: &RepoName, segments: &[&str]) -> Url {
        let head = ["repos", repo.owner(), repo.name()];
        self.url(head.iter().chain(segments))
    }

    /// Sends `request` with the retries its method allows and returns the final answer
    /// (any status the retry rules do not absorb).
    ///
    /// # Errors
    /// [`GitHubError::Throttled`] / [`GitHubError::RateLimited`] when limits persist,
    /// [`GitHubError::Unavailable`] when no usable answer came.
    pub(crate) async fn send(&self, request: &Request<'_>) -> Result<Answer, GitHubError> {
        let _serial = if request.is_read() {
            None
        } else {
            Some(self.writes.lock().await)
        };
        // The primary limit is spent until its reset: asking again only earns more 403s
        // (and GitHub may ban an integration that keeps asking).
        if let Some(refusal) = self.exhausted(request.query) {
            lock(&self.stats).entry(request.route).failures += 1;
            return Err(refusal);
        }
        let mut attempt: u32 = 0;
        loop {
            if let Some(pacer) = self.pacer.as_ref().filter(|_| !request.query) {
                let points = if request.is_read() {
                    READ_POINTS
                } else {
                    WRITE_POINTS
                };
                let wait = pacer.reserve(points, self.sleeper.now());
                if !wait.is_zero() {
                    lock(&self.stats).entry(request.route).paced += 1;
                    self.sleeper.sleep(wait).await;
                }
            }
            let exchange = self.exchange(request).await?;
            match self.judge(request, exchange, attempt) {
                Step::Done(result) => {
                    let failed = !result.as_ref().is_ok_and(|a| a.status < 400);
                    if failed {
                        lock(&self.stats).entry(request.route).failures += 1;
                    }
                    return result;
                }
                Step::Retry(wait) => {
                    lock(&self.stats).entry(request.route).retries += 1;
                    self.sleeper.sleep(wait).await;
                    attempt += 1;
                }
            }
        }
    }

    /// [`GitHubError::RateLimited`] when the last answer left no calls in a window whose
    /// reset is still ahead.
    fn exhausted(&self, graphql: bool) -> Option<GitHubError> {
        let budget = lock(if graphql {
            &self.graphql_budget
        } else {
            &self.budget
        });
        let reset_ahead = budget
            .reset
            .is_some_and(|reset| until(reset) > Duration::ZERO);
        (budget.remaining == Some(0) && reset_ahead)
            .then_some(GitHubError::RateLimited { remaining: 0 })
    }

    /// Sends a GET and decodes a 2xx answer as `T`; other statuses become the refusal of
    /// `what`.
    pub(crate) async fn get_json<T: DeserializeOwned>(
        &self,
        request: &Request<'_>,
        what: impl FnOnce() -> String,
    ) -> Result<T, GitHubError> {
        let answer = self.send(request).await?;
        if !answer.is_success() {
            return Err(answer.refusal(what));
        }
        answer.json()
    }

    /// Every page of a listing: `first` and the `rel="next"` pages after it, each page
    /// decoded as `P` and unwrapped into items by `items`. Stops early once `limit` items
    /// were read.
    ///
    /// # Errors
    /// The refusal of `what` for an error status; [`GitHubError::Malformed`] for an
    /// undecodable page or a `next` link off the API host.
    pub(crate) async fn get_pages<P, T>(
        &self,
        route: &'static str,
        first: Url,
        repo: &RepoName,
        what: &(dyn Fn() -> String + Sync),
        limit: Option<usize>,
        items: impl Fn(P) -> Vec<T>,
    ) -> Result<Vec<T>, GitHubError>
    where
        P: DeserializeOwned,
    {
        self.get_pages_until(route, first, repo, what, items, |found: &[T]| {
            limit.is_some_and(|limit| found.len() >= limit)
        })
        .await
    }

    /// [`Transport::get_pages`], stopping after the first page at which `enough` holds
    /// for everything read so far.
    ///
    /// # Errors
    /// As [`Transport::get_pages`].
    pub(crate) async fn get_pages_until<P, T>(
        &self,
        route: &'static str,
        first: Url,
        repo: &RepoName,
        what: &(dyn Fn() -> String + Sync),
        items: impl Fn(P) -> Vec<T>,
        enough: impl Fn(&[T]) -> bool,
    ) -> Result<Vec<T>, GitHubError>
    where
        P: DeserializeOwned,
    {
        let mut found = Vec::new();
        let mut url = first;
        for _ in 0..MAX_PAGES {
            let answer = self.send(&Request::get(route, url, repo)).await?;
            if !answer.is_success() {
                return Err(answer.refusal(what));
            }
            found.extend(items(answer.json::<P>()?));
            if enough(&found) {
                return Ok(found);
            }
            let Some(next) = answer.link.as_deref().and_then(link::next_url) else {
                return Ok(found);
            };
            url = self.same_origin(route, next)?;
        }
        Err(GitHubError::Malformed {
            route: route.to_owned(),
            message: format!("more than {MAX_PAGES} pages"),
        })
    }

    /// [`Transport::get_pages`], reading at most `max_pages` pages: the items, and whether
    /// the last page read had no `next` link (the listing is complete).
    ///
    /// # Errors
    /// As [`Transport::get_pages`].
    pub(crate) async fn get_pages_capped<P, T>(
        &self,
        route: &'static str,
        first: Url,
        repo: &RepoName,
        what: &(dyn Fn() -> String + Sync),
        items: impl Fn(P) -> Vec<T>,
        max_pages: usize,
    ) -> Result<(Vec<T>, bool), GitHubError>
    where
        P: DeserializeOwned,
    {
        let mut found = Vec::new();
        let mut url = first;
        for _ in 0..max_pages.clamp(1, MAX_PAGES) {
            let answer = self.send(&Request::get(route, url, repo)).await?;
            if !answer.is_success() {
                return Err(answer.refusal(what));
            }
            found.extend(items(answer.json::<P>()?));
            let Some(next) = answer.link.as_deref().and_then(link::next_url) else {
                return Ok((found, true));
            };
            url = self.same_origin(route, next)?;
        }
        Ok((found, false))
    }

    /// A `next` link, refused unless it points at the API host (the token goes with it).
    fn same_origin(&self, route: &'static str, next: &str) -> Result<Url, GitHubError> {
        let url = Url::parse(next).map_err(|err| GitHubError::Malformed {
            route: route.to_owned(),
            message: format!("unreadable next link: {err}"),
        })?;
        if url.origin() != self.base.origin() {
            return Err(GitHubError::Malformed {
                route: route.to_owned(),
                message: format!(
                    "next link leaves the api host: {}",
                    url.origin().ascii_serialization()
                ),
            });
        }
        Ok(url)
    }

    /// One HTTP request and its whole answer, within the timeout on the system clock (the
    /// HTTP client's) and on the sleeper's ([`Sleeper::request_deadline`]). Only
    /// authentication fails here; transport failures come back as [`Exchange::Lost`].
    async fn exchange(&self, request: &Request<'_>) -> Result<Exchange, GitHubError> {
        // As the HTTP client's own timeout is told.
        let timed_out = || Ok(Exchange::Lost("timed out: operation timed out".to_owned()));
        let started = self.sleeper.now();
        tokio::select! {
            biased;
            () = self.sleeper.request_deadline(self.timeout) => timed_out(),
            exchange = self.exchange_once(request) => {
                // An answer that arrives after the sleeper's clock passed the deadline is
                // lost too, whichever of the two the runtime happened to see first.
                if self.sleeper.deadline_passed(started, self.timeout) {
                    timed_out()
                } else {
                    exchange
                }
            }
        }
    }

    async fn exchange_once(&self, request: &Request<'_>) -> Result<Exchange, GitHubError> {
        let authorization = self
            .auth
            .header(&self.http, &self.api_url, request.repo)
            .await?;
        let key = request.url.as_str();
        let mut builder = self
            .http
            .request(request.method.clone(), request.url.clone())
            .header(header::AUTHORIZATION, authorization);
        if request.is_cacheable()
            && let Some(etag) = lock(&self.cache).etag(key)
            && let Ok(value) = HeaderValue::from_str(etag)
        {
            builder = builder.header(header::IF_NONE_MATCH, value);
        }
        if let Some(body) = &request.body {
            builder = builder.json(body);
        }
        lock(&self.stats).entry(request.route).requests += 1;
        let response = match builder.send().await {
            Ok(response) => response,
            Err(err) => return Ok(Exchange::Lost(describe(&err))),
        };
        let status = response.status().as_u16();
        let headers = response.headers();
        let text = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(|v| v.trim().to_owned())
        };
        let remaining = text("x-ratelimit-remaining").and_then(|v| v.parse::<u32>().ok());
        let reset = text("x-ratelimit-reset").and_then(|v| v.parse::<u64>().ok());
        let retry_after = text("retry-after").and_then(|v| v.parse::<u64>().ok());
        let link = text("link");
        let etag = text("etag");
        let accepted_permissions = text("x-accepted-github-permissions").filter(|v| !v.is_empty());
        let graphql = is_graphql_resource(text("x-ratelimit-resource").as_deref(), request);
        {
            let mut budget = lock(if graphql {
                &self.graphql_budget
            } else {
                &self.budget
            });
            budget.observe(remaining, reset);
        }
        {
            let mut stats = lock(&self.stats);
            let route = stats.entry(request.route);
            if status == 304 {
                route.not_modified += 1;
            } else {
                route.spent += 1;
            }
        }
        let body = match response.bytes().await {
            Ok(body) => body.to_vec(),
            Err(err) => {
                return Ok(Exchange::Lost(format!(
                    "HTTP {status}, body unreadable: {}",
                    describe(&err)
                )));
            }
        };
        Ok(Exchange::Answered(Received {
            status,
            body,
            link,
            etag,
            retry_after,
            remaining,
            reset,
            accepted_permissions,
        }))
    }

    /// Whether to retry, and the final answer otherwise.
    fn judge(&self, request: &Request<'_>, exchange: Exchange, attempt: u32) -> Step {
        let route = request.route;
        let policy = &self.retry;
        let received = match exchange {
            Exchange::Lost(message) => {
                return self.transient(request, attempt, message);
            }
            Exchange::Answered(received) => received,
        };
        let status = received.status;
        // GitHub's secondary limit often comes as a bare 403, without `Retry-After` and with
        // calls left in the primary window; only its message tells it from a refusal.
        let secondary = status == 403
            && String::from_utf8_lossy(&received.body)
                .to_ascii_lowercase()
                .contains("secondary rate limit");
        let limited = status == 429
            || (status == 403
                && (received.retry_after.is_some() || received.remaining == Some(0) || secondary));
        if limited {
            let primary =
                received.remaining == Some(0) && received.retry_after.is_none() && !secondary;
            let wait = match (received.retry_after, received.reset) {
                (Some(seconds), _) => Duration::from_secs(seconds),
                (None, Some(reset)) if primary => until(reset),
                // GitHub asks to wait at least a minute, then back off exponentially.
                _ if secondary => policy.backoff(attempt).max(SECONDARY_MIN_WAIT),
                _ => policy.backoff(attempt),
            };
            let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
            if wait > policy.max_wait {
                return Step::Done(Err(if primary {
                    GitHubError::RateLimited { remaining: 0 }
                } else {
                    GitHubError::Throttled {
                        retry_after_secs: seconds,
                    }
                }));
            }
            if attempt >= policy.max_retries {
                return Step::Done(Err(if primary {
                    GitHubError::RateLimited { remaining: 0 }
                } else {
                    GitHubError::Throttled {
                        retry_after_secs: seconds,
                    }
                }));
            }
            let which = if primary { "primary" } else { "secondary" };
            let repo = request
                .repo
                .map(|repo| format!(" for {repo}"))
                .unwrap_or_default();
            let line = format!(
                "GitHub's {which} rate limit on `{route}`{repo} (HTTP {status}): waited {seconds} s before retry {} of {}",
                attempt + 1,
                policy.max_retries
            );
            lock(&self.limit_waits).push(line);
            return Step::Retry(wait);
        }
        if TRANSIENT.contains(&status) {
            // GitHub's own words, when the body carries them, say more than the status.
            let said = Answer {
                status,
                body: received.body.clone(),
                link: None,
                route: request.route,
                accepted_permissions: None,
            }
            .message();
            let message = if said.starts_with("HTTP ") {
                said
            } else {
                format!("HTTP {status}: {said}")
            };
            return self.transient(request, attempt, message);
        }
        let key = request.url.as_str();
        if request.is_cacheable() {
            if status == 304 {
                return match lock(&self.cache).reuse(key) {
                    Some(entry) => Step::Done(Ok(Answer {
                        status: 200,
                        body: entry.body.into_bytes(),
                        link: entry.link,
                        route,
                        accepted_permissions: None,
                    })),
                    None => Step::Done(Err(GitHubError::Malformed {
                        route: route.to_owned(),
                        message: "304 Not Modified for an answer that is not cached".to_owned(),
                    })),
                };
            }
            if status == 200 {
                let mut cache = lock(&self.cache);
                match (&received.etag, std::str::from_utf8(&received.body)) {
                    (Some(etag), Ok(body)) => cache.store(
                        key,
                        CacheEntry {
                            etag: etag.clone(),
                            body: body.to_owned(),
                            link: received.link.clone(),
                        },
                    ),
                    _ => cache.forget(key),
                }
            }
        }
        Step::Done(Ok(Answer {
            status,
            body: received.body,
            link: received.link,
            route,
            accepted_permissions: received.accepted_permissions,
        }))
    }

    /// A failure that may pass: reads retry with back-off, writes give up at once (the
    /// write may have been applied, and must not be sent twice).
    fn transient(&self, request: &Request<'_>, attempt: u32, message: String) -> Step {
        let route = request.route.to_owned();
        if !request.is_read() {
            return Step::Done(Err(GitHubError::Unavailable {
                route,
                message: format!("{message}; a write is not retried, it may have been applied"),
            }));
        }
        if attempt < self.retry.max_retries {
            return Step::Retry(self.retry.backoff(attempt));
        }
        Step::Done(Err(GitHubError::Unavailable {
            route,
            message: format!("{message} after {attempt} retries"),
        }))
    }
}

/// The time until the epoch second `reset`, zero when it has passed.
fn until(reset: u64) -> Duration {
    let now = jiff::Timestamp::now().as_second();
    let reset = i64::try_from(reset).unwrap_or(i64::MAX);
    Duration::from_secs(u64::try_from(reset.saturating_sub(now)).unwrap_or(0))
}

/// A transport error in a few words, without the URL's query or any header.
fn describe(err: &reqwest::Error) -> String {
    let kind = if err.is_timeout() {
        "timed out"
    } else if err.is_connect() {
        "connection failed"
    } else if err.is_body() || err.is_decode() {
        "body unreadable"
    } else if err.is_request() {
        "request failed"
    } else {
        "transport error"
    };
    let mut detail = String::new();
    let mut source = std::error::Error::source(err);
    while let Some(inner) = source {
        detail = inner.to_string();
        source = inner.source();
    }
    if detail.is_empty() {
        kind.to_owned()
    } else {
        format!("{kind}: {detail}")
    }
}

#[cfg(test)]
mod budget_tests {
    use super::Budget;

    #[test]
    fn the_budget_keeps_the_lowest_remaining_of_the_newest_window() {
        let mut budget = Budget::default();
        budget.observe(Some(4_980), Some(100));
        // A concurrent answer counted earlier arrives later: it does not raise the figure.
        budget.observe(Some(4_990), Some(100));
        assert_eq!((budget.remaining, budget.reset), (Some(4_980), Some(100)));
        // An answer without a reset (GraphQL's rateLimit in a body) can only lower it.
        budget.observe(Some(4_970), None);
        budget.observe(Some(4_975), None);
        assert_eq!(budget.remaining, Some(4_970));
        // A new window replaces it; a straggler from the old one is ignored.
        budget.observe(Some(4_999), Some(200));
        budget.observe(Some(4_960), Some(100));
        assert_eq!((budget.remaining, budget.reset), (Some(4_999), Some(200)));
        // Headers without a remaining keep what is known.
        budget.observe(None, Some(200));
        assert_eq!(budget.remaining, Some(4_999));
    }
}
