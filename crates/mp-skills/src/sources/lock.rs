//! The two lock files of trusted skill sources: the committed pin lock `DIR/sources.lock`
//! (one pin per source: method, url, ref, anchor) and the gitignored local lock
//! `DIR/.mp-sources/local.lock` (what is on disk now: fetched commit or archive SHA-512,
//! tree digest, fetch time).
//!
//! Both are YAML block lists with column-aligned `key: value` pairs and `#` comments,
//! written by [`PinLock::render`] / [`LocalLock::render`] and read back strictly. A pin is
//! never rewritten silently: [`PinLock::pin_first`] refuses to change an existing pin and
//! only [`PinLock::bump`] does.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_saphyr::Spanned;

use super::fetch::Fetched;
use super::format::{FileProblem, codes as format_codes, list_items};
use super::model::{Anchor, Method, Pin, Refusal, SourceId};
use super::trust::read_optional;

/// The stable codes of lock problems.
pub mod codes {
    /// `pin_first` met a different existing pin.
    pub const PIN_EXISTS: &str = "source_pin_exists";
    /// A local-lock value that is not what mp writes (empty `fetched`, a digest without
    /// `h1:`, an empty `fetched_at`).
    pub const LOCAL_VALUE_INVALID: &str = "source_local_lock_value_invalid";
}

const PIN_LOCK_HEADER: &str = "# sources.lock: the committed pins of trusted skill sources (docs/sources.md).\n# A pin changes only through `mp sources lock --bump <id>`; review it like code.\n";
const LOCAL_LOCK_HEADER: &str =
    "# local.lock: what this machine fetched into .mp-sources/ (gitignored; docs/sources.md).\n";

/// Whether [`PinLock::pin_first`] added the pin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PinOutcome {
    /// The source had no pin; it has one now.
    Added,
    /// The same pin was already there; nothing changed.
    Unchanged,
}

/// The committed pin lock.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PinLock {
    entries: Vec<Pin>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPin {
    id: Spanned<String>,
    method: Spanned<String>,
    url: Spanned<String>,
    #[serde(rename = "ref")]
    reference: Spanned<String>,
    commit: Option<Spanned<String>>,
    sha512: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLocal {
    id: Spanned<String>,
    method: Spanned<String>,
    url: Spanned<String>,
    #[serde(rename = "ref")]
    reference: Spanned<String>,
    fetched: Spanned<String>,
    tree_digest: Spanned<String>,
    fetched_at: Spanned<String>,
}

/// Collects problems for one lock file.
struct Checker<'a> {
    file: &'a Path,
    /// The file line of the current item's first line.
    offset: u64,
    problems: Vec<FileProblem>,
}

impl Checker<'_> {
    fn line(&self, at: &Spanned<String>) -> u64 {
        self.offset + at.referenced.line().max(1) - 1
    }

    fn push(
        &mut self,
        at: &Spanned<String>,
        source: &str,
        code: &'static str,
        field: &str,
        message: String,
    ) {
        self.problems.push(
            FileProblem::new(self.file, Some(self.line(at)), code, message)
                .with_source(Some(source))
                .with_field(field),
        );
    }

    fn id(&mut self, id: &Spanned<String>, seen: &[SourceId]) -> Option<SourceId> {
        match SourceId::parse(&id.value) {
            Err(message) => {
                self.push(id, &id.value, format_codes::ID_INVALID, "id", message);
                None
            }
            Ok(parsed) if seen.contains(&parsed) => {
                self.push(
                    id,
                    &id.value,
                    format_codes::DUPLICATE_ID,
                    "id",
                    format!("id `{}` has two blocks", id.value),
                );
                None
            }
            Ok(parsed) => Some(parsed),
        }
    }

    fn method(&mut self, method: &Spanned<String>, source: &str) -> Option<Method> {
        let parsed = Method::parse(&method.value);
        if parsed.is_none() {
            self.push(
                method,
                source,
                format_codes::METHOD_INVALID,
                "method",
                format!(
                    "method `{}` is not one of `git-tag`, `git-branch`, `archive`",
                    method.value
                ),
            );
        }
        parsed
    }

    fn text(
        &mut self,
        value: &Spanned<String>,
        source: &str,
        field: &str,
        code: &'static str,
    ) -> Option<String> {
        if value.value.is_empty() || value.value.chars().any(char::is_whitespace) {
            self.push(
                value,
                source,
                code,
                field,
                format!("{field} `{}` is empty or holds whitespace", value.value),
            );
            None
        } else {
            Some(value.value.clone())
        }
    }
}

