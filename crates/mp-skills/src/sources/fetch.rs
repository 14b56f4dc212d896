//! Fetch and verify one pinned source into `<snapshots_root>/<id>/`, all or nothing: the
//! source is fetched into a staging directory beside the snapshot, checked against its
//! anchor, stripped of `.git`, checked for containment and digested, and only then swapped
//! in. Any failure removes the staging directory and leaves the previous snapshot as it
//! was. Also reads what a pin's ref or archive is upstream now, for drift.
//!
//! A git snapshot is the checked-out tree without `.git` (the commit is returned, not
//! kept on disk). An archive snapshot is the archive's entries as they are: a top-level
//! `name-1.0/` directory is kept, so the descriptor's layout roots must include it.
//! Staging (`.staging-<id>-<pid>-<n>`) and set-aside (`.previous-<id>-<pid>-<n>`)
//! directories start with a dot and exist only while a fetch runs.

use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

use super::archive::{self, ArchiveKind};
use super::contain;
use super::digest;
use super::git::{self, RefKind};
use super::model::{Anchor, Method, Pin, Refusal, SourceId};

/// Most bytes an archive download may have.
pub const MAX_ARCHIVE_BYTES: u64 = 512 << 20;

/// Downloads an `https://` archive. The default is [`Curl`]; a caller with its own HTTP
/// client may supply another.
pub trait Download {
    /// The bytes at `url`, refusing more than `limit` bytes.
    ///
    /// # Errors
    /// A one-line message naming the problem (credentials removed).
    fn get(&self, url: &str, limit: u64) -> Result<Vec<u8>, String>;
}

/// Downloads with the `curl` command line: TLS only (`--proto =https`, redirects too),
/// `--fail`, a size cap and a 10-minute limit. `file://` is also accepted so it can be
/// tested without a network; [`fetch`] never hands it anything but `https://`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Curl;

impl Download for Curl {
    fn get(&self, url: &str, limit: u64) -> Result<Vec<u8>, String> {
        let shown = git::redact(url);
        // `-q` first: no `.curlrc` changes what is fetched.
        let mut child = Command::new("curl")
            .args(["-q", "--fail", "--silent", "--show-error", "--location"])
            .args(["--proto", "=https,file", "--proto-redir", "=https"])
            .args(["--max-time", "600", "--max-filesize"])
            .arg(limit.to_string())
            .arg("--url")
            .arg(url)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run curl: {e}"))?;
        let mut bytes = Vec::new();
        let read = child
            .stdout
            .take()
            .map(|out| out.take(limit + 1).read_to_end(&mut bytes));
        if bytes.len() as u64 > limit {
            // The size is known to be too large; stopping curl is all that is left to do.
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("download of `{shown}` is over {limit} bytes"));
        }
        let output = child
            .wait_with_output()
            .map_err(|e| format!("curl for `{shown}` failed: {e}"))?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
            return Err(git::redact(&format!(
                "download of `{url}` failed: {stderr} ({})",
                output.status
            )));
        }
        match read {
            Some(Ok(_)) => Ok(bytes),
            Some(Err(e)) => Err(format!("download of `{shown}` failed: {e}")),
            None => Err(format!("download of `{shown}` gave no output")),
        }
    }
}

/// What [`fetch`] may do.
#[derive(Clone, Copy)]
pub struct FetchOptions<'a> {
    /// Fetch `git-branch` sources (work in progress, never anchored). Off by default.
    pub allow_branch: bool,
    /// How `https://` archives are downloaded.
    pub download: &'a dyn Download,
}

impl Default for FetchOptions<'static> {
    fn default() -> Self {
        Self {
            allow_branch: false,
            download: &Curl,
        }
    }
}

impl std::fmt::Debug for FetchOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FetchOptions")
            .field("allow_branch", &self.allow_branch)
            .finish_non_exhaustive()
    }
}

/// A source fetched, verified and in place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// The source.
    pub id: SourceId,
    /// How it was fetched.
    pub method: Method,
    /// The commit checked out (git) or the SHA-512 of the archive (lowercase hex).
    pub resolved: String,
    /// [`digest::tree_digest`] of the snapshot.
    pub tree_digest: String,
    /// `<snapshots_root>/<id>`.
    pub snapshot: PathBuf,
    /// True for `git-branch`: nothing anchors what was fetched.
    pub unanchored: bool,
}

