//! Tests for credentials and App authentication, against a small GitHub stub on 127.0.0.1.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use base64::Engine as _;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use mp_core::ids::RepoName;
use mp_core::port::GitHubError;
use serde_json::{Value, json};

use super::{AppCredentials, AuthError, Authenticator, Credentials, Secret};

const KEY: &str = include_str!("../../../tests/fixtures/test-app-key.pem");
const KEY_PKCS8: &str = include_str!("../../../tests/fixtures/test-app-key.pkcs8.pem");
const PUBLIC_KEY: &str = include_str!("../../../tests/fixtures/test-app-key.pub.pem");
const KEY_PATH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/test-app-key.pem"
);
/// A fixed "now" for the tests (2026-01-01T00:00:00Z).
const T0: i64 = 1_767_225_600;
const PLAIN_TOKEN: &str = "ghp_plain_secret_token";
/// The start of every base64 PKCS#1/PKCS#8 body of a 2048-bit key: key material marker.
const KEY_MARKER: &str = "MII";

// ---------------------------------------------------------------------------------------------
// The stub.

struct Stub {
    token_calls: AtomicUsize,
    discovery_calls: AtomicUsize,
    /// Unix seconds of `expires_at` of the first token; each later one lasts an hour more.
    expires_at: AtomicI64,
    installations: Vec<u64>,
    fail_tokens: AtomicBool,
    /// How many more identity, installation and token calls answer 502 first.
    bad_gateways: AtomicUsize,
}

impl Stub {
    /// A 502 while the stub still has some to give.
    fn bad_gateway(&self) -> Option<Answer> {
        self.bad_gateways
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .ok()
            .map(|_| refuse(StatusCode::BAD_GATEWAY, "Server Error".into()))
    }

    fn new(installations: Vec<u64>) -> Arc<Self> {
        Arc::new(Self {
            token_calls: AtomicUsize::new(0),
            discovery_calls: AtomicUsize::new(0),
            expires_at: AtomicI64::new(T0 + 3600),
            installations,
            fail_tokens: AtomicBool::new(false),
            bad_gateways: AtomicUsize::new(0),
        })
    }
}

fn public_key() -> DecodingKey {
    let body: String = PUBLIC_KEY
        .lines()
        .filter(|line| !line.starts_with("-----"))
        .collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(body)
        .expect("the fixture public key is base64");
    DecodingKey::from_rsa_der(&der)
}

/// The verified claims of a `Bearer <jwt>` header, or `None` when absent or badly signed.
fn verified_claims(headers: &HeaderMap) -> Option<Value> {
    let value = headers.get("authorization")?.to_str().ok()?;
    let jwt = value.strip_prefix("Bearer ")?;
    let mut validation = Validation::new(Algorithm::RS256);
    validation.validate_exp = false;
    validation.required_spec_claims = HashSet::new();
    jsonwebtoken::decode::<Value>(jwt, &public_key(), &validation)
        .ok()
        .map(|data| data.claims)
}

fn has_api_headers(headers: &HeaderMap) -> bool {
    let is = |name: &str, want: &str| headers.get(name).and_then(|v| v.to_str().ok()) == Some(want);
    is("accept", "application/vnd.github+json")
        && is("x-github-api-version", "2022-11-28")
        && headers.contains_key("user-agent")
}

type Answer = (StatusCode, Json<Value>);

fn refuse(status: StatusCode, message: String) -> Answer {
    (
        status,
        Json(json!({ "message": message, "documentation_url": "https://docs.github.com" })),
    )
}