/// The anchor a lock block must carry for its method.
fn lock_anchor(
    checker: &mut Checker<'_>,
    raw: &RawPin,
    method: Method,
) -> Result<Option<Anchor>, ()> {
    let source = raw.id.value.as_str();
    let (wanted, wrong, key, wrong_key, lengths): (_, _, _, _, &[usize]) = match method {
        Method::GitBranch => {
            for (value, key) in [(&raw.commit, "commit"), (&raw.sha512, "sha512")] {
                if let Some(v) = value {
                    checker.push(
                        v,
                        source,
                        format_codes::BRANCH_ANCHORED,
                        key,
                        format!("a git-branch pin takes no `{key}`"),
                    );
                }
            }
            return if checker.problems.is_empty() {
                Ok(None)
            } else {
                Err(())
            };
        }
        Method::GitTag => (&raw.commit, &raw.sha512, "commit", "sha512", &[40, 64]),
        Method::Archive => (&raw.sha512, &raw.commit, "sha512", "commit", &[128]),
    };
    if let Some(v) = wrong {
        checker.push(
            v,
            source,
            format_codes::ANCHOR_WRONG_KIND,
            wrong_key,
            format!("a {method} pin is anchored by `{key}`"),
        );
        return Err(());
    }
    let Some(v) = wanted else {
        checker.problems.push(
            FileProblem::new(
                checker.file,
                Some(checker.line(&raw.id)),
                format_codes::ANCHOR_MISSING,
                format!("a {method} pin needs `{key}`"),
            )
            .with_source(Some(source))
            .with_field(key),
        );
        return Err(());
    };
    let hex = v
        .value
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if !hex || !lengths.contains(&v.value.len()) {
        checker.push(
            v,
            source,
            format_codes::ANCHOR_MALFORMED,
            key,
            format!(
                "{key} `{}` is not lowercase hex of the right length",
                v.value
            ),
        );
        return Err(());
    }
    Ok(Some(if method == Method::GitTag {
        Anchor::Commit(v.value.clone())
    } else {
        Anchor::Sha512(v.value.clone())
    }))
}

impl PinLock {
    /// A lock holding `pins` (sorted by id).
    pub fn new(mut pins: Vec<Pin>) -> Self {
        pins.sort_by(|a, b| a.id.cmp(&b.id));
        Self { entries: pins }
    }

    /// The pins, sorted by id.
    pub fn entries(&self) -> &[Pin] {
        &self.entries
    }

    /// The pin of `id`.
    pub fn get(&self, id: &SourceId) -> Option<&Pin> {
        self.entries.iter().find(|p| &p.id == id)
    }

    /// Records the first pin of a source. An identical existing pin is left alone; a
    /// different one is never replaced.
    ///
    /// # Errors
    /// `source_pin_exists` when the source is pinned to something else: changing a pin is
    /// a deliberate [`PinLock::bump`].
    pub fn pin_first(&mut self, pin: Pin) -> Result<PinOutcome, Refusal> {
        match self.get(&pin.id) {
            Some(existing) if existing == &pin => Ok(PinOutcome::Unchanged),
            Some(existing) => Err(Refusal {
                source: pin.id.to_string(),
                code: codes::PIN_EXISTS,
                reason: format!(
                    "sources.lock already pins {} {} {}{}; it is not rewritten",
                    existing.method,
                    existing.url,
                    existing.reference,
                    existing
                        .anchor
                        .as_ref()
                        .map_or_else(String::new, |a| format!(" {a}"))
                ),
                fix: format!(
                    "run `mp sources lock --bump {}` to change the pin deliberately",
                    pin.id
                ),
            }),
            None => {
                self.entries.push(pin);
                self.entries.sort_by(|a, b| a.id.cmp(&b.id));
                Ok(PinOutcome::Added)
            }
        }
    }

