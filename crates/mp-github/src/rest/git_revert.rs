//! Pushing a revert commit with the `git` CLI, since GitHub's REST API cannot revert a commit.
//!
//! Everything happens in a fresh directory under the system temp dir, removed in every
//! case: a shallow fetch of `main` and of the commit, `git revert --no-commit`, a commit by
//! `mp[bot]`, and a push that may only create the branch. The token travels only in the
//! environment of the `git` processes (as an `http.extraHeader`), never in argv, the URL or
//! an error message.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use base64::Engine as _;
use mp_core::ids::CommitSha;
use mp_core::port::GitHubError;
use tokio::process::Command;

use super::auth::Secret;

/// The branch the revert is applied on.
const MAIN: &str = "main";
/// The bound on each `git` command.
const GIT_TIMEOUT: Duration = Duration::from_secs(120);
/// The author and committer of revert commits.
const BOT_NAME: &str = "mp[bot]";
/// Their e-mail address.
const BOT_EMAIL: &str = "mp-bot@users.noreply.github.com";
/// The most of git's output quoted in an error message.
const MAX_QUOTED: usize = 800;
/// Environment variables passed through to `git` (everything else is cleared).
const PASSED_ENV: [&str; 14] = [
    "PATH",
    "TMPDIR",
    "SYSTEMROOT",
    "http_proxy",
    "https_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "no_proxy",
    "NO_PROXY",
    "ALL_PROXY",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "GIT_SSL_CAINFO",
    "GIT_SSL_CAPATH",
];

/// Reverts `sha` on top of `main` of `remote_url` and pushes the result as a new branch.
///
/// The commit carries `message` (surrounding blank lines trimmed; an empty message becomes
/// `Revert <sha7>`) and is authored and committed by `mp[bot]`. Returns the new commit's
/// SHA, whose parent is the head of `main` fetched. `token`, when given, authenticates
/// HTTPS remotes as `x-access-token`.
///
/// # Errors
/// - [`GitHubError::Conflict`] when the revert does not apply, would change nothing, `sha`
///   is a merge commit, or `branch` already exists on the remote (nothing is pushed then).
/// - [`GitHubError::NotFound`] when the remote has no `main` or no such commit.
/// - [`GitHubError::Status`] (422) when `branch` is not a valid branch name.
/// - [`GitHubError::Unavailable`] when `git` is missing, times out (120 s per command), or
///   fetching or pushing fails otherwise.
pub async fn push_revert_with_git(
    remote_url: &str,
    token: Option<&Secret>,
    sha: &CommitSha,
    branch: &str,
    message: &str,
) -> Result<CommitSha, GitHubError> {
    push_revert_in(
        &std::env::temp_dir(),
        remote_url,
        token,
        sha,
        branch,
        message,
    )
    .await
}

/// [`push_revert_with_git`] with its scratch directory created under `base`.
pub(crate) async fn push_revert_in(
    base: &Path,
    remote_url: &str,
    token: Option<&Secret>,
    sha: &CommitSha,
    branch: &str,
    message: &str,
) -> Result<CommitSha, GitHubError> {
    let scratch = Scratch::create(base).await?;
    let git = Git::new(scratch.path(), remote_url, token);
    let result = revert(&git, remote_url, sha, branch, message).await;
    scratch.remove().await;
    result
}

