//! The `git` command line for sources: a shallow clone of one tag or branch, and the commit
//! a tag or branch names on the remote now (`git ls-remote`).
//!
//! Every run sets `GIT_TERMINAL_PROMPT=0` (never wait for a password), ignores the system
//! git configuration (`GIT_CONFIG_NOSYSTEM=1`) but keeps the user's own (credential helpers,
//! proxies and URL rewrites are what a user expects to apply), skips Git LFS downloads, and
//! checks out without line-ending conversion so the tree digest does not depend on the
//! machine. Only `https`, `ssh` and `file` transports are allowed (`GIT_ALLOW_PROTOCOL`),
//! fetched objects are checked (`transfer.fsckObjects`), submodules are never fetched, and
//! credentials in a URL never reach a message.

use std::path::Path;
use std::process::{Command, Output};

/// What a name on the remote is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefKind {
    /// `refs/tags/<name>`; an annotated tag is peeled to its commit.
    Tag,
    /// `refs/heads/<name>`.
    Branch,
}

/// A git run that failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("git {action} of `{url}` failed: {detail}")]
pub struct GitError {
    /// `clone`, `ls-remote` or `rev-parse`.
    pub action: &'static str,
    /// The URL, with any user name or password replaced by `***`.
    pub url: String,
    /// git's trimmed standard error (credentials removed), or why git did not run.
    pub detail: String,
}

/// Replaces the user-info part of every `scheme://user:secret@host` in `text` by `***`.
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        let authority_end = tail
            .find(|c: char| c == '/' || c.is_whitespace() || c == '\'' || c == '"')
            .unwrap_or(tail.len());
        match tail[..authority_end].rfind('@') {
            Some(user_end) => {
                out.push_str("***");
                out.push_str(&tail[user_end..authority_end]);
            }
            None => out.push_str(&tail[..authority_end]),
        }
        rest = &tail[authority_end..];
    }
    out.push_str(rest);
    out
}

/// The variables through which a git hook points git at its own repository. mp clears
/// them for every `git` it runs, so a command never acts on the wrong repository.
pub const REPOSITORY_VARIABLES: [&str; 7] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
];

fn git() -> Command {
    let mut command = Command::new("git");
    command
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_LFS_SKIP_SMUDGE", "1")
        // Authenticated or local transports only: `http://` and `git://` are plain text.
        .env("GIT_ALLOW_PROTOCOL", "https:ssh:file")
        .args([
            "-c",
            "core.autocrlf=false",
            "-c",
            "core.symlinks=true",
            "-c",
            "advice.detachedHead=false",
            "-c",
            "transfer.fsckObjects=true",
        ]);
    // Run from inside a git hook, mp inherits variables that point at the adopter's own
    // repository; none of them may leak into a clone of a source.
    for name in REPOSITORY_VARIABLES {
        command.env_remove(name);
    }
    command
}

fn run(mut command: Command, action: &'static str, url: &str) -> Result<Output, GitError> {
    let fail = |detail: String| GitError {
        action,
        url: redact(url),
        detail: redact(&detail),
    };
    let output = command
        .output()
        .map_err(|e| fail(format!("cannot run git: {e}")))?;
    if output.status.success() {
        Ok(output)
    } else {
        let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
        Err(fail(if stderr.is_empty() {
            format!("git exited with {}", output.status)
        } else {
            stderr
        }))
    }
}

/// `git clone --depth=1 --branch <reference> --single-branch --no-recurse-submodules` of
/// `url` into `into` (missing or empty), then returns the checked-out commit (`HEAD`).
///
/// # Errors
/// [`GitError`] with git's message when the clone or `rev-parse` fails (unknown ref,
/// unreachable remote, ...).
pub fn shallow_clone(url: &str, reference: &str, into: &Path) -> Result<String, GitError> {
    let mut clone = git();
    clone
        .args(["clone", "--quiet", "--depth=1", "--single-branch"])
        .arg("--no-recurse-submodules")
        .arg(format!("--branch={reference}"))
        .arg("--")
        .arg(url)
        .arg(into);
    run(clone, "clone", url)?;
    let mut head = git();
    head.arg("-C")
        .arg(into)
        .args(["rev-parse", "--verify", "HEAD^{commit}"]);
    let output = run(head, "rev-parse", url)?;
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// The commit `reference` names on `url` now (`git ls-remote`), peeling an annotated tag
/// to its commit; `None` when the remote has no such tag or branch.
///
/// # Errors
/// [`GitError`] when the remote cannot be listed.
pub fn remote_ref(url: &str, reference: &str, kind: RefKind) -> Result<Option<String>, GitError> {
    let full = match kind {
        RefKind::Tag => format!("refs/tags/{reference}"),
        RefKind::Branch => format!("refs/heads/{reference}"),
    };
    let peeled = format!("{full}^{{}}");
    let mut list = git();
    // Both patterns: without the second, git does not list the peeled line.
    list.args(["ls-remote", "--"])
        .arg(url)
        .arg(&full)
        .arg(&peeled);
    let output = run(list, "ls-remote", url)?;
    let mut direct = None;
    let mut peeled_commit = None;
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Some((object, name)) = line.split_once('\t') else {
            continue;
        };
        if name == full {
            direct = Some(object.to_owned());
        } else if name == peeled {
            peeled_commit = Some(object.to_owned());
        }
    }
    Ok(peeled_commit.or(direct))
}

#[cfg(test)]
mod tests;
