//! End-to-end fetch tests: real repositories and archives over `file://` and local paths,
//! checking the snapshot, the refusal and that a refused fetch leaves the previous
//! snapshot byte-for-byte as it was and no staging directory behind.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use super::testkit::{Tar, commit, file_url, git, listing, pin, repo, tar_gz, zip};
use super::{Curl, Download, FetchOptions, Fetched, RemoteFacts, fetch, remote_facts};
use crate::sources::archive::sha512_hex;
use crate::sources::digest::tree_digest;
use crate::sources::model::{Anchor, Method, Pin};

const BRANCH: FetchOptions<'static> = FetchOptions {
    allow_branch: true,
    download: &Curl,
};

/// Fetches `pin` into `root` and expects the refusal `code`; the reason must name
/// `names` and a fix must be given. Returns the reason.
#[track_caller]
fn refused(pin: &Pin, root: &Path, opts: &FetchOptions<'_>, code: &str, names: &str) -> String {
    let refusal = fetch(pin, root, opts).expect_err("refused");
    assert_eq!(
        (refusal.source.as_str(), refusal.code),
        ("acme-skills", code),
        "{refusal}"
    );
    assert!(refusal.reason.contains(names), "{refusal}");
    assert!(!refusal.fix.is_empty());
    refusal.reason
}

/// Fetches `pin` into `root`, expecting success, and checks the snapshot matches what
/// [`Fetched`] says: the digest, no `.git`, and nothing else left in `root`.
#[track_caller]
fn fetched(pin: &Pin, root: &Path, opts: &FetchOptions<'_>) -> Fetched {
    let got = fetch(pin, root, opts).expect("fetched");
    assert_eq!(got.snapshot, root.join("acme-skills"));
    assert_eq!(tree_digest(&got.snapshot).expect("digest"), got.tree_digest);
    assert!(!got.snapshot.join(".git").exists());
    assert_eq!(
        listing(root)
            .into_iter()
            .filter(|p| !p.contains('/'))
            .collect::<Vec<_>>(),
        ["acme-skills"]
    );
    got
}

/// The snapshot's digest and listing, to prove it did not change.
fn state(root: &Path) -> (String, Vec<String>) {
    let snapshot = root.join("acme-skills");
    (tree_digest(&snapshot).expect("digest"), listing(root))
}

fn skill(snapshot: &Path) -> String {
    fs::read_to_string(snapshot.join("skills/a/SKILL.md")).expect("read skill")
}

#[test]
fn git_tag_is_fetched_and_verified() {
    let (up, first) = repo(&[("skills/a/SKILL.md", "one")]);
    git(up.path(), &["tag", "v1"]);
    let root = tempfile::tempdir().expect("temp dir");
    let pin = pin(
        Method::GitTag,
        &file_url(up.path()),
        "v1",
        Some(Anchor::Commit(first.clone())),
    );
    let got = fetched(&pin, root.path(), &FetchOptions::default());
    assert_eq!(
        (got.resolved.as_str(), got.unanchored),
        (first.as_str(), false)
    );
    assert_eq!(skill(&got.snapshot), "one");
}

#[test]
fn moved_tag_is_refused_and_the_snapshot_kept() {
    let (up, first) = repo(&[("skills/a/SKILL.md", "one")]);
    git(up.path(), &["tag", "v1"]);
    let root = tempfile::tempdir().expect("temp dir");
    let pin = pin(
        Method::GitTag,
        &file_url(up.path()),
        "v1",
        Some(Anchor::Commit(first.clone())),
    );
    fetched(&pin, root.path(), &FetchOptions::default());
    let before = state(root.path());

    let moved = commit(up.path(), &[("skills/a/SKILL.md", "evil")]);
    git(up.path(), &["tag", "-f", "v1"]);
    let reason = refused(
        &pin,
        root.path(),
        &FetchOptions::default(),
        "source_tag_moved",
        &moved,
    );
    assert!(reason.contains(&first), "{reason}");
    assert_eq!(state(root.path()), before);
    assert_eq!(skill(&root.path().join("acme-skills")), "one");
    let facts = remote_facts(&pin, &Curl).expect("remote facts");
    assert_eq!(
        facts,
        RemoteFacts {
            commit: Some(moved),
            archive_sha512: None
        }
    );
}

