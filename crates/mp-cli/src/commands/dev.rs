//! `mp dev serve-world FILE`: a world served over GitHub's REST paths on 127.0.0.1.

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};

use anyhow::Context;
use mp_github::{FaultScript, LoopbackServer};

use crate::Exit;
use crate::cli::ServeWorldArgs;

/// The fault script in `path`, or none.
///
/// # Errors
/// The file cannot be read or is not a fault script (exit 2).
pub fn read_faults(path: Option<&std::path::Path>) -> anyhow::Result<FaultScript> {
    match path {
        Some(path) => {
            let text = super::read_input(path)?;
            text.parse::<FaultScript>()
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
        }
        None => Ok(FaultScript::default()),
    }
}

/// Starts the loopback server and serves until interrupted (Ctrl-C).
pub fn serve_world(args: &ServeWorldArgs, out: &mut dyn Write) -> anyhow::Result<Exit> {
    let world = mp_github::load_world(&args.world)?;
    let faults = read_faults(args.faults.as_deref())?;
    if let Some(dir) = &args.config_out {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        for (name, text) in &world.config {
            if name.contains(['/', '\\']) || name.starts_with('.') {
                anyhow::bail!(
                    "the world names a configuration file {name:?}, not a plain file name"
                );
            }
            let path = dir.join(name);
            std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        }
    }
    let config_dir = args
        .config_out
        .as_ref()
        .map_or_else(|| "DIR".to_owned(), |d| d.display().to_string());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, args.port));
        let clock = match args.clock {
            crate::cli::ClockKind::World => mp_github::ServerClock::World,
            crate::cli::ClockKind::Real => mp_github::ServerClock::Real,
        };
        let server = LoopbackServer::bind_with_clock(world, faults, addr, clock)
            .await
            .with_context(|| format!("binding {addr}"))?;
        writeln!(
            out,
            "serving {} at {}",
            args.world.display(),
            server.base_url()
        )?;
        writeln!(
            out,
            "clock: {}",
            match clock {
                mp_github::ServerClock::Real =>
                    "the system clock (--clock world keeps the world's now)",
                _ => "the world's now, fixed (--clock real follows the system clock)",
            }
        )?;
        writeln!(
            out,
            "try: MP_GITHUB_TOKEN=any mp tick --config {config_dir} --api-url {}",
            server.base_url()
        )?;
        writeln!(out, "stop with Ctrl-C")?;
        out.flush()?;
        tokio::signal::ctrl_c()
            .await
            .context("waiting for Ctrl-C")?;
        writeln!(
            out,
            "served {} requests; {} writes applied",
            server.total_requests(),
            server.memory().actions().len()
        )?;
        server.shutdown().await;
        anyhow::Ok(())
    })?;
    Ok(Exit::Ok)
}
