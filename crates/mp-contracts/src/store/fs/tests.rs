//! Tests for the filesystem adapter: file layout, atomic publication, corrupt files.

use std::path::Path;

use super::*;
use crate::testkit;

fn intent() -> Contract {
    crate::parse_document(&testkit::intent()).unwrap_or_else(|e| panic!("fixture is valid: {e:?}"))
}

fn names(dir: &Path) -> Vec<String> {
    let mut names = entries(dir).unwrap_or_else(|e| panic!("{e}"));
    names.sort();
    names
}

#[track_caller]
fn check(dir: &Path, expected: &[&str]) {
    assert_eq!(names(dir), expected);
}

fn failing_publish(_: &Path, _: &Path) -> io::Result<()> {
    Err(io::Error::other("disk full"))
}

#[test]
fn one_file_per_version_under_the_id() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut store = FsStore::new(root.path());
    store.put(&intent()).unwrap_or_else(|e| panic!("{e}"));
    check(&root.path().join("IC-101"), &["1.json"]);
}

#[test]
fn a_failed_publication_leaves_no_file() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let result = write_new(root.path(), "1.json", b"{}", failing_publish);
    assert_eq!(
        result.map_err(|e| e.to_string()),
        Err("disk full".to_owned())
    );
    check(root.path(), &[]);
}

#[test]
fn a_refused_overwrite_keeps_the_original_and_no_temporary() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut store = FsStore::new(root.path());
    store.put(&intent()).unwrap_or_else(|e| panic!("{e}"));
    let path = root.path().join("IC-101/1.json");
    let before = std::fs::read(&path).unwrap_or_default();
    let mut changed = intent();
    if let crate::Body::IntentContract(body) = &mut changed.body {
        body.intent = "something else".to_owned();
    }
    let refused = store.put(&changed).map_err(|e| e.to_string());
    assert_eq!(
        (refused, std::fs::read(&path).unwrap_or_default() == before),
        (Err("IC-101 version 1 is already stored".to_owned()), true)
    );
    check(&root.path().join("IC-101"), &["1.json"]);
}

#[test]
fn a_link_race_is_reported_as_existing_and_cleans_up() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let racing = |_: &Path, _: &Path| Err(io::Error::from(io::ErrorKind::AlreadyExists));
    let result = write_new(root.path(), "1.json", b"{}", racing).map_err(|e| e.kind());
    assert_eq!(result, Err(io::ErrorKind::AlreadyExists));
    check(root.path(), &[]);
}

#[test]
fn a_directory_that_cannot_be_created_is_an_io_error() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(root.path().join("IC-101"), b"not a directory")
        .unwrap_or_else(|e| panic!("{e}"));
    let mut store = FsStore::new(root.path());
    assert_eq!(store.put(&intent()).map_err(|e| e.code()), Err("store_io"));
    check(root.path(), &["IC-101"]);
}

#[test]
fn a_corrupt_file_is_reported() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(root.path().join("IC-101")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(root.path().join("IC-101/1.json"), b"{\"id\":")
        .unwrap_or_else(|e| panic!("{e}"));
    let store = FsStore::new(root.path());
    let id = ContractId::parse("IC-101").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        store.get(&id, Version::FIRST).map_err(|e| e.code()).err(),
        Some("corrupt_contract")
    );
}

#[test]
fn temporaries_are_not_versions() {
    let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dir = root.path().join("IC-101");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.join(".2.json.1.0.tmp"), b"{").unwrap_or_else(|e| panic!("{e}"));
    let mut store = FsStore::new(root.path());
    store.put(&intent()).unwrap_or_else(|e| panic!("{e}"));
    let id = ContractId::parse("IC-101").unwrap_or_else(|e| panic!("{e}"));
    let versions: Vec<u64> = store
        .versions(&id)
        .map(|v| v.iter().map(|v| v.get()).collect())
        .unwrap_or_default();
    assert_eq!(versions, vec![1]);
}