#[test]
fn annotated_tag_is_peeled() {
    let (up, first) = repo(&[("skills/a/SKILL.md", "one")]);
    git(up.path(), &["tag", "-a", "v2", "-m", "release"]);
    let root = tempfile::tempdir().expect("temp dir");
    let pin = pin(
        Method::GitTag,
        &file_url(up.path()),
        "v2",
        Some(Anchor::Commit(first.clone())),
    );
    assert_eq!(
        fetched(&pin, root.path(), &FetchOptions::default()).resolved,
        first
    );
    assert_eq!(
        remote_facts(&pin, &Curl).expect("facts").commit,
        Some(first)
    );
}

#[test]
fn branch_needs_opt_in_and_is_unanchored() {
    let (up, tip) = repo(&[("skills/a/SKILL.md", "one")]);
    let root = tempfile::tempdir().expect("temp dir");
    let pin = pin(Method::GitBranch, &file_url(up.path()), "main", None);
    refused(
        &pin,
        root.path(),
        &FetchOptions::default(),
        "source_branch_not_allowed",
        "main",
    );
    assert_eq!(listing(root.path()), Vec::<String>::new());

    let got = fetched(&pin, root.path(), &BRANCH);
    assert_eq!(
        (got.resolved.as_str(), got.unanchored),
        (tip.as_str(), true)
    );
    let advanced = commit(up.path(), &[("skills/a/SKILL.md", "two")]);
    assert_eq!(
        remote_facts(&pin, &Curl).expect("facts").commit,
        Some(advanced)
    );
    assert_eq!(skill(&got.snapshot), "one");
}

#[test]
fn missing_anchor_is_refused_before_any_fetch() {
    let root = tempfile::tempdir().expect("temp dir");
    let nowhere = "file:///nonexistent/repo";
    let tag = pin(Method::GitTag, nowhere, "v1", None);
    refused(&tag, root.path(), &BRANCH, "source_unanchored", "commit");
    let archive = pin(
        Method::Archive,
        "/nonexistent/a.zip",
        "1.0",
        Some(Anchor::Commit("a".repeat(40))),
    );
    refused(
        &archive,
        root.path(),
        &BRANCH,
        "source_unanchored",
        "sha512",
    );
    assert_eq!(listing(root.path()), Vec::<String>::new());
}

#[test]
fn symlink_out_of_a_clone_is_refused_and_staging_removed() {
    let (up, first) = repo(&[("skills/a/SKILL.md", "one")]);
    git(up.path(), &["tag", "v1"]);
    let root = tempfile::tempdir().expect("temp dir");
    let good = pin(
        Method::GitTag,
        &file_url(up.path()),
        "v1",
        Some(Anchor::Commit(first)),
    );
    fetched(&good, root.path(), &FetchOptions::default());
    let before = state(root.path());

    symlink("../../../outside", up.path().join("skills/a/evil")).expect("symlink");
    let bad_commit = commit(up.path(), &[]);
    git(up.path(), &["tag", "v2"]);
    let bad = pin(
        Method::GitTag,
        &file_url(up.path()),
        "v2",
        Some(Anchor::Commit(bad_commit)),
    );
    refused(
        &bad,
        root.path(),
        &FetchOptions::default(),
        "source_symlink_escapes",
        "skills/a/evil",
    );
    assert_eq!(state(root.path()), before);
}

/// Writes `bytes` as `<dir>/<name>` and returns a pin for it with its real SHA-512.
fn archive_pin(dir: &Path, name: &str, bytes: &[u8], url: impl Fn(&Path) -> String) -> Pin {
    let path = dir.join(name);
    fs::write(&path, bytes).expect("write archive");
    pin(
        Method::Archive,
        &url(&path),
        "1.0",
        Some(Anchor::Sha512(sha512_hex(bytes))),
    )
}

fn plain(path: &Path) -> String {
    path.display().to_string()
}

