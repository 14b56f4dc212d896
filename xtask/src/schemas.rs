//! Placeholder until the configuration schema generator lands.

use std::path::Path;

/// Regenerates or checks `schemas/*.schema.json`.
pub fn run(_root: &Path, _check: bool) -> anyhow::Result<()> {
    Ok(())
}