async fn access_token(
    State(stub): State<Arc<Stub>>,
    Path(id): Path<u64>,
    headers: HeaderMap,
) -> Answer {
    if let Some(answer) = stub.bad_gateway() {
        return answer;
    }
    if stub.fail_tokens.load(Ordering::SeqCst) {
        let sent = headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        return refuse(StatusCode::UNAUTHORIZED, format!("Bad credentials: {sent}"));
    }
    if verified_claims(&headers).is_none() || !has_api_headers(&headers) {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "A JSON web token could not be decoded".into(),
        );
    }
    let n = stub.token_calls.fetch_add(1, Ordering::SeqCst) + 1;
    let hours_later = 3600 * i64::try_from(n - 1).unwrap_or_default();
    let expires_at = stub.expires_at.load(Ordering::SeqCst) + hours_later;
    let expires = jiff::Timestamp::from_second(expires_at)
        .map(|t| t.to_string())
        .unwrap_or_default();
    (
        StatusCode::CREATED,
        Json(json!({ "token": format!("ghs_inst{id}_{n}"), "expires_at": expires })),
    )
}

async fn repo_installation(
    State(stub): State<Arc<Stub>>,
    Path((owner, _repo)): Path<(String, String)>,
    headers: HeaderMap,
) -> Answer {
    if let Some(answer) = stub.bad_gateway() {
        return answer;
    }
    if verified_claims(&headers).is_none() {
        return refuse(StatusCode::UNAUTHORIZED, "bad jwt".into());
    }
    stub.discovery_calls.fetch_add(1, Ordering::SeqCst);
    (
        StatusCode::OK,
        Json(json!({ "id": 77, "account": { "login": owner } })),
    )
}

async fn app_installations(State(stub): State<Arc<Stub>>, headers: HeaderMap) -> Answer {
    if verified_claims(&headers).is_none() {
        return refuse(StatusCode::UNAUTHORIZED, "bad jwt".into());
    }
    stub.discovery_calls.fetch_add(1, Ordering::SeqCst);
    let list: Vec<Value> = stub
        .installations
        .iter()
        .map(|id| json!({ "id": id, "account": { "login": "acme" } }))
        .collect();
    (StatusCode::OK, Json(Value::Array(list)))
}

async fn app(State(stub): State<Arc<Stub>>, headers: HeaderMap) -> Answer {
    if let Some(answer) = stub.bad_gateway() {
        return answer;
    }
    let Some(claims) = verified_claims(&headers) else {
        return refuse(StatusCode::UNAUTHORIZED, "bad jwt".into());
    };
    if !has_api_headers(&headers) || claims["iss"] != json!("12345") {
        return refuse(StatusCode::BAD_REQUEST, "missing headers".into());
    }
    let body =
        json!({ "id": 12345, "slug": "mp-gate", "name": "mp gate", "owner": { "login": "acme" } });
    (StatusCode::OK, Json(body))
}

async fn user(headers: HeaderMap) -> Answer {
    let want = format!("Bearer {PLAIN_TOKEN}");
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(want.as_str()) {
        return refuse(StatusCode::UNAUTHORIZED, "Bad credentials".into());
    }
    (
        StatusCode::OK,
        Json(json!({ "login": "Octo-Cat", "id": 1, "type": "User" })),
    )
}

/// Starts the stub; answers its base URL.
async fn serve(stub: Arc<Stub>) -> String {
    let router = Router::new()
        .route("/app", get(app))
        .route("/user", get(user))
        .route("/app/installations", get(app_installations))
        .route("/app/installations/{id}/access_tokens", post(access_token))
        .route("/repos/{owner}/{repo}/installation", get(repo_installation))
        .with_state(stub);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind a loopback port");
    let addr = listener.local_addr().expect("the bound address");
    tokio::spawn(async move { axum::serve(listener, router).await });
    format!("http://{addr}/")
}

fn app_credentials(installation_id: Option<u64>) -> Credentials {
    Credentials::App(AppCredentials {
        app_id: 12345,
        private_key: Secret::new(KEY),
        installation_id,
    })
}

fn authenticator(credentials: Credentials, clock: &Arc<AtomicI64>) -> Authenticator {
    let clock = Arc::clone(clock);
    Authenticator::new(credentials)
        .expect("the fixture key parses")
        .with_clock(move || clock.load(Ordering::SeqCst))
}

fn header_text(result: Result<reqwest::header::HeaderValue, GitHubError>) -> String {
    match result {
        Ok(value) => {
            assert!(
                value.is_sensitive(),
                "the Authorization value must be sensitive"
            );
            value.to_str().unwrap_or("<non-ascii>").to_owned()
        }
        Err(err) => format!("error: {err}"),
    }
}