#[test]
fn tar_gz_and_zip_archives_are_fetched() {
    let dir = tempfile::tempdir().expect("temp dir");
    let tgz = tar_gz(&[Tar::File("skills/a/SKILL.md", b"tar")]);
    let zip = zip(&[("skills/a/SKILL.md", b"zip", None)]);
    for (name, bytes, text) in [
        ("s.tar.gz", &tgz, "tar"),
        ("s.tgz", &tgz, "tar"),
        ("s.zip", &zip, "zip"),
    ] {
        let root = tempfile::tempdir().expect("temp dir");
        let pin = archive_pin(dir.path(), name, bytes, file_url);
        let got = fetched(&pin, root.path(), &FetchOptions::default());
        assert_eq!((got.resolved, got.unanchored), (sha512_hex(bytes), false));
        assert_eq!(skill(&got.snapshot), text);
        let facts = remote_facts(&pin, &Curl).expect("facts");
        assert_eq!(facts.archive_sha512, Some(sha512_hex(bytes)));
    }
}

#[test]
fn changed_archive_byte_is_a_digest_mismatch_and_the_snapshot_kept() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = tempfile::tempdir().expect("temp dir");
    let mut bytes = zip(&[("skills/a/SKILL.md", b"one", None)]);
    let pin = archive_pin(dir.path(), "s.zip", &bytes, plain);
    fetched(&pin, root.path(), &FetchOptions::default());
    let before = state(root.path());

    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    fs::write(dir.path().join("s.zip"), &bytes).expect("rewrite");
    refused(
        &pin,
        root.path(),
        &FetchOptions::default(),
        "source_archive_digest_mismatch",
        &sha512_hex(&bytes),
    );
    assert_eq!(state(root.path()), before);
}

#[test]
fn malicious_archives_are_refused_with_nothing_left() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cases: [(&str, Vec<u8>, &str, &str); 4] = [
        (
            "slip.tar.gz",
            tar_gz(&[Tar::File("../evil", b"x")]),
            "source_archive_zip_slip",
            "../evil",
        ),
        (
            "slip.zip",
            zip(&[("ok", b"x", None), ("../evil", b"x", None)]),
            "source_archive_zip_slip",
            "../evil",
        ),
        (
            "link.tgz",
            tar_gz(&[Tar::Symlink("l", "../../outside")]),
            "source_symlink_escapes",
            "../../outside",
        ),
        (
            "fifo.tgz",
            tar_gz(&[Tar::Fifo("pipe")]),
            "source_special_file",
            "pipe",
        ),
    ];
    for (name, bytes, code, names) in cases {
        let root = tempfile::tempdir().expect("temp dir");
        let pin = archive_pin(dir.path(), name, &bytes, plain);
        refused(&pin, root.path(), &FetchOptions::default(), code, names);
        assert_eq!(listing(root.path()), Vec::<String>::new(), "{name}");
    }
    assert!(!dir.path().parent().expect("parent").join("evil").exists());
}

#[test]
fn archive_locations_are_checked_before_download() {
    let root = tempfile::tempdir().expect("temp dir");
    let sha = Some(Anchor::Sha512("0".repeat(128)));
    let tarball = pin(
        Method::Archive,
        "https://example.org/skills.tar.bz2",
        "1",
        sha.clone(),
    );
    refused(
        &tarball,
        root.path(),
        &FetchOptions::default(),
        "source_archive_unknown_format",
        "skills.tar.bz2",
    );
    let http = pin(
        Method::Archive,
        "http://user:pw@example.org/skills.zip",
        "1",
        sha,
    );
    let reason = refused(
        &http,
        root.path(),
        &FetchOptions::default(),
        "source_archive_bad_url",
        "example.org",
    );
    assert!(!reason.contains("pw"), "{reason}");
}

/// Serves every `https://` URL from one local file, as an HTTP client would.
struct FromFile(std::path::PathBuf);

impl Download for FromFile {
    fn get(&self, url: &str, _limit: u64) -> Result<Vec<u8>, String> {
        assert!(url.starts_with("https://"), "{url}");
        fs::read(&self.0).map_err(|e| e.to_string())
    }
}

#[test]
fn https_archives_go_through_the_download_port() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = tempfile::tempdir().expect("temp dir");
    let bytes = tar_gz(&[Tar::File("skills/a/SKILL.md", b"net")]);
    let pin = archive_pin(dir.path(), "s.tgz", &bytes, |_| {
        "https://example.org/s.tgz".to_owned()
    });
    let port = FromFile(dir.path().join("s.tgz"));
    let opts = FetchOptions {
        allow_branch: false,
        download: &port,
    };
    assert_eq!(skill(&fetched(&pin, root.path(), &opts).snapshot), "net");
}

