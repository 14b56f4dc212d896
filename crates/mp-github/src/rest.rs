//! The REST adapter: the GitHub port over GitHub's REST API (reqwest with rustls).
//!
//! [`RestGitHub`] implements [`mp_core::port::GitHub`] and [`mp_core::port::GitHubHistory`]
//! by translating each port call into the REST routes of API version 2022-11-28 and
//! GitHub's JSON back into the core's values (the same values `MemoryGitHub` returns for
//! the same world). Reads are conditional (an [`EtagCache`]) and retried on transient
//! failures; writes are serial and retried only after a secondary-limit refusal, so a
//! write is never applied twice.

pub mod auth;
mod cache;
mod doctor;
pub mod git_revert;
pub mod graphql;
mod history;
mod link;
pub mod merge_queue;
mod model;
mod pace;
mod pulls;
mod revert;
mod sleeper;
mod stats;
mod transport;

pub use graphql::ReadPath;
pub use pace::GITHUB_REST_POINTS_PER_MINUTE;

#[cfg(test)]
mod tests;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use mp_core::ids::Login;

pub use auth::{AppCredentials, AuthError, Authenticator, Credentials, Secret};
pub use cache::EtagCache;
pub use sleeper::{Sleeper, SteppedSleeper, SystemSleeper, VirtualClock};
pub use stats::{RestStats, RouteStats};

use transport::Transport;

/// GitHub's public API root.
pub const GITHUB_API_URL: &str = "https://api.github.com";

/// How often and how long the client retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first request (so at most `max_retries + 1` requests per call).
    pub max_retries: u32,
    /// The first back-off delay; attempt `n` waits `base_delay * 2^n`.
    pub base_delay: Duration,
    /// The longest back-off delay.
    pub max_delay: Duration,
    /// The longest wait the client accepts from `Retry-After` or the rate-limit reset; a
    /// longer one gives up at once.
    pub max_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 3,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(60),
            max_wait: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// A millisecond-scale policy for tests: 3 retries, 1 ms base, 10 ms cap, 50 ms wait.
    pub fn fast() -> Self {
        Self {
            max_retries: 3,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(10),
            max_wait: Duration::from_millis(50),
        }
    }

    /// The back-off before retry number `attempt + 1`: `base_delay * 2^attempt`, capped.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let factor = 2_u32.checked_pow(attempt).unwrap_or(u32::MAX);
        self.base_delay
            .checked_mul(factor)
            .unwrap_or(self.max_delay)
            .min(self.max_delay)
    }
}

/// How [`mp_core::port::GitHubHistory::push_revert`] creates the revert branch.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RevertMode {
    /// Clone, revert and push with git over HTTPS, authenticated with the installation
    /// token.
    Git {
        /// The remote URL with `{repo}` standing for `owner/name`, e.g.
        /// `https://github.com/{repo}.git`.
        remote_template: String,
    },
    /// `POST /repos/{o}/{r}/_loopback/revert` on the loopback server (its world has no git
    /// storage; there is no such route on GitHub).
    LoopbackExtension,
}

impl RevertMode {
    /// Git against the host that serves `api_url`: `https://github.com/{repo}.git` for
    /// `api.github.com`, `<scheme>://<host>/{repo}.git` for GitHub Enterprise Server
    /// (`<scheme>://<host>/api/v3`) and any other host.
    pub fn git_for(api_url: &str) -> Self {
        let remote_template = match reqwest::Url::parse(api_url) {
            Ok(url) if url.host_str() == Some("api.github.com") => {
                "https://github.com/{repo}.git".to_owned()
            }
            Ok(url) => {
                let mut origin = url.clone();
                origin.set_path("");
                origin.set_query(None);
                origin.set_fragment(None);
                format!("{}{{repo}}.git", origin.as_str())
            }
            Err(_) => "https://github.com/{repo}.git".to_owned(),
        };
        Self::Git { remote_template }
    }
}