// ---------------------------------------------------------------------------------------------
// The JWT.

#[test]
fn jwt_is_rs256_signed_with_the_app_key_and_carries_the_claims() {
    let auth = Authenticator::new(app_credentials(Some(1))).expect("the fixture key parses");
    let jwt = auth.app_jwt(T0).expect("signing works");
    let mut headers = HeaderMap::new();
    let value = format!("Bearer {}", jwt.expose());
    headers.insert("authorization", value.parse().expect("ascii"));
    let claims = verified_claims(&headers).expect("the signature verifies with the public key");
    assert_eq!(
        claims,
        json!({ "iat": T0 - 60, "exp": T0 + 540, "iss": "12345" })
    );
    let header = jsonwebtoken::decode_header(jwt.expose()).expect("a JWT header");
    assert_eq!(header.alg, Algorithm::RS256);
}

#[test]
fn pkcs8_keys_sign_too_and_a_token_has_no_jwt() {
    let pkcs8 = Credentials::App(AppCredentials {
        app_id: 9,
        private_key: Secret::new(KEY_PKCS8),
        installation_id: None,
    });
    let auth = Authenticator::new(pkcs8).expect("a PKCS#8 RSA key parses");
    let jwt = auth.app_jwt(T0).expect("signing works");
    assert_eq!(jwt.expose().split('.').count(), 3);
    let token = Authenticator::new(Credentials::Token(Secret::new(PLAIN_TOKEN))).expect("token");
    assert!(matches!(token.app_jwt(T0), Err(AuthError::Invalid(_))));
}

#[test]
fn a_bad_key_is_refused_without_echoing_it() {
    for key in [
        "hunter2-not-a-key",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIhunter2\n-----END RSA PRIVATE KEY-----\n",
    ] {
        let bad = Credentials::App(AppCredentials {
            app_id: 1,
            private_key: Secret::new(key),
            installation_id: None,
        });
        let err = Authenticator::new(bad).expect_err("a bad key is refused");
        let text = err.to_string();
        assert!(matches!(err, AuthError::Invalid(_)), "{text}");
        assert!(text.contains("not a PEM RSA private key"), "{text}");
        assert!(!text.contains("hunter2"), "{text}");
    }
}

// ---------------------------------------------------------------------------------------------
// Credentials from the environment.

const MISSING_PATH: &str = "/nonexistent/mp-test/key.pem";

#[track_caller]
fn check_env(vars: &[(&str, &str)], expected: &str) {
    let result = Credentials::from_env(|name| {
        vars.iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| (*value).to_owned())
    });
    let described = match &result {
        Ok(None) => "none".to_owned(),
        Ok(Some(Credentials::Token(token))) => format!("token {}", token.expose()),
        Ok(Some(Credentials::App(app))) => {
            let pem_ok = app.private_key.expose().starts_with("-----BEGIN ")
                && app.private_key.expose().contains('\n')
                && !app.private_key.expose().contains("\\n");
            format!(
                "app {} {:?} pem_ok={pem_ok}",
                app.app_id, app.installation_id
            )
        }
        Err(AuthError::Missing(message)) => format!("missing: {message}"),
        Err(AuthError::Invalid(message)) => format!("invalid: {message}"),
    };
    assert!(
        described.starts_with(expected),
        "got {described:?}, want it to start with {expected:?}"
    );
    if result.is_err() {
        assert!(
            !described.contains(KEY_MARKER),
            "key material in {described:?}"
        );
    }
}

