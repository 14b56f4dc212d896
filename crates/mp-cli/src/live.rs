//! The live wiring of a run against GitHub, shared by `mp tick --config`, `mp serve` and
//! `mp doctor`: the configuration directory loaded, the credentials and the receipt key
//! from the environment, the tick options, the REST client with its ETag cache, and who
//! holds the lease.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, bail};
use mp_core::approval::ReceiptKey;
use mp_github::rest::{Credentials, EtagCache, RestConfig, RestGitHub};
use mp_tick::lease::{Incarnation, LeaseHolder, LeaseTerms, MAX_LEASE_SECONDS, MIN_LEASE_SECONDS};
use mp_tick::{Shard, TickOptions};

use crate::commands::config_validate::read_config_dir;
use crate::skills_load;
use crate::skills_load::SkillCalls;

/// The environment variable holding a plain GitHub token (read by mp-github's
/// `Credentials::from_env`).
pub const TOKEN_VAR: &str = "MP_GITHUB_TOKEN";
/// The environment variable holding the approval-receipt key in live ticks.
pub const RECEIPT_KEY_VAR: &str = "MP_RECEIPT_KEY";
/// The environment variable holding the receipt key a rotation replaced.
pub const PREVIOUS_RECEIPT_KEY_VAR: &str = "MP_RECEIPT_KEY_PREVIOUS";
/// The environment variable holding the end of the previous key's window (RFC 3339).
pub const PREVIOUS_RECEIPT_KEY_UNTIL_VAR: &str = "MP_RECEIPT_KEY_PREVIOUS_UNTIL";

/// The suffix of the variable that names a file holding a secret instead of the secret:
/// `MP_RECEIPT_KEY_FILE=/run/credentials/mp-serve.service/receipt-key` (what systemd's
/// `LoadCredential=` and mounted Kubernetes secrets give).
pub const FILE_SUFFIX: &str = "_FILE";

/// The secrets that may come from a file named by `NAME_FILE` (docs/deploy.md).
pub const FILE_SECRETS: &[&str] = &[
    TOKEN_VAR,
    RECEIPT_KEY_VAR,
    PREVIOUS_RECEIPT_KEY_VAR,
    crate::commands::serve::WEBHOOK_SECRET_VAR,
];

/// The secret `name` through `var` (normally the process environment): the value of
/// `name`, or the contents of the file `NAME_FILE` names, its trailing line breaks
/// removed (as `$(cat FILE)` would). Empty values count as unset, as everywhere in the
/// credentials.
///
/// # Errors
/// When both `name` and `NAME_FILE` are set, or the file cannot be read or is not UTF-8;
/// the message names the variable and the path, never the contents.
pub(crate) fn secret_from(
    var: impl Fn(&str) -> Option<String>,
    name: &str,
) -> anyhow::Result<Option<String>> {
    let set = |name: &str| var(name).filter(|value| !value.trim().is_empty());
    let file_var = format!("{name}{FILE_SUFFIX}");
    match (set(name), set(&file_var)) {
        (Some(_), Some(_)) => bail!("set only one of {name} and {file_var}"),
        (Some(value), None) => Ok(Some(value)),
        (None, None) => Ok(None),
        (None, Some(path)) => {
            let path = path.trim();
            let text = std::fs::read(path)
                .map_err(|e| anyhow::anyhow!("{file_var}: cannot read {path}: {}", e.kind()))?;
            let text = String::from_utf8(text)
                .map_err(|_| anyhow::anyhow!("{file_var}: {path} is not UTF-8 text"))?;
            let text = text.trim_end_matches(['\n', '\r']);
            Ok((!text.trim().is_empty()).then(|| text.to_owned()))
        }
    }
}

/// The secret `name` from the process environment, as [`secret_from`].
pub(crate) fn secret(name: &str) -> anyhow::Result<Option<String>> {
    secret_from(|n| std::env::var(n).ok(), name)
}

