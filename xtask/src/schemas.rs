//! `cargo xtask schemas [--check]`: writes the configuration JSON Schemas to `schemas/`.

use std::fs;
use std::path::Path;

use anyhow::Context as _;

/// Writes `schemas/<name>.schema.json` for every configuration file under `root`.
///
/// With `check`, writes nothing and fails when a file is missing or differs from what
/// would be generated, listing each one.
pub fn run(root: &Path, check: bool) -> anyhow::Result<()> {
    let dir = root.join("schemas");
    let mut stale = Vec::new();
    for (name, schema) in mp_core::config::json_schemas() {
        let path = dir.join(format!("{name}.schema.json"));
        let text = serde_json::to_string_pretty(&schema)
            .with_context(|| format!("serializing the {name} schema"))?
            + "\n";
        let current = match fs::read_to_string(&path) {
            Ok(current) => Some(current),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
            Err(err) => {
                return Err(err).with_context(|| format!("reading {}", path.display()));
            }
        };
        if current.as_deref() == Some(text.as_str()) {
            continue;
        }
        if check {
            let state = if current.is_some() {
                "stale"
            } else {
                "missing"
            };
            stale.push(format!("{} ({state})", path.display()));
            continue;
        }
        fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    if !stale.is_empty() {
        anyhow::bail!(
            "configuration schemas are out of date; run `cargo xtask schemas`:\n  {}",
            stale.join("\n  ")
        );
    }
    Ok(())
}