#[test]
fn from_env_table() {
    let escaped = KEY.replace('\n', "\\n");
    let cases: &[(&[(&str, &str)], &str)] = &[
        (&[], "none"),
        (&[("MP_GITHUB_TOKEN", "  ")], "none"),
        (&[("MP_GITHUB_TOKEN", "ghp_x")], "token ghp_x"),
        (
            &[("MP_APP_ID", "12"), ("MP_APP_PRIVATE_KEY", KEY)],
            "app 12 None pem_ok=true",
        ),
        (
            &[
                ("MP_APP_ID", "12"),
                ("MP_APP_PRIVATE_KEY", &escaped),
                ("MP_INSTALLATION_ID", "99"),
            ],
            "app 12 Some(99) pem_ok=true",
        ),
        (
            &[("MP_APP_ID", "12"), ("MP_APP_PRIVATE_KEY", KEY_PKCS8)],
            "app 12 None pem_ok=true",
        ),
        (
            &[("MP_APP_ID", "12"), ("MP_APP_PRIVATE_KEY_PATH", KEY_PATH)],
            "app 12 None pem_ok=true",
        ),
        (
            &[
                ("MP_GITHUB_TOKEN", "ghp_x"),
                ("MP_APP_ID", "12"),
                ("MP_APP_PRIVATE_KEY", KEY),
            ],
            "app 12 None",
        ),
        (
            &[("MP_APP_ID", "12")],
            "missing: MP_APP_ID is set but neither MP_APP_PRIVATE_KEY nor",
        ),
        (
            &[("MP_APP_PRIVATE_KEY", KEY)],
            "missing: MP_APP_PRIVATE_KEY is set but MP_APP_ID is not",
        ),
        (
            &[("MP_APP_PRIVATE_KEY_PATH", KEY_PATH)],
            "missing: MP_APP_PRIVATE_KEY_PATH is set but",
        ),
        (
            &[("MP_INSTALLATION_ID", "5")],
            "missing: MP_INSTALLATION_ID is set but MP_APP_ID",
        ),
        (
            &[("MP_APP_ID", "abc"), ("MP_APP_PRIVATE_KEY", KEY)],
            "invalid: MP_APP_ID must be a positive number, got \"abc\"",
        ),
        (
            &[
                ("MP_APP_ID", "12"),
                ("MP_APP_PRIVATE_KEY", KEY),
                ("MP_INSTALLATION_ID", "x"),
            ],
            "invalid: MP_INSTALLATION_ID must be a positive number",
        ),
        (
            &[
                ("MP_APP_ID", "12"),
                ("MP_APP_PRIVATE_KEY_PATH", MISSING_PATH),
            ],
            "missing: MP_APP_PRIVATE_KEY_PATH: cannot read /nonexistent/mp-test/key.pem",
        ),
        (
            &[("MP_APP_ID", KEY), ("MP_APP_PRIVATE_KEY", KEY)],
            "invalid: MP_APP_ID must be a positive number, got a value of ",
        ),
        (
            &[
                ("MP_APP_ID", "12"),
                ("MP_APP_PRIVATE_KEY", KEY),
                ("MP_APP_PRIVATE_KEY_PATH", KEY_PATH),
            ],
            "invalid: set only one of",
        ),
        (
            &[("MP_APP_ID", "12"), ("MP_APP_PRIVATE_KEY", "MIIsecret")],
            "invalid: MP_APP_PRIVATE_KEY is not a PEM RSA private key",
        ),
        (
            &[
                ("MP_APP_ID", "12"),
                ("MP_APP_PRIVATE_KEY_PATH", "/etc/hostname"),
            ],
            "invalid: MP_APP_PRIVATE_KEY_PATH is not a PEM RSA private key",
        ),
    ];
    for (vars, expected) in cases {
        check_env(vars, expected);
    }
}

// ---------------------------------------------------------------------------------------------
// Nothing prints a secret.