#[test]
fn curl_downloads_and_caps_the_size() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("a.zip");
    fs::write(&path, b"0123456789").expect("write");
    assert_eq!(Curl.get(&file_url(&path), 100), Ok(b"0123456789".to_vec()));
    assert!(Curl.get(&file_url(&path), 5).is_err());
}

#[test]
fn archives_made_by_git_archive_are_fetched() {
    // `git archive` writes a pax global header (the commit id) into tarballs, as release
    // tarballs of hosting sites do; it must be skipped, not refused.
    let (up, _) = repo(&[("skills/a/SKILL.md", "released")]);
    for name in ["release.tar.gz", "release.zip"] {
        let out = up.path().join(name);
        git(
            up.path(),
            &[
                "archive",
                "--prefix=skills-1.0/",
                "-o",
                &plain(&out),
                "HEAD",
            ],
        );
        let bytes = fs::read(&out).expect("read archive");
        let root = tempfile::tempdir().expect("temp dir");
        let pin = pin(
            Method::Archive,
            &plain(&out),
            "1.0",
            Some(Anchor::Sha512(sha512_hex(&bytes))),
        );
        let got = fetched(&pin, root.path(), &FetchOptions::default());
        assert_eq!(
            skill(&got.snapshot.join("skills-1.0")),
            "released",
            "{name}"
        );
    }
}

#[test]
fn a_zip_slip_release_is_refused_and_the_previous_snapshot_survives() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = tempfile::tempdir().expect("temp dir");
    let good = zip(&[("skills/a/SKILL.md", b"v1", None)]);
    fetched(
        &archive_pin(dir.path(), "v1.zip", &good, plain),
        root.path(),
        &FetchOptions::default(),
    );
    let before = state(root.path());
    // The next release is pinned with its true digest, so only containment can stop it.
    let evil = zip(&[
        ("skills/a/SKILL.md", b"v2", None),
        ("../../evil", b"x", None),
    ]);
    refused(
        &archive_pin(dir.path(), "v2.zip", &evil, plain),
        root.path(),
        &FetchOptions::default(),
        "source_archive_zip_slip",
        "../../evil",
    );
    assert_eq!(state(root.path()), before);
    assert_eq!(skill(&root.path().join("acme-skills")), "v1");
    assert!(!root.path().parent().expect("parent").join("evil").exists());
}

#[test]
fn a_fifo_named_as_the_archive_is_refused_before_it_is_opened() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fifo = dir.path().join("skills.tar.gz");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success(), "mkfifo {}", fifo.display());
    let sha = Some(Anchor::Sha512("0".repeat(128)));
    let pins = [
        pin(Method::Archive, &plain(&fifo), "1", sha.clone()),
        pin(Method::Archive, &file_url(&fifo), "1", sha),
    ];
    for pin in pins {
        let root = tempfile::tempdir().expect("temp dir");
        // Opening a FIFO blocks until a writer comes; the fetch runs on its own thread so
        // that a regression fails here instead of hanging the suite.
        let (done, outcome) = std::sync::mpsc::channel();
        let target = root.path().to_path_buf();
        let fetching = pin.clone();
        std::thread::spawn(move || {
            let result = fetch(&fetching, &target, &FetchOptions::default());
            // The receiver may be gone after a timeout; nothing is left to report then.
            let _ = done.send(result.map(|f| f.resolved));
        });
        let result = match outcome.recv_timeout(std::time::Duration::from_secs(20)) {
            Ok(result) => result,
            Err(_) => {
                // Unblock the stuck reader before failing.
                let _ = fs::OpenOptions::new().write(true).open(&fifo);
                panic!("fetching {} hung on the FIFO", pin.url);
            }
        };
        let refusal = result.expect_err("a FIFO is refused");
        assert_eq!(refusal.code, "source_archive_not_a_file", "{refusal}");
        assert!(refusal.reason.contains("a FIFO"), "{refusal}");
        assert!(!refusal.fix.is_empty());
        assert_eq!(listing(root.path()), Vec::<String>::new());
    }
}
