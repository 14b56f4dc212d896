//! Containment of a fetched snapshot: no symlink may lead outside it, no device, FIFO or
//! socket may live in it, and no relative path taken from fetched data may climb out of it.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::unix::fs::FileTypeExt;
use std::path::{Component, Path, PathBuf};

/// How many symlinks one resolution may pass through before it counts as a loop (Linux's
/// own limit is 40).
const MAX_HOPS: u32 = 40;

/// Why a tree or a path is not contained.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ContainError {
    /// A symlink is absolute, climbs above the root, or loops.
    #[error("symlink `{path}` -> `{target}` {why}")]
    SymlinkEscapes {
        /// The symlink, relative to the root.
        path: String,
        /// Its target as stored.
        target: String,
        /// `is absolute`, `resolves outside the snapshot` or `loops`.
        why: &'static str,
    },
    /// A device, FIFO or socket.
    #[error("`{path}` is a {kind}, not a file, directory or symlink")]
    SpecialFile {
        /// The entry, relative to the root.
        path: String,
        /// `FIFO`, `character device`, `block device` or `socket`.
        kind: &'static str,
    },
    /// A relative path that is absolute, climbs with `..`, or is empty.
    #[error("path `{path}` {why}")]
    PathEscapes {
        /// The path as given.
        path: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// The tree could not be read.
    #[error("cannot read `{path}`: {message}")]
    Io {
        /// The entry, relative to the root.
        path: String,
        /// The operating system's message.
        message: String,
    },
}

impl ContainError {
    /// The stable refusal code: `source_symlink_escapes`, `source_special_file`,
    /// `source_path_escapes` or `source_fetch_failed` (unreadable tree).
    pub fn code(&self) -> &'static str {
        match self {
            Self::SymlinkEscapes { .. } => "source_symlink_escapes",
            Self::SpecialFile { .. } => "source_special_file",
            Self::PathEscapes { .. } => "source_path_escapes",
            Self::Io { .. } => "source_fetch_failed",
        }
    }
}

/// Checks that `path` (written with `/`) names something strictly below a root: no leading
/// `/`, no Windows prefix, no `..`, no backslash and not empty once `.` parts are dropped.
/// Returns the normalised relative path.
///
/// # Errors
/// [`ContainError::PathEscapes`] naming the path.
pub fn safe_relative(path: &str) -> Result<PathBuf, ContainError> {
    let refuse = |why| ContainError::PathEscapes {
        path: path.to_owned(),
        why,
    };
    if path.contains('\\') {
        return Err(refuse("contains a backslash"));
    }
    if path.contains('\0') {
        return Err(refuse("contains a NUL byte"));
    }
    let mut out = PathBuf::new();
    for component in Path::new(path).components() {
        match component {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            Component::ParentDir => return Err(refuse("climbs with `..`")),
            Component::RootDir | Component::Prefix(_) => return Err(refuse("is absolute")),
        }
    }
    if out.as_os_str().is_empty() {
        return Err(refuse("names no entry"));
    }
    Ok(out)
}

/// Walks `root` without following symlinks and refuses the first symlink that leads
/// outside it (absolute targets included, every hop resolved from the link's own
/// directory), and the first device, FIFO or socket. Dangling symlinks that stay inside
/// are allowed. Entries are visited in name order, so the reported entry is stable.
///
/// # Errors
/// [`ContainError::SymlinkEscapes`], [`ContainError::SpecialFile`], or
/// [`ContainError::Io`] when the tree cannot be read.
pub fn check_tree(root: &Path) -> Result<(), ContainError> {
    walk(root, &mut Vec::new())
}

fn display(parts: &[OsString]) -> String {
    parts
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

fn io_error(parts: &[OsString], error: &io::Error) -> ContainError {
    ContainError::Io {
        path: if parts.is_empty() {
            ".".to_owned()
        } else {
            display(parts)
        },
        message: error.to_string(),
    }
}

fn walk(root: &Path, here: &mut Vec<OsString>) -> Result<(), ContainError> {
    let dir: PathBuf = here.iter().fold(root.to_path_buf(), |p, c| p.join(c));
    let mut names = fs::read_dir(&dir)
        .and_then(|entries| {
            entries
                .map(|e| e.map(|e| e.file_name()))
                .collect::<io::Result<Vec<_>>>()
        })
        .map_err(|e| io_error(here, &e))?;
    names.sort();
    for name in names {
        here.push(name);
        let path = dir.join(here.last().expect("just pushed"));
        let kind = fs::symlink_metadata(&path)
            .map_err(|e| io_error(here, &e))?
            .file_type();
        if kind.is_dir() {
            walk(root, here)?;
        } else if kind.is_symlink() {
            let target = fs::read_link(&path).map_err(|e| io_error(here, &e))?;
            let parent = here[..here.len() - 1].to_vec();
            let mut hops = 0;
            resolve(root, parent, &target, &mut hops).map_err(|why| {
                ContainError::SymlinkEscapes {
                    path: display(here),
                    target: target.to_string_lossy().into_owned(),
                    why,
                }
            })?;
        } else if !kind.is_file() {
            return Err(ContainError::SpecialFile {
                path: display(here),
                kind: special_kind(kind),
            });
        }
        here.pop();
    }
    Ok(())
}

/// Names a file type that is neither a file, a directory nor a symlink.
pub(crate) fn special_kind(kind: fs::FileType) -> &'static str {
    if kind.is_fifo() {
        "FIFO"
    } else if kind.is_char_device() {
        "character device"
    } else if kind.is_block_device() {
        "block device"
    } else if kind.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

/// Resolves `target` from the directory `from` (components below `root`, none of them a
/// symlink), following every symlink met on the way, and returns the components of the
/// result, or why it leaves `root`.
fn resolve(
    root: &Path,
    from: Vec<OsString>,
    target: &Path,
    hops: &mut u32,
) -> Result<Vec<OsString>, &'static str> {
    let mut at = from;
    for component in target.components() {
        match component {
            Component::RootDir | Component::Prefix(_) => return Err("is absolute"),
            Component::CurDir => {}
            Component::ParentDir => {
                if at.pop().is_none() {
                    return Err("resolves outside the snapshot");
                }
            }
            Component::Normal(part) => {
                at.push(part.to_owned());
                let path = at.iter().fold(root.to_path_buf(), |p, c| p.join(c));
                let is_link = fs::symlink_metadata(&path)
                    .map(|m| m.file_type().is_symlink())
                    .unwrap_or(false);
                if is_link {
                    *hops += 1;
                    if *hops > MAX_HOPS {
                        return Err("loops");
                    }
                    let next = fs::read_link(&path).map_err(|_| "cannot be read")?;
                    at.pop();
                    at = resolve(root, at, &next, hops)?;
                }
            }
        }
    }
    Ok(at)
}

#[cfg(test)]
mod tests;
