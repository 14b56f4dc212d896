//! Which skills a fetched source provides: `provides` expanded against the snapshot on
//! disk, the name-collision check across sources and in-tree skills, and the adopter's
//! pointer files reconciled with what the trusted sources provide.
//!
//! Selection only looks at directory entries through `symlink_metadata`: it never follows
//! a symlink and never reads a file inside a snapshot. A snapshot's own
//! `skill-sources.md`, `organizations/` and `skills/*/source.md` are inert data.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use super::drift::{DriftFinding, FindingSeverity};
use super::format::{Descriptor, FileProblem, Pointer, Provide, parse_pointer};
use super::model::{Refusal, SourceId, check_skill_name};

/// The stable selection codes.
pub mod codes {
    /// A layout root is not a plain relative path.
    pub const PATH_INVALID: &str = "source_path_invalid";
    /// The skills root is missing, not a directory, or a symlink.
    pub const SKILLS_ROOT_MISSING: &str = "source_skills_root_missing";
    /// A `skill:` directory does not exist in the snapshot.
    pub const SKILL_MISSING: &str = "source_skill_missing";
    /// A `skill:` entry is a file or a symlink, not a directory.
    pub const SKILL_NOT_DIRECTORY: &str = "source_skill_not_directory";
    /// A provided skill directory has no `SKILL.md` (a regular file).
    pub const SKILL_WITHOUT_CONTRACT: &str = "source_skill_without_contract";
    /// A family directory whose name is not kebab-case.
    pub const SKILL_NAME_INVALID: &str = "source_skill_name_invalid";
    /// The snapshot cannot be listed.
    pub const SNAPSHOT_UNREADABLE: &str = "source_snapshot_unreadable";
    /// Two claimants for one skill name.
    pub const SKILL_COLLISION: &str = "source_skill_collision";
    /// A pointer whose source is not trusted or does not provide its skill.
    pub const UNFULFILLED_POINTER: &str = "source_unfulfilled_pointer";
    /// A `family:` that selects no skill in the snapshot (warning).
    pub const FAMILY_EMPTY: &str = "source_family_empty";
    /// A directory of the snapshot matched by a family that holds only a `source.md`
    /// pointer, which is never followed (warning).
    pub const POINTER_ONLY_SKILL: &str = "source_pointer_only_skill";
    /// A pointer's `organization` is not a known organization.
    pub const POINTER_ORGANIZATION_UNKNOWN: &str = "source_pointer_organization_unknown";
    /// A pointer's `organization` differs from its source descriptor's.
    pub const POINTER_ORGANIZATION_MISMATCH: &str = "source_pointer_organization_mismatch";
    /// A pointer's `skill_path` or `evals_path` does not name its own skill directory.
    pub const POINTER_PATH_MISMATCH: &str = "source_pointer_path_mismatch";
}

/// The contract document a skill directory must hold.
pub const CONTRACT_FILE: &str = "SKILL.md";
/// The pointer file name in the adopter's skills directory.
pub const POINTER_FILE: &str = "source.md";

/// One skill a source provides, as found in its snapshot.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SelectedSkill {
    /// The source.
    pub source: SourceId,
    /// The skill (directory) name.
    pub name: String,
    /// `<snapshot>/<skills_root>/<name>`.
    pub dir: PathBuf,
    /// `<snapshot>/<evals_root>/<name>`, when that directory exists.
    pub evals: Option<PathBuf>,
}

/// The skills a source provides, and what deserves a look without stopping anything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// The selected skills, sorted by name, each once.
    pub skills: Vec<SelectedSkill>,
    /// Warnings: a family that selects nothing, a pointer-only directory a family matched.
    pub warnings: Vec<DriftFinding>,
}

/// Only `Normal` components: no root, prefix, `.` or `..`.
fn plain_relative(path: &Path) -> bool {
    path.components().next().is_some()
        && path.components().all(|c| matches!(c, Component::Normal(_)))
}

/// Whether `path` is a real directory (not a symlink to one).
fn is_real_dir(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_dir())
}

