//! Unpacking an archive source (`.tar.gz`/`.tgz` or `.zip`) into a fresh directory without
//! ever writing outside it: entry names are checked before anything is created, no write
//! passes through a symlink, and links, devices and FIFOs that could reach out are refused.

use std::fs;
use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha512};

use super::contain::{self, ContainError};

/// Most bytes an archive may unpack to (a decompression bomb stops here).
pub const MAX_UNPACKED_BYTES: u64 = 1 << 30;
/// Most entries an archive may hold.
pub const MAX_ENTRIES: usize = 100_000;

/// The archive formats a source may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchiveKind {
    /// A gzip-compressed tar (`.tar.gz` or `.tgz`).
    TarGz,
    /// A zip (stored or deflate entries).
    Zip,
}

impl ArchiveKind {
    /// The kind named by the suffix of a URL or path (query and fragment ignored, case
    /// ignored), or `None` when it ends in none of `.tar.gz`, `.tgz`, `.zip`.
    pub fn from_name(name: &str) -> Option<Self> {
        let path = name.split(['?', '#']).next().unwrap_or(name);
        let lower = path.to_ascii_lowercase();
        if lower.ends_with(".tar.gz") || lower.ends_with(".tgz") {
            Some(Self::TarGz)
        } else if lower.ends_with(".zip") {
            Some(Self::Zip)
        } else {
            None
        }
    }
}

/// Why an archive was not unpacked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UnpackError {
    /// An entry name is absolute, climbs with `..`, or passes through a symlink.
    #[error("entry `{entry}` {why}")]
    ZipSlip {
        /// The entry name as stored.
        entry: String,
        /// What is wrong with it.
        why: String,
    },
    /// A symbolic or hard link entry whose target leaves the directory.
    #[error("link entry `{entry}` -> `{target}` {why}")]
    LinkEscapes {
        /// The entry name.
        entry: String,
        /// The link target as stored.
        target: String,
        /// What is wrong with it.
        why: String,
    },
    /// A device, FIFO or other special entry.
    #[error("entry `{entry}` is a {kind}")]
    SpecialFile {
        /// The entry name.
        entry: String,
        /// What it is.
        kind: String,
    },
    /// Too many entries or bytes.
    #[error("archive is larger than allowed: {what}")]
    TooLarge {
        /// Which limit and its value.
        what: String,
    },
    /// The bytes are not a readable archive of that kind.
    #[error("archive is unreadable: {message}")]
    Corrupt {
        /// The decoder's message.
        message: String,
    },
    /// The target directory could not be written.
    #[error("cannot write `{path}`: {message}")]
    Io {
        /// The entry being written.
        path: String,
        /// The operating system's message.
        message: String,
    },
}

impl UnpackError {
    /// The stable refusal code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::ZipSlip { .. } => "source_archive_zip_slip",
            Self::LinkEscapes { .. } => "source_symlink_escapes",
            Self::SpecialFile { .. } => "source_special_file",
            Self::TooLarge { .. } => "source_archive_too_large",
            Self::Corrupt { .. } => "source_archive_corrupt",
            Self::Io { .. } => "source_fetch_failed",
        }
    }
}

/// The lowercase hex SHA-512 of `bytes` (what `sha512sum` prints).
pub fn sha512_hex(bytes: &[u8]) -> String {
    hex::encode(Sha512::digest(bytes))
}

/// Unpacks `bytes` of `kind` into `into`, an existing empty directory. Files get mode
/// 0644, or 0755 when the entry had any execute bit; owners, times and extended
/// attributes are not restored. On error, what was written so far stays in `into` (the
/// caller owns and removes it).
///
/// # Errors
/// See [`UnpackError`]; the first offending entry is reported.
pub fn unpack(bytes: &[u8], kind: ArchiveKind, into: &Path) -> Result<(), UnpackError> {
    let mut sink = Sink {
        into,
        entries: 0,
        written: 0,
    };
    match kind {
        ArchiveKind::TarGz => unpack_tar(bytes, &mut sink),
        ArchiveKind::Zip => unpack_zip(bytes, &mut sink),
    }
}

fn corrupt(error: impl std::fmt::Display) -> UnpackError {
    UnpackError::Corrupt {
        message: error.to_string(),
    }
}

