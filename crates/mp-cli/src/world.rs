//! Loading a world file and its configuration for `mp tick` and `mp explain`.

use std::path::Path;

use anyhow::{Context, bail};
use mp_core::Timestamp;
use mp_core::config::{self, Config, ConfigFiles};
use mp_github_fake::World;

/// A world with its validated configuration.
pub struct LoadedWorld {
    /// The world.
    pub world: World,
    /// The configuration the world carries.
    pub config: Config,
    /// Configuration warnings, one line each.
    pub warnings: Vec<String>,
}

/// Loads a world file, validates its configuration and resolves `now`.
pub fn load(path: &Path, now: Option<&str>) -> anyhow::Result<(LoadedWorld, Timestamp)> {
    let world = mp_github_fake::load_world(path)?;
    let files: ConfigFiles = world
        .config
        .iter()
        .filter(|(n, _)| !crate::skills_load::is_skill_entry(n))
        .map(|(n, t)| (n.clone(), t.clone()))
        .collect::<ConfigFiles>()
        .with_user_skills(crate::skills_load::world_skill_names(&world.config));
    let report = config::load(&files);
    let warnings = report.warnings().map(ToString::to_string).collect();
    let Some(config) = report.config else {
        let lines: Vec<String> = report.errors().map(ToString::to_string).collect();
        bail!(
            "the configuration of {} is invalid:\n  {}",
            path.display(),
            lines.join("\n  ")
        );
    };
    let now = match now {
        Some(text) => Timestamp::parse(text).context("--now")?,
        None => world.now,
    };
    Ok((
        LoadedWorld {
            world,
            config,
            warnings,
        },
        now,
    ))
}
