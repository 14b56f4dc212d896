//! One command's session over a filesystem contract store: opens the store directory, loads
//! the event log and the orchestrator ledger, and saves them back atomically.
//!
//! Layout of a store directory (decisions/0016, 0017):
//! - `<ID>/<VERSION>.json`: the contracts, written by `FsStore` (never overwritten);
//! - `events.jsonl`: the CloudEvents log, one event per line;
//! - `ledger.json`: activation approvals, phases, retry attempts and the submission keys of
//!   `mp contract new` and `mp evidence record`.
//!
//! Both files are replaced whole through a temporary file and a rename, so a reader sees
//! the old or the new content, never a mix. A writing command holds `<store>/.lock`
//! (created exclusively, removed at the end) so two commands never interleave.

use std::collections::BTreeMap;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::Args;
use jiff::Timestamp;
use mp_contracts::events::{self, Event};
use mp_contracts::orchestrator::{Ledger, ManualClock, Orchestrator, OrchestratorError};
use mp_contracts::store::ContractStore;
use mp_contracts::store::fs::FsStore;
use mp_contracts::{Contract, ContractError, ContractId, Kind};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::Exit;
use crate::cli::Format;

/// The event log's file name inside the store.
pub const EVENTS_FILE: &str = "events.jsonl";
/// The ledger's file name inside the store.
pub const LEDGER_FILE: &str = "ledger.json";
/// The lock file a writing command holds while it runs.
pub const LOCK_FILE: &str = ".lock";

/// The store's lock, held by one writing command at a time and removed when dropped.
struct StoreLock {
    path: PathBuf,
}

impl StoreLock {
    fn acquire(root: &Path) -> anyhow::Result<Self> {
        let path = root.join(LOCK_FILE);
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(mut file) => {
                let _ = writeln!(file, "{}", std::process::id());
                Ok(Self { path })
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => bail!(
                "store {} is in use by another mp command ({} exists; remove it if no mp command is running)",
                root.display(),
                path.display()
            ),
            Err(e) => Err(e).with_context(|| format!("locking {}", path.display())),
        }
    }
}

impl Drop for StoreLock {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// Arguments shared by every command that works on a store.
#[derive(Debug, Args)]
pub struct StoreArgs {
    /// The store directory (must exist; create it with mkdir).
    #[arg(long, value_name = "DIR")]
    pub store: PathBuf,
    /// Act at this instant (RFC 3339) instead of the system clock.
    #[arg(long, value_name = "TIME")]
    pub now: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// What `ledger.json` holds.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct LedgerFile {
    /// The orchestrator's working memory.
    #[serde(default)]
    orchestrator: Ledger,
    /// Submission keys (`new:<hash>`, `evidence:<hash>`) and the contract each created.
    #[serde(default)]
    submissions: BTreeMap<String, ContractId>,
}

/// An open store: the orchestrator over it and the submission keys.
pub struct Session {
    root: PathBuf,
    /// The orchestrator, restored from the event log and the ledger.
    pub orch: Orchestrator<FsStore, ManualClock>,
    /// Submission keys and the contract each created.
    pub submissions: BTreeMap<String, ContractId>,
    now: Timestamp,
    /// The store lock of a writing command, released on drop.
    _lock: Option<StoreLock>,
}

impl Session {
    /// Opens the store at `args.store` for a command that writes, holding its lock until
    /// the session is dropped.
    ///
    /// # Errors
    /// A missing or locked store directory, an unreadable or corrupt log or ledger, a bad
    /// `--now`.
    pub fn open(args: &StoreArgs) -> anyhow::Result<Self> {
        Self::open_with(args, true)
    }

    /// Opens the store at `args.store` to read it only (no lock).
    ///
    /// # Errors
    /// As [`Session::open`], except for the lock.
    pub fn open_read(args: &StoreArgs) -> anyhow::Result<Self> {
        Self::open_with(args, false)
    }

    fn open_with(args: &StoreArgs, write: bool) -> anyhow::Result<Self> {
        let root = args.store.clone();
        if !root.is_dir() {
            bail!(
                "store {} does not exist or is not a directory (create it with mkdir)",
                root.display()
            );
        }
        let lock = if write {
            Some(StoreLock::acquire(&root)?)
        } else {
            None
        };
        let now = match &args.now {
            Some(text) => text
                .parse::<Timestamp>()
                .with_context(|| format!("--now {text} is not an RFC 3339 time"))?,
            None => Timestamp::now(),
        };
        let events = match read_optional(&root.join(EVENTS_FILE))? {
            Some(text) => events::from_json_lines(&text).map_err(|(line, e)| {
                anyhow::anyhow!(
                    "{} line {line} is not an event: {e}",
                    root.join(EVENTS_FILE).display()
                )
            })?,
            None => Vec::new(),
        };
        let ledger: LedgerFile = match read_optional(&root.join(LEDGER_FILE))? {
            Some(text) => serde_json::from_str(&text)
                .with_context(|| format!("{} is not a ledger", root.join(LEDGER_FILE).display()))?,
            None => LedgerFile::default(),
        };
        let orch = Orchestrator::restore(
            FsStore::new(&root),
            ManualClock::new(now),
            events,
            ledger.orchestrator,
        );
        Ok(Self {
            root,
            orch,
            submissions: ledger.submissions,
            now,
            _lock: lock,
        })
    }