/// The process environment with every secret of [`FILE_SECRETS`] read through
/// [`secret`]: a getter for code that reads the environment by name.
pub(crate) fn secret_env() -> anyhow::Result<impl Fn(&str) -> Option<String>> {
    let mut resolved = BTreeMap::new();
    for name in FILE_SECRETS {
        resolved.insert(*name, secret(name)?);
    }
    Ok(move |name: &str| match resolved.get(name) {
        Some(value) => value.clone(),
        None => std::env::var(name).ok(),
    })
}

/// The previous receipt key and its window from the environment, `None` when
/// [`PREVIOUS_RECEIPT_KEY_VAR`] is unset or empty.
///
/// # Errors
/// When the key is set without a well-formed [`PREVIOUS_RECEIPT_KEY_UNTIL_VAR`], or with a
/// window longer than mp accepts (checked against the system clock).
pub(crate) fn previous_receipt_key(
    var: impl Fn(&str) -> Option<String>,
) -> anyhow::Result<Option<mp_core::approval::PreviousReceiptKey>> {
    let Some(key) = var(PREVIOUS_RECEIPT_KEY_VAR).and_then(ReceiptKey::new) else {
        return Ok(None);
    };
    let Some(until) = var(PREVIOUS_RECEIPT_KEY_UNTIL_VAR).filter(|t| !t.trim().is_empty()) else {
        anyhow::bail!(
            "{PREVIOUS_RECEIPT_KEY_VAR} is set without {PREVIOUS_RECEIPT_KEY_UNTIL_VAR}: give the end of the rotation window as an RFC 3339 time, at most {} days ahead (docs/deploy.md, \"Rotating the receipt key\")",
            mp_core::approval::MAX_ROTATION_WINDOW_DAYS
        );
    };
    let until = mp_core::ids::Timestamp::parse(&until)
        .map_err(|e| anyhow::anyhow!("{PREVIOUS_RECEIPT_KEY_UNTIL_VAR}: {e}"))?;
    let previous = mp_core::approval::PreviousReceiptKey { key, until };
    // Judge the window now, so a deployment with a window that is too long stops at
    // start-up (exit 2) instead of failing every tick.
    let now = mp_core::ids::Timestamp::from_unix_seconds(jiff::Timestamp::now().as_second())
        .map_err(|e| anyhow::anyhow!("the system clock: {e}"))?;
    previous.check_window(now)?;
    Ok(Some(previous))
}

/// A live configuration: the loaded files and their warnings.
pub(crate) fn load_live_config(
    dir: &Path,
) -> anyhow::Result<(mp_core::config::Config, Vec<String>)> {
    let files = read_config_dir(dir)?;
    let report = mp_core::config::load(&files);
    let warnings: Vec<String> = report.warnings().map(ToString::to_string).collect();
    let Some(config) = report.config else {
        let lines: Vec<String> = report.errors().map(ToString::to_string).collect();
        bail!(
            "the configuration in {} is invalid:\n  {}",
            dir.display(),
            lines.join("\n  ")
        );
    };
    Ok((config, warnings))
}

/// The GitHub credentials of a live run, from the environment.
pub(crate) fn live_credentials() -> anyhow::Result<Credentials> {
    Credentials::from_env(secret_env()?)?.ok_or_else(|| {
        anyhow::anyhow!(
            "no GitHub credentials: set MP_GITHUB_TOKEN (or MP_GITHUB_TOKEN_FILE), or MP_APP_ID \
             with MP_APP_PRIVATE_KEY or MP_APP_PRIVATE_KEY_PATH (see docs/deploy.md)"
        )
    })
}