/// Whether `dir/SKILL.md` is a regular file (not a symlink).
fn has_contract(dir: &Path) -> bool {
    fs::symlink_metadata(dir.join(CONTRACT_FILE)).is_ok_and(|m| m.file_type().is_file())
}

/// `root/relative` when every component below `root` is a real directory.
fn real_dir_below(root: &Path, relative: &Path) -> Option<PathBuf> {
    let mut current = root.to_path_buf();
    for component in relative.components() {
        current.push(component);
        if !is_real_dir(&current) {
            return None;
        }
    }
    Some(current)
}

/// [`select`] without its warnings.
///
/// # Errors
/// See [`select`].
pub fn select_skills(
    snapshot: &Path,
    descriptor: &Descriptor,
) -> Result<Vec<SelectedSkill>, Vec<Refusal>> {
    select(snapshot, descriptor).map(|selection| selection.skills)
}

/// Expands a descriptor's `provides` against its snapshot: `skill: x` selects
/// `<skills_root>/x/`, `family: p-*` every real directory `<skills_root>/p-<more>/` that
/// holds a `SKILL.md` (dot-entries, files, symlinks and directories without `SKILL.md` are
/// skipped). The skills are sorted by name, each once. A family that selects nothing and a
/// matched directory holding only a `source.md` pointer (never followed: trust does not
/// chain) are warnings.
///
/// # Errors
/// Every refusal found: a bad layout root, a missing skills root, a `skill:` that is
/// missing, not a directory or has no `SKILL.md`, a family member whose name breaks the
/// Agent Skills rules.
pub fn select(snapshot: &Path, descriptor: &Descriptor) -> Result<Selection, Vec<Refusal>> {
    let id = &descriptor.id;
    let refuse = |code: &'static str, reason: String, fix: &str| Refusal {
        source: id.to_string(),
        code,
        reason,
        fix: fix.to_owned(),
    };
    let layout = &descriptor.layout;
    for root in [&layout.skills_root, &layout.evals_root] {
        if !plain_relative(root) {
            return Err(vec![refuse(
                codes::PATH_INVALID,
                format!(
                    "layout root `{}` is not a plain relative path",
                    root.display()
                ),
                "correct the descriptor's layout",
            )]);
        }
    }
    let Some(skills_root) = real_dir_below(snapshot, &layout.skills_root) else {
        return Err(vec![refuse(
            codes::SKILLS_ROOT_MISSING,
            format!(
                "the snapshot has no directory `{}` (symlinks are not followed)",
                layout.skills_root.display()
            ),
            "correct `layout.skills_root` or ask the source to keep its layout",
        )]);
    };
    let evals_root = real_dir_below(snapshot, &layout.evals_root);
    let mut refusals = Vec::new();
    let mut warnings = Vec::new();
    let warn = |code: &'static str, reason: String, fix: &str| DriftFinding {
        source: id.clone(),
        code,
        severity: FindingSeverity::Warning,
        reason,
        fix: fix.to_owned(),
    };
    let mut names: Vec<String> = Vec::new();
    for item in &descriptor.provides {
        match item {
            Provide::Skill(name) => {
                let dir = skills_root.join(name);
                match fs::symlink_metadata(&dir) {
                    Err(_) => refusals.push(refuse(
                        codes::SKILL_MISSING,
                        format!("skill `{name}` is not in {}", layout.skills_root.display()),
                        "drop it from `provides` or pin a version that has it",
                    )),
                    Ok(meta) if !meta.file_type().is_dir() => refusals.push(refuse(
                        codes::SKILL_NOT_DIRECTORY,
                        format!(
                            "`{}/{name}` is not a directory (symlinks are not followed)",
                            layout.skills_root.display()
                        ),
                        "ask the source to ship the skill as a directory",
                    )),
                    Ok(_) if !has_contract(&dir) => refusals.push(refuse(
                        codes::SKILL_WITHOUT_CONTRACT,
                        format!("skill `{name}` has no {CONTRACT_FILE}"),
                        "ask the source to add its contract document, or drop it from `provides`",
                    )),
                    Ok(_) => names.push(name.clone()),
                }
            }
            Provide::Family(_) => {
                let entries = match fs::read_dir(&skills_root) {
                    Ok(entries) => entries,
                    Err(err) => {
                        refusals.push(refuse(
                            codes::SNAPSHOT_UNREADABLE,
                            format!("cannot list {}: {err}", skills_root.display()),
                            "check the snapshot's permissions",
                        ));
                        continue;
                    }
                };
                let mut members: Vec<(String, PathBuf)> = entries
                    .flatten()
                    .filter_map(|entry| {
                        Some((entry.file_name().to_str()?.to_owned(), entry.path()))
                    })
                    .filter(|(name, _)| !name.starts_with('.') && item.matches(name))
                    .collect();
                members.sort();
                let before = names.len();
                for (name, dir) in members {
                    let name = name.as_str();
                    if !is_real_dir(&dir) {
                        continue;
                    }
                    if !has_contract(&dir) {
                        let pointer = fs::symlink_metadata(dir.join(POINTER_FILE))
                            .is_ok_and(|m| m.file_type().is_file());
                        if pointer {
                            warnings.push(warn(
                                codes::POINTER_ONLY_SKILL,
                                format!(
                                    "`{}/{name}` matches `{item}` but holds only a {POINTER_FILE} pointer and no {CONTRACT_FILE}; a pointer inside a source is never followed",
                                    layout.skills_root.display()
                                ),
                                "ask the source to ship the skill itself, or trust the source the pointer names",
                            ));
                        }
                        continue;
                    }
                    if let Err(why) = check_skill_name(name) {
                        refusals.push(refuse(
                            codes::SKILL_NAME_INVALID,
                            format!("family member: {why}"),
                            "ask the source to rename it; skill names follow the Agent Skills rules",
                        ));
                        continue;
                    }
                    names.push(name.to_owned());
                }
                if names.len() == before {
                    warnings.push(warn(
                        codes::FAMILY_EMPTY,
                        format!(
                            "`{item}` selects no skill: no directory of {} matching it holds a {CONTRACT_FILE}",
                            layout.skills_root.display()
                        ),
                        "correct the family prefix or `layout.skills_root`, or drop the family from `provides`",
                    ));
                }
            }
        }
    }
    if !refusals.is_empty() {
        return Err(refusals);
    }
    names.sort();
    names.dedup();
    let skills = names
        .into_iter()
        .map(|name| {
            let evals = evals_root
                .as_ref()
                .map(|root| root.join(&name))
                .filter(|dir| is_real_dir(dir));
            SelectedSkill {
                source: id.clone(),
                dir: skills_root.join(&name),
                evals,
                name,
            }
        })
        .collect();
    Ok(Selection { skills, warnings })
}