    /// The instant this command acts at.
    pub fn now(&self) -> Timestamp {
        self.now
    }

    /// The latest version of a contract.
    ///
    /// # Errors
    /// A store failure (exit 2).
    pub fn latest(&self, id: &ContractId) -> anyhow::Result<Option<Contract>> {
        Ok(self.orch.store().latest(id)?)
    }

    /// The latest version of every stored contract, by id.
    ///
    /// # Errors
    /// A store failure (exit 2).
    pub fn all_latest(&self) -> anyhow::Result<Vec<Contract>> {
        let store = self.orch.store();
        let mut all = Vec::new();
        for id in store.ids()? {
            if let Some(contract) = store.latest(&id)? {
                all.push(contract);
            }
        }
        Ok(all)
    }

    /// The next free id of a kind (`IC-101` in an empty store).
    ///
    /// # Errors
    /// A store failure (exit 2).
    pub fn next_id(&self, kind: Kind) -> anyhow::Result<ContractId> {
        let highest = self
            .orch
            .store()
            .ids()?
            .iter()
            .filter(|id| id.kind() == Some(kind))
            .filter_map(|id| {
                id.as_str()
                    .split_once('-')
                    .and_then(|(_, n)| n.parse::<u64>().ok())
            })
            .max()
            .unwrap_or(100);
        Ok(ContractId::parse(&format!(
            "{}-{:03}",
            kind.id_prefix(),
            highest.saturating_add(1)
        ))?)
    }

    /// Writes the event log and the ledger back (each atomically).
    ///
    /// # Errors
    /// An I/O failure (exit 2).
    pub fn save(&self) -> anyhow::Result<()> {
        let log = events::to_json_lines(self.orch.events());
        write_atomically(&self.root, EVENTS_FILE, log.as_bytes())?;
        let ledger = LedgerFile {
            orchestrator: self.orch.ledger(),
            submissions: self.submissions.clone(),
        };
        let mut bytes = serde_json::to_vec_pretty(&ledger)?;
        bytes.push(b'\n');
        write_atomically(&self.root, LEDGER_FILE, &bytes)
    }

    /// The events recorded so far.
    pub fn events(&self) -> &[Event] {
        self.orch.events()
    }
}

fn read_optional(path: &Path) -> anyhow::Result<Option<String>> {
    match fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// Replaces `dir/name` with `bytes` through a synced temporary file and a rename.
fn write_atomically(dir: &Path, name: &str, bytes: &[u8]) -> anyhow::Result<()> {
    let target = dir.join(name);
    let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = (|| -> std::io::Result<()> {
        let mut file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&temp, &target)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written.with_context(|| format!("writing {}", target.display()))
}

/// Prints a refusal or an invalid contract and returns exit 1; store failures become
/// errors (exit 2).
///
/// # Errors
/// Store failures and output errors.
pub fn refusal(
    out: &mut dyn Write,
    format: Format,
    error: OrchestratorError,
) -> anyhow::Result<Exit> {
    match error {
        OrchestratorError::Store(e) => Err(e.into()),
        OrchestratorError::Invalid(errors) => invalid(out, format, &errors),
        OrchestratorError::Refused(e) => refused(out, format, e.code, &e.message),
        other => refused(out, format, other.code(), &other.to_string()),
    }
}

/// Prints `refused: CODE: MESSAGE` (or its JSON) and returns exit 1.
///
/// # Errors
/// Output errors.
pub fn refused(
    out: &mut dyn Write,
    format: Format,
    code: &str,
    message: &str,
) -> anyhow::Result<Exit> {
    match format {
        Format::Text => writeln!(out, "refused: {code}: {message}")?,
        Format::Json => {
            crate::output::json(out, &json!({"ok": false, "code": code, "message": message}))?
        }
    }
    Ok(Exit::Findings)
}

/// Prints every error of an invalid document and returns exit 1.
///
/// # Errors
/// Output errors.
pub fn invalid(
    out: &mut dyn Write,
    format: Format,
    errors: &[ContractError],
) -> anyhow::Result<Exit> {
    match format {
        Format::Text => {
            for e in errors {
                let pointer = if e.pointer.is_empty() {
                    "(root)"
                } else {
                    &e.pointer
                };
                writeln!(out, "{pointer}: {}: {}", e.code, e.message)?;
            }
            writeln!(out, "invalid ({} errors)", errors.len())?;
        }
        Format::Json => {
            let list: Vec<Value> = errors
                .iter()
                .map(|e| json!({"pointer": e.pointer, "code": e.code, "message": e.message}))
                .collect();
            crate::output::json(
                out,
                &json!({"ok": false, "code": "invalid_contract", "errors": list}),
            )?;
        }
    }
    Ok(Exit::Findings)
}

/// Prints a success: the text line, or `{"ok": true, ...fields}`; returns exit 0.
///
/// # Errors
/// Output errors.
pub fn done(
    out: &mut dyn Write,
    format: Format,
    text: &str,
    mut fields: Value,
) -> anyhow::Result<Exit> {
    match format {
        Format::Text => writeln!(out, "{text}")?,
        Format::Json => {
            if let Value::Object(map) = &mut fields {
                map.insert("ok".to_owned(), Value::Bool(true));
            }
            crate::output::json(out, &fields)?;
        }
    }
    Ok(Exit::Ok)
}
