//! Credentials and authentication: plain tokens, GitHub App JWTs and installation tokens.
//!
//! A plain token is sent as is. An App signs a short-lived RS256 JWT (`iat` 60 s in the
//! past, `exp` 9 min ahead, `iss` = App id) and trades it for an installation token
//! (`POST /app/installations/{id}/access_tokens`), which is cached until five minutes
//! before it expires. Secrets never appear in `Debug` output or in error messages.

mod pem;

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use mp_core::ids::{Login, RepoName};
use mp_core::port::GitHubError;
use reqwest::header::{ACCEPT, HeaderValue, USER_AGENT};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use tokio::sync::Mutex;

/// A secret string: `Debug` and `Display` print `[redacted]`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The secret itself, for the one place that must send it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// A GitHub App's credentials.
#[derive(Debug, Clone)]
pub struct AppCredentials {
    /// The App id (the JWT issuer).
    pub app_id: u64,
    /// The PEM private key GitHub issued for the App.
    pub private_key: Secret,
    /// The installation to act as; discovered from the repository when `None`.
    pub installation_id: Option<u64>,
}

/// How the client authenticates.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Credentials {
    /// A personal or installation token, sent as `Bearer`.
    Token(Secret),
    /// A GitHub App: JWT, then installation tokens.
    App(AppCredentials),
}

/// How an installation token (an App's, or Actions' `GITHUB_TOKEN`) starts.
pub const INSTALLATION_TOKEN_PREFIX: &str = "ghs_";

/// The environment variable holding a plain token.
pub const ENV_TOKEN: &str = "MP_GITHUB_TOKEN";
/// The environment variable holding the App id.
pub const ENV_APP_ID: &str = "MP_APP_ID";
/// The environment variable holding the App's PEM private key.
pub const ENV_APP_PRIVATE_KEY: &str = "MP_APP_PRIVATE_KEY";
/// The environment variable naming a file with the App's PEM private key.
pub const ENV_APP_PRIVATE_KEY_PATH: &str = "MP_APP_PRIVATE_KEY_PATH";
/// The environment variable holding the installation id (optional).
pub const ENV_INSTALLATION_ID: &str = "MP_INSTALLATION_ID";

impl Credentials {
    /// Reads credentials through `get` (normally `std::env::var(..).ok()`).
    ///
    /// - `MP_APP_ID` with `MP_APP_PRIVATE_KEY` (PEM text; literal `\n` escapes, as CI secrets
    ///   sometimes carry them, are turned into line breaks) or `MP_APP_PRIVATE_KEY_PATH`
    ///   (a file holding the PEM), plus an optional numeric `MP_INSTALLATION_ID`: an App.
    /// - Otherwise `MP_GITHUB_TOKEN`: a plain token.
    /// - Nothing set: `Ok(None)`.
    ///
    /// When both an App and a token are configured the App wins: installation tokens are
    /// short-lived and scoped, which is what production should use; the token is ignored.
    /// Empty values count as unset (CI expands a missing secret to an empty string).
    ///
    /// # Errors
    /// [`AuthError::Missing`] for half an App configuration (an id without a key, a key or an
    /// installation id without an App id, an unreadable key file) and [`AuthError::Invalid`]
    /// for non-numeric ids, both key variables at once, or a key that is not a PEM RSA
    /// private key. Messages name the variable and never contain key material.
    pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Result<Option<Self>, AuthError> {
        let var = |name: &str| get(name).filter(|value| !value.trim().is_empty());
        let app_id = var(ENV_APP_ID);
        let key = var(ENV_APP_PRIVATE_KEY);
        let key_path = var(ENV_APP_PRIVATE_KEY_PATH);
        let installation = var(ENV_INSTALLATION_ID);
        let any_app = app_id.is_some() || key.is_some() || key_path.is_some();
        if !any_app && installation.is_none() {
            return Ok(var(ENV_TOKEN).map(|token| Self::Token(Secret::new(token.trim()))));
        }
        let Some(app_id) = app_id else {
            let set = [
                (ENV_APP_PRIVATE_KEY, key.is_some()),
                (ENV_APP_PRIVATE_KEY_PATH, key_path.is_some()),
                (ENV_INSTALLATION_ID, installation.is_some()),
            ]
            .into_iter()
            .find_map(|(name, present)| present.then_some(name))
            .unwrap_or(ENV_INSTALLATION_ID);
            return Err(AuthError::Missing(format!(
                "{set} is set but {ENV_APP_ID} is not"
            )));
        };
        let app_id = parse_id(ENV_APP_ID, &app_id)?;
        let installation_id = installation
            .map(|text| parse_id(ENV_INSTALLATION_ID, &text))
            .transpose()?;
        let (source, pem) = match (key, key_path) {
            (Some(_), Some(_)) => {
                return Err(AuthError::Invalid(format!(
                    "set only one of {ENV_APP_PRIVATE_KEY} and {ENV_APP_PRIVATE_KEY_PATH}"
                )));
            }
            (Some(text), None) => (ENV_APP_PRIVATE_KEY, text.replace("\\n", "\n")),
            (None, Some(path)) => {
                let text = std::fs::read_to_string(path.trim()).map_err(|err| {
                    AuthError::Missing(format!(
                        "{ENV_APP_PRIVATE_KEY_PATH}: cannot read {}: {}",
                        path.trim(),
                        err.kind()
                    ))
                })?;
                (ENV_APP_PRIVATE_KEY_PATH, text)
            }
            (None, None) => {
                return Err(AuthError::Missing(format!(
                    "{ENV_APP_ID} is set but neither {ENV_APP_PRIVATE_KEY} nor \
                     {ENV_APP_PRIVATE_KEY_PATH} is"
                )));
            }
        };
        signing_key(&pem).map_err(|why| {
            AuthError::Invalid(format!("{source} is not a PEM RSA private key: {why}"))
        })?;
        Ok(Some(Self::App(AppCredentials {
            app_id,
            private_key: Secret::new(pem),
            installation_id,
        })))
    }
}