/// Who claims a skill name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claimant {
    /// A trusted source.
    Source(SourceId),
    /// Something the caller already has under that name (an in-tree skill, a built-in),
    /// described by the caller.
    Taken(String),
}

impl fmt::Display for Claimant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Source(id) => write!(f, "source {id}"),
            Self::Taken(what) => f.write_str(what),
        }
    }
}

/// Two claimants for one skill name: the run stops, nothing is shadowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillCollision {
    /// The contested name.
    pub name: String,
    /// The claimant found first (an already-taken name, or the earlier source).
    pub first: Claimant,
    /// The later claimant.
    pub second: Claimant,
}

impl SkillCollision {
    /// `source_skill_collision`.
    pub fn code(&self) -> &'static str {
        codes::SKILL_COLLISION
    }
}

impl fmt::Display for SkillCollision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "skill `{}` is claimed by both {} and {}; rename or drop one, mp never shadows a skill",
            self.name, self.first, self.second
        )
    }
}

/// Checks that every selected name is claimed once: not by two sources, and not by a name
/// in `taken` (name to a description such as `in-tree skill skills/x`).
///
/// # Errors
/// Every collision, in name order.
pub fn check_collisions(
    selected: &[SelectedSkill],
    taken: &BTreeMap<String, String>,
) -> Result<(), Vec<SkillCollision>> {
    let mut claims: BTreeMap<&str, Claimant> = taken
        .iter()
        .map(|(name, what)| (name.as_str(), Claimant::Taken(what.clone())))
        .collect();
    let mut collisions = Vec::new();
    for skill in selected {
        let second = Claimant::Source(skill.source.clone());
        match claims.get(skill.name.as_str()) {
            Some(first) if first != &second => collisions.push(SkillCollision {
                name: skill.name.clone(),
                first: first.clone(),
                second,
            }),
            Some(_) => {}
            None => {
                claims.insert(&skill.name, second);
            }
        }
    }
    collisions.sort_by(|a, b| a.name.cmp(&b.name));
    if collisions.is_empty() {
        Ok(())
    } else {
        Err(collisions)
    }
}