    /// Sets the pin of a source explicitly, returning the previous one.
    pub fn bump(&mut self, pin: Pin) -> Option<Pin> {
        let previous = self.remove(&pin.id);
        self.entries.push(pin);
        self.entries.sort_by(|a, b| a.id.cmp(&b.id));
        previous
    }

    /// Drops the pin of `id`, returning it.
    pub fn remove(&mut self, id: &SourceId) -> Option<Pin> {
        let index = self.entries.iter().position(|p| &p.id == id)?;
        Some(self.entries.remove(index))
    }

    /// Parses the lock text.
    ///
    /// # Errors
    /// Every problem found; a lock with any problem is not used.
    pub fn parse(file: &Path, text: &str) -> Result<Self, Vec<FileProblem>> {
        let items: Vec<(u64, RawPin)> = list_items(file, text)?;
        let mut checker = Checker {
            file,
            offset: 1,
            problems: Vec::new(),
        };
        let mut entries: Vec<Pin> = Vec::new();
        for (line, raw) in items {
            checker.offset = line;
            let seen: Vec<SourceId> = entries.iter().map(|p| p.id.clone()).collect();
            let id = checker.id(&raw.id, &seen);
            let source = raw.id.value.clone();
            let method = checker.method(&raw.method, &source);
            let url = checker.text(&raw.url, &source, "url", format_codes::URL_INVALID);
            let reference = checker.text(&raw.reference, &source, "ref", format_codes::REF_INVALID);
            let before = checker.problems.len();
            let anchor = match method {
                Some(method) => {
                    let mut local = Checker {
                        file,
                        offset: line,
                        problems: Vec::new(),
                    };
                    let anchor = lock_anchor(&mut local, &raw, method);
                    checker.problems.append(&mut local.problems);
                    anchor.ok()
                }
                None => None,
            };
            if let (Some(id), Some(method), Some(url), Some(reference), Some(anchor)) =
                (id, method, url, reference, anchor)
                && checker.problems.len() == before
            {
                entries.push(Pin {
                    id,
                    method,
                    url,
                    reference,
                    anchor,
                });
            }
        }
        if checker.problems.is_empty() {
            Ok(Self::new(entries))
        } else {
            Err(checker.problems)
        }
    }

    /// The lock text: a header comment, then one aligned block per pin, sorted by id.
    pub fn render(&self) -> String {
        let mut out = String::from(PIN_LOCK_HEADER);
        for pin in &self.entries {
            let mut pairs = vec![
                ("id", pin.id.to_string()),
                ("method", pin.method.to_string()),
                ("url", pin.url.clone()),
                ("ref", pin.reference.clone()),
            ];
            if let Some(anchor) = &pin.anchor {
                pairs.push((anchor.key(), anchor.value().to_owned()));
            }
            render_block(&mut out, &pairs, 7);
        }
        out
    }

    /// Reads the lock file; an absent file is an empty lock.
    ///
    /// # Errors
    /// The file cannot be read or parsed.
    pub fn load(path: &Path) -> Result<Self, Vec<FileProblem>> {
        match read_optional(path)? {
            None => Ok(Self::default()),
            Some(text) => Self::parse(path, &text),
        }
    }

    /// Writes the lock atomically.
    ///
    /// # Errors
    /// The file cannot be written.
    pub fn save(&self, path: &Path) -> io::Result<()> {
        save_atomic(path, &self.render())
    }
}

