//! Containment tests on real trees with real symlinks and FIFOs.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Command;

use super::{ContainError, check_tree, safe_relative};

/// Builds a tree with `setup` inside a fresh `root/` and checks it; `expect` is `None`
/// for a contained tree, else the refusal code and the reported path.
#[track_caller]
fn check(setup: impl FnOnce(&Path), expect: Option<(&str, &str)>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("root");
    fs::create_dir(&root).expect("mkdir");
    fs::write(root.join("SKILL.md"), "skill").expect("write");
    setup(&root);
    let got = check_tree(&root).err().map(|e| {
        let path = match &e {
            ContainError::SymlinkEscapes { path, .. }
            | ContainError::SpecialFile { path, .. }
            | ContainError::Io { path, .. } => path.clone(),
            ContainError::PathEscapes { path, .. } => path.clone(),
        };
        (e.code().to_owned(), path)
    });
    let expect = expect.map(|(c, p)| (c.to_owned(), p.to_owned()));
    assert_eq!(got, expect);
}

#[test]
fn plain_tree_with_inner_links_is_contained() {
    check(
        |root| {
            fs::create_dir_all(root.join("skills/a")).expect("mkdir");
            symlink("../SKILL.md", root.join("skills/link")).expect("symlink");
            symlink("a", root.join("skills/dir-link")).expect("symlink");
            symlink("missing", root.join("dangling")).expect("symlink");
            symlink(".", root.join("self")).expect("symlink");
        },
        None,
    );
}

#[test]
fn parent_escape_is_refused() {
    check(
        |root| {
            fs::create_dir(root.join("skills")).expect("mkdir");
            symlink("../../outside", root.join("skills/evil")).expect("symlink");
        },
        Some(("source_symlink_escapes", "skills/evil")),
    );
}

#[test]
fn absolute_target_is_refused_even_when_it_points_inside() {
    check(
        |root| symlink(root.join("SKILL.md"), root.join("abs")).expect("symlink"),
        Some(("source_symlink_escapes", "abs")),
    );
}

#[test]
fn escape_through_a_second_hop_is_refused() {
    // `d/up` -> `..` is the root itself (fine); `esc` -> `d/up/..` climbs above it.
    check(
        |root| {
            fs::create_dir(root.join("d")).expect("mkdir");
            symlink("..", root.join("d/up")).expect("symlink");
            symlink("d/up/..", root.join("esc")).expect("symlink");
        },
        Some(("source_symlink_escapes", "esc")),
    );
}

#[test]
fn symlink_loop_is_refused() {
    check(
        |root| {
            symlink("b", root.join("a")).expect("symlink");
            symlink("a", root.join("b")).expect("symlink");
        },
        Some(("source_symlink_escapes", "a")),
    );
}

#[test]
fn fifo_is_refused() {
    check(
        |root| {
            let status = Command::new("mkfifo")
                .arg(root.join("pipe"))
                .status()
                .expect("mkfifo runs");
            assert!(status.success());
        },
        Some(("source_special_file", "pipe")),
    );
}

#[test]
fn safe_relative_accepts_and_refuses() {
    let ok = |p: &str| safe_relative(p).map(|p| p.display().to_string());
    assert_eq!(
        ok("skills/./a/SKILL.md"),
        Ok("skills/a/SKILL.md".to_owned())
    );
    for bad in ["../x", "a/../../x", "/etc/passwd", "a\\..\\b", "", "./"] {
        let code = safe_relative(bad).map_err(|e| e.code());
        assert_eq!(code, Err("source_path_escapes"), "{bad:?}");
    }
}
