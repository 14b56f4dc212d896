//! Real git repositories and real (also deliberately malicious) archives for the source
//! fetch tests; git runs without the user's or the system's configuration.

use std::fs;
use std::io::{Cursor, Write};
use std::path::Path;
use std::process::Command;

use crate::sources::model::{Anchor, Method, Pin, SourceId};

/// Runs `git <args>` in `dir` with a fixed identity and dates, no global or system
/// configuration and no signing; returns trimmed stdout.
pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
        .args(["-c", "user.name=Test", "-c", "user.email=test@example.org"])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(["-c", "tag.gpgsign=false", "-c", "core.symlinks=true"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        output.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// A repository with `files` committed on `main`; returns it and the commit.
pub(crate) fn repo(files: &[(&str, &str)]) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    git(dir.path(), &["init", "--quiet"]);
    let commit = commit(dir.path(), files);
    (dir, commit)
}

/// Writes `files` into `repo`, commits them and returns the new commit.
pub(crate) fn commit(repo: &Path, files: &[(&str, &str)]) -> String {
    for (name, content) in files {
        let path = repo.join(name);
        fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        fs::write(path, content).expect("write");
    }
    git(repo, &["add", "--all"]);
    git(
        repo,
        &["commit", "--quiet", "--allow-empty", "-m", "change"],
    );
    git(repo, &["rev-parse", "HEAD"])
}

/// `file://` URL of `path`.
pub(crate) fn file_url(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// A pin with a valid id.
pub(crate) fn pin(method: Method, url: &str, reference: &str, anchor: Option<Anchor>) -> Pin {
    Pin {
        id: SourceId::parse("acme-skills").expect("kebab-case"),
        method,
        url: url.to_owned(),
        reference: reference.to_owned(),
        anchor,
    }
}

/// One entry of a crafted tar.
pub(crate) enum Tar<'a> {
    /// A regular file.
    File(&'a str, &'a [u8]),
    /// A directory.
    Dir(&'a str),
    /// A symlink and its target.
    Symlink(&'a str, &'a str),
    /// A hard link and its target.
    HardLink(&'a str, &'a str),
    /// A FIFO.
    Fifo(&'a str),
}

/// A `.tar.gz` of `entries`; names are written raw into the header (so `..` and absolute
/// names are kept, which `tar::Builder` would refuse).
pub(crate) fn tar_gz(entries: &[Tar<'_>]) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut builder = tar::Builder::new(gz);
    for entry in entries {
        let mut header = tar::Header::new_gnu();
        let (name, kind, data, link): (&str, _, &[u8], &str) = match entry {
            Tar::File(n, d) => (n, tar::EntryType::Regular, d, ""),
            Tar::Dir(n) => (n, tar::EntryType::Directory, b"", ""),
            Tar::Symlink(n, t) => (n, tar::EntryType::Symlink, b"", t),
            Tar::HardLink(n, t) => (n, tar::EntryType::Link, b"", t),
            Tar::Fifo(n) => (n, tar::EntryType::Fifo, b"", ""),
        };
        let old = header.as_old_mut();
        old.name[..name.len()].copy_from_slice(name.as_bytes());
        old.linkname[..link.len()].copy_from_slice(link.as_bytes());
        header.set_entry_type(kind);
        header.set_mode(0o644);
        header.set_size(data.len() as u64);
        header.set_mtime(0);
        header.set_cksum();
        builder.append(&header, data).expect("append");
    }
    builder
        .into_inner()
        .expect("finish tar")
        .finish()
        .expect("finish gzip")
}

/// A `.zip` of deflated files and symlinks (`Some(target)`), names as given.
pub(crate) fn zip(entries: &[(&str, &[u8], Option<&str>)]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, data, link) in entries {
        match link {
            Some(target) => writer
                .add_symlink(*name, *target, options)
                .expect("symlink"),
            None => {
                writer.start_file(*name, options).expect("start file");
                writer.write_all(data).expect("write");
            }
        }
    }
    writer.finish().expect("finish zip").into_inner()
}

/// Every path below `dir` (relative, sorted), to show nothing else was written.
pub(crate) fn listing(dir: &Path) -> Vec<String> {
    fn walk(dir: &Path, prefix: &str, out: &mut Vec<String>) {
        let mut names: Vec<_> = fs::read_dir(dir)
            .expect("read dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for name in names {
            let path = dir.join(&name);
            out.push(format!("{prefix}{name}"));
            if fs::symlink_metadata(&path).expect("meta").is_dir() {
                walk(&path, &format!("{prefix}{name}/"), out);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, "", &mut out);
    out
}