/// Parses a numeric id; the refusal quotes the value only when it is short and plain, so a
/// secret pasted into the wrong variable is not echoed.
fn parse_id(name: &str, text: &str) -> Result<u64, AuthError> {
    let text = text.trim();
    text.parse::<u64>()
        .ok()
        .filter(|id| *id > 0)
        .ok_or_else(|| {
            let shown = if text.len() <= 20 && text.chars().all(|c| c.is_ascii_alphanumeric()) {
                format!("{text:?}")
            } else {
                format!("a value of {} characters", text.chars().count())
            };
            AuthError::Invalid(format!("{name} must be a positive number, got {shown}"))
        })
}

/// Credentials that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// A required environment variable or file is missing or unreadable.
    #[error("{0}")]
    Missing(String),
    /// A value is present but invalid (not a number, not a PEM RSA key).
    #[error("{0}")]
    Invalid(String),
}

/// How long before `expires_at` an installation token is renewed, in seconds.
pub const RENEW_MARGIN_SECS: i64 = 300;
/// How far in the past the JWT's `iat` is set (clock drift), in seconds.
const JWT_BACKDATE_SECS: i64 = 60;
/// How far ahead the JWT's `exp` is set (GitHub allows at most 10 minutes), in seconds.
const JWT_LIFETIME_SECS: i64 = 540;
/// The API version every request names.
const API_VERSION: &str = "2022-11-28";
/// The bound on each authentication request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// A source of Unix seconds.
type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// Turns credentials into `Authorization` headers, caching installation tokens.
pub struct Authenticator {
    credentials: Credentials,
    /// The App of a plain installation token (see `RestConfig::token_app_slug`).
    token_app_slug: Option<String>,
    /// The parsed App key, present exactly for App credentials.
    signer: Option<EncodingKey>,
    cache: Mutex<Cache>,
    now: Clock,
    /// How identity and token calls retry a transport failure or a 5xx, and wait.
    retry: Backoff,
}

/// A retry policy and the sleeper its waits go through.
#[derive(Debug, Clone)]
struct Backoff {
    policy: super::RetryPolicy,
    sleeper: Arc<dyn super::Sleeper>,
}

/// Installation ids learnt from GitHub and installation tokens not yet due for renewal.
#[derive(Default)]
struct Cache {
    /// Lower-case owner (or `""` for "the only installation") -> installation id.
    installations: HashMap<String, u64>,
    /// Installation id -> its current token.
    tokens: HashMap<u64, CachedToken>,
}

struct CachedToken {
    token: Secret,
    expires_at: i64,
}

impl fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Authenticator")
            .field("credentials", &self.credentials)
            .finish_non_exhaustive()
    }
}

