//! Loading user skills for `mp tick` and `mp explain`: from `<config>/skills/` or from the
//! `skills/...` entries of a world file's configuration, through the `mp-skills` registry,
//! into the [`SkillSet`] the tick runs.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use anyhow::{Context, bail};
use mp_core::config::Config;
use mp_core::config::skills::REQUIRED_SKILLS;
use mp_core::skill::SkillSet;
use mp_skills::registry::{LoadWarning, Origin, Registry};
use mp_skills::sandbox::Limits;
use mp_skills::sources::layout::SourcesLayout;
use mp_skills::sources::ops;

#[cfg(test)]
mod tests;

pub use mp_skills::skill_set::SkillCalls;

/// A required built-in skill that did not load: a hard error (exit 1), unlike a user
/// skill that fails to load (a warning).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltInLoadFailed {
    /// The built-in skill's name.
    pub name: &'static str,
}

impl std::fmt::Display for BuiltInLoadFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "built-in skill {} failed to load: the registry does not list it",
            self.name
        )
    }
}

impl std::error::Error for BuiltInLoadFailed {}

/// The first required skill missing from the built-ins `listed`, if any.
pub fn missing_built_in(listed: &[&str]) -> Option<BuiltInLoadFailed> {
    REQUIRED_SKILLS
        .into_iter()
        .find(|name| !listed.contains(name))
        .map(|name| BuiltInLoadFailed { name })
}

/// The prefix of world configuration entries that hold user skills.
pub const WORLD_SKILLS_PREFIX: &str = "skills/";

/// The user skills under `dir` (a configuration directory's `skills/`), when present, and
/// the skills of the trusted external sources of that configuration directory (its
/// `skill-sources.md`; see docs/sources.md) whose snapshots are exactly what was fetched
/// and pinned.
///
/// # Errors
/// When a built-in skill is missing from the registry (a hard error, exit 1), when the
/// trust list or the pin lock is broken, or when two skills claim the same name.
pub fn from_dir(config: &Config, dir: &Path, calls: &SkillCalls) -> anyhow::Result<SkillSet> {
    let (registry, skipped) = load_dir(config, dir)?;
    let mut set = skill_set(registry, None, calls)?;
    set.load_warnings.extend(skipped);
    Ok(set)
}

/// The registry of a configuration directory's skills (in-tree and fetched) and one line
/// per trusted source left out.
///
/// # Errors
/// As [`from_dir`].
pub fn load_dir(config: &Config, dir: &Path) -> anyhow::Result<(Registry, Vec<String>)> {
    let limits = Limits::from_policy(&config.skills().limits());
    let config_dir = dir.parent().unwrap_or(Path::new("."));
    let layout = SourcesLayout::new(config_dir);
    if !layout.trust_list.exists() {
        return Ok((
            Registry::load(Some(dir), config.skills(), limits),
            Vec::new(),
        ));
    }
    let sources = ops::open(layout).map_err(|problems| {
        let lines: Vec<String> = problems.iter().map(ToString::to_string).collect();
        anyhow::anyhow!("the skill sources cannot be read: {}", lines.join("; "))
    })?;
    let in_tree = Registry::load(Some(dir), config.skills(), limits);
    let taken: BTreeMap<String, String> = in_tree
        .entries()
        .iter()
        .map(|e| {
            let what = match &e.origin {
                Origin::BuiltIn { .. } => "the built-in skill".to_owned(),
                Origin::User { module } | Origin::Source { module, .. } => {
                    format!("the in-tree skill {}", module.display())
                }
            };
            (e.name.clone(), what)
        })
        .collect();
    let loadable = ops::loadable_skills(&sources, &taken).map_err(|collisions| {
        let lines: Vec<String> = collisions.iter().map(ToString::to_string).collect();
        anyhow::anyhow!("source_skill_collision: {}", lines.join("; "))
    })?;
    let sourced = loadable.sourced();
    let registry = Registry::load_with_sources(Some(dir), &sourced, config.skills(), limits);
    Ok((registry, loadable.skipped))
}

