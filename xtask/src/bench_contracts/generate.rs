//! The contract set of `cargo xtask bench contracts`: consistent chains of the five kinds
//! (IntentContract, TaskSeed, Acceptance, PublishGate, Evidence), generated
//! deterministically and written as one file per document and as one JSON Lines file.
//!
//! The documents come from the generator of mp-contracts' validation benchmark
//! (`crates/mp-contracts/benches/support/chains.rs`, included here), so both benchmarks
//! validate the same shapes.

use std::fs::{self, File};
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};

#[path = "../../../crates/mp-contracts/benches/support/chains.rs"]
mod chains;

pub use chains::{CHAIN_LEN, Chains};

/// Chains per subdirectory of `docs/`: 200 chains are 1,000 documents, so the default
/// 100,000 documents fill 100 subdirectories.
const CHAINS_PER_DIR: usize = 200;

/// The marker that says which set `out` holds; written last, so a set whose writing was
/// interrupted has none and is written again.
const MARKER: &str = "generated.txt";

/// What the marker says: the generator's revision and the number of documents. Bump the
/// revision when the documents change.
fn marker_text(docs: usize) -> String {
    format!("mp bench contracts set, revision 1, {docs} documents\n")
}

/// Where one set lives: the directory tree and the JSON Lines file under `out`.
#[derive(Debug, Clone)]
pub struct SetPaths {
    /// `<out>/docs`: `<chain / 200 as three digits>/<ID>.json`.
    pub dir: PathBuf,
    /// `<out>/docs.jsonl`: one document per line, in chain order.
    pub jsonl: PathBuf,
}

impl SetPaths {
    /// The paths under `out`.
    pub fn new(out: &Path) -> Self {
        Self {
            dir: out.join("docs"),
            jsonl: out.join("docs.jsonl"),
        }
    }
}

/// Makes sure `out` holds the set of `docs` documents, writing it unless its marker says it
/// is already there. Returns whether it was written.
///
/// # Errors
/// When `docs` is not a positive multiple of five, or a file cannot be written.
pub fn ensure(out: &Path, docs: usize) -> anyhow::Result<bool> {
    if docs == 0 || !docs.is_multiple_of(CHAIN_LEN) {
        bail!("--docs must be a positive multiple of {CHAIN_LEN} (whole chains), not {docs}");
    }
    let marker = out.join(MARKER);
    if fs::read_to_string(&marker).is_ok_and(|m| m == marker_text(docs)) {
        return Ok(false);
    }
    let paths = SetPaths::new(out);
    let _ = fs::remove_file(&marker);
    if paths.dir.exists() {
        fs::remove_dir_all(&paths.dir)
            .with_context(|| format!("removing {}", paths.dir.display()))?;
    }
    fs::create_dir_all(&paths.dir).with_context(|| format!("creating {}", paths.dir.display()))?;
    write_set(&paths, docs / CHAIN_LEN)?;
    fs::write(&marker, marker_text(docs))
        .with_context(|| format!("writing {}", marker.display()))?;
    Ok(true)
}

fn write_set(paths: &SetPaths, chains: usize) -> anyhow::Result<()> {
    let file = File::create(&paths.jsonl)
        .with_context(|| format!("creating {}", paths.jsonl.display()))?;
    let mut jsonl = BufWriter::new(file);
    let mut line = Vec::new();
    for (n, chain) in Chains::new(chains).enumerate() {
        let sub = paths.dir.join(format!("{:03}", n / CHAINS_PER_DIR));
        if n % CHAINS_PER_DIR == 0 {
            fs::create_dir_all(&sub).with_context(|| format!("creating {}", sub.display()))?;
        }
        for doc in &chain {
            line.clear();
            serde_json::to_writer(&mut line, doc)?;
            let id = doc["id"]
                .as_str()
                .context("a generated document has no id")?;
            let path = sub.join(format!("{id}.json"));
            fs::write(&path, &line).with_context(|| format!("writing {}", path.display()))?;
            line.push(b'\n');
            jsonl
                .write_all(&line)
                .with_context(|| format!("writing {}", paths.jsonl.display()))?;
        }
    }
    jsonl
        .flush()
        .with_context(|| format!("writing {}", paths.jsonl.display()))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn set(chains: usize) -> Vec<Value> {
        Chains::new(chains).flatten().collect()
    }

    /// The set is valid, schema and cross-document rules, and so is every document on
    /// its own.
    #[test]
    fn a_generated_set_is_valid() {
        let docs = set(60);
        assert_eq!(docs.len(), 300);
        let errors = mp_contracts::validate_set(&docs);
        assert!(errors.is_empty(), "{:#?}", &errors[..errors.len().min(5)]);
    }

    /// The check above can fail: a broken document is reported.
    #[test]
    fn a_broken_document_is_reported() {
        let mut docs = set(2);
        docs[9]["headCommit"] = json!("abc");
        assert!(!mp_contracts::validate_set(&docs).is_empty());
    }

    #[test]
    fn ids_are_six_digits_and_commits_forty_hex_digits() {
        let docs = set(3);
        assert_eq!(docs[10]["id"], "IC-000002");
        assert_eq!(docs[14]["taskSeedId"], "TS-000002");
        for key in ["baseCommit", "headCommit"] {
            let sha = docs[4][key].as_str().unwrap_or_default();
            assert_eq!(sha.len(), 40, "{sha}");
            assert!(sha.bytes().all(|b| b.is_ascii_hexdigit()), "{sha}");
        }
    }

    #[test]
    fn the_same_chains_every_time() {
        assert_eq!(set(4), set(4));
    }

    /// Both forms hold the same documents; the marker keeps a second call from writing.
    #[test]
    fn the_tree_and_the_lines_hold_the_same_documents() -> anyhow::Result<()> {
        let out = std::env::temp_dir().join(format!("mp-bench-contracts-{}", std::process::id()));
        let _ = fs::remove_dir_all(&out);
        assert!(ensure(&out, 10 * CHAIN_LEN)?);
        assert!(!ensure(&out, 10 * CHAIN_LEN)?);
        let paths = SetPaths::new(&out);
        let lines = fs::read_to_string(&paths.jsonl)?;
        let expected = set(10);
        assert_eq!(lines.lines().count(), expected.len());
        for (line, doc) in lines.lines().zip(&expected) {
            let id = doc["id"].as_str().unwrap_or_default();
            let file = fs::read_to_string(paths.dir.join("000").join(format!("{id}.json")))?;
            assert_eq!(file, line);
            assert_eq!(&serde_json::from_str::<Value>(line)?, doc);
        }
        assert!(ensure(&out, 12).is_err());
        fs::remove_dir_all(&out)?;
        Ok(())
    }
}