/// What one source's snapshot holds, as recorded after its fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalEntry {
    /// The source.
    pub id: SourceId,
    /// The method it was fetched with.
    pub method: Method,
    /// The url it was fetched from.
    pub url: String,
    /// The ref it was fetched at.
    pub reference: String,
    /// The commit the clone is at (git) or the archive's SHA-512 (archive).
    pub fetched: String,
    /// The snapshot's tree digest (`h1:` + digest) right after the fetch.
    pub tree_digest: String,
    /// When it was fetched, RFC 3339.
    pub fetched_at: String,
}

impl LocalEntry {
    /// The entry for a fetch of `pin` that ended in `fetched`, at `fetched_at` (RFC 3339).
    pub fn from_fetch(pin: &Pin, fetched: &Fetched, fetched_at: &str) -> Self {
        Self {
            id: pin.id.clone(),
            method: pin.method,
            url: pin.url.clone(),
            reference: pin.reference.clone(),
            fetched: fetched.resolved.clone(),
            tree_digest: fetched.tree_digest.clone(),
            fetched_at: fetched_at.to_owned(),
        }
    }
}

/// The gitignored local lock.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LocalLock {
    entries: Vec<LocalEntry>,
}

impl LocalLock {
    /// A lock holding `entries` (sorted by id).
    pub fn new(mut entries: Vec<LocalEntry>) -> Self {
        entries.sort_by(|a, b| a.id.cmp(&b.id));
        Self { entries }
    }

    /// The entries, sorted by id.
    pub fn entries(&self) -> &[LocalEntry] {
        &self.entries
    }

    /// The entry of `id`.
    pub fn get(&self, id: &SourceId) -> Option<&LocalEntry> {
        self.entries.iter().find(|e| &e.id == id)
    }

    /// Records (or refreshes) the entry of a source, returning the previous one.
    pub fn record(&mut self, entry: LocalEntry) -> Option<LocalEntry> {
        let previous = self.remove(&entry.id);
        self.entries.push(entry);
        self.entries.sort_by(|a, b| a.id.cmp(&b.id));
        previous
    }

    /// Drops the entry of `id`, returning it.
    pub fn remove(&mut self, id: &SourceId) -> Option<LocalEntry> {
        let index = self.entries.iter().position(|e| &e.id == id)?;
        Some(self.entries.remove(index))
    }

    /// Parses the lock text.
    ///
    /// # Errors
    /// Every problem found.
    pub fn parse(file: &Path, text: &str) -> Result<Self, Vec<FileProblem>> {
        let items: Vec<(u64, RawLocal)> = list_items(file, text)?;
        let mut checker = Checker {
            file,
            offset: 1,
            problems: Vec::new(),
        };
        let mut entries: Vec<LocalEntry> = Vec::new();
        for (line, raw) in items {
            checker.offset = line;
            let seen: Vec<SourceId> = entries.iter().map(|e| e.id.clone()).collect();
            let source = raw.id.value.clone();
            let before = checker.problems.len();
            let id = checker.id(&raw.id, &seen);
            let method = checker.method(&raw.method, &source);
            let url = checker.text(&raw.url, &source, "url", format_codes::URL_INVALID);
            let reference = checker.text(&raw.reference, &source, "ref", format_codes::REF_INVALID);
            let fetched =
                checker.text(&raw.fetched, &source, "fetched", codes::LOCAL_VALUE_INVALID);
            let tree_digest = checker.text(
                &raw.tree_digest,
                &source,
                "tree_digest",
                codes::LOCAL_VALUE_INVALID,
            );
            if tree_digest.as_ref().is_some_and(|d| !d.starts_with("h1:")) {
                checker.push(
                    &raw.tree_digest,
                    &source,
                    codes::LOCAL_VALUE_INVALID,
                    "tree_digest",
                    format!(
                        "tree_digest `{}` does not start with `h1:`",
                        raw.tree_digest.value
                    ),
                );
            }
            let fetched_at = checker.text(
                &raw.fetched_at,
                &source,
                "fetched_at",
                codes::LOCAL_VALUE_INVALID,
            );
            if let (
                Some(id),
                Some(method),
                Some(url),
                Some(reference),
                Some(fetched),
                Some(tree_digest),
                Some(fetched_at),
            ) = (id, method, url, reference, fetched, tree_digest, fetched_at)
                && checker.problems.len() == before
            {
                entries.push(LocalEntry {
                    id,
                    method,
                    url,
                    reference,
                    fetched,
                    tree_digest,
                    fetched_at,
                });
            }
        }
        if checker.problems.is_empty() {
            Ok(Self::new(entries))
        } else {
            Err(checker.problems)
        }
    }