/// Where and how the client talks to GitHub.
#[derive(Debug, Clone)]
pub struct RestConfig {
    /// The API root: `https://api.github.com`, or `http(s)://host/api/v3` for GitHub
    /// Enterprise Server, or a loopback server's address.
    pub api_url: String,
    /// How requests authenticate.
    pub credentials: Credentials,
    /// The timeout of one request, body included.
    pub timeout: Duration,
    /// Retries and waits.
    pub retry: RetryPolicy,
    /// The `User-Agent` header GitHub requires.
    pub user_agent: String,
    /// How reverts are pushed.
    pub revert: RevertMode,
    /// The App a plain token acts for, when it is an installation token (`ghs_...`, e.g.
    /// Actions' `GITHUB_TOKEN`, whose App is `github-actions`): GitHub does not serve
    /// `GET /user` to those, so the bot's login is `<slug>[bot]`. Normally env.yml's
    /// `bot_app_slug`. Ignored for App credentials (`GET /app` names the App).
    pub token_app_slug: Option<String>,
    /// GitHub's secondary limit on REST points per minute (900; a read costs 1 point, a
    /// write 5): the client sends at 90 % of it, 5 % may go at once, no rolling minute
    /// spends more than 95 %, requests waiting for their points (decisions/0034). `None` paces nothing (a loopback server).
    pub points_per_minute: Option<u32>,
    /// Where pull requests are read from (`env.yml` `reads`): REST calls per part, or one
    /// GraphQL query per page of pull requests (decisions/0035).
    pub reads: ReadPath,
    /// How the client waits (back-off, `Retry-After`, rate-limit resets, pacing) and the
    /// time its pacing reads: the system's ([`SystemSleeper`]) unless a test steps its own
    /// ([`SteppedSleeper`]).
    pub sleeper: Arc<dyn Sleeper>,
}

impl RestConfig {
    /// The defaults for `api_url`: a 30 s timeout, [`RetryPolicy::default`], the
    /// `mp-gate` user agent and git reverts against the matching host.
    pub fn new(api_url: impl Into<String>, credentials: Credentials) -> Self {
        let api_url = api_url.into();
        let revert = RevertMode::git_for(&api_url);
        Self {
            api_url,
            credentials,
            timeout: Duration::from_secs(30),
            retry: RetryPolicy::default(),
            user_agent: concat!("mp-gate/", env!("CARGO_PKG_VERSION")).to_owned(),
            revert,
            token_app_slug: None,
            points_per_minute: Some(GITHUB_REST_POINTS_PER_MINUTE),
            reads: ReadPath::Rest,
            sleeper: Arc::new(SystemSleeper),
        }
    }
}

/// A configuration the client cannot start with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RestError {
    /// The API URL is not an absolute `http` or `https` URL.
    #[error("invalid api url {url:?}: {reason}")]
    InvalidApiUrl {
        /// The URL as configured.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The user agent is not a valid header value.
    #[error("invalid user agent {0:?}")]
    InvalidUserAgent(String),
    /// The credentials cannot be used.
    #[error("credentials: {0}")]
    Auth(#[from] AuthError),
    /// The HTTP client could not be built (e.g. no TLS roots).
    #[error("http client: {0}")]
    Client(String),
}

/// The GitHub port over GitHub's REST API.
pub struct RestGitHub {
    transport: Transport,
    revert: RevertMode,
    bot: tokio::sync::OnceCell<Login>,
    reads: ReadPath,
}

impl fmt::Debug for RestGitHub {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RestGitHub")
            .field("api_url", &self.transport.api_url())
            .field("revert", &self.revert)
            .finish_non_exhaustive()
    }
}

impl RestGitHub {
    /// A client for `config`, with an empty cache.
    ///
    /// # Errors
    /// [`RestError`] when the API URL, the user agent or the credentials are unusable.
    pub fn new(config: RestConfig) -> Result<Self, RestError> {
        let RestConfig {
            api_url,
            credentials,
            timeout,
            retry,
            user_agent,
            revert,
            token_app_slug,
            points_per_minute,
            reads,
            sleeper,
        } = config;
        let authenticator = Authenticator::new(credentials)?
            .with_token_app_slug(token_app_slug)
            .with_retry(retry)
            .with_sleeper(Arc::clone(&sleeper));
        let transport = Transport::new(
            &api_url,
            authenticator,
            timeout,
            retry,
            &user_agent,
            points_per_minute,
            sleeper,
        )?;
        Ok(Self {
            transport,
            revert,
            bot: tokio::sync::OnceCell::new(),
            reads,
        })
    }

    /// Starts from `cache` (e.g. [`EtagCache::load`]ed from the previous run).
    pub fn with_cache(self, cache: EtagCache) -> Self {
        self.transport.replace_cache(cache);
        self
    }

    /// The cache as it is now, for [`EtagCache::save`].
    pub fn cache_snapshot(&self) -> EtagCache {
        self.transport.cache_snapshot()
    }

    /// When the primary rate-limit window resets (epoch seconds), as last reported.
    pub fn rate_limit_reset(&self) -> Option<u64> {
        self.transport.rate_limit_reset()
    }

    /// Requests, 304s, retries and failures so far, by route.
    pub fn stats(&self) -> RestStats {
        self.transport.stats()
    }

    /// Every wait a rate limit imposed before a retry so far (GitHub's secondary limit asks
    /// for at least a minute), one line each: the tick reports them as warnings.
    pub fn rate_limit_waits(&self) -> Vec<String> {
        self.transport.limit_waits()
    }

    /// Why the GraphQL read path fell back to REST so far, one line each.
    pub fn graphql_fallbacks(&self) -> Vec<String> {
        self.transport.fallbacks()
    }
}
