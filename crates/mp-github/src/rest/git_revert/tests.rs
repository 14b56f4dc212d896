//! Tests for the git-based revert, against real bare repositories in temp dirs.

use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine as _;
use mp_core::ids::CommitSha;
use mp_core::port::GitHubError;

use super::push_revert_in;
use crate::rest::auth::Secret;

const MESSAGE: &str = "Revert bad commit (post-merge re-validation)\n\nTask-Ref: Issue#7\n";
const TOKEN: &str = "ghs_secret_token_value";

/// Runs git synchronously in `dir` with a fixed identity; answers trimmed stdout.
fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Dev")
        .env("GIT_AUTHOR_EMAIL", "dev@example.com")
        .env("GIT_COMMITTER_NAME", "Dev")
        .env("GIT_COMMITTER_EMAIL", "dev@example.com")
        .output()
        .expect("git runs");
    assert!(
        output.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

fn commit(dir: &Path, files: &[(&str, &str)], message: &str) -> String {
    for (name, text) in files {
        std::fs::write(dir.join(name), text).expect("write a file");
    }
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", message]);
    git(dir, &["rev-parse", "HEAD"])
}

/// The history on the remote's `main`.
#[derive(Clone, Copy)]
enum Shape {
    /// A -> B -> C, where B edits line two of file.txt and adds b.txt; C adds c.txt.
    Plain,
    /// Like `Plain`, but C rewrites the line B changed.
    Conflicting,
    /// A -> M, where M merges a side branch (so M has two parents).
    Merge,
}

/// Which commit to revert.
#[derive(Clone, Copy)]
enum Target {
    /// B (or M for `Shape::Merge`).
    Second,
    /// A SHA the remote does not have.
    Unknown,
}

struct Remote {
    _dir: tempfile::TempDir,
    bare: PathBuf,
    url: String,
    main: String,
    second: String,
}

fn remote(shape: Shape) -> Remote {
    let dir = tempfile::tempdir().expect("a temp dir");
    let src = dir.path().join("src");
    std::fs::create_dir(&src).expect("mkdir src");
    git(&src, &["init", "-q", "-b", "main"]);
    commit(&src, &[("file.txt", "one\ntwo\nthree\n")], "A");
    let (second, main) = match shape {
        Shape::Plain | Shape::Conflicting => {
            let b = commit(
                &src,
                &[("file.txt", "one\nTWO\nthree\n"), ("b.txt", "b\n")],
                "B",
            );
            let c_files: &[(&str, &str)] = match shape {
                Shape::Conflicting => &[("file.txt", "one\nzwei\nthree\n")],
                _ => &[("c.txt", "c\n")],
            };
            let c = commit(&src, c_files, "C");
            (b, c)
        }
        Shape::Merge => {
            git(&src, &["checkout", "-q", "-b", "side"]);
            commit(&src, &[("side.txt", "side\n")], "S");
            git(&src, &["checkout", "-q", "main"]);
            commit(&src, &[("main.txt", "main\n")], "A2");
            git(&src, &["merge", "-q", "--no-ff", "-m", "M", "side"]);
            let m = git(&src, &["rev-parse", "HEAD"]);
            (m.clone(), m)
        }
    };
    let bare = dir.path().join("remote.git");
    let bare_text = bare.to_string_lossy().into_owned();
    git(dir.path(), &["clone", "-q", "--bare", "src", &bare_text]);
    let url = format!("file://{bare_text}");
    Remote {
        _dir: dir,
        bare,
        url,
        main,
        second,
    }
}

fn sha(text: &str) -> CommitSha {
    CommitSha::parse(text).expect("a full sha")
}

/// Reverts `target` into `revert/x` (created first at `main` when `branch_exists`) and
/// compares a one-line description of what happened with `want` (`*` matches anything),
/// after checking the remote's state and that the work directory is gone.
#[track_caller]
fn check(shape: Shape, target: Target, branch_exists: bool, want: &str) {
    let remote = remote(shape);
    let branch = "revert/x";
    if branch_exists {
        git(&remote.bare, &["branch", branch, &remote.main]);
    }
    let target = match target {
        Target::Second => sha(&remote.second),
        Target::Unknown => sha("0123456789abcdef0123456789abcdef01234567"),
    };
    let base = tempfile::tempdir().expect("a temp dir");
    let token = Secret::new(TOKEN);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let result = runtime.block_on(push_revert_in(
        base.path(),
        &remote.url,
        Some(&token),
        &target,
        branch,
        MESSAGE,
    ));
    let left: Vec<_> = std::fs::read_dir(base.path())
        .expect("read the base dir")
        .collect();
    assert!(left.is_empty(), "the work directory was left behind");
    let on_remote = |rev: &str| git(&remote.bare, &["rev-parse", "--verify", "-q", rev]);
    let branch_ref = format!("refs/heads/{branch}");
    let listed = git(
        &remote.bare,
        &["for-each-ref", "--format=%(objectname)", &branch_ref],
    );
    let got = match result {
        Ok(new) => {
            assert_eq!(listed, new.as_str(), "the branch points at the new commit");
            let parent = on_remote(&format!("{}^", new.as_str()));
            assert_eq!(parent, remote.main, "the parent is main's head");
            let body = git(&remote.bare, &["log", "-1", "--format=%B", new.as_str()]);
            assert_eq!(body, MESSAGE.trim());
            let who = git(
                &remote.bare,
                &["log", "-1", "--format=%an <%ae>|%cn <%ce>", new.as_str()],
            );
            assert_eq!(
                who,
                "mp[bot] <mp-bot@users.noreply.github.com>|mp[bot] <mp-bot@users.noreply.github.com>"
            );
            let files = git(&remote.bare, &["ls-tree", "--name-only", new.as_str()]);
            let text = git(
                &remote.bare,
                &["show", &format!("{}:file.txt", new.as_str())],
            );
            format!(
                "pushed files={} file.txt={}",
                files.replace('\n', ","),
                text.replace('\n', ",")
            )
        }
        Err(err) => {
            let text = err.to_string();
            assert!(!text.contains(TOKEN), "the token leaked: {text}");
            let expected_branch = if branch_exists {
                remote.main.as_str()
            } else {
                ""
            };
            assert_eq!(listed, expected_branch, "a failed revert pushes nothing");
            let kind = match err {
                GitHubError::Conflict { .. } => "conflict",
                GitHubError::NotFound { .. } => "not found",
                GitHubError::Unavailable { .. } => "unavailable",
                _ => "other",
            };
            format!("{kind}: {text}")
        }
    };
    let mut rest = got.as_str();
    for piece in want.split('*') {
        let Some(at) = rest.find(piece) else {
            panic!("got {got:?}, want {want:?} (pieces in order)");
        };
        rest = &rest[at + piece.len()..];
    }
    assert!(
        got.starts_with(want.split('*').next().unwrap_or_default()),
        "got {got:?}, want {want:?}"
    );
}

#[test]
fn a_clean_revert_is_pushed_on_top_of_main() {
    check(
        Shape::Plain,
        Target::Second,
        false,
        "pushed files=c.txt,file.txt file.txt=one,two,three",
    );
}

#[test]
fn a_revert_that_does_not_apply_is_a_conflict() {
    check(
        Shape::Conflicting,
        Target::Second,
        false,
        "conflict: revert of * onto main: the revert does not apply: *could not revert",
    );
}

#[test]
fn an_existing_branch_is_a_conflict() {
    check(
        Shape::Plain,
        Target::Second,
        true,
        "conflict: branch revert/x: already exists on the remote",
    );
}

#[test]
fn a_merge_commit_is_a_conflict() {
    check(
        Shape::Merge,
        Target::Second,
        false,
        "conflict: revert of * onto main: * is a merge commit with 2 parents",
    );
}

#[test]
fn an_unknown_commit_is_not_found() {
    check(
        Shape::Plain,
        Target::Unknown,
        false,
        "not found: commit 0123456789abcdef0123456789abcdef01234567 not found",
    );
}

#[test]
fn a_missing_remote_is_unavailable() {
    let base = tempfile::tempdir().expect("a temp dir");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let missing = format!("file://{}/nowhere.git", base.path().display());
    let result = runtime.block_on(push_revert_in(
        base.path(),
        &missing,
        None,
        &sha("0123456789abcdef0123456789abcdef01234567"),
        "revert/x",
        MESSAGE,
    ));
    assert!(
        matches!(result, Err(GitHubError::Unavailable { ref route, .. }) if route == "git fetch"),
        "{result:?}"
    );
}

#[test]
fn the_token_travels_only_in_the_environment_and_is_scrubbed_from_output() {
    let base = tempfile::tempdir().expect("a temp dir");
    let token = Secret::new(TOKEN);
    let url = "https://someone:hunter2@github.example/acme/app.git";
    let runner = super::Git::new(base.path(), url, Some(&token));
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("x-access-token:{TOKEN}"));
    let header = runner
        .env
        .iter()
        .find(|(_, value)| value.starts_with("Authorization:"))
        .map(|(key, value)| (key.as_str(), value.as_str()));
    assert_eq!(
        header,
        Some((
            "GIT_CONFIG_VALUE_5",
            format!("Authorization: Basic {basic}").as_str()
        ))
    );
    let noisy = format!("fatal: {url} said {TOKEN} / {basic}");
    assert_eq!(
        runner.quote(&noisy),
        "fatal: https://[redacted]@github.example/acme/app.git said [redacted] / [redacted]"
    );
}