/// The options of a live run: the configuration's, the shard, the receipt key from
/// [`RECEIPT_KEY_VAR`] and the user skills of `DIR/skills`.
pub(crate) fn live_options(
    config: &mp_core::config::Config,
    dir: &Path,
    shard: Option<mp_tick::Shard>,
    skill_calls: &SkillCalls,
) -> anyhow::Result<TickOptions> {
    let mut options = TickOptions::from_config(config);
    if let Some(shard) = shard {
        options = options.with_shard(shard);
    }
    let env = secret_env()?;
    if let Some(text) = env(RECEIPT_KEY_VAR)
        && let Some(key) = ReceiptKey::new(text.into_bytes())
    {
        options = options.with_receipt_key(key);
    }
    if let Some(previous) = previous_receipt_key(env)? {
        if options.receipt_key.is_none() {
            anyhow::bail!(
                "{PREVIOUS_RECEIPT_KEY_VAR} is set but {RECEIPT_KEY_VAR} is not: a rotation replaces one key with another (docs/deploy.md, \"Rotating the receipt key\")"
            );
        }
        options = options.with_previous_receipt_key(previous);
    }
    Ok(options.with_skills(skills_load::from_dir(
        config,
        &dir.join("skills"),
        skill_calls,
    )?))
}

/// The REST client of a live run against `api_url`.
pub(crate) fn live_rest_config(
    api_url: &str,
    config: &mp_core::config::Config,
    credentials: Credentials,
) -> RestConfig {
    let mut rest = RestConfig::new(api_url.to_owned(), credentials);
    // An installation token (Actions' GITHUB_TOKEN) cannot ask GitHub who it is.
    rest.token_app_slug = Some(config.env().bot_app_slug().to_owned());
    rest.reads = read_path(config);
    rest
}

/// The REST client's read path from `env.yml` `reads`.
pub(crate) fn read_path(config: &mp_core::config::Config) -> mp_github::rest::ReadPath {
    match config.env().reads() {
        mp_core::config::ReadSource::Rest => mp_github::rest::ReadPath::Rest,
        _ => mp_github::rest::ReadPath::Graphql,
    }
}

/// The REST client with the ETag cache loaded from `cache`, when given.
pub(crate) fn rest_client(config: RestConfig, cache: Option<&Path>) -> anyhow::Result<RestGitHub> {
    let client = RestGitHub::new(config).context("building the REST client")?;
    let Some(path) = cache else {
        return Ok(client);
    };
    let (cache, warning) = EtagCache::load(path);
    if let Some(warning) = warning {
        #[allow(clippy::print_stderr)]
        {
            eprintln!("mp: warning: {warning}");
        }
    }
    Ok(client.with_cache(cache))
}

pub(crate) fn save_cache(client: &RestGitHub, path: Option<&Path>) -> anyhow::Result<()> {
    if let Some(path) = path {
        client
            .cache_snapshot()
            .save(path)
            .with_context(|| format!("writing the HTTP cache {}", path.display()))?;
    }
    Ok(())
}

/// Requests per route as the REST client sent them (304 answers included).
pub(crate) fn rest_calls(client: &RestGitHub) -> BTreeMap<String, u64> {
    client
        .stats()
        .routes
        .iter()
        .map(|(route, stats)| (route.clone(), stats.requests))
        .collect()
}

/// The system clock, in whole seconds.
pub(crate) struct SystemClock;

impl mp_core::port::Clock for SystemClock {
    fn now(&self) -> mp_core::Timestamp {
        let seconds = jiff::Timestamp::now().as_second();
        mp_core::Timestamp::from_unix_seconds(seconds).unwrap_or_else(|_| {
            // Out of Timestamp's range only on a broken clock; the epoch fails everything
            // time-bound closed.
            mp_core::Timestamp::from_unix_seconds(0).unwrap_or_else(|_| unreachable!())
        })
    }
}

/// The environment variable naming this deployment's lease holder (its identity).
pub const LEASE_HOLDER_VAR: &str = "MP_LEASE_HOLDER";

/// The environment variable setting the lease duration in seconds (tests, and
/// deployments that must tune it; docs/decisions/0065).
pub const LEASE_SECONDS_VAR: &str = "MP_LEASE_SECONDS";

/// This host's name: `HOSTNAME`, else `/etc/hostname`.
fn host_name() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "an-unnamed-host".to_owned())
}