async fn revert(
    git: &Git,
    remote: &str,
    sha: &CommitSha,
    branch: &str,
    message: &str,
) -> Result<CommitSha, GitHubError> {
    let short = sha.short();
    let revert_what = format!("revert of {short} onto {MAIN}");
    if remote.starts_with('-') {
        return Err(GitHubError::Malformed {
            route: "git fetch".to_owned(),
            message: "the remote URL must not start with '-'".to_owned(),
        });
    }
    let object_format = if sha.as_str().len() == 64 {
        "--object-format=sha256"
    } else {
        "--object-format=sha1"
    };
    git.run_ok("init", &["init", "-q", object_format, "repo"], false)
        .await?;
    let name_ok = !branch.starts_with('-')
        && git
            .run(
                "check-ref-format",
                &["check-ref-format", &format!("refs/heads/{branch}")],
                true,
            )
            .await?
            .ok;
    if !name_ok {
        return Err(GitHubError::Status {
            route: "git push".to_owned(),
            status: 422,
            message: format!("{branch:?} is not a valid branch name"),
        });
    }

    let main_spec = format!("+refs/heads/{MAIN}:refs/mp/main");
    let fetched = git
        .run("fetch", &fetch_args(remote, &main_spec), true)
        .await?;
    if !fetched.ok {
        return Err(fetch_error(git, &fetched, format!("branch {MAIN}")));
    }
    let sha_spec = format!("+{}:refs/mp/revert", sha.as_str());
    let fetched = git
        .run("fetch", &fetch_args(remote, &sha_spec), true)
        .await?;
    if !fetched.ok {
        return Err(fetch_error(git, &fetched, format!("commit {sha}")));
    }

    let object = git
        .run_ok("cat-file", &["cat-file", "commit", sha.as_str()], true)
        .await?;
    let parents = object
        .lines()
        .take_while(|line| !line.is_empty())
        .filter(|line| line.starts_with("parent "))
        .count();
    if parents > 1 {
        return Err(GitHubError::Conflict {
            what: revert_what,
            message: format!(
                "{short} is a merge commit with {parents} parents: pick the mainline and \
                 revert it by hand (git revert -m N)"
            ),
        });
    }

    git.run_ok(
        "checkout",
        &["checkout", "-q", "--detach", "refs/mp/main"],
        true,
    )
    .await?;
    let reverted = git
        .run("revert", &["revert", "--no-commit", sha.as_str()], true)
        .await?;
    if !reverted.ok {
        return Err(GitHubError::Conflict {
            what: revert_what,
            message: format!(
                "the revert does not apply: {}",
                git.quote(&without_hints(&reverted.stderr))
            ),
        });
    }
    let unchanged = git
        .run("diff", &["diff", "--cached", "--quiet"], true)
        .await?;
    if unchanged.ok {
        return Err(GitHubError::Conflict {
            what: revert_what,
            message: format!("reverting {short} changes nothing: {MAIN} no longer has it"),
        });
    }

    let message = match message.trim() {
        "" => format!("Revert {short}"),
        text => text.to_owned(),
    };
    let message_file = git.root.join("COMMIT_MSG");
    tokio::fs::write(&message_file, message.as_bytes())
        .await
        .map_err(|err| unavailable("git commit", &format!("cannot write the message: {err}")))?;
    let message_path = message_file.to_string_lossy().into_owned();
    git.run_ok(
        "commit",
        &[
            "commit",
            "-q",
            "--no-verify",
            "--cleanup=whitespace",
            "-F",
            &message_path,
        ],
        true,
    )
    .await?;
    let head = git
        .run_ok("rev-parse", &["rev-parse", "HEAD"], true)
        .await?;
    let new_sha = CommitSha::parse(head.trim()).map_err(|err| GitHubError::Malformed {
        route: "git rev-parse".to_owned(),
        message: err.to_string(),
    })?;

    let branch_ref = format!("refs/heads/{branch}");
    let exists = || GitHubError::Conflict {
        what: format!("branch {branch}"),
        message: "already exists on the remote".to_owned(),
    };
    let listed = git
        .run_ok("ls-remote", &["ls-remote", remote, &branch_ref], true)
        .await?;
    if !listed.trim().is_empty() {
        return Err(exists());
    }
    // An empty lease: the push may only create the branch, never move an existing one.
    let lease = format!("--force-with-lease={branch_ref}:");
    let refspec = format!("HEAD:{branch_ref}");
    let pushed = git
        .run(
            "push",
            &["push", "--quiet", "--porcelain", &lease, remote, &refspec],
            true,
        )
        .await?;
    if !pushed.ok {
        let output = format!("{}\n{}", pushed.stdout, pushed.stderr);
        if ["stale info", "[rejected]", "already exists"]
            .iter()
            .any(|needle| output.contains(needle))
        {
            return Err(exists());
        }
        return Err(unavailable("git push", &git.quote(&output)));
    }
    Ok(new_sha)
}

fn fetch_args<'a>(remote: &'a str, refspec: &'a str) -> [&'a str; 6] {
    [
        "fetch",
        "--quiet",
        "--no-tags",
        "--depth=2",
        remote,
        refspec,
    ]
}

fn fetch_error(git: &Git, fetched: &Ran, what: String) -> GitHubError {
    let missing = [
        "not our ref",
        "couldn't find remote ref",
        "no such remote ref",
    ];
    if missing.iter().any(|needle| fetched.stderr.contains(needle)) {
        return GitHubError::NotFound { what };
    }
    unavailable("git fetch", &git.quote(&fetched.stderr))
}