#[derive(serde::Serialize)]
struct Claims {
    iat: i64,
    exp: i64,
    iss: String,
}

impl Authenticator {
    /// Checks the credentials (an App key must parse) and prepares the cache.
    ///
    /// # Errors
    /// [`AuthError::Invalid`] when an App private key is not a PEM RSA key.
    pub fn new(credentials: Credentials) -> Result<Self, AuthError> {
        let signer = match &credentials {
            Credentials::Token(_) => None,
            Credentials::App(app) => {
                Some(signing_key(app.private_key.expose()).map_err(|why| {
                    AuthError::Invalid(format!(
                        "the App private key is not a PEM RSA private key: {why}"
                    ))
                })?)
            }
        };
        Ok(Self {
            token_app_slug: None,
            credentials,
            signer,
            cache: Mutex::new(Cache::default()),
            now: Arc::new(|| jiff::Timestamp::now().as_second()),
            retry: Backoff {
                policy: super::RetryPolicy::default(),
                sleeper: Arc::new(super::SystemSleeper),
            },
        })
    }

    /// How the identity, installation and token calls retry a transport failure or a 5xx
    /// (as reads do; minting a second installation token is harmless).
    #[must_use]
    pub fn with_retry(mut self, retry: super::RetryPolicy) -> Self {
        self.retry.policy = retry;
        self
    }

    /// Replaces the system's timer for the back-off waits of those calls.
    #[must_use]
    pub fn with_sleeper(mut self, sleeper: Arc<dyn super::Sleeper>) -> Self {
        self.retry.sleeper = sleeper;
        self
    }

    /// Replaces the system clock (Unix seconds) used for JWTs and token renewal.
    #[must_use]
    pub fn with_clock(mut self, now: impl Fn() -> i64 + Send + Sync + 'static) -> Self {
        self.now = Arc::new(now);
        self
    }

    /// A JWT for the App, signed RS256: `iat = now - 60`, `exp = now + 540`, `iss` = App id.
    ///
    /// # Errors
    /// [`AuthError::Invalid`] for token credentials (no App) or when signing fails.
    pub fn app_jwt(&self, now_unix: i64) -> Result<Secret, AuthError> {
        let (Credentials::App(app), Some(key)) = (&self.credentials, &self.signer) else {
            return Err(AuthError::Invalid(
                "a JWT needs App credentials, not a token".to_owned(),
            ));
        };
        sign(app.app_id, key, now_unix)
            .map_err(|why| AuthError::Invalid(format!("cannot sign the App JWT: {why}")))
    }

    /// The `Authorization` header value for a call on `repo` (`Bearer <token>`), marked
    /// sensitive. App credentials fetch or renew the installation token first.
    ///
    /// # Errors
    /// A [`GitHubError`] when the installation token cannot be obtained.
    pub async fn header(
        &self,
        http: &reqwest::Client,
        api_url: &str,
        repo: Option<&RepoName>,
    ) -> Result<HeaderValue, GitHubError> {
        bearer(&self.token(http, api_url, repo).await?)
    }

    /// The token to act with on `repo`: the plain token, or the App's installation token
    /// (cached until five minutes before it expires, then renewed). Also what `git` needs
    /// to push over HTTPS.
    ///
    /// The installation is the configured one; otherwise it is looked up once per owner
    /// with `GET /repos/{o}/{r}/installation`, or, without a repository, taken from
    /// `GET /app/installations` when the App has exactly one.
    ///
    /// # Errors
    /// A [`GitHubError`] when the installation or its token cannot be obtained:
    /// [`GitHubError::Status`] for 401/403, [`GitHubError::NotFound`] when the App is not
    /// installed, [`GitHubError::Conflict`] when several installations make the choice
    /// ambiguous, [`GitHubError::Unavailable`] for transport failures and 5xx.
    pub async fn token(
        &self,
        http: &reqwest::Client,
        api_url: &str,
        repo: Option<&RepoName>,
    ) -> Result<Secret, GitHubError> {
        let app = match &self.credentials {
            Credentials::Token(token) => return Ok(token.clone()),
            Credentials::App(app) => app,
        };
        let api = api_url.trim_end_matches('/');
        let mut cache = self.cache.lock().await;
        let now = (self.now)();
        let installation = match app.installation_id {
            Some(id) => id,
            None => self.discover(&mut cache, http, api, repo).await?,
        };
        if let Some(cached) = cache.tokens.get(&installation)
            && now < cached.expires_at - RENEW_MARGIN_SECS
        {
            return Ok(cached.token.clone());
        }
        let fresh = self.fetch_token(http, api, installation, now).await?;
        let token = fresh.token.clone();
        cache.tokens.insert(installation, fresh);
        Ok(token)
    }

