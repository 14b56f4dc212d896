//! Records the git commit the binary is built from, for `mp --version`.
//!
//! `MP_BUILD_COMMIT` (for packagers building outside a checkout) wins; otherwise
//! `git rev-parse` of the source tree; otherwise "unknown". The build never fails
//! for want of git.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    (output.status.success() && !text.trim().is_empty()).then(|| text.trim().to_owned())
}

fn main() {
    println!("cargo:rerun-if-env-changed=MP_BUILD_COMMIT");
    let commit = std::env::var("MP_BUILD_COMMIT")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .or_else(|| git(&["rev-parse", "--short=12", "HEAD"]));
    // Build again when HEAD moves: HEAD itself, the branch it names, and packed refs. Cargo
    // takes a missing file as changed on every build, so a missing one is not watched; for
    // a branch that is only packed, its directory is, where the first commit writes it.
    for path in ["HEAD", "packed-refs"]
        .into_iter()
        .map(str::to_owned)
        .chain(git(&["symbolic-ref", "-q", "HEAD"]))
    {
        let Some(file) = git(&["rev-parse", "--path-format=absolute", "--git-path", &path]) else {
            continue;
        };
        let file = std::path::Path::new(&file);
        let watched = if file.exists() || !path.starts_with("refs/") {
            Some(file)
        } else {
            file.parent()
        };
        if let Some(watched) = watched.filter(|w| w.exists()) {
            println!("cargo:rerun-if-changed={}", watched.display());
        }
    }
    let commit = commit.unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=MP_GIT_COMMIT={commit}");
}