/// Whether another incarnation is gone: only one on this very host can be checked, by
/// its process id under `/proc`. Its pid being ours (a restarted container, where every
/// start is pid 1) means it is gone; a pid that is alive may be a copy of ours, so it is
/// presumed alive (the caller waits for its lease to expire). Without `/proc` nothing is
/// known.
struct LocalProcesses {
    host: String,
    pid: u32,
}

impl mp_tick::lease::Liveness for LocalProcesses {
    fn gone(&self, other: &mp_tick::lease::Incarnation) -> bool {
        if other.host != self.host || !Path::new("/proc/self").exists() {
            return false;
        }
        other.pid == self.pid || !Path::new(&format!("/proc/{}", other.pid)).exists()
    }
}

/// The lease identity `what` (`serve` or `tick`) gets by default: `what@host`, with the
/// shard for a sharded tick (`tick@host/0-2`, shards of one deployment being distinct
/// holders).
fn default_identity(what: &str, shard: Option<Shard>) -> String {
    let host = host_name();
    match shard {
        Some(shard) => format!("{what}@{host}/{}", shard.to_string().replace('/', "-")),
        None => format!("{what}@{host}"),
    }
}

/// Who holds the lease: the identity from [`LEASE_HOLDER_VAR`] (else
/// [`default_identity`]), this process as its incarnation (host, pid, start instant to the
/// nanosecond), and `/proc` to tell a dead predecessor on this host.
pub(crate) fn lease_holder(what: &str, shard: Option<Shard>) -> LeaseHolder {
    let identity = std::env::var(LEASE_HOLDER_VAR)
        .ok()
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| default_identity(what, shard));
    let host = host_name();
    let pid = std::process::id();
    let started = jiff::Timestamp::now().to_string();
    LeaseHolder::new(
        identity,
        Incarnation {
            host: host.clone(),
            pid,
            started,
        },
    )
    .with_liveness(std::sync::Arc::new(LocalProcesses { host, pid }))
}

/// The lease terms: [`LEASE_SECONDS_VAR`] when set, else `default` (`mp serve`: the
/// three-minute lease it renews every minute; `mp tick`: [`TICK_LEASE_SECONDS`]).
///
/// # Errors
/// When the variable is set but not a whole number of seconds from
/// [`MIN_LEASE_SECONDS`] to [`MAX_LEASE_SECONDS`].
pub(crate) fn lease_terms(default: LeaseTerms) -> anyhow::Result<LeaseTerms> {
    match std::env::var(LEASE_SECONDS_VAR) {
        Ok(text) => {
            let seconds: i64 = text.trim().parse().with_context(|| {
                format!("{LEASE_SECONDS_VAR} must be a whole number of seconds, not {text:?}")
            })?;
            if !(MIN_LEASE_SECONDS..=MAX_LEASE_SECONDS).contains(&seconds) {
                bail!(
                    "{LEASE_SECONDS_VAR} is {seconds}: the lease lasts from {MIN_LEASE_SECONDS} to {MAX_LEASE_SECONDS} seconds"
                );
            }
            Ok(LeaseTerms::new(seconds))
        }
        Err(_) => Ok(default),
    }
}

/// A live tick's lease when [`LEASE_SECONDS_VAR`] is not set: the service's three
/// minutes. A tick renews it every minute as it goes, between its steps, before each
/// repository and before each pull request, and writes nothing once it has not renewed it
/// within two minutes; a tick killed anywhere holds the next ones off for at most three
/// minutes (one killed on the same host not at all: the next takes it back at once).
/// decisions/0065, 0071.
pub(crate) const TICK_LEASE_SECONDS: i64 = mp_tick::lease::LEASE_SECONDS;