#[test]
fn debug_never_shows_a_secret() {
    let app = AppCredentials {
        app_id: 3,
        private_key: Secret::new(KEY),
        installation_id: Some(4),
    };
    let token = Credentials::Token(Secret::new(PLAIN_TOKEN));
    let app_auth = Authenticator::new(Credentials::App(app.clone())).expect("the key parses");
    let token_auth = Authenticator::new(token.clone()).expect("a token is accepted");
    let shown = [
        format!("{:?}", Secret::new(PLAIN_TOKEN)),
        format!("{}", Secret::new(PLAIN_TOKEN)),
        format!("{app:?}"),
        format!("{:?}", Credentials::App(app.clone())),
        format!("{token:?}"),
        format!("{app_auth:?}"),
        format!("{token_auth:?}"),
        format!("{:#?}", app_auth),
    ];
    for text in shown {
        assert!(text.contains("[redacted]"), "{text}");
        assert!(
            !text.contains(PLAIN_TOKEN) && !text.contains(KEY_MARKER) && !text.contains("BEGIN"),
            "secret in {text}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Installation tokens over HTTP.

#[tokio::test]
async fn a_plain_token_is_sent_as_bearer_and_names_the_user() {
    let api = serve(Stub::new(vec![])).await;
    let http = reqwest::Client::new();
    let clock = Arc::new(AtomicI64::new(T0));
    let auth = authenticator(Credentials::Token(Secret::new(PLAIN_TOKEN)), &clock);
    let header = header_text(auth.header(&http, &api, None).await);
    assert_eq!(header, format!("Bearer {PLAIN_TOKEN}"));
    let login = auth.bot_login(&http, &api).await.map(|l| l.to_string());
    assert_eq!(login.ok().as_deref(), Some("octo-cat"));
}

#[tokio::test]
async fn the_app_login_is_the_slug_with_bot() {
    let api = serve(Stub::new(vec![])).await;
    let http = reqwest::Client::new();
    let clock = Arc::new(AtomicI64::new(T0));
    let auth = authenticator(app_credentials(Some(7)), &clock);
    let login = auth.bot_login(&http, &api).await.map(|l| l.to_string());
    assert_eq!(login.ok().as_deref(), Some("mp-gate[bot]"));
}

/// Runs `header()` at each clock value and records (token requests so far, header).
async fn headers_at(
    stub: &Arc<Stub>,
    credentials: Credentials,
    repo: Option<&RepoName>,
    times: &[i64],
) -> Vec<(usize, String)> {
    let api = serve(Arc::clone(stub)).await;
    let http = reqwest::Client::new();
    let clock = Arc::new(AtomicI64::new(T0));
    let auth = authenticator(credentials, &clock);
    let mut seen = Vec::new();
    for &at in times {
        clock.store(at, Ordering::SeqCst);
        let header = header_text(auth.header(&http, &api, repo).await);
        seen.push((stub.token_calls.load(Ordering::SeqCst), header));
    }
    seen
}

#[tokio::test]
async fn installation_tokens_are_cached_then_renewed_five_minutes_before_expiry() {
    let stub = Stub::new(vec![]);
    let expiry = T0 + 3600;
    let times = [T0, T0 + 10, expiry - 301, expiry - 299, expiry - 200];
    let seen = headers_at(&stub, app_credentials(Some(7)), None, &times).await;
    let want = [
        (1, "Bearer ghs_inst7_1"),
        (1, "Bearer ghs_inst7_1"),
        (1, "Bearer ghs_inst7_1"),
        (2, "Bearer ghs_inst7_2"),
        (2, "Bearer ghs_inst7_2"),
    ];
    let want: Vec<(usize, String)> = want.iter().map(|(n, h)| (*n, (*h).to_owned())).collect();
    assert_eq!(seen, want);
}

#[tokio::test]
async fn the_installation_is_discovered_once_per_owner() {
    let stub = Stub::new(vec![]);
    let repo = RepoName::parse("acme/app").expect("valid");
    let seen = headers_at(&stub, app_credentials(None), Some(&repo), &[T0, T0 + 1]).await;
    assert_eq!(
        seen,
        vec![
            (1, "Bearer ghs_inst77_1".to_owned()),
            (1, "Bearer ghs_inst77_1".to_owned())
        ]
    );
    assert_eq!(stub.discovery_calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn without_a_repository_the_only_installation_is_used() {
    let stub = Stub::new(vec![5]);
    let seen = headers_at(&stub, app_credentials(None), None, &[T0]).await;
    assert_eq!(seen, vec![(1, "Bearer ghs_inst5_1".to_owned())]);
}

#[tokio::test]
async fn several_installations_without_a_repository_are_ambiguous() {
    let stub = Stub::new(vec![5, 6]);
    let seen = headers_at(&stub, app_credentials(None), None, &[T0]).await;
    assert_eq!(
        seen,
        vec![(
            0,
            "error: GET /app/installations: the App has 2 installations: set MP_INSTALLATION_ID or name a repository"
                .to_owned()
        )]
    );
}

#[tokio::test]
async fn a_failing_token_endpoint_gives_a_status_error_without_the_jwt() {
    let stub = Stub::new(vec![]);
    stub.fail_tokens.store(true, Ordering::SeqCst);
    let api = serve(Arc::clone(&stub)).await;
    let http = reqwest::Client::new();
    let clock = Arc::new(AtomicI64::new(T0));
    let auth = authenticator(app_credentials(Some(7)), &clock);
    let jwt = auth.app_jwt(T0).expect("signing works");
    let err = auth
        .header(&http, &api, None)
        .await
        .expect_err("the stub refuses");
    let text = format!("{err} {err:?}");
    assert!(
        matches!(err, GitHubError::Status { status: 401, .. }),
        "{text}"
    );
    assert!(
        text.contains("Bad credentials: Bearer [redacted]"),
        "{text}"
    );
    assert!(!text.contains(jwt.expose()), "the JWT leaked: {text}");
}

#[tokio::test]
async fn an_unreachable_api_is_unavailable() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    let http = reqwest::Client::new();
    let clock = Arc::new(AtomicI64::new(T0));
    let auth = authenticator(app_credentials(Some(7)), &clock).with_retry(fast_retry());
    let err = auth
        .header(&http, &format!("http://{addr}"), None)
        .await
        .expect_err("nothing listens");
    assert!(matches!(err, GitHubError::Unavailable { .. }), "{err}");
    assert!(err.is_transient());
}

#[tokio::test]
async fn identity_installation_and_token_calls_retry_a_bad_gateway() {
    let stub = Stub::new(vec![]);
    let api = serve(Arc::clone(&stub)).await;
    let http = reqwest::Client::new();
    let clock = Arc::new(AtomicI64::new(T0));
    let auth = authenticator(app_credentials(None), &clock).with_retry(fast_retry());
    // Each call below meets two 502s and gets through on its third attempt.
    stub.bad_gateways.store(2, Ordering::SeqCst);
    let login = auth.bot_login(&http, &api).await;
    assert_eq!(
        login.map(|l| l.to_string()).ok(),
        Some("mp-gate[bot]".to_owned())
    );
    let repo = RepoName::parse("acme/app").expect("a repo name");
    stub.bad_gateways.store(2, Ordering::SeqCst);
    let installation = auth.header(&http, &api, Some(&repo)).await;
    assert!(installation.is_ok(), "{installation:?}");
    assert_eq!(stub.discovery_calls.load(Ordering::SeqCst), 1);
    assert_eq!(stub.token_calls.load(Ordering::SeqCst), 1);
    // The token expires: its renewal meets the 502s.
    clock.store(T0 + 3600, Ordering::SeqCst);
    stub.bad_gateways.store(2, Ordering::SeqCst);
    let renewed = auth.header(&http, &api, Some(&repo)).await;
    assert!(renewed.is_ok(), "{renewed:?}");
    assert_eq!(stub.token_calls.load(Ordering::SeqCst), 2);
    // Past the retries, the call is Unavailable and says how often it tried.
    clock.store(T0 + 86_400, Ordering::SeqCst);
    stub.bad_gateways.store(10, Ordering::SeqCst);
    let err = auth
        .header(&http, &api, Some(&repo))
        .await
        .expect_err("four 502s in a row");
    assert!(matches!(err, GitHubError::Unavailable { .. }), "{err}");
    assert!(err.to_string().contains("after 3 retries"), "{err}");
}

fn fast_retry() -> crate::rest::RetryPolicy {
    crate::rest::RetryPolicy::fast()
}