    /// Names the App a plain installation token acts for (normally env.yml's
    /// `bot_app_slug`).
    #[must_use]
    pub fn with_token_app_slug(mut self, slug: Option<String>) -> Self {
        self.token_app_slug = slug.filter(|s| !s.trim().is_empty());
        self
    }

    /// The bot's login: `<slug>[bot]` from `GET /app` for an App; for a plain token, the
    /// token owner from `GET /user`, except for an installation token (`ghs_...`, Actions'
    /// `GITHUB_TOKEN`), which GitHub does not serve `/user` to: `<token_app_slug>[bot]`.
    ///
    /// # Errors
    /// A [`GitHubError`] when the identity cannot be read, naming the fix when an
    /// installation token comes without an App slug.
    pub async fn bot_login(
        &self,
        http: &reqwest::Client,
        api_url: &str,
    ) -> Result<Login, GitHubError> {
        let api = api_url.trim_end_matches('/');
        match &self.credentials {
            Credentials::Token(token) => {
                #[derive(Deserialize)]
                struct User {
                    login: String,
                }
                let route = "GET /user";
                let as_app = |slug: &str| {
                    Login::for_app(slug)
                        .map_err(|err| malformed(route, &format!("bot_app_slug `{slug}`: {err}")))
                };
                let installation = token.expose().starts_with(INSTALLATION_TOKEN_PREFIX);
                if installation && let Some(slug) = &self.token_app_slug {
                    return as_app(slug);
                }
                match get_json::<User>(
                    &self.retry,
                    http,
                    &format!("{api}/user"),
                    route,
                    "user",
                    token,
                )
                .await
                {
                    Ok(user) => {
                        Login::parse(&user.login).map_err(|err| malformed(route, &err.to_string()))
                    }
                    Err(GitHubError::Status { status: 403, .. })
                        if self.token_app_slug.is_some() =>
                    {
                        as_app(self.token_app_slug.as_deref().unwrap_or_default())
                    }
                    Err(GitHubError::Status {
                        status: 403,
                        message,
                        ..
                    }) => Err(GitHubError::Status {
                        route: route.to_owned(),
                        status: 403,
                        message: format!(
                            "{message}: GitHub does not tell an installation token (such as Actions' GITHUB_TOKEN) who it is; set bot_app_slug in env.yml to the App's slug (github-actions for GITHUB_TOKEN)"
                        ),
                    }),
                    Err(other) => Err(other),
                }
            }
            Credentials::App(_) => {
                #[derive(Deserialize)]
                struct App {
                    slug: String,
                }
                let route = "GET /app";
                let jwt = self.jwt_for(route)?;
                let app: App =
                    get_json(&self.retry, http, &format!("{api}/app"), route, "app", &jwt).await?;
                Login::for_app(&app.slug).map_err(|err| malformed(route, &err.to_string()))
            }
        }
    }

    /// Whether these are App credentials (a JWT, then installation tokens).
    pub fn is_app(&self) -> bool {
        matches!(self.credentials, Credentials::App(_))
    }

    /// The permissions of the App's installation that covers `repo`
    /// (`GET /repos/{o}/{r}/installation` with the App's JWT), e.g. `contents` -> `write`;
    /// `None` when the App is not installed on `repo` (404).
    ///
    /// # Errors
    /// A [`GitHubError`] for token credentials (no JWT), a refusal other than 404, or an
    /// unreadable answer.
    pub async fn repo_installation_permissions(
        &self,
        http: &reqwest::Client,
        api_url: &str,
        repo: &RepoName,
    ) -> Result<Option<std::collections::BTreeMap<String, String>>, GitHubError> {
        #[derive(Deserialize)]
        struct Installation {
            id: u64,
            #[serde(default)]
            permissions: std::collections::BTreeMap<String, serde_json::Value>,
        }
        let route = "GET /repos/{o}/{r}/installation";
        let jwt = self.jwt_for(route)?;
        let api = api_url.trim_end_matches('/');
        let url = format!("{api}/repos/{}/{}/installation", repo.owner(), repo.name());
        let what = format!("App installation on {repo}");
        match get_json::<Installation>(&self.retry, http, &url, route, &what, &jwt).await {
            Ok(found) => {
                self.cache
                    .lock()
                    .await
                    .installations
                    .entry(repo.owner().to_owned())
                    .or_insert(found.id);
                Ok(Some(
                    found
                        .permissions
                        .into_iter()
                        .filter_map(|(k, v)| v.as_str().map(|v| (k, v.to_owned())))
                        .collect(),
                ))
            }
            Err(GitHubError::NotFound { .. }) => Ok(None),
            Err(other) => Err(other),
        }
    }