/// What a pin's ref or archive is upstream now.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RemoteFacts {
    /// The commit the tag (peeled) or branch names now; `None` when it is gone, or for an
    /// archive.
    pub commit: Option<String>,
    /// The SHA-512 of the archive now; `None` for git sources.
    pub archive_sha512: Option<String>,
}

fn refusal(id: &SourceId, code: &'static str, reason: String, fix: &str) -> Refusal {
    Refusal {
        source: id.to_string(),
        code,
        reason,
        fix: fix.to_owned(),
    }
}

/// The fix sentence for a code raised below the checks of [`fetch`].
fn fix_for(code: &str) -> &'static str {
    match code {
        "source_archive_zip_slip" => {
            "do not use this archive: ask the source's maintainers for a release whose entries stay inside it"
        }
        "source_symlink_escapes" => {
            "do not use this revision: ask the source's maintainers to keep every symlink inside the source tree"
        }
        "source_special_file" => {
            "do not use this revision: ask the source's maintainers to remove devices, FIFOs and sockets"
        }
        "source_path_escapes" => "correct the path so it stays inside the source",
        "source_archive_too_large" => {
            "check the URL names the intended release; sources larger than the limit are not supported"
        }
        "source_archive_not_a_file" => {
            "point the source at the archive file itself, not a FIFO, socket or device"
        }
        "source_archive_corrupt" => {
            "check the URL names a valid archive, then fetch again; the previous snapshot is unchanged"
        }
        _ => {
            "check the URL, the ref and the network, then fetch again; the previous snapshot is unchanged"
        }
    }
}

fn failed(id: &SourceId, reason: String) -> Refusal {
    refusal(
        id,
        "source_fetch_failed",
        reason,
        fix_for("source_fetch_failed"),
    )
}

/// Fetches `pin` into `<snapshots_root>/<id>/` and verifies it (see the module docs).
///
/// # Errors
/// A [`Refusal`] with one of the codes `source_unanchored`, `source_branch_not_allowed`,
/// `source_tag_moved`, `source_archive_digest_mismatch`, `source_archive_unknown_format`,
/// `source_archive_bad_url`, `source_archive_not_a_file`, `source_archive_zip_slip`, `source_archive_too_large`,
/// `source_archive_corrupt`, `source_symlink_escapes`, `source_special_file` or
/// `source_fetch_failed`. Nothing is installed and the previous snapshot is left intact.
pub fn fetch(
    pin: &Pin,
    snapshots_root: &Path,
    opts: &FetchOptions<'_>,
) -> Result<Fetched, Refusal> {
    let id = &pin.id;
    let anchor = check_anchor(pin, opts)?;
    fs::create_dir_all(snapshots_root).map_err(|e| {
        failed(
            id,
            format!("cannot create `{}`: {e}", snapshots_root.display()),
        )
    })?;
    let staging = Staging::create(snapshots_root, id)?;
    let resolved = match pin.method {
        Method::GitTag | Method::GitBranch => {
            let head = git::shallow_clone(&pin.url, &pin.reference, &staging.path)
                .map_err(|e| failed(id, e.to_string()))?;
            if let Some(expected) = anchor
                && !head.eq_ignore_ascii_case(expected)
            {
                return Err(refusal(
                    id,
                    "source_tag_moved",
                    format!(
                        "tag `{}` of `{}` now resolves to {head}, not the pinned commit {expected}",
                        pin.reference,
                        git::redact(&pin.url)
                    ),
                    "investigate why the tag moved before trusting it; if the new commit is intended, bump the pinned `commit` in a reviewed change",
                ));
            }
            let dot_git = staging.path.join(".git");
            fs::remove_dir_all(&dot_git)
                .map_err(|e| failed(id, format!("cannot remove `{}`: {e}", dot_git.display())))?;
            head
        }
        Method::Archive => {
            let kind = archive_kind(pin)?;
            let bytes = archive_bytes(pin, opts.download)?;
            let actual = archive::sha512_hex(&bytes);
            let expected = anchor.unwrap_or_default();
            if !actual.eq_ignore_ascii_case(expected) {
                return Err(refusal(
                    id,
                    "source_archive_digest_mismatch",
                    format!(
                        "archive `{}` ({}) has sha512 {actual}, not the pinned {expected}",
                        git::redact(&pin.url),
                        pin.reference
                    ),
                    "do not use this archive until the cause is understood; if a new release is intended, bump the pinned `sha512` in a reviewed change",
                ));
            }
            archive::unpack(&bytes, kind, &staging.path).map_err(|e| {
                refusal(
                    id,
                    e.code(),
                    format!("archive `{}`: {e}", git::redact(&pin.url)),
                    fix_for(e.code()),
                )
            })?;
            actual
        }
    };
    contain::check_tree(&staging.path)
        .map_err(|e| refusal(id, e.code(), e.to_string(), fix_for(e.code())))?;
    let tree_digest = digest::tree_digest(&staging.path)
        .map_err(|e| failed(id, format!("cannot digest the fetched tree: {e}")))?;
    let snapshot = snapshots_root.join(id.as_str());
    staging.swap_into(&snapshot).map_err(|e| {
        failed(
            id,
            format!(
                "cannot move the fetched tree to `{}`: {e}",
                snapshot.display()
            ),
        )
    })?;
    Ok(Fetched {
        id: id.clone(),
        method: pin.method,
        resolved,
        tree_digest,
        snapshot,
        unanchored: pin.method == Method::GitBranch,
    })
}

