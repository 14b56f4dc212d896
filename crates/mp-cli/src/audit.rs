//! Audit-log adapters: records kept in memory for the report, and optionally appended to a
//! JSON Lines file (opened in append mode; a record is one `write` of one line).

use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

use mp_core::port::{AuditError, AuditLog, AuditRecord};

/// Keeps every record in memory and, when a path is given, appends it to a JSONL file.
#[derive(Debug)]
pub struct CliAuditLog {
    records: Mutex<Vec<AuditRecord>>,
    file: Option<PathBuf>,
    /// Whether records are kept in memory (not in a long-running service).
    keep: bool,
}

impl Default for CliAuditLog {
    fn default() -> Self {
        Self::new(None)
    }
}

impl CliAuditLog {
    /// A log that also appends to `file`, when given.
    pub fn new(file: Option<PathBuf>) -> Self {
        Self {
            records: Mutex::new(Vec::new()),
            file,
            keep: true,
        }
    }

    /// A log that only appends to `file` (when given) and keeps nothing in memory, for a
    /// process that runs for weeks.
    pub fn streaming(file: Option<PathBuf>) -> Self {
        Self {
            keep: false,
            ..Self::new(file)
        }
    }

    /// Appends other audit lines (e.g. skill calls) to the file, when there is one; they
    /// are not classification records and are not kept in memory.
    ///
    /// # Errors
    /// When the file cannot be opened or written.
    pub fn append_lines(&self, lines: impl Iterator<Item = String>) -> anyhow::Result<()> {
        let Some(path) = &self.file else {
            return Ok(());
        };
        let mut text = String::new();
        for line in lines {
            text.push_str(&line);
            text.push('\n');
        }
        if text.is_empty() {
            return Ok(());
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        file.write_all(text.as_bytes())
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        Ok(())
    }

    /// The records appended so far, in order.
    pub fn records(&self) -> Vec<AuditRecord> {
        self.records.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

#[async_trait::async_trait]
impl AuditLog for CliAuditLog {
    async fn append(&self, record: &AuditRecord) -> Result<(), AuditError> {
        if let Some(path) = &self.file {
            let mut line = record.to_json_line();
            line.push('\n');
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| AuditError(format!("{}: {e}", path.display())))?;
            file.write_all(line.as_bytes())
                .map_err(|e| AuditError(format!("{}: {e}", path.display())))?;
        }
        if self.keep {
            self.records
                .lock()
                .map_err(|_| AuditError("audit log lock poisoned".to_owned()))?
                .push(record.clone());
        }
        Ok(())
    }

    async fn append_agent_records(&self, lines: &[String]) -> Result<(), AuditError> {
        self.append_lines(lines.iter().cloned())
            .map_err(|e| AuditError(e.to_string()))
    }
}