    fn jwt_for(&self, route: &str) -> Result<Secret, GitHubError> {
        self.app_jwt((self.now)())
            .map_err(|err| malformed(route, &err.to_string()))
    }

    async fn discover(
        &self,
        cache: &mut Cache,
        http: &reqwest::Client,
        api: &str,
        repo: Option<&RepoName>,
    ) -> Result<u64, GitHubError> {
        #[derive(Deserialize)]
        struct Installation {
            id: u64,
        }
        let key = repo.map_or_else(String::new, |repo| repo.owner().to_owned());
        if let Some(id) = cache.installations.get(&key) {
            return Ok(*id);
        }
        let id = match repo {
            Some(repo) => {
                let route = "GET /repos/{o}/{r}/installation";
                let jwt = self.jwt_for(route)?;
                let url = format!("{api}/repos/{}/{}/installation", repo.owner(), repo.name());
                let what = format!("App installation on {repo}");
                let found: Installation =
                    get_json(&self.retry, http, &url, route, &what, &jwt).await?;
                found.id
            }
            None => {
                let route = "GET /app/installations";
                let jwt = self.jwt_for(route)?;
                let url = format!("{api}/app/installations?per_page=100");
                let what = "App installations";
                let found: Vec<Installation> =
                    get_json(&self.retry, http, &url, route, what, &jwt).await?;
                match found.as_slice() {
                    [only] => only.id,
                    [] => {
                        return Err(GitHubError::NotFound {
                            what: "an installation of the App".to_owned(),
                        });
                    }
                    several => {
                        return Err(GitHubError::Conflict {
                            what: route.to_owned(),
                            message: format!(
                                "the App has {} installations: set {ENV_INSTALLATION_ID} or name a repository",
                                several.len()
                            ),
                        });
                    }
                }
            }
        };
        cache.installations.insert(key, id);
        Ok(id)
    }

    async fn fetch_token(
        &self,
        http: &reqwest::Client,
        api: &str,
        installation: u64,
        now: i64,
    ) -> Result<CachedToken, GitHubError> {
        #[derive(Deserialize)]
        struct Answer {
            token: String,
            expires_at: String,
        }
        let route = "POST /app/installations/{id}/access_tokens";
        let jwt = self
            .app_jwt(now)
            .map_err(|err| malformed(route, &err.to_string()))?;
        let url = format!("{api}/app/installations/{installation}/access_tokens");
        let request = with_headers(http.post(url), &jwt);
        let what = format!("App installation {installation}");
        let answer: Answer = send(&self.retry, request, route, &what, &jwt).await?;
        let token = Secret::new(answer.token);
        let expires_at = answer
            .expires_at
            .parse::<jiff::Timestamp>()
            .map_err(|_| {
                malformed(
                    route,
                    &format!("expires_at {:?} is not a timestamp", answer.expires_at),
                )
            })?
            .as_second();
        Ok(CachedToken { token, expires_at })
    }
}

/// Parses the PEM key and proves it can sign, so a bad key fails at start-up.
fn signing_key(pem_text: &str) -> Result<EncodingKey, String> {
    let der = pem::rsa_private_key_der(pem_text)?;
    let key = EncodingKey::from_rsa_der(&der);
    sign(1, &key, 0).map_err(|_| "the key is not a usable RSA private key".to_owned())?;
    Ok(key)
}

fn sign(app_id: u64, key: &EncodingKey, now: i64) -> Result<Secret, String> {
    let claims = Claims {
        iat: now - JWT_BACKDATE_SECS,
        exp: now + JWT_LIFETIME_SECS,
        iss: app_id.to_string(),
    };
    jsonwebtoken::encode(&Header::new(Algorithm::RS256), &claims, key)
        .map(Secret::new)
        .map_err(|err| err.to_string())
}

