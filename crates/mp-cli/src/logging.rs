//! Logs and progress of `mp` on stderr: `tracing` events written as text or JSON lines
//! (`--log-format`, level from `MP_LOG`), and the tick's progress bar, drawn only when
//! stderr is a terminal and the logs are text.

use std::io::IsTerminal;
use std::sync::{Mutex, OnceLock};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use mp_core::ids::RepoName;
use mp_tick::{TickPhase, TickProgress};
use tracing_subscriber::EnvFilter;

use crate::cli::LogFormat;

/// The environment variable holding the log filter (`EnvFilter` syntax).
pub const LOG_ENV: &str = "MP_LOG";

/// The log format chosen at start-up.
static FORMAT: OnceLock<LogFormat> = OnceLock::new();

/// Installs the global subscriber. By default text logs are off (the report on stdout and
/// the error line on stderr already say everything) and JSON logs are at `info` (machines
/// want the events); a `service` (`mp serve`, whose logs are its only report) logs at
/// `info` in both formats. `MP_LOG` sets the level either way. A bad `MP_LOG` falls back
/// to the default rather than stopping the command.
pub fn init(format: LogFormat, service: bool) {
    let _ = FORMAT.set(format);
    let default = match format {
        LogFormat::Text if !service => "off",
        LogFormat::Text | LogFormat::Json => "info",
    };
    let filter = std::env::var(LOG_ENV)
        .ok()
        .and_then(|value| EnvFilter::try_new(value).ok())
        .unwrap_or_else(|| EnvFilter::new(default));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(true);
    // A subscriber already installed (tests run commands in-process) is left in place.
    let _ = match format {
        LogFormat::Text => builder
            .with_ansi(std::io::stderr().is_terminal())
            .try_init(),
        LogFormat::Json => builder.json().flatten_event(false).try_init(),
    };
}

/// The tick's progress: a `tracing` event per phase and per repository, and a bar over
/// the repositories of both phases when stderr is a terminal.
#[derive(Debug)]
pub struct CliProgress {
    bar: Mutex<Option<ProgressBar>>,
}

impl CliProgress {
    /// Progress with a bar when `draw` (stderr is a terminal and logs are text), else logs
    /// only.
    pub fn new(draw: bool) -> Self {
        let bar = draw.then(|| {
            let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
            if let Ok(style) =
                ProgressStyle::with_template("{spinner} {pos}/{len} repositories {wide_msg}")
            {
                bar.set_style(style);
            }
            bar
        });
        Self {
            bar: Mutex::new(bar),
        }
    }

    /// Whether a bar belongs on stderr: it is a terminal and the logs are text.
    pub fn wanted() -> bool {
        FORMAT.get().copied().unwrap_or_default() == LogFormat::Text
            && std::io::stderr().is_terminal()
    }
}

impl Drop for CliProgress {
    /// Clears the bar, so the report printed next starts on a clean line.
    fn drop(&mut self) {
        if let Ok(mut bar) = self.bar.lock()
            && let Some(bar) = bar.take()
        {
            bar.finish_and_clear();
        }
    }
}

impl TickProgress for CliProgress {
    fn phase(&self, phase: TickPhase, repositories: usize) {
        tracing::info!(phase = phase.as_str(), repositories, "tick phase");
        if let Ok(bar) = self.bar.lock()
            && let Some(bar) = bar.as_ref()
        {
            bar.inc_length(u64::try_from(repositories).unwrap_or(0));
            bar.set_message(phase.as_str());
        }
    }

    fn repository_done(&self, phase: TickPhase, repo: &RepoName) {
        tracing::info!(
            phase = phase.as_str(),
            repo = repo.as_str(),
            "repository done"
        );
        if let Ok(bar) = self.bar.lock()
            && let Some(bar) = bar.as_ref()
        {
            bar.inc(1);
            bar.set_message(format!("{phase} {repo}"));
        }
    }
}