/// The anchor value a fetch is checked against (`None` for git-branch), refusing a
/// missing anchor or a branch that was not allowed, before anything is fetched.
fn check_anchor<'p>(pin: &'p Pin, opts: &FetchOptions<'_>) -> Result<Option<&'p str>, Refusal> {
    let unanchored = |key: &str| {
        refusal(
            &pin.id,
            "source_unanchored",
            format!(
                "{} source `{}` ({}) has no pinned `{key}`",
                pin.method,
                git::redact(&pin.url),
                pin.reference
            ),
            &format!(
                "pin `{key}` in the committed sources lock before fetching; nothing is fetched on a partial pin"
            ),
        )
    };
    match (pin.method, &pin.anchor) {
        (Method::GitTag, Some(Anchor::Commit(commit))) => Ok(Some(commit)),
        (Method::GitTag, _) => Err(unanchored("commit")),
        (Method::Archive, Some(Anchor::Sha512(sha))) => Ok(Some(sha)),
        (Method::Archive, _) => Err(unanchored("sha512")),
        (Method::GitBranch, _) if opts.allow_branch => Ok(None),
        (Method::GitBranch, _) => Err(refusal(
            &pin.id,
            "source_branch_not_allowed",
            format!(
                "git-branch source `{}` (branch `{}`) is work in progress and not anchored",
                git::redact(&pin.url),
                pin.reference
            ),
            "pin a tag with method git-tag, or opt in to branch sources explicitly for work in progress",
        )),
    }
}

fn archive_kind(pin: &Pin) -> Result<ArchiveKind, Refusal> {
    ArchiveKind::from_name(&pin.url).ok_or_else(|| {
        refusal(
            &pin.id,
            "source_archive_unknown_format",
            format!(
                "archive `{}` does not end in .tar.gz, .tgz or .zip",
                git::redact(&pin.url)
            ),
            "point the source at a `.tar.gz`, `.tgz` or `.zip` archive",
        )
    })
}

/// Where an archive comes from.
enum Location {
    Local(PathBuf),
    Https(String),
}

fn locate(pin: &Pin) -> Result<Location, Refusal> {
    let url = pin.url.as_str();
    if let Some(rest) = url.strip_prefix("file://") {
        let rest = rest.strip_prefix("localhost").unwrap_or(rest);
        if rest.starts_with('/') {
            return Ok(Location::Local(PathBuf::from(percent_decode(rest))));
        }
    } else if url.starts_with("https://") {
        return Ok(Location::Https(url.to_owned()));
    } else if !url.contains("://") && !url.is_empty() {
        return Ok(Location::Local(PathBuf::from(url)));
    }
    Err(refusal(
        &pin.id,
        "source_archive_bad_url",
        format!("archive location `{}` is not supported", git::redact(url)),
        "use an `https://` URL, a `file:///` URL or a local path",
    ))
}