/// The user skills among a world's configuration entries: every entry named
/// `skills/<folder>/<file>` is written into a temporary directory with the same layout and
/// loaded from there. No such entry gives an empty set.
///
/// # Errors
/// When an entry name is not a plain relative path (`..`, an absolute path, an empty
/// part), when the temporary directory cannot be written, or when a built-in skill is
/// missing from the registry.
pub fn from_world(
    config: &Config,
    files: &BTreeMap<String, String>,
    calls: &SkillCalls,
) -> anyhow::Result<SkillSet> {
    let entries: Vec<(&String, &String)> = files
        .iter()
        .filter(|(name, _)| name.starts_with(WORLD_SKILLS_PREFIX))
        .collect();
    if entries.is_empty() {
        return skill_set(
            Registry::load(
                None,
                config.skills(),
                Limits::from_policy(&config.skills().limits()),
            ),
            None,
            calls,
        );
    }
    let temp = TempDir::create()?;
    for (name, text) in entries {
        let relative = checked_name(name)?;
        let path = temp.path.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    let registry = Registry::load(
        Some(&temp.path.join("skills")),
        config.skills(),
        Limits::from_policy(&config.skills().limits()),
    );
    skill_set(registry, Some(&temp.path), calls)
}

/// The names of the in-tree user skills of the configuration directory `config_dir`
/// (`skills/<kind>/<name>.wasm` or `.wat`), or `None` when the directory also takes skills
/// from trusted sources, whose names are only known once they are fetched.
pub fn user_skill_names(config_dir: &Path) -> Option<Vec<String>> {
    if SourcesLayout::new(config_dir).trust_list.exists() {
        return None;
    }
    let mut names = Vec::new();
    for kind in mp_core::skill::SkillKind::ALL {
        let Ok(entries) = std::fs::read_dir(config_dir.join("skills").join(kind.folder())) else {
            continue;
        };
        names.extend(
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| mp_skills::registry::is_module(p))
                .filter_map(|p| p.file_stem().and_then(|s| s.to_str()).map(str::to_owned)),
        );
    }
    Some(names)
}

/// The names of the user skills among a world's configuration entries
/// (`skills/<kind>/<name>.wasm` or `.wat`).
pub fn world_skill_names(files: &BTreeMap<String, String>) -> Vec<String> {
    files
        .keys()
        .filter_map(|name| name.strip_prefix(WORLD_SKILLS_PREFIX))
        .filter_map(|rest| rest.split_once('/').map(|(_, file)| file))
        .filter_map(|file| {
            file.strip_suffix(".wasm")
                .or_else(|| file.strip_suffix(".wat"))
        })
        .filter(|name| !name.is_empty() && !name.contains('/'))
        .map(str::to_owned)
        .collect()
}

/// Whether a world configuration entry holds a user skill file rather than a configuration
/// file.
pub fn is_skill_entry(name: &str) -> bool {
    name.starts_with(WORLD_SKILLS_PREFIX)
}

/// `name` as a relative path made only of normal parts.
fn checked_name(name: &str) -> anyhow::Result<PathBuf> {
    let path = PathBuf::from(name);
    let plain = !name.contains('\\')
        && !name.split('/').any(str::is_empty)
        && path.components().all(|c| matches!(c, Component::Normal(_)));
    if !plain {
        bail!("world config entry `{name}` is not a plain relative path (no `..`, no empty part)");
    }
    Ok(path)
}

/// A temporary directory removed when dropped.
struct TempDir {
    path: PathBuf,
}

impl TempDir {
    fn create() -> anyhow::Result<Self> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let path = std::env::temp_dir().join(format!("mp-skills-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&path)
            .with_context(|| format!("creating the temporary directory {}", path.display()))?;
        Ok(Self { path })
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// The warning line of a load problem, with paths shown relative to `root` when given (so
/// a world's temporary directory never shows).
fn warning_line(warning: &LoadWarning, root: Option<&Path>) -> String {
    let strip = |text: String| match root {
        Some(root) => {
            let prefix = format!("{}/", root.display());
            text.replace(&prefix, "")
        }
        None => text,
    };
    strip(warning.to_string())
}

/// The registry's active user skills as a [`SkillSet`], with its load counters and
/// warnings.
fn skill_set(
    registry: Registry,
    root: Option<&Path>,
    calls: &SkillCalls,
) -> anyhow::Result<SkillSet> {
    if let Some(missing) = missing_built_in(&registry.built_in_names()) {
        return Err(missing.into());
    }
    Ok(mp_skills::skill_set::user_skills(registry, calls, |w| {
        warning_line(w, root)
    }))
}
