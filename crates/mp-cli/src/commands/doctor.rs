//! `mp doctor`: checks a deployment against GitHub before its first tick (the definition of
//! the subcommand lives here too).
//!
//! The reads go through the REST client; which check passes, fails or warns is decided by
//! `mp_core::doctor` over what was read. `--create-labels` is the only write.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use mp_core::config::Config;
use mp_core::doctor::{self, Access, Check, Credentials, Facts, RepoFacts, SeenChecks};
use mp_core::ids::RepoName;
use mp_core::port::{GitHub, GitHubError, GitHubHistory};
use mp_core::state::BOT_STATE_BRANCH;
use mp_github::rest::RestGitHub;
use serde_json::{Value, json};

use crate::Exit;
use crate::cli::Format;
use crate::commands::config_validate::read_config_dir;
use crate::live::{RECEIPT_KEY_VAR, live_credentials, live_rest_config, secret};

/// How many of the latest commits of a gated branch are searched for the required checks.
const RECENT_COMMITS: usize = 5;

/// Where GitHub Actions workflows live.
const WORKFLOWS_DIR: &str = ".github/workflows";

/// Arguments of `mp doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// The configuration directory (see docs/deploy.md). Credentials come from the
    /// environment as for `mp tick --config`.
    #[arg(long, value_name = "DIR")]
    pub config: PathBuf,
    /// `text` (one ✓, ✗ or ! line per check, with the fix under each ✗) or `json`
    /// (`{"ok", "checks": [{"name", "status", "detail", "fix"}]}`).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Create the labels mp uses that a repository lacks (the only write doctor makes),
    /// then check again.
    #[arg(long)]
    pub create_labels: bool,
    #[command(flatten)]
    pub api: crate::cli::ApiUrl,
}

/// A label `--create-labels` created, or failed to create.
struct Created {
    repo: RepoName,
    label: &'static str,
    /// The spelling it had, when it was renamed rather than created.
    renamed_from: Option<String>,
    error: Option<String>,
}

fn text_of(error: &GitHubError) -> String {
    error.to_string()
}

/// Whether GitHub refused the credentials themselves (401 Bad credentials).
fn unauthorized(error: &GitHubError) -> bool {
    matches!(error, GitHubError::Status { status: 401, .. })
}

/// How mp reaches `repo`, GitHub's default branch when the read told it, and the refusal
/// when GitHub refused the credentials.
async fn access_of(
    client: &RestGitHub,
    repo: &RepoName,
) -> (Access, Option<Result<String, String>>, Option<String>) {
    let refused = |error: &GitHubError| unauthorized(error).then(|| text_of(error));
    if client.is_app() {
        return match client.installation_permissions(repo).await {
            Ok(Some(permissions)) => (Access::Installation(permissions), None, None),
            Ok(None) => (Access::NotInstalled, None, None),
            Err(error) => (Access::Failed(text_of(&error)), None, refused(&error)),
        };
    }
    match client.default_branch(repo).await {
        Ok(branch) => (Access::Readable, Some(Ok(branch)), None),
        Err(error) => (Access::Failed(text_of(&error)), None, refused(&error)),
    }
}

/// Which App published each check name on the latest commits of `branch`.
async fn seen_checks(
    client: &RestGitHub,
    repo: &RepoName,
    branch: &str,
) -> Result<SeenChecks, String> {
    let commits = client
        .branch_commits(repo, branch, RECENT_COMMITS)
        .await
        .map_err(|e| text_of(&e))?;
    let mut seen = SeenChecks {
        commits: commits.len().min(RECENT_COMMITS),
        apps: BTreeMap::new(),
    };
    for commit in commits.iter().take(RECENT_COMMITS) {
        let runs = client
            .check_runs(repo, &commit.sha)
            .await
            .map_err(|e| text_of(&e))?;
        for run in runs {
            seen.apps
                .entry(run.name)
                .or_default()
                .insert(run.app_slug.unwrap_or_else(|| "?".to_owned()));
        }
    }
    Ok(seen)
}

/// The workflows of the governance repository at `branch`, path and text.
async fn workflows(
    client: &RestGitHub,
    repo: &RepoName,
    branch: &str,
) -> Result<Vec<(String, String)>, String> {
    let paths = client
        .directory_files(repo, WORKFLOWS_DIR, branch)
        .await
        .map_err(|e| text_of(&e))?;
    let mut found = Vec::new();
    for path in paths {
        if !(path.ends_with(".yml") || path.ends_with(".yaml")) {
            continue;
        }
        match client.file(repo, &path, branch).await {
            Ok(Some(content)) => found.push((path, content.text)),
            Ok(None) => {}
            Err(error) => return Err(text_of(&error)),
        }
    }
    Ok(found)
}