/// How long a live tick's pull-request path runs before it leaves the repositories not
/// yet started for the next tick: three minutes, so that with the branch supervisor and
/// the state saves a cold tick over a large installation ends within a 5-minute cron
/// period at the shipped pacing (decisions/0071, docs/performance.md).
pub(crate) const TICK_PR_PATH_BUDGET: std::time::Duration = std::time::Duration::from_secs(180);

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn the_previous_key_needs_a_window_mp_accepts() {
        assert!(previous_receipt_key(env(&[])).expect("unset").is_none());
        assert!(
            previous_receipt_key(env(&[(PREVIOUS_RECEIPT_KEY_VAR, "")]))
                .expect("empty")
                .is_none()
        );
        let missing = previous_receipt_key(env(&[(PREVIOUS_RECEIPT_KEY_VAR, "old")]))
            .expect_err("no window end");
        assert!(
            missing.to_string().contains(PREVIOUS_RECEIPT_KEY_UNTIL_VAR),
            "{missing}"
        );
        let garbled = previous_receipt_key(env(&[
            (PREVIOUS_RECEIPT_KEY_VAR, "old"),
            (PREVIOUS_RECEIPT_KEY_UNTIL_VAR, "next week"),
        ]))
        .expect_err("not a time");
        assert!(garbled.to_string().contains("RFC 3339"), "{garbled}");
        let far = previous_receipt_key(env(&[
            (PREVIOUS_RECEIPT_KEY_VAR, "old"),
            (PREVIOUS_RECEIPT_KEY_UNTIL_VAR, "2999-01-01T00:00:00Z"),
        ]))
        .expect_err("too long");
        assert!(far.to_string().contains("more than 30 days"), "{far}");
        let past = previous_receipt_key(env(&[
            (PREVIOUS_RECEIPT_KEY_VAR, "old"),
            (PREVIOUS_RECEIPT_KEY_UNTIL_VAR, "2020-01-01T00:00:00Z"),
        ]))
        .expect("an ended window is accepted: it admits nothing");
        assert!(past.is_some());
    }
    #[test]
    fn a_secret_comes_from_its_variable_or_the_file_its_file_variable_names() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let file = dir.path().join("receipt-key");
        std::fs::write(&file, "from-the-file\n\n").expect("written");
        let path = file.display().to_string();
        let missing = dir.path().join("absent").display().to_string();

        assert_eq!(secret_from(env(&[]), RECEIPT_KEY_VAR).expect("unset"), None);
        assert_eq!(
            secret_from(
                env(&[(RECEIPT_KEY_VAR, "in-the-variable")]),
                RECEIPT_KEY_VAR
            )
            .expect("set"),
            Some("in-the-variable".to_owned())
        );
        assert_eq!(
            secret_from(env(&[("MP_RECEIPT_KEY_FILE", &path)]), RECEIPT_KEY_VAR).expect("a file"),
            Some("from-the-file".to_owned()),
            "trailing line breaks go, as with $(cat FILE)"
        );
        assert_eq!(
            secret_from(
                env(&[(RECEIPT_KEY_VAR, ""), ("MP_RECEIPT_KEY_FILE", &path)]),
                RECEIPT_KEY_VAR
            )
            .expect("an empty variable is unset"),
            Some("from-the-file".to_owned())
        );
        let both = secret_from(
            env(&[(RECEIPT_KEY_VAR, "x"), ("MP_RECEIPT_KEY_FILE", &path)]),
            RECEIPT_KEY_VAR,
        )
        .expect_err("two sources");
        assert_eq!(
            both.to_string(),
            "set only one of MP_RECEIPT_KEY and MP_RECEIPT_KEY_FILE"
        );
        let unreadable = secret_from(
            env(&[("MP_WEBHOOK_SECRET_FILE", &missing)]),
            "MP_WEBHOOK_SECRET",
        )
        .expect_err("no such file");
        assert_eq!(
            unreadable.to_string(),
            format!("MP_WEBHOOK_SECRET_FILE: cannot read {missing}: entity not found")
        );
        let empty = dir.path().join("empty");
        std::fs::write(&empty, "\n").expect("written");
        assert_eq!(
            secret_from(
                env(&[("MP_GITHUB_TOKEN_FILE", &empty.display().to_string())]),
                TOKEN_VAR
            )
            .expect("an empty file"),
            None,
            "an empty file is an unset secret"
        );
    }
}