fn unpack_tar(bytes: &[u8], sink: &mut Sink<'_>) -> Result<(), UnpackError> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes));
    for entry in archive.entries().map_err(corrupt)? {
        let mut entry = entry.map_err(corrupt)?;
        let name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let mode = entry.header().mode().unwrap_or(0o644);
        let link = entry
            .link_name_bytes()
            .map(|b| String::from_utf8_lossy(&b).into_owned());
        match entry.header().entry_type() {
            tar::EntryType::Regular | tar::EntryType::Continuous => {
                sink.file(&name, mode, &mut entry)?;
            }
            tar::EntryType::Directory => sink.dir(&name)?,
            tar::EntryType::Symlink => sink.symlink(&name, link.as_deref().unwrap_or(""))?,
            tar::EntryType::Link => sink.hard_link(&name, link.as_deref().unwrap_or(""))?,
            // Metadata records (`git archive` writes a global one holding the commit id);
            // the tar reader has already applied what matters (long names) to the entries.
            tar::EntryType::XGlobalHeader | tar::EntryType::XHeader => {}
            tar::EntryType::Fifo => return Err(special(&name, "FIFO")),
            tar::EntryType::Char => return Err(special(&name, "character device")),
            tar::EntryType::Block => return Err(special(&name, "block device")),
            other => return Err(special(&name, &format!("tar entry of type {other:?}"))),
        }
    }
    Ok(())
}

fn unpack_zip(bytes: &[u8], sink: &mut Sink<'_>) -> Result<(), UnpackError> {
    let mut archive = zip::ZipArchive::new(io::Cursor::new(bytes)).map_err(corrupt)?;
    if archive.len() > MAX_ENTRIES {
        return Err(too_many());
    }
    for index in 0..archive.len() {
        let mut file = archive.by_index(index).map_err(corrupt)?;
        let name = file.name().map_err(corrupt)?.into_owned();
        let mode = file.unix_mode().unwrap_or(0o100_644);
        let kind = match mode & 0o170_000 {
            0o010_000 => Some("FIFO"),
            0o020_000 => Some("character device"),
            0o060_000 => Some("block device"),
            0o140_000 => Some("socket"),
            _ => None,
        };
        if let Some(kind) = kind {
            return Err(special(&name, kind));
        }
        if file.is_symlink() {
            let mut target = String::new();
            file.by_ref()
                .take(4096)
                .read_to_string(&mut target)
                .map_err(corrupt)?;
            sink.symlink(&name, &target)?;
        } else if file.is_dir() {
            sink.dir(&name)?;
        } else {
            sink.file(&name, mode, &mut file)?;
        }
    }
    Ok(())
}

fn special(entry: &str, kind: &str) -> UnpackError {
    UnpackError::SpecialFile {
        entry: entry.to_owned(),
        kind: kind.to_owned(),
    }
}

fn too_many() -> UnpackError {
    UnpackError::TooLarge {
        what: format!("more than {MAX_ENTRIES} entries"),
    }
}

/// Writes entries below `into`, counting entries and bytes.
struct Sink<'a> {
    into: &'a Path,
    entries: usize,
    written: u64,
}