/// Creates the labels `repo` lacks, and renames those it spells in another case to the
/// exact name mp reads.
async fn create_missing(
    client: &RestGitHub,
    config: &Config,
    repo: &RepoName,
    existing: &[String],
    created: &mut Vec<Created>,
) {
    for spec in doctor::missing_labels(config, repo, existing) {
        let error = client
            .create_label(repo, spec.name, spec.color, spec.description)
            .await
            .err()
            .map(|e| text_of(&e));
        created.push(Created {
            repo: repo.clone(),
            label: spec.name,
            renamed_from: None,
            error,
        });
    }
    for (spec, as_is) in doctor::miscased_labels(config, repo, existing) {
        let error = client
            .rename_label(repo, &as_is, spec.name)
            .await
            .err()
            .map(|e| text_of(&e));
        created.push(Created {
            repo: repo.clone(),
            label: spec.name,
            renamed_from: Some(as_is),
            error,
        });
    }
}

/// Reads everything the checks need (and creates missing labels when asked).
async fn gather(
    client: &RestGitHub,
    config: &Config,
    create_labels: bool,
    doctor_command: String,
    created: &mut Vec<Created>,
) -> Facts {
    let mut credentials = match client.bot_login().await {
        Ok(login) if client.is_app() => {
            Credentials::App(Ok(login.as_str().trim_end_matches("[bot]").to_owned()))
        }
        Ok(login) => Credentials::Token(Ok(login.as_str().to_owned())),
        Err(error) if client.is_app() => Credentials::App(Err(text_of(&error))),
        Err(error) => Credentials::Token(Err(text_of(&error))),
    };
    let governance = config.projects().governance_repo();
    let mut repos = Vec::new();
    let mut governance_branch = None;
    for repo in doctor::repositories(config) {
        let (access, read_branch, refused) = access_of(client, &repo).await;
        // An installation token's login comes from env.yml without a call: the first
        // refusal of the credentials is what tells that they do not work.
        if let Some(why) = refused {
            credentials = match credentials {
                Credentials::Token(Ok(_)) => Credentials::Token(Err(why)),
                Credentials::App(Ok(_)) => Credentials::App(Err(why)),
                other => other,
            };
        }
        let mut facts = RepoFacts {
            repo: repo.clone(),
            access,
            default_branch: None,
            labels: None,
            checks: None,
            rules: None,
        };
        if facts.access.reachable() {
            let configured = config
                .projects()
                .repo_override(&repo)
                .and_then(|o| o.default_branch())
                .is_some();
            if !configured {
                facts.default_branch = Some(match read_branch {
                    Some(read) => read,
                    None => client.default_branch(&repo).await.map_err(|e| text_of(&e)),
                });
            }
            let branch = doctor::gated_branch(config, &repo, facts.default_branch.as_ref());
            let mut labels = client.labels(&repo).await.map_err(|e| text_of(&e));
            if create_labels && let Ok(existing) = &labels {
                create_missing(client, config, &repo, existing, created).await;
                labels = client.labels(&repo).await.map_err(|e| text_of(&e));
            }
            facts.labels = Some(labels);
            if config.projects().is_supervised(&repo) {
                facts.checks = Some(seen_checks(client, &repo, &branch).await);
                facts.rules = Some(
                    client
                        .branch_rules(&repo, &branch)
                        .await
                        .map_err(|e| text_of(&e)),
                );
            }
            if &repo == governance {
                governance_branch = Some(branch);
            }
        }
        repos.push(facts);
    }
    let mut state_load = None;
    let (bot_state, bot_state_rules, workflows) = match governance_branch {
        Some(branch) => {
            let bot_state = match client.branch_head(governance, BOT_STATE_BRANCH).await {
                Ok(_) => Ok(true),
                Err(GitHubError::NotFound { .. }) => Ok(false),
                Err(error) => Err(text_of(&error)),
            };
            if bot_state == Ok(true) {
                state_load = Some(load_state(client, config, &branch).await);
            }
            let rules = client
                .branch_rules(governance, BOT_STATE_BRANCH)
                .await
                .map_err(|e| text_of(&e));
            (
                Some(bot_state),
                Some(rules),
                Some(workflows(client, governance, &branch).await),
            )
        }
        None => (None, None, None),
    };
    // The environments only when a workflow reads the App's key through one.
    let through_environment = workflows.as_ref().is_some_and(|read| {
        read.as_ref().is_ok_and(|found| {
            found.iter().any(|(_, text)| {
                doctor::reads_app_key(text) && !doctor::environment_names(text).is_empty()
            })
        })
    });
    let environments = if through_environment {
        Some(
            client
                .environments(governance)
                .await
                .map_err(|e| text_of(&e)),
        )
    } else {
        None
    };
    Facts {
        credentials,
        repos,
        bot_state,
        state_load,
        bot_state_rules,
        receipt_key_set: secret(RECEIPT_KEY_VAR).is_ok_and(|k| k.is_some()),
        workflows,
        environments,
        doctor_command,
    }
}

