//! Unpacking tests on real archives, including crafted zip-slip, link and FIFO entries;
//! each checks what ended up on disk around the target directory too.

use std::fs;

use super::{ArchiveKind, sha512_hex, unpack};
use crate::sources::fetch::testkit::{Tar, listing, tar_gz, zip};

/// Unpacks `bytes` into `<work>/into` and compares the outcome (`Ok(listing of <work>)`
/// or `Err(code)`); on error, also checks nothing exists in `<work>` besides `into`.
#[track_caller]
fn check(bytes: &[u8], kind: ArchiveKind, expect: Result<&[&str], &str>) {
    let work = tempfile::tempdir().expect("temp dir");
    let into = work.path().join("into");
    fs::create_dir(&into).expect("mkdir");
    let got = unpack(bytes, kind, &into).map_err(|e| e.code());
    match expect {
        Ok(paths) => {
            assert_eq!(got, Ok(()));
            assert_eq!(listing(work.path()), paths);
        }
        Err(code) => {
            assert_eq!(got, Err(code));
            let outside: Vec<_> = listing(work.path())
                .into_iter()
                .filter(|p| p != "into" && !p.starts_with("into/"))
                .collect();
            assert_eq!(outside, Vec::<String>::new(), "written outside `into`");
        }
    }
}

#[test]
fn tar_gz_with_files_dirs_and_inner_links_unpacks() {
    let bytes = tar_gz(&[
        Tar::Dir("./skills/"),
        Tar::File("./skills/a/SKILL.md", b"skill"),
        Tar::Symlink("skills/b", "a"),
        Tar::HardLink("copy.md", "skills/a/SKILL.md"),
    ]);
    check(
        &bytes,
        ArchiveKind::TarGz,
        Ok(&[
            "into",
            "into/copy.md",
            "into/skills",
            "into/skills/a",
            "into/skills/a/SKILL.md",
            "into/skills/b",
        ]),
    );
}

#[test]
fn zip_with_files_unpacks() {
    let bytes = zip(&[
        ("skills/a/SKILL.md", b"skill", None),
        ("README", b"r", None),
    ]);
    check(
        &bytes,
        ArchiveKind::Zip,
        Ok(&[
            "into",
            "into/README",
            "into/skills",
            "into/skills/a",
            "into/skills/a/SKILL.md",
        ]),
    );
}

#[test]
fn tar_parent_entry_is_zip_slip() {
    check(
        &tar_gz(&[Tar::File("../evil", b"x")]),
        ArchiveKind::TarGz,
        Err("source_archive_zip_slip"),
    );
}

#[test]
fn tar_absolute_entry_is_zip_slip() {
    let work = tempfile::tempdir().expect("temp dir");
    let target = work.path().join("abs-evil");
    let name = target.display().to_string();
    let into = work.path().join("into");
    fs::create_dir(&into).expect("mkdir");
    let got = unpack(
        &tar_gz(&[Tar::File(&name, b"x")]),
        ArchiveKind::TarGz,
        &into,
    );
    assert_eq!(got.map_err(|e| e.code()), Err("source_archive_zip_slip"));
    assert_eq!(listing(work.path()), ["into"]);
}

#[test]
fn zip_parent_entry_is_zip_slip() {
    check(
        &zip(&[("../evil", b"x", None)]),
        ArchiveKind::Zip,
        Err("source_archive_zip_slip"),
    );
}

#[test]
fn tar_symlink_out_is_refused() {
    check(
        &tar_gz(&[Tar::Symlink("skills/evil", "../../outside")]),
        ArchiveKind::TarGz,
        Err("source_symlink_escapes"),
    );
}

#[test]
fn zip_symlink_out_is_refused() {
    check(
        &zip(&[("l", b"", Some("/etc"))]),
        ArchiveKind::Zip,
        Err("source_symlink_escapes"),
    );
}

#[test]
fn tar_write_through_a_symlink_is_zip_slip() {
    check(
        &tar_gz(&[
            Tar::Dir("sub/"),
            Tar::Symlink("l", "sub"),
            Tar::File("l/x", b"x"),
        ]),
        ArchiveKind::TarGz,
        Err("source_archive_zip_slip"),
    );
}

#[test]
fn tar_hard_link_out_is_refused() {
    check(
        &tar_gz(&[Tar::HardLink("passwd", "../../../etc/passwd")]),
        ArchiveKind::TarGz,
        Err("source_symlink_escapes"),
    );
}

#[test]
fn tar_fifo_is_special_file() {
    check(
        &tar_gz(&[Tar::Fifo("pipe")]),
        ArchiveKind::TarGz,
        Err("source_special_file"),
    );
}

#[test]
fn garbage_is_corrupt() {
    check(
        b"not an archive",
        ArchiveKind::TarGz,
        Err("source_archive_corrupt"),
    );
    check(
        b"not an archive",
        ArchiveKind::Zip,
        Err("source_archive_corrupt"),
    );
}

#[test]
fn kind_comes_from_the_suffix() {
    let kinds: Vec<_> = ["a.tar.gz", "A.TGZ", "https://x/a.zip?x=1", "a.tar.bz2", "a"]
        .into_iter()
        .map(ArchiveKind::from_name)
        .collect();
    assert_eq!(
        kinds,
        [
            Some(ArchiveKind::TarGz),
            Some(ArchiveKind::TarGz),
            Some(ArchiveKind::Zip),
            None,
            None
        ]
    );
}

#[test]
fn sha512_of_nothing_is_the_known_value() {
    assert_eq!(
        sha512_hex(b""),
        "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"
    );
}
