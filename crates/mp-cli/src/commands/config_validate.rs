//! `mp config validate`: load a configuration directory and list every problem.

use std::io::Write;

use crate::Exit;
use crate::cli::ConfigValidateArgs;

pub fn run(_args: &ConfigValidateArgs, _out: &mut dyn Write) -> anyhow::Result<Exit> {
    anyhow::bail!("not wired yet")
}