/// Loads the state on `bot-state` exactly as a tick does (the same reads, the same checks
/// of who wrote it), through a dry run so nothing is written: `Err` is the reason the
/// tick would stop with exit 3.
async fn load_state(client: &RestGitHub, config: &Config, branch: &str) -> Result<(), String> {
    let bot = client.bot_login().await.map_err(|e| text_of(&e))?;
    let governance = config.projects().governance_repo();
    let authority = mp_core::branch::IncidentAuthority::new(bot, governance.clone());
    let guard = mp_tick::state_store::StateGuard::new(authority, config.allowlist().to_vec());
    let read_only = mp_tick::DryRun::with_history(client);
    mp_tick::state_store::StateStore::load(&read_only, governance, branch, &guard)
        .await
        .map(|_| ())
        .map_err(|error| error.to_string())
}

/// `word` as one word of a POSIX shell command: as is when it holds only characters no
/// shell treats specially, else in single quotes.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-:=@%+,".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

fn check_json(check: &Check) -> Value {
    json!({
        "name": check.name,
        "status": check.status.as_str(),
        "detail": check.detail,
        "fix": check.fix,
    })
}

fn print_text(checks: &[Check], created: &[Created], out: &mut dyn Write) -> anyhow::Result<()> {
    for made in created {
        match (&made.error, &made.renamed_from) {
            (None, None) => writeln!(out, "+ created the label {} in {}", made.label, made.repo)?,
            (None, Some(from)) => writeln!(
                out,
                "+ renamed the label {from} to {} in {}",
                made.label, made.repo
            )?,
            (Some(error), None) => writeln!(
                out,
                "✗ could not create the label {} in {}: {error}",
                made.label, made.repo
            )?,
            (Some(error), Some(from)) => writeln!(
                out,
                "✗ could not rename the label {from} to {} in {}: {error}",
                made.label, made.repo
            )?,
        }
    }
    for check in checks {
        let mut lines = check.detail.lines();
        writeln!(
            out,
            "{} {}: {}",
            check.status.mark(),
            check.name,
            lines.next().unwrap_or("")
        )?;
        for line in lines {
            writeln!(out, "    {line}")?;
        }
        if let Some(fix) = &check.fix {
            writeln!(out, "    fix: {fix}")?;
        }
    }
    let count = |status| checks.iter().filter(|c| c.status == status).count();
    writeln!(
        out,
        "{} checks: {} ok, {} failed, {} warnings",
        checks.len(),
        count(doctor::Status::Ok),
        count(doctor::Status::Fail),
        count(doctor::Status::Warn)
    )?;
    Ok(())
}

fn print(
    args: &DoctorArgs,
    checks: &[Check],
    created: &[Created],
    out: &mut dyn Write,
) -> anyhow::Result<Exit> {
    let ok = doctor::all_ok(checks);
    match args.format {
        Format::Text => print_text(checks, created, out)?,
        Format::Json => {
            let created: Vec<Value> = created
                .iter()
                .map(|c| {
                    json!({
                        "repo": c.repo.to_string(),
                        "label": c.label,
                        "renamed_from": c.renamed_from,
                        "error": c.error,
                    })
                })
                .collect();
            crate::output::json(
                out,
                &json!({
                    "ok": ok,
                    "checks": checks.iter().map(check_json).collect::<Vec<_>>(),
                    "created_labels": created,
                }),
            )?;
        }
    }
    Ok(if ok { Exit::Ok } else { Exit::Findings })
}

pub fn run(args: &DoctorArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let files = read_config_dir(&args.config)?;
    let report = mp_core::config::load(&files);
    let errors: Vec<String> = report.errors().map(ToString::to_string).collect();
    let config_dir = shell_word(&args.config.display().to_string());
    let mut checks = vec![doctor::config_check(
        &errors,
        report.warnings().count(),
        &config_dir,
    )];
    let Some(config) = report.config else {
        return print(args, &checks, &[], out);
    };
    let credentials = live_credentials()?;
    let client = RestGitHub::new(live_rest_config(&args.api.url, &config, credentials))
        .context("building the REST client")?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut created = Vec::new();
    let mut doctor_command = format!("mp doctor --config {config_dir}");
    if args.api.url.trim_end_matches('/') != crate::cli::DEFAULT_API_URL {
        doctor_command.push_str(&format!(" --api-url {}", shell_word(&args.api.url)));
    }
    let facts = runtime.block_on(gather(
        &client,
        &config,
        args.create_labels,
        doctor_command,
        &mut created,
    ));
    checks.extend(doctor::checks(&config, &facts));
    print(args, &checks, &created, out)
}