/// Decodes `%XX` escapes of a `file://` URL path; a malformed escape stays as written.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let decoded = (bytes[i] == b'%')
            .then(|| text.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match decoded {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn archive_bytes(pin: &Pin, download: &dyn Download) -> Result<Vec<u8>, Refusal> {
    match locate(pin)? {
        Location::Https(url) => download
            .get(&url, MAX_ARCHIVE_BYTES)
            .map_err(|e| failed(&pin.id, e)),
        Location::Local(path) => {
            refuse_special(&pin.id, &path)?;
            let read = || -> io::Result<Vec<u8>> {
                let mut bytes = Vec::new();
                fs::File::open(&path)?
                    .take(MAX_ARCHIVE_BYTES + 1)
                    .read_to_end(&mut bytes)?;
                Ok(bytes)
            };
            let bytes = read()
                .map_err(|e| failed(&pin.id, format!("cannot read `{}`: {e}", path.display())))?;
            if bytes.len() as u64 > MAX_ARCHIVE_BYTES {
                return Err(refusal(
                    &pin.id,
                    "source_archive_too_large",
                    format!(
                        "archive `{}` is over {MAX_ARCHIVE_BYTES} bytes",
                        path.display()
                    ),
                    fix_for("source_archive_too_large"),
                ));
            }
            Ok(bytes)
        }
    }
}

/// Refuses a local archive path that names a FIFO, a socket, a device or any other file
/// that is neither a regular file nor a directory, before it is opened: opening a FIFO
/// blocks until something writes to it, and a device never ends. The type is that of the
/// file a symlink points to, since that is what opening it reads.
fn refuse_special(id: &SourceId, path: &Path) -> Result<(), Refusal> {
    let Ok(meta) = fs::metadata(path) else {
        // A missing or unreadable path is reported by the read that follows.
        return Ok(());
    };
    let kind = meta.file_type();
    if kind.is_file() || kind.is_dir() {
        return Ok(());
    }
    let what = if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    };
    Err(refusal(
        id,
        "source_archive_not_a_file",
        format!(
            "archive path `{}` is {what}; only a regular file is read",
            path.display()
        ),
        fix_for("source_archive_not_a_file"),
    ))
}

/// What `pin`'s tag or branch names upstream now, or the SHA-512 of its archive now.
/// Fetches nothing into a snapshot.
///
/// # Errors
/// `source_fetch_failed` when the remote cannot be read, `source_archive_bad_url` for an
/// unsupported archive location.
pub fn remote_facts(pin: &Pin, download: &dyn Download) -> Result<RemoteFacts, Refusal> {
    let commit = |kind| {
        git::remote_ref(&pin.url, &pin.reference, kind)
            .map(|commit| RemoteFacts {
                commit,
                archive_sha512: None,
            })
            .map_err(|e| failed(&pin.id, e.to_string()))
    };
    match pin.method {
        Method::GitTag => commit(RefKind::Tag),
        Method::GitBranch => commit(RefKind::Branch),
        Method::Archive => Ok(RemoteFacts {
            commit: None,
            archive_sha512: Some(archive::sha512_hex(&archive_bytes(pin, download)?)),
        }),
    }
}

/// A fresh directory inside the snapshots root, removed on drop unless swapped in.
struct Staging {
    root: PathBuf,
    path: PathBuf,
    id: SourceId,
    swapped: bool,
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

fn unique(root: &Path, what: &str, id: &SourceId) -> PathBuf {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    root.join(format!(".{what}-{id}-{}-{n}", std::process::id()))
}

impl Staging {
    fn create(root: &Path, id: &SourceId) -> Result<Self, Refusal> {
        let path = unique(root, "staging", id);
        fs::create_dir(&path)
            .map_err(|e| failed(id, format!("cannot create `{}`: {e}", path.display())))?;
        Ok(Self {
            root: root.to_path_buf(),
            path,
            id: id.clone(),
            swapped: false,
        })
    }

    /// Moves the previous snapshot aside, renames staging into place and removes the old
    /// one; puts the previous snapshot back if the second rename fails.
    fn swap_into(mut self, snapshot: &Path) -> io::Result<()> {
        match fs::symlink_metadata(snapshot) {
            Ok(_) => {
                let aside = unique(&self.root, "previous", &self.id);
                fs::rename(snapshot, &aside)?;
                if let Err(error) = fs::rename(&self.path, snapshot) {
                    // Best effort: the error reported is the rename that failed.
                    let _ = fs::rename(&aside, snapshot);
                    return Err(error);
                }
                self.swapped = true;
                // The new snapshot is in place; an old tree left behind is only litter.
                let _ = fs::remove_dir_all(&aside);
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                fs::rename(&self.path, snapshot)?;
                self.swapped = true;
            }
            Err(error) => return Err(error),
        }
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.swapped {
            // Nothing else can be done about a failed cleanup from a destructor.
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
pub(crate) mod testkit;