fn bearer(token: &Secret) -> Result<HeaderValue, GitHubError> {
    let mut value = HeaderValue::from_str(&format!("Bearer {}", token.expose())).map_err(|_| {
        GitHubError::Malformed {
            route: "Authorization".to_owned(),
            message: "the token is not a valid header value".to_owned(),
        }
    })?;
    value.set_sensitive(true);
    Ok(value)
}

fn with_headers(request: reqwest::RequestBuilder, auth: &Secret) -> reqwest::RequestBuilder {
    let request = request
        .header(ACCEPT, "application/vnd.github+json")
        .header("X-GitHub-Api-Version", API_VERSION)
        .header(USER_AGENT, concat!("mp-github/", env!("CARGO_PKG_VERSION")))
        .timeout(REQUEST_TIMEOUT);
    match bearer(auth) {
        Ok(value) => request.header(reqwest::header::AUTHORIZATION, value),
        Err(_) => request,
    }
}

async fn get_json<T: DeserializeOwned>(
    retry: &Backoff,
    http: &reqwest::Client,
    url: &str,
    route: &str,
    what: &str,
    auth: &Secret,
) -> Result<T, GitHubError> {
    send(retry, with_headers(http.get(url), auth), route, what, auth).await
}

/// Sends `request` and reads a 2xx JSON answer, retrying a transport failure or a 5xx
/// with `retry`'s back-off; every error text is scrubbed of `auth`.
async fn send<T: DeserializeOwned>(
    retry: &Backoff,
    request: reqwest::RequestBuilder,
    route: &str,
    what: &str,
    auth: &Secret,
) -> Result<T, GitHubError> {
    let mut attempt = 0;
    loop {
        let Some(this) = request.try_clone() else {
            return send_once(request, route, what, auth).await;
        };
        match send_once(this, route, what, auth).await {
            Err(GitHubError::Unavailable { route, message }) => {
                if attempt >= retry.policy.max_retries {
                    return Err(GitHubError::Unavailable {
                        route,
                        message: format!("{message} after {attempt} retries"),
                    });
                }
                retry.sleeper.sleep(retry.policy.backoff(attempt)).await;
                attempt += 1;
            }
            other => return other,
        }
    }
}

/// One attempt of [`send`].
async fn send_once<T: DeserializeOwned>(
    request: reqwest::RequestBuilder,
    route: &str,
    what: &str,
    auth: &Secret,
) -> Result<T, GitHubError> {
    let unavailable = |message: String| GitHubError::Unavailable {
        route: route.to_owned(),
        message: scrub(&message, auth),
    };
    let response = request
        .send()
        .await
        .map_err(|err| unavailable(err.without_url().to_string()))?;
    let status = response.status();
    let body = response
        .text()
        .await
        .map_err(|err| unavailable(err.without_url().to_string()))?;
    if !status.is_success() {
        let message = scrub(&github_message(&body), auth);
        return Err(match status.as_u16() {
            404 => GitHubError::NotFound {
                what: what.to_owned(),
            },
            code @ 500..=599 => GitHubError::Unavailable {
                route: route.to_owned(),
                message: format!("HTTP {code}: {message}"),
            },
            code => GitHubError::Status {
                route: route.to_owned(),
                status: code,
                message,
            },
        });
    }
    serde_json::from_str(&body).map_err(|err| malformed(route, &scrub(&err.to_string(), auth)))
}

/// GitHub's `message` field, or the start of the body when it is not the usual JSON.
fn github_message(body: &str) -> String {
    #[derive(Deserialize)]
    struct ErrorBody {
        message: String,
    }
    match serde_json::from_str::<ErrorBody>(body) {
        Ok(error) => error.message,
        Err(_) => body.chars().take(200).collect(),
    }
}

/// `text` with every occurrence of the secret replaced by `[redacted]`.
fn scrub(text: &str, secret: &Secret) -> String {
    if secret.expose().is_empty() {
        return text.to_owned();
    }
    text.replace(secret.expose(), "[redacted]")
}

fn malformed(route: &str, message: &str) -> GitHubError {
    GitHubError::Malformed {
        route: route.to_owned(),
        message: message.to_owned(),
    }
}

#[cfg(test)]
mod tests;