/// Reads the adopter's pointer files `<skills_dir>/<name>/source.md`. A directory counts
/// only when it has no contract document beside the pointer (`SKILL.md` or `<name>.md`).
/// A missing skills directory has no pointers.
pub fn scan_pointers(skills_dir: &Path) -> (Vec<Pointer>, Vec<FileProblem>) {
    let mut pointers = Vec::new();
    let mut problems = Vec::new();
    let entries = match fs::read_dir(skills_dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return (pointers, problems),
        Err(err) => {
            problems.push(FileProblem::new(
                skills_dir,
                None,
                super::trust::codes::FILE_UNREADABLE,
                format!("cannot list the directory: {err}"),
            ));
            return (pointers, problems);
        }
    };
    let mut dirs: Vec<(String, PathBuf)> = entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_str()?.to_owned();
            (!name.starts_with('.') && is_real_dir(&entry.path())).then(|| (name, entry.path()))
        })
        .collect();
    dirs.sort();
    for (name, dir) in dirs {
        let pointer = dir.join(POINTER_FILE);
        let is_file = |p: &Path| fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_file());
        if !is_file(&pointer)
            || is_file(&dir.join(CONTRACT_FILE))
            || is_file(&dir.join(format!("{name}.md")))
        {
            continue;
        }
        match fs::read_to_string(&pointer) {
            Ok(text) => match parse_pointer(&pointer, &name, &text) {
                Ok(parsed) => pointers.push(parsed),
                Err(mut found) => problems.append(&mut found),
            },
            Err(err) => problems.push(FileProblem::new(
                &pointer,
                None,
                super::trust::codes::FILE_UNREADABLE,
                format!("cannot read the file: {err}"),
            )),
        }
    }
    (pointers, problems)
}

/// Why no trusted source fulfils `pointer`, when none does.
fn unfulfilled(pointer: &Pointer, trusted: &[&Descriptor]) -> Option<String> {
    match trusted.iter().find(|d| d.id == pointer.source) {
        None => Some(format!(
            "{} redirects skill `{}` to source `{}`, which is not on the trust list",
            pointer.file.display(),
            pointer.skill,
            pointer.source
        )),
        Some(descriptor) if !descriptor.provides_skill(&pointer.skill) => Some(format!(
            "{} redirects skill `{}` to source `{}`, which does not provide it",
            pointer.file.display(),
            pointer.skill,
            pointer.source
        )),
        Some(_) => None,
    }
}

const UNFULFILLED_FIX: &str =
    "trust the source and list the skill in its `provides`, or remove the pointer";

/// Pointers no trusted source fulfils: the source is not trusted, or it does not provide
/// a skill of the pointer's name. Warnings only: pointers never authorise a fetch.
pub fn unfulfilled_pointers(pointers: &[Pointer], trusted: &[&Descriptor]) -> Vec<DriftFinding> {
    pointers
        .iter()
        .filter_map(|pointer| {
            unfulfilled(pointer, trusted).map(|reason| DriftFinding {
                source: pointer.source.clone(),
                code: codes::UNFULFILLED_POINTER,
                severity: FindingSeverity::Warning,
                reason,
                fix: UNFULFILLED_FIX.to_owned(),
            })
        })
        .collect()
}

