//! Tree digest tests: a known value, stability, and sensitivity to content and symlinks.

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

use super::tree_digest;

fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, content) in files {
        let path = dir.path().join(name);
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(path, content).expect("write");
    }
    dir
}

/// Digest of `files`, after `change` ran on the tree.
#[track_caller]
fn check(files: &[(&str, &str)], change: impl FnOnce(&Path), expect: &str) {
    let dir = tree(files);
    change(dir.path());
    assert_eq!(tree_digest(dir.path()).expect("digest"), expect);
}

const TWO: &[(&str, &str)] = &[("b/x.md", "x\n"), ("a.md", "a\n")];
// Computed outside Rust, the way Go's dirhash.Hash1 does it:
// printf '87428fc5…c7  a.md\n73cb3858…ac  b/x.md\n' | sha256sum | xxd -r -p | base64
const TWO_DIGEST: &str = "h1:chAe9xPxK0VS+Z/e6k00/hEnFDK6UMy/Rtugk1cODzI=";

#[test]
fn known_value_for_plain_files() {
    check(TWO, |_| {}, TWO_DIGEST);
}

#[test]
fn modes_times_and_empty_dirs_do_not_count() {
    check(
        TWO,
        |root| {
            fs::set_permissions(root.join("a.md"), fs::Permissions::from_mode(0o755))
                .expect("chmod");
            fs::create_dir(root.join("empty")).expect("mkdir");
        },
        TWO_DIGEST,
    );
}

#[test]
fn one_byte_changes_the_digest() {
    let changed = tree(&[("b/x.md", "y\n"), ("a.md", "a\n")]);
    let changed = tree_digest(changed.path()).expect("digest");
    assert_ne!(changed, TWO_DIGEST);
    check(
        TWO,
        |root| fs::write(root.join("b/x.md"), "y\n").expect("write"),
        &changed,
    );
}

#[test]
fn symlink_differs_from_a_file_holding_its_target() {
    let as_file = tree(&[("l", "a.md")]);
    let as_link = tree(&[]);
    symlink("a.md", as_link.path().join("l")).expect("symlink");
    assert_ne!(
        tree_digest(as_file.path()).expect("digest"),
        tree_digest(as_link.path()).expect("digest")
    );
}