impl Sink<'_> {
    /// Checks `name` and returns its relative path, after making sure every parent below
    /// `into` is a real directory (creating missing ones), never a symlink.
    fn place(&mut self, name: &str) -> Result<Option<PathBuf>, UnpackError> {
        self.entries += 1;
        if self.entries > MAX_ENTRIES {
            return Err(too_many());
        }
        let relative = match contain::safe_relative(name) {
            Ok(relative) => relative,
            Err(ContainError::PathEscapes {
                why: "names no entry",
                ..
            }) => return Ok(None),
            Err(error) => {
                return Err(UnpackError::ZipSlip {
                    entry: name.to_owned(),
                    why: match error {
                        ContainError::PathEscapes { why, .. } => why.to_owned(),
                        other => other.to_string(),
                    },
                });
            }
        };
        let mut at = self.into.to_path_buf();
        let parents: Vec<_> = relative
            .parent()
            .into_iter()
            .flat_map(Path::components)
            .collect();
        for part in parents {
            at.push(part);
            match fs::symlink_metadata(&at) {
                Ok(meta) if meta.file_type().is_dir() => {}
                Ok(meta) if meta.file_type().is_symlink() => {
                    return Err(UnpackError::ZipSlip {
                        entry: name.to_owned(),
                        why: "passes through a symlink".to_owned(),
                    });
                }
                Ok(_) => {
                    return Err(corrupt(format!("entry `{name}` is below a file")));
                }
                Err(_) => fs::create_dir(&at).map_err(|e| self.io(name, &e))?,
            }
        }
        // A later entry replaces an earlier one of the same name, as `tar -x` does; the
        // old entry is removed first so the write never follows a symlink.
        let path = self.into.join(&relative);
        if let Ok(meta) = fs::symlink_metadata(&path)
            && !meta.file_type().is_dir()
        {
            fs::remove_file(&path).map_err(|e| self.io(name, &e))?;
        }
        Ok(Some(relative))
    }

    fn io(&self, entry: &str, error: &io::Error) -> UnpackError {
        UnpackError::Io {
            path: entry.to_owned(),
            message: error.to_string(),
        }
    }

    fn dir(&mut self, name: &str) -> Result<(), UnpackError> {
        let Some(relative) = self.place(name)? else {
            return Ok(());
        };
        let path = self.into.join(relative);
        if !path.is_dir() {
            fs::create_dir(&path).map_err(|e| self.io(name, &e))?;
        }
        Ok(())
    }

    fn file(&mut self, name: &str, mode: u32, data: &mut dyn Read) -> Result<(), UnpackError> {
        let Some(relative) = self.place(name)? else {
            return Err(corrupt(format!("file entry `{name}` has no name")));
        };
        let permissions = if mode & 0o111 != 0 { 0o755 } else { 0o644 };
        let mut out = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(permissions)
            .open(self.into.join(&relative))
            .map_err(|e| self.io(name, &e))?;
        let budget = MAX_UNPACKED_BYTES - self.written;
        let copied = io::copy(&mut data.take(budget + 1), &mut out).map_err(corrupt)?;
        if copied > budget {
            return Err(UnpackError::TooLarge {
                what: format!("more than {MAX_UNPACKED_BYTES} unpacked bytes"),
            });
        }
        self.written += copied;
        out.flush().map_err(|e| self.io(name, &e))
    }

    fn symlink(&mut self, name: &str, target: &str) -> Result<(), UnpackError> {
        let escapes = |why: &str| UnpackError::LinkEscapes {
            entry: name.to_owned(),
            target: target.to_owned(),
            why: why.to_owned(),
        };
        let Some(relative) = self.place(name)? else {
            return Err(corrupt(format!("symlink entry `{name}` has no name")));
        };
        if target.is_empty() {
            return Err(escapes("has an empty target"));
        }
        // Lexical check from the link's own directory; hops through other links are
        // checked over the whole tree by `contain::check_tree` once everything is written.
        let mut depth: usize = relative.components().count() - 1;
        for component in Path::new(target).components() {
            match component {
                Component::RootDir | Component::Prefix(_) => return Err(escapes("is absolute")),
                Component::ParentDir => {
                    depth = depth
                        .checked_sub(1)
                        .ok_or_else(|| escapes("resolves outside the snapshot"))?;
                }
                Component::CurDir => {}
                Component::Normal(_) => depth += 1,
            }
        }
        std::os::unix::fs::symlink(target, self.into.join(relative)).map_err(|e| self.io(name, &e))
    }

    fn hard_link(&mut self, name: &str, target: &str) -> Result<(), UnpackError> {
        let escapes = |why: String| UnpackError::LinkEscapes {
            entry: name.to_owned(),
            target: target.to_owned(),
            why,
        };
        let source = contain::safe_relative(target).map_err(|e| match e {
            ContainError::PathEscapes { why, .. } => escapes(why.to_owned()),
            other => escapes(other.to_string()),
        })?;
        // Every step must be a real directory and the end a regular file: a path through
        // a symlink could reach a file outside.
        let mut at = self.into.to_path_buf();
        let parts: Vec<_> = source.components().collect();
        for (index, part) in parts.iter().enumerate() {
            at.push(part);
            let last = index + 1 == parts.len();
            match fs::symlink_metadata(&at) {
                Ok(meta) if last && meta.file_type().is_file() => {}
                Ok(meta) if !last && meta.file_type().is_dir() => {}
                _ => {
                    return Err(escapes(
                        "names no regular file unpacked before it".to_owned(),
                    ));
                }
            }
        }
        let source = at;
        let Some(relative) = self.place(name)? else {
            return Err(corrupt(format!("hard link entry `{name}` has no name")));
        };
        // A copy, not a link: the snapshot holds independent plain files.
        let mut data = fs::File::open(&source).map_err(|e| self.io(name, &e))?;
        let mode = data
            .metadata()
            .map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()))
            .unwrap_or(0o644);
        self.entries -= 1;
        self.file(&relative.to_string_lossy(), mode, &mut data)
    }
}

#[cfg(test)]
mod tests;