fn without_hints(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|line| !line.starts_with("hint:"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn unavailable(route: &str, message: &str) -> GitHubError {
    GitHubError::Unavailable {
        route: route.to_owned(),
        message: message.to_owned(),
    }
}

/// The outcome of one `git` command.
struct Ran {
    ok: bool,
    stdout: String,
    stderr: String,
}

/// Runs `git` with a clean, credential-carrying environment inside the scratch directory.
struct Git {
    root: PathBuf,
    env: Vec<(String, String)>,
    /// Texts that must never appear in an error message.
    secrets: Vec<String>,
}

impl Git {
    fn new(root: &Path, remote_url: &str, token: Option<&Secret>) -> Self {
        let root_text = root.to_string_lossy().into_owned();
        let mut config = vec![
            ("init.defaultBranch".to_owned(), MAIN.to_owned()),
            ("advice.detachedHead".to_owned(), "false".to_owned()),
            ("commit.gpgSign".to_owned(), "false".to_owned()),
            ("core.autocrlf".to_owned(), "false".to_owned()),
            ("gc.auto".to_owned(), "0".to_owned()),
        ];
        let mut secrets = Vec::new();
        if let Some(token) = token.filter(|token| !token.expose().is_empty()) {
            let basic = base64::engine::general_purpose::STANDARD
                .encode(format!("x-access-token:{}", token.expose()));
            config.push((
                "http.extraHeader".to_owned(),
                format!("Authorization: Basic {basic}"),
            ));
            secrets.push(token.expose().to_owned());
            secrets.push(basic);
        }
        if let Some(userinfo) = url_userinfo(remote_url) {
            secrets.push(userinfo.to_owned());
        }
        let mut env: Vec<(String, String)> = PASSED_ENV
            .iter()
            .filter_map(|name| std::env::var(name).ok().map(|v| ((*name).to_owned(), v)))
            .collect();
        let fixed = [
            ("HOME", root_text.as_str()),
            ("XDG_CONFIG_HOME", root_text.as_str()),
            ("GIT_CONFIG_NOSYSTEM", "1"),
            ("GIT_TERMINAL_PROMPT", "0"),
            ("GIT_AUTHOR_NAME", BOT_NAME),
            ("GIT_AUTHOR_EMAIL", BOT_EMAIL),
            ("GIT_COMMITTER_NAME", BOT_NAME),
            ("GIT_COMMITTER_EMAIL", BOT_EMAIL),
            ("LC_ALL", "C"),
        ];
        env.extend(
            fixed
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        );
        env.push(("GIT_CONFIG_COUNT".to_owned(), config.len().to_string()));
        for (index, (key, value)) in config.into_iter().enumerate() {
            env.push((format!("GIT_CONFIG_KEY_{index}"), key));
            env.push((format!("GIT_CONFIG_VALUE_{index}"), value));
        }
        Self {
            root: root.to_owned(),
            env,
            secrets,
        }
    }

    /// Runs `git args` (in the clone when `in_repo`, else in the scratch root).
    async fn run(&self, step: &str, args: &[&str], in_repo: bool) -> Result<Ran, GitHubError> {
        let route = format!("git {step}");
        let dir = if in_repo {
            self.root.join("repo")
        } else {
            self.root.clone()
        };
        let mut command = Command::new("git");
        command
            .args(args)
            .current_dir(dir)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let output = match tokio::time::timeout(GIT_TIMEOUT, command.output()).await {
            Err(_) => {
                let secs = GIT_TIMEOUT.as_secs();
                return Err(unavailable(&route, &format!("timed out after {secs} s")));
            }
            Ok(Err(err)) if err.kind() == std::io::ErrorKind::NotFound => {
                return Err(unavailable(&route, "git is not installed or not on PATH"));
            }
            Ok(Err(err)) => {
                return Err(unavailable(&route, &format!("cannot run git: {err}")));
            }
            Ok(Ok(output)) => output,
        };
        Ok(Ran {
            ok: output.status.success(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        })
    }

    /// Runs `git args` and answers its stdout; a failure is [`GitHubError::Unavailable`].
    async fn run_ok(
        &self,
        step: &str,
        args: &[&str],
        in_repo: bool,
    ) -> Result<String, GitHubError> {
        let ran = self.run(step, args, in_repo).await?;
        if ran.ok {
            return Ok(ran.stdout);
        }
        Err(unavailable(
            &format!("git {step}"),
            &self.quote(&ran.stderr),
        ))
    }

    /// `text` scrubbed of every secret, trimmed and cut to [`MAX_QUOTED`] characters.
    fn quote(&self, text: &str) -> String {
        let mut clean = text.trim().to_owned();
        for secret in &self.secrets {
            clean = clean.replace(secret.as_str(), "[redacted]");
        }
        if clean.chars().count() > MAX_QUOTED {
            clean = clean.chars().take(MAX_QUOTED).collect::<String>() + "...";
        }
        clean
    }
}

/// The `user:password` part of a URL such as `https://user:pw@host/path`, if any.
fn url_userinfo(url: &str) -> Option<&str> {
    let (_, rest) = url.split_once("://")?;
    let authority = rest.split('/').next()?;
    let (userinfo, _) = authority.rsplit_once('@')?;
    (!userinfo.is_empty()).then_some(userinfo)
}

/// A uniquely named scratch directory, removed by [`Scratch::remove`] or on drop.
struct Scratch {
    path: PathBuf,
    removed: bool,
}

impl Scratch {
    async fn create(base: &Path) -> Result<Self, GitHubError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.subsec_nanos());
        let name = format!(
            "mp-revert-{}-{}-{nanos}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let path = base.join(name);
        tokio::fs::create_dir(&path).await.map_err(|err| {
            unavailable(
                "git",
                &format!(
                    "cannot create a work directory in {}: {err}",
                    base.display()
                ),
            )
        })?;
        Ok(Self {
            path,
            removed: false,
        })
    }

    fn path(&self) -> &Path {
        &self.path
    }

    async fn remove(mut self) {
        // Best effort: a leftover directory in the temp dir harms nothing but space.
        let _ = tokio::fs::remove_dir_all(&self.path).await;
        self.removed = true;
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !self.removed {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

#[cfg(test)]
mod tests;