#[test]
fn the_token_reaches_an_http_remote_as_a_basic_header_and_never_the_error() {
    use axum::http::{HeaderMap, StatusCode};
    use std::sync::{Arc, Mutex};

    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let recorder = Arc::clone(&seen);
    let router = axum::Router::new().fallback(move |headers: HeaderMap| {
        let recorder = Arc::clone(&recorder);
        async move {
            let auth = headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("none")
                .to_owned();
            if let Ok(mut seen) = recorder.lock() {
                seen.push(auth);
            }
            (StatusCode::NOT_FOUND, "Repository not found")
        }
    });
    let base = tempfile::tempdir().expect("a temp dir");
    let token = Secret::new(TOKEN);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let result = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a loopback port");
        let addr = listener.local_addr().expect("the bound address");
        tokio::spawn(async move { axum::serve(listener, router).await });
        let url = format!("http://{addr}/acme/app.git");
        let target = sha("0123456789abcdef0123456789abcdef01234567");
        push_revert_in(
            base.path(),
            &url,
            Some(&token),
            &target,
            "revert/x",
            MESSAGE,
        )
        .await
    });
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("x-access-token:{TOKEN}"));
    let seen = seen.lock().map(|seen| seen.clone()).unwrap_or_default();
    assert!(
        seen.contains(&format!("Basic {basic}")),
        "git sent {seen:?}"
    );
    let err = result.expect_err("the stub has no repository");
    let text = format!("{err} {err:?}");
    assert!(
        matches!(&err, GitHubError::Unavailable { route, .. } if route == "git fetch"),
        "{text}"
    );
    assert!(!text.contains(TOKEN) && !text.contains(&basic), "{text}");
}
