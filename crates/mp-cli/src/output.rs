//! Writing results: text lines for people, one JSON document for machines.

use std::io::Write;

/// Writes `value` as pretty JSON followed by a newline.
pub fn json(out: &mut dyn Write, value: &serde_json::Value) -> anyhow::Result<()> {
    serde_json::to_writer_pretty(&mut *out, value)?;
    writeln!(out)?;
    Ok(())
}
