//! The tree digest of a snapshot: Go `dirhash` "h1" style, so an archive snapshot edited on
//! disk after it was unpacked is noticed even though no commit describes it.
//!
//! One line per entry, sorted by path: `"<sha256 hex of the contents>  <path>\n"` for a
//! regular file, `"<sha256 hex of the target>  <path>\0symlink\n"` for a symlink (the NUL
//! can be in no path, so a symlink never collides with a file holding its target). The
//! digest is `h1:` + standard base64 of the SHA-256 of all lines. Directories add nothing
//! (an empty directory does not change the digest); modes and times are ignored. For a
//! tree of plain files the value equals Go's `dirhash.Hash1` over the same relative names.

use std::fs;
use std::io::{self, Read};
use std::path::Path;

use base64::Engine as _;
use sha2::{Digest, Sha256};

/// Computes the digest of the tree under `dir`, without following symlinks.
///
/// # Errors
/// Any read error; `InvalidData` for a path that is not UTF-8 or holds a newline, and for
/// a device, FIFO or socket.
pub fn tree_digest(dir: &Path) -> io::Result<String> {
    let mut lines = Vec::new();
    collect(dir, "", &mut lines)?;
    lines.sort();
    let mut all = Sha256::new();
    for (_, line) in &lines {
        all.update(line.as_bytes());
    }
    Ok(format!(
        "h1:{}",
        base64::engine::general_purpose::STANDARD.encode(all.finalize())
    ))
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

/// Appends `(path, line)` for every entry below `dir`; `prefix` is `dir` relative to the
/// root, with a trailing `/` unless empty.
fn collect(dir: &Path, prefix: &str, lines: &mut Vec<(String, String)>) -> io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name
            .to_str()
            .ok_or_else(|| invalid(format!("path `{prefix}{}` is not UTF-8", name.display())))?;
        let path = format!("{prefix}{name}");
        if path.contains('\n') {
            return Err(invalid(format!("path {path:?} holds a newline")));
        }
        let kind = entry.file_type()?;
        if kind.is_dir() {
            collect(&entry.path(), &format!("{path}/"), lines)?;
        } else if kind.is_symlink() {
            let target = fs::read_link(entry.path())?;
            let hash = hex::encode(Sha256::digest(target.as_os_str().as_encoded_bytes()));
            lines.push((path.clone(), format!("{hash}  {path}\0symlink\n")));
        } else if kind.is_file() {
            let hash = file_sha256(&entry.path())?;
            lines.push((path.clone(), format!("{hash}  {path}\n")));
        } else {
            return Err(invalid(format!(
                "`{path}` is a {}",
                super::contain::special_kind(kind)
            )));
        }
    }
    Ok(())
}

fn file_sha256(path: &Path) -> io::Result<String> {
    let mut file = fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    Ok(hex::encode(hasher.finalize()))
}

#[cfg(test)]
mod tests;
