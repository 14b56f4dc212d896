//! Tests every store adapter must pass, run against [`MemoryStore`] and [`fs::FsStore`].

use serde_json::json;

use super::*;
use crate::testkit;

fn contract(version: u64) -> Contract {
    let doc = testkit::with(testkit::intent(), "/version", json!(version));
    crate::parse_document(&doc).unwrap_or_else(|e| panic!("fixture is valid: {e:?}"))
}

fn id(text: &str) -> ContractId {
    ContractId::parse(text).unwrap_or_else(|e| panic!("{e}"))
}

/// Puts versions 1 and 2 and a duplicate 1, then reports what the store says.
#[track_caller]
fn check(store: &mut dyn ContractStore) {
    let first = store.put(&contract(1)).map_err(|e| e.code());
    let second = store.put(&contract(2)).map_err(|e| e.code());
    let again = store.put(&contract(1)).map_err(|e| e.code());
    let versions: Vec<u64> = store
        .versions(&id("IC-101"))
        .map(|v| v.iter().map(|v| v.get()).collect())
        .unwrap_or_default();
    let latest = store
        .latest(&id("IC-101"))
        .ok()
        .flatten()
        .map(|c| c.common.version.get());
    let got_one = store.get(&id("IC-101"), Version::FIRST).ok().flatten();
    let unknown = store.versions(&id("IC-999")).map(|v| v.len()).ok();
    let ids: Vec<String> = store
        .ids()
        .map(|ids| ids.iter().map(ToString::to_string).collect())
        .unwrap_or_default();
    assert_eq!(
        (
            first, second, again, versions, latest, got_one, unknown, ids
        ),
        (
            Ok(()),
            Ok(()),
            Err("version_exists"),
            vec![1, 2],
            Some(2),
            Some(contract(1)),
            Some(0),
            vec!["IC-101".to_owned()]
        )
    );
}

#[test]
fn memory_store_keeps_versions_immutable() {
    check(&mut MemoryStore::new());
}

#[test]
fn fs_store_keeps_versions_immutable() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    check(&mut fs::FsStore::new(dir.path().join("store")));
}
