//! Test prerequisites fetched from a registry at pinned versions (`cargo xtask openapi`,
//! `cargo xtask pyclient`, `cargo xtask webhooks`): one command shape, and one way for
//! `cargo xtask test` to get them or, with `--no-install`, only check them.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

/// One prerequisite: its command, what it provides, where it lands, and how to find or
/// install it.
pub(crate) struct Prerequisite {
    /// The xtask command, e.g. `openapi`.
    pub(crate) command: &'static str,
    /// What it provides, pinned, e.g. `@octokit/openapi@23.0.2`.
    pub(crate) name: &'static str,
    /// Where it lands, relative to the workspace root.
    pub(crate) path: &'static str,
    /// The command's help text.
    pub(crate) help: &'static str,
    /// Its path when it is there at the pinned version.
    pub(crate) present: fn(&Path) -> Option<PathBuf>,
    /// Installs it (a no-op when present) and returns its path.
    pub(crate) install: fn(&Path) -> anyhow::Result<PathBuf>,
}

impl Prerequisite {
    /// `cargo xtask <command> [--check]`.
    pub(crate) fn run(&self, root: &Path, args: &[&str]) -> anyhow::Result<()> {
        let path = match args {
            [] => (self.install)(root)?,
            ["--check"] => self.present_or_fail(root)?,
            _ => {
                self.say(self.help);
                bail!("unknown arguments: {}", args.join(" "))
            }
        };
        self.say(&format!("{}: {}", self.name, path.display()));
        Ok(())
    }

    /// Its path: installed when missing, or, with `no_install`, only checked.
    pub(crate) fn prepare(&self, root: &Path, no_install: bool) -> anyhow::Result<PathBuf> {
        if no_install {
            self.present_or_fail(root)
        } else {
            (self.install)(root)
        }
    }

    fn present_or_fail(&self, root: &Path) -> anyhow::Result<PathBuf> {
        (self.present)(root).with_context(|| {
            format!(
                "missing test prerequisite: {} in {} (run `cargo xtask {}`)",
                self.name, self.path, self.command
            )
        })
    }

    /// One line on stderr, prefixed with the command.
    pub(crate) fn say(&self, line: &str) {
        #[allow(clippy::print_stderr)]
        {
            eprintln!("xtask {}: {line}", self.command);
        }
    }
}