    /// The lock text: a header comment, then one aligned block per source, sorted by id.
    pub fn render(&self) -> String {
        let mut out = String::from(LOCAL_LOCK_HEADER);
        for entry in &self.entries {
            let pairs = [
                ("id", entry.id.to_string()),
                ("method", entry.method.to_string()),
                ("url", entry.url.clone()),
                ("ref", entry.reference.clone()),
                ("fetched", entry.fetched.clone()),
                ("tree_digest", entry.tree_digest.clone()),
                ("fetched_at", entry.fetched_at.clone()),
            ];
            render_block(&mut out, &pairs, 12);
        }
        out
    }

    /// Reads the lock file; `None` when it does not exist.
    ///
    /// # Errors
    /// The file cannot be read or parsed.
    pub fn load(path: &Path) -> Result<Option<Self>, Vec<FileProblem>> {
        read_optional(path)?
            .map(|text| Self::parse(path, &text))
            .transpose()
    }

    /// Writes the lock atomically, creating its directory if needed.
    ///
    /// # Errors
    /// The file cannot be written.
    pub fn save(&self, path: &Path) -> io::Result<()> {
        save_atomic(path, &self.render())
    }
}

/// Appends one `- key: value` block, values in a column `width` characters after the key.
fn render_block(out: &mut String, pairs: &[(&str, String)], width: usize) {
    out.push('\n');
    for (index, (key, value)) in pairs.iter().enumerate() {
        let lead = if index == 0 { "- " } else { "  " };
        let label = format!("{key}:");
        out.push_str(&format!(
            "{lead}{label:<width$} {}\n",
            yaml_scalar(value),
            width = width
        ));
    }
}

/// `value` as a YAML scalar: plain when it reads back as the same text under the strict
/// reader, double-quoted otherwise (a leading digit, sign or dot, a YAML keyword, or any
/// character outside a conservative set).
fn yaml_scalar(value: &str) -> String {
    let safe_char = |c: char| c.is_ascii_alphanumeric() || "._/:@+~=%-".contains(c);
    let keyword = matches!(
        value.to_ascii_lowercase().as_str(),
        "true" | "false" | "null" | "yes" | "no" | "on" | "off" | "y" | "n"
    );
    let plain = value
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && value.chars().all(safe_char)
        && !keyword;
    if plain {
        return value.to_owned();
    }
    let mut quoted = String::from("\"");
    for c in value.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            '\n' => quoted.push_str("\\n"),
            '\t' => quoted.push_str("\\t"),
            c if c.is_control() => quoted.push_str(&format!("\\u{:04x}", c as u32)),
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

/// Writes `contents` to `path` through a temporary file in the same directory and a
/// rename, so a crash leaves the old or the new file, never half of one. Creates the
/// directory when missing.
///
/// # Errors
/// The directory, the temporary file or the rename fails.
pub fn save_atomic(path: &Path, contents: &str) -> io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&dir)?;
    let name = path
        .file_name()
        .map_or_else(|| "lock".into(), |n| n.to_string_lossy().into_owned());
    let temp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let written = (|| {
        let mut file = fs::File::create(&temp)?;
        file.write_all(contents.as_bytes())?;
        file.sync_all()?;
        fs::rename(&temp, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written
}

#[cfg(test)]
mod tests;