/// The same pointers as [`unfulfilled_pointers`], as problems naming the pointer file and
/// the line of its `source:`.
pub fn unfulfilled_problems(pointers: &[Pointer], trusted: &[&Descriptor]) -> Vec<FileProblem> {
    pointers
        .iter()
        .filter_map(|pointer| {
            unfulfilled(pointer, trusted).map(|reason| {
                FileProblem::new(
                    &pointer.file,
                    Some(pointer.lines.source),
                    codes::UNFULFILLED_POINTER,
                    format!("{reason}; fix: {UNFULFILLED_FIX}"),
                )
                .with_source(Some(pointer.source.as_str()))
                .with_field("source")
            })
        })
        .collect()
}

/// Checks each pointer against what is known, without reading anything: its
/// `organization` is one of `organizations`, it equals the organization of the trusted
/// descriptor of its source (when that source is trusted), and `skill_path` (and
/// `evals_path`, when given) name the pointer's own directory: they end in `<name>`, and,
/// when the source is trusted, they are `<skills_root>/<name>` (`<evals_root>/<name>`).
pub fn check_pointers(
    pointers: &[Pointer],
    trusted: &[&Descriptor],
    organizations: &BTreeSet<String>,
) -> Vec<FileProblem> {
    let mut problems = Vec::new();
    for pointer in pointers {
        let source = Some(pointer.source.as_str());
        let problem = |line: u64, code: &'static str, field: &str, message: String| {
            FileProblem::new(&pointer.file, Some(line), code, message)
                .with_source(source)
                .with_field(field)
        };
        let org = &pointer.organization;
        if !organizations.contains(org) {
            let known = if organizations.is_empty() {
                "none is known".to_owned()
            } else {
                format!(
                    "known: {}",
                    organizations.iter().cloned().collect::<Vec<_>>().join(", ")
                )
            };
            problems.push(problem(
                pointer.lines.organization,
                codes::POINTER_ORGANIZATION_UNKNOWN,
                "organization",
                format!(
                    "organization `{org}` is not a known organization ({known}); add organizations/{org}/ or correct the pointer"
                ),
            ));
        }
        let descriptor = trusted.iter().find(|d| d.id == pointer.source);
        if let Some(d) = descriptor
            && &d.organization != org
        {
            problems.push(problem(
                pointer.lines.organization,
                codes::POINTER_ORGANIZATION_MISMATCH,
                "organization",
                format!(
                    "organization `{org}` differs from `{}`, the organization of source `{}`",
                    d.organization, d.id
                ),
            ));
        }
        let paths = [
            (
                Some((&pointer.skill_path, pointer.lines.skill_path)),
                "skill_path",
                descriptor.map(|d| &d.layout.skills_root),
            ),
            (
                pointer
                    .evals_path
                    .as_ref()
                    .map(|p| (p, pointer.lines.evals_path.unwrap_or(pointer.lines.source))),
                "evals_path",
                descriptor.map(|d| &d.layout.evals_root),
            ),
        ];
        for (given, field, root) in paths {
            let Some((path, line)) = given else {
                continue;
            };
            let expected = root.map(|root| root.join(&pointer.skill));
            let fits = match &expected {
                Some(expected) => path == expected,
                None => path.file_name().and_then(|n| n.to_str()) == Some(pointer.skill.as_str()),
            };
            if !fits {
                let wanted = expected.map_or_else(
                    || format!("a path ending in `{}`", pointer.skill),
                    |e| format!("`{}`", e.display()),
                );
                problems.push(problem(
                    line,
                    codes::POINTER_PATH_MISMATCH,
                    field,
                    format!(
                        "{field} `{}` does not name the pointer's directory `{}`; expected {wanted}",
                        path.display(),
                        pointer.skill
                    ),
                ));
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests;
